"""The quality gate's expectations: the suites, and one function per suite that lists its
expectations (what each validates, its severity, threshold and description).

``_specs`` gives them all, in ``SUITES`` order. Great Expectations costs 2-6 s to import, so
``_specs`` imports it on first use and hands it to each suite's function.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dagster_ocr.quality_settings import QualitySettings, Severity

#: the suites, in the order they are evaluated and shown; each becomes one asset check
SUITES: tuple[str, ...] = (
    "document_parsed",
    "pages_complete",
    "paragraphs_valid",
    "tables_valid",
    "ocr_confident",
    "text_conserved",
)

SUITE_DESCRIPTIONS: dict[str, str] = {
    "document_parsed": "The file could be opened and yields text.",
    "pages_complete": "One row per physical page, each with a page label: none emptied by damage, and "
    "some pages of text (blank pages that are present and sound are not damage).",
    "paragraphs_valid": "Paragraphs non-empty, ids unique, few garbled, boxes on their page.",
    "tables_valid": "Tables are rectangular and non-empty, with header text where a header was detected.",
    "ocr_confident": "Mean OCR confidence over the document's OCR'd lines is above threshold.",
    "text_conserved": "Where the text layer's characters went: shares in tables and page furniture (a "
    "warning when furniture takes an implausible share) and lost (in no paragraph, cell or furniture).",
}


@dataclass(frozen=True, slots=True)
class _Spec:
    suite: str
    name: str
    frame: str  # which prepared frame it validates
    severity: Severity
    description: str
    expectation: Callable[[QualitySettings], Any]  # -> a GX Expectation
    threshold: Callable[[QualitySettings], str]
    id_column: str | None = None  # names the offending rows in the observed value


def _document_parsed(gxe: Any) -> list[_Spec]:
    """``document_parsed``: the file could be read and yields text."""
    return [
        _Spec(
            "document_parsed",
            "document_opened",
            "document",
            "ERROR",
            "The document could be opened and read (status is not 'failed').",
            lambda s: gxe.ExpectColumnValuesToNotBeInSet(column="status", value_set=["failed"]),
            lambda s: "status != failed",
            "reason",
        ),
        _Spec(
            "document_parsed",
            "text_extracted",
            "document",
            "ERROR",
            "The document yields text (paragraph or table-cell characters).",
            lambda s: gxe.ExpectColumnValuesToBeBetween(column="n_chars", min_value=s.min_text_chars),
            lambda s: f">= {s.min_text_chars} chars",
            "n_chars",
        ),
    ]


def _pages_complete(gxe: Any) -> list[_Spec]:
    """``pages_complete``: one row per physical page, each with a page label; no page emptied by damage
    and some pages of text (see the module docstring of ``dagster_ocr.quality``)."""
    return [
        _Spec(
            "pages_complete",
            "page_rows_match_page_count",
            "pages",
            "ERROR",
            "Exactly one page row per physical page of the file.",
            lambda s: gxe.ExpectTableRowCountToEqual(value={"$PARAMETER": "n_pages"}),
            lambda s: "= n_pages",
        ),
        _Spec(
            "pages_complete",
            "page_indexes_unique",
            "pages",
            "ERROR",
            "No physical page appears twice.",
            lambda s: gxe.ExpectColumnValuesToBeUnique(column="page_index"),
            lambda s: "unique",
            "page_index",
        ),
        _Spec(
            "pages_complete",
            "page_indexes_in_range",
            "pages",
            "ERROR",
            "Every page index lies in 0 .. n_pages - 1.",
            lambda s: gxe.ExpectColumnValuesToBeBetween(
                column="page_index", min_value=0, max_value={"$PARAMETER": "max_page_index"}
            ),
            lambda s: "0 .. n_pages - 1",
            "page_index",
        ),
        _Spec(
            "pages_complete",
            "page_labels_present",
            "pages",
            "ERROR",
            "Every page carries a page label (citations name printed pages).",
            lambda s: gxe.ExpectColumnValuesToBeBetween(column="label_len", min_value=1),
            lambda s: "non-empty",
            "page_index",
        ),
        _Spec(
            "pages_complete",
            "pages_have_content",
            "pages",
            "ERROR",
            "No page is left without text by damage, in a document whose other pages have text: a "
            "page without text whose page object or content stream was lost, or whose images or "
            "fonts a repaired file no longer holds (pages.blank_reason 'damaged'). A blank page "
            "that is present and sound is empty, not damaged.",
            lambda s: gxe.ExpectColumnValuesToBeInSet(column="content_ok", value_set=[True]),
            lambda s: "0 pages emptied by damage",
            "page_index",
        ),
        _Spec(
            "pages_complete",
            "content_streams_intact",
            "pages",
            "ERROR",
            "No page's content stream is broken (its page object or a content object is missing, "
            "its data does not decompress, or in a repaired file what it draws is gone): such a "
            "page lost some or all of what it showed.",
            lambda s: gxe.ExpectColumnValuesToBeInSet(column="stream_ok", value_set=[True]),
            lambda s: "0 broken content streams",
            "page_index",
        ),
        _Spec(
            "pages_complete",
            "text_page_share",
            "pages",
            "ERROR",
            "Share of the document's pages that are text pages (text other than a 'this page "
            "intentionally left blank' notice); blank, image-only and drawing pages count against "
            "it, damage does not enter it (see pages_have_content).",
            lambda s: gxe.ExpectColumnMeanToBeBetween(
                column="text_page", min_value=s.min_text_page_share, strict_min=True
            ),
            lambda s: f"> {s.min_text_page_share}",
        ),
    ]


def _paragraphs_valid(gxe: Any) -> list[_Spec]:
    """``paragraphs_valid``: non-empty text, unique ids, few validation flags, boxes inside the page."""
    return [
        _Spec(
            "paragraphs_valid",
            "paragraphs_non_empty",
            "paragraphs",
            "ERROR",
            "No paragraph is empty or whitespace only.",
            lambda s: gxe.ExpectColumnValuesToBeBetween(column="text_len", min_value=1),
            lambda s: ">= 1 char",
            "paragraph_id",
        ),
        _Spec(
            "paragraphs_valid",
            "paragraph_ids_unique",
            "paragraphs",
            "ERROR",
            "Paragraph ids are unique within the document (citations point at one paragraph).",
            lambda s: gxe.ExpectColumnValuesToBeUnique(column="paragraph_id"),
            lambda s: "unique",
            "paragraph_id",
        ),
        _Spec(
            "paragraphs_valid",
            "flagged_paragraph_share",
            "paragraphs",
            "ERROR",
            "Share of paragraphs with text-encoding damage (mojibake, U+FFFD replacement characters).",
            lambda s: gxe.ExpectColumnMeanToBeBetween(
                column="flagged", max_value=s.max_flagged_paragraph_share
            ),
            lambda s: f"<= {s.max_flagged_paragraph_share}",
        ),
        _Spec(
            "paragraphs_valid",
            "garbled_char_share",
            "paragraphs",
            "ERROR",
            "Share of the paragraphs' characters that are glyphs without a Unicode mapping (control "
            "characters, private-use code points): a few in formulas or bullets are sound, a font with "
            "no mapping makes most of the text.",
            # the document's share, the same on every paragraph row: one suite, no frame of its own
            lambda s: gxe.ExpectColumnMaxToBeBetween(
                column="garbled_share", max_value=s.max_garbled_char_share
            ),
            lambda s: f"<= {s.max_garbled_char_share}",
        ),
        _Spec(
            "paragraphs_valid",
            "paragraph_bbox_inside_page",
            "paragraphs",
            "WARN",
            "Every paragraph box lies inside its page (within bbox_tolerance_pt).",
            lambda s: gxe.ExpectColumnValuesToBeInSet(column="bbox_inside", value_set=[True]),
            lambda s: f"inside ± {s.bbox_tolerance_pt} pt",
            "paragraph_id",
        ),
    ]


def _tables_valid(gxe: Any) -> list[_Spec]:
    """``tables_valid``: rectangular grids, no empty (merged) table, header text where a header was
    detected."""
    return [
        _Spec(
            "tables_valid",
            "tables_rectangular",
            "tables",
            "ERROR",
            "Every cell lies inside its table's n_rows x n_cols grid, one cell per position.",
            lambda s: gxe.ExpectColumnValuesToBeBetween(column="grid_violations", max_value=0),
            lambda s: "0 cells off-grid or doubled",
            "table_id",
        ),
        _Spec(
            "tables_valid",
            "tables_non_empty",
            "tables",
            "ERROR",
            "No table (merged across pages or not) is without text.",
            lambda s: gxe.ExpectColumnValuesToBeBetween(column="text_cells", min_value=1),
            lambda s: ">= 1 cell with text",
            "table_id",
        ),
        _Spec(
            "tables_valid",
            "table_headers_present",
            "tables",
            "WARN",
            "A table with detected header rows has text in its header.",
            lambda s: gxe.ExpectColumnValuesToBeInSet(column="header_ok", value_set=[True]),
            lambda s: "header text where header_rows > 0",
            "table_id",
        ),
    ]


def _ocr_confident(gxe: Any) -> list[_Spec]:
    """``ocr_confident``: OCR'd text is confident enough to be trusted."""
    return [
        _Spec(
            "ocr_confident",
            "ocr_mean_confidence",
            "ocr_lines",
            "ERROR",
            "Mean recognition confidence over every OCR'd line of the document.",
            lambda s: gxe.ExpectColumnMeanToBeBetween(column="confidence", min_value=s.min_ocr_confidence),
            lambda s: f">= {s.min_ocr_confidence}",
        ),
        _Spec(
            "ocr_confident",
            "ocr_low_confidence_lines",
            "ocr_lines",
            "WARN",
            "Share of OCR'd lines below min_line_confidence.",
            lambda s: gxe.ExpectColumnValuesToBeBetween(
                column="confidence",
                min_value=s.min_line_confidence,
                mostly=max(0.0, 1.0 - s.max_low_confidence_line_share),
            ),
            lambda s: f"<= {s.max_low_confidence_line_share} below {s.min_line_confidence}",
        ),
    ]


def _text_conserved(gxe: Any) -> list[_Spec]:
    """``text_conserved``: (WARN only) where the text layer's characters went: the shares in tables and
    furniture, and what was lost."""
    return [
        _Spec(
            "text_conserved",
            "furniture_char_share",
            "conservation",
            "WARN",
            "Share of the text layer's (or OCR output's) characters that went to page furniture.",
            lambda s: gxe.ExpectColumnValuesToBeBetween(
                column="furniture_share", max_value=s.max_furniture_char_share
            ),
            lambda s: f"<= {s.max_furniture_char_share}",
            "furniture_observed",
        ),
        _Spec(
            "text_conserved",
            "table_char_share",
            "conservation",
            "WARN",
            "Share of the characters that went to table cells.",
            lambda s: gxe.ExpectColumnValuesToBeBetween(
                column="table_share", max_value=s.max_table_char_share
            ),
            lambda s: f"<= {s.max_table_char_share}",
            "table_observed",
        ),
        _Spec(
            "text_conserved",
            "lost_char_share",
            "conservation",
            "WARN",
            "Share of the characters found in no paragraph, heading, table cell or furniture line.",
            lambda s: gxe.ExpectColumnValuesToBeBetween(column="lost_share", max_value=s.max_lost_char_share),
            lambda s: f"<= {s.max_lost_char_share}",
            "lost_observed",
        ),
    ]


def _specs() -> list[_Spec]:
    import great_expectations.expectations as gxe  # lazy: see module docstring

    return [
        *_document_parsed(gxe),
        *_pages_complete(gxe),
        *_paragraphs_valid(gxe),
        *_tables_valid(gxe),
        *_ocr_confident(gxe),
        *_text_conserved(gxe),
    ]
