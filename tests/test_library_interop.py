"""Libraries written against the standard run on arrayx arrays: scikit-learn (array API dispatch,
which needs SCIPY_ARRAY_API=1 before SciPy is imported, hence a subprocess) and array-api-extra."""

import textwrap

import numpy as np
import pytest

import arrayx as xp
from conftest import run_with_scipy_array_api, to_numpy

SKLEARN_SCRIPT = textwrap.dedent("""
    import numpy as np
    import sklearn
    from sklearn.decomposition import PCA
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
    from sklearn.preprocessing import MinMaxScaler, StandardScaler
    import arrayx as xp

    rng = np.random.default_rng(0)
    X = rng.standard_normal((300, 6))
    X[:, 2] *= 5.0
    y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(np.int64)

    def host(a):
        assert type(a) is xp.Array, type(a)
        return np.asarray(a.to_device("cpu"))

    for make in (lambda: PCA(n_components=3, svd_solver="full"), StandardScaler, MinMaxScaler):
        with sklearn.config_context(array_api_dispatch=True):
            got = host(make().fit_transform(xp.asarray(X)))
        ref = make().fit_transform(X)
        # PCA components are defined up to sign.
        np.testing.assert_allclose(np.abs(got), np.abs(ref), rtol=1e-10, atol=1e-10)
    with sklearn.config_context(array_api_dispatch=True):
        lda = LinearDiscriminantAnalysis(solver="svd").fit(xp.asarray(X), xp.asarray(y))
        got = host(lda.predict(xp.asarray(X)))
    ref = LinearDiscriminantAnalysis(solver="svd").fit(X, y).predict(X)
    np.testing.assert_array_equal(got, ref)
    print("ok")
""")


def test_scikit_learn_estimators_match_numpy():
    pytest.importorskip("sklearn")
    run_with_scipy_array_api(SKLEARN_SCRIPT)


def test_array_api_extra_functions():
    xpx = pytest.importorskip("array_api_extra")
    rng = np.random.default_rng(1)
    data = rng.standard_normal((3, 40))
    np.testing.assert_allclose(to_numpy(xpx.cov(xp.asarray(data))), np.cov(data), rtol=1e-12)
    assert xpx.atleast_nd(xp.asarray(1.5), ndim=3).shape == (1, 1, 1)
    padded = xpx.pad(xp.asarray([3, 1, 2]), 2)
    np.testing.assert_array_equal(to_numpy(padded), np.pad([3, 1, 2], 2))
    x = xp.asarray(rng.standard_normal(10))
    np.testing.assert_array_equal(to_numpy(xpx.at(x)[2:5].set(7.0)), np.where(
        (np.arange(10) >= 2) & (np.arange(10) < 5), 7.0, to_numpy(x)))
