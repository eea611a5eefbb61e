#!/usr/bin/env python3
"""K eviction policies on M RULER questions: NVIDIA kvpress (its own pipeline on transformers, one
prefill per policy and question) against kvsearch's evaluator (one prefill per question, the K
policies decoded as one batch), on the same checkpoint, CPU and questions. Prints the wall time of
each side with the ratio, and the accuracy of every policy under each protocol.

  tools/bench_policies_vs_kvpress.py --kvsearch build/kvsearch --model SAFETENSORS_DIR \
      --data RULER_DIR --dataset niah_single_1_2048 [--questions 20] [--budgets 64,128,256,512] \
      [--new-tokens 32] [--threads 2] [--protocols context,question] [--out DIR]

SAFETENSORS_DIR: SmolLM2 as tools/bench_convert_smollm2.py writes it, the weights kvpress loads; its
tokenizer comes from the GGUF file the directory was converted from, which kvsearch loads
(--kvsearch-model, default smollm2-135m). transformers' tokenizer of that file encodes the prompts
to the same ids as kvsearch's (checked on RULER prompts).
RULER_DIR: `kvsearch data ruler --model SAFETENSORS_DIR ...` output. The questions are the first M
of the dataset's test split (split seed 42, the split kvsearch's experiments use).

The K = 3 x budgets policies and the presses that stand for them (B: KV entries kept per head and
layer, the W = 8 observation window included; n: the prompt's tokens that kvpress compresses):
  SnapKV(B)    SnapKVPress(compression_ratio = 1 - B/n, window_size 8, kernel_size 7)
  PyramidKV(B) PyramidKVPress(compression_ratio = 1 - (B - 8)/n, window_size 8, kernel_size 7, beta 20)
  Global(B)    KeyDiffPress(compression_ratio = 1 - B/n): kvpress has no diversity-aware mean
               attention score; KeyDiff (keys least like the mean key) is its closest diverse press.
Where they still differ: kvpress pools scores with an average, kvsearch with a max (docs/reference.md);
a press sets one ratio for the whole prompt, kvsearch a count of entries per head.

--methods registry (the issue's comparison): the registered methods kvpress also has, each at
its reference's defaults as in tests/evict/test_methods_vs_kvpress.py, on both sides under
kvpress's default protocol only (kvsearch's policy field "observe": "context": the context alone
compressed to B, the question and answer prefix fed after it uncompressed); a press keeps
int(n (1 - r)) of the n context tokens, r = 1 - (B + 0.5) / n keeps B:
  snapkv (W 64, avg-pool 5, kv_head)  SnapKVPress(window_size 64, kernel_size 5)
  streaming_llm (n_sink 4)            StreamingLLMPress(n_sink 4)
  knorm, keydiff, tova                KnormPress, KeyDiffPress, TOVAPress
  expected_attention                  ExpectedAttentionPress()
K = 6 methods x the budgets (default 128,256: K = 12).

Protocols, since they decide what the window sees (--methods paper):
  context   kvpress's default: the press compresses the context before the question is appended,
            so the question tokens stay in the cache uncompressed and the window never sees them.
  question  kvpress's query-aware use: the question is part of what the press compresses (the
            context and question go in together), which is kvsearch's protocol: the whole prompt
            is compressed to B, the window holds its last 8 tokens.
kvsearch runs its own protocol once; kvpress runs once per protocol (the ratio is reported for the
`context` one, the pipeline a kvpress user runs by default). Accuracy is RULER's string_match_all
(the share of the gold strings found in the answer, case-insensitive), x 100.
"""
import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import torch
import transformers

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_convert_smollm2 import smollm2_gguf  # noqa: E402

WINDOW = 8
KERNEL = 7
SPLIT_SEED = 42
DEV_SIZE = 100  # RULER datasets: the first 100 records of the shuffle are the dev split


class MT19937_64:
    """std::mt19937_64, for kvsearch's split (src/longbench/split.h)."""

    def __init__(self, seed):
        self.mt = [0] * 312
        self.mt[0] = seed & 0xFFFFFFFFFFFFFFFF
        for i in range(1, 312):
            prev = self.mt[i - 1]
            self.mt[i] = (6364136223846793005 * (prev ^ (prev >> 62)) + i) & 0xFFFFFFFFFFFFFFFF
        self.index = 312

    def __call__(self):
        if self.index >= 312:
            for i in range(312):
                x = (self.mt[i] & 0xFFFFFFFF80000000) | (self.mt[(i + 1) % 312] & 0x7FFFFFFF)
                y = x >> 1
                if x & 1:
                    y ^= 0xB5026F5AA96619E9
                self.mt[i] = self.mt[(i + 156) % 312] ^ y
            self.index = 0
        x = self.mt[self.index]
        self.index += 1
        x ^= (x >> 29) & 0x5555555555555555
        x ^= (x << 17) & 0x71D67FFFEDA60000
        x ^= (x << 37) & 0xFFF7EEE000000000
        x ^= x >> 43
        return x & 0xFFFFFFFFFFFFFFFF


def test_split(num_records, seed=SPLIT_SEED):
    """kvsearch's test split: Fisher-Yates from the last position down, each j a rejection-sampled
    draw (src/core/rng.cpp), dev = the first DEV_SIZE of the order, test = the rest, ascending."""
    generator = MT19937_64(seed)
    order = list(range(num_records))
    top = 2**64 - 1
    for i in range(num_records, 1, -1):
        limit = top - (top % i + 1) % i
        x = generator()
        while x > limit:
            x = generator()
        j = x % i
        order[i - 1], order[j] = order[j], order[i - 1]
    return sorted(order[DEV_SIZE:])


def check_generator():
    """The C++ standard fixes the 10,000th draw of a default-seeded std::mt19937_64."""
    generator = MT19937_64(5489)
    for _ in range(9999):
        generator()
    if generator() != 9981545732273789042:
        sys.exit("internal error: MT19937_64 does not match std::mt19937_64")


def string_match_all(prediction, answers):
    return 100.0 * sum(a.lower() in prediction.lower() for a in answers) / len(answers)


def run(cmd):
    proc = subprocess.run(list(map(str, cmd)), capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(map(str, cmd))} failed ({proc.returncode}):\n{proc.stderr}")
    return proc.stdout


def run_kvsearch(args, spec, out):
    """Writes `spec`, runs it as one experiment (one evaluate job: one prefill per question) and its
    report; returns (seconds of `experiment run`, the results database)."""
    spec_path = os.path.join(out, "spec.json")
    with open(spec_path, "w") as f:
        json.dump(spec, f, indent=1)
    start = time.perf_counter()
    run([args.kvsearch, "--threads", args.threads, "experiment", "run", spec_path,
         "--out", os.path.join(out, "experiment"), "--jobs", 1])
    seconds = time.perf_counter() - start
    db = os.path.join(out, "experiment", "results.sqlite")
    run([args.kvsearch, "report", spec_path, "--db", db, "--out", os.path.join(out, "report")])
    return seconds, db


def experiment_spec(args, budgets, name, description, methods, baseline):
    """An experiment of `methods` at `budgets` on the questions kvpress runs (1 dev question, the
    first args.questions test questions), with one per-budget table of their scores."""
    return {
        "name": name,
        "description": description,
        "model": args.kvsearch_model,
        "longbench": os.path.abspath(args.data),
        "datasets": [args.dataset],
        "budgets": budgets,
        "split_seed": SPLIT_SEED,
        "dev_limit": 1,
        "test_limit": args.questions,
        "methods": methods,
        "tables": [{"name": "scores", "kind": "budgets", "title": "Test score per budget",
                    "methods": [m["name"] for m in methods], "baseline": baseline}],
    }


def kvsearch_side(args, budgets, out):
    """The K policies as one experiment (one evaluate job: one prefill per question), then the
    report's per-budget table; returns (seconds, {(method, budget): score})."""
    spec = experiment_spec(
        args, budgets, "kvpress_comparison",
        "tools/bench_policies_vs_kvpress.py: SnapKV, PyramidKV and Global at each budget on the "
        "questions kvpress runs.",
        [{"name": "SnapKV", "profile": "baseline"}, {"name": "PyramidKV", "profile": "pyramid"},
         {"name": "Global", "profile": "global"}],
        "SnapKV")
    seconds, _ = run_kvsearch(args, spec, out)
    return seconds, report_scores(out)


def report_scores(out):
    """{(method, budget): score} from the report's scores.csv: methods as rows, a column per
    budget ("B = 64"), then each budget's interval ("B = 64 low", "B = 64 high")."""
    scores = {}
    with open(os.path.join(out, "report", "scores.csv")) as f:
        for row in csv.DictReader(f):
            for column, value in row.items():
                if column.startswith("B = ") and column.removeprefix("B = ").isdigit():
                    scores[(row["Method"], int(column.removeprefix("B = ")))] = float(value)
    return scores


REGISTRY = [  # (kvsearch policy without budget, kvpress press class name, its keyword arguments)
    ({"method": "snapkv", "window": 64, "kernel": 5, "pooling": "avg", "granularity": "kv_head"},
     "SnapKVPress", {"window_size": 64, "kernel_size": 5}),
    ({"method": "streaming_llm", "n_sink": 4}, "StreamingLLMPress", {"n_sink": 4}),
    ({"method": "knorm"}, "KnormPress", {}),
    ({"method": "keydiff"}, "KeyDiffPress", {}),
    ({"method": "tova"}, "TOVAPress", {}),
    ({"method": "expected_attention"}, "ExpectedAttentionPress", {}),
]


def registry_kvsearch_side(args, budgets, out):
    """The registry methods under the context protocol as one experiment (one prefill per question
    and split point); returns (seconds, {(method, budget): score}, {(method, budget): per-question
    scores in question order})."""
    names = [policy["method"] for policy, _, _ in REGISTRY]
    spec = experiment_spec(
        args, budgets, "kvpress_registry_comparison",
        "tools/bench_policies_vs_kvpress.py --methods registry: the methods kvpress also has, "
        "context-only protocol, on the questions kvpress runs.",
        [{"name": policy["method"], "policy": dict(policy, observe="context")}
         for policy, _, _ in REGISTRY],
        "snapkv")
    seconds, db = run_kvsearch(args, spec, out)
    import sqlite3
    per_question, scores = {}, {}
    with sqlite3.connect(db) as connection:
        for name in names:
            for b in budgets:
                rows = connection.execute(
                    "SELECT p.score FROM predictions p JOIN states s ON s.id = p.state_id "
                    "JOIN runs r ON r.id = s.run_id WHERE p.split = 'test' AND r.run_key LIKE ? "
                    "ORDER BY p.question_index", (f"%/{name.replace('_', '-')}/B{b}",)).fetchall()
                per_question[(name, b)] = [100.0 * r[0] for r in rows]
                scores[(name, b)] = statistics.mean(per_question[(name, b)]) if rows else float("nan")
    return seconds, scores, per_question


def registry_kvpress_side(args, pipe, records, budgets):
    """Every registry press on every question, context-only; returns (seconds, {(method, budget):
    mean}, {(method, budget): per-question scores})."""
    import kvpress
    tokenizer = pipe.tokenizer
    per_question = {}
    start = time.perf_counter()
    for record in records:
        n_tokens = len(tokenizer.encode(record["context"], add_special_tokens=False))
        for policy, press_name, kwargs in REGISTRY:
            for b in budgets:
                ratio = max(0.0, 1.0 - (b + 0.5) / n_tokens)
                press = getattr(kvpress, press_name)(compression_ratio=ratio, **kwargs)
                answer = pipe(record["context"], question=record["input"],
                              answer_prefix=record["answer_prefix"], press=press,
                              max_new_tokens=args.new_tokens)["answer"]
                per_question.setdefault((policy["method"], b), []).append(
                    string_match_all(answer, record["answers"]))
    seconds = time.perf_counter() - start
    return seconds, {k: statistics.mean(v) for k, v in per_question.items()}, per_question


def registry_main(args, budgets, records):
    with tempfile.TemporaryDirectory(prefix="kvs_vs_kvpress_") as tmp:
        out = args.out or tmp
        os.makedirs(out, exist_ok=True)
        kvs_seconds, kvs_scores, kvs_questions = registry_kvsearch_side(args, budgets, out)
    pipe = kvpress_pipeline(args)  # outside the timings
    kvp_seconds, kvp_scores, kvp_questions = registry_kvpress_side(args, pipe, records, budgets)
    k = len(REGISTRY) * len(budgets)
    print(f"{args.dataset}: K = {k} policies (the registry methods kvpress has) x M = {args.questions} "
          f"test questions, context-only protocol, {args.new_tokens} new tokens at most, {args.threads} "
          f"threads, fp32; kvpress {_version('kvpress')}, transformers {transformers.__version__}")
    print(f"kvsearch (`experiment run`: model load, 1 dev question, then one prefill per question): "
          f"{kvs_seconds:.1f} s")
    print(f"kvpress (one prefill per policy and question): {kvp_seconds:.1f} s = "
          f"{kvp_seconds / kvs_seconds:.2f}x kvsearch's time")
    print(f"{'policy':<26} {'kvsearch':>9} {'kvpress':>9} {'questions that differ':>22}")
    for policy, _, _ in REGISTRY:
        for b in budgets:
            key = (policy["method"], b)
            differ = sum(a != c for a, c in zip(kvs_questions[key], kvp_questions[key]))
            print(f"{policy['method'] + '(' + str(b) + ')':<26} {kvs_scores[key]:>9.2f} "
                  f"{kvp_scores[key]:>9.2f} {differ:>22}")
    return 0


def presses(n_tokens, budgets):
    """(method, budget, press) for every policy; n_tokens: the tokens the press compresses."""
    from kvpress import KeyDiffPress, PyramidKVPress, SnapKVPress
    out = []
    for b in budgets:
        keep = min(1.0, b / n_tokens)
        out.append(("SnapKV", b, SnapKVPress(compression_ratio=1 - keep, window_size=WINDOW,
                                             kernel_size=KERNEL)))
        out.append(("PyramidKV", b, PyramidKVPress(compression_ratio=1 - min(1.0, (b - WINDOW) / n_tokens),
                                                   window_size=WINDOW, kernel_size=KERNEL, beta=20)))
        out.append(("Global", b, KeyDiffPress(compression_ratio=1 - keep)))
    return out


def kvpress_pipeline(args):
    """kvpress's pipeline on the safetensors weights, with HF's tokenizer of the GGUF file."""
    from kvpress import KVPressTextGenerationPipeline
    model = transformers.AutoModelForCausalLM.from_pretrained(args.model, dtype=torch.float32)
    gguf_dir, gguf_name = smollm2_gguf()
    tokenizer = transformers.AutoTokenizer.from_pretrained(gguf_dir, gguf_file=gguf_name)
    return KVPressTextGenerationPipeline(model=model, tokenizer=tokenizer, device="cpu")


def kvpress_side(args, pipe, records, budgets, protocol):
    """Every press on every question through kvpress's pipeline; returns (seconds,
    {(method, budget): mean score})."""
    tokenizer = pipe.tokenizer
    scores = {}
    start = time.perf_counter()
    for record in records:
        if protocol == "context":
            context, question = record["context"], record["input"]
        else:
            context, question = record["context"] + record["input"], ""
        n_tokens = len(tokenizer.encode(context, add_special_tokens=False))
        for method, budget, press in presses(n_tokens, budgets):
            answer = pipe(context, question=question, answer_prefix=record["answer_prefix"],
                          press=press, max_new_tokens=args.new_tokens)["answer"]
            scores.setdefault((method, budget), []).append(string_match_all(answer, record["answers"]))
    seconds = time.perf_counter() - start
    return seconds, {k: statistics.mean(v) for k, v in scores.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kvsearch", required=True)
    parser.add_argument("--model", required=True, help="safetensors checkpoint directory")
    parser.add_argument("--kvsearch-model", default="smollm2-135m",
                        help="the checkpoint kvsearch loads (the GGUF the safetensors came from)")
    parser.add_argument("--data", required=True, help="`kvsearch data ruler` output directory")
    parser.add_argument("--dataset", default="niah_single_1_2048")
    parser.add_argument("--questions", type=int, default=20)
    parser.add_argument("--budgets", default="64,128,256,512")
    parser.add_argument("--new-tokens", type=int, default=32)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--protocols", default="context,question")
    parser.add_argument("--methods", default="paper", choices=("paper", "registry"),
                        help="paper: SnapKV, PyramidKV and Global (kvsearch's protocol beside both "
                             "of kvpress's); registry: the methods both tools have, context-only")
    parser.add_argument("--out", help="keep kvsearch's spec, database and report here")
    args = parser.parse_args()
    budgets = [int(b) for b in args.budgets.split(",")]
    protocols = args.protocols.split(",")
    for p in protocols:
        if p not in ("context", "question"):
            sys.exit(f"--protocols: unknown protocol {p!r} (context, question)")
    torch.set_num_threads(args.threads)
    check_generator()

    path = os.path.join(args.data, "data", args.dataset + ".jsonl")
    with open(path) as f:
        all_records = [json.loads(line) for line in f if line.strip()]
    if len(all_records) < DEV_SIZE + args.questions:
        sys.exit(f"{path}: {len(all_records)} records; the test split needs {DEV_SIZE + args.questions} "
                 f"(kvsearch data ruler --count {DEV_SIZE + args.questions})")
    records = [all_records[i] for i in test_split(len(all_records))[:args.questions]]
    if args.methods == "registry":
        return registry_main(args, budgets, records)

    with tempfile.TemporaryDirectory(prefix="kvs_vs_kvpress_") as tmp:
        out = args.out or tmp
        os.makedirs(out, exist_ok=True)
        kvs_seconds, kvs_scores = kvsearch_side(args, budgets, out)
    pipe = kvpress_pipeline(args)  # loaded once for both protocols, outside the timings
    kvpress = {p: kvpress_side(args, pipe, records, budgets, p) for p in protocols}

    k = 3 * len(budgets)
    print(f"{args.dataset}: K = {k} policies x M = {args.questions} test questions, {args.new_tokens} new "
          f"tokens at most, {args.threads} threads, fp32; kvpress {_version('kvpress')}, transformers "
          f"{transformers.__version__}")
    print(f"kvsearch (`experiment run`: model load, 1 dev question, then one prefill per question): "
          f"{kvs_seconds:.1f} s")
    for p, (seconds, _) in kvpress.items():
        print(f"kvpress, protocol {p} (one prefill per policy and question): {seconds:.1f} s = "
              f"{seconds / kvs_seconds:.2f}x kvsearch's time")
    header = f"{'policy':<16} {'kvsearch':>9}" + "".join(f" {'kvpress/' + p:>17}" for p in protocols)
    print(header)
    for method in ("SnapKV", "PyramidKV", "Global"):
        for b in budgets:
            line = f"{method + '(' + str(b) + ')':<16} {kvs_scores[(method, b)]:>9.2f}"
            line += "".join(f" {kvpress[p][1][(method, b)]:>17.2f}" for p in protocols)
            print(line)
    return 0


def _version(package):
    from importlib.metadata import version
    return version(package)


if __name__ == "__main__":
    sys.exit(main())
