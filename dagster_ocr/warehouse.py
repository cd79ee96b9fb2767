"""The DuckDB warehouse: schema from ``sql/``, atomic and idempotent writes per document.

Every write replaces one document's rows inside one transaction (delete, then insert), so a
re-run never duplicates rows and a crash mid-write leaves the previous version whole. Connections
are short-lived: DuckDB lets one process hold a file for writing, and a long-held connection
would lock analysts and other runs out (see docs/stack-facts.md, DuckDB).
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import hashlib
import json
import logging
import os
import re
import shutil
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

import duckdb
import pandas as pd

from dagster_ocr import __version__
from dagster_ocr.blocks import TablePlacement, block_sequence, place_tables, table_markdown, table_text
from dagster_ocr.conservation import TextAccountant
from dagster_ocr.docinfo import describe
from dagster_ocr.ingest import FileSighting
from dagster_ocr.model import DocStatus, ExtractedDocument, PageLabel, Paragraph, ParagraphResult, Table
from dagster_ocr.schema import create_or_upgrade

log = logging.getLogger(__name__)

T = TypeVar("T")

_SURROGATE = re.compile("[\ud800-\udfff]")

#: tables ``document_frames`` may read
READABLE_TABLES = frozenset(
    {
        "documents",
        "pages",
        "lines",
        "sections",
        "paragraphs",
        "tables",
        "table_cells",
        "ocr_decode_stats",
        "quality_results",
        "approvals",
        "kb_chunks",
        "files",
        "text_conservation",
    }
)

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

#: a document of more pages than this is staged before it replaces the old rows (``write_document``)
STAGE_ABOVE_PAGES = 256
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


#: rows per DataFrame handed to DuckDB
_INSERT_BATCH = 20_000
#: the first pages a document's title, issuer, type and period are read from (docinfo)
_INFO_PAGES = 3


def _insert(con: duckdb.DuckDBPyConnection, table: str, rows: Sequence[dict[str, Any]]) -> None:
    if table not in _WRITABLE:
        raise ValueError(f"not a warehouse table: {table!r}")
    if not rows:
        return
    # in batches: a DataFrame of every line of a 5,000-page document is a few hundred MB on top of
    # the rows themselves; one batch at a time keeps the load's memory flat in document length
    for start in range(0, len(rows), _INSERT_BATCH):
        batch = rows[start : start + _INSERT_BATCH]
        frame = pd.DataFrame.from_records([{k: _utf8(v) for k, v in row.items()} for row in batch])
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


def search_path(warehouse_path: Path) -> Path:
    """``<stem>.search.duckdb`` beside a warehouse file (a snapshot gets its own): the derived search
    file of ``dagster_ocr.search_index``."""
    return warehouse_path.with_name(warehouse_path.stem + ".search.duckdb")


#: files held open by ``Warehouse.held`` in this process: path -> the connection holding it
_HELD: dict[Path, duckdb.DuckDBPyConnection] = {}


@dataclasses.dataclass
class SnapshotRecord:
    """The snapshot's sidecar (``<stem>.snapshot.json``): what analysts' copy holds and what it cost.

    Times are epoch seconds. ``pending_writes`` counts document writes made since the snapshot was
    published (0: it is current); ``last_write_at`` is the latest of them.
    """

    published_at: float | None = None
    copy_seconds: float = 0.0
    pending_writes: int = 0
    last_write_at: float | None = None

    @classmethod
    def load(cls, path: Path) -> SnapshotRecord:
        try:
            return cls(**json.loads(path.read_text()))
        except (OSError, ValueError, TypeError):  # none yet, or unreadable: as if never published
            return cls()

    def save(self, path: Path) -> None:
        tmp = path.with_suffix(".json.part")
        tmp.write_text(json.dumps(dataclasses.asdict(self)))
        os.replace(tmp, path)


@dataclasses.dataclass(frozen=True, slots=True)
class Approval:
    """A reviewer's decision to let a document in despite failed checks (an ``approvals`` row)."""

    approved_by: str
    reason: str
    approved_at: dt.datetime


class Warehouse:
    """One DuckDB file. Methods open a connection, do one unit of work, and close it.

    ``dagster_ocr.lake.LakeWarehouse`` is the same interface over DuckLake (many writer processes);
    ``dagster_ocr.lake.open_warehouse`` picks one from a spec. Every write goes through ``write``,
    so the SQL is the same in both modes and only the transaction's handling differs.
    """

    #: a DuckLake catalog, not a file (no snapshot copy, no writer pool, conflicts retried)
    is_lake = False
    #: whether a long document's rows are staged before the swap (``write_document``)
    _stage_long_documents = True

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._schema_ready = False

    @property
    def location(self) -> str:
        """What to name the warehouse by in messages and commands (``--warehouse`` takes it)."""
        return str(self.path)

    def exists(self) -> bool:
        """Whether there is a warehouse to read (a file here; a catalog with tables for a lake)."""
        return self.path.exists()

    @property
    def search_file(self) -> Path:
        """Where the derived search file lives (``<stem>.search.duckdb`` beside the warehouse)."""
        return search_path(self.path)

    def change_key(self) -> tuple[Any, ...]:
        """Changes whenever the warehouse may have changed: the file and its write-ahead log as they
        are on disk (a lake: its snapshot id). Cheap, for caches of derived data."""
        key: list[Any] = []
        for p in (self.path, self.path.with_name(self.path.name + ".wal")):
            try:
                st = p.stat()
                key += [st.st_mtime_ns, st.st_size]
            except FileNotFoundError:
                key += [None, None]
        return tuple(key)

    def pinned(self, key: tuple[Any, ...]) -> Warehouse:
        """A reader of the warehouse as of ``change_key() == key``: the file itself here (its
        writers are serialized); a lake pins that snapshot version, so a series of reads sees one
        state however many writers commit meanwhile."""
        return self

    def close(self) -> None:
        """Release what this object holds open (nothing for a file: connections are per unit of work)."""

    def write(
        self, work: Callable[[duckdb.DuckDBPyConnection], T], lock: str | Sequence[str] | None = None
    ) -> T:
        """Run ``work`` in one transaction and return what it returns.

        ``lock`` names what the write replaces (a doc_id; several names: all of them): a lake
        serializes writers of the same one and retries the whole of ``work`` on a write conflict,
        so ``work`` must build its rows itself (it may run more than once). A file needs neither:
        its writers are serialized by the process lock (and by the ``duckdb_writer`` pool).
        """
        with self.transaction() as con:
            return work(con)

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        """Keep the file open while a series of units of work runs (one document's load and checks).

        Opening a DuckDB file costs ~13 ms (reading its catalog, then a checkpoint on close), and
        one document's load, checks, gate and knowledge base open it ~20 times: a quarter of the
        graph's time on short documents. Inside this block every ``connect`` is a cursor on one
        held connection (~5 us). The file stays locked against other processes for the block's
        length only, so hold it for one step, not for a run (runs write one at a time through the
        writer pool, and analysts read the snapshot).
        """
        key = self.path.resolve()
        if key in _HELD:  # nested: the outer block holds it
            yield
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        _HELD[key] = duckdb.connect(str(self.path))
        try:
            yield
        finally:
            _HELD.pop(key).close()

    @contextlib.contextmanager
    def connect(self, read_only: bool = False) -> Iterator[duckdb.DuckDBPyConnection]:
        anchor = _HELD.get(self.path.resolve()) if _HELD else None
        if anchor is not None:  # a cursor of the held connection (read_only cannot differ from it)
            con = anchor.cursor()
        else:
            if not read_only:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            con = duckdb.connect(str(self.path), read_only=read_only)
        try:
            yield con
        finally:
            con.close()

    @contextlib.contextmanager
    def transaction(self) -> Iterator[duckdb.DuckDBPyConnection]:
        with self.connect() as con, _atomic(con):
            yield con

    def ensure_schema(self) -> None:
        """Create or upgrade the file to this code's schema (once per ``Warehouse`` object): the
        baseline, the forward migrations, the views (see dagster_ocr/schema.py)."""
        if self._schema_ready:
            return
        with self.connect() as con:
            create_or_upgrade(con)
        self._schema_ready = True

    # ---- writes -------------------------------------------------------------------------------

    def write_document(
        self,
        doc: ExtractedDocument,
        labels: Sequence[PageLabel],
        tables: Sequence[Table],
        paragraphs: ParagraphResult,
        settings_json: str | None = None,
        then: Callable[[duckdb.DuckDBPyConnection], Any] | None = None,
        locks: Sequence[str] = (),
    ) -> dict[str, int]:
        """Replace everything stored for ``doc`` with this parse. Returns row counts per table.

        ``settings_json`` (the settings the parse used) is kept on the document's row, so the
        document can be re-run later with exactly that configuration. ``then`` runs on the same
        connection before the commit, seeing the new rows (the partition key and the quality
        gate's verdict, so a document's load is one commit, not three; see ``gate.load_and_judge``),
        and ``locks`` names what else it writes (for a lake's per-name locks). A long document
        staged in a file commits its batches first and runs ``then`` in the swap's transaction.
        """
        self.ensure_schema()
        extra: dict[str, Any] = {}
        if settings_json is not None:
            extra = {
                "settings_json": settings_json,
                "settings_hash": hashlib.sha256(settings_json.encode()).hexdigest()[:16],
            }
        doc_id = doc.source.doc_id
        counts = dict.fromkeys(("documents", *CONTENT_TABLES), 0)
        # rows are built and inserted a batch at a time: a long document's rows never exist all
        # at once (5,000 pages: 255,000 line rows, ~170 MB as dicts)
        if len(doc.pages) <= STAGE_ABOVE_PAGES or not self._stage_long_documents:

            def replace(con: duckdb.DuckDBPyConnection) -> None:
                counts.update(dict.fromkeys(counts, 0))  # a retried attempt counts afresh
                _clear_document(con, doc_id, known_only=self.is_lake)
                _insert_rows(con, iter_document_rows(doc, labels, tables, paragraphs, extra), counts)
                if then is not None:
                    then(con)

            # a lake does not stage: its inserts go to Parquet files as they come, not to memory
            self.write(replace, lock=(doc_id, *locks))
            return counts
        rows = iter_document_rows(doc, labels, tables, paragraphs, extra)
        # A long document: DuckDB holds an open transaction's appends in memory (at about three
        # times its own accounting: +282 MiB for 5,000 pages), so the batches are committed one by
        # one into private staging tables first, and one transaction then swaps the document's
        # rows with INSERT ... SELECT, which DuckDB writes out as it goes. Still all or nothing:
        # the real tables change only in that transaction; a crash before it leaves only staging
        # rows, which the next long write replaces. One connection throughout, so no other
        # process can open the file between the two phases.
        with self.connect() as con:
            for table, stage in _STAGED.items():  # constants only
                con.execute(f"CREATE OR REPLACE TABLE {stage} AS FROM {table} LIMIT 0")
            _insert_rows(con, rows, counts, into=_STAGED)
            with _atomic(con):
                _clear_document(con, doc_id)
                for table, stage in _STAGED.items():
                    con.execute(f"INSERT INTO {table} BY NAME FROM {stage}")
                if then is not None:
                    then(con)
            for stage in _STAGED.values():
                con.execute(f"DROP TABLE {stage}")
        return counts

    def record_gate(
        self, doc_id: str, results: Sequence[dict[str, Any]], status: DocStatus, error: str | None
    ) -> None:
        """Store the quality gate's results (rows with ``check_name``) and the verdict, in one transaction."""
        self.write(lambda con: store_gate(con, doc_id, results, status, error), lock=doc_id)

    @property
    def snapshot_path(self) -> Path:
        """The read-only copy analysts query while the pipeline writes (``<stem>.snapshot.duckdb``)."""
        return self.path.with_name(self.path.stem + ".snapshot.duckdb")

    def snapshot_record(self) -> SnapshotRecord:
        """When the snapshot was published, what the copy cost, and how many writes it lacks."""
        return SnapshotRecord.load(self.snapshot_path.with_suffix(".json"))

    def publish_snapshot(self, max_share: float | None = None) -> Path | None:
        """Copy the warehouse to ``snapshot_path`` atomically (copy, then rename).

        DuckDB lets one process hold a file: while the pipeline writes, nobody else can even open
        it read-only. The snapshot is never locked by the pipeline and never half-written. Call it
        while holding the writer pool, so no write is in flight.

        The copy costs the whole file (~1 s per GB here) however little changed, so publishing
        after every document of a backfill would grow quadratically with the warehouse. With
        ``max_share``, the copy is made only when the last one took at most that share of the time
        since it was published (0.1: copies use at most a tenth of the writers' time); otherwise the
        write is recorded as pending and None returned. A small warehouse copies in milliseconds,
        so it is published after every document; a large one at most every ``copy/max_share``
        seconds. Pending writes are published by the next due write, by the ``snapshot_sensor``
        once writes go quiet, or by ``dagster-ocr publish``.
        """
        sidecar = self.snapshot_path.with_suffix(".json")
        record = SnapshotRecord.load(sidecar)
        now = time.time()
        if max_share is not None and record.published_at is not None and self.snapshot_path.exists():
            if record.copy_seconds > max_share * (now - record.published_at):
                record.pending_writes += 1
                record.last_write_at = now
                record.save(sidecar)
                return None
        tmp = self.snapshot_path.with_suffix(".part")
        # a held file may keep its latest commits in the write-ahead log: fold them in first
        if self.path.resolve() in _HELD:
            with self.connect() as con:
                con.execute("CHECKPOINT")
        start = time.perf_counter()
        shutil.copyfile(self.path, tmp)
        os.replace(tmp, self.snapshot_path)
        SnapshotRecord(published_at=now, copy_seconds=time.perf_counter() - start, last_write_at=now).save(
            sidecar
        )
        return self.snapshot_path

    def catch_up_snapshot(self) -> tuple[Path, int]:
        """Publish now, holding the file so no other process writes during the copy (a lock error
        if one is); returns the snapshot and how many pending writes it caught up."""
        pending = self.snapshot_record().pending_writes
        with self.held():
            path = self.publish_snapshot()
        assert path is not None  # no max_share: always copied
        return path, pending

    def record_files(self, sightings: Sequence[FileSighting], seen_by: str) -> dict[str, int]:
        """Record what a scan of the inbox saw in ``files``, in one transaction; idempotent.

        One row per (path, doc_id): a file seen again moves its ``last_seen`` (and size, mtime) on;
        a new one is inserted with ``duplicate_of`` naming the first file ever seen with the same
        bytes (NULL for that first one). A sighting without a doc_id (an incremental scan's file it
        did not hash again) updates the row with the same path, size and mtime. Returns counts:
        ``inserted``, ``updated``.
        """
        hashed = [s for s in sightings if s.doc_id]
        unhashed = [s for s in sightings if not s.doc_id]
        if not sightings:
            return {"inserted": 0, "updated": 0}
        self.ensure_schema()
        return self.write(lambda con: _record_files(con, hashed, unhashed, seen_by), lock="files")

    def approve(self, doc_id: str, approved_by: str, reason: str) -> None:
        """Record a reviewer's decision to load a quarantined document despite failed checks."""

        def store(con: duckdb.DuckDBPyConnection) -> None:
            con.execute("DELETE FROM approvals WHERE doc_id = ?", [doc_id])
            con.execute("INSERT INTO approvals VALUES (?, ?, ?, ?)", [doc_id, approved_by, reason, _now()])

        self.write(store, lock=doc_id)

    def write_kb(self, doc_id: str, chunks: Sequence[dict[str, Any]]) -> int:
        """Replace the document's knowledge-base chunks."""
        now = _now()

        def store(con: duckdb.DuckDBPyConnection) -> None:
            con.execute("DELETE FROM kb_chunks WHERE doc_id = ?", [doc_id])
            for start in range(0, len(chunks), _INSERT_BATCH):  # no second copy of every chunk
                part = chunks[start : start + _INSERT_BATCH]
                _insert(con, "kb_chunks", [{**c, "doc_id": doc_id, "loaded_at": now} for c in part])

        self.write(store, lock=doc_id)
        return len(chunks)

    def delete_kb(self, doc_id: str) -> None:
        self.write(lambda con: con.execute("DELETE FROM kb_chunks WHERE doc_id = ?", [doc_id]), lock=doc_id)

    # ---- reads --------------------------------------------------------------------------------

    @contextlib.contextmanager
    def _reading(self, con: duckdb.DuckDBPyConnection | None) -> Iterator[duckdb.DuckDBPyConnection]:
        """``con`` itself (a write's transaction, which sees its own rows), else a read connection."""
        if con is not None:
            yield con
            return
        with self.connect(read_only=True) as own:
            yield own

    def query(
        self, sql: str, params: Sequence[Any] | None = None, con: duckdb.DuckDBPyConnection | None = None
    ) -> pd.DataFrame:
        with self._reading(con) as c:
            return c.execute(sql, params or []).df()

    def read(
        self, queries: dict[str, str], params: Sequence[Any], con: duckdb.DuckDBPyConnection | None = None
    ) -> dict[str, pd.DataFrame]:
        """Several fixed queries with the same parameters, over one connection."""
        with self._reading(con) as c:
            return {name: c.execute(sql, list(params)).df() for name, sql in queries.items()}

    def document_frames(
        self, doc_id: str, tables: Sequence[str], con: duckdb.DuckDBPyConnection | None = None
    ) -> dict[str, pd.DataFrame]:
        """One document's rows of several tables, read over one connection (opening one costs more
        than most of these reads); ``con``: a write's own, to read rows it has not committed yet."""
        unknown = set(tables) - READABLE_TABLES
        if unknown:
            raise ValueError(f"not a warehouse table: {sorted(unknown)}")
        # table names checked against the schema's own list above; the doc id is a parameter
        return self.read({t: f"SELECT * FROM {t} WHERE doc_id = ?" for t in tables}, [doc_id], con)

    def document(self, doc_id: str) -> dict[str, Any] | None:
        """The document's ``documents`` row, or None when it has none."""
        rows = self.query("SELECT * FROM documents WHERE doc_id = ?", [doc_id])
        return rows.iloc[0].to_dict() if len(rows) else None

    def document_verdict(self, doc_id: str) -> pd.DataFrame:
        """The document's file name, status and reason (empty when it has none): what a recheck shows."""
        return self.query(
            "SELECT file_name, status, coalesce(error, '') AS reason FROM documents WHERE doc_id = ?",
            [doc_id],
        )

    def file_names(self, doc_ids: Sequence[str]) -> list[str]:
        """The file names of these documents (those the warehouse holds)."""
        sql = "SELECT file_name FROM documents WHERE doc_id IN (SELECT unnest(?))"
        rows = self.query(sql, [list(doc_ids)])
        return rows["file_name"].tolist()

    def quarantined(self) -> pd.DataFrame:
        """Documents held back (quarantined or failed) with their reasons, by file name."""
        return self.query("SELECT file_name, status, error FROM quarantine ORDER BY file_name")

    def latest_approval(self, doc_id: str, con: duckdb.DuckDBPyConnection | None = None) -> Approval | None:
        """The latest reviewer approval recorded for the document (``approve``), if any."""
        rows = self.query(
            "SELECT approved_by, reason, approved_at FROM approvals WHERE doc_id = ? "
            "ORDER BY approved_at DESC",
            [doc_id],
            con,
        )
        if not len(rows):
            return None
        row = rows.iloc[0]
        return Approval(str(row["approved_by"]), str(row["reason"]), row["approved_at"].to_pydatetime())

    def ocr_confidences(self, doc_id: str, con: duckdb.DuckDBPyConnection | None = None) -> pd.DataFrame:
        """The recognition confidence of every line on the document's OCR'd pages (column ``confidence``)."""
        return self.query(
            "SELECT l.confidence FROM lines l JOIN pages p USING (doc_id, page_index) "
            "WHERE l.doc_id = ? AND p.text_source = 'ocr'",
            [doc_id],
            con,
        )

    def document_summary(self) -> pd.DataFrame:
        return self.query(
            """
            SELECT d.file_name, d.status, d.n_pages, d.n_ocr_pages AS ocr_pages, d.n_tables AS tables,
                   d.n_paragraphs AS paragraphs,
                   (SELECT count(*) FROM kb_chunks k WHERE k.doc_id = d.doc_id) AS kb_chunks,
                   coalesce(d.error, '') AS reason
            FROM documents d ORDER BY d.file_name
            """
        )


def _paragraph_row(
    doc_id: str,
    b: Paragraph | Table,
    reading_order: int,
    placements: dict[str, TablePlacement],
    page_label: Callable[[int], str],
) -> dict[str, Any]:
    """A ``paragraphs`` row: a paragraph or heading, or a table as its plain text (kind 'table',
    ``paragraph_id`` its table_id, ``continued`` when merged across pages)."""
    if isinstance(b, Table):
        return {
            "doc_id": doc_id,
            "paragraph_id": b.table_id,
            "section_id": placements[b.table_id].section_id,
            "reading_order": reading_order,
            "page_index": b.first_page_index,
            "page_label": page_label(b.first_page_index),
            "last_page_index": b.last_page_index,
            "text": table_text(b.grid()),
            "x0": b.bbox[0],
            "y0": b.bbox[1],
            "x1": b.bbox[2],
            "y1": b.bbox[3],
            "flags": [],
            "kind": "table",
            "continued": b.last_page_index > b.first_page_index,
        }
    return {
        "doc_id": doc_id,
        "paragraph_id": b.paragraph_id,
        "section_id": b.section_id,
        "reading_order": reading_order,
        "page_index": b.page_index,
        "page_label": b.page_label or page_label(b.page_index),
        "last_page_index": b.last_page_index if b.last_page_index >= 0 else b.page_index,
        "text": b.text,
        "x0": b.bbox[0],
        "y0": b.bbox[1],
        "x1": b.bbox[2],
        "y1": b.bbox[3],
        "flags": list(b.flags),
        "kind": b.kind,
        "continued": b.continued,
    }


def iter_document_rows(
    doc: ExtractedDocument,
    labels: Sequence[PageLabel],
    tables: Sequence[Table],
    paragraphs: ParagraphResult,
    document_extra: dict[str, Any] | None = None,
    batch_size: int = _INSERT_BATCH,
) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """(table, rows) for every contract table of one document, at most ``batch_size`` rows at a time.

    The pages are read once, one at a time (they may come back from disk: see pagestore); the
    ``documents`` row comes last, as it counts what the pages held. ``document_extra`` adds
    columns to it.
    """
    doc_id = doc.source.doc_id
    label_of = {lab.page_index: lab for lab in labels}

    def page_label(i: int) -> str:
        lab = label_of.get(i)
        return lab.label if lab else str(i + 1)

    pages: list[dict[str, Any]] = []
    lines: list[dict[str, Any]] = []
    decode_stats: list[dict[str, Any]] = []
    n_ocr = 0
    # what each page holds and whether its content stream is broken (absent in older outputs)
    page_content = getattr(doc, "page_content", None) or {}
    damaged = getattr(doc, "damaged_pages", None) or {}
    blank_reasons = getattr(doc, "blank_reasons", None) or {}  # why an empty page is empty
    # where every character of each page went (paragraph, heading, cell, furniture, lost)
    accountant = TextAccountant(paragraphs, tables)
    first_pages: list[list[tuple[str, float]]] = []  # what the document is (docinfo) is read from these
    for page in doc.pages:
        accountant.page(page)
        if len(first_pages) < _INFO_PAGES:
            first_pages.append([(ln.text, ln.size if ln.spans else 0.0) for ln in page.lines])
        n_ocr += str(page.text_source) == "ocr"
        if page.decode_stats:
            decode_stats.append(
                {
                    **page.decode_stats,
                    "doc_id": doc_id,
                    "page_index": page.index,
                    "page_label": page_label(page.index),
                }
            )
        lab = label_of.get(page.index)
        pages.append(
            {
                "doc_id": doc_id,
                "page_index": page.index,
                "page_label": page_label(page.index),
                "label_source": str(lab.source) if lab else "physical",
                "label_confidence": lab.confidence if lab else 0.0,
                "text_source": str(page.text_source),
                "engine": page.engine,
                "route_reason": page.route_reason,
                "width": page.width,
                "height": page.height,
                "rotation": page.rotation,
                "image_coverage": page.image_coverage,
                "ocr_confidence": page.ocr_confidence,
                "n_lines": len(page.lines),
                "text": page.text,
                "content": page_content.get(page.index, "text"),
                "content_damage": damaged.get(page.index),
                "blank_reason": blank_reasons.get(page.index),
            }
        )
        # furniture is decided in one place: the paragraph stage (which takes the label stage's
        # page-number line into account)
        furniture = paragraphs.furniture.get(page.index, {})
        for i, line in enumerate(page.lines):
            span = line.spans[0] if line.spans else None
            lines.append(
                {
                    "doc_id": doc_id,
                    "page_index": page.index,
                    "line_index": i,
                    "page_label": page_label(page.index),
                    "text": line.text,
                    "x0": line.bbox[0],
                    "y0": line.bbox[1],
                    "x1": line.bbox[2],
                    "y1": line.bbox[3],
                    "font": span.font if span else "",
                    "size": line.size,
                    "bold": line.bold,
                    "confidence": line.confidence,
                    "furniture": furniture.get(i),
                }
            )
        for table, held in (("pages", pages), ("lines", lines), ("ocr_decode_stats", decode_stats)):
            if len(held) >= batch_size:
                yield table, held[:]
                held.clear()
    yield "pages", pages
    yield "lines", lines
    yield "ocr_decode_stats", decode_stats
    yield (
        "text_conservation",
        [
            {**a.as_row(), "doc_id": doc_id, "page_label": page_label(a.page_index)}
            for a in accountant.finish()
        ],
    )

    yield (
        "sections",
        [
            {
                "doc_id": doc_id,
                "section_id": s.section_id,
                "parent_id": s.parent_id,
                "level": s.level,
                "title": s.title,
                "number": s.number,
                "page_index": s.page_index,
                "page_label": s.page_label or page_label(s.page_index),
                "ordinal": s.ordinal,
            }
            for s in paragraphs.sections
        ],
    )

    # one reading order for headings, paragraphs and tables: a placed table is a paragraphs row of
    # kind 'table' too (dagster_ocr/blocks.py), so the paragraphs read in order are the whole text
    paras = paragraphs.paragraphs
    read_as_text = set(getattr(paragraphs, "read_as_text", None) or ())  # absent in older outputs
    placements = place_tables(paras, tables, read_as_text)
    sequence = block_sequence(paras, tables, placements)
    for start in range(0, len(sequence), batch_size):
        yield (
            "paragraphs",
            [
                _paragraph_row(doc_id, b, start + k, placements, page_label)
                for k, b in enumerate(sequence[start : start + batch_size])
            ],
        )
    table_order = {b.table_id: i for i, b in enumerate(sequence) if isinstance(b, Table)}

    # each table's Markdown and its place in that order (the document_blocks view)
    table_rows: list[dict[str, Any]] = []
    cells: list[dict[str, Any]] = []
    for t in tables:
        placed = placements.get(t.table_id)
        table_rows.append(
            {
                "doc_id": doc_id,
                "table_id": t.table_id,
                "first_page_index": t.first_page_index,
                "last_page_index": t.last_page_index,
                "first_page_label": page_label(t.first_page_index),
                "last_page_label": page_label(t.last_page_index),
                "n_rows": t.n_rows,
                "n_cols": t.n_cols,
                "header_rows": t.header_rows,
                "pages": list(t.pages or [t.first_page_index]),
                "merge_kind": t.merge_kind,
                "strategy": t.strategy,
                "caption": t.caption,
                "title": t.title or None,
                "units": t.units or None,
                "column_headers": list(t.column_headers) or None,
                "row_group": t.row_group or None,
                "x0": t.bbox[0],
                "y0": t.bbox[1],
                "x1": t.bbox[2],
                "y1": t.bbox[3],
                "markdown": "\n".join(table_markdown(t.grid(), t.header_rows, t.column_headers)),
                "read_as_text": t.table_id in read_as_text,
                "section_id": placed.section_id if placed else None,
                "precedes_reading_order": table_order.get(t.table_id),
            }
        )
        for c in t.cells:
            bb = c.bbox or (None, None, None, None)
            cells.append(
                {
                    "doc_id": doc_id,
                    "table_id": t.table_id,
                    "row_idx": c.row,
                    "col_idx": c.col,
                    "text": c.text,
                    "page_index": c.page_index,
                    "page_label": page_label(c.page_index),
                    "row_span": c.row_span,
                    "col_span": c.col_span,
                    "is_header": c.is_header,
                    "suspicious": c.suspicious,
                    "x0": bb[0],
                    "y0": bb[1],
                    "x1": bb[2],
                    "y1": bb[3],
                }
            )
        if len(cells) >= batch_size:
            yield "table_cells", cells[:]
            cells.clear()
    yield "tables", table_rows
    yield "table_cells", cells

    src = doc.source
    yield (
        "documents",
        [
            {
                "doc_id": doc_id,
                "file_name": src.file_name,
                "source_path": src.source_path,
                "stored_path": src.stored_path,
                "kind": src.kind,
                "size_bytes": src.size_bytes,
                "n_pages": doc.n_pages,
                "status": str(doc.status),
                "error": doc.error or None,
                **describe(first_pages, {"title": doc.title}).as_row(),
                "n_paragraphs": len(paras),
                "n_tables": len(table_rows),
                "n_ocr_pages": n_ocr,
                "pipeline_version": __version__,
                "parsed_at": _now(),
                "repaired": bool(getattr(doc, "repaired", False)),
                **(document_extra or {}),
            }
        ],
    )
