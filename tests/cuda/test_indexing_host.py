"""The CUDA gather/scatter and data-movement code, run on the host without a GPU.

Device memory is a NumPy byte array (``Heap``); CudaArrays point into it. The generated kernel
source of kernels/gather_scatter (and kernels/manipulation's repeat kernels) runs as plain Python,
one call per thread of the grid, with ``cuda``, the integer casts and vloadN/vstoreN replaced by
host versions (vector accesses assert their alignment). So the host-side planning (key
placement, collapsing, layout choice, launch arguments) and the kernels' index arithmetic
(unrolled full-block paths, tails, wrapping, bounds flag) are checked against NumPy here; the
GPU suite checks the same on the device.
"""

import numpy as np
import pytest

from arrayx.cuda.engine import copies
from arrayx.cuda.kernels import elementwise, gather_scatter, manipulation
from arrayx.cuda.kernels.gather_scatter import IndexSpec, basic_view
from arrayx.cuda.engine.array import Buffer, CudaArray
from arrayx.cuda.engine.layout import c_strides


class Heap:
    def __init__(self, nbytes=1 << 22):
        self.mem = np.zeros(nbytes, np.uint8)
        self.top = 4096

    def alloc(self, nbytes, align=256):
        ptr = -(-self.top // align) * align
        self.top = ptr + max(nbytes, 1)
        assert self.top <= self.mem.size
        return ptr

    def put(self, host) -> CudaArray:
        host = np.ascontiguousarray(host)
        ptr = self.alloc(host.nbytes)
        self.mem[ptr:ptr + host.nbytes] = host.reshape(-1).view(np.uint8)
        return CudaArray(Buffer(ptr, host.nbytes, 0), host.shape, host.dtype)

    def empty(self, shape, dtype) -> CudaArray:
        dtype = np.dtype(dtype)
        n = int(np.prod(shape))
        return CudaArray(Buffer(self.alloc(n * dtype.itemsize), n * dtype.itemsize, 0),
                         tuple(shape), dtype)

    def get(self, a: CudaArray) -> np.ndarray:
        isz = a.dtype.itemsize
        typed = self.mem.view(a.dtype) if a.dtype != np.bool_ else self.mem.view(np.bool_)
        start = a.ptr // isz
        assert a.ptr % isz == 0
        return np.lib.stride_tricks.as_strided(typed[start:], a.shape,
                                               [s * isz for s in a.strides]).copy()


class Ptr:
    def __init__(self, heap, addr, dtype):
        self.heap, self.addr, self.dtype = heap, addr, np.dtype(dtype)
        self.typed = heap.mem.view(self.dtype)

    def _at(self, i):
        i = int(i)
        pos = (self.addr + i * self.dtype.itemsize)
        assert 0 <= pos and pos + self.dtype.itemsize <= self.heap.top, "out of bounds access"
        return pos // self.dtype.itemsize

    def __getitem__(self, i):
        return self.typed[self._at(i)].item()

    def __setitem__(self, i, v):
        self.typed[self._at(i)] = v


def _wrap(bits, signed):
    def cast(x):
        x = int(x) % (1 << bits)
        return x - (1 << bits) if signed and x >= 1 << (bits - 1) else x
    return cast


class _Dim:
    x = 0


class _Cuda:
    def __init__(self):
        self.threadIdx, self.blockIdx, self.blockDim = _Dim(), _Dim(), _Dim()

    def grid(self, _):
        return self.blockIdx.x * self.blockDim.x + self.threadIdx.x


def _vector(n, store):
    def vload(p, i):
        assert (p.addr + int(i) * p.dtype.itemsize) % (n * p.dtype.itemsize) == 0, "misaligned"
        return tuple(p[int(i) + k] for k in range(n))

    def vstore(p, i, values):
        assert (p.addr + int(i) * p.dtype.itemsize) % (n * p.dtype.itemsize) == 0, "misaligned"
        for k in range(n):
            p[int(i) + k] = values[k]
    return vstore if store else vload


def run_kernel(heap, spec, grid, block, args):
    cuda = _Cuda()
    ns = {"cuda": cuda, "int64": _wrap(64, True), "uint64": _wrap(64, False),
          "uint32": _wrap(32, False), "int32": _wrap(32, True), "uint8": _wrap(8, False),
          "float32": np.float32, "float64": np.float64, "complex64": np.complex64,
          "complex128": np.complex128, "int16": _wrap(16, True),
          "select": lambda cond, a, b: a if cond else b}  # device/branchless.py's
    for n in (1, 2, 4, 8, 16):
        ns[f"vload{n}"] = _vector(n, False)
        ns[f"vstore{n}"] = _vector(n, True)
    exec(spec.source, ns)
    fn = ns[spec.entry]
    conv = [Ptr(heap, v, t[:-1] if t != "uint8*" else "uint8") if t.endswith("*") else v
            for t, v in zip(spec.argtypes, args)]
    cuda.blockDim.x = block
    for b in range(grid):
        cuda.blockIdx.x = b
        for t in range(block):
            cuda.threadIdx.x = t
            fn(*conv)


def sim_gather(heap, src, offset, shape, strides, specs):
    """gather_scatter.gather on the heap: returns (result, flag)."""
    out = heap.empty(shape, src.dtype)
    flag = heap.put(np.zeros(1, np.uint32))
    if out.size:
        ptr = src.buffer.ptr + offset * src.dtype.itemsize
        spec_args, args, grid = gather_scatter.plan_launch("gather", ptr, out.ptr, src.dtype,
                                                     out.shape, strides, c_strides(out.shape),
                                                     specs, flag.ptr)
        run_kernel(heap, gather_scatter.kernel_spec(*spec_args), grid, gather_scatter.BLOCK, args)
    return heap.get(out), int(heap.get(flag)[0])


def sim_scatter(heap, dst, offset, shape, strides, specs, value, op="scatter"):
    flag = heap.put(np.zeros(1, np.uint32))
    value = gather_scatter._drop_leading_ones(value, len(shape))
    vst = tuple(0 if m == 1 and s != 1 else st for m, s, st in
                zip((1,) * (len(shape) - value.ndim) + value.shape, shape,
                    (0,) * (len(shape) - value.ndim) + value.strides))
    ptr = dst.buffer.ptr + offset * dst.dtype.itemsize
    spec_args, args, grid = gather_scatter.plan_launch(op, ptr, value.ptr, dst.dtype,
                                                 tuple(shape), strides, vst, specs, flag.ptr)
    run_kernel(heap, gather_scatter.kernel_spec(*spec_args), grid, gather_scatter.BLOCK, args)
    return int(heap.get(flag)[0])


DTYPES = ["bool", "int8", "uint16", "float32", "int64", "complex64", "complex128"]
INDEX = ["int8", "uint8", "int16", "int32", "uint32", "int64", "uint64"]


def _data(rng, dtype, shape):
    dtype = np.dtype(dtype)
    a = rng.integers(0, 100, size=shape)
    if dtype.kind == "c":
        a = a + 1j * rng.integers(0, 100, size=shape)
    return a.astype(dtype)


def _idx(rng, n, size, dtype):
    lo = 0 if np.dtype(dtype).kind == "u" else -min(n, 128)
    return rng.integers(lo, min(n, 127), size=size).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("index_dtype", ["int64", "int32", "uint8"])
def test_take_1d_vec_and_tail(dtype, index_dtype):
    rng = np.random.default_rng(1)
    heap = Heap()
    a = _data(rng, dtype, 300)
    i = _idx(rng, 300, 2048 * 2 + 37, index_dtype)  # two full vec blocks and a tail
    x, ix = heap.put(a), heap.put(i)
    spec = IndexSpec(ix, ix.strides, 300, 1)
    got, flag = sim_gather(heap, x, 0, i.shape, (0,), [spec])
    np.testing.assert_array_equal(got, np.take(a, i))
    assert flag == 0


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_take_views_and_axes(axis):
    rng = np.random.default_rng(2)
    heap = Heap()
    base = _data(rng, "float64", (6, 9, 11))
    x = basic_view(heap.put(base), (slice(None, None, -1), slice(1, None, 2), slice(None)))
    a = base[::-1, 1::2, :]
    i = _idx(rng, a.shape[axis], 1500, "int16")
    ix = basic_view(heap.put(np.repeat(i, 2)), (slice(None, None, 2),))  # strided indices
    out, flag = sim_gather(heap, x, x.offset, a.shape[:axis] + i.shape + a.shape[axis + 1:],
                           x.strides[:axis] + (0,) + x.strides[axis + 1:],
                           [IndexSpec(ix, (0,) * axis + (2,) + (0,) * (2 - axis),
                                               a.shape[axis], x.strides[axis])])
    np.testing.assert_array_equal(out, np.take(a, i, axis=axis))
    assert flag == 0


@pytest.mark.parametrize("bad", [300, -301, 2 ** 40])
def test_take_out_of_range_sets_the_flag_and_reads_in_bounds(bad):
    heap = Heap()
    a = np.arange(300, dtype=np.float32)
    i = np.zeros(5000, np.int64)
    i[4097] = bad
    x, ix = heap.put(a), heap.put(i)
    got, flag = sim_gather(heap, x, 0, i.shape, (0,), [IndexSpec(ix, (1,), 300, 1)])
    assert flag == 1 and got[4097] == 0.0


def test_uint64_indices_wrap_like_numpy():
    heap = Heap()
    a = np.arange(10, dtype=np.int32)
    i = np.array([2 ** 64 - 1, 3, 2 ** 64 - 10], dtype=np.uint64)
    x, ix = heap.put(a), heap.put(i)
    got, flag = sim_gather(heap, x, 0, i.shape, (0,), [IndexSpec(ix, (1,), 10, 1)])
    np.testing.assert_array_equal(got, np.take(a, i))
    assert flag == 0


def test_take_along_axis():
    rng = np.random.default_rng(3)
    heap = Heap()
    a = _data(rng, "int32", (7, 40, 5))
    i = _idx(rng, 40, (7, 33, 5), "int64")
    x, ix = heap.put(a), heap.put(i)
    got, flag = sim_gather(heap, x, 0, i.shape, (x.strides[0], 0, x.strides[2]),
                           [IndexSpec(ix, ix.strides, 40, x.strides[1])])
    np.testing.assert_array_equal(got, np.take_along_axis(a, i, axis=1))


def _key_to_device(heap, key):
    out = []
    for k in key:
        if isinstance(k, np.ndarray) and k.dtype == bool and k.ndim:
            out.extend(heap.put(v) for v in np.nonzero(k))  # what scan.nonzero gives
        elif isinstance(k, np.ndarray) and k.dtype == bool:
            out.append(gather_scatter.BoolScalar(bool(k)))
        elif isinstance(k, np.ndarray):
            out.append(heap.put(k))
        else:
            out.append(k)
    return tuple(out)


KEYS = [
    lambda r: (np.array([3, 0, -1, 2, 0]),),
    lambda r: (np.array([3, 0, -1]), 1),
    lambda r: (1, slice(None), np.array([4, -6, 0])),
    lambda r: (0, slice(None), np.array([[0, 1], [4, 3]])),
    lambda r: (slice(None), np.array([[2], [0]]), np.array([1, 5, -1])),
    lambda r: (np.array([[1], [3]]), slice(1, None, 2), np.array([0, 6])),
    lambda r: (np.array([1, 2]), Ellipsis, np.array([0, 6])),
    lambda r: (Ellipsis, np.array([0, 6, 3])),
    lambda r: (np.array([0, 1]), None, np.array([2, 3])),
    lambda r: (slice(None, None, -1), None, np.array([2, 3, 1])),
    lambda r: (np.array(True),),
    lambda r: (np.array(False), 0),
    lambda r: (np.array([1, 0]), np.array(True)),
    lambda r: (np.array(True), slice(None), 0),
    lambda r: (r.random((4, 5)) < 0.5, 1),
    lambda r: (np.array([True, False, True, True]), slice(None), np.array([0, 1, 2])),
    lambda r: (np.array([2, 0], dtype=np.uint8), np.array([1], dtype=np.int16), slice(2, 5)),
    lambda r: (np.zeros(0, np.int64), slice(None)),
]


@pytest.mark.parametrize("make_key", KEYS)
def test_plan_key_gathers_like_numpy(make_key):
    rng = np.random.default_rng(4)
    heap = Heap()
    base = _data(rng, "float32", (4, 5, 7))
    x = heap.put(base)
    key = make_key(rng)
    expected = base[key]
    dkey = _key_to_device(heap, key)
    offset, shape, strides, specs = gather_scatter.plan_key(x.shape, x.strides, x.offset, dkey)
    if not specs:
        got = heap.get(x.view(shape, strides, offset))
    else:
        got, flag = sim_gather(heap, x, offset, shape, strides,
                               [IndexSpec(*s) for s in specs])
        assert flag == 0
    assert got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)


def test_plan_key_of_a_view():
    rng = np.random.default_rng(5)
    heap = Heap()
    base = _data(rng, "complex128", (6, 8))
    x = basic_view(heap.put(base), (slice(None, None, -2), slice(1, None)))
    v = base[::-2, 1:]
    key = (np.array([[0, 2], [1, 1]]), slice(None, None, -3))
    offset, shape, strides, specs = gather_scatter.plan_key(x.shape, x.strides, x.offset,
                                                      _key_to_device(heap, key))
    got, _ = sim_gather(heap, x, offset, shape, strides, [IndexSpec(*s) for s in specs])
    np.testing.assert_array_equal(got, v[key])


@pytest.mark.parametrize("dtype", DTYPES)
def test_scatter_like_numpy(dtype):
    rng = np.random.default_rng(6)
    heap = Heap()
    base = _data(rng, dtype, (40, 30, 6))
    x = heap.put(base)
    rows = rng.permutation(40)[:25]
    cols = np.array([3, -1, 0])
    key = (rows[:, None], slice(None, None, -7), cols)
    expected = base.copy()
    value = _data(rng, dtype, (3, 1))  # selection (25, 3, 5): advanced dims first
    expected[key] = value
    offset, shape, strides, specs = gather_scatter.plan_key(x.shape, x.strides, x.offset,
                                                      _key_to_device(heap, key))
    flag = sim_scatter(heap, x, offset, shape, strides, [IndexSpec(*s) for s in specs],
                       heap.put(value))
    assert flag == 0
    np.testing.assert_array_equal(heap.get(x), expected)


def test_scatter_skips_bad_indices():
    heap = Heap()
    base = np.arange(2000, dtype=np.int32)
    x = heap.put(base)
    i = np.arange(0, 2000, 1, dtype=np.int64)
    i[1500] = 2000
    ix = heap.put(i)
    value = heap.put(np.full(2000, -1, np.int32))
    specs = [IndexSpec(ix, (1,), 2000, 1)]
    assert sim_scatter(heap, x, 0, (2000,), (0,), specs, value, "check") == 1
    np.testing.assert_array_equal(heap.get(x), base)  # the check writes nothing
    assert sim_scatter(heap, x, 0, (1000,), (0,), specs, basic_view(value, (slice(0, 1000),)),
                       "check") == 0
    flag = sim_scatter(heap, x, 0, (2000,), (0,), [IndexSpec(ix, (1,), 2000, 1)], value)
    got = heap.get(x)
    assert flag == 1 and got[1500] == 1500 and (np.delete(got, 1500) == -1).all()


def test_repeat_kernels():
    heap = Heap()
    reps = np.array([2, 0, 1, 3, 0, 5], np.int64)
    cum = np.cumsum(reps)
    r, c = heap.put(reps), heap.put(cum)
    info = heap.put(np.zeros(2, np.int64))
    check, sources = manipulation.precompile_specs()
    run_kernel(heap, check, 1, 32, [info.ptr, r.ptr, c.ptr, reps.size])
    assert heap.get(info).tolist() == [0, 11]
    out = heap.empty((11,), np.int64)
    run_kernel(heap, sources, 1, 32, [out.ptr, c.ptr, reps.size, 11])
    np.testing.assert_array_equal(heap.get(out), np.repeat(np.arange(6), reps))
    reps[2] = -1
    r = heap.put(reps)
    run_kernel(heap, check, 1, 32, [info.ptr, r.ptr, c.ptr, reps.size])
    assert heap.get(info)[0] == 1


@pytest.fixture
def host_engines(monkeypatch):
    """manipulation's device calls replaced by heap versions; records the engine each piece
    took."""
    heap = Heap()
    used = []

    class Dev:
        index = 0
        allocator = None

    def memcpy(dev, dst, src):
        used.append("memcpy")
        heap.mem[dst.ptr:dst.ptr + src.nbytes] = heap.mem[src.ptr:src.ptr + src.nbytes]

    def memcpy_2d(dev, dst_ptr, dst_pitch, src_ptr, src_pitch, width, rows, dst, src):
        used.append("2d")
        for r in range(rows):
            d, s = dst_ptr + r * dst_pitch, src_ptr + r * src_pitch
            heap.mem[d:d + width] = heap.mem[s:s + width]

    def assign(dst, src):
        used.append("kernel")
        isz = dst.dtype.itemsize
        vals = heap.get(src)
        typed = heap.mem.view(dst.dtype)
        np.lib.stride_tricks.as_strided(typed[dst.ptr // isz:], dst.shape,
                                        [s * isz for s in dst.strides])[...] = vals

    monkeypatch.setattr(manipulation.runtime, "get_device", lambda i: Dev())
    monkeypatch.setattr(manipulation, "new_array", lambda d, shape, dt, alloc: heap.empty(shape, dt))
    monkeypatch.setattr(copies, "memcpy_d2d", memcpy)
    monkeypatch.setattr(elementwise, "assign", assign)
    monkeypatch.setattr(manipulation, "_memcpy_2d", memcpy_2d)
    return heap, used


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_concat_pieces(host_engines, axis):
    heap, used = host_engines
    rng = np.random.default_rng(7)
    a, b = _data(rng, "float32", (3, 4, 200)), _data(rng, "float32", (3, 4, 200))
    x = heap.put(a)
    y = basic_view(heap.put(b), (slice(None, None, -1),))
    got = manipulation.concat([x, y, x], axis)
    np.testing.assert_array_equal(heap.get(got), np.concatenate([a, b[::-1], a], axis=axis))
    # contiguous slabs: memcpy along axis 0, pitched rows of >= 512 bytes along the others; the
    # flipped input goes through the strided kernel
    engine = "memcpy" if axis == 0 else "2d"
    assert used == [engine, "kernel", engine]
    used.clear()
    narrow = _data(rng, "float32", (3, 4, 2))
    got = manipulation.concat([heap.put(narrow)] * 2, 2)
    np.testing.assert_array_equal(heap.get(got), np.concatenate([narrow] * 2, axis=2))
    assert used == ["kernel", "kernel"]  # 8-byte rows


@pytest.mark.parametrize("shift, axes", [((1,), (0,)), ((-2, 5), (1, 2)), ((3, 4, -1), (0, 1, 2)),
                                         ((7, 2), (2, 2)), ((10 ** 12,), (1,)), ((0,), (0,))])
def test_roll_pieces(host_engines, shift, axes):
    heap, used = host_engines
    a = np.arange(3 * 4 * 150, dtype=np.float64).reshape(3, 4, 150)
    got = manipulation.roll(heap.put(a), shift, axes)
    np.testing.assert_array_equal(heap.get(got), np.roll(a, shift, axis=axes))
    assert len(used) <= 2 ** len(set(axes))


def test_roll_flat(host_engines):
    heap, used = host_engines
    a = np.arange(60, dtype=np.int16).reshape(6, 10)
    got = manipulation.roll(heap.put(a), (-13,), None)
    np.testing.assert_array_equal(heap.get(got), np.roll(a, -13))
    assert used == ["memcpy", "memcpy"]
