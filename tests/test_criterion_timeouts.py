#!/usr/bin/env python3
"""ctest criterion_timeouts: within one test binary, every test that has a timeout has the same.

Criterion 2.4's sandbox (BoxFort's POSIX timeout thread) keeps one list of timeout requests
sorted by deadline. When tests of one binary run in parallel with different timeouts, a
request is inserted before an older one, and the cancellation that walks the list loses a
request: LeakSanitizer then reports 48 bytes leaked from libcriterion at the runner's exit,
and the asan suite fails (test_one_launch did, with one test at 560 s among 280 s ones).
A timeout set on the suite (TestSuite(..., .timeout = N)) counts for each of its tests.

Usage: python3 tests/test_criterion_timeouts.py [REPO_ROOT]   (default: the parent of tests/)
Exit 0: one timeout per file; 1: files with several (listed).
"""
import glob
import os
import re
import sys

TIMEOUT = re.compile(r"^(?:Test|ParameterizedTest|TestSuite)\((.*)$", re.M)


def timeouts(text):
    found = set()
    for m in TIMEOUT.finditer(text):
        t = re.search(r"\.timeout\s*=\s*([0-9.]+)", m.group(1))
        if t:
            found.add(float(t.group(1)))
    return found


def main(argv):
    root = argv[1] if len(argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    bad = []
    # C and C++ test files alike (the check once read *.c only, and test_lookback.cpp mixed 300
    # and 120 s unseen until the asan suite failed on the leak).
    paths = [p for ext in ("*.c", "*.cpp") for p in glob.glob(os.path.join(root, "tests", "**", ext), recursive=True)]
    for path in sorted(paths):
        with open(path, encoding="utf-8") as f:
            found = timeouts(f.read())
        if len(found) > 1:
            bad.append("%s: timeouts %s" % (os.path.relpath(path, root), sorted(found)))
    if bad:
        print("test files whose tests have different timeouts (give them one, on the suite or on each):")
        print("\n".join(bad))
        return 1
    print("one timeout per test file")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
