"""Keeping Dagster's partition status cache of the document assets valid across key changes (issue 39).

The asset page and the partition picker read each asset's partition status (materialized, failed, in
progress) from a cache Dagster stores on the asset's row (``AssetStatusCacheValue``). The cache
names the key set it was built for: a hash of every key of the ``documents`` definition
(``get_serializable_unique_identifier``). Any add (an inbox sensor tick with new files) or delete (a
retire tick) changes that hash, and the next asset page throws the cache away and rebuilds it from
every materialized partition of the asset in the event log (``get_materialized_partitions``, a
``GROUP BY`` over all its materializations, retired documents' included): 5.5 s with 100,000
materialized documents, 17.8 s with 300,000 (docs/scale.md). ``instance.wipe_asset_partitions``
would shrink that history, but the SQL event log storages (SQLite, PostgreSQL) raise
``NotImplementedError`` for it in 1.13.

``carry_status_cache`` does the rebuild's work from the stored cache instead of the history, right
after this code changes the keys: the materialized, failed and in-progress subsets are kept for the
keys still in the definition, and the keys the stored cache does not know as materialized are looked
up for a materialization (one indexed query per 1,000 keys: ``get_latest_storage_id_by_partition``),
so a re-added retired document shows materialized again, as Dagster's rebuild would show it. The
event cursor (``latest_storage_id``) is kept, so Dagster's own incremental update adds what happened
since. It costs the live keys (read once) and a look-up of the keys not known materialized (~1 s per
1,000 at 300,000 materializations on 2 loaded cores; the inbox sensor's new documents are known
unmaterialized and skipped), not the history. What differs from a rebuild: a key not in the stored
cache whose last run failed before materializing (a re-added document that had failed; retired
documents had loaded) is not shown failed until its next run; keys gone from the definition leave
the failed and in-progress subsets as they do in a rebuild. Off with
``DAGSTER_OCR_CARRY_STATUS_CACHE=0``: then the next asset page rebuilds, as Dagster does by default.
Changes made elsewhere (the UI's "Add partition", ``dagster-ocr rerun``'s GraphQL re-add) are
carried at the next tick of ``retire_loaded_partitions`` (every 5 minutes; on by default), which
carries on every tick; the inbox sensor carries only after it adds.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import dagster as dg
from dagster._core.definitions.partitions.utils.base import generate_partition_key_based_definition_id
from dagster._core.events import DagsterEventType
from dagster._core.storage.partition_status_cache import AssetStatusCacheValue

from assets.partitions import documents_partitions

#: partition keys per look-up of their latest materialization
CHUNK = 1000


@dataclass
class Carried:
    """One asset's carried cache: how many keys it kept, dropped and found materialized by look-up."""

    asset: str
    kept: int
    dropped: int
    looked_up: int
    found: int


def carry_status_cache(
    instance: dg.DagsterInstance,
    asset_keys: Iterable[dg.AssetKey],
    partitions_def: dg.DynamicPartitionsDefinition = documents_partitions,
    fresh: Iterable[str] = (),
) -> list[Carried]:
    """Rewrite the stored status cache of each of ``asset_keys`` (partitioned by ``partitions_def``)
    for the definition's current keys, where it was built for other keys. Assets without a stored
    cache, or whose cache is current, are left alone (Dagster builds those itself). ``fresh``: keys
    known never materialized (the inbox sensor's new documents), not looked up."""
    if not instance.can_read_asset_status_cache():
        return []
    events = instance.event_log_storage
    live: list[str] | None = None
    fresh_set = set(fresh)
    out = []
    for record in instance.get_asset_records(list(asset_keys)):
        cached = record.asset_entry.cached_status
        if cached is None or cached.partitions_def_id is None:
            continue
        if live is None:
            live = list(instance.get_dynamic_partitions(partitions_def.name))
            live_id = generate_partition_key_based_definition_id(live)  # Dagster's own id of them
            live_set = set(live)
        if cached.partitions_def_id == live_id:
            continue

        def subset(serialized: str | None) -> set[str]:
            if not serialized:
                return set()
            return set(partitions_def.deserialize_subset(serialized).get_partition_keys())

        known = subset(cached.serialized_materialized_partition_subset)
        materialized = known & live_set
        missing = [k for k in live if k not in materialized and k not in fresh_set]
        found: set[str] = set()
        for start in range(0, len(missing), CHUNK):
            found |= set(
                events.get_latest_storage_id_by_partition(
                    record.asset_entry.asset_key,
                    DagsterEventType.ASSET_MATERIALIZATION,
                    set(missing[start : start + CHUNK]),
                )
            )
        materialized |= found
        failed = subset(cached.serialized_failed_partition_subset) & live_set
        in_progress = subset(cached.serialized_in_progress_partition_subset) & live_set
        empty = partitions_def.empty_subset()
        instance.update_asset_cached_status_data(
            record.asset_entry.asset_key,
            AssetStatusCacheValue(
                latest_storage_id=cached.latest_storage_id,
                partitions_def_id=live_id,
                serialized_materialized_partition_subset=empty.with_partition_keys(materialized).serialize(),
                serialized_failed_partition_subset=empty.with_partition_keys(failed).serialize(),
                serialized_in_progress_partition_subset=empty.with_partition_keys(in_progress).serialize(),
                earliest_in_progress_materialization_event_id=cached.earliest_in_progress_materialization_event_id,
            ),
        )
        out.append(
            Carried(
                asset=record.asset_entry.asset_key.to_user_string(),
                kept=len(known & live_set),
                dropped=len(known - live_set),
                looked_up=len(missing),
                found=len(found),
            )
        )
    return out


def document_asset_keys(repository_def) -> list[dg.AssetKey]:
    """The keys of the repository's assets partitioned by ``documents``, ``source_documents`` (external,
    materialized by the inbox sensor's events) included; none without a repository."""
    if repository_def is None:
        return []
    graph = repository_def.asset_graph
    return [
        key for key in graph.get_all_asset_keys() if graph.get(key).partitions_def == documents_partitions
    ]


__all__ = ["Carried", "carry_status_cache", "document_asset_keys"]
