"""A scan with blank backs is not a damaged file (issue 40).

Image-only scans made from real text pages (the corpus's docling multi_page.pdf rendered to
grayscale images at 72 dpi, so OCR is cheap), with blank backs as a duplex scanner leaves them:
empty pages, scans of white or grainy paper, and scans of "this page intentionally left blank".
Each goes through the text stage with rapidocr, the warehouse and the gate (default settings).
The cut and repaired files that must still be held back are in test_damaged_input.py.
"""

from __future__ import annotations

import copy
import hashlib
from pathlib import Path

import numpy as np
import pymupdf
import pytest
from support.scans import duplex_scan_pdf

from dagster_ocr.gate import judge_document
from dagster_ocr.ingest import DocumentStore
from dagster_ocr.model import DocStatus
from dagster_ocr.ocr.rapid import RapidOcrEngine
from dagster_ocr.ocr.settings import RapidOcrSettings
from dagster_ocr.pipeline import parse
from dagster_ocr.quality import QualitySettings
from dagster_ocr.warehouse import Warehouse

DPI = 72


class _ReadOnceEngine(RapidOcrEngine):
    """rapidocr with default settings, each distinct page image read once per module.

    The scans below repeat the same three rendered text pages (and the same notice): the first
    time the engine gets a page image it reads it, later the lines it read are returned again
    (rapidocr is deterministic on the same pixels). Every page still goes through the text
    stage, the blank-page decisions and the gate; recognition was 2/3 of this module's time."""

    def __init__(self, settings: RapidOcrSettings) -> None:
        super().__init__(settings)
        self._read: dict[tuple, list] = {}

    def recognize(self, image: np.ndarray) -> list:
        key = (image.shape, str(image.dtype), hashlib.sha256(np.ascontiguousarray(image).data).hexdigest())
        if key not in self._read:
            self._read[key] = super().recognize(image)
        return copy.deepcopy(self._read[key])


@pytest.fixture(scope="module")
def engine() -> RapidOcrEngine:
    return _ReadOnceEngine(settings=RapidOcrSettings())


@pytest.fixture(scope="module")
def text_pages(corpus: Path) -> list[bytes]:
    """Three real text pages, rendered: what a scanner makes of a printed report."""
    with pymupdf.open(corpus / "docling/multi_page/multi_page.pdf") as doc:
        return [doc[i].get_pixmap(dpi=DPI, colorspace=pymupdf.csGRAY).tobytes("png") for i in range(3)]


def _scan(path: Path, items: list[bytes | str | None]) -> Path:
    """Image-only pages (see ``support.scans.duplex_scan_pdf``), written to ``path``."""
    path.write_bytes(duplex_scan_pdf(items, DPI))
    return path


def _load(tmp_path: Path, pdf: Path, engine: RapidOcrEngine):
    store = DocumentStore(tmp_path / "store")
    wh = Warehouse(tmp_path / "w.duckdb")
    src, _ = store.register(pdf)
    out = parse(src, engine=engine)
    wh.write_document(out.document, out.labels, out.tables, out.paragraphs)
    decision = judge_document(wh, src.doc_id, out.document.status, out.document.error, QualitySettings())
    pages = wh.query(
        "SELECT page_index, text_source, content, blank_reason FROM pages WHERE doc_id = ? ORDER BY 1",
        [src.doc_id],
    )
    return out, decision, pages


def _result(decision, name: str):
    return next(r for r in decision.results if r.expectation == name)


def test_a_duplex_scan_60_percent_blank_parses(tmp_path, engine, text_pages):
    # 4 text pages, 6 blank backs (empty, white and grainy paper): 60% blank, 40% empty pages
    # (the share rule this replaces held back anything above 50% of pages with nothing drawn)
    t = text_pages
    items = [t[0], None, t[1], None, t[2], "white", t[0], None, "noisy", None]
    out, decision, pages = _load(tmp_path, _scan(tmp_path / "duplex.pdf", items), engine)
    doc = out.document
    assert not doc.repaired and doc.damaged_pages == {}
    assert doc.blank_reasons == {i: "no ink" for i in (1, 3, 5, 7, 8, 9)}
    assert decision.status == DocStatus.PARSED, decision.error
    assert _result(decision, "text_page_share").observed_value == "0.4"
    # the blank backs were not OCR'd, and the pages table says why each is empty
    blank = pages[pages.blank_reason.notna()]
    assert blank.page_index.tolist() == [1, 3, 5, 7, 8, 9]
    assert set(blank.text_source) == {"none"} and set(blank.blank_reason) == {"no ink"}
    assert pages[pages.blank_reason.isna()].text_source.tolist() == ["ocr"] * 4


def test_a_duplex_scan_with_left_blank_notices_parses(tmp_path, engine, text_pages):
    # 2 text pages of 5: the notices are OCR'd (they are ink) and recorded as empty by design
    t = text_pages
    items = [t[0], "notice", t[1], "notice", None]
    out, decision, pages = _load(tmp_path, _scan(tmp_path / "notices.pdf", items), engine)
    assert out.document.blank_reasons == {1: "left blank notice", 3: "left blank notice", 4: "no ink"}
    assert decision.status == DocStatus.PARSED, decision.error
    assert _result(decision, "text_page_share").observed_value == "0.4"
    notices = pages[pages.blank_reason == "left blank notice"]
    assert notices.text_source.tolist() == ["ocr", "ocr"] and set(notices.content) == {"text"}


def test_a_scan_with_every_other_page_blank_parses(tmp_path, engine, text_pages):
    t = text_pages
    items = [t[0], None, t[1], "noisy", t[2], None]
    out, decision, _ = _load(tmp_path, _scan(tmp_path / "alternate.pdf", items), engine)
    assert out.document.blank_reasons == {1: "no ink", 3: "no ink", 5: "no ink"}
    assert decision.status == DocStatus.PARSED, decision.error
    assert _result(decision, "text_page_share").observed_value == "0.5"


def test_a_document_of_blank_pages_only_is_held_back_as_no_text(tmp_path, engine):
    out, decision, pages = _load(tmp_path, _scan(tmp_path / "blank.pdf", [None, "white", "noisy"]), engine)
    assert out.document.blank_reasons == {0: "no ink", 1: "no ink", 2: "no ink"}
    assert decision.status == DocStatus.QUARANTINED
    assert decision.error == "document_parsed.text_extracted: observed 0 (expected >= 1 chars)"
    assert pages.blank_reason.tolist() == ["no ink"] * 3


def test_a_document_of_left_blank_notices_only_is_held_back(tmp_path, engine):
    out, decision, _ = _load(tmp_path, _scan(tmp_path / "notices.pdf", ["notice", "notice"]), engine)
    assert out.document.blank_reasons == {0: "left blank notice", 1: "left blank notice"}
    assert decision.status == DocStatus.QUARANTINED
    assert "pages_complete.text_page_share: observed 0.0 (expected > 0.0)" in decision.error
