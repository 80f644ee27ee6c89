#!/usr/bin/env python3
"""scripts/doc_tables.py's result modes on CSVs written here: the summary per
precision class (cuDNN best of the class, PyTorch beside it), the references
table, a model run's layers and totals, and a step table's columns= and
keys=. Each check compares a number the
script computes with one computed here from the same rows."""
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
import doc_tables as dt  # noqa: E402

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)


def row(problem, version, cls, ms, status="ok", count=1):
    return {"problem": problem, "version": version, "class": cls, "median_ms": str(ms),
            "status": status, "verdict": "OK (10 checked)" if status == "ok" else "FAILED",
            "count": str(count)}


def write_torch(root, name, rows, gpu="Test GPU"):
    path = os.path.join(root, name)
    with open(path, "w") as f:
        f.write(f"# gpu: {gpu}, 1 SMs\n# date: today\n# torch: 9.9\n")
        f.write("problem,version,median_ms,min_ms,max_ms,count,status,verdict\n")
        for problem, version, ms in rows:
            f.write(f'"{problem}","{version}",{ms},{ms},{ms},1,ok,"OK"\n')
    return name


def table_line(text, first_cell):
    return next((l for l in text.splitlines() if l.startswith(f"| {first_cell} |")), "")


def main():
    with tempfile.TemporaryDirectory() as root:
        dt.ROOT = root
        rows = [row("p", "cuDNN (GEMM)", "FP32", 4.0),
                row("p", "cuDNN graph (engine 1)", "FP32", 2.0),
                row("p", "cuDNN TF32 (GEMM)", "TF32", 1.0),
                row("p", "cuDNN graph TF32 (engine 9)", "TF32", 0.5),
                row("p", "5b", "FP32", 1.0), row("p", "7b", "FP32", 4.0),
                row("p", "8c 3xTF32", "FP32", 0.8), row("p", "9b TF32", "TF32", 0.25),
                row("p", "im2col + cuBLAS", "FP32", 0.1), row("p", "2a wrong", "FP32", 0.01,
                                                                  status="failed"),
                row("q", "cuDNN (GEMM)", "FP32", 3.0), row("q", "5b", "FP32", 6.0)]
        pairs = [("p", "PyTorch FP32", 2.5), ("p", "PyTorch TF32", 0.6)]
        torch = dt.load_torch(write_torch(root, "torch.csv", pairs), "Test GPU, 1 SMs, 1 MHz")
        other = dt.load_torch(write_torch(root, "o.csv", pairs, gpu="Other GPU"), "Test GPU")
        check(other[0] == {} and "measured on Other GPU, this table on Test GPU" in other[1][0],
              f"PyTorch from another GPU is left out, with a line that says so: {other}")
        check("PyTorch" not in table_line(dt.render_summary(rows, "FP32", other), "problem"),
              "no PyTorch column from another GPU")
        fp32 = dt.render_summary(rows, "FP32", torch)
        line = table_line(fp32, "p")
        check("cuDNN graph (engine 1) | 2.0000 | 2.5000 |" in line,
              f"FP32: cuDNN best is the faster API's row, PyTorch beside it: {line}")
        check("| 2.00x | 0.50x | 2.50x | 8c 3xTF32 (2.50x) |" in line,
              f"FP32: steps 05, 07, 08 (3xTF32 is FP32); no failed or cuBLAS row: {line}")
        check("best 02" not in fp32, "a step whose only row failed has no column")
        check("| q | cuDNN (GEMM) | 3.0000 | - | 0.50x |" in table_line(fp32, "q"),
              f"no PyTorch time for q: {table_line(fp32, 'q')}")
        tf32 = dt.render_summary(rows, "TF32", torch)
        line = table_line(tf32, "p")
        want = "cuDNN graph TF32 (engine 9) | 0.5000 | 0.6000 | 2.00x | 9b TF32 (2.00x) |"
        check(want in line,
              f"TF32: against cuDNN best TF32, only TF32 rows of ours: {line}")
        check(table_line(tf32, "q") == "", "no TF32 row of ours on q: no line")
        old = {"version": "8b mma.sync TF32"}
        check(dt.row_class(old) == "TF32" and dt.row_class({"version": "8c 3xTF32"}) == "FP32",
              "an older CSV's class from the row's name")

        check("best 09 |" in table_line(tf32, "problem") and "best 08" not in tf32,
              f"TF32: a column for step 09, none for step 08 (8c is FP32): {tf32}")
        check([dt.step_of(v) for v in ("5b", "8b-xt x", "9a wgmma", "1a serial", "05 5b",
                                        "cuDNN (GEMM)", "im2col + cuBLAS SGEMM")]
              == [5, 8, 9, 1, 5, 0, 0],
              "a row's step from its key, or an older CSV's step prefix; 0 for a reference")
        refs = dt.render_references(rows, torch)
        line = table_line(refs, "p")
        check(line == "| p | 4.0000 | 2.0000 | 2.5000 | 0.800 | 1.0000 | 0.5000 | 0.6000 | 0.833 |",
              f"references: legacy, graph, PyTorch and best over PyTorch per class: {line}")

        layers = [row("l1", "cuDNN (GEMM)", "FP32", 2.0, count=3),
                  row("l1", "cuDNN graph TF32 (e)", "TF32", 1.0, count=3),
                  row("l1", "6f", "FP32", 1.0, count=3),
                  row("l1", "9b", "TF32", 0.5, count=3),
                  row("l2", "cuDNN (GEMM)", "FP32", 5.0, count=1),
                  row("l2", "6f", "FP32", 10.0, count=1)]
        ttorch = dt.load_torch(write_torch(root, "tm.csv", [("l1", "PyTorch FP32", 2.0),
                                                            ("l2", "PyTorch FP32", 4.0)]),
                               "Test GPU")
        model = dt.render_model(layers, ttorch)
        line = table_line(model, "l2")
        check("| l2 | 1 | 5.0000 | 6f | 10.0000 | 0.50x | - | 5.0000 | 6f | 10.0000 | 0.50x | - |"
              == line, f"model: a TF32 run may use FP32 rows of both sides; no auto row: {line}")
        check("auto FP32: chose, ms |" in model and "auto TF32: chose, ms |" in model,
              f"the auto columns, though the run has no auto rows: {model}")
        total = table_line(model, "**model total**")
        # FP32: cuDNN 3*2 + 5 = 11, ours 3*1 + 10 = 13; TF32: cuDNN 3*1 + 5 = 8, ours 3*0.5 + 10
        check(total == "| **model total** | 4 | 11.000 | ours | 13.000 | 0.85x | - | 8.000 | ours "
              "| 11.500 | 0.70x | - |", f"model totals weighed by counts, no auto total: {total}")
        check("FP32 10.000 ms (cuDNN best 1.10x its time)" in model,
              f"PyTorch's FP32 total where it covers every layer, no TF32 total: {model}")
        chose = row("l1", "auto TF32", "TF32", 0.6, count=3)
        chose["verdict"] = "OK (10 checked); chose 8b: NHWC, TF32: 8b mma.sync on the tensor cores"
        with_auto = dt.render_model(layers + [chose])
        line = table_line(with_auto, "l1")
        check(line == "| l1 | 3 | 2.0000 | 6f | 1.0000 | 2.00x | - | 1.0000 | 9b | 0.5000 | "
              "2.00x | 8b 0.6000 |", f"model: conv2d_auto's choice beside ours: {line}")
        check(table_line(with_auto, "**model total**").endswith("| 0.70x | - |"),
              f"auto on one layer of two: no auto total: {with_auto}")
        # auto on both layers, TF32: 3 x 0.6 + 12.0 = 13.8 over ours 3 x 0.5 + 10.0 = 11.5;
        # its FP32 row does not stand for TF32, nor the TF32 row for FP32
        both = layers + [chose, row("l2", "auto TF32", "TF32", 12.0),
                         row("l2", "auto FP32", "FP32", 1.0)]
        both[-2]["verdict"] = "OK; chose 6f: NHWC, FP32"
        total = table_line(dt.render_model(both), "**model total**")
        check(total.endswith("| 0.70x | 13.800, 1.200x the time of ours |")
              and "| 0.85x | - |" in total, f"auto's TF32 total over ours, no FP32 total: {total}")
        line = table_line(dt.render_model(both), "l2")
        check(line.endswith("| 0.50x | ? 1.0000 | 5.0000 | 6f | 10.0000 | 0.50x | 6f 12.0000 |"),
              f"each auto row in its own class; a verdict that names no choice: '?': {line}")
        partial = dt.render_model(layers[:4] + [row("l2", "6f", "FP32", 10.0)])
        check("| **model total** | 4 | - | - | - | - |" in partial,
              f"no total where a layer lacks cuDNN: {partial}")
        with open(os.path.join(root, "step.csv"), "w") as f:
            f.write("# gpu: Test GPU, 1 SMs\n# date: today\n# command: step\n")
            f.write("version,class,median_ms,gflops,vs_cuDNN,ref_cuDNN,status,verdict\n")
            f.write('"cuDNN (GEMM)",FP32,2.0,10,1.00,"cuDNN (GEMM)",ok,"OK"\n'
                    '"4a",FP32,1.0,20,2.00,"cuDNN (GEMM)",ok,"OK"\n')
        with open(os.path.join(root, "step.csv"), "a") as f:
            f.write('"8b mma.sync TF32",TF32,0.5,40,2.00,"cuDNN (GEMM)",ok,"OK"\n'
                    '"8e wgmma TF32, TMA",TF32,0.25,80,4.00,"cuDNN (GEMM)",ok,"OK"\n')
        picked = dt.render("step.csv", " keys=4a,8e")
        check("| 4a |" in picked and "| 8e wgmma TF32, TMA |" in picked
              and "| cuDNN (GEMM) |" in picked and "8b mma" not in picked,
              f"keys=: those versions and the references: {picked}")
        short = dt.render("step.csv", " columns=vs_cuDNN,version,median_ms")
        check(table_line(short, "vs cuDNN best of its class") ==
              "| vs cuDNN best of its class | version | median ms |"
              and "| 2.00x | 4a | 1.0000 |" in short and "GFLOP" not in short,
              f"columns=: those columns only, in the order named: {short}")
        try:
            dt.render("step.csv", " columns=version,nonsense")
            check(False, "columns= with an unknown column is refused")
        except SystemExit as e:
            check("no column nonsense" in str(e), f"the refusal names the column: {e}")
    for f in failures:
        print("FAIL:", f)
    print(f"{len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
