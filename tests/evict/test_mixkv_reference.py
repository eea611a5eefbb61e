#!/usr/bin/env python3
"""mixkv (MixKV, arXiv 2510.20707) under both hosts against a short float64 reference written from
its definition (docs/methods.md): snapkv (uniform budgets) and adakv (head budgets from the
importance). Random stacked layers through `kvsearch select` (the compressed-cache observer
generation uses): per-head counts must equal the reference's exactly, each kept set the
reference's top count of its scores up to scores within 1e-5 of the row's scale at the boundary,
the dumped scores the reference's to 1e-4 of the row's scale. Control: the kept sets judged by the
importance alone must break the rule.
Exit status 0 = pass.
"""
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "..", "common")]
from kvs_testing import check, finish, scratch_dir  # noqa: E402
from reference_selection import (avg_pool, judge, score_error, select, stacked,  # noqa: E402
                                 window_attention, with_window)


def mixkv_reference(q, k, v, budget, window=32, kernel=5, host="snapkv", alpha=0.2, normalize=True):
    """(scores [kv_heads, n], the importance [kv_heads, n - W], per-head counts)."""
    kv_heads, n, _ = k.shape
    prefix = n - window
    a = window_attention(q, k)[:, :, :prefix].mean(1)
    a = avg_pool(a.view(kv_heads, -1, prefix).mean(1), kernel)
    u = k / k.norm(dim=-1, keepdim=True).clamp_min(1e-12)
    m = u.sum(1, keepdim=True) / n
    div = -(u[:, :prefix] @ m.transpose(1, 2)).squeeze(-1)
    div = (div - div.amin(-1, keepdim=True)) / (div.amax(-1, keepdim=True) - div.amin(-1, keepdim=True) + 1e-8)
    div = div * a.mean(-1, keepdim=True) / (div.mean(-1, keepdim=True) + 1e-8)
    vn = v[:, :prefix].norm(dim=-1)
    vn = (vn - vn.amin(-1, keepdim=True)) / (vn.amax(-1, keepdim=True) - vn.amin(-1, keepdim=True))
    vn = vn * a.mean(-1, keepdim=True) / (vn.mean(-1, keepdim=True) + 1e-8)
    r = (n * m.squeeze(1).pow(2).sum(-1, keepdim=True) - 1) / (n - 1)
    scores = with_window(r * div + (1 - r) * (a + vn), window)
    if host == "snapkv":
        return scores, a, [budget] * kv_heads
    base = budget - window
    s = a.sort(-1, descending=True).values
    if normalize:
        s = s * s[:, :base].sum(-1, keepdim=True) / s.sum(-1, keepdim=True)
    top = torch.topk(s.flatten(), kv_heads * base).indices // prefix
    counts = torch.bincount(top, minlength=kv_heads).double()
    b = torch.round(counts * (1 - alpha) + int(base * alpha)).long()
    return scores, a, [min(int(x) + window, n) for x in b]



def main():
    gen = torch.Generator().manual_seed(47)
    with scratch_dir("kvs-mixkv-") as tmp:
        for heads, kv_heads, n, d, budget in [(6, 2, 500, 16, 96), (9, 3, 777, 64, 128), (4, 4, 300, 32, 64)]:
            qs, ks, vs = stacked(gen, 2, heads, kv_heads, n, d, 32)
            for host in ("snapkv", "adakv"):
                policy = {"method": "mixkv", "budget": budget, "host": host}
                kept, got = select(tmp, f"mixkv-{host}-{n}", qs, ks, vs, policy)
                broken, counts, error = [], [], 0.0
                for l in range(2):
                    s, a, c = mixkv_reference(qs[l], ks[l], vs[l], budget, host=host)
                    counts.append(c)
                    broken += judge(f"mixkv {host} n={n} layer {l}", kept[l], s, c)
                    error = max(error, score_error(got[l], s))
                    if l == 0:  # control: judged by the importance alone it must break
                        imp = with_window(a, 32)
                        control = judge("importance", kept[l], imp, c)
                        check(len(control) > 0, f"mixkv {host}: the importance alone passes as mixkv")
                for message in broken:
                    check(False, message)
                check(error <= 1e-4, f"mixkv {host} n={n}: scores differ by {error:.3g} of the row's scale")
                print(f"[measured] mixkv host {host}, {heads}/{kv_heads} heads, n {n}, B {budget}: per-head "
                      f"counts {counts} (the reference's), {len(broken)} sets outside the tie band, "
                      f"scores within {error:.2g}")
    finish(passed="mixkv equals its reference under both hosts")


if __name__ == "__main__":
    main()
