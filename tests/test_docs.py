#!/usr/bin/env python3
"""Docs that cannot drift: every file path and every `function()` that a note
or README names exists in the code, every step folder has its README and its
lecture note, every figure and every relative link a note shows exists, and
every generated results table matches its CSV.

    python3 tests/test_docs.py [repository root]
"""
import glob
import os
import re
import subprocess
import sys

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                       os.path.join(os.path.dirname(__file__), ".."))
CODE_EXT = (".c", ".h", ".cu", ".cuh", ".py", ".sh")
PATH_RE = re.compile(r"`([\w./-]+\.(?:c|h|cu|cuh|py|sh|md|json|csv|txt|cmake))`")
FUNC_RE = re.compile(r"`([A-Za-z_]\w*)\(\)`")
LINK_RE = re.compile(r"!?\[[^\]]*\]\(([^)#\s]+)(?:#[^)]*)?\)")
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg)


def tracked_files():
    out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"],
                         cwd=ROOT, capture_output=True, text=True)
    if out.returncode == 0 and out.stdout.strip():
        return [f for f in out.stdout.splitlines() if os.path.exists(os.path.join(ROOT, f))]
    return [os.path.relpath(f, ROOT) for f in glob.glob(os.path.join(ROOT, "**/*"), recursive=True)
            if os.path.isfile(f) and "/build" not in f]


def main():
    files = tracked_files()
    code = ""
    for f in files:
        if f.endswith(CODE_EXT) and not f.startswith("tests/test_docs"):
            with open(os.path.join(ROOT, f), errors="replace") as fh:
                code += fh.read() + "\n"
    # Templates (bench/performance_template.md) become notes only once their
    # data exist (scripts/regenerate_docs.sh); they are checked then.
    notes = sorted(f for f in files if f.endswith(".md") and not f.startswith(".")
                   and "/results/" not in f and not f.endswith("_template.md"))
    for note in notes:
        with open(os.path.join(ROOT, note)) as fh:
            text = fh.read()
        # fenced code blocks show commands and output, not references
        prose = re.sub(r"```.*?```", "", text, flags=re.DOTALL)
        base = os.path.dirname(note)
        step = os.path.splitext(os.path.basename(note))[0] if note.startswith("docs/") else base
        basenames = {os.path.basename(f) for f in files}
        for path in PATH_RE.findall(prose):
            if path.startswith(("build", "/")):
                continue
            candidates = [os.path.join(ROOT, path), os.path.join(ROOT, base, path),
                          os.path.join(ROOT, step, path)]
            found = any(os.path.exists(c) for c in candidates)
            # A bare file name in a general page ("each step's main.c") names a
            # file that every step has; in a step's note it must be that step's.
            if not found and "/" not in path and not re.match(r"^\d\d_", step):
                found = path in basenames
            if not found:
                fail(f"{note}: names `{path}`, which does not exist")
        for func in FUNC_RE.findall(prose):
            if not re.search(r"\b" + re.escape(func) + r"\s*\(", code):
                fail(f"{note}: names `{func}()`, which no source file defines or calls")
        for link in LINK_RE.findall(prose):
            if re.match(r"^[a-z]+:", link):
                continue
            if not os.path.exists(os.path.normpath(os.path.join(ROOT, base, link))):
                fail(f"{note}: links or shows '{link}', which does not exist")
    steps = sorted(d for d in os.listdir(ROOT)
                   if re.match(r"^\d\d_\w+$", d) and os.path.isdir(os.path.join(ROOT, d)))
    if not steps:
        fail("no step folders found")
    for step in steps:
        if not os.path.exists(os.path.join(ROOT, step, "README.md")):
            fail(f"{step}/ has no README.md")
        if not os.path.exists(os.path.join(ROOT, "docs", step + ".md")):
            fail(f"{step}/ has no lecture note docs/{step}.md")
        readme = os.path.join(ROOT, step, "README.md")
        if os.path.exists(readme) and f"docs/{step}.md" not in open(readme).read():
            fail(f"{step}/README.md does not point at docs/{step}.md")
    check = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "doc_tables.py"),
                            "--check"] + [os.path.join(ROOT, n) for n in notes if
                                          n.startswith("docs/")],
                           capture_output=True, text=True)
    if check.returncode != 0:
        fail("results tables are stale:\n" + check.stdout + check.stderr)
    print(f"{len(notes)} notes checked against {len(steps)} step folders")
    print(f"{'0 failed' if not failures else str(len(failures)) + ' failed'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
