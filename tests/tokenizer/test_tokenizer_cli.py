"""`kvsearch tokenize` and `kvsearch bench tokenizer` driven as a user runs them."""
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from kvs_testing import check, finish, kvsearch  # noqa: E402

FIXTURES = os.environ["KVS_FIXTURES_DIR"]
LLAMA3 = os.path.join(FIXTURES, "tokenizers", "llama-3.1", "tokenizer.model")
MISTRAL = os.path.join(FIXTURES, "tokenizers", "mistral-7b-v0.1", "tokenizer.model")


def main():
    out = kvsearch("tokenize", "--tokenizer", LLAMA3, "--text", "Hello, world!")
    check(out.returncode == 0 and out.stdout.strip() == "9906,11,1917,0", "encode: %r %r" % (out.stdout, out.stderr))

    out = kvsearch("tokenize", "--tokenizer", LLAMA3, "--text", "<|eot_id|>", "--special", "--json")
    check(out.returncode == 0 and json.loads(out.stdout)["ids"] == [128009], "encode --special: %r" % out.stdout)

    out = kvsearch("tokenize", "--tokenizer", LLAMA3, "--decode", "128000,9906,11,1917,0", "--json")
    check(out.returncode == 0 and json.loads(out.stdout)["text"] == "Hello, world!", "decode: %r" % out.stdout)

    out = kvsearch("tokenize", "--tokenizer", LLAMA3, "--decode", "128000,9906", "--keep-special")
    check(out.stdout == "<|begin_of_text|>Hello\n", "decode --keep-special: %r" % out.stdout)

    with tempfile.TemporaryDirectory() as tmp:
        os.symlink(MISTRAL, os.path.join(tmp, "tokenizer.model"))
        out = kvsearch("tokenize", "--model", tmp, "--text", "Hello, world!")
        check(out.stdout.strip() == "22557,28725,1526,28808", "mistral via --model: %r %r" % (out.stdout, out.stderr))

        bad = os.path.join(tmp, "bad.model")
        with open(LLAMA3, "rb") as src, open(bad, "wb") as dst:
            lines = src.read().split(b"\n")
            lines[9] = b"not-a-valid-line"
            dst.write(b"\n".join(lines))
        out = kvsearch("tokenize", "--tokenizer", bad, "--text", "x")
        err = out.stderr.strip()
        check(out.returncode == 1 and err.count("\n") == 0 and "bad.model:10:" in err,
              "malformed tokenizer file: rc %d, stderr %r" % (out.returncode, err))

    out = kvsearch("tokenize", "--tokenizer", LLAMA3, "--decode", "1,x")
    check(out.returncode == 1 and "'x' is not an integer id" in out.stderr, "bad --decode: %r" % out.stderr)
    out = kvsearch("tokenize", "--tokenizer", LLAMA3)
    check(out.returncode == 1 and "exactly one of --text" in out.stderr, "no input: %r" % out.stderr)

    out = kvsearch("bench", "tokenizer", "--tokenizer", LLAMA3, "--words", "20000", "--json")
    check(out.returncode == 0, "bench failed: %r" % out.stderr)
    if out.returncode == 0:
        r = json.loads(out.stdout)
        check(r["words"] == 20000 and r["tokens"] > 20000, "bench counts: %r" % r)
        ratio = r["speed_ratio_vs_tiktoken"]
        if ratio is None:
            print("note: tiktoken did not run:", r["tiktoken_note"])
        else:
            check(r["same_ids_as_tiktoken"] is True, "bench: ids differ from tiktoken's")
            check(ratio >= 0.5, "bench: speed ratio %.2f < 0.5 of tiktoken" % ratio)
            print("bench tokenizer: %.2fx tiktoken's speed" % ratio)

    out = kvsearch("bench", "tokenizer", "--tokenizer", MISTRAL, "--words", "2000", "--json")
    r = json.loads(out.stdout) if out.returncode == 0 else {}
    check(r.get("speed_ratio_vs_tiktoken", 0) is None and "only with byte-level BPE" in r.get("tiktoken_note", ""),
          "bench on SentencePiece: %r %r" % (out.stdout, out.stderr))

    out = kvsearch("bench", "tokenizer", "--tokenizer", LLAMA3, "--words", "500", "--python", "/nonexistent/python3")
    check(out.returncode == 0 and "tiktoken   not run:" in out.stdout, "bench without python: %r" % out.stdout)

    finish()


if __name__ == "__main__":
    main()
