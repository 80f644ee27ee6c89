#!/usr/bin/env python3
"""Exercise mode: students write the kernels, graded by the tests that guard
the solutions.

The solution tree marks what a student writes: in a source, a region

    /* exercise <id> begin: <title> */
    ...the solution...
    /* exercise <id> stub
    ...what the student starts from...
       exercise <id> end */

and exercises/manifest.json says, for each id, its step, title and files,
the tests that grade it (a ctest entry and a Criterion filter), its points,
whether it needs a GPU and, optionally, performance points from a ratio
measured in the same run. The commands:

    scripts/exercises.py make --out DIR [--steps 02-04]
        writes a student tree: every region of the chosen steps' exercises
        replaced by its stub, the others by their solution; the instructor's
        folder instructor/ left out; the notes' code excerpts regenerated from
        the stubbed sources. Fails, naming file and line, if a marker or a line
        of a solution is left anywhere in the tree.
    scripts/exercises.py grade [--step NN] [--json FILE] [--no-performance]
        in a student tree (or the solution tree): builds (cmake --preset
        release), runs each exercise's tests and prints a table, exercise,
        tests passed / total, points. Without a GPU, the GPU exercises are
        "not graded: no CUDA device". --json writes the same for a course's
        grading system.
    scripts/exercises.py check [--cpu] [--only ID,...] [--arch ARCHS]
        (instructor) each exercise alone stubbed in a scratch copy
        (build/exercise-check): its own tests must fail, every other test the
        rebuild touched must pass. --cpu: the CPU exercises only (no GPU needed).
    scripts/exercises.py selftest [--build DIR] [--no-check]
        the manifest against the markers (and the tests of the build DIR),
        make, the leak check proved able to fail, and check --cpu.

This file is the command line; the package scripts/exercises/ does the work.
Python 3, standard library only.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from exercises import check, grade, selftest, tree  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main(argv):
    parser = argparse.ArgumentParser(description="Exercise mode (see the docstring).")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("make", help="write a student tree")
    p.add_argument("--out", required=True)
    p.add_argument("--steps", help="e.g. 02-04 or 01,03 (default: every step)")
    p = sub.add_parser("grade", help="build and grade this tree")
    p.add_argument("--step", help="grade one step's exercises (e.g. 01)")
    p.add_argument("--json", help="also write the results to this file")
    p.add_argument("--no-performance", action="store_true")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    p = sub.add_parser("check", help="(instructor) each stub fails its tests and nothing else")
    p.add_argument("--cpu", action="store_true", help="the CPU exercises only")
    p.add_argument("--only", help="exercise ids, comma-separated")
    p.add_argument("--arch", help="CMAKE_CUDA_ARCHITECTURES of the scratch build")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    p = sub.add_parser("selftest", help="prove the tools on this tree")
    p.add_argument("--build", help="a configured build folder of this tree")
    p.add_argument("--arch", help="CMAKE_CUDA_ARCHITECTURES of check's scratch build")
    p.add_argument("--no-check", action="store_true", help="leave out check --cpu")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    args = parser.parse_args(argv)
    if args.command != "grade" and os.path.exists(os.path.join(ROOT, tree.TREE_INFO)):
        print(f"{args.command}: this is a student tree (it has {tree.TREE_INFO}); "
              f"{args.command} works on the solution tree", file=sys.stderr)
        return 2

    if args.command == "make":
        try:
            made = tree.make(ROOT, os.path.abspath(args.out), args.steps)
        except tree.LeakError as e:
            print(f"make: {e}", file=sys.stderr)
            return 1
        print(f"make: {args.out}: {len(made['exercises'])} exercises stubbed "
              f"({' '.join(made['exercises'])}); left out: {', '.join(made['left_out'])}")
        print(f"make: {len(made['notes_regenerated'])} notes with regenerated code excerpts; "
              f"no marker and none of {made['secrets']} solution lines left in the tree")
        for line in made["note_problems"]:
            print(f"make: (doc_tables) {line}")
        return 0
    if args.command == "grade":
        return grade.grade(ROOT, args.step, args.jobs, args.json, not args.no_performance)
    if args.command == "check":
        ids = args.only.split(",") if args.only else None
        return check.check(ROOT, args.cpu, ids, args.jobs, args.arch)
    return selftest.selftest(ROOT, args.build, args.jobs, args.arch, not args.no_check)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
