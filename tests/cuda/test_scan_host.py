"""The row scan's host side and decoupled look-back kernel, run on numba's CUDA simulator without
a GPU (in CI): tests/cuda/scan_sim.py scans on a NumPy heap with late prefixes, so tiles walk
back over more than one window of aggregates, and checks every result against NumPy. One
process per group of cases: the simulator replaces numba.cuda for the whole process."""

import os
import subprocess
import sys

import pytest

pytest.importorskip("numba.cuda")

SIM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "scan_sim.py")


@pytest.mark.parametrize("case", ["sum", "segments", "wide", "persistent", "mask"])
def test_row_scans_on_the_simulator(case):
    run = subprocess.run([sys.executable, SIM, case], capture_output=True, text=True,
                         timeout=900)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "BAD 0" in run.stdout, run.stdout
