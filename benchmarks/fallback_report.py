"""pytest plugin (``-p fallback_report``): at the end of a session, append the primitives that ran
through the host fallback in this process to the file named by ``ARRAYX_FALLBACK_REPORT``, one
``<device kind> <primitive>`` per line (the conformance run on CUDA checks that no elementwise or
creation primitive is among them)."""

import os


def pytest_sessionfinish(session, exitstatus):
    path = os.environ.get("ARRAYX_FALLBACK_REPORT")
    if not path:
        return
    from arrayx import _registry
    with open(path, "a") as f:
        for kind, name in sorted(_registry._warned):
            f.write(f"{kind} {name}\n")
