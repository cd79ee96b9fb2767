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
from dagster_ocr.search_index import (
    HNSW_EF_SEARCH,
    READ_THREADS,
    SearchIndex,
    bm25_query,
    nearest_query,
    search_path,
)
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
                    "INSERT INTO kb_embeddings (doc_id, chunk_id, model, text_md5, embedding, embedded_at) "
                    f"VALUES (?, ?, ?, md5(?), ?::FLOAT[{embeddings.DIM}], now())",
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
        # the product's own query: written with the vector passed twice it was an exact scan
        sql, params = nearest_query(vectors[0].tolist(), 5)
        plan = "".join(r[1] for r in con.execute("EXPLAIN " + sql, params).fetchall())
        assert "HNSW_INDEX_SCAN" in plan
        settings = "SELECT current_setting('hnsw_ef_search'), current_setting('threads')"
        assert con.execute(settings).fetchone() == (HNSW_EF_SEARCH, READ_THREADS)
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


def _corpus_texts(corpus: Path, documents: int) -> list[tuple[str, list[str]]]:
    """Text-layer chunks (about 400 characters) of the first tune PDFs of the corpus that have text."""
    import json
    import re

    import pymupdf

    manifest = json.loads((corpus / "MANIFEST.json").read_text())
    out: list[tuple[str, list[str]]] = []
    for item in manifest["files"]:
        if item.get("role") != "input" or item.get("split") != "tune" or not item["file"].endswith(".pdf"):
            continue
        try:
            with pymupdf.open(corpus / item["file"]) as doc:
                if doc.needs_pass:
                    continue
                text = re.sub(r"\s+", " ", " ".join(p.get_text() for p in doc)).strip()
        except Exception:  # a damaged input of the corpus: not a search question
            continue
        pieces = [text[i : i + 400] for i in range(0, min(len(text), 12_000), 400)]
        pieces = [p for p in pieces if len(p) > 80]
        if len(pieces) >= 3:
            out.append((f"d{len(out):02d}", pieces))
        if len(out) == documents:
            break
    return out


def test_bm25_returns_what_match_bm25_over_every_chunk_returns(wh, corpus):
    """The top-n form gives the hits, scores and tie order of plain match_bm25 over the whole table."""
    import re

    docs = _corpus_texts(corpus, 8)
    assert len(docs) == 8
    for doc_id, texts in docs:
        _load(wh, doc_id, texts)
    # one chunk's text in four more documents: equal scores, ordered by document at the cut
    for k in range(4):
        _load(wh, f"z{k}", [docs[0][1][0]])
    index = SearchIndex(wh)
    words = [w.lower() for _, texts in docs for w in re.findall(r"[^\W\d_]{5,}", " ".join(texts[:2]))]
    queries = [" ".join(words[i : i + 1 + i % 3]) for i in range(0, len(words), max(1, len(words) // 30))]
    queries.append(re.findall(r"[^\W\d_]{5,}", docs[0][1][0])[0])  # a word of the repeated chunk
    with index.connection() as con:
        plain = """
            SELECT doc_id, chunk_id, score FROM (
                SELECT doc_id, chunk_id, fts_main_chunks.match_bm25(rid, ?, k := ?, b := ?) AS score
                FROM chunks) WHERE score IS NOT NULL
            ORDER BY score DESC, doc_id, chunk_id LIMIT ?"""
        ties_cut = 0
        for q in queries:
            terms = q.split()
            for n in (3, 10):
                want = [tuple(r) for r in con.execute(plain, [q, 1.2, 0.75, n]).fetchall()]
                got = [(h["doc_id"], h["chunk_id"], s) for h, s in index.bm25(con, terms, n, 1.2, 0.75)]
                assert got == want, q
                every = con.execute(plain, [q, 1.2, 0.75, 10_000]).fetchall()
                ties_cut += len(every) > n and every[n - 1][2] == every[n][2]
            subset = ["d01", "z2", "d03"]
            want = [
                r
                for r in (tuple(r) for r in con.execute(plain, [q, 1.2, 0.75, 10_000]).fetchall())
                if r[0] in subset
            ][:5]
            got = [(h["doc_id"], h["chunk_id"], s) for h, s in index.bm25(con, terms, 5, 1.2, 0.75, subset)]
            assert got == want, q
    assert len(queries) >= 20 and ties_cut >= 1  # the cut fell inside a run of equal scores
    sql, params = bm25_query(["x"], 10, 1.2, 0.75)
    assert "match_bm25" in sql and params == ["x", 1.2, 0.75]
    index.close()


def _hub_document(seed: int = 5) -> tuple[np.ndarray, np.ndarray]:
    """A document of 40 chunks around one direction ``m``, chunk 0 exactly on it (a hub), chunk 1
    apart from the rest along ``e``; a question nearer the hub by plain cosine (0.90 against
    0.889) that is about what sets chunk 1 apart."""
    rng = np.random.default_rng(seed)
    m, e = np.zeros(embeddings.DIM, np.float32), np.zeros(embeddings.DIM, np.float32)
    m[0], e[1] = 1.0, 1.0
    noise = rng.standard_normal((40, embeddings.DIM)).astype(np.float32) * 0.02
    noise[:, :2] = 0
    vectors = m + noise
    vectors[0], vectors[1] = m, 0.6 * m + 0.8 * e
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    question = 0.9 * m + np.sqrt(1 - 0.81) * e
    return vectors, question


@pytest.mark.parametrize("one_document", [True, False])
def test_centring_ranks_the_chunk_that_sets_itself_apart_above_the_documents_middle(wh, one_document):
    vectors, question = _hub_document()
    _load(wh, "a", [f"chunk {i}" for i in range(40)], vectors)
    index = SearchIndex(wh)
    doc_ids = ["a"] if one_document else None
    with index.connection() as con:
        plain = index.nearest(con, question.tolist(), 2, doc_ids, centring=0.0)
        centred = index.nearest(con, question.tolist(), 2, doc_ids, centring=0.3)
    assert [c["chunk_id"] for c, _ in plain] == ["c0", "c1"]
    assert [c["chunk_id"] for c, _ in centred] == ["c1", "c0"]
    # the score is the cosine less 0.3 x the dot product with the document's mean vector
    mean = vectors.mean(axis=0)
    assert centred[0][1] == pytest.approx(float(question @ vectors[1] - 0.3 * vectors[1] @ mean), abs=1e-4)
    index.close()


def test_each_documents_vectors_are_centred_on_their_own_mean(wh):
    vectors, _ = _hub_document()
    _load(wh, "a", [f"chunk {i}" for i in range(40)], vectors)
    _load(wh, "b", ["far", "away"], _vectors(2, 9))
    index = SearchIndex(wh)
    with index.connection() as con:
        rows = con.execute(
            "SELECT c.doc_id, c.chunk_id, v.centroid FROM vectors v JOIN chunks c USING (rid)"
        ).fetchall()
    got = {(d, c): x for d, c, x in rows}
    mean = vectors.mean(axis=0)
    assert got[("a", "c0")] == pytest.approx(float(vectors[0] @ mean), abs=1e-5)
    b = _vectors(2, 9)
    assert got[("b", "c1")] == pytest.approx(float(b[1] @ b.mean(axis=0)), abs=1e-5)
    index.close()
