"""Compile the elementwise kernel families to PTX for sm_90 without a GPU (runs in CI).

For every elementwise function of the standard, and the casts, fill, where, clip and creation
kernels, the contiguous kernel of its float32 variant (or the narrowest dtype it allows) must
move 16 bytes per load and store (ld.global.v4 / st.global.v4) and use no local memory. The trig
functions are the exception for local memory: libdevice's Payne-Hanek reduction for huge
arguments keeps a small array there (not a spill). Skipped only when numba-cuda (or its NVVM) is
not installed.
"""

import numpy as np
import pytest

pytest.importorskip("numba.cuda")

from arrayx._elementwise_functions import BINARY_CATEGORY, UNARY_CATEGORY, unary_result_dtype  # noqa: E402
from arrayx.cuda.engine import compiler, layout  # noqa: E402
from arrayx.cuda.kernels.elementwise import ops as ops  # noqa: E402
from arrayx.cuda.kernels.elementwise import kernel_spec  # noqa: E402
from arrayx._dtypes import CATEGORIES  # noqa: E402

CC = (9, 0)
B = np.dtype(bool)
F32 = np.dtype("float32")
I64 = np.dtype("int64")
# dtypes tried in order: the first one a function allows is its representative
PREFERRED = [np.dtype(d) for d in ("float32", "int32", "bool", "complex64")]
TRIG = {"sin", "cos", "tan", "sinh", "cosh", "tanh", "exp", "expm1", "pow", "acos", "asin",
        "acosh", "asinh", "atan", "atanh", "log", "log1p", "log2", "log10", "sqrt", "sign"}


def _ptx(spec):
    try:
        return compiler.compile_spec(spec, CC, debug=False)
    except Exception as e:  # NVVM missing on this machine
        if "NVVM" in str(e) or "libnvvm" in str(e).lower():
            pytest.skip(f"NVVM unavailable: {e}")
        raise


def _mem_ops(ptx):
    return {line.split()[0] for line in ptx.splitlines()
            if line.strip().startswith(("ld.global", "st.global"))}


def _is_16_bytes(instruction, kind):
    """ld/st.global of 16 bytes: four 32-bit lanes or two 64-bit ones."""
    parts = instruction.split(".")
    return parts[0] == kind and ((parts[2] == "v4" and parts[3][1:] == "32") or
                                 (parts[2] == "v2" and parts[3][1:] == "64"))


def _vec_spec(name, op, kinds, dtypes):
    arrays = [d.itemsize for k, d in zip(kinds, dtypes) if k == "a"]
    n = layout.vector_width(op.out.itemsize, *arrays)
    return kernel_spec(name, op, kinds, dtypes, "vec", n, 1), n


def _families():
    for name, cat in sorted(UNARY_CATEGORY.items()):
        dt = next((d for d in PREFERRED if d in CATEGORIES[cat]
                   and not ops.is_identity_unary(name, d) and ops.constant_unary(name, d) is None),
                  None)
        if dt is None:  # positive: a copy, no kernel of its own
            continue
        yield pytest.param(name, ops.unary_op(name, dt, unary_result_dtype(name, dt)), ("a",),
                           (dt,), id=f"{name}-{dt}")
    for name, cat in sorted(BINARY_CATEGORY.items()):
        dt = next(d for d in PREFERRED if d in CATEGORIES[cat])
        yield pytest.param(name, ops.binary_op(name, dt), ("a", "a"), (dt, dt), id=f"{name}-{dt}")
    yield pytest.param("cast", ops.cast_op(F32, np.dtype("float64")), ("a",), (F32,),
                       id="astype-float32-float64")
    yield pytest.param("fill", ops.cast_op(F32, F32), ("s",), (F32,), id="fill-float32")
    yield pytest.param("where", ops.where_op(F32), ("a", "a", "a"), (B, F32, F32),
                       id="where-float32")
    yield pytest.param("clip", ops.clip_op(F32), ("a", "s", "s"), (F32, F32, F32),
                       id="clip-float32")
    op, dts = ops.arange_op(F32)
    yield pytest.param("arange", op, ("s", "s"), dts, id="arange-float32")
    for precision in (F32, np.dtype("float64")):
        op, dts = ops.linspace_op(F32, precision)
        yield pytest.param("linspace", op, ("s",) * 5, dts, id=f"linspace-float32-in-{precision}")
    yield pytest.param("tril", ops.triangle_op(F32, False), ("a", "s", "s", "s"),
                       (F32, I64, I64, I64), id="tril-float32")


@pytest.mark.parametrize("name, op, kinds, dtypes", list(_families()))
def test_contiguous_kernel_moves_16_bytes_per_access(name, op, kinds, dtypes):
    spec, n = _vec_spec(name, op, kinds, dtypes)
    ptx = _ptx(spec)
    ops_seen = _mem_ops(ptx)
    if any(k == "a" and d.itemsize * n == 16 for k, d in zip(kinds, dtypes)):
        assert any(_is_16_bytes(o, "ld") for o in ops_seen), ops_seen
    if op.out.itemsize * n == 16:
        assert any(_is_16_bytes(o, "st") for o in ops_seen), ops_seen
    if name not in TRIG:
        assert ".local" not in ptx


@pytest.mark.parametrize("dtype,vec", [("float32", "v4.f32"), ("float64", "v2.f64"),
                                       ("int8", "v4.u32"), ("int16", "v4.u32"),
                                       ("int32", "v4.u32"), ("uint64", "v2.u64"),
                                       ("complex64", "v4.f32"), ("complex128", "v2.f64")])
def test_add_kernel_uses_16_byte_vectors(dtype, vec):
    dt = np.dtype(dtype)
    spec, _ = _vec_spec("add", ops.binary_op("add", dt), ("a", "a"), (dt, dt))
    ptx = _ptx(spec)
    ops_seen = _mem_ops(ptx)
    if dtype in ("float32", "float64", "complex64", "complex128", "uint64"):
        assert f"ld.global.{vec}" in ops_seen and f"st.global.{vec}" in ops_seen, ops_seen
    else:
        assert "ld.global.v4.u32" in ops_seen or "ld.global.v4.s32" in ops_seen, ops_seen
    assert ".local" not in ptx


def test_float32_add_is_ld_global_v4():
    spec, _ = _vec_spec("add", ops.binary_op("add", F32), ("a", "a"), (F32, F32))
    ptx = _ptx(spec)
    assert "ld.global.v4.f32" in ptx and "st.global.v4.f32" in ptx
    assert ".local" not in ptx


def test_comparison_bool_output_and_scalar_operand():
    spec, _ = _vec_spec("less", ops.binary_op("less", F32), ("a", "s"), (F32, F32))
    ptx = _ptx(spec)
    assert "ld.global.v4.f32" in ptx and ".local" not in ptx


def test_strided_kernel_uses_32_bit_division():
    ptx = _ptx(kernel_spec("cast", ops.cast_op(F32, F32), ("a",), (F32,), "strided", D=3,
                           index_bits=32))
    assert "div.u32" in ptx or "rem.u32" in ptx
    assert ".local" not in ptx


def test_rows_kernel_moves_vectors_and_loads_a_broadcast_once_a_row():
    """x - m with m of shape (R, 1): vectors of x and out, m's value read once a row, the row
    number split with 32-bit division."""
    ptx = _ptx(kernel_spec("subtract", ops.binary_op("subtract", F32), ("a", "r"), (F32, F32),
                           "rows", 4, 1, 3))
    ops_seen = _mem_ops(ptx)
    assert {"ld.global.v4.f32", "st.global.v4.f32", "ld.global.f32"} <= ops_seen, ops_seen
    assert "rem.u32" in ptx and ".local" not in ptx


def test_rows_kernel_one_element_at_a_time_keeps_its_loads_in_flight():
    """The scalar variant (unaligned views): its U loads a thread are issued before the first
    store."""
    ptx = _ptx(kernel_spec("add", ops.binary_op("add", F32), ("a", "a"), (F32, F32), "rows", 1,
                           4, 1))
    lines = [ln.split()[0] for ln in ptx.splitlines()
             if ln.strip().startswith(("ld.global.f32", "st.global.f32"))]
    assert lines[:8] == ["ld.global.f32"] * 8, lines
    assert ".local" not in ptx


def _tile_specs(monkeypatch, src, dst):
    """The transposing tile's kernels for a cast, vectors first, with 16-byte vectors whatever
    the module's default."""
    from arrayx.cuda.kernels import elementwise
    monkeypatch.setattr(elementwise.tuning, "TILE_VECTOR_BYTES", 16)
    src, dst = np.dtype(src), np.dtype(dst)
    return elementwise.tile_specs("cast", ops.cast_op(src, dst), ("a",), (src,))


def test_transpose_tile_uses_shared_memory(monkeypatch):
    single = _tile_specs(monkeypatch, F32, F32)[-1]  # one element at a time (unaligned views)
    ptx = _ptx(single)
    assert ".shared" in ptx and "bar.sync" in ptx
    assert "ld.global.f32" in ptx and "st.global.f32" in ptx
    assert "div.u32" in ptx  # the tile's position from the block index
    assert ".local" not in ptx


@pytest.mark.parametrize("src, dst, load, store", [
    ("float32", "float32", "ld.global.v4.f32", "st.global.v4.f32"),
    ("float64", "float64", "ld.global.v2.f64", "st.global.v2.f64"),
    ("int8", "bool", "ld.global.v4.u32", "st.global.v4.u32"),
    ("float32", "float64", "ld.global.v2.f32", "st.global.v2.f64"),
])
def test_transpose_tile_moves_vectors(monkeypatch, src, dst, load, store):
    """Aligned transposes: vectors from the input rows into shared memory, and gathered from
    the tile's rows into vectors along the output rows."""
    specs = _tile_specs(monkeypatch, src, dst)
    assert len(specs) == 2
    ptx = _ptx(specs[0])
    ops_seen = _mem_ops(ptx)
    assert load in ops_seen and store in ops_seen, ops_seen
    assert "st.shared" in ptx and "bar.sync" in ptx
    assert ".local" not in ptx


def test_debug_bounds_check_traps():
    ptx = _ptx(kernel_spec("cast", ops.cast_op(F32, F32), ("a",), (F32,), "strided", D=2,
                           index_bits=64, debug=True))
    assert "trap;" in ptx


def test_fill_vector_store():
    f64 = np.dtype("float64")
    ptx = _ptx(kernel_spec("fill", ops.cast_op(f64, f64), ("s",), (f64,), "vec", 2, 2))
    assert "st.global.v2.f64" in ptx


def test_entry_name_and_cubin_link():
    spec, _ = _vec_spec("add", ops.binary_op("add", F32), ("a", "a"), (F32, F32))
    ptx = _ptx(spec)
    assert compiler.entry_name(ptx)
    cubin = compiler.link_cubin(ptx, CC)
    if cubin is None:
        pytest.skip("nvJitLink unavailable")
    assert cubin[:4] == b"\x7fELF"


# --- sort, unique, isin (kernels/sort/) ----------------------------------------------------------

def test_sort_and_set_kernels_compile_without_local_memory():
    from arrayx.cuda.kernels.sort import sets
    for spec in sets.precompile_specs():
        ptx = _ptx(spec)
        assert ".local" not in ptx, spec.name
        if spec.name.startswith(("ew_nan_canon", "ew_radix_word")) and spec.name.endswith("x1") \
                and "complex64" not in spec.name:
            mem = _mem_ops(ptx)
            assert any(_is_16_bytes(m, "ld") for m in mem if m.count(".") >= 3), (spec.name, mem)
            assert any(_is_16_bytes(m, "st") for m in mem if m.count(".") >= 3), (spec.name, mem)


def test_isin_search_is_a_loop_over_global_loads():
    from arrayx.cuda.kernels.sort import sets
    ptx = _ptx(sets.isin_search_spec(np.dtype("complex128")))
    assert "ld.global.u64" in ptx and "st.global.u8" in ptx and ".local" not in ptx


# ---- reductions (arrayx/cuda/kernels/reduce/) ---------------------------------------------

def _reduce_specs():
    from arrayx.cuda.kernels.reduce.reduction import Reduction
    from arrayx.cuda.kernels.reduce.source import column_spec, group_spec
    c64, u8, u64 = np.dtype("complex64"), np.dtype("uint8"), np.dtype("uint64")
    f32_sum = Reduction("sum", F32, F32)
    yield "sum-contig", group_spec(f32_sum, "contig", 256, 4, True, 1, 0, False, 32)
    yield "sum-column", column_spec(f32_sum, 4, True, False)
    yield "argmin-column-split", column_spec(Reduction("argmin", u64, I64), 2, True, True)
    complex_prod = Reduction("prod", c64, c64)
    yield "prod-complex-general", group_spec(complex_prod, "general", 32, 1, False, 3, 3, False,
                                             64)
    yield "prod-complex-general-split", group_spec(complex_prod, "general", 256, 1, False, 3, 3,
                                                   True, 64)
    yield "max-uint8-rows", group_spec(Reduction("max", u8, u8), "contig", 32, 16, True, 6, 0,
                                       False, 32)
    yield "any-complex-column", column_spec(Reduction("any", c64, B), 1, False, False)
    yield "mean-int-general", group_spec(Reduction("mean", np.dtype("int8"), np.dtype("float64")),
                                         "general", 256, 1, False, 1, 6, False, 32)
    # past the last dim bucket: compiled for the exact count (7 kept and 7 reduced dims)
    yield "sum-general-7-dims-split", group_spec(f32_sum, "general", 256, 1, False, 7, 7, True, 32)


@pytest.mark.parametrize("name, spec", list(_reduce_specs()), ids=lambda v: v if isinstance(v, str) else "")
def test_reduce_kernels_compile_without_local_memory(name, spec):
    from arrayx.cuda.kernels.reduce.tuning import LOAD_HINT
    ptx = _ptx(spec)
    assert ".local" not in ptx
    if name == "sum-contig":
        # 16-byte loads with the contig kernels' cache qualifier (4 words, bit-cast to float32)
        assert f"ld.global{LOAD_HINT}.v4.{'u32' if LOAD_HINT else 'f32'}" in ptx
    if name == "sum-column":
        assert "ld.global.v4.f32" in ptx
    if name.endswith("-split"):
        assert "atom.global.add.u32" in ptx and "ld.global.cg" in ptx


def _split_reduce_specs():
    """The fused split kernels (one launch, the last block folds the partials) of the commonest
    single-call reductions: the all-reduce and argmax of float32, mean of float64, and column
    sums of float32."""
    from arrayx.cuda.kernels.reduce.reduction import Reduction
    from arrayx.cuda.kernels.reduce.source import column_spec, group_spec
    F64 = np.dtype("float64")
    f32_sum = Reduction("sum", F32, F32)
    yield "sum-f32-contig", group_spec(f32_sum, "contig", 256, 4, True, 1, 0, True, 32)
    yield "argmax-f32-contig", group_spec(Reduction("argmax", F32, I64), "contig", 256, 4, True, 1,
                                          0, True, 32)
    yield "mean-f64-contig", group_spec(Reduction("mean", F64, F64), "contig", 256, 2, True, 1, 0,
                                        True, 32)
    yield "sum-f32-column", column_spec(f32_sum, 4, True, True)
    yield "sum-f32-column-scalar", column_spec(f32_sum, 1, False, True)


@pytest.mark.parametrize("name, spec", list(_split_reduce_specs()),
                         ids=lambda v: v if isinstance(v, str) else "")
def test_split_reduce_kernels_fold_in_the_last_block(name, spec):
    """The partial is fenced before the ticket (membar.gl, then atom.global.add.u32), the fold
    reads partials through L2 (ld.global.cg) after the barrier, the counter is reset, nothing
    spills, and the contiguous main loop keeps its 16-byte loads."""
    from arrayx.cuda.kernels.reduce.tuning import LOAD_HINT
    ptx = _ptx(spec)
    assert ".local" not in ptx
    lines = [line.strip() for line in ptx.splitlines()]
    atom = next(i for i, line in enumerate(lines) if line.startswith("atom.global.add.u32"))
    assert any(line.startswith("membar.gl") for line in lines[:atom])  # release
    assert any(line.startswith("membar.gl") for line in lines[atom + 1:])  # acquire
    loads = [i for i, line in enumerate(lines) if line.startswith("ld.global.cg.b")]
    assert loads and min(loads) > atom
    assert any(line.startswith("bar.sync") for line in lines[atom:min(loads)])
    assert sum(1 for line in lines if line.startswith("st.global.u32")) >= 1  # counter reset
    if "contig" in name:
        assert f"ld.global{LOAD_HINT}.v4.{'u32' if LOAD_HINT else 'f32'}" in ptx
    if name == "sum-f32-column":
        assert "ld.global.v4.f32" in ptx
    if "column" in name:  # registers capped so that COLUMN_SPLIT_BLOCKS_PER_SM blocks fit
        from arrayx.cuda.kernels.reduce.tuning import BLOCK, COLUMN_SPLIT_BLOCKS_PER_SM
        assert spec.launch_bounds == (BLOCK, COLUMN_SPLIT_BLOCKS_PER_SM)
        assert f".maxntid {BLOCK}" in ptx
        assert f".minnctapersm {COLUMN_SPLIT_BLOCKS_PER_SM}" in ptx


def _nan_reduce_specs():
    """The NaN-ignoring reductions: the split all-reduce of each kind of accumulator (nanmax's
    NaN-started fmax, nanmean's (sum, count), nanargmax's (value, index)), columns, and complex
    and general layouts."""
    from arrayx.cuda.kernels.reduce.reduction import Reduction
    from arrayx.cuda.kernels.reduce.source import column_spec, group_spec
    F64, c64 = np.dtype("float64"), np.dtype("complex64")
    for name in ("nanmax", "nanmean"):
        yield f"{name}-f32-contig-split", group_spec(Reduction(name, F32, F32), "contig", 256, 4,
                                                     True, 1, 0, True, 32)
    yield "nanargmax-f32-contig-split", group_spec(Reduction("nanargmax", F32, I64), "contig",
                                                   256, 4, True, 1, 0, True, 32)
    yield "nanargmin-f64-column-split", column_spec(Reduction("nanargmin", F64, I64), 2, True,
                                                    True)
    yield "nanmean-f32-column", column_spec(Reduction("nanmean", F32, F32), 4, True, False)
    yield "nansum-complex-general", group_spec(Reduction("nansum", c64, c64), "general", 32, 1,
                                               False, 3, 3, False, 32)
    yield "nanmean-complex-contig", group_spec(Reduction("nanmean", c64, c64), "contig", 32, 2,
                                               True, 1, 0, False, 32)


@pytest.mark.parametrize("name, spec", list(_nan_reduce_specs()),
                         ids=lambda v: v if isinstance(v, str) else "")
def test_nan_reduce_kernels_keep_vector_loads_and_no_local_memory(name, spec):
    from arrayx.cuda.kernels.reduce.tuning import LOAD_HINT
    ptx = _ptx(spec)
    assert ".local" not in ptx and "trap" not in ptx
    if "f32-contig" in name:
        assert f"ld.global{LOAD_HINT}.v4.{'u32' if LOAD_HINT else 'f32'}" in ptx
    if name.endswith("-split"):
        assert "atom.global.add.u32" in ptx and "ld.global.cg" in ptx


# --- gather/scatter (kernels/gather_scatter/) and repeat (kernels/manipulation/) -------------
def _gather_spec(*args):
    from arrayx.cuda.kernels import gather_scatter as indexing
    return indexing.kernel_spec(*args)


@pytest.mark.parametrize("index_dtype, vec", [("int64", "ld.global.v2.u64"), ("int32", "v4"),
                                              ("int16", "ld.global.v4.u32"),
                                              ("uint8", "ld.global.v2.u32")])
def test_gather_vec_kernel_loads_index_vectors(index_dtype, vec):
    dt = np.dtype(index_dtype)
    V = min(8, 16 // dt.itemsize)
    ptx = _ptx(_gather_spec("gather", "uint32", False, (dt,), "vec", 1, 64, V))
    ops_seen = _mem_ops(ptx)
    assert any(o.startswith("ld.global." + vec.split("ld.global.")[-1]) for o in ops_seen), ops_seen
    # 8 random reads per thread, stored as vectors of V float32 (16 bytes from 4 lanes)
    assert sum(1 for line in ptx.splitlines() if line.strip().startswith("ld.global.u32")) >= 8
    assert any(o.startswith("st.global.v") for o in ops_seen), ops_seen
    assert ".local" not in ptx


def test_gather_complex128_moves_16_byte_values():
    ptx = _ptx(_gather_spec("gather", "complex128", True, (I64,), "vec", 1, 64, 2))
    assert "ld.global.v2.f64" in ptx and "st.global.v2.f64" in ptx and ".local" not in ptx


@pytest.mark.parametrize("op", ["gather", "scatter", "check"])
def test_nd_gather_scatter_check_kernels(op):
    dts = (I64, np.dtype("uint16"))
    ptx = _ptx(_gather_spec(op, "complex128", True, dts, "nd", 3, 32, 1))
    assert "rem.u32" in ptx or "div.u32" in ptx  # 32-bit coordinates
    assert ".local" not in ptx
    if op == "scatter":
        assert "st.global.v2.f64" in ptx  # one 16-byte store: a scattered value is never torn
    if op == "check":
        assert "f64" not in ptx  # reads indices only


def test_nd_kernels_of_many_dims_and_64_bit_coordinates():
    ptx = _ptx(_gather_spec("gather", "uint8", False, (I64, I64, I64), "nd", 7, 64, 1))
    assert ".local" not in ptx
    ptx = _ptx(_gather_spec("scatter", "uint64", False, (), "nd", 1, 64, 1))
    assert ".local" not in ptx


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_real_eigenvector_kernels_compile_without_local_memory(dtype):
    from arrayx.cuda.kernels.linalg import kernels
    assert ".local" not in _ptx(kernels.real_eigenvectors_spec(np.dtype(dtype)))


def test_repeat_kernels_compile():
    from arrayx.cuda.kernels import manipulation
    for spec in manipulation.precompile_specs():
        assert ".local" not in _ptx(spec)


# --- scan, mask and search: decoupled look-back scans, flags, masks, binary search ------------

@pytest.mark.parametrize("segmented, lookback_warp", [(True, False), (False, False),
                                                      (False, True)])
def test_row_scan_float32_moves_vectors_and_uses_relaxed_status_words(segmented, lookback_warp):
    from arrayx.cuda.kernels import scan
    ptx = _ptx(scan.row_spec(scan.RowScan("sum", F32, F32, segmented=segmented,
                                          lookback_warp=lookback_warp)))
    ops_seen = _mem_ops(ptx)
    assert "ld.global.v4.f32" in ops_seen and "st.global.v4.f32" in ops_seen, ops_seen
    # the status word: one 64-bit relaxed load / store (flag and value packed in one word)
    assert "ld.relaxed.gpu.global.u64" in ptx and "st.relaxed.gpu.global.u64" in ptx
    assert "atom.global.add.u64" in ptx  # the dynamic tile id
    assert "prefetch.global.L2" in ptx  # a later tile's input
    assert ".local" not in ptx
    if segmented:
        assert ".minnctapersm" not in ptx
    else:  # one plain row: compiled for PLAIN_ROW_BLOCKS resident blocks (ptxas caps registers)
        threads = 256 + (32 if lookback_warp else 0)
        assert f".maxntid {threads}, 1, 1" in ptx
        assert f".minnctapersm {scan.tuning.PLAIN_ROW_BLOCKS}" in ptx


def test_row_scan_prefetches_a_later_tile_only_when_read_by_vectors():
    from arrayx.cuda.kernels import scan
    # 256 x 11 x 4 float32 a tile read and written (90112 bytes), PREFETCH_BYTES (8 MiB) ahead
    plain = scan.row_spec(scan.RowScan("sum", F32, F32, segmented=False))
    ahead = scan.tuning.PREFETCH_BYTES // (256 * 11 * 4 * 8)
    assert ahead == 93 and plain.name.endswith(f"_p{ahead}")
    # 11264 float32 = 352 lines of 128 bytes over 288 threads: two prefetches a thread at most
    assert plain.source.count("prefetch_line(inp, (tile + 93) * 11264 + ") == 2
    assert "(tile + 93) * 11264 + 11264 <= total" in plain.source  # whole tiles only
    strided = scan.row_spec(scan.RowScan("sum", F32, F32, in_kind="s", segmented=False))
    off = scan.row_spec(scan.RowScan("sum", F32, F32, segmented=False, ahead=0))
    for spec in (strided, off):
        assert "prefetch" not in spec.source and "_p" not in spec.name.rsplit("_", 1)[-1]
    # x[mask]: the mask a later tile, and x of its own tile (read after the look-back)
    select = scan.row_spec(scan.RowScan("sum", B, np.dtype("int32"), flag=True, segmented=False,
                                        moved="float32"))
    assert "prefetch_line(inp, (tile + " in select.source
    assert "prefetch_line(x, tile * " in select.source


def test_row_scan_trace_stamps_each_phase_once_and_only_when_asked():
    from arrayx.cuda.kernels import scan
    one_row = scan.RowScan("sum", F32, F32, segmented=False)
    traced = scan.row_spec(one_row, scan.PhaseTrace())
    plain = scan.row_spec(one_row)
    assert traced.source.count("= globaltimer()") == len(scan.TRACE_PHASES)
    assert traced.argtypes == plain.argtypes + ("int64*",) and traced.name != plain.name
    assert "globaltimer" not in plain.source  # the kernels that run are untouched
    with pytest.raises(AssertionError):  # the phases are the look-back warp's
        scan.row_spec(scan.RowScan("sum", F32, F32), scan.PhaseTrace())
    # the probe runs only on a GPU: its kernel must still compile
    assert "%globaltimer" in _ptx(traced) and ".local" not in _ptx(traced)


def test_row_scan_computes_only_the_positions_it_reads():
    from arrayx.cuda.kernels import scan
    # one row read by vectors: no element's position is read (no heads, no strided address)
    plain = scan.row_spec(scan.RowScan("sum", F32, F32, segmented=False)).source
    assert "p0_0 =" not in plain and "r0_0 =" not in plain
    # rows read by vectors: positions (heads) but not rows (addresses) in the loads and rounds
    rows = scan.row_spec(scan.RowScan("sum", F32, F32)).source
    assert "p0_1 = p0_0 + 1" in rows and "r0_0 =" not in rows and "r_1 =" not in rows
    # rows stored by elements: each element's row and position address the store
    strided = scan.row_spec(scan.RowScan("sum", F32, F32, out_kind="s")).source
    assert "r_1 = select(p_1 == K, r_0 + 1, r_0)" in strided and "r0_0 =" not in strided


_CHOICE_FORMS = {  # the helper's call, then the branch it stands for in a kernel's source
    "select": ("    y = select(x != 0, x * 2.0, x)",
               "    y = x * 2.0 if x != 0 else x"),
    "load_or": ("    y = load_or(inp, i + 1, i + 1 < n, float32(0))",
                "    y = inp[i + 1] if i + 1 < n else float32(0)"),
    "store_if": ("    store_if(out, i + 1, i + 1 < n, x)\n    y = x",
                 "    if i + 1 < n:\n        out[i + 1] = x\n    y = x"),
}


@pytest.mark.parametrize("helper", sorted(_CHOICE_FORMS))
def test_choice_helpers_compile_to_the_branch_they_replace(helper):
    # device/branchless.py and device/guarded.py keep the kernel's PTX: only numba's front end
    # sees fewer blocks
    import re

    def kernel(body):
        src = ("def choice(out, inp, n):\n    i = cuda.grid(1)\n    x = inp[i]\n"
               f"{body}\n    out[i] = y\n")
        return _ptx(compiler.KernelSpec("choice", src, "choice",
                                        ("float32*", "float32*", "int64")))

    def normalised(ptx):
        return re.sub(r"_ZN\w+", "N", "\n".join(
            line for line in ptx.splitlines() if not line.lstrip().startswith("//")))
    helper_form, branch_form = _CHOICE_FORMS[helper]
    module = "branchless" if helper == "select" else "guarded"
    assert helper in compiler.helpers_used(helper_form).get(module, [])
    assert normalised(kernel(helper_form)) == normalised(kernel(branch_form))


def test_fused_mask_selection_reads_x_vectors():
    from arrayx.cuda.kernels import scan
    ptx = _ptx(scan.row_spec(scan.RowScan("sum", B, np.dtype("int32"), flag=True,
                                          segmented=False, moved="uint32")))
    ops_seen = _mem_ops(ptx)
    assert "ld.global.u32" in ops_seen and "ld.global.v4.u32" in ops_seen, ops_seen
    assert ".local" not in ptx


@pytest.mark.parametrize("op, src, dst, kinds, bits", [
    ("prod", "complex128", "complex128", "ss", 64),   # split status words, 64-bit positions
    ("sum", "bool", "int64", "vs", 32),
    ("sum", "int8", "int8", "vv", 32),                # 16 elements a vector, widened shuffles
    ("prod", "uint16", "uint32", "sv", 32),
    ("sum", "float64", "complex128", "vv", 32),
])
def test_row_scan_kernels_compile_without_local_memory(op, src, dst, kinds, bits):
    from arrayx.cuda.kernels import scan
    ptx = _ptx(scan.row_spec(scan.RowScan(op, np.dtype(src), np.dtype(dst), in_kind=kinds[0],
                                          out_kind=kinds[1], bits=bits)))
    assert ".local" not in ptx
    if kinds == "vv" and np.dtype(dst).itemsize == 16:
        assert "st.global.v2.f64" in ptx


@pytest.mark.parametrize("op, src, kinds, segmented", [
    ("nansum", "float32", "vv", True), ("nanprod", "complex64", "vs", False)])
def test_nan_row_scan_kernels_compile_without_local_memory(op, src, kinds, segmented):
    from arrayx.cuda.kernels import scan
    dt = np.dtype(src)
    ptx = _ptx(scan.row_spec(scan.RowScan(op, dt, dt, in_kind=kinds[0], out_kind=kinds[1],
                                          segmented=segmented)))
    assert ".local" not in ptx
    if kinds == "vv":
        ops_seen = _mem_ops(ptx)
        assert "st.global.v4.f32" in ops_seen, ops_seen


def test_nan_column_scan_kernels_compile_without_local_memory():
    from arrayx.cuda.kernels import scan
    for op, dt in (("nansum", F32), ("nanprod", np.dtype("complex128"))):
        assert ".local" not in _ptx(scan.column_spec(op, dt, dt, 32))


def test_flag_scan_reads_mask_words_and_writes_rank_vectors():
    from arrayx.cuda.kernels import scan
    ptx = _ptx(scan.row_spec(scan.RowScan("sum", B, np.dtype("int32"), flag=True)))
    ops_seen = _mem_ops(ptx)
    assert "ld.global.u32" in ops_seen and "st.global.v4.u32" in ops_seen, ops_seen
    assert ".local" not in ptx


def test_mask_and_nonzero_kernels():
    from arrayx.cuda.kernels import mask, scan
    I32 = np.dtype("int32")
    ptx = _ptx(mask.compact_spec("uint32", I32, 4))
    assert "ld.global.v4.u32" in ptx and ".local" not in ptx  # x and the ranks as vectors
    for spec in (mask.compact_spec("complex128", I64, 1), mask.coords_spec(I32, 3, 32),
                 mask.coords_spec(I64, 1, 64), mask.masked_scatter_spec("uint16", I32, 3, 32),
                 scan.column_spec("sum", F32, np.dtype("float64"), 32),
                 scan.column_spec("prod", np.dtype("complex64"), np.dtype("complex64"), 64)):
        assert ".local" not in _ptx(spec)


@pytest.mark.parametrize("dtype", ["float32", "int64", "uint8"])
def test_searchsorted_kernels(dtype):
    from arrayx.cuda.kernels import search
    for side in ("left", "right"):
        assert ".local" not in _ptx(search.kernel_spec(np.dtype(dtype), side))
