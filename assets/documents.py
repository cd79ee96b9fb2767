"""The per-document assets, one per stage, so any stage can be re-run or backfilled on its own.

document_text → page_labels → tables → paragraphs → duckdb_tables (+ blocking quality gate)
→ knowledge_base. Each asset calls one core function and attaches metadata; nothing clever here.
"""

import time

import dagster as dg

from assets.partitions import documents_partitions
from dagster_ocr import pipeline
from dagster_ocr.kb import build_chunks
from dagster_ocr.model import DocStatus, ExtractedDocument, PageLabel, ParagraphResult, Table
from dagster_ocr.quality import blocking_failures, evaluate_document
from resources import DocumentStoreResource, OcrResource, SettingsResource, WarehouseResource

QUALITY_CHECK = "quality_gate"


def _progress(context: dg.AssetExecutionContext, every: int = 25):
    def report(done: int, total: int) -> None:
        if done == total or done % every == 0:
            context.log.info(f"text: {done}/{total} pages")

    return report


@dg.asset(
    partitions_def=documents_partitions,
    group_name="documents",
    kinds={"pymupdf", "ocr"},
    pool="ocr",
    description="Text per page: the PDF text layer where it is sound, OCR where it is not.",
)
def document_text(
    context: dg.AssetExecutionContext,
    store: DocumentStoreResource,
    settings: SettingsResource,
    ocr: OcrResource,
) -> ExtractedDocument:
    source = store.store().get(context.partition_key)
    cfg = settings.load()
    engine = ocr.get_engine(cfg.ocr)
    start = time.perf_counter()
    doc = pipeline.extract_document(source, cfg, engine, progress=_progress(context))
    seconds = time.perf_counter() - start
    if not doc.ok:
        context.log.warning(f"{source.file_name}: {doc.error}")
    n_ocr = sum(1 for p in doc.pages if p.text_source == "ocr")
    confidences = [p.ocr_confidence for p in doc.pages if p.ocr_confidence is not None]
    context.add_output_metadata(
        {
            "file_name": source.file_name,
            "status": str(doc.status),
            "error": doc.error,
            "pages": doc.n_pages,
            "ocr_pages": n_ocr,
            "ocr_share": n_ocr / doc.n_pages if doc.n_pages else 0.0,
            "ocr_confidence": sum(confidences) / len(confidences) if confidences else None,
            "seconds": round(seconds, 3),
            "pages_per_second": round(doc.n_pages / seconds, 2) if seconds else 0.0,
        }
    )
    return doc


@dg.asset(
    partitions_def=documents_partitions,
    group_name="documents",
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
    pool="duckdb_writer",
    check_specs=[
        dg.AssetCheckSpec(
            QUALITY_CHECK,
            asset="duckdb_tables",
            blocking=True,
            description="Blocks the knowledge-base load for a document whose rows fail an ERROR expectation.",
        )
    ],
    description="The document's rows in the DuckDB warehouse, replaced atomically.",
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
    wh = warehouse.warehouse()
    counts = wh.write_document(document_text, page_labels, tables, paragraphs)
    doc_id = document_text.source.doc_id
    results = evaluate_quality(wh, doc_id, settings)
    blocking = blocking_failures(results)
    approved = bool(blocking) and wh.is_approved(doc_id)
    if document_text.status == DocStatus.FAILED:
        status = DocStatus.FAILED
    else:
        status = DocStatus.QUARANTINED if blocking and not approved else DocStatus.PARSED
    wh.record_quality(doc_id, QUALITY_CHECK, [r.as_row() for r in results], status)
    passed = not blocking or approved
    yield dg.MaterializeResult(
        metadata={f"rows_{table}": n for table, n in counts.items()} | {"status": str(status)},
        check_results=[
            dg.AssetCheckResult(
                check_name=QUALITY_CHECK,
                passed=passed,
                severity=dg.AssetCheckSeverity.ERROR,
                description=("approved by hand despite: " if approved else "")
                + "; ".join(f"{r.expectation}={r.observed_value}" for r in blocking)
                if blocking
                else "all passed",
                metadata={
                    **{
                        r.expectation: dg.MetadataValue.json(
                            {
                                "success": r.success,
                                "observed": r.observed_value,
                                "threshold": r.threshold,
                                "severity": r.severity,
                            }
                        )
                        for r in results
                    },
                    "failed": [r.expectation for r in results if not r.success],
                },
            )
        ],
    )


def evaluate_quality(wh, doc_id: str, settings: SettingsResource):
    """Run the expectations on the rows just written (what analysts will read)."""
    sql = "SELECT * FROM {} WHERE doc_id = ?"
    document = wh.query(sql.format("documents"), [doc_id]).iloc[0]
    frames = {t: wh.query(sql.format(t), [doc_id]) for t in ("pages", "paragraphs", "tables", "table_cells")}
    return evaluate_document(
        document,
        frames["pages"],
        frames["paragraphs"],
        frames["tables"],
        frames["table_cells"],
        settings.load().quality,
    )


@dg.asset(
    partitions_def=documents_partitions,
    group_name="warehouse",
    kinds={"duckdb"},
    pool="duckdb_writer",
    deps=[duckdb_tables],
    description="Searchable chunks with citations to printed pages, for documents that passed the gate.",
)
def knowledge_base(
    context: dg.AssetExecutionContext, warehouse: WarehouseResource, settings: SettingsResource
) -> dg.MaterializeResult:
    wh = warehouse.warehouse()
    doc_id = context.partition_key
    sql = "SELECT * FROM {} WHERE doc_id = ?"
    docs = wh.query(sql.format("documents"), [doc_id])
    if docs.empty:
        raise dg.Failure(f"document {doc_id} has no rows in the warehouse: materialize duckdb_tables first")
    doc = docs.iloc[0]
    if doc["status"] != "parsed":
        # the blocking check stops this asset inside a run; this guards a hand-launched load
        wh.delete_kb(doc_id)
        raise dg.Failure(
            description=f"{doc['file_name']} is {doc['status']}: {doc['error']}",
            metadata={"status": doc["status"], "reason": str(doc["error"])},
        )
    frames = {
        t: wh.query(sql.format(t), [doc_id]) for t in ("paragraphs", "sections", "tables", "table_cells")
    }
    pages = wh.query("SELECT page_index, page_label FROM pages WHERE doc_id = ?", [doc_id])
    chunks = build_chunks(
        doc["file_name"],
        frames["paragraphs"],
        frames["sections"],
        frames["tables"],
        frames["table_cells"],
        dict(zip(pages["page_index"], pages["page_label"], strict=False)),
        settings.load().kb,
    )
    n = wh.write_kb(doc_id, chunks)
    return dg.MaterializeResult(metadata={"chunks": n, "file_name": str(doc["file_name"])})


document_assets = [document_text, page_labels, tables, paragraphs, duckdb_tables, knowledge_base]
