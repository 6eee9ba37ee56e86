#!/usr/bin/env python3
"""A rank killed with SIGKILL in the middle of collectives: every survivor's call must fail within 10 s
with weftRemoteError, and nothing may be left in /dev/shm. With --all-name every survivor's message must
name the dead rank ("rank 2"); without it, at least one (a survivor may learn of the death from another
survivor that gave up first, as in a ring).

Usage: run_peer_death.py [--all-name] RANK_PROGRAM [extra environment NAME=VALUE ...]
Four ranks, started without mpirun (weftCommInitFromEnv); rank 2 is killed once all have run a few
iterations.
"""
import os
import signal
import subprocess
import sys
import time

import launch

NRANKS = 4
VICTIM = 2
DEADLINE_S = 10.0


def shm_entries():
    return set(os.listdir("/dev/shm")) if os.path.isdir("/dev/shm") else set()


def main():
    all_name, program, extra = launch.parse_args(sys.argv[1:], "--all-name")
    before = shm_entries()
    procs = launch.start_ranks(program, NRANKS, extra)
    # Wait until the victim says it is in the loop (its collectives are running, so are everyone's).
    line = procs[VICTIM].stdout.readline()
    if not line.startswith("READY"):
        for p in procs:
            p.kill()
        sys.exit(f"FAIL: rank {VICTIM} did not reach its loop: {line!r}")
    time.sleep(0.2)
    procs[VICTIM].send_signal(signal.SIGKILL)
    killed_at = time.monotonic()
    procs[VICTIM].wait()
    failures = []
    naming = 0
    for rank, p in enumerate(procs):
        if rank == VICTIM:
            continue
        try:
            out, _ = p.communicate(timeout=DEADLINE_S + 20)
        except subprocess.TimeoutExpired:
            p.kill()
            failures.append(f"rank {rank} still blocked {DEADLINE_S + 20:.0f} s after the kill")
            continue
        elapsed = time.monotonic() - killed_at
        error = next((l for l in out.splitlines() if l.startswith("ERROR")), "(no ERROR line)")
        print(f"rank {rank}: exit {p.returncode} after {elapsed:.2f} s: {error}")
        naming += f"rank {VICTIM} " in error
        if all_name and f"rank {VICTIM} " not in error:
            failures.append(f"rank {rank} does not name rank {VICTIM}: {error}")
        if p.returncode != 0:
            failures.append(f"rank {rank} exited {p.returncode}: {error}")
        if elapsed > DEADLINE_S:
            failures.append(f"rank {rank} took {elapsed:.1f} s (> {DEADLINE_S} s) to notice")
    if naming == 0:
        failures.append(f"no survivor names rank {VICTIM}")
    left = shm_entries() - before
    if left:
        failures.append(f"left in /dev/shm: {sorted(left)}")
    if failures:
        sys.exit("FAIL: " + "; ".join(failures))
    print("PASS: survivors reported the dead rank, nothing left in /dev/shm")


if __name__ == "__main__":
    main()
