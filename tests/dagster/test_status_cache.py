"""Carrying Dagster's partition status cache across key changes (issue 39): the carried cache equals what
Dagster's own rebuild from the event log gives, and the next status read does not rebuild; on a real
instance in a temporary folder, with real corpus PDFs through the inbox and retire sensors."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import dagster as dg
import pytest
from dagster._core.storage import partition_status_cache as psc

from assets.partitions import documents_partitions
from assets.retire import KNOWLEDGE_BASE
from assets.status_cache import carry_status_cache
from dagster_ocr.deployment import DeploymentSettings
from resources import DocumentStoreResource

PDFS = [
    "tables/icdar2013/us-004/us-004.pdf",
    "tables/icdar2013/us-039/us-039.pdf",
    "tables/icdar2013/eu-005/eu-005.pdf",
]
NAME = documents_partitions.name


def _status(instance, asset: dg.AssetKey):
    """Dagster's status of ``asset`` as the UI reads it: (materialized keys, failed keys)."""
    value = psc.get_and_update_asset_status_cache_value(instance, asset, documents_partitions)
    return (
        set(value.deserialize_materialized_partition_subsets(documents_partitions).get_partition_keys()),
        set(value.deserialize_failed_partition_subsets(documents_partitions).get_partition_keys()),
    )


def _rebuilt(instance, asset: dg.AssetKey):
    """What Dagster's rebuild from the whole event log gives, with the stored cache thrown away."""
    instance.wipe_asset_cached_status([asset])
    return _status(instance, asset)


def _stored_id(instance, asset: dg.AssetKey) -> str:
    return next(iter(instance.get_asset_records([asset]))).asset_entry.cached_status.partitions_def_id


@pytest.fixture
def no_full_rebuild(monkeypatch):
    """Fails a status read that scans every materialization of the asset (no cursor)."""
    real = dg.DagsterInstance.get_materialized_partitions
    calls = []

    def spy(self, asset_key, before_cursor=None, after_cursor=None):
        calls.append(after_cursor)
        return real(self, asset_key, before_cursor=before_cursor, after_cursor=after_cursor)

    monkeypatch.setattr(dg.DagsterInstance, "get_materialized_partitions", spy)
    return calls


def test_a_carried_cache_is_what_a_rebuild_gives_and_the_next_read_does_not_rebuild(no_full_rebuild):
    asset = dg.AssetKey("source_documents")
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions(NAME, ["a", "b", "c", "d"])
        for key in ("a", "b", "c"):
            instance.report_runless_asset_event(dg.AssetMaterialization(asset_key=asset, partition=key))
        assert _status(instance, asset)[0] == {"a", "b", "c"}
        assert no_full_rebuild == [None]  # the first read builds from the history: Dagster's own

        # retire b, a new document e: the stored cache names the old key set
        instance.delete_dynamic_partition(NAME, "b")
        instance.add_dynamic_partitions(NAME, ["e"])
        assert _stored_id(instance, asset) != instance.get_dynamic_partitions_definition_id(NAME)
        (carried,) = carry_status_cache(instance, [asset])
        assert (carried.kept, carried.dropped, carried.looked_up, carried.found) == (2, 1, 2, 0)
        assert _stored_id(instance, asset) == instance.get_dynamic_partitions_definition_id(NAME)
        del no_full_rebuild[:]
        carried_status = _status(instance, asset)
        assert no_full_rebuild == []  # current: read as it is
        assert carried_status == ({"a", "c"}, set())

        # b re-added (a re-run by name): its old materialization counts again, as in a rebuild
        instance.add_dynamic_partitions(NAME, ["b"])
        carry_status_cache(instance, [asset])
        instance.report_runless_asset_event(dg.AssetMaterialization(asset_key=asset, partition="e"))
        del no_full_rebuild[:]
        status = _status(instance, asset)
        assert None not in no_full_rebuild  # only the new events, after the cache's cursor
        assert status[0] == {"a", "b", "c", "e"}
        assert status == _rebuilt(instance, asset)
        assert carry_status_cache(instance, [asset]) == []  # current already: nothing to do

        # new documents the inbox sensor knows were never materialized: not looked up
        instance.add_dynamic_partitions(NAME, ["f", "g"])
        (carried,) = carry_status_cache(instance, [asset], fresh=["f", "g"])
        assert (carried.looked_up, carried.found) == (1, 0)  # d only
        assert _status(instance, asset) == _rebuilt(instance, asset)


def test_failed_keys_stay_failed_and_leave_with_their_key():
    asset = dg.AssetKey("parsed")

    @dg.asset(name="parsed", partitions_def=documents_partitions)
    def parsed(context):
        if context.partition_key == "bad":
            raise ValueError("broken document")

    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions(NAME, ["good", "bad", "gone"])
        for key in ("good", "bad", "gone"):
            dg.materialize([parsed], instance=instance, partition_key=key, raise_on_error=False)
        before = _status(instance, asset)
        assert before == ({"good", "gone"}, {"bad"})
        instance.delete_dynamic_partition(NAME, "gone")
        carry_status_cache(instance, [asset])
        after = _status(instance, asset)
        assert after == ({"good"}, {"bad"})
        assert after == _rebuilt(instance, asset)


def _inbox(corpus: Path, root: Path) -> DocumentStoreResource:
    inbox = root / "inbox"
    inbox.mkdir(parents=True)
    for rel in PDFS:
        shutil.copy(corpus / rel, inbox / Path(rel).name)
    return DocumentStoreResource(inbox_dir=str(inbox), store_dir=str(root / "store"))


def _defs(root: Path, store: DocumentStoreResource, carry: bool) -> dg.Definitions:
    from assets.definitions import build_definitions

    return build_definitions(
        data_dir=root,
        inbox_dir=store.inbox_dir,
        retire_after_days=0,
        retire_per_tick=10,
        retire_above=0,
        carry_status_cache=carry,
    )


@pytest.mark.parametrize("carry", [True, False])
def test_the_inbox_and_retire_sensors_carry_the_cache_unless_turned_off(corpus, tmp_path, carry):
    store = _inbox(corpus, tmp_path)
    defs = _defs(tmp_path, store, carry)
    repo = defs.get_repository_def()
    asset = dg.AssetKey("source_documents")
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions(NAME, ["older"])
        instance.report_runless_asset_event(dg.AssetMaterialization(asset_key=asset, partition="older"))
        _status(instance, asset)  # the UI built the cache once
        inbox = defs.get_sensor_def("inbox_sensor")
        result = inbox(
            dg.build_sensor_context(instance=instance, repository_def=repo, resources={"store": store})
        )
        keys = [r.partition_key for r in result.run_requests if r.partition_key]
        assert len(keys) == len(PDFS)
        current = instance.get_dynamic_partitions_definition_id(NAME)
        assert (_stored_id(instance, asset) == current) is carry
        for event in result.asset_events:
            instance.report_runless_asset_event(event)
        instance.report_runless_asset_event(
            dg.AssetMaterialization(asset_key=KNOWLEDGE_BASE, partition=keys[0])
        )
        _status(instance, asset)
        _status(instance, KNOWLEDGE_BASE)
        time.sleep(0.01)
        retire = defs.get_sensor_def("retire_loaded_partitions")
        retire(dg.build_sensor_context(instance=instance, repository_def=repo, resources={"store": store}))
        assert keys[0] not in instance.get_dynamic_partitions(NAME)
        current = instance.get_dynamic_partitions_definition_id(NAME)
        for key in (asset, KNOWLEDGE_BASE):
            assert (_stored_id(instance, key) == current) is carry
        assert _status(instance, asset)[0] == {"older", *keys[1:]}


def test_the_setting_is_read_from_its_variable():
    assert DeploymentSettings.from_env({}).carry_status_cache is True
    assert DeploymentSettings.from_env({"DAGSTER_OCR_CARRY_STATUS_CACHE": "0"}).carry_status_cache is False


def test_dagster_cannot_wipe_retired_partitions_history_on_a_sql_event_log():
    """Why the cache is carried rather than the history shrunk: 1.13's SQL event log storages
    (SQLite here; PostgreSQL inherits the same method) do not implement a partition wipe."""
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions(NAME, ["a"])
        instance.report_runless_asset_event(
            dg.AssetMaterialization(asset_key=dg.AssetKey("source_documents"), partition="a")
        )
        with pytest.raises(NotImplementedError):
            instance.wipe_asset_partitions(dg.AssetKey("source_documents"), ["a"])
