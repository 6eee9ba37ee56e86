"""Ranks started without mpirun (as a launcher would for weftCommInitFromEnv: WEFT_RANK, WEFT_SIZE,
WEFT_ROOT per process, like tests/faults/launch.py) are not one MPI world. The mpi plugin must then
decline cleanly, never hang or crash:
  - WEFT_PLUGINS=mpi,tcp: the plugin says why it is not used and the job runs over tcp (result checked);
  - the same when each rank initialises MPI itself (--mpi-init: one-process MPI worlds);
  - WEFT_PLUGINS=mpi alone: every rank fails with an error, promptly.

usage: run_decline.py PROGRAM
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from free_port import free_loopback_port  # noqa: E402  (tests/free_port.py)

NRANKS = 2
TIMEOUT_S = 60


def run_job(program, plugins, args=()):
    port = free_loopback_port()
    # Nothing of an MPI launcher may leak in from the environment that runs the test.
    base = {k: v for k, v in os.environ.items() if not k.startswith(("OMPI_", "PMIX_", "PMI_"))}
    procs = []
    for rank in range(NRANKS):
        env = dict(base, WEFT_RANK=str(rank), WEFT_SIZE=str(NRANKS), WEFT_ROOT=f"127.0.0.1:{port}",
                   WEFT_PLUGINS=plugins, WEFT_LOG_LEVEL="info", WEFT_TIMEOUT="30")
        procs.append(subprocess.Popen([program, *args], env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, text=True))
    outputs = []
    for p in procs:
        try:
            out, _ = p.communicate(timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            return None
        outputs.append((p.returncode, out))
    return outputs


def check(name, outputs, expect_ok, reason):
    if outputs is None:
        print(f"FAIL {name}: the ranks did not finish within {TIMEOUT_S} s (hang)")
        return False
    ok = True
    for rank, (code, out) in enumerate(outputs):
        sys.stdout.write(f"--- {name}, rank {rank}, exit {code}\n{out}")
        if code < 0:
            print(f"FAIL {name}: rank {rank} died of signal {-code}")
            ok = False
        elif expect_ok and (code != 0 or "RESULT ok" not in out):
            print(f"FAIL {name}: rank {rank} should have run over tcp and given the right result")
            ok = False
        elif not expect_ok and (code == 0 or "RESULT error" not in out):
            print(f"FAIL {name}: rank {rank} should have failed with an error")
            ok = False
    if not any(reason in out for _, out in outputs):
        print(f"FAIL {name}: no rank logged why the mpi plugin declined ('{reason}')")
        ok = False
    if ok:
        print(f"ok   {name}")
    return ok


def main(argv):
    program = argv[0]
    no_job = "MPI is not initialised and no MPI launcher started this process"
    ok = check("WEFT_PLUGINS=mpi,tcp without mpirun", run_job(program, "mpi,tcp"), True, no_job)
    ok &= check("WEFT_PLUGINS=mpi without mpirun", run_job(program, "mpi"), False, no_job)
    singleton = run_job(program, "mpi,tcp", ["--mpi-init"])
    if singleton is not None and any("RESULT" not in out for _, out in singleton):
        # Open MPI could not make a singleton here (it may need its daemon): nothing to check then.
        print("note: MPI_Init without mpirun failed here; the singleton case is not checked")
    else:
        ok &= check("WEFT_PLUGINS=mpi,tcp, MPI initialised without mpirun", singleton, True,
                    "MPI_COMM_WORLD has one process")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
