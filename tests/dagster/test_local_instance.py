"""`make ui`'s instance (deploy/dagster.local.yaml) queues runs and limits pools like production."""

from __future__ import annotations

import shutil
from pathlib import Path

import dagster as dg
import yaml

from assets.partitions import DUCKDB_WRITER_POOL, OCR_POOL

REPO = Path(__file__).resolve().parents[2]
LOCAL, PRODUCTION = REPO / "deploy" / "dagster.local.yaml", REPO / "deploy" / "dagster.yaml"


def test_the_laptop_instance_has_production_pools_and_a_queue(tmp_path: Path) -> None:
    shutil.copy(LOCAL, tmp_path / "dagster.yaml")
    with dg.DagsterInstance.from_config(str(tmp_path)) as instance:
        assert type(instance.run_coordinator).__name__ == "QueuedRunCoordinator"
        config = instance.get_concurrency_config()
        assert config.run_queue_config.max_concurrent_runs <= 2
        # one run per document, backfill runs included: they carry dagster/partition, not our tags
        limits = config.run_queue_config.tag_concurrency_limits
        assert {"key": "dagster/partition", "value": {"applyLimitPerUniqueValue": True}, "limit": 1} in limits
        for pool in (OCR_POOL, DUCKDB_WRITER_POOL):
            assert instance.event_log_storage.get_concurrency_info(pool).limit == 1
    local, production = (yaml.safe_load(p.read_text()) for p in (LOCAL, PRODUCTION))
    assert local["concurrency"]["pools"] == production["concurrency"]["pools"]
    production_limits = production["concurrency"]["runs"]["tag_concurrency_limits"]
    per_document = [t for t in local["concurrency"]["runs"]["tag_concurrency_limits"] if t["limit"] == 1]
    assert per_document == [t for t in production_limits if t["key"] == "dagster/partition"]


def test_make_ui_starts_on_that_instance() -> None:
    ui = (REPO / "Makefile").read_text().split("\nui:", 1)[1].split("\n\n", 1)[0]
    assert "deploy/dagster.local.yaml" in ui and "DAGSTER_HOME=" in ui and "dagster dev" in ui
