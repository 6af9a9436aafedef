"""The CUDA ``elementwise_program`` (arrayx/cuda/kernels/elementwise/program.py), checked without
a GPU (runs in CI): (a) the fused Op of ``program_op`` compiled with numba for the CPU under
``ops.host_namespace()`` (as tests/cuda/test_elementwise_ops.py does, the Op's generated
``source`` included in the function body) against the cpu backend's
``elementwise_program``, the steps run one by one; (b) the template kernel of a float32 chain
compiled to PTX for sm_90: 16-byte loads and stores, no local memory (as tests/cuda/test_ptx.py).
"""

import re

import numpy as np
import pytest

numba = pytest.importorskip("numba")

from arrayx.cpu import elementwise as cpu  # noqa: E402
from arrayx.cuda.kernels.elementwise import ops as ops  # noqa: E402
from arrayx.cuda.kernels.elementwise.program import program_op  # noqa: E402

F32, F64, I32, I64 = (np.dtype(d) for d in ("float32", "float64", "int32", "int64"))
U8, B, C64, I16 = np.dtype("uint8"), np.dtype(bool), np.dtype("complex64"), np.dtype("int16")
_NS = None


def host_function(op, n_inputs):
    """op over 1-D NumPy arrays (scalars: 0-d), compiled by numba for the CPU."""
    global _NS
    if _NS is None:
        _NS = ops.host_namespace()
    args = ", ".join(f"a{k}" for k in range(n_inputs))
    expr = re.sub(r"\bx(\d)\b", r"a\1[i]", op.expr)
    body = ops.inner_source(op.helpers)
    if "_ipow" in op.helpers:
        body += "\n" + ops.ipow_source(op.out)
    if op.source:
        body += "\n" + op.source
    src = f"def apply(out, {args}):\n{body}\n    for i in range(out.shape[0]):\n        out[i] = {expr}\n"
    ns = dict(_NS)
    exec(src, ns)
    return numba.njit(error_model="numpy")(ns["apply"])


N = 257


def _data(dt, rng):
    if dt == B:
        return rng.random(N) < 0.5
    if dt.kind in "iu":
        lo = 0 if dt.kind == "u" else -100
        return rng.integers(lo, 100, N).astype(dt)
    if dt.kind == "c":
        return (rng.standard_normal(N) + 1j * rng.standard_normal(N)).astype(dt)
    return (3 * rng.standard_normal(N)).astype(dt)


# (id, program, operands: a dtype for an array, a Python scalar for a scalar, exact)
PROGRAMS = [
    ("f32-multiply-add-tanh", (("binary", "multiply", (0, 1), F32), ("binary", "add", (3, 2), F32),
                               ("unary", "tanh", (4,), None)), [F32, F32, F32], False),
    ("f64-scalars-where", (("binary", "multiply", (0, 1), F64), ("binary", "greater", (3, 2), F64),
                           ("where", None, (4, 0, 3), F64)), [F64, 0.5, 1.0], False),
    ("f32-cast-to-f64-clip", (("astype", None, (0,), F64), ("binary", "subtract", (3, 1), F64),
                              ("clip", None, (4, 2, None), None)), [F32, F64, -1.5], False),
    ("i32-shift-xor-floordiv", (("binary", "bitwise_left_shift", (0, 2), I32),
                                ("binary", "bitwise_xor", (3, 1), I32),
                                ("binary", "floor_divide", (4, 1), I32)),
     [I32, I32, 2], True),
    ("u8-wrap-remainder", (("binary", "multiply", (0, 1), U8), ("binary", "add", (2, 0), U8),
                           ("binary", "remainder", (3, 1), U8)), [U8, U8], True),
    ("bool-chain", (("binary", "logical_and", (0, 1), B), ("unary", "logical_not", (2,), None),
                    ("binary", "logical_xor", (3, 0), B)), [B, B], True),
    ("c64-chain", (("binary", "multiply", (0, 1), C64), ("unary", "exp", (2,), None),
                   ("binary", "add", (3, 0), C64)), [C64, C64], False),
    ("ipow-two-dtypes", (("binary", "pow", (0, 2), I32), ("astype", None, (4,), I64),
                         ("binary", "pow", (5, 3), I64), ("binary", "add", (6, 1), I64)),
     [I32, I64, 3, 2], True),
    ("isnan-of-int-constant", (("unary", "isnan", (0,), None), ("unary", "logical_not", (1,), None)),
     [I16], True),
    ("int-to-bool-cast-where", (("astype", None, (0,), B), ("where", None, (2, 1, 0), I32)),
     [I32, I32], True),
]
PROGRAMS_WITH_CASTS_AND_IDENTITIES = [
    # a step whose operand is cast (int8 -> int32) emits an extra value in program.py's builder,
    # so the next step's ref (n + step index) names the cast, not the step's result
    ("implicit-cast-then-step", (("binary", "add", (0, 1), I32), ("binary", "multiply", (2, 2), I32)),
     [np.dtype("int8"), I32], True),
    # an identity unary (positive) appends no value, so later refs are off by one the other way
    ("positive-identity", (("unary", "positive", (0,), None), ("binary", "multiply", (1, 0), F32)),
     [F32], True),
    ("identity-then-two-steps", (("unary", "positive", (0,), None), ("binary", "add", (2, 1), F32),
                                 ("binary", "multiply", (3, 2), F32)), [F32, F32], True),
]
PROGRAMS_ALL = [pytest.param(*p[1:], id=p[0]) for p in PROGRAMS + PROGRAMS_WITH_CASTS_AND_IDENTITIES]


@pytest.mark.parametrize("program, operands, exact", PROGRAMS_ALL)
def test_program_op_matches_cpu_program(program, operands, exact):
    rng = np.random.default_rng(len(program))
    values = [_data(o, rng) if isinstance(o, np.dtype) else o for o in operands]
    op, dtypes = program_op(program, [o if isinstance(o, np.dtype) else None for o in operands])
    expected = cpu.elementwise_program(program, tuple(values), (N,))
    assert op.out == expected.dtype, (op.out, expected.dtype)
    assert len(dtypes) == len(operands) and all(
        d == o for d, o in zip(dtypes, operands) if isinstance(o, np.dtype))
    host = [v if isinstance(v, np.ndarray) else np.array(v, dtype=d).reshape(1).repeat(N)
            for v, d in zip(values, dtypes)]
    got = np.empty(N, dtype=op.out if op.out != B else np.uint8)
    host_function(op, len(host))(got, *host)
    got = got.astype(op.out)
    if exact:
        np.testing.assert_array_equal(got, expected)
    else:
        tol = 2e-6 if op.out in (F32, C64) else 1e-13
        np.testing.assert_allclose(got, expected, rtol=tol, atol=tol * 10)


def test_float64_program_builds():
    op, dtypes = program_op((("binary", "add", (0, 1), F64),), [F64, F64])
    assert op.out == F64 and dtypes == (F64, F64)


def test_program_op_is_cached_and_validates():
    program = PROGRAMS[0][1]
    assert program_op(program, [F32] * 3) is program_op(program, [F32] * 3)
    with pytest.raises(ValueError):  # a scalar operand no step reads
        program_op((("unary", "negative", (0,), None),), [F32, None])


def test_fused_float32_chain_ptx_uses_16_byte_vectors():
    pytest.importorskip("numba.cuda")
    from arrayx.cuda.engine import compiler
    from arrayx.cuda.kernels.elementwise import kernel_spec, tuning
    op, dtypes = program_op(PROGRAMS[0][1], [F32, F32, F32])
    name = op.expr[:op.expr.index("(")]
    spec = kernel_spec(name, op, ("a", "a", "a"), dtypes, "vec", 4, tuning.VEC_UNROLL)
    try:
        ptx = compiler.compile_spec(spec, (9, 0), debug=False)
    except Exception as e:  # NVVM missing on this machine
        if "NVVM" in str(e) or "libnvvm" in str(e).lower():
            pytest.skip(f"NVVM unavailable: {e}")
        raise
    assert "ld.global.v4.f32" in ptx and "st.global.v4.f32" in ptx
    assert ptx.count("ld.global.v4.f32") >= 3  # the three operands
    assert ".local" not in ptx
