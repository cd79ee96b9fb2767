"""The code location: ``dagster dev -w workspace.yaml`` loads ``defs`` from here."""

from __future__ import annotations

from pathlib import Path

import dagster as dg

from assets.documents import document_assets
from assets.sensors import document_job, inbox_sensor, nightly_ingestion
from resources import DocumentStoreResource, OcrResource, SettingsResource, WarehouseResource


def build_definitions(
    data_dir: str | Path = "data",
    warehouse_path: str | Path | None = None,
    inbox_dir: str | Path | None = None,
    settings_file: str | None = None,
    overrides_json: str = "{}",
    ocr_engine: str | None = None,
) -> dg.Definitions:
    """Definitions over one data folder: inbox/, store/ (kept copies), assets/ (stage outputs)."""
    data = Path(data_dir)
    return dg.Definitions(
        assets=document_assets,
        jobs=[document_job],
        sensors=[inbox_sensor],
        schedules=[nightly_ingestion],
        resources={
            "store": DocumentStoreResource(
                inbox_dir=str(inbox_dir or data / "inbox"), store_dir=str(data / "store")
            ),
            "warehouse": WarehouseResource(path=str(warehouse_path or data / "warehouse.duckdb")),
            "settings": SettingsResource(settings_file=settings_file, overrides_json=overrides_json),
            "ocr": OcrResource(engine=ocr_engine),
            # stage outputs (pickled core objects) per asset and partition, so one stage can be
            # re-run later without re-running the ones before it
            "io_manager": dg.FilesystemIOManager(base_dir=str(data / "assets")),
        },
    )


defs = build_definitions()
