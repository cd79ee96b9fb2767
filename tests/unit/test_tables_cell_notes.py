"""Long lists set as tables (issue 37): a register of names, codes and other names over pages, as a
regulator or a procurement office prints one. Its rows keep their cells together where a cell's
note is set apart below its row, where a name breaks inside a bracket or at a hyphen, and where a
longer entry of its last, ragged-right column reaches further than those above; the list is one
table, not one per stretch between such rows. Lines placed by hand, at the spacing such lists use
(a row band a little taller than its line, a note a blank line below its row)."""

from __future__ import annotations

import pymupdf
import pytest

from dagster_ocr.model import Page
from dagster_ocr.tables import TableSettings, extract_tables
from dagster_ocr.tables.stream import _left_open

#: name, code, schedule, narcotic, other names: the columns' left edges
COLS = [60.0, 273.0, 324.0, 352.0, 376.0]
HEAD = ["SUBSTANCE", "CSCN", "SCH", "NARC", "OTHER NAMES"]
PITCH = 17.0  # a row's band: its line and the space around it


def _pages(doc: pymupdf.Document) -> list[Page]:
    return [Page(index=pg.number, width=pg.rect.width, height=pg.rect.height) for pg in doc]


def _row(page: pymupdf.Page, y: float, cells: list[str]) -> None:
    for x, text in zip(COLS, cells, strict=True):
        if text:
            page.insert_text((x, y), text, fontsize=8)


def _register(
    notes: dict[int, list[str]], rows: int = 16, after: list[str] | None = None
) -> pymupdf.Document:
    """A page of ``rows`` rows under ``HEAD``; row k's notes (lines under its other names, a blank
    line below it) from ``notes``; then ``after`` lines of text under the table."""
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    y = 90.0
    _row(page, y, HEAD)
    for k in range(rows):
        y += PITCH
        _row(page, y, [f"Methyl compound {k} ester", str(7300 + 17 * k), "I", "N", f"Other name {k}"])
        for j, line in enumerate(notes.get(k, [])):
            page.insert_text((COLS[-1], y + 19 + 9 * j), line, fontsize=8)
        y += 19 + 9 * len(notes.get(k, [])) if notes.get(k) else 0
    for j, line in enumerate(after or []):
        page.insert_text((COLS[0], y + 40 + 11 * j), line, fontsize=9)
    return doc


NOTE = ["(Positional isomer: 2,5-dimethoxy-3,4-", "dimethylphenethylamine and its salts)"]
LONG_NOTE = [
    "(Positional isomers: 3-methylethcathinone,",
    "4-ethylmethcathinone, 4-methylbuphedrone,",
    "3,4-dimethylmethcathinone, N-ethylbuphedrone,",
    "N-ethyl-N-methylcathinone and their salts,",
    "esters and ethers)",
]


@pytest.mark.parametrize(
    "notes", [{3: NOTE}, {3: NOTE, 9: NOTE[:1]}, {5: LONG_NOTE}], ids=["two", "two+one", "five"]
)
def test_a_note_set_apart_under_a_cell_keeps_the_table_whole(notes: dict[int, list[str]]) -> None:
    doc = _register(notes)
    tables = extract_tables(doc, _pages(doc), TableSettings())
    assert len(tables) == 1, [t.n_rows for t in tables]
    t = tables[0]
    assert t.n_cols == 5
    grid = t.grid()
    assert grid[0] == HEAD
    assert [r[0] for r in grid if r[0]][-1] == "Methyl compound 15 ester"
    text = " ".join(c.text for c in t.cells)
    for lines in notes.values():
        for line in lines:
            assert all(w in text for w in line.split())
    # the note is the last column's: nothing of it in the stub
    assert not any("isomer" in r[0].casefold() for r in grid)


def test_text_under_the_table_is_not_taken_for_a_note() -> None:
    """A line under the last column after the last row, then running text: the table ends at its
    last row (a note is bridged only when a row follows it)."""
    prose = [
        "The schedules above are those in force on the date of this list; a substance added since",
        "then is listed in the next edition, and the notes of each entry give its isomers and salts.",
    ]
    doc = _register({}, after=prose)
    page = doc[0]
    page.insert_text((COLS[-1], 90 + 16 * PITCH + 19), "(see the notes below)", fontsize=8)
    tables = extract_tables(doc, _pages(doc), TableSettings())
    assert len(tables) == 1
    text = " ".join(c.text for c in tables[0].cells)
    assert "schedules above" not in text and "notes below" not in text


@pytest.mark.parametrize(
    ("above", "text", "joined"),
    [
        ("2-(2,5-Dimethoxy-4-propylphenyl) ethanamine (2C-", "P)", True),
        ("5-nitro-1-(2-(pyrrolidin-1-yl)ethyl)\u00ad", "1H-benzimidazole", True),
        ("N-(1-phenethylpiperidin-4-yl)-N-phenyl-", "Propanamide", True),
        ("2-(4-Isopropylthio)-2,5-dimethoxyphenyl) ethanamine", "(2C-T-4)", False),
        ("Total current assets", "Property and equipment", False),
        ("Cash (note 4)", "Receivables", False),
        ("Balance at 1 January -", "Restated", False),
    ],
)
def test_a_name_broken_inside_a_bracket_or_at_a_hyphen_reads_on(above: str, text: str, joined: bool) -> None:
    assert _left_open(above, text) is joined


def test_a_stub_broken_inside_a_bracket_is_one_cell() -> None:
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    y = 90.0
    _row(page, y, HEAD)
    for k in range(8):
        y += PITCH
        if k == 4:
            _row(page, y, ["2-(2,5-Dimethoxy-4-propylphenyl) ethanamine (2C-", "7524", "I", "N", "2C-P"])
            y += 9
            page.insert_text((COLS[0], y), "P)", fontsize=8)
            continue
        _row(page, y, [f"Methyl compound {k} ester", str(7300 + k), "I", "N", f"Other name {k}"])
    tables = extract_tables(doc, _pages(doc), TableSettings())
    assert len(tables) == 1
    grid = tables[0].grid()
    assert ["2-(2,5-Dimethoxy-4-propylphenyl) ethanamine (2C-P)", "7524", "I", "N", "2C-P"] in grid
    assert len(grid) == 1 + 8


def test_a_longer_entry_of_a_ragged_last_column_resumes_the_table() -> None:
    """After a note, the next row's other names run further right than any row's above: still a row."""
    doc = _register({5: NOTE}, rows=6)
    page = doc[0]
    y = 90 + 6 * PITCH + 19 + 9 * len(NOTE) + 8  # the last row, its note, then a row's band
    _row(
        page,
        y,
        ["Methyl compound 6 ester", "7402", "I", "N", "1-(3-fluorophenyl)-2-(methylamino)propan-1-one"],
    )
    _row(page, y + PITCH, ["Methyl compound 7 ester", "7403", "I", "N", "Other name 7"])
    tables = extract_tables(doc, _pages(doc), TableSettings())
    assert len(tables) == 1, [t.n_rows for t in tables]
    assert tables[0].grid()[-1][0] == "Methyl compound 7 ester"


def test_a_grouping_column_named_on_its_first_row_only_is_a_column() -> None:
    """A statement of holdings names each group on its first row and its total only ("ELECT
    DEFERRAL" over thirty funds): that column is filled on fewer lines than may cross a gutter,
    and its labels went into the fund column beside it."""
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    x = [79.0, 232.0, 470.0]
    y = 100.0
    for x0, text in zip(x, ["Contribution Type", "Investment Name", "Total"], strict=True):
        page.insert_text((x0, y), text, fontsize=8)
    funds = [f"Target Date Retirement {2015 + 5 * k} Fund" for k in range(30)]
    for k, fund in enumerate(funds):
        y += 14.5
        if k == 0:
            page.insert_text((x[0], y), "ELECT DEFERRAL", fontsize=8)
        page.insert_text((x[1], y), fund, fontsize=8)
        page.insert_text((x[2], y), f"{1000 + 137 * k:,}.{k:02d}", fontsize=8)
    y += 14.5
    page.insert_text((x[0], y), "ELECT DEFERRAL", fontsize=8)
    page.insert_text((x[2] - 6, y), "$76,694.31", fontsize=8)
    tables = extract_tables(doc, _pages(doc), TableSettings())
    assert len(tables) == 1
    grid = tables[0].grid()
    assert tables[0].n_cols == 3
    assert grid[0] == ["Contribution Type", "Investment Name", "Total"]
    assert grid[1] == ["ELECT DEFERRAL", funds[0], "1,000.00"]
    assert grid[2] == ["", funds[1], "1,137.01"]
    assert grid[-1] == ["ELECT DEFERRAL", "", "$76,694.31"]
