"""The host transport: a full mesh of TCP connections between the ranks of one job.

Every rank listens on a port of its own; rank 0 also listens on the job's address, where the
others introduce themselves (rank, token, listening address) and receive everyone's address.
Then rank j connects to every rank i < j. The mesh carries the collectives of host arrays
(rank 0 combines, ``_group.py``), the point-to-point messages, and NCCL's unique id.

A message is an 8-byte little-endian header length, a JSON header and, when the header has
"nbytes", that many raw bytes (an array's data, sent from and received into its own memory).
Headers are JSON rather than pickles: a stray connection to a listening port can send garbage,
never code. Every blocking operation waits at most the group's timeout; a closed or reset
connection, a timeout and an unexpected message all raise ``DistributedError``.
"""

from __future__ import annotations

import json
import socket
import struct
import time

import numpy as np


class DistributedError(RuntimeError):
    """A collective or message could not complete: a peer died, did not answer within the
    timeout (ARRAYX_DISTRIBUTED_TIMEOUT), or called a different collective."""


_LENGTH = struct.Struct("<Q")
_MAX_HEADER = 1 << 20  # a longer header is not one of ours


class Peer:
    """The connection to one other rank."""

    def __init__(self, sock: socket.socket, rank: int, timeout: float):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.settimeout(timeout)
        self.sock = sock
        self.rank = rank

    def send(self, header: dict, payload: np.ndarray | None = None):
        if payload is not None:
            header = dict(header, nbytes=payload.nbytes)
        data = json.dumps(header).encode()
        try:
            self.sock.sendall(_LENGTH.pack(len(data)) + data)
            if payload is not None and payload.nbytes:
                self.sock.sendall(memoryview(np.ascontiguousarray(payload)).cast("B"))
        except socket.timeout:
            raise DistributedError(f"rank {self.rank} did not take a message within "
                                   f"{self.sock.gettimeout():g} s") from None
        except OSError as e:
            raise DistributedError(f"the connection to rank {self.rank} is broken ({e}): "
                                   f"did its process die?") from None

    def recv_header(self) -> dict:
        (length,) = _LENGTH.unpack(self._recv_exactly(_LENGTH.size))
        if length > _MAX_HEADER:
            raise DistributedError(f"rank {self.rank} sent a message arrayx cannot read")
        header = json.loads(self._recv_exactly(length))
        if "error" in header:
            raise DistributedError(header["error"])
        return header

    def recv_payload(self, header: dict, out: np.ndarray):
        """Receive the payload announced by `header` into the C-contiguous array `out`."""
        nbytes = header.get("nbytes")
        if nbytes != out.nbytes:
            raise DistributedError(f"rank {self.rank} sent {nbytes} bytes where {out.nbytes} "
                                   f"were expected")
        if nbytes:
            self._recv_exactly(nbytes, memoryview(out).cast("B"))

    def recv_array(self, header: dict) -> np.ndarray:
        out = np.empty(tuple(header["shape"]), dtype=np.dtype(header["dtype"]))
        self.recv_payload(header, out)
        return out

    def _recv_exactly(self, n: int, into: memoryview | None = None):
        buf = into if into is not None else memoryview(bytearray(n))
        got = 0
        try:
            while got < n:
                k = self.sock.recv_into(buf[got:], n - got)
                if k == 0:
                    raise DistributedError(f"rank {self.rank} closed its connection: did its "
                                           f"process die?")
                got += k
        except socket.timeout:
            raise DistributedError(f"rank {self.rank} sent nothing within "
                                   f"{self.sock.gettimeout():g} s (ARRAYX_DISTRIBUTED_TIMEOUT)"
                                   ) from None
        except OSError as e:
            raise DistributedError(f"the connection to rank {self.rank} is broken ({e}): "
                                   f"did its process die?") from None
        return None if into is not None else bytes(buf)

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


def _listen(host: str, port: int, backlog: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as e:
        sock.close()
        raise DistributedError(f"cannot listen on {host}:{port} ({e})") from None
    sock.listen(backlog)
    return sock


def _connect(address: tuple, deadline: float, what: str) -> socket.socket:
    """Connect to `address`, retrying while its listener is not up yet, until `deadline`."""
    while True:
        try:
            return socket.create_connection(address, timeout=max(0.1, deadline - time.monotonic()))
        except OSError as e:
            if time.monotonic() >= deadline:
                raise DistributedError(f"could not connect to {what} at {address[0]}:"
                                       f"{address[1]} ({e})") from None
            time.sleep(0.05)


def _accept_ranks(listener, ranks, deadline, token, timeout, peers: dict) -> None:
    """Accept the connections of `ranks` (in any order) into `peers`."""
    waiting = set(ranks)
    while waiting:
        peer = _accept(listener, deadline, token, timeout, waiting)
        waiting.discard(peer.rank)
        peers[peer.rank] = peer


def _accept(listener: socket.socket, deadline: float, token: str, timeout: float,
            expected: set) -> Peer:
    """Accept the next rank's connection (its hello: rank and token), ignoring strays."""
    while True:
        listener.settimeout(max(0.01, deadline - time.monotonic()))
        try:
            sock, _ = listener.accept()
        except socket.timeout:
            raise DistributedError(f"ranks {sorted(expected)} did not connect within "
                                   f"{timeout:g} s (ARRAYX_DISTRIBUTED_TIMEOUT)") from None
        peer = Peer(sock, -1, max(0.01, deadline - time.monotonic()))
        try:
            hello = peer.recv_header()
        except (DistributedError, ValueError):
            peer.close()
            continue
        if hello.get("token") != token or hello.get("rank") not in expected:
            peer.close()
            continue
        peer.rank = hello["rank"]
        peer.hello = hello
        peer.sock.settimeout(timeout)
        return peer


def connect_mesh(rank: int, size: int, address: tuple, token: str, timeout: float) -> dict:
    """Connect this rank to every other rank of the job: {rank: Peer}."""
    deadline = time.monotonic() + timeout
    host = address[0]
    peers: dict[int, Peer] = {}
    try:
        if rank == 0:
            listener = _listen(host, address[1], size)
            try:
                _accept_ranks(listener, range(1, size), deadline, token, timeout, peers)
            finally:
                listener.close()
            table = {str(r): p.hello["address"] for r, p in peers.items()}
            for p in peers.values():
                p.send({"addresses": table})
            return peers
        listener = _listen(host, 0, size)
        try:
            mine = [host, listener.getsockname()[1]]
            hub = Peer(_connect(address, deadline, "rank 0"), 0, timeout)
            peers[0] = hub
            hub.send({"rank": rank, "token": token, "address": mine})
            table = hub.recv_header()["addresses"]
            for lower in range(1, rank):
                addr = tuple(table[str(lower)])
                p = Peer(_connect(addr, deadline, f"rank {lower}"), lower, timeout)
                p.send({"rank": rank, "token": token, "address": mine})
                peers[lower] = p
            _accept_ranks(listener, range(rank + 1, size), deadline, token, timeout, peers)
        finally:
            listener.close()
        return peers
    except BaseException:
        for p in peers.values():
            p.close()
        raise
