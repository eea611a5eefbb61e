#!/usr/bin/env python3
"""kvsearch's runner against Hugging Face transformers on the same checkpoint and token ids, back
to back on this CPU: prefill tokens/s and decode ms per token at each prompt length, peak memory,
and the ratios; first the equality of the two (logits of every position within 1e-4, the same
greedy tokens), as tests/model/test_hf_reference.py checks it.

  tools/bench_runner_vs_hf.py --kvsearch build/kvsearch --model DIR [--kvsearch-model GGUF] \
      [--prompt-tokens 1024,4096,8160] [--new-tokens 32] [--repeats 3] [--threads 2]

--kvsearch-model gives kvsearch the same weights in the file they were converted from (for
SmolLM2: `smollm2-135m`, the Q4_1 GGUF that tools/bench_convert_smollm2.py dequantized into DIR):
HF loads DIR's float32, kvsearch the GGUF, whose quantized blocks its decode streams and
dequantizes to the same float32 values. Without it both load DIR.

The kvsearch side is its own `bench runner --json` (median of interleaved repeats); the HF side
(float32, its default attention) times the same prompts here: median of the repeats. Both build
the prompt as runner_bench_prompt does: BOS, then (i * 7919 + 13) mod vocab. Exit status 1 when
the two disagree.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch
import transformers

TOLERANCE = 1e-4
CHECK_NEW_TOKENS = 16


def prompt(tokens, config):
    ids = [(i * 7919 + 13) % config.vocab_size for i in range(tokens)]
    ids[0] = config.bos_token_id
    return ids


def kvsearch(binary, threads, *args):
    cmd = [binary, "--threads", str(threads), *map(str, args)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr}")
    return proc.stdout


def peak_reset():
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def status_bytes(key):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    return 0


def check_equal(args, model, ids):
    """Logits of prompt + greedy tokens and the greedy tokens themselves, kvsearch vs HF."""
    with tempfile.TemporaryDirectory(prefix="kvs_bench_hf_") as tmp:
        dump = os.path.join(tmp, "logits.npy")
        out = json.loads(kvsearch(args.kvsearch, args.threads, "generate", "--model", args.kvs_model,
                                  "--token-ids", ",".join(map(str, ids)), "--max-new-tokens",
                                  CHECK_NEW_TOKENS, "--dump-logits", dump, "--json"))
        dumped = torch.from_numpy(np.load(dump))
    generated = out["generated_ids"]
    n, g = len(ids), len(generated)
    eos = model.config.eos_token_id
    eos = eos if isinstance(eos, list) else [eos]
    with torch.inference_mode():
        full = model(torch.tensor([ids + generated])).logits[0].float()
        hf_generated = model.generate(
            torch.tensor([ids]), attention_mask=torch.ones(1, n, dtype=torch.long), do_sample=False,
            num_beams=1, max_new_tokens=CHECK_NEW_TOKENS, eos_token_id=eos, pad_token_id=eos[0],
            temperature=None, top_p=None, top_k=None)[0, n:].tolist()
    diff = float((dumped - full[:n + g - 1]).abs().max())
    return diff, generated, hf_generated


def hf_time(model, ids, new_tokens, repeats):
    """HF prefill seconds as generate() runs it (logits of the last position only, the work
    kvsearch's prefill does) and as a plain forward (logits of every position), decode seconds
    per token (greedy, its KV cache), medians of interleaved repeats; peak memory the prefill
    added."""
    prefill, plain, decode = [], [], []
    with torch.inference_mode():
        model(torch.tensor([ids[:64]]), use_cache=True)  # warm-up
        rss = status_bytes("VmRSS")
        peak_reset()
        model(torch.tensor([ids]), use_cache=True, logits_to_keep=1)
        peak_extra = max(0, status_bytes("VmHWM") - rss)
        for _ in range(repeats):
            start = time.perf_counter()
            model(torch.tensor([ids]), use_cache=True)
            plain.append(time.perf_counter() - start)
            start = time.perf_counter()
            out = model(torch.tensor([ids]), use_cache=True, logits_to_keep=1)
            prefill.append(time.perf_counter() - start)
            cache, token = out.past_key_values, out.logits[0, -1].argmax().view(1, 1)
            start = time.perf_counter()
            for _ in range(new_tokens - 1):  # the first token came from the prefill
                out = model(token, past_key_values=cache, use_cache=True)
                cache, token = out.past_key_values, out.logits[0, -1].argmax().view(1, 1)
            decode.append((time.perf_counter() - start) / (new_tokens - 1))
            del out, cache
    return statistics.median(prefill), statistics.median(plain), statistics.median(decode), peak_extra


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kvsearch", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--kvsearch-model", dest="kvs_model",
                        help="the checkpoint kvsearch loads (default: --model)")
    parser.add_argument("--prompt-tokens", default="1024,4096,8160")
    parser.add_argument("--new-tokens", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--check-tokens", type=int, default=1024,
                        help="prompt length of the equality check")
    args = parser.parse_args()
    args.kvs_model = args.kvs_model or args.model
    lengths = [int(x) for x in args.prompt_tokens.split(",")]
    torch.set_num_threads(args.threads)

    start = time.perf_counter()
    model = transformers.AutoModelForCausalLM.from_pretrained(args.model, dtype=torch.float32)
    hf_load = time.perf_counter() - start
    model.eval()
    attention = model.config._attn_implementation

    diff, ours, theirs = check_equal(args, model, prompt(args.check_tokens, model.config))
    equal = diff <= TOLERANCE and ours == theirs
    print(f"equality at {args.check_tokens} tokens: max |logit diff| {diff:.3g} (limit {TOLERANCE:g}), "
          f"greedy tokens {'equal' if ours == theirs else f'differ: {ours} vs HF {theirs}'}")

    bench = json.loads(kvsearch(args.kvsearch, args.threads, "bench", "runner", "--model", args.kvs_model,
                                "--prompt-tokens", args.prompt_tokens, "--new-tokens", args.new_tokens,
                                "--repeats", args.repeats, "--json"))
    MiB = 1048576
    print(f"{args.threads} threads, fp32, {args.repeats} repeats (median); HF transformers "
          f"{transformers.__version__} attention={attention}, torch {torch.__version__}")
    print(f"checkpoints: kvsearch {args.kvs_model} ({bench['checkpoint_bytes'] / MiB:.1f} MiB; decode "
          f"reads {bench['decode_weight_bytes'] / MiB:.1f} MiB of weights per token"
          f"{', its stored quantized blocks' if bench['decode_streams_stored_blocks'] else ''}), "
          f"HF {args.model}")
    print(f"load: kvsearch {bench['load_seconds']:.2f} s, HF {hf_load:.2f} s")
    print("prefill HF: as generate() runs it (last position's logits, the same work as kvsearch); "
          "HF-all: a plain forward (every position's logits)")
    print("ceiling: the ratio kvsearch would reach at 100% of the probes its bench interleaves with "
          "each length (prefill: its FLOPs at the sgemm rate; decode: weights and cache read once per "
          "token at the read bandwidth)")
    print(f"{'tokens':>7} | {'prefill tok/s kvs':>17} {'HF':>8} {'ratio':>6} {'ceiling':>7} {'HF-all':>8} "
          f"{'ratio':>6} | {'decode ms/tok kvs':>17} {'HF':>8} {'ratio':>6} {'ceiling':>7} | "
          f"{'prefill peak MiB kvs':>20} {'HF':>8}")
    for length in bench["lengths"]:
        n = length["prompt_tokens"]
        hf_prefill, hf_plain, hf_decode, hf_peak = hf_time(model, prompt(n, model.config),
                                                           args.new_tokens, args.repeats)
        kvs_rate = length["prefill_tokens_per_s"]["median"]
        kvs_ms = length["decode_ms_per_token"]["median"]
        hf_rate, hf_all, hf_ms = n / hf_prefill, n / hf_plain, hf_decode * 1e3
        # kvsearch's own fractions of the probes it interleaves with this length's repeats.
        best_rate = kvs_rate / length["prefill_sgemm_fraction"]["median"]
        best_ms = kvs_ms * length["decode_bandwidth_fraction"]["median"]
        print(f"{n:>7} | {kvs_rate:>17.1f} {hf_rate:>8.1f} {kvs_rate / hf_rate:>5.2f}x "
              f"{best_rate / hf_rate:>6.2f}x {hf_all:>8.1f} {kvs_rate / hf_all:>5.2f}x | "
              f"{kvs_ms:>17.2f} {hf_ms:>8.2f} {hf_ms / kvs_ms:>5.2f}x {hf_ms / best_ms:>6.2f}x | "
              f"{length['prefill_peak_extra_bytes'] / MiB:>20.1f} {hf_peak / MiB:>8.1f}",
              flush=True)
    return 0 if equal else 1


if __name__ == "__main__":
    sys.exit(main())
