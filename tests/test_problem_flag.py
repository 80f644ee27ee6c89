#!/usr/bin/env python3
"""--problem NAME|all in every program that runs a convolution, on any
machine (no GPU is used: the GPU programs run with CUDA_VISIBLE_DEVICES set
empty):
  - each program's --help shows the names of the catalogue, as conv_bench
    --list gives them, then "all"; 06_gemm, 08_gemm and 09_gemm have no --problem;
  - a named problem that the program can run passes every check made before
    any work, so a GPU program gets as far as looking for the GPU: exit
    status 1, one line on stderr that says "no CUDA device", no table and no
    file written (the problems it cannot run: tests/test_bad_input.py);
  - conv_bench --list gives each problem in its own layout, or in the one
    --layout asks for where the name does not say it;
  - 01_cpu_serial, which needs no GPU, runs conv1d to the end: its heading,
    "verdict: OK", and the problem in the first column of the CSV.

    python3 tests/test_problem_flag.py NAME=PATH [NAME=PATH ...]
"""
import csv
import io
import os
import subprocess
import sys
import tempfile

from conv_test_support import check, verdict

# What each GPU program can run, named (every one also takes "all").
RUNS = {
    "02_naive_gpu": [["lecture"], ["conv1d"], ["ece408-l1"]],
    "03_tiled_1d": [["conv1d"]],
    "04_tiled_2d": [["lecture"], ["hpc101-image", "--variant", "4a"], ["cutlass"]],
    "05_prefetch_float4": [["lecture"], ["ece408-l2"]],
    "06_im2col_gemm": [["hpc101-nhwc", "--variant", "6f"], ["cutlass"], ["hpc101", "--layout", "nhwc"]],
    "07_winograd": [["cutlass"], ["hpc101-nhwc"], ["hpc101", "--variant", "7c"]],
    "08_tensor_cores": [["cutlass-nhwc"], ["hpc101", "--layout", "nhwc"]],
    "09_hopper": [["hpc101-nhwc"], ["cutlass", "--layout", "nhwc"]],
}
NO_PROBLEM = {"06_gemm", "08_gemm", "09_gemm"}

def run(args, cwd=None):
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
    return subprocess.run(args, capture_output=True, text=True, timeout=300, env=env, cwd=cwd)


def catalogue(bench):
    """The catalogue as conv_bench --list gives it: [(name, layout)]."""
    p = run([bench, "--problem", "all", "--list"])
    check(p.returncode == 0, f"conv_bench --problem all --list: exit status {p.returncode}")
    return [(r["name"], r["layout"]) for r in csv.DictReader(io.StringIO(p.stdout))]


def check_help(name, path, names):
    p = run([path, "--help"])
    want = "--problem " + "|".join(names + ["all"])
    if name in NO_PROBLEM:
        check("--problem" not in p.stdout, f"{name} --help shows --problem")
    else:
        check(want in p.stdout, f"{name} --help does not show '{want}'")


def check_reaches_the_device(name, path, args):
    what = f"{name} --problem {' '.join(args)}"
    with tempfile.TemporaryDirectory() as tmp:
        p = run([path, "--problem"] + args + ["--csv", "out.csv"], cwd=tmp)
        lines = p.stderr.strip().splitlines()
        check(p.returncode == 1, f"{what}: exit status {p.returncode}, want 1: {p.stderr!r}")
        check(len(lines) == 1 and "no CUDA device" in lines[0],
              f"{what}: want one 'no CUDA device' line, got {lines}")
        check("median ms" not in p.stdout, f"{what}: a table without a device")
        check(not os.listdir(tmp), f"{what}: wrote {os.listdir(tmp)}")


def check_layouts(bench, problems):
    for flags, layout_of in [([], lambda n, own: own),
                             (["--layout", "nhwc"], lambda n, own: "nhwc"),
                             (["--layout", "nchw"],
                              lambda n, own: "nhwc" if n.endswith("-nhwc") else "nchw")]:
        p = run([bench, "--problem", "all", "--list"] + flags)
        got = [(r["name"], r["layout"]) for r in csv.DictReader(io.StringIO(p.stdout))]
        want = [(n, layout_of(n, own)) for n, own in problems]
        check(got == want, f"conv_bench --problem all --list {' '.join(flags)}: {got}")


def check_cpu_run(path):
    with tempfile.TemporaryDirectory() as tmp:
        csv_path = os.path.join(tmp, "conv1d.csv")
        p = run([path, "--problem", "conv1d", "--repeat", "1", "--csv", csv_path])
        check(p.returncode == 0, f"01_cpu_serial --problem conv1d: exit {p.returncode}: {p.stderr}")
        check("\n== conv1d: 1D, width 2^26, mask 7" in p.stdout, "the problem's heading")
        check("W=67108864" in p.stdout and "S=7" in p.stdout, "the problem's shape")
        check(p.stdout.rstrip().endswith("verdict: OK"), "verdict: OK last")
        with open(csv_path) as f:
            rows = list(csv.DictReader(l for l in f if not l.startswith("#")))
        check(rows and all(r["problem"] == "conv1d" and r["status"] == "ok" for r in rows),
              f"every CSV row names conv1d and passed: {rows}")


def main(programs):
    paths = dict(spec.split("=", 1) for spec in programs)
    problems = catalogue(paths["conv_bench"])
    names = [n for n, _ in problems]
    check(len(names) == 9 and names[0] == "lecture", f"the catalogue: {names}")
    for name, path in sorted(paths.items()):
        check_help(name, path, names)
        for args in RUNS.get(name, []) + ([["all"]] if name in RUNS else []):
            check_reaches_the_device(name, path, args)
    check_layouts(paths["conv_bench"], problems)
    if "01_cpu_serial" in paths:
        check_cpu_run(paths["01_cpu_serial"])
    return verdict(f"--problem in {len(paths)} programs")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
