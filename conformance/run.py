#!/usr/bin/env python
"""Run the official Array API conformance suite (data-apis/array-api-tests)
against arrayx and write a summary JSON: by default outside the tree, in
``<temp dir>/arrayx-conformance/<kind>.json`` (the path is printed), so a trial
run never overwrites the committed results; ``--output
conformance/results/<kind>.json`` updates them.

Usage::

    ARRAY_API_TESTS_DIR=/path/to/array-api-tests \\
        python conformance/run.py --device cpu [--max-examples 200] [-- extra pytest args]

``ARRAY_API_TESTS_DIR`` must point at a checkout of array-api-tests whose
``array-api`` submodule (the spec) is populated.  The suite needs
``pytest``, ``pytest-json-report``, ``hypothesis`` and ``ndindex``.

Expected failures live in ``conformance/xfails-<kind>.txt`` (kind = ``cpu`` or
``cuda``).  Every non-blank, non-comment line is::

    array_api_tests/test_file.py::test_name[param]  # reason (mandatory)

An entry may also be a whole file (``array_api_tests/test_fft.py``), a test
function without parameters (``...::test_name``) or its parametrized form.  The
suite's own parser does not understand inline comments, so this runner checks
the file, then hands the suite a stripped temporary copy.  An optional
``conformance/skips-<kind>.txt`` in the same format lists tests that must not
be run at all (crashes, hangs).

Other options: ``--module numpy`` tests another namespace (to check the runner
itself; the default summary is then ``<kind>-numpy.json``), ``--no-shrink``
skips Hypothesis shrinking for quick triage runs, ``--full-report PATH`` keeps
pytest-json-report's complete report (tracebacks), ``--output PATH`` writes the
summary there (``conformance/results/<kind>.json`` is the committed one).

Exit status: 0 when nothing failed or errored outside the xfail list,
1 otherwise, 2 for a usage / setup error of the runner itself.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent  # <project>/conformance
PROJECT_ROOT = HERE.parent
sys.path.insert(0, str(PROJECT_ROOT))

from conformance._pytest_report import (  # noqa: E402
    ListFileError, RunnerError, counts_line, exit_status, json_report_options, parse_list_file,
    run_pytest, split_pytest_arguments, summarize)

API_VERSION = "2025.12"
DEVICE_KINDS = ("cpu", "cuda")


# --------------------------------------------------------------------------
# list files (xfails / skips)
# --------------------------------------------------------------------------

def read_list(path: Path) -> list[tuple[str, str]]:
    """The (test id, reason) entries of an xfails or skips file, every id one of the suite's."""
    try:
        entries = parse_list_file(path)
    except ListFileError as error:
        raise RunnerError(str(error)) from None
    foreign = [test_id for test_id, _ in entries if not test_id.startswith("array_api_tests/")]
    if foreign:
        raise RunnerError(f"{path}: test ids must start with 'array_api_tests/': "
                          + ", ".join(map(repr, foreign)))
    return entries


def id_matches(nodeid: str, pattern: str) -> bool:
    """Same matching rules the suite's conftest applies to xfail/skip ids."""
    nodeid = nodeid.removeprefix("array-api-tests/")
    if nodeid == pattern:
        return True
    if nodeid.startswith(pattern.removesuffix("/") + "/"):
        return True
    if pattern.endswith(".py") and nodeid.startswith(pattern):
        return True
    if nodeid.split("::", 2)[0] == pattern:
        return True
    if nodeid.split("[", 2)[0] == pattern:
        return True
    return False


def write_stripped(entries, tmpdir: Path, name: str) -> Path:
    out = tmpdir / name
    out.write_text("".join(f"{tid}\n" for tid, _ in entries), encoding="utf-8")
    return out


# --------------------------------------------------------------------------
# versions / provenance
# --------------------------------------------------------------------------

def _git(path: Path, *args: str) -> str | None:
    """git's answer about the repository rooted at `path`; None when `path` is not one (a copy
    of the suite without its .git must not report the enclosing repository's commit)."""
    if not (path / ".git").exists():
        return None
    try:
        r = subprocess.run(
            ["git", "-C", str(path), *args],
            capture_output=True, text=True, timeout=30,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return r.stdout.strip() if r.returncode == 0 else None


_VERSION_PROBE = r"""
import importlib, json, sys
out = {"python": sys.version.split()[0]}
for name in sys.argv[1:]:
    try:
        mod = importlib.import_module(name)
        out[name] = getattr(mod, "__version__", None) or "unknown"
    except Exception as e:  # not importable: record why
        out[name] = None
        out[name + "_import_error"] = f"{type(e).__name__}: {e}"[:500]
print(json.dumps(out))
"""


def probe_versions(env: dict, module: str) -> dict:
    names = []
    for n in (module.split(".")[0], "arrayx", "numpy", "hypothesis", "pytest", "ndindex"):
        if n not in names:
            names.append(n)
    try:
        r = subprocess.run(
            [sys.executable, "-c", _VERSION_PROBE, *names],
            capture_output=True, text=True, env=env, timeout=300,
        )
        return json.loads(r.stdout.strip().splitlines()[-1])
    except Exception as e:  # noqa: BLE001 - provenance must never kill the run
        return {"python": sys.version.split()[0], "probe_error": repr(e)}


# --------------------------------------------------------------------------
# main
# --------------------------------------------------------------------------

def default_output(kind: str, module: str) -> Path:
    """Where the summary goes without --output: outside the tree, so that trying the suite never
    overwrites the committed conformance/results/."""
    name = f"{kind}.json" if module == "arrayx" else f"{kind}-{module.replace('.', '_')}.json"
    return Path(tempfile.gettempdir()) / "arrayx-conformance" / name


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        description="Run data-apis/array-api-tests against arrayx.",
        epilog="Arguments after '--' are passed to pytest unchanged "
               "(e.g. -- -k test_abs, -- array_api_tests/test_linalg.py).",
    )
    p.add_argument("--device", default="cpu",
                   help="arrayx device, exported as ARRAYX_DEVICE (cpu, cuda, cuda:1, ...)")
    p.add_argument("--max-examples", type=int, default=200,
                   help="Hypothesis max_examples (default: %(default)s)")
    p.add_argument("--module", default="arrayx",
                   help="namespace to test, exported as ARRAY_API_TESTS_MODULE "
                        "(default: arrayx; e.g. numpy to check the runner itself)")
    p.add_argument("--xfails-file", type=Path, default=None,
                   help="override conformance/xfails-<kind>.txt")
    p.add_argument("--output", type=Path, default=None,
                   help="summary JSON path (default: <temp dir>/arrayx-conformance/"
                        "<kind>.json, or <kind>-<module>.json when --module is not arrayx; "
                        "--output conformance/results/<kind>.json updates the committed one)")
    p.add_argument("--no-shrink", action="store_true",
                   help="skip Hypothesis shrinking (fast triage; failing examples are not minimal)")
    p.add_argument("--full-report", type=Path, default=None,
                   help="also keep pytest-json-report's full report at this path")
    return p


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    own, extra = split_pytest_arguments(argv)
    parser = build_parser()
    args = parser.parse_args(own)

    try:
        return _run(args, extra, argv)
    except RunnerError as e:
        print(f"conformance/run.py: error: {e}", file=sys.stderr)
        return 2


def _run(args, extra: list[str], argv: list[str]) -> int:
    kind = args.device.split(":", 1)[0].lower()
    if kind not in DEVICE_KINDS:
        raise RunnerError(f"--device {args.device!r}: kind must be one of {DEVICE_KINDS}")
    if args.max_examples < 1:
        raise RunnerError("--max-examples must be >= 1")

    suite_env = os.environ.get("ARRAY_API_TESTS_DIR")
    if not suite_env:
        raise RunnerError(
            "ARRAY_API_TESTS_DIR is not set; point it at a checkout of "
            "https://github.com/data-apis/array-api-tests (with its array-api submodule)"
        )
    suite = Path(suite_env).expanduser().resolve()
    if not (suite / "array_api_tests").is_dir() or not (suite / "conftest.py").is_file():
        raise RunnerError(f"ARRAY_API_TESTS_DIR={suite} is not an array-api-tests checkout")
    spec_dir = suite / "array-api" / "spec" / API_VERSION
    if not spec_dir.is_dir():
        raise RunnerError(
            f"{spec_dir} not found: the array-api spec submodule is missing or too old "
            f"(run `git submodule update --init` in {suite})"
        )

    xfails_path = args.xfails_file or HERE / f"xfails-{kind}.txt"
    if not xfails_path.is_file():
        raise RunnerError(f"xfails file {xfails_path} not found")
    xfails = read_list(xfails_path)
    skips_path = HERE / f"skips-{kind}.txt"
    skips = read_list(skips_path) if skips_path.is_file() else []

    out_path = args.output if args.output is not None else default_output(kind, args.module)
    out_path = out_path.resolve()
    print(f"[conformance] the summary goes to {out_path}", flush=True)

    env = dict(os.environ)
    env["ARRAY_API_TESTS_MODULE"] = args.module
    env["ARRAY_API_TESTS_VERSION"] = API_VERSION
    env["ARRAYX_DEVICE"] = args.device
    env["PYTHONPATH"] = os.pathsep.join(
        [str(PROJECT_ROOT)]
        + ([str(HERE)] if args.no_shrink else [])
        + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    )

    versions = probe_versions(env, args.module)
    versions["array_api_tests_commit"] = _git(suite, "rev-parse", "HEAD")
    spec_commit = _git(suite / "array-api", "rev-parse", "HEAD")
    pinned = _git(suite, "ls-tree", "HEAD", "array-api")
    pinned = pinned.split()[2] if pinned and len(pinned.split()) >= 3 else None
    versions["array_api_spec_commit"] = spec_commit
    versions["array_api_spec_pinned_commit"] = pinned

    with tempfile.TemporaryDirectory(prefix="arrayx-conformance-") as tmp:
        tmpdir = Path(tmp)
        report_file = tmpdir / "report.json"
        cmd = [
            sys.executable, "-m", "pytest",
            "-p", "no:cacheprovider",
            "--hypothesis-disable-deadline",
            "--max-examples", str(args.max_examples),
            "--xfails-file", str(write_stripped(xfails, tmpdir, "xfails.txt")),
        ]
        if args.no_shrink:
            cmd += ["-p", "_pytest_noshrink"]
        if skips:
            cmd += ["--skips-file", str(write_stripped(skips, tmpdir, "skips.txt"))]
        cmd += json_report_options(report_file)
        # default target is the whole suite unless the caller named paths
        if not any(a.startswith("array_api_tests") for a in extra):
            cmd.append("array_api_tests")
        cmd += extra

        print(f"[conformance] suite: {suite} @ {versions['array_api_tests_commit']}", flush=True)
        print(f"[conformance] module={args.module} device={args.device} "
              f"api={API_VERSION} max_examples={args.max_examples} "
              f"xfails={len(xfails)} skips={len(skips)}", flush=True)
        print(f"[conformance] $ {shlex.join(cmd)}", flush=True)

        run = run_pytest(cmd, cwd=suite, env=env, report_file=report_file,
                         full_report=args.full_report)

    s = summarize(run.report)
    nodeids = s.pop("nodeids")
    stale_xfails = [tid for tid, _ in xfails if not any(id_matches(n, tid) for n in nodeids)]

    summary = {
        "module": args.module,
        "device": args.device,
        "device_kind": kind,
        "api_version": API_VERSION,
        "date": run.started.replace(microsecond=0).isoformat(),
        "duration_s": round(run.duration_s, 1),
        "max_examples": args.max_examples,
        "no_shrink": args.no_shrink,
        "command": shlex.join([sys.executable, str(Path(__file__).resolve()), *argv]),
        "pytest_command": shlex.join(cmd),
        "pytest_exit_code": run.exit_code,
        "versions": versions,
        "xfails_file": str(xfails_path),
        "xfail_entries": len(xfails),
        "skip_entries": len(skips),
        **s,
        # xfail entries that matched no test of this run (only meaningful for a
        # full run: -k / path selection also leaves entries unmatched)
        "unmatched_xfails": stale_xfails,
    }
    out_path.parent.mkdir(parents=True, exist_ok=True)
    out_path.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")

    c = s["counts"]
    print(f"[conformance] {counts_line(c)} in {run.duration_s:.0f}s -> {out_path}", flush=True)
    if s["xpassed"]:
        print(f"[conformance] {len(s['xpassed'])} xpassed (consider removing from "
              f"{xfails_path.name})", flush=True)
    return exit_status(run.exit_code, c, "[conformance]")


if __name__ == "__main__":
    sys.exit(main())
