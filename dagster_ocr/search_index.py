"""The knowledge base's search file: BM25 from DuckDB's fts extension, vectors in a vss HNSW index.

A derived file beside the warehouse (``<stem>.search.duckdb``), never a table in the warehouse
itself, for two measured reasons (docs/benchmarks-history.md, issue 23):

- An HNSW index persisted in a file breaks when a process without vss opens the file and writes:
  measured, a writer died leaving a write-ahead log, a plain DuckDB opened the file, added a row to
  another table and closed it, and nearest-neighbour queries afterwards returned nothing. Without
  vss such a process cannot write the indexed table either ("unknown index type 'HNSW'"). The
  warehouse is opened and written by analysts' tools, which do not load vss; the search file is
  opened only here, by ATTACH into a connection that has loaded fts and vss first.
- fts indexes are not maintained on insert: ``PRAGMA create_fts_index`` rebuilds the whole index.
  Keeping it apart lets a refresh run when a search needs it, not on every document's write.

The file holds the chunks of parsed documents (with what a hit cites), their pre-tokenized text,
their current vectors (a vector whose ``text_md5`` no longer matches its chunk's text is left out)
and a fingerprint per document. :meth:`SearchIndex.refresh` compares the fingerprints with the
warehouse's, replaces the rows of documents that changed (the HNSW index follows inserts and
deletes), and rebuilds the fts index when anything changed. The file is derived: delete it and the
next search rebuilds it.

A lake (``dagster_ocr.lake``) has no such file to stat and no index in its tables: the search file
lives in the lake's local folder, is checked when the lake's snapshot id moved, and is refreshed
from one pinned snapshot (every read of a refresh sees the same commit, however many writers
commit meanwhile); ``meta.lake_snapshot`` records the version it was built from.
"""

from __future__ import annotations

import contextlib
import logging
import re
import threading
import time
import unicodedata
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pandas as pd

from dagster_ocr import duck, embeddings
from dagster_ocr.duck import sql_str as _sql_str
from dagster_ocr.warehouse import Warehouse, search_path  # noqa: F401 - search_path re-exported

# search tokens: the knowledge base's chunks and queries are tokenized alike (kb.search)
_WORD = re.compile(r"[^\W_]+")
# scripts written without spaces: every character is a token (unigrams), so a query in Chinese
# or Japanese matches without a segmenter
_UNSPACED = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]")


# a fiscal or calendar year written as one word, as analysts write it: FY2018, FY18, CY2023
_YEAR_WORD = re.compile(r"(fy|cy)(\d{2}|\d{4})")


def tokenize(text: str) -> list[str]:
    """Search tokens: NFKC-folded, lower-cased runs of letters and digits; CJK split per character.

    "FY2018" and "FY18" are the tokens "fy" and "2018", as "FY 2018" is: a report prints the
    year ("Fiscal 2018", "2018"), and a question that names it this way ("capital expenditure in
    FY2018", the form analysts write) otherwise matched no page by its year, nor named one
    (:func:`dagster_ocr.kb_search.named_documents` reads years from these tokens). Two digits are
    a year of this century below 70 ("FY18": 2018), else of the last ("FY98": 1998)."""
    out: list[str] = []
    for word in _WORD.findall(unicodedata.normalize("NFKC", text or "").casefold()):
        if _UNSPACED.search(word):
            # keep Latin/digit runs whole, split the unspaced script into characters
            out.extend(t for t in re.split(f"({_UNSPACED.pattern})", word) if t)
        elif year := _YEAR_WORD.fullmatch(word):
            digits = year.group(2)
            if len(digits) == 2:
                digits = f"{20 if int(digits) < 70 else 19}{digits}"
            out += [year.group(1), digits]
        else:
            out.append(word)
    return out


log = logging.getLogger(__name__)

#: what a search hit carries, copied from kb_chunks (and documents.file_name)
HIT_COLUMNS = (
    "doc_id",
    "file_name",
    "chunk_id",
    "source_kind",
    "source_id",
    "section_title",
    "page_index",
    "page_label",
    "last_page_label",
    "citation",
    "text",
)

#: the stemmers DuckDB's fts extension knows ('none': words as they are)
STEMMERS = (
    "none",
    "porter",
    "arabic",
    "basque",
    "catalan",
    "danish",
    "dutch",
    "english",
    "finnish",
    "french",
    "german",
    "greek",
    "hindi",
    "hungarian",
    "indonesian",
    "irish",
    "italian",
    "lithuanian",
    "nepali",
    "norwegian",
    "portuguese",
    "romanian",
    "russian",
    "serbian",
    "spanish",
    "swedish",
    "tamil",
    "turkish",
)

#: bump when the file's layout or its tokens change (:func:`tokenize`): an older file is rebuilt from
#: scratch (3: fiscal years written as one word are split; 4: vectors carry ``centroid``)
LAYOUT_VERSION = 4

_CREATE = f"""
CREATE TABLE IF NOT EXISTS meta (key VARCHAR PRIMARY KEY, value VARCHAR);
CREATE TABLE IF NOT EXISTS state (doc_id VARCHAR PRIMARY KEY, fingerprint VARCHAR NOT NULL);
CREATE TABLE IF NOT EXISTS chunks (
    rid BIGINT PRIMARY KEY, doc_id VARCHAR, file_name VARCHAR, chunk_id VARCHAR, source_kind VARCHAR,
    source_id VARCHAR, section_title VARCHAR, page_index INTEGER, page_label VARCHAR,
    last_page_label VARCHAR, citation VARCHAR, text VARCHAR,
    body VARCHAR  -- the section title and text as search tokens, space-separated (tokenize)
);
CREATE TABLE IF NOT EXISTS vectors (
    rid BIGINT NOT NULL, embedding FLOAT[{embeddings.DIM}] NOT NULL,
    centroid FLOAT NOT NULL  -- dot product with its document's mean vector (centroid_similarity)
);
"""

#: built over the rows present when created (in parallel), then kept up by every insert and delete
_CREATE_HNSW = (
    "CREATE INDEX IF NOT EXISTS vectors_hnsw ON vectors USING HNSW (embedding) WITH (metric = 'cosine')"
)

#: per parsed document: what its chunks and vectors are now (a re-load stamps new loaded_at/embedded_at)
_FINGERPRINTS = """
WITH c AS (SELECT doc_id, count(*) AS n, max(loaded_at) AS t FROM kb_chunks GROUP BY doc_id),
     e AS (SELECT doc_id, count(*) AS n, max(embedded_at) AS t FROM kb_embeddings WHERE model = ?
           GROUP BY doc_id)
SELECT d.doc_id, concat_ws('/', c.n, c.t, coalesce(e.n, 0), e.t, d.file_name) AS fingerprint
FROM documents d JOIN c USING (doc_id) LEFT JOIN e USING (doc_id)
WHERE d.status = 'parsed'
"""

_DOC_CHUNKS = """
SELECT k.doc_id, d.file_name, k.chunk_id, k.source_kind, k.source_id, k.section_title, k.page_index,
       k.page_label, k.last_page_label, k.citation, k.text, k.context
FROM kb_chunks k JOIN documents d USING (doc_id)
WHERE k.doc_id IN (SELECT unnest(?::VARCHAR[]))
ORDER BY k.doc_id, k.chunk_id
"""

_DOC_VECTORS = """
SELECT e.doc_id, e.chunk_id, e.embedding
FROM kb_embeddings e JOIN kb_chunks k
  ON k.doc_id = e.doc_id AND k.chunk_id = e.chunk_id AND md5(k.text) = e.text_md5
WHERE e.model = ? AND e.doc_id IN (SELECT unnest(?::VARCHAR[]))
"""

#: documents copied per batch on refresh
_DOC_BATCH = 200


#: this process's open read connections: search file -> ((warehouse stat, stemmer), connection)
_OPEN: dict[Path, tuple[tuple[Any, ...], duckdb.DuckDBPyConnection]] = {}
_OPEN_LOCK = threading.Lock()


#: DuckDB threads of a read connection. One: a query's ``match_bm25`` sums each chunk's per-term
#: scores in a hash aggregate, and with two threads the order of that sum, so the last bits of a
#: score, changed from call to call; equal scores then broke their tie by document and chunk
#: differently each time (the same query's top 10 differed in 4 of 193 queries at 100,000 chunks).
#: One thread also took less CPU per query (38 against 46 ms p50 at 100,000 chunks,
#: docs/benchmarks-history.md, issue 23, session 10). Refreshes (the writer) keep DuckDB's default:
#: the HNSW and fts builds are parallel.
READ_THREADS = 1

#: candidates the HNSW search keeps while it walks the graph (vss's ``hnsw_ef_search``, default 64).
#: At 100,000 chunks the default found 0.85 of the exact top 10; 128: 0.95, 200: 0.97, 400: 1.00 of
#: 60 probes, for 3.2, 4.4, 5.4 and 7.8 ms of CPU per search (docs/benchmarks-history.md, issue 23,
#: session 10)
HNSW_EF_SEARCH = 400


def _open(path: Path, read_only: bool) -> duckdb.DuckDBPyConnection:
    # extensions first, then ATTACH: the file's write-ahead log is replayed with vss loaded
    con = duckdb.connect(config={"threads": READ_THREADS} if read_only else {})
    try:
        duck.load(con, "fts", "vss")
        con.execute("SET hnsw_enable_experimental_persistence = true")
        if read_only:  # GLOBAL: searches run on cursors of this connection
            con.execute(f"SET GLOBAL hnsw_ef_search = {int(HNSW_EF_SEARCH)}")
        con.execute(f"ATTACH '{_sql_str(path)}' AS search" + (" (READ_ONLY)" if read_only else ""))
        con.execute("USE search")
    except BaseException:
        con.close()
        raise
    return con


def _is_lock_error(exc: Exception) -> bool:
    return "lock" in str(exc).lower()


class SearchIndex:
    """The search file of one warehouse: refreshed from it, then ranked with fts and HNSW."""

    def __init__(self, warehouse: Warehouse, stemmer: str = "porter", lock_wait_s: float = 60.0):
        if stemmer not in STEMMERS:
            raise ValueError(f"unknown fts stemmer {stemmer!r}: one of {', '.join(STEMMERS)}")
        self.warehouse = warehouse
        self.path = warehouse.search_file
        self.stemmer = stemmer
        self.lock_wait_s = lock_wait_s
        #: store fts's postings in term order (see ``sort_postings``); off only to measure without it
        self.sort_postings = True

    # ---- freshness ------------------------------------------------------------------------------

    def _wanted(self, source: Warehouse | None = None) -> dict[str, str]:
        try:
            rows = (source or self.warehouse).query(_FINGERPRINTS, [embeddings.MODEL_NAME])
        except duckdb.CatalogException:  # a warehouse from before kb_embeddings: no document to search
            return {}
        return dict(zip(rows["doc_id"], rows["fingerprint"], strict=True))

    def _current(self, con: duckdb.DuckDBPyConnection, wanted: dict[str, str]) -> bool:
        meta = dict(con.execute("SELECT key, value FROM meta").fetchall())
        if meta.get("layout") != str(LAYOUT_VERSION) or meta.get("stemmer") != self.stemmer:
            return False
        if meta.get("fts_generation") != meta.get("generation"):
            return False
        have = dict(con.execute("SELECT doc_id, fingerprint FROM state").fetchall())
        return have == wanted

    @contextlib.contextmanager
    def connection(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A cursor on a search file that matches the warehouse now (refreshed first if not).

        The read connection stays open in this process while the warehouse file is unchanged, as
        loading the two signed extensions costs 0.3-0.7 s per connection; another process that must
        refresh the file waits for it (``lock_wait_s``), so long-lived processes should search
        through one ``SearchIndex`` at a time.
        """
        with _OPEN_LOCK:
            con = self._fresh_connection()
            cursor = con.cursor()
        try:
            cursor.execute("USE search")  # a cursor starts in the in-memory catalog
            yield cursor
        finally:
            cursor.close()

    def _fresh_connection(self) -> duckdb.DuckDBPyConnection:
        # the warehouse file and its write-ahead log as they are on disk (a lake: its snapshot id):
        # unchanged means nothing to check
        key = self.warehouse.change_key()
        cached = _OPEN.get(self.path)
        if cached is not None and cached[0] == (key, self.stemmer):
            return cached[1]
        source = self.warehouse.pinned(key)
        try:
            return self._fresh_from(source, key, cached)
        finally:
            source.close()

    def _fresh_from(
        self,
        source: Warehouse,
        key: tuple[Any, ...],
        cached: tuple[tuple[Any, ...], duckdb.DuckDBPyConnection] | None,
    ) -> duckdb.DuckDBPyConnection:
        wanted = self._wanted(source)
        if cached is not None:
            try:
                if self._current(cached[1], wanted):
                    _OPEN[self.path] = ((key, self.stemmer), cached[1])
                    return cached[1]
            except duckdb.Error:
                pass
            _OPEN.pop(self.path)[1].close()
        con: duckdb.DuckDBPyConnection | None = None
        if self.path.exists():
            try:
                con = self._retry(lambda: _open(self.path, read_only=True))
                if not self._current(con, wanted):
                    con.close()
                    con = None
            except duckdb.Error:  # unreadable (another layout, a torn file): rebuilt below
                if con is not None:
                    con.close()
                con = None
        if con is None:
            writer = self._open_writer()
            try:
                self._refresh(writer, wanted, source=source)
            finally:
                writer.close()
            con = self._retry(lambda: _open(self.path, read_only=True))
        _OPEN[self.path] = ((key, self.stemmer), con)
        return con

    def close(self) -> None:
        """Close this process's read connection to the search file (a later search reopens it)."""
        with _OPEN_LOCK:
            cached = _OPEN.pop(self.path, None)
            if cached is not None:
                cached[1].close()

    def refresh(self) -> dict[str, Any]:
        """Bring the search file up to date with the warehouse; returns what it did."""
        self.close()
        source = self.warehouse.pinned(self.warehouse.change_key())
        con = self._open_writer()
        try:
            return self._refresh(con, self._wanted(source), source=source)
        finally:
            con.close()
            source.close()

    def _open_writer(self) -> duckdb.DuckDBPyConnection:
        try:
            return self._retry(lambda: _open(self.path, read_only=False))
        except duckdb.Error as exc:
            if _is_lock_error(exc):
                raise
            # not a DuckDB file, or torn: the file is derived, so it is rebuilt from the warehouse
            log.warning("search file %s unreadable (%s): rebuilding it", self.path, exc)
            for p in (self.path, self.path.with_name(self.path.name + ".wal")):
                p.unlink(missing_ok=True)
            return self._retry(lambda: _open(self.path, read_only=False))

    def _retry(self, opener: Callable[[], duckdb.DuckDBPyConnection]) -> duckdb.DuckDBPyConnection:
        # another process refreshing the file holds its lock for the refresh's length: wait for it
        deadline = time.monotonic() + self.lock_wait_s
        delay = 0.05
        while True:
            try:
                return opener()
            except duckdb.IOException as exc:
                if not _is_lock_error(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(delay)
                delay = min(delay * 2, 1.0)

    def _refresh(
        self,
        con: duckdb.DuckDBPyConnection,
        wanted: dict[str, str],
        checkpoint: bool = True,
        source: Warehouse | None = None,
    ) -> dict[str, Any]:
        """Bring the file to ``wanted`` (fingerprints per document) with rows read from ``source``
        (the warehouse, or the lake snapshot the fingerprints were read at)."""
        source = source or self.warehouse
        started = time.perf_counter()
        meta = dict(con.execute("SELECT key, value FROM meta").fetchall()) if _has_meta(con) else {}
        if meta.get("layout") not in (None, str(LAYOUT_VERSION)):
            for table in ("vectors", "chunks", "state", "meta"):  # constants only
                con.execute(f"DROP TABLE IF EXISTS {table}")
            meta = {}
        con.execute(_CREATE)
        have = dict(con.execute("SELECT doc_id, fingerprint FROM state").fetchall())
        changed = sorted(d for d, fp in wanted.items() if have.get(d) != fp)
        gone = sorted(set(have) - set(wanted))
        figures: dict[str, Any] = {"documents_changed": len(changed), "documents_removed": len(gone)}
        generation = int(meta.get("generation") or 0)
        if changed or gone or not meta:
            generation += 1
            con.execute("BEGIN TRANSACTION")
            try:
                self._replace(con, changed, gone, wanted, figures, source)
                con.executemany(
                    "INSERT OR REPLACE INTO meta VALUES (?, ?)",
                    [["layout", str(LAYOUT_VERSION)], ["generation", str(generation)]],
                )
            except BaseException:
                con.execute("ROLLBACK")
                raise
            con.execute("COMMIT")
        if (
            meta.get("fts_generation") != str(generation)
            or meta.get("stemmer") != self.stemmer
            or changed
            or gone
        ):
            fts_started = time.perf_counter()
            # body is already tokenize's tokens: split on whitespace only, fold accents and case
            # (a PRAGMA takes no parameters: the stemmer is checked against fts's own list)
            con.execute(
                f"PRAGMA create_fts_index('chunks', 'rid', 'body', stemmer = '{self.stemmer}', "
                "stopwords = 'none', ignore = '\\s+', strip_accents = 1, lower = 1, overwrite = 1)"
            )
            if self.sort_postings:
                sort_postings(con)
            con.executemany(
                "INSERT OR REPLACE INTO meta VALUES (?, ?)",
                [["fts_generation", str(generation)], ["stemmer", self.stemmer]],
            )
            figures["fts_seconds"] = round(time.perf_counter() - fts_started, 3)
        if checkpoint:  # (tests leave it out to stand for a crash before it)
            con.execute("CHECKPOINT")
        if source.is_lake:  # the snapshot the file now reflects (``dagster-ocr doctor`` shows it)
            snapshot = str(source.change_key()[1])
            con.execute("INSERT OR REPLACE INTO meta VALUES ('lake_snapshot', ?)", [snapshot])
            figures["lake_snapshot"] = int(snapshot)
        figures["seconds"] = round(time.perf_counter() - started, 3)
        if changed or gone:
            log.info("search file %s refreshed: %s", self.path, figures)
        return figures

    def _replace(
        self,
        con: duckdb.DuckDBPyConnection,
        changed: list[str],
        gone: list[str],
        wanted: dict[str, str],
        figures: dict[str, Any],
        source: Warehouse,
    ) -> None:
        drop = changed + gone
        if con.execute("SELECT count(*) FROM vectors").fetchone() == (0,):
            # an empty file: one bulk build after the inserts is several times cheaper than inserting
            # every vector into a live index
            con.execute("DROP INDEX IF EXISTS vectors_hnsw")
        if drop:
            con.execute(
                "DELETE FROM vectors WHERE rid IN (SELECT rid FROM chunks WHERE doc_id IN "
                "(SELECT unnest(?::VARCHAR[])))",
                [drop],
            )
            con.execute("DELETE FROM chunks WHERE doc_id IN (SELECT unnest(?::VARCHAR[]))", [drop])
            con.execute("DELETE FROM state WHERE doc_id IN (SELECT unnest(?::VARCHAR[]))", [drop])
        (next_rid,) = con.execute(
            "SELECT greatest((SELECT coalesce(max(rid), -1) FROM chunks), "
            "(SELECT coalesce(max(rid), -1) FROM vectors)) + 1"
        ).fetchone() or (0,)
        n_chunks = n_vectors = 0
        for start in range(0, len(changed), _DOC_BATCH):
            docs = changed[start : start + _DOC_BATCH]
            frames = source.read({"chunks": _DOC_CHUNKS}, [docs])
            rows = frames["chunks"]
            rows.insert(0, "rid", range(next_rid, next_rid + len(rows)))
            next_rid += len(rows)
            # what a chunk is about besides its words: its document (issuer, type, year: "Tesla
            # 2023" finds Tesla's 10-K) and its section path ("Fees and Payment" finds clause 4.x)
            rows["body"] = [
                " ".join(tokenize(f"{c if isinstance(c, str) else (t if isinstance(t, str) else '')} {x}"))
                for t, c, x in zip(rows["section_title"], rows["context"], rows["text"], strict=True)
            ]
            rows = rows.drop(columns=["context"])
            _append(con, "chunks", rows)
            n_chunks += len(rows)
            vectors = source.query(_DOC_VECTORS, [embeddings.MODEL_NAME, docs])
            if len(vectors):
                rid_of = {
                    (d, c): r for d, c, r in zip(rows["doc_id"], rows["chunk_id"], rows["rid"], strict=True)
                }
                vectors["rid"] = [
                    rid_of[(d, c)] for d, c in zip(vectors["doc_id"], vectors["chunk_id"], strict=True)
                ]
                vectors["centroid"] = centroid_similarity(vectors)
                con.register("_vectors", vectors[["rid", "embedding", "centroid"]])
                try:
                    con.execute(
                        f"INSERT INTO vectors SELECT rid, embedding::FLOAT[{embeddings.DIM}], centroid "
                        "FROM _vectors"
                    )
                finally:
                    con.unregister("_vectors")
                n_vectors += len(vectors)
            con.executemany("INSERT INTO state VALUES (?, ?)", [[d, wanted[d]] for d in docs])
        con.execute(_CREATE_HNSW)
        figures["chunks_copied"] = n_chunks
        figures["vectors_copied"] = n_vectors

    # ---- ranking --------------------------------------------------------------------------------

    def bm25(
        self,
        con: duckdb.DuckDBPyConnection,
        terms: Sequence[str],
        n: int,
        k1: float,
        b: float,
        doc_ids: Sequence[str] | None = None,
    ) -> list[tuple[dict[str, Any], float]]:
        """The ``n`` best chunks by fts's ``match_bm25`` (best first, ties by document and chunk).

        The top ``n`` are picked carrying ``rid``, ``doc_id`` and ``chunk_id`` only (the tie
        order), then their hit columns (the chunk's text among them) are looked up by ``rid``:
        carrying every chunk's columns through the scoring made each query read the whole table
        (docs/benchmarks-history.md, issue 23, session 8), and materializing every chunk's score before
        the cut took 4-5x the CPU of the top-n at 100,000 chunks (session 10). Same scores, same order.
        """
        return _ranked(con.execute(*bm25_query(terms, n, k1, b, doc_ids)).df())

    def nearest(
        self,
        con: duckdb.DuckDBPyConnection,
        vector: Sequence[float],
        n: int,
        doc_ids: Sequence[str] | None = None,
        centring: float = 0.0,
    ) -> list[tuple[dict[str, Any], float]] | None:
        """The ``n`` chunks nearest by cosine: the HNSW index over every chunk, or an exact scan of
        the named documents' vectors (a filter after an approximate top-n could leave too few).
        ``centring``: the weight of each chunk's ``centroid`` taken off its cosine (:func:`nearest_query`).
        None when no chunk has a vector."""
        if con.execute("SELECT count(*) FROM vectors").fetchone() == (0,):
            return None
        return _ranked(con.execute(*nearest_query(vector, n, doc_ids, centring)).df())


def bm25_query(
    terms: Sequence[str], n: int, k1: float, b: float, doc_ids: Sequence[str] | None = None
) -> tuple[str, list[Any]]:
    """The SQL and parameters of :meth:`SearchIndex.bm25` (tests read its plan and compare it with
    ``match_bm25`` over the whole table)."""
    where, params = "", [" ".join(terms), k1, b]
    if doc_ids is not None:
        where = "WHERE doc_id IN (SELECT unnest(?::VARCHAR[]))"
        params = [*params, list(doc_ids)]
    sql = f"""
        WITH top AS (
            SELECT rid, score FROM (
                SELECT rid, doc_id, chunk_id, fts_main_chunks.match_bm25(rid, ?, k := ?, b := ?) AS score
                FROM chunks {where}
            ) WHERE score IS NOT NULL
            ORDER BY score DESC, doc_id, chunk_id LIMIT {int(n)}
        )
        SELECT {", ".join("c." + c for c in HIT_COLUMNS)}, top.score
        FROM top JOIN chunks c USING (rid)
        ORDER BY top.score DESC, c.doc_id, c.chunk_id
        """
    return sql, params


def nearest_query(
    vector: Sequence[float], n: int, doc_ids: Sequence[str] | None = None, centring: float = 0.0
) -> tuple[str, list[Any]]:
    """The SQL and parameters of :meth:`SearchIndex.nearest`.

    A chunk's score is its cosine to the question less ``centring`` times its dot product with its
    document's mean vector (``vectors.centroid``): the similarity centred on the document
    (Suzuki et al., "Centering Similarity Measures to Reduce Hubs", EMNLP 2013). Every chunk of a
    document shares its issuer, year and much of its words, so some chunks (a one-line paragraph
    read with its context line, "Selling, general and administrative expense increased $1.2
    billion") lie near the middle of the document and so near every question about it: they came
    up among the first five for questions about cash flows, taxes and research spending alike.
    Centred, the part of a question every chunk answers counts for less, what sets a chunk apart
    for more. Over every chunk the HNSW index finds ``2n`` nearest by cosine, re-ranked centred.

    Over every chunk the query vector is one parameter and the ORDER BY names the distance's
    alias: vss replaces ``ORDER BY array_cosine_distance(embedding, <constant>) LIMIT n`` with its
    HNSW index scan only when it sees that one expression; written with the vector passed twice
    (two parameters, so two expressions) the plan was an exact scan of every vector (0.15-0.4 s of
    CPU at 100,000 chunks against 5 ms through the index; docs/benchmarks-history.md, issue 23, session 10).
    """
    q = f"?::FLOAT[{embeddings.DIM}]"
    if doc_ids is None:
        sql = f"""
            SELECT {", ".join("c." + c for c in HIT_COLUMNS)}, 1 - v.distance - ? * v.centroid AS score
            FROM (SELECT rid, centroid, array_cosine_distance(embedding, {q}) AS distance FROM vectors
                  ORDER BY distance LIMIT {2 * int(n)}) v
            JOIN chunks c USING (rid)
            ORDER BY score DESC, c.doc_id, c.chunk_id LIMIT {int(n)}"""
        return sql, [float(centring), list(vector)]
    sql = f"""
        SELECT {", ".join("c." + c for c in HIT_COLUMNS)},
               array_cosine_similarity(v.embedding, {q}) - ? * v.centroid AS score
        FROM vectors v JOIN chunks c USING (rid)
        WHERE c.doc_id IN (SELECT unnest(?::VARCHAR[]))
        ORDER BY score DESC, c.doc_id, c.chunk_id LIMIT {int(n)}"""
    return sql, [list(vector), float(centring), list(doc_ids)]


def centroid_similarity(vectors: pd.DataFrame) -> np.ndarray:
    """Each unit vector's dot product with the mean of its document's unit vectors (``doc_id``,
    ``embedding``): the ``centroid`` :func:`nearest_query` centres a score with (for a question
    ``q``, ``(q - mean) . (v - mean)`` ranks a document's chunks as ``q . v - mean . v`` does). A
    document's vectors are copied together (its fingerprint names them all), so the mean is over the
    document as it is now."""
    out = np.zeros(len(vectors), dtype=np.float32)
    for _, rows in vectors.groupby("doc_id", sort=False).indices.items():
        m = np.stack([np.asarray(v, dtype=np.float32) for v in vectors["embedding"].iloc[rows]])
        m /= np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-12)
        out[rows] = m @ m.mean(axis=0)
    return out


def sort_postings(con: duckdb.DuckDBPyConnection) -> None:
    """Rewrite the fts index's ``terms`` table (one row per token: docid, fieldid, termid) in term order.

    ``match_bm25`` selects a query's terms from it with a join whose keys DuckDB pushes into the
    scan as a filter; stored in term order, each term's rows sit in few row groups and the others
    are skipped by their min/max, instead of every row of the table being read for every query.
    Same rows, so the same scores.
    """
    con.execute(
        "CREATE OR REPLACE TABLE fts_main_chunks.terms AS FROM fts_main_chunks.terms ORDER BY termid, docid"
    )


def _has_meta(con: duckdb.DuckDBPyConnection) -> bool:
    row = con.execute(
        "SELECT count(*) FROM information_schema.tables "
        "WHERE table_catalog = 'search' AND table_name = 'meta'"
    ).fetchone()
    return bool(row and row[0])


def _append(con: duckdb.DuckDBPyConnection, table: str, frame: pd.DataFrame) -> None:
    con.register("_rows", frame)
    try:
        con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM _rows")  # constant table names only
    finally:
        con.unregister("_rows")


def _ranked(frame: pd.DataFrame) -> list[tuple[dict[str, Any], float]]:
    return [({c: row[c] for c in HIT_COLUMNS}, float(row["score"])) for row in frame.to_dict("records")]
