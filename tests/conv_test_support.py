"""What the Python tests share (as conv_test_support.{c,h} for the C ones):
the failures of the run, check() that records and prints one, and the
closing line with the exit status."""

failures = []


def check(cond, what):
    """Records `what` as a failure (and prints it) unless cond holds."""
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def verdict(what=""):
    """Prints the closing line ("what; N failed") and returns the exit status."""
    print(f"{what}{'; ' if what else ''}{len(failures)} failed")
    return 1 if failures else 0
