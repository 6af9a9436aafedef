"""The process group: this rank's place in the job, the host mesh, and the collectives.

Host arrays travel over the mesh (``_sockets.py``) with rank 0 as the hub: every rank sends its
part and a header naming the call to rank 0, which checks that all ranks made the same call on
the same shapes and dtypes, combines the parts in rank order (so a sum is the NumPy sum of the
parts taken in rank order, bit for bit) and sends each rank its result. A mismatch is a
ValueError on every rank, and the group stays usable; a dead or silent peer is a
DistributedError on every rank still running, and the group is broken from then on. Point to
point messages go straight to the peer.

Arrays on a GPU go through one NCCL communicator of the group (``_nccl.py``), created the first
time a GPU array meets a collective: rank 0 makes NCCL's unique id and sends it over the mesh.
Their collectives are queued on the array's device's current stream and return at once; their
shapes and dtypes are the caller's promise, as in NCCL.
"""

from __future__ import annotations

import os
import threading

import numpy as np

from ._sockets import DistributedError, connect_mesh

DEFAULT_TIMEOUT_S = 300.0

_HOST_REDUCTIONS = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum}


def timeout_from_env() -> float:
    text = os.environ.get("ARRAYX_DISTRIBUTED_TIMEOUT")
    if not text:
        return DEFAULT_TIMEOUT_S
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"ARRAYX_DISTRIBUTED_TIMEOUT must be a number of seconds, got "
                         f"{text!r}") from None
    if not value > 0:
        raise ValueError(f"ARRAYX_DISTRIBUTED_TIMEOUT must be positive, got {text!r}")
    return value


def _env_int(name: str, default: int) -> int:
    text = os.environ.get(name)
    if text is None:
        return default
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"{name} must be an integer, got {text!r}") from None


class Group:
    """The ranks of this job (see the module docstring)."""

    def __init__(self, timeout: float | None = None):
        self.size = _env_int("ARRAYX_DISTRIBUTED_SIZE", 1)
        self.rank = _env_int("ARRAYX_DISTRIBUTED_RANK", 0)
        if self.size < 1 or not 0 <= self.rank < self.size:
            raise ValueError(f"ARRAYX_DISTRIBUTED_RANK={self.rank} and ARRAYX_DISTRIBUTED_SIZE="
                             f"{self.size} do not describe a rank of a job")
        self.timeout = timeout_from_env() if timeout is None else timeout
        self.failure = None  # the message once a peer failed
        self.seq = 0
        self.nccl = None
        self.lock = threading.RLock()
        self.peers = {}
        if self.size > 1:
            address = os.environ.get("ARRAYX_DISTRIBUTED_ADDRESS")
            token = os.environ.get("ARRAYX_DISTRIBUTED_TOKEN", "")
            if not address:
                raise ValueError("ARRAYX_DISTRIBUTED_ADDRESS (host:port of rank 0) is not set: "
                                 "start the job with python -m arrayx.distributed.run")
            host, _, port = address.rpartition(":")
            if not host or not port.isdigit():
                raise ValueError(f"ARRAYX_DISTRIBUTED_ADDRESS must be host:port, got "
                                 f"{address!r}")
            self.peers = connect_mesh(self.rank, self.size, (host, int(port)), token,
                                      self.timeout)

    # -- failure handling ----------------------------------------------------------------
    def check_usable(self):
        if self.failure is not None:
            raise DistributedError(f"the group is broken by an earlier failure: {self.failure}")

    def _broken(self, error: DistributedError):
        """Mark the group broken and tell the peers still reachable, so none waits."""
        self.failure = str(error)
        for peer in self.peers.values():
            try:
                peer.send({"error": f"rank {self.rank} failed: {error}"})
            except DistributedError:
                pass

    # -- host collectives ----------------------------------------------------------------
    def host_collective(self, name: str, part: np.ndarray | None, agree: dict,
                        combine) -> np.ndarray | None:
        """Run one collective on host parts through rank 0.

        `agree` holds the arguments that must be the same on every rank; `part` is this rank's
        data (None when it sends none, as the non-roots of a broadcast). `combine(parts)` runs
        on rank 0 with every rank's part in rank order and returns one result per rank.
        """
        with self.lock:
            self.check_usable()
            self.seq += 1
            header = {"op": name, "seq": self.seq, "agree": agree}
            if part is not None:
                header.update(shape=list(part.shape), dtype=part.dtype.name)
            try:
                if self.rank == 0:
                    return self._hub(header, part, combine)
                hub = self.peers[0]
                hub.send(header, part)
                reply = hub.recv_header()
                if "mismatch" in reply:
                    raise ValueError(reply["mismatch"])
                if "shape" not in reply:
                    return None
                return hub.recv_array(reply)
            except DistributedError as e:
                self._broken(e)
                raise

    def _hub(self, header: dict, part, combine):
        parts = [part]
        headers = [header]
        for r in range(1, self.size):
            peer = self.peers[r]
            h = peer.recv_header()
            if h.get("op") != header["op"] or h.get("seq") != header["seq"]:
                raise DistributedError(f"rank {r} called {h.get('op')!r} (call {h.get('seq')}) "
                                       f"while rank 0 called {header['op']!r} (call "
                                       f"{header['seq']}): the ranks' calls are out of step")
            parts.append(peer.recv_array(h) if "nbytes" in h else None)
            headers.append(h)
        mismatch = _mismatch(headers)
        if mismatch is not None:
            for r in range(1, self.size):
                self.peers[r].send({"mismatch": mismatch})
            raise ValueError(mismatch)
        results = combine(parts)
        for r in range(1, self.size):
            res = results[r]
            if res is None:
                self.peers[r].send({})
            else:
                self.peers[r].send({"shape": list(res.shape), "dtype": res.dtype.name}, res)
        return results[0]

    # -- point to point (host) -----------------------------------------------------------
    def host_send(self, part: np.ndarray, peer: int):
        with self.lock:
            self.check_usable()
            try:
                self.peers[peer].send({"op": "send", "shape": list(part.shape),
                                       "dtype": part.dtype.name}, part)
            except DistributedError as e:
                self._broken(e)
                raise

    def host_recv(self, shape: tuple, dtype: np.dtype, peer: int) -> np.ndarray:
        with self.lock:
            self.check_usable()
            try:
                conn = self.peers[peer]
                h = conn.recv_header()
                if h.get("op") != "send":
                    raise DistributedError(f"rank {peer} called {h.get('op')!r} where this rank "
                                           f"waits in recv() for its send(): the ranks' calls "
                                           f"are out of step")
                got = conn.recv_array(h)
            except DistributedError as e:
                self._broken(e)
                raise
        if got.shape != shape or got.dtype != dtype:
            raise ValueError(f"recv(): rank {peer} sent an array of shape {got.shape} and dtype "
                             f"{got.dtype}, where shape {shape} and dtype {dtype} were asked for")
        return got

    # -- NCCL ----------------------------------------------------------------------------
    def communicator(self, device_index: int):
        """The group's NCCL communicator, created on `device_index` on first use."""
        with self.lock:
            self.check_usable()
            if self.nccl is None:
                from . import _nccl
                uid = np.frombuffer(_nccl.unique_id(), np.uint8) if self.rank == 0 else None
                got = self.host_collective("nccl_unique_id", uid, {},
                                           lambda parts: [parts[0]] * self.size)
                self.nccl = _nccl.Communicator(got.tobytes(), self.size, self.rank,
                                               device_index, self.timeout)
            elif self.nccl.device_index != device_index:
                raise ValueError(f"this rank's NCCL communicator is on cuda:"
                                 f"{self.nccl.device_index}; an array on cuda:{device_index} "
                                 f"cannot take part (move it with to_device first)")
            self.nccl.check_usable()
            return self.nccl

    def close(self):
        with self.lock:
            if self.nccl is not None:
                self.nccl.destroy()
            for peer in self.peers.values():
                peer.close()
            self.peers = {}
            self.failure = self.failure or "the group was shut down"


def _mismatch(headers: list) -> str | None:
    """Why the ranks' headers of one collective disagree, or None."""
    name = headers[0]["op"]
    agree = [h.get("agree") for h in headers]
    for key in agree[0]:
        values = [a.get(key) for a in agree]
        if any(v != values[0] for v in values):
            described = ", ".join(f"rank {r}: {v}" for r, v in enumerate(values))
            return f"{name}(): the ranks passed different {key} ({described})"
    if all("shape" in h for h in headers):
        parts = [(tuple(h["shape"]), h["dtype"]) for h in headers]
        if any(p != parts[0] for p in parts):
            described = ", ".join(f"rank {r}: shape {s} {d}" for r, (s, d) in enumerate(parts))
            return f"{name}(): the ranks' arrays differ in shape or dtype ({described})"
    return None


def reduce_parts(parts: list, op: str) -> np.ndarray:
    """The reduction of the parts in rank order (exactly what NumPy computes in that order),
    without NumPy's overflow warnings: a GPU's reduction raises none either."""
    fn = _HOST_REDUCTIONS[op]
    acc = np.array(parts[0], copy=True)
    with np.errstate(all="ignore"):
        for p in parts[1:]:
            fn(acc, p, out=acc)
    return acc
