#!/usr/bin/env python3
"""`kvsearch generate` with eviction, through the built binary on a tiny random checkpoint:
- a budget at least the prompt length generates exactly what the full cache generates, for the
  shorthand policies and for a policy file;
- small budgets run and report the policy they used (JSON);
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
