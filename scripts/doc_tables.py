#!/usr/bin/env python3
"""Fills the measured-results tables of the lecture notes from benchmark CSVs.

A note marks a table with two comment lines naming the CSV (relative to the
repository root):

    <!-- results: bench/results/04_tiled_2d_hpc101-image.csv -->
    <!-- /results -->

or, for a conv_bench CSV, one problem's rows and optionally only some steps'
(the references, step 01, cuDNN and cuBLAS, always stay):

    <!-- results: bench/results/conv_bench_all.csv problem=lecture rows=05 -->

or the summary of a conv_bench CSV, one line per problem (each step's fastest
row as a ratio to cuDNN):

    <!-- results: bench/results/conv_bench_all.csv summary=steps -->

or step 06's GEMM progression, one line per GEMM and one column per CSV (a
GEMM CSV's "vs cuBLAS"; for a convolution CSV, cuBLAS's GEMM stage time over
the GEMM's, both read from the verdict column's "GEMM x ms"); the first CSV's
header line names the GPU:

    <!-- results: bench/results/06_gemm_4096.csv progression=bench/results/06_lab_nhwc.csv -->

and this script replaces whatever stands between them with a Markdown table
generated from that CSV, headed by the GPU, the date and the command taken from
the CSV's "# gpu:" (else "# host:"), "# date:" and "# command:" lines (the step programs write
them, see conv_table_open_csv in common/conv_gpu_run.h). No number in a note is
typed by hand.

    python3 scripts/doc_tables.py docs/*.md         rewrite the notes in place
    python3 scripts/doc_tables.py --check docs/*.md  exit 1 if a note is stale
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
TITLES = {"version": "version", "median_ms": "median ms", "gflops": "GFLOP/s",
          "pct_peak": "% FP32 peak", "gbps": "GB/s", "passed": None, "verdict": "verified"}


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


def render(csv_rel, opts=""):
    """opts: " summary=steps" gives one line per problem of a conv_bench CSV;
    " problem=NAME" keeps that problem's rows (conv_bench CSVs);
    " rows=A,B" keeps the rows whose version starts with A or B (plus the
    references: step 01, cuDNN, cuBLAS)."""
    path = os.path.join(ROOT, csv_rel)
    if not os.path.exists(path):
        return f"*(no results yet: `{csv_rel}` has not been generated)*\n"
    meta, fields, rows = read_csv(path)
    options = dict(o.split("=", 1) for o in opts.split())
    if "problem" in options:
        rows = [r for r in rows if r.get("problem") == options["problem"]]
    if "rows" in options:
        keep = tuple(options["rows"].split(",")) + ("01 ", "cuDNN", "cuBLAS")
        rows = [r for r in rows if r["version"].startswith(keep)]
    fields = [f for f in fields if f != "problem"]
    # Columns empty in every row (e.g. % of GPU peak in a CPU table) are left out.
    shown = [f for f in fields
             if title(f) is not None and any((r.get(f) or "") != "" for r in rows)]
    # Output files named by absolute path on the GPU machine: keep the file name.
    command = " ".join(os.path.basename(a) if a.startswith("/") else a
                       for a in meta.get("command", "?").split())
    out = []
    gpu = meta.get("gpu") or meta.get("host", "an unknown machine")
    out.append(f"Measured on {gpu}, {meta.get('date', 'unknown date')}, with "
               f"`{command}` (file `{csv_rel}`).")
    out.append("")
    if "summary" in options:
        return "\n".join(out) + "\n" + render_summary(rows)
    if "progression" in options:
        return "\n".join(out) + "\n" + render_progression(csv_rel, rows,
                                                           options["progression"].split(","))
    out.append("| " + " | ".join(title(f) for f in shown) + " |")
    out.append("|" + "|".join("---" if f in ("version", "verdict") else "---:"
                              for f in shown) + "|")
    for row in rows:
        out.append("| " + " | ".join(cell(f, row.get(f)) for f in shown) + " |")
    return "\n".join(out) + "\n"


def render_summary(rows):
    """One line per problem of a conv_bench CSV: cuDNN's algorithm and time,
    then each step's fastest row of our own kernels (not im2col + cuBLAS) as
    a ratio to cuDNN (above 1: faster)."""
    steps = ["02", "03", "04", "05", "06"]
    out = ["| problem | cuDNN algorithm | cuDNN ms | "
           + " | ".join(f"best {s} vs cuDNN" for s in steps) + " | fastest of ours |",
           "|---|---|---:|" + "---:|" * len(steps) + "---|"]
    problems = list(dict.fromkeys(r["problem"] for r in rows))
    for problem in problems:
        timed = [r for r in rows if r["problem"] == problem and r["median_ms"]
                 and r["verdict"].startswith("OK")]
        cudnn = next((r for r in timed if r["version"].startswith("cuDNN")), None)
        if cudnn is None:
            continue
        ref = float(cudnn["median_ms"])
        algo = cudnn["version"][cudnn["version"].find("(") + 1:-1]
        cells, ours = [], []
        for step in steps:
            mine = [r for r in timed if r["version"].startswith(step + " ")
                    and "cuBLAS" not in r["version"]]  # a library GEMM is not ours
            ours += mine
            best = min(mine, key=lambda r: float(r["median_ms"]), default=None)
            cells.append(f"{ref / float(best['median_ms']):.2f}x" if best else "-")
        best = min(ours, key=lambda r: float(r["median_ms"]))
        out.append(f"| {problem} | {algo} | {ref:.4f} | " + " | ".join(cells)
                   + f" | {best['version']} ({ref / float(best['median_ms']):.2f}x) |")
    return "\n".join(out) + "\n"


def gemm_stage_ms(row):
    m = re.search(r"GEMM ([0-9.]+) ms", row["verdict"])
    return float(m.group(1)) if m else None


def progression_column(rows):
    """% of cuBLAS per GEMM version: from the GEMM stage times in the verdicts
    (a convolution CSV), else from the vs_cuBLAS column (a GEMM CSV)."""
    stages = {r["version"].replace("im2col + ", ""): gemm_stage_ms(r) for r in rows}
    ref = stages.get("cuBLAS SGEMM")
    if ref:
        return {v: 100 * ref / t for v, t in stages.items() if t}
    return {r["version"]: 100 * float(r["vs_cuBLAS"]) for r in rows if r.get("vs_cuBLAS")}


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


def process(note, check):
    with open(note) as f:
        text = f.read()
    new = BLOCK.sub(lambda m: m.group(1) + render(m.group("path"), m.group("opts")) + m.group(5),
                    text)
    if new == text:
        return True
    if check:
        print(f"{note}: results tables are stale (run scripts/doc_tables.py {note})")
        return False
    with open(note, "w") as f:
        f.write(new)
    print(f"{note}: results tables regenerated")
    return True


def main(argv):
    check = "--check" in argv
    notes = [a for a in argv if a != "--check"]
    if not notes:
        print(__doc__.strip())
        return 2
    ok = all([process(n, check) for n in notes])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
