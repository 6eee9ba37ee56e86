#!/usr/bin/env python3
"""perf/compare --quick end to end: runs it into a fresh directory and checks that every file it promises is
there and sound: npN.json (schema 3 with both peers, checked by check_json.py) and npN.csv for each rank
count, npN.txt, one PNG per collective (non-empty, PNG signature) and ratios.md with a table per peer and
rank count. Exits 77 (CTest's SKIP_RETURN_CODE) when gnuplot is missing: the plots cannot be drawn.

Usage: check_compare.py COMPARE COMMPERF WORKDIR MPIRUN...
"""
import os
import shlex
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
import check_json  # noqa: E402  (next to this script)

SKIP = 77
RANKS = [2, 4]
PEERS = ["mpi", "gloo"]
QUICK_ROUNDS = 2  # perf/compare --quick
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    compare, commperf, workdir, mpirun = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    if not shutil.which("gnuplot"):
        print("SKIP: gnuplot not found (Debian: apt-get install gnuplot-nox); perf/compare needs it for the plots")
        sys.exit(SKIP)
    shutil.rmtree(workdir, ignore_errors=True)
    cmd = [compare, "--quick", "-o", workdir, "--commperf", commperf, "--np", " ".join(map(str, RANKS)),
           "--mpirun", shlex.join(mpirun)]
    print("+", shlex.join(cmd), flush=True)
    done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=240)
    print(done.stdout[-3000:])
    if done.returncode != 0:
        sys.exit(f"perf/compare exited with {done.returncode}")
    problems = []

    def need(path):
        if not os.path.isfile(path) or os.path.getsize(path) == 0:
            problems.append(f"{path}: missing or empty")
            return False
        return True

    for n in RANKS:
        stem = os.path.join(workdir, f"np{n}")
        for ext in (".txt", ".json", ".csv"):
            need(stem + ext)
        if not (need(stem + ".json") and need(stem + ".csv")):
            continue
        with open(stem + ".json") as f:
            doc = check_json.json.load(f)
        check_json.check_json(doc, PEERS, n, QUICK_ROUNDS, True)
        check_json.check_csv(stem + ".csv", doc, PEERS)
        if sorted({r["collective"] for r in doc["results"]}) != sorted(check_json.COLLS):
            problems.append(f"{stem}.json: not every collective ran")
        if stem + ".json" not in done.stdout:
            problems.append(f"perf/compare did not say where {stem}.json went")
    problems += check_json.failures[:20]

    for coll in sorted(check_json.COLLS):
        png = os.path.join(workdir, f"commperf_{coll}.png")
        if need(png):
            with open(png, "rb") as f:
                if f.read(len(PNG_SIGNATURE)) != PNG_SIGNATURE:
                    problems.append(f"{png}: not a PNG")

    ratios = os.path.join(workdir, "ratios.md")
    if need(ratios):
        with open(ratios) as f:
            text = f.read()
        for peer in PEERS:
            for n in RANKS:
                if f"({peer}) vs weft, {n} ranks" not in text:
                    problems.append(f"{ratios}: no {peer} table for {n} ranks")
        tables = sum(line.startswith("| allreduce |") for line in text.splitlines())
        if tables != len(PEERS) * len(RANKS) or "Peak bus bandwidth" not in text:
            problems.append(f"{ratios}: expected {len(PEERS) * len(RANKS)} ratio tables and the peak table")

    for problem in problems:
        print("FAIL", problem, flush=True)
    if problems:
        sys.exit(f"{len(problems)} problems")
    print(f"OK: {len(RANKS)} runs, {len(check_json.COLLS)} plots and ratios.md in {workdir}")


if __name__ == "__main__":
    main()
