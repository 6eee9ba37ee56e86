#!/usr/bin/env python3
"""The tuner's choice against every forced algorithm: for each rank count, collective and size, commperf's
median time with WEFT_ALGO unset (the tuner, or a backend where one runs) and with each algorithm of the
collective forced; prints tuner / best-forced per size and writes the figures as JSON.

usage: perf/tuning/check_choices.py COMMPERF OUT.json [--np 2,3,4] [--plugins tcp] [--colls allreduce,...]
                                    [--tuning-file FILE]
A ratio above 1.10 misses the issue's target (within 10 % of the best forced algorithm).
"""
import argparse
import json
import os
import subprocess
import tempfile

ALGORITHMS = {
    "allreduce": ["ring", "recursive_doubling", "rabenseifner"],
    "reducescatter": ["ring", "rabenseifner"],
    "allgather": ["ring", "bruck"],
}
MPIRUN = ["mpirun", "--allow-run-as-root", "--oversubscribe", "--bind-to", "none", "--mca", "pml", "ob1",
          "--mca", "btl", "self,vader,tcp"]


def sweep(commperf, np, coll, env):
    """Median out-of-place time per size, in microseconds."""
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        exports = [a for k in env for a in ("-x", k)]
        subprocess.run(MPIRUN + exports + ["-np", str(np), commperf, "--coll", coll, "-b", "8", "-e", "4M", "-f", "4",
                                           "-n", "40", "-w", "5", "-c", "0", "--json", out.name],
                       env=dict(os.environ, **env), check=True, capture_output=True)
        with open(out.name) as f:
            rows = json.load(f)["results"]
    return {row["size"]: row["out_of_place"]["time_us"] for row in rows}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("commperf")
    p.add_argument("out")
    p.add_argument("--np", default="2,3,4")
    p.add_argument("--plugins", default="tcp")
    p.add_argument("--colls", default="allreduce,reducescatter,allgather")
    p.add_argument("--tuning-file")
    a = p.parse_args()
    base = {"WEFT_PLUGINS": a.plugins} if a.plugins else {}
    if a.tuning_file:
        base["WEFT_TUNING_FILE"] = os.path.abspath(a.tuning_file)
    report = {"plugins": a.plugins, "tuning_file": a.tuning_file, "cases": []}
    worst = 0.0
    for np in [int(n) for n in a.np.split(",")]:
        for coll in a.colls.split(","):
            tuner = sweep(a.commperf, np, coll, base)
            forced = {alg: sweep(a.commperf, np, coll, dict(base, WEFT_ALGO=f"{coll}:{alg}"))
                      for alg in ALGORITHMS[coll]}
            print(f"np {np} {coll} ({a.plugins or 'default plugins'}): size, tuner us, best forced, tuner/best")
            for size in sorted(tuner):
                best_alg = min(forced, key=lambda alg: forced[alg][size])
                ratio = tuner[size] / forced[best_alg][size]
                worst = max(worst, ratio)
                print(f"  {size:>9} {tuner[size]:>10.1f} {forced[best_alg][size]:>10.1f} {best_alg:<19} {ratio:5.2f}"
                      + ("  MISS" if ratio > 1.10 else ""))
                report["cases"].append({"np": np, "collective": coll, "size": size, "tuner_us": tuner[size],
                                        "forced_us": {alg: forced[alg][size] for alg in forced},
                                        "best": best_alg, "ratio": ratio})
    report["worst_ratio"] = worst
    with open(a.out, "w") as f:
        json.dump(report, f, indent=1)
    print(f"worst tuner/best: {worst:.2f}")


if __name__ == "__main__":
    main()
