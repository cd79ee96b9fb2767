"""The warehouse: contract schema, idempotent per-document replacement, atomic writes."""

from __future__ import annotations

import pytest

from dagster_ocr.model import (
    Cell,
    DocStatus,
    ExtractedDocument,
    LabelSource,
    Line,
    Page,
    PageLabel,
    Paragraph,
    ParagraphResult,
    Section,
    SourceDocument,
    Table,
)
from dagster_ocr.warehouse import Warehouse


def _doc(doc_id: str, n_pages: int = 2) -> tuple:
    src = SourceDocument(doc_id, f"{doc_id[:4]}.pdf", "/in/x.pdf", "/store/x", 10, "pdf")
    pages = [Page(i, 612, 792, [Line(f"line {i}", (72, 72, 200, 84))]) for i in range(n_pages)]
    doc = ExtractedDocument(src, DocStatus.PARSED, pages, n_pages=n_pages)
    labels = [PageLabel(i, ["iv", "A-3"][i % 2], LabelSource.PDF, 1.0) for i in range(n_pages)]
    table = Table("t0", 0, 1, 2, 2, [Cell(0, 0, "a", 0), Cell(1, 1, "¥ 5", 1)], (0, 0, 10, 10), pages=[0, 1])
    paras = ParagraphResult(
        [Paragraph("p_iv_0_0", "s0", 0, 0, "§ 1 text", (72, 72, 200, 84), flags=["mojibake"])],
        [Section("s0", None, 1, "1. Scope", 0)],
    )
    return doc, labels, [table], paras


def test_contract_tables_and_labels_are_written(tmp_path):
    wh = Warehouse(tmp_path / "w.duckdb")
    counts = wh.write_document(*_doc("a" * 64))
    assert counts == {
        "documents": 1,
        "pages": 2,
        "lines": 2,
        "sections": 1,
        "paragraphs": 2,  # the paragraph, and the table's own row (kind 'table')
        "tables": 1,
        "table_cells": 2,
        "ocr_decode_stats": 0,
        "text_conservation": 2,
    }
    cells = wh.query("SELECT row_idx, col_idx, text, page_label FROM table_cells ORDER BY row_idx")
    assert cells.values.tolist() == [[0, 0, "a", "iv"], [1, 1, "¥ 5", "A-3"]]
    para = wh.query("SELECT page_label, flags, section_id FROM paragraphs WHERE kind <> 'table'")
    assert para.page_label[0] == "iv" and list(para["flags"][0]) == ["mojibake"]
    table_row = wh.query("SELECT paragraph_id, text, page_label FROM paragraphs WHERE kind = 'table'")
    assert table_row.values.tolist() == [["t0", "a\n¥ 5", "iv"]]
    assert wh.query("SELECT first_page_label, last_page_label FROM tables").values.tolist() == [["iv", "A-3"]]


def test_rewriting_a_document_replaces_its_rows_only(tmp_path):
    wh = Warehouse(tmp_path / "w.duckdb")
    wh.write_document(*_doc("a" * 64))
    wh.write_document(*_doc("b" * 64))
    wh.write_kb(
        "a" * 64,
        [
            {
                "chunk_id": "c0",
                "source_kind": "paragraph",
                "source_id": "p",
                "text": "x",
                "citation": "a.pdf, p. iv",
            }
        ],
    )
    wh.write_document(*_doc("a" * 64, n_pages=3))
    per_doc = wh.query("SELECT doc_id, count(*) AS n FROM pages GROUP BY doc_id ORDER BY doc_id")
    assert per_doc.n.tolist() == [3, 2]
    assert wh.query("SELECT count(*) AS n FROM documents").n[0] == 2
    # a new parse invalidates the old knowledge-base load
    assert wh.query("SELECT count(*) AS n FROM kb_chunks").n[0] == 0


def test_a_failed_write_leaves_the_previous_version_whole(tmp_path, monkeypatch):
    wh = Warehouse(tmp_path / "w.duckdb")
    wh.write_document(*_doc("a" * 64))
    # patched where the document's rows are inserted (_insert_rows), not where warehouse re-exports it
    import dagster_ocr.warehouse_writes as writes

    real = writes._insert

    def crash_on_cells(con, table, rows):
        if table == "table_cells":
            raise RuntimeError("simulated crash mid-write")
        real(con, table, rows)

    monkeypatch.setattr(writes, "_insert", crash_on_cells)
    with pytest.raises(RuntimeError):
        wh.write_document(*_doc("a" * 64, n_pages=5))
    assert wh.query("SELECT count(*) AS n FROM pages").n[0] == 2
    assert wh.query("SELECT count(*) AS n FROM table_cells").n[0] == 2


def _all_rows(wh: Warehouse) -> dict:
    from dagster_ocr.warehouse import CONTENT_TABLES

    out = {}
    for table in ("documents", *CONTENT_TABLES):
        frame = wh.query(f"SELECT * FROM {table} ORDER BY ALL").drop(columns=["parsed_at"], errors="ignore")
        out[table] = frame.astype(str).values.tolist()
    return out


def test_a_long_document_is_staged_and_lands_the_same(tmp_path, monkeypatch):
    """Past STAGE_ABOVE_PAGES the rows go through private staging tables first; the result is the
    same rows, no staging table is left, and a crash in either phase leaves the previous version."""
    # each name patched where it is looked up: write_document (warehouse) reads STAGE_ABOVE_PAGES
    # and calls _clear_document; _insert_rows (warehouse_writes) calls _insert
    import dagster_ocr.warehouse as module
    import dagster_ocr.warehouse_writes as writes

    direct = Warehouse(tmp_path / "direct.duckdb")
    direct.write_document(*_doc("b" * 64))
    direct.write_document(*_doc("a" * 64, n_pages=3))
    monkeypatch.setattr(module, "STAGE_ABOVE_PAGES", 1)
    staged = Warehouse(tmp_path / "staged.duckdb")
    staged.write_document(*_doc("b" * 64))
    staged.write_document(*_doc("a" * 64, n_pages=5))
    counts = staged.write_document(*_doc("a" * 64, n_pages=3))  # replaces, does not add
    assert counts["pages"] == 3 and counts["documents"] == 1
    assert _all_rows(staged) == _all_rows(direct)
    names = set(staged.query("SELECT table_name FROM information_schema.tables").table_name)
    assert not {n for n in names if n.startswith("_load_")}

    real = writes._insert
    for phase in ("staging", "swap"):

        def crash(con, table, rows, phase=phase):
            if phase == "staging" and table == "_load_table_cells":
                raise RuntimeError("simulated crash while staging")
            real(con, table, rows)

        monkeypatch.setattr(writes, "_insert", crash)
        if phase == "swap":
            monkeypatch.setattr(module, "_clear_document", _failing_clear(module._clear_document))
        with pytest.raises(RuntimeError):
            staged.write_document(*_doc("a" * 64, n_pages=6))
        assert _all_rows(staged) == _all_rows(direct), phase


def _failing_clear(real):
    def clear(con, doc_id):
        real(con, doc_id)
        raise RuntimeError("simulated crash in the swap, after the old rows were deleted")

    return clear


def test_hostile_file_names_are_data_not_sql(tmp_path):
    wh = Warehouse(tmp_path / "w.duckdb")
    doc, labels, tables, paras = _doc("c" * 64)
    doc.source.file_name = "x'); DROP TABLE documents; --.pdf"
    wh.write_document(doc, labels, tables, paras)
    assert wh.query("SELECT file_name FROM documents").file_name[0] == doc.source.file_name


def test_a_held_file_is_opened_once_and_its_snapshot_has_every_commit(tmp_path, monkeypatch):
    import duckdb

    import dagster_ocr.warehouse as wmod

    wh = Warehouse(tmp_path / "w.duckdb")
    wh.write_document(*_doc("a" * 64))
    opened: list[str] = []
    real_connect = duckdb.connect

    def counting(path, *args, **kwargs):
        opened.append(path)
        return real_connect(path, *args, **kwargs)

    monkeypatch.setattr(wmod.duckdb, "connect", counting)
    with wh.held():
        wh.write_document(*_doc("b" * 64))
        with wh.held():  # nested: still the one connection
            assert len(wh.query("SELECT * FROM documents")) == 2
        wh.record_gate("b" * 64, [], DocStatus.QUARANTINED, "held back")
        # the last commits may sit in the write-ahead log: the snapshot must still carry them
        snapshot = wh.publish_snapshot()
        assert opened == [str(tmp_path / "w.duckdb")]
    con = real_connect(str(snapshot), read_only=True)
    try:
        rows = con.execute("SELECT doc_id, status FROM documents ORDER BY doc_id").fetchall()
    finally:
        con.close()
    assert rows == [("a" * 64, "parsed"), ("b" * 64, "quarantined")]
    # released on leaving the block: another open (here a read-only one) works again
    assert len(wh.query("SELECT * FROM pages")) == 4 and len(opened) == 2


def _snapshot_docs(path) -> list[str]:
    import duckdb

    con = duckdb.connect(str(path), read_only=True)
    try:
        return [r[0] for r in con.execute("SELECT doc_id FROM documents ORDER BY doc_id").fetchall()]
    finally:
        con.close()


def test_snapshot_copies_are_throttled_to_a_share_of_the_writers_time(tmp_path, monkeypatch):
    import dagster_ocr.warehouse as wmod

    clock = [1000.0]
    monkeypatch.setattr(wmod.time, "time", lambda: clock[0])
    wh = Warehouse(tmp_path / "w.duckdb")
    wh.write_document(*_doc("a" * 64))
    assert wh.publish_snapshot(max_share=0.1) == wh.snapshot_path  # the first is always made
    first = wh.snapshot_record()
    assert first.published_at == 1000.0 and first.pending_writes == 0 and first.copy_seconds > 0

    # pretend the copy took 2 s: with a 10% share the next one is due 20 s after it
    first.copy_seconds = 2.0
    first.save(wh.snapshot_path.with_suffix(".json"))
    wh.write_document(*_doc("b" * 64))
    clock[0] = 1019.0
    assert wh.publish_snapshot(max_share=0.1) is None  # skipped, recorded as pending
    wh.write_document(*_doc("c" * 64))
    clock[0] = 1019.5
    assert wh.publish_snapshot(max_share=0.1) is None
    record = wh.snapshot_record()
    assert (record.pending_writes, record.last_write_at, record.published_at) == (2, 1019.5, 1000.0)
    assert _snapshot_docs(wh.snapshot_path) == ["a" * 64]  # the skipped writes are not in it yet

    clock[0] = 1020.0
    assert wh.publish_snapshot(max_share=0.1) == wh.snapshot_path  # due: carries everything
    assert _snapshot_docs(wh.snapshot_path) == ["a" * 64, "b" * 64, "c" * 64]
    assert wh.snapshot_record().pending_writes == 0

    # no throttle (None) copies whatever the cost; a deleted snapshot is remade even if not due
    wh.publish_snapshot()
    slow = wh.snapshot_record()
    slow.copy_seconds = 1e6
    slow.save(wh.snapshot_path.with_suffix(".json"))
    assert wh.publish_snapshot(max_share=0.1) is None
    wh.snapshot_path.unlink()
    assert wh.publish_snapshot(max_share=0.1) == wh.snapshot_path


def test_an_unreadable_snapshot_record_reads_as_never_published(tmp_path):
    wh = Warehouse(tmp_path / "w.duckdb")
    wh.snapshot_path.with_suffix(".json").write_text("{not json")
    record = wh.snapshot_record()
    assert record.published_at is None and record.pending_writes == 0
