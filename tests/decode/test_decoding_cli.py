#!/usr/bin/env python3
"""Eviction while decoding through its commands, on the real SmolLM2-135M (the GGUF file):

- a schedule that never evicts (target above everything the decode holds) generates exactly the
  full cache's greedy tokens: the shared decode's batch, re-laid at every due step, is the plain
  cache;
- `generate --teacher-tokens` decodes the given tokens, under any policy;
- StreamingLLM's rolling cache ({"method": "streaming_llm", "decoding": {"interval": 1, ...}})
  holds the 4 sinks and the most recent entries after every step, on every layer and KV head, and
  never more than target + interval entries; knorm at interval 16 holds its `target` entries per
  head from the last compression plus the steps fed since, in position order; a layer schedule
  (PyramidKV's pyramid) holds each layer's share of the target, one schedule for all layers;
- `kvsearch perplexity` without a policy equals transformers' perplexity of the same ids (float32,
  its own GGUF conversion), within 1e-4 relative;
- positions within the cache ("positions": "cache"): a rolling cache's teacher-forced
  log-likelihoods equal transformers' over a cache built by hand (the sinks and the most recent
  keys re-rotated to positions 0 .. k - 1, the next token at position k), within 1e-4; on a random
  model whose context is 64 positions, original positions refuse a 100-step decode and cache
  positions run it;
- `kvsearch fidelity`: a never-evicting schedule has KL 0, full top-1 agreement, no divergence
  and ROUGE-L 1 against the full cache's own continuation; a 32-entry rolling cache does not;
- bad input: one line naming the field or file, exit 1: a method that cannot score while decoding,
  a target below the sinks, an interval of 0, a buffer longer than the decode, query_head
  granularity, an empty text, a text that is not UTF-8.

Env: KVSEARCH_BIN. Exit status 0 = pass.
"""
import json
import math
import os
import sys

os.environ.setdefault("TQDM_DISABLE", "1")

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from kvs_testing import (check, error_output, finish, kvsearch, must, read_json, scratch_dir,  # noqa: E402
                         smollm2_hf, write_json)

MODEL = "smollm2-135m"
# One thread: these commands decode one token a step (kvs_testing.torch_threads says why).
THREADS = "1"
TEXT = ("The history of the lighthouse is a long one. Sailors have always needed to know where the "
        "rocks are, and for centuries fires were lit on hills near harbours. ") * 6


def ids_of(text):
    return json.loads(must("tokenize", "--model", MODEL, "--text", text, "--json"))["ids"]


def generate(tmp, name, prompt, policy=None, *flags):
    args = ["--threads", THREADS, "generate", "--model", MODEL, "--dtype", "f32", "--token-ids",
            ",".join(map(str, prompt)), "--json", *flags]
    if policy is not None:
        path = os.path.join(tmp, f"{name}.json")
        write_json(path, policy)
        args += ["--policy", path]
    return json.loads(must(*args))


def refused(tmp, name, policy, mentions, *flags):
    path = os.path.join(tmp, f"bad-{name}.json")
    write_json(path, policy)
    r = kvsearch("generate", "--model", MODEL, "--token-ids", "1,2,3,4,5,6,7,8", "--max-new-tokens",
                 "4", "--policy", path, *flags)
    _, problems = error_output(r, mentions=mentions)
    for p in problems:
        check(False, f"bad input {name}: {p} ({r.stderr.strip()[:300]})")


def transformers_perplexity(ids):
    import torch
    model = smollm2_hf()
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([ids])).logits[0]
    logp = torch.log_softmax(logits.double(), -1)
    nll = -logp[:-1].gather(1, torch.tensor(ids[1:]).view(-1, 1)).mean().item()
    return math.exp(nll)


def rerotation_reference(prompt, teacher, target, sinks):
    """transformers' -log p of teacher[2] after the rolling cache of `target` entries (the sinks and
    the most recent of prompt + teacher[0]) re-rotated to positions 0 .. target - 1, teacher[1] fed
    at position target; and of teacher[0], teacher[1] from the full cache."""
    import torch
    from transformers import DynamicCache
    from transformers.models.llama.modeling_llama import rotate_half
    model = smollm2_hf()
    ids = prompt + teacher[:1]
    m = len(ids)
    with torch.no_grad():
        full = DynamicCache()
        logits = model(input_ids=torch.tensor([ids + teacher[1:2]])).logits[0].double()
        logp = torch.log_softmax(logits, -1)
        first = [-logp[m - 2, teacher[0]].item(), -logp[m - 1, teacher[1]].item()]
        model(input_ids=torch.tensor([ids]), past_key_values=full)
        kept = list(range(sinks)) + list(range(m - (target - sinks), m))
        delta = torch.tensor([[j - p for j, p in enumerate(kept)]])
        cos, sin = model.model.rotary_emb(torch.zeros(1, dtype=torch.float32), delta)
        cache = DynamicCache()
        for l in range(model.config.num_hidden_layers):
            k, v = full.layers[l].keys[:, :, kept], full.layers[l].values[:, :, kept]
            k = k * cos.unsqueeze(1) + rotate_half(k) * sin.unsqueeze(1)
            cache.update(k, v, l)
        out = model(input_ids=torch.tensor([[teacher[1]]]), past_key_values=cache,
                    position_ids=torch.tensor([[target]])).logits[0, -1].double()
        third = -torch.log_softmax(out, -1)[teacher[2]].item()
    return first + [third]


def main():
    with scratch_dir("kvs-decode-cli-") as tmp:
        prompt = ids_of(TEXT)
        n = len(prompt)
        steps = 48

        # A schedule that never evicts decodes as the full cache.
        full = generate(tmp, "full", prompt, None, "--max-new-tokens", steps)
        never = generate(tmp, "never", prompt,
                         {"method": "knorm", "decoding": {"interval": 8, "target": 4000, "buffer": 8}},
                         "--max-new-tokens", steps)
        check(never["generated_ids"] == full["generated_ids"][:len(never["generated_ids"])]
              and len(never["generated_ids"]) == len(full["generated_ids"]),
              f"a schedule that never evicts: {never['generated_ids'][:12]}... vs the full cache's "
              f"{full['generated_ids'][:12]}...")
        check(never["cache"]["compressions"] == 0, f"never: {never['cache']['compressions']} compressions")

        # Teacher forcing: the fed tokens are the teacher's.
        teacher = ids_of(" The keeper climbed the stairs every evening to light the lamp, and in"
                         " the morning he wrote the weather in his book.") * 2
        forced = generate(tmp, "forced", prompt, {"method": "knorm", "decoding": {"interval": 16, "target": 64}},
                          "--teacher-tokens", ",".join(map(str, teacher)), "--dump-kept",
                          os.path.join(tmp, "knorm.kept.json"))
        check(forced["generated_ids"] == teacher, "teacher forcing: the generated ids are not the teacher's")
        check("teacher_perplexity" in forced and forced["teacher_perplexity"] > 1,
              f"teacher forcing: no perplexity ({forced.get('teacher_perplexity')})")
        kept = read_json(os.path.join(tmp, "knorm.kept.json"))
        seen = n + len(teacher)
        since = len(teacher) % 16  # steps fed after the last compression
        for l, layer in enumerate(kept["layers"]):
            for h, positions in enumerate(layer):
                ok = (len(positions) == 64 + since and positions == sorted(positions)
                      and all(0 <= p < seen for p in positions)
                      and (since == 0 or positions[-since:] == list(range(seen - since, seen))))
                check(ok, f"knorm layer {l} head {h}: {len(positions)} held, expected 64 + {since} "
                          f"ascending with the last {since} steps")

        # A layer schedule while decoding (PyramidKV's pyramid, the diverse method's default): one
        # schedule per compression from the tokens seen, each layer its share of the target, not a
        # pyramid per layer from its own length (before the fix Global held 80 entries a layer at
        # target 64, SnapKV 71).
        window, pyr_target, pyr_interval = 8, 40, 16
        pyramid = {"method": "diverse", "granularity": "kv_head", "window": window,
                   "decoding": {"interval": pyr_interval, "target": pyr_target, "buffer": window}}
        generate(tmp, "pyramid", prompt, pyramid, "--teacher-tokens", ",".join(map(str, teacher)),
                 "--dump-kept", os.path.join(tmp, "pyramid.kept.json"))
        counts = read_json(os.path.join(tmp, "pyramid.kept.json"))["counts"]
        layers = len(counts)
        per_layer = pyr_target - window
        low = per_layer // 20  # beta 20
        high = 2 * per_layer - low
        step = (high - low) // (layers - 1)
        since = len(teacher) % pyr_interval
        want = [window + high - l * step + since for l in range(layers)]
        check(all(c == [w] * len(c) for c, w in zip(counts, want)),
              f"pyramid while decoding: layers hold {[max(c) for c in counts]}, PyramidKV's shares of "
              f"{pyr_target} + the {since} steps since the last compression are {want}")

        # StreamingLLM's rolling cache: 4 sinks and the most recent, on every layer and head.
        target = 32
        rolling = {"method": "streaming_llm", "n_sink": 4, "decoding": {"interval": 1, "target": target,
                                                                         "buffer": 1}}
        out = generate(tmp, "rolling", prompt, rolling, "--teacher-tokens", ",".join(map(str, teacher)),
                       "--dump-kept", os.path.join(tmp, "rolling.kept.json"), "--trace-kept",
                       os.path.join(tmp, "rolling.trace.jsonl"))
        want = [0, 1, 2, 3] + list(range(seen - (target - 4), seen))
        held = read_json(os.path.join(tmp, "rolling.kept.json"))["layers"]
        check(all(h == want for layer in held for h in layer),
              f"rolling cache: layer 0 head 0 holds {held[0][0][:6]}..., expected {want[:6]}...")
        check(out["cache"]["largest"] == n + 1, f"rolling: largest {out['cache']['largest']}, not {n + 1} "
              f"(the prompt and the first step, before the first compression)")
        with open(os.path.join(tmp, "rolling.trace.jsonl"), encoding="utf-8") as f:
            trace = [json.loads(line) for line in f]
        check(len(trace) == len(teacher) == out["cache"]["compressions"],
              f"rolling: {len(trace)} traced compressions, {len(teacher)} steps")
        for record in trace:
            expect = [0, 1, 2, 3] + list(range(record["seen"] - (target - 4), record["seen"]))
            if record["layers"][5][1] != expect:
                check(False, f"rolling: after step {record['step']} layer 5 head 1 holds "
                             f"{record['layers'][5][1][:6]}...")
                break

        # Perplexity of the full cache against transformers on the same ids.
        text_path = os.path.join(tmp, "text.txt")
        with open(text_path, "w", encoding="utf-8") as f:
            f.write(TEXT)
        measured = json.loads(must("--threads", THREADS, "perplexity", "--model", MODEL, "--text", text_path,
                                   "--dtype", "f32", "--json"))
        ours = dict(measured["results"][0], tokens=measured["tokens"])
        check(ours["tokens"] == n, f"perplexity read {ours['tokens']} tokens, the tokenizer gives {n}")
        theirs = transformers_perplexity(prompt)
        check(abs(ours["perplexity"] - theirs) <= 1e-4 * theirs,
              f"full-cache perplexity {ours['perplexity']:.6f}, transformers {theirs:.6f}")
        print(f"[measured] full-cache perplexity of the {n}-token text: kvsearch {ours['perplexity']:.5f}, "
              f"transformers {theirs:.5f}")
        sink_path = os.path.join(tmp, "sink.json")
        write_json(sink_path, rolling)
        window_path = os.path.join(tmp, "window.json")
        write_json(window_path, dict(rolling, n_sink=0, name="window"))
        shared = json.loads(must("--threads", THREADS, "perplexity", "--model", MODEL, "--text", text_path,
                                 "--dtype", "f32", "--policy", sink_path, "--policy", window_path,
                                 "--full-cache", "--json"))
        sink, window, beside = shared["results"]
        check(beside["name"] == "full cache" and abs(beside["perplexity"] - ours["perplexity"]) < 1e-9,
              f"the full cache beside two policies: {beside['perplexity']} vs alone {ours['perplexity']}")
        alone = json.loads(must("--threads", THREADS, "perplexity", "--model", MODEL, "--text", text_path,
                                "--dtype", "f32", "--policy", window_path, "--json"))["results"][0]
        check(abs(alone["perplexity"] - window["perplexity"]) <= 1e-6 * window["perplexity"],
              f"the window-only cache on a shared decode {window['perplexity']}, alone {alone['perplexity']}")
        check(sink["largest_cache"] == target + 1, f"rolling perplexity: largest cache {sink['largest_cache']}")
        check(sink["perplexity"] != ours["perplexity"], "a 32-entry cache gave the full cache's perplexity")

        # Positions within the cache against transformers over a cache built by hand.
        rotated = dict(rolling, decoding=dict(rolling["decoding"], positions="cache"))
        out = generate(tmp, "rotated", prompt, rotated, "--teacher-tokens", ",".join(map(str, teacher[:3])))
        want = rerotation_reference(prompt, teacher[:3], target, 4)
        got = out["teacher_nll_steps"]
        check(len(got) == 3 and all(abs(a - b) <= 1e-4 * max(1.0, abs(b)) for a, b in zip(got, want)),
              f"cache positions: -log p {got}, transformers over the re-rotated cache {want}")
        print(f"[measured] re-rotated rolling cache, -log p of the third teacher token: kvsearch {got[2]:.6f}, "
              f"transformers {want[2]:.6f} (original positions: "
              f"{generate(tmp, 'unrotated', prompt, rolling, '--teacher-tokens', ','.join(map(str, teacher[:3])))['teacher_nll_steps'][2]:.6f})")

        # Past the trained context: a random model whose context is 64 positions.
        tiny = os.path.join(tmp, "tiny")
        must("make-model", "--out", tiny, "--preset", "tiny", "--seed", "3")
        config = read_json(os.path.join(tiny, "config.json"))
        config["max_position_embeddings"] = 64
        write_json(os.path.join(tiny, "config.json"), config)
        long_teacher = ",".join(str(5 + i % 50) for i in range(100))
        for positions, ok in (("original", False), ("cache", True)):
            path = os.path.join(tmp, f"tiny-{positions}.json")
            write_json(path, {"method": "streaming_llm", "n_sink": 4,
                              "decoding": {"interval": 1, "target": 16, "buffer": 1, "positions": positions}})
            r = kvsearch("generate", "--model", tiny, "--token-ids", "1,2,3,4,5,6,7,8", "--policy", path,
                         "--teacher-tokens", long_teacher, "--json")
            if ok:
                check(r.returncode == 0 and json.loads(r.stdout)["cache"]["largest"] <= 17,
                      f"cache positions past a 64-position context: {r.returncode} {r.stderr.strip()[:200]}")
            else:
                _, problems = error_output(r, mentions=["64 positions", "positions"])
                for p in problems:
                    check(False, f"original positions past a 64-position context: {p} ({r.stderr.strip()[:200]})")

        # bench decode: every method that can decode on one shared decode, beside one alone and the
        # full cache; those that cannot are named; each cache within its bound.
        bench = json.loads(must("--threads", THREADS, "bench", "decode", "--model", MODEL, "--text", text_path,
                                "--prompt-tokens", "64", "--new-tokens", "24", "--interval", "8",
                                "--target", "32", "--buffer", "8", "--json"))
        methods = [m["name"] for m in json.loads(must("methods", "--json"))]
        left = " ".join(bench["left_out"])
        check(len(bench["policies"]) + len(bench["left_out"]) == len(methods),
              f"bench decode: {len(bench['policies'])} policies + {len(bench['left_out'])} left out, "
              f"{len(methods)} methods")
        check(all(m in left for m in ("adakv", "cake", "mixkv")), f"bench decode left out: {left}")
        check(bench["shared"]["rows"] == len(bench["policies"]) and bench["alone"]["rows"] == 1,
              f"bench decode rows: {bench['shared']['rows']}, {bench['alone']['rows']}")
        check(all(0 < a <= b for a, b in zip(bench["largest_cache"], bench["bound"])),
              f"bench decode: largest {bench['largest_cache']} beyond bounds {bench['bound']}")
        check(bench["steps"] == 24 and bench["shared"]["step_ms"] > 0, "bench decode: steps or timing missing")
        # Bytes: SmolLM2 holds 30 layers x 3 KV heads x 64 x (key + value) x 4 bytes per entry. The
        # full cache reserves its 64 + 24 slots at once; a row holds at least its largest cache and
        # at most its bound plus the slots reserved to the next re-lay (the interval, 8).
        entry = 30 * 3 * 64 * 2 * 4
        k = len(bench["policies"])
        check(bench["full_cache"]["cache_bytes"] == (64 + 24) * entry,
              f"bench decode: the full cache held {bench['full_cache']['cache_bytes']} bytes, not {(64 + 24) * entry}")
        alone = bench["alone"]["cache_bytes"]
        check(bench["largest_cache"][0] * entry <= alone <= (bench["bound"][0] + 8) * entry,
              f"bench decode: one policy's cache held {alone} bytes; largest {bench['largest_cache'][0]}, "
              f"bound {bench['bound'][0]} entries of {entry} bytes")
        # The batch stores each row at its own length (segments, no padding to the longest row).
        shared = bench["shared"]["cache_bytes"]
        check(max(bench["largest_cache"]) * entry <= shared <= sum(b + 8 for b in bench["bound"]) * entry,
              f"bench decode: {k} policies' batch held {shared} bytes; largest {bench['largest_cache']}, "
              f"bounds {bench['bound']}")

        # fidelity: a schedule that never evicts is the full cache; a 32-entry rolling cache is not.
        never_path, small_path = os.path.join(tmp, "f-never.json"), os.path.join(tmp, "f-small.json")
        write_json(never_path, {"method": "knorm", "name": "never",
                                "decoding": {"interval": 8, "target": 4000, "buffer": 1}})
        write_json(small_path, dict(rolling, name="sink-32"))
        fid = json.loads(must("--threads", THREADS, "fidelity", "--model", MODEL, "--token-ids",
                              ",".join(map(str, prompt)), "--new-tokens", "32", "--block", "16",
                              "--policy", never_path, "--policy", small_path, "--json"))
        never_f, small_f = fid["policies"]
        check(len(fid["reference"]) == 32 and fid["reference"] == full["generated_ids"][:32],
              "fidelity: the reference is not the full cache's greedy continuation")
        check(never_f["mean_kl"] < 1e-6 and never_f["top1"] == 1.0 and never_f["first_divergence"] == -1
              and never_f["rouge_l"] == 1.0, f"fidelity of a never-evicting schedule: {never_f}")
        check(small_f["mean_kl"] > 1e-3 and 0 <= small_f["rouge_l"] < 1 and len(small_f["block_kl"]) == 2,
              f"fidelity of a 32-entry rolling cache: {small_f}")

        # A budget above the prompt keeps it whole: a windowed method's prefill selection never runs
        # on a one-token prompt (perplexity's).
        rkv_path = os.path.join(tmp, "rkv.json")
        write_json(rkv_path, {"method": "r_kv", "budget": 16,
                              "decoding": {"divide_length": 16, "target": 16, "buffer": 8}})
        rkv = json.loads(must("--threads", THREADS, "perplexity", "--model", MODEL, "--text", text_path,
                              "--max-tokens", "48", "--policy", rkv_path, "--json"))["results"][0]
        check(rkv["compressions"] == 2 and rkv["largest_cache"] == 32,  # after steps 16 and 32 of 47
              f"r_kv over a one-token prompt: {rkv['compressions']} compressions, largest {rkv['largest_cache']}")

        # Bad input.
        refused(tmp, "column-sums", {"method": "observed_attention", "decoding": {"interval": 8, "target": 16}},
                ["policy.decoding", "observed_attention", "cannot compress while decoding"])
        refused(tmp, "below-sinks", {"method": "streaming_llm", "n_sink": 8,
                                     "decoding": {"interval": 8, "target": 4}},
                ["policy.decoding.target", "8"])
        refused(tmp, "interval-0", {"method": "knorm", "decoding": {"interval": 0, "target": 16}},
                ["policy.decoding.interval"])
        refused(tmp, "buffer", {"method": "knorm", "decoding": {"interval": 100, "target": 16, "buffer": 64}},
                ["policy.decoding.buffer", "64"])
        refused(tmp, "granularity", {"method": "snapkv", "decoding": {"interval": 64, "target": 128}},
                ["policy.decoding", "kv_head"])
        refused(tmp, "window", {"method": "snapkv", "granularity": "kv_head", "window": 32,
                                "decoding": {"interval": 16, "target": 128}},
                ["policy.decoding.interval", "32"])
        empty = os.path.join(tmp, "empty.txt")
        with open(empty, "w", encoding="utf-8") as f:
            f.write("  \n")
        binary = os.path.join(tmp, "latin1.txt")
        with open(binary, "wb") as f:
            f.write("caf\u00e9 au lait".encode("latin-1"))
        policy = os.path.join(tmp, "streaming.json")
        write_json(policy, {"method": "streaming_llm", "decoding": {"interval": 1, "target": 16}})
        for path, what in ((empty, "empty"), (binary, "not UTF-8")):
            for command in ("perplexity", "fidelity"):
                r = kvsearch(command, "--model", MODEL, "--text", path, "--policy", policy)
                _, problems = error_output(r, mentions=[path, what])
                for p in problems:
                    check(False, f"{command} of a text that is {what}: {p} ({r.stderr.strip()[:200]})")
    finish(passed="decode-time eviction: commands, rolling cache, perplexity and bad input")


if __name__ == "__main__":
    main()
