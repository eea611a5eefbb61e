// ROUGE-L F as pypi "rouge" 1.0.1 computes it in Rouge().get_scores([hyp], [ref], avg=True),
// which the official LongBench rouge_score calls inside try/except returning 0.0:
// - sentences: text.split(".") without empty pieces, each whitespace-collapsed
//   (" ".join(s.split()); a piece of only spaces becomes the empty sentence "");
// - words: sentence.split(" ") (so the empty sentence has one word, "");
// - m, n: numbers of DISTINCT words of the reference and of the hypothesis;
// - for every (reference sentence, hypothesis sentence) pair, one LCS recovered by backtracking
//   the DP table ("match -> diagonal, else up if T[i-1][j] > T[i][j-1], else left"); the words
//   of all recovered LCSs form one set, llcs = its size;
// - r = llcs/m, p = llcs/n, f = 2 * ((p * r) / (p + r + 1e-8)).
// Failures score 0: no sentence on either side, and the recursion limit: the library backtracks
// recursively, and CPython's default limit of 1000 frames, 9 of which the official call stack
// already uses, stops a backtrack of more than 991 calls with a RecursionError.
#pragma once

#include <cstddef>
#include <string>

namespace kvs::longbench {

// Deepest backtrack that completes under the official scorer (CPython 3.11, recursion limit
// 1000): the call stack eval.py -> scorer -> rouge_score -> Rouge.get_scores -> _get_avg_scores ->
// metric lambda -> rouge_l_summary_level -> _union_lcs -> _recon_lcs holds 9 frames.
constexpr size_t kRougeMaxBacktrackCalls = 991;

double rouge_l_f(const std::string& hypothesis, const std::string& reference);

}  // namespace kvs::longbench
