#!/usr/bin/env python3
"""The last of three ranks comes late to an AllReduce (see late_rank.c).

  run_late_rank.py stall RANK_PROGRAM [NAME=VALUE ...]
      It is 3.5 s late and WEFT_STALL_WARN=1: the waiting ranks warn whom they wait for, rank 0's stall
      report names the waiting ranks and the late one, and the AllReduce then succeeds with correct sums.
  run_late_rank.py abort RANK_PROGRAM [NAME=VALUE ...]
      It calls weftCommAbort after 1 s instead: the others' AllReduce fails with weftRemoteError naming it,
      within 2 s of the abort, though WEFT_TIMEOUT is 60 s.
"""
import re
import subprocess
import sys

import launch

NRANKS = 3
LATE = NRANKS - 1


def run(mode, program, extra):
    late_s = 3.5 if mode == "stall" else 1.0
    env = dict(extra, WEFT_TIMEOUT="60", WEFT_STALL_WARN="1" if mode == "stall" else "0")
    procs = launch.start_ranks(program, NRANKS, env, ["late" if mode == "stall" else "abort", str(late_s)],
                               stderr=subprocess.PIPE)
    outs, errs = [], []
    for p in procs:
        try:
            out, err = p.communicate(timeout=40)
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            sys.exit("FAIL: a rank is still running 40 s after the start")
        outs.append(out.strip())
        errs.append(err)
    return procs, outs, errs, late_s


def main():
    mode, argv = sys.argv[1], sys.argv[2:]
    if mode not in ("stall", "abort"):
        sys.exit(__doc__)
    _, program, extra = launch.parse_args(argv, None)
    procs, outs, errs, late_s = run(mode, program, extra)
    failures = []
    for rank, p in enumerate(procs):
        print(f"rank {rank}: exit {p.returncode}: {outs[rank]}")
        if p.returncode != 0:
            failures.append(f"rank {rank} exited {p.returncode}: {outs[rank]} {errs[rank][-2000:]}")
    if mode == "stall":
        for rank in range(LATE):
            warned = re.search(rf"stall: rank {rank} has waited \d+ s in .+ for ", errs[rank])
            if not warned:
                failures.append(f"rank {rank} did not warn of its stall")
        report = re.search(r"stall report: ranks 0, 1 wait in .*not heard from rank 2", errs[0])
        if not report:
            failures.append("rank 0's stall report does not name the waiting ranks 0, 1 and the late rank 2")
        for line in errs[0].splitlines():
            if "stall" in line:
                print("  " + line)
    else:
        for rank in range(LATE):
            m = re.match(r"ERROR (\S+) remote error .*rank 2 aborted the communicator", outs[rank])
            if not m:
                failures.append(f"rank {rank} does not report rank 2's abort: {outs[rank]}")
            elif float(m.group(1)) > late_s + 2:
                failures.append(f"rank {rank} waited {m.group(1)} s (> {late_s + 2} s)")
    if failures:
        sys.exit("FAIL: " + "; ".join(failures))
    print("PASS")


if __name__ == "__main__":
    main()
