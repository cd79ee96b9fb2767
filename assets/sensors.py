"""Finding new documents: an inbox sensor with a cursor, and a nightly schedule doing a full sweep.

The sensor is incremental: its cursor remembers how far through the inbox it has read (a
modification-time high-water mark), so a restarted sensor or daemon neither re-hashes nor
re-requests what it has seen. The nightly schedule sweeps the whole inbox without a cursor and
catches what an incremental scan cannot (a file copied in with an old modification time). Both
skip documents that already have a partition, and the run key is the doc_id, so a document is
requested once however often it is found. Partition keys read ``<file stem>-<12 hex digits of
the sha256>`` (dagster_ocr.partition_keys); a document known under an old sha256 key is not added
again. Each new document is recorded as a materialization of ``source_documents`` (ingestion, the
graph's first node). Both record every file they list, duplicates included, in the warehouse's
``files`` table (lineage: what became of each file name): the sensor never opens the warehouse,
it queues the sightings beside the store and the next step that holds the warehouse records them
(dagster_ocr.sighting_queue).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Sequence, Set
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import dagster as dg
import duckdb

import assets.dagster_warnings  # noqa: F401  # before the definitions below
from assets import status_cache
from assets.alerts import alert_asset_checks
from assets.backfill_cli import DOCUMENTS_TAG, covers
from assets.batches import (
    BATCH_JOB,
    DEFAULT_RUNS_PER_TICK,
    batch_run_config,
    batch_run_key,
    cut,
    ingest_documents,
    runs_per_tick,
)
from assets.documents import registration
from assets.file_sightings import queue_sightings, record_files_job, record_queued_sightings
from assets.partitions import OWNERS, document_tags, documents_partitions, tag_value
from dagster_ocr.deployment import AUTO, batch_sizes
from dagster_ocr.ingest import DocumentStore, FileSighting, InboxScan, discover, scan_files
from dagster_ocr.model import SourceDocument
from dagster_ocr.partition_keys import partition_key
from dagster_ocr.warehouse import Warehouse
from resources import DocumentStoreResource, WarehouseResource

#: run tags every document run carries; the UI filters runs by them and the instance's
#: tag concurrency limits (deploy/dagster.yaml) key on ``dagster-ocr/job``
JOB_TAGS = {"dagster-ocr/job": "ingest"}

#: the freshness checks (assets/alerts.py) are the freshness sensor's to evaluate, every 10 minutes: in a
#: document's run they were a step of their own after its knowledge base (~10 events in its log, and
#: queries of the instance), judging an asset that run had just updated
_FRESHNESS_CHECKS = dg.AssetSelection.checks(*alert_asset_checks)

document_job = dg.define_asset_job(
    "ingest_document",
    selection=dg.AssetSelection.groups("documents", "warehouse") - _FRESHNESS_CHECKS,
    description="Parse one document through every stage into the warehouse and the knowledge base. "
    "Backfill documents by name from this job's Partitions tab (runs are named after it).",
    tags=JOB_TAGS,
    owners=OWNERS,
)

reload_job = dg.define_asset_job(
    "reload_warehouse",
    selection=dg.AssetSelection.assets("duckdb_tables", "quality_gate", "knowledge_base", "kb_vectors")
    - _FRESHNESS_CHECKS,
    description="Re-load documents into the warehouse and re-judge them (new thresholds, an approval) "
    "from the stage outputs already kept: no re-extraction, no OCR. What `dagster-ocr recheck` runs.",
    tags=JOB_TAGS,
    owners=OWNERS,
)

__all__ = [
    "build_inbox_sensor",
    "document_job",
    "document_tags",
    "inbox_sensor",
    "nightly_ingestion",
    "record_files_job",
    "reload_job",
]


@dataclass
class InboxCursor:
    """How far the sensor has read the inbox: files modified at or before ``mtime_ns``.

    ``names_at_mark`` lists the files whose modification time equals the mark, so a file that
    lands in the same nanosecond tick as the last one read is still picked up.
    """

    mtime_ns: int = -1
    names_at_mark: list[str] = field(default_factory=list)

    @classmethod
    def parse(cls, raw: str | None) -> InboxCursor:
        if not raw:
            return cls()
        data = json.loads(raw)
        return cls(int(data["mtime_ns"]), list(data["names_at_mark"]))

    def dump(self) -> str:
        return json.dumps({"mtime_ns": self.mtime_ns, "names_at_mark": sorted(self.names_at_mark)})

    def is_new(self, path: Path, mtime_ns: int) -> bool:
        return mtime_ns > self.mtime_ns or (mtime_ns == self.mtime_ns and str(path) not in self.names_at_mark)

    def advance(self, seen: Iterable[tuple[Path, int]]) -> InboxCursor:
        """The cursor after reading ``seen`` (path, mtime_ns) files."""
        mark, names = self.mtime_ns, set(self.names_at_mark)
        for path, mtime_ns in seen:
            if mtime_ns > mark:
                mark, names = mtime_ns, {str(path)}
            elif mtime_ns == mark:
                names.add(str(path))
        return InboxCursor(mark, sorted(names))


#: given candidate partition keys, the ones the instance already has (one bounded query)
Registered = Callable[[Sequence[str]], Set[str]]


def candidate_keys(scan: InboxScan) -> dict[str, str]:
    """Every key a scanned document can already be registered under, with its doc_id: the key
    of the name the store first recorded it by (the one every registrar uses), the key of each name
    this scan saw it under, and the bare sha256 (keys made before readable keys)."""
    keys: dict[str, str] = {}
    for record, _ in scan.documents:
        keys[partition_key(record.file_name, record.doc_id)] = record.doc_id
        keys[record.doc_id] = record.doc_id
    for sighting in scan.files:
        if sighting.doc_id:
            keys[partition_key(sighting.file_name, sighting.doc_id)] = sighting.doc_id
    return keys


def scan_inbox(
    inbox: str | Path, store: DocumentStore, registered: Registered, cursor: InboxCursor | None = None
) -> tuple[list[SourceDocument], InboxCursor | None, list[FileSighting]]:
    """Register the inbox files newer than ``cursor`` (all when None); the ones without a
    partition yet, the new cursor, and a sighting of every file listed (for the warehouse's
    ``files`` lineage).

    Whether a document has a partition is asked of ``registered`` for the keys it can have
    (:func:`candidate_keys`), never by reading every key: a tick costs the same at a million
    documents as at ten (docs/scale.md); only the status cache's carry after a tick that added
    keys reads them all, once (assets/status_cache.py). A document whose partition was retired after its load
    (the store's marker, ``DocumentStore.retired_key``) is not new either: it is re-run by name.

    Files the cursor has read before are not hashed again: their sightings carry no doc_id and
    only move ``last_seen`` on. A file still being written moves its modification time on, so it
    is read again on a later tick under a new content hash; the partial copy's partition shows up
    as a failed parse (bad input, recorded) rather than a lost document.
    """
    files: list[tuple[Path, int]] = []
    unchanged: list[FileSighting] = []
    for path in discover(Path(inbox)):
        try:
            stat = os.stat(path)
        except FileNotFoundError:  # removed between listing and stat
            continue
        if cursor is None or cursor.is_new(path, stat.st_mtime_ns):
            files.append((path, stat.st_mtime_ns))
        else:
            unchanged.append(FileSighting.of(path, None, stat))
    scan = scan_files((p for p, _ in files), store)
    keys = candidate_keys(scan)
    known = {keys[k] for k in registered(list(keys))} if keys else set()
    # a document whose partition was retired once it was loaded (assets/retire.py) is known too:
    # the store says so beside its kept copy (one file look-up per document the scan hashed)
    new = [r for r, _ in scan.documents if r.doc_id not in known and store.retired_key(r.doc_id) is None]
    return new, (cursor.advance(files) if cursor is not None else None), scan.files + unchanged


def record_sightings(
    warehouse: Warehouse, store: DocumentStore, sightings: list[FileSighting], seen_by: str, log: Any
) -> None:
    """Queue a scan's sightings and record the queue now if the warehouse is free (the nightly
    sweep, once a day); a writer holding the file leaves them queued for the next writer step."""
    queue_sightings(store, sightings, seen_by)
    try:
        record_queued_sightings(warehouse, store)
    except duckdb.IOException as exc:  # the file is locked by a writer: the queue waits for it
        if "lock" not in str(exc).lower():
            raise
        log.info(f"warehouse busy: {len(sightings)} file sighting(s) queued for the next writer step")


def _run_requests(
    new: list[SourceDocument], sizes: Sequence[int] | None = None, registered_by: str = ""
) -> list[dg.RunRequest]:
    """One ``ingest_document`` run per document; with batch ``sizes`` (dagster_ocr.deployment.batch_sizes),
    one ``ingest_documents`` run per batch of that many documents, in order (batch mode: each document
    still gets its own run, started by the batch; ``registered_by`` tells the batch to record their
    ingestion as it goes)."""
    if sizes is not None:
        requests = []
        for chunk in cut(new, sizes):
            keys = [partition_key(r.file_name, r.doc_id) for r in chunk]
            names = [r.file_name for r in chunk]
            requests.append(
                dg.RunRequest(
                    job_name=BATCH_JOB,
                    run_key=batch_run_key(keys),
                    run_config=batch_run_config(keys, registered_by),
                    tags={DOCUMENTS_TAG: str(len(chunk)), "dagster-ocr/covers": tag_value(covers(names))},
                )
            )
        return requests
    return [
        dg.RunRequest(
            job_name=document_job.name,
            run_key=rec.doc_id,
            partition_key=partition_key(rec.file_name, rec.doc_id),
            tags=document_tags(rec.doc_id, rec.file_name),
        )
        for rec in new
    ]


def _registered(new: list[SourceDocument], seen_by: str) -> list[dg.AssetMaterialization]:
    """Ingestion in the asset graph: one ``source_documents`` materialization per new document."""
    return [registration(rec, partition_key(rec.file_name, rec.doc_id), seen_by) for rec in new]


def _known(instance: dg.DagsterInstance) -> Registered:
    """Which of some keys have a document partition already: an indexed ``IN`` query on the
    instance's partition table (``get_existing_dynamic_partitions``), bounded by the files scanned."""
    return lambda keys: instance.get_existing_dynamic_partitions(documents_partitions.name, keys)


def build_inbox_sensor(
    documents_per_run: int | str = AUTO,
    carry_status_cache: bool = True,
    min_runs_per_tick: int = DEFAULT_RUNS_PER_TICK,
) -> dg.SensorDefinition:
    """The inbox sensor. ``documents_per_run`` (DAGSTER_OCR_DOCUMENTS_PER_RUN): ``"auto"`` requests
    one run per new document while a tick has at most R of them, R at least ``min_runs_per_tick``
    (DAGSTER_OCR_RUNS_PER_TICK) and the run queue's ``max_concurrent_runs``, a multiple of the latter
    (assets.batches.runs_per_tick), and R balanced ``ingest_documents`` batch runs above that
    (dagster_ocr.deployment.batch_sizes says why that serializes nothing the queue would not);
    N > 1 is fixed batch mode, 1 one run per document always. ``carry_status_cache``: rewrite the
    assets' partition status cache for the keys it adds (DAGSTER_OCR_CARRY_STATUS_CACHE,
    assets/status_cache.py)."""
    per_run: int | str = AUTO if documents_per_run == AUTO else max(1, int(documents_per_run))
    if per_run == AUTO:
        requests_what = (
            "request its ingest_document run; a tick with more new documents than runs it may request "
            f"(at least {min_runs_per_tick}, and a multiple of the run queue's max_concurrent_runs) "
            "requests that many ingest_documents runs instead, each document still its own "
            "ingest_document run"
        )
    elif per_run > 1:
        requests_what = (
            f"request one ingest_documents run per {per_run} new documents (batch mode: each document still "
            "gets its own ingest_document run)"
        )
    else:
        requests_what = "request its ingest_document run"

    @dg.sensor(
        name="inbox_sensor",
        jobs=[document_job, record_files_job, ingest_documents],
        minimum_interval_seconds=30,
        default_status=dg.DefaultSensorStatus.STOPPED,
        owners=OWNERS,
        description="Find new files in the inbox every 30 s: add one partition per document, named "
        f"<file stem>-<12 hex digits of its sha256>, and {requests_what}. Off by default "
        "(a laptop ingests with `make demo` / `dagster-ocr run`): turn it on here (Automation > inbox_sensor "
        "> toggle) to ingest what lands in DAGSTER_OCR_INBOX continuously, with the daemon running "
        "(`dagster dev` starts one). It never opens the warehouse: file sightings are queued and recorded "
        "by the next writer step.",
    )
    def inbox_sensor(context: dg.SensorEvaluationContext, store: DocumentStoreResource) -> dg.SensorResult:
        """Adds one partition per new document in the inbox and requests their runs.

        The cursor (modification-time mark) makes each tick read only files it has not seen; the run
        key (doc_id, or the batch's keys) makes a document's run requested once even if the cursor were
        reset. Every file listed is queued for the warehouse's ``files`` table (duplicates included),
        without opening it. The new partitions are added here in one statement (the daemon would check
        and add them one key at a time, ~25 ms each). A tick that batches (more new documents than runs
        it may request, or a fixed batch size) leaves the documents' ``source_documents``
        materializations to their batch, recorded as each one starts, not by the tick (~30 ms each).
        """
        cursor = InboxCursor.parse(context.cursor)
        known = _known(context.instance)
        new, advanced, seen = scan_inbox(store.inbox_dir, store.store(), known, cursor)
        queue_sightings(store.store(), seen, "sensor")
        runs = runs_per_tick(context.instance, min_runs_per_tick) if new and per_run == AUTO else 0
        sizes = batch_sizes(len(new), per_run, runs)
        requests = _run_requests(new, sizes, "sensor")
        if new:
            keys = [partition_key(r.file_name, r.doc_id) for r in new]
            context.instance.add_dynamic_partitions(documents_partitions.name, keys)
            context.log.info(f"{len(new)} new document(s) in {store.inbox_dir}: {len(requests)} run(s)")
        if new and carry_status_cache:  # (the retire sensor carries changes made elsewhere)
            status_cache.carry_status_cache(
                context.instance, status_cache.document_asset_keys(context.repository_def), fresh=keys
            )
        elif any(s.doc_id for s in seen):
            # new files, none a new document (a duplicate, a known document under a new name): no load
            # step will record them soon, so a one-step run in the writer pool does
            requests.append(
                dg.RunRequest(job_name=record_files_job.name, run_key=f"files-{(advanced or cursor).dump()}")
            )
        return dg.SensorResult(
            run_requests=requests,
            # a tick of per-document runs records their ingestion itself; a batch does it for its own
            asset_events=_registered(new, "sensor") if sizes is None else [],
            cursor=(advanced or cursor).dump(),
        )

    return inbox_sensor


#: the sensor with DAGSTER_OCR_DOCUMENTS_PER_RUN's default (auto); build_definitions builds the one
#: the deployment asks for
inbox_sensor = build_inbox_sensor()


@dg.schedule(
    job=document_job,
    cron_schedule="0 2 * * *",
    execution_timezone="UTC",
    default_status=dg.DefaultScheduleStatus.STOPPED,
    owners=OWNERS,
    description="Nightly full sweep of the inbox (02:00 UTC, no cursor): catches files an incremental "
    "scan misses (copied in with an old modification time) and records every file in `files`. Off by "
    "default: turn it on here (Automation > nightly_ingestion > toggle) on a deployment whose daemon "
    "runs through the night, alongside inbox_sensor or instead of it (files landing in batches).",
)
def nightly_ingestion(
    context: dg.ScheduleEvaluationContext, store: DocumentStoreResource, warehouse: WarehouseResource
):
    """The nightly full sweep of the inbox (no cursor), for deployments that do not run the sensor.

    Every file is hashed and recorded in ``files`` (its ``last_seen`` moves on)."""
    new, _, seen = scan_inbox(store.inbox_dir, store.store(), _known(context.instance))
    record_sightings(warehouse.warehouse(), store.store(), seen, "schedule", context.log)
    if new:
        keys = [partition_key(r.file_name, r.doc_id) for r in new]
        context.instance.add_dynamic_partitions(documents_partitions.name, keys)
        for event in _registered(new, "schedule"):  # a schedule returns no asset events: report them
            context.instance.report_runless_asset_event(event)
        return _run_requests(new)
    return dg.SkipReason("no new documents in the inbox")
