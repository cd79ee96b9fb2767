"""Keeping a lake warehouse fast: a scheduled job that compacts its small files.

Every commit to a DuckLake writes its rows to a new Parquet file (or, when small, inlines them in
the catalog), so after a backfill a table is thousands of files of a few rows, and every read
opens them all. ``compact_lake`` flushes inlined rows, merges adjacent files
(``ducklake_merge_adjacent_files``) and, past ``expire_after_hours``, expires old snapshots and
deletes the files only they used (time travel reaches back that far, no further). In the file mode
the op has nothing to do and says so; the schedule skips.
"""

# no `from __future__ import annotations`: Dagster checks the context annotation as an object
import datetime as dt

import dagster as dg

import assets.dagster_warnings  # noqa: F401  # before the definitions below
from assets.partitions import OWNERS
from dagster_ocr.lake import LakeWarehouse
from resources import WarehouseResource


class CompactConfig(dg.Config):
    #: snapshots older than this are expired and the files only they used deleted (None: keep all)
    expire_after_hours: float | None = 24 * 7


@dg.op(description="Merge the lake's small files; expire snapshots past the time-travel window.")
def compact_lake(context: dg.OpExecutionContext, config: CompactConfig, warehouse: WarehouseResource) -> None:
    # no pool: the lake takes concurrent writers, and a merge that conflicts with one is retried
    wh = warehouse.warehouse()
    if not isinstance(wh, LakeWarehouse):
        context.log.info(f"{wh.location} is a DuckDB file: nothing to compact")
        return
    expire = dt.timedelta(hours=config.expire_after_hours) if config.expire_after_hours else None
    figures = wh.compact(expire_older_than=expire)
    context.log.info(f"compacted {wh.location}: {figures}")


@dg.job(description="Compact the lake warehouse's small files (DuckLake mode only).", owners=OWNERS)
def lake_maintenance_job():
    compact_lake()


@dg.schedule(
    job=lake_maintenance_job,
    cron_schedule="23 * * * *",
    default_status=dg.DefaultScheduleStatus.RUNNING,
    owners=OWNERS,
    description="Hourly: merge the lake's small files (skipped when the warehouse is a DuckDB file).",
)
def lake_compaction_schedule(context: dg.ScheduleEvaluationContext, warehouse: WarehouseResource):
    if not warehouse.is_lake:
        return dg.SkipReason("the warehouse is a DuckDB file: nothing to compact")
    return dg.RunRequest(run_key=None)
