#!/usr/bin/env python3
"""scripts/torch_reference.py, on any machine: PyTorch and a GPU are needed
only for the last part.

- Bad flags: exit status 2, one line on stderr starting "torch_reference: "
  and naming the flag, nothing on stdout, no CSV, and torch never imported
  (a stand-in torch package on PYTHONPATH would leave a mark).
- The shapes: fake conv_bench programs (shell scripts written here) print a
  --list CSV; the script must pass the selection flags through, parse the
  shapes, compute P and Q as conv_bench does, and refuse a malformed list
  (a missing column, a bad value, no rows) with one line; conv_bench's own
  refusal passes through unchanged. With the real conv_bench (its path as
  the argument), the same on its --list of the problems and of ResNet-50.
- PyTorch missing, or no CUDA GPU: stand-in torch packages give both cases
  everywhere; then a real run on --problem lecture --repeat 2 --warmup 1
  must exit 2 naming which is missing, or, where PyTorch sees a GPU, exit 0
  with both classes' rows and positive times in the CSV (and, with
  CUDA_VISIBLE_DEVICES empty, exit 2 saying "no CUDA GPU"). With
  CONV_REQUIRE_GPU=1, PyTorch that sees no GPU is a failure (PyTorch itself
  is optional: never needed to build or test).

    python3 tests/test_torch_reference.py [CONV_BENCH]
"""
import importlib.util
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import doc_tables  # noqa: E402  (the CSV reader of the notes)
from conv_test_support import check, check_refused, flag_refusals, verdict  # noqa: E402
SCRIPT = os.path.join(ROOT, "scripts", "torch_reference.py")
HEADER = "name,count,n,c,h,w,k,r,s,pad_h,pad_w,stride_h,stride_w,dil_h,dil_w,layout"
LECTURE = "lecture,1,1,6,768,512,6,6,6,0,0,1,1,1,1,nchw"
# Shapes, each with the output (N, K, P, Q) worked out by hand.
SHAPES = [
    (LECTURE, (1, 6, 763, 507)),  # 6x6 valid: 768 - 6 + 1, 512 - 6 + 1
    ("conv1,3,2,3,224,224,64,7,7,3,3,2,2,1,1,nhwc", (2, 64, 112, 112)),  # ResNet's first
    # padding, stride and dilation of their own in each direction:
    # (17 + 4 - 2*2 - 1)//3 + 1 = 6 and (13 + 2 - 3*4 - 1)//2 + 1 = 2
    ("odd,1,4,8,17,13,5,3,5,2,1,3,2,2,3,nchw", (4, 5, 6, 2)),
    # the filter as large as the image, a stride larger than both
    ("fits,1,1,1,5,9,1,5,9,0,0,7,7,1,1,nchw", (1, 1, 1, 1)),
]
COLUMNS = "problem,version,median_ms,min_ms,max_ms,count,status,verdict"
COLUMNS_PASS = "problem,pass,version,median_ms,min_ms,max_ms,count,status,verdict"

def load_script():
    spec = importlib.util.spec_from_file_location("torch_reference", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write_file(path, text, mode=0o644):
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, mode)
    return path


def fake_bench(folder, name, stdout, stderr="", status=0):
    """A conv_bench stand-in: records its arguments in NAME.argv, prints what
    it is given and exits with the status given."""
    def lines(text):
        return text if text == "" or text.endswith("\n") else text + "\n"

    return write_file(os.path.join(folder, name), f"""#!/bin/sh
printf '%s\\n' "$@" > "$0.argv"
cat <<'END_OUT'
{lines(stdout)}END_OUT
cat >&2 <<'END_ERR'
{lines(stderr)}END_ERR
exit {status}
""", 0o755)


def fake_torch(folder, name, init):
    """A folder for PYTHONPATH holding a stand-in package torch."""
    package = os.path.join(folder, name, "torch")
    os.makedirs(package)
    write_file(os.path.join(package, "__init__.py"), init)
    return os.path.join(folder, name)


def run(args, out_dir, pythonpath=None, env=None, csv_flag=True):
    """The script in a subprocess, writing its CSV (if any) into out_dir."""
    environment = dict(os.environ, **(env or {}))
    if pythonpath:
        environment["PYTHONPATH"] = pythonpath
    extra = ["--csv", os.path.join(out_dir, "out.csv")] if csv_flag else []
    return subprocess.run([sys.executable, SCRIPT] + extra + args, capture_output=True,
                          text=True, timeout=600, env=environment, cwd=out_dir)


def expect_refusal(what, p, needle, out_dir, prefix="torch_reference: "):
    """Exit status 2, one line naming the problem, nothing else anywhere."""
    check_refused(what, p, needle, out_dir, prefix)


def bad_flags(tools, out_dir, marker_torch, marker):
    good = fake_bench(tools, "good_bench", HEADER + "\n" + LECTURE + "\n")
    plain = write_file(os.path.join(tools, "not_executable"), "")
    cases = [
        *flag_refusals("--warmup", "-1", "1001", "x"),
        *flag_refusals("--repeat", "0", "10001", "2.5"),
        (["--repeat", "2", "--repeat", "3"], "--repeat is given twice"),
        *flag_refusals("--classes", "fp16", "", "fp32,fp32"),
        (["--pass", "both"], "--pass: 'both' is not a pass"),
        (["--pass", "dgrad", "--pass", "wgrad"], "--pass is given twice"),
        (["--bogus", "1"], "--bogus"),
        (["--hel"], "--hel"),
        (["stray"], "stray"),
        (["--problem"], "--problem"),
        (["--bench", os.path.join(tools, "no_such_bench")], "--bench"),
        (["--bench", plain], "--bench"),
    ]
    for args, needle in cases:
        args = args if "--bench" in args else ["--bench", good] + args
        p = run(args, out_dir, pythonpath=marker_torch)
        expect_refusal(" ".join(args), p, needle, out_dir)
    for csv_path, needle in [("", "--csv"), ("/proc/no/such.csv", "--csv"),
                             (tools, "is a folder")]:
        p = run(["--bench", good, "--csv", csv_path], out_dir, pythonpath=marker_torch,
                csv_flag=False)
        expect_refusal(f"--csv {csv_path!r}", p, needle, out_dir)
    p = run(["--bench", good], out_dir, pythonpath=marker_torch, csv_flag=False)
    expect_refusal("no --csv", p, "--csv", out_dir)
    check(not os.path.exists(marker), "a bad command line imported torch")
    print(f"bad flags: {len(cases) + 4} cases")


def fake_lists(tools, out_dir, marker_torch, marker):
    """Malformed --list output and conv_bench's refusals, through fake programs."""
    missing_column = HEADER.replace(",dil_w", "")
    cases = [
        ("a missing column", missing_column + "\n" + LECTURE.replace(",1,nchw", ",nchw") + "\n",
         "", 0, "unexpected header"),
        ("a short row", HEADER + "\n" + LECTURE.replace(",1,nchw", ",nchw") + "\n", "", 0,
         "line 2: 15 fields"),
        ("a bad number", HEADER + "\n" + LECTURE.replace(",768,", ",7x8,") + "\n", "", 0,
         "h '7x8'"),
        ("a zero", HEADER + "\n" + LECTURE.replace(",1,1,1,1,nchw", ",0,1,1,1,nchw") + "\n", "",
         0, "stride_h 0"),
        ("a bad layout", HEADER + "\n" + LECTURE.replace("nchw", "chwn") + "\n", "", 0,
         "layout 'chwn'"),
        ("no rows", HEADER + "\n", "", 0, "no shapes"),
        ("no output", HEADER + "\n" + "big,1,1,1,4,4,1,5,5,0,0,1,1,1,1,nchw\n", "", 0,
         "no output"),
        ("a crash", "", "conv_bench: something broke", 1, "exit status 1"),
        ("an old conv_bench", "", "conv_bench: unknown option '--list' (see --help)", 2,
         "has no --list"),
    ]
    for i, (what, stdout, stderr, status, needle) in enumerate(cases):
        bench = fake_bench(tools, f"bench{i}", stdout, stderr, status)
        p = run(["--bench", bench, "--problem", "lecture"], out_dir, pythonpath=marker_torch)
        expect_refusal(f"fake conv_bench, {what}", p, needle, out_dir)
    # conv_bench's own refusal of a selection: its line and status, unchanged.
    refusal = "conv_bench: invalid value for --problem: 'nope' (expected one of lecture)\n"
    bench = fake_bench(tools, "refusing", "", refusal, 2)
    p = run(["--bench", bench, "--problem", "nope"], out_dir, pythonpath=marker_torch)
    expect_refusal("conv_bench refuses", p, "--problem", out_dir, prefix="conv_bench: ")
    check(p.stderr == refusal, f"conv_bench's line changed: {p.stderr!r}, want {refusal!r}")
    check(not os.path.exists(marker), "a malformed --list got as far as importing torch")
    print(f"fake conv_bench: {len(cases) + 1} malformed lists and refusals")


def shape_parsing(module, tools):
    """The shapes and their outputs, through a fake --list, and the flags passed."""
    text = HEADER + "\n" + "".join(line + "\n" for line, _ in SHAPES)
    bench = fake_bench(tools, "shapes_bench", text)
    flags = ["--model", "m", "--n", "2", "--layout", "nhwc"]
    args = module.parse_args(["--csv", "x.csv"] + flags + ["--repeat", "3"])
    check(module.selection_flags(args) == flags,
          f"selection flags {module.selection_flags(args)}, want {flags}")
    shapes = module.read_shapes(bench, module.selection_flags(args))
    with open(bench + ".argv") as f:
        passed = f.read().split()
    check(passed == ["--list"] + flags, f"conv_bench was given {passed}")
    check(len(shapes) == len(SHAPES), f"{len(shapes)} shapes read, want {len(SHAPES)}")
    for shape, (line, want) in zip(shapes, SHAPES):
        fields = line.split(",")
        check(shape.name == fields[0] and shape.layout == fields[-1]
              and [str(v) for v in shape[1:-1]] == fields[1:-1],
              f"{line}: read as {shape}")
        check(module.output_shape(shape) == want,
              f"{line}: output {module.output_shape(shape)}, want {want}")
    print(f"shapes: {len(shapes)} parsed, outputs as computed by hand")


def real_bench(module, bench, out_dir):
    """The real conv_bench's --list: the lecture problem, every problem, ResNet-50."""
    (lecture,) = module.read_shapes(bench, ["--problem", "lecture"])
    check(",".join(str(v) for v in lecture) == LECTURE, f"lecture read as {lecture}")
    check(module.output_shape(lecture) == SHAPES[0][1],
          f"lecture's output {module.output_shape(lecture)}")
    every = module.read_shapes(bench, ["--problem", "all", "--layout", "nhwc"])
    check(len(every) > 1 and all(min(module.output_shape(s)) >= 1 for s in every),
          f"--problem all: {every}")
    check(all(s.layout == "nhwc" for s in every if s.name in ("lecture", "hpc101")),
          "--layout nhwc did not reach conv_bench")
    layers = module.read_shapes(bench, ["--model", "resnet50", "--n", "2"])
    check(len(layers) > 1 and all(s.n == 2 and s.count >= 1 for s in layers),
          f"resnet50 --n 2: {layers}")
    own = subprocess.run([bench, "--list", "--problem", "nope"], capture_output=True, text=True)
    p = run(["--bench", bench, "--problem", "nope"], out_dir)
    expect_refusal("real conv_bench refuses", p, "--problem", out_dir, prefix="conv_bench: ")
    check(p.stderr == own.stderr, f"conv_bench's line changed: {p.stderr!r} vs {own.stderr!r}")
    print(f"real conv_bench: lecture, {len(every)} problems, {len(layers)} ResNet-50 layers")


def stand_in_torch(tools, out_dir, bench):
    """PyTorch missing and PyTorch without a GPU, on any machine."""
    missing = fake_torch(tools, "missing", "raise ModuleNotFoundError(\"No module named 'torch'\","
                                           " name='torch')\n")
    no_gpu = fake_torch(tools, "no_gpu", "__version__ = '0.0+stand-in'\n"
                                         "class version:\n    cuda = None\n"
                                         "class cuda:\n    @staticmethod\n"
                                         "    def is_available():\n        return False\n")
    args = ["--bench", bench, "--problem", "lecture", "--repeat", "2", "--warmup", "1"]
    expect_refusal("PyTorch missing (stand-in)", run(args, out_dir, pythonpath=missing),
                   "PyTorch is not installed", out_dir)
    expect_refusal("no GPU (stand-in)", run(args, out_dir, pythonpath=no_gpu), "no CUDA GPU",
                   out_dir)
    print("stand-in torch: PyTorch missing, no GPU")


def what_is_here():
    """'gpu' where PyTorch sees a CUDA GPU, 'torch' where it sees none, else None."""
    p = subprocess.run([sys.executable, "-c", "import sys, torch; "
                        "sys.exit(0 if torch.cuda.is_available() else 3)"],
                       capture_output=True, timeout=300)
    return {0: "gpu", 3: "torch"}.get(p.returncode)


def check_result(path, stdout):
    meta, fields, rows = doc_tables.read_csv(path)  # as the notes read it
    for key in ("gpu", "host", "date", "command", "torch"):
        check(meta.get(key), f"the CSV has no '# {key}:' line: {meta}")
    check("cuDNN" in meta.get("torch", ""), f"# torch: {meta.get('torch')}")
    check(",".join(fields) == COLUMNS, f"CSV columns {fields}, want {COLUMNS}")
    versions = sorted(r["version"] for r in rows)
    check(versions == ["PyTorch FP32", "PyTorch TF32"], f"rows {versions}")
    for r in rows:
        what = f"row {r['version']}"
        check(r["problem"] == "lecture" and r["count"] == "1" and r["status"] == "ok",
              f"{what}: {r}")
        check(r["verdict"].startswith("OK (shape checked; TF32 vs FP32 rel L2"),
              f"{what}: verdict {r['verdict']!r}")
        try:
            low, mid, high = (float(r[k]) for k in ("min_ms", "median_ms", "max_ms"))
        except ValueError:
            low = mid = high = 0.0
        check(0.0 < low <= mid <= high, f"{what}: times {low}, {mid}, {high}")
    check(stdout.count("1 of 1") == 2, f"the table has not 2 lines '1 of 1': {stdout!r}")


def real_run(tools, out_dir, bench):
    """The script for real on the lecture problem: what happens depends on
    this machine, and each outcome is checked."""
    here = what_is_here()
    args = ["--bench", bench, "--problem", "lecture", "--repeat", "2", "--warmup", "1"]
    p = run(args, out_dir)
    if here is None:
        expect_refusal("real run without PyTorch", p, "PyTorch", out_dir)
    elif here == "torch":
        expect_refusal("real run without a GPU", p, "no CUDA GPU", out_dir)
    else:
        result = os.path.join(out_dir, "out.csv")
        if check(p.returncode == 0, f"real run: exit status {p.returncode}: {p.stderr}"):
            print(p.stdout, end="")
            check_result(result, p.stdout)
        if os.path.exists(result):
            os.remove(result)
        # --pass all: each class in each pass, a column pass
        p = run(args + ["--pass", "all"], out_dir)
        if check(p.returncode == 0, f"--pass all: exit status {p.returncode}: {p.stderr}"):
            _, fields, rows = doc_tables.read_csv(result)
            check(",".join(fields) == COLUMNS_PASS, f"--pass all: columns {fields}")
            got = sorted((r["pass"], r["version"]) for r in rows if r["status"] == "ok")
            want = sorted((pa, v) for pa in ("forward", "dgrad", "wgrad")
                          for v in ("PyTorch FP32", "PyTorch TF32"))
            check(got == want, f"--pass all: rows {got}")
        if os.path.exists(result):
            os.remove(result)
        hidden = run(args, out_dir, env={"CUDA_VISIBLE_DEVICES": ""})
        expect_refusal("real run, CUDA_VISIBLE_DEVICES empty", hidden, "no CUDA GPU", out_dir)
    said = {None: "PyTorch is missing", "torch": "PyTorch sees no CUDA GPU",
            "gpu": "PyTorch and a GPU: timed"}[here]
    print(f"real run on --problem lecture: {said}")
    # PyTorch is optional; a GPU that PyTorch cannot see, where one is required, is not.
    if here == "torch" and os.environ.get("CONV_REQUIRE_GPU") == "1":
        check(False, f"CONV_REQUIRE_GPU=1 but {said}")


def main(argv):
    module = load_script()
    with tempfile.TemporaryDirectory() as tools, tempfile.TemporaryDirectory() as out_dir:
        marker = os.path.join(tools, "torch_imported")
        marker_torch = fake_torch(tools, "marker", f"open({marker!r}, 'w').close()\n"
                                                   "raise ImportError('stand-in')\n")
        bad_flags(tools, out_dir, marker_torch, marker)
        fake_lists(tools, out_dir, marker_torch, marker)
        # The marker can fail the checks above: a good list gets as far as torch.
        good = fake_bench(tools, "lecture_bench", HEADER + "\n" + LECTURE + "\n")
        p = run(["--bench", good, "--problem", "lecture"], out_dir, pythonpath=marker_torch)
        expect_refusal("a good list, stand-in torch", p, "PyTorch cannot be imported", out_dir)
        check(os.path.exists(marker), "a good command line did not reach import torch")
        shape_parsing(module, tools)
        bench = argv[0] if argv else good
        if argv:
            real_bench(module, bench, out_dir)
        else:
            print("real conv_bench: not given (a fake one stands in)")
        stand_in_torch(tools, out_dir, bench)
        real_run(tools, out_dir, bench)
    return verdict()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
