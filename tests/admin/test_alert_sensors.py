"""The Dagster sensors on an ephemeral instance: they notify on failure histories, stay quiet on
healthy ones, and the freshness checks fail until the watched assets are materialized."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer

import dagster as dg
import pytest

from assets.alerts import (
    alert_asset_checks,
    alert_sensors,
    build_freshness,
    build_health_sensor,
    run_failure_alert_sensor,
    with_freshness_policies,
)
from assets.definitions import build_definitions
from assets.documents import document_assets
from assets.review import quarantine
from dagster_ocr.admin.rules import AlertSettings
from resources.notifier import NotifierResource

HOOK_ENV = "DAGSTER_OCR_TEST_WEBHOOK"


@pytest.fixture
def webhook(monkeypatch) -> Iterator[list[dict]]:
    """A webhook receiver on 127.0.0.1; its URL is in HOOK_ENV for the notifier to read."""
    received: list[dict] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802
            received.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv(HOOK_ENV, f"http://127.0.0.1:{server.server_address[1]}/hook")
    try:
        yield received
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def instance() -> Iterator[dg.DagsterInstance]:
    # in-memory storage: each test gets an empty history, in milliseconds rather than seconds
    with dg.DagsterInstance.ephemeral() as inst:
        yield inst


def _notifier() -> NotifierResource:
    return NotifierResource(webhook_url_env=HOOK_ENV, timeout_s=5)


def _outcomes(instance: dg.DagsterInstance, statuses: list[str]) -> None:
    for i, status in enumerate(statuses):
        instance.report_runless_asset_event(
            dg.AssetMaterialization("duckdb_tables", partition=f"{i:064d}", metadata={"status": status})
        )
    instance.report_runless_asset_event(dg.AssetMaterialization("knowledge_base", partition="0" * 64))


def _tick(instance: dg.DagsterInstance, cursor: str | None = None) -> tuple[dg.SkipReason, str | None]:
    sensor = build_health_sensor(AlertSettings(), minimum_interval_seconds=30)
    context = dg.build_sensor_context(instance=instance, cursor=cursor, resources={"notifier": _notifier()})
    result = sensor(context)
    return result, context.cursor


def test_health_sensor_is_quiet_on_a_healthy_history(instance, webhook):
    _outcomes(instance, ["parsed"] * 30 + ["quarantined"] * 2)
    result, _ = _tick(instance)
    assert webhook == []
    assert "healthy" in result.skip_message


def test_health_sensor_alerts_on_failures_once_then_resolves(instance, webhook):
    _outcomes(instance, ["parsed"] * 18 + ["failed"] * 2)
    result, cursor = _tick(instance)
    assert [b["key"] for b in webhook] == ["failed_rate"]
    assert webhook[0]["severity"] == "critical" and "10.0%" in webhook[0]["title"]
    assert "failed_rate" in result.skip_message
    _tick(instance, cursor)  # same condition on the next tick: not repeated
    assert len(webhook) == 1
    # the documents are re-run and parse: the condition resolves once
    for i in (18, 19):
        instance.report_runless_asset_event(
            dg.AssetMaterialization("duckdb_tables", partition=f"{i:064d}", metadata={"status": "parsed"})
        )
    _, cursor = _tick(instance, cursor)
    assert [b["key"] for b in webhook] == ["failed_rate", "failed_rate"]
    assert webhook[1]["severity"] == "info" and webhook[1]["title"].startswith("resolved")


def test_health_sensor_alerts_on_gpu_memory_held_high(instance, webhook):
    _outcomes(instance, ["parsed"] * 5)
    # event timestamps are "now": shrink the five minutes to 50 ms rather than wait
    for _ in range(3):
        instance.report_runless_asset_event(
            dg.AssetMaterialization(
                "document_text", partition="0" * 64, metadata={"gpu_memory_fraction": 0.93}
            )
        )
        time.sleep(0.03)
    quiet = build_health_sensor(AlertSettings(gpu_memory_duration_s=3600), minimum_interval_seconds=30)
    quiet(dg.build_sensor_context(instance=instance, resources={"notifier": _notifier()}))
    assert webhook == []  # high, but not for long enough
    sensor = build_health_sensor(AlertSettings(gpu_memory_duration_s=0.05), minimum_interval_seconds=30)
    sensor(dg.build_sensor_context(instance=instance, resources={"notifier": _notifier()}))
    assert [b["key"] for b in webhook] == ["gpu_memory:cuda:0"]


@dg.asset(partitions_def=dg.DynamicPartitionsDefinition(name="documents"))
def a_document_step_that_never_reaches_the_warehouse() -> None:
    """A document's run (its first stage) that never gets to duckdb_tables or knowledge_base."""


def test_health_sensor_is_quiet_on_a_fresh_instance(instance, webhook):
    """Before any document landed, "never updated" is no news: no alert, no notification."""
    result, _ = _tick(instance)
    assert webhook == []
    assert "healthy" in result.skip_message and "0 notification(s) sent" in result.skip_message


def test_health_sensor_reports_assets_never_updated_once_a_document_landed_long_enough_ago(instance, webhook):
    instance.add_dynamic_partitions("documents", ["report-0123456789ab"])
    # the document's run, just started: it has max_age_s to reach the watched assets
    dg.materialize(
        [a_document_step_that_never_reaches_the_warehouse],
        instance=instance,
        partition_key="report-0123456789ab",
    )
    sensor = build_health_sensor(AlertSettings(max_age_s=3600), minimum_interval_seconds=30)
    sensor(dg.build_sensor_context(instance=instance, resources={"notifier": _notifier()}))
    assert webhook == []
    # the same history judged with a limit shorter than the time since the document landed
    time.sleep(0.2)
    sensor = build_health_sensor(AlertSettings(max_age_s=0.1), minimum_interval_seconds=30)
    sensor(dg.build_sensor_context(instance=instance, resources={"notifier": _notifier()}))
    assert {b["key"] for b in webhook} == {"stale:knowledge_base", "stale:duckdb_tables"}
    assert all("never updated" in b["title"] for b in webhook)


@dg.asset
def ocr_step_that_runs_out_of_memory() -> None:
    raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")


def test_run_failure_sensor_notifies_with_the_likely_fix(instance, webhook):
    result = dg.materialize([ocr_step_that_runs_out_of_memory], instance=instance, raise_on_error=False)
    assert not result.success
    run = instance.get_run_by_id(result.run_id)
    [failure] = [
        r.event_log_entry.dagster_event
        for r in instance.get_records_for_run(result.run_id, of_type=dg.DagsterEventType.RUN_FAILURE).records
    ]
    context = dg.build_run_status_sensor_context(
        sensor_name="run_failure_alert_sensor",
        dagster_event=failure,
        dagster_instance=instance,
        dagster_run=run,
        resources={"notifier": _notifier()},
    ).for_run_failure()
    run_failure_alert_sensor(context)
    [body] = webhook
    assert body["key"] == f"run_failure:{result.run_id}"
    assert "ocr_step_that_runs_out_of_memory" in body["detail"] and "CUDA out of memory" in body["detail"]
    assert "GPU ran out of memory" in body["action"]


def test_freshness_checks_fail_until_the_assets_are_materialized(instance):
    checks = [d for d in build_freshness() if isinstance(d, dg.AssetChecksDefinition)]
    specs = [dg.AssetSpec("knowledge_base"), dg.AssetSpec("duckdb_tables")]

    def evaluate() -> dict[str, bool]:
        result = dg.materialize(
            [*specs, *checks], instance=instance, selection=dg.AssetSelection.all_asset_checks()
        )
        return {e.asset_key.to_user_string(): e.passed for e in result.get_asset_check_evaluations()}

    assert evaluate() == {"knowledge_base": False, "duckdb_tables": False}
    instance.report_runless_asset_event(dg.AssetMaterialization("knowledge_base", partition="a" * 64))
    assert evaluate() == {"knowledge_base": True, "duckdb_tables": False}


def test_alert_definitions_load_next_to_the_document_assets(tmp_path):
    base = build_definitions(tmp_path)
    defs = dg.Definitions(
        assets=[*with_freshness_policies(document_assets), quarantine],  # the reviewers' list
        jobs=base.jobs,
        sensors=[*base.sensors, *alert_sensors],
        schedules=base.schedules,
        asset_checks=alert_asset_checks,
        resources={**base.resources, "notifier": NotifierResource()},
    )
    dg.Definitions.validate_loadable(defs)
    repo = defs.get_repository_def()
    names = {s.name for s in repo.sensor_defs}
    assert {"run_failure_alert_sensor", "ops_health_sensor", "freshness_checks_sensor"} <= names
    kb = defs.resolve_assets_def("knowledge_base").specs_by_key[dg.AssetKey("knowledge_base")]
    assert kb.freshness_policy is not None


def test_when_documents_landed_is_asked_of_the_first_keys_only(monkeypatch):
    """At a million documents the alert sensors must not read every key on every tick (docs/scale.md)."""
    from assets.alerts import documents_landed_at

    with dg.instance_for_test() as instance:
        assert documents_landed_at(instance) is None
        instance.add_dynamic_partitions("documents", [f"doc_{i}-{i:012x}" for i in range(50)])

        def every_key(*args, **kwargs):
            raise AssertionError("read every document key")

        monkeypatch.setattr(instance, "get_dynamic_partitions", every_key)
        before = time.time()
        assert before - 1 <= documents_landed_at(instance) <= time.time()  # no run yet: landed just now
        instance.add_run(
            dg.DagsterRun(job_name="ingest_document", tags={"dagster/partition": "doc_0-000000000000"})
        )
        landed = documents_landed_at(instance)
        assert landed is not None and landed <= time.time()
