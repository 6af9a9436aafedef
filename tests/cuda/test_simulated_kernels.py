"""Kernels run on numba's CUDA simulator without a GPU (in CI), each script in a process of its
own because the simulator replaces numba.cuda for the whole process:

* reduce_sim.py: the split reductions' one-launch fold (the last block of a group folds the
  others' partials and resets its counter), blocks in a random order, against NumPy and with
  every counter checked back at 0;
* scan_sim.py: the row scan's host side and decoupled look-back kernel on a NumPy heap, with
  prefixes made visible late so tiles walk back over two windows of aggregates, against NumPy.
"""

import os
import subprocess
import sys

import pytest

pytest.importorskip("numba.cuda")

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = [("reduce_sim.py", case) for case in ("sum", "arg", "rows", "col", "general")] + \
    [("scan_sim.py", case) for case in ("sum", "segments", "wide", "mask")]


@pytest.mark.parametrize("script, case", CASES)
def test_kernels_on_the_simulator(script, case):
    run = subprocess.run([sys.executable, os.path.join(HERE, script), case],
                         capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "BAD 0" in run.stdout, run.stdout
