"""What a new user runs first: ``python -m arrayx`` (versions, devices, why no GPU is usable),
``import arrayx`` without the GPU packages' cost, the reason for a CPU default, the LICENSE and
``python -m arrayx.cuda.precompile --help``."""

import os

import numpy as np
import pytest

import arrayx as xp
import arrayx._devices as devices
from conftest import REPO, run_python


def test_python_m_arrayx_reports_versions_and_devices():
    r = run_python("-m", "arrayx", ARRAYX_DEVICE=None)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == f"arrayx {xp.__version__} (array API 2025.12)"
    assert f"numpy {np.__version__}" in lines
    assert any(line.startswith("numba-cuda ") for line in lines)
    assert lines[lines.index("devices:") + 1] == "  cpu"
    count = devices.cuda_device_count()
    cuda_lines = [line for line in lines if line.startswith("  cuda:")]
    assert len(cuda_lines) == count
    assert all("compute capability" in line and "GiB" in line for line in cuda_lines)
    reason = devices.cuda_unavailable_reason()
    if reason:  # this machine (no GPU): the default is the CPU and the report says why
        assert "default device: cpu" in lines
        # the detail in parentheses may differ here: tests/ (with its cuda/ package) is on
        # sys.path in this process, not in the subprocess
        assert lines[-1].startswith(f"no usable GPU: {reason.split(' (')[0]}")
    else:
        assert "default device: cuda:0" in lines
        assert not any(line.startswith("no usable GPU") for line in lines)


def test_python_m_arrayx_with_a_bad_arrayx_device():
    r = run_python("-m", "arrayx", ARRAYX_DEVICE="tpu")
    assert r.returncode == 0, r.stderr
    assert any(line.startswith("default device: none") and "ARRAYX_DEVICE" in line
               for line in r.stdout.splitlines())


def test_import_arrayx_imports_no_gpu_package():
    code = ("import sys, arrayx as xp; xp.asarray([1.0]); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('numba', 'numba_cuda') "
            "or m.startswith('cuda.compute')))")
    r = run_python("-c", code, ARRAYX_DEVICE="cpu")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"


@pytest.mark.skipif(not os.path.exists("/proc/self/maps"), reason="needs Linux's /proc/self/maps")
def test_cuda_linalg_and_fft_load_no_library_at_import():
    # cuBLAS, cuSOLVER and cuFFT load on the first call of one of their functions
    # (arrayx/cuda/libraries/calls.py), not when arrayx or the primitives that call them are
    # imported.
    code = ("import arrayx as xp, arrayx.cuda.kernels.linalg, arrayx.cuda.kernels.fft; "
            "xp.asarray([1.0]); "
            "print(sorted({line.split()[-1].rsplit('/', 1)[-1] for line in open('/proc/self/maps') "
            "if any(n in line for n in ('libcublas', 'libcusolver', 'libcufft'))}))")
    r = run_python("-c", code, ARRAYX_DEVICE="cpu")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"


@pytest.mark.skipif(devices.cuda_device_count() > 0, reason="a GPU is usable here")
def test_cpu_default_device_logs_why():
    code = ("import logging; logging.basicConfig(level=logging.DEBUG); import arrayx._devices as d; "
            "print(d.default_device())")
    r = run_python("-c", code, ARRAYX_DEVICE=None)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "cpu"
    assert "DEBUG:arrayx:default device: cpu, because " in r.stderr
    assert devices.cuda_unavailable_reason().split(" (")[0] in r.stderr


def test_missing_numba_cuda_is_a_reason_even_with_a_device(monkeypatch):
    import importlib.util
    real = importlib.util.find_spec
    monkeypatch.setattr(devices, "cuda_device_count", lambda: 1)
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "numba_cuda" else real(name, *a))
    monkeypatch.setattr(devices, "_default_device", None)
    monkeypatch.delenv("ARRAYX_DEVICE", raising=False)
    assert "numba-cuda is not installed" in devices.cuda_unavailable_reason()
    assert devices.default_device() is xp.Device("cpu")


def test_license_is_bsd_3_clause():
    with open(os.path.join(REPO, "LICENSE"), encoding="utf-8") as f:
        text = f.read()
    assert text.startswith("BSD 3-Clause License") and "the arrayx developers" in text
    with open(os.path.join(REPO, "pyproject.toml"), encoding="utf-8") as f:
        assert 'license = {text = "BSD-3-Clause"}' in f.read()


def test_precompile_help_describes_every_option(monkeypatch):
    r = run_python("-m", "arrayx.cuda.precompile", "--help")
    assert r.returncode == 0, r.stderr
    import argparse

    import arrayx.cuda.precompile as precompile
    seen = {}

    def capture(self, *args, **kwargs):
        seen["parser"] = self
        raise SystemExit(0)

    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", capture)
    with pytest.raises(SystemExit):
        precompile.main([])
    parser = seen["parser"]
    assert parser.description
    for action in parser._actions:
        assert action.help, action.option_strings
        for option in action.option_strings:
            assert option in r.stdout


def _conformance_runner():
    import importlib.util
    spec = importlib.util.spec_from_file_location("conformance_run",
                                                  os.path.join(REPO, "conformance", "run.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_conformance_runner_writes_outside_the_tree_by_default():
    run = _conformance_runner()
    for kind, module in (("cpu", "arrayx"), ("cuda", "arrayx"), ("cpu", "numpy")):
        path = run.default_output(kind, module).resolve()
        assert not str(path).startswith(REPO + os.sep), path
        assert path.name == (f"{kind}.json" if module == "arrayx" else f"{kind}-{module}.json")
    helps = {a.dest: a.help for a in run.build_parser()._actions}
    assert "--output conformance/results/<kind>.json" in helps["output"]
