"""The Markdown previews the UI shows, on the sample contract run through every core stage."""

from __future__ import annotations

import pytest

from dagster_ocr import pipeline, preview
from dagster_ocr.ingest import DocumentStore
from dagster_ocr.samples import SAMPLE_FACTS, build_service_agreement
from dagster_ocr.settings import Settings


@pytest.fixture(scope="module")
def contract(tmp_path_factory) -> pipeline.ParsedDocument:
    root = tmp_path_factory.mktemp("preview")
    data, _ = build_service_agreement()
    path = root / SAMPLE_FACTS["file_name"]
    path.write_bytes(data)
    source, _ = DocumentStore(root / "store").register(path)
    settings = Settings.model_validate({"ocr": {"engine": "none"}})
    return pipeline.parse(source, settings)


def test_the_summary_says_what_was_extracted(contract: pipeline.ParsedDocument) -> None:
    out = contract
    text = preview.document_summary(out.document, out.labels, out.tables, out.paragraphs, "parsed")
    assert text.startswith(f"### {SAMPLE_FACTS['file_name']}\n\n**parsed**")
    n_tables = len(out.tables)
    assert f"| {SAMPLE_FACTS['n_pages']} | 0 (0%) | {n_tables} (1 merged across pages) |" in text
    assert "Printed page labels: " + ", ".join(SAMPLE_FACTS["labels"]) in text
    assert out.document.source.doc_id in text
    # the merged payment schedule: its pages by printed label, its size, its header and first rows
    table = SAMPLE_FACTS["table"]
    labels = SAMPLE_FACTS["labels"]
    merged = next(t for t in out.tables if len(t.pages) > 1)
    assert f"**{merged.table_id}** (pp. {labels[table['pages'][0]]}–{labels[table['pages'][-1]]}, " in text
    assert "| " + " | ".join(table["header"]) + " |" in text
    assert f"_… {merged.n_rows - merged.header_rows - preview.TABLE_ROWS} more rows_" in text
    # sections with their printed pages, and the first paragraphs
    first = out.paragraphs.sections[0]
    assert f"- {first.title[:99]}" in text and f"(p. {first.page_label})" in text
    assert "First paragraphs:" in text


def test_a_held_back_document_says_why_first(contract: pipeline.ParsedDocument) -> None:
    out = contract
    text = preview.document_summary(
        out.document, out.labels, out.tables, out.paragraphs, "quarantined", "paragraphs_valid.x: observed 1"
    )
    assert "**quarantined**: paragraphs_valid.x: observed 1" in text.splitlines()[2]


def test_previews_stay_short_whatever_the_document(contract: pipeline.ParsedDocument) -> None:
    out = contract
    many = out.tables * 40
    text = preview.tables_markdown(many, out.labels)
    assert text.count("**") == 2 * preview.MAX_TABLES and f"and {len(many) - preview.MAX_TABLES} more" in text
    assert preview.tables_markdown([], out.labels) == "_No table found._"
    labels = [out.labels[0]] * 500
    assert len(preview.label_runs(labels)) < 100
