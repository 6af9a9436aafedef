"""The ``elementwise_program`` primitive: a chain of elementwise primitives (what
``arrayx.compile`` fuses) as one kernel of the elementwise template.

A program (arrayx/_backend.py, PROGRAM_FORMAT) is a tuple of steps, each one of the
``unary``/``binary``/``where``/``astype``/``clip`` primitives. ``program_op`` turns it into one
``Op`` whose expression calls a generated inner function::

    def _fz_<digest>(p0, p1, p2):
        t0 = float32(<binary_op("multiply", float32).expr over p0, p1>)
        t1 = float32(<binary_op("add", float32).expr over t0, p2>)
        return t1

Each step is the Op the eager primitive launches (ops.py, chosen the way functions.py and
primitives.py choose it: the same casts of operands, the same computing dtype), and each result
is rounded to its dtype as the eager kernel's store rounds it; so a fused kernel computes what
the eager kernels compute, except that the compiler may now contract a multiply and an add of
adjacent steps into one fused multiply-add. The template then gives the fused kernel the eager
layouts (16-byte vectors, alignment phases and scalar tails, strided, transposing tile).
"""

from __future__ import annotations

import functools
import hashlib
import math
import re

import numpy as np

from ...engine.array import CudaArray
from .._common import BOOL, element_type
from .dispatch import launch
from .functions import unary_plan
from .ops import Op, binary_op, cast_op, clip_op, compute_dtype, ipow_source, where_op

_X = re.compile(r"\bx(\d)\b")


def _value(expr: str, dt: np.dtype) -> str:
    """`expr` rounded to dtype `dt` as a store rounds it, in the value form operations read
    (bool: a numba boolean; the eager kernels store it as a uint8 and read `!= 0`)."""
    if dt == BOOL:
        return f"({element_type(dt)}({expr}) != 0)"
    return f"{dt.name}({expr})"


def _literal(value, dt: np.dtype) -> str:
    if dt == BOOL:
        return "True" if value else "False"
    if dt.kind == "c":
        v = complex(value)
        return f"{dt.name}(complex({float(v.real)!r}, {float(v.imag)!r}))"
    if dt.kind == "f":
        v = float(value)
        text = "NAN" if v != v else "INF" if v == math.inf else "-INF" if v == -math.inf else repr(v)
        return f"{dt.name}({text})"
    return f"{dt.name}({int(value)})"


class _Builder:
    """The inner function's statements, its helpers and its operands' dtypes."""

    def __init__(self, operand_dtypes):
        self.dtypes = list(operand_dtypes)  # None: a scalar, typed by the step that reads it
        self.values = [f"p{k}" for k in range(len(self.dtypes))]
        self.lines: list = []
        self.helpers: list = []
        self.ipow: dict = {}  # dtype -> the name of its integer power helper

    def emit(self, op: Op, args) -> int:
        """A statement computing `op` over the values `args`; returns the new value's ref."""
        expr = op.expr
        helpers = op.helpers
        if "_ipow" in helpers:
            name = self.ipow.setdefault(op.out, f"_ipow_{op.out.name}")
            expr = expr.replace("_ipow(", f"{name}(")
            helpers = tuple(h for h in helpers if h != "_ipow")
        for h in helpers:
            if h not in self.helpers:
                self.helpers.append(h)
        expr = _X.sub(lambda m: args[int(m.group(1))], expr)
        name = f"t{len(self.lines)}"
        self.lines.append(f"    {name} = {_value(expr, op.out)}")
        self.values.append(name)
        self.dtypes.append(op.out)
        return len(self.values) - 1

    def operand(self, ref, dt: np.dtype) -> str:
        """The value of `ref` computed on in dtype `dt`: a scalar operand takes `dt` (as the
        eager kernel's scalar argument), an array of another dtype is cast (as_dtype)."""
        have = self.dtypes[ref]
        if have is None:
            self.dtypes[ref] = dt
            return self.values[ref]
        if have != dt:
            return self.values[self.emit(cast_op(have, dt), [self.values[ref]])]
        return self.values[ref]


def _step(b: _Builder, step, value) -> int:
    """Emit one step; `value[ref]` is the builder value of program ref `ref`. Returns the
    step's value."""
    kind, name, refs, dtype = step
    args = [None if r is None else value[r] for r in refs]
    if kind == "unary":
        src = b.dtypes[args[0]]
        plan = unary_plan(name, src)
        if plan[0] == "copy":
            return args[0]
        if plan[0] == "fill":
            return b.emit(Op(_literal(plan[1], plan[2]), (), plan[2]), [])
        return b.emit(plan[1], [b.operand(args[0], src)])
    if kind == "binary":
        dt = compute_dtype(name, np.dtype(dtype))
        return b.emit(binary_op(name, dt), [b.operand(r, dt) for r in args])
    if kind == "where":
        dt = np.dtype(dtype)
        return b.emit(where_op(dt), [b.operand(args[0], BOOL), b.operand(args[1], dt),
                                     b.operand(args[2], dt)])
    if kind == "astype":
        src, dt = b.dtypes[args[0]], np.dtype(dtype)
        return args[0] if src == dt else b.emit(cast_op(src, dt), [b.operand(args[0], src)])
    if kind == "clip":
        a, lo, hi = args
        dt = b.dtypes[a]
        if lo is None and hi is None:
            return a
        if lo is None or hi is None:
            fn, bound = ("minimum", hi) if lo is None else ("maximum", lo)
            return b.emit(binary_op(fn, dt), [b.operand(a, dt), b.operand(bound, dt)])
        return b.emit(clip_op(dt), [b.operand(r, dt) for r in (a, lo, hi)])
    raise ValueError(f"unknown program step {kind!r}")


def program_op(program, operand_dtypes) -> tuple:
    """(Op, operand dtypes) of `program` over operands of `operand_dtypes` (None for a Python
    scalar: it takes the dtype the step that reads it computes in)."""
    return _program_op(program, tuple(operand_dtypes))


@functools.lru_cache(maxsize=4096)  # plans come and go (arrayx.compile's cache is bounded too)
def _program_op(program, operand_dtypes) -> tuple:
    b = _Builder(operand_dtypes)
    n = len(operand_dtypes)
    value = list(range(n))  # program ref -> builder value (casts add values of their own)
    for step in program:
        value.append(_step(b, step, value))
    result = value[-1]
    if any(d is None for d in b.dtypes[:n]):
        raise ValueError("elementwise_program: a scalar operand that no step reads")
    if result < n:  # the program is an identity of an operand: copy it through a cast
        result = b.emit(cast_op(b.dtypes[result], b.dtypes[result]), [b.values[result]])
    out = b.dtypes[result]
    body = "\n".join(b.lines) + f"\n    return {b.values[result]}\n"
    params = ", ".join(f"p{k}" for k in range(n))
    sources = [ipow_source(dt).replace("def _ipow(", f"def {name}(")
               for dt, name in b.ipow.items()]
    digest = hashlib.sha256((params + body + "".join(sources)).encode()).hexdigest()[:16]
    fname = f"_fz_{digest}"
    sources.append(f"    def {fname}({params}):\n" + "\n".join("    " + ln for ln in
                                                             body.rstrip("\n").split("\n")))
    op = Op(f"{fname}({', '.join(f'x{k}' for k in range(n))})", tuple(b.helpers), out,
            "\n".join(sources))
    return op, tuple(b.dtypes[:n])


_by_identity: dict = {}  # id(program) -> (program, operand dtypes, Op, dtypes, kernel name)


def elementwise_program(program, operands, shape):
    """The `elementwise_program` primitive (see _backend.PRIMITIVES): one launch of the
    template for the whole program. A caller replaying one program passes the same tuple each
    time: found by identity, it is not hashed again (a long program's hash is most of a short
    launch's host time)."""
    have = tuple(o.dtype if o.__class__ is CudaArray else None for o in operands)
    got = _by_identity.get(id(program))
    if got is None or got[0] is not program or got[1] != have:
        op, dtypes = program_op(program, have)
        got = (program, have, op, dtypes, op.expr[1:op.expr.index("(")])
        if len(_by_identity) >= 4096:
            _by_identity.clear()
        _by_identity[id(program)] = got
    return launch(got[4], got[2], operands, got[3], shape)
