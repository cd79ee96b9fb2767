"""Pages to pixels: a PDF page or an image file's frames as RGB arrays, at a capped resolution."""

from __future__ import annotations

import logging
import math
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pymupdf

from dagster_ocr.errors import CorruptInputError, UnsupportedInputError

logger = logging.getLogger(__name__)


def _pixmap_to_array(pix: pymupdf.Pixmap) -> np.ndarray:
    """An RGB ``Pixmap`` (no alpha) as an HxWx3 uint8 array that owns its memory."""
    arr = np.frombuffer(pix.samples, dtype=np.uint8).reshape(pix.height, pix.stride // pix.n, pix.n)
    # stride may pad rows; copy so the array outlives the pixmap
    return np.ascontiguousarray(arr[:, : pix.width, :3])


def _capped_zoom(width_pt: float, height_pt: float, zoom: float, max_pixels: int | None) -> float:
    """``zoom`` lowered so that the rendered page stays within ``max_pixels``."""
    if max_pixels and width_pt * height_pt * zoom * zoom > max_pixels:
        capped = math.sqrt(max_pixels / (width_pt * height_pt))
        logger.warning(
            "page of %.0fx%.0f pt at zoom %.2f exceeds %d pixels: rendering at zoom %.2f",
            width_pt,
            height_pt,
            zoom,
            max_pixels,
            capped,
        )
        return capped
    return zoom


def _render(page: pymupdf.Page, dpi: float, max_pixels: int | None) -> tuple[np.ndarray, float]:
    """Render ``page`` as displayed; return the image and the zoom (pixels per point) used."""
    rect = page.rect  # already reflects /Rotate
    zoom = _capped_zoom(rect.width, rect.height, dpi / 72.0, max_pixels)
    pix = page.get_pixmap(matrix=pymupdf.Matrix(zoom, zoom), colorspace=pymupdf.csRGB, alpha=False)
    return _pixmap_to_array(pix), zoom


def render_page(page: pymupdf.Page, dpi: int, max_pixels: int | None = None) -> np.ndarray:
    """Render a page to an HxWx3 uint8 RGB array at ``dpi``, rotated as a viewer displays it.

    ``max_pixels`` caps the image size: a larger page is rendered at a lower resolution instead.
    """
    return _render(page, dpi, max_pixels)[0]


def _scan_zoom(page: pymupdf.Page, min_coverage: float = 0.9) -> float | None:
    """Pixels per point of the image covering ``page`` (a scan), or None when no image covers it.

    Computed from areas, so an image placed rotated (a JPEG with an EXIF orientation, a scan
    placed sideways) gives the same answer as an upright one.
    """
    page_area = abs(page.rect)
    if page_area <= 0:
        return None
    for info in page.get_image_info():
        placed = abs(pymupdf.Rect(info["bbox"]) & page.rect)
        if placed >= min_coverage * page_area and info.get("width") and info.get("height"):
            return math.sqrt(float(info["width"]) * float(info["height"]) / abs(pymupdf.Rect(info["bbox"])))
    return None


def _native_zoom(page: pymupdf.Page) -> float:
    """Zoom that renders an image-document page at the image's own pixel resolution."""
    zoom = _scan_zoom(page, min_coverage=0.0) if page.rect.width > 0 else None
    return zoom or 200 / 72.0  # no embedded image reported: fall back to a typical scan resolution


def load_image_pages(path: str | Path, max_pixels: int | None = None) -> Iterator[np.ndarray]:
    """Yield each frame of an image file (PNG, JPEG, multi-page TIFF, ...) as RGB at native size.

    Uses PyMuPDF, which opens images as one-page (TIFF: many-page) documents, so no imaging
    library is needed. Frames larger than ``max_pixels`` are downscaled. Raises
    ``CorruptInputError`` when the file cannot be decoded and ``UnsupportedInputError`` for a PDF.
    """
    try:
        doc = pymupdf.open(path)
    except Exception as exc:  # MuPDF raises several types for undecodable input
        raise CorruptInputError(f"cannot open image {Path(path).name}: {exc}") from exc
    with doc:
        if doc.is_pdf:
            raise UnsupportedInputError(f"{Path(path).name} is a PDF, not an image")
        for number in range(doc.page_count):
            try:  # MuPDF decodes the image when the page loads, so truncation surfaces here
                page = doc.load_page(number)
                rect = page.rect
                zoom = _capped_zoom(rect.width, rect.height, _native_zoom(page), max_pixels)
                pix = page.get_pixmap(
                    matrix=pymupdf.Matrix(zoom, zoom), colorspace=pymupdf.csRGB, alpha=False
                )
            except Exception as exc:
                raise CorruptInputError(f"cannot decode frame {number} of {Path(path).name}: {exc}") from exc
            yield _pixmap_to_array(pix)


def page_zoom(page: pymupdf.Page, dpi: int | None) -> float:
    """Pixels per point to render ``page`` at: ``dpi/72``, or the native resolution of an image
    document's page when ``dpi`` is None (re-sampling a scan only loses detail)."""
    if dpi is None:
        return _native_zoom(page) if not page.parent.is_pdf else 200 / 72.0
    return dpi / 72.0
