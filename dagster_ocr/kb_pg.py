"""An optional knowledge-base sink in PostgreSQL (with pgvector when the server has it).

For teams whose knowledge base outgrows one DuckDB file: :func:`sync_document` copies one
document's ``kb_chunks`` and ``kb_embeddings`` from the warehouse into PostgreSQL, replacing that
document's rows in one transaction, so a re-load is idempotent and a reader never sees half a
document. The embedding column is ``vector(384)`` when the ``vector`` extension can be created
(then :func:`search_vector` ranks with pgvector's ``<=>`` cosine distance, and an HNSW index can be
added), and ``real[]`` otherwise, so the sink still works on a server without pgvector.

Uses psycopg2 (already in the lock through Dagster's PostgreSQL storage); nothing here imports it
until a sink is used.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from dagster_ocr import embeddings
from dagster_ocr.warehouse import Warehouse


class KbPgSettings(BaseModel):
    """Where the PostgreSQL knowledge-base sink writes."""

    model_config = ConfigDict(extra="forbid")

    dsn: str = Field(
        "postgresql://postgres@127.0.0.1:5432/postgres",
        description="libpq connection string of the database that receives the knowledge base.",
    )
    schema_name: str = Field("kb", pattern=r"^[a-z_][a-z0-9_]*$", description="Schema of the sink's tables.")
    require_pgvector: bool = Field(
        False, description="Fail instead of storing embeddings as real[] when pgvector is unavailable."
    )


_CHUNK_COLUMNS = (
    "doc_id",
    "chunk_id",
    "file_name",
    "source_kind",
    "source_id",
    "section_title",
    "page_index",
    "page_label",
    "last_page_label",
    "citation",
    "text",
    "paragraph_ids",
)


class KbSink:
    """A PostgreSQL knowledge base; create it once per process, call :meth:`sync_document` per document."""

    def __init__(self, settings: KbPgSettings) -> None:
        import psycopg2

        self.settings = settings
        self._psycopg2 = psycopg2
        self.pgvector = False
        self._ensure_schema()

    @contextlib.contextmanager
    def cursor(self) -> Iterator[Any]:
        """A cursor in one transaction (committed when the block ends, rolled back on error)."""
        con = self._psycopg2.connect(self.settings.dsn)
        try:
            with con, con.cursor() as cur:
                yield cur
        finally:
            con.close()

    def _ensure_schema(self) -> None:
        s = self.settings.schema_name
        with self.cursor() as cur:
            try:
                cur.execute("SAVEPOINT ext")
                cur.execute("CREATE EXTENSION IF NOT EXISTS vector")
                self.pgvector = True
            except self._psycopg2.Error as exc:
                cur.execute("ROLLBACK TO SAVEPOINT ext")
                if self.settings.require_pgvector:
                    raise RuntimeError(f"pgvector is not available on this server: {exc}") from exc
            vector_type = f"vector({embeddings.DIM})" if self.pgvector else "real[]"
            cur.execute(f"CREATE SCHEMA IF NOT EXISTS {s}")
            cur.execute(
                f"""CREATE TABLE IF NOT EXISTS {s}.kb_chunks (
                    doc_id TEXT NOT NULL, chunk_id TEXT NOT NULL, file_name TEXT NOT NULL,
                    source_kind TEXT NOT NULL, source_id TEXT NOT NULL, section_title TEXT,
                    page_index INTEGER, page_label TEXT, last_page_label TEXT, citation TEXT NOT NULL,
                    text TEXT NOT NULL, paragraph_ids TEXT[], model TEXT, embedding {vector_type},
                    loaded_at TIMESTAMPTZ NOT NULL DEFAULT now(),
                    PRIMARY KEY (doc_id, chunk_id))"""
            )

    def sync_document(self, warehouse: Warehouse, doc_id: str) -> int:
        """Replace the document's rows in PostgreSQL with its current warehouse chunks; returns the count.

        A document that is no longer ``parsed`` (quarantined after a re-check) is removed. Chunks
        without a current embedding get a NULL one (vector search skips them, text stays findable).
        """
        rows = warehouse.query(
            f"""
            SELECT {", ".join("d.file_name" if c == "file_name" else "k." + c for c in _CHUNK_COLUMNS)},
                   e.model, e.embedding
            FROM kb_chunks k
            JOIN documents d ON d.doc_id = k.doc_id AND d.status = 'parsed'
            LEFT JOIN kb_embeddings e
              ON e.doc_id = k.doc_id AND e.chunk_id = k.chunk_id AND e.text_md5 = md5(k.text)
             AND e.model = ?
            WHERE k.doc_id = ?
            ORDER BY k.chunk_id
            """,
            [embeddings.MODEL_NAME, doc_id],
        )
        s = self.settings.schema_name
        cast = "::vector" if self.pgvector else "::real[]"
        records = []
        for r in rows.to_dict("records"):
            vector = r["embedding"]
            literal = None
            if vector is not None and len(vector):
                # pgvector's text form '[1,2,3]'; real[] takes '{1,2,3}'
                body = ",".join(f"{float(v):.7g}" for v in vector)
                literal = f"[{body}]" if self.pgvector else f"{{{body}}}"
            page_index = r["page_index"]
            records.append(
                (
                    *(None if _isna(r[c]) else r[c] for c in _CHUNK_COLUMNS[:6]),
                    None if _isna(page_index) else int(page_index),
                    *(None if _isna(r[c]) else r[c] for c in _CHUNK_COLUMNS[7:11]),
                    [str(p) for p in (r["paragraph_ids"] if r["paragraph_ids"] is not None else [])],
                    None if literal is None else r["model"],
                    literal,
                )
            )
        with self.cursor() as cur:  # one transaction
            cur.execute(f"DELETE FROM {s}.kb_chunks WHERE doc_id = %s", [doc_id])
            if records:
                placeholders = ", ".join(["%s"] * (len(_CHUNK_COLUMNS) + 1)) + f", %s{cast}"
                cur.executemany(
                    f"INSERT INTO {s}.kb_chunks ({', '.join(_CHUNK_COLUMNS)}, model, embedding) "
                    f"VALUES ({placeholders})",
                    records,
                )
        return len(records)

    def search_vector(self, query: str, limit: int = 5) -> list[dict[str, Any]]:
        """The chunks nearest to ``query`` by cosine distance (pgvector only), with their citations."""
        if not self.pgvector:
            raise RuntimeError("vector search in PostgreSQL needs the pgvector extension")
        embedder = embeddings.get_embedder()
        if embedder is None:
            raise RuntimeError(f"no embedding model: {embeddings.unavailable_reason()}")
        literal = "[" + ",".join(f"{v:.7g}" for v in embedder.embed([query])[0]) + "]"
        s = self.settings.schema_name
        with self.cursor() as cur:
            cur.execute(
                f"""SELECT doc_id, chunk_id, citation, text, 1 - (embedding <=> %s::vector) AS score
                FROM {s}.kb_chunks WHERE embedding IS NOT NULL
                ORDER BY embedding <=> %s::vector, doc_id, chunk_id LIMIT %s""",
                [literal, literal, limit],
            )
            names = [d[0] for d in cur.description]
            return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]


def _isna(value: Any) -> bool:
    try:
        return value is None or value != value  # NaN is the only value unequal to itself
    except (TypeError, ValueError):  # arrays
        return False
