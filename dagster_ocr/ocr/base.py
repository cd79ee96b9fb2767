"""The OCR engine protocol and the engine-independent helpers around it.

An engine only turns an RGB image into text lines with pixel boxes (``OcrEngine.recognize``).
Everything else lives here so every engine gets it for free: rendering a PDF page to pixels,
putting lines in reading order (rapidocr returns detection order, which scrambles columns),
converting pixels to PDF points, and building a ``model.Page``.
"""

from __future__ import annotations

import contextlib
import logging
import math
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np
import pymupdf

from dagster_ocr.errors import CorruptInputError, UnsupportedInputError
from dagster_ocr.layout import bands, column, crosses, find_gutters, is_rtl, v_overlap
from dagster_ocr.model import BBox, Line, Page, Span, TextSource
from dagster_ocr.ocr.settings import OcrSettings
from dagster_ocr.ocr.stats import DecodeStats

logger = logging.getLogger(__name__)

#: Font-size estimates, in units of the font size, measured with rapidocr (PP-OCRv6 detector) on
#: Helvetica, Times and Courier at 9-24 pt rendered at 200 dpi. The detector's box height varies
#: 0.92-1.5x with layout (its polygons are expanded by a fixed "unclip" ratio), the vertical
#: extent of the ink inside the box only 0.72-0.90x, so the ink is measured when the image is at hand.
_BOX_HEIGHT_PER_POINT = 1.1
_INK_HEIGHT_PER_POINT = 0.82


@dataclass(slots=True)
class OcrLine:
    """One recognised text line, as an engine reports it.

    ``bbox`` is axis-aligned in PIXELS of the image given to the engine: (x0, y0, x1, y1) with
    the origin at the top-left. ``confidence`` is in [0, 1].
    """

    text: str
    bbox: BBox
    confidence: float
    #: the engine's own 0/180 classifier read this line upside down (None: the engine cannot tell).
    #: Used as an orientation hint; engines without a classifier leave it None.
    upside_down: bool | None = None
    #: the detector's polygon, where the engine has one: x, y of its top-left, top-right,
    #: bottom-right and bottom-left corners in turn, in pixels. It tells how the line is tilted
    #: (a scan fed in askew), which ``reading_order`` undoes; None where the engine gives boxes only.
    quad: tuple[float, ...] | None = None
    #: where along the line its ink starts and ends, as fractions (start, end) of the polygon's
    #: (or, without one, the box's) length, left to right; None where not measured. The detector
    #: pads its boxes (rapidocr's "unclip"), which narrows the white channel between two columns'
    #: boxes to half a narrow gutter; ``reading_order`` looks for gutters between the ink instead.
    #: ``ocr_lines_to_model`` measures it on the image (``ink_extent``).
    ink: tuple[float, float] | None = None


@runtime_checkable
class OcrEngine(Protocol):
    """What the pipeline asks of every OCR engine. Engines load their model lazily and reuse it.

    ``OcrEngineBase`` gives the defaults of everything but ``recognize``.
    """

    #: short name recorded on each page (``Page.engine``), e.g. "rapidocr"
    name: str

    def recognize(self, image: np.ndarray) -> list[OcrLine]:
        """Recognise the text lines of an HxWx3 uint8 RGB image (any order; callers sort)."""
        ...

    def document(self, document_type: str | None) -> AbstractContextManager[Any]:
        """A block for one document's pages: engines that tune themselves per kind of document
        (the speculative engine's K) use ``document_type`` inside it."""
        ...

    def take_stats(self) -> Sequence[DecodeStats]:
        """Decoding counts of the calls since the last call (and forget them); empty when the
        engine counts nothing."""
        ...

    def worker_factory(self) -> Callable[[], OcrEngine] | None:
        """A picklable callable that builds this engine afresh in another process (so one long
        document's pages can be OCR'd by several, ``ocr.workers``), or None where the engine must
        not be multiplied: a GPU engine, whose share of the device the ``ocr`` pool bounds."""
        ...


class OcrEngineBase:
    """Defaults of the ``OcrEngine`` protocol for engines with no per-document tuning or counts."""

    name: str = "ocr"

    def recognize(self, image: np.ndarray) -> list[OcrLine]:
        raise NotImplementedError

    def document(self, document_type: str | None) -> AbstractContextManager[Any]:
        return contextlib.nullcontext()

    def take_stats(self) -> Sequence[DecodeStats]:
        return ()

    def worker_factory(self) -> Callable[[], OcrEngine] | None:
        return None


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


# --------------------------------------------------------------------------------- reading order


def _line_box(ln: OcrLine) -> BBox:
    return ln.bbox


def _rows(items: list[OcrLine]) -> list[list[OcrLine]]:
    """Lines grouped into rows (boxes that overlap vertically by half the smaller height), each
    row left to right, rows top to bottom. A row's extent grows with each line it takes, so a
    form row or a table row the detector split into several boxes reads as one row, even when its
    boxes are a little misaligned. A row of a right-to-left script reads right to left."""
    rows = bands(items, _line_box, grow=True)
    return [row[::-1] if len(row) > 1 and is_rtl("".join(ln.text for ln in row)) else row for row in rows]


def _is_column_text(ln: OcrLine, s: OcrSettings) -> bool:
    return len(ln.text.strip()) >= s.column_min_chars


def _gutters(items: list[OcrLine], span: float, line_h: float, s: OcrSettings) -> list[tuple[float, float]]:
    """White vertical channels between text columns, as (x_start, x_end), left to right.

    Only lines of running text (``column_min_chars``) narrower than ``column_max_share`` of the
    page's text width shape the channels: a full-width heading, a short caption or a table cell
    may cross a gutter without hiding it. A channel counts when it is at least half a line height
    wide and has ``column_min_lines`` such lines wholly on each side, so a table's columns of
    numbers and a form's label/value pairs are read row by row instead.
    """
    texty = [
        ln.bbox
        for ln in items
        if _is_column_text(ln, s) and ln.bbox[2] - ln.bbox[0] < s.column_max_share * span
    ]
    if len(texty) < 2 * s.column_min_lines:
        return []
    return find_gutters(texty, texty, 0.5 * line_h, s.column_min_lines)


def _segment(
    items: list[OcrLine], span: float, line_h: float, s: OcrSettings, depth: int = 0
) -> list[OcrLine]:
    """``items`` in reading order: column by column between full-width lines, each column in rows.

    Walking the lines top-down, a line crossing a gutter with no column text beside it (a title,
    a full-width paragraph or table) closes the band of columns above it and is read in its place;
    one with column text on either side (a caption under a figure the columns wrap around, a
    pull quote) floats and is read after the band's columns. Each column is analysed again, as it
    may hold its own sub-columns.
    """
    gutters = _gutters(items, span, line_h, s) if depth < 4 else []
    if not gutters:
        return [ln for row in _rows(items) for ln in row]

    inside = [ln for ln in items if not crosses(ln.bbox, gutters)]

    def beside(ln: OcrLine) -> bool:
        # column text overlapping ``ln`` vertically, left or right of it
        h = ln.bbox[3] - ln.bbox[1]
        return any(
            v_overlap(ln.bbox, o.bbox) > 0.3 * min(h, o.bbox[3] - o.bbox[1])
            and (o.bbox[2] <= ln.bbox[0] or o.bbox[0] >= ln.bbox[2])
            for o in inside
        )

    out: list[OcrLine] = []
    band: list[OcrLine] = []
    floats: list[OcrLine] = []
    wide: list[OcrLine] = []

    def flush_band() -> None:
        cols: dict[int, list[OcrLine]] = {}
        for ln in band:
            cols.setdefault(column(ln.bbox, gutters), []).append(ln)
        # a band mostly in a right-to-left script reads its columns from the right
        rtl = 2 * sum(len(ln.text) for ln in band if is_rtl(ln.text)) > sum(len(ln.text) for ln in band)
        for c in sorted(cols, reverse=rtl):
            out.extend(_segment(cols[c], span, line_h, s, depth + 1))
        out.extend(ln for row in _rows(floats) for ln in row)
        band.clear()
        floats.clear()

    for ln in sorted(items, key=lambda ln: (ln.bbox[1], ln.bbox[0])):
        if crosses(ln.bbox, gutters) and not beside(ln):
            if band or floats:
                flush_band()
            wide.append(ln)
            continue
        if wide:
            out.extend(x for row in _rows(wide) for x in row)
            wide = []
        (floats if crosses(ln.bbox, gutters) else band).append(ln)
    if band or floats:
        flush_band()
    out.extend(x for row in _rows(wide) for x in row)
    return out


def reading_order(lines: list[OcrLine], settings: OcrSettings | None = None) -> list[OcrLine]:
    """Lines in the order people read them: text columns one after the other, top to bottom.

    Full-width lines (titles, single-column paragraphs, tables) split the page into bands; inside
    a band each column is read top to bottom before the next; lines on one row (a table row, a
    form field and its value) read left to right. Captions and other narrow blocks set between
    columns are read after the columns around them.

    A scan fed in askew is read as if it were level: where the detector's polygons (``quad``) say
    the lines lean, the order is decided on the lines turned back by that angle (``page_skew``).
    Without that a tilt of 1.5 degrees moves the two ends of a column's gutter past each other by
    more than a narrow gutter is wide, no vertical white strip is left, and the columns are read
    across, row by row.
    """
    if len(lines) <= 1:
        return list(lines)
    s = settings or OcrSettings()
    skew = page_skew(lines)
    as_given = not skew and all(ln.ink is None for ln in lines)
    if as_given:
        level = list(lines)
    else:
        level = [_turned(_inked(ln), -skew) if skew else _inked(ln) for ln in lines]
    # the line height is the detector's (padded) box height, whatever part of it is inked
    heights = sorted(ln.bbox[3] - ln.bbox[1] for ln in level)
    line_h = heights[len(heights) // 2]
    span = max(ln.bbox[2] for ln in level) - min(ln.bbox[0] for ln in level)
    ordered = _segment(level, span, line_h, s)
    if as_given:
        return ordered
    original = {id(t): ln for t, ln in zip(level, lines, strict=True)}
    return [original[id(t)] for t in ordered]


def _cut_quad(q: Sequence[float], t0: float, t1: float) -> tuple[float, ...]:
    """The part of polygon ``q`` (top-left, top-right, bottom-right, bottom-left) between fractions
    ``t0`` and ``t1`` of its length."""
    tl, tr, br, bl = ((q[i], q[i + 1]) for i in range(0, 8, 2))

    def at(a: tuple[float, float], b: tuple[float, float], t: float) -> tuple[float, float]:
        return a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1])

    return (*at(tl, tr, t0), *at(tl, tr, t1), *at(bl, br, t1), *at(bl, br, t0))


def _inked(line: OcrLine) -> OcrLine:
    """``line`` cut to the part of its length that holds ink (for ordering only), where measured."""
    if line.ink is None:
        return line
    t0, t1 = line.ink
    q = line.quad
    if q is not None and len(q) == 8:
        q = _cut_quad(q, t0, t1)
        xs = q[0::2]
        # the box keeps the detector's height: only the horizontal padding is taken off
        bbox = (min(xs), line.bbox[1], max(xs), line.bbox[3])
    else:
        x0, y0, x1, y1 = line.bbox
        bbox = (x0 + t0 * (x1 - x0), y0, x0 + t1 * (x1 - x0), y1)
        q = None
    return OcrLine(line.text, bbox, line.confidence, line.upside_down, q)


#: tilts below this many degrees are left alone (they move a 600-pt column's ends by < 2 pt);
#: above the maximum a page is not askew but turned, which orientation detection handles
_MIN_SKEW_DEG, _MAX_SKEW_DEG = 0.3, 8.0


def page_skew(lines: Sequence[OcrLine]) -> float:
    """The angle (radians, positive when lines fall to the right in image coordinates) by which a
    page's text lines lean, from the detector's polygons: the median slope of the top and bottom
    edges of lines at least four times as long as tall, where five or more such lines agree on a
    tilt within ``_MIN_SKEW_DEG``-``_MAX_SKEW_DEG``; else 0.0 (level, or not known)."""
    slopes = []
    for ln in lines:
        q = ln.quad
        if q is None or len(q) != 8:
            continue
        width = math.hypot(q[2] - q[0], q[3] - q[1])
        if width < 4 * max(math.hypot(q[6] - q[0], q[7] - q[1]), 1.0):
            continue
        slopes.append((math.atan2(q[3] - q[1], q[2] - q[0]) + math.atan2(q[5] - q[7], q[4] - q[6])) / 2)
    if len(slopes) < 5:
        return 0.0
    slopes.sort()
    angle = slopes[len(slopes) // 2]
    return angle if _MIN_SKEW_DEG <= abs(math.degrees(angle)) <= _MAX_SKEW_DEG else 0.0


def _turned(line: OcrLine, angle: float) -> OcrLine:
    """``line`` with its polygon turned by ``angle`` radians about the image's origin and its box
    the upright box of the turned polygon (for ordering only: a rigid turn keeps every relation)."""
    q = line.quad
    assert q is not None
    c, sn = math.cos(angle), math.sin(angle)
    xs = [q[i] * c - q[i + 1] * sn for i in range(0, 8, 2)]
    ys = [q[i] * sn + q[i + 1] * c for i in range(0, 8, 2)]
    return OcrLine(line.text, (min(xs), min(ys), max(xs), max(ys)), line.confidence, line.upside_down, None)


# ---------------------------------------------------------------------------- ink along lines

#: a column of a line's polygon is inked when it holds at least this many ink pixels (one is a speck)
_INK_MIN_PIXELS = 2
#: the part of a polygon's height looked at for ink: its middle, clear of the lines above and below
_INK_ROWS = (0.1, 0.9)


def _quad_points(quad: Sequence[float]) -> np.ndarray:
    return np.asarray(quad, dtype=float).reshape(4, 2)


def line_ink(gray: np.ndarray, quad: Sequence[float]) -> np.ndarray | None:
    """Ink along a text line: one flag per pixel of the polygon's length (``quad``: top-left,
    top-right, bottom-right, bottom-left corners), left to right, True where the polygon holds ink
    across it. Sampled along the polygon, so a tilted line is read along its tilt and never picks
    up its neighbours. None where the polygon is degenerate or holds no contrast (blank).

    Ink is the minority side of the midpoint between the darkest and lightest pixel, so light text
    on a dark band is measured as well as dark text on paper.
    """
    tl, tr, br, bl = _quad_points(quad)
    length = int(round(max(np.hypot(*(tr - tl)), np.hypot(*(br - bl)))))
    height = int(round(max(np.hypot(*(bl - tl)), np.hypot(*(br - tr)))))
    if length < 2 or height < 2:
        return None
    u = ((np.arange(length) + 0.5) / length)[None, :, None]
    v = np.linspace(_INK_ROWS[0], _INK_ROWS[1], max(2, int(height * (_INK_ROWS[1] - _INK_ROWS[0]))))
    v = v[:, None, None]
    top = tl + u * (tr - tl)
    bottom = bl + u * (br - bl)
    pts = top + v * (bottom - top)  # rows x length x (x, y)
    h, w = gray.shape[:2]
    xs = np.clip(np.rint(pts[..., 0]).astype(np.intp), 0, w - 1)
    ys = np.clip(np.rint(pts[..., 1]).astype(np.intp), 0, h - 1)
    crop = gray[ys, xs]
    lo, hi = float(crop.min()), float(crop.max())
    if hi - lo < 40:
        return None
    dark = crop < (lo + hi) / 2
    ink = dark if dark.mean() < 0.5 else ~dark
    return _without_slivers(ink.sum(axis=0) >= _INK_MIN_PIXELS, height)


def _without_slivers(ink: np.ndarray, height: float) -> np.ndarray:
    """``ink`` less a sliver at either end: a narrow run of ink (under half the line's height)
    touching the polygon's end, set off from the rest by a band-wide gap. It is a glyph of the
    next column that the detector's padded box reaches into, not part of the line."""
    cols = np.nonzero(ink)[0]
    if cols.size < 2:
        return ink
    gaps = np.nonzero(np.diff(cols) > _BAND_MIN_WIDTH * height)[0]
    if not gaps.size:
        return ink
    ink = ink.copy()
    first_run_end, last_run_start = cols[gaps[0]], cols[gaps[-1] + 1]
    if cols[0] <= 1 and first_run_end - cols[0] < 0.5 * height:
        ink[: first_run_end + 1] = False
    if cols[-1] >= ink.size - 2 and cols[-1] - last_run_start < 0.5 * height:
        ink[last_run_start:] = False
    return ink


def ink_extent(gray: np.ndarray, line: OcrLine) -> tuple[float, float] | None:
    """Where ``line``'s ink starts and ends along it, as fractions of its polygon's (or box's)
    length (``OcrLine.ink``); None where it holds no measurable ink."""
    q = line.quad
    if q is None or len(q) != 8:
        x0, y0, x1, y1 = line.bbox
        q = (x0, y0, x1, y0, x1, y1, x0, y1)
    ink = line_ink(gray, q)
    if ink is None or not ink.any():
        return None
    cols = np.nonzero(ink)[0]
    return float(cols[0]) / ink.size, float(cols[-1] + 1) / ink.size


#: ``split_at_ink_bands``: a band is at least this many line heights wide (a word space is about
#: a fifth of one, a stretched one in justified text half; the gutters to be found, 10 pt and up
#: beside 9-11 pt type, three quarters and more)
_BAND_MIN_WIDTH = 0.45
#: ... has at least this many lines end their ink just before it and as many begin just after
#: (a column's two edges; "just": within ``_BAND_EDGE_REACH`` line heights, for ragged text) ...
_BAND_MIN_LINES = 3
_BAND_EDGE_REACH = 4.0
#: ... and ink in at most this share of them (a title or a heading set across the columns)
_BAND_MAX_INKED = 0.1
#: lines whose tilt differs from the page's by more than this (degrees) are left whole
_BAND_MAX_TILT = 1.0
#: a cut line keeps this much of its height as padding beside its ink (as the detector pads)
_CUT_PAD = 0.25


def _white_run(on: np.ndarray, a: int, start: int, stop: int, min_w: float) -> tuple[int, int] | None:
    """The longest run of page columns in [start, stop) that a line's ink (``on``, page columns
    from ``a``) leaves white, as [first, end), where it is at least ``min_w`` long; else None. A
    line whose ink reaches a little into a band (ragged text, the band widened by the title that
    may cross it) is still cut in the part it leaves white."""
    lo, hi = max(start, a), min(stop, a + on.size)
    if hi - lo < min_w:
        return None
    white = np.concatenate(([0], (~on[lo - a : hi - a]).astype(np.int8), [0]))
    edges = np.flatnonzero(np.diff(white))
    if not edges.size:
        return None
    lengths = edges[1::2] - edges[0::2]
    k = int(np.argmax(lengths))
    if lengths[k] < min_w:
        return None
    return lo + int(edges[2 * k]), lo + int(edges[2 * k + 1])


def split_at_ink_bands(
    quads: Sequence[Sequence[float]], gray: np.ndarray
) -> list[tuple[int, tuple[float, ...]]]:
    """Detected line polygons cut where they cross a white band running down the page's ink.

    A detector merges the lines of two columns set close together (a gutter of about one em) into
    one box; no reading order can take such a line apart again. A gutter shows in the ink as a band
    of page columns (along the lines' tilt) that every line crossing it leaves white, while a
    word space lines up with none above or below it. A band counts when it is ``_BAND_MIN_WIDTH``
    line heights wide, at most ``_BAND_MAX_INKED`` of the lines whose ink crosses it put ink in
    it (a title may), and it has a column's edge on each side: ``_BAND_MIN_LINES`` lines whose
    ink ends just before it and as many that begin just after. On a single-column page every line
    crosses every band there could be, so a word space would have to line up in nine lines of
    ten. Each line that leaves ``_BAND_MIN_WIDTH`` line heights of a band white is cut there, each
    part keeping padding beside its ink. A table's column gaps are such bands too,
    and a row cut into its cells reads the same.

    Returns (index of the polygon it came from, polygon) for each line, in the given order; a
    polygon not cut comes back as it was.
    """
    pts = [_quad_points(q) for q in quads]
    out: list[tuple[int, tuple[float, ...]]] = [
        (i, tuple(float(v) for v in p.ravel())) for i, p in enumerate(pts)
    ]
    if len(pts) < _BAND_MIN_LINES:
        return out
    probe = [OcrLine("", (0.0, 0.0, 0.0, 0.0), 1.0, None, q) for _, q in out]
    skew = page_skew(probe)
    c, sn = math.cos(-skew), math.sin(-skew)
    # each level line: (index, u of its left end, pixels of u per profile step, ink profile, height)
    found = []
    for i, p in enumerate(pts):
        tl, tr, br, bl = p
        length = float(np.hypot(*(tr - tl)))
        height = float(np.hypot(*(bl - tl)))
        if length < 2 * height or height < 2:
            continue
        tilt = math.atan2(tr[1] - tl[1], tr[0] - tl[0])
        if abs(math.degrees(tilt - skew)) > _BAND_MAX_TILT:
            continue
        ink = line_ink(gray, out[i][1])
        if ink is None or ink.sum() < 2:
            continue
        left, right = (tl + bl) / 2, (tr + br) / 2
        u0 = left[0] * c - left[1] * sn
        u1 = right[0] * c - right[1] * sn
        if u1 <= u0:
            continue
        found.append((i, u0, (u1 - u0) / ink.size, ink, height))
    if len(found) < _BAND_MIN_LINES:
        return out
    lo = int(math.floor(min(f[1] for f in found)))
    hi = int(math.ceil(max(f[1] + f[2] * f[3].size for f in found)))
    span = np.zeros(hi - lo + 1, dtype=np.int32)
    inked = np.zeros_like(span)
    binned = []
    for _, u0, step, ink, _height in found:
        cols = np.nonzero(ink)[0]
        a = int(math.ceil(u0 + step * (cols[0] + 1))) - lo  # first page column past the first ink
        b = int(math.floor(u0 + step * cols[-1])) - lo  # last one before the last ink
        if b < a:
            binned.append(None)
            continue
        k = np.arange(a, b + 1)
        j = np.clip(((k + lo + 0.5 - u0) / step).astype(np.intp), 0, ink.size - 1)
        on = ink[j]
        span[a : b + 1] += 1
        inked[a : b + 1] += on
        binned.append((a, on))
    # a page column is white where the lines whose ink crosses it put (nearly) none in it
    ok = (span > inked) & (inked <= _BAND_MAX_INKED * span)
    heights = float(np.median([f[4] for f in found]))
    min_w = _BAND_MIN_WIDTH * heights
    reach = _BAND_EDGE_REACH * heights
    ends = np.array([f[1] + f[2] * (np.nonzero(f[3])[0][-1] + 1) - lo for f in found])
    starts = np.array([f[1] + f[2] * np.nonzero(f[3])[0][0] - lo for f in found])
    bands: list[tuple[int, int]] = []
    edges = np.flatnonzero(np.diff(np.concatenate(([0], ok.astype(np.int8), [0]))))
    for start, stop in zip(edges[0::2], edges[1::2], strict=True):
        if stop - start < min_w:
            continue
        # a column's edge on either side: lines whose ink ends just before it, begins just after
        # (a line white across it does both)
        near_left = (ends <= start + 1) & (ends >= start - reach)
        near_right = (starts >= stop - 1) & (starts <= stop + reach)
        for n, got in enumerate(binned):
            if got is None or near_left[n] and near_right[n]:
                continue
            a, on = got
            if _white_run(on, a, start, stop, min_w) is not None:
                near_left[n] |= bool(on[max(0, int(start - reach) - a) : start - a].any())
                near_right[n] |= bool(on[stop - a : int(stop + reach) - a].any())
        n_left, n_right = int(near_left.sum()), int(near_right.sum())
        if n_left >= _BAND_MIN_LINES and n_right >= _BAND_MIN_LINES:
            bands.append((int(start), int(stop)))  # page columns [start, stop) relative to lo
    if not bands:
        return out
    result: list[tuple[int, tuple[float, ...]]] = []
    for (i, u0, step, ink, height), got in zip(found, binned, strict=True):
        cuts = []  # (profile index where the left part's ink ends, where the right part's begins)
        if got is not None:
            a, on = got
            for start, stop in bands:
                run = _white_run(on, a, start, stop, min_w)
                if run is None:
                    continue
                j0 = int((run[0] + lo + 0.5 - u0) / step)
                j1 = int((run[1] - 1 + lo + 0.5 - u0) / step)
                left = np.nonzero(ink[: j0 + 1])[0]
                right = np.nonzero(ink[j1:])[0]
                if left.size and right.size:
                    cuts.append((int(left[-1]) + 1, j1 + int(right[0])))
        if not cuts:
            continue
        pad = _CUT_PAD * height / step
        q = out[i][1]
        pieces = []
        begin = 0.0
        for end_ink, start_ink in cuts:
            gap = start_ink - end_ink
            pieces.append((begin, (end_ink + min(pad, gap / 2)) / ink.size))
            begin = (start_ink - min(pad, gap / 2)) / ink.size
        pieces.append((begin, 1.0))
        result.extend((i, _cut_quad(q, t0, t1)) for t0, t1 in pieces)
    if not result:
        return out
    by_index: dict[int, list[tuple[int, tuple[float, ...]]]] = {}
    for item in result:
        by_index.setdefault(item[0], []).append(item)
    merged: list[tuple[int, tuple[float, ...]]] = []
    for item in out:
        merged.extend(by_index[item[0]] if item[0] in by_index else [item])
    return merged


# ------------------------------------------------------------------------------------ conversion


def channel_mean(image: np.ndarray, region: BBox | None = None) -> np.ndarray:
    """``image.mean(axis=2)`` (HxWx3 uint8 -> HxW float64), the same values bit for bit, in about
    half its CPU: the channels are summed as uint16, then divided once. With ``region`` (x0, y0,
    x1, y1 pixels) only that part is computed and the rest is 0: the page's lines need the gray
    under their boxes only, and a 3600x4800 scan's whole-page mean cost 0.4 CPU s."""
    h, w = image.shape[:2]
    x0, y0, x1, y1 = (0, 0, w, h) if region is None else region
    x0, y0 = max(0, int(math.floor(x0))), max(0, int(math.floor(y0)))
    x1, y1 = min(w, int(math.ceil(x1))), min(h, int(math.ceil(y1)))
    if (x0, y0, x1, y1) == (0, 0, w, h):
        part = image
    else:
        part = image[y0:y1, x0:x1] if x1 > x0 and y1 > y0 else image[:0, :0]
    total = part[..., 0].astype(np.uint16)
    total += part[..., 1]
    total += part[..., 2]
    if part is image:
        return total / 3.0
    gray = np.zeros((h, w), np.float64)
    gray[y0:y1, x0:x1] = total / 3.0
    return gray


def _lines_region(lines: Sequence[OcrLine], pad: float = 2.0) -> BBox | None:
    """The box around every line's box and polygon, ``pad`` pixels wider (None for no lines)."""
    xs: list[float] = []
    ys: list[float] = []
    for ln in lines:
        xs += [ln.bbox[0], ln.bbox[2], *(ln.quad[0::2] if ln.quad else ())]
        ys += [ln.bbox[1], ln.bbox[3], *(ln.quad[1::2] if ln.quad else ())]
    if not xs:
        return None
    return (min(xs) - pad, min(ys) - pad, max(xs) + pad, max(ys) + pad)


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


def _with_ink(line: OcrLine, gray: np.ndarray) -> OcrLine:
    if line.ink is not None:
        return line
    return OcrLine(line.text, line.bbox, line.confidence, line.upside_down, line.quad, ink_extent(gray, line))


def ocr_lines_to_model(
    lines: list[OcrLine],
    scale: float,
    derotate: pymupdf.Matrix | None = None,
    image: np.ndarray | None = None,
    settings: OcrSettings | None = None,
) -> list[Line]:
    """Convert engine lines (pixels) to ``model.Line`` in PDF points, in reading order.

    ``scale`` is points per pixel (72/dpi). ``derotate`` (a rotated page's
    ``page.derotation_matrix``), when given, maps the displayed page back to PyMuPDF's unrotated
    coordinates; ``ocr_page`` does not use it, since the pipeline (``textlayer.extract_lines``)
    reports displayed coordinates. Reading order is decided on the page as displayed.
    Each line gets one span whose ``size`` estimates the font size in points: from the ink height
    when ``image`` (the RGB image the engine saw) is given, else from the box height.
    ``settings`` tune the reading order (``column_*`` fields; defaults when None).
    """
    gray = channel_mean(image, _lines_region(lines)) if image is not None and lines else None
    if gray is not None:  # gutters are looked for between the lines' ink, not their padded boxes
        lines = [_with_ink(ln, gray) for ln in lines]
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
        ink = _ink_height(gray, ln.bbox) if gray is not None else None
        if ink is not None:
            size = ink * scale / _INK_HEIGHT_PER_POINT
        else:
            size = (ln.bbox[3] - ln.bbox[1]) * scale / _BOX_HEIGHT_PER_POINT
        conf = float(min(1.0, max(0.0, ln.confidence)))
        span = Span(text=text, bbox=bbox, size=round(size, 1))
        out.append(Line(text=text, bbox=bbox, spans=[span], block=-1, confidence=conf))
    return out


# ----------------------------------------------------------------------------------- orientation

#: rapidocr turns a detected box at least this much taller than wide by 90 degrees before reading
#: it (``get_rotate_crop_image``); text lines of a sideways page come out as such boxes
_TALL_RATIO = 1.5


def _weight(ln: OcrLine) -> int:
    return len(ln.text.strip())


def _is_tall(ln: OcrLine) -> bool:
    return (ln.bbox[3] - ln.bbox[1]) >= _TALL_RATIO * max(ln.bbox[2] - ln.bbox[0], 1e-6)


def _upright_score(lines: list[OcrLine]) -> float:
    """Confidence-weighted characters on lines that read as upright, horizontal text."""
    return sum(ln.confidence * _weight(ln) for ln in lines if not _is_tall(ln) and ln.upside_down is not True)


def orientation_candidates(lines: list[OcrLine], settings: OcrSettings) -> list[int]:
    """Clockwise turns (90, 180, 270) worth trying to read a page upright, best guess first.

    Empty for a page that reads upright. Signals, cheapest first: most text in vertical boxes
    (a sideways page), most text classified upside down by the engine (a page fed the wrong way
    up), or, for engines that give no upside-down hint, a low mean confidence.
    """
    words = [ln for ln in lines if _weight(ln) >= 2]
    total = sum(_weight(ln) for ln in words)
    if not total:
        return []

    def share(sub: list[OcrLine], of: list[OcrLine]) -> float:
        den = sum(_weight(ln) for ln in of)
        return sum(_weight(ln) for ln in sub) / den if den else 0.0

    tall = [ln for ln in words if _is_tall(ln)]
    if share(tall, words) >= 0.5:
        hinted = [ln for ln in tall if ln.upside_down is not None]
        # rapidocr turns a tall crop 90 degrees counter-clockwise before reading it: if that reads
        # upright, the page is turned clockwise and turning it 270 more puts it right
        if hinted and share([ln for ln in hinted if ln.upside_down], hinted) > 0.5:
            return [90, 270]
        return [270, 90]
    hinted = [ln for ln in words if ln.upside_down is not None]
    if hinted:
        return [180] if share([ln for ln in hinted if ln.upside_down], hinted) >= 0.5 else []
    mean_conf = sum(ln.confidence * _weight(ln) for ln in words) / total
    return [180] if mean_conf < settings.orientation_retry_confidence else []


def turn_image(image: np.ndarray, degrees: int) -> np.ndarray:
    """``image`` turned clockwise by a multiple of 90 degrees (contiguous, so engines can use it)."""
    return np.ascontiguousarray(np.rot90(image, k=-(degrees // 90) % 4))


def recognize_upright(
    engine: OcrEngine, image: np.ndarray, settings: OcrSettings | None = None
) -> tuple[list[OcrLine], int, np.ndarray]:
    """Recognise ``image``, turning it 90/180/270 degrees first when its text is not upright.

    Returns (lines, turn, image read): ``turn`` is the clockwise rotation applied (0 when the page
    read upright) and the lines' boxes are pixels of the returned, turned image. One recognition
    pass for an upright page; one more per orientation tried on a page that looks turned, and a
    turn is kept only when it reads more confident text than the page as given.
    """
    s = settings or OcrSettings()
    lines = engine.recognize(image)
    if not s.detect_orientation:
        return lines, 0, image
    candidates = orientation_candidates(lines, s)
    best = (lines, 0, image)
    best_score = _upright_score(lines)
    for turn in candidates:
        turned = turn_image(image, turn)
        tried = engine.recognize(turned)
        score = _upright_score(tried)
        logger.debug("orientation: %d degrees scores %.1f (best so far %.1f)", turn, score, best_score)
        if score > best_score:
            best, best_score = (tried, turn, turned), score
        # the first guess reads cleanly: no need to try the others
        if best[1] == turn and not orientation_candidates(tried, s):
            break
    if best[1]:
        logger.info("page content turned %d degrees clockwise to read it upright", best[1])
    return best


#: ink for :func:`ink_crop`: this much darker than the paper (the page's 90th-percentile gray)
_INK_CONTRAST = 60
#: :func:`ink_crop` looks at blocks of this many pixels square, each as dark as its darkest pixel
_INK_BLOCK = 4
#: crop only when that leaves at most this share of the page's pixels
_CROP_MAX_SHARE = 0.9


def ink_crop(image: np.ndarray, margin: int, min_side: int = 0) -> tuple[int, int, int, int] | None:
    """The part of ``image`` (HxWx3) that holds ink, as (x0, y0, x1, y1) pixels, ``margin``
    pixels of paper kept around it and each side at least ``min_side`` long (where the image is):
    the box to hand the OCR engine instead of the whole page. None when cropping would not remove
    at least a tenth of the pixels (ink to the edges, a dark border, an empty page).

    The page is looked at in blocks of ``_INK_BLOCK`` pixels, each as dark as its darkest pixel,
    so a thin stroke (a page number "1") is never missed; an inked block with no inked neighbour
    is a speck of dust and does not widen the crop.

    Why by hand: what is wanted is the bounding box of the dark blocks, a few numpy reductions;
    OpenCV's ``boundingRect`` of a threshold does the same with no rule for dust. An engine whose
    detector scales small inputs up (rapidocr's ``limit_type: min``) passes ``min_side`` so a crop
    of a few lines is not enlarged past the page it came from.
    """
    h, w = image.shape[:2]
    b = _INK_BLOCK
    hb, wb = h // b, w // b
    if hb < 3 or wb < 3:
        return None
    pixels = image[: hb * b, : wb * b]
    pixels = pixels.reshape(hb, b, wb, b, -1) if pixels.ndim == 3 else pixels.reshape(hb, b, wb, b, 1)
    # the darkest pixel of each block, as ``pixels.min(axis=(1, 3, 4))`` gives it in 2.5x the CPU
    darkest = np.minimum.reduce([pixels[:, i, :, :, :] for i in range(b)])
    darkest = np.minimum.reduce([darkest[:, :, j, :] for j in range(b)])
    darkest = np.minimum.reduce([darkest[..., c] for c in range(darkest.shape[-1])]).astype(np.int16)
    ink = darkest < float(np.percentile(darkest, 90)) - _INK_CONTRAST
    padded = np.pad(ink, 1)
    neighbours = np.zeros_like(ink)
    for dy in (0, 1, 2):
        for dx in (0, 1, 2):
            if dy != 1 or dx != 1:
                neighbours |= padded[dy : dy + hb, dx : dx + wb]
    ink &= neighbours
    rows = np.nonzero(ink.any(axis=1))[0]
    cols = np.nonzero(ink.any(axis=0))[0]
    if rows.size == 0:
        return None
    x0 = max(0, int(cols[0]) * b - margin)
    x1 = min(w, (int(cols[-1]) + 1) * b + margin)
    y0 = max(0, int(rows[0]) * b - margin)
    y1 = min(h, (int(rows[-1]) + 1) * b + margin)

    def widen(lo: int, hi: int, size: int) -> tuple[int, int]:
        want = min(min_side, size)
        if hi - lo >= want:
            return lo, hi
        lo = max(0, min(lo - (want - (hi - lo)) // 2, size - want))  # centred, inside the image
        return lo, lo + want

    x0, x1 = widen(x0, x1, w)
    y0, y1 = widen(y0, y1, h)
    if (x1 - x0) * (y1 - y0) > _CROP_MAX_SHARE * w * h:
        return None
    return x0, y0, x1, y1


#: :func:`ink_text_height` ignores ink components shorter than this (dust, dots, commas' tails)
_MIN_GLYPH_PX = 3
#: ... and those wider than this many times their height (rules, underlines)
_RULE_ASPECT = 15.0


def ink_text_height(image: np.ndarray) -> float | None:
    """The median height in pixels of the ink's connected pieces in ``image`` (HxW gray or HxWx3):
    letters of print, so about the x-height; words or stroke runs of handwriting. None when fewer
    than 8 pieces are found (a blank or nearly blank page).

    Ink is what :func:`ink_crop` calls ink (60 gray levels under the paper's 90th-percentile
    gray, each pixel as dark as its darkest channel). Pieces under ``_MIN_GLYPH_PX`` high, over a
    fifth of the image high (pictures, borders) or ``_RULE_ASPECT`` times wider than high (rules)
    are left out. About 40 ms on a 1400x2000 page (OpenCV's connected components).
    """
    import cv2

    gray = np.minimum(np.minimum(image[..., 0], image[..., 1]), image[..., 2]) if image.ndim == 3 else image
    if gray.size == 0:
        return None
    paper = float(np.percentile(gray[::4, ::4], 90))
    ink = (gray < paper - _INK_CONTRAST).astype(np.uint8)
    _, _, stats, _ = cv2.connectedComponentsWithStats(ink, connectivity=8)
    w, h = stats[1:, cv2.CC_STAT_WIDTH], stats[1:, cv2.CC_STAT_HEIGHT]
    keep = (h >= _MIN_GLYPH_PX) & (h <= 0.2 * gray.shape[0]) & (w <= _RULE_ASPECT * h)
    if int(keep.sum()) < 8:
        return None
    return float(np.median(h[keep]))


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
    settings: OcrSettings | None = None,
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
    s = settings or OcrSettings()
    if dpi is None and page.parent.is_pdf:
        dpi = s.dpi
    zoom = page_zoom(page, dpi)
    if s.native_resolution_cap:
        native = _scan_zoom(page)
        if native is not None and native < zoom:
            zoom = native
    zoom = _capped_zoom(page.rect.width, page.rect.height, zoom, s.max_image_pixels)
    pix = page.get_pixmap(matrix=pymupdf.Matrix(zoom, zoom), colorspace=pymupdf.csRGB, alpha=False)
    image = _pixmap_to_array(pix)
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
    lines = ocr_lines_to_model(raw, 1.0 / zoom, None, image, s)
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
    )
