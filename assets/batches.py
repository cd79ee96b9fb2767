"""Batch mode: one ``ingest_documents`` run carries N documents, each still its own ``ingest_document`` run.

Creating a Dagster run costs the daemon about a second (snapshots, planned events, a new PostgreSQL
connection per storage call: docs/scale.md), so a tick or backfill of 1,000 documents spent ~15
minutes creating runs. With ``DAGSTER_OCR_DOCUMENTS_PER_RUN=auto`` (the default, dagster_ocr.deployment) the
inbox sensor requests one run per document while a tick has at most R new documents (R: at least
DAGSTER_OCR_RUNS_PER_TICK, 10, and the run queue's ``max_concurrent_runs``, a multiple of the latter,
:func:`runs_per_tick`) and R runs of this job above that: a tick creates at most R runs however large, and
never fewer than the queue runs at once. With ``=N`` it requests one run of this job per N new documents
whatever the tick. ``dagster-ocr backfill --per-run auto|N`` launches the same.

What a document had stays its own: the batch op creates each document's ``ingest_document`` run
(its partition, its tags, its asset checks and quarantine, its page in the run list) and executes
it in a process of its own (``dagster api execute_run``, what the default run launcher starts), one
after the other. A document that fails fails its own run; the batch goes on and fails at the end,
so re-executing it (by hand or by ``run_retries``) resumes: documents whose run in this batch
succeeded are skipped. The per-document time limit follows the document in flight: the batch's
``dagster/max_runtime`` is moved on to the time spent plus the limit of the document running
(its own tag, which the text stage sets from its page count, or the instance's), and the batch
stops a document that overruns its own limit.

Why not ranged or grouped partitions (docs/scale.md): the blocking quality checks and quarantine
are per document and per step, a backfill picks documents by file name, and a range of dynamic
keys follows insertion order, not the documents asked for.
"""

import hashlib
import math
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from typing import TypeVar

import dagster as dg
from dagster._core.origin import JobPythonOrigin
from dagster._core.remote_origin import RemoteJobOrigin
from dagster._core.storage.dagster_run import IN_PROGRESS_RUN_STATUSES
from dagster._grpc.types import ExecuteRunArgs
from dagster._serdes import serialize_value
from pydantic import Field

from assets.documents import MAX_RUNTIME_TAG, registration
from assets.partitions import OUTCOME_TAG, OWNERS, document_tags, documents_partitions
from dagster_ocr import partition_keys
from dagster_ocr.deployment import DeploymentSettings
from resources import DocumentStoreResource, WarehouseResource

T = TypeVar("T")

#: the per-document job every batch runs, and the batch job itself
DOCUMENT_JOB = "ingest_document"
BATCH_JOB = "ingest_documents"
BATCH_OP = "ingest_batch"
#: on each document run of a batch: the batch's root run id (what a resume looks its runs up by)
BATCH_TAG = "dagster-ocr/batch"
#: DAGSTER_OCR_RUNS_PER_TICK's default: a large tick is cut into at least this many runs
DEFAULT_RUNS_PER_TICK: int = DeploymentSettings.model_fields["runs_per_tick"].default
#: the batch run's kind tag, not copied onto its document runs
KIND = {"dagster-ocr/kind": "batch"}
PARTITION_TAG = "dagster/partition"
#: the batch's run-monitoring limit runs this far past the document in flight's own limit
#: (process start-up, the run's own bookkeeping)
SLACK_S = 300
#: how often the batch looks at the document run in flight (its status, its time-limit tag)
POLL_S = 1.0
#: a document run stopped for its limit gets this long to stop on SIGTERM before it is killed
STOP_GRACE_S = 60


class BatchConfig(dg.Config):
    documents: list[str] = Field(
        description="The documents, run in this order: partition keys (`dagster-ocr backfill --per-run` "
        "and inbox_sensor fill them in), or file names, doc_ids or doc_id prefixes, looked up in the "
        "warehouse (re-run a document by name from the launchpad). A partition retired after its load "
        "(assets/retire.py) is added again first."
    )
    registered_by: str = Field(
        "",
        description="Who found these documents new ('sensor'): the batch records each one's "
        "`source_documents` materialization as its run starts. Empty: none recorded (a backfill).",
    )


def cut(keys: Sequence[T], sizes: Sequence[int]) -> list[list[T]]:
    """``keys`` cut, in order, into consecutive batches of ``sizes`` (dagster_ocr.deployment.batch_sizes)."""
    out, start = [], 0
    for size in sizes:
        out.append(list(keys[start : start + size]))
        start += size
    assert start == len(keys), (start, len(keys))
    return out


def runs_per_tick(instance: dg.DagsterInstance, floor: int = DEFAULT_RUNS_PER_TICK) -> int:
    """R, the runs ``DAGSTER_OCR_DOCUMENTS_PER_RUN=auto`` cuts a large tick into: the run queue's
    ``max_concurrent_runs`` (M) or, below ``floor`` (DAGSTER_OCR_RUNS_PER_TICK), the smallest multiple
    of M at or above it (:func:`tick_runs`). At least M, so a tick's batches fill every slot the queue
    would have run documents in at once (the reasoning is dagster_ocr.deployment.batch_sizes').

    M is read as the queue daemon reads it, ``get_concurrency_config()``: the instance's
    ``concurrency: runs: max_concurrent_runs`` (where deploy/dagster.yaml sets it) over the
    QueuedRunCoordinator's own config, which alone would say 10 there. A queue without a limit (-1)
    or a coordinator that launches at once: ``floor``."""
    queue = instance.get_concurrency_config().run_queue_config
    return tick_runs(floor, queue.max_concurrent_runs if queue is not None else -1)


def tick_runs(floor: int, max_concurrent_runs: int) -> int:
    """R from the floor and the queue's limit M (-1 or 0: none): ``max(M, floor)`` rounded up to a
    multiple of M. Batches of balanced sizes then run in full rounds of M at once: 10 batches on a
    queue of 4 would leave half the slots idle in their third round (1,000 documents in the time
    of 1,200 one at a time), 12 do not (about 1,008)."""
    floor = max(1, floor)
    if max_concurrent_runs <= 0:
        return floor
    return max_concurrent_runs * math.ceil(floor / max_concurrent_runs)


def batch_run_config(keys: Sequence[str], registered_by: str = "") -> dict:
    """The ``ingest_documents`` run config that runs ``keys``."""
    config: dict = {"documents": list(keys)}
    if registered_by:
        config["registered_by"] = registered_by
    return {"ops": {BATCH_OP: {"config": config}}}


def batch_run_key(keys: Sequence[str]) -> str:
    """A run key for a batch of documents: the same documents are requested once."""
    return "batch-" + hashlib.sha256("\n".join(keys).encode()).hexdigest()[:24]


def _done_in_batch(instance: dg.DagsterInstance, batch_id: str) -> set[str]:
    """Partition keys whose document run in this batch (any attempt of it) succeeded."""
    runs = instance.get_runs(
        dg.RunsFilter(
            job_name=DOCUMENT_JOB, tags={BATCH_TAG: batch_id}, statuses=[dg.DagsterRunStatus.SUCCESS]
        )
    )
    return {r.tags[PARTITION_TAG] for r in runs if PARTITION_TAG in r.tags}


class _Clock:
    """The batch's own run-monitoring limit, moved along with the document in flight."""

    def __init__(self, context: dg.OpExecutionContext):
        self.context = context
        record = context.instance.get_run_record_by_id(context.run_id)
        self.started = (record.start_time if record and record.start_time else None) or time.time()
        self.default = int(getattr(context.instance, "run_monitoring_max_runtime_seconds", 0) or 7200)
        self.tagged: str | None = None

    def follow(self, doc_started: float, doc_limit: int) -> None:
        limit = str(int(doc_started - self.started + doc_limit + SLACK_S))
        if limit != self.tagged:
            self.context.instance.add_run_tags(self.context.run_id, {MAX_RUNTIME_TAG: limit})
            self.tagged = limit


def _document_limit(run: dg.DagsterRun | None, default: int) -> int:
    """A document run's own time limit: its tag (the text stage sets it), else the instance's."""
    try:
        return int(run.tags.get(MAX_RUNTIME_TAG, default)) if run is not None else default
    except ValueError:
        return default


def _run_document(
    context: dg.OpExecutionContext, run: dg.DagsterRun, origin: JobPythonOrigin, clock: _Clock
) -> dg.DagsterRun:
    """Execute one document run in a process of its own; its final record."""
    instance = context.instance
    args = ExecuteRunArgs(job_origin=origin, run_id=run.run_id, instance_ref=instance.get_ref())
    started = time.time()
    clock.follow(started, _document_limit(run, clock.default))
    # what the default run launcher runs, with the code location's own interpreter; the arguments
    # through the environment variable the command reads (no command-line length limit)
    python = origin.executable_path or sys.executable
    env = {**os.environ, "DAGSTER_EXECUTE_RUN_ARGS": serialize_value(args)}
    proc = subprocess.Popen([python, "-m", "dagster", "api", "execute_run"], env=env)
    try:
        while proc.poll() is None:
            time.sleep(POLL_S)
            current = instance.get_run_by_id(run.run_id)
            limit = _document_limit(current, clock.default)
            clock.follow(started, limit)
            if time.time() - started > limit:
                context.log.warning(f"{run.tags.get(PARTITION_TAG)}: past its {limit} s limit, stopping it")
                _stop(proc)
    except BaseException:  # the batch is being stopped: stop the document in flight with it
        _stop(proc)
        raise
    final = instance.get_run_by_id(run.run_id) or run
    if not final.is_finished:  # the process died without ending its run (killed, out of memory)
        instance.report_run_failed(final, f"the document's process ended with code {proc.returncode}")
        final = instance.get_run_by_id(run.run_id) or final
    return final


def _wait_for_other_runs(context: dg.OpExecutionContext, key: str, at_most_s: float) -> None:
    """Never two runs of one document at once: the queue's per-partition limit does not see the runs
    a batch starts itself, so the batch waits while another run of the document is in flight (at
    most ``at_most_s``: a run whose process died stays "started" until run monitoring fails it)."""
    in_flight = dg.RunsFilter(tags={PARTITION_TAG: key}, statuses=list(IN_PROGRESS_RUN_STATUSES))
    start = time.monotonic()
    if not context.instance.get_runs_count(in_flight):
        return
    context.log.info(f"{key}: another run of this document is in flight; waiting for it")
    while context.instance.get_runs_count(in_flight):
        if time.monotonic() - start > at_most_s:
            context.log.warning(f"{key}: another run of it is still marked in flight; running it anyway")
            return
        time.sleep(POLL_S)


def _stop(proc: subprocess.Popen) -> None:
    proc.terminate()  # SIGTERM: the run stops between pages (assets/stopping.py)
    try:
        proc.wait(STOP_GRACE_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def document_keys(
    instance: dg.DagsterInstance, store, warehouse: WarehouseResource | None, refs: Sequence[str]
) -> list[str]:
    """The partition keys ``refs`` name, in order, once each: a readable key or a key the instance
    has stays as it is; anything else (a file name, a doc_id, a prefix) is looked up in the warehouse
    (``dagster_ocr.export.resolve_document``) and becomes the key the document was retired under, the
    one the warehouse recorded, or its readable key. Raises ``dg.Failure`` naming what matched nothing."""
    refs = list(dict.fromkeys(r.strip() for r in refs if r.strip()))
    existing = set(instance.get_existing_dynamic_partitions(documents_partitions.name, refs))
    keys: list[str] = []
    wh = None
    for ref in refs:
        prefix = partition_keys.doc_id_prefix(ref)
        if ref in existing or (prefix is not None and len(prefix) == partition_keys.HASH_DIGITS):
            keys.append(ref)
            continue
        from dagster_ocr.export import ExportError, resolve_document

        if wh is None:
            if warehouse is None:
                raise dg.Failure(f"{ref!r} is not a partition key, and no warehouse to look it up in")
            wh = warehouse.warehouse()
        try:
            doc_id = resolve_document(wh, ref)
        except ExportError as exc:
            raise dg.Failure(description=str(exc), allow_retries=False) from None
        doc = wh.document(doc_id)
        name = str(doc["file_name"]) if doc is not None else doc_id
        keys.append(
            store.retired_key(doc_id)
            or partition_keys.recorded_key(wh, doc_id)
            or partition_keys.partition_key(name, doc_id)
        )
    return list(dict.fromkeys(keys))


def _readd(instance: dg.DagsterInstance, keys: Sequence[str]) -> list[str]:
    """Add the keys the instance does not have (new to it, or retired since), in one statement."""
    missing = set(keys) - set(instance.get_existing_dynamic_partitions(documents_partitions.name, keys))
    added = [k for k in keys if k in missing]
    if added:
        instance.add_dynamic_partitions(documents_partitions.name, added)
    return added


def _register(context: dg.OpExecutionContext, store: DocumentStoreResource, key: str, by: str) -> None:
    """Ingestion in the asset graph, recorded as the document's turn comes (not in the sensor tick)."""
    try:
        rec = store.store().get(partition_keys.resolve(key, store.store()))
    except (partition_keys.PartitionKeyError, KeyError, FileNotFoundError):
        return
    context.log_event(registration(rec, key, by))


def _tags(
    context: dg.OpExecutionContext,
    store: DocumentStoreResource,
    job: dg.JobDefinition,
    key: str,
    batch_id: str,
) -> dict:
    """A document run's tags: its job's, the batch's own (launched by), its partition, its document."""
    tags = dict(job.run_tags)
    tags |= {
        k: v for k, v in context.dagster_run.tags.items() if not k.startswith("dagster/") and k not in KIND
    }
    tags |= {PARTITION_TAG: key, BATCH_TAG: batch_id}
    try:
        doc_id = partition_keys.resolve(key, store.store())
        tags |= document_tags(doc_id, store.store().get(doc_id).file_name)
    except (partition_keys.PartitionKeyError, KeyError, FileNotFoundError):
        pass  # a key that names no document: its run fails at its first step, with what to do
    return tags


@dg.op(
    description="Run each document's own ingest_document run, one after the other, each in its own "
    "process; skip those this batch already ran (a resume); fail at the end if any document's run failed.",
    tags=KIND,
)
def ingest_batch(
    context: dg.OpExecutionContext,
    config: BatchConfig,
    store: DocumentStoreResource,
    warehouse: WarehouseResource,
) -> dict:
    run = context.dagster_run
    if run.job_code_origin is None:
        raise dg.Failure(
            description="ingest_documents starts each document in a process of its own and needs a code "
            "location to start it from: launch it from the UI, a sensor or `dagster-ocr backfill --per-run`, "
            "not execute_in_process",
            allow_retries=False,
        )
    instance = context.instance
    origin = JobPythonOrigin(job_name=DOCUMENT_JOB, repository_origin=run.job_code_origin.repository_origin)
    remote = (
        RemoteJobOrigin(repository_origin=run.remote_job_origin.repository_origin, job_name=DOCUMENT_JOB)
        if run.remote_job_origin is not None
        else None
    )
    job_def = context.repository_def.get_job(DOCUMENT_JOB)
    batch_id = run.root_run_id or run.run_id
    keys = document_keys(instance, store.store(), warehouse, config.documents)
    done = _done_in_batch(instance, batch_id)
    # a key not registered (retired once loaded, or a document named from the warehouse of another
    # instance): added in one statement, as the sensor adds its new documents
    readded = _readd(instance, keys)
    if readded:
        context.log.info(f"{len(readded)} partition(s) added (again): {', '.join(readded[:20])}")
    clock = _Clock(context)
    outcomes: dict[str, str] = {}
    for i, key in enumerate(keys, 1):
        if key in done:
            outcomes[key] = "done before"
            continue
        _wait_for_other_runs(context, key, clock.default)
        _readd(instance, [key])  # retired while the batch ran the documents before it
        if config.registered_by:
            _register(context, store, key, config.registered_by)
        doc_run = instance.create_run_for_job(
            job_def,
            tags=_tags(context, store, job_def, key, batch_id),
            job_code_origin=origin,
            remote_job_origin=remote,
        )
        context.log.info(f"[{i}/{len(keys)}] {key}: run {doc_run.run_id}")
        final = _run_document(context, doc_run, origin, clock)
        ok = final.status == dg.DagsterRunStatus.SUCCESS
        outcomes[key] = final.tags.get(OUTCOME_TAG, "parsed") if ok else "run failed"
        if not ok:
            context.log.warning(f"{key}: its run {final.run_id} ended {final.status.value}")
    counts: dict[str, int] = {}
    for outcome in outcomes.values():
        counts[outcome] = counts.get(outcome, 0) + 1
    context.add_output_metadata(
        {"documents": len(keys), **{k.replace(" ", "_"): v for k, v in counts.items()}}
    )
    failed = [k for k, o in outcomes.items() if o == "run failed"]
    if failed:
        raise dg.Failure(
            description=f"{len(failed)} of {len(keys)} document runs failed; re-execute this batch to "
            "run them again (documents done are skipped): " + ", ".join(failed[:20]),
            metadata={"failed": ", ".join(failed)[:2000]},
            allow_retries=False,
        )
    return counts


@dg.job(
    tags={"dagster-ocr/job": "ingest", **KIND},
    owners=OWNERS,
    description="Many documents in one run (batch mode, DAGSTER_OCR_DOCUMENTS_PER_RUN): each document "
    "still gets its own ingest_document run, checks and quarantine, one after the other in a process "
    "of its own. Re-execute a failed batch to resume it.",
)
def ingest_documents():
    ingest_batch()


__all__ = ["BATCH_JOB", "BATCH_TAG", "batch_run_config", "batch_run_key", "cut", "ingest_documents"]
