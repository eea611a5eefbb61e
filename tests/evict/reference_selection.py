"""What the allocator references share (tests/evict/test_allocators_reference.py,
test_mixkv_reference.py): the window attention in float64, pooling, the tie-band rule for kept
sets, random stacked layers and `kvsearch select` on them."""
import math
import os

import numpy as np
import torch
import torch.nn.functional as F
from safetensors.torch import save_file

from kvs_testing import check, must, read_json, write_json

BAND = 1e-5  # of the row's largest finite |score|: ties within float rounding at the boundary


def window_attention(q, k):
    """[heads, W, n]: the window rows' softmax over all keys, causal inside the window."""
    heads, window, d = q.shape
    kv_heads, n, _ = k.shape
    keys = k.repeat_interleave(heads // kv_heads, dim=0)
    logits = q @ keys.transpose(1, 2) / math.sqrt(d)
    mask = torch.ones(window, window, dtype=torch.bool).triu(1)
    logits[:, :, n - window:] = logits[:, :, n - window:].masked_fill(mask, -math.inf)
    return F.softmax(logits, dim=-1)


def avg_pool(x, kernel):
    return F.avg_pool1d(x.unsqueeze(0), kernel, stride=1, padding=kernel // 2).squeeze(0) if kernel > 1 else x


def with_window(prefix_scores, window):
    return torch.cat([prefix_scores, torch.full((prefix_scores.shape[0], window), math.inf,
                                                dtype=prefix_scores.dtype)], dim=1)


def judge(name, kept, scores, counts):
    """kept: positions per KV head; scores [kv_heads, n]; counts: what each head must keep.
    Returns the sets that break the tie-band rule, described (an empty list: all hold)."""
    broken = []
    for h, positions in enumerate(kept):
        row = scores[h]
        if len(positions) != counts[h]:
            broken.append(f"{name} head {h}: keeps {len(positions)}, the reference {counts[h]}")
            continue
        finite = row[torch.isfinite(row)]
        band = BAND * max(float(finite.abs().max()) if finite.numel() else 1.0, 1e-30)
        threshold = float(torch.topk(row, counts[h]).values[-1])
        chosen = torch.zeros_like(row, dtype=torch.bool)
        chosen[torch.tensor(positions, dtype=torch.long)] = True
        missed = int(((~chosen) & (row > threshold + band)).sum())
        wrong = int((chosen & (row < threshold - band)).sum())
        if missed or wrong:
            broken.append(f"{name} head {h}: {missed} above the boundary left out, {wrong} below kept")
    return broken


def score_error(got, want):
    """The largest |got - want| over the finite entries, relative to the row's scale."""
    worst = 0.0
    for g, w in zip(got, want):
        finite = torch.isfinite(w)
        if not bool((torch.isfinite(g) == finite).all()):
            return math.inf
        scale = max(float(w[finite].abs().max()), 1e-30)
        worst = max(worst, float((g[finite] - w[finite]).abs().max()) / scale)
    return worst


def stacked(gen, layers, heads, kv_heads, n, d, window):
    """Per layer q [heads, W, d], k, v [kv_heads, n, d] (float32-representable float64)."""
    qs, ks, vs = [], [], []
    for layer in range(layers):
        temperature = 0.5 + 2.5 * layer / max(layers - 1, 1)  # the layers attend differently
        qs.append((torch.randn(heads, window, d, generator=gen, dtype=torch.float64) * temperature).float().double())
        ks.append(torch.randn(kv_heads, n, d, generator=gen, dtype=torch.float64).float().double())
        vs.append((torch.randn(kv_heads, n, d, generator=gen, dtype=torch.float64)
                   * torch.rand(kv_heads, n, 1, generator=gen, dtype=torch.float64) * 3).float().double())
    return qs, ks, vs


def select(tmp, name, qs, ks, vs, policy):
    path = os.path.join(tmp, f"{name}.safetensors")
    save_file({"q_window": torch.stack(qs).float().contiguous(), "keys": torch.stack(ks).float().contiguous(),
               "values": torch.stack(vs).float().contiguous()}, path)
    policy_path, out, scores = (os.path.join(tmp, f"{name}.{x}") for x in ("policy.json", "kept.json", "npy"))
    write_json(policy_path, policy)
    must("select", "--tensors", path, "--policy", policy_path, "--out", out, "--dump-scores", scores)
    result = read_json(out)
    check(result["counts"] == [[len(h) for h in layer] for layer in result["layers"]],
          f"{name}: counts differ from the kept lists")
    return result["layers"], torch.from_numpy(np.load(scores)).double()
