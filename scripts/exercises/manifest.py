"""exercises/manifest.json and the tree it describes: which files hold which
regions, which tests grade which exercise, and the consistency of the two."""
import fnmatch
import json
import os
import subprocess

from . import markers

MANIFEST = os.path.join("exercises", "manifest.json")
# Left out of a student tree: the instructor's folder, as a whole (the answers
# to the notes' questions, the tuning harness and the tuning and experiment
# logs; instructor/README.md). The profiles and cuDNN search logs that the notes
# quote (bench/results/logs/) go to the students with the notes.
INSTRUCTOR_ONLY = ["instructor/"]
WITHHELD = os.path.join("exercises", "withheld.txt")


def load(root):
    with open(os.path.join(root, MANIFEST)) as f:
        return json.load(f)


def tree_files(root):
    """The files of a tree: git's tracked and untracked-but-not-ignored files
    in a git checkout, else every file outside build folders."""
    out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"],
                         cwd=root, capture_output=True, text=True)
    if out.returncode == 0 and out.stdout.strip() and os.path.exists(os.path.join(root, ".git")):
        return sorted(f for f in out.stdout.splitlines() if os.path.isfile(os.path.join(root, f)))
    files = []
    for d, subdirs, names in os.walk(root):
        rel = os.path.relpath(d, root)
        subdirs[:] = [s for s in subdirs if not s.startswith(("build", ".git", "__pycache__"))]
        files += [os.path.normpath(os.path.join(rel, n)) for n in names]
    return sorted(files)


def instructor_only(path):
    return any(path == p or path.startswith(p) for p in INSTRUCTOR_ONLY)


def read_lines(root, path):
    with open(os.path.join(root, path)) as f:
        return f.read().split("\n")


def scan(root, files=None):
    """Every region of the tree's sources: {path: [Region, ...]}."""
    found = {}
    for path in files if files is not None else tree_files(root):
        if path.endswith(markers.SOURCE_EXT):
            regions = markers.parse(path, read_lines(root, path))
            if regions:
                found[path] = regions
    return found


def by_id(regions):
    ids = {}
    for path, rs in regions.items():
        for r in rs:
            ids.setdefault(r.id, []).append(r)
    return ids


def select(manifest, steps=None, ids=None):
    """The exercise ids of the manifest in the given steps ("02-04", "01,03")
    or with the given ids, in manifest order."""
    chosen = []
    wanted = set()
    for part in (steps or "").split(","):
        if "-" in part:
            lo, hi = part.split("-")
            wanted |= {f"{s:02d}" for s in range(int(lo), int(hi) + 1)}
        elif part:
            wanted.add(f"{int(part):02d}")
    for ex_id, ex in manifest["exercises"].items():
        if (not wanted or ex["step"] in wanted) and (not ids or ex_id in ids):
            chosen.append(ex_id)
    return chosen


def tests_of(ex):
    """(ctest name, filter or None) of every test that grades an exercise."""
    return [(t["ctest"], t.get("filter")) for t in ex["tests"]]


def also_of(manifest, ex):
    """The same for the tests that run the exercise among other code."""
    also = [(t["ctest"], t.get("filter")) for t in ex.get("also_runs", [])]
    if ex["gpu"]:
        also += [(name, None) for name in manifest.get("shared_gpu_tests", [])]
    return also


def matches(entries, ctest, test=None):
    """Whether a ctest entry (and, for a Criterion binary, one of its tests,
    "suite/name") is among entries [(ctest pattern, filter or None)]."""
    for pattern, filt in entries:
        if not fnmatch.fnmatchcase(ctest, pattern):
            continue
        if filt is None or (test is not None and fnmatch.fnmatchcase(test, filt)):
            return True
    return False


def problems(root, manifest, regions, ctest_names=None, listed=None):
    """What is inconsistent between the manifest and the markers (and, given
    the ctest entries of a build and the Criterion tests of each binary,
    {ctest name: ["suite/name", ...]}, the tests the manifest names)."""
    found = []
    ids = by_id(regions)
    exercises = manifest["exercises"]
    for ex_id in sorted(set(ids) - set(exercises)):
        where = ids[ex_id][0]
        found.append(f"{where.path}:{where.begin + 1}: exercise {ex_id} is not in {MANIFEST}")
    for ex_id, ex in exercises.items():
        for key in ("step", "title", "files", "points", "gpu", "tests", "function"):
            if key not in ex:
                found.append(f"{MANIFEST}: {ex_id} has no '{key}'")
        if ex_id not in ids:
            found.append(f"{MANIFEST}: {ex_id} has no region in the sources")
            continue
        marked = {r.path for r in ids[ex_id]}
        for path in ex.get("files", []):
            if not os.path.exists(os.path.join(root, path)):
                found.append(f"{MANIFEST}: {ex_id}: {path} does not exist")
            elif path not in marked:
                found.append(f"{MANIFEST}: {ex_id}: {path} has no region of it")
        for path in sorted(marked - set(ex.get("files", []))):
            found.append(f"{MANIFEST}: {ex_id}: its region in {path} is not in its files")
        texts = [open(os.path.join(root, p)).read() for p in ex.get("files", [])
                 if os.path.exists(os.path.join(root, p))]
        if "function" in ex and not any(ex["function"] + "(" in s for s in texts):
            found.append(f"{MANIFEST}: {ex_id}: no function {ex['function']}() in its files")
        if not ex_id.startswith(ex.get("step", "?") + "-"):
            found.append(f"{MANIFEST}: {ex_id}: the id does not start with its step")
        for other in ex.get("also_needs", []):
            if other not in exercises:
                found.append(f"{MANIFEST}: {ex_id}: also_needs names {other}, no exercise")
        if ctest_names is None:
            continue
        for name, filt in tests_of(ex) + also_of(manifest, ex):
            hits = [n for n in ctest_names if fnmatch.fnmatchcase(n, name)]
            if not hits:
                found.append(f"{MANIFEST}: {ex_id}: no ctest entry {name}")
            elif filt is not None and listed is not None:
                tests = [t for n in hits for t in listed.get(n, [])]
                if not any(fnmatch.fnmatchcase(t, filt) for t in tests):
                    found.append(f"{MANIFEST}: {ex_id}: no test of {name} matches {filt}")
    return found
