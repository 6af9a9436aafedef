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

from arrayx._elementwise_functions import (BINARY_CATEGORY, UNARY_CATEGORY,  # noqa: E402
                                           unary_result_dtype)
from arrayx.cuda import compiler, layout  # noqa: E402
from arrayx.cuda import elementwise_ops as ops  # noqa: E402
from arrayx.cuda.elementwise import kernel_spec  # noqa: E402
from arrayx.cuda.precompile import KINDS  # noqa: E402

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
        dt = next((d for d in PREFERRED if d.kind in KINDS[cat]
                   and not ops.is_identity_unary(name, d) and ops.constant_unary(name, d) is None),
                  None)
        if dt is None:  # positive: a copy, no kernel of its own
            continue
        yield pytest.param(name, ops.unary_op(name, dt, unary_result_dtype(name, dt)), ("a",),
                           (dt,), id=f"{name}-{dt}")
    for name, cat in sorted(BINARY_CATEGORY.items()):
        dt = next(d for d in PREFERRED if d.kind in KINDS[cat])
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


def test_transpose_tile_uses_shared_memory():
    ptx = _ptx(kernel_spec("cast", ops.cast_op(F32, F32), ("a",), (F32,), "tile"))
    assert ".shared" in ptx and "bar.sync" in ptx
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
