"""Cubed (cubed-dev/cubed) on arrayx (issue 25), on the default device (ARRAYX_DEVICE).

* Cubed's own test suite with arrayx as its backend, in a subprocess that calls
  ``arrayx.cubed.configure()`` before importing Cubed (Cubed fixes its backend at import). It
  fails when a test outside tests/cubed_expected_failures.txt fails. By default a named subset
  runs (``SUBSET_MODULES``, every executor but 'processes', which spawns a pool per computation,
  for all but ``PROCESSES_KEPT``); ``ARRAYX_CUBED_SUITE=full`` runs the whole suite, every
  executor (about 8 minutes on a 2-core machine).
* ``arrayx.cubed``: configure() and random() end to end.
* What Cubed asks of the namespace beyond the standard, against NumPy: take with an int index,
  squeeze without axis, the *_like functions' shape=, diff with scalar prepend/append.

Cubed's tests skip when Cubed is not installed (``pip install "arrayx[cubed]"``); the namespace
tests run always.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import textwrap
from pathlib import Path

import numpy as np
import pytest

import arrayx as xp
from conftest import DEVICE, assert_array_equal, make_data, run_python

EXPECTED_FAILURES = Path(__file__).resolve().parent / "cubed_expected_failures.txt"

needs_cubed = pytest.mark.skipif(importlib.util.find_spec("cubed") is None,
                                 reason="cubed is not installed (pip install 'arrayx[cubed]')")

#: The modules of cubed/tests that the default run takes: every one that computes chunks
#: through the backend namespace and needs no more than cubed, dill and numpy-groupies. Left
#: out: test_executor_features (cubed[diagnostics]: rich, pandas, matplotlib, seaborn,
#: anywidget), test_mem_utilization* (pandas; minutes of memory measurements), test_optimization
#: (plan fusion: graphviz's dot, no chunk computed), test_rechunk_hypothesis (a minute of
#: rechunk plans), runtime/ and test_icechunk (other executors and stores).
SUBSET_MODULES = [
    "test_array_api.py", "test_core.py", "test_ops.py", "test_linalg.py", "test_indexing.py",
    "test_random.py", "test_gufunc.py", "test_groupby.py", "test_rechunk.py", "test_utils.py",
    "test_inspection.py", "test_types.py", "test_store.py", "array", "primitive", "storage",
]
#: 'processes' tests the subset keeps: spawned workers that import arrayx and compute on it.
PROCESSES_KEPT = ["test_add[processes]", "test_sum[processes]", "test_random[processes]",
                  "test_map_blocks_no_array_args[processes]"]
#: The fewest tests the subset must pass (it passes 580 where graphviz's dot is installed, 20
#: fewer where not), so that a selection that silently matches nothing fails.
SUBSET_FEWEST_PASSED = 540

# "<test id>  # <category>: <reason>", the conformance lists' format.
_ENTRY = re.compile(r"^(?P<id>\S+)\s+#\s*(?P<category>numpy-only|environment|gpu-only):\s*(?P<reason>\S.*)$")


def _run_python(code: str, tmp_path, timeout: float):
    """`code` in a fresh process in which Cubed has no backend chosen yet."""
    return run_python("-c", textwrap.dedent(code), timeout=timeout, cwd=tmp_path,
                      CUBED_BACKEND_ARRAY_API_MODULE=None)


def read_expected_failures(path=EXPECTED_FAILURES) -> dict:
    """{test id: (category, reason)}; ValueError on a line without a category and a reason."""
    entries = {}
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        m = _ENTRY.match(line.strip())
        if m is None:
            raise ValueError(f"{path.name}:{number}: expected '<test id>  # numpy-only|environment|gpu-only: "
                             f"<reason>', got {line!r}")
        if m["id"] in entries:
            raise ValueError(f"{path.name}:{number}: {m['id']} is listed twice")
        entries[m["id"]] = (m["category"], m["reason"])
    return entries


def _short_id(nodeid: str) -> str:
    """A test id relative to cubed/tests, however pytest rooted the run."""
    return re.sub(r"^.*?cubed/tests/", "", nodeid.replace(os.sep, "/"))


def _outcomes(report: dict) -> dict:
    """{test id: (outcome, message)}, an error in setup or teardown counting as a failure."""
    out = {}
    for test in report["tests"]:
        outcome, message = test["outcome"], ""
        for phase in ("setup", "call", "teardown"):
            stage = test.get(phase, {})
            if stage.get("outcome") == "failed":
                outcome = "failed"
                message = message or stage.get("crash", {}).get("message", stage.get("longrepr", ""))
        out[_short_id(test["nodeid"])] = (outcome, message)
    return out


SUITE_SCRIPT = """
import sys
import arrayx.cubed
arrayx.cubed.configure(sys.argv[1])
import pytest
sys.exit(pytest.main(sys.argv[2:]))
"""


@needs_cubed
def test_cubed_suite_on_arrayx(tmp_path):
    import cubed.tests

    tests_dir = Path(cubed.tests.__file__).resolve().parent
    full = os.environ.get("ARRAYX_CUBED_SUITE") == "full"
    targets = [str(tests_dir)] if full else [str(tests_dir / m) for m in SUBSET_MODULES]
    selection = [] if full else ["-k", " or ".join(["not processes", *PROCESSES_KEPT])]
    report_path = tmp_path / "report.json"
    # --assert=plain and --tb=line keep pytest from parsing sources: under Python 3.11, once
    # Cubed's executor has left failed tasks' futures unretrieved (their tracebacks are logged
    # when they are collected), pytest's ast.parse of a failure's source raises "AST constructor
    # recursion depth mismatch" and the run stops with INTERNALERROR after a few failures.
    args = ["-q", "-p", "no:cacheprovider", "--assert=plain", "--tb=line", "-o", "addopts=",
            f"--rootdir={tests_dir}", "--json-report", f"--json-report-file={report_path}",
            *selection, *targets]
    done = run_python("-c", SUITE_SCRIPT, DEVICE, *args, timeout=3600 if full else 900,
                      cwd=tmp_path)
    tail = (done.stdout[-3000:] + done.stderr[-3000:])
    assert report_path.exists(), f"no report (exit status {done.returncode}):\n{tail}"
    outcomes = _outcomes(json.loads(report_path.read_text()))
    # a gpu-only entry is expected to fail only where the chunks live on a GPU
    expected = {t: entry for t, entry in read_expected_failures().items()
                if entry[0] != "gpu-only" or DEVICE.kind != "cpu"}

    failed = {t: m for t, (o, m) in outcomes.items() if o == "failed"}
    unexpected = {t: m for t, m in failed.items() if t not in expected}
    # A numpy-only entry is arrayx refusing what only NumPy allows: if it passes, arrayx changed
    # and the entry must go. Environment entries may pass where the environment has what they need.
    stale = sorted(t for t, (category, _) in expected.items()
                   if category == "numpy-only" and outcomes.get(t, ("",))[0] == "passed")
    passed = sum(o == "passed" for o, _ in outcomes.values())
    summary = (f"{passed} passed, {len(failed)} failed ({len(failed) - len(unexpected)} "
               f"expected), {sum(o == 'skipped' for o, _ in outcomes.values())} skipped")
    print(summary)
    assert not unexpected, summary + "\n" + "\n".join(f"{t}: {m[:300]}"
                                                      for t, m in sorted(unexpected.items()))
    assert not stale, f"listed as numpy-only failures but passed: {stale}"
    assert done.returncode in (0, 1), f"pytest exit status {done.returncode}:\n{tail}"
    assert full or passed >= SUBSET_FEWEST_PASSED, summary


@needs_cubed
def test_expected_failures_name_tests_of_cubed():
    import cubed.tests

    tests_dir = Path(cubed.tests.__file__).resolve().parent
    for test_id in read_expected_failures():
        module, _, name = test_id.partition("::")
        source = tests_dir / module
        assert source.is_file(), f"{test_id}: no {module} in cubed/tests"
        function = re.sub(r"\[.*$", "", name)
        assert f"def {function}(" in source.read_text(), f"{test_id}: no {function} in {module}"


def test_expected_failures_format(tmp_path):
    entries = read_expected_failures()
    assert entries and all(reason for _, reason in entries.values())
    bad = tmp_path / "bad.txt"
    bad.write_text("test_core.py::test_plan  # no category here\n")
    with pytest.raises(ValueError, match="numpy-only"):
        read_expected_failures(bad)
    bad.write_text("test_core.py::test_plan  # environment: x\ntest_core.py::test_plan  # environment: y\n")
    with pytest.raises(ValueError, match="twice"):
        read_expected_failures(bad)


# --------------------------------------------------------------------------------------------
# arrayx.cubed
# --------------------------------------------------------------------------------------------

@needs_cubed
def test_configure_and_random_end_to_end(tmp_path):
    code = f"""
    import os, warnings
    import numpy as np
    import arrayx as xp
    import arrayx.cubed
    device = arrayx.cubed.configure({str(DEVICE)!r})
    assert os.environ["CUBED_BACKEND_ARRAY_API_MODULE"] == "arrayx"
    assert os.environ["ARRAYX_DEVICE"] == str(device)
    assert xp.get_implicit_host_copy() == (device.kind != "cpu")
    import cubed
    import cubed.array_api as cxp
    from cubed.backend_array_api import namespace
    assert namespace is xp
    assert arrayx.cubed.configure({str(DEVICE)!r}) is device        # again, once cubed is in

    spec = cubed.Spec({str(tmp_path / "work")!r}, allowed_mem="200MB")
    warnings.simplefilter("ignore", xp.ImplicitHostCopyWarning)
    for dtype in (xp.float32, xp.float64):
        x = arrayx.cubed.random((301, 207), chunks=(64, 100), seed=7, dtype=dtype, spec=spec)
        assert x.dtype == dtype and x.chunks == ((64,) * 4 + (45,), (100, 100, 7))
        mean, std, total = cubed.compute(cxp.mean(x), cxp.std(x), cxp.sum(x, axis=0))
        assert mean.device == device and mean.dtype == dtype
        values = np.asarray(x.compute().to_device("cpu"))
        assert values.dtype == dtype and values.min() >= 0 and values.max() < 1
        tol = 1e-5 if dtype == xp.float32 else 1e-12
        assert abs(float(mean) - values.mean(dtype=np.float64)) < tol
        assert abs(float(std) - values.std(dtype=np.float64)) < tol
        np.testing.assert_allclose(np.asarray(total.to_device("cpu")),
                                   values.sum(axis=0, dtype=np.float64), rtol=tol)
        # one stream per block: the same seed and chunks give the same values, another seed not
        again = arrayx.cubed.random((301, 207), chunks=(64, 100), seed=7, dtype=dtype, spec=spec)
        assert np.array_equal(np.asarray(again.compute().to_device("cpu")), values)
        other = arrayx.cubed.random((301, 207), chunks=(64, 100), seed=8, dtype=dtype, spec=spec)
        assert not np.array_equal(np.asarray(other.compute().to_device("cpu")), values)
        # block (i, j) is arrayx.random's stream for the key [seed, i, j]
        block = xp.random.default_rng([7, 1, 2]).random((64, 7), dtype=dtype)
        assert np.array_equal(values[64:128, 200:], np.asarray(block.to_device("cpu")))
    assert arrayx.cubed.random((0, 5), chunks=2, seed=1, spec=spec).compute().shape == (0, 5)
    assert arrayx.cubed.random(10, chunks=4, seed=1, spec=spec).chunks == ((4, 4, 2),)
    checks = [(dict(chunks=(2, 2)), ValueError, "do not match"), (dict(chunks=0), ValueError, "positive"),
              (dict(seed=-1), ValueError, "seed"), (dict(seed=1.5), TypeError, "seed"),
              (dict(dtype=xp.int32), TypeError, "float32 or float64"), (dict(chunks="a"), TypeError, "chunks")]
    for change, error, text in checks:
        kwargs = dict(chunks=2, seed=1, spec=spec)
        kwargs.update(change)
        try:
            arrayx.cubed.random((4,), **kwargs)
        except error as e:
            assert text in str(e), (change, e)
        else:
            raise AssertionError(f"no {{error.__name__}} for {{change}}")
    print("ok")
    """
    done = _run_python(code, tmp_path, timeout=300)
    assert done.returncode == 0 and done.stdout.strip().endswith("ok"), done.stderr[-3000:]


@needs_cubed
def test_configure_after_cubed_chose_numpy_raises(tmp_path):
    code = """
    import cubed
    import arrayx.cubed
    try:
        arrayx.cubed.configure("cpu")
    except RuntimeError as e:
        assert "before the first `import cubed`" in str(e) and "'numpy'" in str(e), e
        print("ok")
    """
    done = _run_python(code, tmp_path, timeout=120)
    assert done.returncode == 0 and done.stdout.strip().endswith("ok"), done.stderr[-3000:]


def test_configure_rejects_an_unknown_device(tmp_path):
    code = """
    import arrayx.cubed
    try:
        arrayx.cubed.configure("tpu")
    except ValueError:
        print("ok")
    """
    done = _run_python(code, tmp_path, timeout=120)
    assert done.returncode == 0 and done.stdout.strip().endswith("ok"), done.stderr[-3000:]


# --------------------------------------------------------------------------------------------
# the namespace beyond the standard, as Cubed calls it
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float64", "float32", "int16", "complex64", "bool"])
def test_take_one_int_index_drops_the_axis(rng, dtype):
    # Cubed's var/std combine step: nxp.take(a, 0, axis=axis).
    a = make_data(dtype, (4, 5, 3), rng)
    x = xp.asarray(a)
    for axis in (0, 1, 2, -1, -3):
        for index in (0, 1, -1, a.shape[axis] - 1, -a.shape[axis]):
            assert_array_equal(xp.take(x, index, axis=axis), np.take(a, index, axis=axis))
            assert_array_equal(xp.take(x, np.int32(index), axis=axis), np.take(a, index, axis=axis))
    one_d = xp.asarray(a[:, 0, 0])
    assert_array_equal(xp.take(one_d, 2), np.take(a[:, 0, 0], 2))          # 0-d result
    view = x[1:, ::-2]                                                       # offset, strided
    assert_array_equal(xp.take(view, 1, axis=1), np.take(a[1:, ::-2], 1, axis=1))
    empty = xp.asarray(np.zeros((3, 0), a.dtype))
    assert_array_equal(xp.take(empty, 2, axis=0), np.zeros(0, a.dtype))


def test_take_one_int_index_is_a_copy_and_checks_its_input():
    x = xp.asarray(np.arange(12.0).reshape(3, 4))
    row = xp.take(x, 1, axis=0)
    row[0] = -1.0
    assert float(x[1, 0]) == 4.0
    with pytest.raises(IndexError, match="out of bounds"):
        xp.take(x, 3, axis=0)
    with pytest.raises(IndexError, match="out of bounds"):
        xp.take(x, -5, axis=1)
    with pytest.raises(IndexError):
        xp.take(x, 0, axis=2)
    with pytest.raises(ValueError, match="axis must be given"):
        xp.take(x, 0)
    with pytest.raises(ValueError, match="0-d"):
        xp.take(xp.asarray(1.0), 0)
    for bad in (True, np.True_, 1.0, "1", None):
        with pytest.raises(TypeError):
            xp.take(x, bad, axis=0)


def test_squeeze_without_axis_drops_every_unit_axis(rng):
    # Cubed's groupby: nxp.squeeze(by).
    for shape in [(1, 3, 1, 2), (1, 1), (), (3, 4), (0, 1), (1,)]:
        a = make_data("float64", shape, rng)
        assert_array_equal(xp.squeeze(xp.asarray(a)), np.squeeze(a))
    a = make_data("float32", (1, 6, 1), rng)
    assert_array_equal(xp.squeeze(xp.asarray(a)[:, ::2]), np.squeeze(a[:, ::2]))
    assert_array_equal(xp.squeeze(xp.asarray(a), axis=2), np.squeeze(a, axis=2))
    with pytest.raises(ValueError):
        xp.squeeze(xp.asarray(a), axis=1)


@pytest.mark.parametrize("dtype", ["float32", "int8", "complex128", "bool"])
def test_like_functions_take_a_shape(rng, dtype):
    # Cubed's map_overlap pads a chunk with nxp.full_like(x, value, shape=pad_shape).
    a = make_data(dtype, (2, 3), rng)
    x = xp.asarray(a)[:, ::2]
    fill = {"float32": -0.0, "int8": -7, "complex128": complex(np.inf, np.nan), "bool": True}[dtype]
    for shape in [(4, 1), 5, (), (0, 3)]:
        assert_array_equal(xp.full_like(x, fill, shape=shape), np.full_like(a, fill, shape=shape))
        assert_array_equal(xp.zeros_like(x, shape=shape), np.zeros_like(a, shape=shape))
        assert_array_equal(xp.ones_like(x, shape=shape), np.ones_like(a, shape=shape))
        e = xp.empty_like(x, shape=shape)
        assert e.shape == np.empty_like(a, shape=shape).shape and e.dtype == x.dtype
        assert e.device == DEVICE
    assert_array_equal(xp.full_like(x, 3, dtype=xp.float64, shape=(2,)), np.full(2, 3.0))
    assert xp.full_like(x, 1).shape == x.shape                              # shape=None: x's
    with pytest.raises(ValueError):
        xp.zeros_like(x, shape=(-1,))
    with pytest.raises(TypeError):
        xp.ones_like(x, shape=(2.0,))


@pytest.mark.parametrize("dtype", ["int16", "uint8", "float32", "float64", "complex64"])
def test_diff_scalar_and_0d_edges(rng, dtype):
    # Cubed's groupby: nxp.diff(chunk_boundaries, append=len(labels)).
    a = make_data(dtype, (3, 4), rng)
    x = xp.asarray(a)
    np_type = np.dtype(dtype).type
    for axis in (0, 1, -1):
        for value in (2, 0):
            # a Python scalar is weak: the result keeps x's dtype, as an array of x's dtype would
            edge = np_type(value)
            assert_array_equal(xp.diff(x, axis=axis, append=value),
                               np.diff(a, axis=axis, append=edge))
            assert_array_equal(xp.diff(x, axis=axis, prepend=value, append=value, n=2),
                               np.diff(a, axis=axis, prepend=edge, append=edge, n=2))
            assert_array_equal(xp.diff(x, axis=axis, prepend=xp.asarray(value, dtype=x.dtype)),
                               np.diff(a, axis=axis, prepend=edge))
    view = x[::-1, 1:]
    assert_array_equal(xp.diff(view, append=1), np.diff(a[::-1, 1:], append=np_type(1)))
    empty = xp.asarray(np.zeros((0, 3), dtype))
    assert_array_equal(xp.diff(empty, axis=0, append=1), np.diff(np.zeros((0, 3), dtype), axis=0,
                                                                  append=np.ones((1, 3), dtype)))


def test_diff_scalar_edges_follow_the_scalar_rules():
    ints = xp.asarray(np.array([1, 5, 2], np.int16))
    assert xp.diff(ints, append=7).dtype == xp.int16
    assert_array_equal(xp.diff(ints, append=2.5), np.diff(np.array([1, 5, 2.0]), append=2.5))
    assert_array_equal(xp.diff(xp.asarray([1.0, -0.0]), prepend=np.float64(np.inf)),
                       np.diff(np.array([1.0, -0.0]), prepend=np.inf))
    with pytest.raises(OverflowError):
        xp.diff(ints, append=2 ** 40)
    with pytest.raises(TypeError):
        xp.diff(ints, append="7")
    with pytest.raises(TypeError):
        xp.diff(xp.asarray([True, False]), append=1)
    with pytest.raises(ValueError, match="append"):
        xp.diff(xp.asarray(np.ones((2, 3))), append=xp.asarray(np.ones(3)))
