#!/usr/bin/env python3
"""Runs a command and passes only when it exits 0 AND its output (stdout and stderr together) has a line
matching each --expect regular expression: for tests whose point is a path taken as well as a result, where a
job that got the right answer another way must fail. Exit status 77 (a skip) is passed on.

usage: run_expecting.py [--one-cpu] --expect REGEX [--expect REGEX ...] COMMAND [ARG ...]
  --one-cpu  run COMMAND under `taskset -c CPU`, CPU the first this process may use, so that its processes
             share one CPU whatever the machine has (exit 77 without taskset)
"""
import os
import re
import shutil
import subprocess
import sys


def run_and_check(argv, expected, name, env=None, more_problems=lambda out: [], summary=None):
    """Runs argv and returns the test's exit status: 77 when it skipped itself, 0 when it exited 0, every
    expected regular expression matches a line of its output and more_problems(output) is empty, else 1.
    Prints the output, then one line naming the problems or, on success, summary(output)."""
    proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace",
                          env=env)
    out = proc.stdout
    sys.stdout.write(out)
    if proc.returncode == 77:
        print(f"{name}: the test skipped itself")
        return 77
    problems = [f"no line matches '{e}'" for e in expected if not re.search(e, out, re.MULTILINE)]
    if proc.returncode != 0:
        problems.append(f"exit status {proc.returncode}")
    problems += more_problems(out)
    if problems:
        print(f"{name}: FAILED: " + "; ".join(problems))
        return 1
    print(f"{name}: " + (summary(out) if summary else f"passed, with {len(expected)} expected line(s) found"))
    return 0


def main(argv):
    expected = []
    one_cpu = False
    while argv and argv[0] in ("--expect", "--one-cpu"):
        if argv[0] == "--one-cpu":
            one_cpu = True
            argv = argv[1:]
        elif len(argv) > 1:
            expected.append(argv[1])
            argv = argv[2:]
        else:
            break
    if not expected or not argv:
        print(__doc__)
        return 2
    if one_cpu:
        if shutil.which("taskset") is None:
            print("run_expecting: SKIP: no taskset (util-linux) on this machine")
            return 77
        argv = ["taskset", "-c", str(min(os.sched_getaffinity(0)))] + argv
    return run_and_check(argv, expected, "run_expecting")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
