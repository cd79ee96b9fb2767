"""Keeping a lake warehouse fast: a scheduled job that compacts its small files.

Every commit to a DuckLake writes its rows to a new Parquet file (or, when small, inlines them in
the catalog), so after a backfill a table is thousands of files of a few rows, and every read
opens them all. ``compact_lake`` flushes inlined rows, merges adjacent files
(``ducklake_merge_adjacent_files``) and, past ``expire_after_hours``, expires old snapshots and
deletes the files only they used (time travel reaches back that far, no further). In the file mode
the op has nothing to do and says so; the schedule is off by default there, and skips if turned on.
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


def build_lake_compaction_schedule(lake: bool) -> dg.ScheduleDefinition:
    """The hourly compaction schedule: on by default where the warehouse is a lake, off (and saying
    when to turn it on) where it is a DuckDB file, the laptop's default, which has nothing to compact."""

    @dg.schedule(
        name="lake_compaction_schedule",  # a deployment keeps its on/off state under this name
        job=lake_maintenance_job,
        cron_schedule="23 * * * *",
        default_status=dg.DefaultScheduleStatus.RUNNING if lake else dg.DefaultScheduleStatus.STOPPED,
        owners=OWNERS,
        description="Hourly: merge the lake's small files and expire old snapshots. "
        + (
            "On by default: the warehouse is a lake."
            if lake
            else "Off by default: the warehouse is a DuckDB file, which has nothing to compact. Turn it "
            "on here once DAGSTER_OCR_WAREHOUSE names a lake (ducklake:postgres:...); it skips on a file."
        ),
    )
    def lake_compaction_schedule(context: dg.ScheduleEvaluationContext, warehouse: WarehouseResource):
        if not warehouse.is_lake:
            return dg.SkipReason("the warehouse is a DuckDB file: nothing to compact")
        return dg.RunRequest(run_key=None)

    return lake_compaction_schedule


#: the file mode's schedule (off by default); definitions build the one that fits the warehouse
lake_compaction_schedule = build_lake_compaction_schedule(lake=False)
