#!/usr/bin/env python3
"""`kvsearch experiment plan/run`, `merge` and `report` end to end on the pipeline spec with a tiny
checkpoint and calibrated LongBench files made here (fixtures.py):

1. plan lists every job; bad specs fail with one "error:" line naming the file and field;
2. the pipeline spec runs locally (2 jobs at once): every job finished, every run of the plan in the
   merged database with its dev state and test replay, the transferred profile at the search's
   budget reproduces the search's best state, a rerun skips everything;
3. a 3 budgets x 3 policies sweep on one dataset runs on one prefill per question (the job's
   recorded prefills equal its questions; the summary says so), not nine; an ablation search
   with a term switched off moves only the other term's coefficients;
4. interrupted (SIGKILL to the launcher and its jobs) after the first job finished, then rerun:
   finished jobs are skipped, and the merged results equal the uninterrupted run's;
5. `kvsearch merge` of the job databases adds nothing twice;
6. `kvsearch report` writes the tables (row best in bold, wins row, macro per budget) and figures.

Env: KVSEARCH_BIN, KVS_FIXTURES_DIR, KVS_SOURCE_DIR. Exit status 0 = pass.
"""
import os
import signal
import sqlite3
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from fixtures import PIPELINE_SPEC, pipeline_spec, make_fixtures, results  # noqa: E402
from kvs_testing import (BIN, check, error_output, finish, kvsearch, must, read_text, rows,  # noqa: E402
                         scratch_dir, write_json)


def expect_error(what, *args, mentions=()):
    r = kvsearch(*args)
    line, problems = error_output(r, status=None, single=False, markers=("frame #", "terminate called"))
    check(not problems, f"{what}: expected an error line and a non-zero exit, got {r.returncode}: {r.stderr[-500:]!r}")
    for m in mentions:
        check(m in line, f"{what}: the error does not mention {m!r}: {line!r}")


def write_spec(tmp, file_name, **changes):
    spec = pipeline_spec()
    spec.update(changes)
    path = os.path.join(tmp, file_name + ".json")
    write_json(path, spec)
    return path


def job_rows(out):
    found = {}
    jobs = os.path.join(out, "jobs")
    for name in sorted(os.listdir(jobs)):
        if name.endswith(".sqlite"):
            for key, status, prefills in rows(os.path.join(jobs, name),
                                              "SELECT job_key, status, prefills FROM jobs"):
                found.setdefault(key, (status, prefills))
    return found


def main():
    with scratch_dir("kvs-experiment-") as tmp:
        model, lb = make_fixtures(tmp)
        spec = pipeline_spec()
        paths = ["--model", model, "--longbench", lb, "--job-threads", 1]
        (search,) = [m for m in spec["methods"] if m.get("profile") == "segments"]
        (transfer,) = [m for m in spec["methods"] if m.get("transfer") == search["name"]]
        search_budget = f"B{search['budgets'][0]}"
        transfer_slug = "-".join("".join(c if c.isalnum() else " " for c in transfer["name"].lower()).split())

        # 1. plan and bad input.
        plan = must("experiment", "plan", PIPELINE_SPEC, "--longbench", lb)
        n_jobs = len(spec["datasets"]) * 2  # a search and an evaluate job per dataset
        for d in spec["datasets"]:
            check(f"pipeline/{d}/evaluate" in plan and f"pipeline/{d}/search/segments/{search_budget}" in plan,
                  f"plan lacks the jobs of {d}:\n{plan}")
        expect_error("unknown dataset", "experiment", "plan",
                     write_spec(tmp, "bad1", datasets=["no_such_set"]), mentions=("datasets",))
        expect_error("unknown method field", "experiment", "plan", "--longbench", lb,
                     write_spec(tmp, "bad2", methods=[{"name": "X", "profile": "global", "lamda1": 1}]),
                     mentions=("lamda1",))
        expect_error("transfer of a fixed policy", "experiment", "plan", "--longbench", lb,
                     write_spec(tmp, "bad3", methods=[{"name": "G", "profile": "global"},
                                                      {"name": "T", "transfer": "G"}], tables=[], figures=[]),
                     mentions=("not a search",))
        with open(os.path.join(tmp, "broken.json"), "w") as f:
            f.write("{\"name\": ")
        expect_error("broken JSON", "experiment", "plan", os.path.join(tmp, "broken.json"),
                     mentions=("broken.json",))

        # 2. The pipeline spec, locally, two jobs at once.
        out_a = os.path.join(tmp, "a")
        t0 = time.time()
        launched = kvsearch("experiment", "run", PIPELINE_SPEC, *paths, "--out", out_a, "--jobs", 2)
        check(launched.returncode == 0, f"the local run failed: {launched.stderr[-3000:]}")
        summary = launched.stdout
        print(f"pipeline spec, local launcher: {time.time() - t0:.1f} s")
        print(summary)
        check("question passes" in launched.stderr and f"progress: {n_jobs}/{n_jobs} jobs, 100% of the work" in launched.stderr
              and "ETA" in launched.stderr, f"the run shows no plan or progress with ETA:\n{launched.stderr[-2000:]}")
        jobs = job_rows(out_a)
        check(len(jobs) == n_jobs and all(s == "finished" for s, _ in jobs.values()),
              f"jobs after the local run: {jobs}")
        merged = os.path.join(out_a, "results.sqlite")
        ref = results(merged)
        n_fixed = sum(1 if m.get("profile") == "full" else len(m.get("budgets", spec["budgets"]))
                      for m in spec["methods"] if m.get("profile") != "segments")
        n_runs = len(spec["datasets"]) * (n_fixed + 1)
        check(len(ref["runs"]) == n_runs and all(r[6] == "finished" for r in ref["runs"]),
              f"{len(ref['runs'])} runs in the merged database, expected {n_runs}, all finished")
        unreplayed = rows(merged, "SELECT count(*) FROM states LEFT JOIN replays ON replays.state_id = states.id "
                                  "WHERE states.accepted = 1 AND replays.id IS NULL")[0][0]
        check(unreplayed == 0, f"{unreplayed} accepted states have no test replay")
        for d in spec["datasets"]:
            best = rows(merged, "SELECT s.policy_json, s.dev_score, r.official_score FROM states s "
                                "JOIN runs ON runs.id = s.run_id JOIN replays r ON r.state_id = s.id "
                                "WHERE run_key = ? AND accepted = 1 ORDER BY eval_order DESC LIMIT 1",
                        f"pipeline/{d}/segments/{search_budget}")
            moved = rows(merged, "SELECT s.policy_json, s.dev_score, r.official_score FROM states s "
                                 "JOIN runs ON runs.id = s.run_id JOIN replays r ON r.state_id = s.id "
                                 "WHERE run_key = ?", f"pipeline/{d}/{transfer_slug}/{search_budget}")
            check(len(best) == 1 and best == moved,
                  f"{d}: the transferred profile at {search_budget} differs from the search's best state: {best} vs {moved}")
        scores = {r[4] for r in ref["states"]}
        check(len(scores) > 1, f"every state scored the same ({scores}): the test cannot tell them apart")
        again = kvsearch("experiment", "run", PIPELINE_SPEC, *paths, "--out", out_a)
        check(again.returncode == 0 and again.stdout.count("skipped (finished before)") == n_jobs,
              f"rerun of a finished experiment did not skip every job:\n{again.stdout}{again.stderr[-800:]}")
        check(results(merged) == ref, "rerunning a finished experiment changed its results")

        # 3. A sweep of 3 budgets x 3 fixed policies on one dataset: one prefill per question.
        sweep = write_spec(tmp, "sweep", name="sweep", datasets=[spec["datasets"][0]],
                           methods=[{"name": n, "profile": p} for n, p in
                                    (("SnapKV", "baseline"), ("PyramidKV", "pyramid"), ("Global", "global"))],
                           tables=[], figures=[])
        out_s = os.path.join(tmp, "sweep")
        text = must("experiment", "run", sweep, *paths, "--out", out_s)
        questions = spec["dev_limit"] + spec["test_limit"]
        ((status, prefills),) = job_rows(out_s).values()
        check(status == "finished" and prefills == questions,
              f"3 x 3 sweep: {prefills} prefills for {questions} questions (expected one per question)")
        check(f"{questions} prefills" in text and f"would have been {9 * questions}" in text,
              f"the sweep's summary does not compare its prefills with one per policy:\n{text}")
        print(f"3 budgets x 3 policies sweep: {prefills} prefills for {questions} questions "
              f"(one per policy and question: {9 * questions})")

        # The sweep grown by a budget and a method: the recorded runs stay as they were and only
        # what was added is evaluated; a spec changed otherwise is refused.
        merged_s = os.path.join(out_s, "results.sqlite")
        states_sql = ("SELECT run_key, states.id, states.created_at, states.dev_score FROM states "
                      "JOIN runs ON runs.id = states.run_id ORDER BY run_key")
        recorded = rows(merged_s, states_sql)
        sweep_methods = [{"name": n, "profile": p} for n, p in
                         (("SnapKV", "baseline"), ("PyramidKV", "pyramid"), ("Global", "global"))]
        grown_budgets = spec["budgets"] + [spec["budgets"][-1] + 16]
        grown = write_spec(tmp, "sweep", name="sweep", datasets=[spec["datasets"][0]], budgets=grown_budgets,
                           methods=sweep_methods + [{"name": "KeyDiff", "policy": {"method": "keydiff"}}],
                           tables=[], figures=[])
        must("experiment", "run", grown, *paths, "--out", out_s)
        after = rows(merged_s, states_sql)
        check(set(recorded) <= set(after), "growing the sweep changed or dropped its recorded states")
        added = {r[0] for r in after} - {r[0] for r in recorded}
        check(len(added) == 3 + len(grown_budgets) and len(after) == len(recorded) + len(added),
              f"the grown sweep evaluated {sorted(added)}, expected the new budget's 3 runs and KeyDiff's "
              f"{len(grown_budgets)}")
        ((status, prefills),) = job_rows(out_s).values()
        check(status == "finished" and prefills == questions,
              f"the grown sweep's job: {status}, {prefills} prefills (expected {questions} more)")
        changed = write_spec(tmp, "sweep", name="sweep", datasets=[spec["datasets"][0]], budgets=grown_budgets,
                             methods=[dict(sweep_methods[0], schedule="pyramid")] + sweep_methods[1:],
                             tables=[], figures=[])
        expect_error("a sweep whose SnapKV changed", "experiment", "run", changed, *paths, "--out", out_s,
                     mentions=("different spec",))
        print(f"sweep grown by a budget and a method: {len(added)} runs added, {len(recorded)} recorded states kept")

        # An ablation search with the dispersion term off moves only the lambda2 coordinates.
        ablation = write_spec(tmp, "ablation", name="ablation", datasets=[spec["datasets"][0]], budgets=[64],
                              methods=[{"name": "mean & corr", "profile": "segments", "segments": 2, "evals": 4,
                                        "terms": {"mean": True, "dispersion": False, "corr": True}},
                                       {"name": "dispersion & corr", "profile": "global", "lambda1": 0.3,
                                        "lambda2": -0.15, "terms": {"mean": False, "dispersion": True,
                                                                    "corr": True}}],
                              tables=[], figures=[])
        out_ab = os.path.join(tmp, "ablation")
        must("experiment", "run", ablation, *paths, "--out", out_ab)
        moved = rows(os.path.join(out_ab, "results.sqlite"),
                     "SELECT changed_coordinate FROM states WHERE changed_coordinate IS NOT NULL")
        check(moved and all(c >= 2 for (c,) in moved),
              f"the mean & corr search moved switched-off lambda1 coordinates: {moved}")
        terms = rows(os.path.join(out_ab, "results.sqlite"), "SELECT DISTINCT json_extract(states.policy_json, "
                     "'$.terms.mean') FROM states JOIN runs ON runs.id = states.run_id "
                     "WHERE run_key LIKE '%dispersion-corr%'")
        check(terms == [(0,)], f"dispersion & corr ran with the mean term: {terms}")

        # 4. Interrupted after the first job finished, then rerun.
        out_b = os.path.join(tmp, "b")
        proc = subprocess.Popen([BIN, "experiment", "run", PIPELINE_SPEC, *map(str, paths), "--out", out_b,
                                 "--jobs", "1"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True)
        killed = False
        while proc.poll() is None:
            try:  # a job database may be half-created while we look
                done = [k for k, (s, _) in job_rows(out_b).items() if s == "finished"]
            except (OSError, sqlite3.Error):
                done = []
            if done:
                os.killpg(proc.pid, signal.SIGKILL)
                killed = True
                break
            time.sleep(0.05)
        proc.wait()
        check(killed, "the experiment ended before it could be interrupted")
        before = {k for k, (s, _) in job_rows(out_b).items() if s == "finished"}
        check(0 < len(before) < n_jobs, f"finished jobs at the interruption: {before}")
        resumed = kvsearch("experiment", "run", PIPELINE_SPEC, *paths, "--out", out_b)
        check(resumed.returncode == 0, f"rerun after the interruption failed: {resumed.stderr[-1500:]}")
        check(resumed.stdout.count("skipped (finished before)") == len(before),
              f"the rerun did not skip exactly the {len(before)} finished jobs:\n{resumed.stdout}")
        check(results(os.path.join(out_b, "results.sqlite")) == ref,
              "the interrupted and rerun experiment's results differ from the uninterrupted run's")

        # 5. kvsearch merge: the job databases again add nothing.
        sources = [os.path.join(out_a, "jobs", f) for f in sorted(os.listdir(os.path.join(out_a, "jobs")))
                   if f.endswith(".sqlite")]
        text = must("merge", merged, *sources)
        check("0 runs, 0 states" in text and "0 replays" in text, f"merging twice added rows: {text}")
        fresh = os.path.join(tmp, "fresh.sqlite")
        must("merge", fresh, *sources)
        check(results(fresh) == ref, "kvsearch merge of the job databases differs from the run's merge")
        expect_error("missing merge source", "merge", fresh, os.path.join(tmp, "nope.sqlite"))

        # 6. The report.
        report = os.path.join(tmp, "report")
        text = must("report", PIPELINE_SPEC, "--db", merged, "--out", report, "--longbench", lb)
        left = [merged + suffix for suffix in ("-wal", "-shm") if os.path.exists(merged + suffix)]
        check(not left, f"report (read-only) left {left} beside the database")
        for name in ("table1.md", "table1.csv", "table2.md", "table2.csv", "table3.md", "noise.md", "README.md"):
            check(os.path.isfile(os.path.join(report, name)), f"report lacks {name}")
        table1 = read_text(os.path.join(report, "table1.md"))
        check("**" in table1 and "Wins" in table1 and "Macro average" in table1,
              f"table 1 lacks the bold best, the wins or the macro row:\n{table1}")
        # Every split names the binary that computed it, this build's (merged along), as the runs do.
        for table in ("states", "replays"):
            binaries = rows(merged, f"SELECT DISTINCT {table}.git_commit FROM {table}")
            run_binaries = rows(merged, "SELECT DISTINCT git_commit FROM runs")
            check(binaries == run_binaries and None not in [b for (b,) in binaries],
                  f"{table} do not record their binary: {binaries} (runs: {run_binaries})")
        full = rows(merged, "SELECT DISTINCT budget, profile_family FROM runs WHERE run_key LIKE '%/full-cache/%'")
        check(full == [(1 << 24, "baseline")], f"the full cache is not one SnapKV run above every prompt: {full}")
        check(table1.splitlines()[2].startswith("| Dataset | Full cache |"), f"table 1 lacks the full cache:\n{table1}")
        noise = read_text(os.path.join(report, "noise.md"))
        for d in spec["datasets"]:
            check(f"| {d} | {spec['dev_limit']} | {spec['test_limit']} |" in noise,
                  f"the noise table lacks {d}'s question counts:\n{noise}")
        lines = read_text(os.path.join(report, "table2.csv")).splitlines()
        (table2,) = [t for t in spec["tables"] if t["name"] == "table2"]
        budget_columns = [f"B = {b}" for b in spec["budgets"]]
        check(len(lines) == 1 + len(table2["methods"]) and lines[0].startswith(",".join(["Method", *budget_columns]))
              and [line.split(",")[0] for line in lines[1:]] == table2["methods"],
              f"table 2 csv is not a row per method and a column per budget: {lines}")
        gains = read_text(os.path.join(report, "table2_gains.csv")).splitlines()
        check(len(gains) == len(table2["methods"]) and table2["baseline"] not in [g.split(",")[0] for g in gains[1:]],
              f"table 2's gains: not a row per method but the baseline: {gains}")
        # Where the cache went: uniform SnapKV keeps B in every layer and head, PyramidKV's layers
        # differ and only they are drawn; the layouts came through the merge.
        cache = read_text(os.path.join(report, "cache.md"))
        snap = [line for line in cache.splitlines() if line.startswith("| SnapKV | 32 |")]
        check(snap and snap[0].startswith("| SnapKV | 32 | 32.0 | 32.0..32.0 |"),
              f"cache table: SnapKV at B = 32 is not 32 per head and layer:\n{cache}")
        pyramid = [line for line in cache.splitlines() if line.startswith("| PyramidKV | 32 |")]
        check(pyramid and "32.0..32.0" not in pyramid[0], f"cache table: PyramidKV's layers equal:\n{cache}")
        layers_svg = os.path.join(report, "cache_layers_B32.svg")
        check(os.path.isfile(layers_svg) and "PyramidKV" in read_text(layers_svg)
              and ">SnapKV<" not in read_text(layers_svg),
              "cache_layers_B32.svg does not draw PyramidKV alone of the uniform and pyramid methods")
        index = read_text(os.path.join(report, "README.md"))
        commit = rows(merged, "SELECT DISTINCT git_commit FROM runs")[0][0]
        check("pipeline.json" in index and f"results computed by the kvsearch binaries of commit {commit}" in index
              and "report written by the kvsearch binary of commit" in index,
              "the report does not name its spec and the commits of its results and of itself")
        for fig in spec["figures"]:  # drawn by the binary itself: always there, no PNG, no data file
            svg = os.path.join(report, fig["name"] + ".svg")
            check(os.path.isfile(svg) and read_text(svg).startswith("<svg ") and f"({fig['name']}.svg)" in index,
                  f"figure {fig['name']} missing or not linked from the index")
            check(not os.path.exists(os.path.join(report, fig["name"] + ".png")), f"figure {fig['name']}: a PNG")
        check(not os.path.exists(os.path.join(report, "figures.json")), "the report wrote figures.json")
        expect_error("report of an empty database", "report", PIPELINE_SPEC, "--longbench", lb, "--db", os.path.join(tmp, "x.sqlite"),
                     "--out", os.path.join(tmp, "r2"))
    finish(passed="experiment plan/run/merge/report: all checks passed")


if __name__ == "__main__":
    main()
