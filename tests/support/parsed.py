"""A generated PyMuPDF document through every core stage, and where its characters went: what the
tests of generated layouts share (tables conservation, short forms, statement tables)."""

from __future__ import annotations

from pathlib import Path

import pymupdf

from dagster_ocr.conservation import DocumentAccount, account_text
from dagster_ocr.ingest import DocumentStore
from dagster_ocr.model import SourceDocument, Table
from dagster_ocr.pipeline import ParsedDocument, document_tables, extract_document, parse
from dagster_ocr.settings import Settings


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


def tables_of(path: Path) -> list[Table]:
    """The tables of the PDF at ``path`` (text and tables stages only, default settings)."""
    src = SourceDocument(
        doc_id="0" * 64,
        file_name=path.name,
        source_path=str(path),
        stored_path=str(path),
        size_bytes=path.stat().st_size,
        kind="pdf",
    )
    settings = Settings()
    return document_tables(extract_document(src, settings), settings)
