"""arrayx: the Python Array API standard (2025.12) on NVIDIA GPUs and on the CPU.

    import arrayx as xp
    x = xp.linspace(0, 1, 5)            # on the default device: cuda:0 if a GPU is usable, else cpu
    y = xp.sin(x) * 2
    y.to_device("cpu")

Devices: ``xp.Device("cpu")``, ``xp.Device("cuda:0")``; ``ARRAYX_DEVICE`` overrides the default.
``python -m arrayx`` prints the versions, the devices found and why no GPU is usable, if none is.
"""

__array_api_version__ = "2025.12"
__version__ = "0.1.0"

from ._dtypes import (bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float32,  # noqa: F401
                      float64, complex64, complex128)
from ._constants import e, inf, nan, newaxis, pi  # noqa: F401
from ._devices import Device, set_default_device  # noqa: F401
from ._registry import HostFallbackError, HostFallbackWarning, set_host_fallback  # noqa: F401
from ._settings import (ImplicitHostCopyWarning, get_implicit_host_copy,  # noqa: F401
                        set_implicit_host_copy)
from ._array_object import Array  # noqa: F401
from ._namespace import *  # noqa: F401,F403
from ._info import __array_namespace_info__  # noqa: F401
from ._compile import CompileWarning, TracedValueError, compile  # noqa: F401,A001
from . import linalg, fft, nn, random  # noqa: F401,E402
