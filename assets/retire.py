"""Retiring loaded documents' partitions, so the number of live partitions stays bounded.

Every document is a dynamic partition of ``documents``; Dagster's UI lists every key in the asset's
partition picker and the job's Partitions tab (3.5-32 s at a million keys, docs/scale.md), and its
1.13 UI has no paged picker. So once more than ``DAGSTER_OCR_RETIRE_ABOVE`` partitions are live
(20,000, about 1.5 s in the picker), ``retire_loaded_partitions`` deletes the partitions of the
documents loaded longest ago, down to that number, each loaded at least
``DAGSTER_OCR_RETIRE_AFTER_DAYS`` ago (dagster_ocr.deployment): the live keys are the documents in
flight, quarantined or failed (never loaded), those loaded within the window and, below the
threshold, every document. An instance that never passes the threshold never loses a partition,
which is why the sensor is on by default. The warehouse stays the index of every document (``documents``,
``files``, ``document_partitions``), the store keeps a marker beside the document's kept copy
(``DocumentStore.mark_retired``: the inbox sensor does not take it for new), and the event log keeps
its runs and materializations (Dagster deletes only the key: the runs stay in the run list under
their ``dagster/partition`` and ``dagster-ocr/file_name`` tags, the events in the asset's Events
list; the picker, the health bar and the partition counts stop showing the key).

A retired document is re-run by name: ``dagster-ocr rerun NAME`` (or ``backfill``) re-adds its key
first, the ``ingest_documents`` job (launchpad, by file name) re-adds the keys it is given, and the
UI's "Add partition" takes the key (``document_partitions`` has it).

Which partitions retire, in the order they were loaded (a cursor on the event log's storage id of
``knowledge_base`` materializations, read in pages of at most ``retire_per_tick``): a key whose
materialization is older than the window, whose partition still exists, whose latest
``knowledge_base`` event is that materialization (a later observation means quarantined since: it
stays; a later materialization: the window starts again from it) and which no run is queued for
or running. The tick stops at the first materialization still inside the window.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import dagster as dg
from dagster._core.storage.dagster_run import IN_PROGRESS_RUN_STATUSES

from assets import status_cache
from assets.partitions import OWNERS, documents_partitions
from dagster_ocr import partition_keys
from dagster_ocr.ingest import DocumentStore
from resources import DocumentStoreResource

KNOWLEDGE_BASE = dg.AssetKey("knowledge_base")
PARTITION_TAG = "dagster/partition"
DAY_S = 86_400.0
#: how often the sensor looks for partitions to retire
INTERVAL_S = 300


@dataclass
class RetireTick:
    """What one pass retired and kept, and how far through the loads it read."""

    cursor: int | None
    retired: list[str] = field(default_factory=list)
    #: key -> why it stays (in flight, quarantined since, loaded again since, already gone)
    kept: dict[str, str] = field(default_factory=dict)
    #: the loads read are all older than the window (False: it stopped at one still inside it)
    more: bool = False
    #: live partitions counted before retiring (only when a threshold was given)
    live: int | None = None


def _latest_later_events(
    instance: dg.DagsterInstance, keys: Sequence[str], after: int
) -> dict[str, tuple[int, str, float]]:
    """Per key, the newest ``knowledge_base`` event after storage id ``after``: (storage id, "loaded"
    or "held back", timestamp); one query per kind."""
    latest: dict[str, tuple[int, str, float]] = {}
    flt = dg.AssetRecordsFilter(asset_key=KNOWLEDGE_BASE, asset_partitions=list(keys), after_storage_id=after)
    kinds = (("loaded", instance.fetch_materializations), ("held back", instance.fetch_observations))
    for kind, fetch in kinds:
        for rec in fetch(flt, limit=max(1000, 4 * len(keys))).records:
            key = rec.partition_key
            if key and (key not in latest or rec.storage_id > latest[key][0]):
                latest[key] = (rec.storage_id, kind, rec.timestamp)
    return latest


def retire_loaded(
    instance: dg.DagsterInstance,
    store: DocumentStore,
    cursor: int | None,
    after_days: float,
    limit: int,
    now: float | None = None,
    above: int = 0,
) -> RetireTick:
    """Retire at most ``limit`` partitions whose documents were loaded ``after_days`` ago and are
    still loaded, reading ``knowledge_base`` materializations after storage id ``cursor`` in order,
    and only while more than ``above`` partitions are live (at most the excess: the cursor stays
    where it is when there is none). Idempotent: a key already gone is skipped, and a re-added one
    retires again after its next load."""
    if above:
        live = len(instance.get_dynamic_partitions(documents_partitions.name))
        if live <= above:
            return RetireTick(cursor=cursor, live=live)
        limit = min(limit, live - above)
    else:
        live = None
    cutoff = (time.time() if now is None else now) - after_days * DAY_S
    flt = dg.AssetRecordsFilter(asset_key=KNOWLEDGE_BASE, after_storage_id=cursor)
    page = instance.fetch_materializations(flt, limit=limit, ascending=True).records
    due = []
    for rec in page:
        if rec.timestamp > cutoff:
            break
        due.append(rec)
    tick = RetireTick(
        cursor=due[-1].storage_id if due else cursor, more=len(due) == len(page) == limit, live=live
    )
    if not due:
        return tick
    first = {}
    for rec in due:  # the earliest due load per key; a later one of the same key is a "later event"
        if rec.partition_key:
            first.setdefault(rec.partition_key, rec)
    keys = list(first)
    live = set(instance.get_existing_dynamic_partitions(documents_partitions.name, keys))
    in_flight = {
        r.tags.get(PARTITION_TAG)
        for r in instance.get_runs(
            dg.RunsFilter(tags={PARTITION_TAG: keys}, statuses=list(IN_PROGRESS_RUN_STATUSES))
        )
    }
    later = _latest_later_events(instance, keys, min(r.storage_id for r in first.values()))
    for key, rec in first.items():
        newest = later.get(key)
        if key not in live:
            tick.kept[key] = "already retired"
        elif key in in_flight:
            tick.kept[key] = "run in flight"
        elif newest and newest[0] > rec.storage_id and newest[1] == "held back":
            tick.kept[key] = "held back since"
        elif newest and newest[0] > rec.storage_id and newest[2] > cutoff:
            tick.kept[key] = "loaded again since"
        else:
            tick.retired.append(key)
    for key in tick.retired:
        try:  # the marker first: never a moment where the document is neither live nor retired
            store.mark_retired(partition_keys.resolve(key, store), key)
        except (partition_keys.PartitionKeyError, ValueError):
            pass  # a key that names no document in the store: nothing to mark, retire it all the same
        instance.delete_dynamic_partition(documents_partitions.name, key)
    return tick


def build_retire_sensor(
    after_days: float = 7.0, per_tick: int = 500, carry_status_cache: bool = True, above: int = 20_000
) -> dg.SensorDefinition:
    """The sensor that retires loaded documents' partitions past ``above`` live ones
    (DAGSTER_OCR_RETIRE_ABOVE, DAGSTER_OCR_RETIRE_AFTER_DAYS, DAGSTER_OCR_RETIRE_PER_TICK);
    ``carry_status_cache``: then rewrites the assets' partition status cache for the keys left
    (DAGSTER_OCR_CARRY_STATUS_CACHE, assets/status_cache.py)."""

    @dg.sensor(
        name="retire_loaded_partitions",
        minimum_interval_seconds=INTERVAL_S,
        default_status=dg.DefaultSensorStatus.RUNNING,
        owners=OWNERS,
        description=f"Every {INTERVAL_S // 60} minutes, once more than {above:,} document partitions are "
        "live (DAGSTER_OCR_RETIRE_ABOVE), delete the partitions of the documents loaded into the "
        f"knowledge base longest ago, at least {after_days:g} day(s) ago (DAGSTER_OCR_RETIRE_AFTER_DAYS), "
        f"down to that number and at most {per_tick} a tick, so the partition picker lists documents "
        "in flight, quarantined or recently loaded, not a million. Below the threshold it retires "
        "nothing. The warehouse keeps every document and the event log its history; re-run a retired "
        "document with `dagster-ocr rerun NAME` or the ingest_documents job (by file name), which "
        "re-add its partition.",
    )
    def retire_loaded_partitions(context: dg.SensorEvaluationContext, store: DocumentStoreResource):
        cursor = json.loads(context.cursor)["storage_id"] if context.cursor else None
        tick = retire_loaded(context.instance, store.store(), cursor, after_days, per_tick, above=above)
        context.update_cursor(json.dumps({"storage_id": tick.cursor}))
        if carry_status_cache:
            status_cache.carry_status_cache(
                context.instance, status_cache.document_asset_keys(context.repository_def)
            )
        kept = {}
        for why in tick.kept.values():
            kept[why] = kept.get(why, 0) + 1
        summary = f"retired {len(tick.retired)} partition(s)" + (
            ", kept " + ", ".join(f"{n} ({why})" for why, n in kept.items()) if kept else ""
        )
        if tick.retired or tick.kept:
            context.log.info(summary + (": " + ", ".join(tick.retired[:20]) if tick.retired else ""))
        if tick.retired or tick.kept:
            return dg.SkipReason(summary)
        if tick.live is not None and tick.live <= above:
            return dg.SkipReason(
                f"{tick.live:,} live partition(s), not more than {above:,} (DAGSTER_OCR_RETIRE_ABOVE): "
                "nothing to retire"
            )
        return dg.SkipReason("no loaded document due to retire")

    return retire_loaded_partitions


__all__ = ["RetireTick", "build_retire_sensor", "retire_loaded"]
