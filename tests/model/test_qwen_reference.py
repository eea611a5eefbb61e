#!/usr/bin/env python3
"""qwen2 and qwen3 checkpoints written by transformers, against transformers.

Each case builds a Qwen2ForCausalLM / Qwen3ForCausalLM from a small config (GQA, tied or untied
embeddings, rope_theta 1e6; qwen3 with a head_dim that is not hidden_size / heads), gives every
parameter random values of O(1) effect (the library's own init zeroes the biases and sets the norms
to one, which would hide a missing bias or norm), and saves it with save_pretrained as safetensors
(one case sharded, with an index). `kvsearch generate --dump-logits` (fp32) then runs the directory:
  - every position's logits, prefill and cached decode, within 1e-4 of transformers' float64
    forward over prompt + generated, relative to the row's largest logit where that exceeds 1
    (the SmolLM2 tests' float64 judgement),
  - the same 32 greedy tokens as transformers' float64 generate.

Env: KVSEARCH_BIN. Exit status 0 = pass.
"""
import json
import math
import os
import random
import sys
import tempfile

import numpy as np
import torch
import transformers

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from kvs_testing import finish, must  # noqa: E402

TOLERANCE = 1e-4
NEW_TOKENS = 32
VOCAB = 1000
EOS = VOCAB - 1


def qwen_config(kind, tied, head_dim=None, hidden_size=64, intermediate_size=160):
    common = dict(vocab_size=VOCAB, hidden_size=hidden_size, intermediate_size=intermediate_size, num_hidden_layers=2,
                  num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512,
                  rms_norm_eps=1e-6, rope_theta=1e6, tie_word_embeddings=tied, bos_token_id=1,
                  eos_token_id=EOS, use_sliding_window=False, hidden_act="silu")
    if kind == "qwen2":
        return transformers.Qwen2Config(**common)
    return transformers.Qwen3Config(head_dim=head_dim, attention_bias=False, **common)


def randomize(model, seed):
    """Every parameter random: matrices N(0, 1/fan_in), embeddings N(0, 1), biases N(0, 0.25),
    norm weights 1 + N(0, 0.01)."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            noise = torch.randn(p.shape, generator=g, dtype=torch.float64)
            if name.endswith("norm.weight"):
                value = 1 + 0.1 * noise
            elif name.endswith(".bias"):
                value = 0.5 * noise
            elif "embed_tokens" in name:
                value = noise
            else:
                value = noise / math.sqrt(p.shape[1])
            p.copy_(value.to(p.dtype))


def relative_error(ours, exact):
    """Per row max |ours - exact| / max(1, max |exact|): the largest over the rows."""
    scale = exact.abs().amax(dim=-1).clamp(min=1.0)
    return float(((ours - exact).abs().amax(dim=-1) / scale).max())


def check_case(name, config, seed, shard, tmp):
    failures = []
    model_dir = os.path.join(tmp, name)
    torch.manual_seed(seed)
    model = transformers.AutoModelForCausalLM.from_config(config, torch_dtype=torch.float32)
    randomize(model, seed)
    model.save_pretrained(model_dir, safe_serialization=True,
                          **({"max_shard_size": "100KB"} if shard else {}))
    files = os.listdir(model_dir)
    if shard and "model.safetensors.index.json" not in files:
        failures.append(f"{name}: transformers wrote no shard index ({files})")
    if config.model_type == "qwen3" and config.head_dim * config.num_attention_heads == config.hidden_size:
        failures.append(f"{name}: head_dim is hidden_size / heads; the case is about another")

    more, measured = against_float64(name, model, model_dir, seed, tmp)
    print(f"[measured] {name}: {config.model_type}, tied {config.tie_word_embeddings}, head_dim "
          f"{getattr(config, 'head_dim', None) or config.hidden_size // config.num_attention_heads}, "
          f"{'sharded ' if shard else ''}{len(files)} files; {measured}")
    return failures + more


def against_float64(name, model, model_arg, seed, tmp):
    """`kvsearch generate` (fp32) on model_arg, a prompt of 40 random ids and NEW_TOKENS greedy
    steps, against `model` (transformers, converted to float64 here): (failures, a summary)."""
    failures = []
    rng = random.Random(seed)
    prompt = [rng.randrange(2, VOCAB - 1) for _ in range(40)]
    n = len(prompt)
    dump = os.path.join(tmp, name + ".npy")
    out = json.loads(must("--threads", "2", "generate", "--model", model_arg, "--dtype", "f32",
                          "--token-ids", ",".join(map(str, prompt)), "--max-new-tokens", NEW_TOKENS,
                          "--dump-logits", dump, "--json", error=RuntimeError))
    generated = out["generated_ids"]
    g = len(generated)
    dumped = torch.from_numpy(np.load(dump)).double()
    exact_model = model.double().eval()
    exact_model.config._attn_implementation = "eager"
    with torch.no_grad():
        exact = exact_model(torch.tensor([prompt + generated[:-1]])).logits[0]
        hf_generated = exact_model.generate(
            torch.tensor([prompt]), attention_mask=torch.ones(1, n, dtype=torch.long), do_sample=False,
            num_beams=1, max_new_tokens=NEW_TOKENS, eos_token_id=EOS, pad_token_id=EOS,
            temperature=None, top_p=None, top_k=None)[0, n:].tolist()
    if tuple(dumped.shape) != tuple(exact.shape):
        return [f"{name}: dumped logits {tuple(dumped.shape)}, expected {tuple(exact.shape)}"], ""
    prefill = relative_error(dumped[:n], exact[:n])
    decode = relative_error(dumped[n:], exact[n:]) if g > 1 else 0.0
    top2 = torch.topk(exact[n - 1:], 2).values
    gap = float((top2[:, 0] - top2[:, 1]).min())
    if not prefill <= TOLERANCE:
        failures.append(f"{name}: prefill logits lie {prefill:.3g} (relative) from float64's")
    if not decode <= TOLERANCE:
        failures.append(f"{name}: decode logits lie {decode:.3g} (relative) from float64's")
    if generated != hf_generated:
        failures.append(f"{name}: greedy tokens {generated} != transformers' {hf_generated}")
    if g != NEW_TOKENS and generated[-1] != EOS:
        failures.append(f"{name}: stopped after {g} tokens without an EOS")
    return failures, (f"prompt {n}, {g} generated; max relative |dlogit| vs float64: prefill "
                      f"{prefill:.3g}, decode {decode:.3g}; smallest top-2 gap {gap:.3g}")


def main():
    torch.set_num_threads(2)
    cases = [
        ("qwen2_untied", qwen_config("qwen2", tied=False), 11, False),
        ("qwen2_tied_sharded", qwen_config("qwen2", tied=True), 12, True),
        ("qwen3_untied_head_dim_32", qwen_config("qwen3", tied=False, head_dim=32), 13, False),
        ("qwen3_tied_head_dim_24_sharded", qwen_config("qwen3", tied=True, head_dim=24), 14, True),
    ]
    failures = []
    with tempfile.TemporaryDirectory(prefix="kvs_qwen_ref_") as tmp:
        for name, config, seed, shard in cases:
            try:
                failures += check_case(name, config, seed, shard, tmp)
            except Exception as e:  # one case's crash is its failure, not the end of the run
                failures.append(f"{name}: {type(e).__name__}: {e}")
    print(f"{len(cases)} checkpoints (transformers {transformers.__version__}, torch {torch.__version__})")
    finish(failures, passed="PASS")


if __name__ == "__main__":
    main()
