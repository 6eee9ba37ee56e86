#!/usr/bin/env python3
"""The tuner's choice against every forced algorithm: for each rank count, `commperf --choices` times a
communicator left to the tuner and one per algorithm forced, taking turns round by round in one launch
(AllReduce, ReduceScatter, AllGather; 8 B to 4 MiB, x4), and the tuner's info log says what it chose.

Two ratios per size: the tuner's time against the best forced time, and the forced time of the algorithm
the tuner chose against the best. They are two measurements of the same choice (the tuner's communicator
runs the chosen algorithm), and at np 3-4 on 2 cores two communicators running one algorithm still differ
by up to 1.8x at a size now and then; a size counts as a miss when both ratios are above 1.10.

usage: perf/tuning/check_choices.py COMMPERF OUT.json [--np 2,3,4] [--plugins tcp] [--tuning-file FILE]
                                    [-n ITERS] [--rounds R]
A miss (both ratios above 1.10) misses the issue's target (within 10 % of the best forced algorithm).
"""
import argparse
import json
import os
import subprocess
import tempfile

MPIRUN = ["mpirun", "--allow-run-as-root", "--oversubscribe", "--bind-to", "none", "--mca", "pml", "ob1",
          "--mca", "btl", "self,vader,tcp"]


def run_choices(commperf, np, env, iters, rounds):
    """commperf --choices at np ranks: its cases, and the tuner's logged choices by (collective, bytes)."""
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        env = dict(env, WEFT_LOG_LEVEL="info")
        exports = [a for k in env for a in ("-x", k)]
        run = subprocess.run(MPIRUN + exports + ["-np", str(np), commperf, "--choices", out.name, "-b", "8", "-e",
                                                 "4M", "-f", "4", "-n", str(iters), "--rounds", str(rounds)],
                             env=dict(os.environ, **env), check=True, capture_output=True, text=True)
        with open(out.name) as f:
            cases = json.load(f)["cases"]
    choices = {}
    for line in (run.stdout + run.stderr).splitlines():
        # "[weft info] tuner: allreduce of 4096 bytes on 4 ranks (1 hosts): ring (model 12.0 us)"
        if "tuner: " in line and " bytes on " in line:
            words = line.split("tuner: ", 1)[1].split()
            choices[(words[0], int(words[2]))] = line.split("): ", 1)[1].split()[0]
    return cases, choices


def main():
    p = argparse.ArgumentParser()
    p.add_argument("commperf")
    p.add_argument("out")
    p.add_argument("--np", default="2,3,4")
    p.add_argument("--plugins", default="tcp")
    p.add_argument("--tuning-file")
    p.add_argument("-n", type=int, default=200, help="timed iterations per size and communicator")
    p.add_argument("--rounds", type=int, default=10)
    a = p.parse_args()
    base = {"WEFT_PLUGINS": a.plugins} if a.plugins else {}
    if a.tuning_file:
        base["WEFT_TUNING_FILE"] = os.path.abspath(a.tuning_file)
    report = {"plugins": a.plugins, "tuning_file": a.tuning_file, "method": "commperf --choices", "cases": []}
    worst = worst_choice = 0.0
    misses = points = 0
    for np in [int(n) for n in a.np.split(",")]:
        cases, choices = run_choices(a.commperf, np, base, a.n, a.rounds)
        print(f"np {np} ({a.plugins or 'default plugins'}): collective, size, tuner us, best forced us, best, "
              "tuner/best, choice, chosen/best")
        for c in cases:
            forced, best = c["forced_us"], c["best"]
            if c["wrong"]:
                raise SystemExit(f"wrong results: {c}")
            choice = choices.get((c["collective"], c["bytes_per_rank"]), "backend")
            chosen = forced[choice] / forced[best] if choice in forced else None
            ratio = c["tuner_us"] / forced[best]
            worst = max(worst, ratio)
            worst_choice = max(worst_choice, chosen or 0)
            # A backend's choice has no forced time of its own: the tuner's time decides alone.
            miss = ratio > 1.10 and (chosen is None or chosen > 1.10)
            points += 1
            misses += miss
            print(f"  {c['collective']:<14} {c['size']:>9} {c['tuner_us']:>10.1f} {forced[best]:>10.1f} {best:<19} "
                  f"{ratio:5.2f} {choice:<19} " + (f"{chosen:5.2f}" if chosen else "    -") + ("  MISS" if miss else ""))
            report["cases"].append({"np": np, "collective": c["collective"], "size": c["size"],
                                    "tuner_us": c["tuner_us"], "forced_us": forced, "best": best, "ratio": ratio,
                                    "choice": choice, "chosen_over_best": chosen})
    report["worst_ratio"] = worst
    report["worst_chosen_over_best"] = worst_choice
    report["within_10_percent"] = f"{points - misses} of {points}"
    with open(a.out, "w") as f:
        json.dump(report, f, indent=1)
    print(f"worst tuner/best: {worst:.2f}; worst chosen/best: {worst_choice:.2f}; chosen within 10 %: "
          f"{points - misses} of {points}")


if __name__ == "__main__":
    main()
