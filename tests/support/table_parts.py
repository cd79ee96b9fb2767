"""What the table tests share: parts (``dagster_ocr.tables.cells._Part``) built by hand, for the tests
of how parts on consecutive pages join (a grid of texts over evenly spread columns, or over given
column edges), tables built from a grid of texts, and a grid's texts in the form they are compared in."""

from __future__ import annotations

from dagster_ocr.model import Cell, Table
from dagster_ocr.tables.cells import _Part
from dagster_ocr.tables.words import _norm


def part_of_rows(rows: list[list[str | None]], header_rows: int) -> _Part:
    """A stream part on page 0 holding ``rows``, its columns spread evenly over x 50-500."""
    n = len(rows[0])
    return _Part(
        page_index=0,
        bbox=(50.0, 100.0, 500.0, 400.0),
        rows=[list(r) for r in rows],
        row_bboxes=[[None] * n for _ in rows],
        col_edges=[50.0 + 450.0 * k / n for k in range(n + 1)],
        header_rows=header_rows,
        strategy="stream",
    )


def table_of_rows(rows: list[list[str]], header_rows: int) -> Table:
    """A table on page 0 holding ``rows`` (one cell per filled text, none spanning), its first
    ``header_rows`` rows the header."""
    cells = [
        Cell(row=r, col=c, text=t, page_index=0, is_header=r < header_rows)
        for r, row in enumerate(rows)
        for c, t in enumerate(row)
        if t
    ]
    return Table(
        table_id="t0",
        bbox=(50.0, 100.0, 500.0, 400.0),
        first_page_index=0,
        last_page_index=0,
        n_rows=len(rows),
        n_cols=len(rows[0]),
        cells=cells,
        header_rows=header_rows,
    )


def part_on_edges(edges: list[float], rows: list[list[str | None]]) -> _Part:
    """A text part on page 0 holding ``rows`` (the first a header row) between column ``edges``."""
    boxes = [[(edges[c], 0.0, edges[c + 1], 10.0) for c in range(len(edges) - 1)] for _ in rows]
    return _Part(0, (edges[0], 0.0, edges[-1], 10.0), rows, boxes, edges, 1, "text")


def norm_grid(grid: list[list[str]]) -> list[list[str]]:
    """Each cell's text whitespace- and case-insensitive (``words._norm``), as the benches compare."""
    return [[_norm(x) for x in r] for r in grid]
