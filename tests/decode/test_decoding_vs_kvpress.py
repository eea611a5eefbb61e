#!/usr/bin/env python3
"""Eviction while decoding against kvpress 0.5.5's DecodingPress and PrefillDecodingPress on the real
SmolLM2-135M (kvsearch reads the GGUF file, kvpress runs on transformers' conversion of it, float32,
CPU, SDPA). The prompt is a RULER niah_single_1 record at about 1,000 tokens; then 512 tokens are
teacher-forced (the context of a second RULER record), one forward per token as kvpress's pipeline
decodes (position_ids continuing from the tokens seen).

At every compression, per layer and KV head, the positions kvsearch holds (`generate --policy P ...
--teacher-tokens ... --trace-kept DIR`: every policy in one run, from one prefill on one shared
decode, beside a row that compresses after every step, so that theirs rewrite their own entries in
place between the batch's re-lays) must be the press's top-k by the press's own scores over the
rows its cache holds at that step, up to scores tied within 1e-5 of the row's scale (the rule of
tests/evict/test_methods_vs_kvpress.py), and both sides compress at the same steps. Each decision is
judged on the same input: once judged, the press keeps kvsearch's set (it passed the rule, so the two
differ at most in tied entries), so that a tie decided otherwise at one compression (at layer 0 a
key's norm depends on its token alone: knorm's scores tie wherever a token repeats) does not change
what both caches hold at the next. The share of decisions identical to the press's own top-k is
printed.

The five presses, the StreamingLLM control (kvpress as it is) and the ExpectedAttention control
(kvpress's future positions) are the seven rows of one batch of transformers' decode: one
DecodingPress over a press that compresses each row with its own press and tracker, so the weights
are read once per step for all seven (every row compresses at the same steps to the same size).
PrefillDecodingPress runs on its own.

Parameter map: kvsearch's {"interval": I, "target": T, "buffer": S} is DecodingPress(
compression_interval=I, target_size=T, hidden_states_buffer_size=S - 1): kvpress's buffer holds the
steps before the current one and appends the current one, so a compression reads S rows.

Two defects of kvpress 0.5.5 are fixed on the kvpress side, one line each, and measured:
- ScorerPress.compress gathers the kept rows in top-k order (kvpress issue #173), so a press that
  reads rows by position (StreamingLLMPress's and ExpectedAttentionPress's n_sink first rows) loses
  the real sinks after the first decode-time compression. kvsearch keeps every cache in position
  order; the oracle sorts the kept indices before the gather.
- ExpectedAttentionPress averages RoPE over the future positions q_len .. q_len + 511 with q_len
  the hidden-state buffer's length, not the position the model writes next. kvsearch uses the next
  position; the oracle passes the number of tokens seen.

Env: KVSEARCH_BIN. Exit status 0 = pass.
"""
import os
import sys

os.environ.setdefault("TQDM_DISABLE", "1")

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kvs_testing import check, finish, scratch_dir, smollm2_hf, torch_threads  # noqa: E402
from decode_oracle import judge, kvsearch_traces, rows_press, ruler_ids  # noqa: E402

TEACHER = 512
INTERVAL, TARGET = 32, 256


class Tracker:
    """Per layer, the position of every row of the press's cache and every compression's scores;
    with `follow` (kvsearch's trace), each decode-time compression is judged against kvsearch's
    held sets and then keeps them."""

    def __init__(self, n, kv_heads, layers, follow=None, label=""):
        self.pos = {l: torch.arange(n).repeat(kv_heads, 1) for l in range(layers)}
        self.fed = {l: [] for l in range(layers)}  # positions appended since pos[l] was last built
        self.events = {l: [] for l in range(layers)}
        self.seen = n  # tokens seen, the current one included
        self.follow, self.label = follow, label
        self.broken, self.identical, self.judged = [], 0, 0

    def judge(self, l, c, before, scores, own):
        """kvsearch's sets at this compression against the press's scores; its row indices."""
        record = self.follow[c] if c < len(self.follow) else None
        if record is None or record["seen"] != self.seen:
            self.broken.append(f"{self.label} layer {l} compression {c}: the press compresses at "
                               f"{self.seen} tokens seen, kvsearch "
                               f"{'not' if record is None else 'at ' + str(record['seen'])}")
            return None
        rows = []
        for h, ours in enumerate(record["layers"][l]):
            self.judged += 1
            problem, chosen = judge(ours, before[h], scores[h], own.shape[1])
            if problem:
                self.broken.append(f"{self.label} layer {l} head {h} compression {c} (seen {self.seen}): "
                                   + problem)
                return None
            self.identical += set(ours) == set(own[h].tolist())
            rows.append(chosen)
        return torch.stack(rows)

    def scorer(self, press, sort, decode_time=True):
        """ScorerPress.compress, recording, with the kept rows gathered in top-k order as kvpress
        0.5.5 does (sort=False) or in position order (sort=True)."""
        from kvpress.utils import compute_n_kept

        def compress(module, hidden_states, keys, values, attentions, kwargs):
            if press.compression_ratio == 0:
                return keys, values
            scores = press.score(module, hidden_states, keys, values, attentions, kwargs)
            n_kept = compute_n_kept(keys.shape[2], press.compression_ratio)
            idx = scores.topk(n_kept, dim=-1).indices
            if sort:
                idx = idx.sort(dim=-1).values
            l = module.layer_idx
            before = self.positions(l)
            own = before.gather(1, idx[0])
            if self.follow is not None and decode_time:
                c = sum(1 for e in self.events[l] if e[4])
                followed = self.judge(l, c, before, scores[0].float(), own)
                if followed is not None:
                    idx = followed.unsqueeze(0)
            self.pos[l] = before.gather(1, idx[0])
            self.events[l].append((self.seen, before, scores[0].float().clone(), own, decode_time))
            g = idx.unsqueeze(-1).expand(-1, -1, -1, module.head_dim)
            return keys.gather(2, g).contiguous(), values.gather(2, g).contiguous()
        return compress

    def hook(self, decoding):
        """DecodingPress.forward_hook, appending the current token's position first."""
        from kvpress.presses.base_press import is_prefilling
        original = decoding.forward_hook

        def forward_hook(module, input, kwargs, output):
            if not is_prefilling(kwargs["cache_position"], kwargs["hidden_states"].shape[1]):
                self.fed[module.layer_idx].append(self.seen - 1)
            return original(module, input, kwargs, output)
        return forward_hook

    def positions(self, l):
        """The position of every row the press's cache holds on layer l [kv_heads, m]."""
        if self.fed[l]:
            fed = torch.tensor(self.fed[l]).repeat(self.pos[l].shape[0], 1)
            self.pos[l], self.fed[l] = torch.cat([self.pos[l], fed], 1), []
        return self.pos[l]

    def decode_compressions(self, l):
        return sum(1 for e in self.events[l] if e[4])


def fix_future_positions(kvpress, base, tracker):
    """ExpectedAttentionPress's future positions from the tokens seen (the position written next)."""
    if isinstance(base, kvpress.ExpectedAttentionPress):
        original = type(base).apply_avg_rope
        base.apply_avg_rope = lambda module, mu, cov, q_len: original(base, module, mu, cov, tracker.seen)


def run_rows(model, rows, schedule, ids, teacher):
    """One DecodingPress over the rows of a batch, each row (base press, sort, future_fix, follow,
    label) compressed by its own press and tracker; the trackers."""
    import kvpress
    from transformers import DynamicCache
    config = model.config
    trackers, entries = [], []
    for base, sort, future_fix, follow, label in rows:
        tracker = Tracker(len(ids), config.num_key_value_heads, config.num_hidden_layers, follow, label)
        if future_fix:
            fix_future_positions(kvpress, base, tracker)
        trackers.append(tracker)
        entries.append((base, tracker.scorer(base, sort)))

    decoding = kvpress.DecodingPress(base_press=rows_press(entries), compression_interval=schedule["interval"],
                                     target_size=schedule["target"],
                                     hidden_states_buffer_size=schedule["buffer"] - 1)
    for tracker in trackers:
        decoding.forward_hook = tracker.hook(decoding)
    batch = len(rows)
    cache = DynamicCache()
    with torch.no_grad(), decoding(model):
        model.model(input_ids=torch.tensor([ids] * batch), past_key_values=cache)
        with torch_threads(1):
            decode_rows(model, trackers, cache, ids, teacher, batch)
    return trackers


def decode_rows(model, trackers, cache, ids, teacher, batch):
    """The teacher tokens fed one forward each, positions continuing from the prompt."""
    for i, token in enumerate(teacher):
        for tracker in trackers:
            tracker.seen = len(ids) + i + 1
        model.model(input_ids=torch.tensor([[token]] * batch), past_key_values=cache,
              position_ids=torch.tensor([[len(ids) + i]]))


def run_press(model, press, decoding, prefilling, ids, teacher, sort, future_fix, follow=None, label=""):
    """The press over the prompt and the teacher tokens (following kvsearch's trace where given);
    the tracker."""
    from transformers import DynamicCache
    import kvpress
    config = model.config
    tracker = Tracker(len(ids), config.num_key_value_heads, config.num_hidden_layers, follow, label)
    decoding.base_press.compress = tracker.scorer(decoding.base_press, sort)
    decoding.forward_hook = tracker.hook(decoding)
    if prefilling is not None:
        prefilling.compress = tracker.scorer(prefilling, sort, decode_time=False)
    if future_fix:
        fix_future_positions(kvpress, decoding.base_press, tracker)
    cache = DynamicCache()
    with torch.no_grad(), press(model):
        model.model(input_ids=torch.tensor([ids]), past_key_values=cache)
        with torch_threads(1):
            decode_rows(model, [tracker], cache, ids, teacher, 1)
    return tracker


def report(name, trace, tracker, layers):
    """Records the tracker's broken decisions and the compression counts; the identical share."""
    for message in tracker.broken[:20]:
        check(False, message)
    for l in range(layers):
        if tracker.decode_compressions(l) != len(trace):
            check(False, f"{name} layer {l}: {len(trace)} compressions, the press "
                         f"{tracker.decode_compressions(l)}")
            break
    return tracker.identical / max(tracker.judged, 1)


def main():
    import kvpress

    model = smollm2_hf("sdpa")
    layers = model.config.num_hidden_layers
    torch.set_num_threads(2)
    schedule = {"interval": INTERVAL, "target": TARGET, "buffer": 64}

    def decoding_press(base):
        return kvpress.DecodingPress(base_press=base, compression_interval=INTERVAL, target_size=TARGET,
                                     hidden_states_buffer_size=schedule["buffer"] - 1)

    with scratch_dir("kvs-decoding-") as tmp:
        ids, teacher = ruler_ids(tmp, 1024, TEACHER)
        print(f"prompt: {len(ids)} tokens (RULER niah_single_1), {len(teacher)} teacher tokens")
        cases = [
            ("knorm", {"method": "knorm"}, kvpress.KnormPress(), False),
            ("keydiff", {"method": "keydiff"}, kvpress.KeyDiffPress(), False),
            ("tova", {"method": "tova"}, kvpress.TOVAPress(), False),
            ("streaming_llm", {"method": "streaming_llm", "n_sink": 4}, kvpress.StreamingLLMPress(n_sink=4), True),
            ("expected_attention", {"method": "expected_attention"}, kvpress.ExpectedAttentionPress(), True),
        ]
        # kvsearch: every policy, PrefillDecodingPress's too, from one prefill on one shared decode.
        budget = 128
        runs = kvsearch_traces(tmp, dict([(name, dict(policy, decoding=schedule)) for name, policy, _, _ in cases]
                                         + [("keydiff-both", {"method": "keydiff", "budget": budget,
                                                              "decoding": schedule})]), ids, teacher,
                               pacer=True)
        traces, rows = {}, []
        for name, policy, base, _ in cases:
            out, traces[name] = runs[name]
            # The prompt is whole until the first compression, at INTERVAL steps.
            check(out["cache"]["largest"] == len(ids) + INTERVAL,
                  f"{name}: largest cache {out['cache']['largest']}, not {len(ids) + INTERVAL}")
            check(out["cache"]["compressions"] == TEACHER // INTERVAL == len(traces[name]),
                  f"{name}: {out['cache']['compressions']} compressions, trace {len(traces[name])}")
            rows.append((base, True, True, traces[name], name))
        # The controls: kvpress as it is (top-k row order) for StreamingLLM, and kvpress's own
        # future positions for ExpectedAttention (judged against kvsearch's trace, not asserted).
        rows.append((kvpress.StreamingLLMPress(n_sink=4), False, False, None, "streaming_llm as is"))
        # The second control only measures (one more row of the batch): where asked (KVS_MEASURE=1).
        measure = os.environ.get("KVS_MEASURE") == "1"
        if measure:
            rows.append((kvpress.ExpectedAttentionPress(), True, False, traces["expected_attention"], "unfixed"))
        trackers = run_rows(model, rows, schedule, ids, teacher)
        for (name, _, base, sort), tracker in zip(cases, trackers):
            trace = traces[name]
            share = report(name, trace, tracker, layers)
            print(f"[measured] DecodingPress({type(base).__name__}) interval {INTERVAL} target {TARGET}: "
                  f"{len(trace)} compressions; kvsearch's held sets equal the press's own top-k in "
                  f"{share:.1%} of {tracker.judged} (compression, layer, KV head) decisions; "
                  f"{len(tracker.broken)} outside the tie band"
                  + ("; the press with its kept rows in position order" if sort else ""))
        held = sorted(trackers[3].positions(0)[0].tolist())
        check(held[:4] == [0, 1, 2, 3], f"streaming_llm (fixed press): sinks {held[:4]}")
        lost = sorted(trackers[5].positions(0)[0].tolist())
        print(f"[measured] kvpress 0.5.5 as it is (top-k row order), StreamingLLM: layer 0 head 0 "
              f"ends holding positions {lost[:6]}... instead of {held[:6]}...")
        check(lost[:4] != [0, 1, 2, 3], "kvpress's row-order defect did not show: the control")
        fixed, as_is = trackers[4], trackers[6] if measure else None
        if measure:
            print(f"[measured] ExpectedAttentionPress with kvpress's future positions (from the buffer's "
                  f"length): kvsearch's decisions equal its top-k in "
                  f"{as_is.identical / max(as_is.judged, 1):.1%} of {as_is.judged} and fall outside its "
                  f"tie band in {len(as_is.broken)} (vs {fixed.identical / max(fixed.judged, 1):.1%} and "
                  f"{len(fixed.broken)} with the next position)")

        # PrefillDecodingPress: the prompt compressed to 128 by KeyDiff, then kept at the target.
        out, trace = runs["keydiff-both"]
        prefill = kvpress.KeyDiffPress(compression_ratio=1.0 - (budget + 0.5) / len(ids))
        decoding = decoding_press(kvpress.KeyDiffPress())
        combined = kvpress.PrefillDecodingPress(prefilling_press=prefill, decoding_press=decoding)
        tracker = run_press(model, combined, decoding, prefill, ids, teacher, sort=True, future_fix=True,
                            follow=trace, label="keydiff-both")
        check(all(e[3].shape[1] == budget for l in range(layers) for e in tracker.events[l][:1]),
              "PrefillDecodingPress: the prefill kept other counts")
        check(out["cache"]["largest"] == TARGET + INTERVAL,
              f"keydiff-both: largest cache {out['cache']['largest']}, not {TARGET + INTERVAL}")
        share = report("keydiff-both", trace, tracker, layers)
        print(f"[measured] PrefillDecodingPress(KeyDiff at B={budget}, DecodingPress(KeyDiff)): "
              f"{len(trace)} decode-time compressions; kvsearch's decisions equal the press's top-k in "
              f"{share:.1%} of {tracker.judged}; {len(tracker.broken)} outside the tie band")
    finish(passed="decode-time eviction equals kvpress's DecodingPress")


if __name__ == "__main__":
    main()
