#!/usr/bin/env python3
"""`kvsearch data text`: long texts for `perplexity --text`.

The default (no files): the King James Version from Debian's bible-kjv-text, one text per book.
Checked against the listing `bible` prints, parsed here on its own: 66 books in canonical order,
1,189 chapters, every verse's text in its chapter's paragraph in order (31,102 verses); texts.json
names the source, the licence, and each file's size, word count and SHA-256 as Python computes
them. A text feeds `perplexity --text`. The user's files: each a text named by its stem, its origin
recorded. Refused in one line, exit 1, nothing written: a file that is empty or not UTF-8, two
files with one stem, a stem that cannot name a text, the default's program missing.

Env: KVSEARCH_BIN. Exit status 0 = pass.
"""
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from kvs_testing import BIN, check, error_output, finish, kvsearch, must, read_json, read_text, scratch_dir  # noqa: E402

BOOKS_IN_ORDER = ["Genesis", "Exodus", "Leviticus", "Numbers", "Deuteronomy", "Joshua", "Judges", "Ruth",
                  "1 Samuel", "2 Samuel", "1 Kings", "2 Kings", "1 Chronicles", "2 Chronicles", "Ezra",
                  "Nehemiah", "Esther", "Job", "Psalms", "Proverbs", "Ecclesiastes", "Song of Solomon",
                  "Isaiah", "Jeremiah", "Lamentations", "Ezekiel", "Daniel", "Hosea", "Joel", "Amos",
                  "Obadiah", "Jonah", "Micah", "Nahum", "Habakkuk", "Zephaniah", "Haggai", "Zechariah",
                  "Malachi", "Matthew", "Mark", "Luke", "John", "Acts", "Romans", "1 Corinthians",
                  "2 Corinthians", "Galatians", "Ephesians", "Philippians", "Colossians", "1 Thessalonians",
                  "2 Thessalonians", "1 Timothy", "2 Timothy", "Titus", "Philemon", "Hebrews", "James",
                  "1 Peter", "2 Peter", "1 John", "2 John", "3 John", "Jude", "Revelation"]


def reference_books():
    """book -> [(chapter number, [verse texts])], from `bible`'s own listing."""
    listing = subprocess.run(["bible", "-l1000000", "Gen1:1-Rev22:21"], capture_output=True, text=True,
                             check=True).stdout
    books = {}
    for line in listing.splitlines():
        heading = re.fullmatch(r"(\S.*) (\d+)", line)
        verse = re.fullmatch(r" +\d+ (.*)", line)
        if heading:
            books.setdefault(heading.group(1), []).append((int(heading.group(2)), []))
        elif verse:
            list(books.values())[-1][-1][1].append(verse.group(1))
    return books


def refused(args, mentions, out, env=None):
    r = kvsearch("data", "text", *args, "--out", out, env=env)
    line, problems = error_output(r, mentions=mentions)
    check(not problems, f"data text {' '.join(map(str, args))}: {problems}: {line!r}")
    check(not os.path.exists(out), f"data text {' '.join(map(str, args))}: wrote {out} though refused")


def main():
    if shutil.which("bible") is None:
        print("FAIL: `bible` (Debian's bible-kjv) is not installed: run tools/bootstrap.sh")
        sys.exit(1)
    with scratch_dir() as tmp:
        out = os.path.join(tmp, "kjv")
        must("data", "text", "--out", out)
        meta = read_json(os.path.join(out, "texts.json"))
        check("bible-kjv-text" in meta["source"] and "King James" in meta["source"],
              f"source: {meta['source']!r}")
        check(meta["licence"].startswith("public domain"), f"licence: {meta['licence']!r}")
        ref = reference_books()
        check(list(ref) == BOOKS_IN_ORDER, f"bible's listing: books {list(ref)[:5]}...")
        texts = meta["texts"]
        check(len(texts) == 66, f"{len(texts)} texts, expected 66 books")
        chapters = verses = 0
        for i, (entry, book) in enumerate(zip(texts, BOOKS_IN_ORDER)):
            want_name = f"kjv-{i + 1:02d}-{book.lower().replace(' ', '-')}"
            check(entry["name"] == want_name and entry["file"] == want_name + ".txt",
                  f"text {i}: {entry['name']} / {entry['file']}, expected {want_name}")
            path = os.path.join(out, entry["file"])
            raw = open(path, "rb").read()
            text = raw.decode("utf-8")
            check(entry["bytes"] == len(raw) and entry["sha256"] == hashlib.sha256(raw).hexdigest(),
                  f"{entry['file']}: bytes / sha256 differ from the file's")
            check(entry["words"] == len(text.split()), f"{entry['file']}: {entry['words']} words, "
                  f"Python counts {len(text.split())}")
            want = book + "\n" + "".join(f"\nChapter {n}\n\n{' '.join(vs)}\n" for n, vs in ref[book])
            check(text == want, f"{entry['file']}: differs from bible's listing of {book} at character "
                  f"{next((j for j, (a, b) in enumerate(zip(text, want)) if a != b), min(len(text), len(want)))}")
            chapters += len(ref[book])
            verses += sum(len(vs) for _, vs in ref[book])
        check((chapters, verses) == (1189, 31102), f"{chapters} chapters and {verses} verses, the KJV has "
              f"1,189 and 31,102")
        genesis = read_text(os.path.join(out, "kjv-01-genesis.txt"))
        check(genesis.startswith("Genesis\n\nChapter 1\n\nIn the beginning God created the heaven and the earth. "
                                 "And the earth was without form"), f"Genesis begins {genesis[:80]!r}")
        # The text datasets (defaults): every book long enough, in order; its dev split and config.
        words = {t["name"]: t["words"] for t in texts}
        sets = {d["name"]: d for d in meta["datasets"]}
        for name, metric, prompt, fed in (("kjv_perplexity", "perplexity", 1, 2047), ("kjv_fidelity", "fidelity", 512, 512)):
            d = sets.get(name)
            if not check(d is not None, f"texts.json declares no {name}: {list(sets)}"):
                continue
            want = [t["name"] for t in texts if t["words"] >= prompt + fed]
            check(d["texts"] == want and (d["metric"], d["prompt_tokens"], d["fed_tokens"], d["dev_texts"]) ==
                  (metric, prompt, fed, 8), f"{name}: {d['metric']} {d['prompt_tokens']},{d['fed_tokens']} dev "
                  f"{d['dev_texts']}, {len(d['texts'])} texts; expected {len(want)} of >= {prompt + fed} words")
            records = [json.loads(line) for line in open(os.path.join(out, "data", name + ".jsonl"), encoding="utf-8")]
            check([r["_id"] for r in records] == want and all(r["length"] == words[r["_id"]] for r in records),
                  f"{name}: records differ from the texts long enough")
            for cfg, value in (("metric", metric), ("prompt_tokens", prompt), ("maxlen", fed), ("dev", 8),
                               ("chat_template", "none"), ("prompt", "{context}")):
                got = read_json(os.path.join(out, "config", f"dataset2{cfg}.json")).get(name)
                check(got == value, f"config/dataset2{cfg}.json[{name}] = {got!r}, expected {value!r}")
        check(len(sets.get("kjv_perplexity", {}).get("texts", [])) == 48 and
              len(sets.get("kjv_fidelity", {}).get("texts", [])) == 60,
              "the KJV has 48 books of >= 2,048 words and 60 of >= 1,024")

        # A text feeds perplexity (its first 32 tokens under the full cache).
        got = must("perplexity", "--model", "smollm2-135m", "--text", os.path.join(out, "kjv-08-ruth.txt"),
                   "--max-tokens", 32, "--json")

        result = json.loads(got)
        check(result["tokens"] == 32 and 1 < result["results"][0]["perplexity"] < 1000,
              f"perplexity on Ruth: {result['tokens']} tokens, {result['results'][0]['perplexity']}")

        # The user's files.
        a, b = os.path.join(tmp, "first book.txt"), os.path.join(tmp, "second.md")
        open(a, "w", encoding="utf-8").write("Call me Ishmael. Some years ago\n")
        open(b, "w", encoding="utf-8").write("It was the best of times, ünd\n")
        bad_name = os.path.join(tmp, "first book.txt")
        refused([bad_name], ["first book", "must be [A-Za-z0-9_.-]+"], os.path.join(tmp, "r0"))
        a2 = os.path.join(tmp, "first.txt")
        os.rename(a, a2)
        mine = os.path.join(tmp, "mine")
        must("data", "text", a2, b, "--out", mine)
        meta = read_json(os.path.join(mine, "texts.json"))
        check([t["name"] for t in meta["texts"]] == ["first", "second"], f"names {meta['texts']}")
        check([t["origin"] for t in meta["texts"]] == [os.path.abspath(a2), os.path.abspath(b)],
              f"origins {[t['origin'] for t in meta['texts']]}")
        check(read_text(os.path.join(mine, "second.txt")) == "It was the best of times, ünd\n",
              "second.txt is not the file as given")
        check(meta["source"] == "the user's text files", f"source {meta['source']!r}")
        check(meta["datasets"] == [] and not os.path.exists(os.path.join(mine, "config")),
              f"short texts and default readings declared {meta['datasets']}")

        # Refused: nothing written.
        empty, latin1, twin = (os.path.join(tmp, n) for n in ("empty.txt", "latin.txt", "sub"))
        open(empty, "w").write("  \n")
        open(latin1, "wb").write("caf\u00e9".encode("latin-1"))
        os.makedirs(twin)
        open(os.path.join(twin, "first.txt"), "w").write("again\n")
        refused([a2, empty], [empty], os.path.join(tmp, "r1"))
        refused([latin1], [latin1, "UTF-8"], os.path.join(tmp, "r2"))
        refused([a2, os.path.join(twin, "first.txt")], ["first", "same text"], os.path.join(tmp, "r3"))
        refused([], ["bible", "not installed"], os.path.join(tmp, "r4"),
                env={**os.environ, "PATH": os.path.join(tmp, "no-such-dir")})
    finish(passed="data text: the KJV's 66 books equal bible's listing, its text datasets; user files and "
                  "refusals as specified")


if __name__ == "__main__":
    main()
