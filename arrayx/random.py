"""Random numbers beyond the standard: a counter-based generator whose streams are the same on
every device.

    rng = arrayx.random.default_rng(42)
    x = rng.standard_normal((1000, 3), dtype=arrayx.float32)       # on the default device
    k = rng.integers(0, 10, size=5, device="cpu")

A ``Generator`` is Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3",
SC 2011) keyed by 64 bits of the seed; its state is (key, offset). A call of n elements draws the
counter blocks (b, offset) for b < B, B = ceil(n / P) with P = 4 values a block for 32-bit
words (float32 random/uniform/normal) and 2 for 64-bit draws (float64, integers), then advances
the offset by B. Element i depends only on the key, the offset and i, never on how a device
splits the work, so:

* the same seed and the same sequence of calls give the same arrays on cpu and cuda: bit for bit
  for ``integers``, ``random``, ``uniform``, ``permutation``, ``shuffle`` and ``choice`` without
  `p`; ``standard_normal`` and ``normal`` may differ by the rounding of the devices' log, sin
  and cos (a few units in the last place, see tests/cuda/test_random_gpu.py for the bound
  asserted); ``choice`` with `p` goes through a cumulative sum (with replacement) or -log(u) / p
  keys (without), whose rounding may differ by device, so a draw on a boundary may differ;
* two calls of n elements do NOT give the values of one call of 2n elements (the second call
  starts a new offset, not block B of the first).

Seeds: ``None`` takes 64 bits from ``os.urandom``; an int in [0, 2**64) is the key itself; a
larger int, or a sequence of ints >= 0, is hashed: the key is the first 8 bytes (little-endian)
of SHA-256 over ``b"arrayx.random.seed"`` followed by each int as its byte length (8 bytes,
little-endian) and its little-endian bytes. ``spawn(n)`` derives children's keys the same way
from the parent's key and a running child count, so children are independent streams (distinct
keys) and every spawn call gives new ones.

Conversions, identical on every device: float32 uniforms are (x >> 8) * 2**-24 of a 32-bit word,
float64 ones (d >> 11) * 2**-53 of a 64-bit draw; ``uniform(low, high)`` is
low + (high - low) * u in the requested dtype, one rounded product and one rounded sum;
``integers`` in [low, high) maps a 64-bit draw d to low + floor(d * r / 2**64), r = high - low
(Lemire's multiply-high, exact in integer arithmetic on every device), without rejection: the
result is deterministic and independent of launch shapes, and each value's probability is off
from 1/r by less than r / 2**64 relative. ``standard_normal`` is Box-Muller on two uniforms in
(0, 1], so the logarithm is finite. ``permutation``, ``shuffle`` and ``choice`` without
replacement sort random 64-bit keys with a stable sort (ties, probability about n**2 / 2**65,
break by index on every device) and gather.

``size=None`` returns a 0-d array: the standard has no scalars on a device. Parameters are Python
(or NumPy) scalars; ``choice``'s `a` and `p` and the arrays of ``permutation``/``shuffle`` are
arrayx arrays.
"""

from __future__ import annotations

import hashlib
import math
import operator
import os
import threading

import numpy as np

from . import _dtypes as dt
from ._array_object import Array
from ._backend import random_values_per_block
from ._elementwise_functions import divide, greater, log, negative, subtract
from ._data_type_functions import astype
from ._indexing_functions import take
from ._manipulation_functions import reshape, stack
from ._searching_functions import searchsorted
from ._sorting_functions import argsort, sort
from ._statistical_functions import cumulative_sum, max as _max, min as _min, sum as _sum
from ._validation import (check_array, check_device, check_dtype, check_result_size,
                          normalize_axis, normalize_shape, resolve_device)

__all__ = ["Generator", "default_rng"]

_KEY_BITS = 64
_FLOAT_DTYPES = (dt.float32, dt.float64)


def _int_bytes(value: int) -> bytes:
    raw = value.to_bytes(max(1, (value.bit_length() + 7) // 8), "little")
    return len(raw).to_bytes(8, "little") + raw


def _hash_key(domain: bytes, ints) -> int:
    h = hashlib.sha256(domain)
    for value in ints:
        h.update(_int_bytes(value))
    return int.from_bytes(h.digest()[:8], "little")


def _seed_int(value, what: str) -> int:
    if isinstance(value, (bool, np.bool_)) or not hasattr(value, "__index__"):
        raise TypeError(f"default_rng(): {what} must be an int >= 0 or a sequence of them, got "
                        f"{type(value).__name__} {value!r}")
    value = operator.index(value)
    if value < 0:
        raise ValueError(f"default_rng(): {what} must be >= 0, got {value}")
    return value


def _seed_key(seed) -> int:
    """The 64-bit Philox key of a seed (see the module docstring)."""
    if seed is None:
        return int.from_bytes(os.urandom(8), "little")
    if isinstance(seed, (list, tuple, range, np.ndarray)):
        if isinstance(seed, np.ndarray) and (seed.ndim != 1 or seed.dtype.kind not in "iu"):
            raise TypeError("default_rng(): a NumPy seed must be a 1-D integer array")
        return _hash_key(b"arrayx.random.seed", [_seed_int(v, "a seed entry") for v in seed])
    value = _seed_int(seed, "seed")
    return value if value < 2 ** _KEY_BITS else _hash_key(b"arrayx.random.seed", [value])


def _shape(size, fname: str) -> tuple:
    return () if size is None else normalize_shape(size, fname, "size")


def _float_dtype(dtype, fname: str):
    dtype = check_dtype(dtype, fname)
    if dtype not in _FLOAT_DTYPES:
        raise TypeError(f"{fname}(): dtype must be float32 or float64, got {dtype}")
    return dtype


def _real(value, fname: str, argname: str) -> float:
    """A finite Python float from a real scalar argument."""
    if type(value) is Array or isinstance(value, np.ndarray):
        if value.ndim != 0 or value.dtype.kind not in "iuf":
            raise TypeError(f"{fname}(): {argname} must be a real scalar, got an array of shape "
                            f"{tuple(value.shape)} and dtype {value.dtype}")
        value = float(value)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer,
                                                                      np.floating)):
        raise TypeError(f"{fname}(): {argname} must be a real number, got "
                        f"{type(value).__name__} {value!r}")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{fname}(): {argname} must be finite, got {value}")
    return value


def _integer(value, fname: str, argname: str) -> int:
    if isinstance(value, (bool, np.bool_)) or not hasattr(value, "__index__"):
        raise TypeError(f"{fname}(): {argname} must be an integer, got "
                        f"{type(value).__name__} {value!r}")
    return operator.index(value)


class Generator:
    """A Philox4x32-10 stream: ``Generator(seed)`` (see the module docstring for seeds, the
    stream and what is the same across devices). Methods are NumPy's ``Generator``'s, each
    taking ``dtype`` and ``device`` (default: the default device); ``size=None`` gives a 0-d
    array."""

    def __init__(self, seed=None):
        self._key = _seed_key(seed)
        self._offset = 0
        self._children = 0
        self._lock = threading.Lock()

    def __repr__(self):
        return f"arrayx.random.Generator(key=0x{self._key:016x}, offset={self._offset})"

    @property
    def state(self) -> dict:
        """{"key": the 64-bit Philox key, "offset": counter blocks drawn so far}; assign a dict
        of the same form to restore a state."""
        return {"key": self._key, "offset": self._offset}

    @state.setter
    def state(self, value):
        if not isinstance(value, dict) or set(value) != {"key", "offset"}:
            raise TypeError("Generator.state must be a dict with the keys 'key' and 'offset'")
        key = _integer(value["key"], "Generator.state", "key")
        offset = _integer(value["offset"], "Generator.state", "offset")
        for name, v in (("key", key), ("offset", offset)):
            if not 0 <= v < 2 ** 64:
                raise ValueError(f"Generator.state: {name} must be in [0, 2**64), got {v}")
        with self._lock:
            self._key, self._offset = key, offset

    def spawn(self, n_children) -> list:
        """`n_children` new Generators with keys derived from this one's (independent streams);
        each call gives new children. This generator's own stream is unchanged."""
        n = _integer(n_children, "spawn", "n_children")
        if n < 0:
            raise ValueError(f"spawn(): n_children must be >= 0, got {n}")
        with self._lock:
            first, self._children = self._children, self._children + n
        children = []
        for j in range(first, first + n):
            child = Generator(0)
            child._key = _hash_key(b"arrayx.random.spawn", [self._key, j])
            children.append(child)
        return children

    # --- the one call every method makes --------------------------------------------------
    def _draw(self, fname, shape, dtype, distribution, params, device):
        device = resolve_device(device)
        check_result_size(shape, dtype, fname)
        blocks = -(-math.prod(shape) // random_values_per_block(distribution, dtype))
        with self._lock:
            offset = self._offset
            if offset + blocks > 2 ** 64:
                raise ValueError(f"{fname}(): this generator's 2**64 counter blocks are used "
                                 f"up; spawn() a new one")
            self._offset = offset + blocks
        native = device.backend.random(device, shape, dtype, distribution, self._key, offset,
                                       params)
        return Array._new(native, device)

    def _bits64(self, fname, n, device):
        """n random uint64 keys (a 1-D array)."""
        return self._draw(fname, (n,), dt.uint64, "bits", (), device)

    # --- floating-point distributions -----------------------------------------------------
    def random(self, size=None, dtype=dt.float64, device=None) -> Array:
        """Uniform floats in [0, 1)."""
        return self._draw("random", _shape(size, "random"), _float_dtype(dtype, "random"),
                          "random", (), device)

    def uniform(self, low=0.0, high=1.0, size=None, dtype=dt.float64, device=None) -> Array:
        """low + (high - low) * u, u uniform in [0, 1), in `dtype` arithmetic (high < low is
        allowed, as in NumPy)."""
        dtype = _float_dtype(dtype, "uniform")
        shape = _shape(size, "uniform")
        low, high = _real(low, "uniform", "low"), _real(high, "uniform", "high")
        with np.errstate(over="ignore"):
            lo, hi = dtype.type(low), dtype.type(high)
            scale = hi - lo
        if not (np.isfinite(lo) and np.isfinite(hi) and np.isfinite(scale)):
            raise ValueError(f"uniform(): high - low = {float(high) - float(low)} is not finite "
                             f"in {dtype}")
        return self._draw("uniform", shape, dtype, "uniform", (float(lo), float(scale)), device)

    def standard_normal(self, size=None, dtype=dt.float64, device=None) -> Array:
        """Standard normal floats (Box-Muller)."""
        return self._draw("standard_normal", _shape(size, "standard_normal"),
                          _float_dtype(dtype, "standard_normal"), "standard_normal", (), device)

    def normal(self, loc=0.0, scale=1.0, size=None, dtype=dt.float64, device=None) -> Array:
        """loc + scale * z, z standard normal, in `dtype` arithmetic; scale >= 0."""
        dtype = _float_dtype(dtype, "normal")
        shape = _shape(size, "normal")
        loc = _real(loc, "normal", "loc")
        with np.errstate(over="ignore"):
            mean = dtype.type(loc)
        sd = _real(scale, "normal", "scale")
        if sd < 0:
            raise ValueError(f"normal(): scale must be >= 0, got {sd}")
        with np.errstate(over="ignore"):
            sd = dtype.type(sd)
        if not (np.isfinite(mean) and np.isfinite(sd)):
            raise ValueError(f"normal(): loc and scale must be finite in {dtype}")
        return self._draw("normal", shape, dtype, "normal", (float(mean), float(sd)), device)

    # --- integers ---------------------------------------------------------------------------
    def integers(self, low, high=None, size=None, dtype=dt.int64, endpoint=False,
                 device=None) -> Array:
        """Integers in [low, high) (or [low, high] with endpoint=True); high=None draws from
        [0, low). Any integer dtype (bool draws 0/1 as NumPy does)."""
        dtype = check_dtype(dtype, "integers")
        if dtype.kind not in "iub":
            raise TypeError(f"integers(): dtype must be an integer dtype, got {dtype}")
        low = _integer(low, "integers", "low")
        if high is None:
            low, high = 0, low
        else:
            high = _integer(high, "integers", "high")
        if not isinstance(endpoint, (bool, np.bool_)):
            raise TypeError(f"integers(): endpoint must be a bool, got {type(endpoint).__name__}")
        last = high if endpoint else high - 1
        if last < low:
            raise ValueError(f"integers(): low >= high (low={low}, high={high}"
                             f"{', endpoint=True' if endpoint else ''})")
        draw_dtype = dt.uint8 if dtype is dt.bool else dtype
        info = (0, 1) if dtype is dt.bool else (int(np.iinfo(dtype).min), int(np.iinfo(dtype).max))
        if low < info[0]:
            raise ValueError(f"integers(): low={low} is out of bounds for {dtype}")
        if last > info[1]:
            raise ValueError(f"integers(): high={high} is out of bounds for {dtype}")
        out = self._draw("integers", _shape(size, "integers"), draw_dtype, "integers",
                         (low, last - low + 1), device)
        return astype(out, dt.bool) if dtype is dt.bool else out

    # --- permutations and sampling ----------------------------------------------------------
    def _permutation_indices(self, fname, n, device):
        """A uniformly random permutation of range(n) as int64 on `device`: the stable argsort
        of n random 64-bit keys."""
        return argsort(self._bits64(fname, n, device), stable=True)

    def permutation(self, x, axis=0, device=None) -> Array:
        """A permuted range(x) (int x, int64 on `device`) or a permuted copy of the array x
        along `axis`."""
        if type(x) is Array:
            if x.ndim == 0:
                raise ValueError("permutation(): x must be an integer or an array of at least "
                                 "one dimension")
            if device is not None and resolve_device(device) is not x.device:
                raise ValueError(f"permutation(): device={device} differs from x's device "
                                 f"{x.device}")
            axis = normalize_axis(axis, x.ndim, "permutation")
            return take(x, self._permutation_indices("permutation", x.shape[axis], x.device),
                        axis=axis)
        n = _integer(x, "permutation", "x")
        if n < 0:
            raise ValueError(f"permutation(): x must be >= 0, got {n}")
        return self._permutation_indices("permutation", n, device)

    def shuffle(self, x, axis=0) -> None:
        """Permute the array x in place along `axis`."""
        check_array(x, "shuffle")
        if x.ndim == 0:
            raise ValueError("shuffle(): x must have at least one dimension")
        axis = normalize_axis(axis, x.ndim, "shuffle")
        x[...] = take(x, self._permutation_indices("shuffle", x.shape[axis], x.device),
                      axis=axis)

    def choice(self, a, size=None, replace=True, p=None, shuffle=True, device=None) -> Array:
        """Samples of range(a) (int a, int64) or of the 1-D array a; with probabilities p (a
        1-D float array of a's length summing to 1) if given; without replacement when
        replace=False (shuffle=False gives the chosen elements in index order)."""
        shape = _shape(size, "choice")
        k = math.prod(shape)
        if type(a) is Array:
            if a.ndim != 1:
                raise ValueError(f"choice(): a must be 1-D, got shape {tuple(a.shape)}")
            n = a.shape[0]
            if device is not None and resolve_device(device) is not a.device:
                raise ValueError(f"choice(): device={device} differs from a's device {a.device}")
            device = a.device
        else:
            n = _integer(a, "choice", "a")
            if n < 0:
                raise ValueError(f"choice(): a must be >= 0, got {n}")
            device = resolve_device(device) if p is None or device is not None else p.device
        if n == 0 and k:
            raise ValueError("choice(): a cannot be empty unless no samples are taken")
        if not replace and k > n:
            raise ValueError(f"choice(): cannot take a larger sample ({k}) than the population "
                             f"({n}) when replace=False")
        if p is not None:
            p = self._check_probabilities(p, n, k, replace, device)
        if replace:
            if p is None:
                index = self.integers(0, max(n, 1), size=(k,), device=device)
            else:
                cdf = cumulative_sum(p)
                cdf = divide(cdf, cdf[-1])
                index = searchsorted(cdf, self.random((k,), device=device), side="right")
        elif p is None:
            index = self._permutation_indices("choice", n, device)[:k]
        else:
            # Exponential clocks E / p: the k smallest are a weighted sample without
            # replacement with the law of NumPy's successive draws (Efraimidis-Spirakis)
            clocks = negative(log(subtract(1.0, self.random((n,), device=device))))
            index = argsort(divide(clocks, p), stable=True)[:k]
        if not replace and not shuffle:
            index = sort(index)
        return reshape(index if type(a) is not Array else take(a, index), shape)

    @staticmethod
    def _check_probabilities(p, n, k, replace, device):
        """p as a float64 array on `device` after NumPy's checks (one synchronisation on a GPU
        to read its sum, extremes and nonzero count)."""
        check_array(p, "choice", "p")
        check_device(p, "p", device, "the sample", "choice")
        if p.ndim != 1:
            raise ValueError(f"choice(): p must be 1-D, got shape {tuple(p.shape)}")
        if p.shape[0] != n:
            raise ValueError(f"choice(): a and p must have the same size ({n} and {p.shape[0]})")
        if p.dtype not in _FLOAT_DTYPES:
            raise TypeError(f"choice(): p must be a real floating-point array, got {p.dtype}")
        tolerance = math.sqrt(max(np.finfo(p.dtype).eps, np.finfo(np.float64).eps))
        p = astype(p, dt.float64)
        if n:
            summary = stack([_sum(p), _min(p), _max(p), _sum(astype(greater(p, 0.0), dt.float64))])
            total, lowest, highest, nonzero = np.asarray(summary.to_device("cpu")).tolist()
            if not (math.isfinite(total) and math.isfinite(highest)) or lowest < 0:
                raise ValueError("choice(): probabilities must be finite and non-negative")
            if abs(total - 1.0) > tolerance:
                raise ValueError(f"choice(): probabilities do not sum to 1 (sum {total})")
            if not replace and nonzero < k:
                raise ValueError(f"choice(): fewer non-zero entries in p ({int(nonzero)}) than "
                                 f"the sample size ({k}) with replace=False")
        return p


def default_rng(seed=None) -> Generator:
    """A new Generator from `seed` (see the module docstring); a Generator is returned as is."""
    if isinstance(seed, Generator):
        return seed
    return Generator(seed)
