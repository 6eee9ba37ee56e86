#!/usr/bin/env python3
"""A peer that stays alive but stops calling: rank 0's collective must end with weftTimeout after
WEFT_TIMEOUT seconds, naming the silent rank (see silent_peer_rank.c).

Usage: run_silent_peer.py [--abort] RANK_PROGRAM [extra environment NAME=VALUE ...]
With --abort, rank 0 calls weftCommAbort while another of its threads is blocked in the collective, and
WEFT_TIMEOUT is long: the abort alone must end the wait.
"""
import subprocess
import sys

import launch

TIMEOUT_S = 2


def main():
    abort, program, extra = launch.parse_args(sys.argv[1:], "--abort")
    timeout_s = 60 if abort else TIMEOUT_S
    procs = launch.start_ranks(program, 2, dict(extra, WEFT_TIMEOUT=str(timeout_s)), ["abort"] if abort else [])
    outputs = []
    for p in procs:
        try:
            out, _ = p.communicate(timeout=timeout_s + 30)
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            sys.exit("FAIL: a rank is still blocked 30 s after WEFT_TIMEOUT")
        outputs.append(out.strip())
    print(f"rank 0: exit {procs[0].returncode}: {outputs[0]}")
    if procs[0].returncode != 0 or procs[1].returncode != 0:
        sys.exit(f"FAIL: exit codes {procs[0].returncode}, {procs[1].returncode}")
    print("PASS")


if __name__ == "__main__":
    main()
