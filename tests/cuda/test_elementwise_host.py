"""The elementwise fast path (fast_path.run) run on the host without a GPU.

The vec kernels' generated source runs as plain Python on test_indexing_host's heap (its vector
loads and stores assert 16-byte alignment), so the host-side split of an offset view into an
aligned body and a scalar head, the output's placement in the same phase, and the launch
arguments are checked against NumPy here; the GPU suite checks the same on the device.
"""

import numpy as np
import pytest

from arrayx.cuda.kernels import elementwise
from arrayx.cuda.kernels.elementwise import fast_path, tuning
from arrayx.cuda.engine import runtime
from arrayx.cuda.kernels.elementwise import ops as ops
from arrayx.cuda.engine.array import CudaArray
from test_indexing_host import Heap, run_kernel

F32 = np.dtype("float32")
F64 = np.dtype("float64")


class _Allocator:
    def __init__(self, heap):
        self.heap = heap

    def alloc(self, nbytes):
        return self.heap.alloc(nbytes, align=16), nbytes

    def release(self, *_):
        pass


class _Device:
    index = 0
    local = type("PerThread", (), {"stream": None})()
    _default_stream = object()


@pytest.fixture
def fast(monkeypatch):
    """make(name, op, dtypes) -> the fast_path.Plan of a kernel simulated on a fresh heap."""
    heap = Heap()
    dev = _Device()
    dev.allocator = _Allocator(heap)
    monkeypatch.setattr(runtime._tls, "current", dev, raising=False)
    launches = []

    def make(name, op, dtypes):
        N = max(1, 16 // max(op.out.itemsize, *(d.itemsize for d in dtypes)))
        spec = elementwise.kernel_spec(name, op, ("a",) * len(dtypes), dtypes, "vec", N, 1)

        def kern(stream, grid, block, args, keep, nbytes):
            launches.append((grid, args[-1]))
            if grid:
                run_kernel(heap, spec, grid, block, args)

        return fast_path.Plan(kern, N * dtypes[0].itemsize, op.out, tuning.BLOCK,
                              tuning.BLOCK * N, dev, dev.allocator,
                              sum(d.itemsize for d in dtypes) + op.out.itemsize, N)

    return heap, make, launches


def _view(heap, host, start):
    """The CudaArray of host[start:] on the heap (an offset view of a 16-byte aligned buffer)."""
    base = heap.put(host)
    return CudaArray(base.buffer, (host.size - start,), host.dtype, None, start)


@pytest.mark.parametrize("start", [0, 1, 2, 3])
@pytest.mark.parametrize("n", [1, 3, 5, 1023, 2500])
def test_binary_fast_path_over_offset_views(fast, start, n):
    heap, make, launches = fast
    rng = np.random.default_rng(n + start)
    a_host = rng.standard_normal(n + start).astype(F32)
    b_host = rng.standard_normal(n + start).astype(F32)
    a, b = _view(heap, a_host, start), _view(heap, b_host, start)
    plan = make("add", ops.binary_op("add", F32), (F32, F32))
    res = fast_path.run(plan, a.shape, a.size, (a.ptr, b.ptr), (a.buffer, b.buffer),
                        a.ptr % plan.vector_bytes)
    np.testing.assert_array_equal(heap.get(res), a_host[start:] + b_host[start:])
    head = (4 - start) % 4
    if n > head:  # the output shares the inputs' phase, so the body's vectors line up
        assert res.ptr % 16 == a.ptr % 16
    # the aligned body first (its vector accesses assert alignment), then the head
    assert launches[0][1] == n - min(head, n)
    if head:
        assert launches[1] == (1, min(head, n))


@pytest.mark.parametrize("start", [0, 1, 3])
def test_unary_fast_path_with_a_wider_result(fast, start):
    heap, make, _ = fast
    n = 1500
    host = np.random.default_rng(start).standard_normal(n + start).astype(F32)
    a = _view(heap, host, start)
    plan = make("cast", ops.cast_op(F32, F64), (F32,))
    res = fast_path.run(plan, a.shape, a.size, (a.ptr,), (a.buffer,), a.ptr % plan.vector_bytes)
    np.testing.assert_array_equal(heap.get(res), host[start:].astype(F64))


def test_comparison_fast_path_writes_bools_in_phase(fast):
    heap, make, _ = fast
    n = 2049
    rng = np.random.default_rng(7)
    a_host, b_host = rng.standard_normal((2, n + 1)).astype(F32)
    a, b = _view(heap, a_host, 1), _view(heap, b_host, 1)
    plan = make("less", ops.binary_op("less", F32), (F32, F32))
    res = fast_path.run(plan, a.shape, a.size, (a.ptr, b.ptr), (a.buffer, b.buffer),
                        a.ptr % plan.vector_bytes)
    np.testing.assert_array_equal(heap.get(res).astype(bool), a_host[1:] < b_host[1:])


def test_phase_of_a_partial_element_is_left_to_the_general_path(fast):
    heap, make, launches = fast
    host = np.arange(64, dtype=F32)
    a = heap.put(host)
    plan = make("add", ops.binary_op("add", F32), (F32, F32))
    assert fast_path.run(plan, (63,), 63, (a.ptr + 2, a.ptr + 2), (a.buffer, a.buffer),
                         2) is None
    assert launches == []


@pytest.fixture
def on_heap(monkeypatch):
    """(heap, built): dispatch.launch's kernels run on a fresh heap; `built` lists their names."""
    from arrayx.cuda.kernels.elementwise import dispatch
    heap = Heap(1 << 23)
    dev = _Device()
    dev.allocator = _Allocator(heap)
    dev.default_stream = None
    built = []

    def cached_kernel(device_index, family, key, build):
        spec = build()
        built.append(spec.name)
        return lambda stream, grid, block, args, keep, nbytes: run_kernel(heap, spec, grid, block,
                                                                           args)

    monkeypatch.setattr(dispatch.runtime, "get_device", lambda index: dev)
    monkeypatch.setattr(dispatch.compiler, "cached_kernel", cached_kernel)
    return heap, built


def test_seven_dims_run_a_seven_dim_strided_kernel(on_heap):
    """Past the last dimension bucket (_common.DIM_BUCKETS) launch() specialises the strided
    kernel for the exact dim count: a 7-D view no dim of which collapses, copied on the heap."""
    from arrayx.cuda.primitives import basic_view
    heap, built = on_heap
    host = np.arange(3 * 4 * 3 * 4 * 3 * 4 * 3, dtype=F32).reshape(3, 4, 3, 4, 3, 4, 3)
    key = tuple(slice(None, None, -1) if d % 2 else slice(None, None, 2) for d in range(7))
    res = elementwise.copy(basic_view(heap.put(host), key))
    np.testing.assert_array_equal(heap.get(res), host[key])
    assert built == ["ew_cast_float32_to_float32_strided7d32"]


def test_seven_dim_strided_kernel_compiles_to_ptx():
    from test_ptx import _ptx
    spec = elementwise.kernel_spec("cast", ops.cast_op(F32, F32), ("a",), (F32,), "strided", D=7,
                                   index_bits=32)
    assert ".entry" in _ptx(spec)


def _strided(heap, host, key):
    from arrayx.cuda.primitives import basic_view
    return basic_view(heap.put(host), key)


def _rows_cases(rng):
    """(name, a, b, host result, layout of the kernel) over views and broadcasts."""
    x = rng.standard_normal((5, 304)).astype(F32)
    g = rng.standard_normal((7, 203)).astype(F32)
    t = rng.standard_normal((3, 6, 152)).astype(F32)
    m = rng.standard_normal((5, 1)).astype(F32)
    row = rng.standard_normal(300).astype(F32)
    s = rng.standard_normal((150, 130)).astype(F32)
    return [
        # a column broadcast (x - m): vectors along the rows, m once a row
        ("subtract", (x, (slice(None), slice(0, 300))), (m, ()), x[:, :300] - m,
         "ew_subtract_float32_rfloat32_to_float32_rows4x1d1"),
        # a row broadcast: the row vector is contiguous along every row (outer stride 0)
        ("add", (x, (slice(None), slice(4, 304))), (row, ()), x[:, 4:] + row,
         "ew_add_float32_float32_to_float32_rows4x1d1"),
        # the stencil's offset slices: one element a thread, U of them a block's width apart
        ("add", (g, (slice(None, -2), slice(1, -1))), (g, (slice(2, None), slice(1, -1))),
         g[:-2, 1:-1] + g[2:, 1:-1], "ew_add_float32_float32_to_float32_rows1x4d1"),
        # two outer dims that do not collapse (D padded to 3), row strides multiples of the
        # vector; then one whose rows start one element past a vector boundary: one element a thread
        ("multiply", (t, (slice(None), slice(None, None, 4))), (2.5, None),
         t[:, ::4] * np.float32(2.5), "ew_multiply_float32_sfloat32_to_float32_rows4x1d3"),
        ("multiply", (t, (slice(None), slice(None, None, 4), slice(1, None))), (2.5, None),
         t[:, ::4, 1:] * np.float32(2.5), "ew_multiply_float32_sfloat32_to_float32_rows1x4d3"),
        # a transposed operand beside a contiguous one: its own inner stride
        ("subtract", (s, "T"), (rng.standard_normal((130, 150)).astype(F32), ()), None,
         "ew_subtract_float32_float32_to_float32_rows1x4d1"),
    ]


def test_rows_layout_over_broadcasts_and_views(on_heap):
    heap, built = on_heap
    rng = np.random.default_rng(11)
    for name, (a_host, a_key), (b_host, b_key), expected, kernel in _rows_cases(rng):
        if a_key == "T":
            a = heap.put(a_host).view(a_host.T.shape, (1, a_host.shape[1]), 0, False)
            expected = a_host.T - b_host
        else:
            a = _strided(heap, a_host, a_key) if a_key else heap.put(a_host)
        b = b_host if b_key is None else (_strided(heap, b_host, b_key) if b_key else
                                          heap.put(b_host))
        built.clear()
        res = elementwise.binary(name, a, b, F32)
        np.testing.assert_array_equal(heap.get(res), expected)
        assert built == [kernel]


def test_rows_layout_loops_over_rows_past_the_grid(on_heap, monkeypatch):
    """A grid capped below the row count: each block takes rows gy apart."""
    from arrayx.cuda.engine import layout
    heap, built = on_heap
    monkeypatch.setattr(layout, "MAX_GRID", 3)
    rng = np.random.default_rng(12)
    x = rng.standard_normal((9, 260)).astype(F32)
    m = rng.standard_normal((9, 1)).astype(F32)
    res = elementwise.binary("divide", _strided(heap, x, (slice(None), slice(1, None))),
                             heap.put(m), F32)
    np.testing.assert_array_equal(heap.get(res), x[:, 1:] / m)
    assert built == ["ew_divide_float32_float32_to_float32_rows1x4d1"]


def test_rows_layout_where_with_a_broadcast_condition(on_heap):
    from arrayx.cuda.kernels.elementwise.functions import where
    heap, _ = on_heap
    rng = np.random.default_rng(13)
    cond = rng.random((6, 1)) < 0.5
    x = rng.standard_normal((6, 200)).astype(F32)
    y = rng.standard_normal((1, 200)).astype(F32)
    res = where(heap.put(cond), heap.put(x), heap.put(y), F32)
    np.testing.assert_array_equal(heap.get(res), np.where(cond, x, y))


@pytest.mark.parametrize("cols, kernel", [
    (205, "ew_cast_float32_to_float64_rows1x4d1"),   # an odd row stride: no vectors
    (208, "ew_cast_rfloat32_to_float64_rows2x1d1"),  # every row on a vector boundary
])
def test_rows_layout_writes_a_pitched_output(on_heap, cols, kernel):
    """assign into a pitched view (dst[:, 2:-3] = m broadcast): the output's own row stride,
    nothing outside the view written."""
    heap, built = on_heap
    rng = np.random.default_rng(14)
    dst_host = rng.standard_normal((4, cols)).astype(F64)
    m = rng.standard_normal((4, 1)).astype(F32)
    dst = _strided(heap, dst_host, (slice(None), slice(2, -3)))
    elementwise.assign(dst, heap.put(m))
    expected = dst_host.copy()
    expected[:, 2:-3] = m
    base = CudaArray(dst.buffer, dst_host.shape, F64)
    np.testing.assert_array_equal(heap.get(base), expected)
    assert built == [kernel]


def test_rows_layout_flat_index_of_creation_ops(on_heap):
    """tril of a pitched view: the triangle op reads the flat output index (IDX)."""
    from arrayx.cuda.kernels.elementwise import dispatch
    heap, built = on_heap
    rng = np.random.default_rng(15)
    host = rng.standard_normal((140, 300)).astype(F32)
    a = _strided(heap, host, (slice(None), slice(3, 295)))
    op = ops.triangle_op(F32, False)
    I64 = np.dtype("int64")
    res = dispatch.launch("tril", op, (a, 292, 140, 0), (F32, I64, I64, I64), (140, 292))
    np.testing.assert_array_equal(heap.get(res), np.tril(host[:, 3:295]))
    assert built[0].endswith("rows1x4d1")


def test_short_rows_keep_the_strided_layout(on_heap):
    heap, built = on_heap
    x = np.arange(40 * 20, dtype=F32).reshape(40, 20)
    res = elementwise.binary("add", _strided(heap, x, (slice(None), slice(1, None))), 1.0, F32)
    np.testing.assert_array_equal(heap.get(res), x[:, 1:] + 1)
    assert built == ["ew_add_float32_sfloat32_to_float32_strided3d32"]


def test_set_element_writes_one_element_of_a_view(monkeypatch):
    """x[i, j] = v (primitives.setitem's one-element path) on a strided view, for real, bool and
    complex dtypes, with v a Python scalar, a 0-d array of the same or another dtype (cast, as
    scikit-learn's diagonal fill passes it) and a 0-d view of an element of x itself: exactly
    that element changes."""
    from arrayx.cuda import primitives
    from arrayx.cuda.primitives import basic_view
    heap = Heap()
    dev = _Device()
    dev.default_stream = None
    monkeypatch.setattr(runtime._tls, "current", dev, raising=False)
    monkeypatch.setattr(fast_path.runtime, "get_device", lambda index: dev)
    monkeypatch.setattr(fast_path, "_element_kernels", {})
    monkeypatch.setattr(elementwise.dispatch.compiler, "cached_kernel",
                        lambda index, family, key, build: (
                            lambda stream, grid, block, args, keep, nbytes, spec=build():
                            run_kernel(heap, spec, grid, block, args)))
    for dtype, value in ((F32, -2.5), (np.dtype(bool), True), (np.dtype("complex128"), 1 - 2j),
                         (np.dtype("int16"), -7), (F32, np.float64(1e-3)), (F64, np.float32(3.5)),
                         (np.dtype("int16"), np.bool_(True)), (np.dtype("complex64"), np.int8(-4)),
                         (F32, "own element")):
        host = (np.arange(6 * 9) % 5).astype(dtype).reshape(6, 9)
        view = basic_view(heap.put(host), (slice(1, None, 2), slice(None, None, -1)))
        expected = host.copy()
        if isinstance(value, str):  # a 0-d view of another element of the same array
            source, value = basic_view(view, (0, 3)), expected[1::2, ::-1][0, 3] + 0
        elif isinstance(value, np.generic):
            source = heap.put(np.asarray(value))
        else:
            source = value
        primitives.setitem(view, (2, 4), source)
        expected[1::2, ::-1][2, 4] = value
        base = CudaArray(view.buffer, host.shape, dtype)
        np.testing.assert_array_equal(heap.get(base), expected)


@pytest.mark.parametrize("name, scalar, left, dtype", [
    ("multiply", 2.5, False, F32), ("add", 1, True, F64), ("subtract", -3.0, True, F32),
    ("divide", 7.0, True, F64), ("greater", 0.25, False, F32),
    ("multiply", 1e39, False, F32),  # past float32's range: rounds to inf, as NumPy's cast
    ("add", 1 - 2j, False, np.dtype("complex64")),
])
def test_array_scalar_fast_path_matches_the_general_path(on_heap, monkeypatch, name, scalar,
                                                         left, dtype):
    """2 * x, 1 + e, x > 0.5: the first call goes through launch() and registers the plan, the
    next ones take the fast path (no layout analysis) with the scalar passed by value; both give
    NumPy's result, and an offset view still takes launch()."""
    from arrayx.cuda.kernels.elementwise import dispatch
    heap, built = on_heap
    monkeypatch.setattr(fast_path, "plans", {})
    monkeypatch.setattr(runtime._tls, "current", dispatch.runtime.get_device(0), raising=False)
    launches = []
    real_launch = elementwise.functions.launch
    monkeypatch.setattr(elementwise.functions, "launch",
                        lambda *args, **kw: launches.append(1) or real_launch(*args, **kw))
    rng = np.random.default_rng(21)
    host = (rng.standard_normal(1030) * (1 + 1j if dtype.kind == "c" else 1)).astype(dtype)
    x = heap.put(host)
    with np.errstate(over="ignore"):
        expected = getattr(np, name)(np.asarray(scalar, dtype)[()] if dtype.kind == "c" else
                                     dtype.type(scalar), host) if left else \
            getattr(np, name)(host, dtype.type(scalar))
    for call in range(3):
        res = elementwise.binary(name, scalar, x, dtype) if left else \
            elementwise.binary(name, x, scalar, dtype)
        np.testing.assert_array_equal(heap.get(res), expected)
    assert len(launches) == 1  # the first call only
    view = CudaArray(x.buffer, (1029,), dtype, None, 1)  # off the vector boundary
    res = elementwise.binary(name, view, scalar, dtype) if not left else \
        elementwise.binary(name, scalar, view, dtype)
    np.testing.assert_array_equal(heap.get(res), expected[1:])
    assert len(launches) == 2
