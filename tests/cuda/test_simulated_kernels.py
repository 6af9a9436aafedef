"""Kernels run on numba's CUDA simulator without a GPU (in CI), each script in a process of its
own because the simulator replaces numba.cuda for the whole process:

* reduce_sim.py: the split reductions' one-launch fold (the last block of a group folds the
  others' partials and resets its counter), blocks in a random order, against NumPy and with
  every counter checked back at 0; the NaN-ignoring reductions with all-NaN slices; the
  one-pass moments (var, std, nanvar, nanstd) on every layout;
* scan_sim.py: the row scan's host side and decoupled look-back kernel on a NumPy heap, with
  prefixes made visible late so tiles walk back over two windows of aggregates, against NumPy:
  every case it lists (one row, segments, aligned rows, rounds, wide values, x[mask]);
* tile_sim.py: the elementwise transposing tile kernels (scalar, vector, 32 x 32 and byte
  designs) over partial tiles, against NumPy;
* random_sim.py: the random family's kernels against the CPU backend's streams (bits, floats,
  normals, integers);
* sort_sim.py: the short-row sort (sort/block.py) against NumPy's stable sort, every key width
  and kind, both orders, values and positions.
"""

import ast
import os

import pytest

from conftest import run_python

pytest.importorskip("numba.cuda")

HERE = os.path.dirname(os.path.abspath(__file__))


def _listed_cases(script):
    """The CASES tuple of a simulator script, read from its source: importing it would switch
    numba.cuda to the simulator in this process."""
    with open(os.path.join(HERE, script)) as f:
        tree = ast.parse(f.read())
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "CASES":
            return ast.literal_eval(node.value)
    raise LookupError(f"{script} lists no CASES")


SCRIPTS = ("reduce_sim.py", "scan_sim.py", "tile_sim.py", "random_sim.py", "sort_sim.py")
CASES = [(script, case) for script in SCRIPTS for case in _listed_cases(script)]


@pytest.mark.parametrize("script, case", CASES)
def test_kernels_on_the_simulator(script, case):
    run = run_python(os.path.join(HERE, script), case, timeout=900)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "BAD 0" in run.stdout, run.stdout
