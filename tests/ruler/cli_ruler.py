#!/usr/bin/env python3
"""`kvsearch data ruler` as a user runs it:
- bad input (an unknown task, a length below the template's own size, an empty or non-UTF-8
  haystack file, a templates file missing a family) gives one 'error: ...' line naming the option or
  field, exit status 1, and writes nothing;
- the same seed writes byte-identical directories, another seed different data; the parameters
  file records the seed and the SHA-256 of the tokenizer, haystack and templates files;
- `--templates` reads what tools/ruler_extract_templates.py makes of a (made-up) RULER checkout,
  and that wording is what the records carry.
"""
import hashlib
import json
import os
import subprocess
import sys
import tempfile

BIN = os.environ.get("KVSEARCH_BIN", "kvsearch")
SHARED = os.environ.get("KVS_SHARED_DIR", "")
SOURCE = os.environ.get("KVS_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
MISTRAL = os.path.join(SHARED, "tokenizers", "mistral-7b-v0.1", "tokenizer.model")
FAILURES = []


def check(condition, message):
    if not condition:
        FAILURES.append(message)


def run(*args):
    return subprocess.run([BIN, *args], capture_output=True, text=True, timeout=300)


def ruler(out, *extra):
    return run("data", "ruler", "--model", MISTRAL, "--out", out, "--lengths", "1024", "--count", "2",
               *extra)


def expect_error(out, extra, fragment):
    proc = ruler(out, *extra)
    lines = proc.stderr.strip().splitlines()
    ok = proc.returncode == 1 and len(lines) == 1 and lines[0].startswith("error: ") and fragment in lines[0]
    check(ok, f"{extra}: expected one 'error: ...{fragment}...' line and exit 1, got exit "
              f"{proc.returncode}, stderr {proc.stderr!r}")
    check(not os.path.exists(out), f"{extra}: wrote {out} despite the error")


def tree(root):
    files = {}
    for dirpath, _, names in os.walk(root):
        for name in names:
            path = os.path.join(dirpath, name)
            with open(path, "rb") as f:
                files[os.path.relpath(path, root)] = f.read()
    return files


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


FAKE_CONSTANTS = '''
TASKS = {
    "niah": {"tokens_to_generate": 128, "template": "Some magic {type_needle_v} are in here.\\n{context}\\nWhat are all the magic {type_needle_v} for {query}?", "answer_prefix": " The magic {type_needle_v} for {query} are"},
    "variable_tracking": {"tokens_to_generate": 30, "template": "Track it.\\n\\n{context}\\nQuestion: Who has {query}?", "answer_prefix": " Answer: {num_v} of them have {query}: "},
    "common_words_extraction": {"tokens_to_generate": 120, "template": "Words.\\n{context}\\nQuestion: Top ten?", "answer_prefix": " Answer: The top ten are:"},
    "freq_words_extraction": {"tokens_to_generate": 50, "template": "Coded. {context}\\nQuestion: Top three?", "answer_prefix": " Answer: The top three are:"},
    "qa": {"tokens_to_generate": 32, "template": "Docs.\\n\\n{context}\\n\\nQuestion: {query}", "answer_prefix": " Answer:"},
}
'''
FAKE_NIAH = '''
def generate(template, type_needle_v):
    needle = "A magic {type_needle_v} for {key} reads: {value}."
    haystack = "The grass is green. Fake noise line."
    template = template.replace('Some', 'A')
    template = template.replace('are all', 'is')
    template = template.replace('are', 'is')
    return template
'''
FAKE_VT = '''
noise = "The grass is green. Fake noise line."
'''


def main():
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out")
        expect_error(out, ["--tasks", "niah_single_1,no_such_task"], "--tasks: unknown RULER task 'no_such_task'")
        expect_error(out, ["--lengths", "1024,150", "--tasks", "niah_single_1"], "--lengths: 150 tokens is below")
        empty = os.path.join(tmp, "empty.txt")
        open(empty, "w").close()
        expect_error(out, ["--haystack", empty], "--haystack: the file has no words")
        latin1 = os.path.join(tmp, "latin1.txt")
        with open(latin1, "wb") as f:
            f.write("Caf\u00e9 cr\u00e8me.".encode("latin-1"))
        expect_error(out, ["--haystack", latin1], "--haystack: not valid UTF-8")
        partial = os.path.join(tmp, "partial.json")
        with open(partial, "w") as f:
            json.dump({"niah": {"template": "{context}", "answer_prefix": "", "needle": "{key}{value}", "noise": "n"}}, f)
        expect_error(out, ["--templates", partial], "--templates: missing family 'variable_tracking'")

        # Determinism and the recorded parameters.
        a, b, c = (os.path.join(tmp, d) for d in "abc")
        for d, seed in ((a, "3"), (b, "3"), (c, "4")):
            proc = ruler(d, "--seed", seed, "--tasks", "niah_single_2,vt,cwe,fwe")
            check(proc.returncode == 0, f"seed {seed}: exit {proc.returncode}, {proc.stderr}")
        ta, tb, tc = tree(a), tree(b), tree(c)
        check(ta == tb, "the same seed wrote different files")
        data = [k for k in ta if k.startswith("data")]
        check(len(data) == 4, f"expected 4 data files, got {sorted(ta)}")
        check(all(ta[k] != tc.get(k) for k in data), "another seed wrote identical data")
        params = json.loads(ta["ruler_generation.json"])
        check(params["seed"] == 3 and params["lengths"] == [1024] and params["count"] == 2, f"{params}")
        check(params["tokenizer"]["sha256"] == sha256(MISTRAL), "tokenizer hash is not the file's SHA-256")
        check(params["wording"]["source"] == "kvsearch", f"{params['wording']}")
        check("common-licenses" in params["essay_haystack"]["source"], f"{params['essay_haystack']}")
        check(params["word_list"]["sha256"] == sha256("/usr/share/dict/words"), f"{params['word_list']}")
        check(params["kvsearch_commit"] not in ("", "unknown"), f"{params['kvsearch_commit']}")

        # tools/ruler_extract_templates.py on a made-up checkout, then --templates and --haystack.
        synthetic = os.path.join(tmp, "RULER", "scripts", "data", "synthetic")
        os.makedirs(synthetic)
        for name, text in (("constants.py", FAKE_CONSTANTS), ("niah.py", FAKE_NIAH), ("variable_tracking.py", FAKE_VT)):
            with open(os.path.join(synthetic, name), "w") as f:
                f.write(text)
        extracted = os.path.join(tmp, "ruler_templates.json")
        proc = subprocess.run([sys.executable, os.path.join(SOURCE, "tools", "ruler_extract_templates.py"),
                               os.path.join(tmp, "RULER")], capture_output=True, text=True)
        check(proc.returncode == 0, f"extraction: {proc.stderr}")
        with open(extracted, "w") as f:
            f.write(proc.stdout)
        templates = json.loads(proc.stdout)
        check(templates["niah"]["singular_rewrites"] == [["Some", "A"], ["are all", "is"], ["are", "is"]],
              f"{templates['niah'].get('singular_rewrites')}")
        check(templates["niah"]["needle"] == "A magic {type_needle_v} for {key} reads: {value}.", f"{templates['niah']}")
        prose = os.path.join(tmp, "prose.txt")
        with open(prose, "w", encoding="utf-8") as f:
            f.write("Über alles. " * 50 + "The café was closed! Nobody knew why? " * 400)
        d = os.path.join(tmp, "d")
        proc = ruler(d, "--templates", extracted, "--haystack", prose, "--tasks", "niah_single_1,niah_single_2")
        check(proc.returncode == 0, f"--templates: exit {proc.returncode}, {proc.stderr}")
        with open(os.path.join(d, "data", "niah_single_2_1024.jsonl"), encoding="utf-8") as f:
            record = json.loads(f.readline())
        check(record["context"].startswith("A magic number is in here.\n"), f"{record['context'][:80]!r}")
        check(record["input"] == f"\nWhat is the magic number for {record['answer_prefix'].split(' for ')[1].split(' is')[0]}?",
              f"{record['input']!r}")
        check("Über alles." in record["context"] and "A magic numbers for" in record["context"], "haystack/needle")
        with open(os.path.join(d, "data", "niah_single_1_1024.jsonl"), encoding="utf-8") as f:
            noise = json.loads(f.readline())["context"]
        check("The grass is green. Fake noise line.\n" in noise, "the extracted noise line is not used")
        params = json.loads(open(os.path.join(d, "ruler_generation.json")).read())
        check(params["wording"] == {"source": extracted, "sha256": sha256(extracted)}, f"{params['wording']}")
        check(params["essay_haystack"]["sha256"] == sha256(prose), f"{params['essay_haystack']}")

    for failure in FAILURES:
        print("FAIL:", failure)
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
