#!/usr/bin/env python3
"""Property test: `kvsearch score` against the official LongBench scorer's own packages.

Thousands of generated (prediction, answers) pairs, short and long, ASCII and not, go through the
built binary (`kvsearch score --pred-dir ... --per-example ...`) and through an oracle: pypi rouge
1.0.1 and fuzzywuzzy 0.18 on difflib (python-Levenshtein must be absent, as for the official
numbers) plus the official metric definitions (docs/reference.md §4) restated here. Every
per-example score, dataset score, LongBench-E bucket and the result.json text must be identical.
"""
import difflib
import json
import os
import random
import re
import string
import sys
import tempfile
import warnings
from collections import Counter

warnings.filterwarnings("ignore")  # fuzzywuzzy's note about the pure-Python SequenceMatcher
import numpy as np  # noqa: E402
import fuzzywuzzy.fuzz as fuzz_module  # noqa: E402
from fuzzywuzzy import fuzz  # noqa: E402
from rouge import Rouge  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from kvs_testing import finish, must, read_json, same_json, write_jsonl  # noqa: E402

RNG = random.Random(20240611)

# ---- the oracle: the official definitions --------------------------------------------------


def normalize_answer(s):
    s = s.lower()
    s = "".join(ch for ch in s if ch not in set(string.punctuation))
    s = re.sub(r"\b(a|an|the)\b", " ", s)
    return " ".join(s.split())


def qa_f1(prediction, truth):
    p, g = normalize_answer(prediction).split(), normalize_answer(truth).split()
    same = sum((Counter(p) & Counter(g)).values())
    if same == 0:
        return 0
    precision, recall = 1.0 * same / len(p), 1.0 * same / len(g)
    return (2 * precision * recall) / (precision + recall)


def frame_depth():
    depth, frame = 0, sys._getframe(1)
    while frame is not None:
        depth, frame = depth + 1, frame.f_back
    return depth


def rouge_l(prediction, truth):
    # The official call stack puts rouge_score at depth 3 (eval.py, scorer, rouge_score): give the
    # library the same number of frames below the default limit of 1000.
    sys.setrecursionlimit(1000 + frame_depth() - 3)
    try:
        return Rouge().get_scores([prediction], [truth], avg=True)["rouge-l"]["f"]
    except Exception:  # the official scorer's bare except (ValueError, RecursionError)
        return 0.0
    finally:
        sys.setrecursionlimit(1000)


def classification(prediction, truth, all_classes):
    matches = [c for c in all_classes if c in prediction]
    for term in matches:
        if term in truth and term != truth:
            matches.remove(term)
    return 1.0 / len(matches) if truth in matches else 0.0


def share_equal(prediction, target):
    numbers = re.findall(r"\d+", prediction)
    return 0.0 if not numbers else float(sum(1 for n in numbers if n == target) / len(numbers))


def retrieval(prediction, truth):
    return share_equal(prediction, re.findall(r"Paragraph (\d+)", truth)[0])


def count(prediction, truth):
    return share_equal(prediction, str(truth))


def code_sim(prediction, truth):
    chosen = ""
    for line in prediction.lstrip("\n").split("\n"):
        if "`" not in line and "#" not in line and "//" not in line:
            chosen = line
            break
    return fuzz.ratio(chosen, truth) / 100


METRIC = {
    "narrativeqa": qa_f1, "triviaqa": qa_f1, "hotpotqa": qa_f1,
    "gov_report": rouge_l, "samsum": rouge_l,
    "trec": classification, "passage_retrieval_en": retrieval, "passage_count": count,
    "lcc": code_sim, "repobench-p": code_sim,
}
FIRST_LINE = {"trec", "triviaqa", "samsum"}
ORDER = ["narrativeqa", "hotpotqa", "gov_report", "trec", "triviaqa", "samsum", "passage_count",
         "passage_retrieval_en", "lcc", "repobench-p"]  # the official order, restricted


def example_score(dataset, prediction, answers, all_classes, raw):
    if dataset in FIRST_LINE and not raw:
        prediction = prediction.lstrip("\n").split("\n")[0]
    score = 0.0
    for answer in answers:
        if dataset == "trec":
            score = max(score, classification(prediction, answer, all_classes))
        else:
            score = max(score, METRIC[dataset](prediction, answer))
    return score


# ---- generated inputs ----------------------------------------------------------------------

ASCII_WORDS = ("the a an The AN cat sat on mat Paris London river report budget agency year "
               "theatre anthem another abc123 x86 42 7 1999 it's don't e-mail U.S. "
               "_under score").split()
UNICODE_WORDS = ["caf\u00e9", "\u039f\u0394\u039f\u03a3", "\u03a3\u03af\u03c3\u03c5\u03c6\u03bf\u03c2",
                 "stra\u00dfe", "\u0130stanbul", "na\u00efve", "\u65e5\u672c\u8a9e", "\u0663\u0664",
                 "\uff11\uff12", "\U0001F600", "\u03a9\u03bc\u03ad\u03b3\u03b1", "\u00c9T\u00c9",
                 "A\u03a3", "\u2160\u2161", "\u00bfQu\u00e9?", "\u00abguill\u00e9\u00bb", "\u00b2"]
PUNCT = list(",.!?;:'\"-()[]{}") + ["...", "\u2014", "\u00bf"]
SEPARATORS = [" "] * 12 + ["  ", "\t", "\n", "\u00a0", "\u3000", "\u2028", "\x1c", " . ", ". "]


def token():
    r = RNG.random()
    if r < 0.65:
        return RNG.choice(ASCII_WORDS)
    if r < 0.85:
        return RNG.choice(UNICODE_WORDS)
    return RNG.choice(PUNCT)


def text(n_tokens):
    out = []
    for _ in range(n_tokens):
        out.append(token())
        out.append(RNG.choice(SEPARATORS))
    return "".join(out[:-1]) if out else ""


def perturb(answer):
    """A prediction sharing words with the answer, so that scores are rarely 0."""
    words = re.split(r"(\s+)", answer)
    out = [w for w in words if RNG.random() < 0.8]
    if RNG.random() < 0.5:
        out.insert(RNG.randrange(len(out) + 1), text(RNG.randint(1, 6)))
    pred = "".join(out)
    if RNG.random() < 0.3:
        pred = pred.upper() if RNG.random() < 0.5 else pred.lower()
    return pred


def edge_texts():
    return ["", " ", "!!!", "...", ". . .", "\n", "the a an", "A", "\u03a3", " . ", "x"]


def qa_example(multiline):
    answers = [text(RNG.randint(0, 6)) for _ in range(RNG.randint(1, 3))]
    if RNG.random() < 0.1:
        answers[0] = RNG.choice(edge_texts())
    pred = RNG.choice(edge_texts()) if RNG.random() < 0.08 else perturb(RNG.choice(answers))
    if multiline and RNG.random() < 0.6:
        pred = "\n" * RNG.randint(0, 2) + pred + "\n" + perturb(RNG.choice(answers))
    return pred, answers


def sentence_text(n_sentences, words):
    return " ".join(text(RNG.randint(1, words)) + "." for _ in range(n_sentences))


def rouge_example(multiline):
    r = RNG.random()
    if r < 0.04:  # one sentence long enough to reach the recursion limit, or just under it
        k = RNG.choice([RNG.randint(960, 1010), 988, 989, 990, 991])
        return "a " + " ".join(["b"] * k), ["a"]
    if r < 0.1:
        return RNG.choice(edge_texts()), [RNG.choice(edge_texts() + [sentence_text(2, 8)])]
    ref = sentence_text(RNG.randint(1, 6), 25)
    pred = perturb(ref) if RNG.random() < 0.8 else sentence_text(RNG.randint(1, 6), 25)
    if multiline and RNG.random() < 0.5:
        pred = "\n" + pred.replace(". ", ".\n", 1)
    return pred, [ref]


TREC_CLASSES = ["Other", "Other location", "location", "Date", "Date of birth", "Speed",
                "Expression abbreviated", "abbreviated", "Definition of something", "something",
                "Individual", "Description of a person", "person", "Order, rank", "Other number"]


def trec_example():
    gold = RNG.choice(TREC_CLASSES)
    picks = RNG.sample(TREC_CLASSES, RNG.randint(0, 4)) + ([gold] if RNG.random() < 0.6 else [])
    RNG.shuffle(picks)
    pred = " ".join(picks)
    if RNG.random() < 0.4:
        pred = "\n" + pred + "\n" + RNG.choice(TREC_CLASSES)
    return pred, [gold]


def digits(n):
    s = str(n)
    r = RNG.random()
    if r < 0.05:
        return "".join(chr(0x660 + int(c)) for c in s)  # Arabic-Indic digits
    if r < 0.1:
        return "".join(chr(0xFF10 + int(c)) for c in s)  # full-width digits
    return s


def retrieval_example():
    gold = RNG.randint(1, 30)
    answer = f"Paragraph {gold}" if RNG.random() < 0.8 else f"See Paragraph x, Paragraph {gold}"
    parts = [RNG.choice(["Paragraph ", "p", "", "abc"]) + digits(RNG.choice([gold, RNG.randint(0, 40)]))
             for _ in range(RNG.randint(0, 4))]
    return text(RNG.randint(0, 3)) + " " + " ".join(parts), [answer]


def count_example():
    gold = RNG.randint(1, 25)
    nums = [digits(RNG.choice([gold, RNG.randint(0, 30)])) for _ in range(RNG.randint(0, 4))]
    glue = RNG.choice([" ", ", ", " and ", "x", ""])
    return "There are " + glue.join(nums) + " unique paragraphs.", [str(gold)]


CODE_LINES = ["return a + b;", "    int x = foo(y, z);", "\t\tif (p == NULL) { return -1; }",
              "self.assertEqual(result, expected)", "print(f\"caf\u00e9 {x}\")",
              "const \u03a3 = sum(values);", "for (int i = 0; i < n; ++i) {", "}", ""]


def code_line(long):
    if long:  # b of 200+ characters with popular characters: difflib's autojunk
        alphabet = RNG.choice(["ab ", "xyz();", "a\u00e9 ", "01"])
        return "".join(RNG.choice(alphabet) for _ in range(RNG.randint(180, 320)))
    line = RNG.choice(CODE_LINES)
    return line if RNG.random() < 0.6 else perturb(line)


def code_example(long):
    gold = code_line(long)
    lines = []
    for _ in range(RNG.randint(0, 3)):
        lines.append(RNG.choice(["// comment", "# note", "```python", "x = 1  # trailing",
                                 "a // b", "int y;"]))
    lines.append(perturb(gold) if RNG.random() < 0.7 else code_line(long))
    lines.append(code_line(False))
    pred = "\n" * RNG.randint(0, 2) + "\n".join(lines)
    return pred, [gold]


def generate():
    spec = {
        "narrativeqa": (600, lambda: qa_example(False)),
        "triviaqa": (300, lambda: qa_example(True)),
        "hotpotqa": (200, lambda: qa_example(False)),
        "gov_report": (400, lambda: rouge_example(False)),
        "samsum": (200, lambda: rouge_example(True)),
        "trec": (300, trec_example),
        "passage_retrieval_en": (300, retrieval_example),
        "passage_count": (300, count_example),
        "lcc": (500, lambda: code_example(False)),
        "repobench-p": (300, lambda: code_example(True)),
    }
    data = {}
    for dataset, (n, make) in spec.items():
        lines = []
        for i in range(n):
            pred, answers = make()
            # Lengths across the LongBench-E buckets, the boundaries included; samsum only short.
            length = RNG.choice([RNG.randint(0, 12000), 3999, 4000, 7999, 8000])
            if dataset == "samsum":
                length = RNG.randint(0, 3999)
            lines.append({"pred": pred, "answers": answers,
                          "all_classes": TREC_CLASSES if dataset == "trec" else None,
                          "length": length})
        data[dataset] = lines
    return data


# ---- comparison ----------------------------------------------------------------------------


def run(args):
    return must("score", *args, timeout=300, tail=None)


def main():
    if fuzz_module.SequenceMatcher is not difflib.SequenceMatcher:
        sys.exit("fuzzywuzzy uses python-Levenshtein: uninstall it (the official scorer used difflib)")

    data = generate()
    official = {d: [example_score(d, l["pred"], l["answers"], l["all_classes"], False) for l in data[d]]
                for d in ORDER}
    raw = {d: [example_score(d, l["pred"], l["answers"], l["all_classes"], True) for l in data[d]]
           if d in FIRST_LINE else official[d] for d in ORDER}
    pairs = sum(len(l["answers"]) for d in ORDER for l in data[d])
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        for dataset, lines in data.items():
            write_jsonl(os.path.join(tmp, dataset + ".jsonl"), lines, ensure_ascii=False)
        per_example_path = os.path.join(tmp, "per_example.out")
        for variant, oracle_scores in (("official", official), ("raw", raw)):
            args = ["--pred-dir", tmp, "--per-example", per_example_path]
            result_text = run(args + (["--raw"] if variant == "raw" else []))
            ours = read_json(per_example_path)
            expected_scores = {}
            for dataset in ORDER:
                lines, oracle = data[dataset], oracle_scores[dataset]
                if len(ours[dataset]) != len(oracle):
                    failures.append(f"{dataset}: {len(ours[dataset])} scores for {len(oracle)} lines")
                for i, (a, b) in enumerate(zip(ours[dataset], oracle)):
                    if a != b:
                        failures.append(f"{dataset}[{i}] {variant}: ours {a!r}, official {b!r}; "
                                        f"pred={lines[i]['pred'][:120]!r} "
                                        f"answers={lines[i]['answers']!r}"[:400])
                total = 0.0
                for score in oracle:
                    total += score
                expected_scores[dataset] = round(100 * total / len(oracle), 2)
            expected_text = json.dumps(expected_scores, ensure_ascii=False, indent=4)
            if result_text.rstrip("\n") != expected_text:
                failures.append(f"result.json text ({variant}):\n{result_text}\nexpected:\n{expected_text}")

        # LongBench-E buckets: numpy's mean and rounding, NaN for an empty bucket.
        ours_e = json.loads(run(["--pred-dir", tmp, "--e"]))
        for dataset in ORDER:
            buckets = {"0-4k": [], "4-8k": [], "8k+": []}
            for line, score in zip(data[dataset], official[dataset]):
                length = line["length"]
                buckets["0-4k" if length < 4000 else "4-8k" if length < 8000 else "8k+"].append(score)
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                expected = {k: round(100 * np.mean(v), 2) for k, v in buckets.items()}
            for k in expected:
                if not same_json(ours_e[dataset][k], float(expected[k])):
                    failures.append(f"{dataset} {k}: ours {ours_e[dataset][k]!r}, official {expected[k]!r}")

        # One dataset through --dataset/--predictions prints {"name": score}.
        single = json.loads(run(["--dataset", "lcc", "--predictions", os.path.join(tmp, "lcc.jsonl")]))
        if single != {"lcc": round(100 * sum(official["lcc"]) / len(official["lcc"]), 2)}:
            failures.append(f"--dataset lcc printed {single}")

    print(f"{pairs} (prediction, answer) pairs in {sum(len(v) for v in data.values())} examples; "
          f"{len(failures)} mismatches")
    finish(failures, limit=20, label="MISMATCH")


if __name__ == "__main__":
    main()
