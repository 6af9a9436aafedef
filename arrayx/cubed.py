"""Cubed on arrayx: chunked, memory-bounded array plans whose chunks are arrayx arrays.

Cubed (cubed-dev/cubed, ``pip install "arrayx[cubed]"``) runs Array API code chunk by chunk, on
local threads or processes, Dask, Ray, Lithops or Modal. It reads the namespace of its chunks
once, when it is first imported, from ``CUBED_BACKEND_ARRAY_API_MODULE``; every worker process
it starts imports it again and reads the same variable. So set it up before the first
``import cubed``::

    import arrayx.cubed
    arrayx.cubed.configure()                 # or configure("cuda:0"), configure("cpu")

    import cubed
    import cubed.array_api as cxp

    spec = cubed.Spec(work_dir="/tmp/cubed", allowed_mem="4GB")
    def x():
        return arrayx.cubed.random((50_000, 50_000), chunks=(10_000, 10_000), seed=0, spec=spec)
    mean, std = cubed.compute(cxp.mean(x()), cxp.std(x()))

(Cubed fuses an array into the one operation that reads it; an array that two operations read
is stored whole in the work dir first, so a virtual array is built once per reader.)

What :func:`configure` does, and why:

* ``CUBED_BACKEND_ARRAY_API_MODULE=arrayx`` in ``os.environ``, so worker processes inherit it;
* ``ARRAYX_DEVICE`` in ``os.environ`` and the default device of this process: chunks are created
  on the default device of whichever process runs the task, so every worker gets the same one;
* on a GPU, implicit host copies (``ARRAYX_IMPLICIT_HOST_COPY=1`` and
  ``set_implicit_host_copy(True)``): Cubed stores each task's result in Zarr through
  ``np.asarray(chunk)`` and reads its inputs back with ``asarray``, so every task's inputs and
  outputs cross to the host (one ``ImplicitHostCopyWarning`` per process says so). Reductions move
  little (their partial results are small); a plan of large elementwise steps is bound by these
  copies.

:func:`random` draws a virtual array's chunks on the chunk's device with ``arrayx.random``
(``cubed.random.random`` draws them with NumPy on the host and copies them in).

What Cubed would need upstream to run arrayx (or any array API namespace) without this module:
a way to pick the backend other than an import-time environment variable; chunk storage on the
device (its Zarr path takes device buffers from CuPy only, ``backend_array_api`` special-cases
the name "cupy"); and the standard's forms of four calls where it uses NumPy's (arrayx accepts
both; array-api-strict only the standard's): ``take`` with a 1-D index array in its ``var``
combine step (it passes an int), ``squeeze`` with an axis in ``groupby`` (none), ``full`` in
``map_overlap`` (it calls ``full_like(x, v, shape=...)``) and an array ``append`` for ``diff``
in ``groupby`` (an int).
"""

from __future__ import annotations

import os
import sys

from . import _dtypes as dt
from . import random as arrayx_random
from ._devices import Device, default_device, parse_device, set_default_device
from ._settings import ENV_VAR as _IMPLICIT_HOST_COPY_ENV
from ._settings import set_implicit_host_copy
from ._validation import check_int, index_tuple

__all__ = ["configure", "random"]

BACKEND_ENV_VAR = "CUBED_BACKEND_ARRAY_API_MODULE"


def configure(device=None) -> Device:
    """Make Cubed's chunks arrayx arrays on `device` (default: arrayx's default device) in this
    process and in the worker processes it starts; returns that device.

    Call it before the first ``import cubed``: Cubed fixes its backend when it is imported, and a
    RuntimeError says so if it was already imported with another one."""
    device = default_device() if device is None else parse_device(device)
    loaded = sys.modules.get("cubed.backend_array_api")
    if loaded is not None and getattr(loaded.namespace, "__name__", None) != "arrayx":
        raise RuntimeError(
            f"cubed was imported with the array backend {loaded.namespace.__name__!r} before "
            f"arrayx.cubed.configure(): call configure() before the first `import cubed` (or set "
            f"{BACKEND_ENV_VAR}=arrayx in the environment)")
    os.environ[BACKEND_ENV_VAR] = "arrayx"
    os.environ["ARRAYX_DEVICE"] = str(device)
    set_default_device(device)
    if device.kind != "cpu":
        os.environ[_IMPLICIT_HOST_COPY_ENV] = "1"
        set_implicit_host_copy(True)
    return device


def _regular_chunks(shape: tuple, chunks) -> tuple:
    """Cubed's chunks of `shape` for an int or a tuple of ints: full chunks and a last partial one
    along each axis."""
    sizes = index_tuple(chunks, "random", "chunks")
    if len(sizes) == 1 and len(shape) != 1:
        sizes *= len(shape)
    if len(sizes) != len(shape):
        raise ValueError(f"random(): chunks {chunks!r} do not match the shape {shape}")
    out = []
    for n, c in zip(shape, sizes):
        if c <= 0:
            raise ValueError(f"random(): chunk sizes must be positive, got {chunks!r}")
        full, rest = divmod(n, c)
        out.append((c,) * full + ((rest,) if rest else ()) or (0,))
    return tuple(out)


def _random_block(x, *, seed, float_dtype, block_id):
    # One stream per block, keyed by (seed, block index): the same whichever worker runs it.
    rng = arrayx_random.default_rng([seed, *block_id])
    return rng.random(x.shape, dtype=float_dtype)


def random(shape, *, chunks, seed: int, dtype=dt.float64, spec=None):
    """A Cubed array of uniform floats in [0, 1): each chunk is drawn where its task runs, on
    that worker's default device, by ``arrayx.random.default_rng([seed, *block_index])``.

    The values depend on the seed and the chunking (one stream per chunk), not on the executor,
    and are the same on cpu and cuda, bit for bit. `chunks` is an int or a tuple of ints."""
    import cubed

    shape = index_tuple(shape, "random", "shape")
    if any(n < 0 for n in shape):
        raise ValueError(f"random(): negative dimension in shape {shape}")
    dtype = dt.canonical_dtype(dtype)
    if dtype not in (dt.float32, dt.float64):
        raise TypeError(f"random(): dtype must be float32 or float64, got {dtype}")
    seed = check_int(seed, "random", "seed")
    if seed < 0:
        raise ValueError(f"random(): seed must be >= 0, got {seed}")
    return cubed.map_blocks(_random_block, dtype=dtype, chunks=_regular_chunks(shape, chunks),
                            spec=spec, seed=seed, float_dtype=dtype)
