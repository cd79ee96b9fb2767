"""Financial statements as a reader quotes them: title, units and periods over each figure column,
``$`` signs folded into their figures, banded shading no grid (tables/statement.py, tables/grid.py).

The pages are generated: a statement title, a units line, the periods printed above the grid (one
heading over every column, or stacked per column), section label rows, ``$`` signs in columns of
their own, parenthesised negatives, and optionally every other row shaded with pale fills (the
narrow cells between a sign and its figure included), over a seeded spread of periods, fonts and
column counts. No page is taken from a document the other benches read.
"""

from __future__ import annotations

import random

import pymupdf
import pytest
from support.parsed import tables_of

from dagster_ocr.blocks import table_markdown
from dagster_ocr.docinfo import describe
from dagster_ocr.tables.statement import units_of

MONTHS = ["March 31,", "June 30,", "September 28,", "December 31,"]
LABELS = [
    "Net sales",
    "Cost of sales",
    "Research and development",
    "Selling, general and administrative",
    "Interest income",
    "Other income, net",
    "Provision for income taxes",
    "Depreciation and amortization",
    "Purchases of property and equipment",
    "Proceeds from sale of investments",
    "Repayments of long-term debt",
    "Dividends paid",
]


def _figure(rng: random.Random) -> str:
    v = rng.randint(10, 99_999)
    text = f"{v:,}"
    return f"({text})" if rng.random() < 0.3 else text


def _set_right(page: pymupdf.Page, right: float, y: float, text: str, font: str, size: float) -> None:
    """``text`` set flush right at ``right`` on the baseline ``y``, as a column of figures is."""
    page.insert_text(
        (right - pymupdf.get_text_length(text, fontname=font, fontsize=size), y),
        text,
        fontname=font,
        fontsize=size,
    )


def statement_pdf(path, seed: int, shaded: bool, stacked: bool, n_periods: int) -> dict:
    """One statement page; returns what a reader should get back."""
    rng = random.Random(seed)
    font, bold = rng.choice([("helv", "hebo"), ("tiro", "tibo")])
    size = rng.choice([7.5, 8.0, 8.5, 9.0])
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    title = rng.choice(["CONSOLIDATED STATEMENTS OF OPERATIONS", "Consolidated Statements of Cash Flows"])
    units = rng.choice(["(In millions)", "(in thousands, except per share data)", "(in millions)"])
    page.insert_text((230, 50), "Example Holdings Inc.", fontname=bold, fontsize=size + 1)
    page.insert_text((200, 64), title, fontname=bold, fontsize=size + 1)
    page.insert_text((250, 76), units, fontname=font, fontsize=size)
    years = [str(2024 - k) for k in range(n_periods)]
    month = rng.choice(MONTHS)
    pitch = 70.0
    right = 560.0
    col_right = [right - pitch * (n_periods - 1 - k) for k in range(n_periods)]
    y = 96.0
    span_x = col_right[0] - 40
    page.insert_text(
        (span_x + 20, y), "Years ended" if stacked else f"Year Ended {month}", fontname=bold, fontsize=size
    )
    y += size + 4
    for k, year in enumerate(years):
        x = col_right[k] - 48
        if stacked:
            page.insert_text((x, y), month, fontname=bold, fontsize=size)
        page.insert_text((x + 14, y + (size + 1 if stacked else 0)), year, fontname=bold, fontsize=size)
    y += (2 * size + 10) if stacked else size + 10
    rows = []
    labels = rng.sample(LABELS, 8)
    for r, label in enumerate(labels):
        if r == 4:  # a section label row between the figures
            page.insert_text((40, y), "Investing activities:", fontname=font, fontsize=size)
            y += size + 6
        figures = [_figure(rng) for _ in years]
        if shaded and r % 2 == 0:
            edges = [30.0, col_right[0] - 62]
            for c in col_right:
                edges += [c - 52, c - 48, c + 1, c + 5]
            for x0, x1 in zip(edges, edges[1:], strict=False):
                page.draw_rect(pymupdf.Rect(x0, y - size, x1, y + 3), color=None, fill=(0.8, 0.93, 1.0))
        page.insert_text((46, y), label, fontname=font, fontsize=size)
        for k, fig in enumerate(figures):
            w = pymupdf.get_text_length(fig, fontname=font, fontsize=size)
            if r == 0:
                page.insert_text((col_right[k] - 52, y), "$", fontname=font, fontsize=size)
            page.insert_text((col_right[k] - w, y), fig, fontname=font, fontsize=size)
        rows.append((label, figures))
        y += size + 6
    doc.save(path)
    return {"title": title, "units": units.strip("()"), "years": years, "rows": rows}


CASES = [
    (seed, shaded, stacked, n)
    for seed in range(4)
    for shaded in (False, True)
    for stacked in (True, False)
    for n in (2, 3)
]


@pytest.mark.parametrize(("seed", "shaded", "stacked", "n_periods"), CASES)
def test_a_statement_reads_with_its_title_units_periods_and_figures(
    tmp_path, seed, shaded, stacked, n_periods
):
    path = tmp_path / "statement.pdf"
    want = statement_pdf(path, seed, shaded, stacked, n_periods)
    tables = tables_of(path)
    assert tables, "no table found"
    first = tables[0]
    assert first.title == want["title"]
    assert first.units == want["units"]
    assert first.n_cols == 1 + n_periods  # the $ columns folded into their figures
    md = table_markdown(first.grid(), first.header_rows, first.column_headers)
    heads = [h.strip() for h in md[0].strip("|").split("|")][1:]
    assert [h.split()[-1] for h in heads] == want["years"], md[0]  # each period over its figures
    assert all(("Year" in h) for h in heads), md[0]  # the heading over all of them joins each
    grid = [row for t in tables for row in t.grid()]
    by_label = {row[0]: row[1:] for row in grid if row and row[0]}
    for label, figures in want["rows"]:
        assert label in by_label, f"{label!r} lost: {sorted(by_label)}"
        got = [c.removeprefix("$ ") for c in by_label[label]]
        assert got == figures
    dollar_row = by_label[want["rows"][0][0]]
    assert all(c.startswith("$ ") for c in dollar_row)
    # the part below the section label continues the statement: same headings, title, its group
    for t in tables[1:]:
        if t.column_headers:
            assert t.title == want["title"] and t.row_group.startswith("Investing activities")
    assert md[2].startswith(f"| {want['rows'][0][0]} |")


def test_units_are_the_words_or_the_parenthesis_that_state_them():
    assert units_of("(In millions)") == "In millions"
    assert units_of("The following table shows net sales (in millions):") == "in millions"
    assert units_of("(in thousands, except per share data)") == "in thousands, except per share data"
    assert units_of("Amounts in EUR million") == "in EUR million"
    assert units_of("Net sales grew in every quarter") == ""


def _page(*lines: tuple[str, float]) -> list[tuple[str, float]]:
    return list(lines)


def test_an_sec_cover_says_issuer_form_and_period():
    cover = _page(
        ("UNITED STATES", 10),
        ("SECURITIES AND EXCHANGE COMMISSION", 10),
        ("FORM 10-Q", 14),
        ("For the quarterly period ended June 29, 2024", 9),
        ("Example Widgets Corporation", 12),
        ("(Exact name of Registrant as specified in its charter)", 7),
    )
    info = describe([cover], {"title": "10-Q Q3 2024 06.29.2024-2024-08-02"})
    assert (info.issuer, info.doc_type, info.period_end, info.fiscal_year) == (
        "Example Widgets Corporation",
        "10-Q",
        "2024-06-29",
        None,  # a quarter states no fiscal year: one ended in June may be in the next fiscal year
    )
    assert info.title == "Example Widgets Corporation Form 10-Q"  # the metadata title is a job name
    assert info.language == "" or info.language == "en"
    # a quarter is cited by its end as printed: its calendar year need not be the fiscal year
    assert info.context() == "Example Widgets Corporation 10-Q quarter ended June 29, 2024"


def test_an_8k_cover_is_dated_by_its_date_of_report_wherever_the_cover_prints_it():
    for lines in (
        [("Date of Report (Date of earliest event reported): January 24, 2024", 9)],
        [("January 24, 2024", 10), ("Date of Report (Date of earliest event reported)", 7)],
        [("Date of report (Date of earliest event reported)", 7), ("January 24, 2024", 10)],
    ):
        cover = _page(
            ("FORM 8-K", 14),
            ("CURRENT REPORT", 10),
            ("Pursuant to Section 13 or 15(d) of the Securities Exchange Act of 1934", 8),
            *lines,
            ("Tesla, Inc.", 12),
            ("(Exact name of registrant as specified in its charter)", 7),
        )
        info = describe([cover])
        assert (info.doc_type, info.period_end, info.fiscal_year) == ("8-K", "2024-01-24", None)
        assert info.context() == "Tesla, Inc. 8-K dated January 24, 2024"
    annual = describe([_page(("FORM 10-K", 14), ("For the fiscal year ended September 28, 2024", 9))])
    assert (annual.period_end, annual.fiscal_year) == ("2024-09-28", 2024)
    # no date of report on the cover: no date, and the context says only who and what
    undated = describe([_page(("FORM 8-K", 14), ("Tesla, Inc.", 12), ("(Exact name of registrant)", 7))])
    assert (undated.period_end, undated.context()) == ("", "Tesla, Inc. 8-K")


def test_a_contract_a_tender_and_an_untitled_page():
    contract = _page(("MASTER SERVICES AGREEMENT", 16), ("between Acme GmbH and the Customer", 10))
    assert describe([contract]).doc_type == "contract"
    assert describe([contract]).title == "MASTER SERVICES AGREEMENT"
    tender = _page(("Invitation to Tender", 16), ("Road maintenance, lot 3", 10))
    assert describe([tender]).doc_type == "tender"
    # a report body that mentions an agreement is not a contract
    body = _page(
        ("Annual statistics", 16), *[("the agreement of the parties was noted in the minutes", 9)] * 20
    )
    assert describe([body]).doc_type == ""
    empty = describe([])
    assert (empty.title, empty.issuer, empty.doc_type, empty.fiscal_year) == ("", "", "", None)
    german = " ".join(["der Vertrag und die Leistung ist nicht mit von den des zu"] * 5)
    assert describe([_page((german, 9))]).language == "de"


def _grid_table(rows: list[list[str]], header_rows: int = 1):
    from dagster_ocr.model import Cell, Table

    cells = [
        Cell(row=r, col=c, text=t, page_index=0) for r, row in enumerate(rows) for c, t in enumerate(row)
    ]
    return Table("t0", 0, 0, len(rows), len(rows[0]), cells, (0, 0, 1, 1), header_rows=header_rows)


def test_a_table_of_check_marks_keeps_its_columns():
    from dagster_ocr.tables.statement import fold_symbol_columns

    rows = [["Roles", "Teachers", "Trainers"], ["Curriculum", "x", ""], ["Assessment", "x", "x"]]
    table = fold_symbol_columns(_grid_table(rows))
    assert table.n_cols == 3 and table.grid() == rows


def test_signs_fold_into_their_figures_and_spacers_go():
    from dagster_ocr.tables.statement import fold_symbol_columns

    rows = [["", "2024", "", "", "2023", ""], ["Sales", "$", "1,204", "", "(98)", "%"]]
    table = fold_symbol_columns(_grid_table(rows))
    assert table.grid() == [["", "2024", "2023"], ["Sales", "$ 1,204", "(98)%"]]


def test_a_long_label_running_over_the_sign_column_still_folds():
    """A wrapped row label's first line runs over the empty "$" column beside it (a body cell spanning
    two columns, as a stream finder reads it): the signs still fold, and the label spans what stays."""
    from dagster_ocr.tables.statement import fold_symbol_columns

    rows = [
        ["", "", "2024", "", "2023"],
        ["Beginning balances", "$", "73,812", "$", "64,849"],
        ["Common stock withheld related to net share settlement of equity", "", "", "", ""],
        ["awards", "", "(3,993)", "", "(3,521)"],
    ]
    table = _grid_table(rows)
    label = next(c for c in table.cells if c.row == 2 and c.col == 0)
    label.col_span = 2
    table.cells = [c for c in table.cells if not (c.row == 2 and c.col == 1)]
    table = fold_symbol_columns(table)
    assert table.n_cols == 3
    assert table.grid()[1] == ["Beginning balances", "$ 73,812", "$ 64,849"]
    assert table.grid()[3] == ["awards", "(3,993)", "(3,521)"]
    assert next(c for c in table.cells if c.row == 2 and c.col == 0).col_span == 1
    # a span over a column with figures of its own is left alone
    spanning = _grid_table([["", "2024", "2023"], ["A long label", "", ""], ["Sales", "1", "2"]])
    spanning.cells[3].col_span = 2
    spanning.cells = [c for c in spanning.cells if not (c.row == 1 and c.col == 1)]
    assert fold_symbol_columns(spanning).n_cols == 3


def test_column_numbers_are_a_header_not_data():
    from dagster_ocr.tables.statement import _column_numbers

    assert _column_numbers(["1", "2", "3", "4"])
    assert not _column_numbers(["49,644", "49,825"]) and not _column_numbers(["3", "1"])


def test_a_title_is_the_first_lines_in_the_largest_type_not_every_heading_in_it():
    """Headings printed in the title's size further down the first page, body text between, are
    sections: the title is the first run of lines in that size (a title wrapped over lines)."""
    page = _page(
        ("Pre-Digital Era (19th - Early", 16),
        ("20th Century)", 16),
        *[("Typewriters and carbon paper set the pace of office work for decades.", 9)] * 4,
        ("The Birth of Word Processing (1960s - 1970s)", 16),
        *[("Dedicated machines stored text on magnetic cards and tapes.", 9)] * 4,
    )
    assert describe([page]).title == "Pre-Digital Era (19th - Early 20th Century)"


def balance_sheet_pdf(path, seed: int, company: bool) -> dict:
    """A statement whose title and units are centred on the page and end left of its two figure
    columns, set narrow at the right margin, with the periods printed as the grid's first rows
    ("December 31," over the year, close over the figures): the lines above it are all left of
    the figures, and ``company`` puts the issuer's name over them (a third such line) or not."""
    rng = random.Random(seed)
    font, bold = rng.choice([("helv", "hebo"), ("tiro", "tibo")])
    size = rng.choice([7.0, 7.5, 8.0])
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    title = rng.choice(
        ["Consolidated Balance Sheets", "CONSOLIDATED BALANCE SHEETS", "Statements of Financial Position"]
    )
    units = rng.choice(["(in millions, except per share data)", "(In thousands)", "(in millions)"])
    y = 48.0
    for text in (["Example Holdings, Inc."] if company else []) + [title, units]:
        w = pymupdf.get_text_length(text, fontname=bold, fontsize=size)
        page.insert_text((306 - w / 2, y), text, fontname=bold, fontsize=size)
        y += size + 4
    y += 8
    col_right = [505.0, 585.0]
    years = ["2024", "2023"]
    for k, year in enumerate(years):
        head = "December 31,"
        wh = pymupdf.get_text_length(head, fontname=bold, fontsize=size - 1)
        page.insert_text((col_right[k] - 30 - wh / 2, y), head, fontname=bold, fontsize=size - 1)
        wy = pymupdf.get_text_length(year, fontname=bold, fontsize=size - 1)
        page.insert_text((col_right[k] - 30 - wy / 2, y + size + 2), year, fontname=bold, fontsize=size - 1)
    y += 2 * size + 10
    labels = rng.sample(LABELS, 8)
    # a label as long as a balance sheet's share-capital line sets the stub wide, the figures narrow
    labels.insert(
        rng.randrange(1, 8),
        "Preferred stock; $0.001 par value; 100 shares authorized; none issued or outstanding",
    )
    for label in labels:
        figures = [_figure(rng) for _ in years]
        page.insert_text((20, y), label, fontname=font, fontsize=size)
        for k, fig in enumerate(figures):
            w = pymupdf.get_text_length(fig, fontname=font, fontsize=size)
            page.insert_text((col_right[k] - w, y), fig, fontname=font, fontsize=size)
        y += size + 6
    doc.save(path)
    return {"title": title, "units": units.strip("()")}


def lead_in_pdf(path, seed: int) -> str:
    """A table led into by a sentence over two lines, the first as wide as the page (over the
    figure columns), the last short and ending in its units and a colon, over a grid holding its
    own heads; returns the sentence."""
    rng = random.Random(seed)
    font = rng.choice(["helv", "tiro"])
    size = rng.choice([8.0, 9.0])
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    first = "The following table shows the Company's gross property, plant and equipment by major asset"
    last = "class and accumulated depreciation (in millions):"
    page.insert_text((40, 60), first, fontname=font, fontsize=size * 1.25)
    page.insert_text((40, 60 + size * 1.25 + 3), last, fontname=font, fontsize=size * 1.25)
    y = 60 + 2 * (size * 1.25 + 3) + 12
    col_right = [480.0, 570.0]
    for k, year in enumerate(["2024", "2023"]):
        _set_right(page, col_right[k], y, year, font, size)
    y += size + 8
    for label in rng.sample(LABELS, 7):
        page.insert_text((40, y), label, fontname=font, fontsize=size)
        for k in range(2):
            _set_right(page, col_right[k], y, _figure(rng), font, size)
        y += size + 6
    doc.save(path)
    return f"{first} {last}"


@pytest.mark.parametrize("seed", range(3))
def test_a_sentence_leading_into_a_table_over_two_lines_is_its_title(tmp_path, seed):
    """The sentence's last line, short, is passed over as a label the grid left out, and its first
    line, over the figures, ended the search for headings: the title search began there and met
    no colon. It begins at the last line now, and the sentence with its units is the title."""
    path = tmp_path / "lead.pdf"
    want = lead_in_pdf(path, seed)
    tables = tables_of(path)
    assert tables, "no table found"
    assert tables[0].title == want
    assert tables[0].units == "in millions"


@pytest.mark.parametrize("company", [False, True])
@pytest.mark.parametrize("seed", range(4))
def test_a_title_centred_left_of_narrow_figure_columns_is_the_statements_title(tmp_path, seed, company):
    """Every line over the grid ends left of its figures, so each is passed over as a label the
    grid left out; the search for headings ran out of lines, and the title search began above them
    all: the statement had no title, and its chunks no name (a 10-K's balance sheet)."""
    path = tmp_path / "balance.pdf"
    want = balance_sheet_pdf(path, seed, company)
    tables = tables_of(path)
    assert tables, "no table found"
    assert tables[0].title == want["title"]
    assert tables[0].units == want["units"]


def captioned_pdf(path, seed: int) -> str:
    """A table of a header row of years and rows of figures, a narrow stub at the left, under a
    caption ("Table 3: ...", plain type, not bold) centred on the page, so that it starts right of
    the stub and spans the figure columns; returns the caption."""
    rng = random.Random(seed)
    font = rng.choice(["helv", "tiro"])
    size = rng.choice([8.0, 9.0])
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    caption = rng.choice(
        [
            f"Table {rng.randint(1, 12)}: Coverage of the survey by state and period (contd.)",
            f"Table {rng.randint(1, 12)}. Households sampled, by region and year",
        ]
    )
    w = pymupdf.get_text_length(caption, fontname=font, fontsize=size)
    page.insert_text((306 - w / 2 + 40, 60), caption, fontname=font, fontsize=size)
    col_right = [250.0 + 80 * k for k in range(4)]
    y = 60 + size + 14
    for k, year in enumerate(["1988", "1996", "2004", "2012"]):
        _set_right(page, col_right[k], y, year, font, size)
    y += size + 8
    for label in rng.sample(["Kerala", "Gujarat", "Orissa", "Punjab", "Bihar", "Assam", "Goa", "Sikkim"], 7):
        page.insert_text((60, y), label, fontname=font, fontsize=size)
        for k in range(4):
            _set_right(page, col_right[k], y, str(rng.randint(100, 99_999)), font, size)
        y += size + 6
    doc.save(path)
    return caption


@pytest.mark.parametrize("seed", range(4))
def test_a_caption_centred_over_the_figures_is_the_title_not_every_columns_heading(tmp_path, seed):
    """One phrase centred over every figure column reads as a head of them all ("Years ended"
    over the years); a caption ("Table 1: ...") set there was folded into each column's head, as
    many times as the table has columns, and the table had no title."""
    path = tmp_path / "captioned.pdf"
    caption = captioned_pdf(path, seed)
    tables = tables_of(path)
    assert tables, "no table found"
    assert not any(caption in h for h in tables[0].column_headers)
    assert tables[0].title == caption
