#!/usr/bin/env python3
"""qwen2 and qwen3 GGUF files written by gguf-py's GGUFWriter, against transformers' own GGUF loader.

Each case takes a random Qwen2 / Qwen3 model (test_qwen_reference.py's configs and values, hidden
256 so that Q4_K's 256-element blocks fit) and writes it as llama.cpp names it: general.architecture
qwen2 / qwen3, <arch>.* hyperparameters, blk.N.attn_q/k/v (.weight and, for qwen2, .bias),
blk.N.attn_q_norm / attn_k_norm (qwen3), token_embd, output (untied) and the rest; tensors in
Q8_0 (gguf-py's quantizer), Q4_K (random blocks with small finite scales: gguf-py has no Q4_K
quantizer), F16 and F32. transformers loads the file with from_pretrained(gguf_file=...), which
dequantizes with gguf-py; `kvsearch generate --dump-logits` (fp32) runs the same file:
  - every position's logits within 1e-4 of that model's float64 forward, relative to the row's
    largest logit where that exceeds 1, and the same 32 greedy tokens as its float64 generate
    (test_qwen_reference.py's against_float64),
  - `kvsearch convert` gives back every tensor as gguf-py dequantizes it, bit for bit.

Env: KVSEARCH_BIN. Exit status 0 = pass.
"""
import os
import sys
import tempfile

import numpy as np
import torch
import transformers

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import gguf  # noqa: E402
from kvs_testing import finish, must  # noqa: E402
from test_qwen_reference import against_float64, qwen_config, randomize  # noqa: E402

Q8_0, Q4_K, F16, F32 = (gguf.GGMLQuantizationType.Q8_0, gguf.GGMLQuantizationType.Q4_K,
                        gguf.GGMLQuantizationType.F16, gguf.GGMLQuantizationType.F32)
# GGUF role -> HF name (per layer under model.layers.N.) and the type it is written in.
LAYER_ROLES = {"attn_norm.weight": ("input_layernorm.weight", F32),
               "attn_q.weight": ("self_attn.q_proj.weight", Q8_0),
               "attn_k.weight": ("self_attn.k_proj.weight", Q4_K),
               "attn_v.weight": ("self_attn.v_proj.weight", F16),
               "attn_q.bias": ("self_attn.q_proj.bias", F32),
               "attn_k.bias": ("self_attn.k_proj.bias", F32),
               "attn_v.bias": ("self_attn.v_proj.bias", F32),
               "attn_q_norm.weight": ("self_attn.q_norm.weight", F32),
               "attn_k_norm.weight": ("self_attn.k_norm.weight", F32),
               "attn_output.weight": ("self_attn.o_proj.weight", Q8_0),
               "ffn_norm.weight": ("post_attention_layernorm.weight", F32),
               "ffn_gate.weight": ("mlp.gate_proj.weight", Q4_K),
               "ffn_up.weight": ("mlp.up_proj.weight", Q8_0),
               "ffn_down.weight": ("mlp.down_proj.weight", Q4_K)}
TOP_ROLES = {"token_embd.weight": ("model.embed_tokens.weight", Q8_0),
             "output_norm.weight": ("model.norm.weight", F32),
             "output.weight": ("lm_head.weight", Q8_0)}


def random_q4_k(rng, rows, cols):
    """Random Q4_K blocks whose values are O(1/sqrt(cols)): d and dmin small finite f16."""
    blocks = rng.integers(0, 256, size=(rows * cols // 256, 144), dtype=np.uint8)
    for at, scale in ((0, 0.6 / (63 * 15) / np.sqrt(cols / 16)), (2, 0.3 / 63 / np.sqrt(cols / 16))):
        blocks[:, at:at + 2] = (np.abs(rng.standard_normal(len(blocks))) * scale + scale / 4).astype(
            "<f2").view(np.uint8).reshape(-1, 2)
    return blocks.reshape(rows, -1)


def write_gguf(model, path, seed):
    cfg = model.config
    arch = cfg.model_type
    state = {k: v.detach().float().numpy() for k, v in model.state_dict().items()}
    rng = np.random.default_rng(seed)
    w = gguf.GGUFWriter(path, arch)
    w.add_name(f"tiny random {arch}")
    w.add_block_count(cfg.num_hidden_layers)
    w.add_context_length(cfg.max_position_embeddings)
    w.add_embedding_length(cfg.hidden_size)
    w.add_feed_forward_length(cfg.intermediate_size)
    w.add_head_count(cfg.num_attention_heads)
    w.add_head_count_kv(cfg.num_key_value_heads)
    w.add_rope_freq_base(cfg.rope_theta)
    w.add_layer_norm_rms_eps(cfg.rms_norm_eps)
    w.add_vocab_size(cfg.vocab_size)
    head_dim = getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads
    w.add_key_length(head_dim)
    w.add_value_length(head_dim)
    w.add_bos_token_id(cfg.bos_token_id)
    w.add_eos_token_id(cfg.eos_token_id)
    roles = dict(TOP_ROLES)
    for l in range(cfg.num_hidden_layers):
        roles.update({f"blk.{l}.{g}": (f"model.layers.{l}.{h}", t) for g, (h, t) in LAYER_ROLES.items()})
    types = {}
    for name, (hf, ttype) in roles.items():
        if hf not in state or (hf == "lm_head.weight" and cfg.tie_word_embeddings):
            continue
        value = state[hf]
        if ttype == Q4_K:
            w.add_tensor(name, random_q4_k(rng, *value.shape), raw_dtype=Q4_K)
        elif ttype == Q8_0:
            w.add_tensor(name, gguf.quantize(value, Q8_0), raw_dtype=Q8_0)
        else:
            w.add_tensor(name, value.astype(np.float16 if ttype == F16 else np.float32))
        types[name] = ttype.name
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return types


def compare_converted(path, out_dir):
    """`kvsearch convert`'s f32 tensors vs gguf-py's dequantize (no permutation: qwen keeps the
    half-split order). Returns the failures."""
    from safetensors.numpy import load_file
    must("convert", "--model", path, "--out", out_dir, error=RuntimeError)
    ours = load_file(os.path.join(out_dir, "model.safetensors"))
    failures, names = [], set()
    for t in gguf.GGUFReader(path).tensors:
        parts = t.name.split(".")
        if parts[0] == "blk":
            hf = f"model.layers.{parts[1]}." + LAYER_ROLES[".".join(parts[2:])][0]
        else:
            hf = TOP_ROLES[t.name][0]
        names.add(hf)
        expected = gguf.dequantize(t.data, t.tensor_type).astype(np.float32)
        got = ours.get(hf)
        if got is None or got.shape != expected.shape or not np.array_equal(got, expected):
            failures.append(f"{path}: {t.name} ({t.tensor_type.name}) differs from gguf-py's dequantize")
    if set(ours) != names:
        failures.append(f"{path}: converted tensors {sorted(set(ours) ^ names)} not in both")
    return failures


def check_case(name, config, seed, tmp):
    torch.manual_seed(seed)
    source = transformers.AutoModelForCausalLM.from_config(config, torch_dtype=torch.float32)
    randomize(source, seed)
    path = os.path.join(tmp, name + ".gguf")
    types = write_gguf(source, path, seed)
    failures = compare_converted(path, os.path.join(tmp, name + "_converted"))

    model = transformers.AutoModelForCausalLM.from_pretrained(tmp, gguf_file=name + ".gguf")
    if model.config.model_type != config.model_type:
        failures.append(f"{name}: transformers read model_type {model.config.model_type}")
    more, measured = against_float64(name, model, path, seed, tmp)
    counts = {t: list(types.values()).count(t) for t in sorted(set(types.values()))}
    print(f"[measured] {name}: {len(types)} tensors {counts}, tied {config.tie_word_embeddings}; "
          f"against transformers' GGUF model: {measured}")
    if not {"Q8_0", "Q4_K"} <= set(types.values()):
        failures.append(f"{name}: the file has no Q8_0 or no Q4_K tensor")
    return failures + more


def main():
    torch.set_num_threads(2)
    big = dict(hidden_size=256, intermediate_size=512)
    cases = [("qwen2_untied", qwen_config("qwen2", tied=False, **big), 21),
             ("qwen2_tied", qwen_config("qwen2", tied=True, **big), 22),
             # head_dim 128 (not 256 / 4): transformers' GGUF loader reads no qwen3 key length and
             # takes Qwen3Config's default, 128; kvsearch reads qwen3.attention.key_length.
             ("qwen3_untied_head_dim_128", qwen_config("qwen3", tied=False, head_dim=128, **big), 23),
             ("qwen3_tied_head_dim_128", qwen_config("qwen3", tied=True, head_dim=128, **big), 24)]
    failures = []
    with tempfile.TemporaryDirectory(prefix="kvs_qwen_gguf_") as tmp:
        for name, config, seed in cases:
            try:
                failures += check_case(name, config, seed, tmp)
            except Exception as e:  # one case's crash is its failure, not the end of the run
                failures.append(f"{name}: {type(e).__name__}: {e}")
    print(f"{len(cases)} GGUF files (transformers {transformers.__version__}, gguf-py)")
    finish(failures, passed="PASS")


if __name__ == "__main__":
    main()
