"""The table stage's own reading of a page's lines (pages handed to it without them) is in display
coordinates, as its words are and as the text stage's lines are."""

from __future__ import annotations

import pymupdf
import pytest

from dagster_ocr.model import Page
from dagster_ocr.tables.words import _page_lines
from dagster_ocr.textlayer import read_text_layer


@pytest.mark.parametrize("rotation", [0, 90, 180, 270])
def test_lines_read_by_the_table_stage_are_where_the_text_stage_puts_them(rotation: int) -> None:
    doc = pymupdf.open()
    pg = doc.new_page(width=612, height=792)
    pg.insert_text((72, 90), "Table 1: Coverage by state", fontsize=11)
    pg.insert_text((300, 500), "Kerala 5738", fontsize=9)
    pg.set_rotation(rotation)
    bare = Page(index=0, width=pg.rect.width, height=pg.rect.height, rotation=rotation)
    ours = {ln.text: ln.bbox for ln in _page_lines(pg, bare)}
    stage = {ln.text: ln.bbox for ln in read_text_layer(pg)[0]}
    assert ours.keys() == stage.keys()
    for text, box in stage.items():
        assert ours[text] == pytest.approx(box, abs=0.01), text
