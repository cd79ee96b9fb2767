"""Catching the analysts' snapshot up once writes go quiet.

Document steps publish ``<stem>.snapshot.duckdb`` only when the copy is cheap against the time
since the last one (``WarehouseResource.snapshot_max_share``), so a backfill into a large warehouse
does not copy the whole file after every document. The writes it skipped are counted in the
snapshot's sidecar; this sensor sees them and, once no document has been written for
``QUIET_SECONDS``, launches a one-step job that publishes. The step holds the writer pool and the
DuckDB file, so it never copies a file being written.
"""

# no `from __future__ import annotations`: Dagster checks the context annotation as an object
import time

import dagster as dg

import assets.dagster_warnings  # noqa: F401  # before the definitions below
from assets.partitions import DUCKDB_WRITER_POOL, OWNERS
from resources import WarehouseResource

#: how long the warehouse must go unwritten before the sensor publishes what is pending
QUIET_SECONDS = 60


@dg.op(pool=DUCKDB_WRITER_POOL, description="Copy the warehouse to the analysts' snapshot.")
def publish_warehouse_snapshot(context: dg.OpExecutionContext, warehouse: WarehouseResource) -> None:
    wh = warehouse.warehouse()
    path, pending = wh.catch_up_snapshot()  # holds the file: no other process writes meanwhile
    copy = wh.snapshot_record().copy_seconds
    context.log.info(f"published {path} ({pending} pending write(s), copy {copy:.2f}s)")


@dg.job(
    description="Publish the analysts' snapshot of the warehouse now (writes skipped by throttling).",
    owners=OWNERS,
)
def publish_snapshot_job():
    publish_warehouse_snapshot()


@dg.sensor(
    job=publish_snapshot_job,
    minimum_interval_seconds=30,
    default_status=dg.DefaultSensorStatus.RUNNING,
    owners=OWNERS,
    description="Publish the analysts' snapshot (<stem>.snapshot.duckdb) once document writes are "
    "pending and none came for a minute.",
)
def snapshot_sensor(context: dg.SensorEvaluationContext, warehouse: WarehouseResource):
    """Publishes the snapshot when document writes are pending and none came for ``QUIET_SECONDS``."""
    if not warehouse.publish_snapshot:
        return dg.SkipReason("snapshots are off (WarehouseResource.publish_snapshot=False)")
    if warehouse.is_lake:
        return dg.SkipReason("a lake has no snapshot copy: analysts attach it read-only")
    record = warehouse.warehouse().snapshot_record()
    if not record.pending_writes or record.last_write_at is None:
        return dg.SkipReason("the snapshot is current")
    quiet = time.time() - record.last_write_at
    if quiet < QUIET_SECONDS:
        return dg.SkipReason(
            f"{record.pending_writes} write(s) pending; waiting for {QUIET_SECONDS}s without writes "
            f"(last {quiet:.0f}s ago)"
        )
    # one request per burst of writes: the key is the last write's time
    return dg.RunRequest(run_key=f"snapshot-{record.last_write_at:.6f}")
