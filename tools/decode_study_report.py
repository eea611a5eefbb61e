#!/usr/bin/env python3
"""The tables of results/example-decoding/README.md from the study's JSON files
(tools/decode_study.sh): bounded-cache perplexity and fidelity to the full cache per policy and
target. Usage: tools/decode_study_report.py DIR BINARY_LABEL > DIR/README.md"""
import json
import os
import sys

TARGETS = (128, 256, 512)


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def main():
    root, binary = sys.argv[1], sys.argv[2]
    ppl = {t: load(os.path.join(root, f"perplexity-{t}.json")) for t in TARGETS}
    fid = {t: load(os.path.join(root, f"fidelity-{t}.json")) for t in TARGETS}
    names = [r["name"] for r in ppl[TARGETS[0]]["results"]]
    full = {t: next(r for r in ppl[t]["results"] if r["name"] == "full cache")["perplexity"] for t in TARGETS}
    tokens = ppl[TARGETS[0]]["tokens"]
    out = []
    out.append("# A first decode-time study (SmolLM2-135M, CPU)\n")
    out.append(f"Every policy on one shared decode, at cache targets {', '.join(map(str, TARGETS))} entries per "
               f"KV head and layer. Binary: {binary}. How it was run, the text's source and licence, and "
               f"what this study is not: [HOW.md](HOW.md).\n")
    out.append(f"## Bounded-cache perplexity ({tokens} tokens, fed one at a time)\n")
    out.append("| policy | " + " | ".join(f"T = {t}" for t in TARGETS) + " | vs full at T = 256 |")
    out.append("|---|" + "---:|" * (len(TARGETS) + 1))
    for name in names:
        row = []
        for t in TARGETS:
            r = next(r for r in ppl[t]["results"] if r["name"] == name)
            row.append(f"{r['perplexity']:.2f}")
        mid = next(r for r in ppl[256]["results"] if r["name"] == name)["perplexity"]
        out.append(f"| {name} | " + " | ".join(row) + f" | {mid / full[256]:.2f}x |")
    out.append("")
    steps = fid[TARGETS[0]]["steps"]
    prompt = fid[TARGETS[0]]["prompt_tokens"]
    out.append(f"## Fidelity to the full cache ({prompt}-token prompt, the full cache's own {steps}-token "
               f"continuation)\n")
    out.append("Teacher-forced: mean KL(full || policy) per step and top-1 agreement; free-running: the "
               "first step whose token differs (-1: none) and ROUGE-L over token ids.\n")
    out.append("| policy | " + " | ".join(f"KL / top-1 / first / ROUGE-L at T = {t}" for t in TARGETS) + " |")
    out.append("|---|" + "---|" * len(TARGETS))
    for name in [p["name"] for p in fid[TARGETS[0]]["policies"]]:
        cells = []
        for t in TARGETS:
            p = next(p for p in fid[t]["policies"] if p["name"] == name)
            cells.append(f"{p['mean_kl']:.3f} / {100 * p['top1']:.1f}% / {p['first_divergence']} / "
                         f"{p['rouge_l']:.3f}")
        out.append(f"| {name} | " + " | ".join(cells) + " |")
    out.append("")
    out.append("## Largest cache held (entries per KV head and layer, T = 256)\n")
    out.append("| policy | perplexity run | fidelity run |")
    out.append("|---|---:|---:|")
    for name in [p["name"] for p in fid[256]["policies"]]:
        a = next(r for r in ppl[256]["results"] if r["name"] == name)["largest_cache"]
        b = next(p for p in fid[256]["policies"] if p["name"] == name)["largest_cache"]
        out.append(f"| {name} | {a} | {b} |")
    out.append("")
    print("\n".join(out))


if __name__ == "__main__":
    main()
