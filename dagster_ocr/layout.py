"""Page geometry every stage shares: boxes, row bands, columns and the gutters between them.

A box is a bare ``BBox`` tuple (x0, y0, x1, y1) in PDF points (or pixels, for an OCR engine's
lines), origin at the top-left. There is deliberately no ``Box`` class: these functions run over
every word of every page (millions per long document), and a tuple's indexing is cheaper than a
class's attribute access and costs no object per box. Callers whose items are not boxes (words,
text lines, OCR lines) hand over a box accessor, called once per item.

This module imports nothing else of ``dagster_ocr``, so every stage and the model may import it.
The small tolerances (the 1-point pads of the gutter tests, half-height overlaps) are the ones
the stages were tuned with; changing one changes parsed output.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

BBox = tuple[float, float, float, float]
#: an empty x-interval (x_start, x_end), e.g. a gutter between columns
Gap = tuple[float, float]

T = TypeVar("T")

# ------------------------------------------------------------------------------------------ boxes


def union(boxes: Sequence[BBox]) -> BBox:
    """The smallest box holding all of ``boxes`` (at least one)."""
    return (
        min(b[0] for b in boxes),
        min(b[1] for b in boxes),
        max(b[2] for b in boxes),
        max(b[3] for b in boxes),
    )


def v_overlap(a: BBox, b: BBox) -> float:
    """How far ``a`` and ``b`` overlap vertically (negative: the gap between them)."""
    return min(a[3], b[3]) - max(a[1], b[1])


def overlap_share(a: BBox, b: BBox) -> float:
    """Intersection area over the smaller box's area (0 when they do not intersect or one is empty)."""
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = v_overlap(a, b)
    if w <= 0 or h <= 0:
        return 0.0
    small = min((a[2] - a[0]) * (a[3] - a[1]), (b[2] - b[0]) * (b[3] - b[1]))
    return w * h / small if small > 0 else 0.0


def centre_inside(box: BBox, regions: Iterable[BBox], pad: float = 1.0) -> bool:
    """True when the centre of ``box`` lies in one of ``regions`` (each grown by ``pad``, edges included)."""
    cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    return any(r[0] - pad <= cx <= r[2] + pad and r[1] - pad <= cy <= r[3] + pad for r in regions)


def outside(box: BBox, regions: Iterable[BBox], pad: float = 1.0) -> bool:
    """True when the centre of ``box`` lies in none of ``regions`` (each grown by ``pad``)."""
    return not centre_inside(box, regions, pad)


def transform_box(box: BBox, m: tuple[float, ...]) -> BBox:
    """``box`` mapped by the affine matrix ``m`` = (a, b, c, d, e, f), as the box around the result.

    Plain arithmetic: page rotations (multiples of 90 degrees) map boxes to boxes (two corners
    suffice; any other turn takes all four), and calling
    ``pymupdf.Rect * Matrix`` once per span or word was a visible share of the text stage.
    """
    a, b, c, d, e, f = m
    x0, y0, x1, y1 = box
    if (b or c) and (a or d):  # a turn by other than quarters (a levelled scan): all four corners
        xs = [a * x + c * y + e for x, y in ((x0, y0), (x1, y0), (x1, y1), (x0, y1))]
        ys = [b * x + d * y + f for x, y in ((x0, y0), (x1, y0), (x1, y1), (x0, y1))]
        return (min(xs), min(ys), max(xs), max(ys))
    xa, xb = a * x0 + c * y0 + e, a * x1 + c * y1 + e
    ya, yb = b * x0 + d * y0 + f, b * x1 + d * y1 + f
    return (min(xa, xb), min(ya, yb), max(xa, xb), max(ya, yb))


def x_gaps(boxes: Sequence[BBox]) -> list[Gap]:
    """The empty x-intervals between boxes sorted by their left edge (their x-ranges merged)."""
    if not boxes:
        return []
    gaps: list[Gap] = []
    reach = boxes[0][2]
    for box in boxes[1:]:
        if box[0] > reach:
            gaps.append((reach, box[0]))
        reach = max(reach, box[2])
    return gaps


# -------------------------------------------------------------------------------------- direction


def is_rtl(text: str) -> bool:
    """True when most strongly directional characters of ``text`` are right-to-left (Hebrew,
    Arabic, Persian, Syriac, Thaana...): such a line reads, and aligns, from the right, and a
    band of such lines reads its columns from the right."""
    if text.isascii():  # the common case, decided without a look-up per character
        return False
    rtl = ltr = 0
    for c in text:
        d = unicodedata.bidirectional(c)
        if d in ("R", "AL"):
            rtl += 1
        elif d == "L":
            ltr += 1
    return rtl > ltr


# ------------------------------------------------------------------------------------------ bands


def bands(items: Iterable[T], box: Callable[[T], BBox], *, grow: bool) -> list[list[T]]:
    """``items`` grouped into horizontal bands (visual lines), each left to right, top to bottom.

    Items are taken by the centre of their box (then its left edge); an item joins the last band
    when it overlaps the band vertically by at least half the smaller of the two heights, else it
    opens a new one. With ``grow`` the band's vertical extent widens with each item it takes (a
    row of misaligned OCR boxes reads as one row); without, the band keeps its first item's
    extent, so a superscript or a tall glyph does not stretch it into the next line.
    ``box`` is called once per item.
    """
    items = list(items)
    boxes = list(map(box, items))
    # the items' indices are sorted, by keys built in one comprehension and looked up by the list's
    # own __getitem__: no lambda call per item (both sorts are stable: ties keep the input order)
    order = sorted(range(len(items)), key=[((b[1] + b[3]) / 2, b[0]) for b in boxes].__getitem__)
    out: list[list[int]] = []
    band: list[int] = []
    by0 = by1 = 0.0  # the last band's vertical extent
    for i in order:
        b = boxes[i]
        y0, y1 = b[1], b[3]
        if out and min(y1, by1) - max(y0, by0) >= 0.5 * min(y1 - y0, by1 - by0):
            band.append(i)
            if grow:
                by0, by1 = min(by0, y0), max(by1, y1)
            continue
        band = [i]
        out.append(band)
        by0, by1 = y0, y1
    left = [b[0] for b in boxes].__getitem__
    return [[items[i] for i in sorted(band, key=left)] for band in out]


# ---------------------------------------------------------------------------------------- gutters


def find_gutters(
    shaping: Sequence[BBox], counted: Sequence[BBox], min_width: float, min_count: int
) -> list[Gap]:
    """White vertical channels between columns, as (x_start, x_end), left to right.

    The channels are the ``x_gaps`` of the ``shaping`` boxes (any order); one counts when it is at
    least ``min_width`` wide and has at least ``min_count`` of the ``counted`` boxes wholly on each
    side (within a point of its edges). Leaving full-width lines out of ``shaping`` lets a title
    cross a gutter without hiding it; counting only running text keeps a table's columns of
    numbers from making one.
    """
    out: list[Gap] = []
    for gs, ge in x_gaps(sorted(shaping, key=lambda b: b[0])):
        if ge - gs < min_width:
            continue
        n_left = sum(1 for b in counted if b[2] <= gs + 1)
        n_right = sum(1 for b in counted if b[0] >= ge - 1)
        if n_left >= min_count and n_right >= min_count:
            out.append((gs, ge))
    return out


def crosses(box: BBox, gutters: Iterable[Gap]) -> bool:
    """True when ``box`` spans one of ``gutters``: starts more than a point before it, ends more than
    a point after it."""
    return any(box[0] < gs - 1 and box[2] > ge + 1 for gs, ge in gutters)


def column(box: BBox, gutters: Iterable[Gap]) -> int:
    """Index of the column (0 = left of every gutter) holding the horizontal centre of ``box``."""
    cx = (box[0] + box[2]) / 2
    return sum(1 for gs, _ in gutters if cx > gs)
