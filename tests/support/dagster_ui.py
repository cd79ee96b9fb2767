"""The Dagster webserver and daemon of `make ui` (docs/ui.md), started for a browser test, stopped after."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BIN = Path(os.environ.get("VIRTUAL_ENV", REPO / ".venv")) / "bin"


def write_workspace(root: Path) -> Path:
    """A workspace.yaml loading this checkout's definitions (``assets.definitions:defs``)."""
    workspace = root / "workspace.yaml"
    workspace.write_text(
        "load_from:\n  - python_module:\n      module_name: assets.definitions\n"
        f"      attribute: defs\n      working_directory: {REPO}\n"
    )
    return workspace


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _stop(proc: subprocess.Popen) -> None:
    """SIGTERM the process group we started (the daemon has children), then SIGKILL if needed."""
    if proc.poll() is not None:
        return
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)


@contextlib.contextmanager
def dagster_ui(root: Path, workspace: Path, env: dict[str, str], start_s: float = 120) -> Iterator[str]:
    """Webserver and daemon on ``workspace`` (logs in ``root``), each in its own process group;
    yields the webserver's base URL once it answers, and stops exactly what it started."""
    procs: list[subprocess.Popen] = []
    try:
        port = _free_port()
        for name, args in (
            ("webserver", [str(BIN / "dagster-webserver"), "-h", "127.0.0.1", "-p", str(port)]),
            ("daemon", [str(BIN / "dagster-daemon"), "run"]),
        ):
            procs.append(
                subprocess.Popen(
                    [*args, "-w", str(workspace)],
                    cwd=root,
                    env=env,
                    stdout=(root / f"{name}.log").open("w"),
                    stderr=subprocess.STDOUT,
                    start_new_session=True,  # its own process group: we stop exactly what we started
                )
            )
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + start_s
        while True:
            try:
                urllib.request.urlopen(base + "/server_info", timeout=2)
                break
            except OSError:
                if time.monotonic() > deadline or procs[0].poll() is not None:
                    pytest.fail("webserver did not start:\n" + (root / "webserver.log").read_text()[-3000:])
                time.sleep(1)
        yield base
    finally:
        for proc in procs:
            _stop(proc)
