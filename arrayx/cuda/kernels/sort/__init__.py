"""Sorting on CUDA: sort and argsort through CUB's device radix sort (cuda-cccl's ``cuda.compute``).

CUB's radix sort is stable in both orders and compares floats by value except that it orders
them by bit pattern beyond that: -0.0 and +0.0 are one key (CUB maps -0.0 to +0.0 when it
extracts digits), but a NaN with the sign bit set sorts before -inf and a positive one after
+inf. NumPy puts every NaN last, so the keys of a float array are first rewritten with one
elementwise pass (``nan_canon``: every NaN -> the positive quiet NaN, other bits unchanged, done
on the unsigned-integer view of the data); then ascending order puts NaNs last and descending
order (CUB's own, still stable) puts them first, with equal elements (-0.0 and +0.0 included) in
their original order in both directions, as the CPU backend does. Integers are sorted as they
are (no pass when the rows are already contiguous).

Layouts. The sorted axis is moved last (a view); its rows, contiguous, are what CUB sorts:

* one row (a 1-D array, or every other dimension of length 1): one radix sort, keys only for
  ``sort`` and (keys, 0..n-1) pairs for ``argsort``;
* R > 1 rows of K: two stable passes. Pass 1 sorts every element by value, carrying its flat
  index p; pass 2 sorts by row, p // K (only the bits R - 1 needs), carrying the sorted values
  (``sort``) or p % K (``argsort``). Stability of pass 2 keeps pass 1's value order within each
  row. A single sort of a combined (row, value) key would save pass 1's payload for 8- to 32-bit
  values, and CUB's segmented sort exists too; the lead should measure both against this on many
  short rows before adding a second path.

The result is moved back (a permuted view copied to C order) when the axis was not last.

cuda.compute: imported on first use (it raises AttributeError without a GPU). Arrays are handed
to it as ``_Device`` views (pointer, dtype, size) rather than CudaArrays, because a built
algorithm keeps the last arrays it saw; their lifetimes are the encoder's (``libraries.end``).
Temporary storage comes from arrayx's caching allocator (size query with temp_storage=None,
then the call), and every call runs on arrayx's current stream after the queued kernels are
submitted (``libraries.begin``). Built algorithms are cached per (device, algorithm, dtypes,
order) in ``_algorithms``, and on disk beside the kernel cache (compiler.cache_dir(), files
``cccl-<hash>.bin``) through cuda.compute's ``serialize``/``deserialize``: a build compiles CUB
through NVRTC, 5 to 7 s each on the H200 (measured 2026-11-30: float32 keys 6.0 s, float32 keys
with int64 values 5.3 s), and cuda.compute itself caches builds only within a process, so without
the disk copy every test process and every program run would pay that again. ``BUILD_SECONDS``
records the time of each first build or load in this process.

Argsort carries int32 positions through CUB when the array has fewer than 2^31 elements and widens
them afterwards: sorting 2^26 float32 keys with int32 values took 2.2 ms on the H200, with int64
values 3.8 ms (keys alone 1.5 ms; CuPy's sort 1.9 ms, argsort 3.1 ms, same run).
"""

from __future__ import annotations

import hashlib
import os
import time
from types import SimpleNamespace

import numpy as np

from ...engine import compiler, runtime
from .. import elementwise
from ... import libraries
from ...engine.array import CudaArray, new_array
from ..elementwise.ops import Op, arange_op

I32 = np.dtype(np.int32)
I64 = np.dtype(np.int64)
U32 = np.dtype(np.uint32)
U64 = np.dtype(np.uint64)

_compute = None


def compute():
    """The ``cuda.compute`` module, imported on first use."""
    global _compute
    if _compute is None:
        try:
            import cuda.compute as cc
            cc.make_radix_sort  # raises AttributeError when the CUDA bindings are unavailable
        except (ImportError, AttributeError) as exc:
            raise ImportError(f"arrayx's CUDA sort, unique and isin need cuda-cccl (pip install "
                              f"'arrayx[cuda]' or 'cuda-cccl>=1.2.1,<1.3'): {exc}") from None
        _compute = cc
    return _compute


class _Device:
    """A contiguous device array as cuda.compute reads it: ``dtype``, ``size``, ``data.ptr`` (its
    fast path for the pointer) and the CUDA array interface (read while building)."""

    __slots__ = ("dtype", "size", "nbytes", "shape", "data")

    def __init__(self, a: CudaArray, dtype=None):
        self.dtype = a.dtype if dtype is None else dtype
        self.size = a.size
        self.shape = (a.size,)
        self.nbytes = a.nbytes
        self.data = SimpleNamespace(ptr=a.ptr)

    @property
    def __cuda_array_interface__(self):
        return {"shape": self.shape, "typestr": self.dtype.str, "data": (self.data.ptr, False),
                "version": 3, "strides": None}


def _device(a):
    return None if a is None else _Device(a)


_algorithms: dict = {}
BUILD_SECONDS: dict = {}  # "radix_sort float32->int64 ascending" -> seconds of its first build


def _disk_path(dev, key: tuple) -> str | None:
    folder = compiler.cache_dir()
    if not folder:
        return None
    from importlib.metadata import version
    ident = repr((key, tuple(dev.compute_capability), version("cuda-cccl")))
    return os.path.join(folder, f"cccl-{hashlib.sha256(ident.encode()).hexdigest()}.bin")


def _load(cc, path):
    try:
        with open(path, "rb") as f:
            return cc.deserialize(f.read())
    except (OSError, ValueError, TypeError):
        return None


def _store(cc, path, algo):
    try:
        blob = cc.serialize(algo)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "wb") as f:
            f.write(blob)
        os.replace(tmp, path)
    except (OSError, TypeError, ValueError):
        pass  # the cache is an optimisation: an unwritable folder only costs the next build


def _algorithm(dev, key: tuple, label: str, make):
    """The built algorithm `key` on `dev`: from memory, from the disk cache, or built by `make`."""
    algo = _algorithms.get((dev.index,) + key)
    if algo is None:
        cc = compute()
        start = time.perf_counter()
        path = _disk_path(dev, key)
        algo = _load(cc, path) if path else None
        if algo is None:
            algo = make()
            if path:
                _store(cc, path, algo)
        BUILD_SECONDS.setdefault(label, time.perf_counter() - start)
        _algorithms[(dev.index,) + key] = algo
    return algo


def _run(dev, algo, stream, args: dict, buffers):
    """Query the temporary storage, allocate it from arrayx's allocator, run, and keep every
    buffer alive until the stream is past the call."""
    nbytes = algo(temp_storage=None, **args)
    temp = libraries.device_workspace(dev, max(1, int(nbytes)))
    algo(temp_storage=_Device(temp), **args)
    libraries.end(stream, temp, *buffers)


def radix_sort(dev, keys_in: CudaArray, keys_out: CudaArray, values_in: CudaArray | None = None,
               values_out: CudaArray | None = None, descending: bool = False,
               end_bit: int | None = None) -> None:
    """Stable radix sort of the contiguous `keys_in` into `keys_out` (and `values_in` carried
    into `values_out`), on bits [0, end_bit) of the keys (all by default)."""
    cc = compute()
    stream = libraries.begin(dev)
    kin, kout, vin, vout = _Device(keys_in), _Device(keys_out), _device(values_in), _device(values_out)
    vdt = None if vin is None else vin.dtype
    order = cc.SortOrder.DESCENDING if descending else cc.SortOrder.ASCENDING
    label = f"radix_sort {kin.dtype}" + (f"->{vdt}" if vdt is not None else "") + \
        (" descending" if descending else " ascending")
    algo = _algorithm(dev, ("radix_sort", kin.dtype.str, None if vdt is None else vdt.str,
                            descending), label,
                      lambda: cc.make_radix_sort(d_in_keys=kin, d_out_keys=kout, d_in_values=vin,
                                                 d_out_values=vout, order=order))
    args = dict(d_in_keys=kin, d_out_keys=kout, d_in_values=vin, d_out_values=vout,
                num_items=keys_in.size, begin_bit=0, end_bit=end_bit, stream=stream)
    _run(dev, algo, stream, args, (keys_in, keys_out, values_in, values_out))


def inclusive_sum(dev, a: CudaArray, out: CudaArray) -> None:
    """out = cumulative sum of the contiguous `a` (same dtype)."""
    cc = compute()
    stream = libraries.begin(dev)
    din, dout = _Device(a), _Device(out)
    algo = _algorithm(dev, ("inclusive_scan", a.dtype.str), f"inclusive_scan {a.dtype} plus",
                      lambda: cc.make_inclusive_scan(d_in=din, d_out=dout, op=cc.OpKind.PLUS,
                                                     init_value=None))
    args = dict(d_in=din, d_out=dout, op=cc.OpKind.PLUS, init_value=None, num_items=a.size,
                stream=stream)
    _run(dev, algo, stream, args, (a, out))


# ---- elementwise helpers (the elementwise template, on unsigned views of the data) -------

def unsigned(dt: np.dtype) -> np.dtype:
    """The unsigned integer dtype of `dt`'s width (its bits, for bit-level operations)."""
    return np.dtype(f"uint{dt.itemsize * 8}")


def as_dtype(a: CudaArray, dt: np.dtype) -> CudaArray:
    """The same memory seen as dtype `dt` of the same itemsize."""
    return CudaArray(a.buffer, a.shape, dt, a.strides, a.offset, a.c_contig)


def float_bits(dt: np.dtype) -> dict:
    """Bit constants of a float dtype: sign bit, magnitude mask, +inf, the positive quiet NaN."""
    w = dt.itemsize * 8
    mant = 23 if w == 32 else 52
    sign = 1 << (w - 1)
    inf = ((1 << (w - 1 - mant)) - 1) << mant
    return {"sign": sign, "abs": sign - 1, "inf": inf, "qnan": inf | (1 << (mant - 1)),
            "all": (1 << w) - 1}


def nan_canon_op(dt: np.dtype) -> Op:
    """On the bits of float dtype `dt`: every NaN -> the positive quiet NaN, others unchanged."""
    u = unsigned(dt).name
    b = float_bits(dt)
    return Op(f"({u}({b['qnan']:#x}) if (x0 & {u}({b['abs']:#x})) > {u}({b['inf']:#x}) else x0)",
              (), unsigned(dt))


def _row_op(row_dt: np.dtype) -> Op:
    """x0 // x1 for a non-negative integer x0 and uint64 x1 (the row of flat index x0)."""
    return Op("uint64(x0) // x1", (), row_dt)


def _pos_op(pos_dt: np.dtype) -> Op:
    """x0 % x1 for a non-negative integer x0 and uint64 x1 (the position within the row)."""
    return Op(f"{pos_dt.name}(uint64(x0) % x1)", (), pos_dt)


def index_dtype(n: int) -> np.dtype:
    """The dtype positions among n elements travel in through CUB (int32 while they fit)."""
    return I32 if n < 1 << 31 else I64


def iota(device_index: int, n: int, dtype: np.dtype = I64) -> CudaArray:
    """0, 1, ..., n-1."""
    op, dts = arange_op(dtype)
    return elementwise.launch("arange", op, (0, 1), dts, (n,), device_index=device_index)


def _rows_last(a: CudaArray, axis: int):
    """(a with `axis` moved last, the axis order of that view)."""
    order = [d for d in range(a.ndim) if d != axis] + [axis]
    return a.view([a.shape[d] for d in order], [a.strides[d] for d in order], a.offset), order


def _sort_keys(moved: CudaArray) -> CudaArray:
    """The keys CUB sorts: `moved`'s elements, contiguous, floats with NaNs made canonical."""
    dt = moved.dtype
    if dt.kind == "f":
        u = unsigned(dt)
        keys = elementwise.launch("nan_canon", nan_canon_op(dt), (as_dtype(moved, u),), (u,),
                                  moved.shape)
        return as_dtype(keys, dt)
    return moved if moved.c_contig else elementwise.copy(moved)


def _move_back(out: CudaArray, order: list) -> CudaArray:
    """`out` (contiguous, axes in `order`) with its axes put back, C-contiguous."""
    if order == sorted(order):
        return out
    back = [order.index(d) for d in range(len(order))]
    return elementwise.copy(out.view([out.shape[i] for i in back], [out.strides[i] for i in back],
                                     out.offset))


def _sorted(a: CudaArray, axis: int, descending: bool, indices: bool) -> CudaArray:
    """sort (indices=False) or argsort (True) of a non-empty `a` with shape[axis] > 1."""
    dev = runtime.get_device(a.device_index)
    moved, order = _rows_last(a, axis)
    keys = _sort_keys(moved)
    n = a.size
    K = a.shape[axis]
    R = n // K
    alloc = dev.allocator
    idx_dt = index_dtype(n)
    out = new_array(dev.index, moved.shape, idx_dt if indices else a.dtype, alloc)
    if R == 1:
        if indices:
            radix_sort(dev, keys, new_array(dev.index, (n,), keys.dtype, alloc),
                       iota(dev.index, n, idx_dt), out, descending)
        else:
            radix_sort(dev, keys, out, descending=descending)
    else:
        # pass 1: every element by value, carrying its flat index
        sorted_keys = new_array(dev.index, (n,), keys.dtype, alloc)
        flat = new_array(dev.index, (n,), idx_dt, alloc)
        radix_sort(dev, keys, sorted_keys, iota(dev.index, n, idx_dt), flat, descending)
        # pass 2: stably by row, carrying the values or the positions within the rows
        row_dt = U32 if R <= 1 << 32 else U64
        rows = elementwise.launch("sort_row", _row_op(row_dt), (flat, K), (idx_dt, U64), (n,))
        payload = elementwise.launch("sort_pos", _pos_op(idx_dt), (flat, K), (idx_dt, U64),
                                     (n,)) if indices else sorted_keys
        radix_sort(dev, rows, new_array(dev.index, (n,), row_dt, alloc), payload, out,
                   end_bit=(R - 1).bit_length())
    if indices and idx_dt != I64:
        out = elementwise.astype(out, I64)
    return _move_back(out, order)


# ---- the primitives ------------------------------------------------------------------------

def sort(a, axis, descending, stable):
    # CUB's radix sort is stable, so `stable` needs nothing more
    if a.size == 0 or a.shape[axis] == 1:
        return elementwise.copy(a)
    return _sorted(a, axis, descending, False)


def argsort(a, axis, descending, stable):
    if a.size == 0 or a.shape[axis] == 1:
        out = new_array(a.device_index, a.shape, I64, runtime.get_device(a.device_index).allocator)
        return elementwise.fill(out, 0) if out.size else out
    return _sorted(a, axis, descending, True)


PRIMITIVES = {"sort": sort, "argsort": argsort}
