"""Unit tests of table extraction and cross-page merging on tiny PDFs drawn with PyMuPDF."""

from __future__ import annotations

from pathlib import Path

import pymupdf
import pytest
from pydantic import ValidationError
from support.table_pages import print_rows

from dagster_ocr.model import Page, TextSource
from dagster_ocr.samples import SAMPLE_FACTS, write_samples
from dagster_ocr.tables import TableSettings, extract_tables
from dagster_ocr.textlayer import TextSettings, iter_pages

# The classic ruling-line finder is exact and fast on drawn grids; the merge logic does not
# depend on which finder produced the parts.
LINES = TableSettings(finder="lines")
HEADER = ["Region", "Year", "Value"]
COLS = [60.0, 200.0, 330.0, 460.0]
LOREM = "This paragraph of ordinary body text separates the two tables and is long enough to read as prose."


def _table(page: pymupdf.Page, y0: float, rows: list[list[str]], row_h: float = 20.0) -> float:
    """Draw a ruled grid with one text per cell; returns the bottom y."""
    y1 = y0 + row_h * len(rows)
    for i in range(len(rows) + 1):
        page.draw_line((COLS[0], y0 + i * row_h), (COLS[-1], y0 + i * row_h))
    for x in COLS:
        page.draw_line((x, y0), (x, y1))
    for r, row in enumerate(rows):
        for c, text in enumerate(row):
            page.insert_text((COLS[c] + 4, y0 + r * row_h + 14), text, fontsize=10)
    return y1


def _pages(doc: pymupdf.Document) -> list[Page]:
    out = []
    for i in range(doc.page_count):
        pg = doc[i]
        out.append(Page(index=i, width=pg.rect.width, height=pg.rect.height))
    return out


def _words(pg: pymupdf.Page) -> list:
    """The page's words as the finders read them, from the PDF (a page without the text stage's)."""
    from dagster_ocr.tables.words import _page_words

    return _page_words(pg, Page(index=pg.number, width=pg.rect.width, height=pg.rect.height))


def _continued_doc() -> pymupdf.Document:
    doc = pymupdf.open()
    p1 = doc.new_page(width=595, height=842)
    p1.insert_text((60, 80), LOREM, fontsize=9)
    p1.insert_text((60, 120), "Table 1. Measurements by region", fontsize=10)
    body1 = [[f"R{i}", str(2000 + i), str(i * 10)] for i in range(30)]
    _table(p1, 130, [HEADER, *body1])  # ends at y=750: near the page bottom
    p1.insert_text((60, 770), "See notes at end of table.", fontsize=8)
    p1.insert_text((290, 820), "1", fontsize=9)
    p2 = doc.new_page(width=595, height=842)
    p2.insert_text((60, 60), "Table 1. Measurements by region (continued)", fontsize=10)
    body2 = [[f"S{i}", str(2100 + i), str(i * 7)] for i in range(5)]
    bottom = _table(p2, 70, [HEADER, *body2])
    p2.insert_text((60, bottom + 30), LOREM, fontsize=9)
    p2.insert_text((290, 820), "2", fontsize=9)
    return doc


def test_continued_table_is_merged_with_header_once() -> None:
    doc = _continued_doc()
    tables = extract_tables(doc, _pages(doc), LINES)
    assert len(tables) == 1
    t = tables[0]
    assert (t.table_id, t.first_page_index, t.last_page_index, t.pages) == ("t0", 0, 1, [0, 1])
    assert t.merge_kind == "rows" and t.n_cols == 3
    assert t.n_rows == 1 + 30 + 5  # the repeated header on page 2 is dropped
    grid = t.grid()
    assert grid[0] == HEADER
    assert sum(1 for row in grid if row == HEADER) == 1
    assert grid[1] == ["R0", "2000", "0"] and grid[30] == ["R29", "2029", "290"]
    assert grid[31] == ["S0", "2100", "0"] and grid[-1] == ["S4", "2104", "28"]
    rows_page = {c.row: c.page_index for c in t.cells}
    assert rows_page[30] == 0 and rows_page[31] == 1
    assert [p for p, _ in t.regions] == [0, 1]
    assert t.header_rows == 1
    assert all(c.is_header == (c.row == 0) for c in t.cells)
    assert t.caption.startswith("Table 1. Measurements")
    assert t.strategy == "lines"


def test_same_header_separated_by_body_text_is_not_merged() -> None:
    doc = pymupdf.open()
    p1 = doc.new_page(width=595, height=842)
    bottom = _table(p1, 80, [HEADER, ["A", "2001", "1"], ["B", "2002", "2"]])
    for k in range(12):  # a full paragraph after the table, to the bottom of the page
        p1.insert_text((60, bottom + 30 + 14 * k), LOREM, fontsize=9)
    p2 = doc.new_page(width=595, height=842)
    for k in range(6):
        p2.insert_text((60, 70 + 14 * k), LOREM, fontsize=9)
    _table(p2, 180, [HEADER, ["C", "2003", "3"], ["D", "2004", "4"]])
    tables = extract_tables(doc, _pages(doc), LINES)
    assert [(t.table_id, t.pages, t.merge_kind) for t in tables] == [("t0", [0], ""), ("t1", [1], "")]
    assert tables[0].grid()[0] == HEADER and tables[1].grid()[0] == HEADER


def test_different_column_layout_is_not_merged() -> None:
    doc = _continued_doc()
    pages = _pages(doc)
    strict = TableSettings(finder="lines", col_tolerance=0.0)
    assert len(extract_tables(doc, pages, strict)) == 1  # identical grids still match exactly
    assert len(extract_tables(doc, pages, TableSettings(finder="lines", merge=False))) == 2


def test_ocr_pages_are_skipped() -> None:
    doc = _continued_doc()
    pages = _pages(doc)
    pages[1].text_source = TextSource.OCR
    tables = extract_tables(doc, pages, LINES)
    assert len(tables) == 1 and tables[0].pages == [0] and tables[0].n_rows == 31


def test_settings_reject_unknown_keys() -> None:
    with pytest.raises(ValidationError):
        TableSettings(finder="lines", bogus=1)  # type: ignore[call-arg]


# --- text-alignment ("stream") finder: tables without ruling lines -------------------------------

STREAM_COLS = [60.0, 250.0, 360.0, 470.0]  # left edge of each printed column


def _borderless(page: pymupdf.Page, y0: float, rows: list[list[str]], pitch: float = 14.0) -> float:
    """Print rows of cells at fixed column positions, no rules at all; returns the bottom y."""
    return print_rows(page, y0, rows, STREAM_COLS, pitch)


def test_borderless_table_with_stacked_header() -> None:
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    page.insert_text((60, 80), LOREM, fontsize=9)
    body = [[f"District {i}", str(100 + i), f"{i * 3}.5", f"{i}%"] for i in range(8)]
    # a two-line header: the lines stack into one header row (ICDAR's convention for wrapped headers)
    _borderless(page, 130, [["", "Counts", "", "Percent"], ["Area", "Pupils", "Ratio", "Share"], *body])
    page.insert_text((60, 300), LOREM, fontsize=9)
    tables = extract_tables(doc, _pages(doc), settings=TableSettings())
    assert len(tables) == 1
    t = tables[0]
    assert t.strategy == "stream" and t.n_cols == 4 and t.n_rows == 9
    grid = t.grid()
    assert grid[0] == ["Area", "Counts Pupils", "Ratio", "Percent Share"]
    assert grid[1] == ["District 0", "100", "0.5", "0%"] and grid[-1] == ["District 7", "107", "21.5", "7%"]
    assert t.header_rows == 1
    assert all(c.is_header == (c.row == 0) for c in t.cells)
    assert not any(c.suspicious for c in t.cells)


def test_two_column_prose_and_bullets_are_not_tables() -> None:
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    words = LOREM.split()
    for k in range(20):  # two columns of running text
        page.insert_text((60, 80 + 12 * k), " ".join(words[k % 5 : k % 5 + 7]), fontsize=9)
        page.insert_text((320, 80 + 12 * k), " ".join(words[(k + 2) % 6 : (k + 2) % 6 + 7]), fontsize=9)
    for k in range(4):
        page.insert_text((60, 400 + 14 * k), "•", fontsize=9)
        page.insert_text((90, 400 + 14 * k), f"item number {k}", fontsize=9)
    assert extract_tables(doc, _pages(doc), settings=TableSettings()) == []


def test_borderless_table_continued_on_next_page_is_merged() -> None:
    doc = pymupdf.open()
    head = ["Region", "Pupils", "Ratio", "Share"]
    p1 = doc.new_page(width=595, height=842)
    p1.insert_text((60, 80), LOREM, fontsize=9)
    p1.insert_text((60, 110), "Table 2. Pupils by region", fontsize=10)
    _borderless(p1, 130, [head, *[[f"North {i}", str(200 + i), f"{i}.25", f"{i}%"] for i in range(45)]])
    p1.insert_text((290, 820), "1", fontsize=9)
    p2 = doc.new_page(width=595, height=842)
    p2.insert_text((60, 60), "Table 2. Pupils by region (continued)", fontsize=10)
    bottom = _borderless(
        p2, 80, [head, *[[f"South {i}", str(300 + i), f"{i}.75", f"{i}%"] for i in range(6)]]
    )
    p2.insert_text((60, bottom + 30), LOREM, fontsize=9)
    tables = extract_tables(doc, _pages(doc), settings=TableSettings())
    assert len(tables) == 1
    t = tables[0]
    assert t.pages == [0, 1] and t.merge_kind == "rows" and t.n_rows == 1 + 45 + 6
    grid = t.grid()
    assert sum(1 for row in grid if row == head) == 1
    assert grid[45] == ["North 44", "244", "44.25", "44%"] and grid[46] == ["South 0", "300", "0.75", "0%"]


def test_sample_contract_table_merges_with_default_finder(tmp_path: Path) -> None:
    write_samples(tmp_path)
    doc = pymupdf.open(tmp_path / SAMPLE_FACTS["file_name"])
    facts = SAMPLE_FACTS["table"]
    tables = [
        t
        for t in extract_tables(doc, _pages(doc), settings=TableSettings())
        if t.caption.startswith("Table 1")
    ]
    assert len(tables) == 1
    t = tables[0]
    assert t.pages == facts["pages"] and t.n_cols == facts["n_cols"] and t.n_rows == facts["n_rows_merged"]
    grid = t.grid()
    assert grid[0] == facts["header"] and grid[1] == facts["first_row"] and grid[-1] == facts["last_row"]
    assert t.caption == facts["caption"]


# --- column continuations: a wide table whose further columns follow on the next page ------------

STATES = [f"State {chr(65 + i)}{chr(65 + i)}" for i in range(20)] + ["Total"]


def _split_by_columns_doc(caption1: str, caption2: str, wrap_stub: bool = False) -> pymupdf.Document:
    """Borderless table: stub + 2001-2003 on page 1, the same stubs + 2004-2006 on page 2."""
    doc = pymupdf.open()
    p1 = doc.new_page(width=595, height=842)
    p1.insert_text((60, 80), LOREM, fontsize=9)
    if caption1:
        p1.insert_text((60, 110), caption1, fontsize=10)
    rows1: list[list[str]] = [["State", "2001", "2002", "2003"]]
    for i, st in enumerate(STATES):
        if wrap_stub and i == 3:  # a long stub wrapped onto a second, stub-only line
            rows1 += [["Native Tribal", "31", "32", "33"], ["Area", "", "", ""]]
            continue
        rows1.append([st, str(1000 + i), str(1100 + i), str(1200 + i)])
    _borderless(p1, 130, rows1)
    p1.insert_text((290, 820), "1", fontsize=9)
    p2 = doc.new_page(width=595, height=842)
    if caption2:
        p2.insert_text((60, 60), caption2, fontsize=10)
    rows2: list[list[str]] = [["State", "2004", "2005", "2006"]]
    for i, st in enumerate(STATES):
        stub = "Native Tribal Area" if wrap_stub and i == 3 else st
        rows2.append([stub, str(2000 + i), str(2100 + i), str(2200 + i)])
    _borderless(p2, 80, rows2)
    p2.insert_text((60, 80 + 14 * len(rows2) + 30), LOREM, fontsize=9)
    p2.insert_text((290, 820), "2", fontsize=9)
    return doc


def test_wide_table_continued_by_columns_is_joined_on_the_stub() -> None:
    doc = _split_by_columns_doc(
        "Table 3. Enrolment by state", "Table 3. Enrolment by state (continued)", True
    )
    tables = extract_tables(doc, _pages(doc), settings=TableSettings())
    assert len(tables) == 1
    t = tables[0]
    # same column layout on both pages: only the repeated stubs tell it is not a row continuation
    assert t.merge_kind == "columns" and t.pages == [0, 1] and [p for p, _ in t.regions] == [0, 1]
    assert (t.n_cols, t.n_rows, t.header_rows) == (7, 1 + len(STATES), 1)
    grid = t.grid()
    assert grid[0] == ["State", "2001", "2002", "2003", "2004", "2005", "2006"]
    assert grid[1] == ["State AA", "1000", "1100", "1200", "2000", "2100", "2200"]
    # the stub wrapped on page 1 is printed on one line on page 2: one label, one row
    assert grid[4] == ["Native Tribal Area", "31", "32", "33", "2003", "2103", "2203"]
    assert grid[-1] == ["Total", "1020", "1120", "1220", "2020", "2120", "2220"]
    assert sum(1 for row in grid if row[0] == "State") == 1  # the stub is kept once
    pages = {(c.row, c.col): c.page_index for c in t.cells}
    assert all(pages[(r, c)] == 0 for r in range(t.n_rows) for c in range(4))
    assert all(pages[(r, c)] == 1 for r in range(t.n_rows) for c in range(4, 7))
    assert all(c.is_header == (c.row == 0) for c in t.cells)
    assert len({(c.row, c.col) for c in t.cells}) == len(t.cells)


@pytest.mark.parametrize(
    ("caption1", "caption2", "merged"),
    [
        ("Table 3. Enrolment by state", "Table 3. Enrolment by state", True),  # the title repeated
        ("Table 3. Enrolment by state", "Table 3 (cont'd)", True),
        ("Table 3. Enrolment by state", "Table 4. Teachers by state", False),  # a new table
        ("", "", False),  # same row labels, nothing says it continues
    ],
)
def test_same_stubs_need_continuation_evidence(caption1: str, caption2: str, merged: bool) -> None:
    """Rule: equal stubs row for row are necessary, not sufficient; a marker or repeated title must agree.

    Without one the parts stay separate tables, and are not joined by rows either: a row
    continuation never repeats the labels of the rows it continues.
    """
    doc = _split_by_columns_doc(caption1, caption2)
    tables = extract_tables(doc, _pages(doc), settings=TableSettings())
    if merged:
        assert [(t.pages, t.merge_kind, t.n_cols) for t in tables] == [([0, 1], "columns", 7)]
    else:
        assert [(t.pages, t.merge_kind, t.n_cols) for t in tables] == [([0], "", 4), ([1], "", 4)]
    off = extract_tables(doc, _pages(doc), TableSettings(merge_columns=False))
    assert [(t.pages, t.merge_kind) for t in off] == [([0], ""), ([1], "")]


def test_ruled_table_continued_by_columns_with_fewer_columns() -> None:
    doc = pymupdf.open()
    stubs = [f"Item {k}" for k in range(12)]
    p1 = doc.new_page(width=595, height=842)
    p1.insert_text((60, 120), "Table 7. Costs by item", fontsize=10)
    _table(p1, 130, [["Item", "Q1", "Q2"], *[[s, f"{k}.1", f"{k}.2"] for k, s in enumerate(stubs)]])
    p2 = doc.new_page(width=595, height=842)
    p2.insert_text((60, 60), "Table 7. Costs by item - continued", fontsize=10)
    # page 2 draws stub + one column, and its header names the stub differently
    y0, row_h = 70.0, 20.0
    rows = [["", "Q3"], *[[s, f"{k}.3"] for k, s in enumerate(stubs)]]
    for i in range(len(rows) + 1):
        p2.draw_line((COLS[0], y0 + i * row_h), (COLS[2], y0 + i * row_h))
    for x in COLS[:3]:
        p2.draw_line((x, y0), (x, y0 + row_h * len(rows)))
    for r, row in enumerate(rows):
        for c, text in enumerate(row):
            if text:
                p2.insert_text((COLS[c] + 4, y0 + r * row_h + 14), text, fontsize=10)
    # default: ruled grids read with text from word boxes
    tables = extract_tables(doc, _pages(doc), settings=TableSettings())
    assert [(t.pages, t.merge_kind, t.n_cols, t.n_rows) for t in tables] == [([0, 1], "columns", 4, 13)]
    grid = tables[0].grid()
    assert grid[0] == ["Item", "Q1", "Q2", "Q3"] and grid[5] == ["Item 4", "4.1", "4.2", "4.3"]
    assert tables[0].strategy == "lines"


def _run_the_port(grid, monkeypatch) -> None:
    """Run the ported line finder whatever PyMuPDF is installed: the tests comparing it with
    PyMuPDF's own functions are what tells whether it still matches after an upgrade."""
    monkeypatch.setattr(grid, "PORTED_FROM", pymupdf.VersionBind)


@pytest.mark.parametrize(
    ("name", "page_no"),
    [
        ("tables/icdar2013/us-012/us-012.pdf", 0),  # unrotated ruled table
        ("tables/tabula-java/schools/schools.pdf", 0),  # /Rotate 90
        ("tables/camelot/clockwise_table_1/clockwise_table_1.pdf", 0),  # /Rotate 180, irregular grid
    ],
)
def test_ruled_grids_match_pymupdf_find_tables(corpus: Path, name: str, page_no: int, monkeypatch) -> None:
    """Our word-fed run of PyMuPDF's line finder cuts the same cells as ``find_tables`` itself."""
    from dagster_ocr.tables import grid
    from dagster_ocr.tables.grid import _has_grid, _ruled_grids

    _run_the_port(grid, monkeypatch)
    # find_tables reads a white box on white paper as a box (grid._visible_paths drops it): the
    # port is compared as PyMuPDF reads the page
    real = grid._visible_paths
    monkeypatch.setattr(grid, "_visible_paths", lambda paths, on_paper=False: real(paths))
    with pymupdf.open(corpus / name) as doc:
        pg = doc[page_no]
        assert _has_grid(pg.get_cdrawings())
        ours = _ruled_grids(pg, pg.get_cdrawings(), _words(pg))
        ref = pg.find_tables(use_layout=False).tables
        assert len(ours) == len(ref) >= 1
        for a, b in zip(ours, ref, strict=True):
            cells_a = [c for row in a.rows for c in row.cells]
            cells_b = [c for row in b.rows for c in row.cells]
            assert len(cells_a) == len(cells_b)
            for ca, cb in zip(cells_a, cells_b, strict=True):
                assert (ca is None) == (cb is None)
                if ca is not None:  # edge positions are cluster means: equal to a fraction of a point
                    assert max(abs(x - y) for x, y in zip(ca, cb, strict=True)) < 0.5


def test_another_pymupdf_version_finds_ruled_tables_with_pymupdf_own_finder(
    corpus: Path, monkeypatch, caplog
) -> None:
    """On a PyMuPDF the port was not made from, ``find_tables(strategy="lines")`` reads the ruled
    tables (the port, which reaches into ``pymupdf.table``'s internals, never runs), and says so once."""
    import logging

    from dagster_ocr.tables import grid
    from dagster_ocr.textlayer import iter_pages

    with pymupdf.open(corpus / "tables/icdar2013/us-012/us-012.pdf") as doc:
        pages = list(iter_pages(doc, settings=TextSettings()))
        ported = extract_tables(doc, pages, settings=TableSettings())

        def no_port(*_args):
            raise AssertionError("the ported line finder ran on another PyMuPDF")

        monkeypatch.setattr(pymupdf, "VersionBind", "2.1.0")
        monkeypatch.setattr(grid, "_warned", set())
        monkeypatch.setattr(grid, "_make_edges", no_port)
        monkeypatch.setattr(grid, "_GridFinder", no_port)
        with caplog.at_level(logging.WARNING, logger=grid.__name__):
            fallback = extract_tables(doc, pages, settings=TableSettings())
            assert extract_tables(doc, pages, settings=TableSettings()) == fallback
            pg = doc[0]  # a sideways frame: PyMuPDF's grid would be transposed, text alignment reads it
            assert grid._ruled_grids(pg, [], _words(pg), (0.0, 1.0, -1.0, 0.0, pg.rect.height, 0.0)) == []
    assert [t.strategy for t in fallback] == ["lines"]
    assert [t.grid() for t in fallback] == [t.grid() for t in ported] and len(fallback[0].grid()) > 5
    warned = [r for r in caplog.records if r.name == grid.__name__ and r.levelno == logging.WARNING]
    assert len(warned) == 1 and "PyMuPDF 2.1.0" in warned[0].getMessage()


def test_a_failing_ruled_finder_falls_back_to_text_alignment(monkeypatch) -> None:
    from dagster_ocr.tables import document

    def broken(*_args):
        raise ValueError("a drawing the line finder chokes on")

    monkeypatch.setattr(document, "_ruled_grids", broken)
    doc = pymupdf.open()
    page = doc.new_page()
    _table(page, 100, [HEADER, ["North", "2024", "10"], ["South", "2024", "12"], ["East", "2024", "9"]])
    (table,) = extract_tables(doc, _pages(doc), TableSettings())
    assert table.grid()[1] == ["North", "2024", "10"]


def test_edges_from_c_drawings_match_pymupdf_make_edges(corpus: Path, monkeypatch) -> None:
    """``_make_edges`` on ``get_cdrawings()`` gives exactly PyMuPDF's edges from ``get_drawings()``,
    in the same order, on every ruled page of the corpus (rotated pages and ~900-drawing pages too).
    Both are fed the drawings less the fills no one can see (``grid._visible_paths``, which reads
    either form). Ours may add, after them, the border of a box PyMuPDF's PDF-space text test
    refused (see ``_make_edges``)."""
    from pymupdf import table as mt

    from dagster_ocr.tables import grid

    _run_the_port(grid, monkeypatch)
    real = grid._make_edges
    compared: list[int] = []

    def both(pg, cdrawings, tset, chars):
        ours = real(pg, cdrawings, tset, chars)
        assert mt._CHARS_VAR.get() is chars  # what PyMuPDF's version reads to decide which boxes are borders
        token = mt._EDGES_VAR.set([])
        try:
            paper = not pg.get_images(full=True)
            mt.make_edges(pg, tset=tset, paths=grid._visible_paths(pg.get_drawings(), on_paper=paper))
            ref = mt._EDGES_VAR.get()
            # PyMuPDF's edges in its order, then the borders it missed (see ``_make_edges``)
            assert ours[: len(ref)] == ref
            assert all(e["linewidth"] == 1 and e["stroking_color"] == (0, 0, 0) for e in ours[len(ref) :])
        finally:
            mt._EDGES_VAR.reset(token)
        compared.append(len(ours))
        return ours

    monkeypatch.setattr(grid, "_make_edges", both)
    for pdf in sorted(corpus.glob("**/*.pdf")):
        try:
            doc = pymupdf.open(pdf)
        except Exception:  # the corpus keeps a few deliberately broken files
            continue
        with doc:
            if doc.needs_pass:  # and an encrypted one (health_protected.pdf): no pages to read
                continue
            for pg in doc:
                cdrawings = pg.get_cdrawings()
                if grid._has_grid(cdrawings):
                    grid._ruled_grids(pg, cdrawings, _words(pg))
    assert len(compared) >= 80 and sum(compared) > 5_000


@pytest.mark.parametrize(
    "name",
    [
        "tables/tabula-java/schools/schools.pdf",  # dense grids, /Rotate 90
        "tables/camelot/health/health.pdf",  # ~900 drawings
        "tables/tabula-java/twotables/twotables.pdf",  # two tables on one page
        "tables/icdar2013/eu-005/eu-005.pdf",
    ],
)
def test_indexed_cell_finder_matches_pymupdf(corpus: Path, name: str, monkeypatch) -> None:
    """``_grid_cells`` / ``_cell_groups`` return exactly what PyMuPDF's quadratic originals return."""
    from pymupdf import table as mt

    from dagster_ocr.tables import grid

    _run_the_port(grid, monkeypatch)
    seen: list[tuple[dict, list[dict]]] = []
    real_init = grid._GridFinder.__init__

    def spy(self, page, settings):
        real_init(self, page, settings)
        seen.append((self.intersections, list(mt.CHARS)))

    monkeypatch.setattr(grid._GridFinder, "__init__", spy)
    with pymupdf.open(corpus / name) as doc:
        for pg in doc:
            cdrawings = pg.get_cdrawings()
            if grid._has_grid(cdrawings):
                grid._ruled_grids(pg, cdrawings, _words(pg))
    assert seen and sum(len(i) for i, _ in seen) > 20
    for intersections, chars in seen:
        cells = grid._grid_cells(intersections)
        assert cells == mt.intersections_to_cells(intersections)
        token = mt._CHARS_VAR.set(chars)
        try:
            assert grid._cell_groups(cells, chars) == mt.cells_to_tables(None, cells)
        finally:
            mt._CHARS_VAR.reset(token)


def test_column_cover_counts_each_line_once_per_point() -> None:
    """The run-merging cover count equals the plain per-point loop, on random word layouts."""
    import math
    import random

    from dagster_ocr.tables.stream import _column_cover
    from dagster_ocr.tables.words import _TextLine, _Word

    rng = random.Random(7)
    for _ in range(300):
        area = []
        for k in range(rng.randint(1, 8)):
            xs = sorted(rng.uniform(40, 560) for _ in range(2 * rng.randint(1, 6)))
            # some words zero-width or touching, to hit the run-merging edge cases
            words = [
                _Word(a, k, max(a, b - rng.choice([0, 3, 99])), k + 1, "w")
                for a, b in zip(xs[::2], xs[1::2], strict=True)
            ]
            area.append(_TextLine(words, [words]))
        x0 = min(ln.x0 for ln in area)
        n = int(math.ceil(max(ln.x1 for ln in area) - x0)) + 1
        expected = [0] * n
        for ln in area:
            seen = [False] * n
            for w in ln.words:
                for i in range(max(0, int(w.x0 - x0)), min(n, int(math.ceil(w.x1 - x0)))):
                    seen[i] = True
            expected = [c + v for c, v in zip(expected, seen, strict=True)]
        assert _column_cover(area, x0, n) == expected


def test_tables_read_the_words_the_text_stage_kept(corpus: Path, monkeypatch) -> None:
    """The text stage's words (same TextPage as its lines) are what PyMuPDF's word call gives,
    and the table stage reads them instead of extracting the page's text again."""
    from dagster_ocr.tables import words
    from dagster_ocr.textlayer import extract_words, iter_pages

    with pymupdf.open(corpus / "tables/tabula-java/schools/schools.pdf") as doc:  # /Rotate 90
        pages = list(iter_pages(doc, settings=TextSettings()))
        assert all(p.words is not None and len(p.words) > 50 for p in pages)
        for pg, page in zip(doc, pages, strict=True):
            assert list(page.words) == list(extract_words(pg))  # a TextPage of its own
        expected = extract_tables(doc, pages, settings=TableSettings())

        def no_second_read(*_args):
            raise AssertionError("the table stage read the page's words again")

        monkeypatch.setattr(words, "extract_words", no_second_read)
        assert extract_tables(doc, pages, settings=TableSettings()) == expected and expected


@pytest.mark.parametrize("rotate", [90, 270])
def test_a_text_aligned_table_printed_sideways(rotate: int) -> None:
    """A borderless table whose text runs up (90) or down (270) an upright page comes out row by row,
    with its box in the page's own coordinates."""
    rows = [["Region", "Quarter", "Revenue"]] + [
        [f"Area{i:02d}", f"Q{i % 4 + 1}", f"{1000 + 37 * i}"] for i in range(12)
    ]
    doc = pymupdf.open()
    page = doc.new_page()  # 595 x 842, upright
    for r, row in enumerate(rows):
        for c, text in enumerate(row):
            # reading frame: x along the text, y down the rows; placed so the rows stack across the page
            x_read, y_read = 80 + 150 * c, 80 + 18 * r
            if rotate == 90:  # text runs up: reading x grows upward, rows go left to right
                point = (y_read, 842 - x_read)
            else:  # text runs down: reading x grows downward, rows go right to left
                point = (595 - y_read, x_read)
            page.insert_text(point, text, fontsize=10, rotate=rotate)
    # the text stage's pages: it counts the characters on lines running up and down the page
    pages = list(iter_pages(doc, settings=TextSettings()))
    assert pages[0].vertical_chars[0 if rotate == 90 else 1] > 0
    (table,) = extract_tables(doc, pages, TableSettings())
    assert table.grid()[0] == rows[0] and table.grid()[5] == rows[5] and len(table.grid()) == len(rows)
    x0, y0, x1, y1 = table.bbox
    assert 0 <= x0 < x1 <= 595 and 0 <= y0 < y1 <= 842 and y1 - y0 > x1 - x0


def _zebra(page: pymupdf.Page, rows: list[list[str]], note: str | None = None) -> None:
    """A table whose odd rows are shaded boxes across the table with no column lines inside them
    (column lines are drawn on the plain rows only), optionally closed by a spanning note row."""
    cols, top, h = [60.0, 180.0, 280.0, 380.0, 480.0], 100.0, 20.0
    all_rows = rows + ([[note]] if note else [])
    for r, row in enumerate(all_rows):
        y0, y1 = top + r * h, top + (r + 1) * h
        page.draw_line((cols[0], y0), (cols[-1], y0))
        if r % 2 or (note and r == len(all_rows) - 1):
            page.draw_rect((cols[0], y0, cols[-1], y1), color=None, fill=(0.85, 0.85, 0.85))
            page.draw_line((cols[0], y0), (cols[0], y1))
            page.draw_line((cols[-1], y0), (cols[-1], y1))
        else:
            for x in cols:
                page.draw_line((x, y0), (x, y1))
        for c, text in enumerate(row):
            page.insert_text((cols[c] + 4, y1 - 6), text, fontsize=9)
    page.draw_line((cols[0], top + len(all_rows) * h), (cols[-1], top + len(all_rows) * h))


def test_shaded_rows_of_a_zebra_table_keep_their_columns() -> None:
    rows = [["State", "Revenue", "Capital", "Total"]] + [
        [f"State{i:02d}", f"{1000 + i},{i:03d}", f"{200 + i}", f"{1200 + 2 * i}"] for i in range(9)
    ]
    note = "Note: every figure in this table is provisional and will be revised in the spring"
    doc = pymupdf.open()
    _zebra(doc.new_page(), rows, note)
    (table,) = extract_tables(doc, _pages(doc), TableSettings())
    grid = table.grid()
    assert grid[:10] == rows  # shaded rows (2, 4, ...) split back into their four columns
    # the closing note spans the table: its words straddle the column lines, so it stays one cell
    assert grid[10][0].startswith("Note: every figure") and grid[10][1:] == ["", "", ""]


def test_a_frame_drawn_around_a_caption_and_a_ruled_table_is_not_a_second_table() -> None:
    # the frame (a box, a rule under the caption row, a divider in it) reads as a grid whose one
    # big cell holds the inner table: every cell would be there twice
    doc = pymupdf.open()
    p = doc.new_page(width=595, height=842)
    p.draw_rect((50, 60, 470, 400))
    p.draw_line((50, 95), (470, 95))
    p.draw_line((300, 60), (300, 95))
    p.insert_text((70, 85), "Table 6: Households by region", fontsize=10)
    p.insert_text((310, 85), "Survey 2011-12", fontsize=10)
    body = [[f"R{i}", str(2000 + i), str(i * 10)] for i in range(12)]
    _table(p, 110, [HEADER, *body])
    pdf = pymupdf.open("pdf", doc.tobytes())
    tables = extract_tables(pdf, list(iter_pages(pdf, settings=TextSettings())), TableSettings())
    assert len(tables) == 1
    assert [[c.text for c in tables[0].cells if c.row == r] for r in (0, 1)] == [HEADER, body[0]]


def test_a_grid_cell_framing_other_cells_does_not_repeat_their_text() -> None:
    # an irregular grid can carry its border as one big cell over the others: each word goes to
    # the smallest cell holding it, so the frame holds nothing the inner cells hold
    from types import SimpleNamespace

    from dagster_ocr.tables.cells import _cell_texts
    from dagster_ocr.tables.words import _Word

    frame, a, b = (0.0, 0.0, 200.0, 40.0), (0.0, 0.0, 100.0, 20.0), (100.0, 0.0, 200.0, 20.0)
    tab = SimpleNamespace(
        rows=[
            SimpleNamespace(bbox=(0.0, 0.0, 200.0, 40.0), cells=[frame, a, b]),  # a row spans its cells
            SimpleNamespace(bbox=(0.0, 20.0, 200.0, 40.0), cells=[None, None, None]),
        ]
    )
    words = [_Word(10, 5, 40, 15, "State"), _Word(110, 5, 150, 15, "Kerala"), _Word(10, 25, 60, 35, "note")]
    assert _cell_texts(tab, words) == [["note", "State", "Kerala"], [None, None, None]]


def _boxes(page: pymupdf.Page, y0: float, texts: list[list[str]], height: float = 90.0) -> None:
    """A ruled grid of boxes (one row per list) with each text set inside its box."""
    xs = [60.0, 300.0, 540.0]
    for r, row in enumerate(texts):
        top = y0 + r * height
        for c, text in enumerate(row):
            page.draw_rect((xs[c], top, xs[c + 1], top + height))
            page.insert_textbox((xs[c] + 6, top + 6, xs[c + 1] - 6, top + height - 6), text, fontsize=9)


def test_prose_set_in_drawn_boxes_is_not_a_table_but_a_table_of_descriptions_is() -> None:
    prose = [
        "In right triangles the square of the hypotenuse equals the sum of the squares of the other sides.",
        "Unified electricity and magnetism and described the behaviour of fields, predicting waves.",
    ]
    doc = pymupdf.open()
    cards = doc.new_page(width=595, height=842)
    _boxes(cards, 100, [prose, prose[::-1]])
    table = doc.new_page(width=595, height=842)
    _boxes(table, 100, [["Requirement", "Description"], ["R1", prose[0]], ["R2", prose[1]]], height=40.0)
    pdf = pymupdf.open("pdf", doc.tobytes())
    tables = extract_tables(pdf, list(iter_pages(pdf, settings=TextSettings())), TableSettings())
    assert [t.first_page_index for t in tables] == [1]  # the cards' text stays running text
    assert [c.text for c in tables[0].cells if c.row == 0] == ["Requirement", "Description"]


LEGEND = 'Abbreviations: "SCH" = Schedule, "CSCN" = Controlled Substance Code Number, "N" = No, "Y" = Yes'


@pytest.mark.parametrize("legend_on_both", [True, False])
def test_a_legend_repeated_at_the_foot_of_every_page_does_not_end_the_table(legend_on_both: bool) -> None:
    """A long line under a table on its first page is text that ends it; printed at the same place
    on the next page too (a running legend), it is furniture and the table goes on."""
    doc = pymupdf.open()
    head = ["Substance", "Code", "Schedule", "Other names"]
    pages = [
        [[f"Substance {k}", str(7000 + k), "II", f"Name {k}"] for k in range(40)],
        [[f"Substance {k}", str(7100 + k), "III", f"Name {k}"] for k in range(40, 52)],
    ]
    for n, rows in enumerate(pages):
        pg = doc.new_page(width=612, height=792)
        _borderless(pg, 70, [head, *rows])
        if n == 0 or legend_on_both:
            pg.insert_text((60, 700), LEGEND, fontsize=7)
        pg.insert_text((480, 760), f"Page {n + 1} of 2", fontsize=8)
    tables = extract_tables(doc, _pages(doc), TableSettings())
    if legend_on_both:
        assert [(t.pages, t.n_rows) for t in tables] == [([0, 1], 1 + 52)]
        assert sum(1 for row in tables[0].grid() if row == head) == 1
    else:  # text under the first page's table that the next page does not repeat ends it
        assert [t.pages for t in tables] == [[0], [1]]
