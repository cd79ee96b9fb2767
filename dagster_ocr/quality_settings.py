"""Thresholds and severities of the quality gate (``Settings.quality``); the gate itself is
:mod:`dagster_ocr.quality`."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Severity = Literal["ERROR", "WARN"]


class QualitySettings(BaseModel):
    """Thresholds and severities of the quality gate."""

    model_config = ConfigDict(extra="forbid")

    max_flagged_paragraph_share: float = Field(
        0.05,
        description="Largest share of paragraphs with text-encoding damage (mojibake, U+FFFD replacement "
        "characters) a document may have: a decoding error hits every paragraph that holds the characters "
        "concerned, so a few such paragraphs mean a document-wide defect.",
    )
    max_garbled_char_share: float = Field(
        0.02,
        ge=0,
        le=1,
        description="Largest share of a document's paragraph characters that may be glyphs without a "
        "Unicode mapping (control characters, private-use code points, unmapped glyphs). Math and symbol "
        "fonts print such glyphs in sound documents, a few in a formula line or a bullet, so they are "
        "judged by characters, not by the paragraphs they appear in: the corpus' sound documents reach "
        "0.0021 (a physics paper's formula lines, 14% of its paragraphs), a font with no mapping at all "
        "0.54 (bench/gate_garbled.py).",
    )
    min_ocr_confidence: float = Field(
        0.70,
        description="Lowest mean recognition confidence (0..1) over all OCR'd lines of a document.",
    )
    min_line_confidence: float = Field(
        0.50, description="An OCR'd line below this confidence (0..1) counts as a low-confidence line."
    )
    max_low_confidence_line_share: float = Field(
        0.20, description="Largest share of OCR'd lines below min_line_confidence (a WARN by default)."
    )
    min_text_chars: int = Field(
        1,
        description="A parsed document must yield at least this many characters of paragraph or table text.",
    )
    min_text_page_share: float = Field(
        0.0,
        ge=0,
        lt=1,
        description="A document must keep more than this share of its pages as text pages (text that "
        "is not a 'this page intentionally left blank' notice) (text_page_share). 0: any text page "
        "will do, so a duplex scan whose backs are blank, 60% of its pages or more, loads; a "
        "document of blank pages only is held back. Blank pages are never taken for damage by "
        "their number: a page counts as damaged only on evidence (its page object, content stream "
        "or what the stream draws lost in a repaired file: pages_have_content, "
        "content_streams_intact; severity_overrides {'pages_have_content': 'WARN', "
        "'content_streams_intact': 'WARN'} loads such files with a warning).",
    )
    max_furniture_char_share: float = Field(
        0.35,
        ge=0,
        le=1,
        description="Largest share of a document's text-layer characters that may go to page furniture "
        "(page numbers, running headers and footers) before text_conserved warns: body text taken "
        "for running headers shows as a large share (the corpus' largest is 0.25, a 77-character file).",
    )
    max_table_char_share: float = Field(
        1.0,
        ge=0,
        le=1,
        description="Largest share of the characters in table cells before text_conserved warns "
        "(1.0: reported only; a data sheet is all table).",
    )
    max_lost_char_share: float = Field(
        0.0,
        ge=0,
        le=1,
        description="Largest share of characters lost (in no paragraph, heading, cell or furniture line) "
        "before text_conserved warns (see text_conservation.lost_text for which).",
    )
    bbox_tolerance_pt: float = Field(
        1.0, description="How far (PDF points) a paragraph box may stick out of its page before it counts."
    )
    severity_overrides: dict[str, Severity] = Field(
        default_factory=dict,
        description="Per-expectation severity, e.g. {'paragraph_bbox_inside_page': 'ERROR'}; "
        "names as in quality_results.expectation. WARN never blocks the knowledge base.",
    )
