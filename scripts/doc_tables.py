#!/usr/bin/env python3
"""Fills the measured-results tables of the lecture notes from benchmark CSVs.

A note marks a table with two comment lines naming the CSV (relative to the
repository root):

    <!-- results: bench/results/04_tiled_2d_hpc101-image.csv -->
    <!-- /results -->

or, for a conv_bench CSV, one problem's rows and optionally only some steps'
(the references, step 01, cuDNN and cuBLAS, always stay):

    <!-- results: bench/results/conv_bench_all.csv problem=lecture rows=05 -->

or only some versions, by their keys (the version's first word), beside the
references (cuDNN, cuBLAS, im2col + cuBLAS, step 01), which always stay:

    <!-- results: bench/results/08_hpc101_nhwc.csv keys=6f,8b,8b-xt -->

or only some columns, in the order named (a note's progression table):

    <!-- results: bench/results/04_hpc101.csv columns=version,median_ms,vs_cuDNN -->

or the summary of a conv_bench CSV for one precision class (FP32 unless
class= says TF32), one line per problem: cuDNN best of the class, PyTorch's
time where torch= names a CSV of scripts/torch_reference.py, and each step's
fastest row of the class as a ratio to cuDNN best:

    <!-- results: bench/results/conv_bench_all.csv summary=steps class=TF32 torch=bench/results/torch_all.csv -->

or step 06's GEMM progression, one line per GEMM and one column per CSV (a
GEMM CSV's "vs cuBLAS"; for a convolution CSV, cuBLAS's GEMM stage time over
the GEMM's, both read from the verdict column's "GEMM x ms"); the first CSV's
header line names the GPU:

    <!-- results: bench/results/06_gemm_4096.csv progression=bench/results/06_lab_nhwc.csv -->

or the layers of a model run (conv_bench --model) with the model's totals per
class, beside PyTorch's totals from a CSV of scripts/torch_reference.py --model:

    <!-- results: bench/results/model_resnet50_nhwc.csv summary=model torch=bench/results/torch_model_resnet50_nhwc.csv -->

or cuDNN's rows of a conv_bench CSV per class (legacy, graph API) beside PyTorch's
times from a CSV of scripts/torch_reference.py measured on the same machine:

    <!-- results: bench/results/conv_bench_all.csv references=bench/results/torch_all.csv -->

and this script replaces whatever stands between them with a Markdown table
generated from that CSV, headed by the GPU, the date and the command taken from
the CSV's "# gpu:" (else "# host:"), "# date:" and "# command:" lines (every
program writes them, see conv_report_begin in common/conv_report.h).

A measured number in the prose is marked the same way, with the row and the
column it comes from:

    took <!-- value: bench/results/04_hpc101.csv version="4a 32x64, 16 outputs/thread" median_ms -->0.085<!-- /value --> ms

(optional: problem=NAME for a conv_bench CSV, scale=100 for a percentage,
prefix="cuDNN" instead of version= to pick the row whose name starts so (cuDNN's
row carries the algorithm it chose), reference_of="VERSION" for the cuDNN row
that VERSION's "vs cuDNN" ratio was taken against (its ref_cuDNN column),
COLUMN="VALUE" to pick the row by another
column than version (what="run" in bench/results/timings_cpu.csv), and instead
of a column verdict:REGEX, the
number the regular expression's group finds in the verdict). A profile saved
from Nsight Compute's --metrics output (a .txt log) is read the same way, the
metric named instead of a row and a column:

    <!-- value: bench/results/logs/08_ncu_8b_hpc101_nhwc.txt metric=launch__registers_per_thread -->122<!-- /value -->

(optional: launch=N, counted from 1, for a log that profiles several kernels:
the Nth kernel's section, each starting with "Section: Command line profiler
metrics"; without launch=, a metric that more than one section gives is an
error). A report of Nsight Compute's named sections (--section, --set) is read
by a row's display name, with the section's title where several have it, and
scale= turns a count into millions or billions:

    <!-- value: bench/results/logs/06_ncu_6e_4096.txt row="L2 Hit Rate" -->74<!-- /value -->%
    <!-- value: bench/results/logs/06_ncu_stalls_6e_4096.txt metric=smsp__inst_executed.sum scale=1e-9 -->2.40<!-- /value --> G

A ratio of two metrics of the same kernel names the second with per=:

    <!-- value: bench/results/logs/05_prefetch_float4_ncu_lecture.txt metric=smsp__inst_executed_pipe_fma.sum per=smsp__inst_executed_op_shared_ld.sum -->17.5<!-- /value --> FMAs per shared load

A number in a plain-text log of headed sections (a tuning log) is found by
its section's heading, optionally a block in it, the line's first word and a
regular expression whose group is the number:

    <!-- value: instructor/logs/06_tune_6e.txt heading="tune_6e.cu on 45fe6a2" block="GEMM 4096 4096 4096" line=bm64_tm8_bk16_minb3_wr4 find="([0-9.]+)% of cuBLAS" -->96.6<!-- /value -->%

The number is written with as many decimals as the text
between the markers has; --check fails when it differs from the CSV at that
precision. A number the text derives rather than measures (napkin math) is
followed by <!-- derived -->; --check fails on a time, rate or ratio in the
prose that carries neither.

Kernel lines shown in a note come from the source, between two comments in the
code, "excerpt: NAME" and "excerpt end: NAME":

    <!-- code: 02_naive_gpu/conv_naive.cu grid-stride loop -->
    <!-- /code -->

No number and no code line in a note is typed by hand. An excerpt shows the
solution of an exercise (scripts/exercises.py) without its markers and stub;
in a student tree, written from the stubbed sources, it shows the stub. A
file that a student tree leaves out (listed in exercises/withheld.txt there)
keeps the table, number or excerpt that the solution tree generated from it.

    python3 scripts/doc_tables.py docs/*.md docs/lab/*.md          rewrite the notes in place
    python3 scripts/doc_tables.py --check docs/*.md docs/lab/*.md  exit 1 if a note is stale
    python3 scripts/doc_tables.py --template bench/performance_template.md docs/performance.md
                     exit 1 if the page is not the template with its tables and numbers
                     filled (scripts/regenerate_docs.sh writes the page from the template,
                     so an edit made to the page alone would be lost)
"""
import csv
import io
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BLOCK = re.compile(r"(<!-- results: (?P<path>[^ ]+)(?P<opts>(?: \w+=[^ ]+)*) -->\n)"
                   r"(?P<body>.*?)(<!-- /results -->)", re.DOTALL)

# Column titles for the CSV fields the step programs write.
TITLES = {"version": "version", "class": "class", "median_ms": "median ms", "gflops": "GFLOP/s",
          "pct_peak": "% FP32 peak", "gbps": "GB/s", "passed": None, "status": None,
          "min_ms": None, "max_ms": None, "verdict": "verified",
          "vs_cuDNN": "vs cuDNN best of its class", "ref_cuDNN": None}


def read_csv(path):
    meta, rows = {}, []
    with open(path, newline="") as f:
        lines = f.read().splitlines()
    body = []
    for line in lines:
        if line.startswith("#"):
            key, _, value = line[1:].partition(":")
            meta[key.strip()] = value.strip()
        elif line.strip():
            body.append(line)
    reader = csv.DictReader(io.StringIO("\n".join(body)))
    for row in reader:
        rows.append(row)
    return meta, reader.fieldnames or [], rows


def title(field):
    if field in TITLES:
        return TITLES[field]
    if field.startswith("vs_"):
        return "vs " + field[3:].replace("_", " ")
    return field.replace("_", " ")


def cell(field, value):
    if value is None or value == "":
        return "-"
    if field.startswith("vs_"):
        return f"{float(value):.2f}x"
    if field == "median_ms":
        return f"{float(value):.4f}"
    if field in ("gflops", "gbps"):
        v = float(value)
        return f"{v:.0f}" if v >= 100 else f"{v:.3g}"
    if field == "verdict":
        # "OK (262144 checked, max abs err ...)" -> "OK (262144 checked)"
        m = re.match(r"OK \((\d+) checked", value)
        return f"OK ({m.group(1)} outputs)" if m else value
    return value.replace("|", "\\|")


def withheld(path_rel):
    """Whether the file is one that this tree leaves out (a student tree names
    them in exercises/withheld.txt) and so cannot regenerate from."""
    listed = os.path.join(ROOT, "exercises", "withheld.txt")
    if os.path.exists(os.path.join(ROOT, path_rel)) or not os.path.exists(listed):
        return False
    with open(listed) as f:
        prefixes = [l.strip() for l in f if l.strip() and not l.startswith("#")]
    return any(path_rel == p or path_rel.startswith(p) for p in prefixes)


def step_of(version):
    """The step a row's version belongs to: its key ("5b", "8b-xt": step 5, 8),
    or an older CSV's step prefix ("05 5b"); 0 for a reference (cuDNN, cuBLAS,
    PyTorch, im2col + cuBLAS)."""
    m = re.match(r"(\d)[a-z](?:-\w+)?(?: |$)|0(\d) ", version)
    return int(m.group(1) or m.group(2)) if m else 0


def ours(version):
    """A row of the course's own GPU kernels: a step from 02 on."""
    return step_of(version) >= 2


def render(csv_rel, opts=""):
    """opts: " summary=steps" gives one line per problem of a conv_bench CSV;
    " problem=NAME" keeps that problem's rows (conv_bench CSVs);
    " pass=NAME" keeps the rows of one pass (dgrad, wgrad) of a CSV with a
    pass column;
    " rows=A,B" keeps the rows of steps A and B (e.g. rows=05), plus the
    references: step 01, cuDNN, cuBLAS;
    " keys=6f,8b" keeps the versions whose key (first word) is listed, plus
    the references (every row that is not a GPU kernel of ours);
    " columns=version,median_ms,vs_cuDNN" shows those columns only, in that
    order (a note's progression table: one short line per version)."""
    path = os.path.join(ROOT, csv_rel)
    if not os.path.exists(path):
        return f"*(no results yet: {csv_rel} has not been measured on a GPU)*\n"
    meta, fields, rows = read_csv(path)
    options = dict(o.split("=", 1) for o in opts.split())
    if "problem" in options:
        rows = [r for r in rows if r.get("problem") == options["problem"]]
    if "pass" in options:
        rows = [r for r in rows if (r.get("pass") or "forward") == options["pass"]]
    if "rows" in options:
        keep = {int(step) for step in options["rows"].split(",")} | {1}
        rows = [r for r in rows if step_of(r["version"]) in keep
                or r["version"].startswith(("cuDNN", "cuBLAS"))]
    if "keys" in options:
        keys = set(options["keys"].split(","))
        rows = [r for r in rows if not ours(r["version"]) or r["version"].split(" ")[0] in keys]
    fields = [f for f in fields if f not in ("problem", "pass")]
    # Columns empty in every row (e.g. % of GPU peak in a CPU table) are left out.
    shown = [f for f in fields
             if title(f) is not None and any((r.get(f) or "") != "" for r in rows)]
    if "columns" in options:
        wanted = options["columns"].split(",")
        unknown = [f for f in wanted if f not in fields]
        if unknown:
            raise SystemExit(f"{csv_rel}: no column {', '.join(unknown)} (columns: "
                             f"{', '.join(fields)})")
        shown = [f for f in wanted if f in shown]
    # Output files named by absolute path on the GPU machine: keep the file name.
    command = " ".join(os.path.basename(a) if a.startswith("/") else a
                       for a in meta.get("command", "?").split())
    out = []
    gpu = meta.get("gpu") or meta.get("host", "an unknown machine")
    out.append(f"Measured on {gpu}, {meta.get('date', 'unknown date')}, with "
               f"`{command}` (file `{csv_rel}`).")
    out.append("")
    torch = load_torch(options.get("torch") or options.get("references"), gpu,
                       options.get("pass", "forward"))
    if options.get("summary") == "model":
        return "\n".join(out) + "\n" + render_model(rows, torch)
    if "summary" in options:
        return "\n".join(out) + "\n" + render_summary(rows, options.get("class", "FP32"), torch)
    if "references" in options:
        return "\n".join(out) + "\n" + render_references(rows, torch)
    if "progression" in options:
        return "\n".join(out) + "\n" + render_progression(csv_rel, rows,
                                                           options["progression"].split(","))
    heads = [title(f) for f in shown]
    if "vs_cuDNN" in fields and "ref_cuDNN" not in fields:
        by_class_ratios(rows)
        if not any(r["version"].startswith("cuDNN graph") for r in rows):
            # a run from before the graph API's rows: its best is the legacy API's
            heads = [h.replace("vs cuDNN best of its class", "vs cuDNN legacy of its class")
                     for h in heads]
    out.append("| " + " | ".join(heads) + " |")
    out.append("|" + "|".join("---" if f in ("version", "verdict") else "---:"
                              for f in shown) + "|")
    for row in rows:
        out.append("| " + " | ".join(cell(f, row.get(f)) for f in shown) + " |")
    return "\n".join(out) + "\n"


def by_class_ratios(rows):
    """A CSV from before the by-class references took every "vs cuDNN" against
    cuDNN's legacy FP32 row; from the same run's rows, each ratio is taken
    again against cuDNN best of the row's class, as programs now do."""
    for r in rows:
        if not r.get("median_ms"):
            continue
        best = fastest([c for c in rows if c.get("problem") == r.get("problem")
                        and c["version"].startswith("cuDNN") and c.get("median_ms")
                        and verified(c) and class_allows(row_class(r), row_class(c))])
        r["vs_cuDNN"] = f"{float(best['median_ms']) / float(r['median_ms']):.4f}" if best else ""


def row_class(row):
    """A row's precision class: the class column, else (an older CSV) from its name."""
    if row.get("class"):
        return row["class"]
    return "TF32" if "TF32" in row["version"] and "3xTF32" not in row["version"] else "FP32"


def class_allows(allowed, cls):
    """As conv_class_allows: the same class, or FP32 where TF32 is allowed."""
    return cls == allowed or (allowed == "TF32" and cls == "FP32")


def fastest(rows):
    return min(rows, key=lambda r: float(r["median_ms"]), default=None)


def load_torch(torch_rel, gpu, pass_="forward"):
    """The rows of a CSV of scripts/torch_reference.py, {(problem, version): ms}
    of those of one pass that passed, and the lines to print above the table. PyTorch's
    times sit beside ours only when both ran on the same GPU: a file from
    another GPU (or none at all) gives no rows and, for another GPU, a line
    that says so."""
    path = os.path.join(ROOT, torch_rel) if torch_rel else None
    if not path or not os.path.exists(path):
        return {}, []
    meta, _, trows = read_csv(path)
    name = meta.get("gpu", "an unknown GPU").split(",")[0]
    if name != gpu.split(",")[0]:
        return {}, [f"PyTorch's rows (file `{torch_rel}`) are left out: they were measured "
                    f"on {name}, this table on {gpu.split(',')[0]}.", ""]
    return ({(r["problem"], r["version"]): float(r["median_ms"]) for r in trows
             if r["median_ms"] and r["status"] == "ok"
             and (r.get("pass") or "forward") == pass_},
            [f"PyTorch ({meta.get('torch', 'version unknown')}) on {name}, "
             f"{meta.get('date', '')} (file `{torch_rel}`).", ""])


def render_summary(rows, cls="FP32", torch_rows=({}, [])):
    """One line per problem of a conv_bench CSV for one precision class: cuDNN
    best of that class (the fastest cuDNN row, legacy or graph API, that the
    class allows), PyTorch's time where torch_rows (a CSV of
    scripts/torch_reference.py, from load_torch) has one, then each step's
    fastest row of our own kernels of the class (not im2col + cuBLAS) as a
    ratio to cuDNN best (above 1: faster). Steps without a row of the class
    are left out."""
    torch = {p: ms for (p, v), ms in torch_rows[0].items() if v == f"PyTorch {cls}"}

    def mine(r):
        return ours(r["version"]) and row_class(r) == cls

    timed = [r for r in rows if r["median_ms"] and verified(r)]
    steps = sorted({step_of(r["version"]) for r in timed if mine(r)})
    head = f"| problem | cuDNN best {cls} | ms |"
    rule = "|---|---|---:|"
    if torch:
        head += f" PyTorch {cls} ms |"
        rule += "---:|"
    out = torch_rows[1] + [head + "".join(f" best {s:02d} |" for s in steps) + " fastest of ours |",
                           rule + "---:|" * len(steps) + "---|"]
    for problem in dict.fromkeys(r["problem"] for r in rows):
        here = [r for r in timed if r["problem"] == problem]
        best = fastest([r for r in here if r["version"].startswith("cuDNN")
                        and class_allows(cls, row_class(r))])
        if best is None:
            continue
        ref = float(best["median_ms"])
        line = f"| {problem} | {best['version']} | {ref:.4f} |"
        if torch:
            line += f" {torch[problem]:.4f} |" if problem in torch else " - |"
        for step in steps:
            top = fastest([r for r in here if mine(r) and step_of(r["version"]) == step])
            line += f" {ref / float(top['median_ms']):.2f}x |" if top else " - |"
        top = fastest([r for r in here if mine(r)])
        if top is None:
            continue  # no kernel of ours of this class runs the problem
        out.append(line + f" {top['version']} ({ref / float(top['median_ms']):.2f}x) |")
    return "\n".join(out) + "\n"


def render_model(rows, torch_rows=({}, [])):
    """The layers of a model run (conv_bench --model: a count column), one line
    each: how often it occurs, then per class (FP32, TF32) cuDNN best, the
    fastest of ours that the class allows and cuDNN best over it (above 1: ours
    is faster), and conv2d_auto's row of the class ("auto FP32", "auto TF32"):
    the kernel it chose (from its verdict) and its ms, "-" where it did not run
    (a run without conv2d_auto's rows has "-" on every layer). A last line with
    the model's totals (time x count summed) where every layer has both, and
    conv2d_auto's total with its time over ours' where it and ours cover every
    layer (conv_bench's "auto:" line); PyTorch's totals where torch_rows (a CSV
    of scripts/torch_reference.py --model, from load_torch) covers every
    layer. As conv_bench's summary (bench/bench_summary.c), an FP32 row of ours
    stands for TF32 too, conv2d_auto's rows each for their own class only: its
    TF32 row has already chosen among the kernels TF32 allows."""
    classes = ("FP32", "TF32")
    torch = torch_rows[0]
    timed = [r for r in rows if r["median_ms"] and verified(r)]
    layers = list(dict.fromkeys(r["problem"] for r in rows))
    counts = {r["problem"]: int(r.get("count") or 1) for r in rows}

    def kernel(r):
        return ours(r["version"])

    def best(layer, cls, mine):
        return fastest([r for r in timed if r["problem"] == layer and mine(r)
                        and class_allows(cls, row_class(r))])

    def auto_row(layer, cls):
        """conv2d_auto's verified row of the class on the layer, or None."""
        return next((r for r in timed if r["problem"] == layer and r["version"] == f"auto {cls}"),
                    None)

    def auto(r):
        """'KEY ms' of conv2d_auto's row, or '-'."""
        m = re.search(r"chose (\S+):", r["verdict"]) if r else None
        return f"{m.group(1) if m else '?'} {float(r['median_ms']):.4f}" if r else "-"

    head, rule = "| layer | count |", "|---|---:|"
    for cls in classes:
        head += f" cuDNN best {cls} ms | fastest of ours {cls} | ms | ratio | auto {cls}: chose, ms |"
        rule += "---:|---|---:|---:|---|"
    out = torch_rows[1] + [head, rule]
    totals = {cls: [0.0, 0.0, 0] for cls in classes}  # cuDNN, ours, layers with both
    autos = {cls: [0.0, 0.0, 0] for cls in classes}  # auto, ours, layers with both
    for layer in layers:
        line = f"| {layer} | {counts[layer]} |"
        for cls in classes:
            ref = best(layer, cls, lambda r: r["version"].startswith("cuDNN"))
            top = best(layer, cls, kernel)
            chose = auto_row(layer, cls)
            if ref and top:
                c, o = float(ref["median_ms"]), float(top["median_ms"])
                totals[cls][0] += counts[layer] * c
                totals[cls][1] += counts[layer] * o
                totals[cls][2] += 1
                line += f" {c:.4f} | {top['version']} | {o:.4f} | {c / o:.2f}x |"
            else:
                line += f" {float(ref['median_ms']):.4f} |" if ref else " - |"
                line += f" {top['version']} | {float(top['median_ms']):.4f} | - |" if top else \
                    " - | - | - |"
            if chose and top:
                autos[cls][0] += counts[layer] * float(chose["median_ms"])
                autos[cls][1] += counts[layer] * float(top["median_ms"])
                autos[cls][2] += 1
            line += f" {auto(chose)} |"
        out.append(line)
    line = f"| **model total** | {sum(counts.values())} |"
    for cls in classes:
        c, o, n = totals[cls]
        line += (f" {c:.3f} | ours | {o:.3f} | {c / o:.2f}x |" if n == len(layers) and o > 0
                 else " - | - | - | - |")
        a, o, n = autos[cls]
        line += (f" {a:.3f}, {a / o:.3f}x the time of ours |" if n == len(layers) and a > 0
                 and o > 0 else " - |")
    out.append(line)
    pt = {cls: sum(counts[l] * torch[(l, f"PyTorch {cls}")] for l in layers)
          for cls in classes if all((l, f"PyTorch {cls}") in torch for l in layers)}
    if pt:
        out.append("")
        out.append("PyTorch on the same layers, the model total: " + "; ".join(
            f"{cls} {pt[cls]:.3f} ms (cuDNN best {totals[cls][0] / pt[cls]:.2f}x its time)"
            if totals[cls][2] == len(layers) else f"{cls} {pt[cls]:.3f} ms"
            for cls in pt) + ".")
    return "\n".join(out) + "\n"


def render_references(rows, torch_rows):
    """One line per problem of a conv_bench CSV with the cuDNN rows: per class,
    cuDNN's legacy row, its graph row and cuDNN best, PyTorch's time (a CSV of
    scripts/torch_reference.py on the same GPU, from load_torch) and cuDNN best
    over PyTorch (below 1: cuDNN best is faster)."""
    torch, out = torch_rows[0], list(torch_rows[1])
    timed = [r for r in rows if r["median_ms"] and verified(r)]

    def ms(problem, prefix):
        r = fastest([r for r in timed if r["problem"] == problem
                     and r["version"].startswith(prefix)])
        return float(r["median_ms"]) if r else None

    def num(x):
        return f"{x:.4f}" if x else "-"

    out += ["| problem | legacy FP32 | graph FP32 | PyTorch FP32 | best / PyTorch "
            "| legacy TF32 | graph TF32 | PyTorch TF32 | best / PyTorch |",
            "|---|" + "---:|" * 8]
    for problem in dict.fromkeys(r["problem"] for r in rows):
        lf, gf = ms(problem, "cuDNN ("), ms(problem, "cuDNN graph (")
        lt, gt = ms(problem, "cuDNN TF32 ("), ms(problem, "cuDNN graph TF32 (")
        fp32 = [x for x in (lf, gf) if x]
        tf32 = [x for x in (lf, gf, lt, gt) if x]  # a TF32 user may run a strict engine
        tf, tt = torch.get((problem, "PyTorch FP32")), torch.get((problem, "PyTorch TF32"))
        line = f"| {problem} | {num(lf)} | {num(gf)} | {num(tf)} | "
        line += f"{min(fp32) / tf:.3f} |" if fp32 and tf else "- |"
        line += f" {num(lt)} | {num(gt)} | {num(tt)} | "
        line += f"{min(tf32) / tt:.3f} |" if tf32 and tt else "- |"
        out.append(line)
    return "\n".join(out) + "\n"


def verified(row):
    """A row that ran and passed (the status column, or an older CSV's verdict)."""
    return row.get("status", "ok") == "ok" and row["verdict"].startswith(("OK", "reference"))


def gemm_name(version):
    """"6e im2col + double buffered", "6e GEMM double buffered" and older CSVs'
    "06 im2col + 6e double buffered" and "im2col + 6e double buffered" all name
    the GEMM "6e double buffered"."""
    m = re.match(r"(6[a-e]) (?:im2col \+ |GEMM )(.*)$", version)
    if m:
        return f"{m.group(1)} {m.group(2)}"
    return re.sub(r"^(?:06 )?(?:im2col \+ |GEMM )?", "", version)


def gemm_stage_ms(row):
    m = re.search(r"GEMM ([0-9.]+) ms", row["verdict"])
    return float(m.group(1)) if m else None


def progression_column(rows):
    """% of cuBLAS per GEMM version: from the GEMM stage times in the verdicts
    (a convolution CSV), else from the vs_cuBLAS column (a GEMM CSV)."""
    stages = {gemm_name(r["version"]): gemm_stage_ms(r) for r in rows}
    ref = stages.get("cuBLAS SGEMM")
    if ref:
        return {v: 100 * ref / t for v, t in stages.items() if t}
    return {gemm_name(r["version"]): 100 * float(r["vs_cuBLAS"]) for r in rows
            if r.get("vs_cuBLAS")}


def render_progression(first_rel, first_rows, others):
    """The GEMM sub-steps as % of cuBLAS, one column per CSV."""
    columns = [(first_rel, progression_column(first_rows))]
    columns += [(rel, progression_column(read_csv(os.path.join(ROOT, rel))[2])) for rel in others]
    versions = [v for v in columns[0][1] if not v.startswith("cuBLAS")]
    out = ["| GEMM | " + " | ".join(os.path.splitext(os.path.basename(rel))[0]
                                    for rel, _ in columns) + " |",
           "|---|" + "---:|" * len(columns)]
    for v in versions:
        out.append(f"| {v} | " + " | ".join(f"{col[v]:.1f}%" if v in col else "-"
                                           for _, col in columns) + " |")
    return "\n".join(out) + "\n"


# ---- measured numbers in the prose ----

VALUE = re.compile(r"<!-- value: (?P<path>\S+) (?P<sel>.*?) -->(?P<text>[^<]*)<!-- /value -->")
SELECT = re.compile(r'(\w+)=("[^"]*"|\S+)|(\S+)')


def key_values(selector, path_rel):
    """A log's selector as its key=value pairs (quotes removed); a bare word is
    an error."""
    found = SELECT.findall(selector)
    opts = {k: v.strip('"') for k, v, _ in found if k}
    if len(found) != len(opts):
        raise ValueError(f"{path_rel}: a selector is key=value pairs, not {selector}")
    return opts


# One metric line of an ncu --metrics log: name, unit (optional), value.
NCU_LINE = re.compile(r"^\s+(?P<name>[a-z]\w*(?:\.\w+)*)\s+(?:\S+\s+)?(?P<value>[\d,]+(?:\.\d+)?)\s*$")
# The line that starts each profiled kernel's metrics in such a log.
NCU_SECTION = "Section: Command line profiler metrics"


def ncu_sections(path):
    """The lines of an ncu log, split at each profiled kernel's section: the
    lines before the first one, then one list per kernel."""
    sections = [[]]
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip() == NCU_SECTION:
                sections.append([])
            sections[-1].append(line)
    return sections


# One row of a section of Nsight Compute's report (--section NAME): its
# display name, unit (optional) and value, e.g. "    L2 Hit Rate   %   73.78".
NCU_ROW = re.compile(r"^\s+(?P<name>\S.*?)\s{2,}(?:\S+\s+)?(?P<value>[\d,]+(?:\.\d+)?)\s*$")
NCU_TITLE = re.compile(r"^\s+Section: (?P<title>.*?)\s*$")


def ncu_row(path, path_rel, name, section):
    """The value of the row called `name` in an ncu report's sections (only
    in the section titled `section`, if given); exactly one must match."""
    found, title = [], None
    with open(path, encoding="utf-8") as f:
        for line in f:
            t = NCU_TITLE.match(line)
            if t:
                title = t.group("title")
                continue
            m = NCU_ROW.match(line)
            if m and m.group("name") == name and section in (None, title):
                found.append(m.group("value"))
    if len(found) != 1:
        raise ValueError(f"{len(found)} rows of {path_rel} are called {name!r}"
                         + (f" in section {section!r}" if section else "")
                         + (" (pick one with section=...)" if len(found) > 1 else ""))
    return float(found[0].replace(",", ""))


def log_value(path, path_rel, selector):
    """A number in a plain-text log of headed sections (a tuning log): in the
    section whose "== " heading contains heading=TEXT, within the block that
    starts at the unindented line beginning with block=TEXT (optional; the
    block ends at the next unindented line), the line whose first word is
    line=NAME, the first group of the regular expression find=REGEX. Each
    must be found exactly once."""
    opts = key_values(selector, path_rel)
    if set(opts) - {"heading", "block", "line", "find"} or not {"heading", "line", "find"} <= set(opts):
        raise ValueError(f"{path_rel}: name heading=, line=, find= (and block=), not {selector}")
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    heads = [i for i, l in enumerate(lines) if l.startswith("== ") and opts["heading"] in l]
    if len(heads) != 1:
        raise ValueError(f"{len(heads)} headings of {path_rel} contain {opts['heading']!r}")
    end = next((i for i in range(heads[0] + 1, len(lines)) if lines[i].startswith("== ")),
               len(lines))
    scope = lines[heads[0] + 1:end]
    if "block" in opts:
        starts = [i for i, l in enumerate(scope) if l.startswith(opts["block"])]
        if len(starts) != 1:
            raise ValueError(f"{len(starts)} blocks under {opts['heading']!r} of {path_rel} start "
                             f"with {opts['block']!r}")
        stop = next((i for i in range(starts[0] + 1, len(scope))
                     if scope[i] and not scope[i][0].isspace()), len(scope))
        scope = scope[starts[0] + 1:stop]
    found = [m.group(1) for l in scope if l.split()[:1] == [opts["line"]]
             for m in [re.search(opts["find"], l)] if m]
    if len(found) != 1:
        raise ValueError(f"{len(found)} lines {opts['line']!r} of {path_rel} match "
                         f"{opts['find']!r} under {opts['heading']!r}")
    return float(found[0])


def ncu_metric(path, path_rel, selector):
    """The value of metric=NAME in an ncu --metrics log; with launch=N, in the
    Nth profiled kernel's section (1-based); with per=OTHER, divided by the
    metric OTHER of the same kernel (a ratio of two counts). Or, from a
    report of named sections, row="DISPLAY NAME" (with section="TITLE" where
    several sections have such a row). scale=F multiplies it (1e-6: counted
    in millions; 100: a fraction as a percentage)."""
    opts = key_values(selector, path_rel)
    scale = 1.0
    if "scale" in opts:
        try:
            scale = float(opts.pop("scale"))
        except ValueError:
            raise ValueError(f"{path_rel}: scale= takes a number, not {selector}") from None
    if "row" in opts and not set(opts) - {"row", "section"}:
        return ncu_row(path, path_rel, opts["row"], opts.get("section")) * scale
    if ("metric" not in opts or set(opts) - {"metric", "launch", "per"}
            or not re.fullmatch(r"[1-9]\d*", opts.get("launch", "1"))):
        raise ValueError(f"{path_rel}: name one metric=NAME (and launch=N, per=OTHER) or "
                         f"row=\"NAME\" (and section=\"TITLE\"), not {selector}")
    value = one_metric(path, path_rel, opts["metric"], opts.get("launch"))
    if "per" in opts:
        other = one_metric(path, path_rel, opts["per"], opts.get("launch"))
        if other == 0:
            raise ValueError(f"{path_rel}: per={opts['per']} is 0")
        value /= other
    return value * scale


def one_metric(path, path_rel, name, launch):
    """The one value of metric NAME in an ncu --metrics log (in the section of
    profiled kernel number `launch`, a string, where given)."""
    sections = ncu_sections(path)
    if launch is not None:
        if int(launch) >= len(sections):
            raise ValueError(f"{path_rel} profiles {len(sections) - 1} kernels, not launch={launch}")
        sections = [sections[int(launch)]]
    found = [[m.group("value") for m in map(NCU_LINE.match, lines)
              if m and m.group("name") == name] for lines in sections]
    found = [values for values in found if values]
    if len(found) > 1:
        raise ValueError(f"{len(found)} profiled kernels' sections of {path_rel} give {name} "
                         f"(pick one with launch=N)")
    if not found or len(found[0]) != 1:
        raise ValueError(f"{len(found[0]) if found else 0} lines of {path_rel} give {name}"
                         + (f" in launch {launch}" if launch is not None else ""))
    return float(found[0][0].replace(",", ""))


def value_of(path_rel, selector):
    """The number a value marker names, and a description for messages."""
    path = os.path.join(ROOT, path_rel)
    if not os.path.exists(path):
        raise ValueError(f"no file {path_rel}")
    if path_rel.endswith(".txt"):
        if "heading=" in selector:
            return log_value(path, path_rel, selector)
        return ncu_metric(path, path_rel, selector)
    _, fields, rows = read_csv(path)
    if "vs_cuDNN" in fields and "ref_cuDNN" not in fields:
        by_class_ratios(rows)  # as the tables show them
    opts, column = {}, None
    for key, val, bare in SELECT.findall(selector):
        if key:
            opts[key] = val.strip('"')
        else:
            column = bare
    if "reference_of" in opts:  # the cuDNN row that row's ratio was taken against
        of = [r for r in rows if r.get("version") == opts["reference_of"]
              and r.get("problem") == opts.get("problem", r.get("problem"))]
        if len(of) != 1 or not of[0].get("ref_cuDNN"):
            raise ValueError(f"no single row with a ref_cuDNN for {selector}")
        opts["version"] = of[0]["ref_cuDNN"]
    # any other key names a column the row must equal (what="run")
    equal = {k: v for k, v in opts.items()
             if k not in ("version", "prefix", "problem", "scale", "reference_of")}

    def picked(r):
        if "version" in opts:
            named = r.get("version") == opts["version"]
        elif "prefix" in opts:
            named = r.get("version", "").startswith(opts["prefix"])
        else:
            named = bool(equal)
        return (named and ("problem" not in opts or r.get("problem") == opts["problem"])
                and all(r.get(k) == v for k, v in equal.items()))
    keep = [r for r in rows if picked(r)]
    if len(keep) != 1:
        raise ValueError(f"{len(keep)} rows of {path_rel} match {selector}")
    row = keep[0]
    if column is None:
        raise ValueError(f"no column named in {selector}")
    if column.startswith("verdict:"):
        m = re.search(column[len("verdict:"):], row["verdict"])
        if not m:
            raise ValueError(f"{column} finds nothing in the verdict of {selector}")
        number = float(m.group(1))
    elif row.get(column, "") == "":
        raise ValueError(f"column {column} is empty or missing for {selector}")
    else:
        number = float(row[column])
    return number * float(opts.get("scale", 1))


def write_number(number, like):
    """number with as many decimals as the text `like` has (2 if it has none yet)."""
    decimals = len(like.split(".")[1]) if "." in like else (0 if like.strip() else 2)
    return f"{number:.{decimals}f}"


def fill_markers(pattern, kind, errors, fill, text, note, problems):
    """Each marker of `pattern` in text replaced by fill(m); a marker of a
    withheld path stays as it is, and so does one whose fill raises one of
    `errors` (the error goes to problems, "NOTE: KIND marker: ...")."""
    def one(m):
        if withheld(m.group("path")):
            return m.group(0)
        try:
            return fill(m)
        except errors as e:
            problems.append(f"{note}: {kind} marker: {e}")
            return m.group(0)
    return pattern.sub(one, text)


def fill_values(text, note, problems):
    def fill(m):
        number = value_of(m.group("path"), m.group("sel"))
        return m.group(0).replace("-->" + m.group("text") + "<!--",
                                  "-->" + write_number(number, m.group("text")) + "<!--", 1)
    return fill_markers(VALUE, "value", (ValueError, KeyError), fill, text, note, problems)


# Times, rates and ratios the prose may only show through a value marker.
MEASURED = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?\s?(?:ms|us|µs|GB/s|GFLOP/s|TFLOP/s)\b"
                      r"|(?<![\w.])\d+(?:\.\d+)?x (?:cuDNN|cuBLAS|faster|slower)"
                      r"|(?<![\w.])\d+(?:\.\d+)?% of (?:cuBLAS|cuDNN|the FP32 peak|peak)")


def unmarked_numbers(text):
    """Measured-looking numbers outside code, tables, comments and markers."""
    prose = re.sub(r"```.*?```", "", text, flags=re.DOTALL)
    prose = BLOCK.sub("", prose)
    prose = VALUE.sub("", prose)
    prose = re.sub(r"<!--.*?-->", "", re.sub(r"[^\n]*<!-- derived -->", "", prose),
                   flags=re.DOTALL)
    prose = "\n".join(l for l in prose.splitlines() if not l.lstrip().startswith("|"))
    return MEASURED.findall(prose)


# ---- code excerpts ----

CODE = re.compile(r"(<!-- code: (?P<path>\S+) (?P<name>[^>]*?) -->\n)(?P<body>.*?)(<!-- /code -->)",
                  re.DOTALL)


def excerpt(path_rel, name):
    """The lines between "excerpt: NAME" and "excerpt end: NAME" in a source
    file, without the marker lines, their common indentation removed
    (preprocessor lines, which clang-format puts in column 0, stay as they
    are and do not count)."""
    path = os.path.join(ROOT, path_rel)
    if not os.path.exists(path):
        raise ValueError(f"no file {path_rel}")
    with open(path) as f:
        lines = f.read().splitlines()
    begin = [i for i, l in enumerate(lines) if re.search(r"excerpt: " + re.escape(name) + r"\b", l)]
    end = [i for i, l in enumerate(lines) if re.search(r"excerpt end: " + re.escape(name) + r"\b", l)]
    if len(begin) != 1 or len(end) != 1 or end[0] <= begin[0]:
        raise ValueError(f"{path_rel} has no single excerpt '{name}'")
    body = without_exercise_markers(lines[begin[0] + 1:end[0]])
    code = [l for l in body if l.strip() and not l.startswith("#")]
    indent = min((len(l) - len(l.lstrip()) for l in code), default=0)
    return [l if l.startswith("#") else l[indent:] for l in body]


# The markers of an exercise region (scripts/exercises/markers.py).
EXERCISE_BEGIN = re.compile(r"^\s*/\* exercise [\w-]+ begin\b.*\*/\s*$")
EXERCISE_STUB = re.compile(r"^\s*/\* exercise [\w-]+ stub\s*$")
EXERCISE_END = re.compile(r"^\s*exercise [\w-]+ end \*/\s*$")


def without_exercise_markers(lines):
    """The solution of every exercise region in lines: its begin marker, its
    stub and its end marker left out."""
    out, in_stub = [], False
    for line in lines:
        if EXERCISE_STUB.match(line):
            in_stub = True
        elif EXERCISE_END.match(line):
            in_stub = False
        elif not in_stub and not EXERCISE_BEGIN.match(line):
            out.append(line)
    return out


def fill_code(text, note, problems):
    def fill(m):
        body = excerpt(m.group("path"), m.group("name"))
        lang = "cuda" if m.group("path").endswith((".cu", ".cuh")) else "c"
        return m.group(1) + f"```{lang}\n" + "\n".join(body) + "\n```\n" + m.group(5)
    return fill_markers(CODE, "code", ValueError, fill, text, note, problems)


def fill(text, note, problems):
    """text with its tables, numbers and code excerpts generated; what cannot
    be is added to problems."""
    new = BLOCK.sub(lambda m: m.group(0) if withheld(m.group("path")) else
                    m.group(1) + render(m.group("path"), m.group("opts")) + m.group(5), text)
    new = fill_values(new, note, problems)
    return fill_code(new, note, problems)


def process(note, check):
    with open(note) as f:
        text = f.read()
    problems = []
    new = fill(text, note, problems)
    problems += [f"{note}: '{n}' in the prose comes from no CSV (mark it with a value "
                 f"marker, or <!-- derived --> if it is computed)" for n in unmarked_numbers(new)]
    for p in problems:
        print(p)
    if new == text:
        return not problems
    if check:
        print(f"{note}: tables, numbers or code excerpts are stale (run scripts/doc_tables.py {note})")
        return False
    with open(note, "w") as f:
        f.write(new)
    print(f"{note}: tables, numbers and code excerpts regenerated")
    return not problems


def same_as_template(template, page):
    """Whether page is template filled; else prints the first line that differs."""
    with open(template) as f:
        filled = fill(f.read(), template, []).splitlines()
    with open(page) as f:
        shown = f.read().splitlines()
    for i, (a, b) in enumerate(zip(filled, shown), 1):
        if a != b:
            print(f"{page}:{i}: not {template} filled (edit the template, then run "
                  f"scripts/regenerate_docs.sh): the page has '{b[:100]}', the template gives "
                  f"'{a[:100]}'")
            return False
    if len(filled) != len(shown):
        print(f"{page}: not {template} filled: {len(shown)} lines against {len(filled)}")
        return False
    return True


def main(argv):
    if argv[:1] == ["--template"] and len(argv) == 3:
        return 0 if same_as_template(argv[1], argv[2]) else 1
    check = "--check" in argv
    notes = [a for a in argv if a != "--check"]
    if not notes:
        print(__doc__.strip())
        return 2
    ok = all([process(n, check) for n in notes])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
