"""A statement rendered from an HTML table (how SEC EDGAR filings reach PDF) reads as one table.

Such a page has no drawn grid: every row is a run of abutting filled cells (banded: every other row
shaded), with thin spacer cells of the row's own colour between a ``$`` and its figure and between
columns; one column's border is painted as a thin black box per row, and the totals' underlines are
short black bars under each figure that stop short of that border. Read as rules, those thin boxes
let the line finder cut the shaded cells into a grid of every cell edge, and the stacked column
header above came out as a second table (tables/grid.py ``_has_grid``). The pages are generated
over a seeded spread of sizes and column counts.
"""

from __future__ import annotations

import random

import pymupdf
import pytest
from support.parsed import tables_of

from dagster_ocr.tables.grid import _has_grid

SHADE = (0.8, 0.93, 1.0)
WHITE = (1.0, 1.0, 1.0)
BLACK = (0.0, 0.0, 0.0)
HEADS = [
    ["Redeemable", "Noncontrolling", "Interests"],
    ["Shares"],
    ["Accumulated", "Other", "Comprehensive", "Income (Loss)"],
    ["(Accumulated", "Deficit)", "Retained", "Earnings"],
    ["Additional", "Paid-In", "Capital"],
    ["Amount"],
    ["Total", "Stockholders'", "Equity"],
]
LABELS = [
    "Issuance of common stock for awards",
    "Stock-based compensation",
    "Distributions to noncontrolling interests",
    "Net income",
    "Other comprehensive loss",
    "Settlements of warrants",
]


def _figure(rng: random.Random) -> str:
    if rng.random() < 0.35:
        return "-"
    v = rng.randint(2, 9_999)
    return f"({v:,})" if rng.random() < 0.3 else f"{v:,}"


def html_statement_pdf(path, seed: int, n_cols: int, rule_across: bool = False) -> dict:
    """One statement page painted the way an HTML table renderer paints it; returns the truth.

    ``rule_across``: the row rules are drawn across the column border (a drawn grid, kept)."""
    rng = random.Random(seed)
    size = rng.choice([7.0, 7.5, 8.0])
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    page.insert_text((150, 50), "Consolidated Statements of Equity", fontname="hebo", fontsize=size + 3)
    page.insert_text((270, 64), "(in millions)", fontname="hebo", fontsize=size + 2)
    left, label_end = 20.0, 200.0
    pitch = (590.0 - label_end) / n_cols
    # per column: "$" cell, spacer, figure cell, gap spacer (thin cells of the row's colour)
    cols = []
    for k in range(n_cols):
        x = label_end + k * pitch
        cols.append((x, x + 8.0, x + 9.15, x + pitch - 1.15, x + pitch))
    border = cols[0][4] - 0.6  # one column's right border: a thin black box per row

    def paint_row(y0: float, y1: float, fill) -> None:
        edges = [left, label_end] + [e for c in cols for e in c[1:]]
        for a, b in zip(edges, edges[1:], strict=False) if fill else ():  # the header is not painted
            page.draw_rect(pymupdf.Rect(a, y0, b, y1), color=None, fill=fill, width=0)
        page.draw_rect(pymupdf.Rect(border, y0, border + 0.5, y1), color=None, fill=BLACK, width=0)

    step = size + 6.0
    y = 90.0
    heads = HEADS[:n_cols]
    depth = max(len(h) for h in heads)
    for line in range(depth):  # the stacked header, each column's lines sitting on the last one
        paint_row(y, y + step, None)
        for k, head in enumerate(heads):
            at = line - (depth - len(head))
            if at >= 0:
                w = pymupdf.get_text_length(head[at], fontname="hebo", fontsize=size)
                x = (cols[k][0] + cols[k][4]) / 2 - w / 2
                page.insert_text((x, y + step - 4), head[at], fontname="hebo", fontsize=size)
        y += step
    rows = []
    labels = rng.sample(LABELS, 4)
    plan = ["Balance as of December 31, 2022", *labels, "Balance as of December 31, 2023"]
    for r, label in enumerate(plan):
        total = label.startswith("Balance")
        paint_row(y, y + step, SHADE if r % 2 == 0 else WHITE)
        figures = [f"{rng.randint(100, 99_999):,}" if total else _figure(rng) for _ in range(n_cols)]
        page.insert_text((left + 2, y + step - 4), label, fontname="hebo" if total else "helv", fontsize=size)
        for k, fig in enumerate(figures):
            _, d0, _, _, right = cols[k]
            if total and k != 1:  # a share count carries no "$"
                page.insert_text((d0 - 5.0, y + step - 4), "$", fontname="helv", fontsize=size)
            w = pymupdf.get_text_length(fig, fontname="helv", fontsize=size)
            page.insert_text((right - 3 - w, y + step - 4), fig, fontname="helv", fontsize=size)
        if r == len(plan) - 2 or rule_across:  # the underlines over the closing balance
            for a, b in [(c[0] + 1, c[1]) for c in cols] + [(c[2], c[3] - 1) for c in cols]:
                if rule_across:
                    a, b = left, cols[-1][4]
                page.draw_rect(pymupdf.Rect(a, y + step - 0.6, b, y + step), color=None, fill=BLACK, width=0)
        rows.append((label, ["$ " + f if total and k != 1 else f for k, f in enumerate(figures)]))
        y += step
    doc.save(path)
    return {"rows": rows, "heads": heads, "n_cols": n_cols}


@pytest.mark.parametrize(("seed", "n_cols"), [(0, 5), (1, 6), (2, 7), (3, 7)])
def test_an_html_rendered_statement_is_one_table_with_its_stacked_header(tmp_path, seed, n_cols):
    path = tmp_path / "statement.pdf"
    want = html_statement_pdf(path, seed, n_cols)
    with pymupdf.open(path) as doc:
        assert not _has_grid(doc[0].get_cdrawings())  # one column border and underlines: no grid
    tables = tables_of(path)
    assert len(tables) == 1, [(t.n_rows, t.n_cols) for t in tables]
    table = tables[0]
    assert table.n_cols == 1 + n_cols  # the "$" columns and the spacers folded away
    assert table.header_rows >= 1 and table.n_rows - table.header_rows == len(want["rows"])
    # the units line under the title is the table's units, not a heading over every column
    assert table.units == "in millions" and not any("millions" in h for h in table.column_headers)
    grid = table.grid()
    header = [" ".join(row[k] for row in grid[: table.header_rows]).split() for k in range(table.n_cols)]
    for k, head in enumerate(want["heads"]):
        assert header[k + 1] == " ".join(head).split(), header  # the stacked header over its column
    by_label = {row[0]: row[1:] for row in grid}
    for label, figures in want["rows"]:
        assert by_label.get(label) == figures, (label, by_label.get(label))


def test_row_rules_drawn_across_the_column_border_still_make_a_grid(tmp_path):
    path = tmp_path / "grid.pdf"
    html_statement_pdf(path, 0, 5, rule_across=True)
    with pymupdf.open(path) as doc:
        assert _has_grid(doc[0].get_cdrawings())
