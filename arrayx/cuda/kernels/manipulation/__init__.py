"""Data movement: concat, roll and repeat, as copies of views into a new array.

Every piece is a copy from a view of an input into a view of the output, done by the cheapest
engine its layout allows (``copy_into``):

* both views contiguous: one ``cuMemcpyDtoDAsync`` (the copy engine runs at the device-to-device
  copy ceiling: concat along axis 0, roll of a 1-D array);
* both views 2-D after collapsing dims, rows contiguous and at least ``MIN_PITCHED_ROW`` bytes
  wide, positive pitches: one ``cuMemcpy2DAsync`` (concat along an inner axis of contiguous
  inputs, roll along the last axis);
* anything else: the elementwise strided copy kernel (elementwise.assign).

concat writes each input into its slab of the output; roll copies at most 2^k pieces for k
rolled axes (each rolled axis splits into two ranges); repeat by an int copies a broadcast view
(stride 0 on a new axis after `axis`) in one strided copy. repeat by an array: the inclusive
cumulative sum of the repeats (the scan family), one small kernel that flags negative repeats and
fetches the total (one synchronisation for both), one kernel that finds each output position's
source by binary search in the sums (no arange, no searchsorted output besides the indices),
then one gather (kernels/gather_scatter) without the bounds check, the sources being in range by
construction.
"""

from __future__ import annotations

import itertools

import numpy as np

from ...engine import compiler, copies, layout, runtime, transfer
from .. import elementwise, gather_scatter
from ...engine.array import CudaArray, new_array
from ...engine.layout import c_strides
from .._common import PREAMBLE

MIN_PITCHED_ROW = 512  # bytes: narrower rows take the copy kernel (cuMemcpy2DAsync's per-row cost)
BLOCK = 256  # threads per block of the repeat kernels (one thread per element)

MAX_PITCH = (1 << 31) - 1  # the largest pitch cuMemcpy2DAsync accepts
_I64 = np.dtype("int64")


def _memcpy_2d(dev, dst_ptr, dst_pitch, src_ptr, src_pitch, width, rows, dst, src):
    d = runtime.driver()
    p = d.CUDA_MEMCPY2D()
    device = d.CUmemorytype.CU_MEMORYTYPE_DEVICE
    p.srcMemoryType, p.srcDevice, p.srcPitch = device, src_ptr, src_pitch
    p.dstMemoryType, p.dstDevice, p.dstPitch = device, dst_ptr, dst_pitch
    p.WidthInBytes, p.Height = width, rows
    stream = dev.stream
    stream.encoder.flush()
    err = d.cuMemcpy2DAsync(p, stream.handle)[0]
    if err != 0:
        runtime.raise_error(err, "cuMemcpy2DAsync", dev)
    stream.encoder.hold(dst.buffer, src.buffer)


def copy_into(dst: CudaArray, src: CudaArray) -> None:
    """dst[...] = src for two views of one shape and dtype that do not overlap."""
    if dst.size == 0:
        return
    dev = runtime.get_device(dst.device_index)
    if dst.c_contig and src.c_contig:
        copies.memcpy_d2d(dev, dst, src)
        return
    cshape, (dst_st, src_st) = layout.collapse(dst.shape, dst.strides, src.strides)
    isz = dst.dtype.itemsize
    if len(cshape) == 2 and dst_st[1] == 1 and src_st[1] == 1:
        width = cshape[1] * isz
        pitches = (dst_st[0] * isz, src_st[0] * isz)
        if width >= MIN_PITCHED_ROW and all(width <= p <= MAX_PITCH for p in pitches):
            _memcpy_2d(dev, dst.ptr, pitches[0], src.ptr, pitches[1], width, cshape[0], dst, src)
            return
    elementwise.assign(dst, src)


def concat(arrays, axis):
    first = arrays[0]  # the namespace made every array one dtype, on one device
    dev = runtime.get_device(first.device_index)
    shape = first.shape[:axis] + (sum(a.shape[axis] for a in arrays),) + first.shape[axis + 1:]
    out = new_array(dev.index, shape, first.dtype, dev.allocator)
    start = 0
    for a in arrays:
        copy_into(out.view(a.shape, out.strides, start * out.strides[axis]), a)
        start += a.shape[axis]
    return out


def roll(a, shift, axes):
    if axes is None:
        flat = elementwise.copy(a) if not a.c_contig else a
        flat = flat.view((a.size,), (1,), flat.offset, True)
        return roll(flat, (sum(shift),), (0,)).view(a.shape, c_strides(a.shape), 0, True)
    dev = runtime.get_device(a.device_index)
    out = new_array(dev.index, a.shape, a.dtype, dev.allocator)
    if out.size == 0:
        return out
    total = {}
    for s, ax in zip(shift, axes):  # an axis named twice rolls by the sum
        total[ax] = total.get(ax, 0) + s
    rolled = {ax: s % a.shape[ax] for ax, s in total.items() if s % a.shape[ax]}
    order = sorted(rolled)
    # along a rolled axis of size n by s: source [0, n - s) -> [s, n) and [n - s, n) -> [0, s)
    for parts in itertools.product((0, 1), repeat=len(order)):
        part = dict(zip(order, parts))
        shape, src_off, dst_off = [], a.offset, 0
        for d, n in enumerate(a.shape):
            if d not in part:
                shape.append(n)
                continue
            s = rolled[d]
            src_start, dst_start, length = (0, s, n - s) if part[d] == 0 else (n - s, 0, s)
            shape.append(length)
            src_off += src_start * a.strides[d]
            dst_off += dst_start * out.strides[d]
        copy_into(out.view(shape, out.strides, dst_off), a.view(shape, a.strides, src_off))
    return out


def _repeat_int(a, r, axis):
    expanded = a.shape[:axis + 1] + (r,) + a.shape[axis + 1:]
    src = a.view(expanded, a.strides[:axis + 1] + (0,) + a.strides[axis + 1:], a.offset)
    out = elementwise.copy(src)
    shape = a.shape[:axis] + (a.shape[axis] * r,) + a.shape[axis + 1:]
    return out.view(shape, c_strides(shape), out.offset, True)


_SOURCES = '''
def repeat_check(info, reps, cum, n):
    j = int64(cuda.blockIdx.x) * cuda.blockDim.x + cuda.threadIdx.x
    if j < n:
        if reps[j] < 0:
            info[0] = int64(1)
        if j == 0:
            info[1] = cum[n - 1]


def repeat_sources(out, cum, n, total):
    p = int64(cuda.blockIdx.x) * cuda.blockDim.x + cuda.threadIdx.x
    if p < total:
        lo = int64(0)
        hi = n
        while lo < hi:  # the first position whose inclusive sum exceeds p
            mid = (lo + hi) >> 1
            if cum[mid] <= p:
                lo = mid + 1
            else:
                hi = mid
        out[p] = lo
'''
_ARGTYPES = {"repeat_check": ("int64*", "int64*", "int64*", "int64"),
             "repeat_sources": ("int64*", "int64*", "int64", "int64")}


def _spec(entry: str) -> compiler.KernelSpec:
    return compiler.KernelSpec(entry, PREAMBLE + _SOURCES, entry, _ARGTYPES[entry])


def _kernel(dev_index, entry):
    return compiler.cached_kernel(dev_index, "manipulation", entry, lambda: _spec(entry))


def precompile_specs():
    """The two repeat kernels."""
    return [_spec(entry) for entry in _ARGTYPES]


def repeat(a, repeats, axis):
    if not isinstance(repeats, CudaArray):
        return _repeat_int(a, repeats, axis)
    n = a.shape[axis]
    if repeats.size == 1:  # one count for every element
        r = int(transfer.to_host(repeats).reshape(-1)[0])
        if r < 0:
            raise ValueError("repeat(): repeats must be non-negative")
        return _repeat_int(a, r, axis)
    from .. import scan
    dev = runtime.get_device(a.device_index)
    stream = dev.stream
    if n == 0:
        return new_array(dev.index, a.shape, a.dtype, dev.allocator)
    reps = repeats if repeats.dtype == _I64 and repeats.c_contig else \
        elementwise.astype(repeats, _I64)
    cum = scan.cumulative("cumulative_sum", reps, 0, _I64, False)
    if not cum.c_contig:
        cum = elementwise.copy(cum)
    info = elementwise.fill(new_array(dev.index, (2,), _I64, dev.allocator), 0)
    grid, block = layout.launch_1d(n, BLOCK)
    _kernel(dev.index, "repeat_check")(
        stream, grid, block, (info.ptr, reps.ptr, cum.ptr, n), (info.buffer, reps.buffer, cum.buffer),
        16 * n)
    negative, total = (int(v) for v in transfer.to_host(info))
    if negative:
        raise ValueError("repeat(): repeats must be non-negative")
    sources = new_array(dev.index, (total,), _I64, dev.allocator)
    if total:
        grid, block = layout.launch_1d(total, BLOCK)
        _kernel(dev.index, "repeat_sources")(
            stream, grid, block, (sources.ptr, cum.ptr, n, total), (sources.buffer, cum.buffer),
            8 * total)
    shape = a.shape[:axis] + (total,) + a.shape[axis + 1:]
    strides = a.strides[:axis] + (0,) + a.strides[axis + 1:]
    ist = (0,) * axis + (1,) + (0,) * (a.ndim - axis - 1)
    spec = gather_scatter.IndexSpec(sources, ist, n, a.strides[axis])
    return gather_scatter.gather(a, a.offset, shape, strides, [spec], "repeat", check=False)


PRIMITIVES = {"concat": concat, "roll": roll, "repeat": repeat}
