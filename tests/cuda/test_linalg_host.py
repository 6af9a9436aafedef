"""The product plans of arrayx/cuda/kernels/linalg (no GPU needed): which cuBLAS routine a
layout goes to."""

import pytest

pytest.importorskip("numba.cuda")

from arrayx.cuda.kernels.linalg import _product_plan  # noqa: E402


@pytest.mark.parametrize("a, b, dot", [
    (((1, 300), (300, 1)), ((300, 1), (1, 1)), (1, 1)),       # two contiguous vectors
    (((1, 300), (300, 3)), ((300, 1), (2, 1)), (3, 2)),       # strided ones
    (((1, 1), (1, 1)), ((1, 1), (1, 1)), (1, 1)),             # K = 1
])
def test_vector_times_vector_is_a_dot(a, b, dot):
    plan = _product_plan(*a, *b, True)
    assert plan.dot == dot and plan.gemv is None and plan.out_shape == (1, 1)


def test_a_reversed_vector_is_copied_before_the_dot():
    """cuBLAS reads a negative increment from the far end: a reversed vector is copied first,
    and the dot reads the copy."""
    plan = _product_plan((1, 300), (300, -1), (300, 1), (1, 1), True)
    assert plan.copy_a and not plan.copy_b and plan.dot == (1, 1)


def test_matrix_times_vector_is_still_a_gemv_and_batches_neither():
    assert _product_plan((50, 30), (30, 1), (30, 1), (1, 1), True).gemv is not None
    assert _product_plan((50, 30), (30, 1), (30, 1), (1, 1), True).dot is None
    batched = _product_plan((4, 1, 30), (30, 30, 1), (4, 30, 1), (30, 1, 1), True)
    assert batched.dot is None and batched.gemv is None
    assert _product_plan((1, 30), (30, 1), (30, 1), (1, 1), False).dot is None  # USE_GEMV off
