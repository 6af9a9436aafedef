"""Client libraries' own test suites on arrayx, a bounded slice of each (issue 21), on the
default device (ARRAYX_DEVICE): scikit-learn's array-API tests and estimator checks, SciPy's
array-API tests (SCIPY_ARRAY_API=1) and array-api-extra's test suite, through clients/run.py
with the expected failures of clients/expected_failures/. A slice fails when a test outside
those lists fails. The whole suites: ``python clients/run.py all`` (README, "Client test
suites"). Also: scikit-learn's searches over arrayx arrays end to end, the runner's list format,
and the arrayx behaviours the client suites asked for."""

from __future__ import annotations

import copy
import importlib.util
import json
import pickle
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import arrayx as xp
from conftest import DEVICE, assert_array_equal, run_with_scipy_array_api, to_numpy

ROOT = Path(__file__).resolve().parent.parent
RUNNER = ROOT / "clients" / "run.py"
sys.path.insert(0, str(ROOT))  # the runners' shared module: conformance._pytest_report

from conformance._pytest_report import ListFileError, parse_list_file  # noqa: E402


def _plugin():
    spec = importlib.util.spec_from_file_location("_clients_pytest_plugin",
                                                  ROOT / "clients" / "pytest_plugin.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# --------------------------------------------------------------------------------------------
# the client suites, a slice each
# --------------------------------------------------------------------------------------------

#: Per client: the pytest targets of the slice (relative to site-packages) and the fewest
#: tests it must run, so that a slice that silently selects nothing fails.
SLICES = {
    "array-api-extra": (["array_api_extra/tests/main"], 1000),
    "scikit-learn": ([
        "sklearn/tests/test_common.py",  # check_array_api_input of every supporting estimator
        "sklearn/utils/tests/test_array_api.py",
        "sklearn/utils/tests/test_indexing.py",
        "sklearn/model_selection/tests/test_search.py",
        "sklearn/model_selection/tests/test_split.py",
        "sklearn/model_selection/tests/test_validation.py",
        "sklearn/decomposition/tests/test_pca.py",
        "sklearn/linear_model/tests/test_ridge.py",
        "sklearn/preprocessing/tests/test_data.py",
        "sklearn/metrics/tests/test_pairwise.py",
    ], 400),
    "scipy": ([
        "scipy/_lib/tests/test_array_api.py",
        "scipy/fft/tests/test_helper.py",
        "scipy/signal/tests/test_filter_design.py",
        "scipy/special/tests/test_logsumexp.py",
        "scipy/integrate/tests/test_tanhsinh.py",
        "scipy/stats/tests/test_correlation.py",
        "scipy/spatial/transform/tests/test_rotation.py",
    ], 1500),
}


@pytest.mark.parametrize("client", sorted(SLICES))
def test_client_suite_slice(client, tmp_path):
    pytest.importorskip({"scikit-learn": "sklearn", "scipy": "scipy",
                         "array-api-extra": "array_api_extra"}[client])
    targets, fewest = SLICES[client]
    done = subprocess.run(
        [sys.executable, str(RUNNER), client, "--device", str(DEVICE), "--output-dir",
         str(tmp_path), "--", "--tb=line", *targets],
        capture_output=True, text=True, timeout=900)
    summaries = list(tmp_path.glob(f"{client}-*.json"))
    assert summaries, done.stdout[-3000:] + done.stderr[-3000:]
    summary = json.loads(summaries[0].read_text())
    counts = summary["counts"]
    assert done.returncode == 0, (counts, summary["failure_messages"], done.stderr[-2000:])
    assert counts["failed"] == counts["errors"] == 0
    assert counts["passed"] >= fewest, counts


# --------------------------------------------------------------------------------------------
# scikit-learn's searches over arrayx arrays, dispatch on and off
# --------------------------------------------------------------------------------------------

SEARCH_SCRIPT = textwrap.dedent("""
    import sys, warnings
    import numpy as np
    import sklearn
    from sklearn.linear_model import Ridge
    from sklearn.model_selection import GridSearchCV, RandomizedSearchCV
    import arrayx as xp

    device = sys.argv[1]
    rng = np.random.default_rng(0)
    X = rng.standard_normal((90, 5))
    y = X @ np.array([1.0, -2.0, 0.5, 0.0, 3.0]) + 0.3 * rng.standard_normal(90)
    grid = {"alpha": [0.01, 1.0, 30.0, 300.0]}
    # svd, the solver scikit-learn picks for array API inputs, so both paths solve alike
    make = {
        "grid": lambda: GridSearchCV(Ridge(solver="svd"), grid, cv=3),
        "random": lambda: RandomizedSearchCV(Ridge(solver="svd"), grid, n_iter=3, cv=3,
                                             random_state=0),
    }

    def host(a):
        return np.asarray(a.to_device("cpu")) if isinstance(a, xp.Array) else np.asarray(a)

    for dispatch in (False, True):
        # Without dispatch scikit-learn converts with np.asarray: a GPU array needs implicit
        # host copies for that (README, NumPy interop).
        xp.set_implicit_host_copy(not dispatch and device != "cpu")
        for name, search in make.items():
            ref = search().fit(X, y)
            with sklearn.config_context(array_api_dispatch=dispatch), warnings.catch_warnings():
                warnings.simplefilter("ignore", xp.ImplicitHostCopyWarning)
                Xd, yd = xp.asarray(X, device=device), xp.asarray(y, device=device)
                got = search().fit(Xd, yd)
                predicted = host(got.predict(Xd))
            assert got.best_params_ == ref.best_params_, (dispatch, name, got.best_params_)
            np.testing.assert_allclose(got.best_score_, ref.best_score_, rtol=1e-9)
            np.testing.assert_allclose(got.cv_results_["mean_test_score"],
                                       ref.cv_results_["mean_test_score"], rtol=1e-9)
            np.testing.assert_allclose(predicted, ref.predict(X), rtol=1e-9, atol=1e-12)
    print("ok")
""")


def test_scikit_learn_searches_over_arrayx_arrays():
    pytest.importorskip("sklearn")
    run_with_scipy_array_api(SEARCH_SCRIPT, DEVICE)


# --------------------------------------------------------------------------------------------
# the runner's expected-failure lists
# --------------------------------------------------------------------------------------------

def test_expected_failure_lists_parse_with_a_reason_on_every_line():
    plugin = _plugin()
    lists = sorted((ROOT / "clients" / "expected_failures").glob("*.txt"))
    assert {p.name for p in lists} >= {f"{c}-{k}.txt" for c in plugin.CLIENTS
                                       for k in ("cpu", "cuda")}
    for path in lists:
        for test_id, reason in parse_list_file(path):
            assert "::" in test_id or test_id.endswith(".py"), (path, test_id)
            assert len(reason) > 10, (path, test_id)


def test_expected_failure_list_refuses_entries_without_reason_and_duplicates(tmp_path):
    path = tmp_path / "list.txt"
    path.write_text("# a comment\n\npkg/test_a.py::test_x  # the reason\n", encoding="utf-8")
    assert parse_list_file(path) == [("pkg/test_a.py::test_x", "the reason")]
    for text in ("pkg/test_a.py::test_x\n", "pkg/test_a.py::test_x  #   \n",
                 "pkg/t.py::a  # r1\npkg/t.py::a  # r2\n"):
        path.write_text(text, encoding="utf-8")
        with pytest.raises(ListFileError):
            parse_list_file(path)


@pytest.mark.parametrize("pattern, nodeid, matches", [
    ("pkg/t.py::test_a[arrayx-1]", "pkg/t.py::test_a[arrayx-1]", True),
    ("pkg/t.py::test_a", "pkg/t.py::test_a[arrayx-1]", True),
    ("pkg/t.py::test_a", "pkg/t.py::test_ab[arrayx]", False),
    ("pkg/t.py::TestK", "pkg/t.py::TestK::test_a[arrayx]", True),
    ("pkg/t.py", "pkg/t.py::TestK::test_a[arrayx]", True),
    ("pkg/t.py", "pkg/t.pyx::test_a", False),
    ("pkg/sub", "pkg/sub/t.py::test_a", True),
    ("pkg/sub", "pkg/subway/t.py::test_a", False),
])
def test_expected_failure_entries_match_tests_functions_classes_and_files(pattern, nodeid,
                                                                          matches):
    assert _plugin().id_matches(nodeid, pattern) is matches


def test_runner_refuses_an_unknown_device_kind():
    done = subprocess.run([sys.executable, str(RUNNER), "scipy", "--device", "tpu"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "kind must be one of" in done.stderr


# --------------------------------------------------------------------------------------------
# what the client suites asked of arrayx
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("scalar, dtype, expected", [
    (np.int64(3), xp.float64, "float64"), (np.int64(3), xp.int8, "int8"),
    (np.int32(-2), xp.int16, "int16"), (np.uint8(7), xp.int32, "int32"),
    (np.float32(0.5), xp.float64, "float64"), (np.float32(0.5), xp.int64, "float64"),
    (np.float64(0.5), xp.float32, "float32"), (np.complex64(1j), xp.float32, "complex64"),
    (np.bool_(True), xp.bool, "bool"),
])
def test_numpy_scalars_are_weak_python_scalars_in_elementwise_functions(scalar, dtype,
                                                                         expected):
    # SciPy's _tanhsinh divides arrays by np.int64 counts; a NumPy scalar counts as the Python
    # scalar it holds (README, Promotion), as np.float64 already did.
    host = np.array([0, 1, 5], dtype=dtype)
    x = xp.asarray(host)
    py = scalar.item()
    op = (lambda a, b: a & b) if dtype == xp.bool else (lambda a, b: a * b)
    for got, want in ((op(x, scalar), op(host, py)), (op(scalar, x), op(py, host))):
        assert_array_equal(got, np.asarray(want, dtype=expected), dtype=getattr(xp, expected))
    assert_array_equal(xp.equal(x, scalar), host == py)


def test_numpy_scalar_out_of_the_array_range_is_refused():
    with pytest.raises(OverflowError):
        xp.asarray([1, 2], dtype=xp.int8) + np.int64(1000)


@pytest.mark.parametrize("make", [
    lambda: xp.asarray([[1.0, -0.0], [np.nan, np.inf]]),
    lambda: xp.reshape(xp.arange(24, dtype=xp.int32), (2, 3, 4))[:, ::-2, 1:],
    lambda: xp.asarray(True),
    lambda: xp.zeros((0, 3), dtype=xp.complex64),
], ids=["specials", "strided-view", "0-d", "empty"])
def test_copy_deepcopy_and_pickle_give_independent_equal_arrays(make):
    x = make()
    expected = to_numpy(x)
    for y in (copy.copy(x), copy.deepcopy(x), pickle.loads(pickle.dumps(x)),
              copy.deepcopy({"nested": [x]})["nested"][0]):
        assert y is not x and type(y) is xp.Array and y.device == x.device
        assert_array_equal(y, expected, dtype=x.dtype)
        if y.size:
            y[(0,) * y.ndim] = xp.zeros((), dtype=y.dtype, device=y.device)
            assert_array_equal(x, expected, dtype=x.dtype)


def test_asarray_of_numpy_scalars_keeps_their_dtype():
    # NumPy's inference: SciPy builds expected status arrays from np.int32 scalars.
    assert_array_equal(xp.asarray([np.int32(1), np.int32(-2)]), np.array([1, -2], np.int32),
                       dtype=xp.int32)
    assert_array_equal(xp.asarray([[np.uint8(3)], [np.uint8(4)]]), np.array([[3], [4]], np.uint8),
                       dtype=xp.uint8)
    assert xp.asarray([np.int32(1), 2]).dtype == xp.int64
    assert xp.asarray([1, 2]).dtype == xp.int64
    with pytest.raises(OverflowError, match="uint64"):
        xp.asarray([2**63])


def test_axis_out_of_bounds_says_it_as_numpy_does():
    x = xp.ones(3)
    with pytest.raises(IndexError, match=r"moveaxis\(\): source axis 10 is out of bounds for "
                                         r"array of dimension 1"):
        xp.moveaxis(x, 10, 0)
    with pytest.raises(IndexError, match=r"axis -2 is out of bounds for array of dimension 1"):
        xp.sum(x, axis=-2)


def test_result_type_of_scalars_alone_has_a_message_usable_as_a_pattern():
    with pytest.raises(ValueError) as error:
        xp.result_type(1, 2.0)
    assert re.search(str(error.value), str(error.value))


def test_asarray_of_an_unpickled_numpy_array_has_the_arrayx_dtype():
    # An unpickled NumPy array's dtype equals float64 without being NumPy's float64 instance:
    # SciPy's pickled Rotation then wrote into it.
    host = pickle.loads(pickle.dumps(np.arange(4.0)))
    x = xp.asarray(host)
    assert x.dtype is xp.float64 and xp.asarray(host, dtype=xp.float64).dtype is xp.float64
    x[1:3] = xp.asarray([7.0, 8.0])
    assert_array_equal(x, np.array([0.0, 7.0, 8.0, 3.0]))
    assert xp.asarray(1, dtype=pickle.loads(pickle.dumps(np.dtype("int32")))).dtype is xp.int32
