#!/usr/bin/env python3
"""The concept figures of the lecture notes, drawn from the code's own constants.

    python3 scripts/figures.py            draws every figure into docs/figures/,
                                          writes docs/figures/figures.json and
                                          docs/figures/README.md
    python3 scripts/figures.py NAME ...   draws only those (e.g. 04_halo_tile);
                                          every caption is written again
    python3 scripts/figures.py --check    says which figures are stale (exit 1)
    python3 scripts/figures.py --list-inputs
                                          the files the check reads, one a line

This file is the command line; the package scripts/figures/ beside it does
the work. Its module manifest.py reads the constants and runs the check,
draw.py holds the drawing helpers and colours, and step01.py to step05.py,
step06a.py (6a to 6d), step06e.py (6e and 6f), step07.py, step08.py, step09.py,
step10.py and step11.py hold each step's figures.

Every size a figure shows (tile widths, threads per block, the tile of a GEMM
block, the problems of the notes) is read from the sources: `#define NAME
value` lines, the template arguments of step 04's launchers and the problem
table of the benchmark. Constants are found by name anywhere in the tree, not
in a fixed file, so moving code between files changes nothing.

Each figure is one function `fig_<step>_<name>()` in its step's module,
registered with the constants it uses and with its caption, a function
`caption_<step>_<name>()` beside it. The image holds labels and a short
title; the caption, one paragraph of plain text from the same constants, says
the rest, for the notes to quote. figures.json records, for each figure, those
constants with their values, a hash of the figure's drawing code (its
function and every helper it calls, in any module of the package), a hash of
the PNG and the caption; docs/figures/README.md prints each caption under its
figure's row. `--check` reads the sources again and reports, one line per
figure, what changed since: a constant (named, with its old and new value),
the drawing code, a missing or edited PNG; and, in the line of README.md, the
figures whose caption changed. It imports no matplotlib, so it runs wherever
Python does; drawing needs matplotlib (`scripts/setup.sh --plots` installs
it).
"""
import argparse
import os
import sys

# `figures` below is the package scripts/figures/, not this file: the folder
# of this file goes first on the path (runpy does not put it there), and a
# package wins over a module of the same name.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from figures import FIGURES, README, check, generate, inputs  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("names", nargs="*", help="figures to draw (default: all)")
    parser.add_argument("--check", action="store_true",
                        help="report stale figures (exit 1), draw nothing")
    parser.add_argument("--list-inputs", action="store_true",
                        help="print the files the check reads")
    parser.add_argument("--root", default=ROOT, help="repository root (default: this script's)")
    args = parser.parse_args()
    root = os.path.abspath(args.root)
    unknown = set(args.names) - {fig["name"] for fig in FIGURES}
    if unknown:
        parser.error(f"unknown figure(s): {', '.join(sorted(unknown))}")
    if args.list_inputs:
        print("\n".join(inputs(root)))
        return 0
    if args.check:
        stale = check(root)
        for line in stale:
            print(line)
        if stale:
            pngs = sum(".png: " in line for line in stale)
            print(f"{pngs} of {len(FIGURES)} figures stale"
                  f"{', ' + README + ' stale' if any(README in x for x in stale) else ''}: "
                  f"run python3 scripts/figures.py")
            return 1
        print(f"{len(FIGURES)} figures current")
        return 0
    generate(root, set(args.names))
    return 0


if __name__ == "__main__":
    sys.exit(main())
