"""Damaged input on real PDFs: a file MuPDF repaired, pages emptied by the damage, blank pages.

The damaged files are corpus PDFs with bytes cut out of their middle, as a truncated download or a
bad sector leaves them: MuPDF rebuilds the cross-reference table and opens them, and the pages
whose objects were in the cut come out empty. Nothing failed before; now the text stage records
the repair, each page's content and why an empty page is empty (``pages.blank_reason``: damaged
when its objects were lost, no ink or a left-blank notice when it is present and sound), and
``pages_complete`` quarantines a document with damaged pages by default, never one for the number
of its sound blank pages (issue 40).
"""

from __future__ import annotations

from pathlib import Path

import pymupdf
import pytest

from dagster_ocr.gate import judge_document
from dagster_ocr.ingest import DocumentStore
from dagster_ocr.model import DocStatus
from dagster_ocr.pipeline import parse
from dagster_ocr.quality import QualitySettings
from dagster_ocr.warehouse import Warehouse


def _cut(src: Path, dst: Path, keep_head: float, resume_at: float) -> Path:
    data = src.read_bytes()
    n = len(data)
    dst.write_bytes(data[: int(n * keep_head)] + data[int(n * resume_at) :])
    return dst


def _load(tmp_path: Path, pdf: Path, settings: QualitySettings | None = None):
    store = DocumentStore(tmp_path / "store")
    wh = Warehouse(tmp_path / "w.duckdb")
    src, _ = store.register(pdf)
    out = parse(src)
    wh.write_document(out.document, out.labels, out.tables, out.paragraphs)
    decision = judge_document(
        wh, src.doc_id, out.document.status, out.document.error, settings or QualitySettings()
    )
    return out, decision, wh, src.doc_id


def _failed(decision) -> set[str]:
    return {f"{r.suite}.{r.expectation}" for r in decision.results if not r.success}


def test_a_repaired_file_with_two_of_three_pages_emptied_is_quarantined(corpus, tmp_path):
    pdf = _cut(corpus / "tables/icdar2013/eu-022/eu-022.pdf", tmp_path / "eu-022-damaged.pdf", 0.2, 0.8)
    out, decision, wh, doc_id = _load(tmp_path, pdf)
    doc = out.document
    assert doc.status == DocStatus.PARSED and doc.n_pages == 3  # MuPDF opened it: no error anywhere
    assert doc.repaired and doc.page_content == {0: "blank", 1: "blank"}
    # the cut took the two page objects: by mechanism, damage (not two blank pages of three)
    assert doc.damaged_pages[0] == "its page object 3 is missing"
    assert doc.damaged_pages[1] == "its page object 17 is missing"
    # page 2 kept its text but not one of its images: damage, not emptiness
    assert doc.damaged_pages[2] == "it draws /R334, which the file no longer holds"
    assert doc.blank_reasons == {0: "damaged", 1: "damaged"}
    assert decision.status == DocStatus.QUARANTINED
    assert {"pages_complete.pages_have_content", "pages_complete.content_streams_intact"} <= _failed(decision)
    assert "observed 2 of 3: 0, 1" in decision.error
    row = wh.query("SELECT repaired FROM documents WHERE doc_id = ?", [doc_id])
    assert row.repaired.tolist() == [True]
    pages = wh.query("SELECT content, blank_reason FROM pages WHERE doc_id = ? ORDER BY page_index", [doc_id])
    assert pages.content.tolist() == ["blank", "blank", "text"]
    assert pages.blank_reason.tolist()[:2] == ["damaged", "damaged"] and pages.blank_reason.isna().tolist()[2]
    # the sound original passes
    _, ok, _, _ = _load(tmp_path / "sound", corpus / "tables/icdar2013/eu-022/eu-022.pdf")
    assert not _failed(ok) & {"pages_complete.pages_have_content", "pages_complete.text_page_share"}


def test_quarantine_of_damaged_files_is_configurable(corpus, tmp_path):
    pdf = _cut(corpus / "tables/icdar2013/eu-022/eu-022.pdf", tmp_path / "eu-022-damaged.pdf", 0.2, 0.8)
    relaxed = QualitySettings(
        severity_overrides={"pages_have_content": "WARN", "content_streams_intact": "WARN"}
    )
    _, decision, _, _ = _load(tmp_path, pdf, relaxed)
    assert decision.status == DocStatus.PARSED  # loaded, and the WARNs say why it is incomplete
    warned = [r for r in decision.results if not r.success]
    assert [(r.expectation, r.severity) for r in warned] == [
        ("pages_have_content", "WARN"),
        ("content_streams_intact", "WARN"),
    ]


def test_a_broken_content_stream_is_caught_with_or_without_text_left(corpus, tmp_path):
    pdf = _cut(corpus / "tables/icdar2013/us-006/us-006.pdf", tmp_path / "us-006-damaged.pdf", 0.3, 0.6)
    out, decision, wh, doc_id = _load(tmp_path, pdf)
    doc = out.document
    # page 1 kept 503 of its 3,644 characters (its Flate data breaks off); page 2's object is gone
    assert doc.repaired and set(doc.damaged_pages) == {1, 2}
    assert "does not decompress" in doc.damaged_pages[1] and "missing" in doc.damaged_pages[2]
    assert decision.status == DocStatus.QUARANTINED
    assert {"pages_complete.content_streams_intact", "pages_complete.pages_have_content"} <= _failed(decision)
    damage = wh.query(
        "SELECT page_index FROM pages WHERE doc_id = ? AND content_damage IS NOT NULL ORDER BY 1", [doc_id]
    )
    assert damage.page_index.tolist() == [1, 2]


def _with_blank_pages(src: Path, dst: Path, at: list[int]) -> Path:
    """The corpus PDF with empty pages inserted (a sound file: written by MuPDF, nothing repaired)."""
    with pymupdf.open(src) as doc:
        rect = doc[0].rect
        for index in sorted(at):
            doc.new_page(pno=index, width=rect.width, height=rect.height)
        doc.save(dst)
    return dst


def test_deliberately_blank_pages_pass_and_are_reported(corpus, tmp_path):
    # a 5-page document with a blank verso after its first page: 1 of 6 pages blank
    pdf = _with_blank_pages(corpus / "docling/multi_page/multi_page.pdf", tmp_path / "book.pdf", [1])
    out, decision, _, _ = _load(tmp_path, pdf)
    assert not out.document.repaired and out.document.page_content == {1: "blank"}
    assert out.document.blank_reasons == {1: "no ink"}
    assert decision.status == DocStatus.PARSED
    share = next(r for r in decision.results if r.expectation == "text_page_share")
    assert share.success and share.observed_value == "0.8333"  # 5 text pages of 6


def test_a_sound_file_mostly_blank_but_for_one_page_of_text_parses(corpus, tmp_path):
    # 2 blank pages of 3: present and sound, nothing lost (the old share rule held this back)
    pdf = _with_blank_pages(corpus / "page_labels/issue18823.pdf", tmp_path / "mostly_blank.pdf", [1, 1])
    out, decision, wh, doc_id = _load(tmp_path, pdf)
    assert not out.document.repaired and out.document.page_content == {1: "blank", 2: "blank"}
    assert out.document.damaged_pages == {} and out.document.blank_reasons == {1: "no ink", 2: "no ink"}
    assert decision.status == DocStatus.PARSED and not _failed(decision) & {
        "pages_complete.pages_have_content",
        "pages_complete.text_page_share",
    }
    pages = wh.query("SELECT blank_reason FROM pages WHERE doc_id = ? ORDER BY page_index", [doc_id])
    assert pages.blank_reason.tolist()[1:] == ["no ink", "no ink"]


def test_a_repaired_file_whose_blank_pages_are_sound_is_not_damaged(corpus, tmp_path):
    # a blank verso in a file MuPDF must repair (its xref offsets are off, no object is lost):
    # the repair is recorded, the blank page is empty, not damage
    sound = _with_blank_pages(corpus / "docling/multi_page/multi_page.pdf", tmp_path / "book.pdf", [1])
    data = pymupdf.open(sound).tobytes(garbage=0, no_new_id=True)
    head, sep, tail = data.partition(b"\nxref\n")
    assert sep
    lines = [
        b"%010d 00000 n " % (int(ln[:10]) + 7) if ln.endswith(b" n ") and ln[:10].isdigit() else ln
        for ln in tail.split(b"\n")
    ]
    (tmp_path / "offsets.pdf").write_bytes(head + sep + b"\n".join(lines))
    out, decision, _, _ = _load(tmp_path, tmp_path / "offsets.pdf")
    assert out.document.repaired and out.document.damaged_pages == {}
    assert out.document.blank_reasons == {1: "no ink"}
    assert decision.status == DocStatus.PARSED


def test_a_cut_scan_whose_images_were_lost_is_quarantined(tmp_path):
    # a scan cut in its middle: page objects, content streams, and the images that content streams
    # still draw are gone; every one of those pages is damage, not a blank back
    from support.scans import scanned_pdf

    data = scanned_pdf(["Page one text here"] * 3 + [None, "noisy"] + ["More text"] * 3, dpi=72)
    (tmp_path / "cut.pdf").write_bytes(data[: int(len(data) * 0.2)] + data[int(len(data) * 0.8) :])
    out, decision, _, _ = _load(tmp_path, tmp_path / "cut.pdf")
    doc = out.document
    assert doc.repaired and set(doc.blank_reasons.values()) == {"damaged"}
    assert "which the file no longer holds" in doc.damaged_pages[6]
    assert "page object" in doc.damaged_pages[1] and "content object" in doc.damaged_pages[0]
    assert decision.status == DocStatus.QUARANTINED


@pytest.mark.parametrize("rel", ["page_labels/colors.pdf", "page_labels/test_4423.pdf"])
def test_pages_of_drawings_or_images_are_content_not_emptiness(corpus, tmp_path, rel):
    out, decision, _, _ = _load(tmp_path, corpus / rel)
    assert set(out.document.page_content.values()) <= {"graphics", "image"}
    assert not _failed(decision) & {"pages_complete.pages_have_content", "pages_complete.text_page_share"}
