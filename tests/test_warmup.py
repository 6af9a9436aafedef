"""``python -m arrayx warmup`` (arrayx/cuda/precompile.py) and the kernels shipped in the package
(arrayx/cuda/prebuilt/, looked up by engine/compiler.py): the command fills a cache without a GPU
and says what it did, a second run compiles nothing, bad arguments are clear errors, and the
shipped archives hold exactly the current sources' kernels (a source change stales them: this
fails until ``python -m arrayx.cuda.precompile --ship`` rebuilds them)."""

from __future__ import annotations

import functools
import json
import os
import re
import zipfile

import numpy as np
import pytest

import arrayx._devices as devices
from conftest import run_python

REBUILD = "python -m arrayx.cuda.precompile --ship --cc 9.0,8.0"


_python = functools.partial(run_python, timeout=600)  # a warm-up compiles kernels


def _counts(stdout: str) -> dict:
    """{'compiled': n, 'already cached': n, 'shipped': n, 'failed': n} from the summary."""
    found = dict(re.findall(r"^  (compiled|already cached|shipped|failed) +(\d+)", stdout, re.M))
    return {k: int(v) for k, v in found.items()}


def test_warmup_fills_an_empty_cache_then_compiles_nothing(tmp_path):
    pytest.importorskip("numba_cuda")
    from arrayx.cuda import precompile
    only = "nonzero,repeat"
    expected = len(precompile.specs(only.split(",")))
    assert 0 < expected <= 10  # nonzero's coordinates kernels of 1-4 dims, repeat's two
    env = {"ARRAYX_KERNEL_CACHE": str(tmp_path), "ARRAYX_SHIPPED_KERNELS": "off"}
    args = ("-m", "arrayx", "warmup", "--cc", "9.0", "--only", only, "--jobs", "2")
    first = _python(*args, **env)
    assert first.returncode == 0, first.stderr
    assert _counts(first.stdout) == {"compiled": expected, "already cached": 0, "shipped": 0,
                                     "failed": 0}, first.stdout
    assert "compute capability 9.0" in first.stdout
    assert f"cache folder {tmp_path}: {expected} kernels" in first.stdout
    assert "compiling for sm_90" in first.stderr  # the progress: tqdm's bar or a plain line
    assert len(list(tmp_path.glob("*.json"))) == expected
    second = _python(*args, "--quiet", **env)
    assert second.returncode == 0, second.stderr
    assert _counts(second.stdout) == {"compiled": 0, "already cached": expected, "shipped": 0,
                                      "failed": 0}, second.stdout
    assert second.stderr == ""


def test_precompile_module_is_the_same_command(tmp_path):
    """The old entry point stays: the same parser, the same options."""
    from arrayx.cuda import precompile
    warmup = _python("-m", "arrayx", "warmup", "--help")
    old = _python("-m", "arrayx.cuda.precompile", "--help")
    assert warmup.returncode == 0 and old.returncode == 0, warmup.stderr + old.stderr
    for action in precompile.build_parser()._actions:
        for option in action.option_strings:
            assert option in warmup.stdout and option in old.stdout
    assert warmup.stdout.startswith("usage: python -m arrayx warmup")


@pytest.mark.parametrize("argv, message", [
    (["--cc", "9"], "MAJOR.MINOR"),
    (["--cc", "9.0,8.0"], "one compute capability"),
    (["--jobs", "0"], "at least 1"),
    (["--cc", "9.0", "--only", "no_such_operation"], "no kernel of these names"),
])
def test_warmup_rejects_bad_arguments(argv, message, capsys):
    from arrayx.cuda import precompile
    with pytest.raises(SystemExit) as exc:
        precompile.main(argv)
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


def test_warmup_without_numba_cuda_says_what_to_install(monkeypatch, capsys):
    import importlib.util

    from arrayx.cuda import precompile
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "numba_cuda" else real(name, *a))
    with pytest.raises(SystemExit):
        precompile.main(["--cc", "9.0"])
    assert "arrayx[cuda]" in capsys.readouterr().err


def test_warmup_with_the_cache_off_says_so(monkeypatch, capsys):
    pytest.importorskip("numba_cuda")  # without it, that is what warmup says first
    from arrayx.cuda import precompile
    monkeypatch.setenv("ARRAYX_KERNEL_CACHE", "off")
    with pytest.raises(SystemExit):
        precompile.main(["--cc", "9.0"])
    assert "ARRAYX_KERNEL_CACHE=off" in capsys.readouterr().err


@pytest.mark.skipif(devices.cuda_device_count() > 0, reason="a GPU is usable here")
def test_warmup_without_a_gpu_asks_for_cc(tmp_path):
    pytest.importorskip("numba_cuda")
    r = _python("-m", "arrayx", "warmup", ARRAYX_KERNEL_CACHE=str(tmp_path))
    assert r.returncode != 0
    assert "no usable GPU" in r.stderr and "--cc" in r.stderr


def test_python_m_arrayx_rejects_an_unknown_command():
    r = _python("-m", "arrayx", "warm-up")
    assert r.returncode == 2 and "usage: python -m arrayx" in r.stderr


def test_every_shipped_pattern_names_kernels():
    from arrayx.cuda import precompile
    names = [s.name for s in precompile.specs()]
    for pattern in precompile.SHIPPED_PATTERNS:
        assert any(re.fullmatch(pattern, n) for n in names), pattern


@pytest.mark.parametrize("cc", [(9, 0), (8, 0)])
def test_shipped_kernels_are_the_current_sources(cc):
    """Every shipped_specs() kernel is in the archive under its current key, and nothing else
    is: a changed source (or device helper, or arrayx version) changes its key."""
    from arrayx.cuda import precompile
    from arrayx.cuda.engine import compiler
    path = compiler.shipped_archive_path(cc)
    assert os.path.exists(path), f"{path} is missing: run {REBUILD}"
    with zipfile.ZipFile(path) as archive:
        index = {}
        for bundle in archive.namelist():
            data = archive.read(bundle)
            for key, (offset, size, entry) in json.loads(data[:data.index(b"\n")]).items():
                index[key] = (bundle, data[data.index(b"\n") + 1 + offset:][:4])
    want = {compiler.shipped_key(s, cc): s for s in precompile.shipped_specs(cc)}
    stale = sorted(key for key in index if key not in want)
    missing = sorted(s.name for key, s in want.items() if key not in index)
    assert not stale and not missing, (f"the shipped kernels for sm_{cc[0]}{cc[1]} are stale "
                                       f"({len(stale)} old, {len(missing)} missing, e.g. "
                                       f"{(stale + missing)[:3]}): run {REBUILD}")
    # each in the bundle its name selects (the only one a lookup reads), and a cubin
    assert all(index[key][0] == compiler.shipped_bundle(s.name) for key, s in want.items())
    assert all(head == b"\x7fELF" for _, head in index.values())


def test_sm_90_ships_every_kernel_but_the_strided_and_pitched_elementwise_ones():
    from arrayx.cuda import precompile
    every, shipped = precompile.specs(), {s.name for s in precompile.shipped_specs((9, 0))}
    left_out = [s.name for s in every if s.name not in shipped]
    assert left_out and all(re.fullmatch(r"ew_\w+_(strided\d+d\d+|rows\d+x\d+d\d+)", n)
                            for n in left_out)
    assert {s.name for s in precompile.shipped_specs((8, 0))} < shipped
    assert precompile.shipped_specs((7, 5)) == []


@pytest.mark.parametrize("cc", [(9, 0), (8, 0)])
def test_row_functions_are_shipped_for_every_row_length(cc):
    """The kernel a row function launches for contiguous float32/float64 rows, aligned or not,
    is shipped whatever the row's length (short, held in registers, streamed, split)."""
    from arrayx.cuda import precompile
    from arrayx.cuda.kernels.rows import _VARIANTS, kernel_spec, layout
    shipped = {s.source for s in precompile.shipped_specs(cc) if s.name.startswith("rows_")}
    lengths = [1, 2, 3, 7, 77, 197, 300, 1000, 1023, 4099, 8191, 8192, 8193, 20000, 1 << 20]
    lengths += [int(k) for k in np.random.default_rng(1).integers(1, 40000, 40)]
    for dtype in (np.dtype("float32"), np.dtype("float64")):
        for func, weight, bias in _VARIANTS:
            for K in lengths:
                V = 16 // dtype.itemsize
                for vec in (True, False) if K % V == 0 else (False,):
                    k = layout(func, dtype, K, vec, weight, bias)
                    assert kernel_spec(k).source in shipped, (func, dtype, K, vec)
            split = layout("logsumexp", dtype, 1 << 24, True, False, False)._replace(split=True)
            assert kernel_spec(split).source in shipped


def test_a_shipped_archive_gives_back_each_image_from_its_bundle(tmp_path, monkeypatch):
    """write_shipped_archive's bundles and offsets, read back through read_shipped: kernels
    of one bundle, of two, and one whose bundle member went missing (it compiles instead)."""
    from arrayx.cuda import precompile
    from arrayx.cuda.engine import compiler
    rng = np.random.default_rng(0)
    chosen = [s for s in precompile.shipped_specs((9, 0))
              if s.name.startswith(("ew_add_float32_float32_", "ew_add_float64_float64_",
                                    "red_sum_float32_"))][:9]
    images = {s.name: rng.bytes(int(rng.integers(1, 5000))) for s in chosen}
    kernels = [(compiler.shipped_key(s, (9, 0)), s.name, f"entry_{i}", images[s.name])
               for i, s in enumerate(chosen)]
    monkeypatch.setattr(compiler, "SHIPPED_DIR", str(tmp_path))
    monkeypatch.setattr(compiler, "_shipped", {})
    monkeypatch.setattr(compiler, "_bundles", {})
    path = compiler.shipped_archive_path((9, 0))
    precompile.write_shipped_archive(path, kernels)
    with zipfile.ZipFile(path) as archive:
        bundles = set(archive.namelist())
    assert bundles == {compiler.shipped_bundle(s.name) for s in chosen} and len(bundles) >= 3
    for i, s in enumerate(chosen):
        assert compiler.read_shipped(s, (9, 0)) == (images[s.name], "cubin", f"entry_{i}")
    assert compiler.read_shipped(chosen[0], (8, 0)) is None  # no archive for sm_80 here
    # a bundle missing from the archive, or damaged: its kernels miss (and compile)
    lost, damaged = sorted(bundles)[:2]
    with zipfile.ZipFile(path) as archive:
        members = {m: archive.read(m) for m in archive.namelist() if m != lost}
    members[damaged] = b"no index line"
    with zipfile.ZipFile(path, "w") as archive:
        for m, data in members.items():
            archive.writestr(m, data, zipfile.ZIP_LZMA)
    compiler._shipped.clear()
    compiler._bundles.clear()
    for s in chosen:
        expected = None if compiler.shipped_bundle(s.name) in (lost, damaged) else \
            (images[s.name], "cubin", f"entry_{chosen.index(s)}")
        assert compiler.read_shipped(s, (9, 0)) == expected


@pytest.mark.parametrize("name, bundle", [
    ("ew_add_sfloat32_float32_to_float32_vec4x1", "ew_add_float32_vec"),
    ("ew_exp_complex64_to_complex64_tile1v64x64t256i32", "ew_exp_complex64_tile"),
    ("ew_cast_int32_to_int32_rows4x1d1", "ew_cast_int32_rows"),
    ("scatter_complex128v_by_int64_nd1d32", "scatter_complex128"),
    ("red_std_float64_to_float64_column_split", "red_std_float64"),
    ("rows_layer_norm_float64_regs_t128c4v2_w_bias_L1noallocate", "rows_layer_norm_float64"),
])
def test_shipped_bundles_group_one_operation_dtype_and_layout(name, bundle):
    from arrayx.cuda.engine import compiler
    assert compiler.shipped_bundle(name) == bundle


SHIPPED_HIT = """
import json, sys
from arrayx.cuda import precompile
from arrayx.cuda.engine import compiler
spec = next(s for s in precompile.shipped_specs((9, 0))
            if s.name == "ew_add_float32_float32_to_float32_vec4x1")
key, (image, fmt, entry) = compiler.build_binary(spec, (9, 0), False)
print(json.dumps({"stats": compiler.stats(), "format": fmt, "elf": image[:4] == b"\\x7fELF",
                  "entry": entry, "numba": "numba" in sys.modules}))
"""


def test_a_shipped_kernel_loads_without_compiling_or_numba(tmp_path):
    r = _python("-c", SHIPPED_HIT, ARRAYX_KERNEL_CACHE=str(tmp_path))
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout.strip().splitlines()[-1])
    assert got["stats"]["shipped_hits"] == 1 and got["stats"]["compiled"] == 0, got
    assert got["format"] == "cubin" and got["elf"] and got["entry"] and not got["numba"], got
    assert list(tmp_path.iterdir()) == []  # read-only: nothing copied into the user's cache


def test_shipped_kernels_can_be_switched_off(monkeypatch):
    from arrayx.cuda import precompile
    from arrayx.cuda.engine import compiler
    spec = precompile.shipped_specs((9, 0))[0]
    assert compiler.read_shipped(spec, (9, 0)) is not None
    monkeypatch.setenv("ARRAYX_SHIPPED_KERNELS", "off")
    assert compiler.read_shipped(spec, (9, 0)) is None
    assert compiler.read_shipped(spec, (7, 5)) is None  # no archive for that cc either way


def test_the_disk_cache_is_read_before_the_shipped_kernels(tmp_path, monkeypatch):
    """A shipped cubin the driver rejected is rebuilt into the disk cache (build_binary's
    fresh=True); the next process must find that rebuild, not the rejected one again."""
    from arrayx.cuda import precompile
    from arrayx.cuda.engine import compiler
    monkeypatch.setenv("ARRAYX_KERNEL_CACHE", str(tmp_path))
    monkeypatch.setattr(compiler, "_binaries", {})
    spec = precompile.shipped_specs((9, 0))[0]
    key = compiler.cache_key(spec, (9, 0), False)
    compiler._write_disk(key, spec, (9, 0), (b"rebuilt image", "cubin", "rebuilt_entry"),
                         seconds=0.5)
    before = compiler.stats()
    _, hit = compiler.build_binary(spec, (9, 0), False)
    assert hit == (b"rebuilt image", "cubin", "rebuilt_entry")
    after = compiler.stats()
    assert after["disk_hits"] == before["disk_hits"] + 1
    assert after["shipped_hits"] == before["shipped_hits"]


def test_shipped_keys_ignore_only_the_numba_cuda_version(monkeypatch):
    from arrayx.cuda import precompile
    from arrayx.cuda.engine import compiler
    spec = precompile.shipped_specs((9, 0))[0]
    shipped, cached = compiler.shipped_key(spec, (9, 0)), compiler.cache_key(spec, (9, 0), False)
    real = compiler.versions()
    monkeypatch.setattr(compiler, "_versions", dict(real, numba_cuda="0.0.1"))
    assert compiler.shipped_key(spec, (9, 0)) == shipped
    assert compiler.cache_key(spec, (9, 0), False) != cached
    monkeypatch.setattr(compiler, "_versions", dict(real, arrayx="999.0"))
    assert compiler.shipped_key(spec, (9, 0)) != shipped
    assert compiler.shipped_key(spec, (8, 0)) != shipped


def test_the_summary_names_the_cub_builds():
    from arrayx.cuda import precompile
    result = {"cc": (9, 0), "kernels": 3, "compiled": 1, "cached": 1, "shipped": 1,
              "failed": [], "seconds": 1.5, "slowest": [(1.2, "k")]}
    libraries = {"algorithms": 9, "built": 4, "seconds": 30.0,
                 "failed": [("sort int32", "RuntimeError: no")]}
    lines = precompile.summary_lines(result, "cuda:0, a GPU", 2, libraries)
    assert "  CUB algorithms  9 (4 built, the rest already cached) in 30.0 s, 1 failed" in lines
    assert "    sort int32: RuntimeError: no" in lines
    assert lines[-1].startswith("cache folder ")
    assert not any("CUB" in line for line in precompile.summary_lines(result, "--cc", 2))


def test_the_library_warmup_calls_run_on_any_device():
    """The calls warm_libraries makes, on the cpu: nothing to build, nothing failing."""
    from arrayx.cuda import precompile
    got = precompile.warm_libraries("cpu")
    assert got["failed"] == [] and got["algorithms"] == 0, got


WARM_LIBRARIES = """
import json
from arrayx.cuda import precompile
print(json.dumps(precompile.warm_libraries("cuda:0")))
"""


@pytest.mark.gpu
def test_warmup_on_a_gpu_builds_the_cub_algorithms_once(tmp_path):
    """The first process builds sort's, argsort's, unique's and isin's CUB algorithms into the
    cache folder; a second one loads them all from there."""
    env = {"ARRAYX_KERNEL_CACHE": str(tmp_path), "ARRAYX_SHIPPED_KERNELS": "off"}
    first = _python("-c", WARM_LIBRARIES, **env)
    assert first.returncode == 0, first.stderr
    built = json.loads(first.stdout.strip().splitlines()[-1])
    assert built["failed"] == [] and built["built"] > 0, built
    assert len(list(tmp_path.glob("cccl-*.bin"))) == built["built"]
    second = _python("-c", WARM_LIBRARIES, ARRAYX_KERNEL_CACHE=str(tmp_path))
    assert second.returncode == 0, second.stderr
    loaded = json.loads(second.stdout.strip().splitlines()[-1])
    assert loaded["failed"] == [] and loaded["built"] == 0, loaded
    assert loaded["algorithms"] == built["algorithms"]


REBUILD_LIBRARIES = "python -m arrayx.cuda.precompile --ship-libraries (on a GPU of that kind)"


def test_the_shipped_cub_builds_are_for_the_installed_cuda_cccl():
    """The archive of CUB builds for sm_90 holds the first float32 sort's under the name this
    cuda-cccl reads (its version is part of the name: a new pin stales the archive)."""
    pytest.importorskip("cuda.compute")
    from arrayx.cuda.libraries import cub
    path = cub.shipped_archive_path((9, 0))
    assert os.path.exists(path), f"{path} is missing: run {REBUILD_LIBRARIES}"
    with zipfile.ZipFile(path) as archive:
        members = set(archive.namelist())
    first_sort = ("radix_sort", "<f4", None, False)
    assert cub.blob_name((9, 0), first_sort) in members, \
        f"the shipped CUB builds are not this cuda-cccl's: run {REBUILD_LIBRARIES}"
    assert all(name.startswith("cccl-") and name.endswith(".bin") for name in members)


SHIPPED_SORT = """
import json, numpy as np, arrayx as xp
from arrayx.cuda.libraries import cub
x = np.random.default_rng(1).standard_normal(5000).astype(np.float32)
got = xp.sort(xp.asarray(x, device="cuda:0")).to_device("cpu")
print(json.dumps({"equal": bool(np.array_equal(np.asarray(got), np.sort(x))),
                  "seconds": cub.BUILD_SECONDS}))
"""


@pytest.mark.gpu
def test_a_first_sort_with_an_empty_cache_loads_the_shipped_cub_build(tmp_path):
    """A new user's first sort on an H100/H200: the CUB build comes from the package (nothing
    built into the cache folder, well under the seconds of an NVRTC build)."""
    from arrayx.cuda.libraries import cub
    from arrayx.cuda.engine import runtime
    cc = tuple(runtime.get_device(0).compute_capability)
    if not os.path.exists(cub.shipped_archive_path(cc)):
        pytest.skip(f"no CUB builds are shipped for sm_{cc[0]}{cc[1]}")
    run = _python("-c", SHIPPED_SORT, ARRAYX_KERNEL_CACHE=str(tmp_path))
    assert run.returncode == 0, run.stderr
    got = json.loads(run.stdout.strip().splitlines()[-1])
    assert got["equal"], got
    assert not list(tmp_path.glob("cccl-*.bin")), "the sort built its CUB algorithm"
    assert all(seconds < 2 for seconds in got["seconds"].values()), got


def test_the_progress_line_without_tqdm_writes_each_tenth(capsys):
    """What a machine without tqdm shows (stderr not a terminal here): a line each tenth."""
    from arrayx.cuda import precompile
    bar = precompile._LineProgress(20, "compiling for sm_90")
    for _ in range(20):
        bar.update(1)
    bar.set_postfix_str("1 failed")
    bar.close()
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 10 and all(line.startswith("compiling for sm_90: ") for line in lines)
    assert lines[0].startswith("compiling for sm_90: 2/20 kernels")
    assert lines[-1].startswith("compiling for sm_90: 20/20 kernels")
