// The per-answer metrics of the official LongBench metrics.py (English datasets), exactly:
// same normalization, same tokenization, same float operations in the same order; and RULER's two
// metrics (scripts/eval/synthetic/constants.py), which score all references of an example at once.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace kvs::longbench {

// normalize_answer: lower-case (Unicode, as str.lower), drop ASCII punctuation, replace the words
// a/an/the (whole \w runs) by a space, collapse whitespace (str.split semantics).
std::string normalize_answer(const std::string& text);

// qa_f1_score: token F1 of the normalized texts with multiset overlap; 0 without overlap.
double qa_f1_score(const std::string& prediction, const std::string& ground_truth);

// rouge_score: ROUGE-L F of pypi rouge 1.0.1 (rouge.h); 0 where the library raises.
double rouge_score(const std::string& prediction, const std::string& ground_truth);

// classification_score: the classes found in the prediction (in all_classes order), minus those
// that are a proper substring of the gold label, removed while iterating the list (a removal
// skips the element after it, as in Python); 1/len when the gold label survives, else 0.
double classification_score(const std::string& prediction, const std::string& ground_truth,
                            const std::vector<std::string>& all_classes);

// retrieval_score: the share of digit runs in the prediction equal to the number of the first
// "Paragraph <digits>" of the ground truth (kvs::Error when there is none: Python would raise).
double retrieval_score(const std::string& prediction, const std::string& ground_truth);

// count_score: the share of digit runs in the prediction equal to the ground truth.
double count_score(const std::string& prediction, const std::string& ground_truth);

// fuzzywuzzy 0.18's fuzz.ratio on difflib: 100 if equal, 0 if either is empty, else
// round-half-even(100 * SequenceMatcher(None, a, b).ratio()).
int fuzz_ratio(const std::string& a, const std::string& b);

// code_sim_score: the first line of prediction.lstrip('\n') containing none of "`", "#", "//"
// (else ""), fuzz_ratio against the ground truth, divided by 100.
double code_sim_score(const std::string& prediction, const std::string& ground_truth);

// RULER's evaluate.py clean-up of a prediction: strip (str.strip), every control character
// U+0000-U+001F becomes '\n', strip again.
std::string ruler_postprocess(const std::string& prediction);

// string_match_all of one example: the share of references r with r.lower() in
// prediction.lower() (a plain substring test after Python's str.lower, no other normalization).
double string_match_all(const std::string& prediction, const std::vector<std::string>& references);

// string_match_part of one example: 1 if any reference is such a substring, else 0.
double string_match_part(const std::string& prediction, const std::vector<std::string>& references);

// Math and reasoning answers (AIME, MATH-500, GSM8K as kvpress's and R-KV's evaluations score
// them). last_boxed: the text inside the last "boxed{" of `text` up to its matching "}" (braces
// nest), as kvpress's evaluation/benchmarks/utils.py extract_boxed(last=True); none without a
// "boxed{" or without its closing brace.
std::optional<std::string> last_boxed(const std::string& text);
// 1 when last_boxed(prediction) is exactly the ground truth (no normalisation: kvpress's
// score_aime), else 0.
double boxed_answer_score(const std::string& prediction, const std::string& ground_truth);
// The last number written in `text`: a run of digits with optional "," thousands separators (a
// comma before exactly three digits), an optional leading "-" and an optional ".digits"
// fraction; separators, leading zeros and a fraction's trailing zeros dropped ("1,234.50" ->
// "1234.5", "7.0" -> "7", "-0" -> "0"). None without a digit.
std::optional<std::string> last_number(const std::string& text);
// 1 when last_number(prediction) equals last_number(ground truth after its last "####", or all of
// it without one: GSM8K's answers end "#### 72"), else 0.
double last_number_score(const std::string& prediction, const std::string& ground_truth);

}  // namespace kvs::longbench
