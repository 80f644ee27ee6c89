"""grade: builds the tree (release preset), runs the tests that grade each
exercise and prints the table; optional performance points from ratios
measured in this run. The JSON is for a course's grading system."""
import json
import os
import subprocess
import tempfile

from . import manifest as mf
from . import runner
from .tree import TREE_INFO


def tree_exercises(root, manifest, step):
    """The exercises this tree grades: those its make stubbed (exercises/tree.json),
    or every exercise of the manifest in the solution tree."""
    info = os.path.join(root, TREE_INFO)
    ids = json.load(open(info))["exercises"] if os.path.exists(info) else None
    return mf.select(manifest, step, ids)


class TestCache:
    """Each (ctest entry, filter) runs once, however many exercises it grades."""

    def __init__(self, build_dir, entries):
        self.build_dir, self.entries, self.done = build_dir, entries, {}

    def result(self, name, filt):
        key = (name, filt)
        if key not in self.done:
            entry = self.entries.get(name)
            if entry is None:
                self.done[key] = {name: ("failed", "no such ctest entry in this build")}
            elif filt is not None and runner.is_criterion(entry):
                self.done[key] = runner.criterion(entry, filt)
                if not self.done[key]:
                    self.done[key] = {f"{name} {filt}": ("failed", "no test matches the filter")}
            else:
                self.done[key] = {name: runner.whole(self.build_dir, name, entry["timeout"])}
        return self.done[key]


def measure(build_dir, perf, runs):
    """Runs a performance entry's program (once per command line) and returns
    (ratio, note): reference median time / the row's, both measured in this run."""
    cmd = [os.path.join(build_dir, "bin", perf["program"])] + perf["args"]
    key = tuple(cmd)
    if key not in runs:
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "rows.json")
            try:
                p = subprocess.run(cmd + ["--json", out], capture_output=True, text=True,
                                   timeout=600)
                rc = p.returncode
            except subprocess.TimeoutExpired:
                rc = "timed out"
            rows = []
            if os.path.exists(out):
                with open(out) as f:
                    doc = json.load(f)
                rows = [r for prob in doc.get("problems", []) for r in prob["rows"]]
            runs[key] = (rows, rc)
    rows, rc = runs[key]
    row = [r for r in rows if r["version"] == perf["row"]]
    # The reference by its name, or by the start of it (cuDNN's row names its algorithm);
    # for "cuDNN", the program's cuDNN best of the row's own precision class (ref_cuDNN).
    by_class = row[0].get("ref_cuDNN") if row and perf["reference"] == "cuDNN" else None
    ref = ([r for r in rows if by_class and r["version"] == by_class]
           or [r for r in rows if r["version"] == perf["reference"]]
           or [r for r in rows if r["version"].startswith(perf["reference"])])
    if not row or not ref:
        return None, f"rows '{perf['row']}' and '{perf['reference']}' not both measured (exit {rc})"
    if row[0].get("status") != "ok" or ref[0].get("status") != "ok":
        return None, f"'{perf['row']}' or its reference did not verify"
    return ref[0]["median_ms"] / row[0]["median_ms"], (
        f"{perf['row']}: {row[0]['median_ms']:.4g} ms, {ref[0]['version']}: "
        f"{ref[0]['median_ms']:.4g} ms")


def grade(root, step=None, jobs=2, json_path=None, perf=True):
    manifest = mf.load(root)
    ids = tree_exercises(root, manifest, step)
    build_dir = os.path.join(root, "build", "release")
    log = os.path.join(root, "build", "grade-build.log")
    os.makedirs(os.path.dirname(log), exist_ok=True)
    open(log, "w").close()
    runner.log_line(f"building (cmake --preset release; log: {log}) ...")
    try:
        runner.build(root, build_dir, jobs, log, preset="release", progress=True)
    except runner.BuildError as e:
        return report(manifest, ids, {}, None, f"not graded: {e}", json_path)
    has_gpu, device = runner.device(build_dir)
    runner.log_line(f"GPU: {device}" if has_gpu else f"no usable GPU: {device}")
    cache = TestCache(build_dir, runner.ctest_entries(build_dir))
    results, runs = {}, {}
    for number, ex_id in enumerate(ids, 1):
        ex = manifest["exercises"][ex_id]
        res = {"id": ex_id, "step": ex["step"], "title": ex["title"], "max_points": ex["points"],
               "points": 0, "tests": [], "passed": 0, "total": 0}
        results[ex_id] = res
        if ex["gpu"] and not has_gpu:
            res["status"] = "not graded: no CUDA device"
            res["points"] = None
            continue
        runner.log_line(f"[{number} of {len(ids)}] grading {ex_id} ...")
        for name, filt in mf.tests_of(ex):
            for test, (verdict, message) in sorted(cache.result(name, filt).items()):
                res["tests"].append({"ctest": name, "filter": filt, "test": test,
                                     "result": verdict, "message": message})
                res["total"] += 1
                res["passed"] += verdict == "passed"
        skipped = [t for t in res["tests"] if t["result"] == "skipped"]
        if res["total"] and res["passed"] == res["total"]:
            res["status"], res["points"] = "passed", ex["points"]
        elif skipped and len(skipped) + res["passed"] == res["total"]:
            res["status"], res["points"] = "not graded: tests skipped", None
        else:
            res["status"] = "failed"
        if perf and "performance" in ex:
            p = ex["performance"]
            res["max_points"] += p["points"]
            res["performance"] = {"max_points": p["points"], "target": p["target"],
                                  "h100": p["h100"], "points": 0}
            if res["status"] == "passed" and has_gpu:
                ratio, note = measure(build_dir, p, runs)
                res["performance"].update({"ratio": ratio, "measured": note})
                if ratio is not None:
                    pts = p["points"] * min(1.0, ratio / p["target"])
                    res["performance"]["points"] = round(pts, 1)
                    res["points"] += round(pts, 1)
            else:
                res["performance"]["measured"] = "not measured: the tests do not pass"
    for res in results.values():
        waiting = [o for o in manifest["exercises"][res["id"]].get("also_needs", [])
                   if o in results and results[o]["status"] == "failed"]
        if res["status"] == "failed" and waiting:
            res["status"] = "failed (its tests also run " + ", ".join(waiting) + ")"
    return report(manifest, ids, results, device if has_gpu else None, None, json_path)


def report(manifest, ids, results, gpu, error, json_path):
    rows = [results.get(i, {"id": i, "step": manifest["exercises"][i]["step"],
                            "title": manifest["exercises"][i]["title"], "status": error,
                            "points": None, "passed": 0, "total": 0,
                            "max_points": manifest["exercises"][i]["points"]}) for i in ids]
    print()
    print(f"{'exercise':<14} {'tests':>7} {'points':>11}  status")
    for r in rows:
        pts = "-" if r["points"] is None else f"{r['points']:g}"
        print(f"{r['id']:<14} {r['passed']:>3}/{r['total']:<3} {pts:>5} / {r['max_points']:<3}  "
              f"{r['status']}")
        for t in r.get("tests", []):
            if t["result"] != "passed":
                print(f"{'':<16}{t['result']}: {t['test']}  {t['message'][:110]}")
        perf = r.get("performance")
        if perf and "ratio" in perf:
            shown = "-" if perf["ratio"] is None else f"{perf['ratio']:.2f}x"
            print(f"{'':<16}performance {shown} (target {perf['target']}x, an H100 "
                  f"{perf['h100']}x): {perf['points']:g} of {perf['max_points']} points; "
                  f"{perf['measured']}")
    graded = [r for r in rows if r["points"] is not None]
    total = sum(r["points"] for r in graded)
    most = sum(r["max_points"] for r in graded)
    print(f"\ntotal: {total:g} of {most} points graded"
          + (f"; {len(rows) - len(graded)} exercises not graded" if len(graded) < len(rows) else ""))
    if any("performance" in r and "ratio" in r["performance"] for r in rows):
        print(f"performance points: ratios of times measured in this run on {gpu}, each row "
              "against its reference row of the same program (cuDNN, cuBLAS or a simpler "
              "kernel), so they mean the same on any GPU")
    if json_path:
        with open(json_path, "w") as f:
            json.dump({"gpu": gpu, "error": error, "total_points": total,
                       "graded_max_points": most, "exercises": rows}, f, indent=2)
            f.write("\n")
    return 0 if error is None else 1
