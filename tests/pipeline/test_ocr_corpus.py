"""Scans through the pipeline's text stage: routing to OCR, image documents, one engine load, and
no scan taken for a blank page."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pymupdf
import pytest
from support.text_metrics import cer

from dagster_ocr.ingest import DocumentStore
from dagster_ocr.limits import LimitSettings
from dagster_ocr.model import TextSource
from dagster_ocr.ocr.rapid import RapidOcrEngine
from dagster_ocr.ocr.settings import RapidOcrSettings
from dagster_ocr.pipeline import extract_document
from dagster_ocr.settings import Settings
from dagster_ocr.textlayer import TextSettings, blank_page_reason, open_document


@pytest.fixture(scope="module")
def engine() -> RapidOcrEngine:
    return RapidOcrEngine(settings=RapidOcrSettings())


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


def _scans(corpus: Path) -> list[Path]:
    return sorted(
        [
            *corpus.glob("ocr/**/*.tif"),
            *corpus.glob("ocr/**/*.png"),
            *corpus.glob("ocr/**/*.pdf"),
            *corpus.glob("tables/unstructured/**/*.pdf"),
            corpus / "olmocr_bench/pdfs/lincoln_letter.pdf",  # faded handwriting
        ]
    )


def _faded(page: pymupdf.Page, contrast: float) -> pymupdf.Page:
    """``page`` as a scan whose ink is ``contrast`` times as dark (0.15: black print becomes gray 217)."""
    pix = page.get_pixmap(dpi=150, colorspace=pymupdf.csGRAY)
    gray = np.frombuffer(pix.samples, np.uint8).reshape(pix.height, pix.stride)[:, : pix.width]
    faded = np.ascontiguousarray((255 - (255 - gray.astype(float)) * contrast).astype(np.uint8))
    image = pymupdf.Pixmap(pymupdf.csGRAY, pix.width, pix.height, faded.tobytes(), False)
    out = pymupdf.open()
    new = out.new_page(width=page.rect.width, height=page.rect.height)
    new.insert_image(new.rect, stream=image.tobytes("png"))
    return pymupdf.open("pdf", out.tobytes())[0]


def test_no_corpus_scan_is_taken_for_blank_even_faded(corpus: Path, tmp_path: Path):
    # every scan of the corpus as it is, and faded to 15% of its contrast (print at gray 217 on
    # white, fainter than any scan worth reading): all have ink, none would skip OCR
    store = DocumentStore(tmp_path / "store")
    settings = TextSettings()
    seen = 0
    for path in _scans(corpus):
        with open_document(store.register(path)[0], limits=LimitSettings()) as doc:
            for page in doc:
                seen += 1
                assert blank_page_reason(page, settings) is None, (path.name, page.number)
                faded = _faded(page, 0.15)
                assert blank_page_reason(faded, settings) is None, (path.name, page.number, "faded")
    assert seen >= 12


def test_multi_column_scan_paragraphs_keep_the_column_order(engine, corpus: Path, tmp_path):
    # a magazine page in columns with a picture caption between them: the paragraph stage keeps
    # the OCR stage's column-aware order (it read the rows across the columns before: CER 0.43)
    from dagster_ocr.pipeline import document_labels, document_paragraphs

    tif = corpus / "ocr" / "tesseract" / "8087_054.3B.tif"
    store = DocumentStore(tmp_path / "store")
    settings = Settings()
    doc = extract_document(store.register(tif)[0], settings, engine)
    assert doc.ok
    paras = document_paragraphs(doc, document_labels(doc, settings), [], settings)
    text = "\n".join(p.text for p in paras.paragraphs)
    assert cer(tif.with_suffix(".txt").read_text("utf-8"), text) < 0.1
