"""A generated PyMuPDF document through every core stage, and where its characters went: what the
tests of generated layouts share (tables conservation, short forms)."""

from __future__ import annotations

from pathlib import Path

import pymupdf

from dagster_ocr.conservation import DocumentAccount, account_text
from dagster_ocr.ingest import DocumentStore
from dagster_ocr.pipeline import ParsedDocument, parse


def parsed(doc: pymupdf.Document, tmp_path: Path, name: str = "doc.pdf") -> ParsedDocument:
    """``doc`` saved under ``tmp_path``, registered and parsed (asserting it parsed)."""
    path = tmp_path / name
    doc.save(path)
    src, _ = DocumentStore(tmp_path / "store").register(path)
    out = parse(src)
    assert out.document.ok, out.document.error
    return out


def account(doc: ParsedDocument) -> DocumentAccount:
    """The document's text conservation over all its pages."""
    return DocumentAccount.of(account_text(doc.document.pages, doc.paragraphs, doc.tables))
