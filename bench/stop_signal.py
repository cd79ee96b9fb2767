"""How fast ``dagster-ocr run`` stops when told (issue 35 item 2): start it on an inbox, send a
signal after ``--after`` seconds, time the exit, print what the run said it did and did not do.

    .venv/bin/python bench/stop_signal.py ../shared/reports --after 20 --warehouse /tmp/sig/w.duckdb
    .venv/bin/dagster-ocr run ../shared/reports --warehouse /tmp/sig/w.duckdb   # the resume

Exit 143 (SIGTERM) or 130 (SIGINT) within 10 s is the goal; the resume must re-do only the
documents the stopped run did not finish.
"""

from __future__ import annotations

import argparse
import signal
import subprocess
import sys
import time
from pathlib import Path

BIN = Path(sys.executable).parent


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("inbox", type=Path)
    ap.add_argument("--warehouse", type=Path, required=True)
    ap.add_argument("--after", type=float, default=20.0, help="seconds from the start to the signal")
    ap.add_argument("--signal", choices=("SIGTERM", "SIGINT"), default="SIGTERM")
    args = ap.parse_args()
    cmd = [str(BIN / "dagster-ocr"), "run", str(args.inbox), "--warehouse", str(args.warehouse)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    started = time.monotonic()
    time.sleep(args.after)
    sent = time.monotonic()
    proc.send_signal(getattr(signal, args.signal))
    out, _ = proc.communicate(timeout=600)
    exited = time.monotonic() - sent
    said = [line for line in out.replace("\r", "\n").splitlines() if line.strip() and "%|" not in line]
    print("\n".join(said[-8:]))
    print(f"{args.signal} at {sent - started:.1f} s: exit {proc.returncode} after {exited:.2f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
