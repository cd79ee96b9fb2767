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
    # the lake (dagster_ocr/lake.py): the catalog alias is the constant CATALOG; table names and S3
    # secret values are quoted by _sql_str (quotes doubled), the secret's keys are constants
    (
        "dagster_ocr/lake.py",
        "\"SELECT count(*) FROM information_schema.tables WHERE table_type = 'VIEW' \"\n                f\"AND table_catalog = '{CATALOG}'\"",
    ),
    (
        "dagster_ocr/lake.py",
        "\"SELECT table_name FROM information_schema.tables WHERE table_type = 'BASE TABLE' \"\n                    f\"AND table_catalog = '{CATALOG}' AND table_schema = 'main'\"",
    ),
    ("dagster_ocr/lake.py", "f\"CALL ducklake_flush_inlined_data('{CATALOG}')\""),
    ("dagster_ocr/lake.py", "f\"CALL ducklake_merge_adjacent_files('{CATALOG}')\""),
    ("dagster_ocr/lake.py", 'f"CREATE OR REPLACE SECRET dagster_ocr_lake_s3 (TYPE s3, {fields})"'),
    (
        "dagster_ocr/lake.py",
        "f\"SELECT count(*) FROM ducklake_cleanup_old_files('{CATALOG}', cleanup_all => true)\"",
    ),
    (
        "dagster_ocr/lake.py",
        "f\"SELECT count(*) FROM ducklake_expire_snapshots('{CATALOG}', older_than => ?)\"",
    ),
    (
        "dagster_ocr/lake.py",
        "f\"SELECT count(*) FROM ducklake_list_files('{CATALOG}', '{_sql_str(table)}')\"",
    ),
    ("dagster_ocr/lake.py", "f\"SELECT id FROM ducklake_current_snapshot('{CATALOG}')\""),
    ("dagster_ocr/lake.py", 'f"SET GLOBAL ducklake_retry_wait_ms = {int(RETRY_WAIT_MS)}"'),  # an int constant
    (
        "dagster_ocr/lake.py",
        'f"SELECT snapshot_id, snapshot_time, changes FROM ducklake_snapshots(\'{CATALOG}\') "\n                "ORDER BY snapshot_id DESC LIMIT ?"',
    ),
    ("dagster_ocr/lake.py", 'f"USE {CATALOG}"'),
    ("dagster_ocr/warehouse_writes.py", 'f"INSERT INTO {table} BY NAME SELECT * FROM _rows"'),
    ("dagster_ocr/warehouse_writes.py", 'f"DELETE FROM {table} WHERE doc_id = ?"'),
    # a long document's staging tables: names from the module constants CONTENT_TABLES / _STAGED
    ("dagster_ocr/warehouse.py", 'f"CREATE OR REPLACE TABLE {stage} AS FROM {table} LIMIT 0"'),
    ("dagster_ocr/warehouse.py", 'f"INSERT INTO {table} BY NAME FROM {stage}"'),
    ("dagster_ocr/warehouse.py", 'f"DROP TABLE {stage}"'),
    # document_frames: names checked against READABLE_TABLES first
    ("dagster_ocr/warehouse.py", 'f"SELECT * FROM {t} WHERE doc_id = ?"'),
    ("assets/documents.py", 'sql.format("documents")'),
    # table names from a constant tuple
    # the search file (dagster_ocr/search_index.py): its own path, quotes doubled; table names from
    # constant tuples; the stemmer checked against STEMMERS; HIT_COLUMNS, embeddings.DIM, int(n)
    (
        "dagster_ocr/search_index.py",
        'f"ATTACH \'{_sql_str(path)}\' AS search" + (" (READ_ONLY)" if read_only else "")',
    ),
    ("dagster_ocr/search_index.py", 'f"DROP TABLE IF EXISTS {table}"'),
    ("dagster_ocr/search_index.py", 'f"SET GLOBAL hnsw_ef_search = {int(HNSW_EF_SEARCH)}"'),
    (
        "dagster_ocr/search_index.py",
        'f"INSERT INTO vectors SELECT rid, embedding::FLOAT[{embeddings.DIM}], centroid "\n                        "FROM _vectors"',
    ),
    ("dagster_ocr/search_index.py", 'f"INSERT INTO {table} BY NAME SELECT * FROM _rows"'),
    (
        "dagster_ocr/search_index.py",
        "f\"PRAGMA create_fts_index('chunks', 'rid', 'body', stemmer = '{self.stemmer}', \"\n                \"stopwords = 'none', ignore = '\\\\s+', strip_accents = 1, lower = 1, overwrite = 1)\"",
    ),
    # column lists and the vector width from module constants (_HIT_COLUMNS, _CHUNK_COLUMNS,
    # embeddings.DIM); the pgvector sink's schema name is validated by a ^[a-z_][a-z0-9_]*$ pattern
    (
        "dagster_ocr/kb_vectors.py",
        'f"""INSERT INTO kb_embeddings\n                    (doc_id, chunk_id, model, text_md5, input_md5, embedding, embedded_at)\n'
        "                    SELECT doc_id, chunk_id, model, text_md5, input_md5,\n"
        '                    embedding::FLOAT[{embeddings.DIM}], embedded_at\n                    FROM _vectors"""',
    ),
    (
        "dagster_ocr/kb_pg.py",
        'f"""\n            SELECT {", ".join("d.file_name" if c == "file_name" else "k." + c for c in _CHUNK_COLUMNS)},\n                   e.model, e.embedding\n            FROM kb_chunks k\n            JOIN documents d ON d.doc_id = k.doc_id AND d.status = \'parsed\'\n            LEFT JOIN kb_embeddings e\n              ON e.doc_id = k.doc_id AND e.chunk_id = k.chunk_id AND e.text_md5 = md5(k.text)\n             AND e.model = ?\n            WHERE k.doc_id = ?\n            ORDER BY k.chunk_id\n            """',
    ),
    (
        "dagster_ocr/kb_pg.py",
        'f"""CREATE TABLE IF NOT EXISTS {s}.kb_chunks (\n                    doc_id TEXT NOT NULL, chunk_id TEXT NOT NULL, file_name TEXT NOT NULL,\n                    source_kind TEXT NOT NULL, source_id TEXT NOT NULL, section_title TEXT,\n                    page_index INTEGER, page_label TEXT, last_page_label TEXT, citation TEXT NOT NULL,\n                    text TEXT NOT NULL, paragraph_ids TEXT[], model TEXT, embedding {vector_type},\n                    loaded_at TIMESTAMPTZ NOT NULL DEFAULT now(),\n                    PRIMARY KEY (doc_id, chunk_id))"""',
    ),
    (
        "dagster_ocr/kb_pg.py",
        'f"""SELECT doc_id, chunk_id, citation, text, 1 - (embedding <=> %s::vector) AS score\n                FROM {s}.kb_chunks WHERE embedding IS NOT NULL\n                ORDER BY embedding <=> %s::vector, doc_id, chunk_id LIMIT %s"""',
    ),
    ("dagster_ocr/kb_pg.py", 'f"CREATE SCHEMA IF NOT EXISTS {s}"'),
    ("dagster_ocr/kb_pg.py", 'f"DELETE FROM {s}.kb_chunks WHERE doc_id = %s"'),
    (
        "dagster_ocr/kb_pg.py",
        'f"INSERT INTO {s}.kb_chunks ({\', \'.join(_CHUNK_COLUMNS)}, model, embedding) "\n                    f"VALUES ({placeholders})"',
    ),
    # SCHEMA_VERSION_TABLE is a module constant
    ("dagster_ocr/schema.py", 'f"INSERT INTO {SCHEMA_VERSION_TABLE} VALUES (?, ?, ?)"'),
    ("dagster_ocr/schema.py", 'f"SELECT max(version) FROM {SCHEMA_VERSION_TABLE}"'),
}


#: reviewed functions that build a query for ``execute(*f(...))``: the search file's BM25 and nearest
#: queries (dagster_ocr/search_index.py) interpolate HIT_COLUMNS, a constant WHERE clause,
#: embeddings.DIM and int(n) only; every value is a parameter
REVIEWED_BUILDERS = {
    ("dagster_ocr/search_index.py", "bm25_query"),
    ("dagster_ocr/search_index.py", "nearest_query"),
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
                if isinstance(arg, ast.Starred):  # execute(*builder(...)): the builder must be reviewed
                    callee = arg.value.func if isinstance(arg.value, ast.Call) else None
                    name = getattr(callee, "id", getattr(callee, "attr", None))
                    if (str(path.relative_to(REPO)), name) not in REVIEWED_BUILDERS:
                        sites.add((str(path.relative_to(REPO)), ast.get_source_segment(source, arg)))
                    continue
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
    from dagster_ocr.warehouse_writes import _insert

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
