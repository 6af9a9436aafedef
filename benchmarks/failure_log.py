"""pytest plugin (``-p failure_log``): append each failure, as it happens, to the file named by
``ARRAYX_FAILURE_LOG`` (its test id, the phase, and the end of its traceback), so that a run
stopped by a time limit on the GPU machine still says what failed before it stopped. Under
pytest-xdist only the controller writes (workers' reports reach it)."""

import os


def pytest_runtest_logreport(report):
    path = os.environ.get("ARRAYX_FAILURE_LOG")
    if not path or os.environ.get("PYTEST_XDIST_WORKER") or not report.failed:
        return
    with open(path, "a") as f:
        f.write(f"=== {report.nodeid} [{report.when}]\n{report.longreprtext[-2500:]}\n")
