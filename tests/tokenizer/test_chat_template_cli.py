"""`--chat-template auto` end to end: `kvsearch generate` on SmolLM2-135M-Instruct (the GGUF file
found by its registered name) recognises the file's own template (ChatML behind SmolLM2's default
system turn) and answers the capital of France; an unknown template is refused by name."""
import os
import subprocess
import sys

BIN = os.environ["KVSEARCH_BIN"]

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)


def main():
    out = subprocess.run([BIN, "generate", "--model", "smollm2-135m", "--prompt",
                          "What is the capital of France? Answer in one word.",
                          "--chat-template", "auto", "--max-new-tokens", "8"],
                         capture_output=True, text=True, encoding="utf-8")
    check(out.returncode == 0 and "Paris" in out.stdout,
          "generate: rc %d, stdout %r, stderr %r" % (out.returncode, out.stdout, out.stderr[-500:]))
    print(out.stdout.strip())

    out = subprocess.run([BIN, "generate", "--model", "smollm2-135m", "--prompt", "Hi",
                          "--chat-template", "vicuna"], capture_output=True, text=True)
    lines = out.stderr.strip().splitlines()
    check(out.returncode == 1 and len(lines) == 1 and "vicuna" in lines[0] and "smollm2" in lines[0],
          "unknown template: rc %d, stderr %r" % (out.returncode, out.stderr))

    for f in failures:
        print("FAIL:", f)
    if failures:
        sys.exit(1)
    print("ok")


if __name__ == "__main__":
    main()
