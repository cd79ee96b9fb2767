"""The GPU OCR resource: a transformers target model plus a draft for speculative decoding.

Selectable instead of ``OcrResource``: it has the same ``get_engine(settings)`` method, so an asset
that takes ``ocr`` works with either. Models load once per process and configuration (Dagster
builds resources per run and per step). Put the OCR step in the Dagster pool ``gpu`` (one slot per
GPU) so one GPU is never oversubscribed.
"""

from __future__ import annotations

import threading
import typing
from typing import Annotated, Any

from pydantic import BaseModel, Field

from dagster_ocr.ocr.base import OcrEngine
from dagster_ocr.ocr.settings import OcrSettings, TransformersOcrSettings
from dagster_ocr.ocr.speculative import SpeculativeOcrEngine
from resources.core import OcrEngineResource

_ENGINES: dict[str, SpeculativeOcrEngine] = {}
_LOCK = threading.Lock()


def _config_fields(settings_class: type[BaseModel], required: tuple[str, ...]) -> dict[str, Any]:
    """A resource's config fields generated from a settings class: each of its fields (but the
    ``kind`` discriminator) with the same type, constraints, default and description, so the
    launchpad offers and checks exactly what the settings accept, and nothing is declared twice.
    The fields named in ``required`` lose their default and the ``None`` from their type (a
    resource without them has nothing to run)."""
    annotations: dict[str, Any] = {}
    namespace: dict[str, Any] = {"__annotations__": annotations}
    for name, field in settings_class.model_fields.items():
        if name == "kind":
            continue
        kind = field.annotation
        if name in required:  # ``str | None`` -> ``str``
            kind = next(a for a in typing.get_args(kind) if a is not type(None))
        annotations[name] = Annotated[kind, *field.metadata] if field.metadata else kind
        if name in required:
            namespace[name] = Field(description=field.description)
        elif field.default_factory is not None:
            namespace[name] = Field(default_factory=field.default_factory, description=field.description)
        else:
            namespace[name] = Field(field.default, description=field.description)
    return namespace


#: ``GpuOcrResource``'s config: ``TransformersOcrSettings``' fields, generated (see :func:`_config_fields`)
_GpuOcrConfig = type(
    "_GpuOcrConfig",
    (OcrEngineResource,),
    {"__module__": __name__, **_config_fields(TransformersOcrSettings, required=("target_path",))},
)


class GpuOcrResource(_GpuOcrConfig):
    """OCR with a local transformers vision-to-text target and an optional draft (speculative).

    Point ``target_path``/``draft_path`` at folders written by ``save_pretrained`` (for example a
    TrOCR-base target and a TrOCR-small draft with the same tokenizer, or a Qwen2-VL-style OCR
    VLM and a smaller one sharing its tokenizer and image processing); nothing is downloaded.
    Its config is ``TransformersOcrSettings`` (``ocr.engine`` with ``kind: transformers``, in
    docs/configuration.md): every field of it, declared there once, with its type, bounds, default
    and description, and ``target_path`` required.
    """

    def speculative_settings(self) -> TransformersOcrSettings:
        """This resource's config as validated core settings."""
        names = TransformersOcrSettings.model_fields.keys() - {"kind"}
        return TransformersOcrSettings.model_validate({name: getattr(self, name) for name in names})

    def get_engine(self, settings: OcrSettings) -> OcrEngine | None:
        """The loaded speculative engine (one per process and config); None when OCR is disabled."""
        if settings.kind == "none":
            return None
        spec = self.speculative_settings()
        key = spec.model_dump_json()
        with _LOCK:
            if key not in _ENGINES:
                engine = SpeculativeOcrEngine(spec)
                engine.load()
                _ENGINES[key] = engine
            return _ENGINES[key]
