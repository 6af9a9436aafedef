"""Devices: ``cpu`` and ``cuda:N``, and the default device.

Device objects are interned (one per kind and index), so comparing devices is an identity test
and each carries its backend, looked up once.
"""

from __future__ import annotations

import importlib.util
import os


class Device:
    """An arrayx device: ``Device("cpu")`` or ``Device("cuda:0")``."""

    __slots__ = ("kind", "index", "_backend")

    def __new__(cls, spec="cpu"):
        return parse_device(spec)

    @classmethod
    def _make(cls, kind, index):
        self = object.__new__(cls)
        self.kind = kind
        self.index = index
        self._backend = None
        return self

    @property
    def backend(self):
        if self._backend is None:
            from ._registry import backend_for_kind
            self._backend = backend_for_kind(self.kind)
        return self._backend

    def __str__(self):
        return self.kind if self.index is None else f"{self.kind}:{self.index}"

    def __repr__(self):
        return f"Device('{self}')"

    def __eq__(self, other):
        if isinstance(other, str):
            try:
                return parse_device(other) is self
            except ValueError:
                return False
        return self is other

    def __hash__(self):
        return hash((self.kind, self.index))

    def __reduce__(self):
        return (parse_device, (str(self),))


CPU = Device._make("cpu", None)
_cuda_devices: dict[int, Device] = {}


_cuda_reason: str | None = None


def cuda_device_count() -> int:
    """Number of usable CUDA devices; 0 when numba-cuda / the driver / a GPU is missing (then
    ``cuda_unavailable_reason()`` says which)."""
    global _cuda_reason
    try:
        from .cuda.engine.runtime import device_count, unavailable_reason
    except ImportError as e:
        _cuda_reason = f"arrayx's CUDA backend cannot be imported ({e})"
        return 0
    try:
        count = device_count()
    except Exception as e:  # a broken driver install: report it, and run on the CPU
        _cuda_reason = f"the CUDA device query failed ({type(e).__name__}: {e})"
        return 0
    if count == 0:
        _cuda_reason = unavailable_reason()
    return count


def cuda_unavailable_reason() -> str | None:
    """Why arrayx cannot run on a GPU (no numba-cuda, no driver, no device), or None if it can.

    The kernels need numba-cuda besides a device: its absence is looked up without importing it
    (``import arrayx`` stays cheap).
    """
    reasons = [] if cuda_device_count() > 0 else [_cuda_reason or "no usable CUDA device"]
    if importlib.util.find_spec("numba_cuda") is None:
        reasons.insert(0, "numba-cuda is not installed (the GPU's kernels need it; the cuda "
                          "extra brings it with cuda-bindings: pip install -e '.[cuda]')")
    return "; ".join(reasons) or None


def cuda_device(index: int) -> Device:
    dev = _cuda_devices.get(index)
    if dev is None:
        count = cuda_device_count()
        if not 0 <= index < count:
            have = f"{count} CUDA device(s) are available" if count else "no usable CUDA GPU was found"
            raise ValueError(f"device 'cuda:{index}' does not exist: {have}")
        dev = _cuda_devices[index] = Device._make("cuda", index)
    return dev


_other_devices: dict[tuple[str, int], Device] = {}


def known_devices() -> list:
    """Every Device made so far (the cpu, and each cuda:N asked for)."""
    return [CPU, *_cuda_devices.values(), *_other_devices.values()]


def device_of_kind(kind: str, index: int) -> Device:
    """The interned Device of a backend kind and index (CUDA devices are checked to exist)."""
    if kind == "cuda":
        return cuda_device(index)
    dev = _other_devices.get((kind, index))
    if dev is None:
        dev = _other_devices[kind, index] = Device._make(kind, index)
    return dev


def parse_device(spec) -> Device:
    """Turn a device spec (Device, 'cpu', 'cuda', 'cuda:N', 'gpu') into an interned Device."""
    if isinstance(spec, Device):
        return spec
    if isinstance(spec, str):
        text = spec.strip().lower()
        if text == "cpu":
            return CPU
        kind, _, index = text.partition(":")
        if kind in ("cuda", "gpu"):
            if not index:
                return cuda_device(0)
            if index.isdigit():
                return cuda_device(int(index))
    raise ValueError(f"unknown device {spec!r}: expected 'cpu', 'cuda' or 'cuda:N', or an arrayx Device")


_default_device: Device | None = None


def default_device() -> Device:
    """ARRAYX_DEVICE if set, else the first CUDA device when a usable GPU exists, else the CPU
    (``cuda_unavailable_reason()`` says why)."""
    global _default_device
    if _default_device is None:
        env = os.environ.get("ARRAYX_DEVICE")
        if env:
            _default_device = parse_device(env)
        else:
            reason = cuda_unavailable_reason()
            _default_device = CPU if reason else cuda_device(0)
            if reason:
                # A broken GPU setup must not pass for a CPU-only machine: the reason is kept
                # (python -m arrayx prints it) and logged.
                import logging
                logging.getLogger("arrayx").debug("default device: cpu, because %s", reason)
    return _default_device


def set_default_device(device) -> None:
    """Make `device` the default for creation functions (None restores the automatic choice)."""
    global _default_device
    _default_device = None if device is None else parse_device(device)


def available_devices() -> list[Device]:
    return [CPU] + [cuda_device(i) for i in range(cuda_device_count())]
