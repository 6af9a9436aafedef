"""Threads on one device (the default one): every thread's results exact, nothing lost.

The thread model (README, "Threads"): any number of Python threads may use arrayx at once on
one device; each has its own current stream (the default stream, shared, unless it entered
another); results are those of the same operations run one thread at a time.
"""

import threading

import numpy as np

import arrayx as xp
from conftest import run_threads, to_numpy


def _integer_chain(x, t, steps):
    """Exact integer arithmetic, the same whatever the library: x -> (x * 3 + t) % 65521."""
    for _ in range(steps):
        x = (x * 3 + t) % 65521
    return x


def test_sixteen_threads_thousand_ops_each_are_exact():
    results = {}

    def work(t):
        h = np.arange(257, dtype=np.int64) * (t + 1)
        x = _integer_chain(xp.asarray(h), t, 333)  # 3 ops a step: 999 ops
        results[t] = to_numpy(x)

    run_threads(work, 16)
    for t in range(16):
        expected = _integer_chain(np.arange(257, dtype=np.int64) * (t + 1), t, 333)
        np.testing.assert_array_equal(results[t], expected)


def test_threads_mixing_reductions_sorts_products_and_transfers(rng):
    data = [rng.standard_normal((64, 48)) for _ in range(8)]

    def work(t):
        a = data[t]
        for _ in range(20):
            x = xp.asarray(a)
            np.testing.assert_allclose(float(xp.sum(x)), a.sum(), rtol=1e-10)
            np.testing.assert_array_equal(to_numpy(xp.sort(x, axis=1)), np.sort(a, axis=1))
            np.testing.assert_allclose(to_numpy(x @ x.mT), a @ a.T, rtol=1e-10, atol=1e-10)
            np.testing.assert_array_equal(to_numpy(x[x > 0]), a[a > 0])
            np.testing.assert_allclose(to_numpy(xp.cumulative_sum(x, axis=0)), np.cumsum(a, axis=0),
                                       rtol=1e-10, atol=1e-10)

    run_threads(work, 8)


def test_arrays_made_in_one_thread_are_used_in_another():
    made = {}
    barrier = threading.Barrier(4)

    def work(t):
        made[t] = xp.full((1000,), float(t)) * 2
        barrier.wait()
        other = made[(t + 1) % 4]  # produced by another thread, perhaps still queued
        np.testing.assert_array_equal(to_numpy(other + 1), np.full(1000, 2.0 * ((t + 1) % 4) + 1))

    run_threads(work, 4)
