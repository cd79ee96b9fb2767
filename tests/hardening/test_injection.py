"""No injection, no escape: values never become SQL, and nothing outside the folders is touched."""

from __future__ import annotations

import ast
import os
from pathlib import Path

import hostile
import pytest

from dagster_ocr.ingest import DocumentStore, discover, ingest_inbox
from dagster_ocr.pipeline import parse
from dagster_ocr.warehouse import Warehouse

REPO = Path(__file__).resolve().parents[2]
SQL_CALLS = {"execute", "executemany", "sql", "query", "query_df"}

#: reviewed SQL built from text: every interpolated value is a constant table name
REVIEWED = {
    ("dagster_ocr/warehouse.py", 'f"INSERT INTO {table} BY NAME SELECT * FROM _rows"'),
    ("dagster_ocr/warehouse.py", 'f"DELETE FROM {table} WHERE doc_id = ?"'),
    ("assets/documents.py", 'sql.format("documents")'),
    ("assets/documents.py", "sql.format(t)"),
    # table names from a constant tuple
    ("dagster_ocr/kb.py", 'sql.format("documents")'),
    ("dagster_ocr/kb.py", "sql.format(t)"),
    # SCHEMA_VERSION_TABLE is a module constant
    ("dagster_ocr/ops/migrations.py", 'f"INSERT INTO {SCHEMA_VERSION_TABLE} VALUES (?, ?, ?)"'),
    ("dagster_ocr/ops/migrations.py", 'f"SELECT max(version) FROM {SCHEMA_VERSION_TABLE}"'),
}


def _dynamic_sql_sites() -> set[tuple[str, str]]:
    sites = set()
    for top in ("dagster_ocr", "assets", "resources"):
        for path in sorted((REPO / top).rglob("*.py")):
            source = path.read_text(encoding="utf-8")
            for node in ast.walk(ast.parse(source)):
                if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                    continue
                if node.func.attr not in SQL_CALLS or not node.args:
                    continue
                arg = node.args[0]
                built = isinstance(arg, ast.JoinedStr | ast.BinOp) or (
                    isinstance(arg, ast.Call)
                    and isinstance(arg.func, ast.Attribute)
                    and arg.func.attr == "format"
                )
                if built:
                    sites.add((str(path.relative_to(REPO)), ast.get_source_segment(source, arg)))
    return sites


def test_sql_is_only_built_from_reviewed_constants() -> None:
    """A new f-string/format/concatenation passed to execute() fails here until someone reviews it."""
    assert _dynamic_sql_sites() <= REVIEWED, _dynamic_sql_sites() - REVIEWED


def test_writes_refuse_unknown_table_names(tmp_path: Path) -> None:
    from dagster_ocr.warehouse import _insert

    with pytest.raises(ValueError, match="not a warehouse table"):
        _insert(None, "documents; DROP TABLE pages", [{"doc_id": "x"}])  # type: ignore[arg-type]


def test_hostile_names_metadata_and_text_are_data(tmp_path: Path) -> None:
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    evil = "x'); DROP TABLE documents; --"
    for i, name in enumerate([f"{evil}.pdf", "Robert'); DELETE FROM pages WHERE ('1'='1.pdf"]):
        (inbox / name).write_bytes(hostile.text_pdf(1, title=f"{evil} {i}"))
    wh = Warehouse(tmp_path / "w.duckdb")
    for record, _ in ingest_inbox(inbox, DocumentStore(tmp_path / "store")):
        p = parse(record)
        wh.write_document(p.document, p.labels, p.tables, p.paragraphs)
        wh.write_kb(
            record.doc_id,
            [
                {
                    "chunk_id": "c",
                    "source_kind": "paragraph",
                    "source_id": evil,
                    "text": evil,
                    "citation": record.file_name,
                }
            ],
        )
        wh.approve(record.doc_id, evil, evil)
        wh.record_gate(
            record.doc_id,
            [
                {
                    "check_name": evil,
                    "expectation": evil,
                    "severity": "ERROR",
                    "success": False,
                    "observed_value": evil,
                }
            ],
            "quarantined",
            evil,
        )
    docs = wh.query("SELECT file_name, title FROM documents ORDER BY file_name")
    assert len(docs) == 2 and f"{evil}.pdf" in set(docs.file_name)
    assert all(t.startswith(evil) for t in docs.title)
    assert wh.query("SELECT count(*) AS n FROM pages").n[0] == 2
    assert wh.query("SELECT count(*) AS n FROM approvals WHERE approved_by = ?", [evil]).n[0] == 2


def test_discover_skips_symlinks_to_files_and_folders(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.pdf").write_bytes(hostile.text_pdf(1, title="secret"))
    inbox = tmp_path / "inbox"
    (inbox / "sub").mkdir(parents=True)
    (inbox / "real.pdf").write_bytes(hostile.text_pdf(1))
    os.symlink(outside / "secret.pdf", inbox / "link.pdf")
    os.symlink(outside, inbox / "linked-folder")
    os.symlink("/etc/passwd", inbox / "sub" / "passwd.pdf")
    os.symlink(inbox, inbox / "sub" / "loop")  # a cycle must not hang the walk
    found = [p.relative_to(inbox).as_posix() for p in discover(inbox)]
    assert found == ["real.pdf"]
    store = DocumentStore(tmp_path / "store")
    assert [r.file_name for r, _ in ingest_inbox(inbox, store)] == ["real.pdf"]


@pytest.mark.parametrize(
    "doc_id", ["../../etc/passwd", "..", "/etc/passwd", "a" * 63 + "/", "A" * 64, "", "0" * 64 + "\x00"]
)
def test_document_ids_never_name_a_path(tmp_path: Path, doc_id: str) -> None:
    store = DocumentStore(tmp_path / "store")
    with pytest.raises(ValueError, match="not a document id"):
        store.get(doc_id)
    assert doc_id not in store
    assert not (tmp_path / "store").exists()
