"""Scans through the pipeline's text stage: routing to OCR, image documents, one engine load."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from support.text_metrics import cer

from dagster_ocr.ingest import DocumentStore
from dagster_ocr.model import TextSource
from dagster_ocr.ocr.rapid import RapidOcrEngine
from dagster_ocr.pipeline import extract_document
from dagster_ocr.settings import Settings


@pytest.fixture(scope="module")
def engine() -> RapidOcrEngine:
    return RapidOcrEngine()


def test_scans_and_images_are_read_with_one_engine_load(engine, corpus: Path, tmp_path, monkeypatch):
    builds: list[int] = []
    real_build = RapidOcrEngine._build

    def counting_build(self):
        builds.append(1)
        return real_build(self)

    monkeypatch.setattr(RapidOcrEngine, "_build", counting_build)
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    tif = corpus / "ocr" / "tesseract" / "phototest.tif"
    shutil.copy(tif, inbox / "phototest.tif")
    shutil.copy(corpus / "ocr" / "docling" / "ocr_test.pdf", inbox / "ocr_test.pdf")
    store = DocumentStore(tmp_path / "store")
    settings = Settings()
    settings.ocr.dpi = 100  # large print: reads exactly at 100 dpi, and keeps this test fast

    photo = extract_document(store.register(inbox / "phototest.tif")[0], settings, engine)
    assert photo.ok and len(photo.pages) == 1
    page = photo.pages[0]
    assert page.text_source == TextSource.OCR and page.engine == "rapidocr" and page.route_reason
    assert cer(tif.with_suffix(".txt").read_text("utf-8"), page.text) < 0.05, page.text

    scan = extract_document(store.register(inbox / "ocr_test.pdf")[0], settings, engine)
    assert scan.ok and scan.pages[0].text_source == TextSource.OCR
    ref = (corpus / "ocr" / "docling" / "groundtruth" / "ocr_test.tesseract.full_page.md").read_text("utf-8")
    assert cer(ref, scan.pages[0].text) < 0.02, scan.pages[0].text
    assert builds == [1]  # the models load once, for both documents and all their pages


def test_born_digital_page_keeps_its_text_layer(engine, corpus: Path, tmp_path):
    pdf = corpus / "docling" / "2305.03393v1-pg9" / "2305.03393v1-pg9.pdf"
    store = DocumentStore(tmp_path / "store")
    doc = extract_document(store.register(pdf)[0], Settings(), engine)
    assert doc.ok and all(p.text_source == TextSource.TEXT_LAYER for p in doc.pages)
