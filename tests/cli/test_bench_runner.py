#!/usr/bin/env python3
"""`kvsearch bench runner --model smollm2-135m`: the registered GGUF model runs through the runner
benchmark, the load time is printed next to the size of the file it read, and a 1,024-token
prefill's heap at its peak is at least its KV cache and within the bound the bench states.

Env: KVSEARCH_BIN. Exit status 0 = pass.
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from kvs_testing import finish, kvsearch, must, smollm2_gguf  # noqa: E402


def main():
    gguf = smollm2_gguf()
    base = ["--threads", "2", "bench", "runner", "--model", "smollm2-135m", "--prompt-tokens", "48",
            "--new-tokens", "2", "--repeats", "1"]
    out = json.loads(must(*base, "--json"))
    failures = []
    if out["checkpoint_bytes"] != os.path.getsize(gguf):
        failures.append(f"checkpoint_bytes {out['checkpoint_bytes']} != the file's {os.path.getsize(gguf)}")
    if not out["load_seconds"] > 0:
        failures.append(f"load_seconds {out['load_seconds']}")
    r = kvsearch(*base)
    mib = os.path.getsize(gguf) / (1 << 20)
    if r.returncode != 0 or f"for {mib:.1f} MiB of weight files" not in r.stdout:
        failures.append(f"the text output lacks the load line with {mib:.1f} MiB:\n{r.stdout}{r.stderr[-800:]}")
    length = json.loads(must("--threads", "2", "bench", "runner", "--model", "smollm2-135m", "--prompt-tokens",
                             "1024", "--new-tokens", "2", "--repeats", "1", "--json"))["lengths"][0]
    # SmolLM2: 30 layers x 3 KV heads x head_dim 64, keys and values in float32.
    cache = 30 * 3 * 64 * (1024 + 2) * 4 * 2
    held, bound = length["prefill_peak_heap_bytes"], length["prefill_memory_bound_bytes"]
    if not cache <= held <= bound:
        failures.append(f"1024-token prefill held {held} bytes of heap at its peak: expected at least "
                        f"its KV cache ({cache}) and at most the bound ({bound})")
    finish(failures, passed=f"bench runner --model smollm2-135m: load {out['load_seconds']:.2f} s for {mib:.1f} MiB; "
           f"a 1024-token prefill held {held / (1 << 20):.1f} MiB of heap at its peak "
           f"(bound {bound / (1 << 20):.1f} MiB)")


if __name__ == "__main__":
    main()
