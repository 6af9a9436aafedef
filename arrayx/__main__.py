"""``python -m arrayx``: the versions, the default device and the devices found.

When no GPU is usable it says why (numba-cuda or cuda-bindings missing, no driver, a driver
error, no device), so a broken GPU setup does not pass for a CPU-only machine. Exit status 0
either way: a machine without a GPU is a valid setup.

``python -m arrayx warmup [--device cuda:N | --cc X.Y] [--jobs N] [--only NAME,...]`` fills the
kernel cache ahead of time (``arrayx.cuda.precompile``; ``--help`` for its options).
"""

from __future__ import annotations

import importlib.metadata
import os
import platform
import sys


def _version(distribution: str) -> str | None:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def _driver_version() -> str:
    """The CUDA version the installed driver supports, e.g. '13.0' (needs a working driver)."""
    from arrayx.cuda.engine.driver import driver
    err, version = driver().cuDriverGetVersion()
    return f"{version // 1000}.{version % 1000 // 10}" if err == 0 else f"unknown (error {err})"


def _cuda_lines(count: int) -> list[str]:
    """One line per CUDA device: name, compute capability, memory (or why it cannot be
    opened)."""
    import arrayx.cuda as cuda
    lines = []
    for i in range(count):
        try:
            dev = cuda.get_device(i)
        except Exception as e:  # a device the driver lists but cannot open: say so, go on
            lines.append(f"  cuda:{i}: cannot be opened ({type(e).__name__}: {e})")
            continue
        major, minor = dev.compute_capability
        lines.append(f"  cuda:{i}: {dev.name}, compute capability {major}.{minor}, "
                     f"{dev.total_memory / 2**30:.1f} GiB")
    return lines


def report() -> list[str]:
    """The lines ``python -m arrayx`` prints."""
    import numpy as np

    import arrayx
    from arrayx import _devices

    numba_cuda = _version("numba-cuda")
    bindings = _version("cuda-bindings")
    lines = [f"arrayx {arrayx.__version__} (array API {arrayx.__array_api_version__})",
             f"python {platform.python_version()}",
             f"numpy {np.__version__}",
             f"numba-cuda {numba_cuda or 'not installed'}",
             f"cuda-bindings {bindings or 'not installed'}"]
    count = _devices.cuda_device_count()
    reason = _devices.cuda_unavailable_reason()
    if count:
        lines.append(f"CUDA driver {_driver_version()}")
    lines.append("devices:")
    lines.append("  cpu")
    lines.extend(_cuda_lines(count))
    try:
        default = _devices.default_device()
    except ValueError as e:  # a bad ARRAYX_DEVICE: the report is what helps to fix it
        lines.append(f"default device: none ({e}; fix or unset ARRAYX_DEVICE)")
    else:
        source = " (from ARRAYX_DEVICE)" if os.environ.get("ARRAYX_DEVICE") else ""
        lines.append(f"default device: {default}{source}")
    if reason:
        lines.append(f"no usable GPU: {reason}")
    return lines


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["warmup"]:
        from arrayx.cuda import precompile
        return precompile.main(argv[1:], prog="python -m arrayx warmup")
    if argv:
        print("usage: python -m arrayx [warmup [--help | OPTIONS]]", file=sys.stderr)
        return 2
    print("\n".join(report()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
