"""Kernel compiler and cache: Python kernel source -> numba-cuda -> PTX -> cubin for the device.

A kernel is described by a ``KernelSpec``: generated Python source (the kernel families build it
from templates), the name of the kernel function in it, and its argument types ('float32*' for a
pointer, 'int64', 'uint32'... for values). Pointers (not numba arrays) keep the argument list
short: that is what makes pre-packed launches cheap (launcher.py).

Device helpers (``arrayx/cuda/device/``: vector loads, memory-order accesses, atomics...) are
real Python modules. A kernel's source uses them by name; the compiler imports each name it finds
from the device module that exports it (``__all__``, read without importing numba), so the
source needs no import lines and names no module it does not use.

Lookup order: memory cache -> disk cache -> the kernels shipped in the package -> compile. The
key is a SHA-256 of the source, the source of the device modules it uses (only those: a new
helper recompiles only the kernels that use its module), the argument types, the compute
capability, the numba-cuda and arrayx versions, and the debug flag; so a second process with the
same cache folder compiles nothing and never imports numba (a disk hit costs a file read and a
``cuModuleLoadData``).

Shipped kernels: ``arrayx/cuda/prebuilt/sm_<cc>.zip`` holds cubins of precompiled kernels
(``precompile.shipped_specs(cc)``; rebuilt by ``python -m arrayx.cuda.precompile --ship``),
read-only, under ``shipped_key``: the cache key without the numba-cuda version, since a built
cubin runs whatever numba-cuda is installed (arrayx packs the launch arguments itself). The
cubins are stored in bundles (``shipped_bundle``: one operation's kernels for one dtype and
layout class, LZMA-compressed together, since they share most of their code), each decompressed
once a process on first use. They are looked up after the disk cache, so a shipped cubin this
driver rejects is rebuilt into the disk cache once and found there from then on.
``ARRAYX_SHIPPED_KERNELS=off`` skips them.

Compilation: ``numba.cuda.compile(..., output='ptx', cc=<device cc>)``, then nvJitLink turns the
PTX into a cubin for exactly that architecture (sm_90 on an H200). A cubin loads on any driver of
the same major version, whereas PTX from a newer NVVM would need a newer driver to JIT it. Without
nvJitLink the PTX itself is cached and the driver JIT-compiles it at load.

Cache folder: ``$ARRAYX_KERNEL_CACHE``, else ``$XDG_CACHE_HOME/arrayx/kernels``, else
``~/.cache/arrayx/kernels``. ``ARRAYX_KERNEL_CACHE=off`` disables the disk cache.
``ARRAYX_DEBUG=1`` compiles with line info and turns on the kernels' bounds checks.
"""

from __future__ import annotations

import hashlib
import json
import lzma
import os
import re
import threading
import time
import zipfile
from dataclasses import dataclass

COMPILER_REVISION = "2"
DEBUG = os.environ.get("ARRAYX_DEBUG", "0") not in ("", "0", "false", "False")

counters = {"compiled": 0, "disk_hits": 0, "shipped_hits": 0, "memory_hits": 0, "loaded": 0}
_lock = threading.RLock()
_binaries: dict = {}  # key -> (image bytes, format, entry name)
_versions = None


@dataclass(frozen=True)
class KernelSpec:
    name: str          # readable, e.g. "ew_add_float32_float32_float32_vec4x2"
    source: str        # Python source defining the kernel function
    entry: str         # name of the kernel function in `source`
    argtypes: tuple    # ('float32*', 'float32*', 'float32*', 'int64')
    # (threads a block, blocks an SM must hold): ptxas keeps the registers within what that
    # occupancy allows; () leaves them to ptxas
    launch_bounds: tuple = ()


def cache_dir() -> str | None:
    env = os.environ.get("ARRAYX_KERNEL_CACHE")
    if env:
        return None if env.lower() in ("off", "0", "none") else env
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "arrayx", "kernels")


def _package_version(pkg: str, module: str) -> str:
    """A package's version without importing it (reads the VERSION file or dist metadata)."""
    import importlib.util
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        spec = None
    if spec is not None and spec.origin:
        vf = os.path.join(os.path.dirname(spec.origin), "VERSION")
        if os.path.exists(vf):
            with open(vf) as f:
                return f.read().strip()
    try:
        from importlib.metadata import version
        return version(pkg)
    except Exception:
        return "unknown"


def versions() -> dict:
    global _versions
    if _versions is None:
        import sys
        ax = getattr(sys.modules.get("arrayx"), "__version__", None) or "0.1.0"
        _versions = {"numba_cuda": _package_version("numba-cuda", "numba_cuda"), "arrayx": ax,
                     "compiler": COMPILER_REVISION}
    return _versions


_DEVICE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "device")
_device_exports = None  # helper name -> (device module name, digest of it and what it imports)
_EXPORTS = re.compile(r"^__all__ = (\[[^\]]*\])", re.M)
_RELATIVE_IMPORT = re.compile(r"^\s*from \.(\w+) import", re.M)


def device_exports() -> dict:
    """Every name the device modules export (their ``__all__``) -> (module, digest). A module's
    digest covers its source and the device modules it imports (``from .address import ...``),
    so a kernel's key changes with any device code it runs."""
    global _device_exports
    if _device_exports is None:
        import ast
        sources, exports, imports = {}, {}, {}
        for fname in sorted(os.listdir(_DEVICE_DIR)):
            if not fname.endswith(".py") or fname == "__init__.py":
                continue
            module = fname[:-3]
            with open(os.path.join(_DEVICE_DIR, fname), "rb") as f:
                sources[module] = f.read()
            text = sources[module].decode()
            # the two statements read by pattern, not by parsing the modules: a process's first
            # kernel key waits for this
            imports[module] = sorted(set(_RELATIVE_IMPORT.findall(text)))
            listed = _EXPORTS.search(text)
            if listed:
                exports.update((name, module) for name in ast.literal_eval(listed.group(1)))

        def closure(module, seen):
            if module not in seen:
                seen.add(module)
                for dep in imports[module]:
                    closure(dep, seen)
            return seen

        digests = {}
        for module in sources:
            h = hashlib.sha256()
            for dep in sorted(closure(module, set())):
                h.update(dep.encode() + b"\0" + sources[dep])
            digests[module] = h.hexdigest()[:16]
        _device_exports = {name: (module, digests[module]) for name, module in exports.items()}
    return _device_exports


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def helpers_used(source: str) -> dict:
    """{device module: [names]} of the device helpers `source` names."""
    exports = device_exports()
    used: dict = {}
    for name in sorted(set(_IDENTIFIER.findall(source)) & exports.keys()):
        used.setdefault(exports[name][0], []).append(name)
    return used


def cache_key(spec: KernelSpec, cc: tuple, debug: bool = DEBUG) -> str:
    return _key(spec, cc, debug, versions())


def shipped_key(spec: KernelSpec, cc: tuple) -> str:
    """The key of `spec` among the shipped kernels: every field of ``cache_key`` but the
    numba-cuda version (and never debug builds)."""
    return _key(spec, cc, False, {k: v for k, v in versions().items() if k != "numba_cuda"})


def _key(spec: KernelSpec, cc: tuple, debug: bool, versions_used: dict) -> str:
    h = hashlib.sha256()
    exports = device_exports()
    helpers = {module: exports[names[0]][1] for module, names in helpers_used(spec.source).items()}
    fields = [spec.source, spec.entry, list(spec.argtypes), list(cc), versions_used, bool(debug),
              helpers]
    if spec.launch_bounds:  # only then: the keys of every other kernel stay as they were
        fields.append(list(spec.launch_bounds))
    h.update(json.dumps(fields).encode())
    return h.hexdigest()


def compile_spec(spec: KernelSpec, cc: tuple, debug: bool = DEBUG, output: str = "ptx") -> str:
    """Compile to PTX (no GPU needed: this is what CI checks). Imports numba."""
    import importlib

    from numba import cuda
    ns = _kernel_namespace()
    for module, names in helpers_used(spec.source).items():
        helpers = importlib.import_module(f"arrayx.cuda.device.{module}")
        ns.update({name: getattr(helpers, name) for name in names})
    filename = f"<arrayx kernel {spec.name}>"
    d = cache_dir()
    if debug and d:  # line info needs a real file to point at
        os.makedirs(d, exist_ok=True)
        filename = os.path.join(d, f"{spec.name}-{hashlib.sha256(spec.source.encode()).hexdigest()[:12]}.py")
        with open(filename, "w") as f:
            f.write(spec.source)
    exec(compile(spec.source, filename, "exec"), ns)
    fn = ns[spec.entry]
    sig = tuple(_numba_type(t) for t in spec.argtypes)
    ptx, _ = cuda.compile(fn, sig, device=False, abi="numba", cc=tuple(cc), output="ptx",
                          lineinfo=debug, opt=True, launch_bounds=spec.launch_bounds or None)
    with _lock:
        counters["compiled"] += 1
    return ptx


def _kernel_namespace() -> dict:
    """Globals of every kernel's source: cuda, libdevice (the CUDA math library) and the numba
    scalar types (bool is stored as uint8: its numba data model is i8 but its value model i1, and
    a uint8 pointer keeps loads and stores plain bytes)."""
    from numba import cuda, types
    from numba.cuda import libdevice
    ns = {"cuda": cuda, "libdevice": libdevice, "boolean": types.boolean}
    for name in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                 "float32", "float64", "complex64", "complex128"):
        ns[name] = getattr(types, name)
    return ns


def _numba_type(code: str):
    """Parse an argument type code of a kernel signature: 'float32*' (pointer) or 'int64'."""
    from numba import types
    element = "uint8" if code.rstrip("*") == "bool" else code.rstrip("*")
    t = getattr(types, element)
    return types.CPointer(t) if code.endswith("*") else t


def entry_name(ptx: str) -> str:
    m = re.search(r"\.entry\s+([A-Za-z0-9_$.]+)\s*\(", ptx)
    if not m:
        raise RuntimeError("no kernel entry in the generated PTX")
    return m.group(1)


def link_cubin(ptx: str, cc: tuple) -> bytes | None:
    """PTX -> cubin for sm_<cc> through nvJitLink (None if nvJitLink is unavailable)."""
    try:
        from cuda.bindings import nvjitlink
    except ImportError:
        return None
    arch = f"-arch=sm_{cc[0]}{cc[1]}".encode()
    opts = [arch, b"-O3"]
    try:
        h = nvjitlink.create(len(opts), opts)
    except Exception:
        return None
    try:
        data = ptx.encode()
        try:
            nvjitlink.add_data(h, nvjitlink.InputType.PTX, data, len(data), "arrayx.ptx")
        except TypeError:  # older cuda-bindings take bytes
            nvjitlink.add_data(h, nvjitlink.InputType.PTX, data, len(data), b"arrayx.ptx")
        try:
            nvjitlink.complete(h)
        except Exception as e:
            size = nvjitlink.get_error_log_size(h)
            log = bytearray(size)
            nvjitlink.get_error_log(h, log)
            raise RuntimeError(f"nvJitLink failed: {log.decode(errors='replace')}") from e
        size = nvjitlink.get_linked_cubin_size(h)
        cubin = bytearray(size)
        nvjitlink.get_linked_cubin(h, cubin)
        return bytes(cubin)
    finally:
        nvjitlink.destroy(h)


def build_binary(spec: KernelSpec, cc: tuple, debug: bool = DEBUG, fresh: bool = False):
    """(key, (image, format, entry)) for `spec`: from memory, disk, the shipped kernels, or a
    fresh compile (`fresh`: skip the caches and the shipped kernels, e.g. when the driver
    rejected a cached or shipped image)."""
    key = cache_key(spec, cc, debug)
    hit = None if fresh else _binaries.get(key)
    if hit is not None:
        counters["memory_hits"] += 1
        return key, hit
    with _lock:
        hit = None if fresh else _binaries.get(key)
        if hit is not None:
            return key, hit
        hit = None if fresh else _read_disk(key)
        if hit is not None:
            counters["disk_hits"] += 1
        elif not fresh and not debug and (hit := read_shipped(spec, cc)) is not None:
            counters["shipped_hits"] += 1
        else:
            start = time.perf_counter()
            ptx = compile_spec(spec, cc, debug)
            entry = entry_name(ptx)
            cubin = None
            if os.environ.get("ARRAYX_CUBIN", "1") != "0":
                cubin = link_cubin(ptx, cc)
            hit = (cubin, "cubin", entry) if cubin is not None else (ptx.encode(), "ptx", entry)
            _write_disk(key, spec, cc, hit, time.perf_counter() - start)
        _binaries[key] = hit
        return key, hit


SHIPPED_DIR = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                            os.pardir, "prebuilt"))
# Each archive member is a bundle (shipped_bundle): one line of JSON, {shipped key: [offset,
# size, entry name]}, then the bundle's cubins back to back, the whole member LZMA-compressed. A
# lookup reads only the bundle its kernel's name selects: no archive-wide index to parse.
_shipped: dict = {}  # cc -> open ZipFile, or None when there is no archive for it
_DTYPE_TOKEN = re.compile(r"s?(bool|u?int(8|16|32|64)|float(16|32|64)|complex(64|128))v?")


def shipped_bundle(name: str) -> str:
    """The archive member that holds a shipped kernel: its name up to its first dtype
    (``ew_add_float32``, ``red_sum_float64``, ``scan_select_uint32``), and for elementwise
    kernels their layout class too (``vec``, ``tile``, ``rows``, ``strided``). Kernels of one
    bundle share most of their code, so compressed together they take a fraction of their size
    apart; and a bundle stays small enough (under a few MB) to decompress in milliseconds."""
    tokens = name.split("_")
    for i, token in enumerate(tokens):
        dtype = _DTYPE_TOKEN.fullmatch(token)
        if dtype:  # a scalar operand's dtype (sfloat32) or a vector one's (complex128v): the dtype
            head = "_".join(tokens[:i] + [dtype.group(1)])
            break
    else:
        head = "_".join(tokens[:2])
    if name.startswith("ew_"):
        layout = re.match(r"[a-z]+", tokens[-1]).group(0)
        head += "_" + ("vec" if layout == "vec" else layout)
    return head


def shipped_archive_path(cc: tuple) -> str:
    return os.path.join(SHIPPED_DIR, f"sm_{cc[0]}{cc[1]}.zip")


def shipped_archive(cc: tuple):
    """The archive of the kernels shipped for `cc`, opened once; None without one."""
    if cc not in _shipped:
        try:
            _shipped[cc] = zipfile.ZipFile(shipped_archive_path(cc))
        except (OSError, zipfile.BadZipFile):
            _shipped[cc] = None
        _bundles.pop(cc, None)
    return _shipped[cc]


# cc -> {bundle name: ({shipped key: (offset, size, entry)}, the images' bytes) or None for a
# bundle the archive lacks or cannot give}, filled on first use
_bundles: dict = {}


def shipped_bundle_contents(cc: tuple, bundle: str):
    """(index, images) of one bundle of the archive for `cc` (decompressed once), or None."""
    held = _bundles.setdefault(cc, {})
    if bundle not in held:
        archive = shipped_archive(cc)
        contents = None
        if archive is not None:
            try:
                data = archive.read(bundle)
                end = data.index(b"\n")
                index = {k: tuple(v) for k, v in json.loads(data[:end]).items()}
                contents = (index, memoryview(data)[end + 1:])
            except (KeyError, OSError, ValueError, zipfile.BadZipFile, lzma.LZMAError):
                contents = None  # missing or damaged: its kernels compile
        held[bundle] = contents
    return held[bundle]


def shipping_on() -> bool:
    """Whether what the package ships (kernels, CUB builds) is looked up:
    ``ARRAYX_SHIPPED_KERNELS=off`` turns it off (every kernel compiles, as without the package's
    archives)."""
    return os.environ.get("ARRAYX_SHIPPED_KERNELS", "on").lower() not in ("off", "0", "none")


def _shipped_entry(spec: KernelSpec, cc: tuple):
    """((offset, size, entry), the bundle's images) of `spec` among the shipped kernels, or
    None."""
    if not shipping_on():
        return None
    contents = shipped_bundle_contents(tuple(cc), shipped_bundle(spec.name))
    if contents is None:
        return None
    index, images = contents
    meta = index.get(shipped_key(spec, cc))
    return None if meta is None else (meta, images)


def read_shipped(spec: KernelSpec, cc: tuple):
    """(image, format, entry) of `spec` from the shipped kernels, or None."""
    found = _shipped_entry(spec, cc)
    if found is None:
        return None
    (offset, size, entry), images = found
    return (bytes(images[offset:offset + size]), "cubin", entry)


def is_shipped(spec: KernelSpec, cc: tuple) -> bool:
    """Whether the shipped kernels hold `spec` for `cc`."""
    return _shipped_entry(spec, cc) is not None


def _disk_entry(key):
    """(image path, metadata) of `key` in the disk cache, or None; the metadata is written last,
    so its presence says the image is complete."""
    d = cache_dir()
    if not d:
        return None
    try:
        with open(os.path.join(d, key + ".json")) as f:
            meta = json.load(f)
        return os.path.join(d, key + "." + meta["format"]), meta
    except (OSError, ValueError, KeyError):
        return None


def _read_disk(key):
    entry = _disk_entry(key)
    if entry is None:
        return None
    path, meta = entry
    try:
        with open(path, "rb") as f:
            image = f.read()
    except OSError:
        return None
    return (image, meta["format"], meta["entry"])


def is_cached(spec: KernelSpec, cc: tuple) -> bool:
    """Whether the disk cache holds `spec` for `cc` (its image is not read)."""
    entry = _disk_entry(cache_key(spec, cc))
    return entry is not None and os.path.exists(entry[0])


def _write_disk(key, spec, cc, hit, seconds):
    """Store a compiled image; its metadata keeps the compile time (``seconds``), so a cache
    folder says which kernels a cold start spends its time on."""
    d = cache_dir()
    if not d:
        return
    image, fmt, entry = hit
    try:
        os.makedirs(d, exist_ok=True)
        tmp = os.path.join(d, f".{key}.{os.getpid()}.tmp")
        with open(tmp, "wb") as f:
            f.write(image)
        os.replace(tmp, os.path.join(d, f"{key}.{fmt}"))
        meta = {"name": spec.name, "entry": entry, "format": fmt, "cc": list(cc),
                "argtypes": list(spec.argtypes), "versions": versions(),
                "compile_seconds": round(seconds, 3)}
        with open(tmp, "w") as f:
            json.dump(meta, f)
        os.replace(tmp, os.path.join(d, key + ".json"))  # meta last: it marks the entry complete
    except OSError:
        pass


def get_kernel(spec: KernelSpec, device_index: int):
    """A launchable ``launcher.Kernel`` for `spec` on a device (module loaded once per device)."""
    from . import runtime
    from .launcher import Kernel
    dev = runtime.get_device(device_index)
    key, (image, fmt, entry) = build_binary(spec, dev.compute_capability)
    k = dev.modules.get(key)
    if k is None:
        d = runtime.driver()
        res = d.cuModuleLoadData(image if fmt == "cubin" else image + b"\0")
        if res[0] != 0 and int(res[0]) not in runtime.STICKY_ERRORS:
            # a cached image this driver cannot load (e.g. built by a newer toolkit): rebuild
            key, (image, fmt, entry) = build_binary(spec, dev.compute_capability, fresh=True)
            res = d.cuModuleLoadData(image if fmt == "cubin" else image + b"\0")
        module = runtime.check(res, f"cuModuleLoadData({spec.name})", dev)
        func = runtime.check(d.cuModuleGetFunction(module, entry.encode()),
                             f"cuModuleGetFunction({spec.name})", dev)
        k = Kernel(spec.name, func, spec.argtypes, dev, module)
        dev.modules[key] = k
        counters["loaded"] += 1
    return k


_launchable: dict = {}


def cached_kernel(device_index: int, family: str, key, build):
    """The launchable kernel of `family`'s specialisation `key` (any hashable value that
    determines the source, knob values included) on a device. `build()` makes its KernelSpec on
    the first request only: the kernel families look their kernels up on every launch, and
    generating source each time would cost more host time than the launch."""
    k = _launchable.get((device_index, family, key))
    if k is None:
        k = _launchable[(device_index, family, key)] = get_kernel(build(), device_index)
    return k


def compile_count() -> int:
    """Kernels compiled by numba in this process (0 when everything came from the caches)."""
    return counters["compiled"]


def stats() -> dict:
    return dict(counters)
