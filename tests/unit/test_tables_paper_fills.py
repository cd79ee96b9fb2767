"""White boxes on white paper (issue 37): a list ruled over several pages, its rows shaded, pads
one row on one page with a white box in the margin. Nobody can see that box, but the line finder
read its sides as rules: that page's grid had a column more than the pages around it, and the
list was cut into two tables there. A white fill painted on nothing but white is the paper now
(``tables.grid._visible_paths``). Rules, shading and text placed by hand."""

from __future__ import annotations

import pymupdf
import pytest

from dagster_ocr.model import Page
from dagster_ocr.tables import TableSettings, extract_tables
from dagster_ocr.tables.grid import _visible_paths

XS = [70.0, 106.0, 350.0, 505.0]
YELLOW, WHITE = (1.0, 0.8, 0.0), (1.0, 1.0, 1.0)
CATEGORIES = ["Anaesthetics", "Analgesics", "Antibiotics", "Antacids", "Vitamins"]


def _register(pages: int = 2, rows: int = 30, pad_on: int = 1):
    doc = pymupdf.open()
    n = 0
    for p in range(pages):
        page = doc.new_page(width=612, height=792)
        top, pitch = 72.0, 20.0
        shape = page.new_shape()
        for r in range(rows):
            y0 = top + pitch * r
            if r % 2:
                shape.draw_rect(pymupdf.Rect(XS[0], y0, XS[-1], y0 + pitch))
                shape.finish(fill=YELLOW, color=None)
            if p == pad_on and r == rows // 2:
                shape.draw_rect(pymupdf.Rect(54.5, y0, XS[0], y0 + pitch))  # the pad in the margin
                shape.finish(fill=WHITE, color=None)
        for r in range(rows + 1):
            shape.draw_line((XS[0], top + pitch * r), (XS[-1], top + pitch * r))
            shape.finish(color=(0, 0, 0), width=0.8)
        for x in XS:
            shape.draw_line((x, top), (x, top + pitch * rows))
            shape.finish(color=(0, 0, 0), width=0.8)
        shape.commit()
        for r in range(rows):
            n += 1
            y = top + pitch * r + 14
            page.insert_text((XS[0] + 4, y), str(n), fontsize=9)
            page.insert_text((XS[1] + 4, y), f"Generic medicine {n} tab {5 * n} mg", fontsize=9)
            page.insert_text((XS[2] + 4, y), CATEGORIES[n % len(CATEGORIES)], fontsize=9)
    return doc


def _tables(doc: pymupdf.Document):
    pages = [Page(index=pg.number, width=pg.rect.width, height=pg.rect.height) for pg in doc]
    return extract_tables(doc, pages, TableSettings())


def test_a_white_box_in_the_margin_leaves_the_list_one_table() -> None:
    (table,) = _tables(_register())
    assert table.pages == [0, 1] and table.n_cols == 3
    grid = table.grid()
    assert len(grid) == 60
    assert grid[45] == ["46", "Generic medicine 46 tab 230 mg", CATEGORIES[46 % 5]]


@pytest.mark.parametrize("under", [(0.2, 0.3, 0.6), None])
def test_white_boxes_seen_against_paint_or_a_picture_keep_their_sides(under) -> None:
    def fill(rect, colour):
        return {"type": "f", "fill": colour, "fill_opacity": 1.0, "rect": rect, "items": [("re", rect, 1)]}

    pad = fill((54.5, 100, 70, 120), WHITE)
    if under is None:  # nothing under it, but the page shows an image: the paper may be a picture
        assert _visible_paths([pad], on_paper=False) == [pad]
        assert _visible_paths([pad], on_paper=True) == []
    else:
        blue = fill((40, 95, 70, 125), under)
        assert _visible_paths([blue, pad], on_paper=True) == [blue, pad]
        assert _visible_paths([pad, blue], on_paper=True) == [blue]  # painted first: on the paper


def test_a_zebra_tables_white_rows_are_its_rows() -> None:
    """A white row between shaded ones (or under the last) lies on the paper too, but its top or
    bottom is a shaded row's: it is kept (dropped, the last row of Apple's index of statements,
    white under a gray one, fell out of its table)."""
    gray = {"type": "f", "fill": (0.94,) * 3, "fill_opacity": 1.0, "rect": (50, 100, 512, 122)}
    white = {"type": "f", "fill": WHITE, "fill_opacity": 1.0, "rect": (50, 122, 512, 144)}
    for p in (gray, white):
        p["items"] = [("re", p["rect"], 1)]
    assert _visible_paths([gray, white], on_paper=True) == [gray, white]
    beside = dict(white, rect=(512, 100, 562, 122))  # beside the row, not on or under it
    beside["items"] = [("re", beside["rect"], 1)]
    assert _visible_paths([gray, beside], on_paper=True) == [gray]
