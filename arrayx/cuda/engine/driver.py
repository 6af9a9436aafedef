"""The CUDA driver API: the ``cuda.bindings.driver`` module, call checking and the errors.

The bottom of the engine: it imports nothing of arrayx, so every other engine module (runtime,
encoder, launcher, transfer...) can report a failed driver call the same way. The bindings are
imported on first use: ``runtime.device_count()`` runs while arrayx is being imported, and that
must stay cheap.

Every driver call is checked (``check``) and a failure raises ``CudaError`` naming the call and
the driver's error name. Errors that poison the context (a kernel fault: illegal address, trap,
misaligned access...) are *sticky*: ``raise_error`` then marks the device lost, and
``runtime`` raises ``CudaContextLost`` with the original cause at every later use of it, instead
of a string of unrelated failures.
"""

from __future__ import annotations

_driver = None


class CudaError(RuntimeError):
    """A CUDA driver call failed."""

    def __init__(self, message, code=None, name=None):
        super().__init__(message)
        self.code = code
        self.name = name


class CudaKernelError(CudaError):
    """A kernel faulted on the GPU (reported at the next synchronisation point)."""


class CudaContextLost(CudaError):
    """The device's context was poisoned by an earlier kernel fault; arrays on it are gone."""


# Driver error codes that leave the context unusable (CUDA docs: "the context cannot be used").
STICKY_ERRORS = frozenset({
    700,  # ILLEGAL_ADDRESS
    702,  # LAUNCH_TIMEOUT
    710,  # ASSERT
    714,  # HARDWARE_STACK_ERROR
    715,  # ILLEGAL_INSTRUCTION
    716,  # MISALIGNED_ADDRESS
    717,  # INVALID_ADDRESS_SPACE
    718,  # INVALID_PC
    719,  # LAUNCH_FAILED (trap: ARRAYX_DEBUG bounds checks)
})


def driver():
    """The ``cuda.bindings.driver`` module (imported on first use)."""
    global _driver
    if _driver is None:
        from cuda.bindings import driver as d
        _driver = d
    return _driver


def loaded_driver():
    """The bindings module if ``driver()`` imported it, else None: for finalisers, which must
    not import it (at interpreter exit, or in a process that never used CUDA)."""
    return _driver


def error_name(err) -> str:
    d = driver()
    try:
        res = d.cuGetErrorName(err)
        if res[0] == d.CUresult.CUDA_SUCCESS:
            return res[1].decode()
    except Exception:
        pass
    return f"CUDA error {int(err)}"


def error_string(err) -> str:
    d = driver()
    try:
        res = d.cuGetErrorString(err)
        if res[0] == d.CUresult.CUDA_SUCCESS:
            return res[1].decode()
    except Exception:
        pass
    return ""


def raise_error(err, what: str, device=None, kernels=None):
    """Raise the error of a failed driver call `what`; a sticky one sets ``device.lost``."""
    code = int(err)
    name = error_name(err)
    text = error_string(err)
    if code in STICKY_ERRORS:
        msg = f"{what} failed: {name} ({text})"
        if kernels:
            msg += f"; the fault happened in one of the kernels queued since the last good sync: {', '.join(kernels)}"
        msg += ". The CUDA context is now unusable: arrays on this device are lost"
        if device is not None:
            device.lost = msg
        raise CudaKernelError(msg, code, name)
    if device is not None and device.lost:
        raise CudaContextLost(device.lost, code, name)
    raise CudaError(f"{what} failed: {name} ({text})", code, name)


def check(res, what: str, device=None):
    """Check a cuda.bindings result tuple; return the value(s) after the error code."""
    err = res[0]
    if err != 0:
        raise_error(err, what, device)
    n = len(res)
    if n == 1:
        return None
    if n == 2:
        return res[1]
    return res[1:]
