"""What a reviewer opens: the list of documents the gate held back, and why, as an asset.

``quarantine`` is one unpartitioned asset over the warehouse's ``quarantine`` view: its
materialization's metadata is a Markdown table of every held-back document (file name, the
partition key to open it by in the UI, quarantined or failed, the failed expectations with
observed values and thresholds), so the list is read in the asset catalog without SQL. The
``quarantine_sensor`` refreshes it once document loads have happened since the last refresh.
"""

# no `from __future__ import annotations`: Dagster checks the context annotation as an object
import dagster as dg

import assets.dagster_warnings  # noqa: F401  # before the definitions below
from assets.partitions import DUCKDB_WRITER_POOL, OWNERS
from assets.schema_metadata import schema_metadata
from dagster_ocr.gate import held_back
from resources import WarehouseResource

#: the rows the Markdown table shows (the count and the view hold all of them)
LISTED = 200


def _cell(value) -> str:
    if isinstance(value, (list, tuple)) or hasattr(value, "tolist"):
        value = "; ".join(str(v) for v in list(value))
    return str("" if value is None else value).replace("|", "\\|").replace("\n", " ")


def held_back_markdown(frame) -> str:
    """The held-back documents as a Markdown table a reviewer reads in the UI."""
    if not len(frame):
        return "_No document is held back._"
    lines = [
        "| file | partition | status | why | failed expectations |",
        "|---|---|---|---|---|",
    ]
    for row in frame.head(LISTED).itertuples(index=False):
        failed = row.failed_expectations if row.failed_expectations is not None else []
        lines.append(
            f"| {_cell(row.file_name)} | `{_cell(row.partition_key or row.doc_id)}` | {row.status} "
            f"| {_cell(row.reason)[:300]} | {_cell(failed)[:500]} |"
        )
    if len(frame) > LISTED:
        lines.append(f"\n… and {len(frame) - LISTED} more: `SELECT * FROM quarantine`")
    return "\n".join(lines)


@dg.asset(
    group_name="review",
    kinds={"duckdb"},
    owners=OWNERS,
    pool=DUCKDB_WRITER_POOL,  # reads the DuckDB file: one process at a time
    metadata=schema_metadata(["quarantine"]),
    # hangs off the gate: the list is every document's verdict (all of quality_gate's partitions).
    # The document jobs and their backfills select the documents and warehouse groups only, so a
    # backfill does not add a run of this list; quarantine_sensor refreshes it after loads
    deps=[dg.AssetDep("quality_gate", partition_mapping=dg.AllPartitionMapping())],
    description="Documents held back from the knowledge base (quarantined by the quality gate, or "
    "unreadable), with why: the warehouse's `quarantine` view, listed in this asset's metadata.",
)
def quarantine(context: dg.AssetExecutionContext, warehouse: WarehouseResource) -> dg.MaterializeResult:
    frame = held_back(warehouse.warehouse())
    counts = frame.status.value_counts().to_dict() if len(frame) else {}
    context.log.info(f"{len(frame)} document(s) held back: {counts or 'none'}")
    return dg.MaterializeResult(
        metadata={
            "documents_held_back": len(frame),
            "quarantined": int(counts.get("quarantined", 0)),
            "failed": int(counts.get("failed", 0)),
            "dagster/row_count": len(frame),
            "held_back": dg.MetadataValue.md(held_back_markdown(frame)),
            "file_names": ", ".join(frame.file_name.head(LISTED).astype(str)) or "none",
            "query": dg.MetadataValue.md("```sql\nSELECT * FROM quarantine ORDER BY evaluated_at DESC\n```"),
        }
    )


refresh_quarantine_job = dg.define_asset_job(
    "refresh_quarantine",
    selection=[quarantine.key],
    description="Re-read the list of held-back documents (the quarantine asset) from the warehouse.",
    owners=OWNERS,
)


@dg.sensor(
    job=refresh_quarantine_job,
    minimum_interval_seconds=60,
    default_status=dg.DefaultSensorStatus.RUNNING,
    owners=OWNERS,
    description="Refresh the quarantine list after documents were loaded into the warehouse "
    "(one refresh per minute at most, however many documents a backfill loads).",
)
def quarantine_sensor(context: dg.SensorEvaluationContext):
    records = context.instance.fetch_materializations(dg.AssetKey("duckdb_tables"), limit=1).records
    if not records:
        return dg.SkipReason("no document loaded yet")
    latest = records[0].storage_id
    if context.cursor and int(context.cursor) >= latest:
        return dg.SkipReason("the quarantine list is current")
    context.update_cursor(str(latest))
    return dg.RunRequest(run_key=f"quarantine-{latest}")
