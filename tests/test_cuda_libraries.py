"""cuBLAS, cuSOLVER and cuFFT through ctypes (arrayx/cuda/libraries), checked without a GPU: every
declared function exists in its library and has the header's prototype (argument count, and each
argument's C type), every constant arrayx passes has the header's value, and a failing status
raises as calls.py says. The libraries and their headers come with ``pip install 'arrayx[cuda]'``;
without them these tests are skipped."""

import ctypes
import re
from pathlib import Path

import numpy as np
import pytest

import arrayx._devices as _devices
from arrayx.cuda.libraries import calls, cublas, cufft, cusolver

MODULES = {"cublas": cublas, "cusolver": cusolver, "cufft": cufft}
# Where each library's functions and constants are declared, as (the package whose headers
# pathfinder looks for, header); cudaDataType is the CUDA runtime's.
HEADERS = {"cublas": (("cublas", "cublas_api.h"), ("cudart", "library_types.h")),
           "cusolver": (("cusolver", "cusolver_common.h"), ("cusolver", "cusolverDn.h")),
           "cufft": (("cufft", "cufft.h"),)}

# The ctypes type each C type of the declared functions is passed as: enums are int, handles and
# streams are pointers, as is gesvdjInfo_t (cufftHandle is an int).
_ENUMS = ("cublasOperation_t", "cublasFillMode_t", "cublasComputeType_t", "cublasGemmAlgo_t",
          "cublasPointerMode_t", "cudaDataType", "cudaDataType_t", "cusolverEigMode_t",
          "cufftType")
_HANDLES = ("cublasHandle_t", "cusolverDnHandle_t", "cusolverDnParams_t", "gesvdjInfo_t",
            "cudaStream_t")
C_TYPES = {"int": ctypes.c_int, "int64_t": ctypes.c_int64, "long long int": ctypes.c_longlong,
           "size_t": ctypes.c_size_t, "signed char": ctypes.c_byte, "cufftHandle": ctypes.c_int,
           **{name: ctypes.c_int for name in _ENUMS},
           **{name: ctypes.c_void_p for name in _HANDLES}}


def _library(name):
    try:
        return MODULES[name].library.cdll()
    except ImportError as exc:
        pytest.skip(f"lib{name} cannot be loaded here: {exc}")


def _header_text(name) -> str:
    """The headers of library `name`, comments removed (skips when they are not installed)."""
    texts = []
    for package, header in HEADERS[name]:
        try:
            from cuda.pathfinder import find_nvidia_header_directory
            folder = find_nvidia_header_directory(package)
        except (ImportError, RuntimeError) as exc:
            pytest.skip(f"cannot look for {package}'s headers: {exc}")
        if folder is None:
            pytest.skip(f"{package}'s headers are not installed")
        texts.append((Path(folder) / header).read_text())
    return re.sub(r"/\*.*?\*/|//[^\n]*", "", "\n".join(texts), flags=re.S)


def _prototype(text: str, symbol: str) -> list:
    """The parameters of `symbol`'s exported declaration (not the C++ inline overloads, which
    carry no API macro), as (C type without const and the name, pointer depth)."""
    found = re.search(r"(?:CUBLASWINAPI|CUSOLVERAPI|CUFFTAPI)\s+" + symbol + r"\s*\(([^;]*?)\)\s*;",
                      text)
    assert found, f"{symbol} is not declared in the headers"
    params = []
    for param in found.group(1).split(","):
        depth = param.count("*") + param.count("[]")
        words = param.replace("*", " ").replace("[]", " ").replace("const", " ").split()
        params.append((" ".join(words[:-1]), depth))
    return params


def _header_constants(text: str) -> dict:
    """NAME -> value of the enumerators and integer #defines in `text`."""
    number = r"(-?(?:0x[0-9A-Fa-f]+|\d+))\b"
    found = re.findall(r"\b([A-Z][A-Z0-9_]+)\s*=\s*" + number, text)
    found += re.findall(r"#define\s+([A-Z][A-Z0-9_]+)\s+" + number, text)
    return {name: int(value, 0) for name, value in found}


@pytest.mark.parametrize("name", MODULES)
def test_every_declared_function_is_in_its_library(name):
    lib = _library(name)
    missing = [symbol for symbol in MODULES[name].library.symbols if not hasattr(lib, symbol)]
    assert not missing


@pytest.mark.parametrize("name", MODULES)
def test_declarations_match_the_headers(name):
    text = _header_text(name)
    wrong = []
    for symbol, argtypes in MODULES[name].library.symbols.items():
        params = _prototype(text, symbol)
        if len(params) != len(argtypes):
            wrong.append(f"{symbol}: {len(argtypes)} arguments, the header {len(params)}")
            continue
        for i, ((c_type, depth), declared) in enumerate(zip(params, argtypes)):
            if depth == 0:
                ok = C_TYPES.get(c_type) is declared
            elif declared is ctypes.c_void_p:   # an address: any pointee
                ok = True
            else:                               # an out-parameter or host array: its pointee
                ok = depth == 1 and C_TYPES.get(c_type) is getattr(declared, "_type_", None)
            if not ok:
                wrong.append(f"{symbol} argument {i}: {declared.__name__}, the header "
                             f"{c_type}{' *' * depth}")
    assert not wrong


DATA_TYPE_NAMES = {np.float32: "CUDA_R_32F", np.float64: "CUDA_R_64F", np.complex64: "CUDA_C_32F",
                   np.complex128: "CUDA_C_64F"}


def _constants():
    """(library whose headers define it, header name, arrayx's value) of every constant arrayx
    passes to the libraries."""
    rows = [("cublas", name, calls.data_type(np.dtype(t))) for t, name in DATA_TYPE_NAMES.items()]
    rows += [("cublas", m.name, m.value) for m in cublas.Status]
    rows += [("cublas", f"CUBLAS_FILL_MODE_{m.name}", m.value) for m in cublas.FillMode]
    rows += [("cublas", f"CUBLAS_{m.name}", m.value) for m in cublas.ComputeType]
    rows += [("cublas", f"CUBLAS_POINTER_MODE_{m.name}", m.value) for m in cublas.PointerMode]
    rows += [("cublas", "CUBLAS_GEMM_DEFAULT", cublas.GEMM_DEFAULT)]
    rows += [("cusolver", m.name, m.value) for m in cusolver.Status]
    rows += [("cusolver", f"CUSOLVER_EIG_MODE_{m.name}", m.value) for m in cusolver.EigMode]
    rows += [("cufft", m.name, m.value) for m in cufft.Result]
    rows += [("cufft", f"CUFFT_{m.name}", m.value) for m in cufft.Type]
    rows += [("cufft", "CUFFT_FORWARD", cufft.FORWARD), ("cufft", "CUFFT_INVERSE", cufft.INVERSE)]
    return rows


@pytest.mark.parametrize("name", MODULES)
def test_constants_match_the_headers(name):
    values = _header_constants(_header_text(name))
    rows = [(c, v) for lib, c, v in _constants() if lib == name]
    assert rows
    assert [(c, values.get(c)) for c, _ in rows] == rows


def _fake_library():
    """cuBLAS's statuses over libc, whose abs() returns its argument's magnitude: a status the
    test chooses, through the same wrapper every library function gets."""
    lib = calls.Library("cublas", cublas.Status, cublas.Status.CUBLAS_STATUS_ALLOC_FAILED)
    lib._cdll = ctypes.CDLL(None)
    return lib


def test_a_zero_status_returns_none():
    assert _fake_library().function("abs", ctypes.c_int)(0) is None


def test_the_allocation_failure_status_raises_memory_error():
    with pytest.raises(MemoryError, match=r"^abs failed: CUBLAS_STATUS_ALLOC_FAILED \(3\)$"):
        _fake_library().function("abs", ctypes.c_int)(-3)


def test_another_status_raises_runtime_error_with_its_name():
    with pytest.raises(RuntimeError, match=r"^abs failed: CUBLAS_STATUS_INVALID_VALUE \(7\)$"):
        _fake_library().function("abs", ctypes.c_int)(7)


def test_an_unknown_status_still_raises():
    with pytest.raises(RuntimeError, match=r"^abs failed: unknown status \(12345\)$"):
        _fake_library().function("abs", ctypes.c_int)(12345)


def test_the_library_is_looked_up_on_the_first_call_only():
    lib = calls.Library("cublas", cublas.Status, cublas.Status.CUBLAS_STATUS_ALLOC_FAILED)
    lib.function("abs", ctypes.c_int)
    assert lib._cdll is None


def test_a_missing_library_raises_import_error_naming_the_install():
    lib = calls.Library("no_such_library", cublas.Status, cublas.Status.CUBLAS_STATUS_ALLOC_FAILED)
    with pytest.raises(ImportError, match=r"pip install 'arrayx\[cuda\]'"):
        lib.function("anything", ctypes.c_int)(0)


def test_an_out_parameter_is_returned():
    _library("cusolver")
    # cusolverDnCreateParams allocates host memory only, so it succeeds without a GPU.
    params = cusolver.create_params()
    assert isinstance(params, int) and params != 0


@pytest.mark.skipif(_devices.cuda_device_count() > 0, reason="a GPU is usable here")
def test_a_real_failure_names_the_function_and_status():
    _library("cublas")
    with pytest.raises(RuntimeError, match=r"^cublasCreate_v2 failed: CUBLAS_STATUS_NOT_INITIALIZED"
                                           r" \(1\)$"):
        cublas.create()


class _Dev:
    def __init__(self, index):
        self.index = index


def test_per_thread_state_is_one_object_per_thread_and_device_and_returns_to_a_pool():
    import gc
    import threading
    made = []

    def make(dev):
        made.append(dev.index)
        return object()

    state = calls.PerThread(make)
    d0, d1 = _Dev(0), _Dev(1)
    mine = state.get(d0)
    assert state.get(d0) is mine and state.get(d1) is not mine and made == [0, 1]
    seen, barrier = {}, threading.Barrier(4)

    def work(i):
        seen[i] = state.get(d0)
        barrier.wait()  # all four hold theirs at once: four distinct objects, none of the main's
        assert state.get(d0) is seen[i]

    for _ in range(3):  # three waves of four threads: the pool keeps it at four objects
        threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        gc.collect()
        assert len({id(o) for o in seen.values()}) == 4 and mine not in seen.values()
    assert made.count(0) == 5  # the main thread's and four workers'
