"""``arrayx.nn``: normalisations of rows, beyond the standard.

    import arrayx as xp
    y = xp.nn.layer_norm(x, weight, bias, eps=1e-5)      # over the last axis
    z = xp.nn.rms_norm(x, weight, axis=0)

Each normalises every row of x along `axis` (one int; the row length K = x.shape[axis]) with
one fused kernel on CUDA (see arrayx/_row_functions.py for the formulas, the accumulation and the
non-finite cases). `weight` and `bias` are optional arrays of shape (K,), or (1,) or () to
broadcast one value over the row; the result dtype is x's promoted with theirs (all real
floating-point). `eps` is a Python float, finite and >= 0.
"""

from __future__ import annotations

from ._row_functions import check_eps, row_call


def layer_norm(x, /, weight=None, bias=None, *, eps=1e-5, axis=-1):
    """(x - mean) / sqrt(var + eps) * weight + bias over `axis` (var: the biased variance)."""
    return row_call("layer_norm", "layer_norm", x, axis, weight, bias, check_eps(eps, "layer_norm"))


def rms_norm(x, /, weight=None, *, eps=1e-6, axis=-1):
    """x / sqrt(mean(x^2) + eps) * weight over `axis`."""
    return row_call("rms_norm", "rms_norm", x, axis, weight, None, check_eps(eps, "rms_norm"))


__all__ = ["layer_norm", "rms_norm"]
