#!/usr/bin/env python3
"""The runner against Hugging Face transformers (the reference implementation).

Checkpoints are written by `kvsearch make-model`; transformers loads the same directory with
MistralForCausalLM / LlamaForCausalLM (float32, eager attention). For each checkpoint:
  - prefill logits of every prompt position (rows of `generate --dump-logits`) vs HF's forward,
  - the dumped logits of prefill + cached decode vs HF's full forward over prompt + generated,
  - the greedy tokens vs HF generate(do_sample=False),
all within max |diff| <= 1e-4.

Env: KVSEARCH_BIN (the binary), KVS_FIXTURES_DIR (fixtures). Exit status 0 = pass.
"""
import json
import os
import random
import sys
import tempfile
import time

import numpy as np
import torch
import transformers

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from kvs_testing import finish, must, read_json  # noqa: E402

TOLERANCE = 1e-4
NEW_TOKENS = 16


def random_ids(count, seed):
    rng = random.Random(seed)
    return [rng.randrange(3, 32000) for _ in range(count)]


def top2_gap(row):
    top = torch.topk(row, 2).values
    return float(top[0] - top[1])


def check_case(name, make_args, prompt_args, model_class, expect, tmp):
    failures = []
    model_dir = os.path.join(tmp, name)
    must("make-model", "--out", model_dir, *make_args, error=RuntimeError)
    dump = os.path.join(tmp, name + ".npy")
    out = json.loads(must("--threads", "2", "generate", "--model", model_dir, *prompt_args,
                          "--max-new-tokens", NEW_TOKENS, "--dump-logits", dump, "--json", error=RuntimeError))
    prompt, generated = out["prompt_ids"], out["generated_ids"]
    n, g = len(prompt), len(generated)
    dumped = torch.from_numpy(np.load(dump))

    # torch_dtype was renamed dtype in transformers 4.56.
    dtype_key = "dtype" if tuple(map(int, transformers.__version__.split(".")[:2])) >= (4, 56) else "torch_dtype"
    model = model_class.from_pretrained(model_dir, attn_implementation="eager",
                                        **{dtype_key: torch.float32})
    if next(model.parameters()).dtype != torch.float32:
        failures.append(f"{name}: HF model loaded in {next(model.parameters()).dtype}")
    model.eval()
    config = model.config
    for key, value in expect.items():  # the checkpoint is the one this case is about
        if getattr(config, key) != value:
            failures.append(f"{name}: HF config {key} = {getattr(config, key)!r}, expected {value!r}")
    eos = config.eos_token_id if isinstance(config.eos_token_id, list) else [config.eos_token_id]

    with torch.no_grad():
        full = model(torch.tensor([prompt + generated])).logits[0].float()
        hf_generated = model.generate(
            torch.tensor([prompt]), attention_mask=torch.ones(1, n, dtype=torch.long),
            do_sample=False, num_beams=1, max_new_tokens=NEW_TOKENS, eos_token_id=eos,
            pad_token_id=eos[0], temperature=None, top_p=None, top_k=None)[0, n:].tolist()

    if tuple(dumped.shape) != (n + g - 1, config.vocab_size):
        failures.append(f"{name}: dump shape {tuple(dumped.shape)}, expected {(n + g - 1, config.vocab_size)}")
        return failures, {}
    prefill_diff = float((dumped[:n] - full[:n]).abs().max())
    decode_diff = float((dumped[n:] - full[n:n + g - 1]).abs().max()) if g > 1 else 0.0
    gaps = [top2_gap(full[i]) for i in range(n - 1, n + g - 1)]
    measured = {"prompt_len": n, "generated": g, "prefill_max_diff": prefill_diff,
                "decode_max_diff": decode_diff, "min_top2_gap": min(gaps)}
    print(f"[measured] {name}: {measured}")
    if not prefill_diff <= TOLERANCE:
        failures.append(f"{name}: prefill logits differ by {prefill_diff:.3g}")
    if not decode_diff <= TOLERANCE:
        failures.append(f"{name}: prefill + cached decode logits differ by {decode_diff:.3g}")
    if generated != hf_generated:
        failures.append(f"{name}: greedy tokens {generated} != HF {hf_generated} "
                        f"(smallest top-2 gap {min(gaps):.3g})")
    if g != NEW_TOKENS and generated[-1] not in eos:
        failures.append(f"{name}: stopped after {g} tokens without an EOS")
    return failures, measured


def check_llama3_chat_prompt(model_dir, fixtures):
    """The llama3 chat prompt our generate builds equals Meta's ChatFormat over tiktoken's encoding
    of the checkpoint's own tokenizer.model."""
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe
    pattern = read_json(os.path.join(fixtures, "tokenizers", "llama-3.1", "cases.json"))["pattern"]
    ranks = load_tiktoken_bpe(os.path.join(model_dir, "tokenizer.model"))
    if len(ranks) != 128000:
        return [f"llama3_chat_bpe: {len(ranks)} ranks, expected 128000"]
    enc = tiktoken.Encoding("synthetic", pat_str=pattern, mergeable_ranks=ranks, special_tokens={})
    text = "Which paragraph says the river turned green? Paragraph 7, I think."
    expected = ([128000, 128006] + enc.encode("user") + [128007] + enc.encode("\n\n") + enc.encode(text) +
                [128009, 128006] + enc.encode("assistant") + [128007] + enc.encode("\n\n"))
    out = json.loads(must("generate", "--model", model_dir, "--prompt", text, "--chat-template",
                          "llama3", "--max-new-tokens", 1, "--json", error=RuntimeError))
    if out["prompt_ids"] != expected:
        return [f"llama3_chat_bpe: chat prompt {out['prompt_ids']} != tiktoken's {expected}"]
    return []


def main():
    torch.set_num_threads(2)
    fixtures = os.environ.get("KVS_FIXTURES_DIR", os.path.join(os.path.dirname(__file__), "..", "fixtures"))
    tokenizer = os.path.join(fixtures, "tokenizers", "mistral-7b-v0.1", "tokenizer.model")
    cases = [
        ("mistral_tokenizer", ["--preset", "tiny", "--seed", "1", "--tokenizer", tokenizer],
         ["--prompt", "The quick brown fox jumps over the lazy dog, then naps in the sun."],
         transformers.MistralForCausalLM, {"sliding_window": None, "model_type": "mistral"}),
        ("mistral_sliding_window_8", ["--preset", "tiny", "--seed", "2", "--sliding-window", "8"],
         ["--token-ids", ",".join(map(str, random_ids(48, 2)))],
         transformers.MistralForCausalLM, {"sliding_window": 8}),
        ("llama_rope_llama3", ["--preset", "tiny-llama", "--seed", "3"],
         ["--token-ids", ",".join(map(str, random_ids(40, 3)))],
         transformers.LlamaForCausalLM, {"model_type": "llama"}),
        # Llama-3 shaped: 128256-token vocabulary (the preset's synthetic byte-level BPE), Llama-3.1
        # ids, the llama3 chat format, rope_scaling llama3.
        ("llama3_chat_bpe", ["--preset", "tiny-llama3", "--seed", "5"],
         ["--prompt", "What is the capital of France? Answer in one word.", "--chat-template", "llama3"],
         transformers.LlamaForCausalLM, {"model_type": "llama", "vocab_size": 128256}),
        # The sharded path through the CLI: bf16 stored, >= 3 shards, run in fp32 by both sides.
        ("mistral_bf16_sharded", ["--preset", "tiny", "--seed", "4", "--dtype", "bf16",
                                  "--max-shard-mb", "1"],
         ["--token-ids", ",".join(map(str, random_ids(20, 4)))],
         transformers.MistralForCausalLM, {}),
    ]
    failures = []
    start = time.time()
    with tempfile.TemporaryDirectory(prefix="kvs_hf_ref_") as tmp:
        for name, make_args, prompt_args, model_class, expect in cases:
            try:
                case_failures, measured = check_case(name, make_args, prompt_args, model_class, expect, tmp)
            except Exception as e:  # a crash of one case is a failure, not the end of the run
                case_failures = [f"{name}: {type(e).__name__}: {e}"]
            failures += case_failures
        shards = [f for f in os.listdir(os.path.join(tmp, "mistral_bf16_sharded"))
                  if f.endswith(".safetensors")]
        if len(shards) < 3:
            failures.append(f"mistral_bf16_sharded: {len(shards)} shards, expected >= 3")
        scaling = read_json(os.path.join(tmp, "llama_rope_llama3", "config.json")).get("rope_scaling") or {}
        if scaling.get("rope_type") != "llama3":
            failures.append(f"llama_rope_llama3: config rope_scaling {scaling}")
        failures += check_llama3_chat_prompt(os.path.join(tmp, "llama3_chat_bpe"), fixtures)
    print(f"{len(cases)} checkpoints in {time.time() - start:.1f} s (transformers "
          f"{transformers.__version__}, torch {torch.__version__})")
    finish(failures, passed="PASS")


if __name__ == "__main__":
    main()
