"""Pages between stages: a long document's pages wait on disk and every stage reads the same thing."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

from dagster_ocr import pipeline
from dagster_ocr.ingest import DocumentStore
from dagster_ocr.model import Line, Page, Span, TextSource, Words
from dagster_ocr.pagestore import PageList, decode_page, encode_page
from dagster_ocr.samples import build_service_agreement
from dagster_ocr.settings import Settings
from dagster_ocr.warehouse import CONTENT_TABLES, iter_document_rows


@pytest.fixture(scope="module")
def contract(tmp_path_factory):
    root = tmp_path_factory.mktemp("pagestore")
    pdf = root / "service_agreement.pdf"
    pdf.write_bytes(build_service_agreement(None)[0])
    return DocumentStore(root / "store").register(pdf)[0]


def _parse(source, keep: int) -> pipeline.ParsedDocument:
    return pipeline.parse(source, Settings.load(overrides={"limits": {"pages_in_memory": keep}}))


def test_a_page_survives_encoding_unchanged():
    span = Span("§ 3 — ¥ 1,200 €", (1.0, 2.0, 3.0, 4.0), "Helvetica-Bold", 9.5, True, False)
    page = Page(
        index=4,
        width=595.0,
        height=842.0,
        lines=[Line("§ 3 — ¥ 1,200 €", (1.0, 2.0, 3.0, 4.0), [span], 2, 0.97)],
        vertical_chars=(3, 0),
        text_source=TextSource.OCR,
        engine="rapidocr",
        ocr_confidence=0.91,
        decode_stats={"accepted": 3, "rate": 0.5, "missing": None},
    )
    back = decode_page(encode_page(page))
    assert back == page and back is not page
    assert isinstance(back.text_source, TextSource)
    # a text-layer page's packed words come back as they went in
    page.words = Words.pack([(1.0, 2.0, 3.5, 4.0, "§3"), (5.0, 2.0, 9.0, 4.0, "¥1,200")])
    back = decode_page(encode_page(page))
    assert back.words == page.words and list(back.words) == list(page.words)
    assert list(Words.pack([])) == [] and len(Words.pack([])) == 0
    # a value marshal cannot write (a numpy scalar from an OCR engine) still round-trips
    page.lines[0].confidence = np.float32(0.5)
    assert decode_page(encode_page(page)).lines[0].confidence == pytest.approx(0.5)


def test_a_page_stored_before_page_blank_reads_back_blank_from_its_reason():
    """An OCR checkpoint or a kept stage output of an earlier version: its head lacks ``blank``."""
    for reason, blank in (("blank page: ink 0.001%", True), ("no text layer (0 characters)", False)):
        page = Page(index=0, width=1.0, height=1.0, route_reason=reason, blank=blank)
        head, lines = pickle.loads(encode_page(page))
        older = pickle.dumps((head[:-1], lines))  # ``blank`` is the last field
        assert decode_page(older) == page
    with pytest.raises(ValueError, match="newer version"):
        decode_page(pickle.dumps(((*head, "x"), lines)))


def _pages(source, keep: int) -> PageList:
    settings = Settings.load(overrides={"limits": {"pages_in_memory": keep}})
    return pipeline.extract_document(source, settings).pages


def test_a_long_document_moves_to_disk_and_reads_back_the_same(contract):
    held, spilled = _pages(contract, keep=10_000), _pages(contract, keep=2)
    assert isinstance(held, PageList) and not held.on_disk
    assert spilled.on_disk and len(spilled) == len(held) == 8
    assert list(spilled) == list(held) and list(spilled) == list(held)  # iterated twice
    assert spilled[-1] == held[7] and spilled[2:5] == held[2:5]
    with pytest.raises(IndexError):
        spilled[8]
    # a page read back is a copy: changing it leaves the stored page as it was
    spilled[0].lines.clear()
    assert spilled[0] == held[0]


def test_pickling_streams_the_pages_and_restores_them_on_disk(contract):
    pages = _pages(contract, keep=2)
    back = pickle.loads(pickle.dumps(pages))
    assert back.on_disk and back == pages
    assert copy.deepcopy(pages) == pages
    small = PageList(list(pages)[:2], keep=5)
    back = pickle.loads(pickle.dumps(small))
    assert not back.on_disk and back == small


def test_every_stage_gives_the_same_result_from_pages_on_disk(contract):
    """Labels, tables, paragraphs (with furniture) and every warehouse row are identical whether
    the document's pages are held in memory or read back from disk one at a time."""
    held, spilled = _parse(contract, keep=10_000), _parse(contract, keep=0)
    assert spilled.document.pages.on_disk
    assert spilled.labels == held.labels
    assert spilled.tables == held.tables
    assert spilled.paragraphs == held.paragraphs
    assert any(kind == "header" for marks in spilled.paragraphs.furniture.values() for kind in marks.values())

    def rows(parsed: pipeline.ParsedDocument) -> dict:
        out: dict[str, list] = {t: [] for t in ("documents", *CONTENT_TABLES)}
        doc, labels, tables, paragraphs = parsed.document, parsed.labels, parsed.tables, parsed.paragraphs
        for table, batch in iter_document_rows(doc, labels, tables, paragraphs):
            out[table].extend(batch)
        for row in out["documents"]:
            row.pop("parsed_at")
        return out

    assert rows(spilled) == rows(held)
