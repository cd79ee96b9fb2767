"""The per-document assets, one per stage, so any stage can be re-run or backfilled on its own.

source_documents (ingestion, external) → document_text → page_labels → tables → paragraphs →
duckdb_tables (+ the quality checks) → quality_gate (the verdict) → knowledge_base → kb_vectors
(assets/vectors.py). Each asset
calls one core function and attaches metadata; nothing clever here (the gate's rules live in
dagster_ocr.gate).

Settings: ``document_text`` resolves them once per document (the ``settings`` resource) and its
output carries them (``ExtractedDocument.settings``, with their hash); every later stage parses the
document under that snapshot, never the settings file as it is by then, and the warehouse records
it on the document's row (assets/document_settings.py). The knowledge base and its vectors start
from the warehouse and read the snapshot it recorded. One deliberate exception reads the resource:
the quality gate's thresholds (re-judging under new ones without re-parsing is what
``reload_warehouse`` and ``dagster-ocr recheck`` are for).
"""

import time
import urllib.parse
from collections.abc import Callable

import dagster as dg

import assets.dagster_warnings  # noqa: F401  # before the asset decorators below
from assets.document_settings import parsed_under, recorded_settings
from assets.file_sightings import record_queued_sightings
from assets.gate_metadata import check_result, gate_figures, outcome_tag, short_reason
from assets.partitions import (
    DOCUMENT_BACKFILL_POLICY,
    DUCKDB_WRITER_POOL,
    HELD_BACK_TAG,
    OCR_POOL,
    OUTCOME_TAG,
    OWNERS,
    TRANSIENT_RETRY_POLICY,
    documents_partitions,
    resolve_document,
    tag_run,
    tag_value,
)
from assets.schema_metadata import schema_metadata
from assets.stopping import stop_not_retry
from assets.vectors import kb_vectors_asset
from dagster_ocr import kb, kb_vectors, pipeline, preview, thumbnails
from dagster_ocr.admin.usage import UsageMeter
from dagster_ocr.gate import Approval, load_and_judge
from dagster_ocr.model import DocStatus, ExtractedDocument, PageLabel, ParagraphResult, SourceDocument, Table
from dagster_ocr.progress import TextProgress
from dagster_ocr.quality import SUITE_DESCRIPTIONS, SUITES
from dagster_ocr.textlayer import run_max_runtime
from dagster_ocr.warehouse import CONTENT_TABLES
from resources import DocumentStoreResource, OcrEngineResource, SettingsResource, WarehouseResource

#: Dagster's run-monitoring limit for one run, in seconds (overrides run_monitoring.max_runtime_seconds)
MAX_RUNTIME_TAG = dg.MAX_RUNTIME_SECONDS_TAG

#: one blocking asset check per expectation suite on ``duckdb_tables`` (see dagster_ocr.quality)
QUALITY_CHECKS: tuple[str, ...] = SUITES

#: the warehouse tables each DuckDB asset writes (their columns are the asset's column schema)
DUCKDB_TABLES = ("documents", *CONTENT_TABLES, "quality_results", "document_partitions")
KB_TABLES = ("kb_chunks",)  # kb_embeddings: kb_vectors' (assets/vectors.py)
#: knowledge_base's check: was the document let in (the gate's verdict, on the knowledge base)
ADMITTED_CHECK = "document_admitted"


class _TextProgressLog:
    """The text stage's progress in the run's log: every ``seconds`` and when the stage ends, with
    pages done, the pace and the time left. Keeps the last report, whose counts become the
    output's metadata.

    By time, not by pages: a line every 25 pages was five lines in a second for a 130-page text
    layer (each a Dagster event: a write to the event log, ~6 CPU ms and ~18 ms of wall on a SQLite
    instance) saying what the closing line says; a page of CPU OCR takes seconds, so a scan still
    logs every ``seconds``."""

    def __init__(
        self,
        context: dg.AssetExecutionContext,
        seconds: float = 10.0,
        on_open: Callable[[int], None] | None = None,
    ):
        self.context = context
        self.seconds = seconds
        self.on_open = on_open  # called once with the page count, at the first report (after page 1)
        self.last: TextProgress | None = None
        self._logged_at = time.monotonic()

    def __call__(self, progress: TextProgress) -> None:
        if self.last is None and self.on_open is not None:
            self.on_open(progress.total)
        self.last = progress
        now = time.monotonic()
        if progress.finished or now - self._logged_at >= self.seconds:
            self._logged_at = now
            self.context.log.info(f"text: {progress.summary()}")


#: the inbox's documents as registered (the ingestion the sensor and the nightly sweep do): an
#: external asset, not built by a run, so the graph starts where a document does
SOURCE_DOCUMENTS = "source_documents"


def registration(rec: SourceDocument, partition: str, by: str) -> dg.AssetMaterialization:
    """Ingestion in the asset graph: the ``source_documents`` materialization of one registered
    document (by the inbox sensor, the schedule, or a batch run as the document's turn comes)."""
    return dg.AssetMaterialization(
        asset_key=SOURCE_DOCUMENTS,
        partition=partition,
        metadata={
            "file_name": rec.file_name,
            "doc_id": rec.doc_id,
            "source_path": rec.source_path,
            "size_bytes": rec.size_bytes,
            "kind": str(rec.kind),
            "registered_by": by,
        },
    )


#: the gate's verdict on each document (parsed / quarantined / failed), what knowledge_base and the
#: reviewers' quarantine list read; a second output of the duckdb_tables step (one commit)
QUALITY_GATE = "quality_gate"

source_documents = dg.AssetSpec(
    SOURCE_DOCUMENTS,
    partitions_def=documents_partitions,
    # a group of its own: an external asset in "documents" turned that group's "Materialize all…"
    # (the backfill users launch from the UI) into a choice among assets it cannot build
    group_name="ingestion",
    kinds={"pdf", "file"},
    owners=OWNERS,
    description="Ingestion: the documents found in the inbox, one partition per distinct content, kept "
    "in the store under their sha256 (duplicates are one document; every file is in `files`). "
    "inbox_sensor and nightly_ingestion record a materialization per new document (file name, size, "
    "doc_id); `dagster-ocr run` and partitions added by hand register documents without one. Not built "
    "by a run, so it has no Materialize button.",
)


@dg.asset(
    partitions_def=documents_partitions,
    group_name="documents",
    deps=[source_documents],  # ingestion: the kept copy the stage reads (store.get)
    kinds={"pymupdf", "ocr"},
    owners=OWNERS,
    pool=OCR_POOL,
    retry_policy=TRANSIENT_RETRY_POLICY,
    backfill_policy=DOCUMENT_BACKFILL_POLICY,
    description="Text per page: the PDF text layer where it is sound, OCR where it is not.",
)
@stop_not_retry  # an interrupt ends the run: not retried
def document_text(
    context: dg.AssetExecutionContext,
    store: DocumentStoreResource,
    settings: SettingsResource,
    ocr: OcrEngineResource,
) -> ExtractedDocument:
    meter = UsageMeter.start()
    doc_id = resolve_document(context, store.store())  # a key typed by hand fails here, unretried
    source = store.store().get(doc_id)
    tag_run(context, doc_id, source.file_name)
    cfg = settings.load()  # the one read of the settings for this document: its output carries them

    def limit_run(n_pages: int) -> None:
        # run monitoring's limit grows with the document: a thousand-page scan is not cut off at
        # the instance's fixed max_runtime (the daemon re-reads the run's tags on every check);
        # tagged from the text stage's own first report, which knows the page count
        max_runtime = run_max_runtime(cfg.limits, n_pages)
        if max_runtime:
            tag_run(context, doc_id, source.file_name, **{MAX_RUNTIME_TAG: str(max_runtime)})

    engine = ocr.get_engine(cfg.ocr)
    progress = _TextProgressLog(context, on_open=limit_run)
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
            "doc_id": doc_id,
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
            # the settings every later stage parses the document under (documents.settings_hash)
            "settings_hash": doc.settings.hash if doc.settings else "",
            **meter.figures(),
        }
    )
    return doc


@dg.asset(
    partitions_def=documents_partitions,
    group_name="documents",
    kinds={"python", "pdf"},
    owners=OWNERS,
    backfill_policy=DOCUMENT_BACKFILL_POLICY,
    description="The printed label of every page (/PageLabels, printed numbers, or physical).",
)
def page_labels(context: dg.AssetExecutionContext, document_text: ExtractedDocument) -> list[PageLabel]:
    tag_run(context, document_text.source.doc_id, document_text.source.file_name)
    labels = pipeline.document_labels(document_text, parsed_under(document_text))
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
    kinds={"python", "table"},
    owners=OWNERS,
    backfill_policy=DOCUMENT_BACKFILL_POLICY,
    description="Tables per page, merged across page breaks where the evidence agrees.",
)
def tables(context: dg.AssetExecutionContext, document_text: ExtractedDocument) -> list[Table]:
    tag_run(context, document_text.source.doc_id, document_text.source.file_name)
    found = pipeline.document_tables(document_text, parsed_under(document_text))
    context.add_output_metadata(
        {
            "tables": len(found),
            "tables_merged": sum(1 for t in found if len(t.pages) > 1),
            "cells": sum(len(t.cells) for t in found),
            # the first rows of each table (pages by physical number: labels come later)
            "preview": dg.MetadataValue.md(preview.tables_markdown(found, [])),
        }
    )
    return found


@dg.asset(
    partitions_def=documents_partitions,
    group_name="documents",
    kinds={"python", "text"},
    owners=OWNERS,
    backfill_policy=DOCUMENT_BACKFILL_POLICY,
    description="Paragraphs and sections, validated, with page furniture removed. Its `page_previews` "
    "show the first pages (and the first page of each table) with every table, heading, paragraph and "
    "furniture box drawn, and whether the page was OCR'd or read from its text layer.",
)
def paragraphs(
    context: dg.AssetExecutionContext,
    document_text: ExtractedDocument,
    page_labels: list[PageLabel],
    tables: list[Table],
) -> ParagraphResult:
    tag_run(context, document_text.source.doc_id, document_text.source.file_name)
    cfg = parsed_under(document_text)
    result = pipeline.document_paragraphs(document_text, page_labels, tables, cfg)
    # the first pages with the tables, headings and paragraphs found drawn on them (inline JPEGs,
    # ~12 KB each at most): the stage that places the boxes is the one whose output they judge
    try:
        thumbs = thumbnails.page_thumbnails(
            document_text, page_labels, tables, result, cfg.limits, cfg.preview
        )
    except Exception as exc:  # noqa: BLE001 - a preview is for people: it never costs the stage its output
        context.log.warning(f"{document_text.source.file_name}: no page previews: {exc!r}")
        thumbs = []
    context.add_output_metadata(
        {
            "paragraphs": len(result.paragraphs),
            "sections": len(result.sections),
            "paragraphs_flagged": sum(1 for p in result.paragraphs if p.flags),
            "preview": dg.MetadataValue.md(preview.sections_markdown(result)),
            "page_previews": dg.MetadataValue.md(
                thumbnails.thumbnails_markdown(thumbs, document_text.n_pages)
            ),
            "page_preview_bytes": sum(len(t.jpeg) for t in thumbs),
        }
    )
    return result


@dg.multi_asset(
    name="duckdb_tables",  # the step key stays the warehouse stage's (assets/stopping.py, run retries)
    specs=[
        dg.AssetSpec(
            "duckdb_tables",
            partitions_def=documents_partitions,
            group_name="warehouse",
            kinds={"duckdb"},
            owners=OWNERS,
            deps=["document_text", "page_labels", "tables", "paragraphs"],
            metadata=schema_metadata(DUCKDB_TABLES),
            description="The document's rows in the DuckDB warehouse, replaced atomically, then judged by "
            "the quality gate (one check per expectation suite; a failed ERROR expectation quarantines "
            "the document: it stays out of the knowledge base, and the `quarantine` asset lists it with "
            "why).",
        ),
        dg.AssetSpec(
            QUALITY_GATE,
            partitions_def=documents_partitions,
            group_name="warehouse",
            kinds={"duckdb"},
            owners=OWNERS,
            deps=["duckdb_tables"],
            description="The quality gate's verdict on the document: parsed (let into the knowledge "
            "base), quarantined or failed (held back, with why), from the expectation suites checked on "
            "duckdb_tables. Decided in the same step and commit as the load; every partition is "
            "materialized, whatever the verdict, with `status` and `held_back_because`.",
        ),
    ],
    can_subset=True,
    pool=DUCKDB_WRITER_POOL,
    retry_policy=TRANSIENT_RETRY_POLICY,  # a DuckDB file lock held by another process passes
    backfill_policy=DOCUMENT_BACKFILL_POLICY,
    check_specs=[
        # not ``blocking``: a quarantined document is an outcome, not an incident (a red run, an
        # alert). knowledge_base reads the gate's verdict from the warehouse and loads only parsed
        # documents, in this run or any later one; the checks show the verdict (WARN severity)
        dg.AssetCheckSpec(
            suite,
            asset="duckdb_tables",
            # one verdict per document: the UI shows each result's partition, and a check's
            # status per partition instead of whatever the last document got
            partitions_def=documents_partitions,
            description=SUITE_DESCRIPTIONS[suite],
            metadata={"owners": ", ".join(OWNERS)},
        )
        for suite in QUALITY_CHECKS
    ],
)
@stop_not_retry  # an interrupt ends the run: not retried
def duckdb_tables(
    context: dg.AssetExecutionContext,
    document_text: ExtractedDocument,
    page_labels: list[PageLabel],
    tables: list[Table],
    paragraphs: ParagraphResult,
    warehouse: WarehouseResource,
    settings: SettingsResource,
    store: DocumentStoreResource,
):
    meter = UsageMeter.start()
    wh = warehouse.warehouse()
    # the rows are the snapshot's (document_text carries it, and the load records it); the gate's
    # thresholds are those in force, so a recheck re-judges under new ones without re-parsing
    parsed_under(document_text)
    quality = settings.load().quality
    source = document_text.source
    doc_id = source.doc_id
    with wh.held():  # one open of the file for the load, the checks, the gate and the snapshot
        _record_sightings(context, wh, store)
        # the rows, the partition key and the gate's verdict: one commit (one snapshot on a lake)
        counts, decision = load_and_judge(
            wh,
            document_text,
            page_labels,
            tables,
            paragraphs,
            partition_key=context.partition_key,
            quality_settings=quality,
        )
        warehouse.publish()
    outcome = {OUTCOME_TAG: outcome_tag(decision.status)}
    if decision.status != DocStatus.PARSED:  # the reason on the run's row: no need to open the run
        outcome[HELD_BACK_TAG] = tag_value(short_reason(decision.error) or str(decision.status))
    tag_run(context, doc_id, source.file_name, **outcome)
    if decision.status != DocStatus.PARSED:
        # an outcome, logged as one: the run stays green and no alert fires (see check_specs)
        context.log.info(f"{source.file_name} {decision.status}: {decision.error}")
    summary = preview.document_summary(
        document_text, page_labels, tables, paragraphs, str(decision.status), decision.error
    )
    selected = context.selected_asset_keys
    checks = [check_result(doc_id, source.file_name, decision, suite) for suite in decision.suites]
    selected_checks = {k.name for k in context.selected_asset_check_keys}
    verdict = {"file_name": source.file_name, "doc_id": doc_id, "status": str(decision.status)} | (
        {"held_back_because": decision.error or ""} if decision.status != DocStatus.PARSED else {}
    )
    if dg.AssetKey("duckdb_tables") in selected:  # first: the gate depends on it
        yield dg.MaterializeResult(
            asset_key="duckdb_tables",
            metadata=verdict
            | {"summary": dg.MetadataValue.md(summary)}
            # the page previews live on the stage that drew the boxes; a link from here (a path on the
            # webserver that shows this page, as the UI's own links are), not a second copy
            | {"page_previews": dg.MetadataValue.url(_partition_path("paragraphs", context.partition_key))}
            | {f"rows_{table}": n for table, n in counts.items()}
            | {"dagster/row_count": sum(counts.values())}
            | {"rows_sql": dg.MetadataValue.md(_rows_sql(doc_id))}
            | {"quality_failures": decision.error or ""}
            | gate_figures(decision.results)
            | _approval_metadata(decision.approval)
            | meter.figures(),
            check_results=[c for c in checks if c.check_name in selected_checks],
        )
    if dg.AssetKey(QUALITY_GATE) in selected:
        yield dg.MaterializeResult(
            asset_key=QUALITY_GATE,
            metadata=verdict
            | {
                "suites_failed": ", ".join(c.check_name for c in checks if not c.passed) or "none",
                "quality_failures": decision.error or "",
            }
            | _approval_metadata(decision.approval),
        )


def _record_sightings(context: dg.AssetExecutionContext, wh, store: DocumentStoreResource) -> None:
    """Record the inbox sightings the sensor queued, while this step holds the warehouse anyway
    (the sensor never opens it). Lineage, not the document: a failure leaves them queued."""
    try:
        n = record_queued_sightings(wh, store.store())
    except Exception as exc:  # noqa: BLE001 - the queue is kept for the next writer step
        context.log.warning(f"queued file sightings not recorded yet: {exc!r}")
        return
    if n:
        context.log.info(f"{n} queued file sighting(s) recorded in files")


def _partition_path(asset: str, partition_key: str) -> str:
    """The UI's page of one asset partition (relative to the webserver; no --path-prefix)."""
    return f"/assets/{asset}?view=partitions&partition={urllib.parse.quote(partition_key, safe='')}"


def _rows_sql(doc_id: str) -> str:
    """The queries that show this document's rows, to copy into DuckDB (the warehouse or its snapshot)."""
    return (
        "```sql\n"
        f"SELECT * FROM document_blocks WHERE doc_id = '{doc_id}' ORDER BY reading_order;\n"
        f"SELECT * FROM pages WHERE doc_id = '{doc_id}' ORDER BY page_index;\n"
        f"SELECT * FROM quality_checks WHERE doc_id = '{doc_id}';\n"
        "```"
    )


def _approval_metadata(approval: Approval | None) -> dict[str, str]:
    if approval is None:
        return {}
    return {
        "approved_by": approval.approved_by,
        "approval_reason": approval.reason,
        "approved_at": str(approval.approved_at),
    }


@dg.asset(
    partitions_def=documents_partitions,
    group_name="warehouse",
    kinds={"duckdb"},
    owners=OWNERS,
    pool=DUCKDB_WRITER_POOL,
    retry_policy=TRANSIENT_RETRY_POLICY,
    backfill_policy=DOCUMENT_BACKFILL_POLICY,
    deps=[QUALITY_GATE],  # the gate's verdict decides what is let in
    metadata=schema_metadata(KB_TABLES),
    check_specs=[
        # the verdict where the missing partition is: a held-back document's knowledge_base partition
        # is missing (Dagster colours only materialized partitions green), and this check's
        # Partitions view tells it from a document never run: failed (at WARN) with why, not missing
        dg.AssetCheckSpec(
            ADMITTED_CHECK,
            asset="knowledge_base",
            partitions_def=documents_partitions,
            description="The document passed the quality gate and its chunks are in the knowledge base; "
            "failed (WARN, not an incident) for a quarantined or unreadable document, with why.",
            metadata={"owners": ", ".join(OWNERS)},
        )
    ],
    # a held-back document materializes nothing here (its partition stays missing) and its run succeeds
    output_required=False,
    description="Searchable chunks with citations to printed pages, for documents that passed the gate. "
    "A quarantined or unreadable document is left out (no materialization; an observation says why).",
)
@stop_not_retry  # an interrupt ends the run: not retried
def knowledge_base(
    context: dg.AssetExecutionContext, store: DocumentStoreResource, warehouse: WarehouseResource
):
    """Chunks under the settings the warehouse recorded for the document (its snapshot: the
    chunking is part of the parse), not the settings file as it is now."""
    meter = UsageMeter.start()
    wh = warehouse.warehouse()
    doc_id = resolve_document(context, store.store())
    with wh.held():  # one open of the file for the reads, the chunks, the vectors and the snapshot
        doc = wh.document(doc_id)
        if doc is None:
            raise dg.Failure(
                f"document {doc_id} has no rows in the warehouse: materialize duckdb_tables first",
                allow_retries=False,
            )
        tag_run(context, doc_id, str(doc["file_name"]))
        if doc["status"] != "parsed":
            # a document quarantined since its last load leaves the KB now, vectors and all
            wh.delete_kb(doc_id)
            kb_vectors.drop_vectors(wh, doc_id)
            warehouse.publish()
            context.log.info(f"{doc['file_name']} is {doc['status']}, left out: {doc['error']}")
            held = {
                "file_name": str(doc["file_name"]),
                "doc_id": doc_id,
                "status": str(doc["status"]),
                "held_back_because": str(doc["error"] or ""),
            }
            yield dg.AssetObservation(
                asset_key=context.asset_key,
                partition=context.partition_key,
                metadata=held
                | {
                    # the knowledge base is current for this document (it is rightly absent), so
                    # freshness counts the decision as an update: a quarantine never reads "stale"
                    "dagster/last_updated_timestamp": dg.MetadataValue.timestamp(time.time()),
                },
            )
            yield dg.AssetCheckResult(
                check_name=ADMITTED_CHECK,
                passed=False,
                severity=dg.AssetCheckSeverity.WARN,  # an outcome: the run stays green
                description=f"{doc['file_name']}: {doc['status']}, held back: {doc['error'] or ''}"[:1000],
                metadata=held | {"chunks": 0},
            )
            return
        # the chunks only: BM25 search has the document now; its vectors are the next asset's
        # (kb_vectors), embedded outside this writer pool
        chunks = kb.load_document(wh, doc_id, recorded_settings(wh, doc_id).kb, embed=False)
        n = len(chunks)
        approved = wh.let_in_by_approval(doc_id)
        warehouse.publish()
    yield dg.MaterializeResult(
        metadata={
            "chunks": n,
            "dagster/row_count": n,
            "file_name": str(doc["file_name"]),
            "doc_id": doc_id,
            "chunks_from_tables": sum(1 for c in chunks if c["source_kind"] == "table"),
            "approved_by_hand": approved,
            **meter.figures(),
        },
        check_results=[
            dg.AssetCheckResult(
                check_name=ADMITTED_CHECK,
                passed=True,
                description=f"{doc['file_name']}: in the knowledge base ({n} chunks)"
                + (f"; {doc['error']}" if doc["error"] else ""),
                metadata={
                    "file_name": str(doc["file_name"]),
                    "doc_id": doc_id,
                    "status": str(doc["status"]),
                    "chunks": n,
                },
            )
        ],
    )


document_assets = [
    source_documents,
    document_text,
    page_labels,
    tables,
    paragraphs,
    duckdb_tables,
    knowledge_base,
    kb_vectors_asset,
]
