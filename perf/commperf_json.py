"""Reads commperf --json files for perf/plot and perf/ratios, whatever their schema: schema 3 (any number of
peers, `peers` keyed by library) and schema 2 (one `peer`, as in perf/results/ before --peer took a list)
come out in one shape, so that old and new files can be plotted and tabulated together.

Standard library only: the scripts must run wherever commperf's tests run.
"""
from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, field


@dataclass
class PeerResult:
    measure: dict | None  # time_us, time_us_min, time_us_max, algbw, busbw, wrong, round_times_us
    skipped: str | None  # why the peer could not run this shape
    ratio: float | None  # peer time / Weft time
    in_place: dict | None = None  # the peer's in-place form (commperf --peer_in_place), where it has one


@dataclass
class Result:
    collective: str
    size: int
    type: str
    redop: str
    weft: dict | None  # Weft's out-of-place measure (the form compared with the peers)
    peers: dict = field(default_factory=dict)  # library -> PeerResult, in the run's --peer order
    weft_in_place: dict | None = None  # Weft's in-place measure, where timed

    def measure(self, library):
        return self.weft if library == "weft" else getattr(self.peers.get(library), "measure", None)


@dataclass
class Run:
    path: str
    ranks: int
    command_line: str
    bounds: dict | None
    peers: list  # library names, in --peer order
    versions: dict  # library -> version text ("weft" and every peer)
    results: list  # Result

    @property
    def stem(self):
        return os.path.splitext(os.path.basename(self.path))[0]

    @property
    def libraries(self):
        return ["weft"] + self.peers

    def select(self, want_type, want_op):
        """The results of one type and op (collectives without an op have redop "none")."""
        return [r for r in self.results if r.type == want_type and r.redop in (want_op, "none")]


def _schema3(doc):
    peers = [p["library"] for p in doc.get("peers") or []]
    versions = {p["library"]: p.get("version") for p in doc.get("peers") or []}
    results = []
    for row in doc["results"]:
        entries = {lib: PeerResult(e.get("out_of_place"), e.get("skipped"), e.get("ratio"), e.get("in_place"))
                   for lib, e in (row.get("peers") or {}).items()}
        results.append(Result(row["collective"], row["size"], row["type"], row["redop"], row.get("out_of_place"),
                              entries, row.get("in_place")))
    return peers, versions, results


def _schema2(doc):
    peer = doc.get("peer")
    peers = [peer] if peer else []
    versions = {peer: (doc.get("versions") or {}).get("peer")} if peer else {}
    results = []
    for row in doc["results"]:
        entries = {peer: PeerResult(row.get("peer"), row.get("peer_skipped"), row.get("ratio"))} if peer else {}
        results.append(Result(row["collective"], row["size"], row["type"], row["redop"], row.get("out_of_place"),
                              entries))
    return peers, versions, results


def load(path, tool):
    """The run in `path`; exits with `tool: ...` when it cannot be read or is no commperf file."""
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"{tool}: cannot read {path}: {e}")
    if doc.get("tool") != "commperf" or "results" not in doc:
        sys.exit(f"{tool}: {path} is not a commperf --json file")
    schema = doc.get("schema")
    if schema not in (2, 3):
        sys.exit(f"{tool}: {path} has schema {schema}; this script reads schemas 2 and 3")
    try:
        peers, versions, results = (_schema3 if schema == 3 else _schema2)(doc)
    except (KeyError, TypeError, AttributeError) as e:
        sys.exit(f"{tool}: {path} is not a well-formed schema-{schema} file ({e!r})")
    versions["weft"] = (doc.get("versions") or {}).get("weft")
    return Run(path, doc.get("ranks", 0), doc.get("command_line", ""), doc.get("bounds"), peers, versions, results)


def human(n):
    """1024 -> 1K, 16777216 -> 16M: sizes as column titles and tick labels."""
    for unit, shift in (("G", 30), ("M", 20), ("K", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift}{unit}"
    return str(n)
