#!/usr/bin/env python3
"""`kvsearch data ruler` as a user runs it:
- bad input (an unknown task, a length below the template's own size, an empty or non-UTF-8
  haystack file, a templates file missing a family) gives one 'error: ...' line naming the option or
  field, exit status 1, and writes nothing;
- the same seed writes byte-identical directories, another seed different data; the parameters
  file records the seed and the SHA-256 of the tokenizer, haystack and templates files;
- `--templates` reads what tools/ruler_extract_templates.py makes of a (made-up) RULER checkout,
  and that wording is what the records carry;
- `--squad` / `--hotpotqa` on made-up files: qa_1 / qa_2 records asking question i, a bad file is
  one error line naming it and the field, and without the files a note names the flag.
"""
import hashlib
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from kvs_testing import check, error_output, finish, kvsearch, read_json  # noqa: E402

FIXTURES = os.environ.get("KVS_FIXTURES_DIR", "")
SOURCE = os.environ.get("KVS_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
MISTRAL = os.path.join(FIXTURES, "tokenizers", "mistral-7b-v0.1", "tokenizer.model")


def run(*args):
    return kvsearch(*args, timeout=300)


def ruler(out, *extra):
    return run("data", "ruler", "--model", MISTRAL, "--out", out, "--lengths", "1024", "--count", "2",
               *extra)


def expect_error(out, extra, fragment):
    proc = ruler(out, *extra)
    _, problems = error_output(proc, prefix="error: ", mentions=(fragment,))
    check(not problems, f"{extra}: expected one 'error: ...{fragment}...' line and exit 1, got exit "
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


def squad_file(path, answerable=True):
    articles = []
    for a in range(4):
        paragraphs = []
        for p in range(6):
            code = f"amber-{a}-{p}"
            text = f"From article {a} paragraph {p}: the code is {code}. " + "The quiet river runs past the old stone mill. " * 5
            qas = [{"question": f"Which code does article {a} paragraph {p} give?", "id": code,
                    "answers": [{"text": code, "answer_start": 0}], "is_impossible": not answerable}]
            paragraphs.append({"context": text, "qas": qas})
        articles.append({"title": f"Article_{a}", "paragraphs": paragraphs})
    with open(path, "w") as f:
        json.dump({"version": "v2.0", "data": articles}, f)


def hotpotqa_file(path):
    questions = []
    for q in range(4):
        context = [[f"Topic {q}-{p}", [f"Topic {q}-{p} holds the word ember{q}{p}z.",
                                       " The quiet river runs past the old stone mill." * 3]] for p in range(10)]
        questions.append({"question": f"Which word does topic {q}-0 hold?", "answer": f"ember{q}0z",
                          "context": context})
    with open(path, "w") as f:
        json.dump(questions, f)


def check_qa(tmp, templates):
    squad, hotpot, impossible = (os.path.join(tmp, n) for n in ("squad.json", "hotpot.json", "impossible.json"))
    squad_file(squad)
    hotpotqa_file(hotpot)
    squad_file(impossible, answerable=False)
    out = os.path.join(tmp, "qa_out")
    expect_error(out, ["--tasks", "qa_1", "--squad", impossible], f"{impossible}: --squad: no answerable question")
    with open(impossible, "w") as f:
        json.dump({"data": [{"paragraphs": [{"context": 3, "qas": []}]}]}, f)
    expect_error(out, ["--tasks", "qa_1", "--squad", impossible],
                 f"{impossible}: --squad: data[0].paragraphs[0].context: expected a string")
    proc = ruler(out, "--tasks", "qa_1,qa_2", "--squad", squad, "--hotpotqa", hotpot)
    check(proc.returncode == 0, f"qa: exit {proc.returncode}, {proc.stderr}")
    for task, answers in (("qa_1", lambda i: [f"amber-0-{i}"]), ("qa_2", lambda i: [f"ember{i}0z"])):
        with open(os.path.join(out, "data", f"{task}_1024.jsonl"), encoding="utf-8") as f:
            records = [json.loads(line) for line in f]
        check(len(records) == 2, f"{task}: {len(records)} records")
        for i, r in enumerate(records):
            check(r["answers"] == answers(i), f"{task} record {i}: answers {r['answers']}")
            check(900 <= r["length"] <= 1024, f"{task} record {i}: length {r['length']}")
            check("Document 1:\n" in r["context"] and answers(i)[0] in r["context"], f"{task} record {i}: context")
    params = read_json(os.path.join(out, "ruler_generation.json"))
    check(params["qa_files"]["squad"] == {"source": squad, "sha256": sha256(squad)}, f"{params['qa_files']}")
    metrics = read_json(os.path.join(out, "config", "dataset2metric.json"))
    check(metrics == {"qa_1_1024": "string_match_part", "qa_2_1024": "string_match_part"}, f"{metrics}")
    # RULER's qa template through --templates (the made-up checkout's).
    d = os.path.join(tmp, "qa_templates")
    proc = ruler(d, "--tasks", "qa_1", "--squad", squad, "--templates", templates)
    check(proc.returncode == 0, f"qa --templates: exit {proc.returncode}, {proc.stderr}")
    with open(os.path.join(d, "data", "qa_1_1024.jsonl"), encoding="utf-8") as f:
        record = json.loads(f.readline())
    check(record["context"].startswith("Docs.\n\nDocument 1:\nFrom article "), f"{record['context'][:60]!r}")
    check(record["input"] == "\n\nQuestion: Which code does article 0 paragraph 0 give?", f"{record['input']!r}")
    check(record["answer_prefix"] == " Answer:", f"{record['answer_prefix']!r}")
    proc = ruler(os.path.join(tmp, "qa_skip"), "--tasks", "niah_single_1,qa_1")
    check(proc.returncode == 0 and "note: qa_1: skipped (needs a SQuAD v2 dev file: give --squad FILE)" in proc.stdout,
          f"qa skip: exit {proc.returncode}, {proc.stdout!r}")


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
        params = read_json(os.path.join(d, "ruler_generation.json"))
        check(params["wording"] == {"source": extracted, "sha256": sha256(extracted)}, f"{params['wording']}")
        check(params["essay_haystack"]["sha256"] == sha256(prose), f"{params['essay_haystack']}")

        check_qa(tmp, extracted)
    finish()


if __name__ == "__main__":
    main()
