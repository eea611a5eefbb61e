#!/usr/bin/env python3
"""One prefill, many methods: `kvsearch bench search --methods` evaluates one policy per registered
method (kvsearch methods) on SmolLM2-135M and RULER niah_single_1 at 512 tokens, each alone and
then all in one batch on a shared prefill per question; every policy's answer in the batch must
equal its answer alone (layouts of different cache heads and windows share the prefill). 512
tokens (1,024 before) keep B = 96 a fifth of the prompt and halve the 17 prefills run alone.

Env: KVSEARCH_BIN. Exit status 0 = pass.
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from kvs_testing import check, finish, must, scratch_dir  # noqa: E402


def main():
    with scratch_dir("kvs-methods-batch-") as tmp:
        must("data", "ruler", "--model", "smollm2-135m", "--out", tmp, "--lengths", "512", "--count", "2",
             "--seed", "42", "--tasks", "niah_single_1")
        methods = [m["name"] for m in json.loads(must("methods", "--json"))]
        r = json.loads(must("--threads", "2", "bench", "search", "--model", "smollm2-135m", "--longbench", tmp,
                            "--dataset", "niah_single_1_512", "--methods", "--questions", "1", "--budget",
                            "96", "--new-tokens", "8", "--json"))
        check(sorted(r["policy_names"]) == sorted(methods),
              f"the batch holds {r['policy_names']}, the registry {methods}")
        check(r["predictions_agree"], f"{r['disagreements']} (policy, question) answers differ in the batch")
        # Where the cache went: every method keeps B = 96 per head and layer on average (mixkv's
        # AdaKV host rounds each head's count: within one; KVCache-Factory's pyramid schedule,
        # which pyramidkv and diverse follow, does not keep the uniform total). Every row holds
        # exactly its kept entries (SmolLM2: 30 layers x 3 KV heads x 64 x keys and values x 4
        # bytes per entry, 9 query heads where a method keeps per query head), no padding: ragged
        # heads (adakv, mixkv) no more than the uniform layout at the same mean budget.
        shapes = dict(zip(r["policy_names"], zip(r["kept_per_head"], r["held_bytes"], r["uniform_bytes"])))
        for name, (kept, held, uniform) in shapes.items():
            check(name in ("pyramidkv", "diverse") or abs(kept - 96) <= 1,
                  f"{name}: keeps {kept:.2f} per head and layer, not 96")
            check(0 < held <= uniform, f"{name}: holds {held} bytes, the uniform layout {uniform}")
            per_entry = 64 * 2 * 4
            check(held % per_entry == 0 and held // per_entry in (round(kept * 30 * 3), round(kept * 30 * 9)),
                  f"{name}: holds {held} bytes, not its {kept:.2f} entries per head and layer")
        for name in ("snapkv", "knorm", "cake"):
            check(shapes[name][1] == shapes[name][2], f"{name}: its layers' heads are not uniform: {shapes[name]}")
        print(f"[measured] cache held / uniform layout: " +
              ", ".join(f"{n} {h / u:.3f}" for n, (_, h, u) in sorted(shapes.items())))
        print(f"[measured] {len(methods)} methods x {r['questions']} questions: batch {r['batched_seconds']:.1f} s, "
              f"one at a time {r['sequential_seconds']:.1f} s, snapkv alone {r['snapkv_seconds']:.1f} s "
              f"({r['batched_over_snapkv']:.2f}x)")
    finish(passed="every method answers the same in the batch as alone")


if __name__ == "__main__":
    main()
