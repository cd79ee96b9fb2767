"""The document as one reading-order sequence of blocks: headings, paragraphs and tables.

The warehouse view ``document_blocks`` (sql/views.sql) is that sequence; analysts, the knowledge
base (:mod:`dagster_ocr.kb`) and the exports (:mod:`dagster_ocr.export`) all read it, so they
agree on what "the document's text" is and in which order it comes.

The paragraph stage already gives headings and paragraphs one order (``Paragraph.reading_order``;
a heading is the first paragraph of its section). What it does not give is where a table sits:
its lines are left out of the paragraphs. :func:`place_tables` decides that here, once, when the
document is written, and the view merges the two orders:

* a table is placed on its first page (a table merged across pages appears once, there), before
  the first paragraph, in the page's reading order, that starts at or below the table's top among
  the paragraphs of the table's column (those that overlap it horizontally; all of the page's when
  none does); when no paragraph of that column starts below it, it follows the column's last one;
* on a page without paragraphs, a table follows everything on earlier pages;
* a table the paragraph stage read as running text (two columns of prose taken for a table: its
  text is in the paragraphs) is left out of the sequence, so no text appears twice.

Each table is also rendered once as Markdown here (:func:`table_markdown`): the one rendering the
view, the knowledge base and the exports share.

The warehouse's ``paragraphs`` table holds the same sequence (:func:`block_sequence`): every placed
table is a row of kind ``table`` there too (its plain text, :func:`table_text`), and
``reading_order`` counts headings, paragraphs and tables alike. So the paragraphs read in order
are the whole document's text, each character once, tables where they were printed; a reader
of the paragraphs alone no longer misses every table (on the corpus the paragraph rows without
tables scored 0.60 edit similarity to plain ``get_text()``, the whole sequence 0.89:
docs/benchmarks-history.md, issue 21 session 8).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from dagster_ocr.model import Paragraph, Table

#: ``document_blocks.kind`` values
BLOCK_KINDS = ("heading", "paragraph", "table")

_WS = re.compile(r"\s+")
#: a paragraph whose top is this close above a table's top (PDF points) still counts as below it
_TOP_TOLERANCE = 1.0


def markdown_row(cells: Sequence[str]) -> str:
    """One Markdown table row; a ``|`` inside a cell is escaped so it does not split the cell."""
    return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"


def markdown_header(header_rows: Sequence[Sequence[str]], n_cols: int) -> list[str]:
    """The header row and the ``|---|`` separator of a Markdown table.

    Markdown has one header row: a multi-row header is folded per column ("Fees" over "2024" gives
    "Fees 2024"). A table without a detected header gets empty header cells, so the body rows stay
    body rows instead of the first one being promoted to a header it never was.
    """
    names = []
    for col in range(n_cols):
        parts: list[str] = []
        for row in header_rows:
            cell = row[col] if col < len(row) else ""
            if cell and cell not in parts:  # a cell merged across header rows repeats its text
                parts.append(cell)
        names.append(" ".join(parts))
    return [markdown_row(names), "|" + "---|" * max(1, n_cols)]


def table_markdown(
    grid: Sequence[Sequence[str | None]], header_rows: int, column_headers: Sequence[str] = ()
) -> list[str]:
    """A table as Markdown lines: the header row, the ``|---|`` separator, then one line per body row.

    ``grid`` is the table's rows (a spanning cell's text at its first row and column, covered
    cells empty); whitespace inside a cell is collapsed to one space, so every row is one line
    and a consumer can split the text back into rows. The first ``header_rows`` rows fold into the
    header (see :func:`markdown_header`), under ``column_headers`` (the headings printed above the
    grid, see ``tables.statement``) where there are any; every other row is a body row, in order.
    """
    n_cols = max((len(r) for r in grid), default=0)
    rows = [[_WS.sub(" ", c or "").strip() for c in r] + [""] * (n_cols - len(r)) for r in grid]
    header_n = min(max(header_rows, 0), len(rows))
    above = [[_WS.sub(" ", c or "").strip() for c in column_headers]] if any(column_headers) else []
    return markdown_header(above + rows[:header_n], n_cols) + [markdown_row(r) for r in rows[header_n:]]


def table_text(grid: Sequence[Sequence[str | None]], heads: Sequence[str] = ()) -> str:
    """A table as plain text: the lines of headings printed above its grid (``Table.heads``), then
    one line per row, its non-empty cells separated by a space, in column order (a spanning cell's
    text once, at its first row and column). What a transcript of the printed table reads like;
    the structure stays in ``tables``/``table_cells`` and the Markdown."""
    lines = (" ".join(t for c in row if (t := _WS.sub(" ", c or "").strip())) for row in grid)
    return "\n".join(line for line in (*(_WS.sub(" ", h).strip() for h in heads), *lines) if line)


@dataclass(frozen=True, slots=True)
class TablePlacement:
    """Where a table sits in the document's reading order."""

    #: the ``reading_order`` of the paragraph the table comes before (the number of paragraphs
    #: when it comes after all of them); tables before the same paragraph keep their page order
    precedes: int
    #: the section in force where the table sits (the preceding paragraph's), or None before the
    #: first heading
    section_id: str | None


def _x_overlap(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> float:
    return min(a[2], b[2]) - max(a[0], b[0])


def place_tables(
    paragraphs: Sequence[Paragraph], tables: Sequence[Table], read_as_text: Collection[str] = ()
) -> dict[str, TablePlacement]:
    """Each table's place among the paragraphs (see the module docstring for the rule).

    ``read_as_text``: ids of tables whose text the paragraph stage kept as paragraphs; they get no
    place (they are not in the sequence).
    """
    by_order = sorted(paragraphs, key=lambda p: p.reading_order)
    n = len(by_order)
    on_page: dict[int, list[Paragraph]] = defaultdict(list)
    for p in by_order:
        on_page[p.page_index].append(p)
    out: dict[str, TablePlacement] = {}
    for t in tables:
        if t.table_id in read_as_text:
            continue
        page = on_page.get(t.first_page_index, [])
        if page:
            column = [p for p in page if _x_overlap(p.bbox, t.bbox) > 0] or page
            top = t.bbox[1]
            below = [p.reading_order for p in column if p.bbox[1] >= top - _TOP_TOLERANCE]
            precedes = min(below) if below else max(p.reading_order for p in column) + 1
        else:
            # after everything on earlier pages: before the first paragraph of a later page
            later = [ps[0].reading_order for index, ps in on_page.items() if index > t.first_page_index]
            precedes = min(later) if later else n
        before = by_order[precedes - 1] if 0 < precedes <= n else None
        out[t.table_id] = TablePlacement(precedes, before.section_id if before is not None else None)
    return out


def block_sequence(
    paragraphs: Sequence[Paragraph], tables: Sequence[Table], placements: dict[str, TablePlacement]
) -> list[Paragraph | Table]:
    """Headings, paragraphs and placed tables in one reading order (the ``document_blocks``
    order: a table before the paragraph it precedes; tables before one paragraph by page, top,
    left). Tables without a placement (read as running text) are not in it."""
    keyed: list[tuple[tuple[float, int, int, float, float, str], Paragraph | Table]] = [
        ((p.reading_order, 1, p.page_index, p.bbox[1], p.bbox[0], p.paragraph_id), p) for p in paragraphs
    ]
    for t in tables:
        placed = placements.get(t.table_id)
        if placed is not None:
            keyed.append(((placed.precedes, 0, t.first_page_index, t.bbox[1], t.bbox[0], t.table_id), t))
    keyed.sort(key=lambda kv: kv[0])
    return [obj for _, obj in keyed]
