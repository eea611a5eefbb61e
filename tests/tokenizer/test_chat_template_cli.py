"""`--chat-template auto` end to end: `kvsearch generate` on SmolLM2-135M-Instruct (the GGUF file
found by its registered name) recognises the file's own template (ChatML behind SmolLM2's default
system turn) and answers the capital of France; an unknown template is refused by name."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from kvs_testing import check, error_output, finish, kvsearch  # noqa: E402


def main():
    out = kvsearch("generate", "--model", "smollm2-135m", "--prompt",
                   "What is the capital of France? Answer in one word.",
                   "--chat-template", "auto", "--max-new-tokens", "8")
    check(out.returncode == 0 and "Paris" in out.stdout,
          "generate: rc %d, stdout %r, stderr %r" % (out.returncode, out.stdout, out.stderr[-500:]))
    print(out.stdout.strip())

    out = kvsearch("generate", "--model", "smollm2-135m", "--prompt", "Hi", "--chat-template", "vicuna")
    _, problems = error_output(out, prefix=None, mentions=("vicuna", "smollm2"))
    check(not problems, "unknown template: rc %d, stderr %r" % (out.returncode, out.stderr))
    finish(passed="ok")


if __name__ == "__main__":
    main()
