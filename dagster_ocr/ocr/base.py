"""The per-page OCR call: one PyMuPDF page through an engine into a ``model.Page``.

An engine only turns an RGB image into text lines with pixel boxes (``OcrEngine.recognize``).
Everything else every engine gets for free lives in this package, one job a module: the engine
protocol (``engine``), rendering a PDF page to pixels (``render``), putting lines in reading order
(``order``: rapidocr returns detection order, which scrambles columns), measuring ink on the image
(``ink``) and reading a page upright (``orientation``). Here: converting pixels to PDF points,
building a ``model.Page``, and ``ocr_page``, which runs them in turn. The names other code imports
from this module are re-exported from their new homes.
"""

from __future__ import annotations

import contextlib
import logging
import math

import numpy as np
import pymupdf

from dagster_ocr.model import BBox, Line, Page, Span, TextSource
from dagster_ocr.ocr.engine import OcrEngine, OcrEngineBase, OcrLine
from dagster_ocr.ocr.ink import (
    _ink_height,
    _lines_region,
    channel_mean,
    despeckle,
    grey_if_uncoloured,
    ink_crop,
    ink_extent,
    ink_text_height,
    quad_ink_height,
    split_at_ink_bands,
)
from dagster_ocr.ocr.order import page_skew, reading_order
from dagster_ocr.ocr.orientation import orientation_candidates, recognize_upright, turn_image
from dagster_ocr.ocr.render import (
    _capped_zoom,
    _pixmap_to_array,
    _scan_zoom,
    load_image_pages,
    page_zoom,
    render_page,
)
from dagster_ocr.ocr.settings import OcrSettings

__all__ = [
    "OcrEngine",
    "OcrEngineBase",
    "OcrLine",
    "OcrSettings",
    "channel_mean",
    "ink_crop",
    "ink_extent",
    "ink_text_height",
    "quad_ink_height",
    "load_image_pages",
    "ocr_lines_to_model",
    "ocr_page",
    "orientation_candidates",
    "page_skew",
    "page_zoom",
    "reading_order",
    "recognize_upright",
    "render_page",
    "split_at_ink_bands",
    "turn_image",
]

logger = logging.getLogger(__name__)

#: Font-size estimates, in units of the font size, measured with rapidocr (PP-OCRv6 detector) on
#: Helvetica, Times and Courier at 9-24 pt rendered at 200 dpi. The detector's box height varies
#: 0.92-1.5x with layout (its polygons are expanded by a fixed "unclip" ratio), the vertical
#: extent of the ink inside the box only 0.72-0.90x, so the ink is measured when the image is at hand.
_BOX_HEIGHT_PER_POINT = 1.1
_INK_HEIGHT_PER_POINT = 0.82


# ------------------------------------------------------------------------------------ conversion


def _with_ink(line: OcrLine, gray: np.ndarray) -> OcrLine:
    if line.ink is not None:
        return line
    return OcrLine(line.text, line.bbox, line.confidence, line.upside_down, line.quad, ink_extent(gray, line))


def ocr_lines_to_model(
    lines: list[OcrLine],
    scale: float,
    derotate: pymupdf.Matrix | None = None,
    image: np.ndarray | None = None,
    *,
    settings: OcrSettings,
) -> list[Line]:
    """Convert engine lines (pixels) to ``model.Line`` in PDF points, in reading order.

    ``scale`` is points per pixel (72/dpi). ``derotate`` (a rotated page's
    ``page.derotation_matrix``), when given, maps the displayed page back to PyMuPDF's unrotated
    coordinates; ``ocr_page`` does not use it, since the pipeline (``textlayer.extract_lines``)
    reports displayed coordinates. Reading order is decided on the page as displayed.
    Each line gets one span whose ``size`` estimates the font size in points: from the ink height
    when ``image`` (the RGB image the engine saw) is given (measured across the line along its
    tilt on a page whose lines lean, ``quad_ink_height``), else from the box height.
    ``settings`` tune the reading order (``column_*`` fields).
    """
    gray = channel_mean(image, _lines_region(lines)) if image is not None and lines else None
    if gray is not None:  # gutters are looked for between the lines' ink, not their padded boxes
        lines = [_with_ink(ln, gray) for ln in lines]
    askew = bool(page_skew(lines))
    out: list[Line] = []
    for ln in reading_order(lines, settings):
        text = ln.text.strip()
        if not text:
            continue
        x0, y0, x1, y1 = (v * scale for v in ln.bbox)
        if derotate is not None:
            r = pymupdf.Rect(x0, y0, x1, y1) * derotate
            x0, y0, x1, y1 = r.x0, r.y0, r.x1, r.y1
        bbox = (round(x0, 2), round(y0, 2), round(x1, 2), round(y1, 2))
        # measured on the displayed image, where text runs horizontally whatever /Rotate says
        ink = None
        if gray is not None:  # on a scan fed askew, across the line along its tilt
            along = askew and ln.quad is not None and len(ln.quad) == 8
            ink = quad_ink_height(gray, ln.quad) if along else _ink_height(gray, ln.bbox)  # type: ignore[arg-type]
        if ink is not None:
            size = ink * scale / _INK_HEIGHT_PER_POINT
        else:
            size = (ln.bbox[3] - ln.bbox[1]) * scale / _BOX_HEIGHT_PER_POINT
        conf = float(min(1.0, max(0.0, ln.confidence)))
        span = Span(text=text, bbox=bbox, size=round(size, 1))
        out.append(Line(text=text, bbox=bbox, spans=[span], block=-1, confidence=conf))
    return out


# --------------------------------------------------------------------------------- the page call


def _shift(line: OcrLine, dx: float, dy: float) -> OcrLine:
    x0, y0, x1, y1 = line.bbox
    quad = line.quad
    if quad is not None:
        quad = tuple(v + (dx if i % 2 == 0 else dy) for i, v in enumerate(quad))
    return OcrLine(
        line.text, (x0 + dx, y0 + dy, x1 + dx, y1 + dy), line.confidence, line.upside_down, quad, line.ink
    )


def _crop_origin(turn: int, crop: tuple[int, int, int, int], width: int, height: int) -> tuple[int, int]:
    """Where the top-left corner of the crop, turned ``turn`` degrees clockwise with the page,
    lands in the page turned the same way (pixels of a ``width`` x ``height`` page)."""
    x0, y0, x1, y1 = crop
    origins = {0: (x0, y0), 90: (height - y1, x0), 180: (width - x1, height - y1), 270: (y0, width - x1)}
    return origins[turn % 360]


def _text_layer_lines(page: pymupdf.Page, zoom: float) -> list[tuple[str, BBox]]:
    """The page's own text-layer lines (a scan's invisible OCR layer, a poor born-digital layer)
    with boxes in pixels of the image rendered at ``zoom``: drafts for engines that speculate."""
    from dagster_ocr.textlayer import extract_lines

    try:
        lines = extract_lines(page)
    except Exception as exc:  # a broken text layer only costs the drafts
        logger.debug("no text layer for drafts: %s", exc)
        return []
    return [(ln.text, tuple(v * zoom for v in ln.bbox)) for ln in lines if ln.text.strip()]  # type: ignore[misc]


def ocr_page(
    engine: OcrEngine,
    page: pymupdf.Page,
    index: int,
    dpi: int | None = None,
    *,
    settings: OcrSettings,
) -> Page:
    """OCR one PyMuPDF page (of a PDF or an image document) into a ``model.Page``.

    With ``dpi=None`` a PDF page renders at ``settings.dpi`` and an image document's page (from
    ``pymupdf.open("scan.tif")``) at the image's native resolution; a scanned page is never
    rendered above its image's resolution (``native_resolution_cap``) and every image is capped at
    ``settings.max_image_pixels``. Lines below ``settings.min_confidence`` are dropped.

    Coordinates are those of the page as read upright, in points: the page as displayed (after
    /Rotate, like ``textlayer.extract_lines``), further turned when its content was found sideways
    or upside down (``detect_orientation``). ``width``/``height`` and ``rotation`` (/Rotate plus the
    turn found, clockwise) describe that upright page. ``ocr_confidence`` is the mean confidence of
    the kept lines (None when there are none).
    """
    s = settings
    if dpi is None and page.parent.is_pdf:
        dpi = s.dpi
    zoom = page_zoom(page, dpi)
    if s.native_resolution_cap:
        native = _scan_zoom(page)
        if native is not None and native < zoom:
            zoom = native
    zoom = _capped_zoom(page.rect.width, page.rect.height, zoom, s.max_image_pixels)
    pix = page.get_pixmap(matrix=pymupdf.Matrix(zoom, zoom), colorspace=pymupdf.csRGB, alpha=False)
    image = grey_if_uncoloured(despeckle(_pixmap_to_array(pix), s.despeckle_min_share), s.grey_max_chroma)
    del pix  # the page's pixels are held once, as the array
    hint = getattr(engine, "page_text", None)  # engines that draft from the page's own text
    context = (
        hint(_text_layer_lines(page, zoom), image.shape[:2]) if callable(hint) else contextlib.nullcontext()
    )
    crop = None
    if s.crop_to_ink and not callable(hint):
        crop = ink_crop(image, s.crop_margin_px, getattr(engine, "min_input_side", 0))
    with context:
        if crop is None:
            found, turn, image = recognize_upright(engine, image, s)
        else:
            x0, y0, x1, y1 = crop
            found, turn, _ = recognize_upright(engine, np.ascontiguousarray(image[y0:y1, x0:x1]), s)
            # back into the whole page's pixels, as if the engine had seen it all
            dx, dy = _crop_origin(turn, crop, image.shape[1], image.shape[0])
            found = [_shift(ln, dx, dy) for ln in found]
            image = turn_image(image, turn) if turn else image
    raw = [ln for ln in found if ln.confidence >= s.min_confidence and ln.text.strip()]
    lines = ocr_lines_to_model(raw, 1.0 / zoom, None, image, settings=s)
    conf = sum(ln.confidence for ln in lines) / len(lines) if lines else None
    width, height = page.rect.width, page.rect.height
    if turn in (90, 270):
        width, height = height, width
    return Page(
        index=index,
        width=width,
        height=height,
        lines=lines,
        text_source=TextSource.OCR,
        engine=engine.name,
        rotation=(page.rotation + turn) % 360,
        ocr_confidence=conf,
        skew=round(math.degrees(page_skew(raw)), 3),
    )
