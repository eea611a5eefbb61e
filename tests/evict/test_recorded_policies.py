"""Every policy recorded in the committed results databases (results/**/results.sqlite: each run's
policy template and every evaluated state's policy) still reads, and kvsearch writes it back as it
was recorded, field for field: recorded runs keep their identity, and replays read the same
settings. `kvsearch methods --policies FILE` reads each (checked against its method's declared
parameters) and prints it as kvsearch records it. A policy whose JSON changed, or one that no
longer reads, is a failure naming its database.
"""
import glob
import json
import os
import sqlite3
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from kvs_testing import check, finish, kvsearch, scratch_dir  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def recorded_policies():
    """{policy JSON text: the first database that records it}, over every committed database."""
    found = {}
    for path in sorted(glob.glob(os.path.join(ROOT, "results", "**", "results.sqlite"), recursive=True)):
        db = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)
        for table in ("runs", "states"):
            for (text,) in db.execute(f"SELECT DISTINCT policy_json FROM {table}"):
                found.setdefault(text, os.path.relpath(path, ROOT))
        db.close()
    return found


def main():
    found = recorded_policies()
    texts = sorted(found)
    check(len(texts) >= 68, f"only {len(texts)} distinct recorded policies found")
    with scratch_dir() as tmp:
        path = os.path.join(tmp, "policies.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump([json.loads(t) for t in texts], f)
        r = kvsearch("methods", "--policies", path, timeout=120)
        if not check(r.returncode == 0, f"kvsearch methods --policies failed: {r.stderr.strip()}"):
            finish()
        written = r.stdout.splitlines()
    check(len(written) == len(texts), f"{len(written)} policies written for {len(texts)} read")
    methods = set()
    for text, back in zip(texts, written):
        check(json.loads(back) == json.loads(text),
              f"{found[text]}: recorded {text}\n  written back {back}")
        methods.add(json.loads(text).get("method", json.loads(text).get("kind")))
    # A bad one is refused by index, naming the field.
    with scratch_dir() as tmp:
        path = os.path.join(tmp, "bad.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump([json.loads(texts[0]), {"method": "knorm", "budget": 64, "windw": 8}], f)
        r = kvsearch("methods", "--policies", path, timeout=60)
        check(r.returncode == 1 and "policies[1].windw: not a parameter of knorm" in r.stderr,
              f"a misspelled parameter: rc {r.returncode}, {r.stderr.strip()}")
    finish(passed=f"{len(texts)} recorded policies ({len(methods)} methods or kinds) read and "
                  f"write back unchanged")


main()
