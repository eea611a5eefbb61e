#!/usr/bin/env python3
"""Extracts RULER's exact wording from a user's RULER checkout into the JSON file that
`kvsearch data ruler --templates FILE` reads (kvsearch ships its own wording, not RULER's).

    tools/ruler_extract_templates.py /path/to/RULER > ruler_templates.json

Read from the checkout (RULER is Apache-2.0; the file stays on the user's machine):
  scripts/data/synthetic/constants.py    TASKS[family]["template"], ["answer_prefix"]
  scripts/data/synthetic/niah.py         the needle sentence, the noise line, and the
                                         template.replace(...) pairs of the singular rewrite
  scripts/data/synthetic/variable_tracking.py   the noise line
"""
import ast
import json
import re
import sys
from pathlib import Path

FAMILIES = ["niah", "variable_tracking", "common_words_extraction", "freq_words_extraction", "qa"]


def fail(message):
    sys.stderr.write(f"error: {message}\n")
    sys.exit(1)


def tasks_dict(constants_path):
    """The TASKS literal of constants.py, evaluated as a literal (no code of the checkout runs)."""
    tree = ast.parse(constants_path.read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "TASKS" for t in node.targets):
            return ast.literal_eval(node.value)
    fail(f"{constants_path}: no TASKS = {{...}} literal")


def string_constants(source):
    """Every string literal of the file (implicitly concatenated literals as one)."""
    return [n.value for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def needle_sentence(source, path):
    """The needle sentence: the literal naming {type_needle_v}, {key} and {value}."""
    for text in string_constants(source):
        if all(field in text for field in ("{type_needle_v}", "{key}", "{value}")):
            return text
    fail(f"{path}: no needle sentence with {{type_needle_v}}, {{key}} and {{value}}")


def noise_line(source, path):
    """The noise sentence: the literal that a haystack of repeated lines is made of."""
    for text in string_constants(source):
        if text.startswith("The grass is green."):
            return text.strip()
    fail(f"{path}: no noise sentence found")


def singular_rewrites(source):
    """The ordered template.replace('from', 'to') pairs of the single-value rewrite."""
    pairs = re.findall(r"""template\s*=\s*template\.replace\(\s*(['"])(.*?)\1\s*,\s*(['"])(.*?)\3\s*\)""", source)
    seen, ordered = set(), []
    for _, old, _, new in pairs:
        if (old, new) not in seen:
            seen.add((old, new))
            ordered.append([old, new])
    return ordered


def main():
    if len(sys.argv) != 2:
        fail("usage: ruler_extract_templates.py RULER_CHECKOUT")
    root = Path(sys.argv[1]) / "scripts" / "data" / "synthetic"
    constants, niah, vt = root / "constants.py", root / "niah.py", root / "variable_tracking.py"
    for path in (constants, niah, vt):
        if not path.is_file():
            fail(f"{path}: not found (is this a RULER checkout?)")
    tasks = tasks_dict(constants)
    out = {}
    for family in FAMILIES:
        if family not in tasks:
            fail(f"{constants}: TASKS has no family '{family}'")
        out[family] = {"template": tasks[family]["template"], "answer_prefix": tasks[family]["answer_prefix"]}
    niah_source = niah.read_text(encoding="utf-8")
    out["niah"]["needle"] = needle_sentence(niah_source, niah)
    out["niah"]["noise"] = noise_line(niah_source, niah)
    out["niah"]["singular_rewrites"] = singular_rewrites(niah_source)
    out["variable_tracking"]["noise"] = noise_line(vt.read_text(encoding="utf-8"), vt)
    json.dump(out, sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
