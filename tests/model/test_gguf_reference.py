#!/usr/bin/env python3
"""GGUF checkpoints against the `gguf` package (gguf-py) and transformers' own GGUF loader.

1. Dequantization: `kvsearch convert` writes every tensor of a GGUF file as f32 safetensors; each
   must equal gguf-py's `dequantize` bit for bit (attn_q / attn_k after the inverse of the
   converter's row permutation). On tiny Llama GGUF files written here with random block bytes
   (finite f16 scales) in each of F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q6_K, and on
   all 272 tensors of SmolLM2-135M-Instruct.Q4_1.gguf (`--model smollm2-135m`).
2. Logits: `kvsearch generate --model smollm2-135m --token-ids` (fp32, a prompt of >= 1,000 ids,
   32 new tokens; every policy of a part in one run, from one prefill on one shared decode, the
   full cache's row beside them) against AutoModelForCausalLM.from_pretrained(dir, gguf_file=...) (its conversion
   saved once and shared, kvs_testing.smollm2_hf_dir: the float32 tensors are exact): prefill logits
   within 1e-4 of transformers' in float64 (or, where transformers' own fp32 is further from those,
   no further than 1.25 x its distance), decode logits within 1e-4 of its fp32 decode (or its
   SDPA-vs-eager spread, where wider), and the same greedy tokens, with the full cache, a SnapKV
   policy and a Global policy. Eviction on the reference side: a decode over the keys and values
   at the positions kvsearch kept (`generate --dump-kept`), so both sides decode the same cache;
   those kept sets are checked against the selection oracles of tests/evict/test_select_reference.py
   on HF's post-RoPE window queries and keys (equal per layer and head but for near-ties).

One run checks one part, so ctest runs the parts side by side (tests/model/CMakeLists.txt):
`dequant` (check 1), or `logits K/N` (check 2 for the K-th of N slices of the policies, in their
order below; the N slices together are every policy, each in exactly one). No argument: all of it.

Env: KVSEARCH_BIN. Exit status 0 = pass.
"""
import copy
import json
import math
from importlib import metadata
import os
import sys
import tempfile
import time

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "evict"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import gguf  # noqa: E402
import gguf_fixtures as fx  # noqa: E402
from test_select_reference import W, baseline, diverse  # noqa: E402
from kvs_testing import finish, must, read_json, smollm2_gguf, smollm2_hf_dir, torch_threads, write_json  # noqa: E402

# Prefill and decode logits. transformers runs its default attention (SDPA), as kvsearch's CPU
# prefill does. fp32 cannot match to 1e-4 on every CPU: on this 30-layer prompt transformers' own
# SDPA and eager attentions differ by up to 1.8e-4 by accumulation order alone, depending on the
# CPU's kernels (below 1e-4 on an AVX2 machine, 9.9e-5 on an AVX-512 EPYC, where both lie 1.22e-4
# from the float64 logits and kvsearch 1.21e-4). So the prefill is judged against the float64
# logits, the exact ones every fp32 run approximates: within 1e-4, or no further than
# EXACT_SLACK x transformers' own fp32 is. The decode, over a cache both sides hold equal, against
# transformers' fp32 decode: 1e-4, or its SDPA-vs-eager spread where wider.
TOLERANCE = 1e-4
EXACT_SLACK = 1.25
# kvsearch's kept sets against the oracles' on HF's tensors: a near-tie in the scores may flip a
# token (rounding noise between two implementations); at least this share of the (layer, head)
# sets must be identical.
MIN_IDENTICAL_KEPT_SETS = 0.9
NEW_TOKENS = 32
HF_NAMES = {"token_embd": "model.embed_tokens", "output_norm": "model.norm", "output": "lm_head",
            "attn_norm": "input_layernorm", "attn_q": "self_attn.q_proj", "attn_k": "self_attn.k_proj",
            "attn_v": "self_attn.v_proj", "attn_output": "self_attn.o_proj", "ffn_norm": "post_attention_layernorm",
            "ffn_gate": "mlp.gate_proj", "ffn_up": "mlp.up_proj", "ffn_down": "mlp.down_proj"}


def hf_name(gguf_name):
    parts = gguf_name.split(".")
    if parts[0] == "blk":
        return f"model.layers.{parts[1]}.{HF_NAMES[parts[2]]}.{parts[3]}"
    return f"{HF_NAMES[parts[0]]}.{parts[1]}"


def inverse_permute(w, heads):
    """HF row h*D + s*D/2 + i <- GGUF row h*D + 2i + s."""
    rows = w.shape[0]
    return w.reshape(heads, rows // heads // 2, 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def compare_dequantized(gguf_path, out_dir):
    """Every tensor of the file: kvsearch convert's f32 output vs gguf-py. Returns (count, failures)."""
    from safetensors.numpy import load_file
    must("convert", "--model", gguf_path, "--out", out_dir, error=RuntimeError)
    ours = load_file(os.path.join(out_dir, "model.safetensors"))
    reader = gguf.GGUFReader(gguf_path)
    heads = int(reader.fields["llama.attention.head_count"].parts[-1][0])
    kv_heads = int(reader.fields["llama.attention.head_count_kv"].parts[-1][0])
    failures = []
    for t in reader.tensors:
        expected = gguf.dequantize(t.data, t.tensor_type).astype(np.float32)
        if ".attn_q." in t.name:
            expected = inverse_permute(expected, heads)
        elif ".attn_k." in t.name:
            expected = inverse_permute(expected, kv_heads)
        got = ours.get(hf_name(t.name))
        kind = t.tensor_type.name
        if got is None:
            failures.append(f"{gguf_path}: {t.name} ({kind}) missing from the converted checkpoint")
        elif got.shape != expected.shape:
            failures.append(f"{t.name} ({kind}): shape {got.shape} != gguf-py {expected.shape}")
        elif not np.array_equal(got.view(np.uint32), expected.view(np.uint32)):
            bad = int((got.view(np.uint32) != expected.view(np.uint32)).sum())
            failures.append(f"{t.name} ({kind}): {bad} of {got.size} values differ from gguf-py")
    extra = set(ours) - {hf_name(t.name) for t in reader.tensors}
    if extra:
        failures.append(f"{gguf_path}: converted tensors not in the file: {sorted(extra)}")
    return len(reader.tensors), failures


def check_synthetic_types(tmp):
    types = [fx.F32, fx.F16, fx.BF16, fx.Q8_0, fx.Q4_0, fx.Q4_1, fx.Q5_0, fx.Q5_1, fx.Q4_K, fx.Q6_K]
    roles = ["token_embd", "output", "attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up",
             "ffn_down", "attn_norm"]
    failures, seen = [], set()
    for shift in (0, 3, 6):  # every type in every file; Q and K see six types
        assignment = {role: types[(r + shift) % len(types)] for r, role in enumerate(roles)}
        path = os.path.join(tmp, f"synthetic_{shift}.gguf")
        fx.tiny_llama(assignment, seed=shift).write(path)
        count, f = compare_dequantized(path, os.path.join(tmp, f"synthetic_{shift}"))
        failures += f
        seen |= set(assignment.values())
        print(f"[measured] synthetic file {shift}: {count} tensors, "
              f"{', '.join(fx.TYPE_NAMES[assignment[r]] + ' ' + r for r in roles)}: "
              f"{'bit-identical' if not f else 'MISMATCH'}")
    if seen != set(types):
        failures.append(f"synthetic files cover {sorted(seen)}, not every supported type")
    return failures


def kept_cache(q_window, keys, values, kept):
    """Per query head, the kept rows of the layer's keys and values: two lists of [m_h, d], m_h
    the head's own count (heads may keep different counts: adakv). `kept` lists query heads
    (query_head granularity) or KV heads (kv_head: each read by its group's query heads)."""
    group = q_window.shape[0] // keys.shape[0]
    if len(kept) == keys.shape[0]:
        kept = [kept[h // group] for h in range(q_window.shape[0])]
    k = keys.repeat_interleave(group, dim=0)
    v = values.repeat_interleave(group, dim=0)
    index = [torch.tensor(row, dtype=torch.long) for row in kept]
    return ([k[h, index[h]] for h in range(len(kept))], [v[h, index[h]] for h in range(len(kept))])


def reference_decode(model, caches, first_token, position, steps, eos):
    """One cache set's greedy decode (reference_decodes of one row): (tokens, logits [steps, vocab])."""
    return reference_decodes(model, [caches], first_token, position, steps, eos)[0]


def reference_decodes(model, rows, first_token, position, steps, eos):
    """Greedy decodes over per-query-head caches, one batch row per cache set of `rows` (each a list
    per layer of (keys, values), lists of [m_h, d] per query head: each head attends to its own
    entries only, whatever the others keep), HF's modules for everything else: llama, qwen2 (its
    biases are the projections') and qwen3 (q_norm / k_norm over each head before RoPE). Each
    layer's heads and rows are stacked, left-padded to the longest and the padding masked out
    (-inf before the softmax: weight exactly 0). Every row starts from `first_token` at `position`
    and stops at an eos id or `steps` tokens; rows that stopped keep decoding, ignored. Per row:
    (tokens, logits [its steps, vocab])."""
    from transformers.models.llama.modeling_llama import apply_rotary_pos_emb
    cfg = model.config
    heads, kv_heads = cfg.num_attention_heads, cfg.num_key_value_heads
    d = getattr(cfg, "head_dim", None) or cfg.hidden_size // heads
    batch = len(rows)
    stacked = []
    for l in range(len(rows[0])):
        longest = max(k.shape[0] for caches in rows for k in caches[l][0])

        def padded(tensors):
            return torch.stack([F.pad(t, (0, 0, longest - t.shape[0], 0)) for t in tensors])
        stacked.append((torch.stack([padded(caches[l][0]) for caches in rows]),  # [batch, heads, m, d]
                        torch.stack([padded(caches[l][1]) for caches in rows]),
                        torch.stack([torch.stack([torch.arange(longest) >= longest - k.shape[0]
                                                  for k in caches[l][0]]) for caches in rows])))
    tokens = [[first_token] for _ in rows]
    logits_rows = [[] for _ in rows]

    def running(b):
        return len(tokens[b]) < steps and tokens[b][-1] not in eos
    with torch.no_grad(), torch_threads(1):  # one-token steps
        while any(running(b) for b in range(batch)):
            x = model.model.embed_tokens(torch.tensor([[t[-1]] for t in tokens]))  # [batch, 1, hidden]
            cos, sin = model.model.rotary_emb(x, torch.tensor([[position]] * batch))
            for l, layer in enumerate(model.model.layers):
                attn = layer.self_attn
                h = layer.input_layernorm(x)
                q = attn.q_proj(h).view(batch, 1, heads, d)
                k = attn.k_proj(h).view(batch, 1, kv_heads, d)
                if hasattr(attn, "q_norm"):
                    q, k = attn.q_norm(q), attn.k_norm(k)
                q, k = q.transpose(1, 2), k.transpose(1, 2)
                v = attn.v_proj(h).view(batch, 1, kv_heads, d).transpose(1, 2)
                q, k = apply_rotary_pos_emb(q, k, cos, sin)
                keys, vals, valid = stacked[l]
                keys = torch.cat([keys, k.repeat_interleave(heads // kv_heads, 1)], 2)
                vals = torch.cat([vals, v.repeat_interleave(heads // kv_heads, 1)], 2)
                valid = torch.cat([valid, torch.ones(batch, heads, 1, dtype=torch.bool)], 2)
                stacked[l] = (keys, vals, valid)
                scores = (q @ keys.transpose(2, 3)) / math.sqrt(d)  # [batch, heads, 1, m]
                weights = F.softmax(scores.masked_fill(~valid.unsqueeze(2), -math.inf), dim=-1)
                o = weights @ vals  # [batch, heads, 1, d]
                x = x + attn.o_proj(o.transpose(1, 2).reshape(batch, 1, heads * d))
                x = x + layer.mlp(layer.post_attention_layernorm(x))
            out = model.lm_head(model.model.norm(x))[:, 0]
            for b in range(batch):
                if running(b):
                    logits_rows[b].append(out[b])
                    tokens[b].append(int(out[b].argmax()))
            position += 1
    return [(tokens[b], torch.stack(logits_rows[b]) if logits_rows[b] else torch.zeros(0))
            for b in range(batch)]


def all_policies(layers):
    """Every checked policy, in order: name -> (policy JSON, None for the full cache; the selection
    oracle over (window queries, keys, layer), None where kvpress's presses judge the kept sets)."""
    budget = 128
    policies = {
        "full": (None, lambda q, k, l: [list(range(k.shape[1]))] * q.shape[0]),
        "snapkv": ({"kind": "topk", "budget": budget, "schedule": "uniform"},
                   lambda q, k, l: baseline(q, k, budget, "uniform", l, layers)),
        "global": ({"kind": "greedy", "budget": budget, "schedule": "pyramid",
                    "lambda1": {"profile": "global", "a": [math.asinh(0.3)]},
                    "lambda2": {"profile": "global", "a": [math.asinh(-0.15)]}},
                   lambda q, k, l: diverse(q, k, budget, 0.3, -0.15, l, layers)),
    }
    # Every other registered method (`kvsearch methods --json`) at its defaults, a wrapper over
    # kvpress's SnapKV: their kept sets are checked against their references elsewhere
    # (tests/evict/); here the decode over what kvsearch kept.
    snap = {"method": "snapkv", "window": 64, "kernel": 5, "pooling": "avg", "granularity": "kv_head"}
    for method in json.loads(must("methods", "--json")):
        name = method["name"]
        if name in ("snapkv", "diverse"):  # above, with their oracles
            continue
        policy = {"method": name, "budget": budget}
        if method["wrapper"]:
            policy["base"] = snap
        policies[name] = (policy, None)
    # Variants: adakv's original rule, MixKV's AdaKV host (head budgets).
    policies["adakv-original"] = ({"method": "adakv", "budget": budget, "rule": "original",
                                   "base": snap}, None)
    policies["mixkv-adakv"] = ({"method": "mixkv", "budget": budget, "host": "adakv"}, None)
    return policies


def policy_slice(names, part, parts):
    """The part-th (1-based) of `parts` contiguous slices of `names`, as even as they come."""
    return names[(part - 1) * len(names) // parts:part * len(names) // parts]


def check_logits(tmp, part=1, parts=1):
    import transformers
    from transformers import AutoModelForCausalLM
    from transformers.models.llama.modeling_llama import apply_rotary_pos_emb
    start = time.time()
    model = AutoModelForCausalLM.from_pretrained(smollm2_hf_dir(), attn_implementation="sdpa")
    model.eval()
    print(f"[measured] transformers {transformers.__version__} GGUF conversion (shared copy): "
          f"{time.time() - start:.1f} s")
    failures = []
    if next(model.parameters()).dtype != torch.float32:
        failures.append(f"HF model loaded in {next(model.parameters()).dtype}")
    cfg = model.config
    eos = [2]  # <|im_end|>; transformers' GGUF tokenizer reports the wrong one (docs/gguf.md §6)
    # A prompt of real, non-repeating prose (a repeated sentence gives near-identical keys at many
    # positions, whose near-tied scores let the greedy admission flip on rounding noise), in the
    # file's own tokens: the GPL-3 text every Debian machine has (base-files).
    with open("/usr/share/common-licenses/GPL-3", encoding="utf-8") as f:
        text = " ".join(f.read().split())
    prompt = json.loads(must("tokenize", "--model", "smollm2-135m", "--text", text[:12000],
                             "--json", error=RuntimeError))["ids"][:1040]
    n = len(prompt)

    captured = {}
    hooks = [layer.self_attn.q_proj.register_forward_hook(
        lambda mod, inp, out, l=l: captured.__setitem__(l, out.detach()))
        for l, layer in enumerate(model.model.layers)]
    with torch.no_grad():
        out = model(torch.tensor([prompt]), use_cache=True)
    for h in hooks:
        h.remove()
    past = out.past_key_values
    heads, d, layers = cfg.num_attention_heads, cfg.head_dim, cfg.num_hidden_layers
    positions = torch.arange(n - W, n).unsqueeze(0)
    x = torch.zeros(1, W, cfg.hidden_size)
    cos, sin = model.model.rotary_emb(x, positions)
    window_queries, keys, values = [], [], []
    for l in range(layers):
        q = captured[l][:, n - W:].view(1, W, heads, d).transpose(1, 2)
        window_queries.append(apply_rotary_pos_emb(q, q, cos, sin)[0][0])
        keys.append(past.layers[l].keys[0])
        values.append(past.layers[l].values[0])
    prefill_logits = out.logits[0]
    model.config._attn_implementation = "eager"
    with torch.no_grad():
        spread = float((model(torch.tensor([prompt])).logits[0] - prefill_logits).abs().max())
    model.config._attn_implementation = "sdpa"
    tolerance = max(TOLERANCE, spread)
    with torch.no_grad():
        exact = copy.deepcopy(model).double()(torch.tensor([prompt])).logits[0]
    hf_error = float((prefill_logits.double() - exact).abs().max())
    prefill_bound = max(TOLERANCE, EXACT_SLACK * hf_error)
    print(f"[measured] transformers' SDPA vs eager prefill: max |dlogit| {spread:.3g} (decode bound "
          f"{tolerance:.3g}); SDPA vs float64: {hf_error:.3g} (prefill bound {prefill_bound:.3g})")
    first = int(prefill_logits[-1].argmax())

    policies = all_policies(layers)
    names = policy_slice(list(policies), part, parts)
    print(f"[measured] logits part {part}/{parts}: {', '.join(names)}")
    if not names:
        failures.append(f"logits part {part}/{parts} holds no policy")
    # One kvsearch run for the whole part: every policy from one prefill on one shared decode (its
    # rows batched as the evaluator batches them), the full cache's row beside them; each row's
    # logits and kept sets in its own file (`generate --policy ... --full-cache`, directories).
    args = ["--threads", "2", "generate", "--model", "smollm2-135m", "--dtype", "f32",
            "--token-ids", ",".join(map(str, prompt)), "--max-new-tokens", NEW_TOKENS,
            "--dump-logits", os.path.join(tmp, "logits"), "--json"]
    for name in names:
        if policies[name][0]:
            write_json(os.path.join(tmp, f"{name}.json"), policies[name][0])
            args += ["--policy", os.path.join(tmp, f"{name}.json")]
    if any(policies[name][0] for name in names):
        args += ["--dump-kept", os.path.join(tmp, "kept")]
    if "full" in names:
        args.append("--full-cache")
    os.makedirs(os.path.join(tmp, "logits"), exist_ok=True)  # a directory, even for one row
    os.makedirs(os.path.join(tmp, "kept"), exist_ok=True)
    rows = {row["name"]: row for row in map(json.loads, must(*args, error=RuntimeError).splitlines())}
    kept_of, caches_of = {}, {}
    for name in names:
        policy, select = policies[name]
        kept_path = os.path.join(tmp, "kept", f"{name}.kept.json")
        if policy and select is None:
            kept = read_json(kept_path)["layers"]
        elif policy:
            kept = read_json(kept_path)["layers"]
            oracle = [select(window_queries[l], keys[l], l) for l in range(layers)]
            pairs = [(set(a), set(b)) for l in range(layers) for a, b in zip(kept[l], oracle[l])]
            identical = sum(a == b for a, b in pairs) / len(pairs)
            print(f"[measured] {name}: kvsearch's kept sets equal the oracle's on {identical:.1%} of "
                  f"{len(pairs)} (layer, head) pairs")
            if len(kept) != layers or identical < MIN_IDENTICAL_KEPT_SETS:
                failures.append(f"{name}: kept sets equal the oracle's on {identical:.1%} of (layer, head) pairs")
        else:
            kept = [select(window_queries[l], keys[l], l) for l in range(layers)]
        kept_of[name] = kept
        caches_of[name] = [kept_cache(window_queries[l], keys[l], values[l], kept[l]) for l in range(layers)]
    # The reference decodes as one batch per kind of cache (the evicted ones, then the full cache,
    # whose 1,040 entries would pad every evicted row).
    t0 = time.time()
    decoded = {}
    for group in ([p for p in names if policies[p][0]], [p for p in names if not policies[p][0]]):
        if group:
            decoded.update(zip(group, reference_decodes(model, [caches_of[p] for p in group], first, n,
                                                        NEW_TOKENS, eos)))
    print(f"[measured] reference decodes of {len(names)} caches in {time.time() - t0:.1f} s")
    checked_prompt, prefill_diff, prefill_error = None, None, None
    for name in names:
        policy, _ = policies[name]
        kept = kept_of[name]
        file_name = name if policy else "full-cache"
        ours = rows[file_name]
        dump = os.path.join(tmp, "logits", f"{file_name}.npy")
        ref_tokens, ref_decode = decoded[name]
        dumped = np.load(dump, mmap_mode="r")  # about 200 MB a row, nearly all the prompt's logits
        generated = ours["generated_ids"]
        # Every row's prompt logits come from the one shared prefill: the first row's are measured
        # against transformers' and float64's; a row whose prompt logits are bitwise the same has
        # the same differences (measured again only where they are not).
        if checked_prompt is None or not np.array_equal(dumped[:n], checked_prompt):
            prompt_logits = torch.from_numpy(np.array(dumped[:n]))
            prefill_diff = float((prompt_logits - prefill_logits).abs().max())
            prefill_error = float((prompt_logits.double() - exact).abs().max())
            if checked_prompt is None:
                checked_prompt = prompt_logits.numpy()
        g = min(len(generated), len(ref_tokens)) - 1
        step_logits = torch.from_numpy(np.array(dumped[n:n + g]))
        decode_diff = float((step_logits - ref_decode[:g]).abs().max()) if g > 0 else 0.0
        del dumped
        os.remove(dump)
        print(f"[measured] {name}: prompt {n} ids, {len(generated)} generated, prefill max |dlogit| "
              f"{prefill_diff:.4g} (vs float64 {prefill_error:.4g}), decode max |dlogit| "
              f"{decode_diff:.3g}")
        if ours["prompt_ids"] != prompt:
            failures.append(f"{name}: prompt ids differ")
        if not prefill_error <= prefill_bound:
            failures.append(f"{name}: prefill logits lie {prefill_error:.3g} from float64's "
                            f"(bound {prefill_bound:.3g})")
        if not decode_diff <= tolerance:
            failures.append(f"{name}: decode logits differ by {decode_diff:.3g}")
        if generated != ref_tokens:
            failures.append(f"{name}: greedy tokens {generated} != reference {ref_tokens}")
        # The allocators keep different counts per head or layer (mixkv under its AdaKV host).
        ragged = policy and (policy.get("method") in ("adakv", "cake") or policy.get("host") == "adakv")
        if ragged:
            counts = [len(h) for layer in kept for h in layer]
            cache = ours["cache"]
            print(f"[measured] {name}: per-head counts {min(counts)}..{max(counts)}, "
                  f"{cache['kept_entries']} entries kept; cache holds {cache['bytes']} bytes of keys "
                  f"and values, the uniform layout at the same mean budget {cache['uniform_bytes']}")
            if sum(counts) != cache["kept_entries"] or len(set(counts)) < 2:
                failures.append(f"{name}: kept counts {sum(counts)} vs {cache['kept_entries']}, "
                                f"{len(set(counts))} distinct per-head counts")
        if name != "full" and len(set(map(tuple, kept[0]))) == 0:
            failures.append(f"{name}: nothing was kept")
    return failures


def check_dequantized(tmp):
    failures = check_synthetic_types(tmp)
    count, f = compare_dequantized(smollm2_gguf(), os.path.join(tmp, "smollm2"))
    print(f"[measured] SmolLM2-135M-Instruct.Q4_1.gguf: {count} tensors, "
          f"{count - len(f)} bit-identical to gguf-py {metadata.version('gguf')}")
    if count != 272:
        f.append(f"SmolLM2 file: {count} tensors, expected 272")
    return failures + f


def parse_part(argv):
    """(dequant?, logits part, logits parts) from the arguments: `dequant`, `logits K/N`, or none
    (both checks, every policy)."""
    if not argv:
        return True, 1, 1
    if argv == ["dequant"]:
        return True, 0, 0
    if len(argv) == 2 and argv[0] == "logits":
        part, _, parts = argv[1].partition("/")
        if part.isdigit() and parts.isdigit() and 1 <= int(part) <= int(parts):
            return False, int(part), int(parts)
    sys.exit(f"usage: {sys.argv[0]} [dequant | logits K/N], 1 <= K <= N; got {' '.join(argv)}")


def main():
    dequant, part, parts = parse_part(sys.argv[1:])
    torch.set_num_threads(2)
    failures = []
    with tempfile.TemporaryDirectory(prefix="kvs_gguf_ref_") as tmp:
        if dequant:
            failures += check_dequantized(tmp)
        if parts:
            failures += check_logits(tmp, part, parts)
    finish(failures, passed="PASS")


if __name__ == "__main__":
    main()
