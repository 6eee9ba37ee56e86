#!/usr/bin/env python3
"""Runs commperf with --json and --csv, then checks both files: required keys and their types, and that the
figures agree with each other (median within min-max, busbw = algbw * nccl-tests' factor, ratio = peer time /
Weft time, CSV lines = JSON measures, no wrong element).

Usage: check_json.py COMMPERF WORKDIR PEER MPIRUN... (PEER: mpi, gloo or none)
"""
import csv
import json
import math
import os
import subprocess
import sys

NRANKS = 2
ROUNDS = 2
COLLS = {"allreduce", "allgather", "reducescatter", "alltoall", "broadcast", "reduce", "sendrecv"}
CSV_COLUMNS = ["collective", "library", "algorithm", "form", "size", "count", "type", "redop", "root", "ranks",
               "time_us", "time_us_min", "time_us_max", "algbw_gbps", "busbw_gbps", "wrong", "ratio",
               "round_times_us", "skipped"]
failures = []


def fail(where, message):
    failures.append(f"{where}: {message}")


def expect_type(obj, key, types, where, nullable=False):
    if key not in obj:
        fail(where, f"missing key '{key}'")
        return None
    value = obj[key]
    if value is None and nullable:
        return None
    # bool is an int in Python; no field here is a bool.
    if isinstance(value, bool) or not isinstance(value, types):
        fail(where, f"'{key}' is {type(value).__name__}, expected {types}")
        return None
    return value


NUMBER = (int, float)


def bus_factor(coll, n):
    if coll == "allreduce":
        return 2.0 * (n - 1) / n
    if coll in ("allgather", "reducescatter", "alltoall"):
        return (n - 1) / n
    return 1.0


def close(a, b, rel=2e-5):
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-12)


def check_measure(m, where, coll, nranks, rounds):
    if m is None:
        return
    if not isinstance(m, dict):
        fail(where, "measure is not an object")
        return
    t = expect_type(m, "time_us", NUMBER, where)
    lo = expect_type(m, "time_us_min", NUMBER, where)
    hi = expect_type(m, "time_us_max", NUMBER, where)
    alg = expect_type(m, "algbw", NUMBER, where)
    bus = expect_type(m, "busbw", NUMBER, where)
    wrong = expect_type(m, "wrong", int, where, nullable=True)
    per_round = expect_type(m, "round_times_us", list, where)
    if None in (t, lo, hi, alg, bus, per_round):
        return
    if not lo <= t <= hi:
        fail(where, f"median {t} not within min-max {lo}-{hi}")
    if len(per_round) != rounds or not all(isinstance(x, NUMBER) for x in per_round):
        fail(where, f"round_times_us should hold {rounds} numbers: {per_round}")
    elif not (close(min(per_round), lo) and close(max(per_round), hi)):
        fail(where, "min/max disagree with round_times_us")
    if not close(bus, alg * bus_factor(coll, nranks), 1e-4) and bus > 1e-5:
        fail(where, f"busbw {bus} != algbw {alg} * factor {bus_factor(coll, nranks)}")
    if wrong is not None and wrong != 0:
        fail(where, f"{wrong} wrong elements")


def check_json(doc, peer, nranks, rounds, with_bounds):
    top = "json"
    if expect_type(doc, "tool", str, top) != "commperf":
        fail(top, "tool is not commperf")
    if expect_type(doc, "schema", int, top) != 2:
        fail(top, "schema is not 2")
    if "--json" not in (expect_type(doc, "command_line", str, top) or ""):
        fail(top, "command_line does not hold the command line")
    if expect_type(doc, "ranks", int, top) != nranks:
        fail(top, f"ranks is not {nranks}")
    hosts = expect_type(doc, "hosts", list, top) or []
    if len(hosts) != nranks or not all(isinstance(h, str) for h in hosts):
        fail(top, "hosts should hold one string per rank")
    versions = expect_type(doc, "versions", dict, top) or {}
    expect_type(versions, "weft", str, "versions")
    expect_type(versions, "weft_code", int, "versions")
    mpi = expect_type(versions, "mpi", str, "versions") or ""
    if "\0" in mpi or not mpi:
        fail("versions", f"mpi version looks wrong: {mpi!r}")
    expect_type(versions, "peer", str, "versions", nullable=peer == "none")
    weft = expect_type(doc, "weft", dict, top) or {}
    expect_type(weft, "plugins", str, "weft")
    expect_type(weft, "algo", str, "weft")
    got_peer = expect_type(doc, "peer", str, top, nullable=True)
    if (got_peer or "none") != peer:
        fail(top, f"peer is {got_peer}, expected {peer}")
    expect_type(doc, "peer_transport", str, top, nullable=True)
    options = expect_type(doc, "options", dict, top) or {}
    for key in ("minbytes", "maxbytes", "stepfactor", "stepbytes", "iters", "rounds", "iters_per_round",
                "warmup_iters", "check", "root"):
        expect_type(options, key, int, "options")
    expect_type(options, "gloo_allreduce", str, "options")
    bounds = expect_type(doc, "bounds", dict, top, nullable=not with_bounds)
    if with_bounds and bounds:
        for key in ("bytes", "threads"):
            expect_type(bounds, key, int, "bounds")
        for key in ("memcpy_1thread_gbps", "memcpy_all_gbps", "add_1thread_gbps", "add_all_gbps"):
            if (expect_type(bounds, key, NUMBER, "bounds") or 0) <= 0:
                fail("bounds", f"{key} is not positive")
        expect_type(bounds, "pingpong_roundtrip_us", NUMBER, "bounds", nullable=True)

    results = expect_type(doc, "results", list, top) or []
    if not results:
        fail(top, "no results")
    measures = 0
    for i, row in enumerate(results):
        where = f"results[{i}]"
        coll = expect_type(row, "collective", str, where)
        if coll not in COLLS:
            fail(where, f"unknown collective {coll}")
            continue
        for key in ("size", "count", "root"):
            expect_type(row, key, int, where)
        for key in ("type", "redop"):
            expect_type(row, key, str, where)
        for form in ("out_of_place", "in_place", "peer"):
            expect_type(row, form, dict, where, nullable=True)
            check_measure(row.get(form), f"{where}.{form}", coll, nranks, rounds)
            measures += row.get(form) is not None
        if row.get("out_of_place") is None:
            fail(where, "Weft's out-of-place form is missing")
        skipped = expect_type(row, "peer_skipped", str, where, nullable=True)
        ratio = expect_type(row, "ratio", NUMBER, where, nullable=True)
        if peer == "none":
            if row.get("peer") is not None or ratio is not None:
                fail(where, "peer figures without a peer")
        else:
            if (row.get("peer") is None) == (skipped is None):
                fail(where, "a peer row needs either figures or the reason it was skipped")
            if row.get("in_place") is not None:
                fail(where, "in-place form with a peer")
            if row.get("peer") and row["out_of_place"]["time_us"] > 0:
                want = row["peer"]["time_us"] / row["out_of_place"]["time_us"]
                if ratio is None or not close(ratio, want, 1e-4):
                    fail(where, f"ratio {ratio} != peer/weft time {want}")
    summary = expect_type(doc, "summary", list, top) or []
    if {s.get("collective") for s in summary} != {r.get("collective") for r in results}:
        fail(top, "summary does not cover the collectives of the results")
    for i, s in enumerate(summary):
        where = f"summary[{i}]"
        expect_type(s, "weft_algorithm", str, where)
        expect_type(s, "peer_algorithm", str, where, nullable=peer == "none")
        for lib in ("weft", "peer"):
            block = expect_type(s, lib, dict, where, nullable=lib == "peer" and peer == "none")
            if block:
                for key in ("avg_busbw", "peak_busbw"):
                    expect_type(block, key, NUMBER, f"{where}.{lib}")
                for key in ("wrong", "measured"):
                    expect_type(block, key, int, f"{where}.{lib}")
        expect_type(s, "geomean_ratio", NUMBER, where, nullable=True)
        expect_type(s, "ratios", int, where)
    if expect_type(doc, "out_of_bounds", int, top) != 0:
        fail(top, "out_of_bounds is not 0")
    return measures


def check_csv(path, measures, peer):
    with open(path, newline="") as f:
        lines = [line for line in f if not line.startswith("#")]
        f.seek(0)
        comments = [line for line in f if line.startswith("#")]
    rows = list(csv.reader(lines))
    if not rows or rows[0] != CSV_COLUMNS:
        fail("csv", f"header is {rows[0] if rows else None}")
        return
    data = rows[1:]
    ran = [r for r in data if r[10] != ""]
    if len(ran) != measures:
        fail("csv", f"{len(ran)} measured lines, JSON has {measures} measures")
    for r in data:
        if len(r) != len(CSV_COLUMNS):
            fail("csv", f"line with {len(r)} fields: {r}")
        elif r[1] not in ("weft", peer):
            fail("csv", f"unknown library {r[1]}")
        elif r[10] == "" and r[18] == "":
            fail("csv", f"line without figures says no reason: {r}")
    for key in ("# command_line:", "# weft_version:", "# mpi_version:", "# weft_plugins:", "# weft_algo:",
                "# avg_busbw", "# out_of_bounds: 0"):
        if not any(c.startswith(key) for c in comments):
            fail("csv", f"no '{key}' comment line")


def run(cmd):
    print("+", " ".join(cmd), flush=True)
    done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
    if done.returncode != 0:
        print(done.stdout)
        sys.exit(f"commperf exited with {done.returncode}")


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    commperf, workdir, peer, mpirun = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    os.makedirs(workdir, exist_ok=True)
    json_path = os.path.join(workdir, f"commperf_{peer}.json")
    csv_path = os.path.join(workdir, f"commperf_{peer}.csv")
    cmd = mpirun + ["-np", str(NRANKS), commperf, "--coll", "all", "-d", "all", "-b", "64", "-e", "4K", "-f", "8",
                    "-n", "2", "-w", "1", "--rounds", str(ROUNDS), "--json", json_path, "--csv", csv_path]
    with_bounds = peer != "none"
    if peer != "none":
        cmd += ["--peer", peer, "--bounds", "--bounds_bytes", "4M"]
    run(cmd)
    with open(json_path) as f:
        doc = json.load(f)
    measures = check_json(doc, peer, NRANKS, ROUNDS, with_bounds)
    check_csv(csv_path, measures, peer)
    for message in failures[:50]:
        print("FAIL", message)
    if failures:
        sys.exit(f"{len(failures)} problems")
    print(f"OK: {len(doc['results'])} rows, {measures} measures")


if __name__ == "__main__":
    main()
