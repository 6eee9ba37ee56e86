#!/usr/bin/env python3
"""Ranks that share one CPU: the collectives test on 3 ranks under `taskset -c CPU` (one CPU this process
may use), checked as everywhere, and the log must show that Weft saw 3 ranks on 1 CPU, so that every
rank's waits give the CPU away early (core: "3 ranks on 1 CPUs here: waits give the CPU away early") and
the shm node backend's waits yield at once rather than spin. Before Weft compared the host's ranks'
affinity masks, the node backend counted the machine's online CPUs and spun 50 us in every wait that
taskset, a cgroup cpuset or a small Slurm allocation had left without a CPU of its own (an 8 B AllReduce
at 2 ranks on one CPU: 55 us, 5 us now).

usage: run_on_one_cpu.py TEST_COLLECTIVES MPIRUN...   (exit 77: no taskset here)
"""
import os
import re
import shutil
import subprocess
import sys


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    test, mpirun = sys.argv[1], sys.argv[2:]
    if shutil.which("taskset") is None:
        print("run_on_one_cpu: SKIP: no taskset (util-linux) on this machine")
        sys.exit(77)
    cpu = min(os.sched_getaffinity(0))
    command = ["taskset", "-c", str(cpu)] + mpirun + ["-x", "WEFT_LOG_LEVEL=debug", "-np", "3", test, "--section",
                                                      "collectives", "--algo", "default", "--counts",
                                                      "0,1,7,1000,262147"]
    run = subprocess.run(command, capture_output=True, text=True, timeout=900)
    log = run.stdout + run.stderr
    if run.returncode != 0:
        sys.exit(f"run_on_one_cpu: {' '.join(command)} exited {run.returncode}:\n{log[-4000:]}")
    for rank in range(3):
        wanted = rf"communicator ready: rank {rank} of 3 \(1 hosts; 3 ranks on 1 CPUs here: waits give the CPU away early\)"
        if not re.search(wanted, log):
            sys.exit(f"run_on_one_cpu: rank {rank} did not log that its 3 ranks share 1 CPU:\n{log[-4000:]}")
    if "node backend: 3 ranks on 1 CPUs between them: waits yield at once" not in log:
        sys.exit(f"run_on_one_cpu: the shm node backend did not decide to yield at once:\n{log[-4000:]}")
    print(f"run_on_one_cpu: 3 ranks on CPU {cpu}: collectives passed, every wait gives the CPU away early")


if __name__ == "__main__":
    main()
