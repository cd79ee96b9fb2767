"""OCR engines behind one protocol (``OcrEngine``) and the helpers every engine shares.

Engines register a factory in ``ENGINES`` under the ``kind`` of their settings class (the one
``OcrSettings.engine`` holds); the factory imports its backend lazily so that choosing one engine
never imports another's dependencies (torch for a GPU engine, onnxruntime for rapidocr).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dagster_ocr.errors import EngineError
from dagster_ocr.ocr.base import (
    OcrEngine,
    OcrEngineBase,
    OcrLine,
    load_image_pages,
    ocr_lines_to_model,
    ocr_page,
    reading_order,
    render_page,
)
from dagster_ocr.ocr.settings import (
    NoOcrSettings,
    OcrSettings,
    RapidOcrSettings,
    ServedOcrSettings,
    TransformersOcrSettings,
)


def _rapidocr(settings: RapidOcrSettings) -> OcrEngine:
    from dagster_ocr.ocr.rapid import RapidOcrEngine

    return RapidOcrEngine(settings)


def _transformers(settings: TransformersOcrSettings) -> OcrEngine:
    # the checkpoints are local folders (ocr.engine.target_path / draft_path, or GpuOcrResource)
    from dagster_ocr.ocr.speculative import SpeculativeOcrEngine

    if not settings.target_path:
        raise EngineError(
            "OCR engine 'transformers' needs local checkpoints: set ocr.engine.target_path (and "
            "draft_path) in the settings, or configure GpuOcrResource; models are never downloaded"
        )
    return SpeculativeOcrEngine(settings)


def _served(settings: ServedOcrSettings) -> OcrEngine:
    from dagster_ocr.ocr.served import ServedOcrEngine

    return ServedOcrEngine(settings)


#: engine kind -> factory of its engine from its settings
ENGINES: dict[str, Callable[[Any], OcrEngine]] = {
    "rapidocr": _rapidocr,
    "transformers": _transformers,
    "served": _served,
}


def get_engine(settings: OcrSettings) -> OcrEngine | None:
    """The engine ``settings.engine`` configures (not yet loaded), or None when OCR is disabled."""
    engine = settings.engine
    if engine.kind == "none":
        return None
    return ENGINES[engine.kind](engine)


__all__ = [
    "ENGINES",
    "NoOcrSettings",
    "OcrEngine",
    "OcrEngineBase",
    "OcrLine",
    "OcrSettings",
    "RapidOcrSettings",
    "ServedOcrSettings",
    "TransformersOcrSettings",
    "get_engine",
    "load_image_pages",
    "ocr_lines_to_model",
    "ocr_page",
    "reading_order",
    "render_page",
]
