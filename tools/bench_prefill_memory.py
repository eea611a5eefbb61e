#!/usr/bin/env python3
"""Peak memory of a long prefill on a Mistral-shaped checkpoint of small width: 32 query heads,
8 KV heads (Mistral-7B's), head_dim 8, hidden 256, random weights, 32k positions; kvsearch's
`bench runner` prints the heap the prefill held at its peak next to its stated bound (the full KV
cache plus O(n) activations), its resident growth and the size one layer's n x n scores would take.

  tools/bench_prefill_memory.py --kvsearch build/kvsearch [--tokens 32768] [--layers 1]
      [--sliding-window 0]   (4096: Mistral-7B-v0.1's window, which runs the blocked path)
"""
import argparse
import subprocess
import sys
import tempfile

import torch
import transformers


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kvsearch", required=True)
    parser.add_argument("--tokens", type=int, default=32768)
    parser.add_argument("--layers", type=int, default=1)
    parser.add_argument("--sliding-window", type=int, default=0)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    config = transformers.MistralConfig(
        vocab_size=1024, hidden_size=256, intermediate_size=704, num_hidden_layers=args.layers,
        num_attention_heads=32, num_key_value_heads=8, head_dim=8,
        max_position_embeddings=args.tokens + 8, rope_theta=1e6,
        sliding_window=args.sliding_window or None, tie_word_embeddings=False)
    torch.manual_seed(0)
    model = transformers.MistralForCausalLM(config).to(torch.float32)
    with tempfile.TemporaryDirectory(prefix="kvs_bench_memory_") as tmp:
        model.save_pretrained(tmp, safe_serialization=True)
        cmd = [args.kvsearch, "--threads", str(args.threads), "bench", "runner", "--model", tmp,
               "--prompt-tokens", str(args.tokens), "--new-tokens", "2", "--repeats", "1"]
        print(f"checkpoint: Mistral-shaped, 32/8 heads, head_dim 8, hidden 256, {args.layers} "
              f"layer(s), sliding window {args.sliding_window or 'none'}")
        print(" ".join(cmd).replace(tmp, "<checkpoint>"), flush=True)
        return subprocess.run(cmd).returncode


if __name__ == "__main__":
    sys.exit(main())
