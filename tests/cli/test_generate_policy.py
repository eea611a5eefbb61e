#!/usr/bin/env python3
"""`kvsearch generate` with eviction, through the built binary on a tiny random checkpoint:
- a budget at least the prompt length generates exactly what the full cache generates, for the
  shorthand policies and for a policy file;
- small budgets run and report the policy they used (JSON);
- several policies in one run (`--policy A --policy B --full-cache`, dumps in directories) give
  each policy's row as it is alone, a head-wise allocator (adakv) beside a decode-time policy too;
- bad policy input is one "error:" line and exit status 1.

Env: KVSEARCH_BIN. Exit status 0 = pass.
"""
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from kvs_testing import error_output, finish, kvsearch, must, read_json, write_json  # noqa: E402


def generate(model, ids, *extra):
    return json.loads(must("generate", "--model", model, "--token-ids", ",".join(map(str, ids)),
                           "--max-new-tokens", 12, "--json", *extra))


def expect_error(*args):
    r = kvsearch(*args)
    line, problems = error_output(r)
    if problems:
        sys.exit(f"expected one error line and exit 1 for {args}, got {r.returncode}: {r.stderr!r}")
    return line


def main():
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, "tiny")
        must("make-model", "--preset", "tiny", "--out", model, "--seed", 3)
        ids = [1] + [(i * 37 + 11) % 250 + 3 for i in range(180)]
        full = generate(model, ids)
        if full["policy"] is not None:
            failures.append("full-cache run reports a policy")

        for profile in ("baseline", "pyramid", "global"):
            out = generate(model, ids, "--budget", 4096, "--profile", profile)
            if out["generated_ids"] != full["generated_ids"]:
                failures.append(f"{profile} with budget >= prompt differs from the full cache: "
                                f"{out['generated_ids']} vs {full['generated_ids']}")
            if out["policy"]["budget"] != 4096:
                failures.append(f"{profile}: reported policy {out['policy']}")

        policy_path = os.path.join(tmp, "policy.json")
        write_json(policy_path, {"kind": "greedy", "budget": 4096, "schedule": "pyramid",
                                 "lambda1": {"profile": "global", "a": [0.2]},
                                 "lambda2": {"profile": "segments", "a": [-0.3, 0.1, 0.2]}})
        if generate(model, ids, "--policy", policy_path)["generated_ids"] != full["generated_ids"]:
            failures.append("policy file with budget >= prompt differs from the full cache")

        kept_path = os.path.join(tmp, "kept.json")
        small = generate(model, ids, "--budget", 16, "--profile", "global", "--lambda2", -0.3)
        if len(small["generated_ids"]) == 0 or small["policy"]["kind"] != "greedy":
            failures.append(f"small-budget global run: {small}")
        # --dump-kept (SnapKV, uniform budgets): per layer and cache head 16 positions, the W = 8 window last.
        generate(model, ids, "--budget", 16, "--profile", "baseline", "--dump-kept", kept_path)
        kept = read_json(kept_path)["layers"]
        window = list(range(len(ids) - 8, len(ids)))
        if not kept or any(len(head) != 16 or head[-8:] != window or len(set(head)) != 16
                           or not all(0 <= p < len(ids) for p in head) for layer in kept for head in layer):
            failures.append(f"--dump-kept: not 16 distinct prompt positions ending with the window per head: {kept}")

        # Several policies in one run (one prefill, one shared decode; the full cache beside them):
        # each row's answer, kept sets and logits are the ones it gets alone, its files named by
        # its policy file's stem; a teacher-forced decode-time pair likewise with its traces.
        several = {"snap": {"method": "snapkv", "budget": 16}, "knorm": {"method": "knorm", "budget": 24},
                   "ada": {"method": "adakv", "budget": 16, "base": {"method": "snapkv", "granularity": "kv_head"}}}
        args = []
        for name, policy in several.items():
            write_json(os.path.join(tmp, f"{name}.json"), policy)
            args += ["--policy", os.path.join(tmp, f"{name}.json")]
        dirs = {flag: os.path.join(tmp, flag.strip("-")) for flag in ("--dump-kept", "--dump-logits")}
        rows = [json.loads(line) for line in must(
            "generate", "--model", model, "--token-ids", ",".join(map(str, ids)), "--max-new-tokens", 12,
            "--json", "--full-cache", *args, *[x for flag, d in dirs.items() for x in (flag, d)]).splitlines()]
        if [r["name"] for r in rows] != [*several, "full-cache"]:
            failures.append(f"several policies: rows {[r['name'] for r in rows]}")
        elif rows[-1]["generated_ids"] != full["generated_ids"]:
            failures.append("several policies: the full cache's row differs from the full cache alone")
        import numpy as np
        for r, name in zip(rows, several):
            alone_kept, alone_logits = os.path.join(tmp, f"{name}-alone.json"), os.path.join(tmp, f"{name}-alone.npy")
            alone = generate(model, ids, "--policy", os.path.join(tmp, f"{name}.json"), "--dump-kept", alone_kept,
                             "--dump-logits", alone_logits)
            together = np.load(os.path.join(dirs["--dump-logits"], f"{name}.npy"))
            if (r["generated_ids"] != alone["generated_ids"] or r["cache"] != alone["cache"]
                    or read_json(os.path.join(dirs["--dump-kept"], f"{name}.kept.json")) != read_json(alone_kept)
                    or together.shape != np.load(alone_logits).shape
                    or float(np.abs(together - np.load(alone_logits)).max()) > 1e-4):
                failures.append(f"several policies: {name}'s row differs from {name} alone")
        if os.path.exists(os.path.join(dirs["--dump-kept"], "full-cache.kept.json")):
            failures.append("several policies: a kept-set file for the full cache")
        decode_time = {"tova": {"method": "tova", "decoding": {"interval": 1, "target": 40, "buffer": 1}},
                       "kn": {"method": "knorm", "budget": 64, "decoding": {"interval": 4, "target": 48, "buffer": 4}}}
        for name, policy in decode_time.items():
            write_json(os.path.join(tmp, f"{name}.json"), policy)
        teacher = ["--teacher-tokens", ",".join(str(5 + i % 40) for i in range(20))]
        traces = os.path.join(tmp, "traces")
        rows = [json.loads(line) for line in must(
            "generate", "--model", model, "--token-ids", ",".join(map(str, ids)), "--json", *teacher,
            "--trace-kept", traces, *[x for n in decode_time for x in ("--policy", os.path.join(tmp, f"{n}.json"))]
        ).splitlines()]
        for r, name in zip(rows, decode_time):
            alone_trace = os.path.join(tmp, f"{name}-alone.trace.jsonl")
            alone = generate(model, ids, "--policy", os.path.join(tmp, f"{name}.json"), *teacher,
                             "--trace-kept", alone_trace)
            with open(alone_trace) as a, open(os.path.join(traces, f"{name}.trace.jsonl")) as b:
                same_trace = a.read() == b.read()
            if (r["cache"] != alone["cache"] or not same_trace
                    or max(abs(x - y) for x, y in zip(r["teacher_nll_steps"], alone["teacher_nll_steps"])) > 1e-4):
                failures.append(f"several decode-time policies: {name}'s row differs from {name} alone")
        # A head-wise allocator's row (adakv compresses the prompt only) beside a decode-time
        # policy, on the decode-time path: it answers as alone and holds, per head, what it kept of
        # the prompt alone and then every position decoded.
        mixed = os.path.join(tmp, "mixed")
        os.makedirs(mixed)
        ada_row = json.loads(must("generate", "--model", model, "--token-ids", ",".join(map(str, ids)),
                                  "--max-new-tokens", 12, "--json", "--dump-kept", mixed,
                                  "--policy", os.path.join(tmp, "ada.json"),
                                  "--policy", os.path.join(tmp, "tova.json")).splitlines()[0])
        ada_alone = generate(model, ids, "--policy", os.path.join(tmp, "ada.json"))
        prompt_kept = read_json(os.path.join(tmp, "ada-alone.json"))["layers"]
        held = read_json(os.path.join(mixed, "ada.kept.json"))["layers"]
        counts = {len(h) for layer in prompt_kept for h in layer}
        n = len(ids)
        if (ada_row["generated_ids"] != ada_alone["generated_ids"] or len(counts) < 2
                or any(h[:len(k)] != k or h[len(k):] != list(range(n, n + len(h) - len(k)))
                       or len(h) == len(k)
                       for layer_h, layer_k in zip(held, prompt_kept) for h, k in zip(layer_h, layer_k))):
            failures.append(f"adakv beside a decode-time policy: answered {ada_row['generated_ids']} "
                            f"(alone {ada_alone['generated_ids']}), per-head counts {sorted(counts)}, "
                            f"or its held positions are not its prompt's kept ones then those decoded")
        # Two policy files of one stem cannot share a dump directory: refused before any work.
        os.makedirs(os.path.join(tmp, "other"), exist_ok=True)
        write_json(os.path.join(tmp, "other", "snap.json"), several["snap"])
        line = expect_error("generate", "--model", model, "--token-ids", "1,2,3", "--policy",
                            os.path.join(tmp, "snap.json"), "--policy", os.path.join(tmp, "other", "snap.json"),
                            "--dump-kept", os.path.join(tmp, "clash"))
        if '"snap"' not in line or os.path.exists(os.path.join(tmp, "clash")):
            failures.append(f"two policy files of one stem: {line}")

        write_json(policy_path, {"kind": "greedy", "budget": 4, "schedule": "uniform"})
        base = ["generate", "--model", model, "--token-ids", "1,2,3"]
        line = expect_error(*base, "--policy", policy_path)
        if "budget" not in line:
            failures.append(f"budget <= window error does not name the field: {line}")
        write_json(policy_path, {"kind": "greedy", "budget": 64, "schedule": "uniform", "lamda1": 1})
        line = expect_error(*base, "--policy", policy_path)
        if "lamda1" not in line:
            failures.append(f"unknown field error does not name it: {line}")
        expect_error(*base, "--policy", os.path.join(tmp, "missing.json"))
        expect_error(*base, "--lambda1", 0.5)
        line = expect_error(*base, "--dump-kept", os.path.join(tmp, "k.json"))
        if "needs a policy" not in line or os.path.exists(os.path.join(tmp, "k.json")):
            failures.append(f"--dump-kept without a policy: {line}")
        expect_error(*base, "--budget", 32, "--profile", "baseline", "--lambda2", 0.1)
        line = expect_error(*base, "--budget", 32, "--profile", "segmentz")
        if "--profile: unknown profile 'segmentz'" not in line:
            failures.append(f"a bad shorthand profile: {line}")
    finish(failures, passed="generate --policy: all checks passed")


if __name__ == "__main__":
    main()
