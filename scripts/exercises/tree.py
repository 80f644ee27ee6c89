"""make: the student tree. Every marked region of the chosen exercises becomes
its stub, every other region its solution without markers; the
instructor-only files stay behind; the notes' code excerpts are regenerated
from the stubbed sources; then the tree is searched for any marker and any
solution line left."""
import json
import os
import shutil
import subprocess
import sys

from . import manifest as mf
from . import markers

TREE_INFO = os.path.join("exercises", "tree.json")


class LeakError(Exception):
    pass


def secrets_of(regions, chosen, given_text):
    """{solution line: exercise id} of the chosen exercises, without the lines
    that the student tree holds anyway (given_text: its sources): a line of
    given code is no secret, even where a solution repeats it."""
    found = {}
    for rs in regions.values():
        for r in rs:
            if r.id in chosen:
                for line in markers.secrets([r]):
                    if line not in given_text:
                        found.setdefault(line, r.id)
    return found


def text_files(root):
    for path in mf.tree_files(root):
        if path.endswith((".png", ".jpg", ".pdf")):
            continue
        try:
            with open(os.path.join(root, path), encoding="utf-8") as f:
                yield path, f.read()
        except (UnicodeDecodeError, OSError):
            continue


def leaks(root, secrets):
    """["path:line: what"] for every marker and every secret line in the tree."""
    found = []
    for path, text in text_files(root):
        if markers.ANY.search(text):
            for i, line in enumerate(text.split("\n"), 1):
                if markers.ANY.search(line):
                    found.append(f"{path}:{i}: an exercise marker is left: {line.strip()}")
        for secret, ex_id in secrets.items():
            if secret in text:
                for i, line in enumerate(text.split("\n"), 1):
                    if secret in line:
                        found.append(f"{path}:{i}: a solution line of exercise {ex_id}: "
                                     f"{secret}")
    return found


def write_tree(root, out, chosen):
    """Copies the tree to out with the chosen exercises stubbed; returns the
    regions found and the instructor-only paths left out."""
    files = mf.tree_files(root)
    regions = mf.scan(root, files)
    left_out = sorted({p for p in mf.INSTRUCTOR_ONLY for f in files
                       if f == p or f.startswith(p)})
    for path in files:
        if mf.instructor_only(path):
            continue
        src, dst = os.path.join(root, path), os.path.join(out, path)
        os.makedirs(os.path.dirname(dst) or out, exist_ok=True)
        if path in regions:
            lines = markers.render(mf.read_lines(root, path), regions[path], chosen, False)
            with open(dst, "w") as f:
                f.write("\n".join(lines))
            shutil.copymode(src, dst)
        else:
            shutil.copy2(src, dst)
    with open(os.path.join(out, mf.WITHHELD), "w") as f:
        f.write("# Left out of this tree (the instructor's): the notes may name them.\n")
        f.write("".join(p + "\n" for p in left_out))
    with open(os.path.join(out, TREE_INFO), "w") as f:
        json.dump({"exercises": [e for e in mf.load(root)["exercises"] if e in chosen]}, f,
                  indent=2)
        f.write("\n")
    return regions, left_out


def make(root, out, steps=None):
    """Writes the student tree; raises LeakError listing every leak."""
    manifest = mf.load(root)
    chosen = mf.select(manifest, steps)
    if not chosen:
        raise LeakError(f"no exercise in steps {steps}")
    if os.path.exists(out) and os.listdir(out):
        raise LeakError(f"{out} exists and is not empty: choose a new folder")
    os.makedirs(out, exist_ok=True)
    regions, left_out = write_tree(root, out, set(chosen))
    notes = sorted(os.path.join("docs", n) for n in os.listdir(os.path.join(out, "docs"))
                   if n.endswith(".md"))
    tables = [sys.executable, os.path.join("scripts", "doc_tables.py")]
    gen = subprocess.run(tables + notes, cwd=out, capture_output=True, text=True)
    known = subprocess.run(tables + ["--check"] + notes, cwd=root, capture_output=True, text=True)
    regenerated = [l for l in gen.stdout.splitlines() if "regenerated" in l]
    problems = [l for l in gen.stdout.splitlines() if "regenerated" not in l]
    # Only what the stubs changed: the solution tree's own notes may have problems too.
    problems = [l for l in problems if l not in known.stdout.splitlines()]
    given = "\n".join(text for path, text in text_files(out)
                      if path.endswith(markers.SOURCE_EXT))
    secrets = secrets_of(regions, set(chosen), given)
    found = leaks(out, secrets)
    if found:
        raise LeakError("\n".join(found))
    return {"exercises": chosen, "left_out": left_out, "secrets": len(secrets),
            "notes_regenerated": regenerated, "note_problems": problems}


def plant_and_find(root, out):
    """The leak check must be able to fail: one solution line of every
    exercise planted in a copy of the student tree out (in a note and in a
    source), and each must be found, with its file and line."""
    manifest = mf.load(root)
    regions = mf.scan(root)
    chosen = set(json.load(open(os.path.join(out, TREE_INFO)))["exercises"])
    given = "\n".join(text for path, text in text_files(out)
                      if path.endswith(markers.SOURCE_EXT))
    secrets = secrets_of(regions, chosen, given)
    missing = []
    for ex_id in manifest["exercises"]:
        if ex_id not in chosen:
            continue
        lines = [s for s, e in secrets.items() if e == ex_id]
        if not lines:
            missing.append(f"{ex_id}: no solution line is a secret")
            continue
        for target in ("docs/README.md", manifest["exercises"][ex_id]["files"][0]):
            path = os.path.join(out, target)
            with open(path) as f:
                text = f.read()
            with open(path, "a") as f:
                f.write("\n" + lines[0] + "\n")
            found = [l for l in leaks(out, secrets) if l.startswith(target + ":")]
            with open(path, "w") as f:
                f.write(text)
            if not any(ex_id in l for l in found):
                missing.append(f"{ex_id}: a solution line planted in {target} was not found")
    if leaks(out, secrets):
        missing.append("the tree is not clean after the planted lines were removed")
    return missing
