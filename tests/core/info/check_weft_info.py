#!/usr/bin/env python3
"""Runs weft-info and checks what it says against independent facts: the plugin files the build made, the
environment this script sets, the fixture plugins that fail in known ways, and os.cpu_count().

Usage: check_weft_info.py CASE WEFT_INFO PLUGIN_DIR FIXTURE_DIR PROJECT_VERSION
CASE: plugins | settings | broken | text | options | model
"""
import json
import os
import random
import subprocess
import sys

case, weft_info, plugin_dir, fixture_dir, project_version = sys.argv[1:6]


def run(args, extra_env=None, drop=()):
    env = {k: v for k, v in os.environ.items() if not k.startswith("WEFT_") and k not in drop}
    env.update(extra_env or {})
    done = subprocess.run([weft_info] + args, env=env, capture_output=True, text=True, timeout=60)
    return done


def report(extra_env=None):
    done = run(["--json"], extra_env)
    if done.returncode != 0:
        sys.exit(f"weft-info --json exited {done.returncode}: {done.stderr}")
    try:
        return json.loads(done.stdout)
    except json.JSONDecodeError as e:
        sys.exit(f"weft-info --json is not valid JSON ({e}):\n{done.stdout}")


def check(condition, message):
    if not condition:
        sys.exit("FAIL: " + message)


def plugin(data, name):
    found = [p for p in data["plugins"] if p["name"] == name and not p["shadowed_by"]]
    check(len(found) == 1, f"plugin {name} reported {len(found)} times: {data['plugins']}")
    return found[0]


def exported_extensions(path):
    """The optional extension symbols a plugin file exports, as the dynamic symbol table says (nm -D), in the
    order weft-info lists them."""
    done = subprocess.run(["nm", "-D", "--defined-only", path], capture_output=True, text=True, timeout=60)
    check(done.returncode == 0, f"nm -D {path}: {done.stderr}")
    symbols = {line.split()[-1] for line in done.stdout.splitlines() if line.strip()}
    known = ("weftTransportVec_v1", "weftTransportPair_v1", "weftBackendList_v1", "weftBackendAdvice_v1",
             "weftBackendCopiedInput_v1", "weftMemory_v1")
    return [s for s in known if s in symbols]


def setting(data, name):
    found = [s for s in data["settings"] if s["name"] == name]
    check(len(found) == 1, f"setting {name} reported {len(found)} times")
    return found[0]


if case == "plugins":
    data = report()
    check(data["version"]["text"] == project_version,
          f"version {data['version']['text']} differs from the CMake project's {project_version}")
    for name in ("shm", "tcp"):
        p = plugin(data, name)
        expected = os.path.join(plugin_dir, f"libweft-plugin-{name}.so")
        check(os.path.exists(expected), f"the build has no {expected}")
        check(p["loaded"], f"{name} not loaded: {p['reason']}")
        check(os.path.samefile(p["file"], expected), f"{name} loaded from {p['file']}, not {expected}")
        check(p["abi_version"] == 1 and p["kind"] == "transport", f"{name}: {p}")
        check(p["extensions"] == exported_extensions(expected), f"{name}: extensions {p['extensions']}, "
              f"the file exports {exported_extensions(expected)}")
    files = {f for f in os.listdir(plugin_dir) if f.startswith("libweft-plugin-") and f.endswith(".so")}
    reported = {os.path.basename(p["file"]) for p in data["plugins"] if p["file"]}
    check(files <= reported, f"plugin files {sorted(files - reported)} in {plugin_dir} not reported")
    for p in data["plugins"]:
        if not p["file"]:
            check(not p["loaded"] and p["reason"].startswith("not found"), f"{p}")
    topo = data["topology"]
    check(topo["known"], f"topology unknown: {topo['unknown_reason']}")
    # Online CPUs, or under a cgroup cpuset the CPUs this (unbound) test may use.
    check(topo["pus"] in (os.cpu_count(), len(os.sched_getaffinity(0))),
          f"topology PUs {topo['pus']} vs os.cpu_count() {os.cpu_count()}")
elif case == "settings":
    data = report()
    timeout = setting(data, "WEFT_TIMEOUT")
    check(timeout["set"] and timeout["source"] == "default", f"WEFT_TIMEOUT unset in the environment: {timeout}")
    check(timeout["value"].isdigit(), f"WEFT_TIMEOUT default {timeout['value']!r} is not a number")
    algo = setting(data, "WEFT_ALGO")
    check(not algo["set"] and algo["value"] is None and algo["source"] is None, f"WEFT_ALGO: {algo}")
    chosen = str(random.randint(1000, 9999))
    data = report({"WEFT_TIMEOUT": chosen, "WEFT_TIMOUT": "7"})
    timeout = setting(data, "WEFT_TIMEOUT")
    check(timeout == {**timeout, "set": True, "value": chosen, "source": "environment"}, f"{timeout}")
    typo = [s for s in data["unrecognised_settings"] if s["name"] == "WEFT_TIMOUT"]
    check(len(typo) == 1 and typo[0]["value"] == "7", f"misspelt WEFT_TIMOUT not reported: {data['unrecognised_settings']}")
    check(not any(s["name"] == "WEFT_TIMEOUT" for s in data["unrecognised_settings"]), "a known name listed as unknown")
elif case == "broken":
    data = report({"WEFT_PLUGIN_PATH": fixture_dir})
    check(fixture_dir in data["plugin_search_path"], f"{fixture_dir} not in {data['plugin_search_path']}")
    expected = {"badversion": ("wrong ABI version 99", 99), "nosymbol": ("missing symbol weftPlugin_v1", None),
                "initfails": ("init failed", 1)}
    for name, (reason, abi) in expected.items():
        path = os.path.join(fixture_dir, f"libweft-plugin-{name}.so")
        check(os.path.exists(path), f"fixture {path} was not built")
        p = plugin(data, name)
        check(not p["loaded"], f"{name} reported as loaded")
        check(reason in (p["reason"] or ""), f"{name}: reason {p['reason']!r} lacks {reason!r}")
        check(os.path.samefile(p["file"], path), f"{name}: file {p['file']} is not {path}")
        check(p["abi_version"] == abi, f"{name}: ABI version {p['abi_version']}, expected {abi}")
    check(plugin(data, "tcp")["loaded"] and plugin(data, "shm")["loaded"], "broken plugins stopped the good ones")
    # Transports that load but export a vectored-messages extension the loader must ignore (bad_vec.c).
    for name in ("badvecversion", "badveccalls"):
        path = os.path.join(fixture_dir, f"libweft-plugin-{name}.so")
        check(exported_extensions(path) == ["weftTransportVec_v1"], f"fixture {path} does not export the extension")
        p = plugin(data, name)
        check(p["loaded"] and p["extensions"] == [], f"{name}: an extension the loader ignores is listed: {p}")
elif case == "text":
    done = run([], {"WEFT_PLUGIN_PATH": fixture_dir, "WEFT_TIMEOUT": "77"})
    check(done.returncode == 0, f"weft-info exited {done.returncode}: {done.stderr}")
    out = done.stdout
    for needle in (f"Weft {project_version}", "libweft-plugin-shm.so", "wrong ABI version 99", "init failed",
                   "Topology:", "'77'", "(environment)", "(default)", "WEFT_TUNING_FILE",
                   "extensions: weftTransportVec_v1"):
        check(needle in out, f"text output lacks {needle!r}:\n{out}")
elif case == "options":
    done = run(["--help"])
    check(done.returncode == 0 and "--json" in done.stdout, f"--help: {done.returncode} {done.stdout}")
    done = run(["--no-such-option"])
    check(done.returncode == 2 and "--no-such-option" in done.stderr, f"bad option: {done.returncode} {done.stderr}")
elif case == "model":
    def table(args, extra_env=None):
        done = run(["--model"] + args, extra_env)
        check(done.returncode == 0, f"--model {args}: exited {done.returncode}: {done.stderr}")
        lines = [l for l in done.stdout.splitlines() if l and not l.startswith("#")]
        header = lines[0].split()
        names = header[1:header.index("tuner's")]
        rows = {}
        for line in lines[1:]:
            fields = line.split()
            rows[int(fields[0])] = (dict(zip(names, fields[1:1 + len(names)])), fields[-1])
        return rows

    rows = table(["allreduce:1M", "--max-ranks", "64"])
    check(sorted(rows) == [2, 4, 8, 16, 32, 64], f"rank counts {sorted(rows)}")
    for ranks, (us, choice) in rows.items():
        # Hierarchical needs more than one host of 8.
        check((us["hierarchical"] == "-") == (ranks <= 8), f"{ranks} ranks: hierarchical {us['hierarchical']}")
        priced = {name: float(v) for name, v in us.items() if v != "-"}
        check(choice == min(priced, key=priced.get), f"{ranks} ranks: chose {choice} among {priced}")
    ring = [float(rows[r][0]["ring"]) for r in sorted(rows)]
    check(ring == sorted(ring), f"the ring's time should grow with the rank count: {ring}")
    # A tuning file that makes the ring free at every measured rank count makes it the choice everywhere.
    free = [{"transport": t, "collective": "allreduce", "algorithm": "ring", "nranks": n, "bytes": [0, 1 << 30],
             "times_us": [0, 0]} for t in ("shm", "tcp") for n in (2, 3, 4)]
    path = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"weft-info-model-{os.getpid()}.json")
    with open(path, "w") as f:
        json.dump({"weft_tuning_version": 1, "entries": free}, f)
    try:
        tuned = table(["allreduce:1M", "--max-ranks", "64"], {"WEFT_TUNING_FILE": path})
    finally:
        os.remove(path)
    check(all(choice == "ring" for _, choice in tuned.values()), f"with a free ring: {tuned}")
    for bad in (["allreduce"], ["nothing:1M"], ["allreduce:1X"], ["allreduce:1M", "--max-ranks", "1"],
                ["allreduce:1M", "--transports", "shm"], ["allreduce:1M", "--ranks-per-host"]):
        done = run(["--model"] + bad)
        check(done.returncode == 2, f"--model {bad}: exited {done.returncode}, expected 2")
else:
    sys.exit(f"unknown case {case}")
print(f"weft-info {case}: OK")
