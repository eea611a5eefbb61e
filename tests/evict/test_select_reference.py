"""`kvsearch select` against an independent PyTorch oracle.

The baselines follow the SnapKV/PyramidKV reference recipe (docs/reference.md §2) step by step: fp32
softmax of the window queries with a causal mask on the window block only, the SUM over window
queries, max-pooling (kernel 7, padding 3), top-k, PyramidKV's per-layer budget arithmetic, and K
repeated per query head. The diverse policy follows the definition of docs/reference.md §1 in float64.
Max-pooling makes exact ties (plateaus of equal scores) and torch.topk leaves their order
unspecified, so the oracle ranks with a stable descending sort: higher score, then lower position,
the rule kvsearch documents. Random inputs otherwise have no near-ties: every kept set must match.
Exit status 0 when all cases match; prints the first mismatch otherwise.
"""
import json
import math
import os
import sys
import tempfile

import torch
import torch.nn.functional as F
from safetensors.torch import save_file

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from kvs_testing import must, read_json, write_json  # noqa: E402

W = 8


def rank(scores, count):
    """Per row, the count best positions: higher score first, ties to the lower position."""
    return scores.sort(dim=-1, descending=True, stable=True).indices[..., :count]


def window_attention(q, k):
    """[heads, W, n] softmax probabilities, keys repeated to the query heads."""
    heads, kv_heads = q.shape[0], k.shape[0]
    k = k.repeat_interleave(heads // kv_heads, dim=0)
    logits = q @ k.transpose(1, 2) / math.sqrt(q.shape[-1])
    mask = torch.full((W, W), float("-inf"), dtype=logits.dtype).triu(1)
    logits[:, :, -W:] += mask
    return F.softmax(logits, dim=-1, dtype=torch.float32 if logits.dtype == torch.float32 else logits.dtype)


def pyramid_selected(budget, n, layer, layers, beta=20):
    if n < 2 * (budget - W):
        return budget - W
    min_num = (budget - W) // beta
    max_num = (budget - W) * 2 - min_num
    if max_num >= n - W:
        max_num = n - W
        min_num = (budget - W) * 2 - max_num
    steps = (max_num - min_num) // (layers - 1)
    return max_num - layer * steps


def baseline(q, k, budget, schedule, layer, layers, granularity="query_head", reduce="mean"):
    n = k.shape[1]
    if n < budget:
        rows = q.shape[0] if granularity == "query_head" else k.shape[0]
        return [list(range(n)) for _ in range(rows)]
    attn = window_attention(q, k)
    score = attn[:, :, : n - W].sum(dim=-2)  # the reference sums over the window queries
    if granularity == "kv_head":
        score = score.view(k.shape[0], -1, n - W)
        score = score.mean(dim=1) if reduce == "mean" else score.amax(dim=1)
    pooled = F.max_pool1d(score.unsqueeze(0), kernel_size=7, padding=3, stride=1).squeeze(0)
    count = budget - W if schedule == "uniform" else pyramid_selected(budget, n, layer, layers)
    top = rank(pooled, count)
    return [sorted(row.tolist()) + list(range(n - W, n)) for row in top]


def diverse(q, k, budget, lambda1, lambda2, layer, layers):
    """Global profiles on the pyramid schedule, query_head granularity, in float64."""
    q, k = q.double(), k.double()
    n = k.shape[1]
    attn = window_attention(q, k)[:, :, : n - W]
    mu, sigma = attn.mean(dim=1), attn.std(dim=1)
    s = mu + lambda1 * sigma
    s = F.max_pool1d(s.unsqueeze(0), kernel_size=7, padding=3, stride=1).squeeze(0)
    count = pyramid_selected(budget, n, layer, layers)
    group = q.shape[0] // k.shape[0]
    kept = []
    for h in range(q.shape[0]):
        cand = rank(s[h], min(n - W, 4 * count))
        norm = (s[h] / max(s[h].max().item(), 1e-12))[cand]
        unit = F.normalize(k[h // group][cand], dim=-1)
        corr = torch.zeros(len(cand), dtype=torch.float64)
        taken = torch.zeros(len(cand), dtype=torch.bool)
        chosen = []
        while len(chosen) < count:
            objective = (norm + lambda2 * corr).masked_fill(taken, float("-inf"))
            best = int(objective.argmax())  # the first maximum: ties to the higher-ranked candidate
            chosen.append(int(cand[best]))
            taken[best] = True
            corr = torch.maximum(corr, unit @ unit[best])
        kept.append(sorted(chosen) + list(range(n - W, n)))
    return kept


def run_select(tmp, q, k, policy, layer, layers):
    tensors = os.path.join(tmp, "in.safetensors")
    save_file({"q_window": q.contiguous(), "keys": k.contiguous()}, tensors)
    policy_file = os.path.join(tmp, "policy.json")
    write_json(policy_file, policy)
    out = os.path.join(tmp, "out.json")
    must("select", "--tensors", tensors, "--policy", policy_file, "--layer", layer, "--num-layers", layers,
         "--out", out, error=RuntimeError)
    return read_json(out)["kept"]


def main():
    torch.manual_seed(0)
    failures, cases = 0, 0
    with tempfile.TemporaryDirectory() as tmp:
        for trial in range(4):
            heads, kv_heads, dim = (8, 2, 32) if trial % 2 else (4, 4, 16)
            n = 150 + 97 * trial
            q = torch.randn(heads, W, dim) * 2
            k = torch.randn(kv_heads, n, dim)
            layer, layers = (trial * 5) % 32, 32
            budget = [16, 24, 32, 48, 64, 40][trial]
            checks = [
                ({"kind": "topk", "budget": budget, "schedule": "uniform"},
                 baseline(q, k, budget, "uniform", layer, layers)),
                ({"kind": "topk", "budget": budget, "schedule": "pyramid"},
                 baseline(q, k, budget, "pyramid", layer, layers)),
                ({"kind": "topk", "budget": budget, "schedule": "pyramid", "granularity": "kv_head",
                  "group_reduce": "max"},
                 baseline(q, k, budget, "pyramid", layer, layers, "kv_head", "max")),
                ({"kind": "topk", "budget": 1000, "schedule": "uniform"},
                 baseline(q, k, 1000, "uniform", layer, layers)),
                ({"kind": "greedy", "budget": budget, "schedule": "pyramid",
                  "lambda1": {"profile": "global", "a": [math.asinh(0.3)]},
                  "lambda2": {"profile": "global", "a": [math.asinh(-0.4 if trial % 2 else 0.5)]}},
                 diverse(q, k, budget, 0.3, -0.4 if trial % 2 else 0.5, layer, layers)),
            ]
            for policy, expected in checks:
                cases += 1
                got = run_select(tmp, q, k, policy, layer, layers)
                if got != expected:
                    failures += 1
                    print(f"MISMATCH trial {trial} policy {json.dumps(policy)}")
                    for h, (g, e) in enumerate(zip(got, expected)):
                        if g != e:
                            print(f"  head {h}: kvsearch {g}\n          oracle   {e}")
                            break
    print(f"select vs reference oracle: {cases - failures}/{cases} cases match")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
