#!/usr/bin/env python3
"""Extracts llhttp's response test cases into responses.json for the codec
test (crates/engine/tests/engine/llhttp.rs).

    python3 crates/engine/tests/llhttp/extract.py LLHTTP_CHECKOUT

Run once against a checkout of https://github.com/nodejs/llhttp (the tag is
recorded in the output); the JSON is committed. Only strict-mode cases of
type "response" are taken: lenient modes, pauses, skipBody and "finish"
cases test llhttp's options, not HTTP. Inputs are decoded as llhttp's own
test runner (test/md-test.ts) decodes them; cases with inline JavaScript
are skipped. Each case keeps llhttp's verdict: the error code it reported,
or none, and how many messages completed.
"""
import json
import re
import subprocess
import sys


def decode(block: str) -> bytes:
    s = re.sub(r"\n$", "", block)
    s = re.sub(r"\\(\r\n|\r|\n)", "", s)
    s = re.sub(r"\r\n|\r|\n", "\r\n", s)
    s = s.replace("\\r", "\r").replace("\\n", "\n").replace("\\t", "\t").replace("\\f", "\f")
    s = re.sub(r"\\x([0-9a-fA-F]+)", lambda m: chr(int(m.group(1), 16)), s)
    s = re.sub(r"\\([0-7]{1,3})", lambda m: chr(int(m.group(1), 8)), s)
    return s.encode("latin-1")


def cases(path: str, text: str):
    lines = text.split("\n")
    name, i = None, 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("## "):
            name = line[3:].strip()
        m = re.match(r"<!-- meta=(\{.*\}) -->", line)
        if m:
            meta = json.loads(m.group(1))
            start = i + 1
            assert lines[start].startswith("```http"), (path, start)
            end = lines.index("```", start + 1)
            block = "\n".join(lines[start + 1:end]) + "\n"
            log_start = next(k for k in range(end + 1, len(lines)) if lines[k].startswith("```log"))
            log_end = lines.index("```", log_start + 1)
            log = lines[log_start + 1:log_end]
            i = log_end
            if meta.get("type") != "response" or set(meta) - {"type", "noScan"}:
                continue
            if "${" in block:
                continue
            errors = [re.search(r"error code=(\d+) reason=\"(.*)\"", l) for l in log]
            errors = [f"{e.group(1)}: {e.group(2)}" for e in errors if e]
            yield {
                "name": name or f"{path}:{start}",
                "at": f"{path}:{start}",
                "input": decode(block).hex(),
                "error": errors[0] if errors else None,
                "messages": sum("message complete" in l for l in log),
            }
        i += 1


def main():
    repo = sys.argv[1]
    git = lambda *a: subprocess.run(["git", "-C", repo, *a], capture_output=True, text=True, check=True).stdout
    tag = git("describe", "--tags", "--always").strip()
    files = sorted(f for f in git("ls-tree", "-r", "--name-only", "HEAD", "test/response").split() if f.endswith(".md"))
    out = []
    for f in files:
        out.extend(cases(f, git("show", f"HEAD:{f}")))
    json.dump({"source": f"nodejs/llhttp {tag}", "cases": out}, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
