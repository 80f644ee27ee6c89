#!/usr/bin/env python3
"""The concept figures of docs/figures/ are not stale, and the staleness check
can fail: `scripts/figures.py --check` passes on the repository, figures.json
holds every figure's caption and docs/figures/README.md prints it under that
figure's row; then, on a copy of exactly the files the check reads (the
command line, the modules of scripts/figures/, the sources, the manifest and
the PNGs), it reports a changed constant (a #define, a launcher's template
argument, a benchmark problem), changed drawing code (a figure's function, a
helper of its step's module, a helper shared through scripts/figures/draw.py),
a missing PNG, a constant that no longer exists, a changed caption and an
edited docs/figures/README.md, each time naming what changed and only the
figures that depend on it.

    python3 tests/test_figures.py [repository root]

Runs with matplotlib made unimportable: the check must not need it.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                       os.path.join(os.path.dirname(__file__), ".."))
SCRIPT = os.path.join("scripts", "figures.py")
PACKAGE = os.path.join("scripts", "figures")  # the modules the command line imports
MANIFEST = os.path.join("docs", "figures", "figures.json")
README = os.path.join("docs", "figures", "README.md")
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg)


def run_script(root, *args):
    """scripts/figures.py of `root` with `args`, matplotlib and PIL blocked."""
    code = ("import runpy, sys\n"
            "sys.modules['matplotlib'] = None\n"
            "sys.modules['PIL'] = None\n"
            "sys.argv = sys.argv[1:]\n"
            "runpy.run_path(sys.argv[0], run_name='__main__')\n")
    out = subprocess.run([sys.executable, "-B", "-c", code, os.path.join(root, SCRIPT), *args,
                          "--root", root], capture_output=True, text=True)
    return out.returncode, out.stdout + out.stderr


def users_of(root, key):
    """The figures whose manifest entry records constant `key`."""
    with open(os.path.join(root, MANIFEST)) as fh:
        entries = json.load(fh)["figures"]
    return {name for name, e in entries.items() if key in e["constants"]}


def stale_figures(output):
    """The figure names of the 'docs/figures/<name>.png: stale: ...' lines."""
    return set(re.findall(r"docs/figures/(\w+)\.png: ", output))


def changed_captions(output):
    """The figures that the README.md line names as having a changed caption."""
    m = re.search(r"README\.md: stale: the captions? of ([\w, ]+) changed", output)
    return set(m.group(1).split(", ")) if m else set()


def check_captions(root):
    """Every figure of the manifest has a caption, printed (with Markdown's
    escapes) in the README's section of that figure."""
    with open(os.path.join(root, MANIFEST)) as fh:
        entries = json.load(fh)["figures"]
    with open(os.path.join(root, README)) as fh:
        sections = fh.read().split("\n### ")
    shown = {}
    for section in sections[1:]:
        name = re.match(r"\[(\w+)\.png\]", section)
        if name:
            shown[name.group(1)] = re.sub(r"\\(.)", r"\1", section)
    bad = [name for name, entry in entries.items()
           if not entry.get("caption") or entry["caption"] not in shown.get(name, "")]
    if bad or not entries:
        fail(f"figures.json has no caption, or {README} does not print it under the figure's "
             f"row, for: {', '.join(bad) or 'any figure'}")
    else:
        print(f"ok: {len(entries)} captions in {MANIFEST}, each printed under its row in {README}")


def edit(root, pattern, replacement, what):
    """Applies a regex edit to the one input file it matches; returns that file."""
    hits = []
    for folder, _, files in os.walk(root):
        for f in files:
            if f.endswith((".c", ".h", ".cu", ".cuh", ".py")):
                path = os.path.join(folder, f)
                with open(path) as fh:
                    text = fh.read()
                new, n = re.subn(pattern, replacement, text, count=1, flags=re.MULTILINE)
                if n:
                    hits.append((path, new))
    if len(hits) != 1:
        fail(f"{what}: the pattern {pattern!r} matched {len(hits)} files, expected 1")
        return None
    with open(hits[0][0], "w") as fh:
        fh.write(hits[0][1])
    return hits[0][0]


def copy_inputs(inputs, copy):
    """Copies the files --list-inputs named, and nothing else, into `copy`."""
    for rel in inputs:
        os.makedirs(os.path.dirname(os.path.join(copy, rel)), exist_ok=True)
        shutil.copy2(os.path.join(ROOT, rel), os.path.join(copy, rel))


def expect_stale(copy, what, expected, must_mention):
    status, output = run_script(copy, "--check")
    if status != 1:
        fail(f"{what}: --check exited with {status}, expected 1:\n{output}")
        return
    got = stale_figures(output)
    if got != expected:
        fail(f"{what}: --check reported {sorted(got)}, expected {sorted(expected)}:\n{output}")
    if not changed_captions(output) <= expected:
        fail(f"{what}: --check names captions of figures that do not depend on it:\n{output}")
    for line in output.splitlines():
        if ".png: stale" in line and must_mention not in line:
            fail(f"{what}: a stale line does not name {must_mention!r}: {line}")
    print(f"ok: {what}: {len(got)} figure(s) reported stale")


def main():
    # (a) the repository's figures are current
    status, output = run_script(ROOT, "--check")
    if status != 0:
        fail(f"scripts/figures.py --check on the repository:\n{output}")
    else:
        print("ok: " + output.strip().splitlines()[-1])
    check_captions(ROOT)
    status, listing = run_script(ROOT, "--list-inputs")
    inputs = listing.split()
    modules = sorted(os.path.join(PACKAGE, f) for f in os.listdir(os.path.join(ROOT, PACKAGE))
                     if f.endswith(".py"))
    if status != 0 or not {SCRIPT, MANIFEST, *modules} <= set(inputs):
        fail(f"--list-inputs names not the command line, all of {PACKAGE}/ and the "
             f"manifest:\n{listing}")
        return 1
    # (b) the check fails on a copy of exactly those files, edited
    cases = [
        ("a #define changed", r"^(#define\s+CONV2D_NAIVE_2D_BLOCK\s+)(\d+)",
         lambda m: m.group(1) + str(2 * int(m.group(2))), "CONV2D_NAIVE_2D_BLOCK"),
        ("a launcher's template argument changed", r"launch_s1<(\d+),",
         lambda m: f"launch_s1<{int(m.group(1)) + 8},", "launch_s1<>"),
        ("a benchmark problem changed", r'(\{"hpc101-image",[^}]*?shape\()([^)]*)\)',
         lambda m: m.group(1) + ", ".join(a if i != 5 else str(int(a) - 2) for i, a in
                                          enumerate(m.group(2).replace(" ", "").split(",")))
         + ")", "problem hpc101-image"),
        ("a #define renamed", r"^(#define\s+)CONV_PREFETCH_5A_KC(\s)",
         r"\g<1>CONV_PREFETCH_5A_CHUNK\g<2>", "CONV_PREFETCH_5A_KC"),
        ("a #define of a .c file changed (step 07's largest tile)",
         r"^(#define\s+WINO_MAX_ALPHA\s+)(\d+)", lambda m: m.group(1) + str(int(m.group(2)) + 2),
         "WINO_MAX_ALPHA"),
        ("a #define of a .cu file changed (step 08's depth of a shared-memory step)",
         r"^(#define\s+TC_BK\s+)(\d+)", lambda m: m.group(1) + str(2 * int(m.group(2))),
         "TC_BK"),
    ]
    for what, pattern, replacement, key in cases:
        with tempfile.TemporaryDirectory() as copy:
            copy_inputs(inputs, copy)
            status, output = run_script(copy, "--check")
            if status != 0:
                fail(f"the copy of the inputs is not current before any edit:\n{output}")
                continue
            expected = users_of(copy, key)
            if not expected:
                fail(f"{what}: no figure records {key}; pick another constant for this test")
                continue
            if edit(copy, pattern, replacement, what):
                expect_stale(copy, what, expected, key)
    # a line added to a function of the figures' code: only the figures that
    # call it, directly or through other helpers, in any module, are stale
    code_cases = [
        ("the drawing code changed", "fig_02_warp_addresses", {"02_warp_addresses"}),
        ("a helper of step06a.py changed, also used by step06e.py", "dbuf_shape",
         {"06_gemm_tiles", "06_swizzle"}),
        ("a helper of draw.py changed", "gantt_bar", {"05_prefetch_timeline", "06_dbuf_timeline"}),
        ("a helper of step07.py changed, used by its figures directly and through another",
         "tile_sides", {"07_f23_dataflow", "07_tiles", "07_pipeline"}),
        ("a helper of step08.py changed", "wmma_geometry", {"08_wmma_tiles"}),
        ("a helper of step08.py changed, used by a figure without constants", "split3",
         {"08_tf32_split"}),
        ("a helper of step08.py changed (the fragment layout of mma.sync)", "mma_owner_a",
         {"08_mma_fragments"}),
    ]
    for what, function, expected in code_cases:
        with tempfile.TemporaryDirectory() as copy:
            copy_inputs(inputs, copy)
            if edit(copy, r"^(def " + function + r"\([^)]*\):\n)", r"\g<1>    # Edited.\n", what):
                expect_stale(copy, what, expected, "drawing code changed")
    with tempfile.TemporaryDirectory() as copy:
        copy_inputs(inputs, copy)
        os.remove(os.path.join(copy, "docs", "figures", "04_halo_tile.png"))
        expect_stale(copy, "a PNG removed", {"04_halo_tile"}, "missing")
    # a caption is no drawing: editing one makes README.md stale, naming the
    # figure, and no PNG
    with tempfile.TemporaryDirectory() as copy:
        copy_inputs(inputs, copy)
        what = "a caption changed"
        if edit(copy, r"^(def caption_04_halo_tile\(k\):\n)",
                r'\g<1>    return "An edited caption."\n', what):
            status, output = run_script(copy, "--check")
            if (status != 1 or changed_captions(output) != {"04_halo_tile"}
                    or stale_figures(output)):
                fail(f"{what}: --check exited with {status}, expected 1 naming the caption of "
                     f"04_halo_tile in the {README} line and no PNG:\n{output}")
            else:
                print(f"ok: {what}: {README} reported stale, naming 04_halo_tile")
    with tempfile.TemporaryDirectory() as copy:
        copy_inputs(inputs, copy)
        with open(os.path.join(copy, README), "a") as fh:
            fh.write("An edited line.\n")
        status, output = run_script(copy, "--check")
        if status != 1 or f"{README}: stale" not in output or stale_figures(output):
            fail(f"an edited {README}: --check exited with {status}, expected 1 naming only "
                 f"the page:\n{output}")
        else:
            print(f"ok: an edited {README} reported stale")
    print(f"{'0 failed' if not failures else str(len(failures)) + ' failed'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
