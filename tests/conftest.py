"""Shared fixtures (the real-PDF corpus and scratch folders) and the skip summary at the end of a run."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _find_corpus() -> Path | None:
    candidates = [
        os.environ.get("DAGSTER_OCR_CORPUS"),
        REPO.parent / "shared" / "corpus",
        "/work/shared/corpus",
    ]
    for c in candidates:
        if c and (Path(c) / "MANIFEST.json").is_file():
            return Path(c)
    return None


CORPUS = _find_corpus()


@pytest.fixture(scope="session")
def corpus() -> Path:
    """The shared corpus of real PDFs with ground truth (../shared/corpus)."""
    if CORPUS is None:
        pytest.skip("corpus not found: set DAGSTER_OCR_CORPUS to ../shared/corpus")
    return CORPUS


# ---- parallel runs (pytest-xdist: addopts "-n auto --dist loadfile --no-loadscope-reorder") --------


def pytest_xdist_auto_num_workers(config) -> int:
    """``-n auto``: one worker more than the CPUs this process may run on (a container's or
    taskset's CPU set, where xdist's own count is every core of the host); PYTEST_XDIST_AUTO_NUM_WORKERS
    overrides. The extra worker: many tests wait on subprocesses (a daemon's runs, signalled CLI
    runs, lake writers, Chromium), so one worker per CPU left the CPUs idle part of the time: on 2
    cores a quiet clean clone took 10:50 with 2 workers and 9:41 with 3 (BENCHMARKS.md)."""
    env = os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS", "")
    if env.isdigit():
        return int(env)
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return cpus + 1


def pytest_collection_modifyitems(config, items) -> None:
    """On an xdist worker: the modules holding a test marked ``slow`` first (else collection order).

    Workers take whole modules (loadfile: a module's fixtures are built once), so the longest ones
    should start first and the many short ones fill in at the end: xdist's own reordering (most
    tests first) left single-test modules such as the bench smoke test (~2 min) for last, with the
    other worker idle meanwhile. Every worker sorts the same collection the same way; a run
    without xdist keeps the plain collection order."""
    if not hasattr(config, "workerinput"):
        return
    slow = {item.nodeid.split("::")[0] for item in items if item.get_closest_marker("slow")}
    items[:] = sorted(items, key=lambda item: item.nodeid.split("::")[0] not in slow)


# ---- the last lines of a run: which tests skipped, what they need, how to run them ------------------

#: what to do about a skip reason that does not say it itself (matched at the reason's start)
SKIP_HINTS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"needs CUDA"), "run on a machine with an NVIDIA GPU and a CUDA build of torch"),
    (
        re.compile(r"no (local )?PostgreSQL on 127\.0\.0\.1:5432"),
        "start PostgreSQL on 127.0.0.1:5432 with trust auth for user postgres (README, Tests)",
    ),
    (re.compile(r"CREATE EXTENSION vector failed"), "apt-get install -y postgresql-15-pgvector"),
    (re.compile(r"could not import"), "install the pinned dependencies: make test does (requirements.lock)"),
)


def _skip_reason(report: pytest.TestReport | pytest.CollectReport) -> tuple[str, str]:
    """(file of the skipped test or module, reason) as pytest recorded them."""
    path = report.nodeid.split("::")[0]
    longrepr = report.longrepr
    reason = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
    return path, reason.removeprefix("Skipped: ").strip()


def _pytest_command() -> str:
    pytest_bin = Path(sys.executable).parent / "pytest"
    try:
        return str(pytest_bin.relative_to(Path.cwd()))
    except ValueError:
        return str(pytest_bin)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """After pytest's own summary (outermost wrapper: after its short summary too, right above the
    final counts): every skip reason once, with its tests' files, what would let them run, and the
    command that runs them then. Taken from the skips of this run, nothing else."""
    result = yield
    skipped = terminalreporter.stats.get("skipped", [])
    if skipped:
        _summarize_skips(terminalreporter, skipped)
    return result


def _summarize_skips(tr, skipped: list) -> None:
    groups: dict[str, dict[str, int]] = {}  # reason -> {file: tests skipped}
    for report in skipped:
        path, reason = _skip_reason(report)
        files = groups.setdefault(reason, {})
        files[path] = files.get(path, 0) + 1
    tr.section(f"{len(skipped)} skipped: what they need, and how to run them", sep="-")
    for reason, files in sorted(groups.items(), key=lambda g: (-sum(g[1].values()), g[0])):
        hint = next((h for pattern, h in SKIP_HINTS if pattern.match(reason)), None)
        tr.write_line(f"{sum(files.values())} skipped: {', '.join(sorted(files))}: {reason}")
        if hint:
            tr.write_line(f"    to run them: {hint}")
        tr.write_line(f"    then: {_pytest_command()} {' '.join(sorted(files))}")
