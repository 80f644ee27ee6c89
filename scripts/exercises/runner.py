"""Building a tree and running its ctest entries: a whole entry through
ctest, or a Criterion binary with a filter of our own and its JSON report, so
that each of its tests has its own verdict."""
import fnmatch
import json
import os
import re
import subprocess
import sys
import tempfile


class BuildError(Exception):
    pass


def run(cmd, cwd=None, log=None, env=None, timeout=None):
    """Runs cmd; its output goes to the file log (appended) or is returned."""
    if log is not None:
        with open(log, "a") as f:
            f.write("$ " + " ".join(cmd) + "\n")
            f.flush()
            p = subprocess.run(cmd, cwd=cwd, stdout=f, stderr=subprocess.STDOUT, env=env,
                               timeout=timeout)
        return p.returncode, ""
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env, timeout=timeout)
    return p.returncode, p.stdout + p.stderr


# make's line for each file it compiles: "[ 42%] Building CUDA object 06_im2col_gemm/..."
BUILDING = re.compile(r"^\[\s*(\d+)%\] Building \w+ object (?:CMakeFiles/)?([\w.-]+)/")


def build_with_progress(cmd, cwd, log):
    """Runs the build, its output to the file log; prints a line when it starts
    on a folder of the tree (a step, common, bench) the first time."""
    with open(log, "a") as f:
        f.write("$ " + " ".join(cmd) + "\n")
        f.flush()
        p = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True)
        seen = set()
        for line in p.stdout:
            f.write(line)
            m = BUILDING.match(line)
            if m and m.group(2) not in seen:
                seen.add(m.group(2))
                log_line(f"  [{m.group(1):>3}%] building {m.group(2)}")
        return p.wait()


def build(tree, build_dir, jobs, log, arch=None, preset=None, progress=False):
    """Configures (once) and builds the tree; raises BuildError naming the log.
    With progress, prints which folder of the tree is building."""
    if preset:
        configure = ["cmake", "--preset", preset]
    else:
        configure = ["cmake", "-S", tree, "-B", build_dir, "-DCMAKE_BUILD_TYPE=Release"]
    if arch:
        configure.append(f"-DCMAKE_CUDA_ARCHITECTURES={arch}")
    if not os.path.exists(os.path.join(build_dir, "CMakeCache.txt")):
        rc, _ = run(configure, cwd=tree, log=log)
        if rc != 0:
            raise BuildError(f"configure failed (see {log})")
    cmd = ["cmake", "--build", build_dir, "-j", str(jobs)]
    rc = build_with_progress(cmd, tree, log) if progress else run(cmd, cwd=tree, log=log)[0]
    if rc != 0:
        raise BuildError(f"build failed (see {log}; the first error is the one to fix)")


def ctest_entries(build_dir):
    """{name: {"command": [...], "cwd": dir, "env": {...}, "labels": [...]}}."""
    rc, out = run(["ctest", "--test-dir", build_dir, "--show-only=json-v1"])
    start = out.find("{")
    if rc != 0 or start < 0:
        raise BuildError(f"ctest cannot list the tests of {build_dir}")
    doc, _ = json.JSONDecoder().raw_decode(out[start:])
    entries = {}
    for t in doc["tests"]:
        props = {p["name"]: p["value"] for p in t.get("properties", [])}
        env = dict(v.split("=", 1) for v in props.get("ENVIRONMENT", []))
        entries[t["name"]] = {"command": t.get("command", []), "env": env,
                              "cwd": props.get("WORKING_DIRECTORY", build_dir),
                              "labels": props.get("LABELS", []),
                              "timeout": float(props.get("TIMEOUT", 1500))}
    return entries


def is_criterion(entry):
    """A Criterion test binary (tests/test_<unit>.c), run with a --filter."""
    cmd = entry["command"]
    return bool(cmd) and os.path.basename(cmd[0]).startswith("test_") and "--filter" in cmd


def files_of(entry, build_dir):
    """The files of the build that an entry runs (its binary, the programs it
    names as arguments), for telling which entries a rebuild touched."""
    root = os.path.realpath(build_dir) + os.sep
    found = []
    for arg in entry["command"]:
        for part in arg.split("="):
            if os.path.realpath(part).startswith(root) and os.path.isfile(part):
                found.append(part)
    return found


def device(build_dir):
    """(True, the GPU, as "NVIDIA ... (sm_90, ...)") or (False, the reason there is no usable GPU),
    from the build's conv_device_report."""
    report = os.path.join(build_dir, "common", "conv_device_report")
    if not os.path.exists(report):
        return False, "no conv_device_report in the build"
    _, out = run([report])
    line = out.strip().splitlines()[-1] if out.strip() else "no answer from conv_device_report"
    if line.startswith("GPU tests skip on this machine: "):
        return False, line[len("GPU tests skip on this machine: "):]
    prefix = "GPU tests use "
    return True, line[len(prefix):] if line.startswith(prefix) else line


def criterion(entry, filt=None, timeout=None):
    """Runs a Criterion binary with filt (default: its ctest filter) and returns
    {"suite/name": ("passed" | "failed" | "skipped", message)} for the tests
    that matched the filter."""
    cmd = list(entry["command"])
    i = cmd.index("--filter")
    if filt is not None:
        cmd[i + 1] = filt
    cmd = [c for c in cmd if c != "--verbose"]
    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "report.json")
        env = dict(os.environ, **entry["env"])
        try:
            rc, out = run(cmd + [f"--json={report}"], cwd=entry["cwd"], env=env,
                          timeout=timeout or entry["timeout"])
        except subprocess.TimeoutExpired:
            return {"(the whole binary)": ("failed", "timed out")}
        try:
            with open(report) as f:
                doc = json.load(f)
        except (OSError, ValueError):
            tail = "\n".join(out.strip().splitlines()[-5:])
            return {"(the whole binary)": ("failed", f"no report (exit status {rc}): {tail}")}
    results = {}
    for suite in doc.get("test_suites", []):
        for t in suite.get("tests", []):
            name = f"{suite['name']}/{t['name']}"
            messages = t.get("messages") or []
            status = t.get("status", "FAILED")
            if filt is not None and not fnmatch.fnmatchcase(name, filt):
                continue
            if status == "SKIPPED" and messages == ["The test was skipped."]:
                continue  # left out by the filter
            verdict = {"PASSED": "passed", "SKIPPED": "skipped"}.get(status, "failed")
            results[name] = (verdict, " ".join(messages)[:300])
    return results


def whole(build_dir, name, timeout=None):
    """Runs one ctest entry through ctest: "passed", "failed" or "skipped"."""
    cmd = ["ctest", "--test-dir", build_dir, "-R", f"^{re.escape(name)}$", "--output-on-failure"]
    try:
        rc, out = run(cmd, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "failed", "timed out"
    if "***Skipped" in out or "Not Run" in out:
        return "skipped", ""
    if rc == 0 and "100% tests passed" in out:
        return "passed", ""
    lines = [l for l in out.splitlines() if "FAIL" in l or "verdict" in l]
    return "failed", " ".join(lines[-3:])[:300]


def log_line(text):
    print(text, flush=True)
    sys.stdout.flush()
