"""Retiring loaded documents' partitions (issue 39, option 2): which retire, that the inbox sensor
does not take a retired document for new, that its history stays, and that a re-run by name adds
its partition again (the CLI's backfill, the ``ingest_documents`` job), on a real instance in a
temporary folder with small real PDFs from the corpus."""

from __future__ import annotations

import argparse
import shutil
import textwrap
import time
from pathlib import Path

import dagster as dg
import pytest
from dagster._core.definitions.reconstruct import ReconstructableRepository

from assets import backfill_cli
from assets.batches import BATCH_JOB, _readd, batch_run_config, document_keys
from assets.partitions import documents_partitions
from assets.retire import DAY_S, KNOWLEDGE_BASE, build_retire_sensor, retire_loaded
from assets.sensors import build_inbox_sensor
from dagster_ocr.deployment import DeploymentSettings
from dagster_ocr.partition_keys import resolve
from resources import DocumentStoreResource, WarehouseResource

REPO = Path(__file__).resolve().parents[2]
#: four small born-digital PDFs (any content: what is tested is the partitions' bookkeeping)
PDFS = [
    "tables/icdar2013/us-004/us-004.pdf",
    "tables/icdar2013/us-039/us-039.pdf",
    "tables/icdar2013/eu-005/eu-005.pdf",
    "tables/tabula-java/eu-002/eu-002.pdf",
]


def _inbox(corpus: Path, root: Path, pdfs=PDFS) -> Path:
    inbox = root / "inbox"
    inbox.mkdir(parents=True, exist_ok=True)
    for rel in pdfs:
        shutil.copy(corpus / rel, inbox / Path(rel).name)
    return inbox


def _sweep(instance, store: DocumentStoreResource):
    """An inbox sensor tick with no cursor (sees every file again, as the nightly sweep does)."""
    ctx = dg.build_sensor_context(instance=instance, cursor=None, resources={"store": store})
    return build_inbox_sensor()(ctx)


def _loaded(instance, key: str) -> None:
    instance.report_runless_asset_event(dg.AssetMaterialization(asset_key=KNOWLEDGE_BASE, partition=key))


def _swept_and_loaded(instance, store: DocumentStoreResource) -> list[str]:
    """The inbox documents' partitions, added by a sweep and each loaded once, in load order."""
    keys = [r.partition_key for r in _sweep(instance, store).run_requests]
    for key in keys:
        _loaded(instance, key)
    return keys


def _held_back(instance, key: str) -> None:
    instance.report_runless_asset_event(dg.AssetObservation(asset_key=KNOWLEDGE_BASE, partition=key))


def _live(instance) -> set[str]:
    return set(instance.get_dynamic_partitions(documents_partitions.name))


def test_the_settings_are_read_from_their_variables():
    default = DeploymentSettings.from_env({})
    assert (default.retire_after_days, default.retire_per_tick) == (7.0, 500)
    env = {"DAGSTER_OCR_RETIRE_AFTER_DAYS": "0.5", "DAGSTER_OCR_RETIRE_PER_TICK": "20"}
    assert DeploymentSettings.from_env(env).retire_after_days == 0.5
    with pytest.raises(ValueError):
        DeploymentSettings.from_env({"DAGSTER_OCR_RETIRE_PER_TICK": "0"})


def test_only_documents_loaded_long_enough_ago_retire_and_a_sweep_does_not_take_them_for_new(
    corpus, tmp_path
):
    inbox = _inbox(corpus, tmp_path)
    store = DocumentStoreResource(inbox_dir=str(inbox), store_dir=str(tmp_path / "store"))
    with dg.instance_for_test() as instance:
        first = _sweep(instance, store)
        keys = {r.tags["dagster-ocr/file_name"]: r.partition_key for r in first.run_requests}
        loaded, quarantined, in_flight, never = (keys[Path(p).name] for p in PDFS)
        for key in (loaded, quarantined, in_flight):
            _loaded(instance, key)
        _held_back(instance, quarantined)  # re-judged since and held back: not loaded any more
        instance.add_run(
            dg.DagsterRun(
                job_name="ingest_document",
                status=dg.DagsterRunStatus.STARTED,
                tags={"dagster/partition": in_flight},
            )
        )
        assert len(_live(instance)) == 4

        # inside the window: nothing retires, and the cursor stays before the loads
        tick = retire_loaded(instance, store.store(), None, after_days=7, limit=100)
        assert tick.retired == [] and tick.cursor is None and _live(instance) == set(keys.values())

        later = time.time() + 8 * DAY_S
        tick = retire_loaded(instance, store.store(), None, after_days=7, limit=100, now=later)
        assert tick.retired == [loaded]
        assert tick.kept == {quarantined: "held back since", in_flight: "run in flight"}
        assert _live(instance) == {quarantined, in_flight, never}
        assert store.store().retired_key(resolve(loaded, store.store())) == loaded
        # its history stays: the event log still has the load, keyed by the retired partition
        mats = instance.fetch_materializations(
            dg.AssetRecordsFilter(asset_key=KNOWLEDGE_BASE, asset_partitions=[loaded]), limit=5
        ).records
        assert len(mats) == 1

        # idempotent: the next pass starts after what it read and retires nothing twice
        again = retire_loaded(instance, store.store(), tick.cursor, after_days=7, limit=100, now=later)
        assert again.retired == [] and again.cursor == tick.cursor
        again = retire_loaded(instance, store.store(), None, after_days=7, limit=100, now=later)
        assert again.retired == [] and again.kept[loaded] == "already retired"

        # a full sweep sees the retired document's file again: known, not a new partition or run
        sweep = _sweep(instance, store)
        assert loaded not in {r.partition_key for r in sweep.run_requests}
        assert loaded not in _live(instance)


def test_a_tick_retires_at_most_its_limit_in_load_order(corpus, tmp_path):
    inbox = _inbox(corpus, tmp_path)
    store = DocumentStoreResource(inbox_dir=str(inbox), store_dir=str(tmp_path / "store"))
    with dg.instance_for_test() as instance:
        keys = _swept_and_loaded(instance, store)
        later = time.time() + 8 * DAY_S
        first = retire_loaded(instance, store.store(), None, 7, limit=3, now=later)
        assert first.retired == keys[:3] and first.more
        second = retire_loaded(instance, store.store(), first.cursor, 7, limit=3, now=later)
        assert second.retired == keys[3:] and not second.more
        assert _live(instance) == set()


def test_past_the_threshold_only_the_excess_retires_oldest_loads_first(corpus, tmp_path):
    # the sensor is on by default: an instance at or below DAGSTER_OCR_RETIRE_ABOVE live
    # partitions never loses one, however old its loads; above it, the oldest loads go, down to it
    inbox = _inbox(corpus, tmp_path)
    store = DocumentStoreResource(inbox_dir=str(inbox), store_dir=str(tmp_path / "store"))
    with dg.instance_for_test() as instance:
        keys = _swept_and_loaded(instance, store)
        later = time.time() + 8 * DAY_S
        below = retire_loaded(instance, store.store(), None, 7, limit=100, now=later, above=4)
        assert below.retired == [] and below.cursor is None and below.live == 4
        assert _live(instance) == set(keys)
        over = retire_loaded(instance, store.store(), None, 7, limit=100, now=later, above=1)
        assert over.retired == keys[:3] and over.live == 4
        assert _live(instance) == {keys[3]}
        # at the threshold now: the next pass retires nothing and keeps its cursor
        again = retire_loaded(instance, store.store(), over.cursor, 7, limit=100, now=later, above=1)
        assert again.retired == [] and again.cursor == over.cursor


def test_the_sensor_is_on_by_default_and_says_why_it_retires_nothing(corpus, tmp_path):
    assert DeploymentSettings.from_env({}).retire_above == 20_000
    sensor = build_retire_sensor()
    assert sensor.default_status == dg.DefaultSensorStatus.RUNNING
    assert "20,000" in sensor.description
    inbox = _inbox(corpus, tmp_path, PDFS[:2])
    store = DocumentStoreResource(inbox_dir=str(inbox), store_dir=str(tmp_path / "store"))
    with dg.instance_for_test() as instance:
        _swept_and_loaded(instance, store)
        ctx = dg.build_sensor_context(instance=instance, resources={"store": store})
        result = build_retire_sensor(after_days=0)(ctx)
        assert isinstance(result, dg.SkipReason)
        assert result.skip_message.startswith("2 live partition(s), not more than 20,000")
        assert len(_live(instance)) == 2


def test_a_document_loaded_again_within_the_window_waits_for_its_new_load(corpus, tmp_path):
    inbox = _inbox(corpus, tmp_path, PDFS[:1])
    store = DocumentStoreResource(inbox_dir=str(inbox), store_dir=str(tmp_path / "store"))
    with dg.instance_for_test() as instance:
        (key,) = [r.partition_key for r in _sweep(instance, store).run_requests]
        _loaded(instance, key)
        time.sleep(0.05)
        _loaded(instance, key)  # re-run: the window restarts from this load
        mats = instance.fetch_materializations(KNOWLEDGE_BASE, limit=2, ascending=True).records
        between = (mats[0].timestamp + mats[1].timestamp) / 2 + 7 * DAY_S
        tick = retire_loaded(instance, store.store(), None, 7, 100, now=between)
        assert tick.retired == [] and tick.kept == {key: "loaded again since"}
        tick = retire_loaded(instance, store.store(), tick.cursor, 7, 100, now=mats[1].timestamp + 8 * DAY_S)
        assert tick.retired == [key]


def test_the_sensor_keeps_its_cursor_and_says_what_it_did(corpus, tmp_path):
    inbox = _inbox(corpus, tmp_path, PDFS[:2])
    store = DocumentStoreResource(inbox_dir=str(inbox), store_dir=str(tmp_path / "store"))
    with dg.instance_for_test() as instance:
        _swept_and_loaded(instance, store)
        sensor = build_retire_sensor(after_days=0, per_tick=1, above=0)
        ctx = dg.build_sensor_context(instance=instance, cursor=None, resources={"store": store})
        result = sensor(ctx)
        assert "retired 1 partition" in result.skip_message
        ctx = dg.build_sensor_context(instance=instance, cursor=ctx.cursor, resources={"store": store})
        assert "retired 1 partition" in sensor(ctx).skip_message
        ctx = dg.build_sensor_context(instance=instance, cursor=ctx.cursor, resources={"store": store})
        assert sensor(ctx).skip_message == "no loaded document due to retire"
        assert _live(instance) == set()


def test_backfill_and_rerun_add_retired_partitions_again_before_launching(monkeypatch):
    sent: list[tuple[str, dict]] = []

    def fake_graphql(url, query, variables=None, timeout=60.0):
        sent.append((query, variables or {}))
        if "repositoriesOrError" in query:
            return {"repositoriesOrError": {"__typename": "RepositoryConnection", "nodes": [
                {"name": "__repository__", "location": {"name": "loc"}, "jobs": [{"name": "ingest_document"}]}
            ]}}  # fmt: skip
        if "partitionSetOrError" in query:  # the second key is live, the first was retired
            names = [{"name": "b-bbbbbbbbbbbb"}, {"name": "y-000000000000"}]
            parts = {"__typename": "Partitions", "results": names}
            return {"partitionSetOrError": {"__typename": "PartitionSet", "partitionsOrError": parts}}
        if "addDynamicPartition" in query:  # one added; another registrar may add one meanwhile
            n = sum(1 for k in variables if k.startswith("k"))
            kinds = ["AddDynamicPartitionSuccess"] + ["DuplicateDynamicPartitionError"] * (n - 1)
            return {f"a{i}": {"__typename": kinds[i]} for i in range(n)}
        return {"launchPartitionBackfill": {"__typename": "LaunchBackfillSuccess", "backfillId": "b1"}}

    monkeypatch.setattr(backfill_cli, "_graphql", fake_graphql)
    monkeypatch.setattr(
        backfill_cli,
        "chosen_documents",
        lambda wh, refs, status: [
            ("a" * 64, "a-aaaaaaaaaaaa", "a.pdf"),
            ("b" * 64, "b-bbbbbbbbbbbb", "b.pdf"),
        ],
    )
    monkeypatch.setattr("dagster_ocr.lake.open_warehouse", lambda *a, **k: None)
    parser = argparse.ArgumentParser()
    backfill_cli.add_backfill_command(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["rerun", "a.pdf", "b.pdf", "--warehouse", "w.duckdb"])
    assert args.func(args) == 0
    kinds = [
        "add"
        if "addDynamicPartition" in q
        else "launch"
        if "launchPartitionBackfill" in q
        else "live"
        if "partitionSetOrError" in q
        else "find"
        for q, _ in sent
    ]
    assert kinds == ["find", "live", "add", "launch"]  # re-added before the backfill that needs them
    # only the retired key is sent (an add of a live key costs as much as a new one)
    assert [v for k, v in sent[2][1].items() if k.startswith("k")] == ["a-aaaaaaaaaaaa"]
    assert sent[3][1]["params"]["partitionNames"] == ["a-aaaaaaaaaaaa", "b-bbbbbbbbbbbb"]
    keys = ["x-000000000000", "y-000000000000", "z-000000000000"]
    assert backfill_cli.readd_partitions("http://x", "loc", "r", keys) == ["x-000000000000"]


@pytest.fixture
def location(tmp_path, monkeypatch):
    data = tmp_path / "data"
    (data / "inbox").mkdir(parents=True)
    defs_file = tmp_path / "retire_defs.py"
    defs_file.write_text(
        textwrap.dedent(
            f"""
            from assets.definitions import build_definitions

            defs = build_definitions({str(data)!r}, ocr_engine="none")
            """
        )
    )
    monkeypatch.chdir(REPO)
    repo = ReconstructableRepository.for_file(str(defs_file), "defs", working_directory=str(REPO))
    with dg.instance_for_test() as instance:
        yield data, repo, instance


@pytest.mark.slow
def test_a_loaded_document_retires_and_reruns_by_file_name_through_ingest_documents(corpus, location):
    """The whole path on a real code location: a document is ingested (its knowledge_base load), its
    partition retires, the launchpad's ``ingest_documents`` re-runs it by file name (its partition
    added again, a new run of the same key), and it retires again after that load."""
    data, repo, instance = location
    _inbox(corpus, data, PDFS[:1])
    store = DocumentStoreResource(inbox_dir=str(data / "inbox"), store_dir=str(data / "store"))
    (request,) = _sweep(instance, store).run_requests
    key, name = request.partition_key, request.tags["dagster-ocr/file_name"]
    first = dg.execute_job(
        repo.get_reconstructable_job("ingest_document"), instance=instance, tags={"dagster/partition": key}
    )
    assert first.success
    tick = retire_loaded(instance, store.store(), None, 0, 100, now=time.time() + 1)
    assert tick.retired == [key] and key not in _live(instance)

    # by file name, as a person types it in the launchpad: the key it was retired under
    wh = WarehouseResource(path=str(data / "warehouse.duckdb"))
    assert document_keys(instance, store.store(), wh, [name]) == [key]
    rerun = dg.execute_job(
        repo.get_reconstructable_job(BATCH_JOB), instance=instance, run_config=batch_run_config([name])
    )
    assert rerun.success and key in _live(instance)
    runs = instance.get_runs(dg.RunsFilter(job_name="ingest_document", tags={"dagster/partition": key}))
    assert len(runs) == 2 and all(r.status == dg.DagsterRunStatus.SUCCESS for r in runs)
    assert _readd(instance, [key]) == []  # already there: nothing added twice
    tick = retire_loaded(instance, store.store(), tick.cursor, 0, 100, now=time.time() + 1)
    assert tick.retired == [key] and key not in _live(instance)
