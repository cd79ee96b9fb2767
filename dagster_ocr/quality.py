"""Quality expectations that gate the knowledge-base load, evaluated per document.

Expectations run on the rows the warehouse holds (what analysts will see), read back as pandas
DataFrames. Each result says what was expected, what was observed and whether it blocks (ERROR)
or only warns (WARN).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Literal

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field

Severity = Literal["ERROR", "WARN"]


class QualitySettings(BaseModel):
    """Thresholds of the quality gate."""

    model_config = ConfigDict(extra="forbid")

    max_flagged_paragraph_share: float = Field(
        0.05,
        description="Largest share of paragraphs with validation flags (garbled text) a document may have.",
    )
    min_ocr_confidence: float = Field(
        0.70, description="Lowest mean OCR confidence accepted over a document's OCR'd pages."
    )
    min_text_chars: int = Field(
        1,
        description="A parsed document must yield at least this many characters of paragraph or table text.",
    )


@dataclass(slots=True)
class ExpectationResult:
    expectation: str
    severity: Severity
    success: bool
    observed_value: str
    threshold: str
    description: str

    def as_row(self) -> dict[str, object]:
        return asdict(self)


def evaluate_document(
    document: pd.Series,
    pages: pd.DataFrame,
    paragraphs: pd.DataFrame,
    tables: pd.DataFrame,
    cells: pd.DataFrame,
    settings: QualitySettings | None = None,
) -> list[ExpectationResult]:
    """Every expectation for one document's rows."""
    s = settings or QualitySettings()
    out: list[ExpectationResult] = []

    def expect(
        name: str, severity: Severity, ok: bool, observed: object, threshold: object, why: str
    ) -> None:
        out.append(ExpectationResult(name, severity, bool(ok), str(observed), str(threshold), why))

    failed = document["status"] == "failed"
    expect(
        "document_parsed",
        "ERROR",
        not failed,
        document["error"] if failed else "parsed",
        "not failed",
        "The document could be opened and read.",
    )
    if failed:
        return out

    n_pages = int(document["n_pages"] or 0)
    indexes = sorted(pages["page_index"].tolist())
    expect(
        "pages_complete",
        "ERROR",
        indexes == list(range(n_pages)),
        f"{len(indexes)} of {n_pages}",
        "one row per physical page",
        "Every physical page has exactly one row.",
    )
    missing_labels = int((pages["page_label"].fillna("") == "").sum())
    expect(
        "page_labels_present",
        "ERROR",
        missing_labels == 0,
        missing_labels,
        0,
        "Every page carries a page label.",
    )

    n_chars = int(paragraphs["text"].str.len().sum() if len(paragraphs) else 0)
    n_chars += int(cells["text"].fillna("").str.len().sum() if len(cells) else 0)
    expect(
        "text_extracted",
        "ERROR",
        n_chars >= s.min_text_chars,
        n_chars,
        s.min_text_chars,
        "The document yields text (paragraphs or table cells).",
    )

    if len(paragraphs):
        flagged = paragraphs["flags"].apply(lambda f: f is not None and len(f) > 0).mean()
        expect(
            "paragraphs_valid",
            "ERROR",
            flagged <= s.max_flagged_paragraph_share,
            round(float(flagged), 4),
            s.max_flagged_paragraph_share,
            "Share of paragraphs with garbled text (validation flags).",
        )
        dupes = int(paragraphs["paragraph_id"].duplicated().sum())
        expect("paragraph_ids_unique", "ERROR", dupes == 0, dupes, 0, "Paragraph ids are unique.")
        empty = int((paragraphs["text"].str.strip() == "").sum())
        expect("paragraphs_non_empty", "ERROR", empty == 0, empty, 0, "No paragraph is empty.")
        merged = paragraphs.merge(pages[["page_index", "width", "height"]], on="page_index", how="left")
        tol = 1.0
        outside = int(
            (
                (merged.x0 < -tol)
                | (merged.y0 < -tol)
                | (merged.x1 > merged.width + tol)
                | (merged.y1 > merged.height + tol)
            ).sum()
        )
        expect(
            "paragraph_bbox_inside_page",
            "WARN",
            outside == 0,
            outside,
            0,
            "Paragraph boxes lie inside their page.",
        )

    ocr = pages[pages["text_source"] == "ocr"]
    if len(ocr):
        conf = float(ocr["ocr_confidence"].fillna(0).mean())
        expect(
            "ocr_confidence",
            "ERROR",
            conf >= s.min_ocr_confidence,
            round(conf, 4),
            s.min_ocr_confidence,
            "Mean OCR confidence over OCR'd pages.",
        )

    if len(tables):
        empty_tables = int((tables["n_rows"] * tables["n_cols"] == 0).sum())
        expect("tables_non_empty", "ERROR", empty_tables == 0, empty_tables, 0, "No table is empty.")
        if len(cells):
            outside = cells.merge(tables[["table_id", "n_rows", "n_cols"]], on="table_id")
            bad = int(((outside.row_idx >= outside.n_rows) | (outside.col_idx >= outside.n_cols)).sum())
        else:
            bad = 0
        expect("tables_rectangular", "WARN", bad == 0, bad, 0, "Every cell lies inside its table's grid.")
    return out


def blocking_failures(results: list[ExpectationResult]) -> list[ExpectationResult]:
    return [r for r in results if not r.success and r.severity == "ERROR"]
