"""Hostile and broken inputs through the core: each ends with a recorded status and reason.

Every case goes through ``pipeline.parse`` and ``Warehouse.write_document`` in one warehouse,
the way a run would; the test then checks the recorded outcome, that nothing escaped the
configured folders, and that the sound documents' rows are what they would be on their own.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import hostile
import numpy as np
import pytest

from dagster_ocr.budget import DocumentBudget
from dagster_ocr.errors import OverLimitError
from dagster_ocr.ingest import DocumentStore, ingest_inbox
from dagster_ocr.model import DocStatus
from dagster_ocr.ocr.base import OcrEngineBase, OcrLine
from dagster_ocr.pipeline import extract_document, parse
from dagster_ocr.settings import Settings
from dagster_ocr.textlayer import LimitSettings, TimedOcrEngine, clean_text
from dagster_ocr.warehouse import Warehouse

CODES = {"empty_file", "corrupt", "encrypted", "unsupported_type", "over_limit"}


def _run(inbox: Path, root: Path, settings: Settings | None = None) -> tuple[Warehouse, float]:
    store = DocumentStore(root / "store")
    wh = Warehouse(root / "warehouse.duckdb")
    start = time.perf_counter()
    for record, _ in ingest_inbox(inbox, store):
        parsed = parse(record, settings)
        wh.write_document(parsed.document, parsed.labels, parsed.tables, parsed.paragraphs)
    return wh, time.perf_counter() - start


@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("hostile")
    inbox = root / "inbox"
    cases = hostile.write_inbox(inbox)
    cwd = os.getcwd()
    outside = root / "cwd"
    outside.mkdir()
    os.chdir(outside)  # anything written relative to the working directory would land here
    try:
        wh, seconds = _run(inbox, root)
    finally:
        os.chdir(cwd)
    return root, cases, wh, seconds


@pytest.mark.slow  # one shared run of every case: about 20 s
def test_every_case_has_a_recorded_status_and_reason(hostile_run) -> None:
    _, cases, wh, seconds = hostile_run
    docs = wh.query("SELECT file_name, status, error FROM documents")
    by_name = {row.file_name: row for row in docs.itertuples()}
    assert len(docs) == len(cases), "one documents row per input, none lost, none doubled"
    for case in cases:
        name = case.name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
        row = by_name[name]
        assert row.status in ("parsed", "failed"), (case.name, row)
        if row.status == "failed":
            assert row.error and row.error.split(":")[0] in CODES, (case.name, row.error)
        if case.expect == "parsed":
            assert row.status == "parsed", (case.name, row.error)
        elif case.expect:
            code = case.expect.split(":")[1]
            assert row.status == "failed" and row.error.startswith(code + ":"), (case.name, row.error)
    assert seconds < 60


@pytest.mark.slow  # one shared run of every case: about 20 s
def test_file_names_are_stored_verbatim(hostile_run) -> None:
    _, _, wh, _ = hostile_run
    names = set(wh.query("SELECT file_name FROM documents").file_name)
    for name in hostile.HOSTILE_NAMES:
        assert name in names
    assert "latin1-caf\ufffd-\ufffd\ufffd.pdf" in names  # undecodable bytes become U+FFFD, not a crash
    assert set(wh.query("SELECT table_name FROM information_schema.tables").table_name) >= {
        "documents",
        "pages",
        "paragraphs",
    }


@pytest.mark.slow  # one shared run of every case: about 20 s
def test_nothing_is_written_outside_the_configured_folders(hostile_run) -> None:
    root, cases, _, _ = hostile_run
    assert list((root / "cwd").iterdir()) == [], "nothing written to the working directory"
    inbox_names = sorted(p.name for p in (root / "inbox").iterdir())
    assert len(inbox_names) == len(cases), "the inbox is only read"
    for path in (root / "store").rglob("*"):
        if path.is_file():  # only content-addressed blobs and their records
            assert len(path.name.split(".")[0]) == 64 and path.suffix in ("", ".json"), path
    everything = {p.name for p in root.rglob("*")}
    assert "payload.exe" not in everything, "embedded files are never extracted"


@pytest.mark.slow  # one shared run of every case: about 20 s
def test_bad_metadata_and_text_stay_valid_unicode(hostile_run) -> None:
    _, _, wh, _ = hostile_run
    title = wh.query("SELECT title FROM documents WHERE file_name = 'bad-metadata.pdf'").title[0]
    title.encode("utf-8")  # strict: no lone surrogate survived
    assert clean_text("a\ud800b") == "a\ufffdb"
    assert clean_text("plain ünïcødé") == "plain ünïcødé"


@pytest.mark.slow  # one shared run of every case: about 20 s
def test_sound_documents_are_unaffected_by_their_neighbours(hostile_run, tmp_path: Path) -> None:
    root, _, wh, _ = hostile_run
    alone = tmp_path / "inbox"
    alone.mkdir()
    (alone / "sound.pdf").write_bytes((root / "inbox" / "sound.pdf").read_bytes())
    wh_alone, _ = _run(alone, tmp_path)
    sql = (
        "SELECT page_index, text FROM pages "
        "WHERE doc_id = (SELECT doc_id FROM documents WHERE file_name = ?) ORDER BY 1"
    )
    mixed = wh.query(sql, ["sound.pdf"])
    assert len(mixed) == 3 and mixed.equals(wh_alone.query(sql, ["sound.pdf"]))


# ---- limits, each with its reason -----------------------------------------------------------------


def _source(tmp_path: Path, name: str, data: bytes):
    (tmp_path / "in").mkdir(exist_ok=True)
    (tmp_path / "in" / name).write_bytes(data)
    return DocumentStore(tmp_path / "store").register(tmp_path / "in" / name)[0]


def _limits(**kw) -> Settings:
    return Settings(limits=LimitSettings(**kw))


def test_max_pages(tmp_path: Path) -> None:
    src = _source(tmp_path, "many.pdf", hostile.many_pages(12))
    doc = extract_document(src, _limits(max_pages=10))
    assert doc.status == DocStatus.FAILED and doc.error == "over_limit: 12 pages, above max_pages=10"
    assert extract_document(src, _limits(max_pages=12)).n_pages == 12


def test_max_file_bytes(tmp_path: Path) -> None:
    src = _source(tmp_path, "big.pdf", hostile.text_pdf())
    doc = extract_document(src, _limits(max_file_bytes=1000))
    assert doc.error.startswith("over_limit: file is ") and "max_file_bytes=1000" in doc.error


def test_max_page_area(tmp_path: Path) -> None:
    src = _source(tmp_path, "a4.pdf", hostile.text_pdf(1))
    doc = extract_document(src, _limits(max_page_area=100.0))
    assert doc.error.startswith("over_limit: page 0 is 595x842 pt")


def test_max_image_pixels_inside_a_pdf_and_as_an_image(tmp_path: Path) -> None:
    bomb = extract_document(_source(tmp_path, "bomb.pdf", hostile.bomb_pdf(20_000)), Settings())
    assert bomb.error.startswith("over_limit: page 0 embeds a 20000x20000 image")
    png = _source(tmp_path, "small.png", hostile.small_png())
    assert extract_document(png, Settings()).status == DocStatus.PARSED
    assert "max_image_pixels=100" in extract_document(png, _limits(max_image_pixels=100)).error


def test_time_limit_per_document(tmp_path: Path) -> None:
    src = _source(tmp_path, "many.pdf", hostile.many_pages(40))
    start = time.perf_counter()
    doc = extract_document(src, _limits(max_seconds_per_document=1e-9, max_seconds_per_page=1e-9))
    assert time.perf_counter() - start < 5
    assert doc.status == DocStatus.FAILED
    assert doc.error.startswith("over_limit: time limit reached after 0 of 40 pages (0 CPU s, the larger of")


class _SlowEngine(OcrEngineBase):
    name = "slow"

    def __init__(self, seconds: float):
        self.seconds = seconds
        self.calls = 0

    def recognize(self, image: np.ndarray) -> list[OcrLine]:
        self.calls += 1
        time.sleep(self.seconds)
        return [OcrLine("late text", (10.0, 10.0, 100.0, 30.0), 0.99)]


def test_ocr_page_timeout(tmp_path: Path) -> None:
    src = _source(tmp_path, "marked.png", hostile.small_png(mark=True))  # no text, not blank: OCR'd
    start = time.perf_counter()
    # a page that hangs without computing: the wall-clock backstop (factor 1: the timeout itself)
    doc = extract_document(src, _limits(ocr_page_timeout_s=0.2, wall_clock_factor=1), engine=_SlowEngine(3.0))
    assert time.perf_counter() - start < 2.0, "the run does not wait for the stuck page"
    assert doc.status == DocStatus.FAILED and doc.error.startswith("over_limit: OCR of a page took longer")
    ok = extract_document(src, _limits(ocr_page_timeout_s=5), engine=_SlowEngine(0.0))
    assert ok.status == DocStatus.PARSED and ok.pages[0].text == "late text"


def test_length_alone_never_fails_a_document(tmp_path: Path) -> None:
    # 40 pages of 0.05 s OCR each: 2 s, far past a 0.2 s document budget, but well within 1 s a page
    src = _source(tmp_path, "scan.pdf", hostile.scanned_pages(40))
    engine = _SlowEngine(0.05)
    doc = extract_document(
        src, _limits(max_seconds_per_document=0.2, max_seconds_per_page=1.0), engine=engine
    )
    assert doc.status == DocStatus.PARSED, doc.error
    assert doc.n_pages == 40 and engine.calls == 40


def test_a_stalling_document_still_fails(tmp_path: Path) -> None:
    # 0.3 s a page of waiting where the wall-clock backstop allows 0.1 s a page on average (2 x a
    # CPU budget of 0.05 s a page, at least 0.1 s in all): it runs out after a page or two, and the
    # page in flight is cut short
    src = _source(tmp_path, "scan.pdf", hostile.scanned_pages(6))
    engine = _SlowEngine(0.3)
    start = time.perf_counter()
    doc = extract_document(
        src,
        _limits(max_seconds_per_document=0.1, max_seconds_per_page=0.05, wall_clock_factor=2),
        engine=engine,
    )
    assert time.perf_counter() - start < 2.0
    assert doc.status == DocStatus.FAILED and doc.error.startswith("over_limit: "), doc.error
    assert engine.calls < 6


def test_timed_engine_honours_the_document_deadline() -> None:
    engine = _SlowEngine(1.0)
    timed = TimedOcrEngine(engine, timeout=60, budget=DocumentBudget(cpu_s=60, wall_s=0.1))
    assert timed.name == "slow" and timed.take_stats() == ()  # the protocol passes through
    with pytest.raises(OverLimitError, match="time limit reached during a page's OCR .wall-clock backstop"):
        timed.recognize(np.zeros((4, 4, 3), np.uint8))
    timed.close()


def test_unexpected_errors_become_a_recorded_failure(tmp_path: Path, monkeypatch) -> None:
    src = _source(tmp_path, "sound.pdf", hostile.text_pdf())

    def boom(*args, **kwargs):
        raise KeyError("a MuPDF structure we did not expect")

    monkeypatch.setattr("dagster_ocr.textlayer.read_text_layer", boom)
    doc = extract_document(src, Settings())
    assert doc.status == DocStatus.FAILED
    assert doc.error.startswith("corrupt: reading page 0: KeyError")
