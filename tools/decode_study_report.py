#!/usr/bin/env python3
"""The perplexity and fidelity sections of results/example-decoding/README.md from the study's JSON
files (tools/decode_study.sh): per policy and target, bounded-cache perplexity and fidelity to the
full cache, and paired comparisons whose figures are `kvsearch compare`'s own (its --scores-a and
--scores-b files), the blocks of the decode as the paired units and Holm's correction over the
three targets; then, from the task study's database (DIR/tasks/results.sqlite, the experiment
experiments/decoding_ruler.json), `kvsearch compare --db` of the chosen pairs at each target.
Between them, from the text study's database (DIR/texts/results.sqlite, the experiment
experiments/decoding_text.json: one KJV book a question), `kvsearch compare --db` of every method
against the full cache and of the chosen pairs, per text dataset and target.
Usage: tools/decode_study_report.py DIR BINARY_LABEL KVSEARCH > DIR/README.md"""
import json
import math
import os
import re
import subprocess
import sys
import tempfile

TARGETS = (128, 256, 512)
FULL = "full cache"
# The pairs the findings compare (A, B): the sinks' effect, the paper's method against its base,
# the native rules against each other, and every method against StreamingLLM's rolling cache.
PAIRS = [("streaming_llm", "window only"), ("global", "snapkv"), ("tova", "h2o")]
REFERENCE = "streaming_llm"
# The task study's pairs, as its runs name the methods (kvsearch runs): the per-step rules against
# each other and against their prefill-time counterparts. The scoring methods compress first after
# step 8, when SmolLM2 has written the 7-digit answer (HOW.md): SnapKV against the full cache shows it.
TASK_PAIRS = [("tova", "h2o"), ("tova", "streamingllm"), ("streamingllm", "window-only"),
              ("streamingllm", "streamingllm-prefill"), ("tova", "snapkv-prefill"),
              ("snapkv", "full-cache")]

# The text study (experiments/decoding_text.json): its targets, datasets and pairs, by run name.
TEXT_SPEC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "experiments", "decoding_text.json")
TEXT_PAIRS = [("streamingllm", "window-only"), ("global", "snapkv"), ("tova", "h2o"), ("adakv", "snapkv"),
              ("mixkv", "snapkv")]
TEXT_REFERENCE = "streamingllm"


def slug(name):
    """A method's run name, as experiments name them ("R-KV" -> "r-kv")."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def compare(binary, a_scores, b_scores):
    """kvsearch compare over {dataset: [per-block scores]} files: its JSON."""
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for name, scores in (("a", a_scores), ("b", b_scores)):
            paths.append(os.path.join(tmp, name + ".json"))
            with open(paths[-1], "w", encoding="utf-8") as f:
                json.dump(scores, f)
        out = subprocess.run([binary, "compare", "--scores-a", paths[0], "--scores-b", paths[1], "--json"],
                             capture_output=True, text=True, check=True)
        return json.loads(out.stdout)


def per_target(c):
    return {d["dataset"]: d for d in c["datasets"]}


def cell(d, digits=3):
    star = " *" if d["survives"] else ""
    return (f"{d['difference']:+.{digits}f} [{d['low']:+.{digits}f}, {d['high']:+.{digits}f}] "
            f"{d['wins']}/{d['losses']}/{d['ties']}{star}")


def compare_db(binary, db, a, b, budget):
    """kvsearch compare --db of two methods at one budget: {dataset: its paired figures}, or None."""
    r = subprocess.run([binary, "compare", "--db", db, "--a", a, "--b", b, "--budget", str(budget), "--json"],
                       capture_output=True, text=True)
    return per_target(json.loads(r.stdout)) if r.returncode == 0 else None


def holm_reach(methods, targets, books, alpha=0.05):
    """What the report's own findings can find: Holm over every pair of a table (the methods against
    each other and against the full cache, per target) against the smallest p an exact two-sided
    sign test reaches over the books (every book on one side: 2 / 2^books)."""
    comparisons = targets * (methods * (methods - 1) // 2 + methods)
    smallest = 2.0 / 2**books
    verdict = ("so none can survive" if smallest * comparisons > alpha
               else "small enough for the strongest differences to survive")
    return (f"The report's own findings correct over every pair of a table ({comparisons} comparisons): "
            f"with {books} books the smallest sign-test p is {smallest:.2g}, {verdict}.")


def text_study(root, binary):
    """The text study's section: scores per method and target, and paired comparisons per text."""
    db = os.path.join(root, "texts", "results.sqlite")
    if not os.path.exists(db):
        return []
    spec = load(TEXT_SPEC)
    targets, datasets = spec["budgets"], spec["datasets"]
    methods = [slug(m["name"]) for m in spec["methods"] if m.get("profile") != "full"]
    out = [f"## Perplexity and fidelity over independent texts ({spec['test_limit']} test books a set)\n",
           "A recorded experiment ([texts/README.md](texts/README.md), experiments/decoding_text.json): one "
           "King James book a question, every method and target of a book on one shared decode. "
           "kjv_perplexity: the book's first token the prompt, its next 511 fed; score 100 x the full "
           "cache's perplexity over the method's. kjv_fidelity: a 256-token prompt, the full cache's own "
           "128-token continuation teacher-forced; score the top-1 agreement with the full cache (%). "
           "100 is the full cache. Cells: `kvsearch compare --db texts/results.sqlite --a A --b B --budget "
           "T --json`, per dataset: A's mean score, or A - B [95% bootstrap CI] and the books A wins / "
           "loses / ties, * where the exact sign test survives Holm over the two datasets (alpha 0.05): "
           "each cell is one pair's test, not corrected for the other pairs and targets. "
           + holm_reach(len(methods), len(targets), spec["test_limit"])
           + " The runs' binary is named in texts/README.md.\n"]
    head = "| method | " + " | ".join(f"{d.split('_')[-1]} T = {t}" for d in datasets for t in targets) + " |"
    out += [head, "|---|" + "---:|" * (len(datasets) * len(targets))]
    against_full = {m: {t: compare_db(binary, db, m, "full-cache", t) for t in targets} for m in methods}
    for m in methods:
        cells = [f"{against_full[m][t][d]['mean_a']:.2f}" if against_full[m][t] and d in against_full[m][t]
                 else "-" for d in datasets for t in targets]
        out.append(f"| {m} | " + " | ".join(cells) + " |")
    out.append("")
    pairs = TEXT_PAIRS + [(m, TEXT_REFERENCE) for m in methods
                          if m != TEXT_REFERENCE and (m, TEXT_REFERENCE) not in TEXT_PAIRS
                          and (TEXT_REFERENCE, m) not in TEXT_PAIRS]
    for d in datasets:
        out += [f"Paired per book, {d}:\n", "| A vs B | " + " | ".join(f"T = {t}" for t in targets) + " |",
                "|---|" + "---|" * len(targets)]
        for a, b in pairs:
            cells = []
            for t in targets:
                c = compare_db(binary, db, a, b, t)
                cells.append(cell(c[d], 2) if c and d in c else "-")
            out.append(f"| {a} vs {b} | " + " | ".join(cells) + " |")
        out.append("")
    return out


def main():
    root, label, binary = sys.argv[1], sys.argv[2], sys.argv[3]
    ppl = {t: load(os.path.join(root, f"perplexity-{t}.json")) for t in TARGETS}
    fid = {t: load(os.path.join(root, f"fidelity-{t}.json")) for t in TARGETS}
    names = [r["name"] for r in ppl[TARGETS[0]]["results"]]
    policies = [n for n in names if n != FULL]

    def ppl_row(t, name):
        return next(r for r in ppl[t]["results"] if r["name"] == name)

    def fid_row(t, name):
        return next(p for p in fid[t]["policies"] if p["name"] == name)

    # Per-block scores, as compare reads them: {"T = 128": [...], ...}.
    def log_ppl(name):
        return {f"T = {t}": [math.log(x) for x in ppl_row(t, name)["block_perplexity"]] for t in TARGETS}

    def block_kl(name):
        return {f"T = {t}": fid_row(t, name)["block_kl"] for t in TARGETS}

    def block_top1(name):
        return {f"T = {t}": [100 * x for x in fid_row(t, name)["block_top1"]] for t in TARGETS}

    tokens = ppl[TARGETS[0]]["tokens"]
    blocks = len(ppl_row(TARGETS[0], FULL)["block_perplexity"])
    steps, prompt = fid[TARGETS[0]]["steps"], fid[TARGETS[0]]["prompt_tokens"]
    fblocks = len(fid_row(TARGETS[0], policies[0])["block_kl"])
    out = ["# A decode-time study (SmolLM2-135M, CPU)\n",
           "Every policy of a prompt on one shared decode, at cache targets of 64 to 512 entries per "
           "KV head and layer: answers on RULER's needle tasks under decode-time eviction (a recorded "
           "experiment: [tasks/README.md](tasks/README.md)); bounded-cache perplexity and fidelity to the "
           "full cache over 10 King James books a set (a recorded experiment: "
           "[texts/README.md](texts/README.md)); and the same two measures on one long text with per-block "
           "detail (below). How each was run, the texts' sources and licences, and what this study is not: "
           "[HOW.md](HOW.md).\n"]
    tasks_db = os.path.join(root, "tasks", "results.sqlite")
    if os.path.exists(tasks_db):
        out.append("## Answers under decode-time eviction (RULER niah_single_1/2 at 2k, 60 + 60 test questions)\n")
        out.append("`kvsearch compare --db tasks/results.sqlite --a A --b B --budget T --json`: the mean "
                   "per-question difference in points over both tasks [95% bootstrap CI], the questions A "
                   "wins / loses / ties, and per task the sign test after Holm over the two tasks (* where "
                   f"one survives at 0.05). The runs' binary is named in tasks/README.md ({label} "
                   "here). The full table per method and target, with intervals, and the "
                   "report's own findings: [tasks/README.md](tasks/README.md).\n")
        out.append("| A vs B | " + " | ".join(f"T = {t}" for t in TARGETS) + " |")
        out.append("|---|" + "---|" * len(TARGETS))
        for a, b in TASK_PAIRS:
            cells = []
            for t in TARGETS:
                r = subprocess.run([binary, "compare", "--db", tasks_db, "--a", a, "--b", b, "--budget",
                                    str(t), "--json"], capture_output=True, text=True)
                if r.returncode != 0:
                    cells.append("-")
                    continue
                c = json.loads(r.stdout)
                star = " *" if any(d["survives"] for d in c["datasets"]) else ""
                cells.append(f"{c['difference']:+.2f} [{c['low']:+.2f}, {c['high']:+.2f}] "
                             f"{c['wins']}/{c['losses']}/{c['ties']}{star}")
            out.append(f"| {a} vs {b} | " + " | ".join(cells) + " |")
        out.append("")
    out += text_study(root, binary)
    out += [f"## Perplexity and fidelity: how to read the comparisons\n",
            f"Binary: {label}. Units of the paired comparisons: the blocks of one decode ({blocks} blocks "
           f"of the perplexity run, {fblocks} of the fidelity run), neighbours in one text and so not "
           f"independent: the intervals are narrower than over independent texts would be. Cells: "
           f"A - B [95% bootstrap CI] and the blocks where A - B > 0 / < 0 / = 0, * where the exact sign test "
           f"survives Holm's correction over the three targets (alpha 0.05); every figure is "
           f"`kvsearch compare --scores-a --scores-b --json`'s.\n"]

    out.append(f"## Bounded-cache perplexity ({tokens} tokens, fed one at a time)\n")
    out.append("| policy | " + " | ".join(f"T = {t}" for t in TARGETS) + " | largest cache (T = 256) |")
    out.append("|---|" + "---:|" * (len(TARGETS) + 1))
    for name in names:
        row = [f"{ppl_row(t, name)['perplexity']:.2f}" for t in TARGETS]
        out.append(f"| {name} | " + " | ".join(row) + f" | {ppl_row(256, name)['largest_cache']} |")
    out.append("")
    out.append(f"Against the full cache: log-perplexity per block of {tokens // blocks} tokens, policy - "
               f"full cache (nats per token; lower is better, 0 is the full cache's).\n")
    out.append("| policy | " + " | ".join(f"T = {t}" for t in TARGETS) + " |")
    out.append("|---|" + "---|" * len(TARGETS))
    full_scores = log_ppl(FULL)
    for name in policies:
        c = per_target(compare(binary, log_ppl(name), full_scores))
        out.append(f"| {name} | " + " | ".join(cell(c[f"T = {t}"]) for t in TARGETS) + " |")
    out.append("")

    out.append(f"## Fidelity to the full cache ({prompt}-token prompt, the full cache's own {steps}-token "
               f"continuation)\n")
    out.append("Teacher-forced: mean KL(full || policy) per step and top-1 agreement; free-running: the "
               "first step whose token differs (-1: none) and ROUGE-L over token ids.\n")
    out.append("| policy | " + " | ".join(f"KL / top-1 / first / ROUGE-L at T = {t}" for t in TARGETS)
               + " | largest cache (T = 256) |")
    out.append("|---|" + "---|" * len(TARGETS) + "---:|")
    for name in policies:
        cells = []
        for t in TARGETS:
            p = fid_row(t, name)
            cells.append(f"{p['mean_kl']:.3f} / {100 * p['top1']:.1f}% / {p['first_divergence']} / "
                         f"{p['rouge_l']:.3f}")
        out.append(f"| {name} | " + " | ".join(cells) + f" | {fid_row(256, name)['largest_cache']} |")
    out.append("")

    out.append(f"## Paired comparisons (A - B over the blocks)\n")
    out.append("Log-perplexity (nats per token, lower is better) and teacher-forced KL to the full cache "
               "(nats, lower is better).\n")
    out.append("| A vs B | measure | " + " | ".join(f"T = {t}" for t in TARGETS) + " |")
    out.append("|---|---|" + "---|" * len(TARGETS))
    pairs = PAIRS + [(n, REFERENCE) for n in policies
                     if n != REFERENCE and (n, REFERENCE) not in PAIRS and (REFERENCE, n) not in PAIRS]
    findings = []
    for a, b in pairs:
        for measure, scores in (("log-perplexity", log_ppl), ("KL", block_kl)):
            c = per_target(compare(binary, scores(a), scores(b)))
            out.append(f"| {a} vs {b} | {measure} | " + " | ".join(cell(c[f"T = {t}"]) for t in TARGETS) + " |")
            if (a, b) in PAIRS:
                for t in TARGETS:
                    d = c[f"T = {t}"]
                    if d["survives"]:
                        better = a if d["difference"] < 0 else b
                        findings.append(
                            f"- T = {t}, {measure}: {a} - {b} = {d['difference']:+.3f} "
                            f"[{d['low']:+.3f}, {d['high']:+.3f}], A - B > 0 / < 0 / = 0 in "
                            f"{d['wins']}/{d['losses']}/{d['ties']} blocks, "
                            f"p Holm {d['p_holm']:.2g}: {better} is closer to the full cache.")
    out.append("")
    out.append("## Findings (the pairs above whose difference survives Holm)\n")
    out.extend(findings or ["- none"])
    out.append("")
    print("\n".join(out))


if __name__ == "__main__":
    main()
