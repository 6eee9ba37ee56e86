#!/usr/bin/env python3
"""A host that vanishes without closing its connections (power loss, a cut cable): two "hosts" in network
namespaces joined by a veth pair (tests/topology/netns/run_netns.py), one rank in each, looping AllReduces
over tcp (peer_death_rank.c). Once both run, the second host's end of the link is set down: nothing it
sends or should answer gets through any more, and no connection is closed. With the default
WEFT_SOCKET_DEAD_PEER the kernel's keepalive probes (idle socket) or the plugin's check of unacknowledged
data (TCP_INFO, a socket in the middle of a transfer) must fail the first rank's connection, and its call must
return weftRemoteError naming rank 1, within 10 s.

Usage: run_host_vanishes.py RANK_PROGRAM. Needs root and `ip netns`; skips (77) otherwise.
"""
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "topology", "netns"))
import run_netns  # noqa: E402  (TwoHosts, usable)

DEADLINE_S = 10.0


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    program = sys.argv[1]
    reason = run_netns.usable()
    if reason:
        print(f"SKIP: {reason}")
        sys.exit(run_netns.SKIP)
    with run_netns.TwoHosts() as hosts:
        procs = []
        for rank in range(2):
            env = dict(os.environ, WEFT_RANK=str(rank), WEFT_SIZE="2", WEFT_ROOT=f"{run_netns.PREFIX}.1:29518",
                       WEFT_TOKEN="0123456789abcdef", WEFT_HOST_ID=f"netns-host-{rank}",
                       WEFT_SOCKET_IFNAME=hosts.ifaces[rank], WEFT_TIMEOUT="120")
            procs.append(subprocess.Popen(["ip", "netns", "exec", hosts.ns[rank], program], env=env,
                                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
        try:
            for rank, p in enumerate(procs):
                line = p.stdout.readline()
                if not line.startswith("READY"):
                    sys.exit(f"FAIL: rank {rank} did not reach its loop: {line!r} {p.stderr.read()[-2000:]}")
            run_netns.run("ip", "-n", hosts.ns[1], "link", "set", hosts.ifaces[1], "down")
            cut_at = time.monotonic()
            try:
                out, err = procs[0].communicate(timeout=DEADLINE_S + 30)
            except subprocess.TimeoutExpired:
                sys.exit(f"FAIL: rank 0 still blocked {DEADLINE_S + 30:.0f} s after its peer's host vanished")
            elapsed = time.monotonic() - cut_at
        finally:
            for p in procs:
                p.kill()
                p.wait()
    error = next((l for l in out.splitlines() if l.startswith("ERROR")), "(no ERROR line)")
    print(f"rank 0: exit {procs[0].returncode} after {elapsed:.2f} s: {error}")
    failures = []
    if procs[0].returncode != 0:
        failures.append(f"rank 0 exited {procs[0].returncode}: {err[-2000:]}")
    if "rank 1 " not in error:
        failures.append("the message does not name rank 1")
    if elapsed > DEADLINE_S:
        failures.append(f"{elapsed:.1f} s to notice (> {DEADLINE_S} s)")
    if failures:
        sys.exit("FAIL: " + "; ".join(failures))
    print("PASS: the vanished host's rank was reported")


if __name__ == "__main__":
    main()
