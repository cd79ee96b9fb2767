"""Issue 37's classes on generated pages (tests/support/text_layouts.py).

(a) Running heads and feet on a one-page document. Repetition cannot show them, their position and
form do (``furniture._band_stamps``); the body in the bands (a title, a footnote, a memo's heading
block, a letter's signature) stays. A letterhead (a bold or larger name over address and contact
lines) and a letter's company details at the foot go whole, however many lines they hold.

(b) Blocks that interleave (a sidebar, a pull quote, a boxed note, a figure caption): the page's own
content-stream order is read where it is a plausible reading (``columns._stream_flows``), the
geometric layout where it is not (the same pages written in shuffled pieces).
"""

from __future__ import annotations

from pathlib import Path

import pymupdf
import pytest
from support.parsed import parsed as _parsed
from support.text_layouts import (
    make_columns,
    make_inset,
    make_interleaved,
    make_letterhead,
    make_single_page,
    normal,
    score,
)

from dagster_ocr.model import Line, Span
from dagster_ocr.paragraphs.columns import _reading_order, _stream_flows
from dagster_ocr.paragraphs.rows import _make_rows, _Row
from dagster_ocr.paragraphs.settings import ParagraphSettings


def _text(out) -> str:
    return "\n".join(p.text for p in out.paragraphs.paragraphs)


# 13: a print stamp under the last body line, which the gap test had attached to it; 17: a reference
# code over a title whose large type reached it
@pytest.mark.parametrize("seed", [1, 6, 13, 16, 17, 22])
def test_a_one_page_document_loses_its_running_head_and_foot_and_keeps_its_body(
    seed: int, tmp_path: Path
) -> None:
    case = make_single_page(seed)
    out = _parsed(case.doc, tmp_path)
    ours = normal(_text(out))
    rest = ours
    for block in case.truths[0]:
        assert normal(block) in ours, block  # every body block, titles and footnotes too
        rest = rest.replace(normal(block), "", 1)
    assert [f for f in case.furniture if normal(f) in rest] == []
    assert score(case, _text(out)) >= 0.99


@pytest.mark.parametrize("seed", [0, 6, 9, 13])
def test_a_letterhead_and_the_company_details_at_the_foot_go_and_the_letter_stays(
    seed: int, tmp_path: Path
) -> None:
    # 0 and 13: a bold name over an address (no telephone or web line); 6: three contact lines set
    # at the body's size under a 16 pt name; 9: three lines of company details at the foot
    case = make_letterhead(seed)
    out = _parsed(case.doc, tmp_path)
    ours = normal(_text(out))
    rest = ours
    for block in case.truths[0]:
        assert normal(block) in ours, block  # the date, the recipient's address, the signature too
        rest = rest.replace(normal(block), "", 1)
    assert [f for f in case.furniture if normal(f) in rest] == []
    assert score(case, _text(out)) >= 0.99


def _letter_page(tmp_path: Path, band: list[tuple[float, str, float, str]], name: str) -> str:
    """A one-page document: ``band`` lines (baseline, text, size, font) over ``_BODY``; its text."""
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    for y, t, size, font in band:
        page.insert_text((72, y), t, fontsize=size, fontname=font)
    for k, t in enumerate(_BODY):
        page.insert_text((72, 130 + 14 * k), t, fontsize=10)
    return _text(_parsed(doc, tmp_path, name))


def test_a_title_over_a_subtitle_or_a_memo_block_with_a_mail_address_is_no_letterhead(
    tmp_path: Path,
) -> None:
    # a report's title (bold, larger) over a smaller subtitle in the top band, apart from the body:
    # no contact line under it
    title = [(50, "Annual budget review", 16, "hebo"), (68, "Finance committee, spring session", 9, "helv")]
    assert "Annual budget review" in _letter_page(tmp_path, title, "title.pdf")
    # a memo's heading block at the body's size, one line a mail address: no line set apart
    memo = [
        (50, "To: All regional offices", 10, "helv"),
        (64, "From: finance@contoso.example", 10, "helv"),
        (78, "Subject: Budget", 10, "helv"),
    ]
    text = _letter_page(tmp_path, memo, "memo.pdf")
    for _, t, _, _ in memo:
        assert t in text, t


def _page(tmp_path: Path, lines: list[tuple[float, float, str, float]]):
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    for x, y, text, size in lines:
        page.insert_text((x, y), text, fontsize=size)
    return _parsed(doc, tmp_path)


_BODY = [
    "The committee met on four occasions during the year and reviewed the budget of each of",
    "the regional offices in turn, with the help of the finance team and the external auditors,",
    "and agreed a plan for the next three years that the board approved in its autumn session.",
    "Each office reported its spending against the plan, and the committee asked two of them to",
    "explain why their costs for travel and for temporary staff had risen faster than planned.",
]


def test_a_letters_signature_and_a_memos_heading_block_in_the_bands_stay(tmp_path: Path) -> None:
    lines = [
        (72, 60, "To: All regional offices", 10),
        (72, 74, "From: The finance committee", 10),
        (72, 88, "Subject: Budget review", 10),
    ]
    lines += [(72, 130 + 14 * k, t, 10) for k, t in enumerate(_BODY)]
    # a signature block far below the body, in the bottom band, set at the body's size
    lines += [(72, 760, "Yours sincerely", 10), (72, 800, "Jane Doe, Chair", 10)]
    out = _page(tmp_path, lines)
    text = _text(out)
    for t in ("To: All regional offices", "Subject: Budget review", "Yours sincerely", "Jane Doe, Chair"):
        assert t in text
    assert out.paragraphs.furniture == {}


def test_a_footnote_in_the_bottom_band_stays_and_the_page_number_goes(tmp_path: Path) -> None:
    lines = [(72, 300 + 14 * k, t, 10) for k, t in enumerate(_BODY)]
    lines += [
        (72, 770, "1 The figures for the last quarter are provisional and may change", 8),
        (80, 780, "when the auditors report in the spring.", 8),
        (290, 815, "Page 1 of 1", 8),
        (72, 40, "Finance committee · Annual report 2026", 8),
    ]
    out = _page(tmp_path, lines)
    text = _text(out)
    assert "when the auditors report in the spring." in text
    assert "Page 1 of 1" not in text and "Annual report 2026" not in text


def test_a_heading_or_a_first_line_at_the_bodys_spacing_in_the_top_band_stays(tmp_path: Path) -> None:
    # a short page whose first lines sit in the top band at the body's own pitch: a heading that
    # opens the body, not a running head, however short and unpunctuated
    lines = [(250, 70, "Terms of reference", 10), (72, 84, "Published by the committee", 10)]
    lines += [(72, 98 + 14 * k, t, 10) for k, t in enumerate(_BODY[:2])]
    out = _page(tmp_path, lines)
    text = _text(out)
    assert "Terms of reference" in text and "Published by the committee" in text
    assert out.paragraphs.furniture == {}


# ---------------------------------------------------------------- class (b): interleaved blocks
# The page's own (content-stream) order is read where it is a plausible reading
# (``columns._stream_flows``); a stream in no reading order falls back to the geometric analysis.


@pytest.mark.parametrize("seed", [7, 10])
def test_a_box_or_a_caption_written_apart_from_the_body_stays_out_of_its_sentences(
    seed: int, tmp_path: Path
) -> None:
    # 7: a full-width figure caption between two columns; 10: a boxed note inside a column. The
    # geometric order read each into the middle of a sentence (0.93); the stream writes it apart
    case = make_interleaved(seed)
    assert score(case, _text(_parsed(case.doc, tmp_path))) >= 0.99


@pytest.mark.parametrize("seed", [0, 1])
def test_a_stream_in_no_reading_order_is_not_trusted(seed: int, tmp_path: Path) -> None:
    # the same pages written in shuffled pieces: get_text() reads the shuffle, we read the layout
    case = make_interleaved(seed, "shuffled")
    plain = "\n".join(p.get_text() for p in case.doc)
    assert score(case, plain) < 0.6
    assert score(case, _text(_parsed(case.doc, tmp_path))) >= 0.99


def _row(text: str, bbox: tuple[float, float, float, float], seq: int, size: float = 10.0) -> _Row:
    return _Row(text=text, bbox=bbox, size=size, bold=False, italic=False, block=seq, page_index=0, seq=seq)


def _two_columns(n: int = 6) -> tuple[list[_Row], list[_Row]]:
    left = [_row(f"left {k} of the body runs on", (72, 100 + 14 * k, 290, 112 + 14 * k), 0) for k in range(n)]
    right = [
        _row(f"right {k} of the body runs on", (310, 100 + 14 * k, 530, 112 + 14 * k), 0) for k in range(n)
    ]
    return left, right


def _numbered(rows: list[_Row]) -> list[_Row]:
    for k, r in enumerate(rows):
        r.seq = k
    return rows


def test_a_stream_read_column_by_column_with_an_aside_written_last_is_kept() -> None:
    left, right = _two_columns()
    note = [_row("Note: a boxed aside set smaller", (80, 150, 280, 160), 0, size=8.5)]
    flows = _stream_flows(_numbered(left + right + note), ParagraphSettings())
    assert flows is not None
    assert [r.text for f in flows for r in f] == [r.text for r in left + right + note]
    assert len(flows) == 3  # the columns and the aside are flows of their own


def test_a_stream_written_across_the_columns_or_right_column_first_falls_back() -> None:
    left, right = _two_columns()
    across = [r for pair in zip(left, right, strict=True) for r in pair]
    assert _stream_flows(_numbered(across), ParagraphSettings()) is None
    left, right = _two_columns()
    assert _stream_flows(_numbered(right + left), ParagraphSettings()) is None
    left, right = _two_columns()
    # body-typed text written up its own column
    assert _stream_flows(_numbered(left[3:] + left[:3]), ParagraphSettings()) is None


def test_rows_printed_over_each_other_fall_back() -> None:
    left, _ = _two_columns()
    stamp = _row("DRAFT", (100, 120, 250, 150), 0, size=30.0)
    assert _stream_flows(_numbered(left + [stamp]), ParagraphSettings()) is None


# ---------------------------------------------------------------- class (c): narrow prose columns
# Short lines of a few words line up in every column, so the text-alignment finder saw a table with
# a column per page column; lines that wrap like prose are running text (``prose._wrapped_prose``).


@pytest.mark.parametrize("seed", [7, 9, 10])
def test_prose_in_narrow_columns_is_not_a_table(seed: int, tmp_path: Path) -> None:
    case = make_columns(seed)  # 7 and 10: four columns, 9: five; each was one table of ~50 rows
    out = _parsed(case.doc, tmp_path)
    assert out.tables == []
    assert score(case, _text(out)) >= 0.99


def test_a_table_of_words_in_columns_stays_a_table(tmp_path: Path) -> None:
    # a table with no figures at all: one short item a cell, the next cell's first word would have
    # fitted beside the one above it; not prose however wordy
    names = ["Alice Moreau", "Bob Okafor", "Carla Lind", "Dev Shaw", "Eve Park", "Femi Ade", "Gus Holt"]
    roles = ["Chair", "Treasurer", "Secretary", "Member", "Member", "Observer", "Adviser"]
    cities = ["Leeds", "Lyon", "Perth", "Oslo", "Turin", "Lagos", "Cork"]
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    for k, row in enumerate(zip(["Name", *names], ["Role", *roles], ["City", *cities], strict=True)):
        for x, text in zip((72, 240, 400), row, strict=True):
            page.insert_text((x, 120 + 16 * k), text, fontsize=10)
    out = _parsed(doc, tmp_path)
    assert [t.n_cols for t in out.tables] == [3]


@pytest.mark.parametrize("seed", [1, 2])
def test_narrow_columns_written_in_shuffled_pieces_read_down_each_column(seed: int, tmp_path: Path) -> None:
    # 2: the text layer put two columns' lines in one block (a gutter of 2.6 font sizes, under the
    # 3 a block's fragments are joined across): rows ran across the gutter (``rows._gutter``);
    # 1: the title over the columns crossed the first gutter and hid it, so the first two columns
    # were cut into bands at their paragraph breaks (a row set larger than the body no longer
    # shapes the channels: ``columns._column_gaps``)
    case = make_columns(seed, "shuffled")
    plain = "\n".join(p.get_text() for p in case.doc)
    assert score(case, plain) < 0.6
    assert score(case, _text(_parsed(case.doc, tmp_path))) >= 0.99


def _line(text: str, x0: float, y0: float, block: int = 0, size: float = 9.0) -> Line:
    bbox = (x0, y0, x0 + 0.45 * size * len(text), y0 + 1.2 * size)
    return Line(text=text, bbox=bbox, spans=[Span(text, bbox, "helv", size)], block=block)


def test_a_gutter_splits_a_row_and_a_wide_space_does_not() -> None:
    s = ParagraphSettings()
    # two columns' lines in one text-layer block, 20 pt apart (under 3 font sizes)
    left = [_line("the lines of a column run on", 72, 100 + 11 * k) for k in range(6)]
    right = [_line("and so do the other one's", 72 + 0.45 * 9 * 28 + 20, 100 + 11 * k) for k in range(6)]
    rows = _make_rows(left + right, 0, s)
    assert len(rows) == 12 and all(
        r.text in ("the lines of a column run on", "and so do the other one's") for r in rows
    )
    # the same gap in one line of a paragraph whose other lines run through it: a wide space
    lines = [
        _line("a paragraph of running text that is set on a wide measure", 72, 100 + 11 * k) for k in range(5)
    ]
    lines += [_line("Total", 72, 155), _line("forty two", 72 + 0.45 * 9 * 5 + 20, 155)]
    rows = _make_rows(lines, 0, s)
    assert "Total forty two" in [r.text for r in rows]


# ------------------------------------------------------------ class (e): an inset beside short lines
# A pull quote or a note set into one side of a column, the column's lines set short beside it:
# the band of rows side by side is cut out and read as two columns (``columns._inset``).


@pytest.mark.parametrize(("seed", "stream"), [(3, "reading"), (3, "shuffled"), (19, "reading")])
def test_an_inset_beside_a_columns_short_lines_is_read_apart_from_them(
    seed: int, stream: str, tmp_path: Path
) -> None:
    # 3: a note in a shaded box at the left of the first of two columns; read row by row,
    # each short body line took the note's line beside it (0.93); 19: a pull quote in a larger
    # slanted type whose first line ends a word space from the body's line beside it: the two
    # text-layer blocks were joined as one line (0.966, get_text() 0.999)
    case = make_inset(seed, stream)
    assert score(case, _text(_parsed(case.doc, tmp_path))) >= 0.98


def _inset_rows(label_size: float) -> list[str]:
    """A column's rows in reading order (geometric analysis): four lines of running text, four rows
    of a short line at the left (set at ``label_size``) beside a line at the body's size, four more
    lines of running text."""
    s = ParagraphSettings(stream_order=False)
    text = "a paragraph of running text that is set on a wide measure"
    lines = [_line(text, 72, 100 + 11 * k) for k in range(4)]
    for k in range(4):
        lines += [_line(f"short {k}", 72, 144 + 11 * k, 1, label_size)]
        lines += [_line(f"the body's line {k} set short beside it", 160, 144 + 11 * k, 2)]
    lines += [_line(text, 72, 188 + 11 * k, 3) for k in range(4)]
    rows, _ = _reading_order(_make_rows(lines, 0, s), s, 0)
    return [r.text for r in rows]


def test_an_inset_in_its_own_type_is_read_apart_and_a_label_list_in_the_bodys_stays_row_by_row() -> None:
    # the short lines set smaller than the body: an inset, read apart from the body's lines beside
    # it (row by row, each of its lines spliced into the body's sentence), after them
    inset = _inset_rows(7.0)
    assert inset[4:12] == [f"the body's line {k} set short beside it" for k in range(4)] + [
        f"short {k}" for k in range(4)
    ]
    # the same rows in the body's type: a label and value list, read row by row
    listed = _inset_rows(9.0)
    assert listed[4:12] == [
        t for k in range(4) for t in (f"short {k}", f"the body's line {k} set short beside it")
    ]


@pytest.mark.parametrize("seed", [3, 21])
def test_a_sentence_running_on_past_an_inset_stays_one_paragraph(seed: int, tmp_path: Path) -> None:
    # 21: a pull quote in larger italic at the left, the sentence's last line under it still set
    # short: the quote, larger than the body, passed for a heading between them and the line began
    # a paragraph (``grouping._set_into``); 3: a note at the left, the sentence's next line back at
    # the column's left edge read as an outdented new paragraph
    case = make_inset(seed)
    ours = score(case, _text(_parsed(case.doc, tmp_path)))
    assert ours >= score(case, "\n".join(p.get_text() for p in case.doc)) >= 0.99


@pytest.mark.parametrize("seed", [10, 18])
def test_a_sentence_runs_on_past_a_callout_box_in_its_column(seed: int, tmp_path: Path) -> None:
    # a boxed callout set smaller than the body between a sentence's lines, read geometrically (the
    # stream shuffled): the line under the box, in the body's type, began a paragraph of its own
    # (0.933, 0.944)
    case = make_interleaved(seed, "shuffled")
    assert case.cls == "callout"
    assert score(case, _text(_parsed(case.doc, tmp_path))) >= 0.99
