#!/usr/bin/env python3
"""perf/targets on made-up commperf files whose ratios are known: each cell must show the band's worst
ratio, out of place / in place where in-place figures exist, and be met only when every like-for-like form
meets its target; Broadcast compares Weft's in-place form with MPI_Bcast's one form (its out-of-place ratio
in parentheses). Files without in-place figures give out-of-place cells alone.

Usage: check_targets.py TARGETS WORKDIR
"""
import json
import os
import subprocess
import sys

KIB, MIB = 1 << 10, 1 << 20
SIZES = [8, 2 * KIB, 8 * KIB, MIB, 2 * MIB, 32 * MIB]
COLLS = ["allreduce", "allgather", "reducescatter", "alltoall", "broadcast"]


def measure(us):
    return {"time_us": us, "time_us_min": us, "time_us_max": us, "algbw": 1.0, "busbw": 1.0, "wrong": 0,
            "round_times_us": [us]}


def row(coll, size, weft, mpi, weft_in_place=None, mpi_in_place=None):
    peer = {"out_of_place": measure(mpi), "skipped": None, "ratio": mpi / weft,
            "in_place": measure(mpi_in_place) if mpi_in_place else None,
            "in_place_ratio": mpi_in_place / weft_in_place if mpi_in_place and weft_in_place else None}
    return {"collective": coll, "size": size, "count": size // 4, "type": "float",
            "redop": "none" if coll in ("allgather", "alltoall", "broadcast") else "sum", "root": -1,
            "out_of_place": measure(weft), "in_place": measure(weft_in_place) if weft_in_place else None,
            "peers": {"mpi": peer}}


def document(rows):
    return {"tool": "commperf", "schema": 3, "command_line": "made up", "ranks": 2,
            "peers": [{"library": "mpi", "version": "x"}], "results": rows}


def write(workdir, name, rows):
    path = os.path.join(workdir, name)
    with open(path, "w") as f:
        json.dump(document(rows), f)
    return path


def cells(output, case):
    for line in output.splitlines():
        if line.startswith(f"| {case} |"):
            return [c.strip() for c in line.strip().strip("|").split("|")][1:]
    return None


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    targets, workdir = sys.argv[1], sys.argv[2]
    os.makedirs(workdir, exist_ok=True)
    rows = []
    for coll in COLLS:
        for size in SIZES:
            if coll == "allgather":
                # Out of place 1.6 everywhere; in place 1.2 at 2 MiB only: missed there, met at 32 MiB.
                rows.append(row(coll, size, 10, 16, 10, 12 if size == 2 * MIB else 20))
            elif coll == "broadcast":
                # Out of place 1.1 (the root's extra copy), in place against MPI_Bcast's one form 2.0.
                rows.append(row(coll, size, 10, 11, 5.5))
            elif coll == "alltoall":
                rows.append(row(coll, size, 10, 9))  # no in-place form: 0.9, missed
            else:
                rows.append(row(coll, size, 10, 30, 10, 30))
    with_in_place = write(workdir, "np2.json", rows)
    plain = write(workdir, "np2_plain.json", [dict(r, in_place=None) for r in rows])
    problems = []

    def run(*files):
        done = subprocess.run([targets, *files], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if done.returncode != 0:
            problems.append(f"perf/targets {files} exited with {done.returncode}: {done.stdout}")
        return done.stdout

    # Per file: the cells expected of some cases, and how many targets the table misses in all.
    expected = [
        (with_in_place, 4, {
            "AllGather, np 2, vs Open MPI":
                ["", "1.60 / 2.00 ≥ 1.0 met", "", "1.60 / 1.20 < 1.5 **missed**", "1.60 / 2.00 ≥ 1.5 met"],
            "Broadcast, np 2, vs Open MPI":
                ["", "(1.10) / 2.00 ≥ 1.0 met", "", "(1.10) / 2.00 ≥ 1.5 met", "(1.10) / 2.00 ≥ 1.5 met"],
            "AllToAll, np 2, vs Open MPI":
                ["", "0.90 < 1.0 **missed**", "", "0.90 < 1.5 **missed**", "0.90 < 1.5 **missed**"],
            "AllReduce, np 2, vs Open MPI shm":
                ["3.00 / 3.00 ≥ 1.0 met", "", "3.00 / 3.00 ≥ 1.0 met", "3.00 / 3.00 ≥ 1.5 met",
                 "3.00 / 3.00 ≥ 2.0 met"]}),
        (plain, 5, {
            "AllGather, np 2, vs Open MPI": ["", "1.60 ≥ 1.0 met", "", "1.60 ≥ 1.5 met", "1.60 ≥ 1.5 met"],
            "Broadcast, np 2, vs Open MPI":
                ["", "1.10 ≥ 1.0 met", "", "1.10 < 1.5 **missed**", "1.10 < 1.5 **missed**"]}),
    ]
    for path, missed, cases in expected:
        out = run(path, path)
        for case, want in cases.items():
            got = cells(out, case)
            if got != want:
                problems.append(f"{os.path.basename(path)}, {case}: cells {got}, expected {want}")
        if f"{missed} target(s) missed" not in out:
            problems.append(f"{os.path.basename(path)}: not {missed} missed:\n{out}")
    for p in problems:
        print("FAIL", p)
    if problems:
        sys.exit(f"{len(problems)} problems")
    print("OK: perf/targets compares like for like")


if __name__ == "__main__":
    main()
