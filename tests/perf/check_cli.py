#!/usr/bin/env python3
"""Bad flags give one clear error line and a non-zero exit on every rank, never a crash or a hang; --help
exits 0. Runs commperf on 2 ranks through the given mpirun command line.

Usage: check_cli.py COMMPERF GLOO_BUILT(0|1) MPIRUN...
"""
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

CRASH_SIGNS = ("Segmentation", "core dumped", "terminate called", "MPI_ABORT", "Aborted", "signal")


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    commperf, gloo_built, mpirun = sys.argv[1], sys.argv[2] == "1", sys.argv[3:]
    cases = [
        (["--peer", "nccl"], "unknown --peer 'nccl'"),
        (["--peer", "mpi,nccl"], "unknown library 'nccl' in --peer 'mpi,nccl'"),
        (["--peer", "mpi,gloo,mpi"], "names mpi twice"),
        (["--peer", "none,gloo"], "none means Weft alone"),
        (["--peer", "mpi,"], "empty library name in --peer 'mpi,'"),
        (["--rounds", "0"], "invalid --rounds '0'"),
        (["--rounds", "x"], "invalid --rounds 'x'"),
        (["-n", "-1"], "invalid --iters '-1'"),
        (["--coll", "bogus"], "unknown --coll 'bogus'"),
        (["--bounds=1"], "takes no argument"),
        (["--bounds_bytes", "1"], "invalid --bounds_bytes '1'"),
        (["--gloo_allreduce", "tree"], "unknown --gloo_allreduce 'tree'"),
        (["-d", "complex"], "unknown --datatype 'complex'"),
        (["--coll", "none"], "--coll none runs nothing without --bounds"),
        (["--root", "5"], "--root 5 is not a rank"),
        (["-b", "2K", "-e", "1K"], "--minbytes is larger than --maxbytes"),
        (["--json", "/nonexistent-dir/x.json", "-e", "8"], "cannot write /nonexistent-dir/x.json"),
        (["--csv", "/nonexistent-dir/x.csv", "-e", "8"], "cannot write /nonexistent-dir/x.csv"),
        (["--choices", "/nonexistent-dir/c.json"], "cannot write /nonexistent-dir/c.json"),
        (["--choices"], "needs an argument"),
        (["stray"], "unexpected argument 'stray'"),
        (["--csv"], "needs an argument"),
        (["--fusion", "1000"], "invalid --fusion '1000'"),
        (["--fusion", "0:4K"], "invalid --fusion '0:4K'"),
        (["--fusion", "10:4"], "invalid --fusion '10:4'"),
        (["--fusion", "10:4K,"], "invalid --fusion '10:4K,'"),
        (["--fusion", "10:4K,x:1M"], "invalid --fusion '10:4K,x:1M': 'x:1M'"),
        (["--fusion", "1048576:1G"], "more than 3/4 of this machine's memory"),
        (["--coll", "none", "--fusion"], "needs an argument"),
        (["--fusion", "4:1K", "--fusion_coll", "broadcast"], "unknown collective 'broadcast' in --fusion_coll"),
        (["--fusion", "4:1K", "--fusion_coll", "allgather,allgather"], "names allgather twice"),
        (["--plan", "0"], "invalid --plan '0'"),
        (["--plan", "10:4"], "invalid --plan '10:4'"),
        (["--plan", "10,x:1K"], "invalid --plan '10,x:1K': 'x:1K'"),
        (["--plan", "1048576:1G"], "more than 3/4 of this machine's memory"),
        (["--coll", "none", "--plan"], "needs an argument"),
    ]
    if not gloo_built:
        cases.append((["--peer", "gloo"], "built without Gloo"))
        cases.append((["--peer", "mpi,gloo"], "built without Gloo"))
    problems = []

    def launch(args):
        """One 2-rank launch; most of its second is mpirun starting up, so three run at once. Each gets a session
        directory of its own: Open MPI 4.1's mpirun, started alongside another, can fail creating the shared
        /tmp/ompi.HOST.UID ("mkdir ... File exists", seen once in CI on 2026-12-01)."""
        with tempfile.TemporaryDirectory(prefix="weft-check-cli-") as session:
            env = dict(os.environ, OMPI_MCA_orte_tmpdir_base=session)
            try:
                return subprocess.run(mpirun + ["-np", "2", commperf] + args, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True, timeout=120, env=env)
            except subprocess.TimeoutExpired:
                return None

    with ThreadPoolExecutor(max_workers=3) as pool:
        runs = list(pool.map(launch, [args for args, _ in cases]))
    for (args, message), done in zip(cases, runs):
        if done is None:
            problems.append(f"{args}: hung")
            continue
        errors = [line for line in done.stderr.splitlines() if line.startswith("commperf: error:")]
        if done.returncode == 0:
            problems.append(f"{args}: exit status 0")
        if len(errors) != 1 or message not in errors[0]:
            problems.append(f"{args}: expected one 'commperf: error: ...{message}...' line, got {errors}")
        if any(sign in done.stderr for sign in CRASH_SIGNS):
            problems.append(f"{args}: looks like a crash:\n{done.stderr}")
        # A bad --peer is a usage error: exit status 2 (before MPI_Init when the list itself is malformed).
        if args[0] == "--peer" and done.returncode != 2:
            problems.append(f"{args}: exit status {done.returncode}, expected 2")
        print(f"{' '.join(args):45s} -> {done.returncode}: {errors[0] if errors else done.stderr.strip()}")
    done = subprocess.run(mpirun + ["-np", "2", commperf, "--help"], stdout=subprocess.PIPE, text=True, timeout=60)
    if done.returncode != 0 or "--peer" not in done.stdout or done.stdout.count("Usage:") != 1:
        problems.append("--help: should print the usage once and exit 0")
    for problem in problems:
        print("FAIL", problem)
    if problems:
        sys.exit(f"{len(problems)} problems")
    print(f"OK: {len(cases)} bad command lines rejected cleanly")


if __name__ == "__main__":
    main()
