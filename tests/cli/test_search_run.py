#!/usr/bin/env python3
"""`kvsearch run`, `replay`, `runs`, `show` end to end on a tiny checkpoint (the Mistral
tokenizer from tests/fixtures) and a LongBench-format qasper file made here:

1. calibration: the full-cache predictions become the gold answers, so that evicting policies
   score between 0 and 1 and the search has real differences to follow;
2. a Segments search, uninterrupted;
3. the same search killed with SIGKILL after a few states, then rerun: it resumes, and its
   trajectory equals the uninterrupted one (no state twice, none lost);
4. a finished run is reported, not rerun; replay records one test score per accepted state;
5. two processes writing runs into one database at once both complete; a run another process
   holds is refused with its pid; read-only views leave no -wal/-shm files;
6. bad input: unknown dataset or profile, a newer schema, a corrupt file, another model for a
   recorded run: one "error:" line, exit status 1.

Env: KVSEARCH_BIN, KVS_FIXTURES_DIR. Exit status 0 = pass.
"""
import fcntl
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from kvs_testing import (BIN, check, error_output, finish, kvsearch, longbench_dir,  # noqa: E402
                         must, predictions_as_gold, rows, scratch_dir, write_made_up_dataset)

FIXTURES = os.environ["KVS_FIXTURES_DIR"]
DATASET = "qasper"
RECORDS = 104  # 100 dev (the split's fixed dev size) + 4 test
DEV = 5


def expect_error(what, *args):
    r = kvsearch(*args)
    line, problems = error_output(r, single=False, markers=("frame #", "terminate called"))
    check(not problems, f"{what}: expected an error line and exit 1, got {r.returncode}: {r.stderr[-500:]!r}")
    return line


def write_longbench(root, answers):
    longbench_dir(root, FIXTURES)
    write_made_up_dataset(root, DATASET, RECORDS, answers, random.Random(7), words=(260, 340),
                          qid=lambda i: f"q{i}")


def trajectory(db):
    return rows(db, "SELECT eval_order, latent_json, dev_score, accepted, best_so_far "
                    "FROM states ORDER BY eval_order")


def main():
    with scratch_dir("kvs-search-") as tmp:
        model = os.path.join(tmp, "tiny")
        must("make-model", "--preset", "tiny", "--seed", 5, "--out", model, "--tokenizer",
             os.path.join(FIXTURES, "tokenizers", "mistral-7b-v0.1", "tokenizer.model"))
        lb = os.path.join(tmp, "longbench")
        write_longbench(lb, {})
        common = ["--model", model, "--longbench", lb, "--dataset", DATASET, "--limit-dev", DEV]

        # 1. Calibration: full-cache predictions (the budget exceeds every prompt) become the gold.
        cal = os.path.join(tmp, "cal.sqlite")
        must("run", *common, "--profile", "baseline", "--budget", 4096, "--db", cal, "--eval-test")
        gold = predictions_as_gold(cal)
        check(len(gold) == DEV + RECORDS - 100, f"calibration predicted {len(gold)} questions")
        write_longbench(lb, gold)

        search = [*common, "--profile", "segments", "--segments", 2, "--budget", 16, "--evals", 10,
                  "--max-length", 600]

        # 2. Uninterrupted.
        a = os.path.join(tmp, "a.sqlite")
        must("run", *search, "--db", a)
        ref = trajectory(a)
        check(len(ref) == 10, f"uninterrupted run recorded {len(ref)} states, expected 10")
        scores = {r[2] for r in ref}
        check(len(scores) > 1, f"every state scored the same ({scores}): the test cannot tell them apart")

        # 3. Killed after a few states (one state per batch so it is mid-run), then resumed.
        b = os.path.join(tmp, "b.sqlite")
        proc = subprocess.Popen([BIN, "run", *map(str, search), "--db", b, "--speculation", "1"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        killed_at = None
        while proc.poll() is None:
            try:
                n = rows(b, "SELECT count(*) FROM states")[0][0]
            except sqlite3.Error:
                n = 0
            if n >= 3:
                proc.send_signal(signal.SIGKILL)
                killed_at = n
                break
            time.sleep(0.02)
        proc.wait()
        check(killed_at is not None and killed_at < 10,
              f"the run ended before it could be killed (states at kill: {killed_at})")
        resumed = kvsearch("run", *search, "--db", b)
        check(resumed.returncode == 0, f"resume failed: {resumed.stderr[-1000:]}")
        check("resuming run" in resumed.stderr, "the rerun did not say it resumed")
        check(trajectory(b) == ref, "resumed trajectory differs from the uninterrupted one:\n"
              f"{trajectory(b)}\nvs\n{ref}")
        per_state = rows(b, "SELECT count(*) FROM predictions GROUP BY state_id")
        check(all(c == DEV for (c,) in per_state) and len(per_state) == 10,
              f"predictions per state after resume: {per_state}")

        # 4. A finished run is reported, not rerun; replay of the accepted trajectory.
        again = kvsearch("run", *search, "--db", a)
        check(again.returncode == 0 and "already finished" in again.stderr,
              f"finished run not reported: {again.stderr[-500:]}")
        check(trajectory(a) == ref, "rerunning a finished run changed its states")
        table = must("replay", "--db", a)
        accepted = rows(a, "SELECT count(*) FROM states WHERE accepted = 1")[0][0]
        replays = rows(a, "SELECT count(*) FROM replays")[0][0]
        check(replays == accepted, f"{replays} replays for {accepted} accepted states")
        check("test" in table.lower() and str(DATASET) in must("runs", "--db", a),
              "replay/runs output lacks the trajectory or the run")
        run_id = rows(a, "SELECT id FROM runs")[0][0]
        shown = must("show", "--db", a, "--run", run_id)
        check("lambda" in shown, "show does not print the profile per layer")
        left = [a + suffix for suffix in ("-wal", "-shm") if os.path.exists(a + suffix)]
        check(not left, f"runs/show (read-only) left {left} beside the database")

        # 4b. A run another process holds: the second process names it and its pid, exits 1 and
        # records nothing; once the holder is gone the run proceeds.
        held = os.path.join(tmp, "held.sqlite")
        with open(held + ".run-1.lock", "w") as lock:
            lock.write(f"{os.getpid()}\n")
            lock.flush()
            fcntl.flock(lock, fcntl.LOCK_EX)
            line = expect_error("run held by another process", "run", *common, "--profile", "global",
                                "--budget", "16", "--db", held)
            check(f"another process (pid {os.getpid()})" in line and "run 1" in line,
                  f"held run: {line!r}")
            check(rows(held, "SELECT count(*) FROM states")[0][0] == 0, "a held run recorded states")
        must("run", *common, "--profile", "global", "--budget", "16", "--db", held)
        check(rows(held, "SELECT count(*) FROM states")[0][0] == 1, "the released run did not proceed")
        check(not os.path.exists(held + ".run-1.lock"), "the run's lock file is left behind")

        # 5. Two processes, one database.
        c = os.path.join(tmp, "c.sqlite")
        procs = [subprocess.Popen([BIN, "run", *map(str, common), "--profile", p, "--budget", "16",
                                   "--db", c], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                 for p in ("global", "pyramid")]
        for p in procs:
            _, err = p.communicate()
            check(p.returncode == 0, f"concurrent run failed: {err[-800:]}")
        done = rows(c, "SELECT profile_family, finished_at IS NOT NULL FROM runs ORDER BY profile_family")
        check(done == [("global", 1), ("pyramid", 1)], f"concurrent runs: {done}")
        n_pred = rows(c, "SELECT count(*) FROM predictions")[0][0]
        check(n_pred == 2 * DEV, f"concurrent runs recorded {n_pred} predictions, expected {2 * DEV}")

        # 5b. --schedule: a policy family on the other budget schedule is a run of its own, and
        # SnapKV's scores on PyramidKV's budgets are PyramidKV.
        for profile, schedule in (("global", "uniform"), ("baseline", "pyramid")):
            must("run", *common, "--profile", profile, "--schedule", schedule, "--budget", 16, "--db", c)
        schedules = rows(c, "SELECT profile_family, json_extract(policy_json, '$.schedule') FROM runs "
                            "ORDER BY profile_family, 2")
        check(schedules == [("baseline", "pyramid"), ("global", "pyramid"), ("global", "uniform"),
                            ("pyramid", "pyramid")], f"runs and their schedules: {schedules}")

        def predictions(profile, schedule):
            return rows(c, "SELECT p.question_index, p.prediction FROM predictions p JOIN states s ON "
                           "s.id = p.state_id JOIN runs r ON r.id = s.run_id WHERE r.profile_family = ? "
                           "AND json_extract(r.policy_json, '$.schedule') = ? ORDER BY 1",
                        profile, schedule)
        check(predictions("baseline", "pyramid") == predictions("pyramid", "pyramid"),
              "SnapKV on pyramid budgets predicts differently from PyramidKV")
        # The error names the option, the bad value and the allowed ones, and writes nothing.
        line = expect_error("unknown schedule", "run", *common, "--profile", "global", "--schedule", "steps",
                            "--db", os.path.join(tmp, "x.sqlite"))
        check(all(w in line for w in ("--schedule", "steps", "uniform", "pyramid")) and
              not os.path.exists(os.path.join(tmp, "x.sqlite")), f"unknown schedule: {line!r}")

        # 6. Bad input.
        expect_error("unknown dataset", "run", "--model", model, "--longbench", lb, "--dataset",
                     "no_such_set", "--profile", "global", "--db", os.path.join(tmp, "x.sqlite"))
        expect_error("unknown profile", "run", *common, "--profile", "zigzag",
                     "--db", os.path.join(tmp, "x.sqlite"))
        newer = os.path.join(tmp, "newer.sqlite")
        shutil.copy(a, newer)
        con = sqlite3.connect(newer)
        con.execute("PRAGMA user_version = 999")
        con.commit()
        con.close()
        line = expect_error("newer schema", "run", *search, "--db", newer)
        check("version" in line, f"newer-schema error does not mention the version: {line}")
        corrupt = os.path.join(tmp, "corrupt.sqlite")
        with open(corrupt, "wb") as f:
            f.write(b"SQLite format 3\x00" + os.urandom(4096))
        expect_error("corrupt database", "run", *search, "--db", corrupt)
        other = os.path.join(tmp, "other-model")
        shutil.copytree(model, other)
        line = expect_error("model mismatch", "run", *[other if x == model else x for x in search],
                            "--db", b)
        check("model" in line, f"mismatch error does not name the model: {line}")
    finish(passed="search run/resume/replay: all checks passed")


if __name__ == "__main__":
    main()
