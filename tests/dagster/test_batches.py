"""Batch mode (DAGSTER_OCR_DOCUMENTS_PER_RUN, issue 39): fewer runs for the daemon to create, and
every document still its own ``ingest_document`` run, with its checks, quarantine and resume.

The batch job starts each document's run in a process of its own (``dagster api execute_run``), so
these tests run it with ``execute_job`` from a code location (a small definitions file over a
scratch data folder) on a persistent test instance: OCR off, tiny PDFs, a few seconds a document.
"""

from __future__ import annotations

import argparse
import textwrap
from pathlib import Path

import dagster as dg
import pymupdf
import pytest
from dagster._core.definitions.reconstruct import ReconstructableRepository

from assets import backfill_cli
from assets.batches import BATCH_JOB, BATCH_OP, BATCH_TAG, batch_run_config, runs_per_tick
from assets.partitions import documents_partitions
from assets.sensors import build_inbox_sensor
from dagster_ocr.deployment import DeploymentSettings
from dagster_ocr.partition_keys import resolve
from dagster_ocr.samples import build_damaged
from resources import DocumentStoreResource

REPO = Path(__file__).resolve().parents[2]


def _pdf(text: str) -> bytes:
    """A one-page born-digital PDF whose text makes its sha256 unique."""
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 90), f"{text}. The quick brown fox jumps over the lazy dog.", fontsize=11)
    data = doc.tobytes(garbage=3, no_new_id=True)
    doc.close()
    return data


def _inbox(root: Path, names: list[str]) -> Path:
    inbox = root / "inbox"
    inbox.mkdir(parents=True, exist_ok=True)
    for name in names:
        (inbox / name).write_bytes(_pdf(name))
    return inbox


def _tick(instance, store, per_run):
    ctx = dg.build_sensor_context(instance=instance, cursor=None, resources={"store": store})
    return build_inbox_sensor(per_run)(ctx)


def test_the_setting_is_read_from_its_variable():
    assert DeploymentSettings.from_env({}).documents_per_run == "auto"
    assert DeploymentSettings.from_env({"DAGSTER_OCR_DOCUMENTS_PER_RUN": "100"}).documents_per_run == 100
    with pytest.raises(ValueError):
        DeploymentSettings.from_env({"DAGSTER_OCR_DOCUMENTS_PER_RUN": "0"})


def test_the_sensor_adds_every_new_partition_at_once_and_requests_a_run_per_batch(tmp_path, monkeypatch):
    inbox = _inbox(tmp_path, [f"doc_{i}.pdf" for i in range(5)])
    store = DocumentStoreResource(inbox_dir=str(inbox), store_dir=str(tmp_path / "store"))
    with dg.instance_for_test() as instance:
        adds: list[list[str]] = []
        original = instance.add_dynamic_partitions
        monkeypatch.setattr(
            instance,
            "add_dynamic_partitions",
            lambda name, keys: adds.append(list(keys)) or original(name, keys),
        )
        result = _tick(instance, store, 2)
        # 5 documents, 2 a run: 3 batch runs, no per-document request, no per-key work left to the daemon
        assert [r.job_name for r in result.run_requests] == [BATCH_JOB] * 3
        keys = [k for r in result.run_requests for k in r.run_config["ops"][BATCH_OP]["config"]["documents"]]
        assert len(keys) == 5 == len(set(keys))
        assert len(adds) == 1 and sorted(adds[0]) == sorted(keys)  # one statement
        assert set(instance.get_dynamic_partitions(documents_partitions.name)) == set(keys)
        assert not result.dynamic_partitions_requests and not result.asset_events  # the batch records them
        assert {r.run_config["ops"][BATCH_OP]["config"]["registered_by"] for r in result.run_requests} == {
            "sensor"
        }
        assert [r.tags["dagster-ocr/documents"] for r in result.run_requests] == ["2", "2", "1"]
        assert len({r.run_key for r in result.run_requests}) == 3
        # a second sweep over the same files requests no document again (only the files' lineage)
        assert [r.job_name for r in _tick(instance, store, 2).run_requests] == ["record_file_sightings"]


def test_one_document_per_run_is_unchanged(tmp_path):
    inbox = _inbox(tmp_path, ["a.pdf", "b.pdf"])
    store = DocumentStoreResource(inbox_dir=str(inbox), store_dir=str(tmp_path / "store"))
    with dg.instance_for_test() as instance:
        result = _tick(instance, store, 1)
        assert [r.job_name for r in result.run_requests] == ["ingest_document"] * 2
        assert len(result.asset_events) == 2
        assert len(instance.get_dynamic_partitions(documents_partitions.name)) == 2


def _queue(max_concurrent_runs: int) -> dict:
    """Instance overrides: the queued run coordinator with this many runs at once (-1: no limit)."""
    return {
        "run_coordinator": {"module": "dagster.core.run_coordinator", "class": "QueuedRunCoordinator"},
        "concurrency": {"runs": {"max_concurrent_runs": max_concurrent_runs}},
    }


def _auto_tick(instance, store, floor):
    ctx = dg.build_sensor_context(instance=instance, cursor=None, resources={"store": store})
    return build_inbox_sensor("auto", min_runs_per_tick=floor)(ctx)


def test_auto_runs_a_tick_of_at_most_r_documents_one_run_per_document(tmp_path):
    # R = max(floor 2, the queue's 4) = 4: a tick of 4 is exactly today's (run keys, registrations)
    inbox = _inbox(tmp_path, [f"doc_{i}.pdf" for i in range(4)])
    store = DocumentStoreResource(inbox_dir=str(inbox), store_dir=str(tmp_path / "store"))
    with dg.instance_for_test(overrides=_queue(4)) as instance:
        result = _auto_tick(instance, store, 2)
        assert [r.job_name for r in result.run_requests] == ["ingest_document"] * 4
        doc_ids = {r.tags["dagster-ocr/doc_id"] for r in result.run_requests}
        assert {r.run_key for r in result.run_requests} == doc_ids
        assert {r.partition_key for r in result.run_requests} == {e.partition for e in result.asset_events}
        assert len(result.asset_events) == 4
        assert set(instance.get_dynamic_partitions(documents_partitions.name)) == {
            r.partition_key for r in result.run_requests
        }


def test_auto_cuts_a_larger_tick_into_r_balanced_batches_covering_each_document_once(tmp_path):
    # R = max(floor 2, the queue's 3) = 3: 8 new documents are 3 batch runs of 3, 3 and 2
    inbox = _inbox(tmp_path, [f"doc_{i}.pdf" for i in range(8)])
    store = DocumentStoreResource(inbox_dir=str(inbox), store_dir=str(tmp_path / "store"))
    with dg.instance_for_test(overrides=_queue(3)) as instance:
        result = _auto_tick(instance, store, 2)
        assert [r.job_name for r in result.run_requests] == [BATCH_JOB] * 3
        configs = [r.run_config["ops"][BATCH_OP]["config"] for r in result.run_requests]
        assert [len(c["documents"]) for c in configs] == [3, 3, 2]
        assert [r.tags["dagster-ocr/documents"] for r in result.run_requests] == ["3", "3", "2"]
        keys = [k for c in configs for k in c["documents"]]
        assert len(keys) == 8 == len(set(keys))
        assert set(instance.get_dynamic_partitions(documents_partitions.name)) == set(keys)
        assert {c["registered_by"] for c in configs} == {"sensor"}
        assert not result.asset_events  # each batch records its own documents' ingestion
        assert len({r.run_key for r in result.run_requests}) == 3


def test_r_is_the_queues_max_concurrent_runs_or_the_floor(tmp_path):
    # at least the queue's limit, and a multiple of it (full rounds): 4 at once, floor 10 -> 12
    for limit, floor, runs in (
        (25, 10, 25),
        (4, 10, 12),
        (2, 10, 10),
        (-1, 10, 10),
        (25, 40, 50),
        (1, 10, 10),
    ):
        with dg.instance_for_test(overrides=_queue(limit)) as instance:
            assert runs_per_tick(instance, floor) == runs, (limit, floor)
    # the limit where deploy/dagster.yaml sets it (concurrency: runs:) wins over the coordinator's
    # own default of 10, which instance.run_coordinator alone would report
    with dg.instance_for_test(overrides=_queue(2)) as instance:
        assert instance.run_coordinator.get_run_queue_config().max_concurrent_runs == 10
        assert runs_per_tick(instance, 1) == 2
    # and a tick follows it: 30 documents on a queue of 25 (floor 10) are 25 runs
    inbox = _inbox(tmp_path, [f"doc_{i}.pdf" for i in range(30)])
    store = DocumentStoreResource(inbox_dir=str(inbox), store_dir=str(tmp_path / "store"))
    with dg.instance_for_test(overrides=_queue(25)) as instance:
        result = _auto_tick(instance, store, 10)
        assert len(result.run_requests) == 25
        keys = [k for r in result.run_requests for k in r.run_config["ops"][BATCH_OP]["config"]["documents"]]
        assert len(keys) == 30 == len(set(keys))


def test_the_deployment_variables_reach_the_sensor(tmp_path):
    from assets.definitions import definitions_from_env

    env = {"DAGSTER_OCR_DATA_DIR": str(tmp_path), "DAGSTER_OCR_OCR_ENGINE": "none"}
    described = {}
    for value in ("auto", "1", "7"):
        defs = definitions_from_env(
            env | {"DAGSTER_OCR_DOCUMENTS_PER_RUN": value, "DAGSTER_OCR_RUNS_PER_TICK": "12"}
        )
        described[value] = defs.resolve_sensor_def("inbox_sensor").description
    assert "at least 12, and a multiple of the run queue's max_concurrent_runs" in described["auto"]
    assert "ingest_documents" not in described["1"]
    assert "one ingest_documents run per 7 new documents" in described["7"]


@pytest.fixture
def location(tmp_path, monkeypatch):
    """A code location over a scratch data folder (OCR off), as a file the document processes load."""
    data = tmp_path / "data"
    (data / "inbox").mkdir(parents=True)
    defs_file = tmp_path / "batch_defs.py"
    defs_file.write_text(
        textwrap.dedent(
            f"""
            from assets.definitions import build_definitions

            defs = build_definitions({str(data)!r}, ocr_engine="none", documents_per_run=2)
            """
        )
    )
    monkeypatch.chdir(REPO)
    repo = ReconstructableRepository.for_file(str(defs_file), "defs", working_directory=str(REPO))
    with dg.instance_for_test() as instance:
        yield data, repo, instance


def _register(instance, data: Path, names: dict[str, bytes]) -> list[str]:
    """Drop files in the inbox and let the sensor register them; their partition keys, in order."""
    for name, content in names.items():
        (data / "inbox" / name).write_bytes(content)
    store = DocumentStoreResource(inbox_dir=str(data / "inbox"), store_dir=str(data / "store"))
    result = _tick(instance, store, 100)
    return result.run_requests[0].run_config["ops"][BATCH_OP]["config"]["documents"]


def _batch(repo, instance, keys, **kwargs):
    return dg.execute_job(
        repo.get_reconstructable_job(BATCH_JOB),
        instance=instance,
        run_config=batch_run_config(keys, "sensor"),
        raise_on_error=False,
        **kwargs,
    )


def _document_runs(instance, batch_id):
    return instance.get_runs(dg.RunsFilter(job_name="ingest_document", tags={BATCH_TAG: batch_id}))


def _fake_webserver(monkeypatch, jobs: list[str]) -> list[dict]:
    """A webserver whose repository holds ``jobs`` and that launches every run asked for: the
    ``launchRun`` parameters it received, in order (filled as the CLI calls it)."""
    launched: list[dict] = []

    def fake_graphql(url, query, variables=None, timeout=60.0):
        if "repositoriesOrError" in query:
            return {"repositoriesOrError": {"__typename": "RepositoryConnection", "nodes": [
                {"name": "__repository__", "location": {"name": "loc"}, "jobs": [{"name": j} for j in jobs]}
            ]}}  # fmt: skip
        launched.append(variables["params"])
        return {"launchRun": {"__typename": "LaunchRunSuccess", "run": {"runId": f"r{len(launched)}"}}}

    monkeypatch.setattr(backfill_cli, "_graphql", fake_graphql)
    return launched


def _launched_by_cli(monkeypatch, warehouse: str, names: list[str], per_run: int) -> list[dict]:
    """What `dagster-ocr backfill ingest_document NAMES --per-run N` sends to the webserver."""
    launched = _fake_webserver(monkeypatch, ["ingest_document", BATCH_JOB])
    parser = argparse.ArgumentParser()
    backfill_cli.add_backfill_command(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(
        ["backfill", "ingest_document", *names, "--warehouse", warehouse, "--per-run", str(per_run)]
    )
    assert args.func(args) == 0
    return launched


@pytest.mark.slow
def test_a_batch_runs_each_document_in_its_own_run_with_checks_quarantine_resume_and_old_keys(
    location, monkeypatch
):
    """One batch over: a document an old instance ran under its bare-sha256 partition (named by file
    name through `backfill --per-run`), a damaged document (quarantined), and a key that names no
    document (its run fails); then the batch's resume. Four document processes in all."""
    data, repo, instance = location
    good = _pdf("a good contract")
    registered = _register(instance, data, {"good.pdf": good, "damaged.pdf": build_damaged(good)})
    store = DocumentStoreResource(inbox_dir=str(data / "inbox"), store_dir=str(data / "store")).store()
    by_name = {store.get(resolve(k, store)).file_name: k for k in registered}
    # good.pdf as an instance from before readable keys ran it: its own run, partition = its sha256
    doc_id = resolve(by_name["good.pdf"], store)
    instance.add_dynamic_partitions(documents_partitions.name, [doc_id])
    old = dg.execute_job(
        repo.get_reconstructable_job("ingest_document"), instance=instance, tags={"dagster/partition": doc_id}
    )
    assert old.success
    # named by file name, it resolves to the key the warehouse recorded: no migration
    launched = _launched_by_cli(monkeypatch, str(data / "warehouse.duckdb"), ["good.pdf"], per_run=50)
    assert len(launched) == 1 and launched[0]["selector"]["jobName"] == BATCH_JOB
    assert launched[0]["runConfigData"]["ops"][BATCH_OP]["config"]["documents"] == [doc_id]
    keys = [doc_id, by_name["damaged.pdf"], "no_such_document-0123456789ab"]

    result = _batch(repo, instance, keys)
    assert not result.success  # one document run failed: the batch says so, after running the rest
    batch_id = result.run_id
    first_runs = _document_runs(instance, batch_id)
    runs = {r.tags["dagster/partition"]: r for r in first_runs}
    assert len(first_runs) == 3 and set(runs) == set(keys)
    good_run, damaged_run, bad_run = (runs[k] for k in keys)
    assert good_run.status == damaged_run.status == dg.DagsterRunStatus.SUCCESS
    assert bad_run.status == dg.DagsterRunStatus.FAILURE
    # the old document re-ran as a new run of its same partition
    assert good_run.run_id != old.run_id
    # each document run is the document's own: its tags, its checks, its verdict
    assert good_run.tags["dagster-ocr/file_name"] == "good.pdf"
    assert good_run.tags["dagster-ocr/job"] == "ingest"
    assert good_run.tags["dagster-ocr/outcome"] == "parsed"
    assert damaged_run.tags["dagster-ocr/file_name"] == "damaged.pdf"
    assert damaged_run.tags["dagster-ocr/outcome"] in ("quarantined", "failed")
    checks = instance.event_log_storage.get_asset_check_execution_history(
        dg.AssetCheckKey(dg.AssetKey("duckdb_tables"), "document_parsed"), limit=10
    )
    by_run = {c.run_id: c for c in checks}
    assert good_run.run_id in by_run and damaged_run.run_id in by_run
    # ingestion recorded by the batch, per document, as its turn came
    mats = instance.fetch_materializations(dg.AssetKey("source_documents"), limit=10).records
    assert {m.partition_key for m in mats} == set(keys[:2])
    # the batch's time limit followed the documents in flight
    assert int(instance.get_run_by_id(batch_id).tags["dagster/max_runtime"]) > 0

    # resume: re-executing the failed batch runs only what did not succeed
    again = dg.execute_job(
        repo.get_reconstructable_job(BATCH_JOB),
        instance=instance,
        reexecution_options=dg.ReexecutionOptions.from_failure(batch_id, instance),
        raise_on_error=False,
    )
    assert not again.success
    first = {r.run_id for r in first_runs}
    reruns = [r for r in _document_runs(instance, batch_id) if r.run_id not in first]
    assert [r.tags["dagster/partition"] for r in reruns] == [keys[2]]


def test_backfill_per_run_launches_one_batch_per_n_documents(monkeypatch, tmp_path):
    launched = _fake_webserver(monkeypatch, [BATCH_JOB])
    keys = [f"doc_{i}-{i:012x}" for i in range(7)]
    names = [f"doc_{i}.pdf" for i in range(7)]
    ids = backfill_cli.launch_batches("http://x", keys, names, per_run=3)
    assert ids == ["r1", "r2", "r3"]
    assert [len(p["runConfigData"]["ops"][BATCH_OP]["config"]["documents"]) for p in launched] == [3, 3, 1]
    tags = {t["key"]: t["value"] for t in launched[0]["executionMetadata"]["tags"]}
    assert tags["dagster-ocr/documents"] == "3" and tags["dagster-ocr/launched_by"] == "dagster-ocr backfill"
    assert tags["dagster-ocr/covers"].startswith("doc_0.pdf, doc_1.pdf")


def test_a_batch_waits_while_another_run_of_the_document_is_in_flight():
    import logging
    import threading
    import time
    from types import SimpleNamespace

    from assets.batches import _wait_for_other_runs

    key = "a-0123456789ab"
    with dg.instance_for_test() as instance:
        other = instance.add_run(
            dg.DagsterRun(
                job_name="ingest_document",
                status=dg.DagsterRunStatus.STARTED,
                tags={"dagster/partition": key},
            )
        )
        context = SimpleNamespace(instance=instance, log=logging.getLogger("test"))
        start = time.monotonic()
        _wait_for_other_runs(context, "another-0123456789ab", 60)  # another document: no wait
        assert time.monotonic() - start < 1
        threading.Timer(1.5, lambda: instance.report_run_failed(other)).start()
        _wait_for_other_runs(context, key, 60)  # waits until the other run ends
        assert 1.4 < time.monotonic() - start < 10
        instance.add_run(
            dg.DagsterRun(
                job_name="ingest_document",
                status=dg.DagsterRunStatus.STARTED,
                tags={"dagster/partition": key},
            )
        )
        start = time.monotonic()
        _wait_for_other_runs(context, key, 0.5)  # a run left "started" by a dead process: not forever
        assert time.monotonic() - start < 5


def _cli_auto(monkeypatch, n: int, limit: int) -> tuple[list[dict], list[list[str]]]:
    """`dagster-ocr backfill ingest_document <n documents> --per-run auto` against a webserver whose
    queue runs ``limit`` runs at once: the batch runs launched, and the plain backfills' keys."""
    import dagster_ocr.lake

    docs = [(f"{i:064x}", f"doc_{i}-{i:012x}", f"doc_{i}.pdf") for i in range(n)]
    monkeypatch.setattr(dagster_ocr.lake, "open_warehouse", lambda *a, **k: None)
    monkeypatch.setattr(backfill_cli, "chosen_documents", lambda wh, refs, status: docs)
    launched = _fake_webserver(monkeypatch, ["ingest_document", BATCH_JOB])
    graphql = backfill_cli._graphql

    def with_queue(url, query, variables=None, timeout=60.0):
        if "runQueueConfig" in query:
            return {"instance": {"runQueueConfig": {"maxConcurrentRuns": limit}}}
        return graphql(url, query, variables, timeout)

    monkeypatch.setattr(backfill_cli, "_graphql", with_queue)
    backfills: list[list[str]] = []
    monkeypatch.setattr(
        backfill_cli, "launch_backfill", lambda url, job, keys, names: backfills.append(list(keys)) or "b1"
    )
    parser = argparse.ArgumentParser()
    backfill_cli.add_backfill_command(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["backfill", "ingest_document", "x", "--warehouse", "w", "--per-run", "auto"])
    assert args.func(args) == 0
    return launched, backfills


def test_backfill_per_run_auto_batches_only_past_r_documents(monkeypatch):
    monkeypatch.setenv("DAGSTER_OCR_RUNS_PER_TICK", "4")
    # 4 documents, R = max(4, the queue's 2): the usual backfill, one run per document
    launched, backfills = _cli_auto(monkeypatch, 4, limit=2)
    assert not launched and len(backfills) == 1 and len(backfills[0]) == 4
    # 11 documents, R = max(4, the queue's 5) = 5: five balanced batch runs, every document once
    launched, backfills = _cli_auto(monkeypatch, 11, limit=5)
    assert not backfills
    batches_run = [p["runConfigData"]["ops"][BATCH_OP]["config"]["documents"] for p in launched]
    assert [len(b) for b in batches_run] == [3, 2, 2, 2, 2]
    assert sorted(k for b in batches_run for k in b) == sorted(f"doc_{i}-{i:012x}" for i in range(11))


def test_per_run_refuses_junk():
    assert backfill_cli.per_run_arg("auto") == "auto" and backfill_cli.per_run_arg("25") == 25
    for junk in ("-1", "many", "2.5"):
        with pytest.raises(argparse.ArgumentTypeError, match="'auto' or a number"):
            backfill_cli.per_run_arg(junk)
