#!/usr/bin/env python3
"""Property test: RULER's string_match_all / string_match_part through `kvsearch score` against
the metrics restated here from docs/ruler.md §4 (scripts/eval/synthetic/constants.py) and
evaluate.py's clean-up of predictions (strip, control characters to newlines, strip).

Thousands of generated (prediction, references) pairs: case changes, punctuation, empty
predictions and references, repeated references, control characters, non-ASCII letters whose
lower-casing Python defines specially (Σ, İ, ẞ). Every per-example score and the dataset score must
be identical, through --predictions with --metric and through --pred-dir.
"""
import json
import os
import random
import re
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from kvs_testing import FAILURES, finish, kvsearch, read_json, write_jsonl  # noqa: E402

RNG = random.Random(20261201)


def postprocess(pred):
    pred = pred.strip()
    return re.sub(r"[\x00-\x1f]", "\n", pred).strip()


def match_all_one(pred, refs):
    return sum([1.0 if r.lower() in pred.lower() else 0.0 for r in refs]) / len(refs)


def match_part_one(pred, refs):
    return max([1.0 if r.lower() in pred.lower() else 0.0 for r in refs])


def dataset_score(per_example):
    return round(sum(per_example) / len(per_example) * 100, 2)


ALPHABET = list("abcXYZ019 .,;:!?'\"-_()") + ["\n", "\t", "\x01", "\x1f", "é", "É", "Σ", "σ", "ς",
                                              "İ", "ß", "ẞ", "日本", "🙂", "\u00a0", "\u2028"]


def random_text(max_len):
    return "".join(RNG.choice(ALPHABET) for _ in range(RNG.randint(0, max_len)))


def vary_case(text):
    return "".join(c.upper() if RNG.random() < 0.5 else c.lower() for c in text)


def make_pair():
    refs = [random_text(8) for _ in range(RNG.randint(1, 5))]
    if RNG.random() < 0.2:
        refs.append(RNG.choice(refs))  # a repeated reference
    kind = RNG.random()
    if kind < 0.1:
        pred = ""
    elif kind < 0.6:
        # Some references inside, case changed, with noise around them.
        parts = [vary_case(r) for r in refs if RNG.random() < 0.6]
        pred = random_text(6).join(parts) + random_text(10)
        if RNG.random() < 0.3:
            pred = " \n\x02" + pred + "\t\x03 "
    else:
        pred = random_text(40)
    return pred, refs


def run(args):
    return kvsearch(*args, timeout=120)


def check_file(path, metric, one, pairs, tmp):
    per_example_path = os.path.join(tmp, f"{metric}_per_example.json")
    proc = run(["score", "--metric", metric, "--predictions", path, "--per-example", per_example_path])
    if proc.returncode != 0:
        FAILURES.append(f"{metric}: exit {proc.returncode}: {proc.stderr}")
        return
    name = os.path.splitext(os.path.basename(path))[0]
    expected = [one(postprocess(p), refs) for p, refs in pairs]
    got = read_json(per_example_path)[name]
    bad = [i for i, (g, e) in enumerate(zip(got, expected)) if g != e]
    if len(got) != len(expected) or bad:
        i = bad[0] if bad else -1
        FAILURES.append(f"{metric}: {len(bad)} per-example mismatches, first {i}: {pairs[i]!r} "
                        f"got {got[i]} expected {expected[i]}")
    result = json.loads(proc.stdout)
    if result[name] != dataset_score(expected):
        FAILURES.append(f"{metric}: score {result[name]} != {dataset_score(expected)}")


def main():
    pairs = [make_pair() for _ in range(3000)]
    # Hand-picked edge cases first.
    pairs[:8] = [("", ["x"]), ("ABC", ["abc", "abc"]), ("Σ", ["σ"]), ("İ", ["i̇"]),
                 ("x", [""]), ("a\x01b", ["a\nb"]), ("  7654321.", ["7654321", "1234567"]),
                 ("The answer: Foo, BAR!", ["foo", "bar", "baz", "qux"])]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "generated.jsonl")
        write_jsonl(path, [{"pred": pred, "answers": refs, "all_classes": None, "length": 1} for pred, refs in pairs],
                    ensure_ascii=False)
        check_file(path, "string_match_all", match_all_one, pairs, tmp)
        check_file(path, "string_match_part", match_part_one, pairs, tmp)
        # --pred-dir with --metric scores every file of the directory with it.
        proc = run(["score", "--metric", "string_match_all", "--pred-dir", tmp])
        expected = dataset_score([match_all_one(postprocess(p), r) for p, r in pairs])
        if proc.returncode != 0 or json.loads(proc.stdout).get("generated") != expected:
            FAILURES.append(f"--pred-dir: exit {proc.returncode}, {proc.stdout!r} {proc.stderr!r}")
    print(f"{len(pairs)} pairs, {len(FAILURES)} failures")
    finish()


if __name__ == "__main__":
    main()
