#!/usr/bin/env python3
"""Test predictions of a rerun (DB B: the same spec rerun, e.g. with a smaller test_limit) against the
recorded ones (DB A), matched by run key (without the experiment's name), state eval order and
question id. Usage: compare_predictions.py RECORDED.sqlite RERUN.sqlite; exit 1 if any differ."""
import sqlite3, sys
from collections import Counter

def load(path):
    db = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)
    out = {}
    q = """select r.run_key, s.eval_order, p.question_id, p.prediction, r.git_commit
           from predictions p join states s on s.id = p.state_id join runs r on r.id = s.run_id
           where p.split = 'test'"""
    for key, order, qid, pred, commit in db.execute(q):
        out[(key.split("/", 1)[1], order, qid)] = (pred, commit)
    return out

a, b = load(sys.argv[1]), load(sys.argv[2])
missing = [k for k in b if k not in a]
same = [k for k in b if k in a and a[k][0] == b[k][0]]
differ = [k for k in b if k in a and a[k][0] != b[k][0]]
print(f"{len(b)} rerun test predictions; {len(same)} identical to the recorded, {len(differ)} differ, "
      f"{len(missing)} not recorded")
print("policies (runs x states):", len({(k[0], k[1]) for k in b}), "questions:", len({k[2] for k in b}))
print("recorded by:", Counter(a[k][1] for k in b if k in a), "rerun by:", Counter(v[1] for v in b.values()))
for k in differ[:10]:
    print("DIFF", k, repr(a[k][0][:60]), repr(b[k][0][:60]))
for k in missing[:5]:
    print("MISSING", k)
sys.exit(1 if differ or missing else 0)
