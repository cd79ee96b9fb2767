"""What a reviewer opens: the list of documents the gate held back, and why, as an asset.

``quarantine`` is one unpartitioned asset over the warehouse's ``quarantine`` view, the one page
where every held-back document shows at a glance: its materialization's metadata starts with one
line per document (the file name, then quarantined or failed and why, shortened), in plain text,
so the asset's Overview shows them without a click or a scroll; a Markdown table with the
partition key to open each by and the failed expectations follows. Its run's row on the Runs page
names them in a tag (``held_back: garbled.pdf``), which matters where the documents ran in a
backfill (the Runs page folds a backfill's runs into one row). The ``quarantine_sensor``
refreshes it once document loads have happened since the last refresh.
"""

# no `from __future__ import annotations`: Dagster checks the context annotation as an object
import dagster as dg

import assets.dagster_warnings  # noqa: F401  # before the definitions below
from assets.gate_metadata import short_reason
from assets.partitions import DUCKDB_WRITER_POOL, HELD_BACK_TAG, OWNERS, tag_value
from assets.schema_metadata import table_schema
from dagster_ocr.gate import held_back
from dagster_ocr.schema_docs import schema_columns
from resources import WarehouseResource

#: the rows the Markdown table shows (the count and the view hold all of them)
LISTED = 200
#: the documents listed one per line, in plain text, at the top of the asset's metadata
AT_A_GLANCE = 20
#: file names the refresh run's tag names (the count says how many more)
TAG_NAMES = 3


def _cell(value) -> str:
    if isinstance(value, (list, tuple)) or hasattr(value, "tolist"):
        value = "; ".join(str(v) for v in list(value))
    return str("" if value is None else value).replace("|", "\\|").replace("\n", " ")


def held_back_markdown(frame) -> str:
    """The held-back documents as a Markdown table a reviewer reads in the UI (the reason short,
    so the table fits the Overview's column; the view and `documents.error` hold it whole)."""
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
            f"| {_cell(short_reason(row.reason))} | {_cell(failed)[:500]} |"
        )
    if len(frame) > LISTED:
        lines.append(f"\n… and {len(frame) - LISTED} more: `SELECT * FROM quarantine`")
    return "\n".join(lines)


def at_a_glance(frame) -> dict[str, str]:
    """One plain-text metadata entry per held-back document (the first ``AT_A_GLANCE``), keyed by
    its file name: ``quarantined: flagged_paragraph_share 1.0 (<= 0.05)``. Text, short: the UI
    shows text entries inline, on one line clipped at the column's edge."""
    out: dict[str, str] = {}
    for row in frame.head(AT_A_GLANCE).itertuples(index=False):
        key = str(row.file_name)
        if key in out or key in _FIXED_KEYS:  # two documents of one name: the key tells them apart
            key = f"{key} ({row.partition_key or row.doc_id})"
        out[key] = f"{row.status}: {short_reason(row.reason)}"
    return out


def held_back_tag(frame) -> str:
    """The refresh run's tag value: which documents are held back (``garbled.pdf``, or
    ``5: a.pdf, b.pdf, c.pdf +2 more``); why is on each document's run and on this asset's page."""
    if not len(frame):
        return "none"
    names = [str(n) for n in frame.file_name]
    shown = ", ".join(names[:TAG_NAMES]) + (
        f" +{len(names) - TAG_NAMES} more" if len(names) > TAG_NAMES else ""
    )
    return tag_value(shown if len(names) == 1 else f"{len(names)}: {shown}")


_FIXED_KEYS = {"documents_held_back", "quarantined", "failed", "held_back", "file_names", "query"}


@dg.asset(
    group_name="review",
    kinds={"duckdb"},
    owners=OWNERS,
    pool=DUCKDB_WRITER_POOL,  # reads the DuckDB file: one process at a time
    # the view's columns, in the Metadata section (as "columns"), not under dagster/column_schema:
    # the Overview puts a Columns section above the metadata, which pushed the held-back documents
    # (what a reviewer opens this page for) below the fold
    metadata={"columns": table_schema(schema_columns(["quarantine"]))},
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
    # on this run's row in the Runs page: seen there even when the documents ran in a backfill
    context.instance.add_run_tags(context.run_id, {HELD_BACK_TAG: held_back_tag(frame)})
    return dg.MaterializeResult(
        metadata={
            "documents_held_back": len(frame),
            "quarantined": int(counts.get("quarantined", 0)),
            "failed": int(counts.get("failed", 0)),
            **at_a_glance(frame),
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
