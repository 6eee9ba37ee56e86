#!/usr/bin/env python3
"""commperf --fusion end to end on 2 ranks: the text table parses, the fused group ran as one launch and the
unfused one as N, no wrong element in any form, and the JSON's `fusion` section agrees with the table
(launches, checks, ratios = the times' quotients, busbw = algbw * the collective's factor from N * bytes,
times the ranks for AllGather and ReduceScatter).

Three launches: the command of the brief (`--fusion 50:4K -n 5 --rounds 2 -c 1`, Weft alone), a sweep of
two cases with another type and op and the MPI peer (`--fusion 20:1K,4:64K -d int32 -o max --peer mpi`), and
the same cases of AllGather and ReduceScatter (`--fusion_coll allgather,reducescatter`).

Usage: check_fusion.py COMMPERF WORKDIR MPIRUN...
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_json import check_context, check_launches, check_measure, close, expect_type, failures, fail  # noqa: E402

NRANKS = 2
ROW = re.compile(r"^\s*(\d+)\s+(\d+)\s+(\S+)\s+(\S+)\s+(.*)$")


def parse_table(text, peers):
    """The fusion table's data lines: {(collective, N, bytes, type, redop): {...}}, the collective from the
    "# Collective:" line above them. A line is N, bytes, type, redop, then per Weft form (fused, unfused, single)
    time, min-max and launches, per peer time and min-max, the ratios u/f, f/s and one per peer, and #wrong as
    f/u/s[/peer...]."""
    rows = {}
    in_section = False
    collective = None
    for line in text.splitlines():
        if line.startswith("# Fusion:"):
            in_section = True
            continue
        if in_section and line.startswith("# Collective:"):
            collective = line.split(":", 1)[1].strip()
            continue
        if not in_section or line.startswith("#"):
            continue
        m = ROW.match(line)
        if not m:
            fail("text", f"unparsable fusion line: {line!r}")
            continue
        fields = m.group(5).split()
        want = 3 * 3 + 2 * len(peers) + 2 + len(peers) + 1
        if len(fields) < want:
            fail("text", f"{len(fields)} fields after the case, expected {want}: {line!r}")
            continue
        forms = {}
        for i, form in enumerate(("fused", "unfused", "single")):
            time, spread, launches = fields[3 * i:3 * i + 3]
            forms[form] = {"time": float(time), "spread": spread, "launches": int(launches)}
        at = 9
        for library in peers:
            time = fields[at]
            forms[library] = {"time": None if time == "n/a" else float(time)}
            at += 1 if time == "n/a" else 2
        ratios = fields[at:at + 2 + len(peers)]
        wrong = fields[at + 2 + len(peers)]
        key = (collective, int(m.group(1)), int(m.group(2)), m.group(3), m.group(4))
        rows[key] = {"forms": forms, "ratios": ratios, "wrong": wrong.split("/")}
    return rows


def check_run(text, doc, cases, types_ops, peers, rounds, colls=("allreduce",)):
    rows = parse_table(text, peers)
    # AllGather moves data only: one row per type, redop "none".
    expected = [(c, n, b, t, o if c != "allgather" else "none") for c in colls for n, b in cases
                for t, o in types_ops]
    if sorted(rows) != sorted(expected):
        fail("text", f"rows {sorted(rows)}, expected {sorted(expected)}")
    for key, row in rows.items():
        n = key[1]
        where = f"text {key}"
        if row["forms"]["fused"]["launches"] != 1:
            fail(where, f"fused launches {row['forms']['fused']['launches']}, expected 1")
        if row["forms"]["unfused"]["launches"] != n:
            fail(where, f"unfused launches {row['forms']['unfused']['launches']}, expected {n}")
        if row["forms"]["single"]["launches"] != 1:
            fail(where, f"single launches {row['forms']['single']['launches']}, expected 1")
        if len(row["wrong"]) != 3 + len(peers) or any(w != "0" for w in row["wrong"]):
            fail(where, f"#wrong is {'/'.join(row['wrong'])}, expected all 0")
    if "# Out of bounds values : 0 OK" not in text:
        fail("text", "no '# Out of bounds values : 0 OK' footer")
    if not re.search(r"launches per group: fused 1, unfused \d+, single 1", text):
        fail("text", "no 'launches per group' footer line")

    check_context(doc, peers, NRANKS, False)
    if doc.get("results") != [] or doc.get("summary") != []:
        fail("json", "--fusion without --coll should run no size sweep")
    options = expect_type(doc, "options", dict, "json") or {}
    if options.get("fusion") != [{"calls": n, "bytes": b} for n, b in cases]:
        fail("json", f"options.fusion is {options.get('fusion')}")
    if options.get("fusion_coll") != list(colls):
        fail("json", f"options.fusion_coll is {options.get('fusion_coll')}, expected {list(colls)}")
    fusion = expect_type(doc, "fusion", list, "json") or []
    if len(fusion) != len(expected):
        fail("json", f"{len(fusion)} fusion entries, expected {len(expected)}")
    for i, entry in enumerate(fusion):
        where = f"fusion[{i}]"
        for k in ("calls", "bytes", "count", "total_bytes"):
            expect_type(entry, k, int, where)
        coll = entry.get("collective")
        key = (coll, entry.get("calls"), entry.get("bytes"), entry.get("type"), entry.get("redop"))
        if key not in rows:
            fail(where, f"{key} is not in the text table")
            continue
        n, total = entry["calls"], entry["total_bytes"]
        if total != n * entry["bytes"]:
            fail(where, "total_bytes is not calls * bytes")
        # nccl-tests' accounting: AllGather and ReduceScatter count every rank's part of the output (input).
        gathered = NRANKS if coll != "allreduce" else 1
        factor = 2.0 * (NRANKS - 1) / NRANKS if coll == "allreduce" else (NRANKS - 1) / NRANKS
        # weftCommStats_t.bytesFused counts the calls' input: ReduceScatter's holds every rank's part.
        fused_input = total * (NRANKS if coll == "reducescatter" else 1)
        for form in ("fused", "unfused", "single"):
            m = expect_type(entry, form, dict, where) or {}
            check_measure(m, f"{where}.{form}", coll, NRANKS, rounds)
            if m.get("wrong") != 0:
                fail(f"{where}.{form}", f"wrong is {m.get('wrong')}, expected 0 (checked)")
            if m.get("time_us") and not close(m["algbw"], total * gathered / m["time_us"] / 1e3, 1e-4):
                fail(f"{where}.{form}", "algbw is not N * bytes (* ranks) / time")
            if not close(m.get("busbw", 0), m.get("algbw", 0) * factor, 1e-4):
                fail(f"{where}.{form}", f"busbw is not algbw * {factor}")
            if m.get("launches") != rows[key]["forms"][form]["launches"]:
                fail(f"{where}.{form}", f"launches {m.get('launches')} differ from the table's")
            if m.get("launches") != m.get("launches_min"):
                fail(f"{where}.{form}", "the ranks counted different launches")
            if not close(m.get("time_us", 0), rows[key]["forms"][form]["time"], 5e-3):
                fail(f"{where}.{form}", f"time {m.get('time_us')} differs from the table's")
        fused, unfused, single = entry["fused"], entry["unfused"], entry["single"]
        if fused.get("launches") != 1 or unfused.get("launches") != n or single.get("launches") != 1:
            fail(where, f"launches fused/unfused/single {fused.get('launches')}/{unfused.get('launches')}/"
                        f"{single.get('launches')}, expected 1/{n}/1")
        if fused.get("ops") != n or unfused.get("ops") != n or single.get("ops") != 1:
            fail(where, "ops per group should be N, N and 1")
        if fused.get("bytes_fused") != fused_input or unfused.get("bytes_fused") != 0:
            fail(where, f"bytes_fused {fused.get('bytes_fused')}/{unfused.get('bytes_fused')}, "
                        f"expected {fused_input}/0")
        ratios = expect_type(entry, "ratios", dict, where) or {}
        if not close(ratios.get("unfused_over_fused") or 0, unfused["time_us"] / fused["time_us"], 1e-4):
            fail(where, "unfused_over_fused is not unfused time / fused time")
        if not close(ratios.get("fused_over_single") or 0, fused["time_us"] / single["time_us"], 1e-4):
            fail(where, "fused_over_single is not fused time / single time")
        got = expect_type(entry, "peers", dict, where) or {}
        if list(got) != peers:
            fail(where, f"peers keyed {list(got)}, expected {peers}")
        for library, p in got.items():
            at = f"{where}.peers.{library}"
            m = p.get("out_of_place")
            if m is None:
                fail(at, f"skipped: {p.get('skipped')}")
                continue
            check_measure(m, at, coll, NRANKS, rounds)
            if m.get("wrong") != 0:
                fail(at, f"wrong is {m.get('wrong')}, expected 0 (checked)")
            if not close(p.get("ratio") or 0, m["time_us"] / fused["time_us"], 1e-4):
                fail(at, "ratio is not the peer's time / fused time")
    if doc.get("out_of_bounds") != 0:
        fail("json", "out_of_bounds is not 0")


def main():
    sweep = ["--fusion", "20:1K,4:64K", "-d", "int32", "-o", "max", "--peer", "mpi", "-n", "2", "-w", "1",
             "--rounds", "2"]
    cases = [(20, 1024), (4, 65536)]
    launches = [
        (["--fusion", "50:4K", "-n", "5", "--rounds", "2", "-c", "1"], [(50, 4096)], [("float", "sum")], [], 2),
        (sweep, cases, [("int32", "max")], ["mpi"], 2),
        (sweep + ["--fusion_coll", "allgather,reducescatter"], cases, [("int32", "max")], ["mpi"], 2,
         ("allgather", "reducescatter")),
    ]
    check_launches("fusion", launches, check_run,
                   "OK: fused groups ran as one launch, unfused as N, no wrong element, JSON agrees with the table")


if __name__ == "__main__":
    main()
