#!/usr/bin/env python3
"""Docs that cannot drift:
  - every file path and every `function()` that a note or README names exists
    in the code, every figure and relative link a note shows exists;
  - every step folder has its README and its lecture note; every step note
    has the parts of the learning path (what you will learn, before you
    start, run it, your turn, questions), previous/next links, at least two
    drawn figures, and cites docs/sources.md; its "run it" commands write
    only to scratch paths;
  - every step note has a "Your turn" section (before its questions) that
    names each exercise of the step in exercises/manifest.json and the tests
    that grade it there, and every test it names exists: a Criterion suite
    (`gpu_*`, `cpu_*`), a `suite/test` or `suite/glob*`, a bare test name
    (snake case, four words or more), a test file, a ctest entry;
  - every generated table, every measured number in the prose and every code
    excerpt of the notes (the lab notes of docs/lab/ too) and of README.md
    matches its CSV or its source (scripts/doc_tables.py --check);
  - no text in the repository speaks about how it was made (seed numbers,
    issues, sessions).
With --self-test it proves that these checks fail: it plants a stale number,
a stale code excerpt, such a word and tests that do not exist (in a "Your
turn" section) in a copy of the repository.

    python3 tests/test_docs.py [repository root] [--self-test]
"""
import fnmatch
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

CODE_EXT = (".c", ".h", ".cu", ".cuh", ".py", ".sh")
PATH_RE = re.compile(r"`([\w./-]+\.(?:c|h|cu|cuh|py|sh|md|json|csv|txt|cmake))`")
FUNC_RE = re.compile(r"`([A-Za-z_]\w*)\(\)`")
LINK_RE = re.compile(r"!?\[[^\]]*\]\(([^)#\s]+)(?:#[^)]*)?\)")
# a link into a Markdown file at an anchor: (file.md#anchor), or (#anchor) in the same note
ANCHOR_RE = re.compile(r"\]\(([^)#\s]*\.md|)#([^)\s]+)\)")


def anchors_of(path):
    """The anchors a Markdown file offers: GitHub's slug of each heading
    (lower case, punctuation dropped, spaces as '-', repeats numbered) and
    every explicit id= or name= of an HTML tag."""
    with open(path) as f:
        text = re.sub(r"```.*?```", "", f.read(), flags=re.DOTALL)
    found, seen = set(re.findall(r'\b(?:id|name)="([^"]+)"', text)), {}
    for heading in re.findall(r"^#{1,6}\s+(.*?)\s*#*\s*$", text, re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        found.add(slug if n == 0 else f"{slug}-{n}")
    return found
FIGURE_RE = re.compile(r"!\[[^\]]*\]\((figures/[^)\s]+\.png)\)")
# Words about how the repository was made, which students cannot follow.
JARGON = re.compile(r"\bseeds? ?0\d\d\b|\bseeds 0\d\d|\bsessions?\b|\bissue #?\d+\b"
                    r"|\bthe issues? (?:quotes?|asks?|says|wants|requires|targets?)\b"
                    r"|\btargets? of (?:the )?issues?\b|\bthe 3x bar\b|\b90% target\b",
                    re.IGNORECASE)
TEXT_EXT = (".md", ".c", ".h", ".cu", ".cuh", ".py", ".sh", ".txt", ".csv", ".json", ".cmake")
PARTS = ["## What you will learn", "## Before you start", "## Run it", "## Your turn",
         "## Questions"]
# Criterion tests: Test(suite, name) and ParameterizedTest(..., suite, name);
# a name built by a macro (nchw_##tag##_...) is expanded at each use of it.
TEST_DEF = re.compile(r"\b(?:Parameterized)?Test\(\s*(?:[^,()]+,\s*)?(\w+)\s*,\s*([\w#]+)")
MACRO_DEF = re.compile(r"^#define\s+(\w+)\(([^)]*)\)((?:.*\\\n)*.*)", re.MULTILINE)
# What a "Your turn" section names, in backticks.
SUITE_TOKEN = re.compile(r"^((?:gpu|cpu)_[a-z0-9_]+)$")
SUITE_TEST_TOKEN = re.compile(r"^([a-z][a-z0-9_]*)/([a-z0-9_*]+)$")
TEST_NAME_TOKEN = re.compile(r"^[a-z][a-z0-9]*(?:_[a-z0-9]+){3,}$")
TEST_FILE_TOKEN = re.compile(r"^tests/[\w.-]+$")


def tracked_files(root):
    out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"],
                         cwd=root, capture_output=True, text=True)
    if out.returncode == 0 and out.stdout.strip():
        return [f for f in out.stdout.splitlines() if os.path.exists(os.path.join(root, f))]
    return [os.path.relpath(f, root) for f in glob.glob(os.path.join(root, "**/*"), recursive=True)
            if os.path.isfile(f) and "/build" not in f]


def withheld_paths(root):
    """What a student tree leaves out of the solution tree (scripts/exercises.py
    lists it in exercises/withheld.txt there): the notes may still name it."""
    listed = os.path.join(root, "exercises", "withheld.txt")
    if not os.path.exists(listed):
        return ()
    with open(listed) as f:
        return tuple(l.strip() for l in f if l.strip() and not l.startswith("#"))


def check_common_includes(root):
    """common/ is below every step: none of its files includes a step's file,
    and its modules (a .h with its .c or .cu) include one another without a
    cycle. Returns the failures."""
    failures = []
    common = os.path.join(root, "common")
    names = sorted(f for f in os.listdir(common) if f.endswith((".c", ".h", ".cu", ".cuh")))
    step_files = {os.path.basename(f) for f in glob.glob(os.path.join(root, "[0-9][0-9]_*", "**",
                                                                      "*.*h"), recursive=True)}
    uses = {}
    for name in names:
        module = os.path.splitext(name)[0]
        with open(os.path.join(common, name)) as f:
            for inc in re.findall(r'^\s*#\s*include\s+"([^"]+)"', f.read(), re.M):
                if os.path.exists(os.path.join(common, inc)):
                    if os.path.splitext(inc)[0] != module:
                        uses.setdefault(module, set()).add(os.path.splitext(inc)[0])
                elif os.path.basename(inc) in step_files:
                    failures.append(f"common/{name} includes a step's file {inc}")
    # a cycle: a module that reaches itself
    for start in sorted(uses):
        path, seen = [start], set()

        def walk(module):
            for nxt in sorted(uses.get(module, ())):
                if nxt == start:
                    return path + [start]
                if nxt not in seen:
                    seen.add(nxt)
                    path.append(nxt)
                    found = walk(nxt)
                    if found:
                        return found
                    path.pop()
            return None

        cycle = walk(start)
        if cycle and min(cycle) == start:  # each cycle once, from its first module
            failures.append("common/ include cycle: " + " -> ".join(cycle))
    return failures


def check_tree(root):
    failures = check_common_includes(root)
    fail = failures.append
    files = tracked_files(root)
    withheld = withheld_paths(root)
    code = ""
    for f in files:
        if f.endswith(CODE_EXT) and not f.startswith("tests/test_docs"):
            with open(os.path.join(root, f), errors="replace") as fh:
                code += fh.read() + "\n"
    # every name that some source file defines or calls: name(
    called = set(re.findall(r"\b([A-Za-z_]\w*)\s*\(", code))
    notes = sorted(f for f in files if f.endswith(".md") and not f.startswith(".")
                   and "/results/" not in f and not f.endswith("_template.md"))
    basenames = {os.path.basename(f) for f in files}
    steps = sorted(d for d in os.listdir(root)
                   if re.match(r"^\d\d_\w+$", d) and os.path.isdir(os.path.join(root, d)))
    for note in notes:
        with open(os.path.join(root, note)) as fh:
            text = fh.read()
        prose = re.sub(r"```.*?```", "", text, flags=re.DOTALL)
        base = os.path.dirname(note)
        step = os.path.splitext(os.path.basename(note))[0] if note.startswith("docs/") else base
        for path in PATH_RE.findall(prose):
            if path.startswith(("build", "/")):
                continue
            candidates = [os.path.join(root, path), os.path.join(root, base, path),
                          os.path.join(root, step, path)]
            found = any(os.path.exists(c) or (withheld and os.path.relpath(
                os.path.normpath(c), root).startswith(withheld)) for c in candidates)
            # A bare file name in a general page ("each step's main.c") names a
            # file that every step has; in a step's note it must be that step's.
            if not found and "/" not in path and not re.match(r"^\d\d_", step):
                found = path in basenames
            if not found:
                fail(f"{note}: names `{path}`, which does not exist")
        for func in FUNC_RE.findall(prose):
            if func not in called:
                fail(f"{note}: names `{func}()`, which no source file defines or calls")
        for link in LINK_RE.findall(prose):
            if re.match(r"^[a-z]+:", link):
                continue
            target = os.path.normpath(os.path.join(root, base, link))
            if withheld and os.path.relpath(target, root).startswith(withheld):
                continue
            if not os.path.exists(target):
                fail(f"{note}: links or shows '{link}', which does not exist")
        for target, anchor in ANCHOR_RE.findall(prose):
            path = os.path.normpath(os.path.join(root, base, target)) if target else \
                os.path.join(root, note)
            if os.path.exists(path) and anchor not in anchors_of(path):
                fail(f"{note}: links '{target}#{anchor}', an anchor {target or 'the note'} "
                     "does not have")
        # a step's lecture note is docs/<step>.md; its lab note, docs/lab/<step>.md,
        # is an appendix of experiments, without the learning path's parts
        if note.startswith("docs/") and os.path.dirname(note) == "docs" and step in steps:
            check_step_note(note, text, steps.index(step), steps, fail)
            check_your_turn(root, note, text, step, fail)
    for step in steps:
        if not os.path.exists(os.path.join(root, step, "README.md")):
            fail(f"{step}/ has no README.md")
        if not os.path.exists(os.path.join(root, "docs", step + ".md")):
            fail(f"{step}/ has no lecture note docs/{step}.md")
        readme = os.path.join(root, step, "README.md")
        if os.path.exists(readme) and f"docs/{step}.md" not in open(readme).read():
            fail(f"{step}/README.md does not point at docs/{step}.md")
    for f in files:
        if f.endswith(TEXT_EXT) or os.path.basename(f) == "CMakeLists.txt":
            with open(os.path.join(root, f), errors="replace") as fh:
                for i, line in enumerate(fh, 1):
                    m = JARGON.search(line)
                    if m and not f.startswith("tests/test_docs"):
                        fail(f"{f}:{i}: '{m.group(0)}' speaks about how the repository was made")
    check = subprocess.run([sys.executable, os.path.join(root, "scripts", "doc_tables.py"),
                            "--check"] + [os.path.join(root, n) for n in notes if
                                          n.startswith(("docs/", "instructor/answers/"))
                                          or n == "README.md"],
                           capture_output=True, text=True, cwd=root)
    if check.returncode != 0:
        fail("tables, numbers or code excerpts are stale:\n" + check.stdout + check.stderr)
    # the performance page is written from its template (scripts/regenerate_docs.sh)
    template = os.path.join("bench", "performance_template.md")
    if os.path.exists(os.path.join(root, template)):
        same = subprocess.run([sys.executable, os.path.join(root, "scripts", "doc_tables.py"),
                               "--template", template, os.path.join("docs", "performance.md")],
                              capture_output=True, text=True, cwd=root)
        if same.returncode != 0:
            fail("docs/performance.md was edited apart from bench/performance_template.md:\n"
                 + same.stdout + same.stderr)
    print(f"{len(notes)} notes checked against {len(steps)} step folders")
    return failures


def check_step_note(note, text, index, steps, fail):
    """The learning path of one step's note."""
    for part in PARTS:
        if part not in text:
            fail(f"{note}: has no section '{part}'")
    if index > 0 and f"({steps[index - 1]}.md)" not in text:
        fail(f"{note}: does not link the previous note {steps[index - 1]}.md")
    if index + 1 < len(steps) and f"({steps[index + 1]}.md)" not in text:
        fail(f"{note}: does not link the next note {steps[index + 1]}.md")
    if len(set(FIGURE_RE.findall(text))) < 2:
        fail(f"{note}: shows fewer than two drawn figures (docs/figures/)")
    if "(sources.md" not in text:
        fail(f"{note}: does not cite docs/sources.md")
    for lang, block in re.findall(r"```(\w*)\n(.*?)```", text, flags=re.DOTALL):
        if lang not in ("", "sh", "bash"):
            continue
        for m in re.finditer(r"--(?:csv|json)\s+(\S+)", block):
            if not m.group(1).startswith(("/tmp/", "$TMPDIR", "${TMPDIR", "\"$TMPDIR", "scratch/")):
                fail(f"{note}: a command writes {m.group(1)}; run-it commands write to /tmp")


def criterion_tests(root):
    """{suite: {test name}} of the Criterion tests in tests/*.c."""
    suites = {}
    for path in sorted(glob.glob(os.path.join(root, "tests", "*.c"))):
        with open(path, errors="replace") as f:
            text = f.read()
        for suite, name in TEST_DEF.findall(text):
            if "##" not in name:
                suites.setdefault(suite, set()).add(name)
        for macro, params, body in MACRO_DEF.findall(text):
            params = [p.strip() for p in params.split(",")]
            made = TEST_DEF.findall(body)
            for use in re.finditer(r"^\s*" + macro + r"\(([^)]*)\)", text, re.MULTILINE):
                args = dict(zip(params, (a.strip() for a in use.group(1).split(","))))
                for suite, name in made:
                    name = "".join(args.get(piece.strip(), piece) for piece in name.split("##"))
                    suites.setdefault(suite, set()).add(name)
    return suites


def section(text, title):
    """The lines of a note's section '## title' (fenced code left out), or None."""
    lines, found, fence = [], False, False
    for line in text.splitlines():
        if line.startswith("```"):
            fence = not fence
            continue
        if fence:
            continue
        if line.startswith("## "):
            if found:
                break
            found = line.strip() == "## " + title
            continue
        if found:
            lines.append(line)
    return "\n".join(lines) if found else None


def check_your_turn(root, note, text, step, fail):
    """A step note's "Your turn": it comes before the questions, names every
    exercise of the step (exercises/manifest.json) and the tests that grade
    it, and every test it names exists."""
    body = section(text, "Your turn")
    if body is None:
        return  # check_step_note reports the missing section
    questions = text.find("\n## Questions")
    if questions >= 0 and text.index("\n## Your turn") > questions:
        fail(f"{note}: \"Your turn\" must come before \"Questions\"")
    manifest_path = os.path.join(root, "exercises", "manifest.json")
    if not os.path.exists(manifest_path):
        fail(f"{note}: exercises/manifest.json is missing")
        return
    with open(manifest_path) as f:
        manifest = json.load(f)
    suites = criterion_tests(root)
    tests = {n for names in suites.values() for n in names}
    ctests = set(manifest.get("shared_gpu_tests", []))
    for ex in manifest["exercises"].values():
        ctests |= {t["ctest"] for t in ex.get("tests", []) + ex.get("also_runs", [])}
    labels = {c.rsplit(".", 1)[1] for c in ctests if "." in c}
    tokens = set(re.findall(r"`([^`\n]+)`", body))
    here = "\"Your turn\""

    for ex_id, ex in manifest["exercises"].items():
        if ex["step"] != step[:2]:
            continue
        if not re.search(r"(?<![\w-])" + re.escape(ex_id) + r"(?![\w-])", body):
            fail(f"{note}: {here} does not name exercise {ex_id}")
        for graded in ex.get("tests", []):
            filt = graded.get("filter")
            if filt is None:
                wanted = {graded["ctest"]}
            elif filt.endswith("/*"):
                wanted = {filt, filt[:-2]}
            else:
                wanted = {filt}
            if not wanted & tokens:
                fail(f"{note}: {here} does not name `{sorted(wanted)[0]}`, which grades {ex_id}")

    for token in sorted(tokens):
        m = SUITE_TEST_TOKEN.match(token)
        if m and not os.path.exists(os.path.join(root, token)):
            suite, pattern = m.groups()
            if suite not in suites:
                fail(f"{note}: {here} names `{token}`, but there is no Criterion suite {suite}")
            elif not fnmatch.filter(suites[suite], pattern):
                fail(f"{note}: {here} names `{token}`, which matches no test of suite {suite}")
        elif SUITE_TOKEN.match(token):
            if token not in suites:
                fail(f"{note}: {here} names `{token}`, which is no Criterion suite in tests/")
        elif TEST_NAME_TOKEN.match(token):
            if token not in tests:
                fail(f"{note}: {here} names `{token}`, which is no Criterion test in tests/")
        elif TEST_FILE_TOKEN.match(token):
            if not os.path.exists(os.path.join(root, token)):
                fail(f"{note}: {here} names `{token}`, which does not exist")
        elif "." in token and token.rsplit(".", 1)[1] in labels and " " not in token:
            if token not in ctests:
                fail(f"{note}: {here} names `{token}`, which is no ctest entry of "
                     "exercises/manifest.json")


# One number of the tuning log that note 06 quotes, planted by the self-test.
TUNE_LOG = os.path.join("instructor", "logs", "06_tune_6e.txt")
TUNE_SELECTOR = ('heading="tune_6e.cu on 45fe6a2" block="GEMM 4096 4096 4096" '
                 'line=bm64_tm8_bk16_minb3_wr4 find="([0-9.]+)% of cuBLAS"')


# The README's times, a CSV whose rows are picked by another column (what=).
TIMINGS = os.path.join("bench", "results", "timings_cpu.csv")


# Two metrics every step 08 profile has, for a planted per= ratio.
RATIO = ("smsp__issue_active.avg.pct_of_peak_sustained_active",
         "sm__warps_active.avg.pct_of_peak_sustained_active")


def self_test(root):
    """Each check must be able to fail: plant one stale thing at a time in a
    copy of the repository and expect a failure naming it."""
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        copy = os.path.join(tmp, "repo")
        shutil.copytree(root, copy, ignore=shutil.ignore_patterns("build*", ".git", ".device"))
        # a note with one number and one excerpt of its own, generated, then planted
        src = os.path.join(copy, "docs", "plant.c")
        with open(src, "w") as f:
            f.write("/* excerpt: plant */\nint plant(void) { return 1; }\n/* excerpt end: plant */\n")
        csvs = sorted(glob.glob(os.path.join(copy, "bench", "results", "0*.csv")))
        csv_rel = os.path.relpath(csvs[0], copy)
        with open(csvs[0]) as f:
            rows = [l for l in f.read().splitlines() if l and not l.startswith("#")]
        version = rows[1].split('"')[1] if '"' in rows[1] else rows[1].split(",")[0]
        ncu_logs = sorted(glob.glob(os.path.join(copy, "bench", "results", "logs", "08_ncu_*.txt")))
        ncu_rel = os.path.relpath(ncu_logs[0], copy) if ncu_logs else None
        # a report of ncu's named sections, read by a row's display name
        reports = [p for p in sorted(glob.glob(os.path.join(copy, "bench", "results", "logs",
                                                           "*ncu*.txt")))
                   if "Section: GPU Speed Of Light Throughput" in open(p).read()]
        report_rel = os.path.relpath(reports[0], copy) if reports else None
        note = os.path.join(copy, "docs", "plant.md")
        with open(note, "w") as f:
            f.write(f"Took <!-- value: {csv_rel} version=\"{version}\" median_ms -->0.000"
                    "<!-- /value --> ms.\n\n<!-- code: docs/plant.c plant -->\n<!-- /code -->\n")
            if ncu_rel:
                f.write(f"\nUsed <!-- value: {ncu_rel} metric=launch__registers_per_thread -->0"
                        "<!-- /value --> registers.\n")
                f.write(f"\nIssued <!-- value: {ncu_rel} metric={RATIO[0]} per={RATIO[1]} -->0.000"
                        "<!-- /value --> issue slots per warp slot.\n")
            if report_rel:
                f.write(f"\nLasted <!-- value: {report_rel} row=\"Duration\" section=\"GPU Speed "
                        "Of Light Throughput\" -->0.00<!-- /value --> units.\n")
            if os.path.exists(os.path.join(copy, TUNE_LOG)):
                f.write(f"\nReached <!-- value: {TUNE_LOG} {TUNE_SELECTOR} -->0.0<!-- /value -->%.\n")
            if os.path.exists(os.path.join(copy, TIMINGS)):
                f.write(f"\nBuilt in <!-- value: {TIMINGS} what=\"run\" median_s -->0.0"
                        "<!-- /value --> s.\n")
        gen = subprocess.run([sys.executable, os.path.join(copy, "scripts", "doc_tables.py"), note],
                             capture_output=True, text=True, cwd=copy)
        good = open(note).read()

        cases = []

        def expect(what, planted, needle, path=note, tag="plant"):
            """A case: planted written to path, the failures whose line holds tag
            and needle expected (none where needle is empty)."""
            cases.append((what, planted, needle, path, tag))

        def run_case(number, what, planted, needle, path, tag):
            nonlocal ok
            with open(path) as f:
                before = f.read()
            with open(path, "w") as f:
                f.write(planted)
            with tempfile.TemporaryFile("w+") as sink:
                old = sys.stdout
                sys.stdout = sink
                try:
                    found = [line for f in check_tree(copy) for line in f.splitlines()
                             if tag in line and needle in line]
                finally:
                    sys.stdout = old
                    with open(path, "w") as f:
                        f.write(before)
            caught = bool(found) == (needle != "")
            print(f"self-test {number} of {len(cases)}: {what}: "
                  f"{'as expected' if caught else 'WRONG'}", flush=True)
            ok &= caught

        if gen.returncode != 0 or "0.000<" in good or "return 1" not in good:
            print("self-test: the planted note was not generated:", gen.stdout, gen.stderr)
            return 1
        expect("the generated note (nothing planted)", good, "")
        number = re.search(r"-->([0-9.]+)<!-- /value", good).group(1)
        changed = f"{float(number) + 1:.{len(number.split('.')[1]) if '.' in number else 0}f}"
        expect("a changed prose number", good.replace(f"-->{number}<!--", f"-->{changed}<!--"),
               "stale")
        if ncu_rel:
            regs = re.search(r"registers_per_thread -->([0-9]+)<!-- /value", good).group(1)
            expect("a changed profile number",
                   good.replace(f"registers_per_thread -->{regs}<!--",
                                f"registers_per_thread -->{int(regs) + 1}<!--"), "stale")
            ratio = re.search(r"per=[a-z_.]+ -->([0-9.]+)<!-- /value", good).group(1)
            expect("a changed ratio of two profile numbers",
                   good.replace(f"per={RATIO[1]} -->{ratio}<!--",
                                f"per={RATIO[1]} -->{float(ratio) + 1:.3f}<!--"), "stale")
        if report_rel:
            lasted = re.search(r'Throughput" -->([0-9.]+)<!-- /value', good).group(1)
            expect("a changed number of a report's section",
                   good.replace(f'Throughput" -->{lasted}<!--',
                                f'Throughput" -->{float(lasted) + 1:.2f}<!--'), "stale")
        if os.path.exists(os.path.join(copy, TUNE_LOG)):
            reached = re.search(r'cuBLAS" -->([0-9.]+)<!-- /value', good).group(1)
            expect("a changed number of a tuning log",
                   good.replace(f'cuBLAS" -->{reached}<!--',
                                f'cuBLAS" -->{float(reached) + 1:.1f}<!--'), "stale")
        if os.path.exists(os.path.join(copy, TIMINGS)):
            built = re.search(r'median_s -->([0-9.]+)<!-- /value', good).group(1)
            expect("a changed number of a row picked by another column than version",
                   good.replace(f'median_s -->{built}<!--',
                                f'median_s -->{float(built) + 1:.1f}<!--'), "stale")
        expect("a changed code excerpt", good.replace("return 1;", "return 2;"), "stale")
        answer = os.path.join(copy, "instructor", "answers", "02.md")
        if os.path.exists(answer):  # a student tree has no answers
            with open(answer) as f:
                said = f.read()
            value = re.search(r"-->([0-9]+\.[0-9]+)<!-- /value", said).group(1)
            wrong = f"{float(value) + 1:.{len(value.split('.')[1])}f}"
            expect("a changed number in an instructor's answer",
                   said.replace(f"-->{value}<!-- /value", f"-->{wrong}<!-- /value", 1),
                   "stale", answer, "answers/02.md")
        cuda_h = os.path.join(copy, "common", "conv_cuda.h")
        with open(cuda_h) as f:
            cuda_text = f.read()
        expect("an include cycle in common/",
               cuda_text.replace('#include "conv_status.h"',
                                 '#include "conv_status.h"\n#include "conv_device.h"'),
               "conv_cuda", cuda_h, "include cycle")
        expect("a step's header included by common/",
               cuda_text.replace('#include "conv_status.h"',
                                 '#include "conv_status.h"\n#include "conv_naive.h"'),
               "conv_naive.h", cuda_h, "includes a step")
        expect("'seed 000' in a note", good + "\nAs seed 000 says.\n", "seed 000")
        expect("a link to an entry the sources do not have",
               good + "\nSee [the planted source](sources.md#planted-entry).\n", "planted-entry")
        expect("a link to a heading the note does not have",
               good + "\nSee [below](#planted-heading).\n", "planted-heading")
        expect("an unmarked measured time", good + "\nIt takes 1.25 ms.\n", "1.25 ms")
        page = os.path.join(copy, "docs", "performance.md")
        if os.path.exists(os.path.join(copy, "bench", "performance_template.md")):
            with open(page) as f:
                shown = f.read()
            expect("the performance page as its template gives it", shown, "",
                   page, "performance_template")
            expect("a sentence added to the performance page alone",
                   shown.replace("\n## ", "\nA planted sentence.\n\n## ", 1),
                   "planted sentence", page, "performance_template")

        # "Your turn" of a step note: tests named there must exist, and every
        # exercise of the step must be named.
        step_note = os.path.join(copy, "docs", "01_cpu_serial.md")
        tag = "docs/01_cpu_serial.md"
        with open(step_note) as f:
            mine = f.read()

        def with_line(line):
            return mine.replace("\n## Questions\n", "\n" + line + "\n\n## Questions\n", 1)

        expect("the step note's Your turn (nothing planted)", mine, "", step_note, tag)
        for what, token in [("a test name", "matches_the_planted_reference_exactly"),
                            ("a suite", "cpu_planted"),
                            ("a suite/test filter", "cpu_serial/planted_*"),
                            ("a test file", "tests/test_01_planted.c"),
                            ("a ctest entry", "01_planted.program")]:
            expect(f"{what} that does not exist, named in Your turn",
                   with_line(f"Also run `{token}`."), f"`{token}`", step_note, tag)
        yours = mine[mine.index("\n## Your turn"):mine.index("\n## Questions")]
        expect("an exercise of the step left out of Your turn",
               mine.replace(yours, yours.replace("01-conv1d", "the 1D one")),
               "exercise 01-conv1d", step_note, tag)
        expect("a grading suite left out of Your turn",
               mine.replace(yours, yours.replace("`cpu_conv1d`", "the 1D suite")),
               "`cpu_conv1d`", step_note, tag)
        for number, case in enumerate(cases, 1):
            run_case(number, *case)
    return 0 if ok else 1


def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    root = os.path.abspath(args[0] if args else os.path.join(os.path.dirname(__file__), ".."))
    if "--self-test" in argv:
        return self_test(root)
    failures = check_tree(root)
    for f in failures:
        print("FAIL:", f)
    print(f"{'0 failed' if not failures else str(len(failures)) + ' failed'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
