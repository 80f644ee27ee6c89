"""selftest (the ctest entry exercises.selftest): the manifest agrees with the
markers and with the build's tests, the marker parser refuses malformed
regions, make writes a clean student tree, its leak check can fail, and check
--cpu passes for the CPU exercises."""
import os
import re
import sys
import tempfile

from . import check as check_mod
from . import manifest as mf
from . import markers
from . import runner
from . import tree

# Markers spelled in pieces, so that this file holds none itself.
OPEN, CLOSE = "/" + "*", "*" + "/"


def begin(ex_id):
    return f"{OPEN} exercise {ex_id} begin: t {CLOSE}"


def stub(ex_id):
    return f"{OPEN} exercise {ex_id} stub"


def end(ex_id):
    return f"   exercise {ex_id} end {CLOSE}"


MALFORMED = {
    "no stub": [begin("09-x"), "a = 1;", end("09-x")],
    "no end": [begin("09-x"), "a = 1;", stub("09-x"), "a = 0;"],
    "a stub line closing the comment": [begin("09-x"), "a = 1;", stub("09-x"),
                                        f"a = 0; {OPEN} no {CLOSE}", end("09-x")],
    "nested": [begin("09-x"), begin("09-y")],
    "another id's end": [begin("09-x"), "a = 1;", stub("09-x"), end("09-y")],
}


def criterion_tests(entry):
    """"suite/name" of every test of a Criterion binary (its --list)."""
    _, out = runner.run([entry["command"][0], "--list"], cwd=entry["cwd"])
    tests, suite = [], None
    for line in out.splitlines():
        m = re.match(r"^(\w+): \d+ tests?$", line)
        if m:
            suite = m.group(1)
        elif suite and re.match(r"^\W+\s*(\w+)$", line):
            tests.append(f"{suite}/{line.split()[-1]}")
    return tests


def step(what, problems, failures):
    print(f"selftest: {what}: {'ok' if not problems else 'FAILED'}", flush=True)
    for p in problems:
        print("    " + p)
    failures += problems


def selftest(root, build_dir=None, jobs=2, arch=None, run_check=True):
    failures = []
    build_dir = os.path.abspath(build_dir) if build_dir else None
    manifest = mf.load(root)
    regions = mf.scan(root)
    names = listed = None
    if build_dir:
        entries = runner.ctest_entries(build_dir)
        names = list(entries)
        listed = {n: criterion_tests(e) for n, e in entries.items() if runner.is_criterion(e)}
    step(f"manifest and markers agree ({len(manifest['exercises'])} exercises, "
         f"{sum(len(r) for r in regions.values())} regions"
         + (", tests named exist in the build)" if build_dir else ")"),
         mf.problems(root, manifest, regions, names, listed), failures)

    wrong = []
    sample = ["{", "    " + begin("09-x"), "    a = 1;", "    " + stub("09-x"),
              "        // TODO(exercise 09-x): a", "        a = 0;", "    " + end("09-x"), "}"]
    (region,) = markers.parse("sample.c", sample)
    if markers.render(sample, [region], {"09-x"}, False) != ["{", "    // TODO(exercise 09-x): a",
                                                              "    a = 0;", "}"]:
        wrong.append("the stub of a sample region is not put in place at the marker's indent")
    if markers.render(sample, [region], set(), False) != ["{", "    a = 1;", "}"]:
        wrong.append("the solution of a sample region is not kept without its markers")
    sys.path.insert(0, os.path.join(root, "scripts"))
    import doc_tables
    for path, rs in regions.items():
        lines = mf.read_lines(root, path)
        for r in rs:
            if doc_tables.without_exercise_markers(lines[r.begin:r.end + 1]) != r.solution:
                wrong.append(f"{path}:{r.begin + 1}: a code excerpt would not show exactly "
                             f"the solution of {r.id}")
    step("a region becomes its stub in a student tree and its solution in an excerpt", wrong,
         failures)

    refused = []
    for what, lines in MALFORMED.items():
        try:
            markers.parse("sample.c", lines)
            refused.append(f"a region with {what} was accepted")
        except markers.MarkerError:
            pass
    step("the marker parser refuses malformed regions", refused, failures)

    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "student")
        try:
            made = tree.make(root, out)
            problems = []
        except tree.LeakError as e:
            made, problems = None, str(e).splitlines()
        if made:
            for path in mf.INSTRUCTOR_ONLY:
                if os.path.exists(os.path.join(out, path)):
                    problems.append(f"{path} is in the student tree")
            stubs = sum(1 for _, text in tree.text_files(out) for _ in
                        re.finditer(r"TODO\(exercise ([\w-]+)\)", text))
            if stubs < len(manifest["exercises"]):
                problems.append(f"only {stubs} TODO(exercise ...) lines in the student tree")
        step("make writes a student tree with every stub, no marker and no solution line",
             problems, failures)
        if made:
            step("the leak check finds a solution line planted in a note and in a source",
                 tree.plant_and_find(root, out), failures)
    if run_check:
        scratch = os.path.join(build_dir or os.path.join(root, "build"), "exercise-check")
        rc = check_mod.check(root, cpu_only=True, jobs=jobs, arch=arch, scratch=scratch)
        step("check --cpu: each CPU exercise's stub fails its own tests and nothing else",
             [] if rc == 0 else ["check --cpu failed (above)"], failures)
    print(f"selftest: {'all passed' if not failures else str(len(failures)) + ' problems'}")
    return 0 if not failures else 1
