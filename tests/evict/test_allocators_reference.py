#!/usr/bin/env python3
"""The budget allocators none of kvpress's presses stands for, against short float64 references
written from their definitions (docs/methods.md): cake (layer budgets from attention entropy and
variance, cakekv's adjust_budgets) and adakv's original rule (the AdaKV paper's budget mix,
largest remainder).

Each case stacks every layer's window queries, keys and values (random, each layer at its own
attention temperature, so that the layers' preferences differ) and runs `kvsearch select` on them:
the same compressed-cache observer generation uses. Budgets must equal the reference's exactly
(per layer for cake, per KV head for adakv); each kept set must be the reference's top count of
its own scores up to scores within 1e-5 of the row's scale at the boundary; cake's dumped scores
must equal the reference's to 1e-4 of the row's scale. Control: the check must fail on cake's
kept sets judged with uniform budgets.
Exit status 0 = pass.
"""
import math
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "..", "common")]
from kvs_testing import check, finish, scratch_dir  # noqa: E402
from reference_selection import (avg_pool, judge, score_error, select, stacked,  # noqa: E402
                                 window_attention, with_window)


# ---- cake -------------------------------------------------------------------------------------

def cake_layer(q, k, window, gamma, tau1, tau2):
    """(scores [kv_heads, n] with the window +inf, the layer's preference)."""
    kv_heads = k.shape[0]
    a = window_attention(q, k)[:, :, : k.shape[1] - window]
    indicator = avg_pool(a.mean(1) + gamma * a.var(1), 5)
    scores = indicator.view(kv_heads, -1, indicator.shape[-1]).mean(1)
    entropy = float(-(a * torch.log(a + 1e-10)).sum())
    variance = float(a.var(1).sum())
    return with_window(scores, window), entropy ** (1 / tau1) * variance ** (1 / tau2)


def adjust_budgets(budgets, total, cap):
    """cakekv's adjust_budgets (cake/utils.py), from its definition."""
    b = np.array(budgets, dtype=np.int64)
    excess = np.maximum(b - cap, 0).sum()
    b = np.minimum(b, cap)
    if excess > 0:
        valid = np.where(b < cap)[0]
        if len(valid):
            b[valid] += excess // len(valid)
            b[valid[: excess % len(valid)]] += 1
    diff = total - b.sum()
    if diff != 0:
        valid = np.where(b < cap)[0] if diff > 0 else np.where(b > 1)[0]
        if len(valid):
            step = 1 if diff > 0 else -1
            b[valid] += step * (abs(diff) // len(valid))
            b[valid[: abs(diff) % len(valid)]] += step
    return b.tolist()


def cake_reference(qs, ks, budget, window=32, gamma=200.0, tau1=1.0, tau2=1.0):
    """Per layer: (scores, the entries each KV head keeps)."""
    layers = [cake_layer(q, k, window, gamma, tau1, tau2) for q, k in zip(qs, ks)]
    n = ks[0].shape[1]
    total = (budget - window) * len(layers)
    prefs = [p for _, p in layers]
    shares = [int(p / sum(prefs) * total) for p in prefs]
    b = adjust_budgets(shares, total, n - window)
    return [(s, min(max(x, 0), n - window) + window) for (s, _), x in zip(layers, b)]


# ---- adakv, the original rule -------------------------------------------------------------------

def snapkv_scores(q, k, window, kernel):
    kv_heads, n, _ = k.shape
    a = window_attention(q, k)[:, :, : n - window].mean(1)
    return with_window(avg_pool(a.view(kv_heads, -1, n - window).mean(1), kernel), window)


def adakv_original(q, k, budget, alpha, window=16, kernel=5):
    """(the base's scores, per-head counts): c_h of the layer's Hkv B best, b_h = c_h (1 - alpha)
    + alpha B by largest remainder (floors, then +1 to the largest fractions, lower head first)."""
    s = snapkv_scores(q[:, -window:], k, window, kernel)
    kv_heads, n = s.shape
    flat = s.flatten()
    order = sorted(range(len(flat)), key=lambda j: (-float(flat[j]), j))[: kv_heads * budget]
    c = [sum(1 for j in order if j // n == h) for h in range(kv_heads)]
    x = [ch * (1 - alpha) + alpha * budget for ch in c]
    b = [math.floor(v) for v in x]
    rest = kv_heads * budget - sum(b)
    for h in sorted(range(kv_heads), key=lambda h: -(x[h] - math.floor(x[h])))[:rest]:
        b[h] += 1
    return s, [min(v, n) for v in b]


def main():
    gen = torch.Generator().manual_seed(43)
    with scratch_dir("kvs-allocators-") as tmp:
        # cake: budgets per layer, exact.
        for layers, heads, kv_heads, n, d, budget in [(8, 6, 2, 400, 16, 64), (6, 4, 4, 300, 32, 48),
                                                      (5, 9, 3, 260, 64, 200)]:
            qs, ks, vs = stacked(gen, layers, heads, kv_heads, n, d, 32)
            reference = cake_reference(qs, ks, budget)
            kept, got = select(tmp, f"cake-{n}", qs, ks, vs, {"method": "cake", "budget": budget})
            ours = [len(layer[0]) for layer in kept]
            want = [c for _, c in reference]
            check(ours == want, f"cake n={n} B={budget}: layer budgets {ours}, the reference {want}")
            check(sum(want) == layers * budget, f"cake n={n}: the reference's budgets sum to {sum(want)}")
            broken = [b for l, (s, c) in enumerate(reference)
                      for b in judge(f"cake n={n} layer {l}", kept[l], s, [c] * kv_heads)]
            for message in broken:
                check(False, message)
            error = score_error(got.flatten(0, 1), torch.cat([s for s, _ in reference]))
            check(error <= 1e-4, f"cake n={n}: scores differ by {error:.3g} of the row's scale")
            print(f"[measured] cake {layers} layers, {heads}/{kv_heads} heads, n {n}, B {budget}: layer "
                  f"budgets {ours} (the reference's), {len(broken)} sets outside the tie band, scores "
                  f"within {error:.2g}")
            # Control: the same kept sets judged with uniform budgets must fail.
            uniform = [b for l, (s, _) in enumerate(reference)
                       for b in judge("uniform", kept[l], s, [budget] * kv_heads)]
            check(len(uniform) > 0 or len(set(ours)) == 1, "cake: uniform budgets pass as cake's")

        # adakv's original rule.
        for heads, kv_heads, n, d, budget in [(6, 2, 500, 16, 96), (9, 3, 777, 64, 128), (4, 4, 300, 32, 64)]:
            qs, ks, vs = stacked(gen, 2, heads, kv_heads, n, d, 32)
            for alpha in (0.2, 0.5):
                policy = {"method": "adakv", "budget": budget, "alpha": alpha, "rule": "original",
                          "base": {"method": "snapkv", "window": 16, "kernel": 5, "pooling": "avg",
                                   "granularity": "kv_head"}}
                kept, _ = select(tmp, f"adakv-{n}-{alpha}", qs, ks, vs, policy)
                broken, counts = [], []
                for l in range(2):
                    s, c = adakv_original(qs[l], ks[l], budget, alpha)
                    counts.append(c)
                    broken += judge(f"adakv original n={n} layer {l}", kept[l], s, c)
                for message in broken:
                    check(False, message)
                print(f"[measured] adakv original, alpha {alpha}, n {n}, B {budget}: per-head counts "
                      f"{counts} (the reference's), {len(broken)} sets outside the tie band")
    finish(passed="cake and adakv's original rule equal their references")


if __name__ == "__main__":
    main()
