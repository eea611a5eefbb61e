"""What the decode-time oracle tests share: the RULER prompt and teacher tokens, kvsearch's trace of
a policy, and the judgement of one compression's held sets against a reference's scores."""
import json
import os

from kvs_testing import must, read_text, write_json

BAND = 1e-5  # relative to the largest finite |score| of the (layer, head) row


def ruler_ids(tmp, length, teacher):
    """The prompt (a RULER niah_single_1 record's context and question at about `length` tokens)
    and `teacher` teacher tokens (the context of a second record), in SmolLM2's ids."""
    out = os.path.join(tmp, f"ruler-{length}")
    must("data", "ruler", "--model", "smollm2-135m", "--out", out, "--lengths", str(length), "--count",
         "2", "--seed", "42", "--tasks", "niah_single_1")
    data = os.path.join(out, "data")
    with open(os.path.join(data, sorted(os.listdir(data))[0]), encoding="utf-8") as f:
        first, second = (json.loads(line) for line in f.readlines()[:2])

    def ids(text):
        return json.loads(must("tokenize", "--model", "smollm2-135m", "--text", text, "--json"))["ids"]
    return ids(first["context"] + "\n" + first["input"]), ids(second["context"])[:teacher]


# A row that compresses after every step (StreamingLLM's rolling cache), run beside rows on a longer
# interval: their compressions then rewrite only their own entries, in place, between the batch's
# re-lays (src/search/decode_time.cpp), the path of a study that mixes schedules. It is not judged.
PACER = {"method": "streaming_llm", "n_sink": 4, "decoding": {"interval": 1, "target": 64, "buffer": 1}}


def kvsearch_traces(tmp, policies, ids, teacher, pacer=False):
    """`generate --teacher-tokens --trace-kept` under every policy of {name: policy} in one run
    (one prefill, one shared decode), with PACER beside them where asked: {name: (its --json line,
    its trace)}."""
    if pacer:
        policies = dict(policies, pacer=PACER)
    traces = os.path.join(tmp, "traces")
    os.makedirs(traces, exist_ok=True)  # a directory, even for one policy
    # One thread: hundreds of one-token steps, where a second thread's wake-ups under the suite's
    # passive OpenMP waits cost more than it computes (kvs_testing.torch_threads; a 512-step
    # decode: 18 s on one thread, 40 s on two, on the idle 2-core CI machine).
    args = ["--threads", "1", "generate", "--model", "smollm2-135m", "--dtype", "f32", "--token-ids",
            ",".join(map(str, ids)), "--teacher-tokens", ",".join(map(str, teacher)), "--trace-kept",
            traces, "--json"]
    for name, policy in policies.items():
        write_json(os.path.join(tmp, f"{name}.json"), policy)
        args += ["--policy", os.path.join(tmp, f"{name}.json")]
    rows = {row["name"]: row for row in map(json.loads, must(*args).splitlines())}
    return {name: (rows[name], [json.loads(line) for line in
                                read_text(os.path.join(traces, f"{name}.trace.jsonl")).splitlines()])
            for name in policies}


def kvsearch_trace(tmp, name, policy, ids, teacher):
    """`generate --teacher-tokens --trace-kept` under the policy: (its --json output, the trace)."""
    return kvsearch_traces(tmp, {name: policy}, ids, teacher)[name]


def judge(ours, before, scores, k):
    """One (layer, head) decision: kvsearch's held positions `ours` against a reference's scores
    [m] over the positions `before` [m] its cache held, keeping k. Returns (problem or None, the
    row indices of `ours` in `before`). kvsearch's set must be the reference's top-k up to scores
    tied within BAND of the row's scale: every position scored above the k-th kept, every kept one
    at least the k-th."""
    import torch
    finite = scores[torch.isfinite(scores)]
    band = BAND * max(float(finite.abs().max()) if finite.numel() else 1.0, 1e-30)
    threshold = float(torch.topk(scores, k).values[-1])
    chosen = torch.isin(before, torch.tensor(ours, dtype=torch.long))
    unknown = len(ours) - int(chosen.sum())
    missed = int(((~chosen) & (scores > threshold + band)).sum())
    wrong = int((chosen & (scores < threshold - band)).sum())
    if len(ours) != k or unknown or missed or wrong:
        return (f"{len(ours)} held (reference {k}), {unknown} not in the reference's cache, {missed} "
                f"above its boundary left out, {wrong} below it kept"), None
    return None, chosen.nonzero().flatten()


def top_k_positions(scores, k):
    """Row indices of the k best scores, ties to the lower index (kvsearch's rule, topk_select.h),
    ascending."""
    return scores.sort(dim=-1, descending=True, stable=True).indices[..., :k].sort(dim=-1).values


def keep_rows(layer, keep):
    """A transformers cache layer's keys and values cut to the rows keep [kv_heads, k] (or per batch
    row, [batch, kv_heads, k]), in that order."""
    keep = keep.unsqueeze(0) if keep.dim() == 2 else keep
    g = keep.unsqueeze(-1).expand(-1, -1, -1, layer.keys.shape[-1])
    layer.keys = layer.keys.gather(2, g).contiguous()
    layer.values = layer.values.gather(2, g).contiguous()


def rows_press(entries):
    """kvpress's base press for a DecodingPress over a batch whose row r is compressed by
    entries[r] = (its press, that press's compress function), at the ratio DecodingPress sets:
    every row compresses at the same steps to the same size, so the weights are read once per
    step for all rows."""
    from dataclasses import dataclass

    import kvpress
    import torch

    @dataclass
    class RowsPress(kvpress.ScorerPress):
        def post_init_from_model(self, model):
            for base, _ in entries:
                base.post_init_from_model(model)

        def compress(self, module, hidden_states, keys, values, attentions, kwargs):
            kept_keys, kept_values = [], []
            for r, (base, compress) in enumerate(entries):
                base.compression_ratio = self.compression_ratio
                k, v = compress(module, hidden_states[r:r + 1], keys[r:r + 1], values[r:r + 1],
                                None if attentions is None else attentions[r:r + 1], kwargs)
                kept_keys.append(k)
                kept_values.append(v)
            return torch.cat(kept_keys), torch.cat(kept_values)

    return RowsPress()
