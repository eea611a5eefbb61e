#!/usr/bin/env python3
"""Generation under eviction on Qwen: kvsearch's greedy decode over the cache a policy kept
equals transformers' decode over the same kept sets, on random qwen3 and qwen2 models.

The models: transformers' Qwen3ForCausalLM (per-head q_norm / k_norm before RoPE, head_dim 48,
not hidden / heads) and Qwen2ForCausalLM (q/k/v biases, tied embeddings), small configs with GQA
and rope_theta 1e6, every parameter random (test_qwen_reference.py's `randomize`), saved as
safetensors. A prompt of 600 random ids; `kvsearch generate --policy P --dump-kept --dump-logits`
(fp32, 32 new tokens) for every registered method at B = 128 (`kvsearch methods --json`, wrappers
over SnapKV; the paper's SnapKV and Global policies; adakv's head budgets), and on qwen2 a subset.

The reference: the HF model in float64 runs the prompt; per layer and head its post-RoPE keys
(after k_norm on qwen3) and values at the positions kvsearch kept are the cache, and
test_gguf_reference.py's `reference_decode` decodes over it with HF's own modules (each head
attending to its own kept entries). Every decode step's logits within 1e-4 relative of the
reference's (the judgement of test_qwen_reference.py), and the greedy tokens equal over 32 steps.
Control: decoding over another policy's kept sets moves the logits past the bound.

Env: KVSEARCH_BIN. Exit status 0 = pass.
"""
import json
import os
import random
import sys

os.environ.setdefault("TQDM_DISABLE", "1")

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "common"))
from kvs_testing import check, finish, must, read_json, scratch_dir, write_json  # noqa: E402
from test_gguf_reference import all_policies, kept_cache, reference_decode  # noqa: E402
from test_qwen_reference import EOS, TOLERANCE, qwen_config, randomize, relative_error  # noqa: E402

PROMPT = 600
NEW_TOKENS = 32
QWEN2_SUBSET = ("full", "snapkv", "global", "adakv", "streaming_llm", "knorm")


def build(kind, tmp, seed):
    """A random `kind` model saved as safetensors: (its directory, the HF model in float64)."""
    import transformers
    if kind == "qwen3":
        config = qwen_config("qwen3", tied=False, head_dim=48, hidden_size=128, intermediate_size=256)
    else:
        config = qwen_config("qwen2", tied=True, hidden_size=128, intermediate_size=256)
    config.num_hidden_layers, config.num_attention_heads, config.num_key_value_heads = 3, 4, 2
    config.layer_types = ["full_attention"] * 3
    config.max_position_embeddings = 1024
    model_dir = os.path.join(tmp, kind)
    torch.manual_seed(seed)
    model = transformers.AutoModelForCausalLM.from_config(config, torch_dtype=torch.float32)
    randomize(model, seed)
    model.save_pretrained(model_dir, safe_serialization=True)
    model = model.double().eval()
    model.config._attn_implementation = "eager"
    return model_dir, model


def run_kind(kind, tmp, seed, names):
    model_dir, model = build(kind, tmp, seed)
    cfg = model.config
    layers, heads = cfg.num_hidden_layers, cfg.num_attention_heads
    rng = random.Random(seed)
    prompt = [rng.randrange(2, EOS) for _ in range(PROMPT)]
    n = len(prompt)
    with torch.no_grad():
        out = model(torch.tensor([prompt]), use_cache=True)
    keys = [out.past_key_values.layers[l].keys[0] for l in range(layers)]  # [kv, n, d] post-RoPE
    values = [out.past_key_values.layers[l].values[0] for l in range(layers)]
    first = int(out.logits[0, -1].argmax())
    heads_only = torch.zeros(heads, 1)  # kept_cache reads the query head count from it
    policies = all_policies(layers)
    kept_by_name, worst = {}, 0.0
    for name in names:
        policy, _ = policies[name]
        dump = os.path.join(tmp, f"{kind}-{name}.npy")
        kept_path = os.path.join(tmp, f"{kind}-{name}.kept.json")
        args = ["--threads", "2", "generate", "--model", model_dir, "--dtype", "f32", "--token-ids",
                ",".join(map(str, prompt)), "--max-new-tokens", NEW_TOKENS, "--dump-logits", dump, "--json"]
        if policy:
            policy_path = os.path.join(tmp, f"{kind}-{name}.json")
            write_json(policy_path, policy)
            args += ["--policy", policy_path, "--dump-kept", kept_path]
        ours = json.loads(must(*args))
        check((ours["device"], ours["dtype"]) == ("cpu", "f32") and ours["binary"],
              f"{kind} {name}: generate --json names device {ours['device']}, dtype {ours['dtype']}, "
              f"binary {ours['binary']!r}")
        kept = read_json(kept_path)["layers"] if policy else [[list(range(n))] * heads] * layers
        kept_by_name[name] = kept
        caches = [kept_cache(heads_only, keys[l], values[l], kept[l]) for l in range(layers)]
        tokens, logits = reference_decode(model, caches, first, n, NEW_TOKENS, [EOS])
        dumped = torch.from_numpy(np.load(dump)).double()
        generated = ours["generated_ids"]
        g = min(len(generated), len(tokens)) - 1
        error = relative_error(dumped[n:n + g], logits[:g]) if g > 0 else 0.0
        worst = max(worst, error)
        counts = sorted({len(h) for layer in kept for h in layer})
        print(f"[measured] {kind} {name}: {len(generated)} tokens; decode logits vs transformers over the "
              f"same kept sets (float64): {error:.3g} relative; kept per head {counts[0]}..{counts[-1]}")
        check(len(generated) == NEW_TOKENS or generated[-1] == EOS,
              f"{kind} {name}: {len(generated)} tokens without an EOS")
        check(error <= TOLERANCE, f"{kind} {name}: decode logits lie {error:.3g} (relative) from the reference's")
        check(generated == tokens, f"{kind} {name}: greedy tokens {generated} != the reference's {tokens}")
    # Control: snapkv's logits against a decode over knorm's kept sets must fall outside the bound.
    caches = [kept_cache(heads_only, keys[l], values[l], kept_by_name["knorm"][l]) for l in range(layers)]
    _, other = reference_decode(model, caches, first, n, 4, [EOS])
    dumped = torch.from_numpy(np.load(os.path.join(tmp, f"{kind}-snapkv.npy"))).double()
    moved = relative_error(dumped[n:n + 3], other[:3])
    print(f"[measured] {kind} control: snapkv's decode against a decode over knorm's kept sets: {moved:.3g}")
    check(moved > TOLERANCE, f"{kind}: another policy's kept sets decode within the bound: the check cannot fail")
    return worst


def main():
    import transformers
    transformers.utils.logging.disable_progress_bar()
    torch.set_num_threads(2)
    with scratch_dir("kvs-qwen-evict-decode-") as tmp:
        every = list(all_policies(3))
        print(f"qwen3: {len(every)} policies ({', '.join(every)})")
        worst3 = run_kind("qwen3", tmp, 11, every)
        worst2 = run_kind("qwen2", tmp, 12, QWEN2_SUBSET)
        print(f"[measured] largest relative decode difference: qwen3 {worst3:.3g}, qwen2 {worst2:.3g}")
    finish(passed="generation under eviction on Qwen equals transformers' decode over the same kept sets")


if __name__ == "__main__":
    main()
