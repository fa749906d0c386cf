"""Ports, processes, waiting and logs: what every suite's servers need."""

import ctypes
import fcntl
import signal
import socket
import struct
import subprocess
import time
from pathlib import Path


def free_port(host="127.0.0.1"):
    """A TCP port on `host` that nothing listens on right now."""
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def global_ipv4():
    """This machine's first IPv4 address outside 127.0.0.0/8 and 169.254.0.0/16, or None."""
    for _, name in socket.if_nameindex():
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            try:
                packed = fcntl.ioctl(s.fileno(), 0x8915, struct.pack("256s", name[:15].encode()))  # SIOCGIFADDR
            except OSError:
                continue
        address = socket.inet_ntoa(packed[20:24])
        if not address.startswith(("127.", "169.254.", "0.")):
            return address
    return None


def die_with_parent():
    """preexec_fn: SIGKILL this child when the thread that started it dies."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def stop_process(proc, timeout=10):
    """SIGTERM, then SIGKILL after `timeout` seconds; nothing if it is gone already."""
    if proc is None or proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def log_tail(path, lines=30):
    """The last lines of a log file ("" when there is none)."""
    try:
        return "\n".join(Path(path).read_text(errors="replace").splitlines()[-lines:])
    except (OSError, TypeError):
        return ""


def wait_for(what, probe, timeout, watched=None, interval=0.3):
    """probe() until it returns something true, which is returned.

    `watched` maps a name to (process, log file): one that exits fails the
    wait at once with its log's tail. RuntimeError after `timeout` seconds.
    """
    watched = watched or {}
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = probe()
        if got:
            return got
        for name, (proc, log) in watched.items():
            if proc is not None and proc.poll() is not None:
                raise RuntimeError(f"{name} exited with {proc.returncode}:\n{log_tail(log, 25)}")
        time.sleep(interval)
    tails = "".join(f"\n{log_tail(log, 25)}" for _, log in watched.values())
    raise RuntimeError(f"{what}: not within {timeout} s{tails}")
