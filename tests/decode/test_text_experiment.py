#!/usr/bin/env python3
"""Text datasets in experiments (`kvsearch data text`, search/text_evaluation.h), end to end, on the
experiment tests' tiny checkpoint and made-up texts:

1. `data text FILES --name t --perplexity 1,95 --fidelity 32,32 --dev 2` declares t_perplexity and
   t_fidelity beside the texts: one record per text long enough (a too-short text is left out of
   the dataset that cannot read it), their metric, prompt tokens, fed tokens, dev split and chat
   template in config/, and in texts.json which texts each dataset holds;
2. a spec on both datasets runs decode-time policies (a native per-step rule, the window-only
   control, a periodic scorer) and prefill-time ones beside the full cache; every test text of
   every run is recorded, and its score equals what `kvsearch perplexity` (exp(nll_full -
   nll_policy), both perplexities in the prediction) and `kvsearch fidelity` (top-1 agreement and
   mean KL, teacher-forced on the full cache's own continuation) measure on that text alone;
3. a prefill-time policy whose budget holds the one-token prompt never compresses: it scores as the
   full cache (1 on every perplexity text); on the fidelity set (a 32-token prompt) it compresses
   the prompt and is measured like `kvsearch fidelity --policy` with that budget;
4. `kvsearch report` writes the table with the text datasets' note; `kvsearch show --predictions`
   lists each text's perplexities; `kvsearch compare` pairs two methods text by text;
5. bad input: `--perplexity` that is not two counts, a dataset no text is long enough for, a
   --name that cannot name a dataset: one line, exit 1, nothing written; a dataset whose config
   reads more tokens than a text holds: one line naming the text.

Env: KVSEARCH_BIN, KVS_FIXTURES_DIR. Exit status 0 = pass.
"""
import json
import math
import os
import random
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "common"))
from kvs_testing import (check, error_output, finish, kvsearch, must, read_json, rows,  # noqa: E402
                         scratch_dir, write_json)

FIXTURES = os.environ.get("KVS_FIXTURES_DIR", os.path.join(HERE, "..", "fixtures"))
BUDGETS = [16, 24]
PPL = (1, 95)   # prompt tokens, fed tokens
FID = (32, 32)
WORDS = ("the river ran past a quiet town where people kept old books and told long stories about "
         "winters summers ships and the mountains beyond every field of grain").split()
DECODING = {
    "StreamingLLM": {"method": "streaming_llm", "n_sink": 4, "decoding": {"interval": 1, "buffer": 1}},
    "Window only": {"method": "streaming_llm", "n_sink": 0, "decoding": {"interval": 1, "buffer": 1}},
    # Not Knorm: on these texts' repeated words layer 0's keys tie exactly (RoPE keeps norms), and
    # which of the tied entries go is decided by floating-point noise that the batch changes.
    "KeyDiff (decoding)": {"method": "keydiff", "decoding": {"interval": 4, "buffer": 4}},
}
PREFILL = {"Knorm (prefill)": {"method": "knorm"}}


def texts(tmp):
    """Six made-up texts of 150 words and one of 60 (too short for either dataset)."""
    rng = random.Random(3)
    paths = []
    for i, words in enumerate([150] * 6 + [60]):
        path = os.path.join(tmp, f"text{i}.txt")
        sentence = []
        for _ in range(words):
            sentence.append(rng.choice(WORDS))
        with open(path, "w", encoding="utf-8") as f:
            f.write(" ".join(sentence).capitalize() + ".\n")
        paths.append(path)
    return paths


def spec(lb):
    methods = [{"name": "Full cache", "profile": "full"}]
    methods += [{"name": n, "policy": p} for n, p in {**DECODING, **PREFILL}.items()]
    return {
        "name": "text_datasets",
        "description": "text datasets on the tiny model",
        "longbench": lb,
        "datasets": ["t_perplexity", "t_fidelity"],
        "budgets": BUDGETS,
        "split_seed": 42,
        "dev_limit": 1,
        "methods": methods,
        "tables": [{"name": "texts", "kind": "datasets", "title": "Text datasets", "budget": BUDGETS[0],
                    "methods": [m["name"] for m in methods]}],
    }


def slug(name):
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def policy_file(tmp, name, policy, budget):
    p = dict(policy)
    if "decoding" in p:
        p["decoding"] = {**p["decoding"], "target": budget}
    else:
        p["budget"] = budget
    path = os.path.join(tmp, f"policy-{slug(name)}-{budget}.json")
    write_json(path, p)
    return path


def recorded_answer(by, dataset, budget, qid, name, policy):
    """The (prediction, score) a run of `policy` recorded on text `qid`, or None (a failed check)."""
    def same(recorded):
        r = json.loads(recorded)
        return (r.get("method"), r.get("n_sink"), "decoding" in r) == \
            (policy["method"], policy.get("n_sink"), "decoding" in policy)
    keys = [k for k in by if k[0] == dataset and k[2] == budget and k[3] == qid and same(k[1])]
    if not check(len(keys) == 1, f"{dataset} {name} B={budget} {qid}: {len(keys)} recorded runs"):
        return None
    return by[keys[0]]


def refused(args, mentions, out):
    r = kvsearch("data", "text", *args, "--out", out)
    line, problems = error_output(r, mentions=mentions)
    check(not problems, f"data text {' '.join(map(str, args))}: {problems}: {line!r}")
    check(not os.path.exists(out), f"data text {' '.join(map(str, args))}: wrote {out} though refused")


def main():
    with scratch_dir() as tmp:
        model = os.path.join(tmp, "tiny")
        must("make-model", "--preset", "tiny", "--seed", 5, "--out", model, "--tokenizer",
             os.path.join(FIXTURES, "tokenizers", "mistral-7b-v0.1", "tokenizer.model"))
        files = texts(tmp)
        lb = os.path.join(tmp, "texts")

        # 1. The declared datasets.
        must("data", "text", *files, "--out", lb, "--name", "t", "--perplexity", f"{PPL[0]},{PPL[1]}",
             "--fidelity", f"{FID[0]},{FID[1]}", "--dev", 2)
        config = {n: read_json(os.path.join(lb, "config", f"dataset2{n}.json"))
                  for n in ("metric", "prompt", "maxlen", "dev", "chat_template", "prompt_tokens")}
        check(config["metric"] == {"t_perplexity": "perplexity", "t_fidelity": "fidelity"}, f"metrics {config['metric']}")
        check(config["prompt_tokens"] == {"t_perplexity": PPL[0], "t_fidelity": FID[0]} and
              config["maxlen"] == {"t_perplexity": PPL[1], "t_fidelity": FID[1]},
              f"prompt tokens {config['prompt_tokens']}, fed {config['maxlen']}")
        check(config["dev"] == {"t_perplexity": 2, "t_fidelity": 2} and
              set(config["chat_template"].values()) == {"none"} and set(config["prompt"].values()) == {"{context}"},
              f"dev {config['dev']}, chat {config['chat_template']}, prompt {config['prompt']}")
        meta = read_json(os.path.join(lb, "texts.json"))
        held = {d["name"]: d["texts"] for d in meta["datasets"]}
        check(held == {"t_perplexity": [f"text{i}" for i in range(6)], "t_fidelity": [f"text{i}" for i in range(6)]},
              f"texts per dataset {held} (text6 has 60 words, fewer than either reads)")
        for d in ("t_perplexity", "t_fidelity"):
            records = [json.loads(line) for line in open(os.path.join(lb, "data", d + ".jsonl"), encoding="utf-8")]
            check([r["_id"] for r in records] == held[d], f"{d}: records {[r['_id'] for r in records]}")
            check(all(r["context"] == open(files[i], encoding="utf-8").read() for i, r in enumerate(records)),
                  f"{d}: a record's context is not its text")

        # 2. The spec on both datasets.
        path = os.path.join(tmp, "spec.json")
        write_json(path, spec(lb))
        out = os.path.join(tmp, "run")
        must("experiment", "run", path, "--model", model, "--out", out)
        db = os.path.join(out, "results.sqlite")
        preds = rows(db, "SELECT r.dataset, r.policy_json, r.budget, r.profile_family, p.question_id, p.prediction, "
                         "p.score, p.official_score FROM predictions p JOIN states s ON p.state_id = s.id "
                         "JOIN runs r ON s.run_id = r.id WHERE p.split = 'test'")
        test_texts = 6 - 2
        methods = 1 + len(DECODING) + len(PREFILL)
        # The full cache has one budget; every other method two.
        want = 2 * test_texts * (1 + (methods - 1) * len(BUDGETS))
        check(len(preds) == want, f"{len(preds)} test predictions, expected {want}")
        check(all(p[6] == p[7] for p in preds), "a text dataset's raw and official scores differ")

        by = {}
        for dataset, policy_json, budget, family, qid, prediction, score, _ in preds:
            by[(dataset, json.dumps(json.loads(policy_json), sort_keys=True), budget, qid)] = (prediction, score)
        full_runs = [p for p in preds if p[2] > 1 << 20]  # the full cache's budget: above every prompt
        check(len(full_runs) == 2 * test_texts and all(p[6] == 1.0 for p in full_runs),
              "the full cache does not score 1 on every text")

        number = r"([0-9.]+)"
        ppl_texts = sorted({p[4] for p in preds if p[0] == "t_perplexity"})
        fid_texts = sorted({p[4] for p in preds if p[0] == "t_fidelity"})
        compared = 0
        for budget in BUDGETS:
            named = {**DECODING, **PREFILL}
            pfiles = [policy_file(tmp, n, p, budget) for n, p in named.items()]
            recorded = {n: json.loads(open(f).read()) for n, f in zip(named, pfiles)}
            for qid in ppl_texts:
                got = json.loads(must("perplexity", "--model", model, "--text", os.path.join(lb, qid + ".txt"),
                                      "--max-tokens", PPL[0] + PPL[1], "--full-cache", "--json",
                                      *[a for f in pfiles for a in ("--policy", f)]))
                full = got["results"][-1]["perplexity"]
                for (n, _), row in zip(named.items(), got["results"]):
                    found = recorded_answer(by, "t_perplexity", budget, qid, n, recorded[n])
                    if found is None:
                        continue
                    prediction, score = found
                    want_score = full / row["perplexity"]
                    check(math.isclose(score, want_score, rel_tol=1e-5),
                          f"perplexity {n} B={budget} {qid}: score {score}, perplexity's {want_score}")
                    m = re.match(rf"perplexity {number}, full cache {number}, over {PPL[1]} tokens", prediction)
                    if n in PREFILL:
                        check(score == 1.0 and "the full cache" in prediction,
                              f"{n} B={budget} {qid}: a budget over the 1-token prompt is the full cache: "
                              f"{score} {prediction!r}")
                        check(math.isclose(row["perplexity"], full, rel_tol=1e-6),
                              f"{n} B={budget} {qid}: perplexity's run compressed ({row['perplexity']} vs {full})")
                    elif check(m is not None, f"{n} B={budget} {qid}: prediction {prediction!r}"):
                        check(math.isclose(float(m.group(1)), row["perplexity"], rel_tol=1e-4) and
                              math.isclose(float(m.group(2)), full, rel_tol=1e-4),
                              f"{n} B={budget} {qid}: {prediction!r}, perplexity's {row['perplexity']} / {full}")
                    compared += 1
            for qid in fid_texts:
                got = json.loads(must("fidelity", "--model", model, "--text", os.path.join(lb, qid + ".txt"),
                                      "--prompt-tokens", FID[0], "--new-tokens", FID[1], "--json",
                                      *[a for f in pfiles for a in ("--policy", f)]))
                for (n, _), row in zip(named.items(), got["policies"]):
                    found = recorded_answer(by, "t_fidelity", budget, qid, n, recorded[n])
                    if found is None:
                        continue
                    prediction, score = found
                    check(score == row["top1"], f"fidelity {n} B={budget} {qid}: score {score}, fidelity's {row['top1']}")
                    m = re.match(rf"top-1 agreement {number}, mean KL {number}, over {FID[1]} steps", prediction)
                    if check(m is not None, f"{n} B={budget} {qid}: prediction {prediction!r}"):
                        check(math.isclose(float(m.group(2)), row["mean_kl"], rel_tol=1e-3, abs_tol=1e-6),
                              f"{n} B={budget} {qid}: {prediction!r}, fidelity's mean KL {row['mean_kl']}")
                    compared += 1
        check(compared == len(BUDGETS) * (len(ppl_texts) + len(fid_texts)) * (len(DECODING) + len(PREFILL)),
              f"{compared} scores compared with perplexity and fidelity")
        # The prefill-time policy compresses the fidelity prompt (32 tokens) to its budget.
        check(any(p[2] < 1 << 20 and "decoding" not in json.loads(p[1]) and p[0] == "t_fidelity" and p[6] < 1
                  for p in preds), "no prefill-time policy lost anything on the fidelity set")

        # 4. Report and compare.
        report = os.path.join(tmp, "report")
        must("report", path, "--db", db, "--out", report, "--longbench", lb)
        table = open(os.path.join(report, "texts.md"), encoding="utf-8").read()
        check("Text datasets, one text a question" in table and "t_perplexity: 100 x the full cache's perplexity" in table,
              f"the table's note on text datasets is missing:\n{table}")
        check(re.search(r"\| t_perplexity \| (\*\*)?100\.00 \[100\.00, 100\.00\]", table) is not None,
              f"the full cache is not 100 on t_perplexity:\n{table}")
        # show --predictions lists each test text's numbers behind its score.
        run_id = rows(db, "SELECT id FROM runs WHERE dataset = 't_perplexity' AND run_key LIKE ?",
                      f"%/{slug('StreamingLLM')}/B{BUDGETS[0]}")
        if check(len(run_id) == 1, f"StreamingLLM B={BUDGETS[0]} on t_perplexity: runs {run_id}"):
            shown = must("show", "--db", db, "--run", run_id[0][0], "--predictions")
            listed = re.findall(r"^(text\d) +([0-9.]+)  perplexity ([0-9.]+), full cache ([0-9.]+)", shown, re.M)
            check("test predictions of the best state (4)" in shown and len(listed) == test_texts and
                  all(math.isclose(float(s_), float(f) / float(p_), rel_tol=1e-3) for _, s_, p_, f in listed),
                  f"show --predictions:\n{shown[-800:]}")
        c = json.loads(must("compare", "--db", db, "--a", slug("StreamingLLM"), "--b", slug("Window only"),
                            "--budget", BUDGETS[0], "--json"))
        check(c["n"] == 2 * test_texts and [d["n"] for d in c["datasets"]] == [test_texts] * 2,
              f"compare paired {c['n']} texts ({[d['n'] for d in c['datasets']]}), expected {test_texts} a dataset")

        # 5. Bad input.
        refused([files[0], "--perplexity", "5"], ["--perplexity", "PROMPT,FED"], os.path.join(tmp, "r1"))
        refused([files[0], "--fidelity", "0,4"], ["--fidelity", ">= 1"], os.path.join(tmp, "r2"))
        refused([files[6], "--perplexity", "1,100"], ["--perplexity", "101 words"], os.path.join(tmp, "r3"))
        refused([files[0], "--name", "a b"], ["--name", "a b"], os.path.join(tmp, "r4"))
        long_cfg = os.path.join(lb, "config", "dataset2maxlen.json")
        write_json(long_cfg, {"t_perplexity": 4000, "t_fidelity": FID[1]})
        r = kvsearch("run", "--model", model, "--longbench", lb, "--dataset", "t_perplexity",
                     "--profile", "baseline", "--budget", 16, "--db", os.path.join(tmp, "short.sqlite"))
        line, problems = error_output(r, mentions=["t_perplexity", "tokens", "4001"])
        check(not problems, f"a text shorter than the dataset reads: {problems}: {line!r}")
    finish(passed="text datasets: declared by data text, every recorded score equal to perplexity's and "
                  "fidelity's on the same text, report and compare, refusals")


if __name__ == "__main__":
    main()
