#!/usr/bin/env python3
"""conv_bench on a whole network (--model), end to end, on any machine:
--list gives the shapes the run would time (ResNet-50: 23 distinct
convolutions, 53 in all) without running anything; a model run prints a
table per layer and the summary after the last one, and its CSV and JSON
carry the model and each layer's count. Without a GPU every GPU row is
skipped, step 01 is left out of a model run, and the summary shows "-"
(in the JSON, its totals are null).

    python3 tests/test_model_outputs.py path/to/conv_bench
"""
import csv
import io
import json
import os
import subprocess
import sys
import tempfile

from conv_test_support import check, verdict

HEADER = "name,count,n,c,h,w,k,r,s,pad_h,pad_w,stride_h,stride_w,dil_h,dil_w,layout"
CLASSES = ("FP32", "TF32")  # the classes with rows on every GPU: FP32 rows stand for TF32 too

def run(args, env=None):
    p = subprocess.run(args, capture_output=True, text=True, timeout=540, env=env)
    return p.returncode, p.stdout, p.stderr


def listed(bench, args):
    """The problems --list prints for these flags, as dicts (and the raw lines)."""
    # No GPU visible: --list must not need one.
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
    rc, out, err = run([bench, "--list"] + args, env)
    check(rc == 0 and err == "", f"--list {args}: exit status {rc}, stderr {err!r}")
    lines = out.splitlines()
    check(lines[:1] == [HEADER], f"--list {args}: header {lines[:1]}")
    return list(csv.DictReader(io.StringIO(out))), lines


def check_list(bench):
    layers, lines = listed(bench, ["--model", "resnet50"])
    check(len(layers) == 23, f"resnet50 lists 23 distinct convolutions, not {len(layers)}")
    check(sum(int(l["count"]) for l in layers) == 53, "the counts add up to 53 convolutions")
    check(len({l["name"] for l in layers}) == len(layers), "every layer named once")
    check(lines[1:2] == ["conv1,1,32,3,224,224,64,7,7,3,3,2,2,1,1,nchw"],
          f"conv1 first, batch 32 by default: {lines[1:2]}")
    check(all(l["n"] == "32" and l["layout"] == "nchw" for l in layers), "n=32, nchw throughout")
    names = [l["name"] for l in layers]
    check("layer2.0.downsample.0" in names and "layer1.0.downsample.0" not in names,
          "layer1's downsample shares conv3's shape; layer2's has its own")

    layers, _ = listed(bench, ["--model", "resnet50", "--n", "2", "--layout", "nhwc"])
    check(len(layers) == 23 and all(l["n"] == "2" and l["layout"] == "nhwc" for l in layers),
          "--n and --layout apply to every layer")

    _, lines = listed(bench, ["--problem", "lecture"])
    check(lines[1:] == ["lecture,1,1,6,768,512,6,6,6,0,0,1,1,1,1,nchw"], f"lecture: {lines[1:]}")
    problems, _ = listed(bench, ["--problem", "all", "--layout", "nhwc"])
    check(len(problems) == 9 and all(p["count"] == "1" for p in problems),
          f"--problem all: 9 problems, each once ({len(problems)})")
    check([p["layout"] for p in problems if p["name"] == "hpc101"] == ["nhwc"],
          "--layout applies to the named problems")
    _, lines = listed(bench, ["--n", "2", "--c", "3", "--h", "9", "--w", "11", "--k", "4",
                              "--filter", "3", "--padding", "same", "--stride", "2"])
    check(lines[1:] == ["custom,1,2,3,9,11,4,3,3,1,1,2,2,1,1,nchw"], f"custom shape: {lines[1:]}")


def check_run(bench, tmp):
    csv_path, json_path = os.path.join(tmp, "m.csv"), os.path.join(tmp, "m.json")
    # Step 01 (left out of a model run) and cuDNN's rows: the run, the files
    # and the summary are under test here, not the steps' kernels (their own
    # tests and the sweep check those).
    rc, out, err = run([bench, "--model", "resnet50", "--n", "2", "--steps", "01,cudnn",
                        "--repeat", "1", "--warmup", "0", "--cudnn-budget", "100", "--csv",
                        csv_path, "--json", json_path])
    check(rc == 0 and "verdict: OK" in out, f"--model resnet50 --n 2: exit status {rc}\n{err}")
    no_device = "GPU rows skipped" in out
    check(out.count("\n== ") == 24, "a table per layer and the summary")
    check("model:   resnet50, n=2, nchw: 23 distinct convolutions (53 in all)" in out,
          "the run names the model")
    check("skipped: step 01 is left out of a model run (--cpu-rows runs it)" in out,
          "step 01 is left out without --cpu-rows")
    summary = out[out.find("== summary: resnet50, n=2, nchw"):]
    check(summary != "", "the summary follows the last layer")
    layers, _ = listed(bench, ["--model", "resnet50", "--n", "2"])
    for cls in ("FP32", "TF32", "FP16"):
        empty = f"\n{cls}: no verified row of this class on any layer\n"
        if no_device or cls not in CLASSES:
            check(empty in summary, f"{cls}: one line where no row of the class ran")
            continue
        block = summary[summary.find("\n" + cls + " ") + 1:].split("\n\n")[0].splitlines()
        check(len(block) == 25, f"{cls}: a header, 23 layers and the total ({len(block)} lines)")
        check([b.split()[0] for b in block[1:24]] == [l["name"] for l in layers],
              f"{cls}: the layers in order")
        total = block[-1] if block else ""
        check(total.startswith("total (count x ms)") and " 53 " in total, f"{cls}: {total!r}")
        check("0 of 23 layers" in total and total.count("23 of 23 layers") == 1,
              f"{cls}: no row of ours was asked for, cuDNN on every layer: {total!r}")

    with open(csv_path) as f:
        text = f.read()
    meta = [l for l in text.splitlines() if l.startswith("#")]
    check("# model: resnet50, n=2, nchw" in meta, f"CSV names the model: {meta}")
    rows = list(csv.DictReader(io.StringIO(
        "\n".join(l for l in text.splitlines() if not l.startswith("#")))))
    check(rows and list(rows[0])[:3] == ["problem", "count", "version"],
          f"CSV columns: {list(rows[0])[:4] if rows else None}")
    counts = {l["name"]: l["count"] for l in layers}
    check({r["problem"] for r in rows} == set(counts), "CSV: every layer, by its name")
    check(all(r["count"] == counts[r["problem"]] for r in rows), "CSV: each layer's count")

    with open(json_path) as f:
        doc = json.load(f)
    check(doc.get("model") == "resnet50, n=2, nchw", f"JSON model: {doc.get('model')}")
    check([p["name"] for p in doc["problems"]] == [l["name"] for l in layers], "JSON layers")
    check(sum(p["count"] for p in doc["problems"]) == 53, "JSON counts add up to 53")
    check(sum(len(p["rows"]) for p in doc["problems"]) == len(rows), "JSON and CSV: same rows")
    # The summary's totals, for a script: one object per pass, each class's
    # totals; no row of ours or of conv2d_auto ran (null, 0 layers).
    summaries = doc.get("summary") or []
    check([s.get("pass") for s in summaries] == ["forward"], f"JSON summary: {summaries!r:.200}")
    if summaries:
        s = summaries[0]
        check(s["layers"] == 23 and s["convolutions"] == 53, f"JSON summary: {s!r:.200}")
        by = {c["class"]: c for c in s["classes"]}
        check(list(by) == ["FP32", "TF32", "FP16"], f"JSON summary classes: {list(by)}")
        for cls, c in by.items():
            check(c["ours_ms"] is None and c["ours_layers"] == 0 and c["auto_ms"] is None
                  and c["auto_layers"] == 0 and c["ratio"] is None and c["auto_vs_ours"] is None
                  and c["auto_vs_cudnn"] is None, f"JSON summary {cls}: {c}")
            cudnn = 0 if no_device or cls not in CLASSES else 23
            check(c["cudnn_layers"] == cudnn and (c["cudnn_ms"] is None) == (cudnn == 0),
                  f"JSON summary {cls}: cuDNN on {cudnn} layers: {c}")


def check_problem_files_unchanged(bench, tmp):
    """A run of problems keeps its CSV and JSON as they were: no count, no model."""
    csv_path, json_path = os.path.join(tmp, "p.csv"), os.path.join(tmp, "p.json")
    rc, out, err = run([bench, "--n", "1", "--c", "2", "--h", "7", "--w", "9", "--k", "2",
                        "--filter", "3", "--steps", "01", "--repeat", "1", "--csv", csv_path,
                        "--json", json_path])
    check(rc == 0, f"small problem: exit status {rc}\n{err}")
    with open(csv_path) as f:
        lines = [l for l in f.read().splitlines() if not l.startswith("#")]
    check(lines[:1] == ["problem,version,class,median_ms,min_ms,max_ms,gflops,pct_peak,gbps,vs_serial,"
                        "vs_OpenMP,vs_naive_GPU,vs_cuDNN,ref_cuDNN,status,verdict"],
          f"problem CSV header: {lines[:1]}")
    with open(json_path) as f:
        doc = json.load(f)
    check("model" not in doc and "count" not in doc["problems"][0], "problem JSON: no model")
    check("== summary" not in out, "no summary for a run of problems")


def main(bench):
    check_list(bench)
    with tempfile.TemporaryDirectory() as tmp:
        check_run(bench, tmp)
        check_problem_files_unchanged(bench, tmp)
    return verdict()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
