"""The split reductions' one-launch fold, run on numba's CUDA simulator without a GPU (in CI):
tests/cuda/reduce_sim.py runs arrayx's reduction plans and kernel source with the blocks in a
random order and checks every result against NumPy and every counter back at 0. One process
per group of cases: the simulator replaces numba.cuda for the whole process."""

import os
import subprocess
import sys

import pytest

pytest.importorskip("numba.cuda")

SIM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "reduce_sim.py")


@pytest.mark.parametrize("case", ["sum", "arg", "rows", "col", "general"])
def test_split_reductions_fold_on_the_simulator(case):
    run = subprocess.run([sys.executable, SIM, case], capture_output=True, text=True,
                         timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "BAD 0" in run.stdout, run.stdout
