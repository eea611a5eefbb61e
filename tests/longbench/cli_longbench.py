#!/usr/bin/env python3
"""CLI tests of the LongBench commands, driving the built binary:
- `kvsearch score --pred-dir` on every golden folder prints result.json byte for byte, and its
  per-example scores match per_example_scores.json;
- `kvsearch data check` on a LongBench directory generated here (made-up records, the official
  counts; the config files come from $KVS_FIXTURES_DIR) prints the summary table;
- bad input of every kind gives one error line naming the file/line/field and exit status 1.
"""
import json
import os
import random
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from kvs_testing import (all_close, check, error_output, finish, kvsearch, longbench_dir, read_json,  # noqa: E402
                         read_text, same_json, write_jsonl)

FIXTURES = os.environ.get("KVS_FIXTURES_DIR", "")

COUNTS = {"narrativeqa": 200, "qasper": 200, "multifieldqa_en": 150, "hotpotqa": 200, "2wikimqa": 200,
          "musique": 200, "gov_report": 200, "qmsum": 200, "multi_news": 200, "trec": 200,
          "triviaqa": 200, "samsum": 200, "passage_count": 200, "passage_retrieval_en": 200,
          "lcc": 500, "repobench-p": 500}


def run(*args):
    return kvsearch(*args, timeout=120)


def expect_error(args, fragment):
    proc = run(*args)
    _, problems = error_output(proc, prefix="error: ", mentions=(fragment,))
    check(not problems, f"{' '.join(args)}: expected one 'error: ...{fragment}...' line and exit 1, got "
                        f"exit {proc.returncode}, stderr {proc.stderr!r}")


def golden():
    root = os.path.join(FIXTURES, "longbench", "golden")
    folders = sorted(d for d in os.listdir(root) if os.path.exists(os.path.join(root, d, "result.json")))
    check(folders, f"no golden folder in {root}")
    for folder in folders:
        path = os.path.join(root, folder)
        expected = read_text(os.path.join(path, "result.json"))
        indent = len(expected.split("\n")[1]) - len(expected.split("\n")[1].lstrip(" "))
        with tempfile.TemporaryDirectory() as tmp:
            per_example = os.path.join(tmp, "per_example.json")
            e = any(isinstance(v, dict) for v in json.loads(expected).values())  # a pred_e/ folder
            proc = run("score", "--pred-dir", path, "--indent", str(indent), "--per-example", per_example,
                       *(["--e"] if e else []))
            check(proc.returncode == 0, f"score --pred-dir {path}: {proc.stderr}")
            check(proc.stdout.rstrip("\n") == expected.rstrip("\n"),
                  f"{folder}: printed\n{proc.stdout}\ninstead of result.json\n{expected}")
            want_path = os.path.join(path, "per_example_scores.json")
            if proc.returncode == 0 and os.path.exists(want_path):
                ours = read_json(per_example)
                for dataset, scores in read_json(want_path).items():
                    check(all_close(ours.get(dataset, []), scores, 1e-9),
                          f"{folder}/{dataset}: per-example scores differ")
        for dataset, score in list(json.loads(expected).items())[:2]:  # the single-file form
            proc = run("score", "--dataset", dataset, "--predictions", os.path.join(path, dataset + ".jsonl"),
                       *(["--e"] if isinstance(score, dict) else []))
            check(proc.returncode == 0 and same_json(json.loads(proc.stdout or "{}"), {dataset: score}),
                  f"{folder}: score --dataset {dataset} printed {proc.stdout!r} {proc.stderr!r}")


def record(dataset, i, rng):
    classes = ["Date", "Other", "Other location"] if dataset == "trec" else None
    return {"input": f"question {i}?" if dataset not in ("gov_report", "lcc") else "",
            "context": f"made-up context {i} for {dataset}.", "answers": [f"answer {i}"],
            "length": rng.randint(100, 12000), "dataset": dataset, "language": "en",
            "all_classes": classes, "_id": f"{dataset}-{i}"}


def make_longbench(root):
    rng = random.Random(3)
    longbench_dir(root, FIXTURES)
    means = {}
    for dataset, n in COUNTS.items():
        rows = [record(dataset, i, rng) for i in range(n)]
        means[dataset] = sum(r["length"] for r in rows) / n
        write_jsonl(os.path.join(root, "data", dataset + ".jsonl"), rows)
    write_jsonl(os.path.join(root, "data", "hotpotqa_e.jsonl"), [record("hotpotqa", i, rng) for i in range(30)])
    return means


def data_check():
    with tempfile.TemporaryDirectory() as root:
        means = make_longbench(root)
        proc = run("data", "check", "--longbench", root)
        check(proc.returncode == 0, f"data check failed: {proc.stderr}")
        rows = {line.split()[0]: line.split() for line in proc.stdout.splitlines()[1:17]}
        check(list(rows) == list(COUNTS), f"data check rows: {list(rows)}")
        for dataset, n in COUNTS.items():
            row = rows.get(dataset, [])
            dev = 250 if dataset in ("lcc", "repobench-p") else 100
            check(row[1:3] == [str(n), f"{means[dataset]:.1f}"] and row[3:5] == [str(dev), str(n - dev)],
                  f"data check row {row} for {dataset}")
        check(rows.get("hotpotqa", [""] * 6)[5] == "30", "data check: hotpotqa_e count")
        check("OK, 16 datasets, 3750 examples" in proc.stdout, f"summary line: {proc.stdout}")

        data = os.path.join(root, "data")
        qasper = os.path.join(data, "qasper.jsonl")
        with open(qasper) as f:
            good = f.read().splitlines()
        write_jsonl(qasper, good[:3] + ['{"input": "q", "context": '] + good[4:])
        expect_error(["data", "check", "--longbench", root], "qasper.jsonl:4: malformed JSON")
        write_jsonl(qasper, good[:-1])
        expect_error(["data", "check", "--longbench", root], "199 records, the official file has 200")
        broken = json.loads(good[7])
        broken["length"] = "long"
        write_jsonl(qasper, good[:7] + [broken] + good[8:])
        expect_error(["data", "check", "--longbench", root],
                     "qasper.jsonl:8: field 'length' must be an integer (got string)")
        write_jsonl(qasper, good)
        os.remove(os.path.join(data, "lcc.jsonl"))
        expect_error(["data", "check", "--longbench", root], "lcc.jsonl: file not found")
        os.remove(os.path.join(root, "config", "dataset2maxlen.json"))
        expect_error(["data", "check", "--longbench", root], "dataset2maxlen.json: config file not found")
        expect_error(["data", "check", "--longbench", os.path.join(root, "nowhere")], "not a directory")


def bad_predictions():
    with tempfile.TemporaryDirectory() as tmp:
        good = {"pred": "Date", "answers": ["Date"], "all_classes": ["Date", "Other"], "length": 10}
        trec = os.path.join(tmp, "trec.jsonl")
        write_jsonl(trec, [good, good, "{\"pred\": \"x\", ", good])
        expect_error(["score", "--dataset", "trec", "--predictions", trec], "trec.jsonl:3: malformed JSON")
        write_jsonl(trec, [good, {"pred": "x", "all_classes": None}])
        expect_error(["score", "--dataset", "trec", "--predictions", trec], "trec.jsonl:2: missing field 'answers'")
        write_jsonl(trec, [good, dict(good, pred=5)])
        expect_error(["score", "--dataset", "trec", "--predictions", trec],
                     "trec.jsonl:2: field 'pred' must be a string (got number)")
        write_jsonl(trec, [good, {k: v for k, v in good.items() if k != "length"}])
        expect_error(["score", "--dataset", "trec", "--predictions", trec, "--e"],
                     "trec.jsonl:2: missing field 'length'")
        expect_error(["score", "--dataset", "dureader", "--predictions", trec], "unknown LongBench dataset 'dureader'")
        expect_error(["score", "--dataset", "trec", "--predictions", os.path.join(tmp, "none.jsonl")],
                     "none.jsonl: file not found")
        write_jsonl(trec, [good])
        write_jsonl(os.path.join(tmp, "vcsum.jsonl"), [good])
        expect_error(["score", "--pred-dir", tmp], "unknown LongBench dataset 'vcsum'")
        expect_error(["score", "--pred-dir", os.path.join(tmp, "missing")], "not a directory")
        proc = run("score", "--dataset", "trec")
        check(proc.returncode != 0 and "predictions" in proc.stderr, f"--dataset alone: {proc.stderr!r}")


def main():
    if not FIXTURES:
        sys.exit("KVS_FIXTURES_DIR is not set")
    golden()
    data_check()
    bad_predictions()
    finish(passed="0 failures")


if __name__ == "__main__":
    main()
