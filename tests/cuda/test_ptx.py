"""Compile the runtime's own kernels to PTX for sm_90 without a GPU (runs in CI).

Checks that the vector helper gives 16-byte global loads/stores and that nothing spills to local
memory. Skipped only when numba-cuda (or its NVVM) is not installed.
"""

import numpy as np
import pytest

pytest.importorskip("numba.cuda")

from arrayx.cuda import compiler  # noqa: E402
from arrayx.cuda.elementwise import kernel_spec  # noqa: E402

CC = (9, 0)
B = np.dtype(bool)


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


@pytest.mark.parametrize("dtype,vec", [("float32", "v4.f32"), ("float64", "v2.f64"),
                                       ("int8", "v4.u32"), ("int16", "v4.u32"),
                                       ("int32", "v4.u32"), ("uint64", "v2.u64"),
                                       ("complex64", "v4.f32"), ("complex128", "v2.f64")])
def test_add_kernel_uses_16_byte_vectors(dtype, vec):
    dt = np.dtype(dtype)
    n = 16 // dt.itemsize
    spec = kernel_spec("add", "x0 + x1", ("a", "a"), (dt, dt), dt, dt, False, "vec", N=n, U=2)
    ptx = _ptx(spec)
    ops = _mem_ops(ptx)
    assert any(o.startswith("ld.global.v") for o in ops), ops
    assert any(o.startswith("st.global.v") for o in ops), ops
    if dtype in ("float32", "float64", "complex64", "complex128", "uint64"):
        assert f"ld.global.{vec}" in ops and f"st.global.{vec}" in ops, ops
    else:
        assert "ld.global.v4.u32" in ops or "ld.global.v4.s32" in ops or f"ld.global.{vec}" in ops, ops
    assert ".local" not in ptx


def test_float32_add_is_ld_global_v4():
    f32 = np.dtype("float32")
    ptx = _ptx(kernel_spec("add", "x0 + x1", ("a", "a"), (f32, f32), f32, f32, False, "vec", 4, 2))
    assert "ld.global.v4.f32" in ptx and "st.global.v4.f32" in ptx
    assert ".local" not in ptx


def test_comparison_bool_output_and_scalar_operand():
    f32 = np.dtype("float32")
    ptx = _ptx(kernel_spec("less", "x0 < x1", ("a", "s"), (f32, f32), f32, B, True, "vec", 4, 2))
    assert "ld.global.v4.f32" in ptx and ".local" not in ptx


def test_strided_kernel_uses_32_bit_division():
    f32 = np.dtype("float32")
    ptx = _ptx(kernel_spec("copy", "x0", ("a",), (f32,), f32, f32, False, "strided", D=3,
                           index_bits=32))
    assert "div.u32" in ptx or "rem.u32" in ptx
    assert ".local" not in ptx


def test_debug_bounds_check_traps():
    f32 = np.dtype("float32")
    ptx = _ptx(kernel_spec("copy", "x0", ("a",), (f32,), f32, f32, False, "strided", D=2,
                           index_bits=64, debug=True))
    assert "trap;" in ptx


def test_fill_vector_store():
    f64 = np.dtype("float64")
    ptx = _ptx(kernel_spec("fill", "x0", ("s",), (f64,), f64, f64, False, "vec", 2, 2))
    assert "st.global.v2.f64" in ptx


def test_entry_name_and_cubin_link():
    f32 = np.dtype("float32")
    spec = kernel_spec("add", "x0 + x1", ("a", "a"), (f32, f32), f32, f32, False, "vec", 4, 2)
    ptx = _ptx(spec)
    assert compiler.entry_name(ptx)
    cubin = compiler.link_cubin(ptx, CC)
    if cubin is None:
        pytest.skip("nvJitLink unavailable")
    assert cubin[:4] == b"\x7fELF"
