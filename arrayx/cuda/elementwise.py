"""The elementwise kernel family: one template for every elementwise operation.

An operation is a Python expression over ``x0, x1, x2`` (already converted to the compute dtype),
e.g. ``"x0 + x1"``. ``kernel_spec`` turns (expression, operand kinds and dtypes, compute dtype,
output dtype, layout) into kernel source, CuPy-style: one template specialised per dtype and
layout, never a kernel written by hand per function. Operands are arrays (pointers) or scalars
passed by value (no allocation for a Python scalar). Layouts:

* ``vec``: every array contiguous, same shape, pointers aligned to the vector: each thread moves U
  vectors of N = 16 // widest itemsize elements with 16-byte loads/stores (vector.py); loads of a
  block's U vectors are strided by the block size so every load instruction is coalesced.
* ``flat``: contiguous but unaligned (a view such as ``x[1:]``): one element per thread.
* ``strided``: anything else (broadcasting, transposes, slices, strided outputs); dims collapsed
  first (layout.collapse), specialised on the number of dims D <= 6, 32-bit index arithmetic
  when everything fits (layout.index_bits).

The same template gives ``copy``/``astype`` (expression ``x0``), ``fill`` (a scalar and no array)
and ``assign`` (a strided output). New functions only add an expression to ``BINARY`` / a unary
table; dtype rules stay in the namespace.
"""

from __future__ import annotations

import numpy as np

from . import compiler, layout, runtime
from .array import CudaArray, new_array, new_contig

_tls = runtime._tls
BLOCK = 256
VEC_UNROLL = 1          # vectors per thread on the vec path: 1, 2, 4 within 2% (runtime-*.md)
MAX_DIMS = 6

BOOL = np.dtype(bool)

# name -> (expression, result is bool)
BINARY = {
    "add": ("x0 + x1", False),
    "subtract": ("x0 - x1", False),
    "multiply": ("x0 * x1", False),
    "equal": ("x0 == x1", True),
    "not_equal": ("x0 != x1", True),
    "less": ("x0 < x1", True),
    "less_equal": ("x0 <= x1", True),
    "greater": ("x0 > x1", True),
    "greater_equal": ("x0 >= x1", True),
    "logical_and": ("x0 and x1", True),
    "logical_or": ("x0 or x1", True),
    "logical_xor": ("x0 != x1", True),
    "bitwise_and": ("x0 & x1", False),
    "bitwise_or": ("x0 | x1", False),
    "bitwise_xor": ("x0 ^ x1", False),
}
_LOGICAL = {"logical_and", "logical_or", "logical_xor"}


def _tname(dt: np.dtype) -> str:
    return "bool" if dt == BOOL else dt.name


def _elem(dt: np.dtype) -> str:
    """numba scalar type name used in kernel source for values of dtype `dt` in memory."""
    return "uint8" if dt == BOOL else dt.name


def _conv_in(v: str, dt: np.dtype, ct: np.dtype) -> str:
    if ct == BOOL:
        return f"({v} != 0)"
    if dt == ct:
        return v
    if dt.kind == "c" and ct.kind != "c":
        return f"{ct.name}(({v}).real)"
    return f"{ct.name}({v})"


def _conv_out(r: str, rt: np.dtype, out: np.dtype) -> str:
    if out == BOOL:
        return f"uint8({r})" if rt == BOOL else f"uint8({r} != 0)"
    if rt == out:
        return r
    if rt.kind == "c" and out.kind != "c":
        return f"{out.name}(({r}).real)"
    return f"{out.name}({r})"


def kernel_spec(name, expr, kinds, dtypes, ct, out_dt, result_is_bool, lay, N=1, U=1, D=1,
                index_bits=64, debug=False):
    """Kernel source for one specialisation. `kinds`: 'a' (array) or 's' (scalar) per input."""
    rt = BOOL if result_is_bool else ct
    args = ["out"]
    argtypes = [_elem(out_dt) + "*"]
    pre = []  # statements building scalar values
    for k, (kind, dt) in enumerate(zip(kinds, dtypes)):
        if kind == "a":
            args.append(f"in{k}")
            argtypes.append(_elem(dt) + "*")
        elif ct.kind == "c":
            real = "float32" if ct == np.complex64 else "float64"
            args += [f"s{k}re", f"s{k}im"]
            argtypes += [real, real]
            pre.append(f"    s{k} = {ct.name}(complex(s{k}re, s{k}im))")
        else:
            args.append(f"s{k}raw")
            argtypes.append(_elem(ct))
            pre.append(f"    s{k} = {_conv_in(f's{k}raw', ct, ct) if ct == BOOL else f's{k}raw'}")
    args.append("n")
    argtypes.append("int64")
    idx_t = "uint32" if index_bits == 32 else "int64"
    if lay == "strided":
        arrays = ["out"] + [f"in{k}" for k, kind in enumerate(kinds) if kind == "a"]
        args += [f"sh{j}" for j in range(D)]
        argtypes += [idx_t] * D
        for a in arrays:
            args += [f"{a}_st{j}" for j in range(D)]
            argtypes += ["int64"] * D
        if debug:
            for a in arrays:
                args += [f"{a}_lo", f"{a}_hi"]
                argtypes += ["int64", "int64"]

    def value(k, idx):
        """Expression of input k's value at element `idx` (converted to ct)."""
        if kinds[k] == "s":
            return f"s{k}"
        return _conv_in(f"in{k}[{idx}]", dtypes[k], ct)

    def result(idx_of):
        e = expr
        for k in range(len(kinds)):
            e = e.replace(f"x{k}", f"({value(k, idx_of(k))})")
        return _conv_out(f"({e})", rt, out_dt)

    body = []
    if lay == "flat":
        body += ["    i = cuda.grid(1)", "    if i < n:",
                 f"        out[i] = {result(lambda k: 'i')}"]
    elif lay == "strided":
        body += ["    i = cuda.grid(1)", "    if i < n:",
                 f"        r = {idx_t}(i)" if index_bits == 32 else "        r = i"]
        for j in range(D - 1, 0, -1):
            body += [f"        c{j} = r % sh{j}", f"        r = r // sh{j}"]
        body.append("        c0 = r")
        offs = {}
        for a in ["out"] + [f"in{k}" for k, kind in enumerate(kinds) if kind == "a"]:
            off = " + ".join(f"c{j} * {a}_st{j}" for j in range(D))
            body.append(f"        o_{a} = {off}")
            offs[a] = f"o_{a}"
            if debug:
                body += [f"        if o_{a} < {a}_lo or o_{a} >= {a}_hi:", "            trap()"]
        body.append(f"        out[o_out] = {result(lambda k: f'o_in{k}')}")
    elif lay == "vec":
        body += ["    tid = cuda.threadIdx.x", "    bdim = cuda.blockDim.x", "    blk = cuda.blockIdx.x",
                 f"    v = blk * ({U} * bdim) + tid",
                 f"    if (blk + 1) * ({U * N} * bdim) <= n:"]
        for u in range(U):
            body.append(f"        i{u} = (v + {u} * bdim) * {N}")
        for u in range(U):  # all loads first: U*arrays independent 16-byte loads in flight
            for k, kind in enumerate(kinds):
                if kind == "a":
                    names = ", ".join(f"a{k}_{u}_{j}" for j in range(N))
                    body.append(f"        {names}{',' if N == 1 else ''} = vload{N}(in{k}, i{u})")
        for u in range(U):
            vals = []
            for j in range(N):
                e = expr
                for k in range(len(kinds)):
                    src = f"s{k}" if kinds[k] == "s" else _conv_in(f"a{k}_{u}_{j}", dtypes[k], ct)
                    e = e.replace(f"x{k}", f"({src})")
                vals.append(_conv_out(f"({e})", rt, out_dt))
            tup = ", ".join(vals) + ("," if N == 1 else "")
            body.append(f"        vstore{N}(out, i{u}, ({tup}))")
        body += ["    else:", f"        for u in range({U}):", f"            j = (v + u * bdim) * {N}",
                 f"            e = j + {N}", "            if e > n:", "                e = n",
                 "            while j < e:",
                 f"                out[j] = {result(lambda k: 'j')}",
                 "                j += 1"]
    else:
        raise ValueError(lay)

    tag = "_".join(_tname(d) if kd == "a" else "s" + _tname(d) for kd, d in zip(kinds, dtypes))
    kname = f"ew_{name}_{tag}_to_{_tname(out_dt)}_{lay}"
    if lay == "vec":
        kname += f"{N}x{U}"
    elif lay == "strided":
        kname += f"{D}d{index_bits}"
    src = f"def {kname}({', '.join(args)}):\n" + "\n".join(pre + body) + "\n"
    return compiler.KernelSpec(kname, src, kname, tuple(argtypes))


_kernels: dict = {}


def _kernel(dev_index, key, build):
    k = _kernels.get((dev_index, key))
    if k is None:
        spec = build()
        k = _kernels[(dev_index, key)] = compiler.get_kernel(spec, dev_index)
    return k


def _scalar_args(value, ct):
    v = ct.type(value)
    if ct.kind == "c":
        return [float(v.real), float(v.imag)]
    if ct == BOOL:
        return [1 if v else 0]
    return [v.item()]


def run(name, expr, result_is_bool, operands, dtypes, ct, out_dt, out_shape, out=None,
        device_index=None):
    """Launch the elementwise kernel for `operands` (CudaArray or Python scalars) broadcast to
    `out_shape`, computing in `ct`, writing `out` (new if None). Returns `out`."""
    kinds = tuple("a" if isinstance(o, CudaArray) else "s" for o in operands)
    if device_index is None:
        device_index = out.device_index if out is not None else \
            next(o.device_index for o in operands if isinstance(o, CudaArray))
    dev = runtime.get_device(device_index)
    if out is None:
        out = new_array(device_index, out_shape, out_dt, dev.allocator)
    n = out.size
    if n == 0:
        return out
    arrays = [o for o in operands if isinstance(o, CudaArray)]
    stream = dev._current_stream or dev.default_stream
    keep = (out.buffer,) + tuple(a.buffer for a in arrays)
    nbytes = out.nbytes + sum(a.nbytes for a in arrays)

    contiguous = out.c_contig and all(a.c_contig and a.shape == out_shape for a in arrays)
    if contiguous:
        sizes = [out_dt.itemsize] + [a.dtype.itemsize for a in arrays]
        N = layout.vector_width(*sizes)
        aligned = all(p.ptr % (N * p.dtype.itemsize) == 0 for p in [out] + arrays)
        lay = "vec" if aligned else "flat"
        U = VEC_UNROLL if lay == "vec" else 1
        key = (name, kinds, dtypes, ct, out_dt, lay, N, U)
        kern = _kernel(device_index, key, lambda: kernel_spec(
            name, expr, kinds, dtypes, ct, out_dt, result_is_bool, lay, N, U))
        args = [out.ptr]
        for o in operands:
            if isinstance(o, CudaArray):
                args.append(o.ptr)
            else:
                args += _scalar_args(o, ct)
        args.append(n)
        per_block = BLOCK * (U * N if lay == "vec" else 1)
        grid = -(-n // per_block)
        kern(stream, grid, BLOCK, args, keep, nbytes)
        return out

    # strided: broadcast every operand to out_shape, then collapse dims jointly
    strides = [out.strides] + [layout.broadcast_strides(a.shape, a.strides, out_shape) for a in arrays]
    shape, cstrides = layout.collapse(out_shape, *strides)
    D = len(shape)
    if D > MAX_DIMS:
        raise NotImplementedError(f"elementwise kernel over {D} non-collapsible dims")
    bits = layout.index_bits(n, shape, *cstrides)
    debug = compiler.DEBUG
    key = (name, kinds, dtypes, ct, out_dt, "strided", D, bits, debug)
    kern = _kernel(device_index, key, lambda: kernel_spec(
        name, expr, kinds, dtypes, ct, out_dt, result_is_bool, "strided", D=D, index_bits=bits,
        debug=debug))
    args = [out.ptr]
    for o in operands:
        if isinstance(o, CudaArray):
            args.append(o.ptr)
        else:
            args += _scalar_args(o, ct)
    args.append(n)
    args += list(shape)
    for st in cstrides:
        args += list(st)
    if debug:
        for st in cstrides:
            lo = sum(min(0, (m - 1) * s) for m, s in zip(shape, st))
            hi = sum(max(0, (m - 1) * s) for m, s in zip(shape, st)) + 1
            args += [lo, hi]
    grid, block = layout.launch_1d(n, BLOCK)
    kern(stream, grid, block, args, keep, nbytes)
    return out


# ---- the operations the runtime itself needs ---------------------------------------------

def broadcast_shape(*shapes):
    nd = max(len(s) for s in shapes)
    res = []
    for i in range(nd):
        m = 1
        for s in shapes:
            j = i - (nd - len(s))
            if j >= 0 and s[j] != 1:
                if m != 1 and m != s[j]:
                    raise ValueError(f"shapes {shapes} cannot be broadcast together")
                m = s[j]
        res.append(m)
    return tuple(res)


def binary(name, a, b, dtype, out=None):
    """The `binary` primitive for the names in BINARY (see _backend.PRIMITIVES)."""
    if out is None and a.__class__ is CudaArray and b.__class__ is CudaArray:
        # Fast path, the common case (two contiguous arrays of one shape): everything but the
        # pointers was looked up once per (op, dtypes, device) by _make_fast.
        fp = _fast.get((name, a.dtype, b.dtype, dtype, a.device_index))
        if fp is not None and a.c_contig and b.c_contig and a.shape == b.shape \
                and b.device_index == a.device_index:
            kern, ra, rb, out_dt, per_block, dev, alloc, nb = fp
            pa = a.ptr
            pb = b.ptr
            n = a.size
            if n and not (pa % ra or pb % rb):
                if _tls.current is not dev:
                    dev.activate()
                res = new_contig(dev, a.shape, out_dt, n, alloc)
                kern(dev._current_stream or dev._default_stream, -(-n // per_block), BLOCK,
                     (res.ptr, pa, pb, n), (res.buffer, a.buffer, b.buffer), n * nb)
                return res
    return _binary(name, a, b, dtype, out)


def _binary(name, a, b, dtype, out):
    expr, is_bool = BINARY[name]
    ct = BOOL if name in _LOGICAL else dtype
    out_dt = BOOL if is_bool else dtype
    a_arr = isinstance(a, CudaArray)
    b_arr = isinstance(b, CudaArray)
    if a_arr and b_arr:
        if a.device_index != b.device_index:
            raise ValueError(f"arrays on different devices: cuda:{a.device_index} and cuda:{b.device_index}")
        shape = a.shape if a.shape == b.shape else broadcast_shape(a.shape, b.shape)
        dts = (a.dtype, b.dtype)
        if out is None and a.c_contig and b.c_contig and a.shape == b.shape:
            _make_fast(a.device_index, name, a.dtype, b.dtype, dtype, ct, out_dt, expr, is_bool)
    elif a_arr:
        shape = a.shape
        dts = (a.dtype, ct)
    else:
        shape = b.shape
        dts = (ct, b.dtype)
    if out is not None and out.shape != shape:
        raise ValueError(f"output shape {out.shape} does not match the broadcast shape {shape}")
    return run(name, expr, is_bool, (a, b), dts, ct, out_dt, shape, out)


_fast: dict = {}


def _make_fast(dev_index, name, adt, bdt, dtype, ct, out_dt, expr, is_bool):
    dev = runtime.get_device(dev_index)
    N = layout.vector_width(adt.itemsize, bdt.itemsize, out_dt.itemsize)
    U = VEC_UNROLL
    kinds = ("a", "a")
    dtypes = (adt, bdt)
    kern = _kernel(dev_index, (name, kinds, dtypes, ct, out_dt, "vec", N, U), lambda: kernel_spec(
        name, expr, kinds, dtypes, ct, out_dt, is_bool, "vec", N, U))
    dev.default_stream  # created now, so the fast path can read dev._default_stream
    fp = (kern, N * adt.itemsize, N * bdt.itemsize, out_dt, BLOCK * N * U, dev, dev.allocator,
          adt.itemsize + bdt.itemsize + out_dt.itemsize)
    _fast[(name, adt, bdt, dtype, dev_index)] = fp
    return fp


def copy(a: CudaArray) -> CudaArray:
    """A new C-contiguous copy (a device-to-device memcpy when `a` is contiguous)."""
    if a.c_contig:
        dev = runtime.get_device(a.device_index)
        out = new_array(a.device_index, a.shape, a.dtype, dev.allocator)
        if a.size:
            memcpy_d2d(dev, out, a)
        return out
    return run("copy", "x0", False, (a,), (a.dtype,), a.dtype, a.dtype, a.shape)


def memcpy_d2d(dev, dst: CudaArray, src: CudaArray):
    stream = dev._current_stream or dev.default_stream
    stream.encoder.flush()
    err = runtime.driver().cuMemcpyDtoDAsync(dst.ptr, src.ptr, src.nbytes, stream.handle)[0]
    if err != 0:
        runtime.raise_error(err, "cuMemcpyDtoDAsync", dev)
    stream.encoder.hold(dst.buffer, src.buffer)


def astype(a: CudaArray, dtype, copy_: bool = True) -> CudaArray:
    dtype = np.dtype(dtype)
    if dtype == a.dtype:
        return copy(a) if copy_ else a
    return run("cast", "x0", False, (a,), (a.dtype,), dtype, dtype, a.shape)


def fill(out: CudaArray, value) -> CudaArray:
    """Write a Python scalar into every element of `out` (any layout)."""
    return run("fill", "x0", False, (value,), (out.dtype,), out.dtype, out.dtype, out.shape, out)


def assign(dst: CudaArray, src) -> CudaArray:
    """dst[...] = src (a CudaArray broadcastable to dst.shape, cast to dst.dtype, or a scalar)."""
    if not isinstance(src, CudaArray):
        return fill(dst, src)
    if dst.size and src.size and _overlaps(dst, src) and not (dst.buffer is src.buffer and
                                                              dst.offset == src.offset and
                                                              dst.strides == src.strides):
        src = copy(src)
    return run("assign", "x0", False, (src,), (src.dtype,), dst.dtype, dst.dtype, dst.shape, dst)


def _overlaps(a: CudaArray, b: CudaArray) -> bool:
    if a.buffer is not b.buffer and a.buffer.ptr != b.buffer.ptr:
        return False
    def span(x):
        lo = x.offset + sum(min(0, (n - 1) * s) for n, s in zip(x.shape, x.strides))
        hi = x.offset + sum(max(0, (n - 1) * s) for n, s in zip(x.shape, x.strides))
        isz = x.dtype.itemsize
        return x.buffer.ptr + lo * isz, x.buffer.ptr + (hi + 1) * isz
    a0, a1 = span(a)
    b0, b1 = span(b)
    return a0 < b1 and b0 < a1
