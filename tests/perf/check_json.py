#!/usr/bin/env python3
"""Runs commperf with --json and --csv, then checks both files: required keys and their types (JSON schema 3),
and that the figures agree with each other (median within min-max, busbw = algbw * nccl-tests' factor, ratio =
peer time / Weft time for every peer, footers = the rows they sum up, one CSV line per JSON measure with the
same time, no wrong element).

Usage: check_json.py COMMPERF WORKDIR PEER MPIRUN...   (PEER: none, mpi, gloo or a comma list: mpi,gloo)
Importable: check_json(doc, peers, nranks, rounds, with_bounds) and check_csv(path, doc, peers) for other
tests (check_compare.py); both append to `failures`.
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
NO_IN_PLACE = {"alltoall", "sendrecv"}  # collectives without an in-place form
# Where a peer has an in-place form (timed with --peer_in_place): MPI_IN_PLACE, except MPI_Bcast (one buffer:
# its only form).
PEER_IN_PLACE = {"mpi": {"allreduce", "allgather", "reducescatter", "reduce"}}
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


def check_context(doc, peers, nranks, with_bounds):
    top = "json"
    if expect_type(doc, "tool", str, top) != "commperf":
        fail(top, "tool is not commperf")
    if expect_type(doc, "schema", int, top) != 3:
        fail(top, "schema is not 3")
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
    weft = expect_type(doc, "weft", dict, top) or {}
    expect_type(weft, "plugins", str, "weft")
    expect_type(weft, "algo", str, "weft")
    for old in ("peer", "peer_transport"):
        if old in doc:
            fail(top, f"schema 2's '{old}' is still there (schema 3 has 'peers')")
    listed = expect_type(doc, "peers", list, top) or []
    if [p.get("library") if isinstance(p, dict) else p for p in listed] != peers:
        fail(top, f"peers are {listed}, expected {peers} in that order")
    for i, p in enumerate(listed):
        where = f"peers[{i}]"
        if not isinstance(p, dict):
            continue
        expect_type(p, "library", str, where)
        if not expect_type(p, "version", str, where):
            fail(where, "empty version")
        # Gloo always names its TCP interface; Open MPI picks its transports itself.
        transport = expect_type(p, "transport", str, where, nullable=p.get("library") != "gloo")
        if p.get("library") == "gloo" and not (transport or "").startswith("tcp on "):
            fail(where, f"gloo transport is {transport!r}")
        algorithms = expect_type(p, "algorithms", dict, where) or {}
        if not all(isinstance(a, str) and a for a in algorithms.values()):
            fail(where, f"algorithms should be non-empty strings: {algorithms}")
    options = expect_type(doc, "options", dict, top) or {}
    for key in ("minbytes", "maxbytes", "stepfactor", "stepbytes", "iters", "rounds", "iters_per_round",
                "warmup_iters", "check", "root", "peer_in_place", "touch_input", "gap_us"):
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


def check_ratio(entry, key, m, weft, at):
    """entry[key] is m's time / weft's, or null where either is missing."""
    ratio = expect_type(entry, key, NUMBER, at, nullable=True)
    if m and weft and weft.get("time_us", 0) > 0:
        want = m["time_us"] / weft["time_us"]
        if ratio is None or not close(ratio, want, 1e-4):
            fail(at, f"{key} {ratio} != peer time / weft time {want}")
    elif ratio is not None:
        fail(at, f"{key} without both figures")
    return ratio


def check_row_peers(row, where, coll, peers, nranks, rounds, per_peer, peer_in_place):
    """A result's `peers` object; per_peer[library] collects (measured, ratio) for the summary check."""
    got = expect_type(row, "peers", dict, where)
    if got is None:
        return 0
    if list(got) != peers:
        fail(where, f"peers keyed {list(got)}, expected {peers} in that order")
    measures = 0
    weft = row.get("out_of_place") or {}
    for library in peers:
        entry = got.get(library)
        at = f"{where}.peers.{library}"
        if not isinstance(entry, dict):
            fail(at, "missing or not an object")
            continue
        m = expect_type(entry, "out_of_place", dict, at, nullable=True)
        skipped = expect_type(entry, "skipped", str, at, nullable=True)
        if (m is None) == (skipped is None):
            fail(at, "needs either figures or the reason it was skipped, not both or neither")
        check_measure(m, at, coll, nranks, rounds)
        if m is not None:
            measures += 1
            if (m.get("wrong") is None) and weft.get("wrong") is not None:
                fail(at, "Weft was checked but this peer was not")
        ratio = check_ratio(entry, "ratio", m, weft, at)
        in_place = expect_type(entry, "in_place", dict, at, nullable=True)
        check_measure(in_place, f"{at}.in_place", coll, nranks, rounds)
        expected = peer_in_place and m is not None and coll in PEER_IN_PLACE.get(library, set())
        if (in_place is not None) != expected:
            fail(at, f"in_place is {'missing' if expected else 'there'}: expected only with --peer_in_place, "
                     f"for {sorted(PEER_IN_PLACE.get(library, set()))}")
        check_ratio(entry, "in_place_ratio", in_place, row.get("in_place"), at)
        if in_place is not None:
            measures += 1
            if in_place.get("wrong") is None and (row.get("in_place") or {}).get("wrong") is not None:
                fail(at, "Weft's in-place form was checked but this peer's was not")
        stats = per_peer.setdefault(coll, {}).setdefault(library, [0, []])
        stats[0] += (m is not None) + (in_place is not None)
        if ratio:
            stats[1].append(ratio)
    return measures


def check_summary(doc, peers, per_peer):
    top = "json"
    results = doc.get("results") or []
    summary = expect_type(doc, "summary", list, top) or []
    if {s.get("collective") for s in summary} != {r.get("collective") for r in results}:
        fail(top, "summary does not cover the collectives of the results")
    algorithms = {p.get("library"): p.get("algorithms") or {} for p in doc.get("peers") or [] if isinstance(p, dict)}
    for i, s in enumerate(summary):
        where = f"summary[{i}]"
        coll = s.get("collective")
        expect_type(s, "weft_algorithm", str, where)
        block = expect_type(s, "weft", dict, where) or {}
        for key in ("avg_busbw", "peak_busbw"):
            expect_type(block, key, NUMBER, f"{where}.weft")
        for key in ("wrong", "measured"):
            expect_type(block, key, int, f"{where}.weft")
        got = expect_type(s, "peers", dict, where) or {}
        if list(got) != peers:
            fail(where, f"peers keyed {list(got)}, expected {peers}")
        for library, p in got.items():
            at = f"{where}.peers.{library}"
            algorithm = expect_type(p, "algorithm", str, at)
            if algorithm != algorithms.get(library, {}).get(coll):
                fail(at, f"algorithm {algorithm!r} differs from the context's peers[].algorithms")
            for key in ("avg_busbw", "peak_busbw"):
                expect_type(p, key, NUMBER, at)
            for key in ("wrong", "measured", "ratios"):
                expect_type(p, key, int, at)
            geo = expect_type(p, "geomean_ratio", NUMBER, at, nullable=True)
            measured, ratios = per_peer.get(coll, {}).get(library, [0, []])
            if p.get("measured") != measured:
                fail(at, f"measured {p.get('measured')}, the results hold {measured} measures")
            if p.get("ratios") != len(ratios):
                fail(at, f"ratios {p.get('ratios')}, the results hold {len(ratios)}")
            if ratios and (geo is None or not close(geo, math.exp(sum(map(math.log, ratios)) / len(ratios)), 1e-3)):
                fail(at, f"geomean_ratio {geo} is not the geometric mean of the rows' ratios")
            if not ratios and geo is not None:
                fail(at, "geomean_ratio without ratios")
    if expect_type(doc, "out_of_bounds", int, top) != 0:
        fail(top, "out_of_bounds is not 0")


def check_json(doc, peers, nranks, rounds, with_bounds):
    """Checks a schema-3 document run with `peers` (list of library names, empty for none); returns the
    number of measures (Weft's forms and the peers'), which the CSV must match line for line."""
    check_context(doc, peers, nranks, with_bounds)
    results = expect_type(doc, "results", list, "json") or []
    if not results:
        fail("json", "no results")
    measures = 0
    per_peer = {}
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
        for form in ("out_of_place", "in_place"):
            expect_type(row, form, dict, where, nullable=True)
            check_measure(row.get(form), f"{where}.{form}", coll, nranks, rounds)
            measures += row.get(form) is not None
        if row.get("out_of_place") is None:
            fail(where, "Weft's out-of-place form is missing")
        # With peers Weft's in-place form is timed only with --peer_in_place, and then wherever it exists.
        peer_in_place = (doc.get("options") or {}).get("peer_in_place") == 1
        if peers and not peer_in_place and row.get("in_place") is not None:
            fail(where, "in-place form with peers, without --peer_in_place")
        if peers and peer_in_place and coll not in NO_IN_PLACE and row.get("in_place") is None:
            fail(where, "no in-place form with --peer_in_place")
        measures += check_row_peers(row, where, coll, peers, nranks, rounds, per_peer, peer_in_place)
    check_summary(doc, peers, per_peer)
    return measures


def check_csv(path, doc, peers):
    """One CSV line per JSON measure, for every library, with the JSON's time and ratio."""
    with open(path, newline="") as f:
        lines = [line for line in f if not line.startswith("#")]
        f.seek(0)
        comments = [line.rstrip("\n") for line in f if line.startswith("#")]
    rows = list(csv.reader(lines))
    if not rows or rows[0] != CSV_COLUMNS:
        fail("csv", f"header is {rows[0] if rows else None}")
        return
    want = {}  # (collective, size, type, redop, library, form) -> (time_us, ratio or None)
    for row in doc.get("results") or []:
        key = (row["collective"], row["size"], row["type"], row["redop"])
        for form in ("out_of_place", "in_place"):
            if row.get(form):
                want[key + ("weft", form)] = (row[form]["time_us"], None)
        for library, entry in (row.get("peers") or {}).items():
            for form, ratio in (("out_of_place", "ratio"), ("in_place", "in_place_ratio")):
                if entry.get(form):
                    want[key + (library, form)] = (entry[form]["time_us"], entry.get(ratio))
    seen = set()
    for r in rows[1:]:
        if len(r) != len(CSV_COLUMNS):
            fail("csv", f"line with {len(r)} fields: {r}")
            continue
        if r[1] not in ["weft"] + peers:
            fail("csv", f"unknown library {r[1]}")
        if r[10] == "":
            if r[18] == "":
                fail("csv", f"line without figures says no reason: {r}")
            continue
        key = (r[0], int(r[4]), r[6], r[7], r[1], r[3])
        if key in seen:
            fail("csv", f"two lines for {key}")
        seen.add(key)
        if key not in want:
            fail("csv", f"measured line with no JSON measure: {key}")
            continue
        time_us, ratio = want[key]
        if not close(float(r[10]), time_us, 1e-4):
            fail("csv", f"{key}: time {r[10]} != JSON {time_us}")
        if (ratio is None) != (r[16] == "") or (ratio is not None and not close(float(r[16]), ratio, 1e-4)):
            fail("csv", f"{key}: ratio {r[16]!r} != JSON {ratio}")
    if set(want) - seen:
        fail("csv", f"{len(set(want) - seen)} JSON measures have no CSV line, e.g. {sorted(set(want) - seen)[0]}")
    if {r[1] for r in rows[1:]} != set(["weft"] + peers):
        fail("csv", f"libraries {sorted({r[1] for r in rows[1:]})}, expected weft and {peers}")
    keys = ["# command_line:", "# weft_version:", "# mpi_version:", "# weft_plugins:", "# weft_algo:",
            "# avg_busbw", "# out_of_bounds: 0", f"# peers: {','.join(peers) or 'none'}"]
    keys += [f"# peer_version {p}: " for p in peers] + [f"# avg_busbw allreduce {p}: " for p in peers]
    for key in keys:
        if not any(c.startswith(key) for c in comments):
            fail("csv", f"no '{key}' comment line")


def run(cmd, echo=False):
    """Runs cmd, exits on failure; returns its output (printed too with echo)."""
    print("+", " ".join(cmd), flush=True)
    done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
    if echo or done.returncode != 0:
        print(done.stdout)
    if done.returncode != 0:
        sys.exit(f"commperf exited with {done.returncode}")
    return done.stdout


def check_launches(name, launches, check_run, ok, nranks=2):
    """The main of the check_<mode>.py scripts: argv is COMMPERF WORKDIR MPIRUN...; each launch is (args, cases,
    types_ops, peers, rounds, [more...]), run on nranks with --json, then check_run(text, doc, cases, types_ops,
    peers, rounds, [more...]). Prints the failures (or `ok`) and exits accordingly."""
    if len(sys.argv) < 4:
        sys.exit(sys.modules["__main__"].__doc__)
    commperf, workdir, mpirun = sys.argv[1], sys.argv[2], sys.argv[3:]
    os.makedirs(workdir, exist_ok=True)
    for i, (args, *expected) in enumerate(launches):
        json_path = os.path.join(workdir, f"{name}{i}.json")
        text = run(mpirun + ["-np", str(nranks), commperf] + args + ["--json", json_path], echo=True)
        with open(json_path) as f:
            doc = json.load(f)
        before = len(failures)
        check_run(text, doc, *expected)
        if len(failures) > before:
            failures.insert(before, f"-- in the run with {' '.join(args)}:")
    for message in failures[:50]:
        print("FAIL", message)
    if failures:
        sys.exit(f"{len(failures)} problems")
    print(ok)


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    commperf, workdir, peer, mpirun = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    peers = [] if peer == "none" else peer.split(",")
    os.makedirs(workdir, exist_ok=True)
    stem = "_".join(peers) or "none"
    json_path = os.path.join(workdir, f"commperf_{stem}.json")
    csv_path = os.path.join(workdir, f"commperf_{stem}.csv")
    cmd = mpirun + ["-np", str(NRANKS), commperf, "--coll", "all", "-d", "all", "-b", "64", "-e", "4K", "-f", "8",
                    "-n", "2", "-w", "1", "--rounds", str(ROUNDS), "--json", json_path, "--csv", csv_path]
    with_bounds = bool(peers)
    if peers:
        cmd += ["--peer", peer, "--bounds", "--bounds_bytes", "4M"]
    if "mpi" in peers:
        cmd += ["--peer_in_place"]  # its in-place forms checked here; the gloo run checks they are absent
    if not peers:
        # Rewrites inputs between timed calls, each alone: the results must still check out.
        cmd += ["--touch_input", "--gap_us", "5"]
    run(cmd)
    with open(json_path) as f:
        doc = json.load(f)
    touched = (doc.get("options") or {}).get("touch_input")
    if touched != (0 if peers else 1):
        failures.append(f"options.touch_input is {touched!r}")
    gap = (doc.get("options") or {}).get("gap_us")
    if gap != (0 if peers else 5):
        failures.append(f"options.gap_us is {gap!r}")
    measures = check_json(doc, peers, NRANKS, ROUNDS, with_bounds)
    check_csv(csv_path, doc, peers)
    for message in failures[:50]:
        print("FAIL", message)
    if failures:
        sys.exit(f"{len(failures)} problems")
    print(f"OK: {len(doc['results'])} rows, {measures} measures")


if __name__ == "__main__":
    main()
