"""The per-document assets, one per stage, so any stage can be re-run or backfilled on its own.

document_text → page_labels → tables → paragraphs → duckdb_tables (+ blocking quality gate)
→ knowledge_base. Each asset calls one core function and attaches metadata; nothing clever here
(the gate's rules live in dagster_ocr.gate).
"""

import time

import dagster as dg

import assets.dagster_warnings  # noqa: F401  # before the asset decorators below
from assets.partitions import (
    DOCUMENT_BACKFILL_POLICY,
    DUCKDB_WRITER_POOL,
    OCR_POOL,
    TRANSIENT_RETRY_POLICY,
    documents_partitions,
)
from dagster_ocr import kb, pipeline
from dagster_ocr.admin.usage import UsageMeter
from dagster_ocr.gate import Approval, SuiteOutcome, judge_document
from dagster_ocr.model import DocStatus, ExtractedDocument, PageLabel, ParagraphResult, Table
from dagster_ocr.progress import TextProgress
from dagster_ocr.quality import SUITE_DESCRIPTIONS, SUITES
from resources import DocumentStoreResource, OcrEngineResource, SettingsResource, WarehouseResource

#: one blocking asset check per expectation suite on ``duckdb_tables`` (see dagster_ocr.quality)
QUALITY_CHECKS: tuple[str, ...] = SUITES


class _TextProgressLog:
    """The text stage's progress in the run's log: every ``every`` pages and at least every
    ``seconds`` (a page of CPU OCR takes seconds), with pages done, the pace and the time left.
    Keeps the last report, whose counts become the output's metadata."""

    def __init__(self, context: dg.AssetExecutionContext, every: int = 25, seconds: float = 10.0):
        self.context = context
        self.every = every
        self.seconds = seconds
        self.last: TextProgress | None = None
        self._logged_at = time.monotonic()

    def __call__(self, progress: TextProgress) -> None:
        self.last = progress
        now = time.monotonic()
        if progress.finished or progress.done % self.every == 0 or now - self._logged_at >= self.seconds:
            self._logged_at = now
            self.context.log.info(f"text: {progress.summary()}")


@dg.asset(
    partitions_def=documents_partitions,
    group_name="documents",
    kinds={"pymupdf", "ocr"},
    pool=OCR_POOL,
    retry_policy=TRANSIENT_RETRY_POLICY,
    backfill_policy=DOCUMENT_BACKFILL_POLICY,
    description="Text per page: the PDF text layer where it is sound, OCR where it is not.",
)
def document_text(
    context: dg.AssetExecutionContext,
    store: DocumentStoreResource,
    settings: SettingsResource,
    ocr: OcrEngineResource,
) -> ExtractedDocument:
    meter = UsageMeter.start()
    source = store.store().get(context.partition_key)
    cfg = settings.load()
    engine = ocr.get_engine(cfg.ocr)
    progress = _TextProgressLog(context)
    start = time.perf_counter()
    doc = pipeline.extract_document(
        source, cfg, engine, progress=progress, checkpoints=store.ocr_checkpoints()
    )
    seconds = time.perf_counter() - start
    if not doc.ok:
        context.log.warning(f"{source.file_name}: {doc.error}")
    last = progress.last
    context.add_output_metadata(
        {
            "file_name": source.file_name,
            "status": str(doc.status),
            "error": doc.error,
            "pages": doc.n_pages,
            **pipeline.text_summary(doc),
            # OCR'd in this run / taken from an earlier run's checkpoint (no OCR work done twice)
            "ocr_pages_read": last.ocr_pages if last else 0,
            "ocr_pages_reused": last.reused_pages if last else 0,
            "seconds": round(seconds, 3),
            "pages_per_second": round(doc.n_pages / seconds, 2) if seconds else 0.0,
            "pages_on_disk": bool(getattr(doc.pages, "on_disk", False)),
            **meter.figures(),
        }
    )
    return doc


@dg.asset(
    partitions_def=documents_partitions,
    group_name="documents",
    backfill_policy=DOCUMENT_BACKFILL_POLICY,
    description="The printed label of every page (/PageLabels, printed numbers, or physical).",
)
def page_labels(
    context: dg.AssetExecutionContext, document_text: ExtractedDocument, settings: SettingsResource
) -> list[PageLabel]:
    labels = pipeline.document_labels(document_text, settings.load())
    sources: dict[str, int] = {}
    for lab in labels:
        sources[str(lab.source)] = sources.get(str(lab.source), 0) + 1
    context.add_output_metadata(
        {
            "labels": ", ".join(lab.label for lab in labels[:12]) + (" …" if len(labels) > 12 else ""),
            **{f"label_source_{k}": v for k, v in sorted(sources.items())},
        }
    )
    return labels


@dg.asset(
    partitions_def=documents_partitions,
    group_name="documents",
    backfill_policy=DOCUMENT_BACKFILL_POLICY,
    description="Tables per page, merged across page breaks where the evidence agrees.",
)
def tables(
    context: dg.AssetExecutionContext, document_text: ExtractedDocument, settings: SettingsResource
) -> list[Table]:
    found = pipeline.document_tables(document_text, settings.load())
    context.add_output_metadata(
        {
            "tables": len(found),
            "tables_merged": sum(1 for t in found if len(t.pages) > 1),
            "cells": sum(len(t.cells) for t in found),
        }
    )
    return found


@dg.asset(
    partitions_def=documents_partitions,
    group_name="documents",
    backfill_policy=DOCUMENT_BACKFILL_POLICY,
    description="Paragraphs and sections, validated, with page furniture removed.",
)
def paragraphs(
    context: dg.AssetExecutionContext,
    document_text: ExtractedDocument,
    page_labels: list[PageLabel],
    tables: list[Table],
    settings: SettingsResource,
) -> ParagraphResult:
    result = pipeline.document_paragraphs(document_text, page_labels, tables, settings.load())
    context.add_output_metadata(
        {
            "paragraphs": len(result.paragraphs),
            "sections": len(result.sections),
            "paragraphs_flagged": sum(1 for p in result.paragraphs if p.flags),
        }
    )
    return result


@dg.asset(
    partitions_def=documents_partitions,
    group_name="warehouse",
    kinds={"duckdb"},
    pool=DUCKDB_WRITER_POOL,
    retry_policy=TRANSIENT_RETRY_POLICY,  # a DuckDB file lock held by another process passes
    backfill_policy=DOCUMENT_BACKFILL_POLICY,
    check_specs=[
        dg.AssetCheckSpec(suite, asset="duckdb_tables", blocking=True, description=SUITE_DESCRIPTIONS[suite])
        for suite in QUALITY_CHECKS
    ],
    description="The document's rows in the DuckDB warehouse, replaced atomically, then judged by the "
    "quality gate (one blocking check per expectation suite).",
)
def duckdb_tables(
    context: dg.AssetExecutionContext,
    document_text: ExtractedDocument,
    page_labels: list[PageLabel],
    tables: list[Table],
    paragraphs: ParagraphResult,
    warehouse: WarehouseResource,
    settings: SettingsResource,
):
    meter = UsageMeter.start()
    wh = warehouse.warehouse()
    cfg = settings.load()
    doc_id = document_text.source.doc_id
    with wh.held():  # one open of the file for the load, the checks, the gate and the snapshot
        counts = wh.write_document(
            document_text, page_labels, tables, paragraphs, settings_json=cfg.model_dump_json()
        )
        decision = judge_document(wh, doc_id, document_text.status, document_text.error, cfg.quality)
        warehouse.publish()
    if decision.status == DocStatus.QUARANTINED:
        context.log.warning(f"{document_text.source.file_name} quarantined: {decision.error}")
    yield dg.MaterializeResult(
        metadata={f"rows_{table}": n for table, n in counts.items()}
        | {"status": str(decision.status), "quality_failures": decision.error or ""}
        | _approval_metadata(decision.approval)
        | meter.figures(),
        check_results=[_check_result(doc_id, suite) for suite in decision.suites],
    )


def _approval_metadata(approval: Approval | None) -> dict[str, str]:
    if approval is None:
        return {}
    return {
        "approved_by": approval.approved_by,
        "approval_reason": approval.reason,
        "approved_at": str(approval.approved_at),
    }


def _check_result(doc_id: str, outcome: SuiteOutcome) -> dg.AssetCheckResult:
    """One suite's outcome as its asset check: every expectation's verdict as metadata."""
    return dg.AssetCheckResult(
        check_name=outcome.suite,
        passed=outcome.passed,
        severity=dg.AssetCheckSeverity.ERROR if outcome.severity == "ERROR" else dg.AssetCheckSeverity.WARN,
        description=outcome.description,
        metadata={
            **{
                r.expectation: dg.MetadataValue.json(
                    {
                        "success": r.success,
                        "observed": r.observed_value,
                        "threshold": r.threshold,
                        "severity": r.severity,
                        "description": r.description,
                    }
                )
                for r in outcome.results
            },
            "failed": dg.MetadataValue.json([r.expectation for r in outcome.failed]),
            "doc_id": doc_id,
            **_approval_metadata(outcome.approval),
        },
    )


@dg.asset(
    partitions_def=documents_partitions,
    group_name="warehouse",
    kinds={"duckdb"},
    pool=DUCKDB_WRITER_POOL,
    retry_policy=TRANSIENT_RETRY_POLICY,
    backfill_policy=DOCUMENT_BACKFILL_POLICY,
    deps=[duckdb_tables],
    description="Searchable chunks with citations to printed pages, for documents that passed the gate.",
)
def knowledge_base(
    context: dg.AssetExecutionContext, warehouse: WarehouseResource, settings: SettingsResource
) -> dg.MaterializeResult:
    meter = UsageMeter.start()
    wh = warehouse.warehouse()
    doc_id = context.partition_key
    with wh.held():  # one open of the file for the reads, the chunks, the vectors and the snapshot
        doc = wh.document(doc_id)
        if doc is None:
            raise dg.Failure(
                f"document {doc_id} has no rows in the warehouse: materialize duckdb_tables first",
                allow_retries=False,
            )
        if doc["status"] != "parsed":
            # the blocking checks stop this asset inside a run; this guards a hand-launched load
            wh.delete_kb(doc_id)
            raise dg.Failure(
                description=f"{doc['file_name']} is {doc['status']}: {doc['error']}",
                metadata={"status": doc["status"], "reason": str(doc["error"])},
                allow_retries=False,
            )
        kb_settings = settings.load().kb
        chunks = kb.load_document(wh, doc_id, kb_settings, embed=False)
        n = len(chunks)
        # vectors for vector/hybrid search; skipped (BM25 still works) when the model is not installed
        vectors = kb.embed_document(wh, doc_id, kb_settings)
        if vectors.get("skipped"):
            context.log.warning(f"{doc['file_name']}: no embeddings, BM25 search only: {vectors['skipped']}")
        warehouse.publish()
    return dg.MaterializeResult(
        metadata={
            "chunks": n,
            "file_name": str(doc["file_name"]),
            "chunks_from_tables": sum(1 for c in chunks if c["source_kind"] == "table"),
            "approved_by_hand": str(doc["error"] or "").startswith("approved by "),
            "chunks_embedded": vectors["embedded"],
            "chunks_embedding_reused": vectors["reused"],
            "embedding_seconds": vectors["seconds"],
            "embedding_skipped": str(vectors.get("skipped") or ""),
            **meter.figures(),
        }
    )


document_assets = [document_text, page_labels, tables, paragraphs, duckdb_tables, knowledge_base]
