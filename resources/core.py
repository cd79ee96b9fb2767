"""Resources for the document store, the warehouse, settings and the OCR engine.

Config stays flat (Dagster rejects nested pydantic models in a resource); the full settings tree
lives in an optional settings file plus a JSON object of overrides.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import dagster as dg

from dagster_ocr.checkpoints import OcrCheckpoints
from dagster_ocr.ingest import DocumentStore
from dagster_ocr.lake import is_lake_spec, open_warehouse
from dagster_ocr.ocr import get_engine
from dagster_ocr.ocr.base import OcrEngine, OcrSettings
from dagster_ocr.settings import Settings
from dagster_ocr.warehouse import Warehouse


class DocumentStoreResource(dg.ConfigurableResource):
    """Where new documents arrive (inbox), where the pipeline keeps its copy of each (store), and
    where the text stage checkpoints OCR'd pages (default: ``ocr_pages/`` beside the store)."""

    inbox_dir: str = "data/inbox"
    store_dir: str = "data/store"
    checkpoint_dir: str | None = None

    def store(self) -> DocumentStore:
        return DocumentStore(Path(self.store_dir))

    def ocr_checkpoints(self) -> OcrCheckpoints:
        root = Path(self.checkpoint_dir) if self.checkpoint_dir else Path(self.store_dir).parent / "ocr_pages"
        return OcrCheckpoints(root)


class WarehouseResource(dg.ConfigurableResource):
    """The warehouse analysts query: a DuckDB file (default), or a DuckLake that many processes write.

    Chosen by ``path`` alone: ``ducklake:postgres:dbname=NAME host=... user=...`` is a lake (its
    catalog in that PostgreSQL database, its Parquet data under ``lake_data_path``: a shared folder
    or an object store URL); anything else is a DuckDB file. In a lake no writer pool is needed
    (raise the ``duckdb_writer`` pool's limit, see docs/lake.md) and there is no snapshot copy.
    """

    path: str = "data/warehouse.duckdb"
    #: the lake's Parquet data (DuckLake ``DATA_PATH``); needed to create a lake, recorded in it after
    lake_data_path: str | None = None
    #: publish ``<stem>.snapshot.duckdb`` after a document's writes, for analysts to query while
    #: runs write (DuckDB locks the live file)
    publish_snapshot: bool = True
    #: the most of the writers' time snapshot copies may take: a copy is made after a document
    #: only when the last one took at most this share of the time since (a small warehouse: every
    #: document; a 2 GB one: at most every 20-30 s); None copies after every document whatever it costs
    snapshot_max_share: float | None = 0.1

    def warehouse(self) -> Warehouse:
        return open_warehouse(self.path, self.lake_data_path)

    @property
    def is_lake(self) -> bool:
        return is_lake_spec(self.path)

    def publish(self) -> Path | None:
        """Publish the snapshot if it is due; None when skipped (off, a lake, or recorded as pending)."""
        if not self.publish_snapshot or self.is_lake:
            return None
        return self.warehouse().publish_snapshot(max_share=self.snapshot_max_share)


class SettingsResource(dg.ConfigurableResource):
    """Pipeline settings: an optional JSON/YAML file, then a JSON object of overrides on top.

    Example override from the launchpad: ``{"tables": {"merge": false}}`` (no joining of
    tables across page breaks).
    """

    settings_file: str | None = None
    overrides_json: str = "{}"

    def load(self) -> Settings:
        overrides: dict[str, Any] = json.loads(self.overrides_json or "{}")
        return Settings.load(self.settings_file, overrides)


# One engine per process and configuration: loading OCR models is the expensive part, and Dagster
# builds resources per run (and per step in multiprocess runs).
_ENGINES: dict[str, OcrEngine | None] = {}
_ENGINES_LOCK = threading.Lock()


class OcrEngineResource(dg.ConfigurableResource):
    """What the text asset needs from an OCR resource: an engine for given OCR settings.

    Implementations: ``OcrResource`` (CPU engines, default) and ``GpuOcrResource`` (a transformers
    target plus a draft model, speculative decoding). Pick one in ``build_definitions``.
    """

    def get_engine(self, settings: OcrSettings) -> OcrEngine | None:
        raise NotImplementedError


class OcrResource(OcrEngineResource):
    """The OCR engine for pages the router sends to OCR.

    ``engine`` overrides ``settings.ocr.engine`` when set ("rapidocr", or "none" to disable OCR);
    every other OCR tunable comes from the pipeline settings.
    """

    engine: str | None = None

    def get_engine(self, settings: OcrSettings) -> OcrEngine | None:
        if self.engine is not None and self.engine != settings.kind:
            # validated: an unknown name fails here; the named engine takes its default settings
            settings = OcrSettings.model_validate({**settings.model_dump(), "engine": self.engine})
        key = settings.model_dump_json()
        with _ENGINES_LOCK:
            if key not in _ENGINES:
                _ENGINES[key] = get_engine(settings)
            return _ENGINES[key]
