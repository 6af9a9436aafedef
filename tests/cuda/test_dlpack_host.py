"""The CUDA backend's DLPack capsules without a GPU: the deleters and destructors are C functions
(engine/dlpack_deleters.py) that free an exported tensor exactly once, and keep the exception a
consumer is raising when it drops a capsule it refused."""

import ctypes
import gc
import weakref

import numpy as np
import pytest

pytest.importorskip("numba")
from arrayx.cuda.engine import dlpack  # noqa: E402

_HOST = np.arange(6, dtype=np.float32)


class _Buffer:
    ptr = _HOST.ctypes.data


class _FakeCudaArray:
    """What export_capsule reads of a CudaArray, over host memory (no GPU here)."""
    buffer = _Buffer()
    ndim, shape, strides, device_index, dtype, offset = 1, (6,), (1,), 0, _HOST.dtype, 0


class _Producer:
    def __init__(self, versioned):
        self.versioned = versioned
        self.array = _FakeCudaArray()

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        return dlpack.export_capsule(self.array, self.versioned and max_version is not None, copy)

    def __dlpack_device__(self):
        return (dlpack.kDLCUDA, 0)


@pytest.mark.parametrize("versioned", [False, True])
def test_refused_capsule_keeps_the_consumers_error_and_frees_the_tensor(versioned):
    producer = _Producer(versioned)
    alive = weakref.ref(producer.array)
    for _ in range(2):
        with pytest.raises(RuntimeError, match="Unsupported device"):
            np.from_dlpack(producer)
    producer.array = None
    gc.collect()
    assert alive() is None


@pytest.mark.parametrize("versioned", [False, True])
def test_consumed_capsule_frees_the_tensor_once_its_deleter_runs(versioned):
    array = _FakeCudaArray()
    alive = weakref.ref(array)
    capsule = dlpack.export_capsule(array, versioned, None)
    name, used, layout = ((b"dltensor_versioned", b"used_dltensor_versioned",
                           dlpack.DLManagedTensorVersioned) if versioned else
                          (b"dltensor", b"used_dltensor", dlpack.DLManagedTensor))
    ptr = ctypes.pythonapi.PyCapsule_GetPointer(ctypes.py_object(capsule), name)
    managed = layout.from_address(ptr)
    assert managed.dl_tensor.ndim == 1 and managed.dl_tensor.shape[0] == 6
    deleter = managed.deleter
    ctypes.pythonapi.PyCapsule_SetName(ctypes.py_object(capsule), used)  # what a consumer does
    del capsule, array, managed
    gc.collect()
    assert alive() is not None  # the consumer owns it now
    deleter(ptr)
    assert alive() is None


def test_unconsumed_capsule_frees_the_tensor():
    array = _FakeCudaArray()
    alive = weakref.ref(array)
    capsule = dlpack.export_capsule(array, True, None)
    del array
    assert alive() is not None
    del capsule
    assert alive() is None
