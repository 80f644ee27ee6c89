"""check (instructor): every exercise's tests must fail on its stub, and
nothing else may. For each exercise in turn, only that exercise is stubbed in a
scratch copy of the tree (one copy, one build folder, re-stubbed in place, so
each build is incremental); then its graded tests run (each must fail) and so
do the other tests whose programs the rebuild touched (each must pass, except
the tests that run this exercise among other code, manifest's also_runs).
Two checks of one scratch folder (two ctest runs of one build folder, say)
take turns: the second waits for the first's lock."""
import fcntl
import os
import shutil
import time

from . import manifest as mf
from . import markers
from . import runner


def sync(root, src):
    """The scratch copy: the tree's files, rewritten only where they differ
    (so that the build stays incremental)."""
    files = mf.tree_files(root)
    for path in files:
        a, b = os.path.join(root, path), os.path.join(src, path)
        with open(a, "rb") as f:
            data = f.read()
        if os.path.exists(b):
            with open(b, "rb") as f:
                if f.read() == data:
                    continue
        os.makedirs(os.path.dirname(b), exist_ok=True)
        shutil.copy2(a, b)
    return files


def stub_only(root, src, regions, ex_id):
    """Writes the scratch copy's sources with ex_id stubbed and every other
    region as in the tree; returns the files that changed."""
    changed = []
    for path, rs in regions.items():
        lines = mf.read_lines(root, path)
        text = "\n".join(markers.render(lines, rs, {ex_id} if ex_id else set(), True))
        dst = os.path.join(src, path)
        with open(dst) as f:
            if f.read() == text:
                continue
        with open(dst, "w") as f:
            f.write(text)
        changed.append(path)
    return changed


def stamps(entries, build_dir):
    return {name: [(p, os.path.getmtime(p)) for p in runner.files_of(e, build_dir)]
            for name, e in entries.items()}


def touched(before, after):
    return sorted(n for n in after if after[n] != before.get(n))


def run_graded(entries, build_dir, ex):
    """Each graded (ctest entry, filter): its verdicts."""
    out = []
    for name, filt in mf.tests_of(ex):
        entry = entries[name]
        if filt is not None and runner.is_criterion(entry):
            res = runner.criterion(entry, filt)
        else:
            res = {name: runner.whole(build_dir, name, entry["timeout"])}
        out.append((name, filt, res))
    return out


def run_others(entries, build_dir, names, graded, also, cpu_only):
    """The touched entries outside graded and also (and, with cpu_only, the CPU
    entries alone): ["test: verdict"] of every test that did not pass."""
    bad = []
    for name in names:
        entry = entries[name]
        if "sanitize" in entry["labels"] or mf.matches(graded + also, name):
            continue
        if cpu_only and "gpu" in entry["labels"]:
            continue
        if runner.is_criterion(entry):
            for test, (verdict, msg) in runner.criterion(entry).items():
                if verdict == "failed" and not mf.matches(graded + also, name, test):
                    bad.append(f"{name} {test}: {msg[:160]}")
        else:
            verdict, msg = runner.whole(build_dir, name, entry["timeout"])
            if verdict == "failed":
                bad.append(f"{name}: {msg[:160]}")
    return bad


def check(root, cpu_only=False, ids=None, jobs=2, arch=None, scratch=None):
    scratch = scratch or os.path.join(root, "build", "exercise-check")
    os.makedirs(scratch, exist_ok=True)
    with open(os.path.join(scratch, "lock"), "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            runner.log_line(f"{scratch} is in use by another check; waiting for it ...")
            fcntl.flock(lock, fcntl.LOCK_EX)
        return check_locked(root, cpu_only, ids, jobs, arch, scratch)


def check_locked(root, cpu_only, ids, jobs, arch, scratch):
    manifest = mf.load(root)
    src, build_dir = os.path.join(scratch, "src"), os.path.join(scratch, "build")
    log = os.path.join(scratch, "build.log")
    os.makedirs(src, exist_ok=True)
    open(log, "w").close()
    sync(root, src)
    regions = mf.scan(root)
    runner.log_line(f"scratch copy {src}; building the solution (log: {log}) ...")
    runner.build(src, build_dir, jobs, log, arch=arch, progress=True)
    has_gpu, device = runner.device(build_dir)
    chosen = [i for i in mf.select(manifest, None, ids)
              if not (cpu_only and manifest["exercises"][i]["gpu"])]
    if not has_gpu and not cpu_only:
        runner.log_line(f"no CUDA device ({device}): the GPU exercises need one; "
                        "use --cpu for the CPU exercises alone")
        return 1
    runner.log_line(f"{'device: ' + device if has_gpu else 'no CUDA device'}; checking "
                    f"{len(chosen)} exercises: {' '.join(chosen)}")
    entries = runner.ctest_entries(build_dir)
    failures = []
    # The solution first: every graded test of these exercises must pass.
    runner.log_line("the solution's graded tests ...")
    for ex_id in chosen:
        for name, filt, res in run_graded(entries, build_dir, manifest["exercises"][ex_id]):
            for test, (verdict, msg) in res.items():
                if verdict != "passed":
                    failures.append(f"solution: {ex_id}: {test} {verdict}: {msg[:160]}")
    if failures:
        runner.log_line("\n".join(failures))
        return 1
    for number, ex_id in enumerate(chosen, 1):
        ex = manifest["exercises"][ex_id]
        start = time.time()
        runner.log_line(f"[{number} of {len(chosen)}] {ex_id}: stubbed alone, rebuilding and "
                        "running the tests the rebuild touched ...")
        before = stamps(entries, build_dir)
        changed = stub_only(root, src, regions, ex_id)
        try:
            runner.build(src, build_dir, jobs, log)
        except runner.BuildError as e:
            failures.append(f"{ex_id}: the stub does not build: {e}")
            stub_only(root, src, regions, None)
            continue
        graded = mf.tests_of(ex)
        own = run_graded(entries, build_dir, ex)
        problems = []
        for name, filt, res in own:
            verdicts = [v for v, _ in res.values()]
            if "failed" not in verdicts:
                what = "skip" if "skipped" in verdicts else "pass"
                problems.append(f"{name} {filt or ''}: all its tests {what} on the stub")
        others = touched(before, stamps(entries, build_dir))
        own_ok = not problems
        problems += run_others(entries, build_dir, others, graded, mf.also_of(manifest, ex),
                               cpu_only)
        stub_only(root, src, regions, None)
        verdict = "ok" if not problems else "FAILED"
        rest = ("the others among them pass or may fail (also_runs)" if not problems else
                "problems:")
        runner.log_line(f"{ex_id:<14} {verdict:<7} stub in {', '.join(changed)}: own tests "
                        f"{'fail' if own_ok else 'NOT ALL FAILING'}; {len(others)} ctest "
                        f"entries rebuilt, {rest} ({time.time() - start:.0f} s)")
        for p in problems:
            runner.log_line(f"    {p}")
        failures += [f"{ex_id}: {p}" for p in problems]
    runner.build(src, build_dir, jobs, log)
    runner.log_line(f"check: {len(chosen) - len({f.split(':')[0] for f in failures})} of "
                    f"{len(chosen)} exercises as they should be")
    return 1 if failures else 0
