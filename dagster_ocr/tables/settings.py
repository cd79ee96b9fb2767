"""What table extraction may be tuned by (``TableSettings``) and the caption words it reads."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Finder = Literal["auto", "stream", "layout", "lines", "text", "layout_text"]

#: a table's caption line ("Table 3", "TABLE A-2.", "表 1"); not a sentence that a line break left
#: starting with the lower-case word ("The following" / "table provides a summary of ...")
_CAPTION_RE = re.compile(r"^\s*(?!(?-i:table|tab\.)\s+(?-i:[a-z]))(table|tab\.|表|续表)\s*", re.IGNORECASE)

_CONTINUED_RE = re.compile(
    r"(continued|cont['’]?d\.?|\(cont\.?\)|—\s*cont|续表|續表|\bsuite\b|fortsetzung)", re.IGNORECASE
)


class TableSettings(BaseModel):
    """Tunables of table extraction and cross-page merging."""

    model_config = ConfigDict(extra="forbid")

    finder: Finder = Field(
        "auto",
        description=(
            "How tables are found: 'auto' = ruled tables from PyMuPDF's line finder (use_layout=False), "
            "then the text-alignment ('stream') finder on the rest of the page; 'stream' = text "
            "alignment only; 'layout' = PyMuPDF's ML layout model (find_tables default), 'lines' = "
            "the classic ruling-line finder, 'text' = PyMuPDF's text strategy, 'layout_text' = layout "
            "regions re-read with PyMuPDF's text strategy. bench/tables_icdar.py has the measurements."
        ),
    )
    layout_veto: bool = Field(
        False,
        description=(
            "Ask a learned layout model (PyMuPDF's pymupdf.layout, weights in the wheel) for a second "
            "opinion on the 'auto' finder's text-aligned tables: one whose words the model puts in prose "
            "or figure regions and not in a table region is dropped (tables/opinion.py). Ruled tables and "
            "right-to-left tables are never vetoed; the model runs only on upright text-layer pages with "
            "a text-aligned table, ~0.13 CPU s each. Off by default: BENCHMARKS.md has the measurements."
        ),
    )
    layout_veto_table_share: float = Field(
        0.1,
        ge=0.0,
        le=1.0,
        description="layout_veto: most share of a text-aligned table's words the model may put "
        "in a table region for the table to be vetoed.",
    )
    layout_veto_prose_share: float = Field(
        0.3,
        ge=0.0,
        le=1.0,
        description="layout_veto: least share of a text-aligned table's words the model must "
        "put in prose, list, heading, caption or figure regions for the table to be vetoed.",
    )
    chunk_gap: float = Field(
        0.5,
        description="A horizontal gap wider than this many line heights cuts a text line into separate "
        "cells (an inter-word space is about 0.2 line heights).",
    )
    min_col_gap: float = Field(
        0.35,
        description="Minimum width of a column gutter, in median line heights of the table. A narrower "
        "run is a gutter where two lines or more set a currency sign before a figure at its right end, "
        "a figure ending less than this before it on one of them (a statement's '$' column a few "
        "points after the column before).",
    )
    span_tolerance: float = Field(
        0.12,
        description="Share of a table's lines that may cross a gutter (spanning header cells, "
        "overflowing text) without erasing that column boundary.",
    )
    max_row_gap: float = Field(
        2.2, description="A vertical gap above this many line heights ends a text-aligned table."
    )
    max_section_gap: float = Field(
        5.0,
        description="A text-aligned table goes on over a wider gap than max_row_gap, up to this many "
        "line heights, when the row after it (or after a section's label) is a data row set in the "
        "table's columns: the space a table sets above a section of its body.",
    )
    max_bridge_lines: int = Field(
        3,
        description="How many consecutive single-cell lines (stub-only rows) a text-aligned table may hold; "
        "a line that goes on with the row label above it (at the stub, close below, starting in lower case: "
        "a label wrapped over lines) is no such line.",
    )
    merge_wrapped: bool = Field(
        True,
        description="Join a line into the row above when it fills none of the key columns and only "
        "columns that row fills (a cell wrapped onto a second line), or when that row holds a label alone "
        "and the line's label reads on from it in lower case (a row label wrapped over lines, the row's "
        "figures on its last line).",
    )
    key_column_fill: float = Field(
        0.7, description="A column filled in at least this share of body lines is a key column."
    )
    wrap_gap: float = Field(
        0.35, description="Max vertical gap (line heights) between a wrapped line and the line above."
    )
    min_stream_rows: int = Field(
        3,
        description="Minimum rows of a table found by text alignment alone (two aligned lines are "
        "as often a definition list or a signature block as a table).",
    )
    max_median_words: float = Field(
        5.0,
        description="A text-aligned table whose median filled cell holds at least this many words is "
        "prose set in columns (two-column pages, footnotes), not a table.",
    )
    line_number_share: float = Field(
        0.8,
        description="A text-aligned part whose first or last column numbers at least this share of its "
        "rows with a steady sequence (1, 2, 3 ... or 5, 10, 15), beside a column of prose, is running "
        "text with margin line numbers (a transcript), not a table (tables/prose.py).",
    )
    prose_max_numeric_share: float = Field(
        0.1,
        description="Gapped right-to-left prose: at most this share of a part's cells hold a digit.",
    )
    prose_max_gutter: float = Field(
        1.5,
        description="Gapped right-to-left prose: its median gutter is narrower than this many line "
        "heights (a word gap, where a table's gutters are wide).",
    )
    wrapped_share: float = Field(
        0.7,
        description="Prose in narrow columns: a text-aligned part of words whose every column has at "
        "least this share of its lines wrapping like prose (the next line's first word would not have "
        "fitted at the line's end) is running text, not a table (tables/prose.py).",
    )
    suspicious_ratio: float = Field(
        1.8,
        description="A cell whose height exceeds this multiple of its row's median cell height, or a "
        "body cell spanning columns, is flagged suspicious (possible merged cell).",
    )
    refine: bool = Field(
        False,
        description="Pass refine=True to find_tables (PyMuPDF splits rows/columns the grid merged, "
        "rebuilds spans and header rows); applies to the 'layout' and 'lines' finders.",
    )
    min_rows: int = Field(2, description="Drop detected tables with fewer rows than this.")
    min_cols: int = Field(2, description="Drop detected tables with fewer columns than this.")
    min_filled_ratio: float = Field(
        0.15, description="Drop tables whose share of non-empty cells is below this (text-finder noise)."
    )
    merge: bool = Field(True, description="Join tables that continue on the next page.")
    fold_sign_columns: bool = Field(
        True,
        description="Fold columns that hold only '$', '%' or ')' signs, and empty spacer columns, into "
        "the figure they belong to, so a cell reads '$ 391,035' as printed and a row has one cell "
        "per period (tables/statement.py).",
    )
    ocr_pages: bool = Field(
        True,
        description="Look for ruled tables on OCR'd pages too (finder 'auto'): the rules are found in "
        "the page's image and the cells filled from the OCR lines (tables/scanned.py). Text-aligned "
        "tables are looked for on text-layer pages only.",
    )
    caption_max_gap: float = Field(
        40.0, description="Max vertical distance (pt) between a 'Table ...' caption line and the table top."
    )
    margin_fraction: float = Field(
        0.07,
        description="Top/bottom page bands (share of page height) whose lines count as furniture "
        "(running headers, page numbers) when judging what lies between two table parts.",
    )
    max_gap_lines: int = Field(
        3, description="Max non-furniture lines allowed between a table and the page edge for a merge."
    )
    max_gap_line_chars: int = Field(
        60,
        description="Lines longer than this between two parts count as body text and block a merge "
        "(a line printed at the same height with the same words on the other page, a running legend, "
        "does not count at all).",
    )
    continued_relax_factor: int = Field(
        2, description="With a 'continued' caption, the gap limits above are multiplied by this."
    )
    col_tolerance: float = Field(
        0.04,
        description="Max difference of column boundaries, as a share of table width, for two parts "
        "to count as the same column layout.",
    )
    col_map_share: float = Field(
        0.6,
        description="Where a continuation's column layout differs (a wider last column, a column "
        "split in two, a totals page), the share of each of its columns' width that must lie inside "
        "one column of the part it continues for the two to be joined by x-extents (measured from "
        "the tables' left edges first where the page moved them: mirrored margins).",
    )
    header_scan_rows: int = Field(
        6, description="How many leading rows may form a (multi-line) header repeated on a continuation."
    )
    header_match_ratio: float = Field(
        0.6, description="Share of equal header cells for a continuation's first row(s) to be a repeat."
    )
    merge_columns: bool = Field(
        True,
        description="Join a wide table whose columns continue on the next page for the same rows "
        "(stub column repeated row for row, plus a 'continued' marker or the same caption).",
    )
    stub_match_ratio: float = Field(
        0.9,
        description="Share of each part's labelled rows whose stub (first-column text) must match the "
        "other part's stubs, in order, for two parts to count as the same rows.",
    )
    min_stub_rows: int = Field(
        3, description="Fewest matched stub rows (and distinct stub texts) for a column continuation."
    )
    stub_resync: int = Field(
        3, description="How many rows the stub alignment may skip on either side to find the next match."
    )
