"""A scan's OCR layer: its line sizes are the producer's fit, not the print's type.

An OCR layer (text laid invisible over a scan, or drawn under it) sizes each line to its box on the
image, so one body type reads a fifth larger or smaller line by line; the paragraph stage took each
change for a change of type and broke the paragraph there. The text stage finds such a layer
(``textlayer.hidden_text_share``: the characters a reader cannot see) and sets the lines near the
page's body size in it (``textlayer.snap_fitted_sizes``); a heading set larger keeps its size.
"""

from __future__ import annotations

from pathlib import Path

import pymupdf
import pytest
from support.parsed import parsed as _parsed
from support.text_layouts import make_columns, make_ocr_layer, normal

from dagster_ocr.model import Line, Span
from dagster_ocr.textlayer import TextSettings, hidden_text_share, iter_pages, snap_fitted_sizes


def _scan(page: pymupdf.Page) -> None:
    pix = pymupdf.Pixmap(pymupdf.csGRAY, pymupdf.IRect(0, 0, 40, 50), False)
    pix.clear_with(230)
    page.insert_image(page.rect, pixmap=pix)


def _text(page: pymupdf.Page, mode: str) -> None:
    for i in range(12):
        page.insert_text(
            (30, 40 + 14 * i),
            f"line {i} of the scanned letter, read by the scanner's own recogniser",
            fontsize=9,
            render_mode=3 if mode == "invisible" else 0,
        )


@pytest.mark.parametrize("mode", ["invisible", "under", "over"])
def test_the_text_a_reader_cannot_see_is_measured_from_the_display_lists_order(mode: str) -> None:
    doc = pymupdf.open()
    page = doc.new_page(width=400, height=500)
    if mode == "under":
        _text(page, mode)
    _scan(page)
    if mode != "under":
        _text(page, mode)
    page = pymupdf.open("pdf", doc.tobytes())[0]
    assert hidden_text_share(page) == (0.0 if mode == "over" else 1.0)


def _line(text: str, size: float) -> Line:
    return Line(text=text, bbox=(0, 0, 100, size), spans=[Span(text=text, bbox=(0, 0, 100, size), size=size)])


def test_sizes_near_the_body_size_are_set_in_it_and_a_larger_heading_keeps_its_own() -> None:
    lines = [
        _line("Brief Notices", 62.0),
        *(_line("body text of a scanned page", s) for s in (30.0, 29.0, 30.0, 35.0, 24.0, 31.0)),
    ]
    snap_fitted_sizes(lines)
    assert [ln.spans[0].size for ln in lines] == [62.0, 30.0, 30.0, 30.0, 30.0, 30.0, 30.0]


def test_a_page_whose_visible_text_lies_on_a_background_image_keeps_its_sizes() -> None:
    doc = pymupdf.open()
    page = doc.new_page(width=400, height=500)
    _scan(page)
    page.insert_text((30, 40), "A title in a larger type", fontsize=11)
    for i in range(12):
        page.insert_text((30, 60 + 12 * i), f"line {i} of real text set on a background picture", fontsize=9)
    [read] = iter_pages(pymupdf.open("pdf", doc.tobytes()), TextSettings())
    assert "OCR layer" not in read.route_reason
    assert {ln.spans[0].size for ln in read.lines} == {11.0, 9.0}


@pytest.mark.parametrize("seed", [0, 3, 5, 8])
def test_a_scans_ocr_layer_reads_its_paragraphs_whole_as_the_printed_page_does(
    seed: int, tmp_path: Path
) -> None:
    def whole(doc: pymupdf.Document, where: Path) -> set[str]:
        out = _parsed(doc, where)
        blocks = {normal(p.text) for p in out.paragraphs.paragraphs}
        return {normal(b) for b in truth if normal(b) in blocks}

    case = make_ocr_layer(seed)
    truth = case.truths[0]
    (tmp_path / "printed").mkdir()
    (tmp_path / "scanned").mkdir()
    printed = whole(make_columns(seed).doc, tmp_path / "printed")
    scanned = whole(case.doc, tmp_path / "scanned")
    assert len(scanned) >= len(printed) - 1, sorted(printed - scanned)
    [page] = iter_pages(case.doc, TextSettings())
    assert page.route_reason.startswith("text layer sound (an OCR layer under a scan")
