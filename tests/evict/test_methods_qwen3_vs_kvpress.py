#!/usr/bin/env python3
"""Every scoring method kvpress has, against kvpress's own press, on a random Qwen3 model: the
approach and the judgement of test_methods_vs_kvpress.py (its functions), on another architecture.

The model: transformers' Qwen3ForCausalLM from a small config (4 layers, hidden 256, 8 query / 4
KV heads, head_dim 64, not 256 / 8), every parameter random (test_qwen_reference.py's values: the
q_norm / k_norm weights are not ones), saved as safetensors; kvsearch reads that directory and
kvpress runs on the HF model. A prompt of 600 random ids. What a method receives is the same
thing on every architecture (post-RoPE keys after k_norm, the window's queries after q_norm,
values), so for every layer and KV head, at B = 64 and 128, kvsearch's kept positions must be the
press's top-B by its own scores, up to ties within the band.

Env: KVSEARCH_BIN. Exit status 0 = pass.
"""
import os
import random
import sys

os.environ.setdefault("TQDM_DISABLE", "1")

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "model"))
sys.path.insert(0, os.path.join(HERE, "..", "common"))
from kvs_testing import check, finish, scratch_dir  # noqa: E402
from test_methods_vs_kvpress import check_presses, compare  # noqa: E402
from test_qwen_reference import qwen_config, randomize  # noqa: E402

PROMPT = 600


def main():
    import kvpress
    import transformers

    transformers.utils.logging.disable_progress_bar()
    torch.set_num_threads(2)
    config = qwen_config("qwen3", tied=False, head_dim=64, hidden_size=256, intermediate_size=512)
    config.num_hidden_layers, config.num_attention_heads, config.num_key_value_heads = 4, 8, 4
    config.layer_types = ["full_attention"] * 4
    config.max_position_embeddings = 1024
    with scratch_dir("kvs-methods-qwen3-") as tmp:
        model_dir = os.path.join(tmp, "qwen3")
        torch.manual_seed(5)
        source = transformers.AutoModelForCausalLM.from_config(config, torch_dtype=torch.float32)
        randomize(source, 5)
        source.save_pretrained(model_dir, safe_serialization=True)
        models = {}

        def model_for(press):
            attention = "eager" if isinstance(press, kvpress.ObservedAttentionPress) else "sdpa"
            if attention not in models:
                models[attention] = transformers.AutoModelForCausalLM.from_pretrained(
                    model_dir, attn_implementation=attention, dtype=torch.float32).eval()
            return models[attention]

        rng = random.Random(5)
        ids = [rng.randrange(2, config.vocab_size - 1) for _ in range(PROMPT)]
        n = len(ids)
        print(f"random Qwen3 model: {config.num_hidden_layers} layers, {config.num_attention_heads}/"
              f"{config.num_key_value_heads} heads, head_dim {config.head_dim}; prompt {n} random ids")
        results = check_presses(kvpress, model_for, model_dir, ids, tmp, label="Qwen3 ")
        # The rule can fail here too: knorm's kept sets judged by KeyDiff's scores must break it.
        _, broken = compare("knorm as keydiff", 128, results[("knorm", 128)][0], results[("keydiff", 128)][1])
        check(len(broken) > 0, "knorm's kept sets pass as KeyDiff's: the comparison cannot fail")
    finish(passed="every method equals its kvpress press on a random Qwen3 model")


if __name__ == "__main__":
    main()
