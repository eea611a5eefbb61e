#!/usr/bin/env python3
"""Decode-time policies in experiments, end to end, on the experiment tests' tiny checkpoint and
calibrated LongBench files (tests/experiment/fixtures.py: the gold answers are the full cache's):

1. a spec whose methods are decode-time policies (the plan says which) (a "decoding" schedule, the budgets setting its
   target) runs beside the full cache and a prefill-time policy; every run is recorded with its
   test replay, and its policy with decoding.target = the run's budget and no budget of its own;
   a template with a budget of its own (kvpress's PrefillDecodingPress) keeps it, the budgets
   setting its target, and its answers equal `generate`'s;
2. a decode-time policy whose target holds the whole prompt and answer never compresses: its
   answers equal the full cache's, question by question (the evaluator's decode-time route keeps
   the dataset's stop ids and minimum length);
3. every recorded answer of a compressing decode-time policy equals `kvsearch generate --policy`
   (the decode-time path checked against kvpress in decode_vs_kvpress) on the same data record,
   and some of them differ from the full cache's (the cache was compressed);
4. `kvsearch compare` pairs a decode-time policy with the full cache question by question, and
   `kvsearch report` writes its table with the decode-time methods as rows;
5. each decode-time run records where its cache went on test: the entries held after the last
   step, the largest cache at any step and its schedule's bound (NULL for a prefill-time policy),
   and the report's cache table shows them;
6. bad specs (a target the budgets set, a budget of 0, an interval of 0, a method that cannot
   score at decode time): one line naming the field, exit 1, nothing written.

Env: KVSEARCH_BIN, KVS_FIXTURES_DIR, KVS_SOURCE_DIR. Exit status 0 = pass.
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "experiment"))
sys.path.insert(0, os.path.join(HERE, "..", "common"))
from fixtures import make_fixtures  # noqa: E402
from kvs_testing import (check, error_output, finish, kvsearch, must, read_text, rows,  # noqa: E402
                         scratch_dir, write_json)

DATASET = "synthetic_retrieval"
BUDGETS = [16, 32]
NEVER = 4000  # a target above every prompt + answer: no compression
DECODING = {
    "StreamingLLM (decoding)": {"method": "streaming_llm", "n_sink": 4,
                                "decoding": {"interval": 1, "buffer": 1}},
    "TOVA (decoding)": {"method": "tova", "decoding": {"interval": 1, "buffer": 1}},
    "Knorm (decoding)": {"method": "knorm", "decoding": {"interval": 4, "buffer": 4}},
}

# A prefill budget of its own and the budgets' target (kvpress's PrefillDecodingPress).
PREFILL_DECODING = "Knorm (prefill 16, decoding)"
PREFILL_DECODING_POLICY = {"method": "knorm", "budget": 16, "decoding": {"interval": 4, "buffer": 4}}


def spec():
    methods = [{"name": "Full cache", "profile": "full"},
               {"name": "Knorm", "policy": {"method": "knorm"}}]
    methods += [{"name": n, "policy": p} for n, p in DECODING.items()]
    methods.append({"name": PREFILL_DECODING, "policy": PREFILL_DECODING_POLICY})
    methods.append({"name": "Never compresses", "budgets": [NEVER],
                    "policy": {"method": "knorm", "decoding": {"interval": 4, "buffer": 4}}})
    return {
        "name": "decoding",
        "description": "decode-time policies beside the full cache and a prefill-time one",
        "datasets": [DATASET], "budgets": BUDGETS, "split_seed": 42, "dev_limit": 2,
        "test_limit": 8, "max_length": 0, "methods": methods,
        "tables": [{"name": "budgets", "kind": "budgets", "title": "Macro average per budget",
                    "methods": ["Full cache", "Knorm"] + list(DECODING), "baseline": "Knorm"}],
    }


def slug(name):
    return "-".join("".join(c if c.isalnum() else " " for c in name.lower()).split())


def test_predictions(db, run_key):
    """question_index -> (question_id, prediction) of the run's replay on the test split."""
    found = rows(db, "SELECT question_index, question_id, prediction FROM predictions "
                     "JOIN states ON states.id = predictions.state_id JOIN runs ON runs.id = states.run_id "
                     "WHERE runs.run_key = ? AND predictions.split = 'test'", run_key)
    return {i: (qid, text) for i, qid, text in found}


def bad_spec(tmp, model, lb, what, policy, mentions):
    bad = spec()
    bad["methods"] = [{"name": "X", "policy": policy}]
    path = os.path.join(tmp, f"bad-{slug(what)}.json")
    write_json(path, bad)
    out = os.path.join(tmp, f"out-{slug(what)}")
    r = kvsearch("experiment", "run", path, "--model", model, "--longbench", lb, "--out", out)
    line, problems = error_output(r)
    check(not problems, f"{what}: {problems}")
    check(mentions in line, f"{what}: the error does not name {mentions!r}: {line!r}")
    check(not os.path.exists(out), f"{what}: something was written")


def main():
    with scratch_dir("kvs-decoding-experiment-") as tmp:
        model, lb = make_fixtures(tmp)
        path = os.path.join(tmp, "decoding.json")
        write_json(path, spec())
        out = os.path.join(tmp, "out")
        plan = must("experiment", "plan", path, "--longbench", lb)
        decode_time = (len(DECODING) + 1) * len(BUDGETS) + 1
        check(f"({decode_time} decode-time ones on a shared decode" in plan and
              f"Knorm (decoding) at B={BUDGETS[0]} (decode-time: the target)" in plan and
              f"{PREFILL_DECODING} at B={BUDGETS[1]} (decode-time: the target; the prompt first "
              f"to 16)" in plan,
              f"the plan does not say which policies are decode-time:\n{plan}")
        summary = must("experiment", "run", path, "--model", model, "--longbench", lb, "--out", out,
                       "--job-threads", 1)
        db = os.path.join(out, "results.sqlite")
        # One prefill of each of the 2 dev and 8 test questions serves the prefill-time policies and
        # the decode-time ones' shared decode (the prefills counted are the ones run).
        ((prefills,),) = rows(db, "SELECT prefills FROM jobs")
        check(prefills == 2 + 8 and f"evaluate jobs: {prefills} prefills" in summary,
              f"the job recorded {prefills} prefills, not 1 per question:\n{summary}")

        # 1. Every run recorded, finished, with its replay; decode-time policies at their targets.
        runs = {key: (budget, json.loads(policy), status) for key, budget, policy, status in
                rows(db, "SELECT run_key, budget, policy_json, status FROM runs")}
        for name, policy in DECODING.items():
            for b in BUDGETS:
                key = f"decoding/{DATASET}/{slug(name)}/B{b}"
                check(key in runs, f"no run {key}: {sorted(runs)}")
                budget, recorded, status = runs[key]
                check(status == "finished", f"{key}: {status}")
                check(recorded.get("decoding", {}).get("target") == b and "budget" not in recorded,
                      f"{key}: recorded policy {recorded} is not decode-only at target {b}")
                check(len(test_predictions(db, key)) == 8, f"{key}: not 8 test predictions")
        for b in BUDGETS:  # the template's own budget kept, the budgets its target
            key = f"decoding/{DATASET}/{slug(PREFILL_DECODING)}/B{b}"
            want = dict(PREFILL_DECODING_POLICY, decoding=dict(PREFILL_DECODING_POLICY["decoding"], target=b))
            check(key in runs and runs[key][1] == want and len(test_predictions(db, key)) == 8,
                  f"{key}: recorded {runs.get(key)}, want the policy {want} with 8 test predictions")
        full = test_predictions(db, f"decoding/{DATASET}/full-cache/B{1 << 24}")
        check(len(full) == 8, f"the full cache has {len(full)} test predictions")

        # 2. A target above the prompt and answer: the full cache's answers exactly.
        never = test_predictions(db, f"decoding/{DATASET}/never-compresses/B{NEVER}")
        check(never == full, f"a decode-time policy that never compresses answers otherwise than "
                             f"the full cache: {never} vs {full}")

        # 3. Compressing policies: generate's answers on the same records; some differ from full.
        records = [json.loads(line)["_id"] for line in
                   read_text(os.path.join(lb, "data", DATASET + ".jsonl")).splitlines()]
        maxlen = json.loads(read_text(os.path.join(lb, "config", "dataset2maxlen.json")))[DATASET]
        differs = 0
        for name in list(DECODING) + [PREFILL_DECODING]:
            key = f"decoding/{DATASET}/{slug(name)}/B{BUDGETS[-1 if name == PREFILL_DECODING else 0]}"
            policy_file = os.path.join(tmp, slug(name) + ".json")
            write_json(policy_file, runs[key][1])
            answers = test_predictions(db, key)
            for index in sorted(answers)[:3]:
                qid, prediction = answers[index]
                kept = os.path.join(tmp, "kept.json")
                g = json.loads(must("generate", "--model", model, "--longbench", lb, "--dataset",
                                    DATASET, "--record", records.index(qid), "--policy",
                                    policy_file, "--max-new-tokens", maxlen, "--dump-kept", kept,
                                    "--json"))
                check(g["text"] == prediction,
                      f"{key} question {qid}: recorded {prediction!r}, generate {g['text']!r}")
                # Decode-only: the whole prompt until the first compression, then at most the
                # target and the steps to the next one; with a prefill budget, the prompt
                # compressed to it first.
                held = max(max(layer) for layer in json.loads(read_text(kept))["counts"])
                interval = runs[key][1]["decoding"]["interval"]
                target = runs[key][1]["decoding"]["target"]
                first = runs[key][1].get("budget", len(g["prompt_ids"]))
                bound = target + interval
                largest = g["cache"]["largest"]
                check((largest == first + interval if "budget" not in runs[key][1]
                       else first < largest <= bound) and held <= bound,
                      f"{key} question {qid}: the cache held {g['cache']['largest']} entries at "
                      f"most and {held} at the end (prompt {len(g['prompt_ids'])}, bound {bound})")
            differs += sum(answers[i][1] != full[i][1] for i in answers)
        check(differs > 0, "no decode-time policy answered any question otherwise than the full cache")

        # 4. compare and report take decode-time runs like any other.
        c = json.loads(must("compare", "--db", db, "--a", slug("StreamingLLM (decoding)"), "--b",
                            "full-cache", "--budget", BUDGETS[0], "--json"))
        check(c["n"] == 8, f"compare paired {c['n']} questions, not 8: {c}")
        report = os.path.join(tmp, "report")
        must("report", path, "--db", db, "--out", report, "--longbench", lb)
        table = read_text(os.path.join(report, "budgets.md"))
        for name in DECODING:
            check(name in table, f"the report's table lacks {name}:\n{table}")

        # 5. Where the cache went while decoding: each decode-time run's test layout records the
        # entries held after the last step (at most its bound), the largest cache (the prompt and
        # an interval: the mean over the questions) and its bound; the report lists them.
        for name, policy in DECODING.items():
            for b in BUDGETS:
                key = f"decoding/{DATASET}/{slug(name)}/B{b}"
                found = rows(db, "SELECT c.largest_entries, c.bound_entries, c.counts_json, c.held_bytes, "
                                 "c.kept_entries FROM cache_layouts c JOIN replays r ON r.state_id = c.state_id "
                                 "JOIN states s ON s.id = c.state_id JOIN runs ON runs.id = s.run_id "
                                 "WHERE runs.run_key = ? AND c.split = 'test'", key)
                if not check(len(found) == 1, f"{key}: {len(found)} test cache layouts"):
                    continue
                largest, bound, counts, held_bytes, kept = found[0]
                ends = [x for layer in json.loads(counts) for x in layer]
                check(largest is not None and 0 < largest <= bound and max(ends) <= bound
                      and held_bytes > 0 and abs(kept - sum(ends)) < 1e-6,
                      f"{key}: largest {largest}, bound {bound}, held at the end {max(ends)}, "
                      f"{held_bytes} bytes")
        fixed = rows(db, "SELECT c.largest_entries FROM cache_layouts c JOIN states s ON s.id = c.state_id "
                         "JOIN runs ON runs.id = s.run_id WHERE runs.run_key = ?",
                     f"decoding/{DATASET}/knorm/B{BUDGETS[0]}")
        check(fixed and all(r[0] is None for r in fixed), f"a prefill-time policy records a largest cache: {fixed}")
        cache_md = read_text(os.path.join(report, "cache.md"))
        check("largest / bound (decoding)" in cache_md and "Knorm (decoding)" in cache_md,
              f"the report's cache table does not show the decode-time caches:\n{cache_md}")

        # 6. Bad specs.
        bad_spec(tmp, model, lb, "target", {"method": "knorm", "decoding": {"target": 64}}, "decoding.target")
        bad_spec(tmp, model, lb, "budget", {"method": "knorm", "budget": 0, "decoding": {}}, "budget")
        bad_spec(tmp, model, lb, "interval", {"method": "knorm", "decoding": {"interval": 0}}, "interval")
        bad_spec(tmp, model, lb, "refused", {"method": "snapkv", "granularity": "head",
                                  "decoding": {"interval": 8, "buffer": 8}}, "decoding")
    finish()


if __name__ == "__main__":
    main()
