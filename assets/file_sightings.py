"""The inbox files' lineage (``files``) without the sensor touching the warehouse.

The inbox sensor queues what it lists beside the store (dagster_ocr.sighting_queue) and never
opens the DuckDB file, so its pick-up time does not depend on a run holding it, and it never makes
a run's step retry on a lock it took. The queue is recorded by steps that hold the warehouse
anyway: every document's load (``duckdb_tables``), and ``record_file_sightings``, a one-step job in
the writer pool the sensor requests when a tick saw new files but launched no document run.
"""

# no `from __future__ import annotations`: Dagster checks the context annotation as an object
import dagster as dg

import assets.dagster_warnings  # noqa: F401  # before the definitions below
from assets.partitions import DUCKDB_WRITER_POOL, OWNERS
from dagster_ocr.ingest import DocumentStore, FileSighting
from dagster_ocr.sighting_queue import SightingQueue
from dagster_ocr.warehouse import Warehouse
from resources import DocumentStoreResource, WarehouseResource


def queue_sightings(store: DocumentStore, sightings: list[FileSighting], seen_by: str) -> None:
    """Queue a scan's sightings for ``files`` beside the store: an append, no warehouse."""
    SightingQueue.beside(store.root).add(sightings, seen_by)


def record_queued_sightings(warehouse: Warehouse, store: DocumentStore) -> int:
    """Record the queued sightings in ``files`` (for a step that holds the warehouse); how many."""
    return SightingQueue.beside(store.root).record(warehouse)


@dg.op(
    pool=DUCKDB_WRITER_POOL,
    description="Record the inbox sightings the sensor queued (files_pending.jsonl) in `files`.",
)
def record_queued_file_sightings(
    context: dg.OpExecutionContext, store: DocumentStoreResource, warehouse: WarehouseResource
) -> None:
    wh = warehouse.warehouse()
    with wh.held():
        n = record_queued_sightings(wh, store.store())
    context.log.info(f"{n} queued file sighting(s) recorded in files")


@dg.job(
    name="record_file_sightings",
    description="Record the inbox files the sensor saw (duplicates included) in the warehouse's `files` "
    "lineage. Requested by inbox_sensor when a tick saw new files but launched no document run (a "
    "document's load step records the queue itself); waits in the duckdb_writer pool, never the sensor.",
    tags={"dagster-ocr/job": "files"},
    owners=OWNERS,
)
def record_files_job():
    record_queued_file_sightings()
