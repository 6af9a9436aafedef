"""The elementwise kernels precompiled ahead of time: every kernel `launch` can pick for arrays
under 2**31 elements (``python -m arrayx.cuda.precompile`` gathers them with the other families')."""

from __future__ import annotations

import itertools

import numpy as np

from ...._backend import BINARY_CATEGORY, UNARY_CATEGORY, unary_result_dtype
from ...._dtypes import CATEGORIES, all_dtypes
from ...engine import layout
from .._common import BOOL, DIM_BUCKETS
from . import ops, tuning
from .template import kernel_spec, tile_specs

_I64 = np.dtype("int64")


def _rows_forms(name, kinds):
    """The operand kinds of the rows layout's vector kernels precompiled: every array contiguous
    along the rows, or one of several constant along them (a column broadcast such as x - m);
    a lone array constant along the rows only for a cast (a broadcast written out, x[...] = m)."""
    arrays = [i for i, k in enumerate(kinds) if k == "a"]
    if len(arrays) < 2 and name != "cast":
        return [kinds]
    return [kinds] + [tuple("r" if i == j else k for i, k in enumerate(kinds)) for j in arrays]


def _launchable_specs(name, op, kinds, dtypes, strided=DIM_BUCKETS, tile=False):
    """The specs `launch` can pick for one operation: vec, strided (32-bit), rows (2-D: vectors,
    and one element at a time), tile (32-bit, with vectors and one element at a time)."""
    arrays = [d.itemsize for k, d in zip(kinds, dtypes) if k == "a"]
    N = layout.vector_width(op.out.itemsize, *arrays)
    specs = [kernel_spec(name, op, kinds, dtypes, "vec", N, tuning.VEC_UNROLL)]
    specs += [kernel_spec(name, op, kinds, dtypes, "strided", D=D, index_bits=32) for D in strided]
    if strided:
        specs.append(kernel_spec(name, op, kinds, dtypes, "rows", 1, tuning.ROWS_UNROLL, 1))
        if N > 1:
            specs += [kernel_spec(name, op, forms, dtypes, "rows", N, tuning.ROWS_VEC_UNROLL, 1)
                      for forms in _rows_forms(name, kinds)]
    if tile:
        specs += tile_specs(name, op, kinds, dtypes)
    return specs


def precompile_specs() -> list:
    """Every elementwise kernel `launch` can pick for arrays under 2**31 elements."""
    out = []
    for name, cat in UNARY_CATEGORY.items():
        for dt in all_dtypes:
            if dt in CATEGORIES[cat] and not ops.is_identity_unary(name, dt) and \
                    ops.constant_unary(name, dt) is None:
                op = ops.unary_op(name, dt, unary_result_dtype(name, dt))
                out += _launchable_specs(name, op, ("a",), (dt,), tile=True)
    for name, cat in BINARY_CATEGORY.items():
        computed = {ops.compute_dtype(name, dt) for dt in all_dtypes if dt in CATEGORIES[cat]}
        for ct in sorted(computed, key=all_dtypes.index):
            op = ops.binary_op(name, ct)
            for kinds in (("a", "a"), ("a", "s"), ("s", "a")):
                out += _launchable_specs(name, op, kinds, (ct, ct))
    for src, dst in itertools.product(all_dtypes, all_dtypes):
        if not (src.kind == "c" and dst.kind not in "cb"):
            out += _launchable_specs("cast", ops.cast_op(src, dst), ("a",), (src,), tile=True)
    for dt in all_dtypes:
        out += _launchable_specs("fill", ops.cast_op(dt, dt), ("s",), (dt,))
        for kinds in itertools.product("as", repeat=2):
            out += _launchable_specs("where", ops.where_op(dt), ("a",) + kinds, (BOOL, dt, dt))
        if dt.kind in "iuf":
            for kinds in itertools.product("as", repeat=2):
                out += _launchable_specs("clip", ops.clip_op(dt), ("a",) + kinds, (dt, dt, dt))
        if dt.kind in "iuf":
            op, dts = ops.arange_op(dt)
            out += _launchable_specs("arange", op, ("s", "s"), dts, strided=())
        if dt.kind in "fc":
            for precision in (ops.F64, ops.F32):
                op, dts = ops.linspace_op(dt, precision)
                out += _launchable_specs("linspace", op, ("s",) * 5, dts, strided=())
        out += _launchable_specs("eye", ops.eye_op(dt), ("s", "s"), (_I64, _I64), strided=())
        for upper in (False, True):
            out += _launchable_specs("triu" if upper else "tril", ops.triangle_op(dt, upper),
                                     ("a", "s", "s", "s"), (dt, _I64, _I64, _I64))
    return out
