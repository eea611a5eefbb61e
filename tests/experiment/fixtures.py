"""Fixtures of the experiment tests: a tiny random checkpoint with the real Mistral tokenizer and a
LongBench-format directory for the pipeline spec's datasets, whose gold answers are the full-cache
predictions (so that evicting policies score between 0 and 1 and differ), and helpers to read
results databases.

Env: KVSEARCH_BIN, KVS_FIXTURES_DIR, KVS_SOURCE_DIR.
"""
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from kvs_testing import (longbench_dir, must, predictions_as_gold, read_json, rows, write_json,  # noqa: E402
                         write_made_up_dataset)

FIXTURES = os.environ["KVS_FIXTURES_DIR"]
SOURCE = os.environ["KVS_SOURCE_DIR"]
PIPELINE_SPEC = os.path.join(SOURCE, "tests", "experiment", "pipeline.json")


def pipeline_spec():
    return read_json(PIPELINE_SPEC)


def write_dataset(root, dataset, answers, seed):
    records = 100 + pipeline_spec()["test_limit"]  # 100 dev (the split's fixed dev size), then the test questions
    write_made_up_dataset(root, dataset, records, answers, random.Random(seed), words=(90, 160),
                          qid=lambda i: f"{dataset}-{i}")


def declare_extra_datasets(lb, datasets):
    """The official config plus a template, a length and (config/dataset2metric.json) a QA-F1
    metric for every dataset of the spec that is not an official one (the pipeline's tasks)."""
    config = os.path.join(lb, "config")
    prompts = read_json(os.path.join(config, "dataset2prompt.json"))
    maxlen = read_json(os.path.join(config, "dataset2maxlen.json"))
    extra = [d for d in datasets if d not in prompts]
    if not extra:
        return
    for d in extra:
        prompts[d] = "{context}\n\nQuestion: {input}\nAnswer:"
        maxlen[d] = 16
    for name, value in (("dataset2prompt.json", prompts), ("dataset2maxlen.json", maxlen),
                        ("dataset2metric.json", {d: "qa_f1_score" for d in extra})):
        write_json(os.path.join(config, name), value)


def make_fixtures(tmp):
    """A tiny model and a calibrated LongBench directory for the pipeline spec: (model, longbench)."""
    model = os.path.join(tmp, "tiny")
    must("make-model", "--preset", "tiny", "--seed", 5, "--out", model, "--tokenizer",
         os.path.join(FIXTURES, "tokenizers", "mistral-7b-v0.1", "tokenizer.model"))
    lb = os.path.join(tmp, "longbench")
    longbench_dir(lb, FIXTURES)
    spec = pipeline_spec()
    declare_extra_datasets(lb, spec["datasets"])
    for k, dataset in enumerate(spec["datasets"]):
        write_dataset(lb, dataset, {}, seed=7 + k)
        # Calibration: the full-cache predictions (a budget above every prompt) become the gold.
        cal = os.path.join(tmp, f"cal-{dataset}.sqlite")
        must("run", "--model", model, "--longbench", lb, "--dataset", dataset, "--profile",
             "baseline", "--budget", 4096, "--limit-dev", spec["dev_limit"], "--max-length",
             spec["max_length"], "--db", cal, "--eval-test")
        gold = predictions_as_gold(cal)
        write_dataset(lb, dataset, gold, seed=7 + k)
    return model, lb


def results(db):
    """Everything that must not depend on how or where the jobs ran: runs, states, replays and
    predictions by content (no ids, times, hosts or paths)."""
    runs = rows(db, "SELECT run_key, coalesce(jobs.job_key, ''), dataset, budget, profile_family, "
                    "policy_json, runs.status FROM runs LEFT JOIN jobs ON jobs.id = runs.job_id "
                    "ORDER BY run_key")
    states = rows(db, "SELECT run_key, eval_order, latent_json, states.policy_json, dev_score, accepted, "
                      "best_so_far FROM states JOIN runs ON runs.id = states.run_id "
                      "ORDER BY run_key, eval_order")
    replays = rows(db, "SELECT run_key, eval_order, score, official_score FROM replays "
                       "JOIN states ON states.id = replays.state_id JOIN runs ON runs.id = states.run_id "
                       "ORDER BY run_key, eval_order")
    predictions = rows(db, "SELECT run_key, eval_order, split, question_index, prediction, score, "
                           "official_score FROM predictions JOIN states ON states.id = predictions.state_id "
                           "JOIN runs ON runs.id = states.run_id "
                           "ORDER BY run_key, eval_order, split, question_index")
    return {"runs": runs, "states": states, "replays": replays, "predictions": predictions}
