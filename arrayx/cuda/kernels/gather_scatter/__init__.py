"""The gather/scatter kernel family: take, take_along_axis, and the keys of ``x[key]`` and
``x[key] = value`` (basic keys as views: ``basic_view``; keys with integer or boolean arrays as
gathers and scatters).

Every one of these is one computation. Over an output (for a scatter: the selection) of some
shape, element ``c`` lives at

    base + sum_d c_d * st_d + sum_k wrap_k(idx_k[sum_d c_d * ist_kd]) * ax_k

in the source (the destination of a scatter): ``st`` strides the sliced dims (0 on the dims the
index arrays produce), index array ``k`` is read at its own strides over the output (0 where it
broadcasts) and moves along one axis of size ``n_k`` and stride ``ax_k``. ``wrap`` adds ``n_k``
to a negative index. take is one index array over (pre, m, post); take_along_axis one whose
strides are those of `indices`; a key of integer arrays one per array, broadcast together and
placed as NumPy places them (``plan_key``). Python ints in a key with arrays are NumPy's 0-d
advanced indices: a constant offset that takes part in the placement rule.

Bounds: an index outside [-n, n) is clamped to 0 (a gather reads a valid element) or skipped (a
scatter writes nothing there), and sets a per-stream device flag. Every writer stores the same
value 1, so plain stores are race-free without atomics. The host reads the flag once after the
launch (one 4-byte copy: the one synchronisation) and raises IndexError: never an illegal memory
access, and the context lives on (PyTorch's device-side assert kills it). A scatter first
runs a check-only kernel and reads its flag, so a key with a bad index writes nothing, as in
NumPy (still one synchronisation).

Data moves as raw bits: one unsigned integer of the itemsize (complex64 as one uint64, bool as
uint8) and complex128 as one 16-byte vector access, so a scattered element is always written by
one store, never torn. Layouts, chosen on the host after collapsing dims (layout.collapse):

* ``vec`` (gather over a 1-D collapsed output whose index array is contiguous and aligned): each
  thread loads U vectors of V = min(8, 16 // index itemsize) indices with 16-byte loads and keeps
  U * V = 8 independent random reads in flight (a random read moves a 32-byte sector whatever its
  size: latency, not bandwidth, bounds a gather unless many are outstanding), then stores them as
  vectors.
* ``nd``: anything else, U = 4 elements per thread, every index load issued before the checks and
  every data load issued after them, so each thread has 4 loads in flight in both phases;
  specialised on the padded dim count and 32/64-bit coordinate arithmetic, like elementwise.

Modules: ``source`` generates the kernels (and lists the precompiled ones), ``tuning`` holds the
knobs; this one plans and launches them and turns keys into gathers and scatters.

Keys holding exactly one boolean array (and ints, slices, None, Ellipsis) go to the mask
selection kernels of the mask family; other boolean arrays become integer arrays through mask.nonzero.
"""

from __future__ import annotations

import operator

import numpy as np

from ...engine import compiler, layout, runtime, transfer
from .. import elementwise
from .._common import padded_dims
from ...engine.array import CudaArray, new_array
from ...engine.layout import c_strides
from .source import kernel_spec, precompile_specs, storage  # noqa: F401  (the family's API)
from .tuning import BLOCK, ND_UNROLL, VEC_ELEMENTS

_U32 = np.dtype("uint32")


# ---- launching ------------------------------------------------------------------------------

class IndexSpec:
    """One index array of a gather/scatter: read at `strides` (elements, over the output dims),
    moving along an axis of size `n` and stride `ax` (elements) of the indexed array."""

    __slots__ = ("array", "strides", "n", "ax")

    def __init__(self, array: CudaArray, strides: tuple, n: int, ax: int):
        self.array, self.strides, self.n, self.ax = array, tuple(strides), n, ax


_flags: dict = {}  # (device, stream handle) -> the uint32 error flag of that stream


def _flag(dev, stream) -> CudaArray:
    key = (dev.index, stream.ptr)
    f = _flags.get(key)
    if f is None:
        f = new_array(dev.index, (1,), _U32, dev.allocator)
        elementwise.fill(f, 0)
        _flags[key] = f
    return f


def _raise_if_flagged(flag: CudaArray, what: str, sizes):
    """The one synchronisation: read the flag the kernel may have set; reset it and raise."""
    if transfer.to_host(flag)[0]:
        elementwise.fill(flag, 0)
        sizes = ", ".join(str(n) for n in sizes)
        raise IndexError(f"{what}: an index is out of bounds (each index i must satisfy "
                         f"-n <= i < n for an axis of size n; sizes: {sizes})")


def _check_empty_axes(specs, what):
    for s in specs:
        if s.n == 0 and s.array.size:
            raise IndexError(f"{what}: cannot index an axis of size 0 with a non-empty index array")


def plan_launch(op, main_ptr: int, other_ptr: int, dtype: np.dtype, shape, main_strides,
                other_strides, specs, flag_ptr: int):
    """(kernel_spec arguments, launch arguments, grid) of one gather (`main` the source, `other`
    the contiguous output) or scatter (`main` the destination, `other` the values, read at
    `other_strides`) over `shape`. Pure host arithmetic (tests/cuda/test_indexing_host.py runs
    the kernel source it selects on the host)."""
    n = 1
    for m in shape:
        n *= m
    gather_op = op == "gather"
    # a check moves no data: one kernel per index dtypes, whatever the array's dtype
    elem, wide = storage(dtype, [main_ptr, other_ptr]) if op != "check" else ("uint8", False)
    cshape, cst = layout.collapse(shape, other_strides, main_strides, *(s.strides for s in specs))
    idx_dtypes = tuple(s.array.dtype for s in specs)
    first = [other_ptr, main_ptr] if gather_op else [main_ptr, other_ptr]
    ptrs = [s.array.ptr for s in specs]
    axes = [v for s in specs for v in (s.n, s.ax)]
    if gather_op and len(specs) == 1 and len(cshape) == 1 and cst[1] == (0,) \
            and cst[2] == (1,):
        V = min(VEC_ELEMENTS, 16 // idx_dtypes[0].itemsize)
        if ptrs[0] % (V * idx_dtypes[0].itemsize) == 0 and other_ptr % 16 == 0:
            return ((op, elem, wide, idx_dtypes, "vec", 1, 64, V),
                    first + ptrs + [flag_ptr, n] + axes, -(-n // (BLOCK * VEC_ELEMENTS)))
    D = padded_dims(len(cshape))
    pad = D - len(cshape)
    cshape = (1,) * pad + tuple(cshape)
    cst = [(0,) * pad + tuple(st) for st in cst]
    bits = 32 if n <= layout.INT32_MAX else 64
    args = first + ptrs + [flag_ptr, n] + list(cshape) + list(cst[1])
    if not gather_op:
        args += list(cst[0])
    for st in cst[2:]:
        args += list(st)
    return (op, elem, wide, idx_dtypes, "nd", D, bits), args + axes, -(-n // (BLOCK * ND_UNROLL))


def _launch(op, main: CudaArray, main_ptr: int, other: CudaArray, shape, main_strides,
            other_strides, specs, what, check):
    dev = runtime.get_device(main.device_index)
    stream = dev.stream
    flag = _flag(dev, stream)
    spec_args, args, grid = plan_launch(op, main_ptr, other.ptr, main.dtype, shape,
                                        main_strides, other_strides, specs, flag.ptr)
    kern = compiler.cached_kernel(dev.index, "indexing", spec_args, lambda: kernel_spec(*spec_args))
    keep = (main.buffer, other.buffer, flag.buffer) + tuple(s.array.buffer for s in specs)
    n = 1
    for m in shape:
        n *= m
    nbytes = n * (2 * main.dtype.itemsize + sum(s.array.dtype.itemsize for s in specs))
    kern(stream, grid, BLOCK, args, keep, nbytes)
    if check:
        _raise_if_flagged(flag, what, [s.n for s in specs])


def gather(src: CudaArray, offset: int, shape, src_strides, specs, what="indexing",
           check=True) -> CudaArray:
    """A new C-contiguous array of `shape`: element c is src's buffer element
    offset + sum(c * src_strides) + sum(wrapped index * ax) (module docstring)."""
    dev = runtime.get_device(src.device_index)
    out = new_array(dev.index, tuple(shape), src.dtype, dev.allocator)
    if out.size == 0:
        return out
    _check_empty_axes(specs, what)
    ptr = src.buffer.ptr + offset * src.dtype.itemsize
    _launch("gather", src, ptr, out, out.shape, tuple(src_strides), c_strides(out.shape), specs,
            what, check)
    return out


def scatter(dst: CudaArray, offset: int, shape, dst_strides, specs, value, what="indexing"):
    """Write `value` (a Python scalar or a CudaArray of dst's dtype and device, broadcastable to
    `shape`) into the selection of `shape` (element c at dst's buffer element
    offset + sum(c * dst_strides) + indices)."""
    n = 1
    for m in shape:
        n *= m
    if not isinstance(value, CudaArray):
        value = _scalar_array(dst, value)
    value = _drop_leading_ones(value, len(shape))
    if n == 0:
        return
    _check_empty_axes(specs, what)
    if value.size and elementwise.overlaps(dst, value):
        value = elementwise.copy(value)  # x[i] = x[::-1][j]: read everything before writing
    vst = layout.broadcast_strides(value.shape, value.strides, tuple(shape))
    ptr = dst.buffer.ptr + offset * dst.dtype.itemsize
    # NumPy writes nothing when an index is out of range: check every index first (the one
    # synchronisation), then write without a second look at the flag
    _launch("check", dst, ptr, value, tuple(shape), tuple(dst_strides), vst, specs, what, True)
    _launch("scatter", dst, ptr, value, tuple(shape), tuple(dst_strides), vst, specs, what, False)


def _scalar_array(like: CudaArray, value) -> CudaArray:
    dev = runtime.get_device(like.device_index)
    out = new_array(dev.index, (), like.dtype, dev.allocator)
    return elementwise.fill(out, value)


def _drop_leading_ones(value: CudaArray, rank: int) -> CudaArray:
    """`value` (which the namespace checked to broadcast to the selection) viewed with at most
    `rank` dims: leading dims of size 1 dropped (NumPy allows them in an assigned value)."""
    while value.ndim > rank and value.shape[0] == 1:
        value = value.view(value.shape[1:], value.strides[1:], value.offset)
    return value


# ---- the primitives -------------------------------------------------------------------------

def take(a: CudaArray, indices: CudaArray, axis: int) -> CudaArray:
    shape = a.shape[:axis] + (indices.shape[0],) + a.shape[axis + 1:]
    strides = a.strides[:axis] + (0,) + a.strides[axis + 1:]
    ist = (0,) * axis + (indices.strides[0],) + (0,) * (a.ndim - axis - 1)
    spec = IndexSpec(indices, ist, a.shape[axis], a.strides[axis])
    return gather(a, a.offset, shape, strides, [spec], "take")


def take_along_axis(a: CudaArray, indices: CudaArray, axis: int) -> CudaArray:
    strides = a.strides[:axis] + (0,) + a.strides[axis + 1:]
    spec = IndexSpec(indices, indices.strides, a.shape[axis], a.strides[axis])
    return gather(a, a.offset, indices.shape, strides, [spec], "take_along_axis")


class BoolScalar:
    """A 0-d boolean index: NumPy's new axis of length 1 (True) or 0 (False), an advanced index
    of that shape (it selects everything or nothing)."""

    def __init__(self, value: bool):
        self.shape = (1,) if value else (0,)


def _is_bool_array(k) -> bool:
    return isinstance(k, CudaArray) and k.dtype == np.bool_


def _expand_key(a: CudaArray, key: tuple) -> tuple:
    """0-d boolean arrays become BoolScalar (one sync each), boolean arrays of any other rank
    their integer arrays (mask.nonzero: one index array per masked dimension)."""
    out = []
    for k in key:
        if _is_bool_array(k):
            if k.ndim == 0:
                out.append(BoolScalar(bool(transfer.to_host(k)[()])))
            else:
                from .. import mask
                out.extend(mask.nonzero(k))
        else:
            out.append(k)
    return tuple(out)


def basic_view(a: CudaArray, key: tuple) -> CudaArray:
    """The view selected by a tuple of int (in range, non-negative), slice, None and at most one
    Ellipsis."""
    n_real = sum(1 for k in key if k is not None and k is not Ellipsis)
    shape, strides = [], []
    offset = a.offset
    dim = 0
    for k in key:
        if k is None:
            shape.append(1)
            strides.append(0)
        elif k is Ellipsis:
            for _ in range(a.ndim - n_real):
                shape.append(a.shape[dim])
                strides.append(a.strides[dim])
                dim += 1
        elif isinstance(k, slice):
            start, stop, step = k.indices(a.shape[dim])
            length = len(range(start, stop, step))
            if length:
                offset += start * a.strides[dim]
            shape.append(length)
            strides.append(a.strides[dim] * step)
            dim += 1
        else:
            if compiler.DEBUG:
                assert 0 <= k < a.shape[dim], f"index {k} out of range for axis {dim}"
            offset += k * a.strides[dim]
            dim += 1
    while dim < a.ndim:
        shape.append(a.shape[dim])
        strides.append(a.strides[dim])
        dim += 1
    return a.view(shape, strides, offset)


def plan_key(shape, strides, offset, key):
    """Where a key of ints, slices, None, Ellipsis, integer index arrays (anything with .shape
    and .strides) and BoolScalar puts each element, in NumPy's order: returns (offset, output
    shape, source strides over it, [(index array, its strides over the output, n, ax)]). The
    index arrays' dims are broadcast together; they stand where the first advanced index stood
    when all advanced indices (Python ints included) are adjacent in the key, else first."""
    ndim = len(shape)
    consumed = sum(1 for k in key if k is not None and k is not Ellipsis
                   and not isinstance(k, BoolScalar))
    basic = []     # (size, stride) of the result dims that slices and None make
    advanced = []  # (shape, index array or None, n, ax)
    positions = []
    insert_at = None
    dim = 0
    for pos, k in enumerate(key):
        if k is None:
            basic.append((1, 0))
        elif k is Ellipsis:
            for _ in range(ndim - consumed):
                basic.append((shape[dim], strides[dim]))
                dim += 1
        elif isinstance(k, slice):
            start, stop, step = k.indices(shape[dim])
            length = len(range(start, stop, step))
            if length:
                offset += start * strides[dim]
            basic.append((length, strides[dim] * step))
            dim += 1
        else:
            if insert_at is None:
                insert_at = len(basic)
            positions.append(pos)
            if isinstance(k, BoolScalar):
                advanced.append((k.shape, None, 1, 0))
                continue
            if hasattr(k, "shape"):
                advanced.append((tuple(k.shape), k, shape[dim], strides[dim]))
            else:  # a Python int among arrays: a 0-d advanced index, a constant offset
                i = operator.index(k)
                if not -shape[dim] <= i < shape[dim]:
                    raise IndexError(f"index {i} is out of bounds for axis {dim} with size "
                                     f"{shape[dim]}")
                offset += (i + shape[dim] if i < 0 else i) * strides[dim]
                advanced.append(((), None, shape[dim], strides[dim]))
            dim += 1
    basic += [(shape[d], strides[d]) for d in range(dim, ndim)]
    bshape = layout.broadcast_shape(*(s for s, _, _, _ in advanced)) if advanced else ()
    if insert_at is None or positions != list(range(positions[0], positions[-1] + 1)):
        insert_at = 0
    before, after = basic[:insert_at], basic[insert_at:]
    out_shape = tuple(m for m, _ in before) + bshape + tuple(m for m, _ in after)
    src_strides = tuple(s for _, s in before) + (0,) * len(bshape) + tuple(s for _, s in after)
    specs = []
    for _, arr, n, ax in advanced:
        if arr is not None:
            ist = layout.broadcast_strides(arr.shape, arr.strides, bshape)
            specs.append((arr, (0,) * len(before) + tuple(ist) + (0,) * len(after), n, ax))
    return offset, out_shape, src_strides, specs


def _mask_route(a: CudaArray, key: tuple):
    """For a key whose only array is one boolean array of rank >= 1: (the basic view with the
    mask's dims first, the mask, where NumPy puts the selection's dim). None otherwise."""
    arrays = [i for i, k in enumerate(key) if isinstance(k, CudaArray)]
    if len(arrays) != 1 or not _is_bool_array(key[arrays[0]]) or key[arrays[0]].ndim == 0:
        return None
    at = arrays[0]
    mask = key[at]
    k = mask.ndim
    n_real = sum(1 for e in key if e is not None and e is not Ellipsis) - 1 + k
    q = 0  # result dims made by the entries before the mask
    for e in key[:at]:
        if e is None or isinstance(e, slice):
            q += 1
        elif e is Ellipsis:
            q += a.ndim - n_real
    view = basic_view(a, key[:at] + (slice(None),) * k + key[at + 1:])
    order = list(range(q, q + k)) + [d for d in range(view.ndim) if not q <= d < q + k]
    view = view.view([view.shape[d] for d in order], [view.strides[d] for d in order], view.offset)
    adv = [i for i, e in enumerate(key) if i == at or (e is not None and e is not Ellipsis
                                                        and not isinstance(e, slice))]
    place = q if adv == list(range(adv[0], adv[-1] + 1)) else 0
    return view, mask, place


def getitem(a: CudaArray, key: tuple) -> CudaArray:
    """x[key] for a key with index arrays (primitives.getitem takes basic keys as views)."""
    route = _mask_route(a, key)
    if route is not None:
        from .. import mask as _mask
        view, mask, place = route
        r = _mask.select_by_mask(view, mask)
        order = list(range(1, place + 1)) + [0] + list(range(place + 1, r.ndim))
        return r.view([r.shape[d] for d in order], [r.strides[d] for d in order], r.offset)
    offset, shape, strides, specs = plan_key(a.shape, a.strides, a.offset, _expand_key(a, key))
    if not specs:  # only constant advanced indices: a view, copied (advanced keys copy)
        return elementwise.copy(a.view(shape, strides, offset))
    return gather(a, offset, shape, strides, [IndexSpec(*s) for s in specs])


def setitem(a: CudaArray, key: tuple, value) -> None:
    """x[key] = value for a key with index arrays; `value` a Python scalar or a CudaArray of a's
    dtype on a's device."""
    route = _mask_route(a, key)
    if route is not None:
        from .. import mask as _mask
        view, mask, place = route
        if elementwise.overlaps(a, mask):
            mask = elementwise.copy(mask)  # x[x] = False: read the whole mask before writing
        if isinstance(value, CudaArray):
            if elementwise.overlaps(a, value):
                value = elementwise.copy(value)
            # the selection is (rest[:place], count, rest[place:]); the kernel wants count first
            rank = view.ndim - mask.ndim + 1
            if value.ndim < rank:
                pad = rank - value.ndim
                value = value.view((1,) * pad + value.shape, (0,) * pad + value.strides,
                                   value.offset)
            value = _drop_leading_ones(value, rank)
            order = [place] + [d for d in range(value.ndim) if d != place]
            value = value.view([value.shape[d] for d in order], [value.strides[d] for d in order],
                               value.offset)
        _mask.assign_by_mask(view, mask, value)
        return
    # x[x[:2]] = v: the indices are read while the kernel writes, so they must not alias x
    key = tuple(elementwise.copy(k) if isinstance(k, CudaArray) and k.size and
                elementwise.overlaps(a, k) else k for k in _expand_key(a, key))
    offset, shape, strides, specs = plan_key(a.shape, a.strides, a.offset, key)
    if not specs:
        elementwise.assign(a.view(shape, strides, offset), value)  # drops value's leading 1s
        return
    scatter(a, offset, shape, strides, [IndexSpec(*s) for s in specs], value)


PRIMITIVES = {"take": take, "take_along_axis": take_along_axis}
