"""The few kernels linear algebra needs around the libraries, one thread per output element.

* ``matrix_copy``: a C-contiguous copy of a strided stack of matrices, keeping all of each matrix
  or its lower or upper triangle (zeros elsewhere), optionally conjugated; in place when source
  and output are the same contiguous array. The other triangle of a Cholesky factor, R out of a
  column-major QR factorisation, conjugated eigenvectors.
* ``lu_det``: sign and log|det| (or det) of each matrix from its LU factors and pivots, one thread
  per matrix (a serial loop over the diagonal: n steps, cheap beside the factorisation).
* ``integer_matmul``: matmul of integer dtypes, which cuBLAS does not have (wrapping like NumPy:
  products are summed in int64 / uint64 and cast, which gives the same result modulo 2^bits).
* ``pinv_scale``: ``diag(s_inv) @ U^H`` of pinv, with NumPy's cutoff ``s > rtol * max(s)``.
* ``real_eigenvectors``: the complex eigenvectors of a real matrix from geev's real columns,
  where a conjugate pair of eigenvalues w[j], w[j+1] (positive imaginary part first) has the
  vectors VR[:, j] + i VR[:, j+1] and VR[:, j] - i VR[:, j+1], as in LAPACK.

Sources are generated per dtype and compiled by engine/compiler.py (memory and disk caches), like
the elementwise family; ``specs()`` lists every one for ahead-of-time compilation.
"""

from __future__ import annotations

import numpy as np

from ...engine import compiler

BLOCK = 256  # threads per block (one thread per output element)
FLOATS = [np.dtype(d) for d in ("float32", "float64", "complex64", "complex128")]
INTEGERS = [np.dtype(d) for d in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                                  "uint64")]

_REAL_OF = {"float32": "float32", "float64": "float64", "complex64": "float32",
            "complex128": "float64"}


def _split_index(names: str, sizes: str) -> list:
    """Source lines turning the flat thread index `i` into the coordinates `names` (outermost
    first) of an array with the given sizes of its inner dimensions, e.g. 'b r c', 'rows cols'."""
    names, sizes = names.split(), sizes.split()
    lines = ["        t = i"]
    for name, size in zip(reversed(names[1:]), reversed(sizes)):
        lines += [f"        {name} = t % {size}", f"        t = t // {size}"]
    lines.append(f"        {names[0]} = t")
    return lines


def _spec(name: str, params: list, body: list, argtypes: list, preamble: str = ""):
    src = (preamble + f"def {name}({', '.join(params)}):\n    i = cuda.grid(1)\n"
           f"    if i < total:\n" + "\n".join(body) + "\n")
    return compiler.KernelSpec(name, src, name, tuple(argtypes))


def matrix_copy_spec(dtype: np.dtype, part: str, conjugate: bool):
    """out[b, r, c] = src[b * sb + r * sr + c * sc] (conjugated if `conjugate`) where (r, c) is
    in `part` ('all', 'lower': c <= r, 'upper': c >= r), else 0."""
    value = "src[b * sb + r * sr + c * sc]" + (".conjugate()" if conjugate else "")
    name = f"la_copy_{part}{'_conj' if conjugate else ''}_{dtype.name}"
    body = _split_index("b r c", "rows cols")
    if part == "all":
        body.append(f"        out[i] = {value}")
    else:
        body += [f"        if c {'>=' if part == 'upper' else '<='} r:",
                 f"            out[i] = {value}",
                 "        else:",
                 f"            out[i] = {dtype.name}(0)"]
    return _spec(name, ["out", "src", "total", "rows", "cols", "sb", "sr", "sc"], body,
                 [f"{dtype.name}*", f"{dtype.name}*"] + ["int64"] * 6)


def lu_det_spec(dtype: np.dtype):
    """Outputs sign/logabs (want_det == 0) or det (want_det == 1) of `total` matrices whose LU
    factors are n x n blocks of `lu` (any storage order: only the diagonal is read) with 1-based
    pivots `ipiv` (int64, n per matrix)."""
    dt, real = dtype.name, _REAL_OF[dtype.name]
    complex_ = dtype.kind == "c"
    body = ["        base = i * n * n",
            "        zero = False",
            "        logabs = 0.0",
            "        phase = complex128(1.0)" if complex_ else "        flips = 0",
            "        for k in range(n):",
            "            d = lu[base + k * (n + 1)]",
            "            if ipiv[i * n + k] != k + 1:",
            "                phase = -phase" if complex_ else "                flips += 1",
            "            a = abs(d)",
            "            if a == 0:",
            "                zero = True",
            "            else:",
            "                logabs += math.log(float64(a))"]
    if complex_:
        body += ["                phase = phase * (complex128(d) / float64(a))"]
    else:
        body += ["                if d < 0:", "                    flips += 1",
                 "        phase = -1.0 if flips % 2 else 1.0"]
    body += ["        if zero:",
             "            phase = 0.0" if not complex_ else "            phase = complex128(0.0)",
             "            logabs = -math.inf",
             "        if want_det:",
             f"            det[i] = {dt}(phase * math.exp(logabs))" if complex_ else
             f"            det[i] = {dt}(0.0 if zero else phase * math.exp(logabs))",
             "        else:",
             f"            sign[i] = {dt}(phase)",
             f"            logabsdet[i] = {real}(logabs)"]
    return _spec(f"la_lu_det_{dt}", ["sign", "logabsdet", "det", "lu", "ipiv", "total", "n",
                                      "want_det"], body,
                 [f"{dt}*", f"{real}*", f"{dt}*", f"{dt}*", "int64*", "int64", "int64", "int64"],
                 preamble="import math\n")


def integer_matmul_spec(dtype: np.dtype):
    """out (C-contiguous, `total` = batch * M * N elements) = a @ b with element strides."""
    dt = dtype.name
    acc = "uint64" if dtype.kind == "u" else "int64"
    body = _split_index("bt r c", "M N") + [
        "        pa = bt * a_batch + r * a_row",
        "        pb = bt * b_batch + c * b_col",
        f"        acc = {acc}(0)",
        "        for k in range(K):",
        f"            acc += {acc}(a[pa + k * a_col]) * {acc}(b[pb + k * b_row])",
        f"        out[i] = {dt}(acc)"]
    return _spec(f"la_integer_matmul_{dt}",
                 ["out", "a", "b", "total", "M", "N", "K", "a_batch", "a_row", "a_col", "b_batch",
                  "b_row", "b_col"], body, [f"{dt}*"] * 3 + ["int64"] * 10)


def pinv_scale_spec(dtype: np.dtype):
    """y[b, r, c] = conj(u[b, c, r]) / s[b, r] where s[b, r] > rtol[b] * s[b, 0], else 0;
    y C-contiguous of shape (batch, k, m), u strided, s contiguous (batch, k)."""
    dt, real = dtype.name, _REAL_OF[dtype.name]
    conj = ".conjugate()" if dtype.kind == "c" else ""
    body = _split_index("b r c", "k m") + [
        "        sv = s[b * k + r]",
        "        if sv > rtol[b * rtol_batch] * s[b * k]:",
        f"            y[i] = {dt}(u[b * u_batch + c * u_row + r * u_col]{conj} / sv)",
        "        else:",
        f"            y[i] = {dt}(0)"]
    return _spec(f"la_pinv_scale_{dt}",
                 ["y", "u", "s", "rtol", "total", "k", "m", "u_batch", "u_row", "u_col",
                  "rtol_batch"], body,
                 [f"{dt}*", f"{dt}*", f"{real}*", f"{real}*"] + ["int64"] * 7)


def real_eigenvectors_spec(dtype: np.dtype):
    """v (complex, C-contiguous `total` = batch * n * n) from vr (real, the same layout) and the
    eigenvalues w (complex, batch * n); both stacks hold each matrix's vectors as rows, i.e.
    column-major matrices: element r of vector j of matrix b is at (b * n + j) * n + r."""
    dt = dtype.name
    cdt = "complex64" if dt == "float32" else "complex128"
    body = _split_index("b j r", "n n") + [
        "        wi = w[b * n + j].imag",
        "        at = (b * n + j) * n + r",
        "        if wi > 0 and j + 1 < n:",
        f"            v[i] = {cdt}(complex(vr[at], vr[at + n]))",
        "        elif wi < 0 and j > 0:",
        f"            v[i] = {cdt}(complex(vr[at - n], -vr[at]))",
        "        else:",
        f"            v[i] = {cdt}(vr[at])"]
    return _spec(f"la_real_eigenvectors_{dt}", ["v", "vr", "w", "total", "n"], body,
                 [f"{cdt}*", f"{dt}*", f"{cdt}*", "int64", "int64"])


def specs() -> list:
    """Every kernel of this module, for ahead-of-time compilation."""
    out = []
    for dt in FLOATS:
        out += [matrix_copy_spec(dt, part, False) for part in ("lower", "upper")]
        out += [lu_det_spec(dt), pinv_scale_spec(dt)]
        if dt.kind == "c":
            out.append(matrix_copy_spec(dt, "all", True))
        else:
            out.append(real_eigenvectors_spec(dt))
    out += [integer_matmul_spec(dt) for dt in INTEGERS]
    return out


def launch(spec_fn, key: tuple, dev, total: int, args: list, keep: tuple):
    """Launch the kernel `spec_fn(*key)` with one thread per element of `total` on `dev`'s
    current stream; `keep` are the arrays it reads or writes (the encoder holds their buffers)."""
    if total <= 0:
        return
    kernel = compiler.cached_kernel(dev.index, "linalg", (spec_fn, key), lambda: spec_fn(*key))
    dev.activate()
    stream = dev.stream
    buffers = tuple(a.buffer for a in keep)
    pointers = [0 if a is None else a.ptr if hasattr(a, "ptr") else a for a in args]
    kernel(stream, -(-total // BLOCK), BLOCK, pointers,
           buffers, sum(a.nbytes for a in keep))
