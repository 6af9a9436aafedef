"""What the project's two runners of other projects' pytest suites share: ``conformance/run.py``
(array-api-tests) and ``clients/run.py`` (client libraries' own suites, with its pytest plugin).
Each reads lists of test ids with reasons (expected failures, skips), runs pytest in a
subprocess with pytest-json-report and boils the report down to the summary JSON it writes;
they import this module as ``conformance._pytest_report`` with the project root on
``sys.path``."""

from __future__ import annotations

import dataclasses
import datetime as _dt
import json
import re
import subprocess
import sys
import time
from pathlib import Path

#: The longest failure message a summary keeps per test (whitespace folded).
MESSAGE_MAX = 300
_OUTCOMES = ("passed", "failed", "xfailed", "xpassed", "skipped", "errors")


# "<id>  # <reason>": the id runs up to the first '#' that follows whitespace.
_ENTRY_RE = re.compile(r"^(?P<id>\S.*?)\s+#\s*(?P<reason>\S.*?)\s*$")


class ListFileError(ValueError):
    """A list of test ids with an entry a runner cannot use."""


def parse_list_file(path: Path) -> list[tuple[str, str]]:
    """The ``(test id or prefix, reason)`` entries of a list of tests, in file order: one
    ``<test id>  # <reason>`` a line, a reason on every one, no id twice; blank lines and lines
    starting with '#' are comments."""
    entries: list[tuple[str, str]] = []
    problems: list[str] = []
    seen: dict[str, int] = {}
    for lineno, raw in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        match = _ENTRY_RE.match(line)
        if match is None:
            problems.append(f"{path}:{lineno}: entry without a reason "
                            f"(expected '<test id>  # <reason>'): {line!r}")
            continue
        test_id = match.group("id")
        if test_id in seen:
            problems.append(f"{path}:{lineno}: duplicate of line {seen[test_id]}: {test_id!r}")
            continue
        seen[test_id] = lineno
        entries.append((test_id, match.group("reason")))
    if problems:
        raise ListFileError("\n".join(problems))
    return entries


class RunnerError(Exception):
    """A problem with a runner's inputs or setup (not a test failure): exit status 2."""


def split_pytest_arguments(argv: list[str]) -> tuple[list[str], list[str]]:
    """The runner's own arguments, and those after ``--``, which go to pytest unchanged."""
    if "--" not in argv:
        return argv, []
    split = argv.index("--")
    return argv[:split], argv[split + 1:]


def json_report_options(report_file: Path) -> list[str]:
    """pytest-json-report's options for a compact report at `report_file` (outcomes, crash
    messages and tracebacks; no keywords, captured streams, logs or warnings)."""
    return ["--json-report", f"--json-report-file={report_file}",
            "--json-report-omit", "keywords", "streams", "log", "warnings",
            "--json-report-indent=0"]


@dataclasses.dataclass(frozen=True)
class PytestRun:
    exit_code: int
    report: dict
    started: _dt.datetime  # UTC
    duration_s: float


def run_pytest(command: list[str], *, cwd: Path, env: dict, report_file: Path,
               full_report: Path | None = None) -> PytestRun:
    """Run `command` (which writes its JSON report to `report_file`: `json_report_options`) and
    read the report; a copy goes to `full_report` when given."""
    started = _dt.datetime.now(_dt.timezone.utc)
    t0 = time.monotonic()
    exit_code = subprocess.run(command, cwd=cwd, env=env).returncode
    duration_s = time.monotonic() - t0
    if not report_file.is_file():
        raise RunnerError(f"pytest exited with {exit_code} and wrote no JSON report")
    report = json.loads(report_file.read_text(encoding="utf-8"))
    if full_report is not None:
        full_report.parent.mkdir(parents=True, exist_ok=True)
        full_report.write_text(json.dumps(report), encoding="utf-8")
    return PytestRun(exit_code, report, started, duration_s)


def _folded(message) -> str:
    return " ".join(str(message).split())[:MESSAGE_MAX]


def _failure_message(test: dict) -> str:
    for phase in ("setup", "call", "teardown"):
        info = test.get(phase) or {}
        if info.get("outcome") in ("failed", "error") or "crash" in info:
            crash = info.get("crash") or {}
            return _folded(crash.get("message") or info.get("longrepr") or "")
    return ""


def summarize(report: dict) -> dict:
    """The counts of each outcome, the ids of the failed, erroring (collection errors included)
    and xpassed tests, each failure's message, and every test id run (``nodeids``)."""
    counts = dict.fromkeys(_OUTCOMES, 0)
    listed: dict[str, list[str]] = {"failed": [], "errors": [], "xpassed": []}
    messages: dict[str, str] = {}
    tests = report.get("tests", [])
    for test in tests:
        outcome, nodeid = test.get("outcome"), test["nodeid"]
        if outcome == "error":
            outcome = "errors"
        if outcome not in counts:
            continue
        counts[outcome] += 1
        if outcome in listed:
            listed[outcome].append(nodeid)
        if outcome in ("failed", "errors"):
            messages[nodeid] = _failure_message(test)
    for collector in report.get("collectors", []) or []:
        if collector.get("outcome") == "failed":
            nodeid = collector.get("nodeid") or "<collection>"
            counts["errors"] += 1
            listed["errors"].append(nodeid)
            messages[nodeid] = _folded(collector.get("longrepr", ""))
    counts["deselected"] = report.get("summary", {}).get("deselected", 0)
    counts["total"] = len(tests)
    return {"counts": counts, **{name: sorted(ids) for name, ids in listed.items()},
            "failure_messages": dict(sorted(messages.items())),
            "nodeids": [test["nodeid"] for test in tests]}


def counts_line(counts: dict) -> str:
    return " ".join(f"{outcome}={counts[outcome]}" for outcome in
                    ("passed", "failed", "errors", "xfailed", "xpassed", "skipped"))


def exit_status(exit_code: int, counts: dict, log_prefix: str) -> int:
    """0 when pytest ran to its end and nothing failed or errored outside the expected
    failures, 1 otherwise."""
    if exit_code not in (0, 1):
        print(f"{log_prefix} pytest exit code {exit_code} (interrupted, internal or usage "
              "error, or no test collected)", file=sys.stderr, flush=True)
        return 1
    return 0 if counts["failed"] == 0 and counts["errors"] == 0 else 1
