"""Conservation of text on hand-made pages: every character to exactly one destination."""

from __future__ import annotations

import pandas as pd

from dagster_ocr.conservation import DocumentAccount, account_text, compact
from dagster_ocr.model import Cell, Line, Page, Paragraph, ParagraphResult, Table
from dagster_ocr.quality import DocumentFrames, evaluate_document
from dagster_ocr.quality_settings import QualitySettings


def _page(index, *texts, top=100.0):
    lines = [Line(t, (72.0, top + 14 * i, 400.0, top + 14 * i + 10)) for i, t in enumerate(texts)]
    return Page(index, 595.0, 842.0, lines)


def _para(pid, order, page, text, kind="body", last=None):
    return Paragraph(
        pid, None, order, page, text, (72, 100, 400, 120), kind=kind, last_page_index=last or page
    )


def test_lines_land_in_paragraphs_headings_cells_and_furniture_or_are_lost():
    pages = [
        _page(0, "1 Scope", "The supplier deli-", "vers the goods.", "Fee  Amount", "Annual report", "7"),
        _page(1, "within thirty days.", "A line nobody kept", "8"),
    ]
    paragraphs = ParagraphResult(
        paragraphs=[
            _para("h", 0, 0, "1 Scope", kind="heading"),
            # de-hyphenated, and continued on the next page
            _para("p", 1, 0, "The supplier delivers the goods. within thirty days.", last=1),
        ],
        furniture={0: {4: "header", 5: "page_number"}, 1: {2: "page_number"}},
    )
    table = Table(
        "t0",
        0,
        0,
        1,
        2,
        [Cell(0, 0, "Fee", 0, bbox=(72, 142, 100, 152)), Cell(0, 1, "Amount", 0)],
        (72, 140, 400, 160),
    )
    first, second = account_text(pages, paragraphs, [table])
    assert first.counts == {
        "paragraph": len("Thesupplierdeli-") + len("versthegoods."),
        "heading": len("1Scope"),
        "table": len("FeeAmount"),
        "page_number": 1,
        "header": len("Annualreport"),
        "footer": 0,
        "lost": 0,
    }
    assert sum(first.counts.values()) == first.chars and first.unsourced == 0
    assert second.counts["paragraph"] == len("withinthirtydays.") and second.counts["page_number"] == 1
    assert second.lost == len("Alinenobodykept") and second.lost_text == "A line nobody kept"


def test_text_in_two_places_is_unsourced_and_a_prose_table_is_not_a_destination():
    page = _page(0, "Two columns of running text here.")
    paragraphs = ParagraphResult(paragraphs=[_para("p", 0, 0, "Two columns of running text here.")])
    copy = Table("t0", 0, 0, 1, 1, [Cell(0, 0, "Two columns of running text here.", 0)], (0, 0, 9, 9))
    (account,) = account_text([page], paragraphs, [copy])
    assert account.counts["paragraph"] == account.chars and account.unsourced == len(
        compact(copy.cells[0].text)
    )
    paragraphs.read_as_text = ["t0"]  # the paragraph stage kept it as paragraphs: not counted twice
    (account,) = account_text([page], paragraphs, [copy])
    assert account.unsourced == 0


def test_a_short_line_does_not_take_the_place_of_a_longer_one():
    # a table of contents: the page number "1" must not eat the "1" of "1.1"
    page = _page(0, "1", "1.1", "Intro")
    cells = [Cell(0, 0, "1.1", 0), Cell(0, 1, "Intro", 0), Cell(0, 2, "1", 0)]
    (account,) = account_text([page], ParagraphResult(), [Table("t", 0, 0, 1, 3, cells, (0, 0, 9, 9))])
    assert account.counts["table"] == account.chars and account.lost == 0 and account.unsourced == 0


def test_body_text_taken_for_running_headers_warns():
    # a three-page document whose body lines repeat at the same place on each page, all marked as
    # running headers: nothing is lost, but furniture takes everything, and text_conserved says so
    pages = [
        _page(i, "Terms of delivery apply to every order.", "Payment within thirty days.") for i in range(3)
    ]
    result = ParagraphResult(furniture={i: {0: "header", 1: "header"} for i in range(3)})
    accounts = account_text(pages, result, [])
    total = DocumentAccount.of(accounts)
    assert total.counts["header"] == total.chars and total.counts["lost"] == 0
    rows = pd.DataFrame([a.as_row() for a in accounts])
    frames = DocumentFrames(
        document={"status": "parsed", "error": None, "n_pages": 3},
        pages=pd.DataFrame({"page_index": [0, 1, 2], "page_label": ["1", "2", "3"]}),
        paragraphs=pd.DataFrame(
            columns=["paragraph_id", "page_index", "text", "flags", "x0", "y0", "x1", "y1"]
        ),
        tables=pd.DataFrame(columns=["table_id", "n_rows", "n_cols", "header_rows"]),
        cells=pd.DataFrame(columns=["table_id", "row_idx", "col_idx", "text"]),
        conservation=rows,
    )
    results = {r.expectation: r for r in evaluate_document(frames, settings=QualitySettings())}
    furniture = results["furniture_char_share"]
    assert not furniture.success and furniture.severity == "WARN"
    assert furniture.observed_value.startswith("1.0000 (")


def test_compact_and_char_counts_agree_with_the_per_character_rules_code_point_by_code_point():
    """compact() (a translate table filled as code points appear) and _chars() (str.split) keep
    exactly what the per-character definitions keep, code point by code point (the whole BMP, a
    sample beyond: tags, private use, unassigned), alone and in text."""
    import random
    import unicodedata

    from dagster_ocr.conservation import _DROPPED, _chars, compact

    def by_rule(text: str) -> str:
        invisible = ("Cc", "Cf", "Co", "Cs")
        kept = (c for c in text if not c.isspace() and c not in _DROPPED)
        return "".join(c for c in kept if unicodedata.category(c) not in invisible)

    for code in (*range(0x10000), *range(0x10000, 0x110000, 61), 0xE0001, 0xF0000, 0x10FFFD):
        c = chr(code)
        assert compact(c) == by_rule(c), hex(code)
        assert _chars(c) == (0 if c.isspace() else 1), hex(code)
    rng = random.Random(7)
    specials = (0xAD, 0x2010, 0x2028, 0x200B, 0xFEFF, 0xE000, 0xD800, 0x3000, 0x85)
    pool = [chr(c) for c in (*range(0x250), *specials)]
    for _ in range(5000):
        text = "".join(rng.choice(pool) for _ in range(rng.randint(0, 30)))
        assert compact(text) == by_rule(text)
        assert _chars(text) == sum(1 for c in text if not c.isspace())


def test_lines_over_cells_are_found_in_arrays_as_box_by_box():
    """TextAccountant._in_tables (a page's lines against its cells in arrays) says what
    _in_table says of each line: touching edges and zero-width boxes included, NaN boxes too."""
    import random

    from dagster_ocr.conservation import TextAccountant

    rng = random.Random(3)
    accountant = TextAccountant.__new__(TextAccountant)

    def box() -> tuple[float, float, float, float]:
        x0, y0 = float(rng.randint(0, 60)), rng.uniform(0, 80)
        return (x0, y0, x0 + rng.choice([0.0, 5.0, rng.uniform(0, 10)]), y0 + rng.uniform(0, 5))

    for _ in range(200):
        accountant._cell_boxes = {0: [box() for _ in range(rng.randint(1, 40))]}
        boxes = [box() for _ in range(rng.randint(0, 40))] + accountant._cell_boxes[0][:2]
        assert accountant._in_tables(0, boxes) == [accountant._in_table(0, b) for b in boxes]
    accountant._cell_boxes = {0: [(0.0, 0.0, float("nan"), 10.0), (20.0, 0.0, 30.0, 10.0)]}
    boxes = [(5.0, 1.0, 25.0, 2.0), (float("nan"), 1.0, 5.0, 2.0)]
    assert accountant._in_tables(0, boxes) == [accountant._in_table(0, b) for b in boxes]
    assert accountant._in_tables(1, boxes) == [False, False]  # a page without cells
