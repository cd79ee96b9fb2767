"""Writing rows into the warehouse: batched inserts, one transaction, a document's rows cleared,
the quality gate's verdict and the inbox's file sightings stored.

Functions over an open connection (``Warehouse.write`` gives them one in a transaction); table
names are the only SQL built from values, checked against ``_WRITABLE`` first.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import re
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import duckdb
import pandas as pd

from dagster_ocr.ingest import FileSighting
from dagster_ocr.model import DocStatus

_SURROGATE = re.compile("[\ud800-\udfff]")

#: tables holding one document's parsed content (replaced together by ``write_document``)
CONTENT_TABLES = (
    "pages",
    "lines",
    "sections",
    "paragraphs",
    "tables",
    "table_cells",
    "ocr_decode_stats",
    "text_conservation",
)

#: the private tables a long document's rows wait in, by the table they are for
_STAGED = {table: f"_load_{table}" for table in ("documents", *CONTENT_TABLES)}


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(tzinfo=None)


#: every table a write may name; table names are the only SQL this module builds from values
_WRITABLE = frozenset(
    (*CONTENT_TABLES, "documents", "quality_results", "kb_chunks", "approvals", "files", *_STAGED.values())
)


def _utf8(value: Any) -> Any:
    # a lone surrogate (broken /ToUnicode, undecodable file name) fails DuckDB's UTF-8 conversion
    # and with it the whole document's write: replace it instead
    if isinstance(value, str) and not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return _SURROGATE.sub("\ufffd", value)
    return value


def _utf8_row(row: dict[str, Any]) -> dict[str, Any]:
    """``row`` with ``_utf8`` applied to its values: the row itself when no value is a non-ASCII
    string (nearly every row; a call per value was 780k calls for the two 10-K reports)."""
    for v in row.values():
        if isinstance(v, str) and not v.isascii():
            return {k: _utf8(v) for k, v in row.items()}
    return row


#: rows per DataFrame handed to DuckDB
_INSERT_BATCH = 20_000


def _insert(con: duckdb.DuckDBPyConnection, table: str, rows: Sequence[dict[str, Any]]) -> None:
    if table not in _WRITABLE:
        raise ValueError(f"not a warehouse table: {table!r}")
    if not rows:
        return
    # in batches: a DataFrame of every line of a 5,000-page document is a few hundred MB on top of
    # the rows themselves; one batch at a time keeps the load's memory flat in document length
    for start in range(0, len(rows), _INSERT_BATCH):
        batch = rows[start : start + _INSERT_BATCH]
        frame = pd.DataFrame.from_records([_utf8_row(row) for row in batch])
        con.register("_rows", frame)
        try:
            # BY NAME: the DataFrame may carry a subset of the columns, in any order
            con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM _rows")
        finally:
            con.unregister("_rows")


@contextlib.contextmanager
def _atomic(con: duckdb.DuckDBPyConnection) -> Iterator[duckdb.DuckDBPyConnection]:
    """One transaction on ``con``: committed when the block ends, rolled back when it raises."""
    con.execute("BEGIN TRANSACTION")
    try:
        yield con
    except BaseException:
        con.execute("ROLLBACK")
        raise
    con.execute("COMMIT")


def _insert_rows(
    con: duckdb.DuckDBPyConnection,
    rows: Iterable[tuple[str, list[dict[str, Any]]]],
    counts: dict[str, int],
    into: dict[str, str] | None = None,
) -> None:
    """Insert (table, batch) pairs, each into ``into[table]`` when given; count rows per table."""
    for table, batch in rows:
        _insert(con, (into or {}).get(table, table), batch)
        counts[table] += len(batch)


def _clear_document(con: duckdb.DuckDBPyConnection, doc_id: str, known_only: bool = False) -> None:
    """Delete a document's parsed rows, and what a new parse invalidates (its verdicts and its
    knowledge-base chunks).

    ``known_only`` (the lake): when the document has no ``documents`` row it has no content rows
    either (they are only ever written with it, in one transaction), so only the tables written
    apart from it are cleared. On DuckLake each DELETE costs a round of catalog queries (about
    40 ms here, 11 tables: half a second per document), which a first load would pay for nothing.
    """
    tables: tuple[str, ...] = (*CONTENT_TABLES, "documents", "quality_results", "kb_chunks")
    if known_only:
        (n,) = con.execute("SELECT count(*) FROM documents WHERE doc_id = ?", [doc_id]).fetchone() or (0,)
        if not n:
            tables = ("quality_results", "kb_chunks")
    for table in tables:  # constants only
        con.execute(f"DELETE FROM {table} WHERE doc_id = ?", [doc_id])


def store_gate(
    con: duckdb.DuckDBPyConnection,
    doc_id: str,
    results: Sequence[dict[str, Any]],
    status: DocStatus,
    error: str | None,
) -> None:
    """Replace the document's ``quality_results`` and set its verdict, on ``con`` (in its transaction)."""
    con.execute("DELETE FROM quality_results WHERE doc_id = ?", [doc_id])
    now = _now()
    _insert(con, "quality_results", [{**r, "doc_id": doc_id, "evaluated_at": now} for r in results])
    con.execute("UPDATE documents SET status = ?, error = ? WHERE doc_id = ?", [str(status), error, doc_id])


def _record_files(
    con: duckdb.DuckDBPyConnection,
    hashed: Sequence[FileSighting],
    unhashed: Sequence[FileSighting],
    seen_by: str,
) -> dict[str, int]:
    """``Warehouse.record_files``'s transaction (a lake may run it again after a write conflict)."""
    counts = {"inserted": 0, "updated": 0}
    known: dict[tuple[str, str], dt.datetime] = {}
    first_path: dict[str, str] = {}
    if hashed:
        ids = sorted({s.doc_id for s in hashed if s.doc_id})
        rows = con.execute(
            "SELECT path, doc_id, first_seen FROM files WHERE doc_id IN (SELECT unnest(?)) "
            "ORDER BY first_seen, path",
            [ids],
        ).fetchall()
        for path, doc_id, first_seen in rows:
            known[(path, doc_id)] = first_seen
            first_path.setdefault(doc_id, path)
    new_rows: list[dict[str, Any]] = []
    updates: list[FileSighting] = []
    # in the order seen (a pending sighting from an earlier scan first): the first path
    # seen with given bytes is the original, every later one its duplicate
    for s in sorted(hashed, key=lambda s: s.seen_at):
        key = (s.path, str(s.doc_id))
        if key in known:
            updates.append(s)
            continue
        original = first_path.setdefault(str(s.doc_id), s.path)
        known[key] = s.seen_at
        new_rows.append(
            {
                "path": s.path,
                "file_name": s.file_name,
                "size": s.size,
                "mtime": s.mtime,
                "doc_id": s.doc_id,
                "first_seen": s.seen_at,
                "last_seen": s.seen_at,
                "duplicate_of": None if original == s.path else original,
                "last_seen_by": seen_by,
            }
        )
    _insert(con, "files", new_rows)
    counts["inserted"] = len(new_rows)
    for s in updates:
        (n,) = con.execute(
            "UPDATE files SET last_seen = greatest(last_seen, ?), size = ?, mtime = ?, "
            "file_name = ?, last_seen_by = ? WHERE path = ? AND doc_id = ?",
            [s.seen_at, s.size, s.mtime, s.file_name, seen_by, s.path, s.doc_id],
        ).fetchone() or (0,)
        counts["updated"] += int(n)
    for s in unhashed:
        (n,) = con.execute(
            "UPDATE files SET last_seen = greatest(last_seen, ?), last_seen_by = ? "
            "WHERE path = ? AND size = ? AND mtime = ?",
            [s.seen_at, seen_by, s.path, s.size, s.mtime],
        ).fetchone() or (0,)
        counts["updated"] += int(n)
    return counts
