"""The code location that ``dagster dev``, or dagster-webserver plus dagster-daemon, loads: ``defs``.

Where the data lives is a deployment setting, read once when the code location loads:

- ``DAGSTER_OCR_DATA_DIR``: the data folder (default ``data``): store/ (kept copies of every
  document), assets/ (stage outputs) and ocr_pages/ (OCR'd pages, checkpointed page by page).
  Every process that runs a step must see the same folder: on one machine a local disk, past one
  machine a shared volume (see deploy/k8s.md).
- ``DAGSTER_OCR_WAREHOUSE``: the DuckDB file (default ``<data>/warehouse.duckdb``), or a lake:
  ``ducklake:postgres:dbname=NAME host=... user=...`` (DuckLake, many writer processes; docs/lake.md).
- ``DAGSTER_OCR_LAKE_DATA``: the lake's Parquet data (a shared folder, or ``s3://...``).
- ``DAGSTER_OCR_INBOX``: where new documents arrive (default ``<data>/inbox``).
- ``DAGSTER_OCR_SETTINGS``: an optional settings file (JSON or YAML).
- ``DAGSTER_OCR_OCR_ENGINE``: overrides ``settings.ocr.engine`` ("rapidocr", or "none").
- ``DAGSTER_OCR_DOCUMENTS_PER_RUN``, ``DAGSTER_OCR_RUNS_PER_TICK``: batch mode (default auto: a tick
  with more new documents than R (at least 10 and the run queue's max_concurrent_runs, a multiple of
  it) is cut into R ``ingest_documents`` runs; 1: one run per document always): see dagster_ocr.deployment
  and docs/configuration.md.
- ``DAGSTER_OCR_RETIRE_ABOVE``, ``DAGSTER_OCR_RETIRE_AFTER_DAYS``, ``DAGSTER_OCR_RETIRE_PER_TICK``:
  when the ``retire_loaded_partitions`` sensor retires a loaded document's partition (past 20,000
  live partitions, loaded 7 days ago, 500 a tick; assets/retire.py, docs/scale.md).
- ``DAGSTER_OCR_CARRY_STATUS_CACHE``: the inbox and retire sensors keep the document assets'
  partition status cache valid across their key changes (default on; assets/status_cache.py).
- ``DAGSTER_OCR_GPU_TARGET`` (and optionally ``DAGSTER_OCR_GPU_DRAFT``): local checkpoint folders;
  when set, OCR runs on the ``GpuOcrResource`` (transformers target plus draft, speculative
  decoding) instead of the CPU engine. Its other fields are set in the launchpad or in code.

None of them is a secret; the instance's secrets (the Postgres password) live in the instance's
dagster.yaml as ``env:`` references (deploy/dagster.yaml).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import dagster as dg

import assets.dagster_warnings  # noqa: F401  # before the definitions below
from assets.alerts import alert_asset_checks, alert_sensors, with_freshness_policies
from assets.batches import ingest_documents
from assets.documents import document_assets
from assets.lake import build_lake_compaction_schedule, lake_maintenance_job
from assets.page_ranges import ocr_page_ranges, ocr_ranges_then_ingest
from assets.retire import build_retire_sensor
from assets.review import quarantine, quarantine_sensor, refresh_quarantine_job
from assets.sensors import (
    build_inbox_sensor,
    document_job,
    nightly_ingestion,
    record_files_job,
    reload_job,
)
from assets.snapshot import publish_snapshot_job, snapshot_sensor
from assets.vectors import PLAN_IO_MANAGER, VectorPlanIOManager
from dagster_ocr.deployment import DeploymentSettings
from dagster_ocr.lake import is_lake_spec
from resources import (
    DocumentStoreResource,
    GpuOcrResource,
    OcrEngineResource,
    OcrResource,
    SettingsResource,
    WarehouseResource,
)
from resources.notifier import NotifierResource
from resources.stage_outputs import StageOutputsIOManager


def build_definitions(
    data_dir: str | Path = "data",
    warehouse_path: str | Path | None = None,
    inbox_dir: str | Path | None = None,
    settings_file: str | None = None,
    overrides_json: str = "{}",
    ocr_engine: str | None = None,
    ocr: OcrEngineResource | None = None,
    lake_data_path: str | None = None,
    documents_per_run: int | str = "auto",
    runs_per_tick: int = 10,
    retire_after_days: float = 7.0,
    retire_per_tick: int = 500,
    retire_above: int = 20_000,
    carry_status_cache: bool = True,
) -> dg.Definitions:
    """Definitions over one data folder: inbox/, store/ (kept copies), assets/ (stage outputs).

    ``ocr`` replaces the CPU OCR resource (e.g. a ``GpuOcrResource``); ``ocr_engine`` overrides
    the engine the settings name ("none" disables OCR). ``warehouse_path`` may name a lake
    (``ducklake:postgres:...``, its data under ``lake_data_path``). ``documents_per_run`` / ``runs_per_tick``:
    when the inbox sensor requests ``ingest_documents`` batch runs instead of one run per document
    ("auto": only for a tick with more new documents than R, at least ``runs_per_tick`` and the run
    queue's max_concurrent_runs, a multiple of the latter; N > 1: always, N a run; 1: never).
    ``retire_after_days`` / ``retire_per_tick`` / ``retire_above``: when ``retire_loaded_partitions``
    retires a loaded document's partition, how many a tick, and above how many live partitions
    (assets/retire.py). ``carry_status_cache``: both
    sensors keep the assets' partition status cache valid across their key changes
    (assets/status_cache.py).
    """
    data = Path(data_dir)
    warehouse = str(warehouse_path or data / "warehouse.duckdb")
    settings = SettingsResource(settings_file=settings_file, overrides_json=overrides_json)
    return dg.Definitions(
        assets=[*with_freshness_policies(document_assets), quarantine],
        asset_checks=alert_asset_checks,
        jobs=[
            document_job,
            ingest_documents,
            reload_job,
            record_files_job,
            refresh_quarantine_job,
            publish_snapshot_job,
            lake_maintenance_job,
            ocr_page_ranges,
        ],
        sensors=[
            build_inbox_sensor(documents_per_run, carry_status_cache, runs_per_tick),
            build_retire_sensor(retire_after_days, retire_per_tick, carry_status_cache, retire_above),
            snapshot_sensor,
            quarantine_sensor,
            ocr_ranges_then_ingest,
            *alert_sensors,
        ],
        schedules=[nightly_ingestion, build_lake_compaction_schedule(lake=is_lake_spec(warehouse))],
        # one process per run, not per step: the stages are a chain, so per-step processes only
        # add start-up time (~5-40 s each on 2 cores) and reload the OCR engine; pools still apply
        executor=dg.in_process_executor,
        resources={
            "store": DocumentStoreResource(
                inbox_dir=str(inbox_dir or data / "inbox"), store_dir=str(data / "store")
            ),
            "warehouse": WarehouseResource(path=warehouse, lake_data_path=lake_data_path),
            "settings": settings,
            "ocr": ocr or OcrResource(engine=ocr_engine),
            "notifier": NotifierResource(),
            # stage outputs (pickled core objects, stamped with their version) per asset and
            # partition, so one stage can be re-run later without re-running the ones before it
            # (the settings: only to upgrade a text-stage output stored before it carried its own)
            "io_manager": StageOutputsIOManager(base_dir=str(data / "assets"), settings=settings),
            # the vector plan between kb_vectors' ops: one file per document, removed once stored
            PLAN_IO_MANAGER: VectorPlanIOManager(base_dir=str(data / "assets")),
        },
    )


def definitions_from_env(environ: Mapping[str, str] | None = None) -> dg.Definitions:
    """The definitions a deployment gets: paths and the OCR engine from ``DAGSTER_OCR_*`` variables."""
    env = os.environ if environ is None else environ
    deployment = DeploymentSettings.from_env(env)
    return build_definitions(
        data_dir=env.get("DAGSTER_OCR_DATA_DIR") or "data",
        warehouse_path=env.get("DAGSTER_OCR_WAREHOUSE") or None,
        inbox_dir=env.get("DAGSTER_OCR_INBOX") or None,
        settings_file=env.get("DAGSTER_OCR_SETTINGS") or None,
        ocr_engine=env.get("DAGSTER_OCR_OCR_ENGINE") or None,
        lake_data_path=env.get("DAGSTER_OCR_LAKE_DATA") or None,
        documents_per_run=deployment.documents_per_run,
        runs_per_tick=deployment.runs_per_tick,
        retire_after_days=deployment.retire_after_days,
        retire_per_tick=deployment.retire_per_tick,
        retire_above=deployment.retire_above,
        carry_status_cache=deployment.carry_status_cache,
        ocr=GpuOcrResource(
            target_path=env["DAGSTER_OCR_GPU_TARGET"], draft_path=env.get("DAGSTER_OCR_GPU_DRAFT")
        )
        if env.get("DAGSTER_OCR_GPU_TARGET")
        else None,
    )


defs = definitions_from_env()
