"""Where a table sits among the paragraphs, and the one Markdown rendering of a table."""

from __future__ import annotations

from dagster_ocr.blocks import markdown_row, place_tables, table_markdown
from dagster_ocr.model import Cell, Paragraph, Table


def _p(order, page, box, section="s0"):
    return Paragraph(f"p{order}", section, order, page, f"text {order}", box)


def _t(table_id, page, box, last_page=None):
    return Table(table_id, page, page if last_page is None else last_page, 1, 1, [Cell(0, 0, "x", page)], box)


def test_a_table_goes_before_the_first_paragraph_below_its_top_in_its_column():
    # two columns: left 50-290, right 310-550; reading order runs down the left, then the right
    paras = [
        _p(0, 0, (50, 50, 290, 100)),
        _p(1, 0, (50, 400, 290, 450)),
        _p(2, 0, (310, 50, 550, 100)),
        _p(3, 0, (310, 400, 550, 450), section="s1"),
    ]
    tables = [_t("left", 0, (50, 200, 290, 300)), _t("right", 0, (310, 200, 550, 300))]
    placed = place_tables(paras, tables)
    assert placed["left"].precedes == 1 and placed["left"].section_id == "s0"
    assert placed["right"].precedes == 3 and placed["right"].section_id == "s0"  # the section before it


def test_a_table_below_every_paragraph_of_its_column_follows_the_last_one():
    paras = [_p(0, 0, (50, 50, 290, 100)), _p(1, 0, (310, 50, 550, 100)), _p(2, 1, (50, 50, 550, 100))]
    placed = place_tables(paras, [_t("t", 0, (50, 500, 290, 700))])
    assert placed["t"].precedes == 1


def test_a_table_on_a_page_without_paragraphs_follows_the_earlier_pages():
    paras = [_p(0, 0, (50, 50, 550, 100)), _p(1, 2, (50, 50, 550, 100))]
    placed = place_tables(
        paras, [_t("alone", 1, (50, 50, 550, 700), last_page=2), _t("end", 3, (0, 0, 9, 9))]
    )
    assert placed["alone"].precedes == 1 and placed["end"].precedes == 2
    assert place_tables([], [_t("only", 0, (0, 0, 9, 9))])["only"].precedes == 0


def test_a_table_read_as_text_has_no_place():
    assert place_tables([_p(0, 0, (0, 0, 9, 9))], [_t("prose", 0, (0, 0, 9, 9))], {"prose"}) == {}


def test_table_markdown_folds_the_header_collapses_whitespace_and_keeps_every_body_row():
    grid = [["Item", "Fees"], ["Item", "2024"], ["Hosting | backup", "1,200\nJPY"], ["Support", None]]
    assert table_markdown(grid, 2) == [
        "| Item | Fees 2024 |",
        "|---|---|",
        "| Hosting \\| backup | 1,200 JPY |",
        "| Support |  |",
    ]
    # no header: empty header cells; a header-only table is its header alone (no row twice)
    assert table_markdown([["a", "b"]], 0) == ["|  |  |", "|---|---|", "| a | b |"]
    assert table_markdown([["a", "b"]], 1) == ["| a | b |", "|---|---|"]
    assert markdown_row(["x"]) == "| x |"
