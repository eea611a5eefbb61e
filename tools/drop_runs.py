#!/usr/bin/env python3
"""Prepare an experiment's job databases from its merged database, without the runs of one binary.

    tools/drop_runs.py RESULTS.sqlite OUT_DIR GIT_COMMIT [RUN_KEY_PART]

Writes OUT_DIR/jobs/<job>.sqlite for every job recorded in RESULTS.sqlite (the layout `kvsearch
experiment run --out OUT_DIR` reads), each holding only its own runs (an evaluate job also its
dataset's searches), less every run whose git_commit is GIT_COMMIT and, where given, whose run key
contains RUN_KEY_PART (with that run's states, replays, predictions and cache layouts). A job that
lost runs is marked unfinished, so `kvsearch experiment run SPEC --out OUT_DIR` evaluates exactly
the dropped runs again, with the binary that runs it, and keeps the others as recorded. Used to
record again, from a clean commit, the runs a dirty tree computed (results/example-methods).
"""
import os
import re
import shutil
import sqlite3
import sys


def slug(key):
    # src/experiment/spec.cpp's slug(): ASCII letters and digits lower-cased, each run of other
    # characters one '-', none leading or trailing; "x" when nothing is left.
    return re.sub(r"[^a-z0-9]+", "-", key.lower()).strip("-") or "x"


def drop_runs(db, run_ids):
    if not run_ids:
        return
    marks = ",".join("?" * len(run_ids))
    states = [r[0] for r in db.execute(f"SELECT id FROM states WHERE run_id IN ({marks})", run_ids)]
    if states:
        smarks = ",".join("?" * len(states))
        for table in ("replays", "predictions", "cache_layouts"):
            db.execute(f"DELETE FROM {table} WHERE state_id IN ({smarks})", states)
        db.execute(f"DELETE FROM states WHERE id IN ({smarks})", states)
    db.execute(f"DELETE FROM runs WHERE id IN ({marks})", run_ids)


def main():
    if len(sys.argv) not in (4, 5):
        sys.exit("usage: " + __doc__.strip().splitlines()[2].strip())
    source, out_dir, commit = sys.argv[1:4]
    part = sys.argv[4] if len(sys.argv) == 5 else ""
    src = sqlite3.connect(f"file:{source}?mode=ro&immutable=1", uri=True)
    jobs = src.execute("SELECT id, job_key FROM jobs ORDER BY id").fetchall()
    if not src.execute("SELECT 1 FROM runs WHERE git_commit = ? AND instr(run_key, ?) > 0",
                       (commit, part)).fetchone():
        sys.exit(f"{source}: no run {'with ' + repr(part) + ' in its key ' if part else ''}was "
                 f"recorded by {commit}")
    os.makedirs(os.path.join(out_dir, "jobs"), exist_ok=True)
    for job_id, key in jobs:
        path = os.path.join(out_dir, "jobs", slug(key) + ".sqlite")
        if os.path.exists(path):
            sys.exit(f"{path}: exists; give an empty OUT_DIR")
        shutil.copyfile(source, path)
        db = sqlite3.connect(path)
        # A job keeps its own runs; an evaluate job also its dataset's searches (it replays their
        # accepted states on test and holds those replays).
        prefix = key[: -len("evaluate")] if key.endswith("/evaluate") else None
        own = [i for i, k in jobs if i == job_id or (prefix and k.startswith(prefix))]
        marks = ",".join("?" * len(own))
        others = [r[0] for r in db.execute(
            f"SELECT id FROM runs WHERE job_id IS NULL OR job_id NOT IN ({marks})", own)]
        drop_runs(db, others)
        db.execute(f"DELETE FROM jobs WHERE id NOT IN ({marks})", own)
        dropped = [r[0] for r in db.execute(
            "SELECT id FROM runs WHERE git_commit = ? AND instr(run_key, ?) > 0", (commit, part))]
        drop_runs(db, dropped)
        if dropped:
            db.execute("UPDATE jobs SET status = 'running', finished_at = NULL WHERE id = ?", (job_id,))
        db.commit()
        db.execute("VACUUM")
        db.close()
        kept = sqlite3.connect(path).execute("SELECT count(*) FROM runs").fetchone()[0]
        print(f"{path}: {kept} runs kept, {len(dropped)} dropped")


if __name__ == "__main__":
    main()
