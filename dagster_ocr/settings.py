"""Every tunable of the pipeline, declared once.

Each stage owns its settings class (next to the code it tunes); this module assembles them into
one ``Settings`` object that can be loaded from a JSON or YAML file and overridden piecewise.
Unknown keys are errors (``extra="forbid"``): a typo in a setting must not be silently ignored.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from dagster_ocr.kb_settings import KbSettings
from dagster_ocr.labels import LabelSettings
from dagster_ocr.limits import LimitSettings
from dagster_ocr.ocr.base import OcrSettings
from dagster_ocr.paragraphs import ParagraphSettings
from dagster_ocr.quality import QualitySettings
from dagster_ocr.tables import TableSettings
from dagster_ocr.textlayer import TextSettings
from dagster_ocr.thumbnails import PreviewSettings


class Settings(BaseModel):
    """All settings of a pipeline run."""

    model_config = ConfigDict(extra="forbid")

    limits: LimitSettings = Field(default_factory=LimitSettings, description="Input limits.")
    text: TextSettings = Field(default_factory=TextSettings, description="Text layer and OCR routing.")
    ocr: OcrSettings = Field(default_factory=OcrSettings, description="The OCR engine.")
    labels: LabelSettings = Field(default_factory=LabelSettings, description="Page-label remapping.")
    tables: TableSettings = Field(default_factory=TableSettings, description="Table extraction and merging.")
    paragraphs: ParagraphSettings = Field(
        default_factory=ParagraphSettings, description="Paragraphs, sections and furniture."
    )
    quality: QualitySettings = Field(default_factory=QualitySettings, description="Quality-gate thresholds.")
    kb: KbSettings = Field(default_factory=KbSettings, description="Knowledge-base chunking.")
    preview: PreviewSettings = Field(
        default_factory=PreviewSettings, description="Page previews shown in the Dagster UI."
    )

    @classmethod
    def load(cls, path: str | Path | None = None, overrides: dict[str, Any] | None = None) -> Settings:
        """Settings from an optional JSON/YAML file, then ``overrides`` (nested dicts) on top."""
        data: dict[str, Any] = {}
        if path:
            text = Path(path).read_text()
            if str(path).endswith((".yaml", ".yml")):
                import yaml  # dagster depends on PyYAML

                data = yaml.safe_load(text) or {}
            else:
                data = json.loads(text)
        for key, value in (overrides or {}).items():
            if isinstance(value, dict) and isinstance(data.get(key), dict):
                data[key] = {**data[key], **value}
            else:
                data[key] = value
        return cls.model_validate(data)


@dataclasses.dataclass(frozen=True, slots=True)
class SettingsSnapshot:
    """The settings one document is parsed under: resolved once, by the text stage, and carried on
    its output (``ExtractedDocument.settings``) to every later stage, so a settings file edited
    between two stages never parses one document under two configurations. The warehouse records
    it on the document's row (``documents.settings_json``, ``settings_hash``); the stages that
    start from the warehouse (the knowledge base, its vectors) read it back from there.
    """

    #: the settings as JSON (``Settings.model_dump_json()``)
    json: str
    #: the first 16 hex digits of the JSON's sha256 (``documents.settings_hash``)
    hash: str

    @classmethod
    def of(cls, settings: Settings) -> SettingsSnapshot:
        return cls.from_json(settings.model_dump_json())

    @classmethod
    def from_json(cls, text: str) -> SettingsSnapshot:
        return cls(text, hashlib.sha256(text.encode()).hexdigest()[:16])

    def settings(self) -> Settings:
        """The settings themselves (validated anew: a field added since gets its default)."""
        return Settings.model_validate_json(self.json)
