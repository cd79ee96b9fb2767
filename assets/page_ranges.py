"""One long scan's OCR spread over several steps of a run: page ranges mapped with dynamic outputs.

``ocr_page_ranges`` is partitioned like the documents: launch it for one document from Jobs →
``ocr_page_ranges`` → Partitions, or with a ``RunRequest``. It plans the pages of the partition's
document that have no OCR checkpoint yet into ``ranges`` consecutive ranges of about equal length,
one per step. Each step pays its own process start and engine load (seconds), so the ranges are
few and long, not the shrinking ranges ``ocr.workers`` hands a warm pool. Each range is read in a
step of its own, every OCR'd page stored in the document's OCR checkpoint (the one the text stage
reads); the last step counts them.

The job runs on the multiprocess executor (one process per step; ``max_concurrent`` in its run
config, default the cores). On Kubernetes, give it ``k8s_job_executor``: one pod per range
(deploy/k8s.md). When it succeeds, ``ocr_ranges_then_ingest`` launches ``ingest_document`` for the
partition, whose text stage finds every page checkpointed and OCRs none. The join in page order,
the resume after a crash and the reuse after a settings change are the checkpoints' one mechanism,
as for ``ocr.workers`` inside one step.

A step that dies loses only its page in flight: a re-run plans only what is not stored. An engine
that cannot be copied into another process (the GPU engine) gets one range: the ``ocr`` pool bounds
GPU use, not this job.

These ops run before the document's text stage, so no stage output carries its settings snapshot
yet (assets/document_settings.py): each reads the ``settings`` resource. That cannot mix two
configurations into a document: every page is checkpointed under the fingerprint of the OCR
settings it was read with, and the text stage, which resolves the document's snapshot, reuses only
pages stored under its own.
"""

import math

import dagster as dg
from pydantic import Field

from assets.partitions import OWNERS, documents_partitions, resolve_document, tag_run
from assets.sensors import document_job
from dagster_ocr.checkpoints import DocumentCheckpoint, ocr_fingerprint
from dagster_ocr.model import SourceDocument
from dagster_ocr.ocr.base import OcrEngine
from dagster_ocr.ocr_workers import CheckpointedOcr
from dagster_ocr.settings import Settings
from dagster_ocr.textlayer import TimedOcrEngine, iter_pages, open_document, start_budget
from resources import DocumentStoreResource, OcrEngineResource, SettingsResource


class PageRangesConfig(dg.Config):
    ranges: int = Field(
        0,
        ge=0,
        description="How many steps the pages are spread over (each range a step); 0: the "
        "`ocr.workers` setting, at least 2.",
    )


def _checkpoint(
    context: dg.OpExecutionContext,
    store: DocumentStoreResource,
    settings: SettingsResource,
    ocr: OcrEngineResource,
) -> tuple[SourceDocument, Settings, OcrEngine, DocumentCheckpoint]:
    """The partition's document, the settings, its OCR engine and the checkpoint they key."""
    doc_id = resolve_document(context, store.store())
    source = store.store().get(doc_id)
    cfg = settings.load()
    engine = ocr.get_engine(cfg.ocr)
    if engine is None:
        raise dg.Failure(description="OCR is off (engine 'none'): no pages to spread", allow_retries=False)
    saved = store.ocr_checkpoints().document(doc_id, ocr_fingerprint(engine, cfg.ocr))
    return source, cfg, engine, saved


@dg.op(
    out=dg.DynamicOut(list[int]),
    description="The pages without an OCR checkpoint, in consecutive ranges of about equal length.",
)
def plan_page_ranges(
    context: dg.OpExecutionContext,
    config: PageRangesConfig,
    store: DocumentStoreResource,
    settings: SettingsResource,
    ocr: OcrEngineResource,
):
    source, cfg, engine, saved = _checkpoint(context, store, settings, ocr)
    tag_run(context, source.doc_id, source.file_name)
    with open_document(source, cfg.limits) as pdf:
        n_pages = pdf.page_count
    stored = saved.pages()
    todo = [i for i in range(n_pages) if i not in stored]
    # a GPU engine stays one (the ocr pool bounds it); a CPU engine is copied into every step
    steps = (config.ranges or max(2, cfg.ocr.workers)) if engine.worker_factory() is not None else 1
    size = max(1, math.ceil(len(todo) / steps))
    ranges = [todo[i : i + size] for i in range(0, len(todo), size)]
    context.log.info(
        f"{source.file_name}: {n_pages} pages, {len(stored)} already OCR'd, "
        f"{len(todo)} to read in {len(ranges)} ranges"
    )
    for pages in ranges:
        yield dg.DynamicOutput(pages, mapping_key=f"pages_{pages[0]}_{pages[-1]}")


@dg.op(description="One page range read as the text stage reads it, every OCR'd page checkpointed.")
def ocr_page_range(
    context: dg.OpExecutionContext,
    pages: list[int],
    store: DocumentStoreResource,
    settings: SettingsResource,
    ocr: OcrEngineResource,
) -> int:
    source, cfg, engine, saved = _checkpoint(context, store, settings, ocr)
    budget = start_budget(cfg.limits, len(pages))  # a range gets what a document of its length gets
    timed = TimedOcrEngine(engine, cfg.limits.ocr_page_timeout_s, budget, cfg.limits.wall_clock_factor)
    reader = CheckpointedOcr(timed, cfg, saved)
    try:
        with open_document(source, cfg.limits) as pdf:
            for _page in iter_pages(pdf, cfg.text, reader, budget, pages):
                pass
    finally:
        timed.close()
    context.log.info(
        f"pages {pages[0]}-{pages[-1]}: {reader.ocr_pages} OCR'd, {reader.reused_pages} already stored"
    )
    return reader.ocr_pages


@dg.op(description="The ranges' count of OCR'd pages, once every range is done.")
def join_page_ranges(context: dg.OpExecutionContext, counts: list[int]) -> int:
    total = sum(counts)
    context.add_output_metadata({"ranges": len(counts), "ocr_pages": total})
    context.log.info(f"{len(counts)} ranges done, {total} pages OCR'd; the document's text stage reads them")
    return total


@dg.job(
    partitions_def=documents_partitions,
    executor_def=dg.multiprocess_executor,
    tags={"dagster-ocr/kind": "page_ranges"},
    owners=OWNERS,
    description="A long scan's OCR over several steps (page ranges, one process each; one pod each "
    "with k8s_job_executor), checkpointed page by page; `ingest_document` follows for the partition.",
)
def ocr_page_ranges():
    join_page_ranges(plan_page_ranges().map(ocr_page_range).collect())


@dg.run_status_sensor(
    run_status=dg.DagsterRunStatus.SUCCESS,
    monitored_jobs=[ocr_page_ranges],
    request_job=document_job,
    metadata={"owners": ", ".join(OWNERS)},  # run_status_sensor takes no owners= in Dagster 1.13
    description="After `ocr_page_ranges` succeeds for a document, launch `ingest_document` for it.",
)
def ocr_ranges_then_ingest(context: dg.RunStatusSensorContext):
    key = context.dagster_run.tags.get("dagster/partition")
    if not key:
        return dg.SkipReason("the run had no partition")
    return dg.RunRequest(run_key=f"after-{context.dagster_run.run_id}", partition_key=key)


__all__ = ["ocr_page_ranges", "ocr_ranges_then_ingest"]
