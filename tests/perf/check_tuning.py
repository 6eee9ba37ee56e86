#!/usr/bin/env python3
"""`commperf --calibrate` and `--choices` end to end on 2 ranks over tcp: the tuning file has every flat
algorithm at the calibration sizes with positive, finite times; and perf/tuning/check_choices.py, run with
it as WEFT_TUNING_FILE, reports every size of AllReduce,
ReduceScatter and AllGather with each forced algorithm's time, the best being the fastest, the tuner's
ratio its time over the best, and the tuner's logged choice (no result wrong: commperf --choices checks
every communicator and fails otherwise). Timings are not judged: this is a correctness test.

usage: check_tuning.py COMMPERF CHECK_CHOICES WORKDIR MPIRUN...
"""
import json
import math
import os
import subprocess
import sys

FLAT = {"allreduce": ["ring", "recursive_doubling", "rabenseifner"], "reducescatter": ["ring", "rabenseifner"],
        "allgather": ["ring", "bruck"], "broadcast": ["binomial_tree"], "reduce": ["binomial_tree"],
        "alltoall": ["pairwise"]}
SIZES = [8, 1024, 8192, 32768, 65536, 131072, 262144, 524288, 1048576, 2097152, 4194304, 16777216]


def fail(message):
    sys.exit(f"check_tuning: {message}")


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    commperf, check_choices, workdir, mpirun = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    os.makedirs(workdir, exist_ok=True)
    tuning = os.path.join(workdir, "tcp_np2.json")
    env = dict(os.environ, WEFT_PLUGINS="tcp", WEFT_LOG_LEVEL="info", WEFT_TUNING_FILE=tuning)
    run = subprocess.run(mpirun + ["-x", "WEFT_PLUGINS", "-np", "2", commperf, "--calibrate", tuning, "-n", "4",
                                   "--rounds", "2", "-w", "1"], env=dict(env, WEFT_TUNING_FILE=""),
                         capture_output=True, text=True, timeout=300)
    if run.returncode != 0:
        fail(f"--calibrate exited {run.returncode}:\n{run.stdout}\n{run.stderr}")
    with open(tuning) as f:
        file = json.load(f)
    if file.get("weft_tuning_version") != 1 or file.get("nranks") != 2 or file.get("transport") != "tcp":
        fail(f"bad header: { {k: file.get(k) for k in ('weft_tuning_version', 'nranks', 'transport')} }")
    found = {(e["collective"], e["algorithm"]) for e in file["entries"]}
    wanted = {(c, a) for c, algorithms in FLAT.items() for a in algorithms}
    if found != wanted:
        fail(f"entries {sorted(found)} instead of {sorted(wanted)}")
    for e in file["entries"]:
        if e["bytes"] != SIZES or len(e["times_us"]) != len(SIZES):
            fail(f"sizes of {e['collective']} {e['algorithm']}: {e['bytes']}")
        if not all(math.isfinite(t) and t > 0 for t in e["times_us"]):
            fail(f"times of {e['collective']} {e['algorithm']}: {e['times_us']}")

    report_path = os.path.join(workdir, "choices.json")
    run = subprocess.run([sys.executable, check_choices, commperf, report_path, "--np", "2", "--plugins", "tcp",
                          "--tuning-file", tuning, "-n", "4", "--rounds", "2"],
                         env=dict(env, PATH=os.environ.get("PATH", "")), capture_output=True, text=True,
                         timeout=300)
    if run.returncode != 0:
        fail(f"check_choices.py exited {run.returncode}:\n{run.stdout}\n{run.stderr}")
    with open(report_path) as f:
        report = json.load(f)
    if report["tuning_file"] != tuning:
        fail(f"tuning_file {report['tuning_file']}")
    seen = {}
    for c in report["cases"]:
        algorithms = FLAT[c["collective"]]
        forced = c["forced_us"]
        if sorted(forced) != sorted(algorithms) or not all(t > 0 for t in forced.values()):
            fail(f"forced times {forced} for {c['collective']}")
        if forced[c["best"]] != min(forced.values()):
            fail(f"best {c['best']} is not the fastest of {forced}")
        if abs(c["ratio"] - c["tuner_us"] / forced[c["best"]]) > 1e-9:
            fail(f"ratio {c['ratio']} of {c}")
        if c["choice"] not in algorithms:
            fail(f"no logged choice for {c['collective']} at {c['size']} B: {c['choice']}")
        if c["chosen_over_best"] is None or abs(c["chosen_over_best"] - forced[c["choice"]] / forced[c["best"]]) > 1e-9:
            fail(f"chosen_over_best of {c}")
        seen.setdefault(c["collective"], []).append(c["size"])
    sweep = [8 * 4 ** k for k in range(10)]  # -b 8 -e 4M -f 4
    for coll in ("allreduce", "reducescatter", "allgather"):
        # ReduceScatter and AllGather skip sizes below one element per rank.
        expected = [s for s in sweep if coll == "allreduce" or s >= 8]
        if seen.get(coll) != expected:
            fail(f"{coll} sizes {seen.get(coll)} instead of {expected}")
    print(f"check_tuning: {len(file['entries'])} calibrated entries; {len(report['cases'])} sizes compared "
          f"({report['within_10_percent']} within 10 %, not judged here)")


if __name__ == "__main__":
    main()
