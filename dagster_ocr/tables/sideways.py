"""Pages whose tables are printed sideways: read in the frame their text runs in, boxes turned back."""

from __future__ import annotations

import dataclasses

import pymupdf

from dagster_ocr.layout import transform_box
from dagster_ocr.model import Line, Page, Table
from dagster_ocr.tables.words import _Word


def _reading_frame(page: Page, words: list[_Word]) -> tuple[float, ...] | None:
    """A matrix from display coordinates to a frame where the page's text runs left to right, for a
    page whose text mostly runs up or down (a landscape table printed on a portrait page); else None.

    Both finders read rows as horizontal bands of words, so on such a page they cut the table
    across its rows. Most words of three or more characters must be taller than wide; which way the
    text turns comes from the text layer's line directions (``Page.vertical_chars``, counted by
    the text stage).
    """
    long = [w for w in words if len(w.text) >= 3]
    if len(long) < 10 or sum(w.y1 - w.y0 > 1.5 * (w.x1 - w.x0) for w in long) < 0.6 * len(long):
        return None
    if sum(w.x1 - w.x0 > 1.5 * (w.y1 - w.y0) for w in long) >= 0.15 * len(long):
        # upright prose beside the sideways text (a paragraph over a turned table): the page is
        # mixed, each read in its own frame (``_sideways_share``), not all turned
        return None
    up, down = page.vertical_chars
    width, height = page.width, page.height
    if up > 2 * down:  # text reads bottom to top: turn the page a quarter clockwise
        return (0.0, 1.0, -1.0, 0.0, height, 0.0)
    if down > 2 * up:  # top to bottom: a quarter anticlockwise
        return (0.0, -1.0, 1.0, 0.0, 0.0, width)
    return None


def _is_tall(w: _Word) -> bool:
    """A word of three or more characters set sideways: taller than wide."""
    return len(w.text) >= 3 and w.y1 - w.y0 > 1.5 * (w.x1 - w.x0)


def _sideways_share(
    pg: pymupdf.Page, page: Page, words: list[_Word]
) -> tuple[tuple[float, ...], list[_Word], list[_Word]] | None:
    """For a page mixing upright and sideways text (a landscape table beside upright prose, a
    caption printed upright beside a turned table): the frame the sideways words read in, those
    words and the upright ones; else None. The page as a whole stays upright (``_reading_frame``
    turns a page only when most of its text is sideways).

    Which words are sideways comes from the text layer's line directions, read here only for a
    page with ten or more tall words (a short word set sideways is not taller than wide). MuPDF
    gives a line's box and direction in unrotated space; on a page with /Rotate both are turned to
    display space first, as the words are (content set sideways on a page that /Rotate turns
    upright again, or the other way round, reads like any other).
    """
    if sum(_is_tall(w) for w in words) < 10:
        return None
    up, down = page.vertical_chars
    if up > 2 * down:
        frame = (0.0, 1.0, -1.0, 0.0, page.height, 0.0)
    elif down > 2 * up:
        frame = (0.0, -1.0, 1.0, 0.0, 0.0, page.width)
    else:
        return None  # text turned both ways on one page: no single frame reads it
    rot = tuple(pg.rotation_matrix) if pg.rotation else None
    lines = [ln for block in pg.get_text("dict", flags=0)["blocks"] for ln in block.get("lines", ())]
    if rot is None:
        boxes = [ln["bbox"] for ln in lines if abs(ln["dir"][1]) > 0.9]
    else:  # a direction's displayed dy is (b, d) of the rotation (see textlayer.read_text_layer)
        boxes = [
            transform_box(ln["bbox"], rot)
            for ln in lines
            if abs(rot[1] * ln["dir"][0] + rot[3] * ln["dir"][1]) > 0.9
        ]
    tall: list[_Word] = []
    upright: list[_Word] = []
    for w in words:
        cx, cy = (w.x0 + w.x1) / 2, (w.y0 + w.y1) / 2
        inside = any(b[0] - 1 <= cx <= b[2] + 1 and b[1] - 1 <= cy <= b[3] + 1 for b in boxes)
        (tall if inside else upright).append(w)
    return frame, tall, upright


def _upside_down(page: Page, words: list[_Word]) -> tuple[float, ...] | None:
    """A matrix turning the page half way round, for a page whose text mostly runs right to left,
    upside down (a table printed turned 180 degrees, or turned 90 degrees on a page whose /Rotate
    turns it 90 more); else None. The text stage counts those characters (``Page.reversed_chars``)."""
    n = sum(len(w.text) for w in words)
    if page.reversed_chars >= 20 and page.reversed_chars > 0.5 * n:
        return (-1.0, 0.0, 0.0, -1.0, page.width, page.height)
    return None


def _turn_lines(lines: list[Line], frame: tuple[float, ...]) -> list[Line]:
    return [dataclasses.replace(ln, bbox=transform_box(ln.bbox, frame)) for ln in lines]


def _table_to_display(table: Table, back: dict[int, tuple[float, ...]]) -> Table:
    """Boxes of a table found in reading frames (``_reading_frame``) mapped back to display space
    (``back``: each turned page's inverse frame)."""
    if table.first_page_index in back:
        table.bbox = transform_box(table.bbox, back[table.first_page_index])
    table.regions = [(i, transform_box(b, back[i]) if i in back else b) for i, b in table.regions]
    for cell in table.cells:
        if cell.bbox is not None and cell.page_index in back:
            cell.bbox = transform_box(cell.bbox, back[cell.page_index])
    return table
