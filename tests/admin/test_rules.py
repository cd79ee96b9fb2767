"""Alert rules fire on synthetic failure histories and stay quiet on healthy ones."""

from __future__ import annotations

import json

import pytest

from dagster_ocr.admin.rules import (
    AlertSettings,
    DocOutcome,
    GpuSample,
    RunInfo,
    deduplicate,
    evaluate_rules,
    failure_rate_alert,
    gpu_memory_alert,
    quarantine_rate_alert,
    run_budget_alerts,
    run_failure_alert,
    staleness_alerts,
)

NOW = 1_800_000_000.0
S = AlertSettings()


def _docs(statuses: list[str], start: float = NOW - 600) -> list[DocOutcome]:
    return [DocOutcome(f"doc{i:03d}", s, start + i, f"file{i}.pdf") for i, s in enumerate(statuses)]


def test_healthy_history_raises_nothing():
    outcomes = _docs(["parsed"] * 200 + ["quarantined"] * 10)
    runs = [
        RunInfo(f"r{i}", "ingest_document", "SUCCESS", NOW - 900, NOW - 800, f"doc{i:03d}") for i in range(5)
    ]
    gpu = [GpuSample(NOW - 600 + 30 * i, 0.60) for i in range(20)]
    updates = {"knowledge_base": NOW - 3600, "duckdb_tables": NOW - 3600}
    assert evaluate_rules(outcomes, runs, gpu, NOW, S, updates) == []


def test_failure_rate_above_one_percent_alerts_with_the_files():
    alert = failure_rate_alert(_docs(["parsed"] * 97 + ["failed"] * 3), NOW, S)
    assert alert is not None and alert.severity == "critical" and alert.key == "failed_rate"
    assert "3.0%" in alert.title and "file97.pdf" in alert.detail
    assert "status = 'failed'" in alert.action


def test_failure_rate_at_threshold_or_outside_window_is_quiet():
    assert failure_rate_alert(_docs(["parsed"] * 99 + ["failed"]), NOW, S) is None  # exactly 1 %
    old = _docs(["failed"] * 50, start=NOW - S.window_s - 1000)
    assert failure_rate_alert(old + _docs(["parsed"] * 20), NOW, S) is None


def test_too_few_documents_are_not_judged():
    assert failure_rate_alert(_docs(["failed"] * (S.min_documents - 1)), NOW, S) is None
    assert failure_rate_alert(_docs(["failed"] * S.min_documents), NOW, S) is not None


def test_a_document_rerun_after_a_fix_counts_once_with_its_latest_outcome():
    outcomes = _docs(["parsed"] * 10) + [DocOutcome("doc000", "failed", NOW - 900)]
    assert failure_rate_alert(outcomes, NOW, S) is None  # doc000 failed, then parsed later
    outcomes = _docs(["parsed"] * 10) + [DocOutcome("doc000", "failed", NOW - 10)]
    assert failure_rate_alert(outcomes, NOW, S) is not None


def test_quarantine_rate_alerts_above_its_own_threshold():
    assert quarantine_rate_alert(_docs(["parsed"] * 8 + ["quarantined"] * 2), NOW, S) is None  # 20 %
    alert = quarantine_rate_alert(_docs(["parsed"] * 7 + ["quarantined"] * 3), NOW, S)
    assert alert is not None and alert.severity == "warning" and "quarantine" in alert.action


def test_runs_over_budget_running_and_finished():
    runs = [
        RunInfo("slow-running", "ingest_document", "STARTED", NOW - S.run_time_budget_s - 60),
        RunInfo("slow-done", "ingest_document", "SUCCESS", NOW - 4000, NOW - 100),
        RunInfo("fast", "ingest_document", "SUCCESS", NOW - 200, NOW - 100),
        RunInfo("old-slow", "ingest_document", "SUCCESS", NOW - 99_000, NOW - 90_000),
        RunInfo("queued", "ingest_document", "QUEUED", None),
    ]
    keys = {a.key for a in run_budget_alerts(runs, NOW, S)}
    assert keys == {"run_over_budget:slow-running", "run_over_budget:slow-done"}


def test_gpu_memory_must_stay_high_for_the_whole_duration():
    high_6min = [GpuSample(NOW - 360 + 30 * i, 0.90) for i in range(13)]
    alert = gpu_memory_alert(high_6min, NOW, S)
    assert alert is not None and "85%" in alert.title
    # a dip inside the last five minutes resets the streak
    dipped = [*high_6min[:-3], GpuSample(NOW - 60, 0.50), *[GpuSample(NOW - 30 + i, 0.9) for i in range(2)]]
    assert gpu_memory_alert(dipped, NOW, S) is None
    # high for two minutes only
    assert gpu_memory_alert(high_6min[-4:], NOW, S) is None
    # high, but the newest sample is stale (the GPU went idle, nothing reported since)
    assert gpu_memory_alert(high_6min, NOW + 3600, S) is None


def test_stale_assets_alert_and_never_materialized_counts_as_stale():
    alerts = staleness_alerts({"knowledge_base": NOW - 30 * 3600, "duckdb_tables": None}, NOW, S)
    assert {a.key for a in alerts} == {"stale:knowledge_base", "stale:duckdb_tables"}
    assert "never updated" in next(a.title for a in alerts if a.key == "stale:duckdb_tables")
    assert staleness_alerts({"knowledge_base": NOW - 3600}, NOW, S) == []


def test_deduplicate_sends_once_repeats_later_and_resolves():
    alert = failure_rate_alert(_docs(["failed"] * 10), NOW, S)
    assert alert is not None
    send, resolved, cursor = deduplicate([alert], None, NOW, 3600)
    assert send == [alert] and resolved == []
    send, resolved, cursor2 = deduplicate([alert], cursor, NOW + 60, 3600)
    assert send == [] and json.loads(cursor2) == json.loads(cursor)
    send, _, cursor3 = deduplicate([alert], cursor2, NOW + 3700, 3600)
    assert send == [alert]
    send, resolved, cursor4 = deduplicate([], cursor3, NOW + 3800, 3600)
    assert send == [] and resolved == ["failed_rate"] and json.loads(cursor4) == {}


@pytest.mark.parametrize(
    ("error", "hint"),
    [
        ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB", "GPU ran out of memory"),
        ('IO Error: Could not set lock on file "w.duckdb"', "DuckDB file"),
        ("EngineError: target checkpoint not found at /models/x", "dagster-ocr doctor"),
        ("ValueError: something new", "Re-execute from failure"),
    ],
)
def test_run_failure_alert_names_the_likely_fix(error, hint):
    alert = run_failure_alert(
        "0123456789abcdef", "ingest_document", error, "ab" * 32, "a.pdf", ["document_text"]
    )
    assert hint in alert.action
    assert alert.severity == "critical" and "a.pdf" in alert.title and "document_text" in alert.detail


def test_settings_reject_unknown_keys():
    with pytest.raises(ValueError):
        AlertSettings.model_validate({"failure_rate": 0.5})
