"""Ruled tables on OCR'd pages: the rules seen in the page's image, the OCR'd lines as its words.

The table finders read a PDF page: its drawings (a ruled table's rules) and its words. An OCR'd
page has neither: its rules are pixels of the scan and its text is the OCR stage's lines. So such a
page is rebuilt in memory as a PDF page of its own, the same size, with each rule found in the
image (OpenCV's morphological opening with a long thin kernel, the usual way to lift table rules out
of a scan) as a drawn line, and the page's words are its OCR lines' words laid over their boxes
(``Page.words``, which the finders read before the PDF's own); the same finders then run
unchanged, and the cells hold the OCR'd text as read (no font has to carry it). Only ruled
tables are taken from it: where no rules are drawn, the alignment of OCR'd lines (boxes the
detector drew, not glyphs) is not trusted to tell a table from columns of prose.
"""

from __future__ import annotations

import dataclasses
import math
from typing import NamedTuple

import numpy as np
import pymupdf

from dagster_ocr.model import Line, Page, Words

#: resolution the page's image is looked at for rules, that of a common scan: at 100 dpi a hairline
#: greyed by the resampling into two light pixels was lost, and a table's outer rules with it
#: (a continued table left in two parts; held-out row_span cell F1 0.896, 0.996 at 150 dpi)
RULE_DPI = 150
#: a rule is at least this long (points): shorter strokes are letters, underlines of a word, dashes
MIN_RULE_PT = 24.0
#: and at most this thick (points): thicker is a filled box or a picture
MAX_RULE_PT = 4.0


def _rule_mask(gray: np.ndarray) -> np.ndarray:
    """Ink against the paper: Otsu's threshold, never above mid-gray (a light table fill is no ink)."""
    import cv2

    level, _ = cv2.threshold(gray, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    return (gray <= min(level, 160)).astype(np.uint8)


def _strokes(mask: np.ndarray, horizontal: bool, min_len: int) -> tuple[int, np.ndarray, np.ndarray]:
    """The long strokes of ``mask`` running one way (a morphological opening with a ``min_len``
    line), as OpenCV's connected components: count, labels, stats."""
    import cv2

    k = (min_len, 1) if horizontal else (1, min_len)
    opened = cv2.morphologyEx(mask, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_RECT, k))
    n, labels, stats, _ = cv2.connectedComponentsWithStats(opened, connectivity=8)
    return n, labels, stats


def _segments(
    stats: np.ndarray, horizontal: bool, min_len: int, max_thick: int
) -> list[tuple[int, int, int, int]]:
    """The strokes (``_strokes``' stats) that are thin rules, as pixel segments (x0, y0, x1, y1)."""
    out = []
    for x, y, w, h, _area in stats[1:]:
        if horizontal and w >= min_len and h <= max_thick:
            out.append((x, y + h // 2, x + w, y + h // 2))
        elif not horizontal and h >= min_len and w <= max_thick:
            out.append((x + w // 2, y, x + w // 2, y + h))
    return out


def _sizes(scale: float) -> tuple[int, int]:
    """A rule's least length and greatest thickness in pixels (``scale``: points per pixel)."""
    return max(3, round(MIN_RULE_PT / scale)), max(2, round(MAX_RULE_PT / scale))


def image_rules(gray: np.ndarray, scale: float) -> list[tuple[float, float, float, float]]:
    """The ruled lines of a page image (``gray``, 2-D uint8) as segments in points (``scale``:
    points per pixel), horizontal ones first."""
    if gray.size == 0:
        return []
    mask = _rule_mask(gray)
    return _rules(mask, scale, _strokes(mask, True, _sizes(scale)[0]))


def _rules(
    mask: np.ndarray, scale: float, flat: tuple[int, np.ndarray, np.ndarray]
) -> list[tuple[float, float, float, float]]:
    """``image_rules`` from the mask and its horizontal strokes (``flat``, already found)."""
    min_len, thick = _sizes(scale)
    segs = _segments(flat[2], True, min_len, thick)
    segs += _segments(_strokes(mask, False, min_len)[2], False, min_len, thick)
    return [(x0 * scale, y0 * scale, x1 * scale, y1 * scale) for x0, y0, x1, y1 in segs]


def has_an_empty_column(rows: list[list[str | None]]) -> bool:
    """Whether a grid has a column with no text of its own: every cell empty or covered by a
    span (``None``) from the left or above.

    A ruled table's every column holds a header or a value; the boxes of a diagram on a scan, with
    the gaps and connecting lines between them, make a grid whose in-between columns hold nothing
    (bench/tables_scanned.py, class box_diagram: 15 of 20 tune pages gave such a false table)."""
    n = max((len(r) for r in rows), default=0)
    return any(not any(c < len(r) and r[c] for r in rows) for c in range(n))


def ocr_words(page: Page) -> Words:
    """The OCR'd page's words with boxes: each line's words laid over its box in proportion to
    their characters (an OCR line holds no glyph positions; a cell's words sit together anyway)."""
    words = []
    for ln in page.lines:
        text = ln.text.strip()
        x0, y0, x1, y1 = ln.bbox
        if not text or x1 <= x0:
            continue
        per_char = (x1 - x0) / len(text)
        at = 0
        for token in text.split():
            start = text.index(token, at)
            at = start + len(token)
            words.append((x0 + start * per_char, y0, x0 + at * per_char, y1, token))
    return Words.pack(words)


#: a residual tilt of the rules (degrees) under this is left alone: it moves a 600-pt rule's ends
#: by under half a point, inside a stroke's width at ``RULE_DPI``
MIN_RULE_TILT_DEG = 0.05
#: rules measured for their tilt are at least this many times ``MIN_RULE_PT`` long (a table's
#: width, not a letter's underline), and there must be at least this many of them
TILT_RULE_LENGTHS, TILT_MIN_RULES = 4, 2
#: a tilt beyond this (degrees) is not a scan's residual: left alone
MAX_RULE_TILT_DEG = 1.0


def rule_tilt(gray: np.ndarray, scale: float) -> float:
    """The angle (degrees, positive when they fall to the right) by which the long horizontal rules
    of ``gray`` lean, from a straight line fitted to each one's pixels; 0.0 where fewer than
    ``TILT_MIN_RULES`` are found or their tilt is under ``MIN_RULE_TILT_DEG`` or over
    ``MAX_RULE_TILT_DEG``.

    The text lines' tilt (``Page.skew``) is measured on the detector's padded polygons, to a few
    tenths of a degree; a rule across a 600-pt table tilted by 0.3 degrees drifts by 3 pixels at
    ``RULE_DPI`` and falls apart into steps the thin-stroke search reads as several rules (or none).
    The rules themselves, long and straight, give the rest of the tilt to a hundredth of a degree.
    """
    if gray.size == 0:
        return 0.0
    return _tilt(_strokes(_rule_mask(gray), True, _sizes(scale)[0]), scale) or 0.0


def _tilt(flat: tuple[int, np.ndarray, np.ndarray], scale: float) -> float | None:
    """``rule_tilt`` from the image's horizontal strokes (``flat``: ``_strokes``' components), or
    None where the image holds no long rules (fewer than ``TILT_MIN_RULES``, or tilted too far for
    their steps to hold together), which is not the same as level rules (0.0)."""
    n, labels, stats = flat
    min_len, thick = _sizes(scale)
    long_len = TILT_RULE_LENGTHS * min_len
    max_drift = math.tan(math.radians(MAX_RULE_TILT_DEG))
    angles, weights = [], []
    for k in range(1, n):
        x, y, w, h, _area = stats[k]
        if w < long_len or h > w * max_drift + thick:
            continue
        ys, xs = np.nonzero(labels[y : y + h, x : x + w] == k)
        if xs.size < long_len:
            continue
        slope = float(np.polyfit(xs.astype(np.float64), ys.astype(np.float64), 1)[0])
        angles.append(math.degrees(math.atan(slope)))
        weights.append(w)
    if len(angles) < TILT_MIN_RULES:
        return None
    order = np.argsort(angles)
    cum = np.cumsum(np.asarray(weights, dtype=np.float64)[order])
    tilt = float(np.asarray(angles)[order][np.searchsorted(cum, cum[-1] / 2)])  # weighted median
    if abs(tilt) > MAX_RULE_TILT_DEG:
        return None
    return tilt if abs(tilt) >= MIN_RULE_TILT_DEG else 0.0


def _turned_gray(gray: np.ndarray, degrees: float) -> np.ndarray:
    """``gray`` turned about its centre by ``degrees`` (positive: counter-clockwise as seen,
    what levels lines that fall to the right by as much), paper filling the corners."""
    import cv2

    h, w = gray.shape
    m = cv2.getRotationMatrix2D((w / 2, h / 2), degrees, 1.0)
    return cv2.warpAffine(gray, m, (w, h), flags=cv2.INTER_LINEAR, borderValue=255)


def level_matrix(width: float, height: float, degrees: float) -> tuple[float, ...]:
    """The affine map (a, b, c, d, e, f; PyMuPDF's order) that turns a ``width`` x ``height``
    page about its centre as :func:`_turned_gray` turns its image: the page as read into the
    levelled page."""
    t = math.radians(degrees)
    c, sn = math.cos(t), math.sin(t)
    cx, cy = width / 2, height / 2
    # image coordinates, y down: a counter-clockwise turn as seen is (x, y) -> (c x + s y, -s x + c y)
    return (c, -sn, sn, c, cx - c * cx - sn * cy, cy + sn * cx - c * cy)


def _levelled_line(line: Line, m: tuple[float, ...], skew: float) -> Line:
    """``line`` in the levelled page (``m``): its box rebuilt around its turned centre from the
    length and height of the tilted line whose upright box it is (lines lean by ``skew`` degrees)."""
    x0, y0, x1, y1 = line.bbox
    bw, bh = x1 - x0, y1 - y0
    c, sn = math.cos(math.radians(skew)), abs(math.sin(math.radians(skew)))
    det = c * c - sn * sn
    length, tall = (bw * c - bh * sn) / det, (bh * c - bw * sn) / det
    # a short word's box is nearly as tall as long, and the inversion is ill-posed: keep the box
    if length <= 0 or tall < 0.5 * bh:
        length, tall = bw, bh
    a, b, cc, d, e, f = m
    mx, my = (x0 + x1) / 2, (y0 + y1) / 2
    ux, uy = a * mx + cc * my + e, b * mx + d * my + f
    box = (ux - length / 2, uy - tall / 2, ux + length / 2, uy + tall / 2)
    spans = [dataclasses.replace(sp, bbox=box) for sp in line.spans]
    return dataclasses.replace(line, bbox=box, spans=spans)


class OcrTablePage(NamedTuple):
    """An OCR'd page rebuilt for the table finders (:func:`ocr_page_as_pdf`)."""

    doc: pymupdf.Document
    page: Page
    #: the affine map from the levelled page the finders read back to the page as read (boxes
    #: found there are mapped through it), None where the page was searched as it is
    back: tuple[float, ...] | None


def ocr_page_as_pdf(pg: pymupdf.Page, page: Page) -> OcrTablePage | None:
    """A one-page PDF standing for the OCR'd ``page`` (``pg`` is its page in the source PDF) with
    the rules of its image drawn, and ``page`` with its words (``ocr_words``). None where it can
    hold no ruled table (fewer than two rules each way) or its lines were read turned.

    A scan fed in askew is searched level: its image turned back by its rules' tilt
    (:func:`rule_tilt`) where they hold together as scanned (under a degree), else by the lines'
    tilt (``Page.skew``) and the rules' residual tilt after that, and its lines' boxes
    moved with it; at 2 degrees a rule across a table is a staircase of steps shorter than
    ``MIN_RULE_PT``, and no table was found (bench/ocr_skewed_tables.py).
    """
    lines = [ln for ln in page.lines if ln.text.strip()]
    if not lines:
        return None
    if 2 * sum(ln.bbox[3] - ln.bbox[1] > ln.bbox[2] - ln.bbox[0] for ln in lines) > len(lines):
        return None  # read turned: its boxes are not where the text runs
    pix = pg.get_pixmap(dpi=RULE_DPI, colorspace=pymupdf.csGRAY, alpha=False)
    gray = np.frombuffer(pix.samples, np.uint8).reshape(pix.height, pix.width)
    scale = page.width / pix.width if pix.width else 1.0
    min_len = _sizes(scale)[0]
    mask = _rule_mask(gray)
    flat = _strokes(mask, True, min_len)
    # rules that hold together as scanned (level, or tilted under a degree) say how far to turn;
    # the lines' tilt is only the start where they do not: a table's short cells can make the
    # detector's polygons lean on a level page (a generated stacked-header table read 1.2 degrees)
    found = _tilt(flat, scale)
    angle, turned_by = found or 0.0, 0.0  # the turn wanted, the turn the mask was found at
    if found is None and page.skew:
        mask = _rule_mask(_turned_gray(gray, page.skew))
        flat = _strokes(mask, True, min_len)
        turned_by = page.skew
        angle = page.skew + (_tilt(flat, scale) or 0.0)
    if angle != turned_by:  # turned from the scan itself by the whole angle, once
        mask = _rule_mask(_turned_gray(gray, angle))
        flat = _strokes(mask, True, min_len)
    rules = _rules(mask, scale, flat)
    n_flat = sum(y0 == y1 for _, y0, _, y1 in rules)
    if n_flat < 2 or len(rules) - n_flat < 2:
        return None
    doc = pymupdf.open()
    out = doc.new_page(width=page.width, height=page.height)
    for x0, y0, x1, y1 in rules:
        out.draw_line((x0, y0), (x1, y1), width=0.8)
    back = None
    if angle:
        m = level_matrix(page.width, page.height, angle)
        page = dataclasses.replace(page, lines=[_levelled_line(ln, m, angle) for ln in page.lines])
        back = tuple(~pymupdf.Matrix(m))
    return OcrTablePage(doc, dataclasses.replace(page, words=ocr_words(page)), back)
