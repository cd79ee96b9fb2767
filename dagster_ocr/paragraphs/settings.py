"""``ParagraphSettings``: the tunables of paragraph and section reconstruction."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class ParagraphSettings(BaseModel):
    """Tunables of paragraph and section reconstruction. Distances are relative to font size."""

    model_config = ConfigDict(extra="forbid")

    gap_factor: float = Field(
        0.6,
        description="A vertical gap larger than the page's usual line gap plus this many line heights "
        "starts a new paragraph.",
    )
    indent_tolerance: float = Field(
        0.6, description="A change of left edge larger than this many font sizes counts as (out)indentation."
    )
    size_change: float = Field(
        0.12, description="A relative change of font size larger than this starts a new paragraph."
    )
    short_line_share: float = Field(
        0.15,
        description="A line ending a sentence this share of the column width (and at least "
        "`short_line_sizes` font sizes) short of the column's right edge ends its paragraph.",
    )
    short_line_sizes: float = Field(5.0, description="Minimum shortfall of a short line, in font sizes.")
    margin_zone: float = Field(
        0.12,
        description="Share of the page height at the top and at the bottom searched for headers/footers.",
    )
    edge_zone: float = Field(
        0.035,
        description="Share of the page height at the very top and bottom where a line set no larger "
        "than the body and apart from it is a stamp (furniture) even when it does not repeat.",
    )
    band_apart_pitches: float = Field(
        1.4,
        description="On a document too short for repetition, a margin-band line is a running head "
        "or foot only when its baseline is more than this many of the page's usual line pitches "
        "from the nearest body line: a heading or a first line that opens the body sits at the "
        "body's own spacing.",
    )
    repeat_min_pages: int = Field(
        3, description="A header/footer must recur (digits normalised) on at least this many pages."
    )
    repeat_min_share: float = Field(
        0.4, description="... and on at least this share of the document's pages."
    )
    furniture_max_share: float = Field(
        2 / 3,
        ge=0,
        le=1,
        description="Where running headers/footers and page-number lines would take more than this "
        "share (most) of a document's characters, they are its body (a form, a form letter, a short "
        "contract whose pages share their lines): the document keeps every line as body text. A "
        "page whose every line would be furniture keeps them as body in any document (bare page "
        "numbers aside).",
    )
    body_attach_gap: float = Field(
        1.0,
        description="A margin line this many line heights or less from the body block (through "
        "horizontally overlapping lines) is part of it: repeated there, it is body text, not a running "
        "header, when it is also body-shaped.",
    )
    body_line_min_words: int = Field(
        5,
        description="Words a margin line needs to be body-shaped (with `body_line_min_share` or "
        "punctuation).",
    )
    body_line_min_share: float = Field(
        0.6,
        description="... and this share of the width of the page's body block, unless it ends in "
        "punctuation (. ! ? ; : ,).",
    )
    row_join_gap: float = Field(
        3.0,
        description="Fragments of one text-layer block on one visual line are merged when the "
        "horizontal gap is below this many font sizes.",
    )
    row_join_gap_ocr: float = Field(
        0.8, description="The same for lines without a block number (OCR), which may be adjacent columns."
    )
    column_min_gap: float = Field(6.0, description="Narrowest white channel between columns, in points.")
    column_min_rows: int = Field(
        3, description="A column needs at least this many text rows (of `column_min_chars`) on each side."
    )
    column_min_chars: int = Field(
        20,
        description="Characters a row needs to count as column text; a row of four words counts too "
        "(a narrow column's line).",
    )
    band_min_gap: float = Field(
        2.0,
        description="A white band through every column at least this many median row heights tall "
        "splits columned text into bands read one after the other (a grid of blocks), unless a "
        "column's sentence runs through it.",
    )
    column_max_share: float = Field(
        0.6, description="Rows wider than this share of the text width are never column rows."
    )
    stream_order: bool = Field(
        True,
        description="Read a text-layer page in its content-stream order where that order is a plausible "
        "reading: each next row of the body goes down its column, starts a column to the right and "
        "higher, or is a full-width row below all read so far; asides set in another type (a sidebar, "
        "a pull quote, a boxed note, a caption) are read where the stream puts them. Off, or where the "
        "stream is implausible or rows are printed over each other, the geometric layout analysis "
        "decides (columns.py).",
    )
    table_overlap: float = Field(
        0.5, description="A line whose area lies this much inside a table region belongs to the table."
    )
    prose_table_share: float = Field(
        0.75,
        description="A table of at most `prose_table_max_cols` columns whose non-empty cells are this "
        "share sentence-length (25+ characters, 4+ words) is taken for columns of prose: its text stays in "
        "the paragraphs.",
    )
    prose_table_max_cols: int = Field(3, description="Widest table the prose test applies to.")
    drop_cap_ratio: float = Field(
        1.8, description="A lone letter this many times the body size, beside the first lines, is a drop cap."
    )
    heading_max_chars: int = Field(120, description="Longest text a heading may have.")
    heading_max_rows: int = Field(3, description="Most rows a heading may span.")
    heading_min_confidence: float = Field(
        0.8,
        description="An OCR'd line read with less confidence than this is never a heading (a "
        "signature or a stamp OCR'd as large letters is not a section title).",
    )
    heading_size_ratio: float = Field(
        1.12, description="A paragraph set this much larger than the body median size is a heading candidate."
    )
