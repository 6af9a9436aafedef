"""``arrayx.compile``: a function traced once per signature, its elementwise chains fused, its
launches replayed.

How it works, on every device:

1. **Trace.** The first call with a new signature (the arrays' shapes, dtypes and devices;
   every other argument by value, Python scalars included) runs the function while each
   device's backend is wrapped by a recorder: every primitive the namespace calls
   (``_backend.PRIMITIVES``) is noted with its arguments, native arrays replaced by references.
   Only the tracing thread is recorded; other threads pass straight through. First lazily: when
   every call can wait (elementwise functions, reductions, moments, ``full``, reshape, permute
   and broadcast views), none runs, each result is a placeholder of the shape and dtype the
   contract gives it, and the first call's result is the plan's, as every replay's. A function
   calling anything else is traced again eagerly, each call running as it is recorded.
2. **Plan.** The tape is cut at mutations (``x[key] = v``, in-place operators): a fused kernel
   must not read a value across a write. Inside each part, chains of ``unary``, ``binary``,
   ``where``, ``astype`` and ``clip`` of one result shape whose intermediate results are used
   only inside the chain become one ``elementwise_program`` call (on cuda one kernel of the
   elementwise template: ``arrayx/cuda/kernels/elementwise/program.py``); everything else
   (reductions, matmul, sort, indexing, row functions, library calls) stays the primitive call
   it was. Before that, softmax, log_softmax, logsumexp (keepdims) and layer and RMS norm
   written with the standard's functions (the common spellings: ``exp(x - max(x))`` over its
   ``sum``, ``(x - mean) / sqrt(var + eps) * w + b``, ``x / sqrt(mean(x * x) + eps) * w``...)
   are recognised and become one ``row_function`` call, the fused row kernel of
   ``arrayx.softmax`` and kin: equal to the written form within rounding, and with the row
   functions' non-finite results (``arrayx/_row_functions.py``) where the written form gives
   NaN (a row of -inf: logsumexp -inf). Calls whose results nothing uses are dropped.
3. **Replay.** Later calls with the signature run the plan's steps on the new arguments: no
   Python of the function itself, no validation, no promotion, only the primitives.

Values the host cannot know while tracing:

* A primitive whose result shape depends on the data (``nonzero``, ``unique``, ``repeat`` with
  an array of counts, ``x[mask]``) is a guard: replay checks the shapes it produced; when they
  differ from the trace's, the function is traced again for them (a variant; replay of another
  variant restarts from its first step). Past ``max_variants`` variants of one signature, that
  signature runs eagerly, with a ``CompileWarning``.
* Reading an array's value in Python (``bool(x)``, ``float(x)``, ``x.item()``, ``if x > 0:``,
  printing, ``np.asarray``, DLPack export) raises ``TracedValueError`` naming the line: the
  plan could not follow the branch. ``arrayx.random`` generators are refused the same way (their
  state lives on the host); pass their numbers in as arguments.

Arrays the function captures (closures, globals) are used by reference: replay reads their
current contents. Functions are assumed pure apart from writes into their arguments, which
replay repeats.
"""

from __future__ import annotations

import collections
import functools
import os
import sys
import threading
import warnings

import numpy as np

from ._array_object import Array
from ._backend import BOOL_RESULT_BINARY, PRIMITIVES, unary_result_dtype

__all__ = ["compile", "TracedValueError", "CompileWarning"]


class TracedValueError(TypeError):
    """A compiled function read the value of an array while it was being traced."""


class CompileWarning(UserWarning):
    """arrayx.compile fell back to running a function eagerly."""


_FUSABLE = frozenset({"unary", "binary", "where", "astype", "clip"})
_REFUSED = {
    "to_host": "reads the value of a traced array on the host",
    "to_dlpack": "exports a traced array through DLPack",
    "from_dlpack": "imports an array through DLPack",
    "random": "draws random numbers (an arrayx.random generator's state lives on the host: pass "
              "the numbers in as an argument)",
}
_PACKAGE = os.path.dirname(os.path.abspath(__file__))
_CONSTANT_RESULTS = frozenset({bool, int, float, complex, str, bytes})
_trace_lock = threading.RLock()
_tracing = threading.local()


class _Ref:
    """A value of the tape: an input, or a result of a recorded call."""
    __slots__ = ("index",)

    def __init__(self, index: int):
        self.index = index

    def __repr__(self):
        return f"%{self.index}"


def _user_line() -> str:
    """'file:line (source)' of the innermost frame outside arrayx: where the user's code is."""
    f = sys._getframe(1)
    while f is not None and os.path.abspath(f.f_code.co_filename).startswith(_PACKAGE + os.sep):
        f = f.f_back
    if f is None:
        return "an unknown line"
    import linecache
    text = linecache.getline(f.f_code.co_filename, f.f_lineno).strip()
    return f"{f.f_code.co_filename}:{f.f_lineno}" + (f" ({text})" if text else "")


# ---- the tape --------------------------------------------------------------------------------

class _Node:
    __slots__ = ("backend", "name", "args", "kwargs", "outs", "out_tree")

    def __init__(self, backend, name, args, kwargs, outs, out_tree):
        self.backend = backend
        self.name = name
        self.args = args
        self.kwargs = kwargs
        self.outs = outs          # result refs, in out_tree's order (shapes: _Tape.meta)
        self.out_tree = out_tree  # the result's structure: a ref, or a tuple/list of them or None


class _NotLazy(Exception):
    """A lazy trace met a call it cannot defer: trace again, eagerly."""


class _Placeholder:
    """A result a lazy trace did not compute: its shape and dtype, all the namespace reads of a
    backend array."""
    __slots__ = ("shape", "dtype")

    def __init__(self, shape, dtype):
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)

    @property
    def ndim(self):
        return len(self.shape)


def _shape_of(x):
    return x.shape if hasattr(x, "shape") else ()


def _reduced(shape, axes, keepdims):
    if keepdims:
        return tuple(1 if i in axes else n for i, n in enumerate(shape))
    return tuple(n for i, n in enumerate(shape) if i not in axes)


def _lazy_result(name, args, kwargs):
    """The (shape, dtype) of a call a lazy trace defers, from the contract's rules; _NotLazy for
    any other call (one that writes, reads values, or has a shape only its data decides)."""
    if name == "unary":
        return args[1].shape, unary_result_dtype(args[0], args[1].dtype)
    if name == "binary":
        if kwargs.get("out") is not None or len(args) != 4:
            raise _NotLazy
        op, a, b, dtype = args
        dtype = np.dtype(dtype)
        if op == "divide" and dtype.kind not in "fc":
            raise _NotLazy  # the backend's own computing dtype
        return (np.broadcast_shapes(_shape_of(a), _shape_of(b)),
                np.dtype(bool) if op in BOOL_RESULT_BINARY else dtype)
    if name == "where":
        return np.broadcast_shapes(*(_shape_of(v) for v in args[:3])), args[3]
    if name == "astype":
        return args[0].shape, args[1]
    if name == "clip":
        return args[0].shape, args[0].dtype
    if name == "reduce" and len(args) == 5:
        op, a, axes, keepdims, dtype = args
        return _reduced(a.shape, axes, keepdims), bool if op in ("all", "any") else dtype
    if name == "moments":
        op, a, axes, _, keepdims, dtype = args
        return (_reduced(a.shape, axes, keepdims) if axes else a.shape), dtype
    if name == "full":
        return args[1], args[3]
    if name in ("reshape", "broadcast_to"):
        return args[1], args[0].dtype
    if name == "permute_dims":
        return tuple(args[0].shape[i] for i in args[1]), args[0].dtype
    raise _NotLazy


def _is_native(x) -> bool:
    return hasattr(x, "shape") and hasattr(x, "dtype") and not isinstance(x, Array)


class _Tape:
    """What one trace recorded: natives by identity (kept alive) mapped to refs."""

    def __init__(self, thread: int, lazy: bool):
        self.thread = thread
        self.lazy = lazy          # defer every call (_lazy_result), or run each
        self.nodes: list = []
        self.refs: dict = {}      # id(native) -> _Ref
        self.keep: list = []      # the natives, so their ids stay unique while tracing
        self.meta: dict = {}      # ref index -> (shape, dtype)
        self.count = 0

    def new_ref(self, native) -> _Ref:
        r = _Ref(self.count)
        self.count += 1
        self.refs[id(native)] = r
        self.keep.append(native)
        self.meta[r.index] = (tuple(native.shape), native.dtype)
        return r

    def extra_ref(self, shape, dtype) -> _Ref:
        """A ref for a value the plan adds (no native while tracing)."""
        r = _Ref(self.count)
        self.count += 1
        self.meta[r.index] = (tuple(shape), dtype)
        return r

    def encode(self, value):
        """`value` with every recorded native replaced by its ref (containers rebuilt)."""
        r = self.refs.get(id(value))
        if r is not None and _is_native(value):
            return r
        if type(value) in (tuple, list):
            items = [self.encode(v) for v in value]
            return type(value)(items)
        if type(value) is dict:
            return {k: self.encode(v) for k, v in value.items()}
        return value

    def call(self, backend, name, fn, args, kwargs):
        why = _REFUSED.get(name)
        if why is not None:
            raise TracedValueError(
                f"arrayx.compile: the function {why} at {_user_line()}, so it cannot be traced. "
                "A compiled function may not branch on, print or convert array values: compute "
                "both branches and select with xp.where, or call this part uncompiled.")
        enc_args = tuple(self.encode(a) for a in args)
        enc_kwargs = {k: self.encode(v) for k, v in kwargs.items()}
        if self.lazy:
            if name == "astype" and not args[2] and args[0].dtype == np.dtype(args[1]):
                result = args[0]  # astype(copy=False) of its own dtype: the array itself
            else:
                result = _Placeholder(*_lazy_result(name, args, kwargs))
        else:
            result = fn(*args, **kwargs)
        outs = []

        def register(x):
            if _is_native(x):
                outs.append(self.new_ref(x))
                return outs[-1]
            if type(x) in (tuple, list):
                return type(x)(register(v) for v in x)
            return x
        tree = register(result)
        self.nodes.append(_Node(backend, name, enc_args, enc_kwargs, outs, tree))
        return result

    def shapes(self, node: _Node) -> tuple:
        """The shapes of a call's results."""
        return tuple(self.meta[r.index][0] for r in node.outs)


class _Recorder:
    """A backend as the namespace sees it while tracing: the tracing thread's primitive calls go
    through the tape, everything else straight to the backend."""

    def __init__(self, backend, tape: _Tape):
        self._backend = backend
        self._tape = tape

    def __getattr__(self, name):
        real = getattr(self._backend, name)
        if name not in PRIMITIVES:
            return real
        tape, backend = self._tape, self._backend

        def primitive(*args, **kwargs):
            if threading.get_ident() != tape.thread:
                return real(*args, **kwargs)
            return tape.call(backend, name, real, args, kwargs)
        setattr(self, name, primitive)
        return primitive


# ---- arguments and results -------------------------------------------------------------------

def _flatten(obj, leaves: list):
    """The structure of `obj` (tuples, lists, dicts) with its leaves appended to `leaves`."""
    t = type(obj)
    if t in (tuple, list):
        return (t, tuple(_flatten(v, leaves) for v in obj))
    if t is dict:
        return (dict, tuple((k, _flatten(v, leaves)) for k, v in obj.items()))
    leaves.append(obj)
    return None


def _unflatten(tree, leaves):
    it = iter(leaves)

    def build(t):
        if t is None:
            return next(it)
        kind, items = t
        if kind is dict:
            return {k: build(v) for k, v in items}
        return kind(build(v) for v in items)
    return build(tree)


def _float_key(x: float) -> tuple:
    return (float, x.hex())  # NaN equal to NaN, -0.0 apart from 0.0


def _leaf_key(x, position: int, seen: dict):
    """A leaf's part of the signature."""
    if isinstance(x, Array):
        first = seen.setdefault(id(x._data), position)  # the same array passed twice
        return ("array", x.shape, x.dtype, x.device, first)
    t = type(x)
    if t is float:
        return _float_key(x)
    if t is complex:
        return (t, x.real.hex(), x.imag.hex())
    try:
        hash(x)
    except TypeError:
        raise TypeError(f"arrayx.compile: argument {position} of type {t.__name__} is neither "
                        "an arrayx array nor hashable, so it cannot be part of a signature "
                        "(pass arrays, Python scalars, tuples, lists, dicts or other hashable "
                        "values)") from None
    return (t, x)


def _flat_key(args):
    """The signature of positional arguments that are all arrays (none twice) or Python
    scalars, built without _flatten (the common call, on every replay), or None."""
    key = []
    datas = set()
    for x in args:
        t = type(x)
        if t is Array:
            d = x._data
            datas.add(id(d))
            key.append((d.shape, d.dtype, x._device))
        elif t is float:
            key.append(_float_key(x))
        elif t is int or t is bool:
            key.append((t, x))
        else:
            return None
    if len(datas) != sum(1 for x in args if type(x) is Array):
        return None  # an array passed twice: the general key records which
    return ("flat", tuple(key))


# ---- plans -----------------------------------------------------------------------------------

class _GuardMiss(Exception):
    """Replay met a data-dependent shape other than the trace's."""

    def __init__(self, position: int, shapes: tuple):
        self.position = position
        self.shapes = shapes


def _resolve(value, env):
    if type(value) is _Ref:
        return env[value.index]
    if type(value) in (tuple, list):
        return type(value)(_resolve(v, env) for v in value)
    if type(value) is dict:
        return {k: _resolve(v, env) for k, v in value.items()}
    return value


def _refs_in(value):
    """The refs in an argument (containers walked)."""
    if type(value) is _Ref:
        yield value
    elif type(value) in (tuple, list):
        for v in value:
            yield from _refs_in(v)
    elif type(value) is dict:
        for v in value.values():
            yield from _refs_in(v)


def _has_ref(value) -> bool:
    return next(_refs_in(value), None) is not None


def _bind(tree, result, env):
    if type(tree) is _Ref:
        env[tree.index] = result
    elif type(tree) in (tuple, list):
        for t, r in zip(tree, result):
            _bind(t, r, env)


def _filler(values):
    """A function of the replay values giving `values` (a flat tuple) with each top-level ref
    replaced (refs nested in lists or dicts, as concat's or a key's, through _resolve)."""
    if any(type(v) is not _Ref and _has_ref(v) for v in values):
        return lambda env: _resolve(values, env)
    slots = [(i, v.index) for i, v in enumerate(values) if type(v) is _Ref]
    if not slots:
        return lambda env: values
    template = list(values)

    def fill(env):
        a = template.copy()
        for i, r in slots:
            a[i] = env[r]
        return a
    return fill


def _call_step(node: _Node, guard: int | None, shapes: tuple):
    """A replay step running `node`'s primitive on the current values; a guard's results must
    have the traced `shapes`."""
    fn = getattr(node.backend, node.name)
    args, kwargs, tree = _filler(node.args), node.kwargs, node.out_tree
    resolve_kwargs = _has_ref(kwargs)
    outs = node.outs
    if type(tree) is _Ref and guard is None and not kwargs:
        out = tree.index

        def simple_step(env):  # one result, no keywords, no guard: most calls
            env[out] = fn(*args(env))
        return simple_step

    def step(env):
        result = fn(*args(env), **(_resolve(kwargs, env) if resolve_kwargs else kwargs))
        _bind(tree, result, env)
        if guard is not None:
            got = tuple(tuple(env[r.index].shape) for r in outs)
            if got != shapes:
                raise _GuardMiss(guard, got)
    return step


def _program_step(backend, program, operands, shape, out: _Ref):
    fn = backend.elementwise_program
    operands = _filler(tuple(operands))
    out = out.index

    def step(env):
        env[out] = fn(program, tuple(operands(env)), shape)
    return step


def _step_form(node: _Node) -> tuple:
    """(kind, name, the values it reads, dtype) of an elementwise call as a PROGRAM_FORMAT step
    (clip's None bounds kept)."""
    a = node.args
    if node.name == "unary":
        return "unary", a[0], [a[1]], None
    if node.name == "binary":
        return "binary", a[0], [a[1], a[2]], a[3]
    if node.name == "where":
        return "where", None, [a[0], a[1], a[2]], a[3]
    if node.name == "astype":
        return "astype", None, [a[0]], a[1]
    return "clip", None, [a[0], a[1], a[2]], None


def _data_dependent(node: _Node, tape: _Tape) -> bool:
    """Whether the shape of the call's result depends on array values: nonzero, unique, repeat
    with an array of counts, a key holding a boolean array (x[mask])."""
    if node.name in ("nonzero", "unique"):
        return True
    if node.name == "repeat":
        return type(node.args[1]) is _Ref
    if node.name == "getitem":
        key = node.args[1]
        return any(type(k) is _Ref and tape.meta[k.index][1] == bool
                   for k in (key if type(key) in (tuple, list) else (key,)))
    return False


def _mutates(node: _Node) -> bool:
    """Whether the call writes into an existing array."""
    return node.name == "setitem" or (node.name == "binary" and node.kwargs.get("out") is not None)


def _fusable(node: _Node) -> bool:
    if node.name not in _FUSABLE or len(node.outs) != 1 or type(node.out_tree) is not _Ref:
        return False
    if node.name == "binary":
        return node.kwargs.get("out") is None and len(node.args) == 4
    if node.name == "astype":  # astype(copy=False) of the same dtype returns its input
        return len(node.args) == 3 and node.args[0] is not node.out_tree
    return True


def _program(tape: _Tape, members: list):
    """(program, operands, shape) of the fused `members` (node indices, tape order)."""
    produced = {}  # ref index -> program ref
    loaded = {}  # ref index -> the operand of an array from outside the chain
    operands: list = []
    steps: list = []
    for i in members:
        n = tape.nodes[i]
        kind, name, reads, dtype = _step_form(n)
        refs = []
        for a in reads:
            if a is None:
                refs.append(None)
            elif type(a) is _Ref and a.index in produced:
                refs.append(produced[a.index])
            elif type(a) is _Ref and a.index in loaded:  # an array read twice: loaded once
                refs.append(loaded[a.index])
            else:  # an input of the chain: an array from outside it, or a scalar (one per use)
                refs.append(("operand", len(operands)))
                if type(a) is _Ref:
                    loaded[a.index] = refs[-1]
                operands.append(a)
        produced[n.outs[0].index] = ("step", len(steps))
        steps.append((kind, name, refs, dtype))
    k = len(operands)

    def number(r):
        if r is None:
            return None
        return r[1] if r[0] == "operand" else k + r[1]
    program = tuple((kind, name, tuple(number(r) for r in refs), dt)
                    for kind, name, refs, dt in steps)
    return program, operands, tape.meta[tape.nodes[members[-1]].outs[0].index][0]


# ---- row functions written out -----------------------------------------------------------------
# softmax, log_softmax, logsumexp, layer and RMS norm written with the standard's functions
# (max, exp, sum, mean, var...) are recognised in the tape and become one `row_function` call:
# the row family's kernel reads each row once where the written form reads it once a reduction.
# A pattern is a term template: tuples as the tape's calls are, with variables (_Var) bound to
# the values they meet; add and multiply match either order of their operands.

class _Var:
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name


class _Term:
    """The structure computing a value (its calls down to the leaves), compared by structure;
    `reduces`: whether a reduction is among those calls (every row pattern has one)."""
    __slots__ = ("ref", "key", "reduces")

    def __init__(self, ref, key, reduces):
        self.ref = ref
        self.key = key
        self.reduces = reduces

    def __eq__(self, other):
        return isinstance(other, _Term) and self.key == other.key

    def __hash__(self):
        return hash(self.key)


def _terms(tape: _Tape):
    """term(ref index) -> _Term of that value (the tape holds no write: _rewrite_rows)."""
    producer = {}
    for n in tape.nodes:
        if len(n.outs) == 1 and type(n.out_tree) is _Ref:
            producer[n.outs[0].index] = n
    memo: dict = {}

    def arg(a):
        if type(a) is _Ref:
            return term(a.index)
        if type(a) in (tuple, list):
            return tuple(arg(v) for v in a)
        return a

    def term(index):
        t = memo.get(index)
        if t is None:
            n = producer.get(index)
            if n is None:
                t = _Term(index, ("leaf", index), False)
            else:
                args = tuple(arg(a) for a in n.args)
                t = _Term(index, (n.name,) + args, n.name in ("reduce", "moments") or
                          any(type(a) is _Term and a.reduces for a in args))
            memo[index] = t
        return t
    return term


def _unify(template, value, env: dict) -> bool:
    if type(template) is _Var:
        bound = env.get(template.name)
        if bound is None:
            env[template.name] = value
            return True
        return bound == value and type(bound) is type(value)
    if type(template) is tuple:
        if type(value) is _Term:
            value = value.key
        if type(value) is not tuple or len(value) != len(template):
            return False
        if template[0] == "binary" and template[1] in ("add", "multiply"):
            for order in ((2, 3), (3, 2)):
                trial = dict(env)
                if all(_unify(template[i], value[j], trial) for i, j in zip((0, 1, 4), (0, 1, 4))) \
                        and _unify(template[2], value[order[0]], trial) \
                        and _unify(template[3], value[order[1]], trial):
                    env.clear()
                    env.update(trial)
                    return True
            return False
        return all(_unify(t, v, env) for t, v in zip(template, value))
    if type(template) in (int, float) and type(value) in (int, float):
        return template == value  # x ** 2 and x ** 2.0
    return type(template) is type(value) and template == value


def _row_patterns():
    X, D, AX, EPS, W, B = (_Var(n) for n in ("X", "D", "AX", "EPS", "W", "B"))

    def bin(name, a, b):
        return ("binary", name, a, b, D)

    def red(name, a):
        return ("reduce", name, a, AX, True, D)
    shift = bin("subtract", X, red("max", X))
    e = ("unary", "exp", shift)
    log_sum = ("unary", "log", red("sum", e))
    centred = bin("subtract", X, red("mean", X))
    variances = [("moments", "var", X, AX, 0.0, True, D), red("mean", bin("multiply", centred, centred)),
                 red("mean", bin("pow", centred, 2))]
    squares = [red("mean", bin("multiply", X, X)), red("mean", bin("pow", X, 2))]
    patterns = [("softmax", bin("divide", e, red("sum", e))),
                ("log_softmax", bin("subtract", shift, log_sum)),
                ("logsumexp", bin("add", log_sum, red("max", X)))]
    for v in variances:
        norm = bin("divide", centred, ("unary", "sqrt", bin("add", v, EPS)))
        patterns += [("layer_norm", bin("add", bin("multiply", norm, W), B)),
                     ("layer_norm", bin("multiply", norm, W)), ("layer_norm", norm)]
    for m in squares:
        norm = bin("divide", X, ("unary", "sqrt", bin("add", m, EPS)))
        patterns += [("rms_norm", bin("multiply", norm, W)), ("rms_norm", norm)]
    return patterns


_ROW_PATTERNS = _row_patterns()


def _match_row(term, tape: _Tape):
    """(name, x, weight, bias, eps) of the row function `term` computes, or None."""
    key = term.key
    if key[0] != "binary" or not term.reduces:
        return None
    for name, template in _ROW_PATTERNS:
        if template[1] != key[1]:
            continue
        env: dict = {}
        if not _unify(template, term, env):
            continue
        x = env["X"]
        shape, dtype = tape.meta[x.ref]
        if dtype.kind != "f" or env["D"] != dtype or env["AX"] != (len(shape) - 1,) or \
                not shape or not shape[-1]:
            continue
        eps = env.get("EPS", 0.0)
        if "EPS" in env and (type(eps) not in (int, float) or not eps >= 0):
            continue
        params = []
        for v in ("W", "B"):
            t = env.get(v)
            if t is not None and (type(t) is not _Term or tape.meta[t.ref] != ((shape[-1],), dtype)):
                break
            params.append(t)
        else:
            return name, x, params[0], params[1], float(eps)
    return None


def _rewrite_rows(tape: _Tape) -> set:
    """Replace each written-out row function by a row_function call (its parts, if nothing else
    uses them, then go as dead code); returns the new calls."""
    found: set = set()
    if any(_mutates(n) for n in tape.nodes):
        return found  # a write could change a value between the pattern's reads of it
    term = _terms(tape)
    nodes = []
    for n in tape.nodes:
        match = _match_row(term(n.outs[0].index), tape) if n.name == "binary" else None
        if match is None:
            nodes.append(n)
            continue
        name, x, w, b, eps = match
        args = (name, _Ref(x.ref), w and _Ref(w.ref), b and _Ref(b.ref), eps)
        out = n.outs[0]
        shape, dtype = tape.meta[out.index]
        if name == "logsumexp":  # the row function drops the reduced axis: reshaped back
            rows = tape.extra_ref(shape[:-1], dtype)
            call = _Node(n.backend, "row_function", args, {}, [rows], rows)
            nodes += [call, _Node(n.backend, "reshape", (rows, shape, None), {}, [out], out)]
        else:
            call = _Node(n.backend, "row_function", args, {}, [out], out)
            nodes.append(call)
        found.add(id(call))
    tape.nodes = nodes
    return found


def _eliminate_dead(tape: _Tape, live: set) -> None:
    """Drop calls whose results nothing uses (writes and what they read are kept)."""
    kept = []
    for n in reversed(tape.nodes):
        if not _mutates(n) and not any(r.index in live for r in n.outs):
            continue
        kept.append(n)
        live.update(r.index for r in _refs_in((n.args, n.kwargs)))
    tape.nodes = kept[::-1]


MAX_FUSED_STEPS = 64  # steps of one fused kernel: beyond, compile time grows faster than it saves


def _plan(tape: _Tape, output_refs: set, guards: list):
    """Replay steps for the tape: fused chains and the remaining calls, the data-dependent ones
    (`guards`: their node indices) numbered as guards."""
    nodes = tape.nodes
    shape = [tape.meta[n.outs[0].index][0] if n.outs else None for n in nodes]
    users = collections.defaultdict(list)  # ref index -> consuming node indices
    region, part = [], 0
    for i, n in enumerate(nodes):
        mutates = _mutates(n)
        if mutates:
            part += 1
        region.append(part)
        if mutates:
            part += 1
        for r in _refs_in((n.args, n.kwargs)):
            users[r.index].append(i)
    fusable = [_fusable(n) for n in nodes]
    group = list(range(len(nodes)))  # a node's group: the index of the node that computes it
    size = collections.Counter()
    for i in range(len(nodes) - 1, -1, -1):
        if not fusable[i]:
            continue
        out = nodes[i].outs[0].index
        us = users[out]
        roots = {group[u] for u in us}
        if out in output_refs or not us or len(roots) != 1 or \
                any(not fusable[u] or region[u] != region[i] or shape[u] != shape[i]
                    for u in us):
            size[i] += 1
            continue
        root = roots.pop()
        if size[root] >= MAX_FUSED_STEPS:
            size[i] += 1
            continue
        group[i] = root
        size[root] += 1
    members = collections.defaultdict(list)
    for i in range(len(nodes)):
        members[group[i]].append(i)
    number = {i: g for g, i in enumerate(guards)}
    steps = []
    for i, n in enumerate(nodes):
        if group[i] != i:
            continue  # computed by its chain's last node
        if len(members[i]) > 1:
            program, operands, out_shape = _program(tape, members[i])
            steps.append(_program_step(n.backend, program, operands, out_shape, n.outs[0]))
        else:
            steps.append(_call_step(n, number.get(i), tape.shapes(n)))
    return steps


class _Plan:
    """One variant of a signature: its replay steps, where its inputs go, what it returns."""

    def __init__(self, size, steps, inputs, out_tree, out_leaves, guards, fused, rows):
        self.size = size              # the refs a replay holds
        self.steps = steps
        self.inputs = inputs          # (leaf position, ref index) of each array argument
        self.out_tree = out_tree
        self.out_leaves = out_leaves  # ("array", ref index, device) or ("value", v)
        self.guards = guards          # the traced shapes at each guard (for choosing variants)
        self.fused = fused            # primitive calls of the trace that the plan does not make
        self.rows = rows              # row functions recognised

    def run(self, leaves):
        env = [None] * self.size
        for position, index in self.inputs:
            env[index] = leaves[position]._data
        for step in self.steps:
            step(env)
        out = [Array._new(env[x[1]], x[2]) if x[0] == "array" else x[1]
               for x in self.out_leaves]
        return out[0] if self.out_tree is None else _unflatten(self.out_tree, out)


def _trace(fn, args, kwargs, leaves, lazy: bool):
    """Run `fn` under the recorder: (its result, the plan). Lazy: no call runs, each result a
    _Placeholder (the result is then the plan's to compute); _NotLazy when `fn` calls anything
    else. Eager: every call runs."""
    from . import _devices
    tape = _Tape(threading.get_ident(), lazy)
    with _trace_lock:
        saved = [(d, d.backend) for d in _devices.known_devices()]
        try:
            for d, b in saved:
                d._backend = _Recorder(b, tape)
            inputs = []
            for position, x in enumerate(leaves):
                if isinstance(x, Array):
                    r = tape.refs.get(id(x._data))
                    if r is None:
                        r = tape.new_ref(x._data)
                    inputs.append((position, r.index))
            _tracing.active = True
            try:
                result = fn(*args, **kwargs)
            finally:
                _tracing.active = False
        finally:
            for d, b in saved:
                d._backend = b
    out_leaves_raw: list = []
    out_tree = _flatten(result, out_leaves_raw)
    out_leaves, output_refs = [], set()
    for x in out_leaves_raw:
        r = tape.refs.get(id(x._data)) if isinstance(x, Array) else None
        if r is not None:
            out_leaves.append(("array", r.index, x.device))
            output_refs.add(r.index)
        elif isinstance(x, Array) or x is None or type(x) in _CONSTANT_RESULTS:
            out_leaves.append(("value", x))  # a captured array, a Python value
        else:  # an object replay would hand back unchanged, holding the first call's values
            raise TypeError(f"arrayx.compile: {getattr(fn, '__qualname__', fn)} returned a "
                            f"{type(x).__name__}; a compiled function returns arrays, Python "
                            "scalars, strings, None and tuples, lists and dicts of them")
    for _, index in inputs:
        output_refs.add(index)
    traced = len(tape.nodes)
    rows = _rewrite_rows(tape)
    _eliminate_dead(tape, set(output_refs))
    rows = sum(id(n) in rows for n in tape.nodes)
    guards = [i for i, n in enumerate(tape.nodes) if _data_dependent(n, tape)]
    # a variant is chosen by restarting replay, which must not repeat a write
    if guards and any(_mutates(n) for n in tape.nodes[:guards[-1]]):
        return result, None
    steps = _plan(tape, output_refs, guards)
    return result, _Plan(tape.count, steps, inputs, out_tree, out_leaves,
                         [tape.shapes(tape.nodes[i]) for i in guards], traced - len(steps), rows)


class CompiledFunction:
    """A function compiled by ``arrayx.compile``; call it as the function itself."""

    def __init__(self, fn, max_signatures: int, max_variants: int):
        self._fn = fn
        self._max_signatures = max_signatures
        self._max_variants = max_variants
        self._plans: collections.OrderedDict = collections.OrderedDict()
        self._lock = threading.Lock()
        self._stats = collections.Counter()
        functools.update_wrapper(self, fn)

    def __get__(self, obj, objtype=None):  # a compiled method binds like the function
        return self if obj is None else functools.partial(self, obj)

    def __call__(self, *args, **kwargs):
        if getattr(_tracing, "active", False):
            return self._fn(*args, **kwargs)  # inside another trace: inlined into its tape
        key = None if kwargs else _flat_key(args)
        if key is None:
            leaves: list = []
            tree = _flatten((args, kwargs), leaves)
            seen: dict = {}
            key = (tree, tuple(_leaf_key(x, i, seen) for i, x in enumerate(leaves)))
        else:
            leaves = args  # what _flatten makes of flat positional arguments
        with self._lock:
            variants = self._plans.get(key)
            if variants is not None:
                self._plans.move_to_end(key)
        if variants == "eager":
            self._stats["eager"] += 1
            return self._fn(*args, **kwargs)
        if variants:
            try:
                out = variants[0].run(leaves)
                self._stats["replays"] += 1
                return out
            except _GuardMiss as miss:
                p = miss.position
                seen_shapes = variants[0].guards[:p] + [miss.shapes]
                for plan in variants[1:]:  # restart with the variant of these shapes
                    if plan.guards[:p + 1] == seen_shapes:
                        try:
                            out = plan.run(leaves)
                        except _GuardMiss:
                            continue
                        with self._lock:
                            variants.remove(plan)
                            variants.insert(0, plan)
                        self._stats["replays"] += 1
                        return out
        try:
            # first lazily: only the plan's kernels run (and compile), as on every replay
            _, plan = _trace(self._fn, args, kwargs, leaves, lazy=True)
            result = plan.run(leaves)
            lazy = True
        except _NotLazy:
            result, plan = _trace(self._fn, args, kwargs, leaves, lazy=False)
            lazy = False
        self._stats["traces"] += 1
        if plan is not None and plan.rows and not lazy:
            # the row primitive's non-finite cases differ from the written formula's (a row of
            # -inf: logsumexp -inf, not NaN): the first call answers as every replay will
            result = plan.run(leaves)
        with self._lock:
            variants = self._plans.get(key)
            if plan is None:
                self._plans[key] = "eager"
                warnings.warn(f"arrayx.compile: {getattr(self._fn, '__qualname__', self._fn)} "
                              "writes into an array before a data-dependent shape (x[mask], "
                              "nonzero, unique...), so its replay could not restart for another "
                              "shape; this signature runs eagerly", CompileWarning, stacklevel=2)
            elif variants is None or variants == "eager":
                self._plans[key] = [plan]
            elif len(variants) >= self._max_variants:
                self._plans[key] = "eager"
                warnings.warn(f"arrayx.compile: {getattr(self._fn, '__qualname__', self._fn)} "
                              f"met {len(variants) + 1} different data-dependent shapes with one "
                              "signature; that signature now runs eagerly", CompileWarning,
                              stacklevel=2)
            else:
                variants.insert(0, plan)
            while len(self._plans) > self._max_signatures:
                self._plans.popitem(last=False)
        return result

    def cache_info(self) -> dict:
        """Signatures cached, variants, traces, replays and eager calls so far, and per cached
        variant the primitive calls it replays and the calls fused away."""
        with self._lock:
            plans = [p for v in self._plans.values() if v != "eager" for p in v]
            return {"signatures": len(self._plans), "variants": len(plans),
                    "traces": self._stats["traces"], "replays": self._stats["replays"],
                    "eager_calls": self._stats["eager"],
                    "steps": [len(p.steps) for p in plans], "fused": [p.fused for p in plans],
                    "row_functions": [p.rows for p in plans]}

    def clear_cache(self) -> None:
        with self._lock:
            self._plans.clear()


def compile(fn=None, /, *, max_signatures: int = 64, max_variants: int = 8):
    """Compile `fn` (usable as ``@arrayx.compile`` or ``@arrayx.compile(max_signatures=...)``):
    see the module docstring for what is traced, fused and replayed.

    `max_signatures`: signatures kept, least recently used out. `max_variants`: data-dependent
    shape variants kept for one signature before it runs eagerly."""
    for name, value in (("max_signatures", max_signatures), ("max_variants", max_variants)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"arrayx.compile: {name} must be a positive int, got {value!r}")
    if fn is None:
        return lambda f: compile(f, max_signatures=max_signatures, max_variants=max_variants)
    if not callable(fn):
        raise TypeError(f"arrayx.compile: expected a function, got {type(fn).__name__}")
    return CompiledFunction(fn, max_signatures, max_variants)
