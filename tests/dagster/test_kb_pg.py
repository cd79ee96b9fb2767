"""The PostgreSQL knowledge-base sink, against the local PostgreSQL (127.0.0.1:5432, user postgres).

Each test session creates a throw-away database and drops it afterwards. pgvector's own features
(the vector column, cosine search) are tested only where ``CREATE EXTENSION vector`` works: Debian
bookworm (this machine's snapshot) does not ship postgresql-15-pgvector, so there the sink stores
embeddings as real[] and the pgvector test is skipped with that reason.
"""

from __future__ import annotations

import uuid

import pytest

from dagster_ocr import embeddings
from dagster_ocr.kb import embed_document
from dagster_ocr.kb_pg import KbPgSettings, KbSink
from dagster_ocr.kb_settings import KbSettings
from dagster_ocr.warehouse import Warehouse

psycopg2 = pytest.importorskip("psycopg2")
SERVER = "postgresql://postgres@127.0.0.1:5432/postgres"


@pytest.fixture(scope="module")
def dsn():
    try:
        admin = psycopg2.connect(SERVER, connect_timeout=3)
    except psycopg2.OperationalError as exc:
        pytest.skip(f"no local PostgreSQL on 127.0.0.1:5432: {exc}")
    admin.autocommit = True
    name = f"kb_test_{uuid.uuid4().hex[:10]}"
    with admin.cursor() as cur:
        cur.execute(f"CREATE DATABASE {name}")
    try:
        yield SERVER.rsplit("/", 1)[0] + "/" + name
    finally:
        with admin.cursor() as cur:
            cur.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        admin.close()


def _chunk(cid: str, label: str, text: str) -> dict:
    return {"chunk_id": cid, "source_kind": "paragraph", "source_id": cid, "page_index": int(label)} | {
        "page_label": label,
        "last_page_label": label,
        "text": text,
        "citation": f"good.pdf, p. {label}",
        "paragraph_ids": [f"p{cid}"],
    }


@pytest.fixture()
def warehouse(tmp_path) -> Warehouse:
    wh = Warehouse(tmp_path / "kb.duckdb")
    wh.ensure_schema()
    with wh.transaction() as con:
        con.execute("INSERT INTO documents (doc_id, file_name, status) VALUES ('good', 'good.pdf', 'parsed')")
    wh.write_kb(
        "good",
        [
            _chunk("c0", "1", "Payment is due within thirty days of the invoice date."),
            _chunk("c1", "2", "The supplier keeps backups of customer data for ninety days."),
            _chunk("c2", "3", "Either party may terminate the agreement with three months notice."),
        ],
    )
    return wh


def _rows(sink: KbSink) -> list[tuple]:
    with sink.cursor() as cur:
        cur.execute(
            "SELECT doc_id, chunk_id, page_label, citation, paragraph_ids, embedding IS NOT NULL "
            "FROM kb.kb_chunks ORDER BY doc_id, chunk_id"
        )
        return cur.fetchall()


def test_sync_is_idempotent_and_replaces_a_reloaded_document(dsn, warehouse):
    sink = KbSink(KbPgSettings(dsn=dsn))
    if embeddings.unavailable_reason() is None:
        embed_document(warehouse, "good", settings=KbSettings())
    assert sink.sync_document(warehouse, "good") == 3
    first = _rows(sink)
    assert sink.sync_document(warehouse, "good") == 3
    assert _rows(sink) == first  # re-loading changes nothing
    assert first[1][:5] == ("good", "c1", "2", "good.pdf, p. 2", ["pc1"])
    assert all(r[5] for r in first) == (embeddings.unavailable_reason() is None)
    # a re-parsed document replaces its chunks (fewer now); a quarantined one leaves the sink
    warehouse.write_kb("good", [_chunk("c0", "1", "Payment is due within thirty days of the invoice date.")])
    assert sink.sync_document(warehouse, "good") == 1 and len(_rows(sink)) == 1
    with warehouse.transaction() as con:
        con.execute("UPDATE documents SET status = 'quarantined' WHERE doc_id = 'good'")
    assert sink.sync_document(warehouse, "good") == 0 and _rows(sink) == []


def test_pgvector_cosine_search(dsn, warehouse):
    sink = KbSink(KbPgSettings(dsn=dsn, schema_name="kb_vec"))
    if not sink.pgvector:
        pytest.skip("CREATE EXTENSION vector failed: postgresql-15-pgvector is not installable here")
    if embeddings.unavailable_reason():
        pytest.skip(f"no embedding model: {embeddings.unavailable_reason()}")
    embed_document(warehouse, "good", settings=KbSettings())
    sink.sync_document(warehouse, "good")
    hits = sink.search_vector("how long is client information retained", limit=2)
    assert hits[0]["chunk_id"] == "c1" and hits[0]["citation"] == "good.pdf, p. 2"
