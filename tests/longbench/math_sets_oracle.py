#!/usr/bin/env python3
"""Math and reasoning sets: the two answer rules through `kvsearch score`, and `kvsearch data math`.

1. boxed_answer against kvpress's rule restated here (evaluation/benchmarks/utils.py extract_boxed
   with last=True: the text after the last "boxed{" up to its matching brace; then score_aime's
   exact equality with the answer), and last_number against its definition in
   src/longbench/metrics.h restated with a regular expression, on thousands of generated
   predictions (nested and unclosed braces, several boxes, thinking sections, signs, thousands
   separators, fractions, leading and trailing zeros); every per-example score and the dataset
   score must be identical.
2. `kvsearch data math` on files in the three layouts (AIME 2025's {question, answer: int}, MATH-500's
   {problem, answer, unique_id}, GSM8K's {question, answer "... #### 72"}): the LongBench-layout
   records, the configs (prompt, generation budget, metric, dev questions), the provenance file
   with each source's SHA-256; the prompt `generate --dataset` builds for a record ends with the
   boxed-answer instruction; a prediction file scored against the written answers; `run
   --thinking strip` on the GSM8K set records the rule with the run. Bad input: one line naming
   the file and line or the flag, exit 1, nothing written.

Env: KVSEARCH_BIN. Exit status 0 = pass.
"""
import hashlib
import json
import os
import random
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from kvs_testing import (check, error_output, finish, kvsearch, must, read_json, rows, scratch_dir,  # noqa: E402
                         write_jsonl)

RNG = random.Random(20261207)
INSTRUCTION = "Please reason step by step, and put your final answer within \\boxed{}."


def extract_boxed(text):
    """kvpress's extract_boxed(text, last=True), restated."""
    marker = "boxed{"
    at = text.rfind(marker)
    if at == -1:
        return None
    start, depth = at + len(marker), 1
    for i in range(start, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return text[start:i]
    return None


def boxed_one(pred, answers):
    return max(1.0 if extract_boxed(pred) == a else 0.0 for a in answers)


NUMBER = re.compile(r"\d+(?:,\d{3}(?!\d))*(?:\.\d+)?")


def last_number(text):
    found = None
    for m in NUMBER.finditer(text):
        whole, _, fraction = m.group(0).replace(",", "").partition(".")
        number = (whole.lstrip("0") or "0") + ("." + fraction.rstrip("0") if fraction.rstrip("0") else "")
        if m.start() > 0 and text[m.start() - 1] == "-" and number != "0":
            number = "-" + number
        found = number
    return found


def last_number_one(pred, answers):
    best = 0.0
    for a in answers:
        gold = last_number(a.rsplit("####", 1)[1] if "####" in a else a)
        ours = last_number(pred)
        best = max(best, 1.0 if gold is not None and ours is not None and gold == ours else 0.0)
    return best


PIECES = ["\\boxed{", "boxed{", "{", "}", "}}", "42", "042", "-7", "1,234", "1,2345", "3.50", "0.0", "-0",
          "x^{2}", "\\frac{1}{2}", "<think>", "</think>", "The answer is ", " ", "\n", ".", ",", "-", "####",
          "12,345,678.900", "7.", "é", "日本"]


def random_text(n):
    return "".join(RNG.choice(PIECES) for _ in range(RNG.randint(0, n)))


def make_pair():
    answer = RNG.choice(["42", "042", "1234", "-7", "\\frac{1}{2}", "x^{2}", "3.5", "0", "12345678.9"])
    kind = RNG.random()
    if kind < 0.4:
        pred = random_text(6) + "\\boxed{" + RNG.choice([answer, answer + " ", "1,234"]) + "}" + random_text(3)
    elif kind < 0.7:
        pred = random_text(8) + RNG.choice([answer, "-" + answer, "1,234", "0042.50"]) + random_text(2)
    else:
        pred = random_text(14)
    answers = [answer] if RNG.random() < 0.8 else [answer, "#### " + RNG.choice(["1,234", "42", "-7"])]
    return pred, answers


def check_metric(tmp, metric, one, pairs):
    path = os.path.join(tmp, f"{metric}.jsonl")
    write_jsonl(path, [{"pred": p, "answers": a, "all_classes": None, "length": 1} for p, a in pairs],
                ensure_ascii=False)
    per_example = os.path.join(tmp, f"{metric}.per_example.json")
    r = kvsearch("score", "--metric", metric, "--predictions", path, "--per-example", per_example)
    if not check(r.returncode == 0, f"score --metric {metric}: exit {r.returncode}: {r.stderr.strip()}"):
        return
    expected = [one(p, a) for p, a in pairs]
    got = read_json(per_example)[metric]
    bad = [i for i, (g, e) in enumerate(zip(got, expected)) if g != e]
    check(len(got) == len(expected) and not bad,
          f"{metric}: {len(bad)} of {len(pairs)} per-example scores differ, first "
          f"{pairs[bad[0]] if bad else None!r}: {got[bad[0]] if bad else None} vs {expected[bad[0]] if bad else None}")
    total = round(sum(expected) / len(expected) * 100, 2)
    check(json.loads(r.stdout)[metric] == total, f"{metric}: dataset score {r.stdout.strip()} != {total}")
    print(f"[measured] {metric}: {len(pairs)} predictions, {sum(expected):.0f} correct, every score equal to the "
          f"restated rule's")


def check_data_math(tmp):
    aime = os.path.join(tmp, "aime25.jsonl")
    write_jsonl(aime, [{"question": f"Find the remainder of {i} * 7 by 1000.", "answer": (i * 7) % 1000}
                       for i in range(1, 6)])
    math500 = os.path.join(tmp, "math500.jsonl")
    write_jsonl(math500, [{"problem": "Simplify $\\frac{2}{4}$.", "solution": "...", "answer": "\\frac{1}{2}",
                           "unique_id": "test/algebra/1.json"},
                          {"problem": "What is $3^2$?", "solution": "...", "answer": "9", "unique_id": "test/x/2.json"}])
    gsm8k = os.path.join(tmp, "gsm8k.jsonl")
    write_jsonl(gsm8k, [{"question": "Tom has 3 apples and buys 1,200 more. How many?",
                         "answer": "3 + 1200 = <<3+1200=1203>>1203\n#### 1,203"},
                        {"question": "Half of 10?", "answer": "10 / 2 = 5\n#### 5"}])
    out = os.path.join(tmp, "math")
    printed = must("data", "math", "--set", f"aime25:aime:{aime}", "--set", f"math500:math500:{math500}",
                   "--set", f"gsm8k:gsm8k:{gsm8k}", "--out", out, "--max-new-tokens", "64", "--dev", "1")
    check("aime25.jsonl: 5 problems, scored by boxed_answer" in printed, f"data math printed {printed!r}")
    config = {name: read_json(os.path.join(out, "config", f"dataset2{name}.json"))
              for name in ("prompt", "maxlen", "metric", "dev")}
    check(config["metric"] == {"aime25": "boxed_answer", "math500": "boxed_answer", "gsm8k": "last_number"},
          f"dataset2metric.json {config['metric']}")
    check(config["maxlen"] == {"aime25": 64, "math500": 64, "gsm8k": 64} and config["dev"]["gsm8k"] == 1,
          f"dataset2maxlen.json {config['maxlen']}, dataset2dev.json {config['dev']}")
    check(config["prompt"]["aime25"].format(input="P") == "P\n" + INSTRUCTION,
          f"the prompt template {config['prompt']['aime25']!r} does not render the instruction")
    with open(os.path.join(out, "data", "gsm8k.jsonl"), encoding="utf-8") as f:
        records = [json.loads(line) for line in f]
    check([r["answers"] for r in records] == [["1,203"], ["5"]] and records[0]["context"] == ""
          and records[0]["_id"] == "gsm8k-1" and records[0]["input"].startswith("Tom has"),
          f"gsm8k records {records}")
    with open(os.path.join(out, "data", "math500.jsonl"), encoding="utf-8") as f:
        first = json.loads(f.readline())
    check(first["answers"] == ["\\frac{1}{2}"] and first["_id"] == "test/algebra/1.json", f"math500 record {first}")
    provenance = read_json(os.path.join(out, "math_sets.json"))
    with open(aime, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    check(provenance["sets"][0]["sha256"] == digest and provenance["sets"][0]["layout"] == "aime"
          and provenance["kvsearch_commit"], f"math_sets.json {provenance}")
    # The prompt of a record, through the LongBench reader and the model's chat template.
    generated = json.loads(must("generate", "--model", "smollm2-135m", "--longbench", out, "--dataset", "aime25",
                                "--record", "2", "--max-new-tokens", "1", "--json"))
    text = json.loads(must("tokenize", "--model", "smollm2-135m", "--decode",
                           ",".join(map(str, generated["prompt_ids"])), "--json"))["text"]
    check("Find the remainder of 3 * 7 by 1000." in text and INSTRUCTION in text,
          f"the prompt of aime25 record 2 lacks the problem or the instruction: {text!r}")
    # Scored against the written answers: the second GSM8K answer and the first AIME one right.
    predictions = os.path.join(tmp, "gsm8k-pred.jsonl")
    write_jsonl(predictions, [{"pred": "... so 1203 apples", "answers": records[0]["answers"], "all_classes": None,
                               "length": 1},
                              {"pred": "<think>10/2</think> \\boxed{6}", "answers": records[1]["answers"],
                               "all_classes": None, "length": 1}])
    scored = json.loads(must("score", "--longbench", out, "--dataset", "gsm8k", "--predictions", predictions))
    check(scored == {"gsm8k": 50.0}, f"gsm8k predictions scored {scored}")
    # score --thinking: the same rule as run's. The first answer's number is inside its thinking.
    write_jsonl(predictions, [{"pred": "<think>so 1203 apples</think>", "answers": records[0]["answers"],
                               "all_classes": None, "length": 1},
                              {"pred": "<think>maybe 4</think> 5", "answers": records[1]["answers"],
                               "all_classes": None, "length": 1}])
    for rule, expected in (("keep", 100.0), ("strip", 50.0)):
        scored = json.loads(must("score", "--longbench", out, "--dataset", "gsm8k", "--predictions", predictions,
                                 "--thinking", rule))
        check(scored == {"gsm8k": expected}, f"score --thinking {rule}: {scored}, expected {expected}")
    r = kvsearch("score", "--longbench", out, "--dataset", "gsm8k", "--predictions", predictions,
                 "--thinking", "drop")
    _, problems = error_output(r, mentions=["--thinking", "drop", "keep or strip"])
    for p in problems:
        check(False, f"score --thinking drop: {p} ({r.stderr.strip()[:200]})")

    # The plumbing end to end (SmolLM2 cannot do the sums): a fixed policy on the GSM8K set, its
    # dev question then its test question, answers scored after any thinking section; the rule is
    # recorded with the run.
    db = os.path.join(tmp, "math.sqlite")
    must("run", "--model", "smollm2-135m", "--longbench", out, "--dataset", "gsm8k", "--profile", "baseline",
         "--budget", "32", "--eval-test", "--thinking", "strip", "--db", db)
    (search_json, test_score), = rows(db, "SELECT runs.search_json, replays.official_score FROM runs "
                                          "JOIN states ON states.run_id = runs.id "
                                          "JOIN replays ON replays.state_id = states.id")
    check(json.loads(search_json).get("thinking") == "strip" and test_score in (0.0, 100.0),
          f"run --thinking strip recorded {search_json}, test score {test_score}")
    r = kvsearch("run", "--model", "smollm2-135m", "--longbench", out, "--dataset", "gsm8k", "--profile",
                 "baseline", "--thinking", "drop", "--db", os.path.join(tmp, "never.sqlite"))
    _, problems = error_output(r, mentions=["--thinking", "drop", "keep or strip"])
    for p in problems:
        check(False, f"run --thinking drop: {p} ({r.stderr.strip()[:200]})")
    check(not os.path.exists(os.path.join(tmp, "never.sqlite")), "run --thinking drop wrote a database")

    # Bad input.
    broken = os.path.join(tmp, "broken.jsonl")
    with open(broken, "w", encoding="utf-8") as f:
        f.write(json.dumps({"question": "q", "answer": "no marker"}) + "\n")
    elsewhere = os.path.join(tmp, "never")
    for args, mentions in (
            (["--set", f"g:gsm8k:{broken}"], [f"{broken}:1", "####"]),
            (["--set", f"a:geometry:{aime}"], ["--set", "geometry", "aime, math500 or gsm8k"]),
            (["--set", "nocolon"], ["--set", "NAME:LAYOUT:FILE"]),
            (["--set", f"a:aime:{os.path.join(tmp, 'missing.jsonl')}"], ["missing.jsonl"]),
            (["--set", f"a:aime:{aime}", "--dev", "9"], ["--dev", "5"]),
            (["--set", f"a:aime:{aime}", "--set", f"a:aime:{aime}"], ["twice"])):
        r = kvsearch("data", "math", *args, "--out", elsewhere)
        _, problems = error_output(r, mentions=mentions)
        for p in problems:
            check(False, f"data math {' '.join(args)}: {p} ({r.stderr.strip()[:200]})")
        check(not os.path.exists(elsewhere), f"data math {' '.join(args)} wrote {elsewhere}")
    print("[measured] data math: three layouts written, read back, prompted and scored; 6 bad inputs refused")


def main():
    pairs = [make_pair() for _ in range(3000)]
    pairs[:6] = [("\\boxed{42}", ["42"]), ("\\boxed{\\frac{1}{2}}", ["\\frac{1}{2}"]), ("\\boxed{4", ["4"]),
                 ("\\boxed{1} then \\boxed{2}", ["2"]), ("#### 1,234.50", ["1234.5"]), ("-0.0 and 007", ["7"])]
    with scratch_dir("kvs-math-") as tmp:
        check_metric(tmp, "boxed_answer", boxed_one, pairs)
        check_metric(tmp, "last_number", last_number_one, pairs)
        check_data_math(tmp)
    finish(passed="math sets: both answer rules equal their definitions; data math writes readable sets")


if __name__ == "__main__":
    main()
