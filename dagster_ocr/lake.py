"""The warehouse on DuckLake: a PostgreSQL catalog and Parquet data, written by many processes at once.

The file mode (``Warehouse``) lets one process write: DuckDB locks the file, so Dagster's
``duckdb_writer`` pool serializes every writer step and analysts read a copied snapshot. Here the
catalog is a PostgreSQL database and the data Parquet files under ``DATA_PATH`` (a shared volume or
an object store), so any number of processes attach it and commit; readers get snapshot isolation
and time travel (``AT (VERSION => n)``, or ``LakeWarehouse(..., version=n)``) for free.

The same SQL runs in both modes: every connection ``USE``s the attached lake, so the warehouse's
unqualified statements (``DELETE FROM pages WHERE doc_id = ?``) name its tables. What differs is
how one write is made safe against another process, measured in docs/stack-facts.md and the tests:

- DuckLake detects a conflict only when two transactions delete from the same data (file or inlined
  rows); two writers of a document nobody wrote before delete nothing and would both insert it.
  So a write names what it replaces (``lock``: a doc_id), and writers of the same name take a
  PostgreSQL advisory lock on it first. The lock lives in a session of its own: a writer killed
  mid-write loses its session, and with it the lock, and its uncommitted transaction leaves no
  trace in the catalog.
- Writers of different documents still conflict when their rows share a data file (small commits
  are inlined into the catalog together; compaction merges files). DuckLake then fails the whole
  commit (``TransactionException: ... Transaction conflict``); ``write`` runs the transaction again
  from the start, with jittered exponential backoff, a bounded number of times, logging each retry.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import logging
import os
import random
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import duckdb

from dagster_ocr import duck
from dagster_ocr.duck import sql_str as _sql_str
from dagster_ocr.errors import EngineError
from dagster_ocr.schema import LATEST_VERSION, create_or_upgrade, current_version, views_sql
from dagster_ocr.warehouse import T, Warehouse

log = logging.getLogger(__name__)

#: a warehouse spec naming a DuckLake catalog in PostgreSQL: ``ducklake:postgres:<libpq keywords>``
LAKE_PREFIX = "ducklake:postgres:"
#: the catalog name every lake connection attaches as (and ``USE``s)
CATALOG = "lake"


class LakeError(RuntimeError):
    """The lake cannot be used as configured (a spec it does not take, a write that kept conflicting)."""


def is_lake_spec(spec: object) -> bool:
    """Whether ``spec`` names a DuckLake catalog rather than a DuckDB file."""
    return isinstance(spec, str) and spec.startswith("ducklake:")


def open_warehouse(
    spec: str | Path,
    lake_data: str | None = None,
    *,
    read_only: bool = False,
    version: int | None = None,
) -> Warehouse:
    """The warehouse ``spec`` names: a ``LakeWarehouse`` for ``ducklake:postgres:...`` (Parquet data
    under ``lake_data``), else the DuckDB file at that path (``lake_data``, ``read_only`` and
    ``version`` apply to a lake only; a file's readers use its snapshot copy)."""
    if is_lake_spec(spec):
        return LakeWarehouse(str(spec), lake_data, read_only=read_only, version=version)
    if version is not None:
        raise LakeError("time travel (a snapshot version) needs a DuckLake warehouse, not a DuckDB file")
    return Warehouse(Path(spec))


def _is_conflict(exc: duckdb.Error) -> bool:
    # DuckLake's commit-time conflicts: two transactions touched the same data ("Transaction
    # conflict"), or their commits kept taking the same snapshot id until DuckLake's own retries
    # (ducklake_max_retry_count, 10) ran out. Other errors (a constraint) are not retried.
    text = str(exc).lower()
    return isinstance(exc, duckdb.TransactionException) and (
        "conflict" in text or "exceeded the maximum retry count" in text
    )


def _lock_key(name: str) -> int:
    # pg_advisory_lock takes a signed 64-bit key: the name's hash, namespaced to this product
    return int.from_bytes(hashlib.sha256(f"dagster-ocr:{name}".encode()).digest()[:8], "big", signed=True)


def _lock_names(lock: str | Sequence[str] | None) -> str:
    """A write's lock names as log messages show them."""
    if not lock:
        return "an unnamed write"
    return lock if isinstance(lock, str) else ", ".join(lock)


@contextlib.contextmanager
def advisory_lock(dsn: str, name: str) -> Iterator[None]:
    """Hold PostgreSQL's advisory lock on ``name`` in a session of its own (libpq keywords ``dsn``)."""
    import psycopg2  # a declared dependency (Dagster's PostgreSQL storage uses it too)

    session = psycopg2.connect(dsn, connect_timeout=30)
    try:
        session.autocommit = True
        with session.cursor() as cur:
            cur.execute("SELECT pg_advisory_lock(%s)", [_lock_key(name)])
        yield
    finally:
        session.close()  # ends the session, which releases its locks (as a killed writer's does)


#: this process's attached lakes: (pid, spec, data path, read-only) -> root connection. One attach
#: per process (extensions, catalog, ~0.2 s); each unit of work runs on a cursor of it (~1 ms), in
#: its own transaction, which sees the latest committed snapshot when it starts
_ROOTS: dict[tuple[Any, ...], duckdb.DuckDBPyConnection] = {}
_ROOTS_LOCK = threading.Lock()


#: DuckLake's first wait before it retries a commit that lost the race for the next snapshot id
#: (``ducklake_retry_wait_ms``; it grows by ``ducklake_retry_backoff``, 1.5, up to 10 tries). A
#: transaction first tries the id after the snapshot it began on, so a commit collides whenever
#: another writer committed while it worked: two writers on 2 cores collided on about half their
#: commits (27-41 of 64; PostgreSQL's log, ``ducklake_snapshot_pkey``). The loser only has to read the new
#: snapshot and send its commit again, and every collision means another commit got through, so
#: waiting buys nothing; DuckLake's default 100 ms left the loser's core idle each time. Past 10
#: tries ``write`` retries the whole transaction with its own jittered backoff.
RETRY_WAIT_MS = 2

#: DuckDB threads of a writer's attachment. A writer's unit of work is a document: dozens of small
#: statements, each too small to split, whose parallel operators spend more on handing work between
#: threads than they save, and more again when other writers hold the other cores. Writers scale by
#: processes instead. Two writer processes on 2 cores, one thread against DuckDB's default (all
#: cores): writer CPU per document +6% over one writer against +40%, documents per hour 1.39-1.51x
#: one writer against 1.17-1.41x; one writer alone no slower (bench/lake_writers.py,
#: docs/benchmarks-history.md, issue 23, session 11). Readers (analysts' scans) keep every core.
WRITE_THREADS = 1


def _attach(
    spec: str, data_path: str | None, read_only: bool, version: int | None
) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(config={} if read_only else {"threads": WRITE_THREADS})
    try:
        duck.load(con, "ducklake", "postgres_scanner")
        if data_path and "://" in data_path:
            _object_store(con)
        elif not data_path and any(os.environ.get(v) for v in _S3_ENV.values()):
            # a reader names no data path (the catalog records it): S3 settings in the environment
            # say it may be on an object store; without the httpfs wheel a local lake still opens
            with contextlib.suppress(EngineError):
                _object_store(con)
        options = []
        if data_path and not read_only:  # readers take the data path the catalog records
            options.append(f"DATA_PATH '{_sql_str(data_path)}'")
        if read_only:
            options.append("READ_ONLY")
        if version is not None:
            options.append(f"SNAPSHOT_VERSION {int(version)}")
        suffix = f" ({', '.join(options)})" if options else ""
        attach = f"ATTACH '{_sql_str(spec)}' AS {CATALOG}{suffix}"
        if read_only:
            con.execute(attach)
        else:
            con.execute(f"SET GLOBAL ducklake_retry_wait_ms = {int(RETRY_WAIT_MS)}")
            # the first attach of an empty database creates DuckLake's catalog tables: two writers
            # doing it at once collide in PostgreSQL (measured: "duplicate key value violates
            # unique constraint pg_type_typname_nsp_index"), so writers attach one at a time
            with advisory_lock(spec[len(LAKE_PREFIX) :], "attach"):
                con.execute(attach)
    except BaseException:
        con.close()
        raise
    return con


#: S3 settings read from the standard environment variables (a Kubernetes Secret sets them)
_S3_ENV = {
    "KEY_ID": "AWS_ACCESS_KEY_ID",
    "SECRET": "AWS_SECRET_ACCESS_KEY",
    "SESSION_TOKEN": "AWS_SESSION_TOKEN",
    "REGION": "AWS_REGION",
    "ENDPOINT": "DAGSTER_OCR_S3_ENDPOINT",  # host:port of an S3-compatible store (MinIO, Ceph)
}


def _object_store(con: duckdb.DuckDBPyConnection) -> None:
    """Data on an object store: the httpfs extension (its wheel, not in the lock: EngineError says
    what to install) and an S3 secret from the environment. Tested against moto's S3 server
    (tests/dagster/test_lake_s3.py), not against AWS or MinIO."""
    duck.load(con, "httpfs")
    values = {k: os.environ[v] for k, v in _S3_ENV.items() if os.environ.get(v)}
    if values:
        fields = ", ".join(f"{k} '{_sql_str(v)}'" for k, v in values.items())
        if os.environ.get("DAGSTER_OCR_S3_URL_STYLE"):  # 'path' for most S3-compatible stores
            fields += f", URL_STYLE '{_sql_str(os.environ['DAGSTER_OCR_S3_URL_STYLE'])}'"
        # plain http, as an in-cluster MinIO often serves (DuckDB's default is https)
        if os.environ.get("DAGSTER_OCR_S3_USE_SSL", "").strip().lower() in ("0", "false", "no", "off"):
            fields += ", USE_SSL false"
        con.execute(f"CREATE OR REPLACE SECRET dagster_ocr_lake_s3 (TYPE s3, {fields})")


class LakeWarehouse(Warehouse):
    """The warehouse in DuckLake: same tables, views and methods as the file, many writer processes.

    ``read_only`` attaches the lake read-only (analysts, ``dagster-ocr query``); ``version`` pins a
    snapshot (time travel; read-only). ``local_dir`` holds what is derived per machine (the search
    file): by default the folder that holds a local ``data_path``, else ``data/``.
    """

    is_lake = True
    # DuckLake writes a transaction's inserts to Parquet files as they come, before the commit
    # (seen: five 200,000-row inserts in one transaction left five files before COMMIT), so a long
    # document needs no staging (the file mode stages: DuckDB holds open appends in memory)
    _stage_long_documents = False

    def __init__(
        self,
        spec: str,
        data_path: str | None = None,
        *,
        read_only: bool = False,
        version: int | None = None,
        local_dir: str | Path | None = None,
        max_attempts: int = 12,
        backoff_s: float = 0.05,
        backoff_cap_s: float = 2.0,
    ):
        if not spec.startswith(LAKE_PREFIX):
            raise LakeError(
                f"a lake warehouse is {LAKE_PREFIX}<libpq keywords>, e.g. "
                f"'{LAKE_PREFIX}dbname=lake host=127.0.0.1 user=postgres'; got {spec!r}"
            )
        self.spec = spec
        self.dsn = spec[len(LAKE_PREFIX) :]
        self.data_path = data_path
        self.version = version
        self.read_only = read_only or version is not None
        self.max_attempts = max_attempts
        self.backoff_s = backoff_s
        self.backoff_cap_s = backoff_cap_s
        #: write conflicts this object retried (the concurrency test and bench read it)
        self.retries = 0
        if local_dir is None:
            local = data_path and "://" not in data_path
            local_dir = Path(data_path.rstrip("/")).parent if local else Path("data")  # type: ignore[union-attr]
        name = dict(kv.split("=", 1) for kv in self.dsn.split() if "=" in kv).get("dbname", "lake")
        # never read as a file: names the lake in derived files' names (the search file beside it)
        super().__init__(Path(local_dir) / f"{name}.lake")
        self._own_root: duckdb.DuckDBPyConnection | None = None

    # ---- connections ---------------------------------------------------------------------------

    @property
    def location(self) -> str:
        return self.spec

    def _root(self, read_only: bool) -> duckdb.DuckDBPyConnection:
        if self.version is not None:  # a pinned snapshot: this object's own attachment (see close)
            if self._own_root is None:
                self._own_root = _attach(self.spec, self.data_path, True, self.version)
            return self._own_root
        key = (os.getpid(), self.spec, self.data_path, read_only)  # a forked child attaches anew
        with _ROOTS_LOCK:
            root = _ROOTS.get(key)
            if root is None:
                root = _ROOTS[key] = _attach(self.spec, self.data_path, read_only, None)
            return root

    @contextlib.contextmanager
    def connect(self, read_only: bool = False) -> Iterator[duckdb.DuckDBPyConnection]:
        # a writer's reads run on its own attachment: each cursor's transaction sees one snapshot
        con = self._root(self.read_only).cursor()
        try:
            con.execute(f"USE {CATALOG}")
            yield con
        finally:
            con.close()

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        # nothing to hold: no process lock to keep others out of, and cursors cost ~1 ms
        yield

    def close(self) -> None:
        """Detach a pinned snapshot's connection (the latest-snapshot ones stay for the process)."""
        if self._own_root is not None:
            self._own_root.close()
            self._own_root = None

    def exists(self) -> bool:
        try:
            with self.connect(read_only=True) as con:
                return current_version(con) is not None
        except duckdb.Error:  # no catalog there (yet), or PostgreSQL unreachable
            return False

    # ---- versions ------------------------------------------------------------------------------

    def snapshot_id(self) -> int:
        """The lake's current snapshot version (the pinned one for a time-travel reader)."""
        if self.version is not None:
            return self.version
        with self.connect(read_only=True) as con:
            (sid,) = con.execute(f"SELECT id FROM ducklake_current_snapshot('{CATALOG}')").fetchone() or (0,)
        return int(sid)

    def change_key(self) -> tuple[Any, ...]:
        return ("lake", self.snapshot_id())

    def pinned(self, key: tuple[Any, ...]) -> Warehouse:
        return LakeWarehouse(self.spec, self.data_path, version=int(key[1]), local_dir=self.path.parent)

    def snapshots(self, limit: int = 20) -> list[tuple[int, dt.datetime, Any]]:
        """The latest snapshots, newest first: (version, time, what changed) for time travel."""
        with self.connect(read_only=True) as con:
            rows = con.execute(
                f"SELECT snapshot_id, snapshot_time, changes FROM ducklake_snapshots('{CATALOG}') "
                "ORDER BY snapshot_id DESC LIMIT ?",
                [limit],
            ).fetchall()
        return [(int(r[0]), r[1], r[2]) for r in rows]

    # ---- writes --------------------------------------------------------------------------------

    @contextlib.contextmanager
    def _lock(self, name: str | Sequence[str] | None) -> Iterator[None]:
        """Hold PostgreSQL's advisory lock on ``name`` (several: each, taken in sorted order, so two
        writers never wait on each other's; None: no lock), each in a session of its own."""
        names = [name] if isinstance(name, str) else sorted(set(name or ()))
        with contextlib.ExitStack() as held:
            for n in names:
                held.enter_context(advisory_lock(self.dsn, n))
            yield

    def write(
        self, work: Callable[[duckdb.DuckDBPyConnection], T], lock: str | Sequence[str] | None = None
    ) -> T:
        if self.read_only:
            raise LakeError(f"{self.spec} is attached read-only (an analyst's or a pinned snapshot)")
        with self._lock(lock):
            for attempt in range(1, self.max_attempts + 1):
                try:
                    with self.transaction() as con:
                        return work(con)
                except duckdb.Error as exc:
                    if not _is_conflict(exc) or attempt == self.max_attempts:
                        if _is_conflict(exc):
                            raise LakeError(
                                f"lake write ({_lock_names(lock)}) still conflicting after "
                                f"{attempt} attempts: {exc}"
                            ) from exc
                        raise
                    delay = min(self.backoff_s * 2 ** (attempt - 1), self.backoff_cap_s)
                    delay *= random.uniform(0.5, 1.5)  # jitter: writers that collided do not again
                    self.retries += 1
                    log.warning(
                        "lake write conflict on %s (attempt %d of %d), retrying in %.2fs: %s",
                        _lock_names(lock),
                        attempt,
                        self.max_attempts,
                        delay,
                        str(exc).splitlines()[-1],
                    )
                    time.sleep(delay)
        raise AssertionError("unreachable")  # the loop returns or raises

    def ensure_schema(self) -> None:
        """Create or migrate the lake's schema (``schema.create_or_upgrade`` in the lake dialect).

        Checked without a lock first (one query); when the lake is behind, one writer migrates
        under the ``schema`` advisory lock while the others wait, then find it current. Views are
        (re)created with a migration or when one is missing; a change to views.sql alone reaches a
        lake through ``dagster-ocr migrate``.
        """
        if self._schema_ready or self.read_only:
            return
        if not self._schema_current():
            with self._lock("schema"):
                if not self._schema_current():
                    self._upgrade()
        self._schema_ready = True

    def migrate(self) -> list[int]:
        """Apply every pending migration and re-create the views; returns the versions applied."""
        with self._lock("schema"):
            applied = self._upgrade()
        self._schema_ready = True
        return applied

    def _upgrade(self) -> list[int]:
        # the caller holds the schema lock (advisory locks are per session, so not taken twice)
        with self.connect() as con:
            return create_or_upgrade(con, lake=True)

    def _schema_current(self) -> bool:
        with self.connect() as con:
            if current_version(con) != LATEST_VERSION:
                return False
            views = con.execute(
                "SELECT count(*) FROM information_schema.tables WHERE table_type = 'VIEW' "
                f"AND table_catalog = '{CATALOG}'"
            ).fetchone()
        return bool(views) and views[0] >= views_sql().upper().count("CREATE OR REPLACE VIEW")

    # ---- analysts' copy: none --------------------------------------------------------------------

    def publish_snapshot(self, max_share: float | None = None) -> Path | None:
        # analysts attach the lake read-only: every commit is a snapshot they can read or travel to
        return None

    def catch_up_snapshot(self) -> tuple[Path, int]:
        raise LakeError("a lake has no snapshot copy: analysts attach it read-only (see docs/lake.md)")

    # ---- maintenance ---------------------------------------------------------------------------

    def compact(self, expire_older_than: dt.timedelta | None = None) -> dict[str, Any]:
        """Merge small data files, flush inlined rows to Parquet, and (with ``expire_older_than``)
        expire older snapshots and delete the files only they used.

        Every commit writes at least one small file (or inlines its rows in the catalog); reads slow
        down with their number. Merging rewrites files, so it can conflict with a writer deleting
        from them: retried like any write. Expiring snapshots ends time travel to them.
        """
        started = time.perf_counter()
        figures: dict[str, Any] = {"files_before": self._data_files()}

        def merge(con: duckdb.DuckDBPyConnection) -> None:
            con.execute(f"CALL ducklake_flush_inlined_data('{CATALOG}')")
            con.execute(f"CALL ducklake_merge_adjacent_files('{CATALOG}')")

        # the lake's own functions commit as they go, outside a multi-statement transaction
        self._autocommit_retry(merge)
        if expire_older_than is not None:
            cutoff = dt.datetime.now(dt.UTC) - expire_older_than

            def expire(con: duckdb.DuckDBPyConnection) -> None:
                expired = con.execute(
                    f"SELECT count(*) FROM ducklake_expire_snapshots('{CATALOG}', older_than => ?)", [cutoff]
                ).fetchone()
                figures["snapshots_expired"] = int(expired[0]) if expired else 0
                cleaned = con.execute(
                    f"SELECT count(*) FROM ducklake_cleanup_old_files('{CATALOG}', cleanup_all => true)"
                ).fetchone()
                figures["files_deleted"] = int(cleaned[0]) if cleaned else 0

            self._autocommit_retry(expire)
        figures["files_after"] = self._data_files()
        figures["snapshot"] = self.snapshot_id()
        figures["seconds"] = round(time.perf_counter() - started, 3)
        log.info("lake %s compacted: %s", self.spec, figures)
        return figures

    def _autocommit_retry(self, work: Callable[[duckdb.DuckDBPyConnection], None]) -> None:
        with self._lock("maintenance"):
            for attempt in range(1, self.max_attempts + 1):
                try:
                    with self.connect() as con:
                        work(con)
                    return
                except duckdb.Error as exc:
                    if not _is_conflict(exc) or attempt == self.max_attempts:
                        raise
                    self.retries += 1
                    log.warning("lake maintenance conflict (attempt %d), retrying: %s", attempt, exc)
                    time.sleep(min(self.backoff_s * 2**attempt, self.backoff_cap_s))

    def _data_files(self) -> int:
        with self.connect() as con:
            tables = [
                r[0]
                for r in con.execute(
                    "SELECT table_name FROM information_schema.tables WHERE table_type = 'BASE TABLE' "
                    f"AND table_catalog = '{CATALOG}' AND table_schema = 'main'"
                ).fetchall()
            ]
            total = 0
            for table in tables:  # names from the catalog itself
                (n,) = con.execute(
                    f"SELECT count(*) FROM ducklake_list_files('{CATALOG}', '{_sql_str(table)}')"
                ).fetchone() or (0,)
                total += int(n)
        return total
