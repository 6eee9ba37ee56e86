"""Starts the ranks of a test job without mpirun, as a launcher would for weftCommInitFromEnv: WEFT_RANK,
WEFT_SIZE and WEFT_ROOT (a free port on the loopback) per process. Shared by the run_*.py drivers."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from free_port import free_loopback_port  # noqa: E402  (tests/free_port.py)


def parse_args(argv, flag):
    """[flag] PROGRAM [NAME=VALUE ...] -> (flag given, program, extra environment). flag may be None."""
    given = flag is not None and bool(argv) and argv[0] == flag
    if given:
        argv = argv[1:]
    return given, argv[0], dict(kv.split("=", 1) for kv in argv[1:])


def start_ranks(program, nranks, extra_env, args=(), stderr=None):
    port = free_loopback_port()
    procs = []
    for rank in range(nranks):
        env = dict(os.environ, WEFT_RANK=str(rank), WEFT_SIZE=str(nranks), WEFT_ROOT=f"127.0.0.1:{port}",
                   **extra_env)
        procs.append(subprocess.Popen([program, *args], env=env, stdout=subprocess.PIPE, stderr=stderr,
                                      text=True))
    return procs
