#!/usr/bin/env python
"""Run client libraries' own test suites on arrayx and write a summary JSON per client.

Usage::

    python clients/run.py scipy --device cpu                  # one client
    python clients/run.py all --device cuda                   # scikit-learn, scipy, array-api-extra
    python clients/run.py all --output-dir clients/results    # update the committed summaries
    python clients/run.py scipy --namespace array_api_strict  # the reference namespace
    python clients/run.py scikit-learn -- -x -k test_pca      # pytest options after --

Clients: ``scikit-learn`` (its array-API tests and the ``check_array_api_input`` estimator
checks of ``sklearn/tests/test_common.py``), ``scipy`` (its array-API tests, with
``SCIPY_ARRAY_API=1``) and ``array-api-extra`` (its test suite, which ships in the package).
Each runs from its installed package (``pip install -e ".[clients]"``) through
``clients/pytest_plugin.py``, which adds the namespace to the client's own parametrisation and
deselects every test not parametrised with it. The default targets are the client's test files
that use that parametrisation; pytest paths after ``--`` (relative to site-packages, e.g.
``sklearn/decomposition/tests/test_pca.py``) replace them.

Expected failures: ``clients/expected_failures/<client>-<cpu|cuda>.txt``, one
``<test id or prefix>  # reason`` per line (a reason on every line); they run as non-strict
xfails, and an entry that now passes is reported as xpassed. They apply to arrayx only: a run of
``--namespace array_api_strict`` reports every failure.

The summary goes to ``<output dir>/<client>-<cpu|cuda>.json`` (``-<namespace>`` added for a
namespace other than arrayx, ``-host-copy`` with ``--implicit-host-copy``); the default output
dir is ``<temp dir>/arrayx-clients``, so a trial run leaves ``clients/results/`` alone.

On a GPU, ``--device cuda`` runs arrayx on ``cuda:0`` with ``ARRAYX_HOST_FALLBACK=error``.
SciPy's tests marked ``cpu_only`` (no array-API path: SciPy converts to NumPy) are skipped
there, as SciPy does for CuPy, unless ``--implicit-host-copy`` lets ``np.asarray`` copy GPU
arrays to the host (``ARRAYX_IMPLICIT_HOST_COPY=1``).

Exit status: 0 when nothing failed outside the expected-failure list, 1 otherwise, 2 for a
usage or setup error.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import json
import os
import re
import shlex
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent  # <project>/clients
PROJECT_ROOT = HERE.parent
sys.path.insert(0, str(PROJECT_ROOT))

from clients.pytest_plugin import CLIENTS, NAMESPACES, id_matches  # noqa: E402
from conformance._pytest_report import (  # noqa: E402
    ListFileError, RunnerError, counts_line, exit_status, json_report_options, parse_list_file,
    run_pytest, split_pytest_arguments, summarize)

DEVICE_KINDS = ("cpu", "cuda")

#: The package each client installs (its tests ship inside it).
PACKAGES = {"scikit-learn": "sklearn", "scipy": "scipy", "array-api-extra": "array_api_extra"}
# Test files of scikit-learn that parametrise over array namespaces, and of SciPy that use the
# `xp` fixture; array-api-extra's backend-parametrised tests all live in tests/main.
_SCIKIT_LEARN_MARKERS = re.compile(
    r"yield_namespace|_array_api_for_tests|yield_mixed_namespace_input_permutations")
_SCIPY_MARKER = re.compile(r"\bxp\b")
_SCIKIT_LEARN_ESTIMATOR_CHECKS = "sklearn/tests/test_common.py"
# The pytest settings of the client's own repository that its installed tests rely on (the
# package ships no pytest configuration): array-api-extra's test_deprecation expects its
# DeprecationWarning raised as an error.
CLIENT_PYTEST_OPTIONS = {"array-api-extra": ["-W", "error", "-o", "xfail_strict=true"]}


def site_root(client: str) -> Path:
    """The folder holding the client's installed package (the rootdir of its test ids)."""
    package = PACKAGES[client]
    spec = importlib.util.find_spec(package)
    if spec is None or spec.origin is None:
        raise RunnerError(f"{client} is not installed: python3 -m pip install -e '.[clients]'")
    return Path(spec.origin).resolve().parent.parent


def _test_files(root: Path, package: str, marker: re.Pattern) -> list[str]:
    return sorted(str(path.relative_to(root)) for path in (root / package).rglob("test_*.py")
                  if "tests" in path.parts and marker.search(path.read_text(encoding="utf-8")))


def default_targets(client: str, root: Path) -> list[str]:
    if client == "scikit-learn":
        return sorted({*_test_files(root, "sklearn", _SCIKIT_LEARN_MARKERS),
                       _SCIKIT_LEARN_ESTIMATOR_CHECKS})
    if client == "scipy":
        return _test_files(root, "scipy", _SCIPY_MARKER)
    return ["array_api_extra/tests/main"]


def _distribution_version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def versions(client: str, namespace: str) -> dict:
    names = ["arrayx", client, "numpy", "pytest", "array-api-compat"]
    if namespace != "arrayx":
        names.append(namespace.replace("_", "-"))
    return {"python": sys.version.split()[0],
            **{name: _distribution_version(name) for name in dict.fromkeys(names)}}


# --------------------------------------------------------------------------------------------
# one client
# --------------------------------------------------------------------------------------------

def _shown_path(path: Path | None) -> str | None:
    """A path as the summary records it: relative to the project when inside it."""
    if path is None:
        return None
    path = path.resolve()
    return str(path.relative_to(PROJECT_ROOT) if path.is_relative_to(PROJECT_ROOT) else path)


def output_name(client: str, kind: str, namespace: str, host_copy: bool) -> str:
    name = f"{client}-{kind}"
    if namespace != "arrayx":
        name += f"-{namespace}"
    if host_copy:
        name += "-host-copy"
    return name + ".json"


def run_client(client: str, args, extra: list[str], argv: list[str]) -> int:
    kind = args.device.split(":", 1)[0].lower()
    root = site_root(client)
    package = PACKAGES[client]

    expected_path = None
    entries: list[tuple[str, str]] = []
    if args.namespace == "arrayx":
        expected_path = args.expected_failures or HERE / "expected_failures" / f"{client}-{kind}.txt"
        if not expected_path.is_file():
            raise RunnerError(f"expected-failure list {expected_path} not found")
        try:
            entries = parse_list_file(expected_path)
        except ListFileError as error:
            raise RunnerError(str(error)) from error

    chosen = [a for a in extra if a.split("::", 1)[0].startswith(package + "/")]
    targets = [] if chosen else default_targets(client, root)
    output_dir = (args.output_dir or Path(tempfile.gettempdir()) / "arrayx-clients").resolve()
    out_path = output_dir / output_name(client, kind, args.namespace, args.implicit_host_copy)

    env = dict(os.environ)
    env.update(ARRAYX_CLIENT=client, ARRAYX_CLIENT_NAMESPACE=args.namespace,
               ARRAYX_DEVICE=args.device, SCIPY_ARRAY_API="1")
    env.pop("ARRAYX_CLIENT_EXPECTED_FAILURES", None)
    if expected_path is not None:
        env["ARRAYX_CLIENT_EXPECTED_FAILURES"] = str(expected_path.resolve())
    if kind == "cuda":
        env["ARRAYX_HOST_FALLBACK"] = "error"
    env["ARRAYX_IMPLICIT_HOST_COPY"] = "1" if args.implicit_host_copy else "0"
    env["PYTHONPATH"] = os.pathsep.join(
        [str(PROJECT_ROOT)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])

    with tempfile.TemporaryDirectory(prefix="arrayx-clients-") as tmp:
        report_file = Path(tmp) / "report.json"
        # -P: pytest runs from the client's site-packages, which `-m` would put first on
        # sys.path, ahead of PYTHONPATH (where a second NumPy would then lose to the first)
        safe_path = ["-P"] if sys.version_info >= (3, 11) else []
        cmd = [sys.executable, *safe_path, "-m", "pytest", "-p", "clients.pytest_plugin",
               "-p", "no:cacheprovider", "--rootdir", str(root), "-q", "--tb=short",
               *json_report_options(report_file), *CLIENT_PYTEST_OPTIONS.get(client, []),
               *targets, *extra]
        print(f"[clients] {client} {versions(client, args.namespace).get(client)} "
              f"namespace={args.namespace} device={args.device} "
              f"expected failures={len(entries)} -> {out_path}", flush=True)
        shown = cmd if len(targets) + len(extra) <= 12 else [
            *cmd[:len(cmd) - len(targets) - len(extra)], f"<{len(targets) + len(extra)} "
            "targets and options>"]
        print(f"[clients] (cd {root} && {shlex.join(shown)})", flush=True)
        run = run_pytest(cmd, cwd=root, env=env, report_file=report_file,
                         full_report=args.full_report)

    summary = summarize(run.report)
    nodeids = summary.pop("nodeids")
    # Only a run of the default targets can tell that an entry matches nothing any more.
    unmatched = None if extra else [pattern for pattern, _ in entries
                                    if not any(id_matches(n, pattern) for n in nodeids)]
    fixed = [n for n in summary["xpassed"] if any(id_matches(n, p) for p, _ in entries)]
    result = {
        "client": client,
        "namespace": args.namespace,
        "device": args.device,
        "device_kind": kind,
        "implicit_host_copy": args.implicit_host_copy,
        "date": run.started.replace(microsecond=0).isoformat(),
        "duration_s": round(run.duration_s, 1),
        "command": shlex.join(["python", "clients/run.py", *argv]),
        "pytest_exit_code": run.exit_code,
        "versions": versions(client, args.namespace),
        "expected_failures_file": _shown_path(expected_path),
        "expected_failure_entries": len(entries),
        "targets": targets or [a for a in extra if not a.startswith("-")],
        **summary,
        "unexpectedly_passing": fixed,
        "unmatched_expected_failures": unmatched,
    }
    out_path.parent.mkdir(parents=True, exist_ok=True)
    out_path.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")

    counts = summary["counts"]
    print(f"[clients] {client}: {counts_line(counts)} in {run.duration_s:.0f}s -> {out_path}",
          flush=True)
    if fixed:
        print(f"[clients] {len(fixed)} tests of {expected_path} pass now: remove their entries "
              "(unexpectedly_passing in the summary)", flush=True)
    if unmatched:
        print(f"[clients] {len(unmatched)} entries of {expected_path} match no test: "
              + ", ".join(unmatched[:5]), flush=True)
    return exit_status(run.exit_code, counts, "[clients]")


# --------------------------------------------------------------------------------------------
# command line
# --------------------------------------------------------------------------------------------

def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description="Run client libraries' own test suites on arrayx.",
        epilog="Arguments after '--' go to pytest unchanged; pytest paths among them (relative "
               "to site-packages, e.g. sklearn/decomposition/tests/test_pca.py) replace the "
               "default targets.")
    parser.add_argument("clients", nargs="+", choices=[*CLIENTS, "all"],
                        help="client suites to run, one after the other ('all': every one)")
    parser.add_argument("--device", default="cpu",
                        help="arrayx device, exported as ARRAYX_DEVICE (cpu, cuda, cuda:1...; "
                             "default: %(default)s)")
    parser.add_argument("--namespace", default="arrayx", choices=NAMESPACES,
                        help="namespace under test (default: %(default)s; array_api_strict "
                             "is the reference, run without expected failures)")
    parser.add_argument("--implicit-host-copy", action="store_true",
                        help="let np.asarray copy GPU arrays to the host "
                             "(ARRAYX_IMPLICIT_HOST_COPY=1), so SciPy's cpu_only tests run "
                             "on cuda")
    parser.add_argument("--expected-failures", type=Path, default=None,
                        help="override clients/expected_failures/<client>-<kind>.txt (one "
                             "client only)")
    parser.add_argument("--full-report", type=Path, default=None,
                        help="also keep pytest-json-report's whole report (every test's "
                             "outcome and traceback) at this path (one client only)")
    parser.add_argument("--output-dir", type=Path, default=None,
                        help="where the summaries go (default: <temp dir>/arrayx-clients; "
                             "clients/results updates the committed ones)")
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    own, extra = split_pytest_arguments(argv)
    parser = build_parser()
    args = parser.parse_args(own)
    clients = list(CLIENTS) if "all" in args.clients else list(dict.fromkeys(args.clients))
    try:
        kind = args.device.split(":", 1)[0].lower()
        if kind not in DEVICE_KINDS:
            raise RunnerError(f"--device {args.device!r}: the kind must be one of "
                              f"{DEVICE_KINDS}")
        if len(clients) > 1 and (args.expected_failures or args.full_report):
            raise RunnerError("--expected-failures and --full-report take one client")
        if args.implicit_host_copy and kind != "cuda":
            raise RunnerError("--implicit-host-copy only means something on cuda")
        return max(run_client(client, args, extra, argv) for client in clients)
    except RunnerError as error:
        print(f"clients/run.py: error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
