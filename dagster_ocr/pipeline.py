"""The stages as plain functions over the document model: what each Dagster asset calls.

Every stage takes the previous stages' outputs and returns its own; none raises on bad input.
A document that cannot be read comes out of ``extract_document`` with status ``failed`` and a
reason, and the later stages pass it through as empty.
"""

from __future__ import annotations

import contextlib
import logging
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pymupdf

from dagster_ocr.checkpoints import DocumentCheckpoint, OcrCheckpoints, ocr_fingerprint
from dagster_ocr.errors import BadInputError, CorruptInputError, EngineError
from dagster_ocr.integrity import ContentCensus
from dagster_ocr.labels import label_pages, pdf_page_labels
from dagster_ocr.limits import TimedOcrEngine, start_budget
from dagster_ocr.model import (
    DocStatus,
    ExtractedDocument,
    PageLabel,
    ParagraphResult,
    SourceDocument,
    Table,
    TextSource,
)
from dagster_ocr.ocr.base import OcrEngine
from dagster_ocr.ocr_workers import (
    MIN_PAGES_PER_WORKER,
    CheckpointedOcr,
    WorkerTotals,
    ocr_in_workers,
    pages_without_text,
)
from dagster_ocr.pagestore import PageList
from dagster_ocr.paragraphs import build_paragraphs
from dagster_ocr.progress import TextProgress
from dagster_ocr.progress import notify as notify_progress
from dagster_ocr.settings import Settings, SettingsSnapshot
from dagster_ocr.tables import extract_tables
from dagster_ocr.textlayer import (
    clean_text,
    iter_pages,
    open_document,
    reopen_document,
)

log = logging.getLogger(__name__)

#: progress callback: called after every page with where the text stage stands
Progress = Callable[[TextProgress], None]


def extract_document(
    source: SourceDocument,
    settings: Settings,
    engine: OcrEngine | None = None,
    progress: Progress | None = None,
    checkpoints: OcrCheckpoints | None = None,
) -> ExtractedDocument:
    """Text per page (text layer, or OCR where the router says so). Bad input → status failed.

    Never raises on the document's account: broken, hostile or over-limit input, a document that
    overruns its time budget (``limits.document_budget`` CPU seconds: the larger of
    ``limits.max_seconds_per_document`` and ``limits.max_seconds_per_page`` per page, with a
    wall-clock backstop ``limits.wall_clock_factor`` times that; see ``dagster_ocr.budget``), or OCR
    that overruns ``limits.ocr_page_timeout_s`` all come back as status ``failed`` with a reason. Only an
    ``EngineError`` (the host's fault, worth a retry) propagates.

    With ``checkpoints`` every OCR'd page is stored as soon as it is read, and a page stored by an
    earlier run under the same OCR configuration (``checkpoints.ocr_fingerprint``) is taken from
    there instead of being OCR'd again: a run that died, timed out or was retried resumes where it
    stopped. ``progress`` (and every ``progress.listen`` listener) hears after every page.

    The result carries ``settings`` (``ExtractedDocument.settings``, a :class:`SettingsSnapshot`):
    the later stages parse the document under the same configuration, whatever was edited since.
    """
    snapshot = SettingsSnapshot.of(settings)
    limits = settings.limits
    started = time.monotonic()
    try:
        pdf = open_document(source, limits)
    except BadInputError as exc:
        log.warning("%s: %s", source.file_name, exc.reason)
        return ExtractedDocument(source=source, status=DocStatus.FAILED, error=exc.reason, settings=snapshot)

    n = pdf.page_count
    budget = start_budget(limits, n)  # length alone never fails a document, nor a loaded machine
    state = TextProgress(file_name=source.file_name, done=0, total=n)

    from_workers = 0  # pages OCR'd by worker processes (the join reads them back from the checkpoint)

    def report(finished: bool = False) -> None:
        state.elapsed_s = time.monotonic() - started
        state.finished = finished
        if reader is not None:
            state.ocr_pages = reader.ocr_pages + from_workers
            state.reused_pages = max(reader.reused_pages - from_workers, 0)
        if progress:
            progress(state)
        notify_progress(state)

    def workers_tick(totals: WorkerTotals, pages_done: int) -> None:
        nonlocal from_workers
        from_workers = totals.ocr_pages
        state.done = state.checkpointed + pages_done
        report()

    reader = None
    timed = None
    saved = None
    factory = None
    scratch = None  # a temporary checkpoint folder for workers when the caller gave none
    if engine is not None:
        timed = TimedOcrEngine(engine, limits.ocr_page_timeout_s, budget, limits.wall_clock_factor)
        engine.take_stats()  # forget what an earlier document left behind
        try:
            factory = engine.worker_factory() if settings.ocr.workers > 1 else None
            if checkpoints is None and factory is not None:
                scratch = Path(tempfile.mkdtemp(prefix="dagster-ocr-pages-"))
                checkpoints = OcrCheckpoints(scratch)
            if checkpoints is not None:
                saved = checkpoints.document(source.doc_id, ocr_fingerprint(engine, settings.ocr))
                state.checkpointed = len(saved.pages())
        except BaseException:
            pdf.close()
            _remove(scratch)
            raise
        reader = CheckpointedOcr(timed, settings, saved)

    pages = PageList(keep=limits.pages_in_memory)
    # engines that tune themselves per kind of document (the speculative engine's K)
    kind = engine.document(settings.ocr.document_type) if engine else contextlib.nullcontext()

    def failed(reason: str) -> ExtractedDocument:
        kept = len(saved.pages()) if saved is not None and scratch is None else 0
        if kept:
            reason += f"; the {kept} OCR'd pages are kept: a re-run resumes"
        log.warning("%s: %s", source.file_name, reason)
        report(finished=True)
        return ExtractedDocument(source=source, status=DocStatus.FAILED, error=reason, settings=snapshot)

    try:
        with pdf, kind:
            title = clean_text((pdf.metadata or {}).get("title") or "")
            pdf_labels = pdf_page_labels(pdf)
            text_layer = ocr_read = 0
            census = ContentCensus(pdf)  # damage and empty pages, for the pages_complete check
            if factory is not None and saved is not None and _worth_workers(pdf, saved, settings):
                stored = saved.pages()
                todo = [i for i in range(n) if i not in stored]
                log.info(
                    "%s: OCR of %d pages in %d processes", source.file_name, len(todo), settings.ocr.workers
                )
                ocr_in_workers(source, settings, factory, saved, todo, budget, workers_tick)
            joined = state.done  # pages the workers covered: the bar does not go back while joining
            state.done = 0
            for page in iter_pages(pdf, settings.text, reader, budget):
                pages.append(page)
                text_layer += page.text_source == TextSource.TEXT_LAYER
                ocr_read += page.text_source == TextSource.OCR
                census.observe(page)
                state.blank_pages += page.blank
                state.done = len(pages)
                if joined < state.done < n:
                    report()
            integrity = census.finish()
    except BadInputError as exc:
        return failed(exc.reason)
    except EngineError:
        report(finished=True)  # the pages OCR'd before it are checkpointed: a retry resumes
        raise
    except Exception as exc:  # noqa: BLE001 - MuPDF raises many types on a page its repair could not save
        return failed(
            CorruptInputError(
                f"reading page {len(pages)}: {type(exc).__name__}: {clean_text(str(exc))[:500]}"
            ).reason
        )
    finally:
        if timed is not None:
            timed.close()
        _remove(scratch)
    if integrity.repaired or integrity.damaged_pages:
        log.warning(
            "%s: %s; %d page(s) without text, %d with a broken content stream",
            source.file_name,
            "MuPDF had to repair the file" if integrity.repaired else "the file is damaged",
            len(integrity.page_content),
            len(integrity.damaged_pages),
        )
    if saved is not None:
        saved.complete()  # this configuration is the document's now: older ones' pages go
    report(finished=True)
    return ExtractedDocument(
        source=source,
        status=DocStatus.PARSED,
        pages=pages,
        title=title,
        n_pages=n,
        pdf_page_labels=pdf_labels,
        text_layer_pages=text_layer,
        ocr_pages=ocr_read,
        repaired=integrity.repaired,
        page_content=integrity.page_content,
        damaged_pages=integrity.damaged_pages,
        blank_reasons=integrity.blank_reasons,
        settings=snapshot,
    )


def _worth_workers(pdf: pymupdf.Document, saved: DocumentCheckpoint, settings: Settings) -> bool:
    """Whether a document has enough pages left to OCR to pay for starting ``ocr.workers`` processes."""
    left = pages_without_text(pdf) - len(saved.pages())
    return left >= settings.ocr.workers * MIN_PAGES_PER_WORKER


def _remove(folder: Path | None) -> None:
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)


def text_summary(doc: ExtractedDocument) -> dict[str, float | int | None]:
    """The text stage's figures for one document (one pass over its pages): OCR pages and share,
    blank pages (not OCR'd), mean OCR confidence, and the speculative decoder's rates where an
    engine counted them."""
    n_ocr = n_blank = 0
    confidences: list[float] = []
    decoded: list[dict] = []
    for p in doc.pages:
        n_ocr += p.text_source == TextSource.OCR
        n_blank += p.blank
        if p.ocr_confidence is not None:
            confidences.append(p.ocr_confidence)
        if p.decode_stats:
            decoded.append(p.decode_stats)
    content = doc.page_content
    out: dict[str, float | int | None] = {
        "repaired": doc.repaired,
        "pages_without_text": len(content),
        # no text, no image, no drawings (the pages_complete check's census)
        "empty_pages": sum(1 for c in content.values() if c == "blank"),
        "damaged_pages": len(doc.damaged_pages),
        "ocr_pages": n_ocr,
        "ocr_share": n_ocr / doc.n_pages if doc.n_pages else 0.0,
        # recognised blank by the text stage and not OCR'd (``Page.blank``; route_reason says why)
        "blank_pages": n_blank,
        "ocr_confidence": sum(confidences) / len(confidences) if confidences else None,
    }
    if decoded:

        def total(key: str) -> float:
            return sum(d.get(key) or 0 for d in decoded)

        drafted, forwards = total("draft_forwards"), total("target_forwards")
        out["speculative_acceptance_rate"] = total("accepted") / drafted if drafted else None
        out["tokens_per_target_forward"] = total("new_tokens") / forwards if forwards else None
    return out


def document_labels(doc: ExtractedDocument, settings: Settings) -> list[PageLabel]:
    """Printed page labels for every page (the PDF's /PageLabels, printed numbers, or physical)."""
    if not doc.ok:
        return []
    return label_pages(doc.pdf_page_labels, doc.pages, settings.labels)


def document_tables(doc: ExtractedDocument, settings: Settings) -> list[Table]:
    """Tables per page, merged across page breaks (on text-layer pages, and ruled tables on OCR'd
    ones: ``tables.scanned``; a document with neither is not opened at all)."""
    if not doc.ok or (doc.text_layer_pages == 0 and not (settings.tables.ocr_pages and doc.ocr_pages != 0)):
        return []
    with reopen_document(doc.source) as pdf:
        return extract_tables(pdf, doc.pages, settings.tables)


def document_paragraphs(
    doc: ExtractedDocument, labels: list[PageLabel], tables: list[Table], settings: Settings
) -> ParagraphResult:
    """Paragraphs and sections, validated, with furniture removed."""
    if not doc.ok:
        return ParagraphResult()
    return build_paragraphs(doc.pages, labels, tables, settings.paragraphs)


@dataclass
class ParsedDocument:
    """Every stage's output for one document (for benchmarks and tests of the core alone)."""

    document: ExtractedDocument
    labels: list[PageLabel] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    paragraphs: ParagraphResult = field(default_factory=ParagraphResult)
    seconds: dict[str, float] = field(default_factory=dict)


def parse(
    source: SourceDocument,
    settings: Settings | None = None,
    engine: OcrEngine | None = None,
    checkpoints: OcrCheckpoints | None = None,
) -> ParsedDocument:
    """All stages in order, timed (the Dagster assets run the same functions one per asset).

    A convenience for benchmarks, tests and scripts: ``settings=None`` parses under the defaults
    (``Settings()``). The pipeline's own callers pass theirs.
    """
    if settings is None:
        settings = Settings()
    t = time.perf_counter()
    out = ParsedDocument(extract_document(source, settings, engine, checkpoints=checkpoints))
    out.seconds["text"] = time.perf_counter() - t
    t = time.perf_counter()
    out.labels = document_labels(out.document, settings)
    out.seconds["labels"] = time.perf_counter() - t
    t = time.perf_counter()
    out.tables = document_tables(out.document, settings)
    out.seconds["tables"] = time.perf_counter() - t
    t = time.perf_counter()
    out.paragraphs = document_paragraphs(out.document, out.labels, out.tables, settings)
    out.seconds["paragraphs"] = time.perf_counter() - t
    return out
