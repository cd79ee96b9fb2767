"""Dagster resources: thin adapters that build the core's objects from flat config."""

from resources.core import (
    DocumentStoreResource,
    OcrEngineResource,
    OcrResource,
    SettingsResource,
    WarehouseResource,
)
from resources.gpu_ocr import GpuOcrResource

__all__ = [
    "DocumentStoreResource",
    "GpuOcrResource",
    "OcrEngineResource",
    "OcrResource",
    "SettingsResource",
    "WarehouseResource",
]
