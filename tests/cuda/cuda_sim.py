"""Running arrayx's generated kernel source on numba's CUDA simulator, without a GPU: the pieces
reduce_sim.py and scan_sim.py share. Import it first: it switches numba.cuda to the simulator
for the whole process (hence the separate processes of test_simulated_kernels.py).

* warp shuffles (the simulator has none): a block's threads are Python threads, so a warp's 32
  lanes meet at a barrier, deposit their values and read their source lane's;
* shared arrays allocated under a lock (numba's allocation races between a block's threads);
* Ptr: a raw pointer into a NumPy array, bounds-checked;
* vload/vstore: vector.py's 16-byte accesses, element by element;
* CHOICES: select, load_or and store_if (device/branchless.py, device/guarded.py);
* NUMPY_TYPES: the scalar type names the kernels use, as NumPy types;
* launch: the blocks of a grid one after another, in a given order.
"""

import os
import sys
import threading
import warnings

os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
warnings.simplefilter("ignore")

import numpy as np  # noqa: E402
from numba.core import types  # noqa: E402
from numba.np import numpy_support  # noqa: E402
from numba.cuda.simulator import kernel as sim_kernel  # noqa: E402
from numba.cuda.simulator import kernelapi  # noqa: E402

_warps = {}
_warps_lock = threading.Lock()


def _exchange(value, source_of):
    """Every lane of the calling thread's warp deposits `value`; returns the value of lane
    source_of(lane), or its own when that is outside the warp."""
    thread = threading.current_thread()
    tid = thread.threadIdx.x
    key = (thread.blockIdx.x, tid // 32)
    with _warps_lock:
        state = _warps.get(key)
        if state is None:
            state = _warps[key] = ([None] * 32, threading.Barrier(32))
    values, barrier = state
    lane = tid % 32
    values[lane] = value
    barrier.wait()
    src = source_of(lane)
    result = values[src] if 0 <= src < 32 else value
    barrier.wait()
    return result


_shared_lock = threading.Lock()


def _shared_array(self, shape, dtype, alignment=None):
    """numba's FakeCUDAShared.array with its get-or-create under a lock: threads of a block
    reaching a declaration together could each allocate an array of their own, so one thread's
    writes were lost to the others (seen: reduce_sim.py arg, 1 run in some hundreds; 8 of 300
    trials of 64 threads). An array is one per declaration line, as in numba's."""
    if shape == 0 or alignment is not None:  # dynamic shared memory, or numba's error
        return _numba_shared_array(self, shape, dtype, alignment)
    if isinstance(dtype, types.Type):
        dtype = numpy_support.as_dtype(dtype)
    caller = sys._getframe(1)
    key = (caller.f_code.co_filename, caller.f_lineno)
    with _shared_lock:
        array = self._allocations.get(key)
        if array is None:
            array = self._allocations[key] = np.empty(shape, dtype)
    return array


_numba_shared_array = kernelapi.FakeCUDAShared.array
kernelapi.FakeCUDAShared.array = _shared_array
sys.setswitchinterval(5e-4)  # a warp's 32 threads meet at barriers: hand the GIL over sooner
kernelapi.FakeCUDAModule.shfl_down_sync = lambda self, mask, v, d: _exchange(v, lambda l: l + d)
kernelapi.FakeCUDAModule.shfl_up_sync = lambda self, mask, v, d: _exchange(v, lambda l: l - d)
kernelapi.FakeCUDAModule.shfl_sync = lambda self, mask, v, src: _exchange(v, lambda l: src)


class Ptr:
    """A raw pointer into a NumPy array (bounds-checked)."""

    def __init__(self, mem, offset=0):
        self.mem, self.offset = mem, int(offset)

    def _at(self, i):
        j = self.offset + int(i)
        assert 0 <= j < len(self.mem), (j, len(self.mem))
        return j

    def __getitem__(self, i):
        return self.mem[self._at(i)]

    def __setitem__(self, i, v):
        self.mem[self._at(i)] = v


def vload(n):
    return lambda p, i: tuple(p[int(i) + k] for k in range(n))


def vstore(n):
    def store(p, i, values):
        for k in range(n):
            p[int(i) + k] = values[k]
    return store


NUMPY_TYPES = {name: getattr(np, name) for name in (
    "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32",
    "float64", "complex64", "complex128")}


def select(cond, a, b):
    return a if cond else b


def load_or(p, i, ok, fill):
    return p[i] if ok else fill


def store_if(p, i, ok, value):
    if ok:
        p[i] = value


# device/branchless.py's and device/guarded.py's helpers, as the kernels' namespaces take them
CHOICES = {"select": select, "load_or": load_or, "store_if": store_if}


def launch(fn, grid, block, args, order):
    """Run the `grid` blocks of `block` threads of kernel `fn` one after another, in `order`."""
    fake = kernelapi.FakeCUDAModule((grid, 1, 1), (block, 1, 1), 0)
    with sim_kernel.swapped_cuda_module(fn, fake):
        for b in order:
            _warps.clear()
            sim_kernel.BlockManager(fn, (grid, 1, 1), (block, 1, 1), False).run((b, 0, 0), *args)
