"""The asset graph in process over a mixed inbox: good documents load, bad ones are recorded.

These run the very job the UI and the CLI run (``assets.cli.run_inbox``: one in-process run per
document partition) against a temporary DuckDB file.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pymupdf
import pytest

from assets.cli import run_inbox
from dagster_ocr.samples import SAMPLE_FACTS, build_service_agreement, write_samples
from dagster_ocr.warehouse import Warehouse

CONTRACT_TABLES = ("documents", "pages", "lines", "sections", "paragraphs", "tables", "table_cells")


def _garbled_pdf(path: Path) -> None:
    """A born-digital PDF whose every line is mojibake (UTF-8 read as Latin-1): parses, fails quality."""
    doc = pymupdf.open()
    for _ in range(2):
        page = doc.new_page()
        y = 72
        for i in range(12):
            page.insert_text(
                (72, y), f"Ã©tÃ© {i}: la sociÃ©tÃ© â€œfournisseurâ€\x9d sâ€™engage Ã  payer", fontsize=11
            )
            y += 36
    doc.save(path)


def _encrypted_pdf(path: Path) -> None:
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), "secret terms")
    doc.save(path, encryption=pymupdf.PDF_ENCRYPT_AES_256, user_pw="user-secret", owner_pw="owner-secret")


@pytest.fixture(scope="module")
def mixed_run(tmp_path_factory, corpus):
    root = tmp_path_factory.mktemp("mixed")
    inbox = root / "inbox"
    inbox.mkdir()
    contract, _ = build_service_agreement(None)
    (inbox / "service_agreement.pdf").write_bytes(contract)
    (inbox / "copy of the agreement.pdf").write_bytes(contract)  # same bytes: one document
    shutil.copy(corpus / "tables/icdar2013/us-020/us-020.pdf", inbox / "us-020.pdf")
    _garbled_pdf(inbox / "garbled.pdf")
    _encrypted_pdf(inbox / "encrypted.pdf")
    (inbox / "empty.pdf").write_bytes(b"")
    (inbox / "not_a_pdf.pdf").write_text("just some text that claims to be a PDF\n")
    (inbox / "notes.docx").write_bytes(b"PK\x03\x04" + b"\x00" * 200)
    (inbox / "corrupt.pdf").write_bytes(
        b"%PDF-1.7\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\ngarbage"
    )
    warehouse = root / "w.duckdb"
    summary = run_inbox(inbox, warehouse, ocr_engine="none", show_progress=False)
    return Warehouse(warehouse), summary, inbox


def _status(wh: Warehouse) -> dict[str, tuple[str, str]]:
    df = wh.query("SELECT file_name, status, coalesce(error, '') AS error FROM documents")
    return {r.file_name: (r.status, r.error) for r in df.itertuples()}


def test_every_input_ends_with_a_recorded_status_and_reason(mixed_run):
    wh, summary, _ = mixed_run
    status = _status(wh)
    # the duplicate is one document (content hash), recorded under the first name seen
    assert len(status) == 8
    names = [n for n in ("copy of the agreement.pdf", "service_agreement.pdf") if n in status]
    assert names == ["copy of the agreement.pdf"]  # discovery is sorted: the first copy wins
    assert status[names[0]][0] == "parsed"
    assert status["us-020.pdf"][0] == "parsed"
    expected_failures = {
        "empty.pdf": "empty_file",
        "not_a_pdf.pdf": "unsupported_type",
        "notes.docx": "unsupported_type",
        "encrypted.pdf": "encrypted",
        "corrupt.pdf": "corrupt",
    }
    for name, code in expected_failures.items():
        assert status[name][0] == "failed", (name, status[name])
        assert status[name][1].startswith(code), (name, status[name])
    assert status["garbled.pdf"][0] == "quarantined"
    assert "paragraphs" in status["garbled.pdf"][1]
    assert len(summary) == 8


def test_every_inbox_file_is_traceable_duplicates_included(mixed_run):
    wh, _, inbox = mixed_run
    files = wh.query("SELECT * FROM file_status ORDER BY file_name").set_index("file_name")
    on_disk = sorted(p.name for p in inbox.iterdir())
    assert sorted(files.index) == on_disk  # 9 files, the byte-identical copy included
    copy, original = files.loc["service_agreement.pdf"], files.loc["copy of the agreement.pdf"]
    assert copy.doc_id == original.doc_id and pd.isna(original.duplicate_of)
    assert copy.duplicate_of == str((inbox / "copy of the agreement.pdf").resolve())
    # "what happened to my file?": each name has a status and, where held back, the reason
    assert copy.status == "parsed" and "same bytes as" in copy.outcome
    assert files.loc["encrypted.pdf"].status == "failed" and "encrypted" in files.loc["encrypted.pdf"].outcome
    assert files.loc["garbled.pdf"].status == "quarantined"
    assert files.status.notna().all() and (files.status != "pending").all()


def test_blocking_check_holds_back_the_knowledge_base(mixed_run):
    wh, _, _ = mixed_run
    kb = wh.query(
        "SELECT d.file_name, count(k.chunk_id) AS n FROM documents d "
        "LEFT JOIN kb_chunks k USING (doc_id) GROUP BY ALL"
    )
    n = dict(zip(kb.file_name, kb.n, strict=True))
    assert n["us-020.pdf"] > 0
    assert n["garbled.pdf"] == 0
    assert all(n[f] == 0 for f in ("empty.pdf", "encrypted.pdf", "corrupt.pdf"))
    # kb_vectors ran after knowledge_base for the loaded documents only (skipped for held-back ones)
    vectors = wh.query(
        "SELECT d.file_name, count(e.chunk_id) AS n FROM documents d "
        "LEFT JOIN kb_embeddings e USING (doc_id) GROUP BY ALL"
    )
    v = dict(zip(vectors.file_name, vectors.n, strict=True))
    assert v["us-020.pdf"] == n["us-020.pdf"]
    assert v["garbled.pdf"] == 0
    # the plans handed between kb_vectors' ops are removed once the vectors are stored
    plans = wh.path.parent / "w_data" / "assets" / "kb_vector_plans"
    assert plans.is_dir() and not list(plans.iterdir())
    quarantine = wh.query("SELECT file_name, failed_expectations FROM quarantine")
    assert "garbled.pdf" in set(quarantine.file_name)
    # what was extracted from the held-back document stays queryable
    assert (
        wh.query(
            "SELECT count(*) AS n FROM paragraphs JOIN documents USING (doc_id) "
            "WHERE file_name = 'garbled.pdf'"
        ).n[0]
        > 0
    )


def test_the_sample_contract_fills_every_contract_table(mixed_run):
    wh, _, _ = mixed_run
    doc_id = wh.query("SELECT doc_id FROM documents WHERE status = 'parsed' AND n_pages = 8").doc_id[0]
    for table in CONTRACT_TABLES:
        assert wh.query(f"SELECT count(*) AS n FROM {table} WHERE doc_id = ?", [doc_id]).n[0] > 0, table
    labels = wh.query("SELECT page_label FROM pages WHERE doc_id = ? ORDER BY page_index", [doc_id])
    assert labels.page_label.tolist() == SAMPLE_FACTS["labels"]
    text = " ".join(wh.query("SELECT text FROM paragraphs WHERE doc_id = ?", [doc_id]).text)
    assert SAMPLE_FACTS["fee_sentence"] in " ".join(text.split())
    facts = SAMPLE_FACTS["table"]
    merged = wh.query("SELECT * FROM tables WHERE doc_id = ? AND len(pages) > 1", [doc_id])
    assert len(merged) == 1
    assert merged.pages[0].tolist() == facts["pages"]
    assert merged.n_cols[0] == facts["n_cols"]
    # the scanned page has no text layer; without OCR it is recorded as such, not dropped
    scanned = wh.query(
        "SELECT text_source, route_reason FROM pages WHERE doc_id = ? AND page_index = ?",
        [doc_id, SAMPLE_FACTS["scanned_page_index"]],
    )
    assert scanned.text_source[0] == "none" and "no text layer" in scanned.route_reason[0]
    # the paragraph stage's furniture reaches the warehouse through the graph (each asset reads
    # its own copy of the pages, so the marks travel in the paragraph result)
    furniture = wh.query(
        "SELECT furniture, list(DISTINCT text) AS texts FROM lines WHERE doc_id = ? "
        "AND furniture IS NOT NULL GROUP BY 1",
        [doc_id],
    ).set_index("furniture")["texts"]
    assert SAMPLE_FACTS["running_header"] in list(furniture["header"])
    assert "page_number" in furniture.index


def test_every_row_names_its_printed_page(mixed_run):
    wh, _, _ = mixed_run
    for table, column in (
        ("pages", "page_label"),
        ("paragraphs", "page_label"),
        ("sections", "page_label"),
        ("tables", "first_page_label"),
        ("table_cells", "page_label"),
        ("kb_chunks", "page_label"),
    ):
        missing = wh.query(f"SELECT count(*) AS n FROM {table} WHERE {column} IS NULL OR {column} = ''").n[0]
        assert missing == 0, table


def test_rerunning_changes_no_row_counts(mixed_run):
    wh, _, inbox = mixed_run

    def counts() -> dict[str, int]:
        return {
            t: int(wh.query(f"SELECT count(*) AS n FROM {t}").n[0]) for t in (*CONTRACT_TABLES, "kb_chunks")
        }

    before = counts()
    seen = wh.query("SELECT path, first_seen, last_seen FROM files ORDER BY path")
    run_inbox(inbox, wh.path, ocr_engine="none", show_progress=False)
    assert counts() == before
    # a rescan records every file again without a new row: one per path and content, last_seen on
    again = wh.query("SELECT path, first_seen, last_seen FROM files ORDER BY path")
    assert again.path.tolist() == seen.path.tolist()
    assert (again.first_seen == seen.first_seen).all() and (again.last_seen > seen.last_seen).all()


@pytest.mark.slow
def test_scanned_image_document_is_ocrd_end_to_end(tmp_path):
    inbox = tmp_path / "inbox"
    written = write_samples(tmp_path / "samples")
    inbox.mkdir()
    shutil.copy(next(p for p in written if p.suffix == ".png"), inbox)
    wh = Warehouse(tmp_path / "w.duckdb")
    run_inbox(inbox, wh.path, show_progress=False)
    page = wh.query("SELECT text_source, engine, ocr_confidence, text FROM pages")
    assert page.text_source[0] == "ocr" and page.engine[0] == "rapidocr"
    assert page.ocr_confidence[0] > 0.8
    assert "Hamburg" in page.text[0]
    assert wh.query("SELECT count(*) AS n FROM kb_chunks").n[0] > 0
