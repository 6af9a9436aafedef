"""The contract between the namespace and a backend: the primitives.

The namespace validates everything (types, dtype categories, promotion, broadcasting, axes,
result shape) and then calls one of these primitives on the backend of the operands' device.
A backend is a set of plain functions with these names. Arguments are already valid:

* ``a``, ``b``, ``x``...: the backend's *native* arrays (``numpy.ndarray`` on the CPU,
  ``arrayx.cuda.engine.array.CudaArray`` on CUDA). Every native array has ``.shape``, ``.dtype``
  (an arrayx dtype, i.e. a ``numpy.dtype``), ``.ndim`` and ``.size``.
* ``axis`` / ``axes``: normalised, non-negative ints (``axes`` a sorted tuple).
* ``dtype``: one of the 14 arrayx dtypes.
* Non-CPU native arrays also have ``.device_index`` (the int N of ``cuda:N``).
* ``device``: an ``arrayx.Device`` (creation primitives only: every other primitive gets its
  device from its arrays).
* Python scalars appear only where a docstring says so, already checked against the dtype.

Composite functions of the standard (var, std, vecdot, tensordot, meshgrid, stack, tile, the
n-dimensional FFTs, norms...) are written once in the namespace from these primitives, so a
backend gets them for free. A primitive a backend lacks falls back through the CPU backend
(see ``_registry``).

Beside the primitives, this module holds the data both sides of the contract read: which dtype
category each elementwise function accepts, the result dtype of unary functions, and
``LinAlgError``. Backends import this module, ``_registry`` and ``_dtypes``, never a namespace
module.
"""

from . import _dtypes as dt


class LinAlgError(ValueError):
    """A linear algebra routine failed on its input: a singular matrix (inv, solve), a matrix
    that is not positive definite (cholesky), or an iteration that did not converge."""


# --- elementwise functions: the dtype category each accepts (the standard's), result dtypes ----

_UNARY_CATEGORIES = {
    "numeric": ("abs", "conj", "negative", "positive", "real", "imag", "round", "sign", "square",
                "isfinite", "isinf", "isnan"),
    "floating-point": ("acos", "acosh", "asin", "asinh", "atan", "atanh", "cos", "cosh", "exp",
                       "expm1", "log", "log1p", "log2", "log10", "reciprocal", "sin", "sinh", "sqrt",
                       "tan", "tanh"),
    "real numeric": ("ceil", "floor", "trunc"),
    "integer or boolean": ("bitwise_invert",),
    "bool": ("logical_not",),
    "real floating": ("signbit",),
}
UNARY_CATEGORY = {name: cat for cat, names in _UNARY_CATEGORIES.items() for name in names}
_BOOL_RESULT = frozenset(("isfinite", "isinf", "isnan", "signbit", "logical_not"))
_REAL_RESULT = frozenset(("abs", "real", "imag"))


def unary_result_dtype(name: str, dtype):
    """The dtype the unary elementwise function `name` returns for an input of `dtype`."""
    if name in _BOOL_RESULT:
        return dt.bool
    if name in _REAL_RESULT:
        return dt.real_dtype_of(dtype)
    return dtype


_BINARY_CATEGORIES = {
    "numeric": ("add", "subtract", "multiply", "divide", "pow"),
    "real floating": ("atan2", "copysign", "hypot", "logaddexp", "nextafter"),
    "integer or boolean": ("bitwise_and", "bitwise_or", "bitwise_xor"),
    "integral": ("bitwise_left_shift", "bitwise_right_shift"),
    "real numeric": ("floor_divide", "remainder", "maximum", "minimum", "greater", "greater_equal",
                     "less", "less_equal"),
    "any": ("equal", "not_equal"),
    "bool": ("logical_and", "logical_or", "logical_xor"),
}
BINARY_CATEGORY = {name: cat for cat, names in _BINARY_CATEGORIES.items() for name in names}
COMPARISONS = frozenset(("equal", "not_equal", "greater", "greater_equal", "less", "less_equal"))
BOOL_RESULT_BINARY = COMPARISONS | {"logical_and", "logical_or", "logical_xor"}


PRIMITIVES = {
    # --- transfers and creation -------------------------------------------------------------
    "from_host": "(device, host: numpy.ndarray, copy: bool|None) -> native: the data of a host "
                 "array on `device`; copy=False must not copy (the CPU backend returns `host`).",
    "to_host": "(a) -> numpy.ndarray: a host copy (or, on the CPU, the array itself).",
    "empty": "(device, shape, dtype) -> native, uninitialised.",
    "full": "(device, shape, fill_value: Python scalar, dtype) -> native.",
    "arange": "(device, start, step, length: int, dtype) -> native: start + i*step, i < length.",
    "linspace": "(device, start, stop, num, dtype, endpoint, precision) -> native: NumPy's "
                "linspace computed in `precision` (float32 or float64, or its complex counterpart "
                "for complex bounds) and rounded to dtype (start/stop may be complex).",
    "eye": "(device, n_rows, n_cols, k, dtype) -> native.",
    "triangle": "(a, k, upper: bool) -> native: tril (upper=False) or triu of the last two axes.",
    "from_dlpack": "(device, obj, copy) -> native: import a DLPack producer living on `device`.",
    "to_dlpack": "(a, stream, max_version, dl_device, copy) -> PyCapsule.",
    "dlpack_device": "(a) -> (device_type, device_id).",
    # --- elementwise ------------------------------------------------------------------------
    "unary": "(name, a) -> native: the standard's elementwise function `name` of one argument; "
             "the result dtype follows from `name` and a.dtype (e.g. abs of complex is real, "
             "isnan is bool).",
    "binary": "(name, a, b, dtype, out=None) -> native: the standard's elementwise function `name` "
              "of two arguments, broadcast. `a` or `b` may be a Python scalar (never both). `dtype` "
              "is the promoted dtype both operands are computed in; comparisons and logical_* "
              "return bool. `out`, if given, is `a` itself (an in-place operator) and is written.",
    "where": "(condition, a, b, dtype) -> native: broadcast select; `a`/`b` may be Python scalars.",
    "clip": "(a, lo, hi) -> native: lo/hi are None, Python scalars, or native arrays of a's dtype "
            "broadcastable to a.shape (the namespace broadcasts `a` to the result shape first).",
    "astype": "(a, dtype, copy: bool) -> native: cast (copy=False may return `a` if dtype matches).",
    "elementwise_program": "(program, operands, shape) -> native, new: a chain of the elementwise "
                           "primitives above run as one (arrayx.compile's fusion); see "
                           "PROGRAM_FORMAT.",
    "copy": "(a) -> native: a new C-contiguous copy.",
    # --- views and data movement -------------------------------------------------------------
    "reshape": "(a, shape, copy: bool|None) -> native: a view when the layout allows and copy is "
               "not True; raises ValueError when copy=False and a view is impossible.",
    "permute_dims": "(a, axes) -> native view.",
    "broadcast_to": "(a, shape) -> native view (zero strides).",
    "getitem": "(a, key) -> native: `key` is a tuple of int, slice, None, Ellipsis, and native "
               "integer or boolean arrays, already checked for bounds where they are Python ints; "
               "its index arrays broadcast together, and a boolean array of rank >= 1 is the "
               "key's only array (the namespace turns one beside others into its nonzero() "
               "arrays). Basic keys give views.",
    "setitem": "(a, key, value) -> None: `key` as getitem's; `value` is a Python scalar or a "
               "native array of a's dtype broadcastable to the selection (checked; a lone "
               "mask's selected count, known only on the device, is the backend's to check).",
    "concat": "(arrays: list, axis) -> native (all of one dtype).",
    "roll": "(a, shift: tuple, axes: tuple|None) -> native.",
    "repeat": "(a, repeats: int|native, axis: int|None) -> native.",
    "take": "(a, indices: native int array (1-D), axis) -> native; indices in [-n, n) are wrapped, "
            "others raise IndexError.",
    "take_along_axis": "(a, indices, axis) -> native: a and indices already broadcast to agree "
                       "outside `axis`; indices wrapped and checked as for `take`.",
    "diagonal": "(a, offset) -> native: the diagonal of the last two axes.",
    # --- reductions, scans, search ------------------------------------------------------------
    "reduce": "(name, a, axes: tuple, keepdims, dtype) -> native: name in sum, prod, max, min, "
              "mean, all, any; `dtype` is the result/accumulation dtype. Beyond the standard, "
              "for floating `a` only: nansum, nanprod, nanmax, nanmin, nanmean, NaN treated as "
              "absent (an all-NaN slice: nansum 0, nanprod 1, nanmax/nanmin/nanmean NaN; "
              "nanmax/nanmin never get an empty slice).",
    "argreduce": "(name, a, axis: int|None, keepdims) -> native int64: argmax/argmin, first index "
                 "on ties; for floating `a` also nanargmax/nanargmin: NaN ranked as -inf/+inf "
                 "(NumPy's rule), -1 where the slice is all NaN.",
    "moments": "(name, a, axes: tuple, correction: float, keepdims, dtype) -> native: name in "
               "var, std, and for floating `a` nanvar, nanstd (NaN treated as absent): the sum "
               "of squared deviations from the slice's mean over n - correction (n the slice's "
               "count), NaN where that is not positive (an empty slice too); std its square "
               "root. `a` is real or complex numeric (complex: var of the real plus var of the "
               "imaginary parts); `dtype` is the real floating result dtype, which integer "
               "input is read as. `axes` may be empty (each element its own slice).",
    "cumulative": "(name, a, axis, dtype, include_initial) -> native: name is 'cumulative_sum' or "
                  "'cumulative_prod', or for floating `a` 'cumulative_nansum' / "
                  "'cumulative_nanprod' (NaN read as 0 / 1).",
    "nonzero": "(a) -> tuple of native int64 arrays (a.ndim >= 1).",
    "searchsorted": "(sorted_1d, values, side) -> native int64.",
    "row_function": "(name, a, weight, bias, eps: float) -> native: a fused function of each row "
                    "(the last axis, length K) of `a` (real floating, at least 1-D, any layout), "
                    "computed in a's dtype: 'softmax', 'log_softmax', 'layer_norm', 'rms_norm' "
                    "give a's shape, 'logsumexp' gives a.shape[:-1] (an empty row: -inf). "
                    "`weight`/`bias` are None or native 1-D arrays of length K and a's dtype "
                    "(any layout), used by layer_norm (both) and rms_norm (weight); `eps` is the "
                    "norms' variance epsilon (>= 0). See arrayx/_row_functions.py for the "
                    "formulas and their non-finite cases.",
    # --- sorting and sets -------------------------------------------------------------------
    "sort": "(a, axis, descending, stable) -> native; NaNs last (first when descending).",
    "argsort": "(a, axis, descending, stable) -> native int64.",
    "unique": "(a, return_index, return_inverse, return_counts) -> tuple (values, index|None, "
              "inverse|None, counts|None) over the flattened array; NaNs are distinct values.",
    "isin": "(a, b, invert) -> native bool.",
    # --- linear algebra ---------------------------------------------------------------------
    "matmul": "(a, b) -> native: both at least 2-D with broadcast batch dimensions, one dtype.",
    "cholesky": "(a, upper) -> native.",
    "det": "(a) -> native.",
    "eigh": "(a) -> (eigenvalues, eigenvectors).",
    "eigvalsh": "(a) -> native.",
    "eig": "(a) -> (eigenvalues, eigenvectors), complex.",
    "eigvals": "(a) -> native complex.",
    "inv": "(a) -> native.",
    "qr": "(a, mode) -> (q, r).",
    "slogdet": "(a) -> (sign, logabsdet).",
    "solve": "(a, b) -> native: b is (..., M, K), batch dims already broadcast.",
    "svd": "(a, full_matrices) -> (u, s, vh).",
    "svdvals": "(a) -> native.",
    "pinv": "(a, rtol: float|native|None) -> native.",
    # --- FFT --------------------------------------------------------------------------------
    "fft": "(kind, a, n, axis, norm) -> native: kind is one of fft, ifft, rfft, irfft (1-D "
           "transform along `axis`, `n` the transform length, input padded/cropped to it).",
    # --- random numbers (arrayx.random) ---------------------------------------------------------
    "random": "(device, shape, dtype, distribution: str, key: int, offset: int, params: tuple) "
              "-> native, C-contiguous: element i (C order) of a Philox4x32-10 stream; see "
              "RANDOM_STREAM for the exact bits every backend must produce.",
}

PROGRAM_FORMAT = """What the ``elementwise_program`` primitive computes.

`program` is a tuple of steps ``(kind, name, refs, dtype)``, `operands` a tuple of native arrays
and Python scalars. A ref is an int: below ``len(operands)`` it names an operand, from there on
the result of step ``ref - len(operands)``. Step kinds, each exactly the primitive of its name
with the referenced values as arguments:

* ``("unary", name, (a,), None)``: ``unary(name, a)``
* ``("binary", name, (a, b), dtype)``: ``binary(name, a, b, dtype)`` (no `out`)
* ``("where", None, (condition, a, b), dtype)``: ``where(condition, a, b, dtype)``
* ``("astype", None, (a,), dtype)``: ``astype(a, dtype, True)``
* ``("clip", None, (a, lo, hi), None)``: ``clip(a, lo, hi)``; `lo`/`hi` a ref or None

The result is the last step's, a new array of shape `shape`; every step's result has that
shape, and each operand broadcasts to it. A scalar operand is read by one step only, as that
primitive reads a Python scalar (weak, in the step's dtype). Results equal the steps run one by
one, except that a backend may contract a multiply and an add of adjacent steps into one fused
multiply-add (one rounding instead of two).
"""

RANDOM_STREAM = """The values the ``random`` primitive writes, identical on every backend.

Philox4x32-10 (Salmon et al. 2011, the Random123 constants) with key words
(key & 0xffffffff, key >> 32), `key` < 2**64. Element i of the result comes from counter block
b = i // P, P = random_values_per_block(distribution, dtype), whose counter words are
(b & 0xffffffff, b >> 32, offset & 0xffffffff, offset >> 32), `offset` < 2**64; the block's
output words are x0..x3, and its 64-bit draws d0 = x0 | x1 << 32, d1 = x2 | x3 << 32. Element i
takes part q = i % P of its block. `params` holds Python scalars, already rounded to `dtype`.

* "bits": uint32: x_q; uint64: d_q.
* "random" (float32, float64): u = (x_q >> 8) * 2**-24 (float32), (d_q >> 11) * 2**-53 (float64).
* "uniform", params (low, scale): low + scale * u, one rounded product then one rounded sum in
  `dtype` (no fused multiply-add).
* "standard_normal": Box-Muller on uniforms in (0, 1]: float32: pair j = q // 2 takes
  u1 = ((x_2j >> 8) + 1) * 2**-24 and u2 = ((x_2j+1 >> 8) + 1) * 2**-24; float64:
  u1 = ((d0 >> 11) + 1) * 2**-53, u2 = ((d1 >> 11) + 1) * 2**-53. With r = sqrt(-2 log u1) and
  t = 2pi * u2 (2pi rounded to `dtype`, the product rounded), element q is r cos t when q is even,
  r sin t when odd, in `dtype` arithmetic (log, cos and sin may differ between backends by their
  math libraries' rounding; everything else is exact).
* "normal", params (loc, scale): loc + scale * z, z as standard_normal, rounded as "uniform".
* "integers" (any integer dtype), params (low, range), 1 <= range <= 2**64:
  low + floor(d_q * range / 2**64), computed modulo 2**64 and cast to `dtype` (the result lies in
  [low, low + range), inside the dtype's range).
"""

# RANDOM_STREAM's Philox4x32-10 (the Random123 constants), which every backend's rounds use
PHILOX_M0, PHILOX_M1 = 0xD2511F53, 0xCD9E8D57   # round multipliers
PHILOX_W0, PHILOX_W1 = 0x9E3779B9, 0xBB67AE85   # key schedule (Weyl sequence) increments
PHILOX_ROUNDS = 10


def random_values_per_block(distribution: str, dtype) -> int:
    """Elements of a ``random`` result one Philox counter block gives: 4 for 32-bit words
    (uint32 bits, float32 random/uniform/normal), 2 for 64-bit draws (everything else)."""
    return 4 if dtype.itemsize == 4 and distribution != "integers" else 2
