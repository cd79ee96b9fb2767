"""Dagster resources: thin adapters that build the core's objects from flat config."""

from resources.core import DocumentStoreResource, OcrResource, SettingsResource, WarehouseResource

__all__ = ["DocumentStoreResource", "OcrResource", "SettingsResource", "WarehouseResource"]
