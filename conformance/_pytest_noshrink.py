"""pytest plugin loaded by ``run.py --no-shrink``: keep the suite's Hypothesis
profile but skip the shrink and explain phases, so a failing test reports its
first failing example at once instead of spending minutes minimising it
(useful for fast triage runs of a young implementation)."""

import pytest


@pytest.hookimpl(trylast=True)  # after the suite's conftest registered its profile
def pytest_configure(config):
    from hypothesis import Phase, settings

    base = settings.get_profile("array-api-tests")
    settings.register_profile(
        "array-api-tests-noshrink",
        parent=base,
        phases=[p for p in base.phases if p not in (Phase.shrink, Phase.explain)],
    )
    settings.load_profile("array-api-tests-noshrink")
