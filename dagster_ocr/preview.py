"""Short Markdown previews of what was extracted from one document, for a person to read at a glance.

The Dagster UI shows them in the assets' metadata (``duckdb_tables``: the whole document's summary;
``tables``: each table's first rows; ``paragraphs``: the sections and first paragraphs), so a data
engineer can judge a document without SQL. Built from the stage outputs in memory (no warehouse
read), bounded in size whatever the document's length: a 1,000-page document's preview is as long
as a 3-page one's.
"""

from __future__ import annotations

from collections.abc import Sequence

from dagster_ocr.blocks import table_markdown
from dagster_ocr.model import ExtractedDocument, PageLabel, ParagraphResult, Table, TextSource

#: how much each preview shows at most
MAX_SECTIONS = 15
MAX_TABLES = 5
TABLE_ROWS = 5
TABLE_COLS = 8
MAX_PARAGRAPHS = 3
PARAGRAPH_CHARS = 300
CELL_CHARS = 40


def _short(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def label_runs(labels: Sequence[PageLabel]) -> str:
    """The printed labels in order, the middle elided past a dozen (``i, ii, iii, 1, 2 … 40, 41``)."""
    names = [lab.label for lab in labels]
    if len(names) <= 12:
        return ", ".join(names)
    return ", ".join(names[:8]) + " … " + ", ".join(names[-3:])


def _pages_of(table: Table, labels: dict[int, str]) -> str:
    # printed labels where known (the tables stage runs before the labels: physical numbers there)
    first = labels.get(table.first_page_index) or f"#{table.first_page_index + 1}"
    last = labels.get(table.last_page_index) or f"#{table.last_page_index + 1}"
    return f"p. {first}" if table.first_page_index == table.last_page_index else f"pp. {first}–{last}"


def table_preview(table: Table, labels: dict[int, str]) -> list[str]:
    """One table's heading line and its first ``TABLE_ROWS`` body rows as Markdown."""
    merged = f", merged across {len(table.pages)} pages" if len(table.pages) > 1 else ""
    named = table.caption or table.title
    caption = f" — {_short(named, 80)}" if named else ""
    caption += f" ({_short(table.units, 40)})" if table.units else ""
    head = (
        f"**{table.table_id}** ({_pages_of(table, labels)}, {table.n_rows} × {table.n_cols}{merged}){caption}"
    )
    grid = [[_short(c, CELL_CHARS) for c in row[:TABLE_COLS]] for row in table.grid()]
    shown = grid[: table.header_rows + TABLE_ROWS]
    heads = [_short(h, CELL_CHARS) for h in table.column_headers[:TABLE_COLS]]
    lines = [head, "", *table_markdown(shown, table.header_rows, heads)]
    hidden_rows = len(grid) - len(shown)
    hidden_cols = table.n_cols - TABLE_COLS
    more = [f"{hidden_rows} more rows"] * (hidden_rows > 0) + [f"{hidden_cols} more columns"] * (
        hidden_cols > 0
    )
    if more:
        lines += ["", f"_… {', '.join(more)}_"]
    return lines


def tables_markdown(tables: Sequence[Table], labels: Sequence[PageLabel]) -> str:
    """The first rows of each of the first ``MAX_TABLES`` tables."""
    if not tables:
        return "_No table found._"
    by_page = {lab.page_index: lab.label for lab in labels}
    lines: list[str] = []
    for table in tables[:MAX_TABLES]:
        lines += [*table_preview(table, by_page), ""]
    if len(tables) > MAX_TABLES:
        lines.append(f"_… and {len(tables) - MAX_TABLES} more tables (`SELECT * FROM tables`)._")
    return "\n".join(lines).rstrip()


def sections_markdown(result: ParagraphResult) -> str:
    """The section outline (first ``MAX_SECTIONS``) and the first paragraphs, with printed pages."""
    lines: list[str] = []
    if result.sections:
        depth = -1
        for s in result.sections[:MAX_SECTIONS]:
            # one step deeper than the previous item at most: Markdown reads a deeper indent as code
            depth = min(max(0, s.level - 1), depth + 1)
            lines.append(f"{'  ' * depth}- {_short(s.title, 100)} (p. {s.page_label})")
        if len(result.sections) > MAX_SECTIONS:
            lines.append(f"- _… {len(result.sections) - MAX_SECTIONS} more sections_")
    else:
        lines.append("_No section heading found._")
    body = [p for p in result.paragraphs if p.kind != "heading"][:MAX_PARAGRAPHS]
    if body:
        lines += ["", "First paragraphs:", ""]
        for p in body:
            lines.append(f"> {_short(p.text, PARAGRAPH_CHARS)} _(p. {p.page_label})_")
            lines.append(">")
        lines.pop()
    return "\n".join(lines)


def document_summary(
    doc: ExtractedDocument,
    labels: Sequence[PageLabel],
    tables: Sequence[Table],
    paragraphs: ParagraphResult,
    status: str,
    reason: str | None = None,
) -> str:
    """The document at a glance: status (and why when held back), pages and printed labels, OCR
    share, sections, the first paragraphs and the first rows of each table."""
    n_pages = doc.n_pages
    n_ocr = sum(1 for p in doc.pages if p.text_source == TextSource.OCR)
    merged = sum(1 for t in tables if len(t.pages) > 1)
    share = f" ({n_ocr / n_pages:.0%})" if n_pages else ""
    lines = [
        f"### {doc.source.file_name}",
        "",
        f"**{status}**" + (f": {_short(reason, 500)}" if reason and status != "parsed" else ""),
        "",
        "| pages | OCR'd pages | tables | paragraphs | sections |",
        "|---|---|---|---|---|",
        f"| {n_pages} | {n_ocr}{share} | {len(tables)}"
        + (f" ({merged} merged across pages)" if merged else "")
        + f" | {len(paragraphs.paragraphs)} | {len(paragraphs.sections)} |",
        "",
        f"Printed page labels: {label_runs(labels) or '—'}",
        "",
        f"`doc_id` {doc.source.doc_id}",
        "",
        "#### Sections",
        "",
        sections_markdown(paragraphs),
        "",
        "#### Tables",
        "",
        tables_markdown(tables, labels),
    ]
    return "\n".join(lines)
