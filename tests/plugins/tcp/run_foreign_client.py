#!/usr/bin/env python3
"""A stranger knocks while a job runs: two ranks over tcp (weftCommInitFromEnv, no mpirun) and a foreign
client that connects to the bootstrap root before the second rank joins, and to every tcp listener of both
ranks while they run AllReduces, each time once with garbage and once with a well-formed hello carrying
a wrong job token. The job must finish with correct results, and the bootstrap root and the listeners
must log that they turned the stranger away while the job ran.

usage: run_foreign_client.py RANK_PROGRAM
"""
import os
import socket
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from free_port import free_loopback_port  # noqa: E402  (tests/free_port.py)

WRONG_TOKEN = 0x0BADC0FFEE0BADC0
JOB_TOKEN = "0123456789abcdef"


def knock(address, payload):
    """Connects to (host, port), sends, waits briefly for the peer to close; a reset connection is fine."""
    try:
        with socket.create_connection(address, timeout=2) as s:
            s.sendall(payload)
            s.settimeout(1)
            try:
                s.recv(64)
            except (socket.timeout, OSError):
                pass
    except OSError:
        pass


def socket_inodes(pid):
    inodes = set()
    fd_dir = f"/proc/{pid}/fd"
    for fd in os.listdir(fd_dir):
        try:
            target = os.readlink(os.path.join(fd_dir, fd))
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    return inodes


def listen_rows(pid, tables):
    """(hex address, port) of each LISTEN row in the given /proc/net tables that belongs to process `pid`."""
    inodes = socket_inodes(pid)
    for table in tables:
        with open(table) as f:
            next(f)
            for row in f:
                fields = row.split()
                if fields[3] == "0A" and fields[9] in inodes:  # 0A: LISTEN
                    host, port = fields[1].split(":")
                    yield host, int(port, 16)


def listening_addresses(pid):
    """IPv4 (host, port) pairs process `pid` listens on: its socket inodes matched with /proc/net/tcp LISTEN
    rows (Weft's tcp listeners bind the chosen interface's address, not necessarily the loopback)."""
    return {(socket.inet_ntoa(struct.pack("<I", int(host, 16))), port)
            for host, port in listen_rows(pid, ("/proc/net/tcp",))}


def wildcard_listeners(pid):
    """Ports process `pid` listens on at a wildcard address (0.0.0.0 or ::), which would take connections on
    every interface: Weft binds the chosen interface's address only."""
    return [port for host, port in listen_rows(pid, ("/proc/net/tcp", "/proc/net/tcp6")) if set(host) == {"0"}]


def bootstrap_hello():
    # core/bootstrap/bootstrap_wire.h Hello: magic "WBST", version 1, token, nranks, rank, blobBytes, reserved.
    return struct.pack("<IIQiiII", 0x57425354, 1, WRONG_TOKEN, 2, 1, 0, 0)


def tcp_hello():
    # plugins/tcp/tcp_wire.h hello: magic "WTPL", version 1 (u16), 2 bytes padding, token, connector id.
    return struct.pack("<IHHQQ", 0x4C505457, 1, 0, WRONG_TOKEN, 0)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    program = sys.argv[1]
    root_port = free_loopback_port()
    stop_file = f"/tmp/weft-foreign-stop-{os.getpid()}"
    env = dict(os.environ, FOREIGN_STOP_FILE=stop_file, WEFT_SIZE="2", WEFT_ROOT=f"127.0.0.1:{root_port}", WEFT_TOKEN=JOB_TOKEN,
               WEFT_PLUGINS="tcp", WEFT_LOG_LEVEL=os.environ.get("FOREIGN_LOG_LEVEL", "warn"), WEFT_TIMEOUT="60")
    ranks = [subprocess.Popen([program], env=dict(env, WEFT_RANK="0"), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)]
    time.sleep(0.5)  # rank 0's bootstrap root is listening, waiting for rank 1
    if ("127.0.0.1", root_port) not in listening_addresses(ranks[0].pid) or wildcard_listeners(ranks[0].pid):
        ranks[0].kill()
        sys.exit(f"FAIL: the bootstrap root should listen on 127.0.0.1:{root_port} only; it listens on "
                 f"{sorted(listening_addresses(ranks[0].pid))} and on every interface at "
                 f"port(s) {wildcard_listeners(ranks[0].pid)}")
    knock(("127.0.0.1", root_port), os.urandom(64))
    knock(("127.0.0.1", root_port), bootstrap_hello())
    ranks.append(subprocess.Popen([program], env=dict(env, WEFT_RANK="1"), stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True))
    for p in ranks:
        line = p.stdout.readline()
        if not line.startswith("READY"):
            for q in ranks:
                q.kill()
            sys.exit(f"FAIL: a rank did not start: {line!r} {p.stderr.read()}")
    knocked = 0
    for rank, p in enumerate(ranks):
        if wildcard_listeners(p.pid):
            for q in ranks:
                q.kill()
            sys.exit(f"FAIL: rank {rank} listens on every interface at port(s) {wildcard_listeners(p.pid)}")
        for address in listening_addresses(p.pid):
            if address[1] == root_port:
                continue  # the bootstrap root, visited above
            knock(address, os.urandom(64))
            knock(address, tcp_hello())
            knocked += 1
    time.sleep(0.5)  # a few more collectives after the last visit
    open(stop_file, "w").close()
    outputs = []
    for rank, p in enumerate(ranks):
        try:
            out, err = p.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            for q in ranks:
                q.kill()
            sys.exit(f"FAIL: rank {rank} hung after the stranger's visits")
        outputs.append((out, err))
    os.remove(stop_file)
    for rank, (p, (out, err)) in enumerate(zip(ranks, outputs)):
        if p.returncode != 0 or not out.strip().splitlines()[-1].startswith("OK"):
            sys.exit(f"FAIL: rank {rank} exited {p.returncode}:\n{out}\n{err}\n(the other rank:\n"
                     f"{outputs[1 - rank][0]}\n{outputs[1 - rank][1]})")
    logs = "".join(err for _, err in outputs)
    # The bootstrap root reads and refuses at once; a running rank drains its listeners every 10 ms or so
    # of its collectives (core/comm/control_channel.h), and the tcp plugin refuses what lacks the token.
    for needle in ("bootstrap root: dropped a connection with a wrong job token",
                   "bootstrap root: dropped a connection that is not a Weft bootstrap",
                   ": wrong job token", ": not a weft tcp hello"):
        if needle not in logs:
            sys.exit(f"FAIL: the ranks' logs lack {needle!r}:\n{logs}")
    if knocked == 0:
        sys.exit("FAIL: found no tcp listener to knock on")
    refused = logs.count("[tcp] refused connection from ")
    if refused != 2 * knocked:
        sys.exit(f"FAIL: the listeners refused {refused} connections, expected 2 per listener ({knocked}):\n{logs}")
    print(f"PASS: job finished ({', '.join(o.strip().splitlines()[-1] for o, _ in outputs)}) after strangers "
          f"knocked on the bootstrap root and {knocked} listeners")


if __name__ == "__main__":
    main()
