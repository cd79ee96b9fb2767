"""Engine lines in reading order: columns, bands and rows, decided on a page turned level.

rapidocr returns lines in detection order, which scrambles columns; ``reading_order`` puts them
in the order people read them. A scan fed in askew is levelled first (``page_skew``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from dagster_ocr.layout import bands, column, crosses, find_gutters, is_rtl, v_overlap
from dagster_ocr.model import BBox
from dagster_ocr.ocr.engine import OcrLine
from dagster_ocr.ocr.settings import OcrSettings


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
    found = [
        g
        for g in find_gutters(texty, texty, 0.5 * line_h, s.column_min_lines)
        if not _in_a_table(g, items, s)
    ]
    if found:
        return found
    # A line alone on its row (a centred author line or heading over the columns, a caption) is
    # no column's line, yet at 20+ characters and under column_max_share wide it took part in
    # shaping the channels, and one such line across the gutter hid it: the whole page was read
    # across its columns (issue 37). Column lines have their neighbour column beside them.
    paired = [b for b in texty if any(o is not b and _beside(b, o) for o in texty)]
    if len(paired) < 2 * s.column_min_lines:
        return []
    found = find_gutters(paired, texty, 0.5 * line_h, s.column_min_lines)
    return [g for g in found if not _in_a_table(g, items, s)]


def _figures(text: str) -> bool:
    """A line of figures (a table row's values, ``$52,500 0.4620 6899.5``): more digits than letters."""
    return sum(c.isdigit() for c in text) > sum(c.isalpha() for c in text)


#: share of a gap's lines of figures that must sit on a row with a line across the gap for the gap
#: to be a table's, not a gutter between columns of text
_TABLE_ROW_SHARE = 0.8


def _in_a_table(gap: tuple[float, float], items: list[OcrLine], s: OcrSettings) -> bool:
    """Whether white ``gap`` runs between a table's columns rather than between columns of text.

    The detector reads a table's row of values as one long line (``$49,497 $51,295 $52,587``), so
    rows of figures count as running text by length alone, and the white between a table's row
    labels and its values, or between two blocks of its columns, looked like a gutter: the table
    was read column block by column block (the labels, then every value) where its rows belong
    together. A gap is a table's where the lines on one side are mostly figures and nearly all of
    them sit on a row with a line across the gap: columns of text next to each other do not pair
    off row by row with numbers, and a column of prose holding a small table keeps its prose lines.
    """
    left = [ln for ln in items if ln.bbox[2] <= gap[0] + 1]
    right = [ln for ln in items if ln.bbox[0] >= gap[1] - 1]
    for side, across in ((left, right), (right, left)):
        figures = [ln for ln in side if _figures(ln.text)]
        if len(figures) < s.column_min_lines or 3 * len(figures) < 2 * len(side):
            continue
        paired = sum(any(_beside(ln.bbox, o.bbox) for o in across) for ln in figures)
        if paired >= _TABLE_ROW_SHARE * len(figures):
            return True
    return False


def _beside(a: BBox, b: BBox) -> bool:
    """``b`` sits left or right of ``a`` on the same row (overlapping it vertically by half the
    smaller height, apart horizontally)."""
    h = min(a[3] - a[1], b[3] - b[1])
    return v_overlap(a, b) >= 0.5 * h and (b[2] <= a[0] or b[0] >= a[2])


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
        banded = _banded(items, span, line_h, s, depth) if depth < 4 else None
        return banded if banded is not None else [ln for row in _rows(items) for ln in row]

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
        if any(_in_a_table(g, band, s) for g in gutters):
            # a table set across the page's gutter (its labels in the left column's place, its
            # values in the right's) between full-width lines: read on its own, by its rows
            out.extend(_segment(band, span, line_h, s, depth + 1))
            out.extend(ln for row in _rows(floats) for ln in row)
            band.clear()
            floats.clear()
            return
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


def _banded(
    items: list[OcrLine], span: float, line_h: float, s: OcrSettings, depth: int
) -> list[OcrLine] | None:
    """``items`` cut into bands at full-width lines alone on their row (a title across the page),
    each band in reading order on its own; None where no band has columns of its own.

    A page whose top half is set in two columns and bottom half in three (an article starting
    under the end of another, with a sidebar) has no white channel running down the whole page,
    so ``_gutters`` finds none and the page was read across every column, row by row (issue 37).
    The full-width line between the halves is where the layout changes; above and below it each
    band's gutters are found as on a page of its own.
    """
    wide = {
        id(ln)
        for ln in items
        if ln.bbox[2] - ln.bbox[0] >= s.column_max_share * span
        and not any(o is not ln and _beside(ln.bbox, o.bbox) for o in items)
    }
    if not wide:
        return None
    groups: list[list[OcrLine]] = []
    current: list[OcrLine] = []
    for ln in sorted(items, key=lambda ln: ((ln.bbox[1] + ln.bbox[3]) / 2, ln.bbox[0])):
        if id(ln) in wide:
            if current:
                groups.append(current)
                current = []
            groups.append([ln])
        else:
            current.append(ln)
    if current:
        groups.append(current)
    if not any(len(g) > 1 and _gutters(g, span, line_h, s) for g in groups):
        return None
    return [ln for g in groups for ln in _segment(g, span, line_h, s, depth + 1)]


def reading_order(lines: list[OcrLine], settings: OcrSettings) -> list[OcrLine]:
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
    s = settings
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
