"""OCR of one document's pages, checkpointed page by page, in this process or in several.

``CheckpointedOcr`` is what the text stage calls for a page the router sends to OCR: it takes the
page from the document's checkpoint where an earlier run (or a worker) stored it, else OCRs and
stores it. ``ocr_in_workers`` spreads a long scan's pages over ``ocr.workers`` processes: each
worker opens the file itself, reads its page ranges with the text stage's own page loop (routing,
blank pages and all) and stores every OCR'd page in the checkpoint. The text stage then reads the
document as usual and finds every OCR'd page there, so the join in page order, the resume after a
crash and the reuse after a settings change are the checkpoints' one mechanism, not a second one.

Processes, not threads: onnxruntime and MuPDF each hold the GIL for parts of a page, and MuPDF
objects must not cross threads. Workers are spawned (not forked: the parent may hold threads,
onnxruntime sessions or a Dagster step's state) and each loads its engine once.
"""

from __future__ import annotations

import logging
import math
import multiprocessing
import signal
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pymupdf

from dagster_ocr.budget import DocumentBudget
from dagster_ocr.checkpoints import DocumentCheckpoint
from dagster_ocr.errors import BadInputError, CorruptInputError, EngineError
from dagster_ocr.limits import TimedOcrEngine
from dagster_ocr.model import Page, SourceDocument
from dagster_ocr.ocr.base import OcrEngine, ocr_page
from dagster_ocr.ocr.stats import page_decode_stats
from dagster_ocr.settings import Settings
from dagster_ocr.textlayer import clean_text, iter_pages, open_document

log = logging.getLogger(__name__)

#: a worker is worth its start (~2 s: imports and the model) only with this many pages to OCR
MIN_PAGES_PER_WORKER = 8
#: pages per task: small enough that the pages in flight when a run dies are few, large enough
#: that a task's overhead (opening the file) is noise
MAX_PAGES_PER_TASK = 16


class CheckpointedOcr:
    """``iter_pages``'s OCR callback: a page from the checkpoint where it is there, else OCR'd and
    stored (``saved`` None: nothing stored). Counts what it did (``ocr_pages``, ``reused_pages``)."""

    def __init__(self, engine: TimedOcrEngine, settings: Settings, saved: DocumentCheckpoint | None):
        self.engine = engine
        self.settings = settings.ocr
        self.saved = saved
        self.ocr_pages = 0
        self.reused_pages = 0

    def __call__(self, page: pymupdf.Page, index: int) -> Page:
        if self.saved is not None and (kept := self.saved.get(index)) is not None:
            self.reused_pages += 1
            return kept
        result = ocr_page(self.engine, page, index, self.settings.dpi, settings=self.settings)
        calls = self.engine.take_stats()
        if calls:
            result.decode_stats = page_decode_stats(calls)
        if self.saved is not None:
            self.saved.put(result)
        self.ocr_pages += 1
        return result


def pages_without_text(pdf: pymupdf.Document) -> int:
    """Pages that use no font: a cheap lower bound on the pages the router will send to OCR
    (resources only, no content stream parsed), to decide whether workers are worth starting."""
    if not pdf.is_pdf:
        return pdf.page_count  # an image file: every frame is OCR'd
    return sum(1 for page in pdf if not page.get_fonts())


def plan_tasks(todo: Sequence[int], workers: int) -> list[list[int]]:
    """Consecutive page ranges in page order that shrink toward the end of the document (guided
    self-scheduling): each takes a quarter of a worker's share of the pages not yet planned, at
    most ``MAX_PAGES_PER_TASK`` pages and at least one. Early ranges are long (a task's overhead is
    noise); the last ones are single pages, so no worker sits idle while another finishes a long
    range (with equal ranges one worker idled for up to a whole range at the end: 3 pages of ~10 s
    for a 22-page scan over two workers). The pool takes them in order, so what is done at any
    moment is mostly a prefix of the document."""
    out: list[list[int]] = []
    start = 0
    while start < len(todo):
        size = max(1, min(MAX_PAGES_PER_TASK, math.ceil((len(todo) - start) / (workers * 4))))
        out.append(list(todo[start : start + size]))
        start += size
    return out


@dataclass(slots=True)
class WorkerTotals:
    """What the workers did: pages OCR'd, and page ranges not done (a broken pool)."""

    ocr_pages: int = 0
    tasks_left: int = 0


def ocr_in_workers(
    source: SourceDocument,
    settings: Settings,
    factory: Callable[[], OcrEngine],
    saved: DocumentCheckpoint,
    todo: Sequence[int],
    budget: DocumentBudget,
    on_tick: Callable[[WorkerTotals, int], None] | None = None,
) -> WorkerTotals:
    """OCR pages ``todo`` of ``source`` in ``settings.ocr.workers`` processes, storing each in ``saved``.

    Raises the document's ``BadInputError`` (a page over its time limit, a page MuPDF cannot read)
    and ``EngineError`` as the text stage would. A worker that dies (killed, out of memory) breaks
    the pool: the pages it did not finish are left to the caller, which OCRs them itself, so a dead
    worker costs time, never the document. ``on_tick(totals, pages_done)`` hears every ~2 s.

    ``budget`` is the document's: the workers add the CPU they spend to its shared counter after
    every page and check it (with the parent's CPU so far) before every page, so together they
    stop within a page of it, as one process would; the parent checks it too while it waits.
    """
    workers = settings.ocr.workers
    tasks = plan_tasks(todo, workers)
    totals = WorkerTotals(tasks_left=len(tasks))
    done_pages = 0
    context = multiprocessing.get_context("spawn")
    if budget.shared is None:
        # the workers' CPU meter: handed over at process start (a synchronized value cannot travel
        # with a task), read by the parent's budget from now on
        budget.shared = context.Value("d", 0.0)
    parent_cpu = budget.cpu_used() - budget.shared.value
    pool = ProcessPoolExecutor(
        max_workers=min(workers, len(tasks)),
        mp_context=context,
        initializer=_start_worker,
        initargs=(factory, budget.shared),
    )
    pending: dict[Future[Any], list[int]] = {}
    try:
        for task in tasks:
            limits = (budget.cpu_s, budget.wall_s, parent_cpu, budget.wall_deadline)
            pending[
                pool.submit(_ocr_task, source, settings, saved.doc_dir, saved.fingerprint, task, limits)
            ] = task
        while pending:
            finished, _ = wait(pending, timeout=2.0, return_when=FIRST_COMPLETED)
            budget.check(done_pages, len(todo))  # the workers check it too, before every page
            for future in finished:
                task = pending.pop(future)
                kind, value = future.result()  # BrokenProcessPool: handled below
                if kind == "bad":
                    raise _input_error(*value)
                if kind == "engine":
                    raise EngineError(value)
                totals.ocr_pages += value
                totals.tasks_left -= 1
                done_pages += len(task)
            if on_tick:
                on_tick(totals, done_pages)
    except BrokenProcessPool as exc:
        log.warning(
            "%s: an OCR worker died (%s); the %d page ranges not finished are OCR'd in this process",
            source.file_name,
            exc,
            totals.tasks_left,
        )
    except BaseException as exc:
        if not isinstance(exc, Exception):
            # told to stop (an interrupt, a stop of the run): the page ranges in flight are
            # abandoned, not waited for (minutes of OCR); the pages they finished are checkpointed
            # (each written atomically), so a re-run takes them from there
            _terminate(pool)
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    return totals


def _terminate(pool: ProcessPoolExecutor) -> None:
    """Kill the pool's workers now (``ProcessPoolExecutor.terminate_workers`` from Python 3.14)."""
    for process in list((getattr(pool, "_processes", None) or {}).values()):
        process.terminate()


def _input_error(code: str, message: str) -> BadInputError:
    """The worker's ``BadInputError`` again, of the class its ``code`` names (over_limit, corrupt...)."""
    for cls in (BadInputError, *BadInputError.__subclasses__()):
        if cls.code == code:
            return cls(message)
    return BadInputError(message)


# ---- inside a worker process ---------------------------------------------------------------------

_ENGINE: OcrEngine | None = None
_CPU_SPENT: Any = None  # the document's shared CPU counter (multiprocessing.Value "d")
_OPEN: pymupdf.Document | None = None  # the document, opened by this worker's first task


def _document(source: SourceDocument, settings: Settings) -> pymupdf.Document:
    """The pool serves one document: open it once per worker, not once per page range (opening
    touches every page's size, tens of ms for a thousand pages, and the ranges get short)."""
    global _OPEN
    if _OPEN is None:
        _OPEN = open_document(source, settings.limits)
    return _OPEN


def _start_worker(factory: Callable[[], OcrEngine], cpu_spent: Any) -> None:
    global _ENGINE, _CPU_SPENT
    # a terminal's Ctrl-C reaches the whole process group: the parent decides what stops (and
    # terminates the workers); a KeyboardInterrupt here would come back as a failed page range
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _ENGINE = factory()
    _CPU_SPENT = cpu_spent


def _ocr_task(
    source: SourceDocument,
    settings: Settings,
    doc_dir: Path,
    fingerprint: dict[str, Any],
    indices: list[int],
    limits: tuple[float, float, float, float],
) -> tuple[str, Any]:
    """Read pages ``indices`` as the text stage does, storing every OCR'd one in the checkpoint.

    ``limits``: the document budget's CPU and wall seconds, the parent's CPU spent on the document
    before the workers started, and the wall-clock deadline (``time.monotonic``: CLOCK_MONOTONIC,
    the same clock in every process of the host).

    Returns ("ok", pages OCR'd), or ("bad", (code, message)) / ("engine", message): plain
    values, so that no exception has to survive pickling.
    """
    assert _ENGINE is not None, "worker started without its engine"
    cpu_s, wall_s, parent_cpu, deadline = limits
    budget = DocumentBudget(cpu_s, wall_s, cpu_before=parent_cpu, wall_deadline=deadline, shared=_CPU_SPENT)
    timed = TimedOcrEngine(
        _ENGINE, settings.limits.ocr_page_timeout_s, budget, settings.limits.wall_clock_factor
    )
    reader = CheckpointedOcr(timed, settings, DocumentCheckpoint(doc_dir, fingerprint))
    try:
        pdf = _document(source, settings)
        budget.publish()  # opening the file is the document's work too
        for _page in iter_pages(pdf, settings.text, reader, budget, indices):
            budget.publish()
    except BadInputError as exc:
        return "bad", (exc.code, exc.message)
    except EngineError as exc:
        return "engine", str(exc)
    except Exception as exc:  # noqa: BLE001 - MuPDF raises many types on a page it cannot read
        text = clean_text(str(exc))[:500]
        return "bad", CorruptInputError(
            f"reading pages {indices[0]}-{indices[-1]}: {type(exc).__name__}: {text}"
        ).reason
    finally:
        budget.publish()
        timed.close()
    return "ok", reader.ocr_pages
