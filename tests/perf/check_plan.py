#!/usr/bin/env python3
"""commperf --plan end to end on 2 ranks: the text table parses; every form (plan, eager, plan-group,
eager-group and the peers) checked with no wrong element; the plans' outputs bit-identical to the eager
calls' (0 mismatches); both plans record N operations; a launch of the plain plan is N launches
(collectivesLaunched) and of the group plan 1, as for the eager forms; the compile time of a plan of 10000
calls is printed; and the JSON's `plan` section agrees with the table (launches, info, ratios = the times'
quotients, busbw = algbw * 2(n-1)/n from N * bytes).

Two launches: the command of the brief (`--plan 50:1K -n 5 --rounds 2 -c 1`, Weft alone), then two cases
with the default size, another type and op and the MPI peer (`--plan 20,4:64K -d int32 -o max --peer mpi`).

Usage: check_plan.py COMMPERF WORKDIR MPIRUN...
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_json import check_context, check_launches, check_measure, close, expect_type, failures, fail  # noqa: E402

NRANKS = 2
FORMS = ("plan", "eager", "plan_group", "eager_group")
INFO = ("num_ops", "num_subgraphs", "ops_reused", "streams_without_reuse", "streams_used", "resource_bytes")
ROW = re.compile(r"^\s*(\d+)\s+(\d+)\s+(\S+)\s+(\S+)\s+(.*)$")
COMPILE = re.compile(r"^# compile (\d+) ops: ([0-9.]+) ms \(plain calls;.*?, ([0-9.]+) ms \(in one group;")


def parse_table(text, peers):
    """The plan table's data lines: {(N, bytes, type, redop): {...}}. A line is N, bytes, type, redop, then per
    Weft form (plan, eager, plan-group, eager-group) time, min-max and launches, per peer time and min-max,
    the ratios p/e, e/p, pg/eg and one per peer, the plan's info (ops, subgraphs, reused, streams without
    reuse, streams used, resource bytes), #wrong as p/e/pg/eg[/peer...] and the mismatches plain/group."""
    rows = {}
    in_section = False
    for line in text.splitlines():
        if line.startswith("# Plans:"):
            in_section = True
            continue
        if not in_section or line.startswith("#"):
            continue
        m = ROW.match(line)
        if not m:
            fail("text", f"unparsable plan line: {line!r}")
            continue
        fields = m.group(5).split()
        want = 4 * 3 + 2 * len(peers) + 3 + len(peers) + 6 + 2
        if len(fields) < want:
            fail("text", f"{len(fields)} fields after the case, expected {want}: {line!r}")
            continue
        forms = {}
        for i, form in enumerate(FORMS):
            time, spread, launches = fields[3 * i:3 * i + 3]
            forms[form] = {"time": float(time), "spread": spread, "launches": int(launches)}
        at = 12
        for library in peers:
            time = fields[at]
            forms[library] = {"time": None if time == "n/a" else float(time)}
            at += 1 if time == "n/a" else 2
        ratios = fields[at:at + 3 + len(peers)]
        at += 3 + len(peers)
        info = dict(zip(INFO, (int(x) for x in fields[at:at + 6])))
        wrong, mismatch = fields[at + 6], fields[at + 7]
        key = (int(m.group(1)), int(m.group(2)), m.group(3), m.group(4))
        rows[key] = {"forms": forms, "ratios": ratios, "info": info, "wrong": wrong.split("/"),
                     "mismatch": mismatch.split("/")}
    return rows


def check_run(text, doc, cases, types_ops, peers, rounds):
    rows = parse_table(text, peers)
    expected = [(n, b, t, o) for n, b in cases for t, o in types_ops]
    if sorted(rows) != sorted(expected):
        fail("text", f"rows {sorted(rows)}, expected {sorted(expected)}")
    for key, row in rows.items():
        n = key[0]
        where = f"text {key}"
        launches = {form: row["forms"][form]["launches"] for form in FORMS}
        if launches != {"plan": n, "eager": n, "plan_group": 1, "eager_group": 1}:
            fail(where, f"launches per launch {launches}, expected plan/eager {n}, groups 1")
        if row["info"]["num_ops"] != n:
            fail(where, f"the plan's numOps is {row['info']['num_ops']}, expected {n}")
        if len(row["wrong"]) != 4 + len(peers) or any(w != "0" for w in row["wrong"]):
            fail(where, f"#wrong is {'/'.join(row['wrong'])}, expected all 0")
        if row["mismatch"] != ["0", "0"]:
            fail(where, f"mismatch is {'/'.join(row['mismatch'])}, expected 0/0")
    if "# Out of bounds values : 0 OK" not in text:
        fail("text", "no '# Out of bounds values : 0 OK' footer")
    if "# Plan/eager mismatches: 0 OK" not in text:
        fail("text", "no '# Plan/eager mismatches: 0 OK' footer")
    if not re.search(r"launches per launch: plan \d+, eager \d+, plan-group 1, eager-group 1", text):
        fail("text", "no 'launches per launch' footer line")
    compiled = [COMPILE.match(line) for line in text.splitlines()]
    compiled = [m for m in compiled if m]
    if len(compiled) != 1 or int(compiled[0].group(1)) != 10000:
        fail("text", "no '# compile 10000 ops: X ms (plain calls; ...), Y ms (in one group; ...)' footer line")

    check_context(doc, peers, NRANKS, False)
    if doc.get("results") != [] or doc.get("summary") != [] or doc.get("fusion") != []:
        fail("json", "--plan without --coll should run no size sweep and no fusion case")
    options = expect_type(doc, "options", dict, "json") or {}
    if options.get("plan") != [{"calls": n, "bytes": b} for n, b in cases]:
        fail("json", f"options.plan is {options.get('plan')}")
    if doc.get("plan_mismatches") != 0 or doc.get("out_of_bounds") != 0:
        fail("json", f"plan_mismatches {doc.get('plan_mismatches')}, out_of_bounds {doc.get('out_of_bounds')}")
    plan = expect_type(doc, "plan", dict, "json") or {}
    entries = expect_type(plan, "cases", list, "plan") or []
    if len(entries) != len(expected):
        fail("json", f"{len(entries)} plan cases, expected {len(expected)}")
    factor = 2.0 * (NRANKS - 1) / NRANKS
    for i, entry in enumerate(entries):
        where = f"plan.cases[{i}]"
        for k in ("calls", "bytes", "count", "total_bytes"):
            expect_type(entry, k, int, where)
        key = (entry.get("calls"), entry.get("bytes"), entry.get("type"), entry.get("redop"))
        if key not in rows:
            fail(where, f"{key} is not in the text table")
            continue
        n, total = entry["calls"], entry["total_bytes"]
        if total != n * entry["bytes"]:
            fail(where, "total_bytes is not calls * bytes")
        for form in FORMS:
            m = expect_type(entry, form, dict, where) or {}
            check_measure(m, f"{where}.{form}", "allreduce", NRANKS, rounds)
            if m.get("wrong") != 0:
                fail(f"{where}.{form}", f"wrong is {m.get('wrong')}, expected 0 (checked)")
            if m.get("time_us") and not close(m["algbw"], total / m["time_us"] / 1e3, 1e-4):
                fail(f"{where}.{form}", "algbw is not N * bytes / time")
            if not close(m.get("busbw", 0), m.get("algbw", 0) * factor, 1e-4):
                fail(f"{where}.{form}", "busbw is not algbw * 2(n-1)/n")
            if m.get("launches") != rows[key]["forms"][form]["launches"]:
                fail(f"{where}.{form}", f"launches {m.get('launches')} differ from the table's")
            if m.get("launches") != m.get("launches_min"):
                fail(f"{where}.{form}", "the ranks counted different launches")
            if m.get("ops") != n:
                fail(f"{where}.{form}", f"ops per launch {m.get('ops')}, expected {n}")
            if not close(m.get("time_us", 0), rows[key]["forms"][form]["time"], 5e-3):
                fail(f"{where}.{form}", f"time {m.get('time_us')} differs from the table's")
        for name in ("info", "group_info"):
            info = expect_type(entry, name, dict, where) or {}
            for k in INFO:
                expect_type(info, k, int, f"{where}.{name}")
            if info.get("num_ops") != n:
                fail(f"{where}.{name}", f"num_ops {info.get('num_ops')}, expected {n}")
            if not 1 <= info.get("streams_used", 0) <= info.get("streams_without_reuse", 0):
                fail(f"{where}.{name}", "streams_used is not within 1..streams_without_reuse")
        if {k: entry["info"].get(k) for k in INFO} != rows[key]["info"]:
            fail(where, f"info {entry['info']} differs from the table's {rows[key]['info']}")
        if entry.get("mismatches") != 0 or entry.get("group_mismatches") != 0:
            fail(where, f"mismatches {entry.get('mismatches')}/{entry.get('group_mismatches')}, expected 0/0")
        plan_m, eager_m = entry["plan"], entry["eager"]
        ratios = expect_type(entry, "ratios", dict, where) or {}
        if not close(ratios.get("plan_over_eager") or 0, plan_m["time_us"] / eager_m["time_us"], 1e-4):
            fail(where, "plan_over_eager is not plan time / eager time")
        if not close(ratios.get("eager_over_plan") or 0, eager_m["time_us"] / plan_m["time_us"], 1e-4):
            fail(where, "eager_over_plan is not eager time / plan time")
        if not close(ratios.get("plan_group_over_eager_group") or 0,
                     entry["plan_group"]["time_us"] / entry["eager_group"]["time_us"], 1e-4):
            fail(where, "plan_group_over_eager_group is not the quotient of the group times")
        got = expect_type(entry, "peers", dict, where) or {}
        if list(got) != peers:
            fail(where, f"peers keyed {list(got)}, expected {peers}")
        for library, p in got.items():
            at = f"{where}.peers.{library}"
            m = p.get("out_of_place")
            if m is None:
                fail(at, f"skipped: {p.get('skipped')}")
                continue
            check_measure(m, at, "allreduce", NRANKS, rounds)
            if m.get("wrong") != 0:
                fail(at, f"wrong is {m.get('wrong')}, expected 0 (checked)")
            if not close(p.get("ratio") or 0, m["time_us"] / plan_m["time_us"], 1e-4):
                fail(at, "ratio is not the peer's time / plan time")
    compile_ = expect_type(plan, "compile", dict, "plan") or {}
    if compile_.get("ops") != 10000 or compile_.get("repetitions") != rounds:
        fail("plan.compile", f"ops {compile_.get('ops')}, repetitions {compile_.get('repetitions')}")
    for form in ("plain", "group"):
        f = expect_type(compile_, form, dict, "plan.compile") or {}
        if "error" in f:
            fail(f"plan.compile.{form}", f"failed: {f['error']}")
            continue
        t = expect_type(f, "time_ms", (int, float), f"plan.compile.{form}")
        reps = expect_type(f, "repetition_times_ms", list, f"plan.compile.{form}") or []
        if len(reps) != rounds or t is None or not f["time_ms_min"] <= t <= f["time_ms_max"]:
            fail(f"plan.compile.{form}", "times are not the median and min-max of the repetitions")
        if (f.get("info") or {}).get("num_ops") != 10000:
            fail(f"plan.compile.{form}", f"info {f.get('info')}, expected num_ops 10000")
    if compiled and compile_.get("plain"):
        if not close(compile_["plain"].get("time_ms", 0), float(compiled[0].group(2)), 1e-2):
            fail("plan.compile", "plain time differs from the table's")


def main():
    launches = [
        (["--plan", "50:1K", "-n", "5", "--rounds", "2", "-c", "1"], [(50, 1024)], [("float", "sum")], [], 2),
        (["--plan", "20,4:64K", "-d", "int32", "-o", "max", "--peer", "mpi", "-n", "2", "-w", "1",
          "--rounds", "2"], [(20, 1024), (4, 65536)], [("int32", "max")], ["mpi"], 2),
    ]
    check_launches("plan", launches, check_run,
                   "OK: plans checked with no wrong element, bit-identical to the eager calls, N launches per "
                   "plain plan launch and 1 per group plan launch, JSON agrees with the table")


if __name__ == "__main__":
    main()
