#!/usr/bin/env python3
"""conv_bench end to end, on any machine: the table is printed (and, without
a GPU, the no-device line), the CSV and JSON files parse back and agree, and
bad flags are rejected with one line and exit status 2.

    python3 tests/test_bench_outputs.py path/to/conv_bench
"""
import csv
import io
import json
import os
import subprocess
import sys
import tempfile

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(args):
    p = subprocess.run(args, capture_output=True, text=True, timeout=300)
    return p.returncode, p.stdout, p.stderr


def main(bench):
    with tempfile.TemporaryDirectory() as tmp:
        csv_path, json_path = os.path.join(tmp, "b.csv"), os.path.join(tmp, "b.json")
        rc, out, err = run([bench, "--n", "2", "--c", "3", "--h", "19", "--w", "23", "--k", "2",
                            "--filter", "3", "--repeat", "2", "--csv", csv_path,
                            "--json", json_path])
        check(rc == 0, f"small custom problem: exit status {rc}\n{out}\n{err}")
        check("1a serial (CPU)" in out and "verdict: OK" in out, "table rows and verdict printed")
        no_device = "GPU rows skipped" in out
        device_line = [l for l in out.splitlines() if l.startswith("device:")]
        check(len(device_line) == 1 and device_line[0].count("no CUDA device") <= 1,
              f"one device line, the reason not nested: {device_line}")
        check(no_device or "cuDNN" in out, "either GPU rows or the no-device line")

        with open(csv_path) as f:
            text = f.read()
        meta = [l for l in text.splitlines() if l.startswith("#")]
        check(any(l.startswith("# command:") for l in meta), "CSV records the command")
        rows = list(csv.DictReader(io.StringIO(
            "\n".join(l for l in text.splitlines() if not l.startswith("#")))))
        check(len(rows) >= 2, f"CSV has the CPU rows ({len(rows)} rows)")
        for r in rows:
            check(r["problem"] == "custom", f"problem column: {r['problem']}")
            check(r["status"] in ("ok", "failed", "skipped", "error"), f"status column: {r['status']}")
        serial = [r for r in rows if r["version"] == "1a serial (CPU)"]
        check(len(serial) == 1 and float(serial[0]["median_ms"]) > 0
              and serial[0]["vs_serial"] == "1.0000", "serial row measured, 1.00x itself")

        with open(json_path) as f:
            doc = json.load(f)
        check(len(doc["problems"]) == 1 and doc["problems"][0]["name"] == "custom",
              "JSON problems")
        jrows = doc["problems"][0]["rows"]
        check(len(jrows) == len(rows), f"JSON and CSV have the same rows ({len(jrows)}, {len(rows)})")
        check([r["status"] for r in jrows] == [r["status"] for r in rows],
              "JSON and CSV give every row the same status")
        keys = [k for k in rows[0] if k.startswith("vs_")]
        check(keys and all(k in jrows[0] for k in keys),
              f"JSON uses the CSV's column names ({keys})")
        check((doc["gpu"] is None) == no_device, "JSON gpu is null exactly without a device")
        check((doc["versions"] is None) == no_device
              and (no_device or doc["versions"].startswith("driver ")),
              "JSON versions name the driver, null exactly without a device")

        # --pass all: each problem once per pass, a column pass in the CSV and
        # "pass" in the JSON; a backward pass has no CPU row (cuDNN's and step
        # 10's rows, skipped without a GPU).
        rc, out, err = run([bench, "--n", "2", "--c", "3", "--h", "9", "--w", "7", "--k", "2",
                            "--filter", "3", "--stride", "2", "--pass", "all", "--repeat", "1",
                            "--csv", csv_path, "--json", json_path])
        check(rc == 0, f"--pass all: exit status {rc}\n{err}")
        check("== custom dgrad:" in out and "== custom wgrad:" in out, "a heading per pass")
        with open(csv_path) as f:
            lines = [l for l in f.read().splitlines() if not l.startswith("#")]
        rows = list(csv.DictReader(io.StringIO("\n".join(lines))))
        check(lines[0].startswith("problem,pass,version,"), f"pass column: {lines[0]}")
        check({r["pass"] for r in rows} <= {"forward", "dgrad", "wgrad"}
              and "forward" in {r["pass"] for r in rows}, "pass values")
        check(not [r for r in rows if r["pass"] != "forward" and "CPU" in r["version"]],
              "no CPU row in a backward pass")
        check(no_device or any(r["pass"] == "dgrad" and r["version"].startswith("10a")
                               for r in rows), "step 10's rows on a GPU")
        with open(json_path) as f:
            doc = json.load(f)
        check([p["pass"] for p in doc["problems"]] == ["forward", "dgrad", "wgrad"],
              "JSON: the problems in pass order")

        # The skip rule: the serial row of a large problem is not run.
        rc, out, err = run([bench, "--problem", "ece408-l2", "--steps", "01", "--repeat", "1"])
        check(rc == 0, f"ece408-l2 --steps 01: exit status {rc}\n{err}")
        check("skipped: estimated" in out, "large problem: CPU rows skipped with an estimate")

    for args, needle in [(["--problem", "nope"], "--problem"), (["--steps", "11"], "--steps"),
                         (["--pass", "both"], "--pass"),
                         (["--bogus"], "unknown option"), (["--h", "0"], "--h"),
                         (["--json"], "needs a value"),
                         (["--problem", "lecture", "--h", "16"], "cannot be combined with --problem"),
                         (["--problem", "lecture", "--json", "/proc/x.json"], "--json")]:
        rc, out, err = run([bench] + args)
        lines = err.strip().splitlines()
        check(rc == 2 and len(lines) == 1 and needle in lines[0],
              f"{args}: exit {rc}, stderr {err!r}")

    print(f"{'0 failed' if not failures else str(len(failures)) + ' failed'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
