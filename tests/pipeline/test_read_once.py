"""Each stage reads the stored PDF at most once, and only when it needs the file itself."""

from __future__ import annotations

import json
from pathlib import Path

import pymupdf
import pytest

from dagster_ocr import pipeline
from dagster_ocr.ingest import DocumentStore
from dagster_ocr.settings import Settings

NO_OCR = Settings.load(None, {"ocr": {"engine": "none"}})


def _extract(path: Path, tmp_path: Path):
    source = DocumentStore(tmp_path / "store").register(path)[0]
    return pipeline.extract_document(source, NO_OCR)


def test_labels_come_from_what_the_text_stage_recorded(corpus: Path, tmp_path: Path, monkeypatch) -> None:
    folder = corpus / "page_labels"
    truth = json.loads((folder / "expected_labels.json").read_text())
    name = next(n for n, t in truth.items() if any(not lab.isdigit() for lab in t["labels"]))
    doc = _extract(folder / name, tmp_path)
    assert doc.pdf_page_labels == truth[name]["labels"]

    def no_open(*_a, **_k):
        raise AssertionError("the label stage opened the file")

    monkeypatch.setattr(pymupdf, "open", no_open)
    labels = pipeline.document_labels(doc, NO_OCR)
    assert [lab.label for lab in labels] == truth[name]["labels"]


def test_an_image_only_document_is_not_opened_by_the_table_stage(
    corpus: Path, tmp_path: Path, monkeypatch
) -> None:
    doc = _extract(corpus / "ocr" / "tesseract" / "phototest-rotated-180.png", tmp_path)
    assert doc.ok and doc.text_layer_pages == 0

    def no_open(*_a, **_k):
        raise AssertionError("the table stage opened an image-only document")

    monkeypatch.setattr(pipeline, "reopen_document", no_open)
    assert pipeline.document_tables(doc, NO_OCR) == []


def test_the_table_stage_reopens_without_the_input_checks(corpus: Path, tmp_path: Path, monkeypatch) -> None:
    pdf = next(p for p in sorted((corpus / "tables").glob("**/*.pdf")) if "protected" not in p.name)
    doc = _extract(pdf, tmp_path)
    assert doc.text_layer_pages

    def no_checks(*_a, **_k):
        raise AssertionError("the hostile-input checks ran again")

    monkeypatch.setattr(pipeline, "open_document", no_checks)
    assert pipeline.document_tables(doc, NO_OCR) == pipeline.document_tables(doc, NO_OCR)


def test_a_stored_copy_that_vanished_is_a_clear_error(corpus: Path, tmp_path: Path) -> None:
    pdf = next(p for p in sorted((corpus / "tables").glob("**/*.pdf")) if "protected" not in p.name)
    doc = _extract(pdf, tmp_path)
    Path(doc.source.stored_path).unlink()
    with pytest.raises(Exception, match="cannot reopen the stored copy"):
        pipeline.document_tables(doc, NO_OCR)
