#!/usr/bin/env python3
"""Observation protocols through `kvsearch generate --dataset`: on a RULER record of SmolLM2-135M,
the prompt's question span is the record's question in the prompt ids (decoded, tight at both
ends); one policy runs under prompt_end, question and context, and the policy JSON printed with
the answer names the protocol (left out at the default); a question-anchored or context policy on
prompt text (no span) and an unknown protocol are refused with one line naming policy.observe.

Env: KVSEARCH_BIN. Exit status 0 = pass.
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from kvs_testing import check, error_output, finish, kvsearch, must, scratch_dir, write_json  # noqa: E402


def decode(ids):
    return must("tokenize", "--model", "smollm2-135m", "--decode", ",".join(map(str, ids)))


def main():
    with scratch_dir("kvs-observe-") as tmp:
        must("data", "ruler", "--model", "smollm2-135m", "--out", tmp, "--lengths", "1024", "--count", "1",
             "--seed", "42", "--tasks", "niah_single_1")
        with open(os.path.join(tmp, "data", "niah_single_1_1024.jsonl"), encoding="utf-8") as f:
            record = json.loads(f.readline())
        question = record["input"]  # as the template places it, whitespace included
        base = ["generate", "--model", "smollm2-135m", "--longbench", tmp, "--dataset", "niah_single_1_1024",
                "--record", "0", "--max-new-tokens", "8", "--json"]
        answers = {}
        for observe in ("prompt_end", "question", "context"):
            policy = {"method": "snapkv", "budget": 64, "observe": observe}
            path = os.path.join(tmp, f"{observe}.json")
            write_json(path, policy)
            out = json.loads(must(*base, "--policy", path))
            answers[observe] = out
            if observe == "prompt_end":
                check("observe" not in out["policy"], f"the default protocol is written: {out['policy']}")
            else:
                check(out["policy"].get("observe") == observe, f"the policy JSON lost the protocol: {out['policy']}")
        ids, span = answers["prompt_end"]["prompt_ids"], answers["prompt_end"]["question_span"]
        check(span is not None and 0 < span[0] < span[1] < len(ids), f"question span {span} of {len(ids)} ids")
        if span:
            b, e = span
            check(question in decode(ids[b:e]), f"ids[{b}:{e}] do not hold the question {question!r}")
            check(question not in decode(ids[b + 1:e]), "the span starts after the question's first token")
            check(question not in decode(ids[b:e - 1]), "the span ends after the question's last token")
            check(record["answer_prefix"].strip() not in decode(ids[b:e]), "the span runs into the answer prefix")
        for observe, out in answers.items():
            check(out["prompt_ids"] == ids, f"{observe}: the prompt ids differ between protocols")
            check(len(out["generated_ids"]) > 0, f"{observe}: nothing generated")
        print("[measured] answers: " + "; ".join(f"{o}: {a['text']!r}" for o, a in answers.items()))

        # Refusals: one line naming the field, exit 1.
        for observe in ("question", "context"):
            path = os.path.join(tmp, f"{observe}.json")
            r = kvsearch("generate", "--model", "smollm2-135m", "--prompt", "Where is the key?", "--policy", path)
            line, problems = error_output(r, mentions=("policy.observe", observe))
            check(not problems, f"{observe} on prompt text: {problems}: {line!r}")
        bad = os.path.join(tmp, "bad.json")
        write_json(bad, {"method": "snapkv", "budget": 64, "observe": "answer"})
        line, problems = error_output(kvsearch(*base, "--policy", bad), mentions=("policy.observe", "answer"))
        check(not problems, f"an unknown protocol: {problems}: {line!r}")
    finish(passed="each protocol runs on a RULER record, says so in its policy, and bad input is one line")


if __name__ == "__main__":
    main()
