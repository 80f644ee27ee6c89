#!/usr/bin/env python3
"""PyTorch beside cuDNN: times torch.nn.functional.conv2d on conv_bench's problems.

What a student who writes the convolution in PyTorch gets on the same GPU.
PyTorch runs a float32 convolution on an NVIDIA GPU through cuDNN, the
library of conv_bench's cuDNN rows: it calls cuDNN's graph API (as the rows
"cuDNN graph" and "cuDNN graph TF32" of conv_bench do), with the cuDNN that
PyTorch ships, which may be another version than the one this project builds
with, and with torch.backends.cudnn.benchmark on it times cuDNN's engines on
the first call of a shape and keeps the fastest. So a PyTorch row is cuDNN
as a framework calls it, plus what the framework adds (a Python call, the
output's allocation): the number to put beside our kernels and beside
conv_bench's own cuDNN rows, measured on the same shapes.

The shapes come from conv_bench itself: the script runs `conv_bench --list`
with the selection flags given (--problem, --model, --n, --layout), so both
time exactly the same problems, and a selection conv_bench rejects is
rejected with conv_bench's own line. Each shape is timed in two precision
classes (--classes picks them):

    PyTorch FP32   torch.backends.cudnn.allow_tf32 and
                   torch.backends.cuda.matmul.allow_tf32 False: float
                   arithmetic throughout, as conv_bench's "cuDNN" and
                   "cuDNN graph" rows
    PyTorch TF32   both True (PyTorch's default for convolutions): tensor
                   cores on float data, as conv_bench's "cuDNN graph TF32"

--pass dgrad|wgrad|all times the backward pass instead of (or, with all,
beside) the forward one, as conv_bench's --pass: the gradient of the input,
torch.nn.grad.conv2d_input(x.shape, w, dy), and of the weight,
torch.nn.grad.conv2d_weight(x, w.shape, dy), from a random dy of the
output's shape; both go to cuDNN's backward functions, as autograd's do.
Their results are checked for the shape of x and of w, and TF32 against
FP32, as the forward one's; the CSV then has a column pass after problem.

For each shape: a random float32 input (N,C,H,W) and weight (K,C,R,S) on
the GPU (torch.channels_last for both in an NHWC problem), then
F.conv2d(x, w, stride, padding, dilation), no bias, under torch.no_grad()
with torch.backends.cudnn.benchmark = True. Before timing, the output must
have the shape (N,K,P,Q), with P = (H + 2*pad_h - dil_h*(R-1) - 1)//stride_h
+ 1 and Q likewise, as conv_bench computes them, and the TF32 output must
agree with the FP32 one within a relative L2 error of 1e-2; a row that fails
a check is an error and is not timed. Then W warm-up calls (they also absorb
cudnn.benchmark's search) and R calls, each timed between its own pair of
CUDA events: the median is kept, with the min and the max. The tensors are
freed between shapes, so that the large problems (N=10000) fit.

The CSV has the header lines of every program's CSV (# gpu, # host, # date,
# command; # model for a model run), then # torch: the versions of PyTorch,
of the cuDNN it ships and of its CUDA; then one row per shape and class:

    problem,version,median_ms,min_ms,max_ms,count,status,verdict
    "lecture","PyTorch TF32",MEDIAN,MIN,MAX,1,ok,"OK (shape checked; TF32 vs FP32 rel L2 ...)"

(count: how often a model's layer occurs, 1 for a problem). The table on
stdout shows the same rows as they come.

    scripts/torch_reference.py --problem lecture --csv /tmp/torch_lecture.csv
    scripts/torch_reference.py --problem all --csv /tmp/torch_all.csv
    scripts/torch_reference.py --model resnet50 --n 64 --layout nhwc --csv /tmp/r50.csv
    scripts/torch_reference.py --problem hpc101 --classes tf32 --repeat 100 --csv /tmp/h.csv
    scripts/torch_reference.py --bench build/debug/bin/conv_bench --problem cutlass --csv /tmp/c.csv

Exit status: 0 when every row passed its checks, 1 when a row is an error
(a failed check, or a runtime error such as running out of GPU memory), 2 on
a bad command line (every flag is checked before PyTorch is imported), a
selection conv_bench rejects, or where conv_bench, PyTorch or a CUDA GPU is
missing: one line on stderr that says which, nothing on stdout, no CSV.

Optional: nothing in the build or the tests needs PyTorch. Python 3, the
standard library, and torch (imported only once the flags are checked).
"""
import argparse
import collections
import datetime
import gc
import os
import re
import shlex
import statistics
import subprocess
import sys
import warnings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_BENCH = os.path.join("build", "release", "bin", "conv_bench")
NAME = "torch_reference"

# The CSV that conv_bench --list prints: its header, exactly.
LIST_COLUMNS = ["name", "count", "n", "c", "h", "w", "k", "r", "s", "pad_h", "pad_w",
                "stride_h", "stride_w", "dil_h", "dil_w", "layout"]
LAYOUTS = ("nchw", "nhwc")
# --classes: the name on the command line -> the row's version, TF32 allowed
CLASSES = collections.OrderedDict([("fp32", ("PyTorch FP32", False)),
                                   ("tf32", ("PyTorch TF32", True))])
CSV_COLUMNS = "problem,version,median_ms,min_ms,max_ms,count,status,verdict"
# --pass: the computations, as conv_bench's --pass names them. A run with a
# backward pass has a column pass after problem, as conv_bench's files.
PASSES = ("forward", "dgrad", "wgrad")
CSV_COLUMNS_PASS = "problem,pass,version,median_ms,min_ms,max_ms,count,status,verdict"
WARMUP_RANGE = (0, 1000)
REPEAT_RANGE = (1, 10000)
TF32_TOLERANCE = 1e-2  # relative L2 error of the TF32 output against the FP32 one

Shape = collections.namedtuple("Shape", LIST_COLUMNS)


class Refused(Exception):
    """A run that cannot start: one line for stderr and exit status 2. With
    passthrough, another program's own message, printed unchanged."""

    def __init__(self, line, passthrough=None, status=2):
        super().__init__(line)
        self.line = line
        self.passthrough = passthrough
        self.status = status


# ---- the command line, checked before anything else ----

class OneLineParser(argparse.ArgumentParser):
    """argparse, but a bad command line is one line on stderr, as conv_bench's."""

    def error(self, message):
        raise Refused(f"{message} (see --help)")


class Once(argparse.Action):
    """Stores a flag's value; a flag given twice is an error, as in conv_bench."""

    def __call__(self, parser, namespace, values, option_string=None):
        seen = getattr(namespace, "_seen", set())
        if self.dest in seen:
            raise Refused(f"{option_string} is given twice")
        namespace._seen = seen | {self.dest}
        setattr(namespace, self.dest, values)


def parse_args(argv):
    parser = OneLineParser(
        prog="scripts/torch_reference.py", allow_abbrev=False,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Times torch.nn.functional.conv2d (cuDNN as PyTorch calls it) on the\n"
                    "shapes that conv_bench's selection flags pick, in FP32 and TF32, and\n"
                    "writes a CSV in the format of conv_bench's.",
        epilog="The selection flags go to `conv_bench --list` unchanged: conv_bench checks\n"
               "them. A run needs PyTorch and a CUDA GPU; the module docstring says what\n"
               "each row measures. Exit status: 0 every row OK, 1 a row is an error,\n"
               "2 a bad command line, or conv_bench, PyTorch or a GPU missing.\n\n"
               "  scripts/torch_reference.py --problem lecture --csv /tmp/torch_lecture.csv\n"
               "  scripts/torch_reference.py --model resnet50 --n 64 --layout nhwc "
               "--csv /tmp/r50.csv")
    parser.add_argument("--bench", action=Once, metavar="PATH",
                        help=f"the conv_bench to take the shapes from (default: {DEFAULT_BENCH} "
                             "under the repository root)")
    parser.add_argument("--problem", action=Once, metavar="NAME|all",
                        help="a named problem of conv_bench, or all (passed to conv_bench)")
    parser.add_argument("--model", action=Once, metavar="NAME",
                        help="every distinct convolution of a network, e.g. resnet50 "
                             "(passed to conv_bench)")
    parser.add_argument("--n", action=Once, metavar="N",
                        help="the batch of a model run or of the custom shape "
                             "(passed to conv_bench)")
    parser.add_argument("--layout", action=Once, metavar="nchw|nhwc",
                        help="the layout (passed to conv_bench); NHWC is timed on "
                             "torch.channels_last tensors")
    parser.add_argument("--warmup", action=Once, metavar="W", default="5",
                        help="untimed calls per shape and class, after the checks "
                             "(0 to 1000, default 5)")
    parser.add_argument("--repeat", action=Once, metavar="R", default="20",
                        help="timed calls per shape and class, the median kept "
                             "(1 to 10000, default 20)")
    parser.add_argument("--classes", action=Once, metavar="LIST", default="fp32,tf32",
                        help="precision classes, comma-separated: fp32, tf32 "
                             "(default: fp32,tf32)")
    parser.add_argument("--pass", action=Once, metavar="forward|dgrad|wgrad|all",
                        dest="passes", default="forward",
                        help="the computation, as conv_bench's --pass: F.conv2d (forward), "
                             "the gradient of its input (dgrad: torch.nn.grad.conv2d_input) "
                             "or of its weight (wgrad: conv2d_weight), or all (default "
                             "forward)")
    parser.add_argument("--csv", action=Once, metavar="OUT", required=True,
                        help="the CSV to write (required)")
    return parser.parse_args(argv)


def whole_number(flag, text, low, high):
    value = int(text) if re.fullmatch(r"-?[0-9]{1,12}", text) else None
    if value is None or not low <= value <= high:
        raise Refused(f"--{flag}: '{text}' is not a whole number from {low} to {high}")
    return value


def parse_classes(text):
    names = [name.strip().lower() for name in text.split(",")]
    for name in names:
        if name not in CLASSES:
            raise Refused(f"--classes: '{name}' is not a precision class "
                          f"(expected a comma-separated list of {', '.join(CLASSES)})")
    if len(set(names)) != len(names):
        raise Refused(f"--classes: '{text}' names a class twice")
    return [name for name in CLASSES if name in names]


def parse_passes(text):
    if text == "all":
        return list(PASSES)
    if text not in PASSES:
        raise Refused(f"--pass: '{text}' is not a pass (expected one of "
                      f"{', '.join(PASSES)}, all)")
    return [text]


def check_csv_path(path):
    if path == "":
        raise Refused("--csv: the file name is empty")
    if os.path.isdir(path):
        raise Refused(f"--csv: '{path}' is a folder, not a file")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise Refused(f"--csv: the folder '{folder}' does not exist")
    if not os.access(folder, os.W_OK | os.X_OK) or (
            os.path.exists(path) and not os.access(path, os.W_OK)):
        raise Refused(f"--csv: '{path}' cannot be written")


def bench_path(given):
    path = given if given is not None else os.path.join(ROOT, DEFAULT_BENCH)
    if not os.path.isfile(path) or not os.access(path, os.X_OK):
        how = ("build it first (scripts/run.sh, or cmake --preset release && cmake --build "
               "--preset release)" if given is None else "pass the path of a built conv_bench")
        raise Refused(f"--bench: no conv_bench program at '{path}': {how}")
    return path


def check_args(args):
    """Every flag of this script, before conv_bench runs and before torch is imported."""
    args.warmup = whole_number("warmup", args.warmup, *WARMUP_RANGE)
    args.repeat = whole_number("repeat", args.repeat, *REPEAT_RANGE)
    args.classes = parse_classes(args.classes)
    args.passes = parse_passes(args.passes)
    check_csv_path(args.csv)
    args.bench = bench_path(args.bench)
    return args


# ---- the shapes, from conv_bench --list ----

def selection_flags(args):
    """conv_bench's flags among ours, as given (conv_bench checks them)."""
    flags = []
    for flag in ("problem", "model", "n", "layout"):
        value = getattr(args, flag)
        if value is not None:
            flags += [f"--{flag}", value]
    return flags


def output_size(size, pad, dil, filt, stride):
    """P (or Q), as conv_bench computes it (common/conv_params.h)."""
    return (size + 2 * pad - dil * (filt - 1) - 1) // stride + 1


def output_shape(shape):
    return (shape.n, shape.k,
            output_size(shape.h, shape.pad_h, shape.dil_h, shape.r, shape.stride_h),
            output_size(shape.w, shape.pad_w, shape.dil_w, shape.s, shape.stride_w))


def parse_row(fields, where):
    if len(fields) != len(LIST_COLUMNS):
        raise Refused(f"{where}: {len(fields)} fields, expected {len(LIST_COLUMNS)} "
                      f"({','.join(LIST_COLUMNS)})")
    values = {"name": fields[0], "layout": fields[-1]}
    if values["name"] == "":
        raise Refused(f"{where}: the name is empty")
    if values["layout"] not in LAYOUTS:
        raise Refused(f"{where}: layout '{values['layout']}' is not nchw or nhwc")
    for column, text in zip(LIST_COLUMNS[1:-1], fields[1:-1]):
        if not re.fullmatch(r"-?[0-9]{1,10}", text):
            raise Refused(f"{where}: {column} '{text}' is not a whole number")
        values[column] = int(text)
        least = 0 if column.startswith("pad") else 1
        if values[column] < least:
            raise Refused(f"{where}: {column} {values[column]} is below {least}")
    shape = Shape(**values)
    if min(output_shape(shape)[2:]) < 1:
        raise Refused(f"{where}: the filter is larger than the padded image: no output")
    return shape


def parse_list(text, source):
    """The shapes of conv_bench --list's CSV, or Refused naming the line."""
    lines = text.splitlines()
    header = ",".join(LIST_COLUMNS)
    if not lines or lines[0].strip() != header:
        first = lines[0] if lines else ""
        raise Refused(f"{source}: unexpected header '{first}' (expected '{header}')")
    shapes = [parse_row(line.split(","), f"{source}, line {number}")
              for number, line in enumerate(lines[1:], start=2) if line.strip()]
    if not shapes:
        raise Refused(f"{source}: no shapes")
    return shapes


def read_shapes(bench, flags):
    """Runs conv_bench --list with the selection flags; conv_bench's own
    refusal (exit status 2, one line) comes back unchanged."""
    command = [bench, "--list"] + flags
    source = f"{os.path.basename(bench)} --list"
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.SubprocessError) as e:
        raise Refused(f"--bench: '{bench}' cannot be run: {e}") from None
    if done.returncode != 0:
        if "unknown option '--list'" in done.stderr:
            raise Refused(f"--bench: '{bench}' has no --list: rebuild it")
        if done.returncode == 2 and done.stderr.strip():
            raise Refused(done.stderr.strip(), passthrough=done.stderr)
        why = done.stderr.strip().splitlines()[:1] or ["no message"]
        raise Refused(f"{source} failed with exit status {done.returncode}: {why[0]}")
    return parse_list(done.stdout, source)


# ---- PyTorch and the GPU ----

def load_torch():
    """torch, once it is known to see a CUDA GPU with cuDNN, else Refused."""
    with warnings.catch_warnings():  # what an import warns of is no answer here
        warnings.simplefilter("ignore")
        try:
            import torch
        except ModuleNotFoundError as e:
            if e.name != "torch":
                raise Refused(f"PyTorch cannot be imported: {e}") from None
            raise Refused("PyTorch is not installed (python3 -m pip install torch); "
                          "this script times torch.nn.functional.conv2d") from None
        except Exception as e:  # a broken install: missing libraries, wrong build
            raise Refused(f"PyTorch cannot be imported: {one_line(e)}") from None
    with warnings.catch_warnings(record=True) as seen:  # e.g. a driver too old
        warnings.simplefilter("always")
        available = torch.cuda.is_available()
    if not available:
        built = getattr(getattr(torch, "version", None), "cuda", None)
        build = f"built for CUDA {built}" if built else "a CPU-only build"
        said = f"; it says: {one_line(seen[-1].message)}" if seen else ""
        raise Refused(f"no CUDA GPU: torch.cuda.is_available() is false "
                      f"(PyTorch {torch.__version__}, {build}){said}")
    if not torch.backends.cudnn.is_available():
        raise Refused(f"PyTorch {torch.__version__} has no cuDNN: its convolutions "
                      "would not be cuDNN's")
    return torch


def one_line(error, limit=200):
    """An exception's first line, fit for a CSV field."""
    lines = str(error).strip().splitlines() or [type(error).__name__]
    text = lines[0].replace('"', "'")
    return text if len(text) <= limit else text[:limit - 3] + "..."


def set_class(torch, tf32):
    # PyTorch 2.9 and later also take torch.backends.cudnn.conv.fp32_precision
    # and warn that these two flags will be deprecated; they still set it.
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Please use the new API settings")
        torch.backends.cudnn.allow_tf32 = tf32
        torch.backends.cuda.matmul.allow_tf32 = tf32


def memory_format_of(torch, shape):
    """torch.channels_last for an NHWC problem, else the default (NCHW)."""
    return torch.channels_last if shape.layout == "nhwc" else torch.contiguous_format


def random_inputs(torch, shape, generator):
    """x (N,C,H,W) and w (K,C,R,S), float32 on the GPU; channels_last for NHWC
    (allocated so, not copied, so that a large problem needs no second copy)."""
    memory_format = memory_format_of(torch, shape)
    tensors = []
    for dims in ((shape.n, shape.c, shape.h, shape.w), (shape.k, shape.c, shape.r, shape.s)):
        t = torch.empty(dims, dtype=torch.float32, device="cuda", memory_format=memory_format)
        tensors.append(t.normal_(generator=generator))
    return tensors


def rel_l2(torch, got, want):
    """||got - want|| / ||want||, in doubles, a slice of the batch at a time."""
    per_image = max(1, want[0].numel())
    step = max(1, (1 << 26) // per_image)
    err = ref = 0.0
    for g, w in zip(got.split(step), want.split(step)):
        err += torch.linalg.vector_norm(g - w, dtype=torch.float64).item() ** 2
        ref += torch.linalg.vector_norm(w, dtype=torch.float64).item() ** 2
    return (err / ref) ** 0.5 if ref > 0.0 else (0.0 if err == 0.0 else float("inf"))


def time_calls(torch, call, warmup, repeat):
    """Median, min and max in ms of repeat calls, each between its own events."""
    for _ in range(warmup):
        call()
    torch.cuda.synchronize()
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
              for _ in range(repeat)]
    for start, end in events:
        start.record()
        call()
        end.record()
    torch.cuda.synchronize()
    ms = sorted(start.elapsed_time(end) for start, end in events)
    return statistics.median(ms), ms[0], ms[-1]


Row = collections.namedtuple("Row", "problem pass_ version times count status verdict")


def result_shape(shape, pass_):
    """What the pass computes: y (N,K,P,Q), dx (N,C,H,W) or dw (K,C,R,S)."""
    if pass_ == "dgrad":
        return (shape.n, shape.c, shape.h, shape.w)
    if pass_ == "wgrad":
        return (shape.k, shape.c, shape.r, shape.s)
    return output_shape(shape)


def check_outputs(torch, convolve, shape, classes, pass_="forward"):
    """The checks before timing: {class: None if it passed, else why}, and the
    verdict of the passing rows."""
    want = result_shape(shape, pass_)
    outputs, why = {}, {}
    for name in ["fp32"] + [c for c in classes if c != "fp32"]:  # FP32 is TF32's reference
        set_class(torch, CLASSES[name][1])
        outputs[name] = convolve()
        got = tuple(outputs[name].shape)
        why[name] = None if got == want else f"output shape {got}, expected {want}"
    verdict = "OK (shape checked"
    if "tf32" in classes and why["tf32"] is None and why["fp32"] is None:
        err = rel_l2(torch, outputs["tf32"], outputs["fp32"])
        if not err <= TF32_TOLERANCE:
            why["tf32"] = f"TF32 vs FP32 rel L2 {err:.1e}, above {TF32_TOLERANCE:.0e}"
        verdict += f"; TF32 vs FP32 rel L2 {err:.1e}"
    elif "tf32" in classes and why["fp32"] is not None:
        why["tf32"] = why["tf32"] or "no FP32 output to compare with: " + why["fp32"]
    del outputs
    return {c: why[c] for c in classes}, verdict + ")"


def computation(torch, F, shape, pass_, x, w, dy):
    """The call that is timed: F.conv2d, or the gradient of its input or of
    its weight from dy (what autograd's backward calls, one output each)."""
    geometry = dict(stride=(shape.stride_h, shape.stride_w), padding=(shape.pad_h, shape.pad_w),
                    dilation=(shape.dil_h, shape.dil_w))
    if pass_ == "dgrad":
        return lambda: torch.nn.grad.conv2d_input(x.shape, w, dy, **geometry)
    if pass_ == "wgrad":
        return lambda: torch.nn.grad.conv2d_weight(x, w.shape, dy, **geometry)
    return lambda: F.conv2d(x, w, **geometry)


def run_shape(torch, F, shape, classes, warmup, repeat, generator, pass_="forward"):
    """The rows of one shape and pass: checked, then timed, class by class."""
    rows = []
    try:
        x, w = random_inputs(torch, shape, generator)
        dy = None
        if pass_ != "forward":  # dy has y's shape, in the problem's memory format
            dy = torch.empty(output_shape(shape), dtype=torch.float32, device="cuda",
                             memory_format=memory_format_of(torch, shape)).normal_(generator=generator)
        convolve = computation(torch, F, shape, pass_, x, w, dy)
        why, verdict = check_outputs(torch, convolve, shape, classes, pass_)
    except RuntimeError as e:  # out of memory, a shape cuDNN refuses
        return [Row(shape.name, pass_, CLASSES[c][0], None, shape.count, "error",
                    f"runtime error: {one_line(e)}") for c in classes]
    for c in classes:
        version, tf32 = CLASSES[c]
        if why[c] is not None:
            rows.append(Row(shape.name, pass_, version, None, shape.count, "error", why[c]))
            continue
        try:
            set_class(torch, tf32)
            times = time_calls(torch, convolve, warmup, repeat)
            rows.append(Row(shape.name, pass_, version, times, shape.count, "ok", verdict))
        except RuntimeError as e:
            rows.append(Row(shape.name, pass_, version, None, shape.count, "error",
                            f"runtime error: {one_line(e)}"))
    return rows


# ---- the report: the CSV and the table ----

def host_cpu():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name") and ":" in line:
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


def csv_header(torch, args, argv, shapes):
    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    gpu = (f"{torch.cuda.get_device_name()}, {props.multi_processor_count} SMs, "
           f"compute capability {props.major}.{props.minor}, "
           f"{props.total_memory / 2**30:.1f} GiB")
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    command = " ".join(["scripts/torch_reference.py"] + [shlex.quote(a) for a in argv])
    lines = [f"# gpu: {gpu}", f"# host: {host_cpu()}", f"# date: {date}",
             f"# command: {command}"]
    if args.model is not None:
        lines.append(f"# model: {args.model}, n={shapes[0].n}, {shapes[0].layout}")
    lines.append(f"# torch: {torch.__version__}, cuDNN {torch.backends.cudnn.version()}, "
                 f"CUDA {torch.version.cuda}")
    columns = CSV_COLUMNS if args.passes == ["forward"] else CSV_COLUMNS_PASS
    return "\n".join(lines + [columns]) + "\n"


def csv_line(row, with_pass=False):
    times = ",".join(f"{t:.6f}" for t in row.times) if row.times else ",,"
    pass_ = f"{row.pass_}," if with_pass else ""
    return (f'"{row.problem}",{pass_}"{row.version}",{times},{row.count},{row.status},'
            f'"{row.verdict}"\n')


TABLE = "{:>10}  {:<24} {:<14} {:>10} {:>10} {:>10}  {}"


def table_line(progress, row):
    times = [f"{t:.4f}" for t in row.times] if row.times else ["-"] * 3
    problem = row.problem if row.pass_ == "forward" else f"{row.problem} {row.pass_}"
    return TABLE.format(progress, problem, row.version, *times, row.verdict)


def run(args, argv):
    shapes = read_shapes(args.bench, selection_flags(args))
    torch = load_torch()
    import torch.nn.functional as F

    try:
        out = open(args.csv, "w")
    except OSError as e:
        raise Refused(f"--csv: '{args.csv}' cannot be written: {e.strerror}") from None
    # cudnn.benchmark tries every engine; PyTorch warns of each one that cuDNN
    # refuses for the shape, which is part of the search, not an error.
    warnings.filterwarnings("ignore", message="Plan failed with a cudnnException")
    errors = 0
    with out, torch.no_grad():
        torch.backends.cudnn.benchmark = True
        generator = torch.Generator(device="cuda")
        generator.manual_seed(0)
        out.write(csv_header(torch, args, argv, shapes))
        print(f"PyTorch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}, "
              f"CUDA {torch.version.cuda} on {torch.cuda.get_device_name()}: "
              f"{', '.join(args.passes)}, "
              f"warm-up {args.warmup}, then the median of {args.repeat} timed calls")
        print(TABLE.format("progress", "problem", "version", "median ms", "min ms", "max ms",
                           "verdict"), flush=True)
        with_pass = args.passes != ["forward"]
        for number, shape in enumerate(shapes, start=1):
            rows = [row for pass_ in args.passes
                    for row in run_shape(torch, F, shape, args.classes, args.warmup,
                                         args.repeat, generator, pass_)]
            for row in rows:
                errors += row.status != "ok"
                out.write(csv_line(row, with_pass))
                print(table_line(f"{number} of {len(shapes)}", row), flush=True)
            out.flush()
            gc.collect()
            torch.cuda.empty_cache()
    print(f"shapes: {len(shapes)}; error rows: {errors or 'none'}; written to {args.csv}")
    return 1 if errors else 0


def main(argv):
    try:
        args = check_args(parse_args(argv))
        return run(args, argv)
    except Refused as refused:
        if refused.passthrough is not None:
            sys.stderr.write(refused.passthrough)
        else:
            print(f"{NAME}: {refused.line}", file=sys.stderr)
        return refused.status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
