"""Limits that protect a run from hostile or absurd inputs and from runaway work, each breach a
recorded reason: the settings (``LimitSettings``), a document's time budget and its Dagster run's
``max_runtime``, and the OCR page timeout (``TimedOcrEngine``). Opening a document within the input
limits is ``textlayer.open_document``; the budget's clock is :mod:`dagster_ocr.budget`.
"""

from __future__ import annotations

import math
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from dagster_ocr.budget import DocumentBudget
from dagster_ocr.errors import OverLimitError


class LimitSettings(BaseModel):
    """Limits that protect a run from hostile or absurd inputs; each breach is a recorded reason."""

    model_config = ConfigDict(extra="forbid")

    max_file_bytes: int = Field(512 * 1024 * 1024, description="Largest input file accepted, in bytes.")
    max_pages: int = Field(5000, description="Most pages a document may have.")
    max_page_area: float = Field(
        200.0 * 200.0 * 72 * 72, description="Largest page area in square points (default: 200x200 inches)."
    )
    max_image_pixels: int = Field(
        100_000_000,
        description="Largest image (pixels) accepted as a document or embedded in a PDF page: a "
        "bigger one is refused before anything decodes it (decompression bombs).",
    )
    max_seconds_per_document: float = Field(
        600.0,
        gt=0,
        description="Smallest budget, in CPU seconds, for reading one document's pages (text layer and "
        "OCR). A document's budget is the larger of this and its page count times max_seconds_per_page, "
        "so length alone never fails a document. CPU seconds, not wall time, so that a loaded machine "
        "does not fail documents: every thread of the text stage's process counts, and so do its OCR "
        "worker processes (ocr.workers), each reporting its own after every page (see "
        "dagster_ocr/budget.py). Checked before every page, so a document overruns its budget by at "
        "most one page (or one OCR timeout).",
    )
    max_seconds_per_page: float = Field(
        30.0,
        gt=0,
        description="Budget per page in CPU seconds, on average over the document: a document of N "
        "pages may spend max(max_seconds_per_document, N x this). The default leaves CPU OCR (1.3-11 "
        "CPU s a page, about twice that for a page read again turned) room to spare; only a document "
        "that runs away runs out.",
    )
    wall_clock_factor: float = Field(
        10.0,
        ge=1.0,
        description="The wall-clock backstop behind each CPU-second limit (the document budget and "
        "ocr_page_timeout_s): a document or page fails once its wall time passes this many times its "
        "CPU limit. It catches a stalled document or page, one that waits and computes nothing (so "
        "spends no CPU), while a machine loaded with other work (measured: 3.5x wall over CPU time "
        "on 2 shared cores) stays well inside it.",
    )
    run_seconds_per_page: float = Field(
        60.0,
        ge=0,
        description="Wall seconds a document's Dagster run may take per page before run monitoring "
        "fails it: the text stage tags its run dagster/max_runtime = max(7200, pages x this) as it "
        "starts, so a 1,000-page scan gets 60,000 s (16.7 h) where deploy/dagster.yaml's fixed "
        "max_runtime_seconds (7200 s) would cut it off after two hours. The default is twice "
        "max_seconds_per_page: about 6x the measured 10 CPU s a dense scanned page costs with one "
        "core. 0 leaves every run at the instance's own limit.",
    )
    pages_in_memory: int = Field(
        256,
        ge=0,
        description="Pages of a document held in memory between stages; a longer document's pages "
        "move to a temporary file and are read back one at a time, so memory stays flat in "
        "document length (see dagster_ocr/pagestore.py).",
    )
    ocr_page_timeout_s: float = Field(
        120.0,
        gt=0,
        description="Most CPU seconds one page's OCR may take (the process's every thread, as for the "
        "document budget), with a wall-clock backstop of wall_clock_factor times this for a page that "
        "hangs without computing. A page that runs over fails the document with an over_limit reason "
        "instead of hanging the run (the pages OCR'd before it are checkpointed, so a re-run resumes "
        "there).",
    )


def document_budget(limits: LimitSettings, n_pages: int) -> float:
    """CPU seconds the text stage may spend on a document of ``n_pages`` pages: the larger of the
    document budget and the per-page budget times the pages."""
    return max(limits.max_seconds_per_document, n_pages * limits.max_seconds_per_page)


#: deploy/dagster.yaml's run_monitoring.max_runtime_seconds: a tagged run never gets less
RUN_MAX_RUNTIME_FLOOR_S = 7200


def run_max_runtime(limits: LimitSettings, n_pages: int) -> int | None:
    """Seconds a document run of ``n_pages`` pages may take (the ``dagster/max_runtime`` run tag),
    or None to leave the instance's limit (``run_seconds_per_page`` 0)."""
    if not limits.run_seconds_per_page:
        return None
    return max(RUN_MAX_RUNTIME_FLOOR_S, math.ceil(n_pages * limits.run_seconds_per_page))


def start_budget(limits: LimitSettings, n_pages: int) -> DocumentBudget:
    """A document's budget, starting now: ``document_budget`` CPU seconds, and the wall-clock
    backstop ``wall_clock_factor`` times as many seconds."""
    cpu = document_budget(limits, n_pages)
    return DocumentBudget(cpu, cpu * limits.wall_clock_factor)


class TimedOcrEngine:
    """An OCR engine wrapper that gives up on a page after ``timeout`` CPU seconds, or after
    ``timeout x wall_factor`` wall seconds (a page that hangs without computing), or when the
    document's ``budget`` runs out, whichever comes first.

    CPU is the process's (``time.process_time``: every thread, onnxruntime's included), measured
    from the page's start: the caller waits on the page and reads no other page meanwhile, so what
    the process spends is that page. Only ``recognize`` (pure numpy in, lines out) runs in the
    worker thread; rendering stays on the caller's thread because MuPDF objects must not cross
    threads. A thread cannot be killed, so a page that times out leaves its worker running to
    completion in the background; the document fails with an over_limit reason and the run moves on.
    """

    #: how often a waiting page's CPU is looked at (seconds): a small share of any real timeout
    poll_s = 0.05

    def __init__(
        self,
        engine: Any,
        timeout: float,
        budget: DocumentBudget | None = None,
        wall_factor: float = 10.0,
    ):
        self.engine = engine
        self.name = engine.name
        self.timeout = timeout
        self.budget = budget
        self.wall_factor = wall_factor
        self._pool: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()

    def document(self, document_type: str | None) -> Any:
        return self.engine.document(document_type)

    def take_stats(self) -> Any:
        return self.engine.take_stats()

    def recognize(self, image: Any) -> Any:
        """The wrapped engine's ``recognize``, bounded by the page timeout and the document budget."""
        cpu_limit, wall_limit = self.timeout, self.timeout * self.wall_factor
        if self.budget is not None:
            cpu_limit = min(cpu_limit, max(self.budget.cpu_left(), 0.0))
            wall_limit = min(wall_limit, max(self.budget.wall_left(), 0.0))
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ocr-page")
            future = self._pool.submit(self.engine.recognize, image)
        cpu0, wall0 = time.process_time(), time.monotonic()
        while True:
            wall = time.monotonic() - wall0
            try:
                return future.result(timeout=max(min(self.poll_s, wall_limit - wall), 0.0))
            except FutureTimeout:
                pass
            cpu, wall = time.process_time() - cpu0, time.monotonic() - wall0
            if future.done():
                continue  # finished just now: its result, not a timeout
            if cpu <= cpu_limit and wall < wall_limit:
                continue
            self.close()  # abandon the stuck worker; a later page gets a fresh one
            if self.budget is not None and self.budget.exceeded() is not None:
                raise OverLimitError(f"time limit reached during a page's OCR ({self.budget.exceeded()})")
            if cpu > cpu_limit:
                what = f"{cpu_limit:.1f} s of CPU time"
            else:
                what = f"{wall_limit:.1f} s of wall-clock time without finishing (stalled)"
            raise OverLimitError(
                f"OCR of a page took longer than {what} (ocr_page_timeout_s, or its wall-clock backstop "
                "wall_clock_factor x that)"
            )

    def close(self) -> None:
        """Release the worker thread without waiting for a page still running."""
        with self._lock:
            if self._pool is not None:
                self._pool.shutdown(wait=False, cancel_futures=True)
                self._pool = None
