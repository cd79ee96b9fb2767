"""The text stage's time limits for one document: CPU seconds of its work, and a wall-clock backstop.

Why CPU seconds: on a shared or loaded machine a page's wall time stretches with what else runs
(a 40-page scan failed at 38 s a page of wall time while its OCR cost 11 CPU s a page), so a wall
budget fails documents for the machine's sake. CPU seconds measure the document's own work. A
document that stalls (waits on something, computes nothing) spends no CPU, so a wall-clock
backstop ``wall_clock_factor`` times the CPU budget still catches it.

What counts, and how:
- threads: every thread of this process (``time.process_time``, CLOCK_PROCESS_CPUTIME_ID: user +
  system time of the whole process). onnxruntime's intra-op threads, the OCR page thread and MuPDF
  all do the document's work; this process reads one document at a time, so the process clock is
  that document's.
- OCR worker processes (``ocr.workers``): each measures its own process CPU while it reads its
  page ranges and adds it, after every page, to a counter shared with the parent
  (``multiprocessing.Value``); the parent and every worker check the sum. A worker's start
  (interpreter, imports, engine construction) is not counted: it is the same few seconds for a
  document of 20 pages or 2,000, and the parent does not wait on it page by page.
- other child processes are not counted (the text stage starts none).

One imprecision is accepted: a page abandoned after its timeout keeps computing in a background
thread (a thread cannot be killed), and until it ends its CPU is charged to whatever the process
reads next; it is bounded by that one page's cost.
"""

from __future__ import annotations

import time
from typing import Any

from dagster_ocr.errors import OverLimitError


def _secs(seconds: float) -> str:
    """A budget as a reason prints it: ``0.4``, ``600``, ``30000`` (one decimal at most: a budget of
    0.4 s read "0 s" with no decimals)."""
    return f"{round(seconds, 1):g}"


class DocumentBudget:
    """CPU seconds (``cpu_s``) and wall seconds (``wall_s``) one document's text stage may spend.

    ``cpu_before`` is CPU already spent elsewhere on the document (a worker is given the parent's);
    ``shared`` is a ``multiprocessing.Value("d")`` holding the CPU the OCR workers reported;
    ``wall_deadline`` a ``time.monotonic()`` value (the clock is system-wide, so a worker can be
    handed the parent's deadline as seconds left).
    """

    def __init__(
        self,
        cpu_s: float,
        wall_s: float,
        *,
        cpu_before: float = 0.0,
        wall_deadline: float | None = None,
        shared: Any = None,
    ):
        self.cpu_s = cpu_s
        self.wall_s = wall_s
        self.wall_deadline = time.monotonic() + wall_s if wall_deadline is None else wall_deadline
        self.shared = shared
        self._cpu_before = cpu_before
        self._cpu0 = time.process_time()

    def cpu_used(self) -> float:
        """CPU seconds spent on the document so far: this process's since the budget began (not yet
        published), what it was given as spent before, and what the workers reported."""
        own = time.process_time() - self._cpu0
        workers = self.shared.value if self.shared is not None else 0.0
        return self._cpu_before + own + workers

    def cpu_left(self) -> float:
        return self.cpu_s - self.cpu_used()

    def wall_left(self) -> float:
        return self.wall_deadline - time.monotonic()

    def publish(self) -> None:
        """Move this process's CPU so far into the shared counter (a worker, after every page), so
        the parent and the other workers see it."""
        if self.shared is None:
            return
        now = time.process_time()
        spent, self._cpu0 = now - self._cpu0, now
        with self.shared.get_lock():
            self.shared.value += spent

    def exceeded(self) -> str | None:
        """What is spent (the reason's tail), or None while both budgets last."""
        if self.cpu_left() < 0:
            return (
                f"{_secs(self.cpu_s)} CPU s, the larger of max_seconds_per_document and "
                "max_seconds_per_page x pages"
            )
        if self.wall_left() < 0:
            return (
                f"wall-clock backstop {_secs(self.wall_s)} s, wall_clock_factor x the CPU budget: the "
                "document stalled or the machine is overloaded"
            )
        return None

    def check(self, page_number: int, page_count: int) -> None:
        """Raise ``OverLimitError`` naming the page reached when either budget is spent."""
        why = self.exceeded()
        if why is not None:
            raise OverLimitError(f"time limit reached after {page_number} of {page_count} pages ({why})")
