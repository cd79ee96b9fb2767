"""The OCR engine protocol and the engine-independent helpers around it.

An engine only turns an RGB image into text lines with pixel boxes (``OcrEngine.recognize``).
Everything else lives here so every engine gets it for free: rendering a PDF page to pixels,
putting lines in reading order (rapidocr returns detection order, which scrambles columns),
converting pixels to PDF points, and building a ``model.Page``.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol, runtime_checkable

import numpy as np
import pymupdf
from pydantic import BaseModel, ConfigDict, Field

from dagster_ocr.errors import CorruptInputError, UnsupportedInputError
from dagster_ocr.model import BBox, Line, Page, Span, TextSource

logger = logging.getLogger(__name__)

#: Font-size estimates, in units of the font size, measured with rapidocr (PP-OCRv6 detector) on
#: Helvetica, Times and Courier at 9-24 pt rendered at 200 dpi. The detector's box height varies
#: 0.92-1.5x with layout (its polygons are expanded by a fixed "unclip" ratio), the vertical
#: extent of the ink inside the box only 0.72-0.90x, so the ink is measured when the image is at hand.
_BOX_HEIGHT_PER_POINT = 1.1
_INK_HEIGHT_PER_POINT = 0.82


class OcrSettings(BaseModel):
    """How pages are rendered and recognised."""

    model_config = ConfigDict(extra="forbid")

    engine: Literal["rapidocr", "none"] = Field(
        "rapidocr",
        description="OCR engine for pages without a usable text layer; 'none' disables OCR "
        "(such pages get text_source='none').",
    )
    dpi: int = Field(
        200,
        ge=36,
        le=1200,
        description="Resolution PDF pages are rendered at before OCR. 150-200 suits body text; "
        "raise it for small print (costs time and memory quadratically).",
    )
    min_confidence: float = Field(
        0.5,
        ge=0.0,
        le=1.0,
        description="OCR lines recognised with a lower confidence are dropped as noise.",
    )
    max_image_pixels: int = Field(
        40_000_000,
        gt=0,
        description="Upper bound on pixels of one rendered page or loaded image; larger pages are "
        "rendered at a lower resolution so a huge page cannot exhaust memory.",
    )
    max_side_len: int = Field(
        2000,
        ge=256,
        description="rapidocr shrinks images whose longer side exceeds this many pixels before "
        "detection and recognition (its own default); larger keeps small print legible but is slower.",
    )
    num_threads: int = Field(
        0,
        ge=0,
        description="Threads for the ONNX runtime per engine; 0 lets onnxruntime use every core.",
    )


@dataclass(slots=True)
class OcrLine:
    """One recognised text line, as an engine reports it.

    ``bbox`` is axis-aligned in PIXELS of the image given to the engine: (x0, y0, x1, y1) with
    the origin at the top-left. ``confidence`` is in [0, 1].
    """

    text: str
    bbox: BBox
    confidence: float


@runtime_checkable
class OcrEngine(Protocol):
    """What every OCR engine provides. Engines load their model lazily and reuse it."""

    #: short name recorded on each page (``Page.engine``), e.g. "rapidocr"
    name: str

    def recognize(self, image: np.ndarray) -> list[OcrLine]:
        """Recognise the text lines of an HxWx3 uint8 RGB image (any order; callers sort)."""
        ...


# --------------------------------------------------------------------------------------- images


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


def _native_zoom(page: pymupdf.Page) -> float:
    """Zoom that renders an image-document page at the image's own pixel resolution."""
    infos = page.get_image_info()
    if infos and page.rect.width > 0:
        return float(infos[0]["width"]) / page.rect.width
    return 200 / 72.0  # no embedded image reported: fall back to a typical scan resolution


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


# --------------------------------------------------------------------------------- reading order


def _gaps(intervals: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """Empty stretches between the union of ``intervals``: (size, cut position), inner only."""
    out: list[tuple[float, float]] = []
    ivs = sorted(intervals)
    end = ivs[0][1]
    for a, b in ivs[1:]:
        if a > end:
            out.append((a - end, (a + end) / 2))
        end = max(end, b)
    return out


def _xy_cut(items: list[OcrLine], line_h: float, out: list[OcrLine]) -> None:
    """Recursive XY-cut: split at the widest empty horizontal or vertical band, recurse.

    Columns separate along a vertical band that no line crosses; a full-width heading above
    them crosses it, so the band only appears once the heading has been cut off by a horizontal
    band. Cutting at the widest band first is what orders "heading, then column 1, then column 2".
    """
    if len(items) <= 1:
        out.extend(items)
        return
    # shrink boxes vertically: detector boxes are padded and touch their neighbours' boxes
    ys = []
    for ln in items:
        pad = 0.2 * (ln.bbox[3] - ln.bbox[1])
        ys.append((ln.bbox[1] + pad, ln.bbox[3] - pad))
    xs = [(ln.bbox[0], ln.bbox[2]) for ln in items]
    y_gaps = _gaps(ys)
    # a vertical band narrower than about a line height is a word space, not a column gutter
    x_gaps = [g for g in _gaps(xs) if g[0] >= 0.8 * line_h]
    best_y = max(y_gaps, default=None)
    best_x = max(x_gaps, default=None)
    if best_y is None and best_x is None:
        # one band of overlapping lines: top-to-bottom by centre, then left-to-right
        out.extend(sorted(items, key=lambda ln: ((ln.bbox[1] + ln.bbox[3]) / 2, ln.bbox[0])))
        return
    if best_x is not None and (best_y is None or best_x[0] > best_y[0]):
        cut = best_x[1]
        first = [ln for ln in items if (ln.bbox[0] + ln.bbox[2]) / 2 < cut]
    else:
        cut = best_y[1]
        first = [ln for ln in items if (ln.bbox[1] + ln.bbox[3]) / 2 < cut]
    ids = {id(ln) for ln in first}
    rest = [ln for ln in items if id(ln) not in ids]
    if not first or not rest:  # cannot happen with real gaps; guard against infinite recursion
        out.extend(sorted(items, key=lambda ln: (ln.bbox[1], ln.bbox[0])))
        return
    _xy_cut(first, line_h, out)
    _xy_cut(rest, line_h, out)


def reading_order(lines: list[OcrLine]) -> list[OcrLine]:
    """Lines in reading order: top-to-bottom, left-to-right, one column after the other."""
    if len(lines) <= 1:
        return list(lines)
    heights = sorted(ln.bbox[3] - ln.bbox[1] for ln in lines)
    line_h = heights[len(heights) // 2]
    out: list[OcrLine] = []
    _xy_cut(list(lines), line_h, out)
    return out


# ------------------------------------------------------------------------------------ conversion


def _ink_height(gray: np.ndarray, bbox: BBox) -> float | None:
    """Vertical extent in pixels of the ink inside ``bbox`` (ascender top to descender bottom)."""
    x0, y0, x1, y1 = (int(round(v)) for v in bbox)
    crop = gray[max(y0, 0) : max(y1, 0), max(x0, 0) : max(x1, 0)]
    if crop.size == 0:
        return None
    lo, hi = float(crop.min()), float(crop.max())
    if hi - lo < 40:  # no contrast: nothing to measure
        return None
    mid = (lo + hi) / 2
    # ink is the minority colour; this also handles light text on a dark background
    ink = crop < mid if (crop < mid).mean() < 0.5 else crop >= mid
    rows = np.nonzero(ink.sum(axis=1) >= max(1.0, 0.002 * crop.shape[1]))[0]
    if rows.size == 0:
        return None
    return float(rows[-1] - rows[0] + 1)


def ocr_lines_to_model(
    lines: list[OcrLine],
    scale: float,
    derotate: pymupdf.Matrix | None = None,
    image: np.ndarray | None = None,
) -> list[Line]:
    """Convert engine lines (pixels) to ``model.Line`` in PDF points, in reading order.

    ``scale`` is points per pixel (72/dpi). ``derotate`` (a rotated page's
    ``page.derotation_matrix``) maps the displayed page back to unrotated coordinates, the
    system the text layer reports in; reading order is decided before, on the page as displayed.
    Each line gets one span whose ``size`` estimates the font size in points: from the ink height
    when ``image`` (the RGB image the engine saw) is given, else from the box height.
    """
    gray = image.mean(axis=2) if image is not None else None
    out: list[Line] = []
    for ln in reading_order(lines):
        text = ln.text.strip()
        if not text:
            continue
        x0, y0, x1, y1 = (v * scale for v in ln.bbox)
        if derotate is not None:
            r = pymupdf.Rect(x0, y0, x1, y1) * derotate
            x0, y0, x1, y1 = r.x0, r.y0, r.x1, r.y1
        bbox = (round(x0, 2), round(y0, 2), round(x1, 2), round(y1, 2))
        # measured on the displayed image, where text runs horizontally whatever /Rotate says
        ink = _ink_height(gray, ln.bbox) if gray is not None else None
        if ink is not None:
            size = ink * scale / _INK_HEIGHT_PER_POINT
        else:
            size = (ln.bbox[3] - ln.bbox[1]) * scale / _BOX_HEIGHT_PER_POINT
        conf = float(min(1.0, max(0.0, ln.confidence)))
        span = Span(text=text, bbox=bbox, size=round(size, 1))
        out.append(Line(text=text, bbox=bbox, spans=[span], block=-1, confidence=conf))
    return out


def ocr_page(
    engine: OcrEngine,
    page: pymupdf.Page,
    index: int,
    dpi: int | None = None,
    settings: OcrSettings | None = None,
) -> Page:
    """OCR one PyMuPDF page (of a PDF or an image document) into a ``model.Page``.

    With ``dpi=None`` a PDF page renders at ``settings.dpi`` and an image document's page (from
    ``pymupdf.open("scan.tif")``) at the image's native resolution; either way the image is capped
    at ``settings.max_image_pixels``. Lines below ``settings.min_confidence`` are dropped. Line
    boxes are in points in the page's unrotated coordinates (as the text layer reports them);
    ``width``/``height`` are ``page.rect`` (as displayed).
    ``ocr_confidence`` is the mean confidence of the kept lines (None when there are none).
    """
    s = settings or OcrSettings()
    if dpi is None and page.parent.is_pdf:
        dpi = s.dpi
    zoom = _capped_zoom(page.rect.width, page.rect.height, page_zoom(page, dpi), s.max_image_pixels)
    pix = page.get_pixmap(matrix=pymupdf.Matrix(zoom, zoom), colorspace=pymupdf.csRGB, alpha=False)
    image = _pixmap_to_array(pix)
    raw = [ln for ln in engine.recognize(image) if ln.confidence >= s.min_confidence and ln.text.strip()]
    rotation = page.rotation % 360
    lines = ocr_lines_to_model(raw, 1.0 / zoom, page.derotation_matrix if rotation else None, image)
    conf = sum(ln.confidence for ln in lines) / len(lines) if lines else None
    return Page(
        index=index,
        width=page.rect.width,
        height=page.rect.height,
        lines=lines,
        text_source=TextSource.OCR,
        engine=engine.name,
        rotation=rotation,
        ocr_confidence=conf,
    )
