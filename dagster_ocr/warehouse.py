"""The DuckDB warehouse: schema from ``sql/``, atomic and idempotent writes per document.

Every write replaces one document's rows inside one transaction (delete, then insert), so a
re-run never duplicates rows and a crash mid-write leaves the previous version whole. Connections
are short-lived: DuckDB lets one process hold a file for writing, and a long-held connection
would lock analysts and other runs out (see docs/stack-facts.md, DuckDB).

Here: the ``Warehouse`` (connections, the held file, writes, snapshots, reads). Beside it,
``warehouse_writes`` (inserts, transactions, clearing a document, the gate's and the inbox's
rows) and ``warehouse_rows`` (a parse as rows); the names callers import from here stay here.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import json
import logging
import os
import shutil
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

import duckdb
import pandas as pd

from dagster_ocr.ingest import FileSighting
from dagster_ocr.model import DocStatus, ExtractedDocument, PageLabel, ParagraphResult, Table
from dagster_ocr.schema import create_or_upgrade
from dagster_ocr.settings import SettingsSnapshot
from dagster_ocr.warehouse_rows import iter_document_rows
from dagster_ocr.warehouse_writes import (
    _INSERT_BATCH,
    _STAGED,
    CONTENT_TABLES,
    _atomic,
    _clear_document,
    _insert,
    _insert_rows,
    _now,
    _record_files,
    store_gate,
)

log = logging.getLogger(__name__)

T = TypeVar("T")

#: tables ``document_frames`` may read
READABLE_TABLES = frozenset(
    {"documents", *CONTENT_TABLES, "quality_results", "approvals", "kb_chunks", "files"}
)

#: a document of more pages than this is staged before it replaces the old rows (``write_document``)
STAGE_ABOVE_PAGES = 256


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
        then: Callable[[duckdb.DuckDBPyConnection], Any] | None = None,
        locks: Sequence[str] = (),
    ) -> dict[str, int]:
        """Replace everything stored for ``doc`` with this parse. Returns row counts per table.

        The settings the stages parsed the document under (``doc.settings``, its snapshot) are kept
        on the document's row as ``settings_json`` and ``settings_hash``, so the document can be
        re-run later with exactly that configuration, and the stages that start from the warehouse
        (the knowledge base and its vectors) read them back (:meth:`document_settings`).
        ``then`` runs on the same connection before the commit, seeing the new rows (the partition
        key and the quality gate's verdict, so a document's load is one commit, not three; see
        ``gate.load_and_judge``), and ``locks`` names what else it writes (for a lake's per-name
        locks). A long document
        staged in a file commits its batches first and runs ``then`` in the swap's transaction.
        """
        self.ensure_schema()
        extra: dict[str, Any] = {}
        if doc.settings is not None:
            extra = {"settings_json": doc.settings.json, "settings_hash": doc.settings.hash}
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

    def document_settings(self, doc_id: str) -> SettingsSnapshot | None:
        """The settings the document's rows were parsed under, as its row recorded them; None when
        it has no row, or one written without them (by a version before they were recorded)."""
        rows = self.query("SELECT settings_json FROM documents WHERE doc_id = ?", [doc_id])
        if not len(rows) or not isinstance(rows["settings_json"].iat[0], str):
            return None
        return SettingsSnapshot.from_json(rows["settings_json"].iat[0])

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

    def let_in_by_approval(self, doc_id: str) -> bool:
        """The document is in although a blocking check failed: a reviewer's approval let it in
        (the ``quality_checks`` view's outcome 'approved'; read from the rows, not from its error text)."""
        rows = self.query(
            "SELECT count(*) AS n FROM quality_checks WHERE doc_id = ? AND outcome = 'approved'", [doc_id]
        )
        return bool(rows["n"].iat[0])

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
