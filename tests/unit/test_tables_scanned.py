"""Ruled tables on OCR'd pages (``tables.scanned``): rules from the image, cells from the OCR lines."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pymupdf
import pytest

from dagster_ocr.ingest import DocumentStore
from dagster_ocr.model import Line, Page, TextSource
from dagster_ocr.pipeline import parse
from dagster_ocr.settings import Settings
from dagster_ocr.tables import TableSettings, extract_tables
from dagster_ocr.tables.scanned import image_rules, ocr_page_as_pdf

SCANNED_TABLE = "tables/unstructured/table-multi-row-column-cells/table-multi-row-column-cells.pdf"


def _grid_image(rows: int = 3, cols: int = 3, cell: int = 60, letters: bool = True) -> np.ndarray:
    img = np.full((40 + rows * cell, 40 + cols * cell), 255, np.uint8)
    for r in range(rows + 1):
        img[20 + r * cell, 20 : 21 + cols * cell] = 0
    for c in range(cols + 1):
        img[20 : 21 + rows * cell, 20 + c * cell] = 0
    if letters:  # letter strokes in the cells: short, never rules
        for r in range(rows):
            for c in range(cols):
                y, x = 35 + r * cell, 30 + c * cell
                img[y : y + 12, x : x + 2] = 0
                img[y + 10 : y + 12, x : x + 9] = 0
    return img


def test_the_rules_of_a_scanned_grid_are_found_and_letters_are_not():
    rules = image_rules(_grid_image(), scale=1.0)
    flat = [r for r in rules if r[1] == r[3]]
    upright = [r for r in rules if r[0] == r[2]]
    assert len(flat) == 4 and len(upright) == 4, rules
    assert all(r[2] - r[0] >= 180 for r in flat) and all(r[3] - r[1] >= 180 for r in upright)
    assert image_rules(np.full((100, 100), 255, np.uint8), 1.0) == []


def _image_page(image: np.ndarray) -> tuple[pymupdf.Document, pymupdf.Page]:
    doc = pymupdf.open()
    page = doc.new_page(width=image.shape[1], height=image.shape[0])
    pix = pymupdf.Pixmap(pymupdf.csGRAY, image.shape[1], image.shape[0], image.tobytes(), False)
    page.insert_image(page.rect, pixmap=pix)
    return doc, page


def _ocr_page(lines: list[tuple[str, tuple[float, float, float, float]]], w: float, h: float) -> Page:
    return Page(
        index=0,
        width=w,
        height=h,
        lines=[Line(text=t, bbox=b, block=-1) for t, b in lines],
        text_source=TextSource.OCR,
        engine="rapidocr",
    )


def test_an_ocr_page_with_a_grid_becomes_a_table_cell_by_cell():
    image = _grid_image(rows=2, cols=2, cell=80, letters=False)
    doc, pg = _image_page(image)
    h, w = image.shape
    lines = [
        ("Item", (30, 40, 70, 52)),
        ("Price", (110, 40, 160, 52)),
        ("Tea", (30, 120, 60, 132)),
        ("€ 4.50", (110, 120, 160, 132)),
    ]
    page = _ocr_page(lines, w, h)
    [table] = extract_tables(doc, [page], settings=TableSettings())
    cells = {(c.row, c.col): c.text for c in table.cells}
    assert cells == {(0, 0): "Item", (0, 1): "Price", (1, 0): "Tea", (1, 1): "€ 4.50"}
    # without rules, or with the setting off, an OCR'd page holds no table
    blank_doc, blank_pg = _image_page(np.full((h, w), 255, np.uint8))
    assert ocr_page_as_pdf(blank_pg, page) is None

    assert extract_tables(doc, [page], TableSettings(ocr_pages=False)) == []


def test_a_grid_with_an_empty_column_is_a_diagrams_boxes_not_a_table():
    from dagster_ocr.tables.scanned import has_an_empty_column

    assert has_an_empty_column([["Attitude", "", "Intention"], ["", "", ""]])
    assert not has_an_empty_column([["Name", "Remarks"], ["Tea", ""], ["Milk", ""]])  # a header
    assert not has_an_empty_column([["Results", None], ["Accuracy", "Time"]])  # a spanning header
    assert has_an_empty_column([["Attitude", "", "Use"], ["", None, ""]])  # a gap, merged into a span
    # two boxes joined by a line, labels inside: the rules make a 1x3 grid, its middle column empty
    image = np.full((160, 420), 255, np.uint8)
    for x0 in (20, 260):
        image[40, x0 : x0 + 141] = image[120, x0 : x0 + 141] = 0
        image[40:121, x0] = image[40:121, x0 + 140] = 0
    image[80, 160:260] = 0
    doc, _ = _image_page(image)
    page = _ocr_page([("Attitude", (40, 70, 120, 90)), ("Intention", (280, 70, 370, 90))], 420, 160)
    assert extract_tables(doc, [page], settings=TableSettings()) == []


def test_a_page_read_turned_is_left_alone():
    doc, pg = _image_page(_grid_image(rows=2, cols=2, cell=80, letters=False))
    turned = [("Item", (30, 40, 42, 90)), ("Price", (110, 40, 122, 90)), ("Tea", (30, 120, 42, 150))]
    assert ocr_page_as_pdf(pg, _ocr_page(turned, 200, 200)) is None


def test_ocr_words_lie_over_their_line_in_proportion():
    from dagster_ocr.tables.scanned import ocr_words

    page = _ocr_page([("ab  cdef", (0, 10, 80, 20)), ("§ 12", (0, 30, 40, 40))], 100, 100)
    assert list(ocr_words(page)) == [
        (0.0, 10, 20.0, 20, "ab"),
        (40.0, 10, 80.0, 20, "cdef"),
        (0.0, 30, 10.0, 40, "§"),
        (20.0, 30, 40.0, 40, "12"),
    ]


def _turned(image: np.ndarray, degrees: float) -> tuple[np.ndarray, tuple[float, ...]]:
    """``image`` turned about its centre by ``degrees`` (counter-clockwise as seen), as a scanner
    fed askew gives it, and the affine map of its points."""
    import cv2

    h, w = image.shape
    m = cv2.getRotationMatrix2D((w / 2, h / 2), degrees, 1.0)
    turned = cv2.warpAffine(image, m, (w, h), flags=cv2.INTER_LINEAR, borderValue=255)
    return turned, (m[0, 0], m[1, 0], m[0, 1], m[1, 1], m[0, 2], m[1, 2])


def _tilted_box(box: tuple[float, float, float, float], m: tuple[float, ...]) -> tuple[float, ...]:
    """The upright box around ``box`` turned by ``m``: what the OCR stage gives a tilted line."""
    a, b, c, d, e, f = m
    x0, y0, x1, y1 = box
    pts = [(a * x + c * y + e, b * x + d * y + f) for x, y in ((x0, y0), (x1, y0), (x1, y1), (x0, y1))]
    return (min(p[0] for p in pts), min(p[1] for p in pts), max(p[0] for p in pts), max(p[1] for p in pts))


@pytest.mark.parametrize("degrees", [2.0, -3.0])
def test_a_grid_scanned_askew_is_found_on_the_levelled_image_and_mapped_back(degrees: float):
    # a 3x3 ruled table across a 400-pt page, fed in askew: its rules are staircases of short
    # steps in the image, too short for the rule search, until the image is turned level
    grid = np.full((220, 440), 255, np.uint8)
    for y in (20, 80, 140, 200):
        grid[y, 20:421] = 0
    for x in (20, 150, 280, 420):
        grid[20:201, x] = 0
    image, m = _turned(grid, degrees)
    doc, _ = _image_page(image)
    words = ["Region", "Units", "Value", "North", "1,200", "4.50", "South", "980", "3.75"]
    level = [
        (t, (x + 10.0, y + 20.0, x + 10.0 + 9 * len(t), y + 34.0))
        for t, (y, x) in zip(words, [(y, x) for y in (20, 80, 140) for x in (20, 150, 280)], strict=True)
    ]
    page = _ocr_page([(t, _tilted_box(b, m)) for t, b in level], 440, 220)
    # unlevelled, as before Page.skew: no table (the rules fall apart)
    assert extract_tables(doc, [page], settings=TableSettings()) == []
    page.skew = -degrees  # lines turned counter-clockwise rise to the right
    [table] = extract_tables(doc, [page], settings=TableSettings())
    cells = {(c.row, c.col): c.text for c in table.cells}
    assert cells == {(r, c): words[3 * r + c] for r in range(3) for c in range(3)}
    # the table's box is back on the page as scanned: around the turned grid, not the level one
    corners = [_tilted_box((x, y, x, y), m)[:2] for x, y in ((20, 20), (420, 20), (420, 200), (20, 200))]
    want = (min(p[0] for p in corners), min(p[1] for p in corners))
    want += (max(p[0] for p in corners), max(p[1] for p in corners))
    assert all(abs(got - w) < 6 for got, w in zip(table.bbox, want, strict=True)), (table.bbox, want)


def test_a_level_grid_is_searched_as_scanned_whatever_tilt_its_lines_were_given():
    # the detector's polygons over a table's short cells can lean on a level page: the rules,
    # straight as scanned, say it is level (a generated page read at 1.2 degrees lost its table)
    image = _grid_image(rows=2, cols=2, cell=80, letters=False)
    doc, _ = _image_page(image)
    h, w = image.shape
    lines = [("Item", (30, 40, 70, 52)), ("Price", (110, 40, 160, 52)), ("Tea", (30, 120, 60, 132))]
    page = _ocr_page([*lines, ("€ 4.50", (110, 120, 160, 132))], w, h)
    page.skew = 1.2
    [table] = extract_tables(doc, [page], settings=TableSettings())
    assert {(c.row, c.col): c.text for c in table.cells}[(1, 1)] == "€ 4.50"
    assert table.bbox == pytest.approx((20, 20, 180, 180), abs=1.5)


def test_the_rules_residual_tilt_is_measured_from_the_rules():
    from dagster_ocr.tables.scanned import rule_tilt

    grid = np.full((400, 900), 255, np.uint8)
    for y in (50, 150, 250, 350):
        grid[y, 50:851] = 0
    for x in (50, 450, 850):
        grid[50:351, x] = 0
    assert rule_tilt(grid, 0.5) == 0.0  # level
    turned, _ = _turned(grid, 0.4)  # counter-clockwise: rules rise to the right
    assert rule_tilt(turned, 0.5) == pytest.approx(-0.4, abs=0.03)
    turned, _ = _turned(grid, -0.7)
    assert rule_tilt(turned, 0.5) == pytest.approx(0.7, abs=0.03)
    assert rule_tilt(np.full((100, 100), 255, np.uint8), 0.5) == 0.0  # no rules


@pytest.mark.slow  # OCRs one 1377x648 page (about 1-2 CPU s)
def test_a_scanned_ruled_table_is_read_as_its_expected_csv(corpus: Path, tmp_path: Path):
    pdf = corpus / SCANNED_TABLE
    source, _ = DocumentStore(tmp_path).register(pdf)
    from dagster_ocr.ocr import get_engine

    settings = Settings()
    parsed = parse(source, settings, get_engine(settings.ocr))
    [table] = parsed.tables
    got = [["" for _ in range(table.n_cols)] for _ in range(table.n_rows)]
    for c in table.cells:
        got[c.row][c.col] = c.text
    expected_csv = pdf.parent / "expected" / "table-multi-row-column-cells-actual.csv"
    want = [row[: table.n_cols] for row in csv.reader(expected_csv.open(encoding="utf-8"))]
    norm = [[" ".join(x.replace("/ ", "/").split()) for x in row] for row in got]
    assert norm == [[" ".join(x.split()) for x in row] for row in want]
    # every OCR'd word is the table's: none is left over as a paragraph, none is lost
    assert [p.text for p in parsed.paragraphs.paragraphs] == []
