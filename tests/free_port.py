"""A loopback port for WEFT_ROOT that no other test is likely to take before the job binds it.

Binding port 0 and closing the socket hands out a port from the kernel's ephemeral range, and with ctest
running tests in parallel the next outgoing connection of another test can be given that same port before
rank 0 listens on it ("Address already in use"). A random port below the ephemeral range is never handed
out to outgoing connections; it only has to be free now, which is checked by binding it."""
import random
import socket

BELOW_EPHEMERAL = (20000, 32768)  # Linux's default ip_local_port_range starts at 32768


def ephemeral_floor():
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return BELOW_EPHEMERAL[1]


def free_loopback_port():
    low, high = BELOW_EPHEMERAL[0], min(BELOW_EPHEMERAL[1], ephemeral_floor())
    for _ in range(200):
        port = random.randrange(low, high) if high > low else 0
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return s.getsockname()[1]
    raise RuntimeError("no free loopback port below the ephemeral range")


if __name__ == "__main__":
    print(free_loopback_port())
