"""Progress of the text stage through a document's pages, in words a person can read.

The text stage reports a :class:`TextProgress` after every page: to the callback its caller gave
(the Dagster asset logs it every few pages and every ~10 s) and to every listener registered with
:func:`listen` (the ``dagster-ocr run`` progress bar, which runs the asset graph in its own process
and has no other way to see inside a step). The estimate of the time left counts only pages that
still need work: pages a checkpoint already holds (``checkpoints``) cost next to nothing.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass

log = logging.getLogger(__name__)


@dataclass(slots=True)
class TextProgress:
    """Where the text stage stands in one document."""

    file_name: str
    #: pages read so far, and the document's page count
    done: int
    total: int
    #: seconds since the stage opened the document
    elapsed_s: float = 0.0
    #: pages OCR'd in this run, taken from an earlier run's checkpoint, and found blank (not OCR'd)
    ocr_pages: int = 0
    reused_pages: int = 0
    blank_pages: int = 0
    #: pages a checkpoint held when the stage started (an upper bound on ``reused_pages``)
    checkpointed: int = 0
    #: the last report of the document (its text stage ended, read to the end or not)
    finished: bool = False

    @property
    def pages_per_s(self) -> float:
        return self.done / self.elapsed_s if self.elapsed_s > 0 else 0.0

    @property
    def eta_s(self) -> float | None:
        """Seconds left, from the pace of the pages read so far that a checkpoint did not hold;
        None before any such page was read."""
        if self.finished or self.done >= self.total:
            return 0.0
        worked = self.done - self.reused_pages
        if worked <= 0:
            return None
        still_cached = max(self.checkpointed - self.reused_pages, 0)
        todo = max(self.total - self.done - still_cached, 0)
        return self.elapsed_s / worked * todo

    def summary(self) -> str:
        """One line for a log: ``412/1000 pages (380 OCR'd, 12 blank), 1.30 pages/s, about 7m32s left``."""
        parts = [f"{self.ocr_pages} OCR'd"]
        if self.reused_pages:
            parts.append(f"{self.reused_pages} reused")
        if self.blank_pages:
            parts.append(f"{self.blank_pages} blank")
        line = f"{self.done}/{self.total} pages ({', '.join(parts)}), {self.pages_per_s:.2f} pages/s"
        if self.finished:
            return line + f", {format_seconds(self.elapsed_s)} in all"
        eta = self.eta_s
        return line + (", time left unknown yet" if eta is None else f", about {format_seconds(eta)} left")

    def short(self) -> str:
        """A progress bar's postfix: ``p 412/1000 ETA 7m32s``."""
        eta = self.eta_s
        return f"p {self.done}/{self.total} ETA {format_seconds(eta) if eta is not None else '?'}"


def format_seconds(seconds: float) -> str:
    """``7m32s``, ``1h05m``, ``9s``."""
    s = int(round(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


ProgressListener = Callable[[TextProgress], None]

_listeners: list[ProgressListener] = []
_lock = threading.Lock()


@contextlib.contextmanager
def listen(listener: ProgressListener) -> Iterator[None]:
    """Call ``listener`` with every text-stage progress report in this process while inside."""
    with _lock:
        _listeners.append(listener)
    try:
        yield
    finally:
        with _lock:
            _listeners.remove(listener)


#: checks a long piece of work without pages (embedding a document's chunks) calls between its
#: batches: one raises to stop it (the CLI's graceful stop)
_stop_checks: list[Callable[[], None]] = []


@contextlib.contextmanager
def stoppable(check: Callable[[], None]) -> Iterator[None]:
    """Call ``check`` at every :func:`stop_point` in this process while inside."""
    with _lock:
        _stop_checks.append(check)
    try:
        yield
    finally:
        with _lock:
            _stop_checks.remove(check)


def stop_point() -> None:
    """A point where work that reports no pages may be stopped: each registered check may raise."""
    with _lock:
        checks = list(_stop_checks)
    for check in checks:
        check()


def notify(progress: TextProgress) -> None:
    """Hand a report to every listener (a listener's error is its own: the stage goes on)."""
    with _lock:
        listeners = list(_listeners)
    for listener in listeners:
        try:
            listener(progress)
        except Exception:  # noqa: BLE001 - a broken progress bar must not fail a document
            log.debug("progress listener %r failed", listener, exc_info=True)
