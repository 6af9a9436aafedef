"""The launcher: ``python -m arrayx.distributed.run -n N [options] script.py [args...]``.

Starts one process per rank on this host, each with ``ARRAYX_DISTRIBUTED_RANK``, ``_SIZE``,
``_LOCAL_RANK``, ``_ADDRESS`` (rank 0's host:port) and ``_TOKEN`` (which the ranks present to
one another) set, its device in ``ARRAYX_DEVICE`` (cuda:<local rank> when this host has a GPU
for every rank, else cpu; ``--device`` chooses), and ``NCCL_NVLS_ENABLE=0``: NVLink multicast
stays off in every process (on shared machines a multicast object can take the host's GPUs out
of service). ``-m module`` runs a module instead of a script.

When a rank fails (a non-zero exit or a signal), the others get ``--grace`` seconds to notice
(their collectives raise ``DistributedError``) and exit, then are killed; the launcher's exit
status is the first failing rank's (128 + the signal number for a signal), else 0. SIGINT and
SIGTERM are passed on to every rank.
"""

from __future__ import annotations

import argparse
import os
import secrets
import signal
import socket
import subprocess
import sys
import time

_POLL_S = 0.05


def _free_port(host: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def _devices(kind: str, n: int) -> list:
    if kind == "cpu":
        return ["cpu"] * n
    from .._devices import cuda_device_count, cuda_unavailable_reason
    count = cuda_device_count()
    if kind == "auto" and count < n:
        return ["cpu"] * n
    if count < n:
        why = f" ({cuda_unavailable_reason()})" if count == 0 else ""
        raise SystemExit(f"arrayx.distributed.run: {n} ranks on cuda need {n} GPUs (NCCL takes "
                         f"one GPU a rank); this host has {count}{why}. Use --device cpu.")
    return [f"cuda:{r}" for r in range(n)]


def _parse(argv):
    parser = argparse.ArgumentParser(
        prog="python -m arrayx.distributed.run",
        description="Run a script as a job of N ranks on this host (arrayx.distributed).")
    parser.add_argument("-n", "--nproc", type=int, required=True, help="number of ranks")
    parser.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto",
                        help="each rank's device: cuda:<rank>, cpu, or auto (cuda when there "
                             "is a GPU for every rank; the default)")
    parser.add_argument("--host", default="127.0.0.1", help="the address rank 0 listens on")
    parser.add_argument("--port", type=int, default=0, help="rank 0's port (default: a free one)")
    parser.add_argument("--grace", type=float, default=5.0,
                        help="seconds the other ranks get to exit after one fails (default 5)")
    parser.add_argument("-m", dest="module", action="store_true",
                        help="the target is a module name, run as python -m")
    parser.add_argument("target", help="the script (or module, with -m) to run")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="its arguments")
    opts = parser.parse_args(argv)
    if opts.nproc < 1:
        parser.error(f"-n must be at least 1, got {opts.nproc}")
    if opts.grace < 0:
        parser.error(f"--grace must be >= 0, got {opts.grace}")
    return opts


def _exit_status(code: int) -> int:
    return 128 - code if code < 0 else code


def main(argv=None) -> int:
    opts = _parse(sys.argv[1:] if argv is None else argv)
    devices = _devices(opts.device, opts.nproc)
    port = opts.port or _free_port(opts.host)
    token = secrets.token_hex(16)
    command = [sys.executable] + (["-m"] if opts.module else []) + [opts.target] + opts.args
    procs = []
    for r in range(opts.nproc):
        env = dict(os.environ, ARRAYX_DISTRIBUTED_RANK=str(r),
                   ARRAYX_DISTRIBUTED_SIZE=str(opts.nproc), ARRAYX_DISTRIBUTED_LOCAL_RANK=str(r),
                   ARRAYX_DISTRIBUTED_ADDRESS=f"{opts.host}:{port}",
                   ARRAYX_DISTRIBUTED_TOKEN=token, ARRAYX_DEVICE=devices[r],
                   NCCL_NVLS_ENABLE="0")
        procs.append(subprocess.Popen(command, env=env))

    def forward(signum, _frame):
        for p in procs:
            if p.poll() is None:
                p.send_signal(signum)

    previous = {s: signal.signal(s, forward) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        return _supervise(procs, opts.grace)
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


def _supervise(procs: list, grace: float) -> int:
    status = 0
    deadline = None
    while True:
        running = False
        for r, p in enumerate(procs):
            code = p.poll()
            if code is None:
                running = True
            elif code != 0 and status == 0:
                status = _exit_status(code)
                print(f"arrayx.distributed.run: rank {r} exited with status {status}; the "
                      f"others get {grace:g} s to exit", file=sys.stderr, flush=True)
                deadline = time.monotonic() + grace
        if not running:
            return status
        if deadline is not None and time.monotonic() >= deadline:
            for r, p in enumerate(procs):
                if p.poll() is None:
                    print(f"arrayx.distributed.run: killing rank {r}", file=sys.stderr,
                          flush=True)
                    p.kill()
            for p in procs:
                p.wait()
            return status
        time.sleep(_POLL_S)


if __name__ == "__main__":
    sys.exit(main())
