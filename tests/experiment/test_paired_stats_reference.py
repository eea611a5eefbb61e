#!/usr/bin/env python3
"""`kvsearch compare` (src/experiment/paired_stats, comparison, paired_scores) against references
computed here with numpy and exact fractions only:

1. score files (--scores-a/--scores-b --json) of six made-up datasets, from one question to 3,000:
   - every bootstrap interval of a statistic that is smooth enough to have one (datasets of 100
     questions or more, the pooled questions, the macro averages) lies within 0.5 points of
     numpy's percentile interval from 100,000 resamples (stratified by dataset for the macro
     averages);
   - the means, differences and wins / losses / ties equal a direct computation;
   - every sign-test p-value equals the exact binomial (math.comb, fractions) to 1e-12;
   - Holm's adjusted p-values equal a direct implementation, and the datasets that survive at
     alpha 0.05 are those of the textbook step-down procedure;
   - the seed and resample count are reported; the same seed gives the same output, another seed
     other intervals;
2. edge cases: one question, all ties (difference 0, interval [0, 0], p 1);
3. the committed example database (results/example-demo/results.sqlite): global against snapkv
   pairs the test predictions of each run's last accepted state by question, as read here with
   sqlite3, at the largest budget both have; the full cache stands at every budget;
4. refusals, one "error:" line each: mismatched lengths, empty arrays, one file only, an unknown
   method, dataset or budget (listing the recorded ones).

Env: KVSEARCH_BIN, KVS_SOURCE_DIR. Exit status 0 = pass.
"""
import json
import os
import sys
from fractions import Fraction
from math import comb

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from kvs_testing import check, error_output, finish, kvsearch, must, rows, scratch_dir, write_json  # noqa: E402

NUMPY_RESAMPLES = 100_000
TOLERANCE = 0.5  # points: the module's 10,000 resamples against numpy's 100,000
SMOOTH_N = 100  # below this, a bootstrap distribution is too lumpy for a fixed tolerance
SOURCE = os.environ.get("KVS_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
DEMO_DB = os.path.join(SOURCE, "results", "example-demo", "results.sqlite")


# ---- references -----------------------------------------------------------------------------


def exact_sign_p(wins, losses):
    """Two-sided sign test: P(X <= min) + P(X >= max), X ~ Binomial(wins + losses, 1/2), exactly."""
    n, m = wins + losses, min(wins, losses)
    if n == 0:
        return 1.0
    tails = Fraction(sum(comb(n, k) for k in range(m + 1)), 2 ** n)
    return float(min(Fraction(1), 2 * tails))


def holm_adjusted(ps):
    """adjusted p_(i) = max over j <= i of min(1, (m - j) p_(j)), p sorted ascending (0-based j)."""
    order = sorted(range(len(ps)), key=lambda i: ps[i])
    adjusted, running = [0.0] * len(ps), 0.0
    for j, i in enumerate(order):
        running = max(running, min(1.0, (len(ps) - j) * ps[i]))
        adjusted[i] = running
    return adjusted


def holm_survivors(ps, alpha=0.05):
    """The textbook step-down: reject in ascending order while p_(j) <= alpha / (m - j)."""
    order = sorted(range(len(ps)), key=lambda i: ps[i])
    survivors = set()
    for j, i in enumerate(order):
        if ps[i] > alpha / (len(ps) - j):
            break
        survivors.add(i)
    return survivors


def resampled_means(arrays, rng, resamples=NUMPY_RESAMPLES, chunk_cells=20_000_000):
    """Per array, its mean over `resamples` resamples of the question indices (the same indices
    for every array: paired)."""
    n = len(arrays[0])
    rows_per_chunk = max(1, chunk_cells // n)
    out = [np.empty(resamples) for _ in arrays]
    for start in range(0, resamples, rows_per_chunk):
        stop = min(resamples, start + rows_per_chunk)
        idx = rng.integers(0, n, size=(stop - start, n))
        for o, x in zip(out, arrays):
            o[start:stop] = x[idx].mean(axis=1)
    return out


def interval(values):
    low, high = np.percentile(values, [2.5, 97.5])  # linear interpolation, as the module
    return float(low), float(high)


def close_interval(what, got, values):
    low, high = interval(values)
    check(abs(got["low"] - low) <= TOLERANCE and abs(got["high"] - high) <= TOLERANCE,
          f"{what}: interval [{got['low']:.3f}, {got['high']:.3f}], numpy [{low:.3f}, {high:.3f}]")


# ---- made-up scores -------------------------------------------------------------------------


def signed_pairs(rng, wins, losses, ties):
    """Scores with exactly these wins, losses and ties, shuffled."""
    n = wins + losses + ties
    a = rng.uniform(20, 80, n).round(2)
    sign = np.array([1.0] * wins + [-1.0] * losses + [0.0] * ties)
    rng.shuffle(sign)
    return a, a - sign * rng.uniform(1, 20, n).round(2)


def made_up_scores():
    rng = np.random.default_rng(20250131)
    a = rng.uniform(0, 100, 240).round(2)
    data = {"continuous": (a, np.clip(a + rng.normal(-6, 15, 240), 0, 100).round(2)),
            "binary": ((rng.random(300) < 0.6) * 100.0, (rng.random(300) < 0.5) * 100.0),
            "big": signed_pairs(rng, 1450, 1550, 0),
            "small": signed_pairs(rng, 7, 2, 3),
            "tied": (np.array([0, 100, 50, 25, 75.5]),) * 2,
            "single": (np.array([80.0]), np.array([30.0]))}
    return data


def write_scores(tmp, data):
    pa, pb = os.path.join(tmp, "a.json"), os.path.join(tmp, "b.json")
    write_json(pa, {name: a.tolist() for name, (a, b) in data.items()})
    write_json(pb, {name: b.tolist() for name, (a, b) in data.items()})
    return pa, pb


def compare_json(*args):
    return json.loads(must("compare", *args, "--json"))


# ---- checks ---------------------------------------------------------------------------------


def check_counts(what, got, a, b):
    d = a - b
    wins, losses, ties = int((d > 1e-9).sum()), int((d < -1e-9).sum()), int((abs(d) <= 1e-9).sum())
    check((got["wins"], got["losses"], got["ties"], got["n"]) == (wins, losses, ties, len(a)),
          f"{what}: W/L/T/n {got['wins']}/{got['losses']}/{got['ties']}/{got['n']}, "
          f"expected {wins}/{losses}/{ties}/{len(a)}")
    check(abs(got["mean_a"] - a.mean()) < 1e-9 and abs(got["mean_b"] - b.mean()) < 1e-9
          and abs(got["difference"] - d.mean()) < 1e-9, f"{what}: means differ from numpy's")
    p = exact_sign_p(wins, losses)
    check(abs(got["p"] - p) <= 1e-12, f"{what}: sign test p {got['p']!r}, exact {p!r}")
    check(got["low"] <= got["difference"] + 1e-12 and got["difference"] <= got["high"] + 1e-12,
          f"{what}: the difference {got['difference']} is outside its interval")


def check_files(tmp):
    data = made_up_scores()
    pa, pb = write_scores(tmp, data)
    got = compare_json("--scores-a", pa, "--scores-b", pb)
    check(got["seed"] == 0 and got["resamples"] == 10000, f"defaults: seed {got['seed']}, resamples {got['resamples']}")
    rng = np.random.default_rng(7)

    by_name = {d["dataset"]: d for d in got["datasets"]}
    check(sorted(by_name) == sorted(data), f"datasets {sorted(by_name)}")
    per_dataset_means = {}
    for name, (a, b) in data.items():
        d = by_name[name]
        check_counts(name, d, a, b)
        per_dataset_means[name] = resampled_means([a, b, a - b], rng)
        if len(a) >= SMOOTH_N:
            close_interval(f"{name}: difference", d, per_dataset_means[name][2])

    names = list(by_name)
    ps = [by_name[n]["p"] for n in names]
    for name, want in zip(names, holm_adjusted(ps)):
        got_holm = by_name[name]["p_holm"]
        check(abs(got_holm - want) <= 1e-12, f"{name}: Holm p {got_holm!r}, want {want!r}")
    survivors = {names[i] for i in holm_survivors(ps)}
    check({n for n in names if by_name[n]["survives"]} == survivors, f"Holm survivors, expected {sorted(survivors)}")
    check("continuous" in survivors and "small" not in survivors, f"the data should split the family: {survivors}")

    all_a = np.concatenate([a for a, b in data.values()])
    all_b = np.concatenate([b for a, b in data.values()])
    check_counts("all questions", got, all_a, all_b)
    ma, mb, md = resampled_means([all_a, all_b, all_a - all_b], rng)
    close_interval("all questions: difference", got, md)
    close_interval("all questions: A's mean", got["mean_a_interval"], ma)
    close_interval("all questions: B's mean", got["mean_b_interval"], mb)

    # Stratified: each dataset's resampled means are independent draws; their average is a macro
    # resample.
    for k, label in enumerate(("a", "b", "difference")):
        macro = np.mean([per_dataset_means[n][k] for n in data], axis=0)
        value = np.mean([[a, b, a - b][k].mean() for a, b in data.values()])
        m = got["macro"][label]
        check(abs(m["mean"] - value) < 1e-9, f"macro {label}: {m['mean']} vs {value}")
        close_interval(f"macro {label}", m, macro)

    again = must("compare", "--scores-a", pa, "--scores-b", pb, "--json")
    check(json.loads(again) == got, "the same seed gave another output")
    other = compare_json("--scores-a", pa, "--scores-b", pb, "--seed", 5, "--resamples", 20000)
    check(other["seed"] == 5 and other["resamples"] == 20000, "seed and resamples are not reported")
    check(other["low"] != got["low"] or other["high"] != got["high"], "another seed gave the same interval")
    close_interval("all questions, seed 5", other, md)
    text = must("compare", "--scores-a", pa, "--scores-b", pb)
    check("macro average" in text and "seed 0" in text and "10000 resamples" in text, f"text output:\n{text}")


def check_edge_cases(tmp):
    pa, pb = os.path.join(tmp, "one_a.json"), os.path.join(tmp, "one_b.json")
    write_json(pa, [50])
    write_json(pb, [20])
    one = compare_json("--scores-a", pa, "--scores-b", pb)
    check((one["n"], one["difference"], one["low"], one["high"], one["wins"], one["p"]) == (1, 30, 30, 30, 1, 1.0),
          f"one question: {one}")
    check("macro" not in one, "one dataset has no macro average")
    write_json(pa, [0, 100, 33.5, 100])
    write_json(pb, [0, 100, 33.5, 100])
    tied = compare_json("--scores-a", pa, "--scores-b", pb)
    check((tied["difference"], tied["low"], tied["high"], tied["ties"], tied["p"]) == (0, 0, 0, 4, 1.0),
          f"all ties / identical methods: {tied}")


def expect_error(what, *args, mentions=()):
    _, problems = error_output(kvsearch("compare", *args), mentions=mentions)
    check(not problems, f"{what}: {problems}")


def check_refusals(tmp):
    pa, pb, empty = (os.path.join(tmp, f) for f in ("r_a.json", "r_b.json", "r_empty.json"))
    write_json(pa, {"x": [1, 2, 3]})
    write_json(pb, {"x": [1, 2]})
    write_json(empty, [])
    expect_error("mismatched lengths", "--scores-a", pa, "--scores-b", pb, mentions=(pb, "'x'", "3"))
    expect_error("empty input", "--scores-a", empty, "--scores-b", empty, mentions=(empty, "no scores"))
    expect_error("one file only", "--scores-a", pa, mentions=("--scores-b",))
    expect_error("unknown method", "--db", DEMO_DB, "--a", "global", "--b", "nope",
                 mentions=("nope", "snapkv", "full-cache"))
    expect_error("unknown dataset", "--db", DEMO_DB, "--a", "global", "--b", "snapkv", "--dataset", "nope",
                 mentions=("nope", "niah_single_1_1024", "niah_single_2_1024"))
    expect_error("budget not recorded", "--db", DEMO_DB, "--a", "global", "--b", "snapkv", "--budget", 100,
                 mentions=("100", "32, 64, 128"))
    expect_error("missing database", "--db", os.path.join(tmp, "none.sqlite"), "--a", "global", "--b", "snapkv",
                 mentions=("none.sqlite",))


def demo_test_scores(method, budget):
    """dataset -> {question_index: points} of the run's last accepted state's test predictions."""
    out = {}
    for run_id, dataset in rows(DEMO_DB, "SELECT id, dataset FROM runs WHERE run_key LIKE ? AND budget = ?",
                                f"demo/%/{method}/B%", budget):
        state = rows(DEMO_DB, "SELECT id FROM states WHERE run_id = ? AND accepted = 1 ORDER BY eval_order DESC "
                     "LIMIT 1", run_id)[0][0]
        out[dataset] = {i: 100.0 * (o if o is not None else s) for i, o, s in rows(
            DEMO_DB, "SELECT question_index, official_score, score FROM predictions WHERE state_id = ? AND "
            "split = 'test'", state)}
    return out


def check_database():
    got = compare_json("--db", DEMO_DB, "--a", "global", "--b", "snapkv")
    check(got["budget"] == 128 and got["other_budgets"] == [32, 64], f"budget {got['budget']}, {got['other_budgets']}")
    sa, sb = demo_test_scores("global", 128), demo_test_scores("snapkv", 128)
    by_name = {d["dataset"]: d for d in got["datasets"]}
    check(sorted(by_name) == sorted(sa), f"datasets {sorted(by_name)} vs {sorted(sa)}")
    all_a, all_b = [], []
    for dataset in sorted(sa):
        common = sorted(set(sa[dataset]) & set(sb[dataset]))
        a = np.array([sa[dataset][i] for i in common])
        b = np.array([sb[dataset][i] for i in common])
        check_counts(f"demo {dataset}", by_name.get(dataset, {}), a, b)
        all_a.append(a)
        all_b.append(b)
    check_counts("demo, all questions", got, np.concatenate(all_a), np.concatenate(all_b))
    ps = [by_name[d]["p"] for d in sorted(sa)]
    check([by_name[d]["p_holm"] for d in sorted(sa)] == holm_adjusted(ps), "demo: Holm")

    full = compare_json("--db", DEMO_DB, "--a", "Full cache", "--b", "global", "--budget", 64,
                        "--dataset", "niah_single_1_1024")
    check(full["budget"] == 64 and full["n"] == 20 and full["mean_a"] == 100.0,
          f"full cache at budget 64: {full['budget']}, n {full['n']}, mean {full['mean_a']}")


def main():
    with scratch_dir() as tmp:
        check_files(tmp)
        check_edge_cases(tmp)
        check_refusals(tmp)
    check_database()
    finish(passed="kvsearch compare: intervals within 0.5 points of numpy, sign tests exact, Holm as "
           "the direct procedure")


if __name__ == "__main__":
    main()
