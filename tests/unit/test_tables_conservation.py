"""Tables never cost text: every character of a generated page lands in a cell, a paragraph or
furniture, through the whole pipeline (text stage, tables, paragraphs, conservation).

Each test draws one class of layout with PyMuPDF (a table continued with its header repeated, a
wide table continued by columns, ...) and checks the table where it is one and that no character
is lost (``conservation.account_text``).
"""

from __future__ import annotations

from pathlib import Path

import pymupdf
import pytest
from support.parsed import account as _account
from support.parsed import parsed as _parsed
from support.table_pages import print_rows

from dagster_ocr.conservation import account_text
from dagster_ocr.model import Cell, Line, Page, Table
from dagster_ocr.paragraphs import ParagraphSettings, build_paragraphs
from dagster_ocr.pipeline import ParsedDocument

LOREM = (
    "This paragraph of ordinary body text sits between the tables of the page and is long "
    "enough to read as prose, not as a cell."
)
COLS = [60.0, 250.0, 360.0, 470.0]


def _rows(page: pymupdf.Page, y0: float, rows: list[list[str]], pitch: float = 14.0) -> float:
    return print_rows(page, y0, rows, COLS, pitch)


def test_a_continuation_repeated_header_is_the_table_text_not_lost(tmp_path: Path) -> None:
    header = ["Region name", "Year", "Value"]
    doc = pymupdf.open()
    p1 = doc.new_page(width=595, height=842)
    p1.insert_text((60, 80), LOREM[:90], fontsize=9)
    p1.insert_text((60, 120), "Table 1. Measurements by region", fontsize=10)
    _rows(p1, 140, [header] + [[f"Region {i}", str(2000 + i), str(i * 10)] for i in range(45)])
    p1.insert_text((290, 820), "1", fontsize=9)
    p2 = doc.new_page(width=595, height=842)
    p2.insert_text((60, 60), "Table 1. Measurements by region (continued)", fontsize=10)
    bottom = _rows(p2, 80, [header] + [[f"Place {i}", str(2100 + i), str(i * 7)] for i in range(8)])
    p2.insert_text((60, bottom + 30), LOREM[:90], fontsize=9)
    p2.insert_text((290, 820), "2", fontsize=9)
    parsed = _parsed(doc, tmp_path)
    (table,) = parsed.tables
    assert table.merge_kind == "rows" and table.pages == [0, 1]
    assert sum(1 for row in table.grid() if row == header) == 1  # the header is kept once
    assert {text for page, text in table.repeats} == set(header)
    assert all(page == 1 for page, _ in table.repeats)
    total = _account(parsed)
    assert total.counts["lost"] == 0 and total.unsourced == 0
    # the repeated header stays out of the paragraphs: it is table text
    assert not any("Region name" in p.text for p in parsed.paragraphs.paragraphs)


def test_a_column_continuation_repeated_stubs_are_the_table_text_not_lost(tmp_path: Path) -> None:
    stubs = [f"State {chr(65 + i)}{chr(65 + i)}" for i in range(20)] + ["Total"]
    doc = pymupdf.open()
    for k, (caption, years) in enumerate(
        [
            ("Table 3. Enrolment by state", (2001, 2002, 2003)),
            ("Table 3. Enrolment by state (continued)", (2004, 2005, 2006)),
        ]
    ):
        page = doc.new_page(width=595, height=842)
        page.insert_text((60, 60), caption, fontsize=10)
        rows = [["State", *map(str, years)]]
        rows += [[st, *(str(1000 * k + 100 * j + i) for j in range(3))] for i, st in enumerate(stubs)]
        bottom = _rows(page, 90, rows)
        page.insert_text((60, bottom + 30), LOREM[:90], fontsize=9)
        page.insert_text((290, 820), str(k + 1), fontsize=9)
    parsed = _parsed(doc, tmp_path)
    (table,) = parsed.tables
    assert table.merge_kind == "columns" and table.n_cols == 7
    assert sorted(text for page, text in table.repeats if page == 1) == sorted(["State", *stubs])
    total = _account(parsed)
    assert total.counts["lost"] == 0 and total.unsourced == 0


def test_text_in_a_table_region_that_no_cell_holds_goes_back_to_the_paragraphs() -> None:
    """A region swallowed a note and an axis label the finder put in no cell: they stay body text;
    the lines the cells hold (a filler line of dashes included) are the table's."""
    texts = [
        "Year  Value",
        "2001  17",
        "- -",
        "Source: a survey of two hundred firms in the region.",
        "Gini index",
    ]
    lines = [Line(t, (72.0, 100 + 14 * i, 400.0, 110 + 14 * i)) for i, t in enumerate(texts)]
    page = Page(0, 595.0, 842.0, lines)
    cells = [
        Cell(r, c, text, 0)
        for r, row in enumerate([["Year", "Value"], ["2001", "17"], ["-", "-"]])
        for c, text in enumerate(row)
    ]
    table = Table("t0", 0, 0, 3, 2, cells, (70, 98, 402, 180), regions=[(0, (70, 98, 402, 180))])
    result = build_paragraphs([page], [], [table], settings=ParagraphSettings())
    body = " ".join(p.text for p in result.paragraphs)
    assert "Source: a survey" in body and "Gini index" in body
    assert "Year" not in body and "2001" not in body and "-" not in body
    (account,) = account_text([page], result, [table])
    assert account.lost == 0 and account.unsourced == 0


# --- running text taken for a table (tables/prose.py) -------------------------------------------

QA = [
    ("Q.", "And where were you on the evening of the fourth of March, after work?"),
    ("A.", "I was at home with my sister, we had dinner together and then watched"),
    ("", "the news on the television until it was late, maybe eleven o'clock."),
    ("Q.", "Did anyone else come to the house that night, a neighbour or a friend?"),
    ("A.", "No, nobody came to the house that night, as far as I can remember it."),
]


def _transcript(numbers_right: bool = False, tags: bool = True) -> pymupdf.Document:
    """Two pages of a transcript: 25 numbered lines each, speaker tags between number and text."""
    doc = pymupdf.open()
    k = 0
    for p in range(2):
        page = doc.new_page(width=612, height=792)
        page.insert_text((72, 50), "TRANSCRIPT OF PROCEEDINGS", fontsize=9)
        for n in range(1, 26):
            y = 90 + n * 24
            tag, text = QA[k % len(QA)]
            k += 1
            page.insert_text((560 if numbers_right else 40, y), str(n), fontsize=10)
            if tag and tags:
                page.insert_text((100, y), tag, fontsize=11)
            page.insert_text((140, y), text, fontsize=11)
        page.insert_text((300, 760), str(p + 1), fontsize=9)
    return doc


def test_a_transcript_with_margin_line_numbers_is_running_text(tmp_path: Path) -> None:
    for numbers_right in (False, True):
        parsed = _parsed(_transcript(numbers_right), tmp_path, f"transcript_{numbers_right}.pdf")
        assert parsed.tables == []
        body = " ".join(p.text for p in parsed.paragraphs.paragraphs)
        assert "where were you on the evening" in body and "nobody came to the house" in body
        total = _account(parsed)
        assert total.counts["lost"] == 0 and total.counts["table"] == 0


def test_a_table_with_a_row_number_column_stays_a_table(tmp_path: Path) -> None:
    """Numbered rows of data (a rank column beside short cells) are a table, not numbered lines."""
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    page.insert_text((60, 80), LOREM[:90], fontsize=9)
    rows = [["Rank", "Country", "Capital", "Population"]]
    rows += [
        [str(i + 1), f"Country {chr(65 + i)}", f"City {chr(65 + i)}", f"{(30 - i) * 1.7:.1f}"]
        for i in range(12)
    ]
    bottom = _rows(page, 110, rows, pitch=16)
    page.insert_text((60, bottom + 30), LOREM[:90], fontsize=9)
    parsed = _parsed(doc, tmp_path)
    (table,) = parsed.tables
    assert table.grid()[3] == ["3", "Country C", "City C", "47.6"]


RTL_WORDS = {
    "arabic": "هذه فقرة إضافية أطول تشرح أهمية دراسة الجغرافيا الجغرافيا أكثر من مجرد حفظ المواقع إنها دراسة "
    "الأماكن والعلاقات بين الناس وبيئاتهم يستكشف الجغرافيون الخصائص الفيزيائية لسطح الأرض والمجتمعات "
    "المنتشرة عليه والتفاعلات بينها",
    "hebrew": "זוהי פסקה נוספת וארוכה יותר המסבירה את החשיבות של לימוד הגאוגרפיה גאוגרפיה היא יותר מאשר "
    "שינון מקומות זהו המחקר של מקומות ושל היחסים בין אנשים לסביבתם גאוגרפים חוקרים את התכונות הפיזיות",
}
FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"


def _gapped_rtl_prose(words: list[str]) -> pymupdf.Document:
    """Right-to-left prose written word by word, right to left, justified with wide gaps."""
    font = pymupdf.Font(fontfile=FONT)
    size, left, right = 11.0, 72.0, 523.0
    lines: list[list[str]] = [[]]
    for w in words:  # short lines, stretched to the full measure: gaps about a word wide
        if lines[-1] and sum(font.text_length(x, size) + 3 for x in [*lines[-1], w]) > 0.5 * (right - left):
            lines.append([])
        lines[-1].append(w)
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    page.insert_text((72, 60), "Geography in other languages", fontsize=12)
    for k, line in enumerate(lines):
        widths = [font.text_length(w, size) for w in line]
        gap = (right - left - sum(widths)) / max(len(line) - 1, 1) if k < len(lines) - 1 else 4.0
        x = right
        for w, wl in zip(line, widths, strict=True):
            page.insert_text((x - wl, 120 + 16 * k), w, fontsize=size, fontname="dv", fontfile=FONT)
            x -= wl + gap
    return doc


@pytest.mark.skipif(not Path(FONT).exists(), reason="needs the DejaVu Sans font (Arabic and Hebrew glyphs)")
@pytest.mark.parametrize("script", sorted(RTL_WORDS))
def test_gapped_right_to_left_prose_is_running_text(tmp_path: Path, script: str) -> None:
    words = (RTL_WORDS[script] + " ") * 2
    parsed = _parsed(_gapped_rtl_prose(words.split()), tmp_path)
    assert parsed.tables == []
    total = _account(parsed)
    assert total.counts["lost"] == 0 and total.counts["table"] == 0 and total.counts["paragraph"] > 300


# --- tables turned by other means than text printed up or down an upright page ------------------

SIDE_ROWS = [["Region", "Quarter", "Revenue"]] + [
    [f"Area{i:02d}", f"Q{i % 4 + 1}", f"{1000 + 37 * i}"] for i in range(12)
]


def _check_turned(parsed: ParsedDocument) -> None:
    (table,) = parsed.tables
    assert table.grid() == SIDE_ROWS
    x0, y0, x1, y1 = table.bbox
    assert 0 <= x0 < x1 <= parsed.document.pages[0].width and 0 <= y0 < y1 <= parsed.document.pages[0].height
    total = _account(parsed)
    assert total.counts["lost"] == 0 and total.counts["table"] == sum(len("".join(r)) for r in SIDE_ROWS)


@pytest.mark.parametrize("up", [True, False])
def test_a_sideways_table_beside_upright_text_on_one_page(tmp_path: Path, up: bool) -> None:
    """Text placed with a rotation matrix (morph), running up or down, beside upright prose."""
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    for r, row in enumerate(SIDE_ROWS):
        for c, text in enumerate(row):
            xr, yr = 80 + 150 * c, 80 + 18 * r  # reading frame: along the text, down the rows
            pt = pymupdf.Point(yr, 842 - xr) if up else pymupdf.Point(595 - yr, xr)
            page.insert_text(pt, text, fontsize=10, morph=(pt, pymupdf.Matrix(90 if up else -90)))
    for k in range(8):
        page.insert_text(
            (330 if up else 40, 100 + 14 * k), f"Upright body text beside the table, line {k}.", fontsize=9
        )
    parsed = _parsed(doc, tmp_path)
    _check_turned(parsed)
    body = " ".join(p.text for p in parsed.paragraphs.paragraphs)
    assert "beside the table, line 0." in body and "line 7." in body


@pytest.mark.parametrize("rotate", [90, 270])
def test_a_table_turned_upside_down_by_page_rotate_and_text_rotation(tmp_path: Path, rotate: int) -> None:
    """/Rotate turns the page a quarter, the text is set a quarter the other way round: the table
    displays upside down, its rows bottom to top and its text right to left."""
    doc = pymupdf.open()
    page = doc.new_page()
    text_rotate = 360 - rotate
    for r, row in enumerate(SIDE_ROWS):
        for c, text in enumerate(row):
            xr, yr = 80 + 150 * c, 80 + 18 * r
            point = (yr, 842 - xr) if text_rotate == 90 else (595 - yr, xr)
            page.insert_text(point, text, fontsize=10, rotate=text_rotate)
    page.set_rotation(rotate)
    _check_turned(_parsed(doc, tmp_path))


def test_a_table_printed_upside_down(tmp_path: Path) -> None:
    doc = pymupdf.open()
    page = doc.new_page()
    for r, row in enumerate(SIDE_ROWS):
        for c, text in enumerate(row):
            pt = pymupdf.Point(595 - (80 + 150 * c), 842 - (80 + 18 * r))
            page.insert_text(pt, text, fontsize=10, morph=(pt, pymupdf.Matrix(180)))
    _check_turned(_parsed(doc, tmp_path))


# --- right-to-left tables --------------------------------------------------------------------------

RTL_LABELS = ["قائمة من أجل", "حزب التحالف الديمقراطي", "حركة نداء تونس", "الجبهة الشعبية", "حزب المبادرة"]


@pytest.mark.skipif(not Path(FONT).exists(), reason="needs the DejaVu Sans font (Arabic glyphs)")
def test_a_right_to_left_table_reads_its_cells_right_to_left(tmp_path: Path) -> None:
    """Each word is placed as an RTL PDF displays it (the first word rightmost): a cell's words
    come out in reading order. Columns keep their display order, left to right, as tabula-java's
    right-to-left test expects (its stub, the list name, is the last column)."""
    font = pymupdf.Font(fontfile=FONT)

    def rtl_cell(page: pymupdf.Page, right: float, y: float, text: str) -> None:
        x = right
        for w in text.split():
            wl = font.text_length(w, 10)
            # glyphs in display order: MuPDF gives the word back in logical order
            page.insert_text((x - wl, y), w[::-1], fontsize=10, fontname="dv", fontfile=FONT)
            x -= wl + font.text_length(" ", 10)

    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    for right, head in zip((200, 320, 520), ["الأصوات", "المقاعد", "القائمة"], strict=True):
        rtl_cell(page, right, 120, head)
    for r, label in enumerate(RTL_LABELS * 2):
        y = 140 + 16 * r
        for right, value in ((200, str(1000 + 37 * r)), (320, f"{r % 4 + 1} 0")):
            page.insert_text(
                (right - font.text_length(value, 10), y), value, fontsize=10, fontname="dv", fontfile=FONT
            )
        rtl_cell(page, 520, y, label)
    parsed = _parsed(doc, tmp_path)
    (table,) = parsed.tables
    grid = table.grid()
    assert grid[0] == ["الأصوات", "المقاعد", "القائمة"]
    assert grid[2] == ["1037", "2 0", "حزب التحالف الديمقراطي"]  # numbers keep their own order
    assert [row[2] for row in grid[1:6]] == RTL_LABELS
    assert _account(parsed).counts["lost"] == 0
