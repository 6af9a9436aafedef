"""Implicit host copies: whether ``np.asarray(x)`` of an array on a GPU copies it to the host.

Off by default, because the copy synchronises with the device and hides a transfer in code that
looks free. Libraries that fall back to NumPy (SciPy's functions without an array-API path,
storage layers writing chunks with ``np.asarray``) need it on; JAX allows the same.
``ARRAYX_IMPLICIT_HOST_COPY=1`` switches it on for a process, ``set_implicit_host_copy`` at run
time.
"""

from __future__ import annotations

import os
import warnings

ENV_VAR = "ARRAYX_IMPLICIT_HOST_COPY"
_TRUE = ("1", "true", "yes", "on")
_FALSE = ("", "0", "false", "no", "off")


class ImplicitHostCopyWarning(UserWarning):
    """``np.asarray`` copied an array from a GPU to the host (implicit host copies are on)."""


def parse_flag(text: str | None) -> bool:
    """The value of ``ARRAYX_IMPLICIT_HOST_COPY`` (unset or empty: off); ValueError otherwise."""
    value = (text or "").strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ValueError(f"{ENV_VAR}={text!r} is not understood: use 1 (copy to the host) or 0 "
                     f"(refuse, the default)")


# None until the first question: the environment is read then, so a bad value raises where
# NumPy conversion is used rather than at `import arrayx`.
_implicit_host_copy: bool | None = None
_warned = False


def set_implicit_host_copy(enabled: bool) -> None:
    """Let ``np.asarray`` copy GPU arrays to the host (True) or refuse with TypeError (False)."""
    global _implicit_host_copy
    if not isinstance(enabled, bool):
        raise TypeError(f"set_implicit_host_copy() takes True or False, not {enabled!r}")
    _implicit_host_copy = enabled


def get_implicit_host_copy() -> bool:
    """Whether ``np.asarray`` copies GPU arrays to the host (``ARRAYX_IMPLICIT_HOST_COPY``)."""
    global _implicit_host_copy
    if _implicit_host_copy is None:
        _implicit_host_copy = parse_flag(os.environ.get(ENV_VAR))
    return _implicit_host_copy


def warn_implicit_host_copy(device) -> None:
    """Warn once per process that an implicit device-to-host copy happened."""
    global _warned
    if not _warned:
        _warned = True
        warnings.warn(f"arrayx: np.asarray() copied an array from {device} to the host (implicit "
                      f"host copies are on; each one synchronises with the device). Call "
                      f"x.to_device('cpu') to make the copy explicit", ImplicitHostCopyWarning,
                      stacklevel=3)
