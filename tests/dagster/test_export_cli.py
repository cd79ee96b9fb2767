"""``dagster-ocr export``: a document by doc_id, prefix or file name, as Markdown or JSON; clear errors."""

from __future__ import annotations

import json
import shutil

import pytest

from assets.cli import main
from dagster_ocr.export import document_markdown
from dagster_ocr.ingest import DocumentStore, register_inbox
from dagster_ocr.pipeline import parse
from dagster_ocr.warehouse import Warehouse


@pytest.fixture(scope="module")
def warehouse(corpus, tmp_path_factory):
    root = tmp_path_factory.mktemp("export")
    inbox = root / "inbox"
    inbox.mkdir()
    shutil.copy(corpus / "tables/icdar2013/eu-022/eu-022.pdf", inbox / "report.pdf")
    shutil.copy(corpus / "tables/icdar2013/eu-022/eu-022.pdf", inbox / "report copy.pdf")
    shutil.copy(corpus / "docling/multi_page/multi_page.pdf", inbox / "multi_page.pdf")
    wh = Warehouse(root / "w.duckdb")
    scan = register_inbox(inbox, DocumentStore(root / "store"))
    wh.record_files(scan.files, "cli")
    for src, _ in scan.documents:
        out = parse(src)
        wh.write_document(out.document, out.labels, out.tables, out.paragraphs)
    return wh, {src.file_name: src.doc_id for src, _ in scan.documents}


def test_export_by_name_prefix_and_duplicate_name(warehouse, tmp_path, capsys):
    wh, ids = warehouse
    doc_id = ids["report copy.pdf"]  # the first name seen; "report.pdf" is its duplicate
    for ref in ("report copy.pdf", "report.pdf", doc_id[:6], doc_id):
        assert main(["export", ref, "--warehouse", str(wh.path)]) == 0
        assert capsys.readouterr().out == document_markdown(wh, doc_id)
    out = tmp_path / "out" / "multi.json"
    assert (
        main(["export", "multi_page.pdf", "--warehouse", str(wh.path), "--format", "json", "--out", str(out)])
        == 0
    )
    data = json.loads(out.read_text())
    assert data["origin"]["filename"] == "multi_page.pdf" and len(data["pages"]) == 5
    assert data["body"][0]["prov"][0]["bbox"]["coord_origin"] == "TOPLEFT"
    assert "wrote" in capsys.readouterr().err
    # a quarantined document is exported all the same, never silently
    with wh.transaction() as con:
        con.execute("UPDATE documents SET status = 'quarantined', error = 'held' WHERE doc_id = ?", [doc_id])
    try:
        assert main(["export", doc_id, "--warehouse", str(wh.path)]) == 0
        assert "note: report copy.pdf is quarantined: held" in capsys.readouterr().err
    finally:
        with wh.transaction() as con:
            con.execute("UPDATE documents SET status = 'parsed', error = NULL WHERE doc_id = ?", [doc_id])


@pytest.mark.parametrize(
    ("ref", "message"),
    [
        ("nothing.pdf", "no document 'nothing.pdf'"),
        ("ab", "too short"),
        ("", "no document named"),
    ],
)
def test_export_errors_say_why(warehouse, capsys, ref, message):
    wh, _ = warehouse
    assert main(["export", ref, "--warehouse", str(wh.path)]) == 2
    assert message in capsys.readouterr().err


def test_an_ambiguous_prefix_or_name_lists_the_candidates(warehouse, capsys):
    wh, ids = warehouse
    with wh.transaction() as con:  # a second document under the same file name
        con.execute(
            "INSERT INTO documents (doc_id, file_name, status) VALUES (?, 'multi_page.pdf', 'failed')",
            ["f" * 64],
        )
    try:
        assert main(["export", "multi_page.pdf", "--warehouse", str(wh.path)]) == 2
        err = capsys.readouterr().err
        assert "2 documents are named 'multi_page.pdf'" in err and ids["multi_page.pdf"][:12] in err
        assert main(["export", "f" * 10, "--warehouse", str(wh.path)]) == 2
        assert "could not be parsed" in capsys.readouterr().err
    finally:
        with wh.transaction() as con:
            con.execute("DELETE FROM documents WHERE doc_id = ?", ["f" * 64])
    assert main(["export", "x.pdf", "--warehouse", str(wh.path.with_name("missing.duckdb"))]) == 2
    assert "no warehouse at" in capsys.readouterr().err
