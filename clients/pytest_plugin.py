"""pytest plugin that runs a client library's own test suite on one array namespace.

Loaded by ``clients/run.py`` as ``-p clients.pytest_plugin`` inside the client's installed
package tree, configured through environment variables the runner sets:

* ``ARRAYX_CLIENT``: ``scikit-learn``, ``scipy`` or ``array-api-extra``;
* ``ARRAYX_CLIENT_NAMESPACE``: the namespace under test, ``arrayx`` (default) or
  ``array_api_strict`` (the reference the issue compares arrayx with);
* ``ARRAYX_CLIENT_EXPECTED_FAILURES``: optional path of an expected-failure list
  (``<test id or prefix>  # reason`` per line); matching tests are marked xfail (not strict,
  so a fixed one shows as xpassed and the runner reports the entry as stale).

Each client parametrises its array-API tests over the namespaces it knows; the plugin adds the
namespace under test to that parametrisation and deselects every test not parametrised with it:

* scikit-learn: ``sklearn.utils._array_api``'s ``yield_namespaces``,
  ``yield_namespace_device_dtype_combinations`` and ``yield_mixed_namespace_input_permutations``
  yield the namespace under test only (float64 and float32 on its default device, which
  ``ARRAYX_DEVICE`` chooses for arrayx; mixed inputs with NumPy in both directions). They are
  replaced before the first conftest is imported, since test modules and
  ``sklearn.utils.estimator_checks`` import them by name.
* SciPy (``SCIPY_ARRAY_API=1``): its conftest's ``xp`` fixture is redefined with the
  namespace as its only parameter, and the namespace joins ``xp_known_backends`` so that
  ``skip_xp_backends(np_only=True)`` and ``cpu_only=True`` apply to it as to other non-NumPy
  backends, and its ``devices`` fixture takes the 2025.12 standard's tuple of devices (SciPy's
  appends a list to it); on a GPU device arrayx counts as a GPU backend (``cpu_only`` tests skipped, as for
  CuPy) unless implicit host copies are on (``ARRAYX_IMPLICIT_HOST_COPY=1``), which let SciPy's
  NumPy fallbacks run on GPU arrays. Without them, SciPy's assertion helpers (which compare
  through np.testing) get host copies of arrayx arrays for the assertion only.
* array-api-extra: its ``Backend`` enum gains an ``ARRAYX`` member before its conftest imports
  it, so the ``library``/``xp`` fixtures yield arrayx beside the backends it knows; its testing
  helper moves arrayx arrays on a GPU to the host before converting them (it does so by name for
  torch and JAX, and otherwise calls np.from_dlpack, which refuses a CUDA tensor).
"""

from __future__ import annotations

import enum
import functools
import importlib
import os
import warnings
from pathlib import Path

import pytest

from conformance._pytest_report import parse_list_file

CLIENTS = ("scikit-learn", "scipy", "array-api-extra")
NAMESPACES = ("arrayx", "array_api_strict")


def id_matches(nodeid: str, pattern: str) -> bool:
    """An entry names one test (its full id), every parametrisation of a test function
    (``path::name``), a class (``path::Class``), or a whole file or folder (``path``)."""
    if nodeid == pattern or nodeid.split("[", 1)[0] == pattern:
        return True
    if "::" in pattern or pattern.endswith(".py"):
        return nodeid.startswith(pattern + "::")
    return nodeid.startswith(pattern.rstrip("/") + "/")


def _namespace() -> str:
    namespace = os.environ.get("ARRAYX_CLIENT_NAMESPACE", "arrayx")
    if namespace not in NAMESPACES:
        raise pytest.UsageError(f"ARRAYX_CLIENT_NAMESPACE={namespace!r}: must be one of "
                                f"{NAMESPACES}")
    return namespace


def _client() -> str:
    client = os.environ.get("ARRAYX_CLIENT")
    if client not in CLIENTS:
        raise pytest.UsageError(f"ARRAYX_CLIENT={client!r}: must be one of {CLIENTS} "
                                "(clients/run.py sets it)")
    return client


def _on_gpu_without_host_copies(namespace: str) -> bool:
    if namespace != "arrayx":
        return False
    import arrayx

    default_kind = str(arrayx.__array_namespace_info__().default_device()).split(":", 1)[0]
    return default_kind != "cpu" and not arrayx.get_implicit_host_copy()


# --------------------------------------------------------------------------------------------
# scikit-learn
# --------------------------------------------------------------------------------------------

def _adapt_scikit_learn(namespace: str) -> None:
    from sklearn.utils import _array_api

    original_combinations = _array_api.yield_namespace_device_dtype_combinations
    # Mixed-namespace checks exist from scikit-learn 1.8 on.
    original_mixed = getattr(_array_api, "yield_mixed_namespace_input_permutations", None)

    def yield_namespaces(include_numpy_namespaces=True):
        yield namespace

    def yield_namespace_device_dtype_combinations(include_numpy_namespaces=True):
        if namespace == "arrayx":
            # The device is arrayx's default one (ARRAYX_DEVICE), so that the same ids run on
            # cpu and cuda.
            yield namespace, None, "float64"
            yield namespace, None, "float32"
        else:
            for combination in original_combinations(include_numpy_namespaces):
                if combination[0] == namespace:
                    yield combination

    def yield_mixed_namespace_input_permutations():
        if namespace == "arrayx":
            pair = _array_api.NamespaceAndDevice
            yield pair("numpy", None), pair(namespace, None), f"numpy to {namespace}"
            yield pair(namespace, None), pair("numpy", None), f"{namespace} to numpy"
        else:
            for permutation in original_mixed():
                if namespace in (permutation[0].xp, permutation[1].xp):
                    yield permutation

    _array_api.yield_namespaces = yield_namespaces
    _array_api.yield_namespace_device_dtype_combinations = (
        yield_namespace_device_dtype_combinations)
    if original_mixed is not None:
        _array_api.yield_mixed_namespace_input_permutations = (
            yield_mixed_namespace_input_permutations)


def _is_scikit_learn_case(item, namespace: str) -> bool:
    # Parametrised ids name the namespace: "[arrayx-None-float64]", "[numpy to arrayx]",
    # "check_array_api_input(array_namespace=arrayx,...)".
    return "[" in item.nodeid and namespace in item.nodeid.split("[", 1)[1]


# --------------------------------------------------------------------------------------------
# SciPy
# --------------------------------------------------------------------------------------------

def _fixture_function(fixture):
    """The function a pytest fixture decorator wrapped (pytest >= 8.4 and older)."""
    if hasattr(fixture, "_get_wrapped_function"):
        return fixture._get_wrapped_function()
    return fixture.__pytest_wrapped__.obj


def _adapt_scipy_conftest(conftest, namespace: str) -> None:
    if not conftest.SCIPY_ARRAY_API:
        raise pytest.UsageError("SciPy's array-API tests need SCIPY_ARRAY_API=1 "
                                "(clients/run.py sets it)")
    module = importlib.import_module(namespace)
    conftest.xp_known_backends.add(namespace)
    if _on_gpu_without_host_copies(namespace):
        conftest.xp_skip_cpu_only_backends.add(namespace)
    param = pytest.param(module, id=namespace, marks=pytest.mark.array_api_backends)
    conftest.xp = pytest.fixture(params=[param])(_fixture_function(conftest.xp))
    if namespace == "arrayx":
        conftest.devices = pytest.fixture(_scipy_devices)


#: SciPy's test helpers that turn arrays into NumPy arrays (np.testing, or np.asarray) for any
#: library they do not know by name (CuPy's and torch's compare on their device)
_SCIPY_CONVERTING_HELPERS = ("xp_assert_equal", "xp_assert_close", "xp_assert_close_nulp",
                             "xp_assert_less", "assert_array_almost_equal", "assert_almost_equal",
                             "_xp_copy_to_numpy")


def _adapt_scipy_assertions(namespace: str) -> None:
    """On a GPU, SciPy's assertions compare arrayx arrays with host copies made for the
    assertion only (as they take CuPy's with .get()); the function under test still runs
    without implicit host copies, so a NumPy fallback in it fails as before."""
    if not _on_gpu_without_host_copies(namespace):  # False for any other namespace
        return
    import arrayx
    from scipy._lib import _array_api

    def with_host_copies(helper):
        @functools.wraps(helper)
        def assertion(*args, **kwargs):
            __tracebackhide__ = True
            arrayx.set_implicit_host_copy(True)
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", arrayx.ImplicitHostCopyWarning)
                    return helper(*args, **kwargs)
            finally:
                arrayx.set_implicit_host_copy(False)
        return assertion

    for name in _SCIPY_CONVERTING_HELPERS:
        if hasattr(_array_api, name):
            setattr(_array_api, name, with_host_copies(getattr(_array_api, name)))


def _scipy_devices(xp):
    """SciPy's `devices` fixture (every device of the namespace, then None) for the 2025.12
    standard, whose devices() is a tuple: SciPy's appends [None] to the 2024.12 list."""
    return [*xp.__array_namespace_info__().devices(), None]


def _is_scipy_conftest(plugin) -> bool:
    path = getattr(plugin, "__file__", None)
    return path is not None and Path(path).parts[-2:] == ("scipy", "conftest.py")


def _is_scipy_case(item, namespace: str) -> bool:
    callspec = getattr(item, "callspec", None)
    xp = callspec.params.get("xp") if callspec is not None else None
    return getattr(xp, "__name__", None) == namespace


# --------------------------------------------------------------------------------------------
# array-api-extra
# --------------------------------------------------------------------------------------------

def _adapt_array_api_extra(namespace: str) -> None:
    from array_api_extra._lib import _backends

    if any(member.value == namespace for member in _backends.Backend):
        return
    # An Enum cannot gain members, so the module gets a new Backend class with the same members
    # and methods plus ours; only the tests import it, and none has yet.
    original = _backends.Backend
    body = enum.EnumMeta.__prepare__("Backend", (enum.Enum,))
    for member in original:
        body[member.name] = member.value
    body[namespace.upper()] = namespace
    for name, value in vars(original).items():
        if name in ("__module__", "__qualname__", "__doc__") or (
                not name.startswith("_") and name not in original.__members__):
            body[name] = value
    _backends.Backend = enum.EnumMeta("Backend", (enum.Enum,), body)

    # Its assertions convert results with np.from_dlpack unless they know the library (CuPy,
    # torch and JAX arrays are moved to the host by name first); NumPy answers a CUDA DLTensor
    # with RuntimeError, which the helper does not catch. So arrays of the namespace move to
    # the host first, as the helper does for torch and JAX (upstream: the same for any array
    # with to_device, or catching RuntimeError too).
    from array_api_extra.testing import _testing

    convert = _testing._as_numpy_array

    def _as_numpy_array(array, *, xp):
        on_gpu = str(getattr(array, "device", "cpu")) != "cpu"
        if getattr(xp, "__name__", None) == namespace and on_gpu:
            array = array.to_device("cpu")
        return convert(array, xp=xp)

    _testing._as_numpy_array = _as_numpy_array


def _is_array_api_extra_case(item, namespace: str) -> bool:
    callspec = getattr(item, "callspec", None)
    library = callspec.params.get("library") if callspec is not None else None
    return getattr(library, "value", None) == namespace


_IS_CASE = {
    "scikit-learn": _is_scikit_learn_case,
    "scipy": _is_scipy_case,
    "array-api-extra": _is_array_api_extra_case,
}


# --------------------------------------------------------------------------------------------
# hooks
# --------------------------------------------------------------------------------------------

@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config, parser, args):
    client, namespace = _client(), _namespace()
    if client == "scikit-learn":
        _adapt_scikit_learn(namespace)
    elif client == "array-api-extra":
        _adapt_array_api_extra(namespace)
    elif client == "scipy":  # before the test modules import the helpers by name
        _adapt_scipy_assertions(namespace)


# The markers array-api-extra's own pytest configuration registers (the package ships none).
_ARRAY_API_EXTRA_MARKERS = (
    "skip_xp_backend(library, /, *, reason=None): Skip test for a specific backend",
    "xfail_xp_backend(library, /, *, reason=None, strict=None): Xfail test for a specific "
    "backend",
    "thread_unsafe: the test must not run in parallel threads",
)


def pytest_configure(config):
    if _client() == "array-api-extra":
        for marker in _ARRAY_API_EXTRA_MARKERS:
            config.addinivalue_line("markers", marker)


@pytest.hookimpl(tryfirst=True)
def pytest_plugin_registered(plugin, manager):
    # Before pytest's fixture manager reads the conftest's fixtures (a later implementation of
    # the same hook).
    if _is_scipy_conftest(plugin) and _client() == "scipy":
        _adapt_scipy_conftest(plugin, _namespace())


def pytest_collection_modifyitems(session, config, items):
    client, namespace = _client(), _namespace()
    is_case = _IS_CASE[client]
    selected = [item for item in items if is_case(item, namespace)]
    deselected = [item for item in items if not is_case(item, namespace)]
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = selected
    if namespace == "arrayx":
        import arrayx
        if arrayx.get_implicit_host_copy():
            # The run asked for host copies; the warning that announces the first one would be
            # an error under a client's -W error, failing whichever test copies first.
            quiet = pytest.mark.filterwarnings("ignore::arrayx.ImplicitHostCopyWarning")
            for item in items:
                item.add_marker(quiet)
    path = os.environ.get("ARRAYX_CLIENT_EXPECTED_FAILURES")
    if not path:
        return
    entries = parse_list_file(Path(path))
    for item in items:
        for pattern, reason in entries:
            if id_matches(item.nodeid, pattern):
                item.add_marker(pytest.mark.xfail(reason=reason, strict=False))
                break
