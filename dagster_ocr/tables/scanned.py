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

import numpy as np
import pymupdf

from dagster_ocr.model import Page, Words

#: resolution the page's image is looked at for rules, that of a common scan: at 100 dpi a hairline
#: greyed by the resampling into two light pixels was lost, and a table's outer rules with it
#: (a continued table left in two parts; held-out row_span cell F1 0.896, 0.996 at 150 dpi)
RULE_DPI = 150
#: a rule is at least this long (points): shorter strokes are letters, underlines of a word, dashes
MIN_RULE_PT = 24.0
#: and at most this thick (points): thicker is a filled box or a picture
MAX_RULE_PT = 4.0


def _segments(
    mask: np.ndarray, horizontal: bool, min_len: int, max_thick: int
) -> list[tuple[int, int, int, int]]:
    """Long thin strokes of ``mask`` running one way, as pixel segments (x0, y0, x1, y1)."""
    import cv2

    k = (min_len, 1) if horizontal else (1, min_len)
    opened = cv2.morphologyEx(mask, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_RECT, k))
    n, _, stats, _ = cv2.connectedComponentsWithStats(opened, connectivity=8)
    out = []
    for x, y, w, h, _area in stats[1:n]:
        if horizontal and w >= min_len and h <= max_thick:
            out.append((x, y + h // 2, x + w, y + h // 2))
        elif not horizontal and h >= min_len and w <= max_thick:
            out.append((x + w // 2, y, x + w // 2, y + h))
    return out


def image_rules(gray: np.ndarray, scale: float) -> list[tuple[float, float, float, float]]:
    """The ruled lines of a page image (``gray``, 2-D uint8) as segments in points (``scale``:
    points per pixel), horizontal ones first."""
    import cv2

    if gray.size == 0:
        return []
    # ink against the paper: Otsu's threshold, never above mid-gray (a light table fill is no ink)
    level, _ = cv2.threshold(gray, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    mask = (gray <= min(level, 160)).astype(np.uint8)
    min_len = max(3, round(MIN_RULE_PT / scale))
    thick = max(2, round(MAX_RULE_PT / scale))
    segs = _segments(mask, True, min_len, thick) + _segments(mask, False, min_len, thick)
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


def ocr_page_as_pdf(pg: pymupdf.Page, page: Page) -> tuple[pymupdf.Document, Page] | None:
    """A one-page PDF standing for the OCR'd ``page`` (``pg`` is its page in the source PDF) with
    the rules of its image drawn, and ``page`` with its words (``ocr_words``). None where it can
    hold no ruled table (fewer than two rules each way) or its lines were read turned."""
    lines = [ln for ln in page.lines if ln.text.strip()]
    if not lines:
        return None
    if 2 * sum(ln.bbox[3] - ln.bbox[1] > ln.bbox[2] - ln.bbox[0] for ln in lines) > len(lines):
        return None  # read turned: its boxes are not where the text runs
    pix = pg.get_pixmap(dpi=RULE_DPI, colorspace=pymupdf.csGRAY, alpha=False)
    gray = np.frombuffer(pix.samples, np.uint8).reshape(pix.height, pix.width)
    scale = page.width / pix.width if pix.width else 1.0
    rules = image_rules(gray, scale)
    flat = sum(y0 == y1 for _, y0, _, y1 in rules)
    if flat < 2 or len(rules) - flat < 2:
        return None
    doc = pymupdf.open()
    out = doc.new_page(width=page.width, height=page.height)
    for x0, y0, x1, y1 in rules:
        out.draw_line((x0, y0), (x1, y1), width=0.8)
    return doc, dataclasses.replace(page, words=ocr_words(page))
