"""Runs an mpirun command line whose ranks use WEFT_PLUGINS=mpi with WEFT_LOG_LEVEL=info, and passes only
when it exits 0 AND the log shows that the mpi plugin's backend really ran collectives: its set-up line
("collectives of a N-rank communicator run through MPI") and a count of collectives above zero, with no
communicator that fell back to Weft's own algorithms because the backend could not be set up. A job that
silently ran over shm or tcp fails here. Exit status 77 (a skip) is passed on.

usage: run_checked.py [--weft-root] [--expect REGEX ...] COMMAND [ARG ...]
  --weft-root     sets WEFT_ROOT to a free loopback port (for weftCommInitFromEnv; pass it on with -x WEFT_ROOT)
  --expect REGEX  a line the output must also contain
"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from free_port import free_loopback_port  # noqa: E402  (tests/free_port.py)
from run_expecting import run_and_check  # noqa: E402  (tests/run_expecting.py)

SET_UP = re.compile(r"\[mpi\] collectives of a (\d+)-rank communicator run through MPI")
RAN = re.compile(r"\[mpi\] (\d+) collectives of this (\d+)-rank communicator ran through MPI")
FELL_BACK = re.compile(r"collective backend mpi not used|\[mpi\] not used|\[mpi\] refused")


def mpi_problems(out):
    problems = []
    if not SET_UP.findall(out):
        problems.append("no communicator set up the mpi backend (no '[mpi] collectives of a N-rank communicator "
                        "run through MPI' line): the collectives did not run through MPI")
    if sum(int(n) for n, _ in RAN.findall(out)) == 0:
        problems.append("the mpi backend ran no collectives")
    fell_back = sorted(set(FELL_BACK.findall(out)))
    if fell_back:
        problems.append("the mpi plugin was declined: " + "; ".join(fell_back))
    return problems


def mpi_summary(out):
    ran = sum(int(n) for n, _ in RAN.findall(out))
    return f"{len(SET_UP.findall(out))} communicators set up the mpi backend, {ran} collectives ran through MPI"


def main(argv):
    expected = []
    env = dict(os.environ)
    while argv and argv[0].startswith("--"):
        if argv[0] == "--weft-root":
            env["WEFT_ROOT"] = f"127.0.0.1:{free_loopback_port()}"
            argv = argv[1:]
        elif argv[0] == "--expect" and len(argv) > 1:
            expected.append(argv[1])
            argv = argv[2:]
        else:
            print(f"run_checked: unknown option {argv[0]}")
            return 2
    return run_and_check(argv, expected, "run_checked", env, mpi_problems, mpi_summary)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
