"""Backends by device kind, and the host fallback for primitives a backend lacks."""

from __future__ import annotations

import importlib
import os
import warnings

import numpy as np

from ._backend import PRIMITIVES


class HostFallbackError(RuntimeError):
    """Raised instead of a host round trip when host fallback is set to 'error'."""


class HostFallbackWarning(UserWarning):
    """A primitive ran through NumPy on the host because the device's backend lacks it."""


class Backend:
    """A device kind's primitives, as attributes (plain functions, no binding cost)."""

    def __init__(self, kind: str, primitives: dict):
        self.kind = kind
        self.implemented = frozenset(primitives)
        unknown = self.implemented - PRIMITIVES.keys()
        if unknown:
            raise ValueError(f"backend {kind!r} registers unknown primitives {sorted(unknown)}")
        for name, fn in primitives.items():
            setattr(self, name, fn)

    def __repr__(self):
        return f"<arrayx backend {self.kind!r}: {len(self.implemented)}/{len(PRIMITIVES)} primitives>"


# The host fallback itself needs these, so no backend may lack them. A backend whose `setitem`
# covers only some keys handles the rest by calling `host_fallback(kind, "setitem")` on a host
# copy and writing it back itself.
REQUIRED = frozenset({"from_host", "to_host", "setitem"})
_MODULES = {"cpu": "arrayx.cpu", "cuda": "arrayx.cuda"}
_backends: dict[str, Backend] = {}
_fallback_mode = os.environ.get("ARRAYX_HOST_FALLBACK", "warn")
_warned: set[tuple[str, str]] = set()


def set_host_fallback(mode: str) -> None:
    """'warn' (default): run missing primitives on the host, warning once each; 'error': raise;
    'allow': run them silently."""
    global _fallback_mode
    if mode not in ("warn", "error", "allow"):
        raise ValueError(f"host fallback mode must be 'warn', 'error' or 'allow', not {mode!r}")
    _fallback_mode = mode


def register_backend(kind: str, primitives: dict) -> Backend:
    """Register a device kind's primitives; primitives it lacks fall back to the CPU backend."""
    backend = Backend(kind, primitives)
    missing_required = REQUIRED - backend.implemented
    if missing_required:
        raise ValueError(f"backend {kind!r} must implement {sorted(missing_required)} itself")
    if kind != "cpu":
        host = backend_for_kind("cpu")
        backend.fallbacks = {name: _host_fallback(backend, host, name) for name in PRIMITIVES}
        for name in PRIMITIVES.keys() - backend.implemented:
            setattr(backend, name, backend.fallbacks[name])
    _backends[kind] = backend
    return backend


def host_fallback(kind: str, name: str):
    """The host round trip for primitive `name` of backend `kind`: for a backend that implements a
    primitive only for some arguments (e.g. `binary` for some names) and sends the rest here. It
    obeys `set_host_fallback` like a missing primitive does."""
    return _backends[kind].fallbacks[name]


def backend_for_kind(kind: str) -> Backend:
    backend = _backends.get(kind)
    if backend is None:
        importlib.import_module(_MODULES[kind])
        backend = _backends[kind]
    return backend


def _host_fallback(backend: Backend, host: Backend, name: str):
    from ._devices import CPU, Device, device_of_kind

    def to_host(value, found):
        """Host copies of native arrays (nested in lists/tuples too); notes their device."""
        if isinstance(value, (list, tuple)):
            return type(value)(to_host(v, found) for v in value)
        if isinstance(value, Device):
            found.append(value)
            return CPU
        if hasattr(value, "shape") and hasattr(value, "device_index"):
            found.append(device_of_kind(backend.kind, value.device_index))
            return backend.to_host(value)
        return value

    def from_host(value, device):
        if isinstance(value, tuple):
            return tuple(from_host(v, device) for v in value)
        if isinstance(value, np.ndarray):
            return backend.from_host(device, value, True)
        return value

    def fallback(*args, **kwargs):
        if _fallback_mode == "error":
            raise HostFallbackError(f"primitive {name!r} is not implemented on {backend.kind} "
                                    f"(host fallback is set to 'error')")
        if _fallback_mode == "warn" and (backend.kind, name) not in _warned:
            _warned.add((backend.kind, name))
            warnings.warn(f"arrayx: {name!r} is not implemented on {backend.kind}; running it on the "
                          f"host through NumPy (copies in and out)", HostFallbackWarning, stacklevel=3)
        out_native = kwargs.pop("out", None)
        devices = []
        host_args = to_host(args, devices)
        host_kwargs = {k: to_host(v, devices) for k, v in kwargs.items()}
        result = from_host(getattr(host, name)(*host_args, **host_kwargs), devices[0])
        if out_native is not None:
            backend.setitem(out_native, (Ellipsis,), result)
            return out_native
        return result

    fallback.__name__ = f"{name}_host_fallback"
    return fallback

