#!/usr/bin/env python3
"""Turns a conv_bench CSV into the figures of docs/performance.md.

    python3 scripts/plot_bench.py bench/results/conv_bench_all.csv docs/figures

writes, per problem, <problem>_steps.png (the progression of the steps: time
and % of FP32 peak, cuDNN and cuBLAS marked, TF32 and transform rows hatched)
and roofline.png (every measured GPU row against the measured copy bandwidth
and the FP32 peak; TF32 and transform rows hollow). For a model
run's CSV (conv_bench --model: a "# model:" line) it writes instead one
figure named after the CSV (model_resnet50_nhwc.csv: model_resnet50_nhwc.png):
per layer, cuDNN best over our fastest kernel in each precision class (above
1: ours is faster). Needs matplotlib
(scripts/setup.sh --plots installs it where missing).
"""
import csv
import io
import os
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from doc_tables import class_allows, fastest, row_class, step_of, verified  # noqa: E402


def read(path):
    meta, body = {}, []
    with open(path) as f:
        for line in f.read().splitlines():
            if line.startswith("#"):
                key, _, value = line[1:].partition(":")
                meta[key.strip()] = value.strip()
            elif line.strip():
                body.append(line)
    return meta, list(csv.DictReader(io.StringIO("\n".join(body))))


def is_reference(version):
    # NVIDIA's libraries: cuDNN, and step 06's im2col + cuBLAS SGEMM row
    return version.startswith("cuDNN") or "cuBLAS" in version


def color(version):
    if is_reference(version):
        return "#d62728"
    if step_of(version) == 1:
        return "#7f7f7f"
    return "#1f77b4"


def beyond_fp32(row):
    """Rows whose arithmetic is not the direct FP32 count the % of peak assumes:
    tensor cores (TF32, 3xTF32: a higher peak), or a transform (Winograd, FFT)
    that does fewer multiplications. Their % of FP32 peak can pass 100."""
    v = row["version"]
    return (row_class(row) != "FP32" or step_of(v) == 7
            or any(t in v for t in ("3xTF32", "WINOGRAD", "FFT", "winograd", "fft")))


BEYOND_NOTE = ("hatched: tensor cores (TF32, 3xTF32) or a transform (Winograd, FFT), which can "
               "pass 100% of the FP32 peak: the % counts the direct convolution's FLOP")


def steps_figure(problem, rows, out_dir, gpu):
    rows = [r for r in rows if r["median_ms"]]
    if not rows:
        return None
    names = [r["version"] for r in rows]
    ms = [float(r["median_ms"]) for r in rows]
    peak = [float(r["pct_peak"]) if r.get("pct_peak") else 0.0 for r in rows]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(13, 0.38 * len(rows) + 1.6), sharey=True)
    y = range(len(rows))
    hatch = ["//" if beyond_fp32(r) else "" for r in rows]
    ax1.barh(y, ms, color=[color(n) for n in names], hatch=hatch, edgecolor="white")
    ax1.set_xscale("log")
    ax1.set_xlabel("median time, ms (log scale; shorter is better)")
    ax1.set_yticks(list(y))
    ax1.set_yticklabels(names, fontsize=8)
    ax1.invert_yaxis()
    ax2.barh(y, peak, color=[color(n) for n in names], hatch=hatch, edgecolor="white")
    ax2.axvline(100.0, color="black", linewidth=0.8)
    ax2.set_xlabel("% of FP32 peak")
    if any(hatch):
        fig.text(0.5, 0.005, BEYOND_NOTE, ha="center", va="bottom", fontsize=8)
    for ax in (ax1, ax2):
        ax.grid(axis="x", alpha=0.3)
    fig.suptitle(f"{problem} on {gpu.split(',')[0]} (red: cuDNN / cuBLAS, grey: CPU)",
                 fontsize=10)
    fig.tight_layout(rect=(0, 0.03 if any(hatch) else 0, 1, 1))
    name = f"{problem}_steps.png"
    fig.savefig(os.path.join(out_dir, name), dpi=110)
    plt.close(fig)
    return name


def roofline(rows_by_problem, flops, min_bytes, peak_gflops, bw_gbps, out_dir, gpu):
    fig, ax = plt.subplots(figsize=(8, 5.5))
    xs = [0.05, 1000.0]
    if bw_gbps > 0:
        ridge = peak_gflops / bw_gbps
        ax.plot([xs[0], ridge, xs[1]], [xs[0] * bw_gbps, peak_gflops, peak_gflops], "k-", lw=1.5,
                label=f"ceilings: {bw_gbps:.0f} GB/s copy, {peak_gflops / 1e3:.1f} TFLOP/s FP32")
    markers = "osD^v<>p*h"
    for i, (problem, rows) in enumerate(rows_by_problem.items()):
        ai = flops[problem] / min_bytes[problem]
        for r in rows:
            if not r["median_ms"] or step_of(r["version"]) == 1:
                continue
            g = float(r["gflops"])
            beyond = beyond_fp32(r)
            ax.scatter(ai, g, marker=markers[i % len(markers)], s=28, alpha=0.8,
                       facecolors="none" if beyond else color(r["version"]),
                       edgecolors=color(r["version"]))
        ax.scatter([], [], marker=markers[i % len(markers)], color="#444", label=problem)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity, FLOP per minimum byte moved")
    ax.set_ylabel("GFLOP/s")
    ax.set_title(f"Every GPU row against the roofline of {gpu.split(',')[0]}", fontsize=10)
    ax.grid(alpha=0.3, which="both")
    ax.scatter([], [], marker="o", facecolors="none", edgecolors="#444",
               label="hollow: tensor cores or a transform (Winograd, FFT): can pass the FP32 roof")
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "roofline.png"), dpi=110)
    plt.close(fig)
    return "roofline.png"


def model_figure(rows, out_dir, gpu, model, out):
    """Per layer and class: cuDNN best / the fastest of ours the class allows,
    drawn to out (named after the CSV, so that two batch sizes of one layout
    keep a figure each)."""
    layers = list(dict.fromkeys(r["problem"] for r in rows))
    timed = [r for r in rows if r["median_ms"] and verified(r)]

    def ms(layer, cls, cudnn):
        r = fastest([r for r in timed if r["problem"] == layer
                     and r["version"].startswith("cuDNN") == cudnn
                     and (cudnn or step_of(r["version"]) >= 2)
                     and class_allows(cls, row_class(r))])
        return float(r["median_ms"]) if r else None

    fig, ax = plt.subplots(figsize=(8, 0.32 * len(layers) + 1.5))
    for k, (cls, col) in enumerate((("FP32", "#1f77b4"), ("TF32", "#ff7f0e"))):
        ratios = []
        for layer in layers:
            c, o = ms(layer, cls, True), ms(layer, cls, False)
            ratios.append(c / o if c and o else 0.0)
        ax.barh([i + 0.4 * k for i in range(len(layers))], ratios, height=0.4, color=col,
                label=f"{cls}: cuDNN best {cls} / fastest of ours")
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.set_yticks([i + 0.2 for i in range(len(layers))])
    ax.set_yticklabels(layers, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("speed-up over cuDNN best of the class (above 1: ours is faster)")
    ax.legend(fontsize=8, loc="lower right")
    fig.suptitle(f"{model} on {gpu.split(',')[0]}", fontsize=10)
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, out), dpi=110)
    plt.close(fig)
    return out


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip())
        return 2
    csv_path, out_dir = argv
    os.makedirs(out_dir, exist_ok=True)
    meta, rows = read(csv_path)
    gpu = meta.get("gpu", "unknown GPU")
    m = re.search(r"FP32 peak ([\d.]+) TFLOP/s", gpu)
    peak = float(m.group(1)) * 1e3 if m else 0.0
    bw = float(meta.get("d2d_gbps", "0") or 0)
    if meta.get("model"):
        out = os.path.splitext(os.path.basename(csv_path))[0] + ".png"
        print(os.path.join(out_dir, model_figure(rows, out_dir, gpu, meta["model"], out)))
        return 0
    by_problem, flops, min_bytes = {}, {}, {}
    for r in rows:
        by_problem.setdefault(r["problem"], []).append(r)
        if r["median_ms"] and r.get("gbps"):
            ms = float(r["median_ms"])
            flops[r["problem"]] = float(r["gflops"]) * ms * 1e6
            min_bytes[r["problem"]] = float(r["gbps"]) * ms * 1e6
    made = [steps_figure(p, rs, out_dir, gpu) for p, rs in by_problem.items()]
    if peak > 0 and flops:
        made.append(roofline({p: rs for p, rs in by_problem.items() if p in flops}, flops,
                             min_bytes, peak, bw, out_dir, gpu))
    for name in made:
        if name:
            print(os.path.join(out_dir, name))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
