#!/usr/bin/env python3
"""Runs a command and passes only when it exits 0 AND its output (stdout and stderr together) has a line
matching each --expect regular expression: for tests whose point is a path taken as well as a result, where a
job that got the right answer another way must fail. Exit status 77 (a skip) is passed on.

usage: run_expecting.py --expect REGEX [--expect REGEX ...] COMMAND [ARG ...]
"""
import re
import subprocess
import sys


def main(argv):
    expected = []
    while len(argv) > 1 and argv[0] == "--expect":
        expected.append(argv[1])
        argv = argv[2:]
    if not expected or not argv:
        print(__doc__)
        return 2
    proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace")
    sys.stdout.write(proc.stdout)
    if proc.returncode == 77:
        print("run_expecting: the test skipped itself")
        return 77
    problems = [f"no line matches '{e}'" for e in expected if not re.search(e, proc.stdout, re.MULTILINE)]
    if proc.returncode != 0:
        problems.append(f"exit status {proc.returncode}")
    if problems:
        print("run_expecting: FAILED: " + "; ".join(problems))
        return 1
    print(f"run_expecting: passed, with {len(expected)} expected line(s) found")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
