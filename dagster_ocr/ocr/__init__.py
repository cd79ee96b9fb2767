"""OCR engines behind one protocol (``OcrEngine``) and the helpers every engine shares.

Engines register a factory in ``ENGINES`` under the name ``OcrSettings.engine`` selects; the
factory imports its backend lazily so that choosing one engine never imports another's
dependencies (torch for a GPU engine, onnxruntime for rapidocr).
"""

from __future__ import annotations

from collections.abc import Callable

from dagster_ocr.ocr.base import (
    OcrEngine,
    OcrLine,
    OcrSettings,
    load_image_pages,
    ocr_lines_to_model,
    ocr_page,
    reading_order,
    render_page,
)


def _rapidocr(settings: OcrSettings) -> OcrEngine:
    from dagster_ocr.ocr.rapid import RapidOcrEngine

    return RapidOcrEngine(settings)


def _transformers(settings: OcrSettings) -> OcrEngine:
    # configured by GpuOcrResource normally; through plain settings the checkpoints come from the
    # JSON file named by DAGSTER_OCR_TRANSFORMERS_SETTINGS (no model is ever downloaded)
    from dagster_ocr.ocr.speculative import SpeculativeOcrEngine, speculative_settings_from_env

    return SpeculativeOcrEngine(speculative_settings_from_env())


#: engine name -> factory
ENGINES: dict[str, Callable[[OcrSettings], OcrEngine]] = {
    "rapidocr": _rapidocr,
    "transformers": _transformers,
}


def get_engine(settings: OcrSettings | None = None) -> OcrEngine | None:
    """The engine ``settings.engine`` names (not yet loaded), or None when OCR is disabled."""
    s = settings or OcrSettings()
    if s.engine == "none":
        return None
    try:
        factory = ENGINES[s.engine]
    except KeyError:
        raise ValueError(f"unknown OCR engine {s.engine!r}; known: {sorted(ENGINES)}") from None
    return factory(s)


__all__ = [
    "ENGINES",
    "OcrEngine",
    "OcrLine",
    "OcrSettings",
    "get_engine",
    "load_image_pages",
    "ocr_lines_to_model",
    "ocr_page",
    "reading_order",
    "render_page",
]
