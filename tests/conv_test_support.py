"""What the Python tests share (as conv_test_support.{c,h} for the C ones):
the failures of the run, check() that records and prints one, the checks of
a refused command line, and the closing line with the exit status."""
import os

failures = []


def check(cond, what):
    """Records `what` as a failure (and prints it) unless cond holds;
    returns cond."""
    if not cond:
        failures.append(what)
        print("FAIL:", what)
    return cond


def check_refused(what, p, needle, out_dir, prefix):
    """A refused command (p: its finished subprocess.run): exit status 2,
    one line on stderr that starts with prefix and contains needle, nothing
    on stdout, nothing written into out_dir (what it wrote is removed, so
    that the folder serves the next case)."""
    lines = p.stderr.strip().splitlines()
    check(p.returncode == 2, f"{what}: exit status {p.returncode}, want 2 ({p.stderr.strip()!r})")
    check(len(lines) == 1, f"{what}: {len(lines)} lines on stderr, want 1: {p.stderr!r}")
    check(lines[:1] and lines[0].startswith(prefix),
          f"{what}: the line does not start with '{prefix}': {lines[:1]}")
    check(lines[:1] and needle in lines[0], f"{what}: '{needle}' not in {lines[:1]}")
    check(p.stdout == "", f"{what}: printed on stdout: {p.stdout[:200]!r}")
    written = os.listdir(out_dir)
    check(not written, f"{what}: wrote {written}")
    for f in written:
        os.remove(os.path.join(out_dir, f))


def flag_refusals(flag, *values):
    """Bad command lines "flag value", one a value, each refused with a line
    that names the flag: (arguments, what the line must contain) pairs."""
    return [([flag, value], flag) for value in values]


def refusals(needle, *arg_lists):
    """Bad command lines refused with the same line: each of arg_lists with
    needle, as (arguments, what the line must contain) pairs."""
    return [(args, needle) for args in arg_lists]


def verdict(what=""):
    """Prints the closing line ("what; N failed") and returns the exit status."""
    print(f"{what}{'; ' if what else ''}{len(failures)} failed")
    return 1 if failures else 0
