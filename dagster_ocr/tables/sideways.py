"""Pages whose tables are printed sideways: read in the frame their text runs in, boxes turned back."""

from __future__ import annotations

import dataclasses

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
    up, down = page.vertical_chars
    width, height = page.width, page.height
    if up > 2 * down:  # text reads bottom to top: turn the page a quarter clockwise
        return (0.0, 1.0, -1.0, 0.0, height, 0.0)
    if down > 2 * up:  # top to bottom: a quarter anticlockwise
        return (0.0, -1.0, 1.0, 0.0, 0.0, width)
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
