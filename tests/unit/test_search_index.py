"""The search file: fts BM25 and an HNSW index, derived from the warehouse and kept in step with it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import duckdb
import numpy as np
import pytest

from dagster_ocr import embeddings
from dagster_ocr.kb import search
from dagster_ocr.search_index import SearchIndex, search_path
from dagster_ocr.warehouse import Warehouse


def _vectors(n: int, seed: int = 0) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal((n, embeddings.DIM)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def _load(wh: Warehouse, doc_id: str, texts: list[str], vectors: np.ndarray | None = None) -> None:
    with wh.transaction() as con:
        con.execute("DELETE FROM documents WHERE doc_id = ?", [doc_id])
        con.execute(
            "INSERT INTO documents (doc_id, file_name, status) VALUES (?, ?, 'parsed')",
            [doc_id, f"{doc_id}.pdf"],
        )
    wh.write_kb(
        doc_id,
        [
            {"chunk_id": f"c{i}", "source_kind": "paragraph", "source_id": f"p{i}", "page_index": i}
            | {"page_label": str(i + 1), "last_page_label": str(i + 1), "text": t}
            | {"citation": f"{doc_id}.pdf, p. {i + 1}"}
            for i, t in enumerate(texts)
        ],
    )
    if vectors is not None:
        with wh.transaction() as con:
            con.execute("DELETE FROM kb_embeddings WHERE doc_id = ?", [doc_id])
            for i, (t, v) in enumerate(zip(texts, vectors, strict=True)):
                con.execute(
                    f"INSERT INTO kb_embeddings VALUES (?, ?, ?, md5(?), ?::FLOAT[{embeddings.DIM}], now())",
                    [doc_id, f"c{i}", embeddings.MODEL_NAME, t, v.tolist()],
                )


@pytest.fixture()
def wh(tmp_path) -> Warehouse:
    wh = Warehouse(tmp_path / "w.duckdb")
    wh.ensure_schema()
    return wh


def test_refresh_copies_only_what_changed_and_drops_what_left(wh):
    _load(wh, "a", ["alpha payments", "beta"], _vectors(2, 1))
    _load(wh, "b", ["gamma", "delta", "epsilon"])
    index = SearchIndex(wh)
    first = index.refresh()
    assert (first["documents_changed"], first["chunks_copied"], first["vectors_copied"]) == (2, 5, 2)
    assert index.refresh()["documents_changed"] == 0  # nothing changed: nothing copied
    _load(wh, "b", ["zeta"])
    again = index.refresh()
    assert (again["documents_changed"], again["chunks_copied"]) == (1, 1)
    with wh.transaction() as con:
        con.execute("UPDATE documents SET status = 'quarantined' WHERE doc_id = 'a'")
    assert index.refresh()["documents_removed"] == 1
    assert [h.doc_id for h in search(wh, "zeta alpha", limit=10)] == ["b"]
    index.close()


def test_porter_stemming_finds_other_forms_and_none_does_not(wh):
    _load(wh, "a", ["The invoice payments are late.", "Nothing here."])
    from dagster_ocr.kb import KbSettings

    assert [h.chunk_id for h in search(wh, "payment")] == ["c0"]
    assert search(wh, "payment", settings=KbSettings(fts_stemmer="none")) == []
    assert [h.chunk_id for h in search(wh, "payments", settings=KbSettings(fts_stemmer="none"))] == ["c0"]
    SearchIndex(wh).close()


def test_nearest_uses_the_hnsw_index_and_finds_each_vector_itself(wh):
    vectors = _vectors(300)
    _load(wh, "a", [f"chunk {i}" for i in range(300)], vectors)
    index = SearchIndex(wh)
    with index.connection() as con:
        plan = con.execute(
            "EXPLAIN SELECT rid FROM vectors ORDER BY "
            f"array_cosine_distance(embedding, ?::FLOAT[{embeddings.DIM}]) LIMIT 5",
            [vectors[0].tolist()],
        ).fetchall()[0][1]
        assert "HNSW_INDEX_SCAN" in plan
        found = [index.nearest(con, vectors[i].tolist(), 1)[0][0]["chunk_id"] for i in range(0, 300, 30)]
        only = index.nearest(con, vectors[7].tolist(), 3, doc_ids=["nobody"])
    assert found == [f"c{i}" for i in range(0, 300, 30)]
    assert only == []
    index.close()


_CRASHING_REFRESH = """
import os, sys
sys.path.insert(0, sys.argv[2])
from dagster_ocr.warehouse import Warehouse
from dagster_ocr import search_index as si
index = si.SearchIndex(Warehouse(sys.argv[1]))
con = si._open(index.path, read_only=False)
index._refresh(con, index._wanted(), checkpoint=False)  # committed, not checkpointed
os._exit(0)  # dies before closing: the write-ahead log stays
"""


def test_a_crash_after_commit_replays_the_hnsw_index_with_vss_loaded(wh):
    # the refresh's rows reach the HNSW index through the log's replay (vss is loaded before ATTACH)
    _load(wh, "a", [f"first {i}" for i in range(20)], _vectors(20, 3))
    SearchIndex(wh).refresh()  # checkpointed: the index is in the file
    vectors = _vectors(50, 2)
    _load(wh, "b", [f"chunk {i}" for i in range(50)], vectors)
    repo = str(Path(__file__).resolve().parents[2])
    subprocess.run([sys.executable, "-c", _CRASHING_REFRESH, str(wh.path), repo], check=True, timeout=120)
    assert search_path(wh.path).with_name(search_path(wh.path).name + ".wal").exists()
    index = SearchIndex(wh)
    with index.connection() as con:
        hits = [index.nearest(con, vectors[i].tolist(), 1) for i in range(50)]
    assert [h[0][0]["chunk_id"] if h else None for h in hits] == [f"c{i}" for i in range(50)]
    index.close()


def test_the_warehouse_itself_holds_no_search_index(wh, tmp_path):
    _load(wh, "a", ["alpha"], _vectors(1))
    assert search(wh, "alpha")
    SearchIndex(wh).close()
    con = duckdb.connect(str(wh.path), read_only=True)  # no extension loaded, as an analyst's tool
    schemas = {r[0] for r in con.execute("SELECT schema_name FROM duckdb_schemas()").fetchall()}
    indexes = con.execute("SELECT count(*) FROM duckdb_indexes()").fetchone()
    con.close()
    assert not any(s.startswith("fts_") for s in schemas) and indexes == (0,)
    assert search_path(wh.path).exists()


def test_a_deleted_or_corrupt_search_file_is_rebuilt(wh):
    _load(wh, "a", ["alpha beta"])
    assert search(wh, "beta")
    SearchIndex(wh).close()
    search_path(wh.path).write_bytes(b"not a duckdb file")
    assert [h.chunk_id for h in search(wh, "beta")] == ["c0"]
    SearchIndex(wh).close()
    search_path(wh.path).unlink()
    assert [h.chunk_id for h in search(wh, "alpha")] == ["c0"]
    SearchIndex(wh).close()
