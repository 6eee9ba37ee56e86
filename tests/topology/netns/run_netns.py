#!/usr/bin/env python3
"""Two "hosts" on one machine: network namespaces joined by a veth pair, two ranks in each, started without
mpirun through weftCommInitFromEnv with WEFT_HOST_ID per namespace (shm inside a host, tcp between them).

  run_netns.py check PROGRAM          results, and the bytes each host sent to the other during one
                                      4 MiB AllReduce, against the algorithm's count: hierarchical, flat
                                      ring, and the tuner's choice (which must be hierarchical's bytes)
  run_netns.py bench PROGRAM [RATE]   also times them at 1 and 4 MiB with the veth rate-limited by tc tbf
                                      (default 1gbit; none: full speed), writing JSON to $NETNS_BENCH_JSON

Needs root (CAP_NET_ADMIN) and `ip netns`; skips (exit 77) with the reason when they are missing.
"""
import json
import os
import subprocess
import sys
import uuid

SKIP = 77
CHECK_COUNTS = [1 << 20]  # floats: 4 MiB per rank
BENCH_COUNTS = [1 << 18, 1 << 20]  # 1 and 4 MiB
PREFIX = "10.77.0"


def run(*args, check=True):
    return subprocess.run(list(args), check=check, capture_output=True, text=True)


class TwoHosts:
    """Namespaces h0, h1 with veth ends 10.77.0.1 and .2; removed on exit (also after a failure)."""

    def __init__(self, rate=None):
        tag = uuid.uuid4().hex[:6]
        self.ns = [f"weft{tag}h0", f"weft{tag}h1"]
        self.ifaces = [f"wv{tag}a", f"wv{tag}b"]
        self.rate = rate

    def __enter__(self):
        for ns in self.ns:
            run("ip", "netns", "add", ns)
        try:
            run("ip", "link", "add", self.ifaces[0], "type", "veth", "peer", "name", self.ifaces[1])
            for i, (ns, iface) in enumerate(zip(self.ns, self.ifaces)):
                run("ip", "link", "set", iface, "netns", ns)
                run("ip", "-n", ns, "addr", "add", f"{PREFIX}.{i + 1}/24", "dev", iface)
                run("ip", "-n", ns, "link", "set", iface, "up")
                run("ip", "-n", ns, "link", "set", "lo", "up")
                if self.rate:
                    # The links between hosts are the slow ones, as on a cluster.
                    run("ip", "netns", "exec", ns, "tc", "qdisc", "add", "dev", iface, "root", "tbf", "rate",
                        self.rate, "burst", "1mb", "latency", "100ms")
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc):
        for ns in self.ns:
            run("ip", "netns", "del", ns, check=False)  # takes its veth end, and the pair, with it

    def start(self, program, args, extra_env):
        """Ranks 0, 1 in h0 and 2, 3 in h1; the first rank of each host reports its host's bytes."""
        procs = []
        for rank in range(4):
            host = rank // 2
            env = dict(os.environ, WEFT_RANK=str(rank), WEFT_SIZE="4", WEFT_ROOT=f"{PREFIX}.1:29517",
                       WEFT_TOKEN="0123456789abcdef", WEFT_HOST_ID=f"netns-host-{host}",
                       WEFT_SOCKET_IFNAME=self.ifaces[host], **extra_env)
            if rank % 2 == 0:
                env["HOSTS_RANK_FIRST_OF_HOST"] = "1"
            cmd = ["ip", "netns", "exec", self.ns[host], program, args[0], self.ifaces[host], *args[1:]]
            procs.append(subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
        outputs = []
        for rank, p in enumerate(procs):
            try:
                out, err = p.communicate(timeout=300)
            except subprocess.TimeoutExpired:
                for q in procs:
                    q.kill()
                raise SystemExit(f"FAIL: rank {rank} did not finish in 300 s")
            if p.returncode != 0:
                raise SystemExit(f"FAIL: rank {rank} exited {p.returncode}:\n{err}")
            outputs.append(out)
        return "".join(outputs)


def parse(output):
    tx, time_us = {}, None
    for line in output.splitlines():
        fields = line.split()
        if fields and fields[0] == "tx":
            tx[fields[1]] = int(fields[2])
        if fields and fields[0] == "time_us":
            time_us = float(fields[2])
    return tx, time_us


def usable():
    if os.geteuid() != 0:
        return "not root: network namespaces need CAP_NET_ADMIN"
    probe = f"weftprobe{uuid.uuid4().hex[:6]}"
    r = run("ip", "netns", "add", probe, check=False)
    if r.returncode != 0:
        return f"ip netns add failed: {r.stderr.strip()}"
    run("ip", "netns", "del", probe, check=False)
    return None


# Payload bytes one host sends the other in one AllReduce of n bytes (2 hosts of 2 ranks):
#   hierarchical: each of a host's 2 ranks allreduces its slice of n/2 with its peer on the other host:
#                 n/2 each, n per host.
#   ring in host order (0, 1 | 2, 3): the edge leaving a host carries 2(p-1)/p * n = 1.5 n.
# The tuner ("" leaves WEFT_ALGO unset) must choose hierarchical here.
EXPECTED_FACTOR = {"allreduce:hierarchical": 1.0, "allreduce:ring": 1.5, "": 1.0}


def label(algo):
    return algo or "tuner's choice"


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in ("check", "bench"):
        sys.exit(__doc__)
    mode, program = sys.argv[1], sys.argv[2]
    reason = usable()
    if reason:
        print(f"SKIP: {reason}")
        sys.exit(SKIP)
    rate = (sys.argv[3] if len(sys.argv) > 3 else "1gbit") if mode == "bench" else None
    if rate == "none":  # the veth at full speed
        rate = None
    results = {"rate": rate, "sizes": []}
    with TwoHosts(rate) as hosts:
        for count in CHECK_COUNTS if mode == "check" else BENCH_COUNTS:
            n = count * 4
            row = {"bytes": n}
            for algo, factor in EXPECTED_FACTOR.items():
                args = [mode, str(count)] + (["20"] if mode == "bench" else [])
                tx, time_us = parse(hosts.start(program, args, {"WEFT_ALGO": algo}))
                expected = factor * n
                print(f"{n >> 10} KiB, {label(algo)}: bytes sent between hosts {tx} (payload {expected:.0f} each)"
                      + (f", {time_us:.0f} us per AllReduce" if time_us else ""))
                if sorted(tx) != ["netns-host-0", "netns-host-1"]:
                    raise SystemExit(f"FAIL: expected a byte count from each host, got {tx}")
                for host, sent in tx.items():
                    # Headers (Ethernet, IP, TCP, Weft's own), acknowledgements and the barriers around the
                    # AllReduce cost a few percent on top of the payload, never less than it.
                    if not expected <= sent <= expected * 1.08 + 65536:
                        raise SystemExit(f"FAIL: {label(algo)}: {host} sent {sent} bytes, expected {expected:.0f} "
                                         "+ at most 8%")
                row[label(algo)] = {"tx_bytes": tx, "expected_payload": expected, "time_us": time_us}
            if mode == "bench":
                row["hierarchical_speedup"] = row["allreduce:ring"]["time_us"] / row["allreduce:hierarchical"]["time_us"]
                row["tuner_speedup"] = row["allreduce:ring"]["time_us"] / row[label("")]["time_us"]
                print(f"{n >> 10} KiB, veth at {rate}: hierarchical {row['hierarchical_speedup']:.2f}x the flat "
                      f"ring's speed, the tuner's choice {row['tuner_speedup']:.2f}x")
            results["sizes"].append(row)
    if mode == "bench" and os.environ.get("NETNS_BENCH_JSON"):
        with open(os.environ["NETNS_BENCH_JSON"], "w") as f:
            json.dump(results, f, indent=2)
    print("PASS")


if __name__ == "__main__":
    main()
