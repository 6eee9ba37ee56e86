#!/usr/bin/env python3
"""A rank killed with SIGKILL in the middle of collectives: every survivor's call must fail within 10 s
with weftRemoteError, and nothing may be left in /dev/shm. With --all-name every survivor's message must
name the dead rank ("rank 2"); without it, at least one (a survivor may learn of the death from another
survivor that gave up first, as in a ring). No plugin may log an error on a survivor: the error the call
returns says what happened, and a plugin's own complaint (a fault notice to the dead rank finding nobody
listening, say) would send the reader after the wrong cause.

Usage: run_peer_death.py [--all-name] RANK_PROGRAM [extra environment NAME=VALUE ...]
Four ranks, started without mpirun (weftCommInitFromEnv); rank 2 is killed once all have run a few
iterations.
"""
import os
import re
import signal
import subprocess
import sys
import time

import launch

NRANKS = 4
VICTIM = 2
DEADLINE_S = 10.0


def shm_entries():
    """Weft's entries in /dev/shm. Only those: tests running beside this one (ctest -j) add their own, such
    as Open MPI's vader_segment.* files. Weft's segments are memfds and never appear here; a file of its
    would carry "weft" in its name, as every name Weft makes does."""
    if not os.path.isdir("/dev/shm"):
        return set()
    return {name for name in os.listdir("/dev/shm") if "weft" in name.lower()}


def main():
    all_name, program, extra = launch.parse_args(sys.argv[1:], "--all-name")
    before = shm_entries()
    procs = launch.start_ranks(program, NRANKS, extra, stderr=subprocess.PIPE)
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
            out, err = p.communicate(timeout=DEADLINE_S + 20)
        except subprocess.TimeoutExpired:
            p.kill()
            failures.append(f"rank {rank} still blocked {DEADLINE_S + 20:.0f} s after the kill")
            continue
        elapsed = time.monotonic() - killed_at
        error = next((l for l in out.splitlines() if l.startswith("ERROR")), "(no ERROR line)")
        print(f"rank {rank}: exit {p.returncode} after {elapsed:.2f} s: {error}")
        sys.stdout.write(err)
        plugin_errors = re.findall(r".*\[weft error\] \[[\w-]+\].*", err)
        if plugin_errors:
            failures.append(f"rank {rank}: a plugin logged an error: {plugin_errors[0]}")
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
