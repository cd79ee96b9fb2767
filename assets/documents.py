"""The per-document assets, one per stage, so any stage can be re-run or backfilled on its own.

document_text → page_labels → tables → paragraphs → duckdb_tables (+ blocking quality gate)
→ knowledge_base. Each asset calls one core function and attaches metadata; nothing clever here.
"""

import time

import dagster as dg

from assets.partitions import (
    DOCUMENT_BACKFILL_POLICY,
    DUCKDB_WRITER_POOL,
    OCR_POOL,
    TRANSIENT_RETRY_POLICY,
    documents_partitions,
)
from dagster_ocr import kb, pipeline
from dagster_ocr.model import DocStatus, ExtractedDocument, PageLabel, ParagraphResult, Table
from dagster_ocr.ops.usage import UsageMeter
from dagster_ocr.quality import (
    SUITE_DESCRIPTIONS,
    SUITES,
    DocumentFrames,
    ExpectationResult,
    blocking_failures,
    by_suite,
    describe_failures,
    evaluate_document,
)
from dagster_ocr.warehouse import Warehouse
from resources import DocumentStoreResource, OcrEngineResource, SettingsResource, WarehouseResource

#: one blocking asset check per expectation suite on ``duckdb_tables`` (see dagster_ocr.quality)
QUALITY_CHECKS: tuple[str, ...] = SUITES


def _progress(context: dg.AssetExecutionContext, every: int = 25):
    def report(done: int, total: int) -> None:
        if done == total or done % every == 0:
            context.log.info(f"text: {done}/{total} pages")

    return report


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
    start = time.perf_counter()
    doc = pipeline.extract_document(source, cfg, engine, progress=_progress(context))
    seconds = time.perf_counter() - start
    if not doc.ok:
        context.log.warning(f"{source.file_name}: {doc.error}")
    context.add_output_metadata(
        {
            "file_name": source.file_name,
            "status": str(doc.status),
            "error": doc.error,
            "pages": doc.n_pages,
            **pipeline.text_summary(doc),
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
        results = evaluate_quality(wh, doc_id, settings)
        blocking = blocking_failures(results)
        approvals = wh.query(
            "SELECT approved_by, reason, approved_at FROM approvals WHERE doc_id = ? "
            "ORDER BY approved_at DESC",
            [doc_id],
        )
        # an approval lets a document with failed checks in; it cannot make an unreadable file readable
        approval = approvals.iloc[0] if blocking and len(approvals) else None
        if document_text.status == DocStatus.FAILED:
            status, approval = DocStatus.FAILED, None
        elif blocking and approval is None:
            status = DocStatus.QUARANTINED
        else:
            status = DocStatus.PARSED
        error = describe_failures(results) or None
        if status == DocStatus.FAILED:
            error = document_text.error or error
        elif approval is not None:
            error = f"approved by {approval['approved_by']} ({approval['reason']}) despite: {error}"
        wh.record_gate(doc_id, [{**r.as_row(), "check_name": r.suite} for r in results], status, error)
        warehouse.publish()
    if status == DocStatus.QUARANTINED:
        context.log.warning(f"{document_text.source.file_name} quarantined: {error}")

    approval_meta = (
        {
            "approved_by": str(approval["approved_by"]),
            "approval_reason": str(approval["reason"]),
            "approved_at": str(approval["approved_at"]),
        }
        if approval is not None
        else {}
    )
    check_results = []
    for suite, suite_results in by_suite(results).items():
        failed = [r for r in suite_results if not r.success]
        errors = [r for r in failed if r.severity == "ERROR"]
        if not suite_results:
            description = "not evaluated: the document could not be read (see document_parsed)"
        elif errors and approval is not None:
            description = f"approved by hand by {approval['approved_by']}: " + describe_failures(errors)
        elif failed:
            description = "; ".join(f"{r.expectation}: observed {r.observed_value}" for r in failed)
        else:
            description = "all expectations met"
        check_results.append(
            dg.AssetCheckResult(
                check_name=suite,
                # an approved ERROR failure passes (and says who approved it); WARN failures fail
                # the check at WARN severity, which never blocks the knowledge base
                passed=not failed or (bool(errors) and approval is not None),
                severity=dg.AssetCheckSeverity.ERROR if errors else dg.AssetCheckSeverity.WARN,
                description=description,
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
                        for r in suite_results
                    },
                    "failed": dg.MetadataValue.json([r.expectation for r in failed]),
                    "doc_id": doc_id,
                    **(approval_meta if errors else {}),
                },
            )
        )
    yield dg.MaterializeResult(
        metadata={f"rows_{table}": n for table, n in counts.items()}
        | {"status": str(status), "quality_failures": error or ""}
        | approval_meta
        | meter.figures(),
        check_results=check_results,
    )


def evaluate_quality(wh: Warehouse, doc_id: str, settings: SettingsResource) -> list[ExpectationResult]:
    """Run the expectation suites on the rows just written (what analysts will read)."""
    frames = wh.document_frames(doc_id, ("documents", "pages", "paragraphs", "tables", "table_cells"))
    document = frames["documents"].iloc[0].to_dict()
    ocr_lines = wh.query(
        "SELECT l.confidence FROM lines l JOIN pages p USING (doc_id, page_index) "
        "WHERE l.doc_id = ? AND p.text_source = 'ocr'",
        [doc_id],
    )
    return evaluate_document(
        DocumentFrames(
            document,
            frames["pages"],
            frames["paragraphs"],
            frames["tables"],
            frames["table_cells"],
            ocr_lines,
        ),
        settings.load().quality,
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
        sql = "SELECT * FROM {} WHERE doc_id = ?"
        docs = wh.query(sql.format("documents"), [doc_id])
        if docs.empty:
            raise dg.Failure(
                f"document {doc_id} has no rows in the warehouse: materialize duckdb_tables first",
                allow_retries=False,
            )
        doc = docs.iloc[0]
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
