#!/usr/bin/env python3
"""Every program, the same bad inputs: each must be rejected before any work
with exit status 2, exactly one line on stderr that names the flag (or the
limit), nothing on stdout, and no output file written. Runs anywhere: no
input here gets as far as looking for a GPU.

    python3 tests/test_bad_input.py NAME=PATH [NAME=PATH ...]
"""
import concurrent.futures
import os
import subprocess
import sys
import tempfile

from conv_test_support import check_refused, flag_refusals, refusals, verdict

# (arguments, what the one line must contain), for every program.
COMMON = [
    *flag_refusals("--repeat", "0", "100001"),
    *flag_refusals("--warmup", "-1", "2147483647"),
    *flag_refusals("--seed", "-1", "12x"),
    (["--bogus", "1"], "unknown option '--bogus'"),
    (["--hel"], "unknown option '--hel'"),
    (["--repeat"], "needs a value"),
    (["stray"], "unexpected argument 'stray'"),
    (["--repeat", "3", "--repeat", "4"], "--repeat is given twice"),
    *flag_refusals("--csv", "", "/proc/no/such.csv"),
    *flag_refusals("--json", "/proc/no/such.json"),
    (["--csv", "same.out", "--json", "same.out"], "same file"),
]
# For the programs that take the 2D problem flags.
SHAPE = [
    *flag_refusals("--h", "0"),
    *flag_refusals("--n", "-1"),
    *flag_refusals("--w", "abc", "99999999999"),
    (["--filter", "900", "--h", "9"], "larger than the padded image"),
    *flag_refusals("--padding", "full"),
    *flag_refusals("--layout", "chwn"),
    (["--padding", "same", "--pad-h", "5"], "--pad-h"),
    (["--pad-h", "5", "--padding", "same"], "--pad-h"),
    (["--filter", "3", "--r", "5"], "--filter and --r"),
    (["--stride", "2", "--stride-h", "3"], "--stride and --stride-h"),
    (["--dilation", "2", "--dil-w", "1"], "--dilation and --dil-w"),
    *flag_refusals("--stride", "0"),
    (["--n", "2000000000", "--c", "2000000000", "--h", "2000000000"], "overflows"),
]
# For the programs that take --problem NAME|all (every one with the 2D problem
# flags, and step 03): the name is one of the catalogue's, the flag fixes the
# shape, and the line lists the names it knows.
NAMES = "lecture,hpc101,cutlass,ece408-l1,ece408-l2,hpc101-image,conv1d,hpc101-nhwc,cutlass-nhwc,all"
PROBLEM = [
    (["--problem", "nope"], f"invalid value for --problem: 'nope' (expected one of {NAMES})"),
    (["--problem", "Lecture"], "invalid value for --problem: 'Lecture'"),
    (["--problem", ""], "invalid value for --problem: ''"),
    (["--problem"], "needs a value"),
    (["--problem", "lecture", "--problem", "all"], "--problem is given twice"),
    (["--prob", "lecture"], "unknown option '--prob'"),
]
# ... and with the 2D problem flags: a shape flag beside it, whatever the order.
PROBLEM_SHAPE = [
    (["--problem", "lecture", "--h", "16"], "--h cannot be combined with --problem"),
    (["--filter", "3", "--problem", "all"], "--filter cannot be combined with --problem"),
    (["--problem", "cutlass-nhwc", "--padding", "same"],
     "--padding cannot be combined with --problem"),
]
# Each program's own flags and limits, and the named problems it cannot run.
OWN = {
    "01_cpu_serial": [
        (["--n", "1", "--c", "100000", "--k", "100000", "--h", "16", "--w", "16", "--filter",
          "16"], "out of host memory"),
        *flag_refusals("--variant", "serial"),
        (["--variant", "1c"], "invalid value for --variant: '1c' (expected one of 1a,1b,all)"),
    ],
    "02_naive_gpu": [
        *flag_refusals("--variant", "3d"),
        (["--variant", "gridstride"], "--variant gridstride is now --variant 2a"),
        (["--variant=2d"], "--variant 2d is now --variant 2b"),
        *flag_refusals("--host-repeat", "101"),
    ],
    "03_tiled_1d": [
        (["--problem", "conv1d", "--width", "1024"], "--width cannot be combined with --problem"),
        (["--mask", "5", "--problem", "all"], "--mask cannot be combined with --problem"),
        *refusals("the 1D kernels need a 1D problem", ["--problem", "lecture"],
                  ["--problem", "cutlass-nhwc"]),
        *flag_refusals("--mask", "8", "16385"),
        *flag_refusals("--width", "0"),
        *flag_refusals("--variant", "9"),
        (["--variant", "3d", "--mask", "1001"], "--mask"),
        (["--strategy", "1"], "--strategy 1 is now --variant 3c"),
        (["--strategy", "3", "--mask", "5"], "--strategy 3 is now --variant 3e"),
        (["--strategy", "all"], "--strategy is now --variant"),
        (["--variant", "naive4"], "--variant naive4 is now --variant 3b"),
        (["--h", "5"], "unknown option '--h'"),
    ],
    "04_tiled_2d": [
        *flag_refusals("--variant", "9"),
        (["--strategy", "mc"], "--strategy mc is now --variant 4d"),
        (["--strategy", "1", "--c", "1", "--k", "1"], "--strategy 1 is now --variant 4a"),
        (["--variant", "s2"], "invalid value for --variant: 's2'"),
        *flag_refusals("--stride", "2"),
        *flag_refusals("--layout", "nhwc"),
        (["--variant", "4a", "--c", "3"], "--c"),
        *refusals("--layout", ["--problem", "hpc101-nhwc"],
                  ["--problem", "hpc101", "--layout", "nhwc"]),
        (["--variant", "4b", "--problem", "cutlass"], "--c, --k"),
    ],
    "05_prefetch_float4": [
        *flag_refusals("--variant", "5c"),
        *flag_refusals("--stride", "2"),
        *flag_refusals("--dilation", "2"),
        *flag_refusals("--layout", "nhwc"),
        (["--filter", "17"], "--r"),
        (["--problem", "cutlass-nhwc"], "--layout nhwc"),
    ],
    "06_im2col_gemm": [
        *flag_refusals("--variant", "6z"),
        (["--gemm", "6f"], "--gemm is now --variant (see --help)"),
        (["--mode", "gemm"], "unknown option '--mode'"),
        *refusals("--layout nhwc", ["--variant", "6f", "--layout", "nchw"],
                  ["--variant", "6f", "--problem", "hpc101"]),
    ],
    "06_gemm": [
        *flag_refusals("--variant", "6f"),
        (["--gemm", "6e"], "--gemm is now --variant (see --help)"),
    ],
    "07_winograd": [
        *flag_refusals("--variant", "7z"),
        (["--filter", "5"], "--r 5 --s 5"),
        (["--r", "3", "--s", "1"], "--r 3 --s 1"),
        (["--stride", "2"], "--stride 2x2"),
        (["--dilation", "2"], "--dilation 2x2"),
        (["--n", "1000", "--c", "1000", "--k", "1000", "--h", "1000", "--w", "1000"],
         "out of host memory"),
        (["--problem", "lecture"], "--r 6 --s 6"),
        (["--problem", "conv1d"], "--r 1 --s 7"),
        (["--problem", "ece408-l2"], "--r 7 --s 7"),
    ],
    "08_tensor_cores": [
        *flag_refusals("--variant", "8f"),
        # 8b and 8c take NCHW; 8a and the FP16 versions do not
        *refusals("--layout nchw", ["--layout", "nchw", "--variant", "8a"],
                  ["--problem", "cutlass", "--variant", "8b-fp16"],
                  ["--problem", "hpc101", "--layout", "nchw", "--variant", "8a-fp16"]),
    ],
    "08_gemm": [
        *flag_refusals("--variant", "6e"),
    ],
    "09_hopper": [
        *flag_refusals("--variant", "8d", "8b"),
        *refusals("--layout nchw", ["--layout", "nchw"], ["--problem", "cutlass"],
                  ["--problem", "hpc101", "--layout", "nchw"]),
    ],
    "09_gemm": [
        *flag_refusals("--variant", "8e"),
    ],
    "10_backward": [
        *flag_refusals("--pass", "forward"),
        (["--pass", "backward"], "expected one of dgrad,wgrad,all"),
        *flag_refusals("--variant", "10z", "2a"),
    ],
    "conv_bench": [
        *flag_refusals("--problem", "nope"),
        (["--pass", "backward"], "expected one of forward,dgrad,wgrad,all"),
        (["--model", "resnet50", "--pass", "dgrad", "--steps", "11"], "--steps"),
        *flag_refusals("--steps", "11", "9"),
        (["--problem", "lecture", "--h", "16"], "--h cannot be combined with --problem"),
        (["--problem", "lecture", "--json", "/proc/x.json"], "--json"),
        (["--problem", "lecture", "--h", "5"], "--h cannot be combined with --problem"),
        (["--model", "nosuch"], "--model: 'nosuch' (expected one of resnet50"),
        (["--model", "resnet50", "--problem", "lecture"],
         "--model cannot be combined with --problem"),
        (["--model", "resnet50", "--h", "5"], "--h cannot be combined with --model"),
        (["--model", "resnet50", "--n", "2", "--padding", "same"],
         "--padding cannot be combined with --model"),
        (["--model", "resnet50", "--n", "0"], "--n"),
        (["--model", "resnet50", "--steps", "11"], "--steps"),
        (["--model", "resnet50", "--json", "/proc/x.json"], "--json"),
        (["--model", "resnet50", "--list", "--csv", "same.out"],
         "--csv cannot be combined with --list"),
        (["--list", "--json", "same.out"], "--json cannot be combined with --list"),
        (["--list=yes"], "--list takes no value"),
        (["--list", "--list"], "--list is given twice"),
        (["--cpu-rows"], "--cpu-rows applies to a model run"),
        *flag_refusals("--cudnn-budget", "0", "3600001"),
        *flag_refusals("--cudnn-workspace", "-1", "1048577"),
        *flag_refusals("--cudnn-log", "/nonexistent-folder/log.csv"),
        (["--model"], "needs a value"),
    ],
}
NO_SHAPE = {"03_tiled_1d", "06_gemm", "08_gemm", "09_gemm"}
# For the GEMM programs: their sizes, and no convolution problem or shape.
GEMM = [
    *flag_refusals("--m", "0", "x"),
    *flag_refusals("--k", "2147483647", "x"),
    (["--h", "5"], "unknown option '--h'"),
    (["--problem", "lecture"], "unknown option '--problem'"),
    (["--problem", "cutlass"], "unknown option '--problem'"),
]
GEMM_PROGRAMS = {"06_gemm", "08_gemm", "09_gemm"}
TAKES_PROBLEM = {"01_cpu_serial", "02_naive_gpu", "03_tiled_1d", "04_tiled_2d",
                 "05_prefetch_float4", "06_im2col_gemm", "07_winograd", "08_tensor_cores",
                 "09_hopper", "10_backward", "conv_bench"}

def run_case(name, path, args, needle, tmp):
    # Every case also asks for a CSV file: a rejected command must not write it.
    csv_path = os.path.join(tmp, "out.csv")
    extra = [] if any(a in ("--csv", "--json") for a in args) else ["--csv", csv_path]
    args = [os.path.join(tmp, a) if a == "same.out" else a for a in args]
    p = subprocess.run([path] + extra + args, capture_output=True, text=True, timeout=120)
    check_refused(f"{name} {' '.join(args)}", p, needle, tmp, prefix=name + ": ")


def one(name, path, args, needle):
    with tempfile.TemporaryDirectory() as tmp:
        run_case(name, path, args, needle, tmp)


def main(programs):
    cases = []
    for spec in programs:
        name, path = spec.split("=", 1)
        table = COMMON + ([] if name in NO_SHAPE else SHAPE + PROBLEM_SHAPE) + OWN.get(name, [])
        table += PROBLEM if name in TAKES_PROBLEM else []
        table += GEMM if name in GEMM_PROGRAMS else []
        cases += [(name, path, args, needle) for args, needle in table]
    # Each case in a folder of its own, so they run side by side (most of a
    # case's time is the program loading the CUDA libraries).
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        for done in pool.map(lambda c: one(*c), cases):
            pass
    return verdict(f"{len(cases)} bad inputs over {len(programs)} programs")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
