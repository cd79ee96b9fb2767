"""Rules of the text-alignment finder for table classes seen on documents nobody tuned for (issue 20).

Each test prints a small table on a generated page (PyMuPDF writes it) and checks the finder's grid.
"""

from __future__ import annotations

from pathlib import Path

import pymupdf
from support.table_pages import print_rows

from dagster_ocr.model import Page
from dagster_ocr.tables import TableSettings, extract_tables
from dagster_ocr.tables.stream import _is_num

LOREM = "This paragraph of ordinary body text separates the two tables and is long enough to read as prose."


def _pages(doc: pymupdf.Document) -> list[Page]:
    out = []
    for i in range(doc.page_count):
        pg = doc[i]
        out.append(Page(index=i, width=pg.rect.width, height=pg.rect.height))
    return out


_print_rows = print_rows


def test_currency_after_the_figure_is_a_number() -> None:
    assert _is_num("8 €") and _is_num("€ 8") and _is_num("$ 71.15") and _is_num("12.50€")
    assert not _is_num("A.O.P") and not _is_num("€ per unit")


def test_a_negative_with_its_sign_outside_the_brackets_is_a_number() -> None:
    """MD&A change columns print "(63)%"; a statement's cell holds "$ (23)" where the sign is set
    before the bracket."""
    assert _is_num("(63)%") and _is_num("$ (23)") and _is_num("$(1,558)") and _is_num("(13)%")
    assert not _is_num("(a)") and not _is_num("%") and not _is_num("$ (note 3)")


def test_a_figure_with_a_notes_mark_is_a_number() -> None:
    """A flag a space after a negative ("(0.6) r", as "258 u" already read), a note's superscript
    number read into the word after the bracket ("(20)1"); not a bracketed letter nor a year run on."""
    assert _is_num("(0.6) r") and _is_num("258 u") and _is_num("(20)1") and _is_num("(1,234)12")
    assert not _is_num("(a)1") and not _is_num("(20)123") and not _is_num("(20) rs")


def test_price_list_rows_are_not_stacked_into_a_header() -> None:
    """A list of names and prices ("£ 8"; "8 €" alike) whose stub-only group lines sit between priced
    lines: every printed line is a row. While a currency sign set off by a space did not read as a
    number, the first lines all looked like header lines and were stacked into one cell."""
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    page.insert_text((60, 80), LOREM, fontsize=9)
    rows = [
        ["Alder Farm reserve 2016", "£ 8"],
        ["Group North", ""],
        ["Beech Hill estate 2015", "£ 10"],
        ["Group South", ""],
        ["Cedar Row selection 2017", "£ 9"],
        ["Dune Coast vintage 2014", "£ 12"],
        ["Elm Valley cuvee 2016", "£ 11"],
        ["Group West", ""],
        ["Fir Ridge estate 2013", "£ 15"],
        ["Gorse Moor reserve 2012", "£ 14"],
    ]
    _print_rows(page, 130, rows, [60.0, 400.0])
    tables = extract_tables(doc, _pages(doc), settings=TableSettings())
    assert len(tables) == 1
    grid = tables[0].grid()
    assert ["Alder Farm reserve 2016", "£ 8"] in grid and ["Group North", ""] in grid
    assert ["Beech Hill estate 2015", "£ 10"] in grid
    assert tables[0].n_rows == len(rows)


PROSE = (
    "Employers should apply the new rates as soon as possible and no later than the end of the "
    "month, then correct any difference in a later pay period. The tables that follow give the "
    "amounts for each period; the notes below explain how to use them and which forms to file."
).split()


def _prose_column(
    page: pymupdf.Page, x: float, y0: float, n: int, width: int = 8, pitch: float = 12.0
) -> None:
    for k in range(n):
        page.insert_text(
            (x, y0 + k * pitch), " ".join(PROSE[(k * 3) % 20 : (k * 3) % 20 + width]), fontsize=9
        )


def test_table_beside_running_text_is_found() -> None:
    """A two-column page whose right column holds a small table between paragraphs: each printed
    line mixes prose words (left) with table cells (right), so the page reads as prose set in
    columns. Cut at the page gutter, the right column gives the table and the prose stays out."""
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    _prose_column(page, 42, 100, 30)
    _prose_column(page, 330, 100, 6, width=7)
    rows = [
        ["Payroll period", "Amount"],
        *[
            [p, f"{v:,.2f}"]
            for p, v in (
                ("Weekly", 71.15),
                ("Biweekly", 142.31),
                ("Semimonthly", 154.17),
                ("Monthly", 308.33),
                ("Quarterly", 925.0),
                ("Annually", 3700.0),
            )
        ],
    ]
    bottom = _print_rows(page, 190, rows, [330.0, 500.0], pitch=16.0)
    _prose_column(page, 330, bottom + 20, 8, width=7)
    tables = extract_tables(doc, _pages(doc), settings=TableSettings())
    assert len(tables) == 1
    grid = tables[0].grid()
    assert grid[0] == ["Payroll period", "Amount"]
    assert ["Quarterly", "925.00"] in grid and ["Annually", "3,700.00"] in grid
    assert tables[0].n_cols == 2 and tables[0].n_rows == len(rows)
    assert tables[0].bbox[0] >= 320  # nothing of the prose column


def test_ruled_table_without_rules_between_body_rows_keeps_its_rows() -> None:
    """Rules around the header and above the total only: the line finder sees one tall body row
    whose cells hold whole columns. Cut at its text lines (every figure on a line of its own), the
    table gets one row per printed row; the wrapped two-line header cell stays one cell."""
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    cols = [60.0, 220.0, 330.0, 440.0]
    x1 = 540.0
    body = [(f"Region {k}", f"{1.5 + k:.1f}", f"{20 + 3 * k}", f"{100 + 7 * k:,}") for k in range(6)]
    top, head_bottom = 100.0, 130.0
    total_top = head_bottom + 6 + 14 * len(body)
    bottom = total_top + 20
    for y in (top, head_bottom, total_top, bottom):
        page.draw_line((cols[0], y), (x1, y))
    for x in [*cols, x1]:
        page.draw_line((x, top), (x, bottom))
    page.insert_text((cols[0] + 4, top + 12), "Region", fontsize=9)
    page.insert_text((cols[1] + 4, top + 12), "Share of", fontsize=9)
    page.insert_text((cols[1] + 4, top + 24), "income", fontsize=9)
    page.insert_text((cols[2] + 4, top + 12), "Staff", fontsize=9)
    page.insert_text((cols[3] + 4, top + 12), "Budget", fontsize=9)
    for k, row in enumerate(body):
        for c, text in enumerate(row):
            page.insert_text((cols[c] + 4, head_bottom + 14 + 14 * k), text, fontsize=9)
    for c, text in enumerate(("Total", "27.0", "165", "705")):
        page.insert_text((cols[c] + 4, total_top + 14), text, fontsize=9)
    tables = extract_tables(doc, _pages(doc), settings=TableSettings())
    assert len(tables) == 1
    grid = tables[0].grid()
    assert grid[0] == ["Region", "Share of income", "Staff", "Budget"]
    assert grid[1:-1] == [list(r) for r in body]
    assert grid[-1] == ["Total", "27.0", "165", "705"]


def test_numbered_references_beside_running_text_are_not_a_table(corpus: Path) -> None:
    """A real two-column article page (tune split) whose right column ends in numbered references:
    cut out of the running text, they align like a two-column table; with no column of figures
    right of the reference numbers they stay text."""
    doc = pymupdf.open(corpus / "olmocr_bench" / "pdfs" / "multi_column_miss.pdf")
    assert extract_tables(doc, _pages(doc), settings=TableSettings()) == []


def test_figures_set_midway_beside_a_wrapped_label_are_one_row() -> None:
    """A label wrapped over two lines with its figures printed midway between them (the three
    lines overlap in height without sharing a baseline): one row, the label joined."""
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    page.insert_text((60, 80), LOREM, fontsize=9)
    cols = [60.0, 300.0, 400.0, 500.0]
    y = 130.0
    for c, text in enumerate(("Measure", "1998", "1999", "2000")):
        page.insert_text((cols[c], y), text, fontsize=9)
    for k in range(3):
        y += 20
        for c, text in enumerate((f"Plain measure {k}", f"{k}.25", f"{k}.50", f"{k}.75")):
            page.insert_text((cols[c], y), text, fontsize=9)
    for k in range(3):
        y += 24
        page.insert_text((cols[0], y), f"Between-state inequality {k} (Gini", fontsize=9)
        page.insert_text((cols[0], y + 15), "index)", fontsize=9)
        for c, text in enumerate((f"0.{k}1", f"0.{k}2", f"0.{k}3"), start=1):
            page.insert_text((cols[c], y + 7.5), text, fontsize=9)
        y += 15
    page.insert_text((60, y + 40), LOREM, fontsize=9)
    tables = extract_tables(doc, _pages(doc), settings=TableSettings())
    assert len(tables) == 1
    grid = tables[0].grid()
    assert ["Between-state inequality 0 (Gini index)", "0.01", "0.02", "0.03"] in grid
    assert ["Between-state inequality 1 (Gini index)", "0.11", "0.12", "0.13"] in grid


def test_bullets_stay_on_their_lines_in_a_ruled_cell(corpus: Path) -> None:
    """A real ruled table (ICDAR us-015, tune split) whose cells hold bulleted lists: each bullet
    leads its own item, not all of them the cell's first line."""
    doc = pymupdf.open(corpus / "tables" / "icdar2013" / "us-015" / "us-015.pdf")
    tables = [
        t for t in extract_tables(doc, _pages(doc), settings=TableSettings()) if t.first_page_index == 1
    ]
    assert tables
    cell = next(r[1] for r in tables[0].grid() if r[0] == "Clarity or relevance")
    assert cell.startswith("• Reported as not relevant")
    assert "population • Generates an unacceptably large amount" in cell


def test_framed_table_without_rules_between_figure_columns_gets_its_columns() -> None:
    """A frame, a rule under the header and one after the stub, none between the figure columns:
    the line finder sees two columns; the second, which holds the figures side by side on every
    row, is cut at the gutters of its text."""
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    x0, stub, x1 = 60.0, 220.0, 540.0
    fig = [230.0, 310.0, 390.0, 470.0]
    head = ["Freq.", "Percent", "Mean", "Share"]
    body = [
        (f"Answer group {k}", str(300 + k), f"{10 + k}.5", str(12000 + 97 * k), f"{17 + k}.4%")
        for k in range(4)
    ]
    top, head_bottom = 100.0, 120.0
    bottom = head_bottom + 6 + 14 * len(body)
    for y in (top, head_bottom, bottom):
        page.draw_line((x0, y), (x1, y))
    for x in (x0, stub, x1):
        page.draw_line((x, top), (x, bottom))
    for j, text in enumerate(head):
        page.insert_text((fig[j], top + 14), text, fontsize=9)
    for k, row in enumerate(body):
        page.insert_text((x0 + 4, head_bottom + 14 + 14 * k), row[0], fontsize=9)
        for j, text in enumerate(row[1:]):
            page.insert_text((fig[j], head_bottom + 14 + 14 * k), text, fontsize=9)
    tables = extract_tables(doc, _pages(doc), settings=TableSettings())
    assert len(tables) == 1
    grid = tables[0].grid()
    assert tables[0].n_cols == 5
    assert grid[0] == ["", *head]
    assert grid[1:] == [list(r) for r in body]


def test_a_list_with_word_processor_bullets_is_no_table() -> None:
    """Word's Symbol and Wingdings bullets extract as Private Use Area glyphs (U+F0B7, U+F0A7);
    a two-column "table" of such a marker beside each item is a bulleted list, as with "•"."""
    from dagster_ocr.tables.cells import _Part
    from dagster_ocr.tables.settings import TableSettings
    from dagster_ocr.tables.stream import _keep

    def part(marker: str) -> _Part:
        items = ["Award for innovative applications", "", "Rising star awards", "Finalist", "Winner"]
        rows: list[list[str | None]] = [[marker if t else "", t or "and the team"] for t in items]
        return _Part(0, (0, 0, 100, 100), rows, [[None, None]] * len(rows), [0, 10, 100], 0, "stream")

    s = TableSettings()
    for marker in ("\uf0b7", "\uf0a7", "•", "➢", "◆"):
        assert not _keep(part(marker), s)
    assert _keep(part("A1"), s)  # codes in a stub column: a table


def test_display_math_on_a_grid_is_no_table_and_a_grid_of_codes_and_figures_is() -> None:
    """Matrices and aligned equations align like a table; their cells hold only symbols and one- or
    two-letter variables. A grid with a word or a figure in it stays a table."""
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    page.insert_text((60, 80), LOREM, fontsize=9)
    matrix = [["a", "b", "=", "a′ z + b′"], ["c", "d", "∘ z", "c′ z + d′"], ["x", "y", "=", "xy′ + yx′"]]
    _print_rows(page, 130, matrix, [200.0, 240.0, 280.0, 330.0])
    page.insert_text((60, 300), LOREM, fontsize=9)
    codes = [["Code", "Unit", "Count"], ["ab", "kg", "12"], ["cd", "m", "7"], ["ef", "s", "31"]]
    _print_rows(page, 350, codes, [200.0, 260.0, 320.0])
    tables = extract_tables(doc, _pages(doc), settings=TableSettings())
    assert [t.grid()[0] for t in tables] == [["Code", "Unit", "Count"]]
