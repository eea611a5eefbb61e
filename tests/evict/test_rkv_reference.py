#!/usr/bin/env python3
"""r_kv (R-KV, arXiv 2505.24133) against a short float64 reference written from its definition
(docs/methods.md, r_kv): `kvsearch select --dump-scores` on random tensors whose keys come in
clusters of near-duplicates, so that the "last near-duplicate" rule of the redundancy term is
exercised. With mix_lambda 0 the score is minus the redundancy term alone, which must equal the
reference's to 1e-6 of its scale; at the default mix the kept sets must equal the reference's top
B - W of the prefix plus the window, up to scores within 1e-5 of the row's scale.
Exit status 0 = pass.
"""
import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F
from safetensors.torch import save_file

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from kvs_testing import check, finish, must, read_json, scratch_dir, write_json  # noqa: E402


def importance(q, k, window, kernel):
    """[kv_heads, n - W]: group max of the window logits, softmax over the prefix, mean, max-pool."""
    kv_heads, n, d = k.shape
    group = q.shape[0] // kv_heads
    prefix = k[:, : n - window]
    logits = q.view(kv_heads, group, window, d) @ prefix.transpose(1, 2).unsqueeze(1) / math.sqrt(d)
    a = F.softmax(logits.amax(dim=1), dim=-1).mean(dim=1)
    if kernel > 1:
        a = F.max_pool1d(a.unsqueeze(0), kernel, stride=1, padding=kernel // 2).squeeze(0)
    return a


def redundancy(k, threshold):
    """[kv_heads, n]: softmax over all keys of the column means of the cosine matrix, its diagonal
    zeroed and, in each row, the entry of the last key above the threshold (0 where none)."""
    u = k / (k.norm(dim=-1, keepdim=True) + 1e-8)
    c = u @ u.transpose(1, 2)
    kv_heads, n, _ = c.shape
    for h in range(kv_heads):
        for i in range(n):
            c[h, i, i] = 0.0
            above = (c[h, i] > threshold).nonzero()
            c[h, i, int(above.max()) if above.numel() else 0] = 0.0
    return F.softmax(c.mean(dim=1), dim=-1)


def clustered_keys(kv_heads, n, d, gen):
    """Keys near a few directions each, at growing scale (RoPE-free stand-ins for a real layer)."""
    centres = torch.randn(kv_heads, 12, d, generator=gen, dtype=torch.float64)
    pick = torch.randint(0, 12, (kv_heads, n), generator=gen)
    base = torch.gather(centres, 1, pick.unsqueeze(-1).expand(-1, -1, d))
    return base + 0.6 * torch.randn(kv_heads, n, d, generator=gen, dtype=torch.float64)


def run(tmp, name, q, k, policy):
    tensors = os.path.join(tmp, f"{name}.safetensors")
    save_file({"q_window": q.float().contiguous(), "keys": k.float().contiguous()}, tensors)
    policy_path, out, scores = (os.path.join(tmp, f"{name}.{x}") for x in ("policy.json", "kept.json", "npy"))
    write_json(policy_path, policy)
    must("select", "--tensors", tensors, "--policy", policy_path, "--out", out, "--dump-scores", scores)
    return read_json(out)["kept"], torch.from_numpy(np.load(scores)).double()


def main():
    gen = torch.Generator().manual_seed(11)
    cases = [(6, 2, 300, 16, 8, 7), (9, 3, 777, 64, 8, 7), (4, 4, 150, 32, 16, 5), (6, 2, 200, 16, 8, 1)]
    with scratch_dir("kvs-rkv-") as tmp:
        for heads, kv_heads, n, d, window, kernel in cases:
            shape = f"{heads}/{kv_heads} heads, n {n}, d {d}, W {window}, kernel {kernel}"
            q = torch.randn(heads, window, d, generator=gen, dtype=torch.float64) * 2
            k = clustered_keys(kv_heads, n, d, gen)
            r = redundancy(k.clone(), 0.5)
            near = float(((k / k.norm(dim=-1, keepdim=True)) @ (k / k.norm(dim=-1, keepdim=True)).transpose(1, 2)
                          > 0.5).float().mean())
            policy = {"method": "r_kv", "budget": 64, "window": window, "kernel": kernel, "mix_lambda": 0.0}
            _, got = run(tmp, f"r-{n}", q, k, policy)
            scale = float(r[:, : n - window].abs().max())
            error = float((-got[:, : n - window] - r[:, : n - window]).abs().max()) / scale
            check(error <= 1e-6, f"{shape}: redundancy term off by {error:.3g} of its scale")
            check(bool(torch.isinf(got[:, n - window:]).all()), f"{shape}: the window is not kept first")
            print(f"[measured] {shape}: redundancy term within {error:.2g} of the reference's scale "
                  f"({near:.0%} of key pairs above the threshold)")

            lam = 0.07
            expected = lam * importance(q, k, window, kernel) - (1 - lam) * r[:, : n - window]
            for budget in (32, 64):
                policy = {"method": "r_kv", "budget": budget, "window": window, "kernel": kernel}
                kept, _ = run(tmp, f"k-{n}-{budget}", q, k, policy)
                for h in range(kv_heads):
                    row = expected[h]
                    band = 1e-5 * float(row.abs().max())
                    top = row.topk(budget - window)
                    threshold = float(top.values[-1])
                    prefix = sorted(p for p in kept[h] if p < n - window)
                    window_kept = sorted(p for p in kept[h] if p >= n - window)
                    chosen = torch.zeros(n - window, dtype=torch.bool)
                    chosen[torch.tensor(prefix, dtype=torch.long)] = True
                    ok = (window_kept == list(range(n - window, n)) and len(prefix) == budget - window
                          and not bool(((~chosen) & (row > threshold + band)).any())
                          and not bool((chosen & (row < threshold - band)).any()))
                    check(ok, f"{shape}, B {budget}, head {h}: kept set differs from the reference's")
    finish(passed="r_kv equals its reference")


if __name__ == "__main__":
    main()
