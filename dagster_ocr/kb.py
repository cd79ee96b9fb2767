"""The knowledge base: searchable chunks, each citing the printed page it came from.

Chunks are built from the warehouse rows of a document that passed the quality gate: one chunk
per paragraph run inside a section (up to ``max_chars``) and one per table (its header with each
block of rows), so a hit can always be cited as "file, p. <label>, <section>".
"""

from __future__ import annotations

import re
from typing import Any

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field


class KbSettings(BaseModel):
    """Knowledge-base chunking."""

    model_config = ConfigDict(extra="forbid")

    max_chars: int = Field(1200, description="Largest chunk of paragraph text, in characters.")
    table_rows_per_chunk: int = Field(20, description="Table rows per chunk (the header repeats in each).")


def _citation(file_name: str, first: str, last: str, section: str | None) -> str:
    pages = f"p. {first}" if first == last else f"pp. {first}–{last}"
    return f"{file_name}, {pages}" + (f", {section}" if section else "")


def build_chunks(
    file_name: str,
    paragraphs: pd.DataFrame,
    sections: pd.DataFrame,
    tables: pd.DataFrame,
    cells: pd.DataFrame,
    page_labels: dict[int, str],
    settings: KbSettings | None = None,
) -> list[dict[str, Any]]:
    """Chunks for one document, from its warehouse rows."""
    s = settings or KbSettings()
    titles = dict(zip(sections["section_id"], sections["title"], strict=False)) if len(sections) else {}
    label = lambda i: page_labels.get(int(i), str(int(i) + 1))  # noqa: E731
    chunks: list[dict[str, Any]] = []

    def emit(kind: str, source_id: str, section_id: str | None, first: int, last: int, text: str) -> None:
        title = titles.get(section_id) if section_id else None
        chunks.append(
            {
                "chunk_id": f"c{len(chunks)}",
                "source_kind": kind,
                "source_id": source_id,
                "section_id": section_id,
                "section_title": title,
                "page_index": first,
                "page_label": label(first),
                "last_page_index": last,
                "last_page_label": label(last),
                "text": text,
                "citation": _citation(file_name, label(first), label(last), title),
            }
        )

    if len(paragraphs):
        body = paragraphs[paragraphs["kind"] != "heading"].sort_values("reading_order")
        run: list[pd.Series] = []

        def flush() -> None:
            if run:
                text = "\n".join(r.text for r in run)
                last = max(int(r.last_page_index) for r in run)
                emit("paragraph", run[0].paragraph_id, run[0].section_id, int(run[0].page_index), last, text)
                run.clear()

        for row in body.itertuples():
            size = sum(len(r.text) + 1 for r in run)
            if run and (row.section_id != run[0].section_id or size + len(row.text) > s.max_chars):
                flush()
            run.append(row)
        flush()

    for t in tables.itertuples() if len(tables) else []:
        tc = cells[cells["table_id"] == t.table_id]
        grid = [["" for _ in range(int(t.n_cols))] for _ in range(int(t.n_rows))]
        row_page: dict[int, int] = {}
        for c in tc.itertuples():
            if c.row_idx < t.n_rows and c.col_idx < t.n_cols:
                grid[c.row_idx][c.col_idx] = re.sub(r"\s+", " ", c.text or "").strip()
                row_page.setdefault(c.row_idx, int(c.page_index))
        header_n = int(t.header_rows or 0)
        header = [" | ".join(r) for r in grid[:header_n]]
        body_rows = list(range(header_n, len(grid))) or [0]
        for start in range(0, len(body_rows), s.table_rows_per_chunk):
            block = body_rows[start : start + s.table_rows_per_chunk]
            lines = ([t.caption] if t.caption else []) + header + [" | ".join(grid[i]) for i in block if grid]
            first = row_page.get(block[0], int(t.first_page_index))
            last = row_page.get(block[-1], int(t.last_page_index))
            emit("table", t.table_id, None, first, last, "\n".join(lines))
    return chunks
