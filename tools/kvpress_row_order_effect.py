#!/usr/bin/env python3
"""The effect on scores of kvpress 0.5.5's row order while decoding (kvpress issue #173):
ScorerPress.compress gathers the kept rows in top-k order, so a press that reads its first n_sink
rows as the attention sinks (StreamingLLMPress, ExpectedAttentionPress) keeps whatever rows come
first after its first decode-time compression.

Bounded-cache perplexity of a text (the protocol of `kvsearch perplexity`: the first token is the
prompt, every later one is fed one forward at a time, positions continuing) on transformers'
conversion of SmolLM2-135M (float32, CPU, SDPA) under DecodingPress(compression_interval 32,
target_size 256, hidden_states_buffer_size 63) over StreamingLLMPress(n_sink=4) and
ExpectedAttentionPress, each twice in one batch: kvpress's own compress (top-k row order) and the
same with the kept indices sorted before the gather (position order, what kvsearch keeps). Both
ExpectedAttention rows keep kvpress's own future positions, so the pair differs in row order
alone. Beside them the full cache, and `kvsearch perplexity` of the same policies on the same
tokens (which must agree with the position-order rows, not with kvpress as it is).

    python3 tools/kvpress_row_order_effect.py [KVSEARCH_BIN] [TEXT] [TOKENS]
    # defaults: build/kvsearch, Debian's GPL-3 text, 1,024 tokens; about 5 minutes on 2 cores
"""
import contextlib
import json
import math
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "common"))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "decode"))
os.environ.setdefault("KVS_TEST_CACHE", os.path.join(HERE, "..", "build", "test-cache"))
os.environ.setdefault("TQDM_DISABLE", "1")

import torch  # noqa: E402
from decode_oracle import rows_press  # noqa: E402
from kvs_testing import smollm2_hf  # noqa: E402

INTERVAL, TARGET, BUFFER = 32, 256, 64


def sorted_compress(press):
    """press.compress with the kept indices in position order (kvpress's line plus one sort)."""
    from kvpress.utils import compute_n_kept

    def compress(module, hidden_states, keys, values, attentions, kwargs):
        if press.compression_ratio == 0:
            return keys, values
        scores = press.score(module, hidden_states, keys, values, attentions, kwargs)
        idx = scores.topk(compute_n_kept(keys.shape[2], press.compression_ratio), dim=-1).indices
        idx = idx.sort(dim=-1).values.unsqueeze(-1).expand(-1, -1, -1, module.head_dim)
        return keys.gather(2, idx).contiguous(), values.gather(2, idx).contiguous()
    return compress


def perplexities(model, ids, rows):
    """Perplexity over ids[1:] for each row (a kvpress press compressing that row of the batch, or
    None for the full cache: then the batch must be that one row)."""
    import kvpress
    from transformers import DynamicCache

    batch = len(rows)
    press = None
    if rows[0] is not None:
        press = kvpress.DecodingPress(base_press=rows_press(rows), compression_interval=INTERVAL,
                                      target_size=TARGET, hidden_states_buffer_size=BUFFER - 1)
    nll = torch.zeros(batch, dtype=torch.float64)
    cache = DynamicCache()
    with torch.no_grad(), press(model) if press is not None else contextlib.nullcontext():
        for i in range(len(ids) - 1):
            out = model(input_ids=torch.tensor([[ids[i]]] * batch), past_key_values=cache,
                        position_ids=torch.tensor([[i]]), use_cache=True)
            nll -= torch.log_softmax(out.logits[:, -1].double(), -1)[:, ids[i + 1]]
    return [math.exp(x / (len(ids) - 1)) for x in nll.tolist()]


def main():
    import kvpress

    binary = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "build", "kvsearch")
    text_path = sys.argv[2] if len(sys.argv) > 2 else "/usr/share/common-licenses/GPL-3"
    tokens = int(sys.argv[3]) if len(sys.argv) > 3 else 1024
    torch.set_num_threads(2)
    ids = json.loads(subprocess.check_output(
        [binary, "tokenize", "--model", "smollm2-135m", "--file", text_path, "--json"]))["ids"][:tokens]
    model = smollm2_hf("sdpa")

    presses = {"streaming_llm": lambda: kvpress.StreamingLLMPress(n_sink=4),
               "expected_attention": lambda: kvpress.ExpectedAttentionPress()}
    rows, labels = [], []
    for name, make in presses.items():
        as_is, fixed = make(), make()
        rows += [(as_is, as_is.compress), (fixed, sorted_compress(fixed))]
        labels += [f"{name}, kvpress as it is (top-k row order)", f"{name}, kept rows sorted (position order)"]
    kv = perplexities(model, ids, rows)
    full = perplexities(model, ids, [None])[0]

    with tempfile.TemporaryDirectory() as tmp:
        args = [binary, "--threads", "2", "perplexity", "--model", "smollm2-135m", "--text", text_path,
                "--max-tokens", str(tokens), "--dtype", "f32", "--full-cache", "--json"]
        for name in presses:
            policy = {"method": name, "decoding": {"interval": INTERVAL, "target": TARGET, "buffer": BUFFER}}
            if name == "streaming_llm":
                policy["n_sink"] = 4
            path = os.path.join(tmp, f"{name}.json")
            with open(path, "w") as f:
                json.dump(policy, f)
            args += ["--policy", path]
        ours = json.loads(subprocess.check_output(args))
    by_name = {r["name"]: r["perplexity"] for r in ours["results"]}

    print(f"{len(ids)} tokens of {text_path} (the first the prompt), DecodingPress interval {INTERVAL}, "
          f"target {TARGET}, buffer {BUFFER}; SmolLM2-135M float32")
    print(f"{'cache':60s} {'kvpress':>9s} {'vs full':>8s} {'kvsearch':>9s}")
    print(f"{'full cache':60s} {full:9.3f} {1:7.2f}x {by_name['full cache']:9.3f}")
    for i, label in enumerate(labels):
        name = label.split(",")[0]
        ours_value = f"{by_name[name]:9.3f}" if "sorted" in label else f"{'-':>9s}"
        print(f"{label:60s} {kv[i]:9.3f} {kv[i] / full:7.2f}x {ours_value}")
    print("kvsearch's expected_attention uses the position written next for its future positions; "
          "both kvpress rows keep kvpress's own (docs/decoding.md)")
    print(f"kvsearch binary: {ours.get('binary')}")


if __name__ == "__main__":
    main()
