"""Transfers, creation and DLPack on the CPU."""

import numpy as np



def from_host(device, host, copy):
    return host.copy() if copy else host


def to_host(a):
    return a


def empty(device, shape, dtype):
    return np.empty(shape, dtype=dtype)


def full(device, shape, fill_value, dtype):
    return np.full(shape, fill_value, dtype=dtype)


def arange(device, start, step, length, dtype):
    if dtype.kind in "iu":
        return np.arange(start, start + length * step, step, dtype=dtype)
    return (np.arange(length, dtype=np.float64) * step + start).astype(dtype, copy=False)


def linspace(device, start, stop, num, dtype, endpoint, precision):
    # NumPy computes in the result type of its bounds: bounds of `precision`'s type make it so.
    if isinstance(start, complex) or isinstance(stop, complex):
        scalar = np.result_type(precision, np.complex64).type
    else:
        scalar = np.dtype(precision).type
    return np.linspace(scalar(start), scalar(stop), num, endpoint=endpoint, dtype=dtype)


def eye(device, n_rows, n_cols, k, dtype):
    return np.eye(n_rows, n_cols, k=k, dtype=dtype)


def triangle(a, k, upper):
    return np.triu(a, k) if upper else np.tril(a, k)


def from_dlpack(device, obj, copy):
    return np.from_dlpack(obj, copy=copy)


def to_dlpack(a, stream, max_version, dl_device, copy):
    if max_version is None:
        # A consumer that predates DLPack 1.0 gets an unversioned capsule.
        if dl_device is not None and tuple(dl_device) != (1, 0):
            raise BufferError(f"a CPU array cannot be exported to DLPack device {tuple(dl_device)}")
        return (a.copy() if copy else a).__dlpack__(stream=stream)
    return a.__dlpack__(stream=stream, max_version=max_version, dl_device=dl_device, copy=copy)


def dlpack_device(a):
    return (1, 0)
