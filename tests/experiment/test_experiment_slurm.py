#!/usr/bin/env python3
"""`kvsearch experiment run --launcher slurm` against a real single-node Slurm: munged, slurmctld
and slurmd started on localhost by tools/slurm_local.sh with a generated slurm.conf in a temp
directory. The pipeline spec (tiny checkpoint and calibrated data from fixtures.py) is submitted as
sbatch arrays (one task per job), waited for and merged; every job must have finished in its own
array task, and the merged results must equal a local run's (same scores, states, predictions).
Then --no-wait returns at once with the job ids, and a rerun merges without submitting anything.

Exits 77 (skipped) with the reason when Slurm cannot be started here.
Env: KVSEARCH_BIN, KVS_FIXTURES_DIR, KVS_SOURCE_DIR. Exit status 0 = pass.
"""
import glob
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from fixtures import PIPELINE_SPEC, SOURCE, pipeline_spec, make_fixtures, results  # noqa: E402
from kvs_testing import check, finish, kvsearch, must, read_text, rows, scratch_dir  # noqa: E402

SKIP = 77


def main():
    with scratch_dir("kvs-slurm-") as tmp:
        cluster = os.path.join(tmp, "cluster")
        helper = os.path.join(SOURCE, "tools", "slurm_local.sh")
        started = subprocess.run([helper, "start", cluster], capture_output=True, text=True)
        if started.returncode != 0:
            reason = started.stderr.strip() or f"exit {started.returncode}"
            print(f"SKIP: {reason}")
            sys.exit(SKIP if started.returncode == SKIP else 1)
        os.environ["SLURM_CONF"] = os.path.join(cluster, "slurm.conf")
        os.environ["PATH"] += ":/usr/sbin"
        try:
            model, lb = make_fixtures(tmp)
            paths = ["--model", model, "--longbench", lb, "--job-threads", 1]
            spec = pipeline_spec()
            n_jobs = 2 * len(spec["datasets"])

            out_local = os.path.join(tmp, "local")
            must("experiment", "run", PIPELINE_SPEC, *paths, "--out", out_local, "--jobs", 2)

            out = os.path.join(tmp, "slurm")
            t0 = time.time()
            r = kvsearch("experiment", "run", PIPELINE_SPEC, *paths, "--out", out, "--launcher", "slurm",
                         "--cpus", 1, "--time", "00:10:00")
            print(f"pipeline spec through Slurm: {time.time() - t0:.1f} s (exit {r.returncode})")
            print(r.stdout)
            if r.returncode != 0:
                logs = "".join(open(f).read()[-1500:] for f in glob.glob(os.path.join(out, "slurm", "*.log")))
                sys.exit(f"slurm launcher failed: {r.stderr[-2000:]}\ntask logs:\n{logs}")
            scripts = sorted(glob.glob(os.path.join(out, "slurm", "*.sbatch")))
            check(len(scripts) == 2, f"expected one sbatch script per stage, found {scripts}")
            script = read_text(scripts[0])
            check("#SBATCH --array=" in script and "#SBATCH --cpus-per-task=1" in script
                  and "#SBATCH --time=00:10:00" in script and "SLURM_ARRAY_TASK_ID" in script,
                  f"stage-1 script lacks the array or the resources:\n{script}")
            task_logs = glob.glob(os.path.join(out, "slurm", "*_*.log"))
            check(len(task_logs) == n_jobs, f"{len(task_logs)} array task logs for {n_jobs} jobs")
            for f in sorted(glob.glob(os.path.join(out, "jobs", "*.sqlite"))):
                for key, status in rows(f, "SELECT job_key, status FROM jobs"):
                    check(status == "finished", f"job {key} in {f}: {status}")
            merged = os.path.join(out, "results.sqlite")
            jobs = rows(merged, "SELECT job_key, status FROM jobs ORDER BY job_key")
            check(len(jobs) == n_jobs and all(s == "finished" for _, s in jobs), f"merged jobs: {jobs}")
            per_job = rows(merged, "SELECT jobs.job_key, count(runs.id) FROM jobs LEFT JOIN runs "
                                   "ON runs.job_id = jobs.id GROUP BY jobs.id")
            check(all(n > 0 for _, n in per_job), f"a job without runs in the merged database: {per_job}")
            local, slurm = results(os.path.join(out_local, "results.sqlite")), results(merged)
            for table in local:
                check(local[table] == slurm[table],
                      f"{table}: the Slurm run's merged results differ from the local run's "
                      f"({len(slurm[table])} vs {len(local[table])} rows)")

            # --no-wait on a finished experiment submits nothing; on a fresh one it returns the ids.
            again = must("experiment", "run", PIPELINE_SPEC, *paths, "--out", out, "--launcher", "slurm")
            check(again.count("skipped (finished before)") == n_jobs, f"rerun did not skip every job:\n{again}")
            out_nw = os.path.join(tmp, "nowait")
            t0 = time.time()
            text = must("experiment", "run", PIPELINE_SPEC, *paths, "--out", out_nw, "--launcher", "slurm", "--no-wait")
            check("not waiting" in text and re.search(r"Slurm jobs: \d+", text), f"--no-wait output:\n{text}")
            ids = re.findall(r"\d+", text.split("Slurm jobs:")[1].split("(")[0])
            deadline = time.time() + 300
            while time.time() < deadline:
                q = subprocess.run(["squeue", "-h", "-j", ",".join(ids)], capture_output=True, text=True)
                if q.returncode != 0 or not q.stdout.strip():
                    break
                time.sleep(1)
            collected = must("experiment", "run", PIPELINE_SPEC, *paths, "--out", out_nw)
            check(collected.count("skipped (finished before)") == n_jobs,
                  f"after --no-wait, the rerun should find every job finished:\n{collected}")
            check(results(os.path.join(out_nw, "results.sqlite")) == local,
                  "the --no-wait run's merged results differ from the local run's")
        finally:
            subprocess.run([helper, "stop", cluster], capture_output=True)
    finish(passed="experiment on a real single-node Slurm: all checks passed")


if __name__ == "__main__":
    main()
