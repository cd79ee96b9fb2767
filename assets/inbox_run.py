"""``dagster-ocr run``'s engine: every document of an inbox through the ``ingest_document`` job, in
process, one run per document, with progress, graceful stop and resume, and a clear end.

The command line (``assets.cli``) parses arguments and prints; this module does the run and says
how it ended: a summary frame, :class:`RunStopped` (a signal) or :class:`RunFailed` (a document's
run failed before its warehouse row); :class:`RunArgumentError` before anything starts.
"""

from __future__ import annotations

import gc
import os
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from assets.stopping import GracefulStop, ResumeLedger, names, nothing, run_on_thread
from dagster_ocr import progress
from dagster_ocr.gc_tuning import rarer_full_collections
from dagster_ocr.ingest import DocumentStore, register_inbox
from dagster_ocr.lake import LakeError, is_lake_spec, open_warehouse

QUIET_RUN_CONFIG = {"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}}


def default_data_dir(warehouse: str | Path, lake_data: str | None = None) -> Path:
    """Where a run keeps copies and stage outputs: ``<warehouse>_data`` beside a DuckDB file, or
    ``<lake data>_pipeline`` beside a lake's local data folder (an object store needs --data-dir)."""
    if not is_lake_spec(warehouse):
        path = Path(warehouse)
        return path.with_name(path.stem + "_data")
    if not lake_data or "://" in lake_data:
        raise LakeError("a lake run needs --data-dir (or a local --lake-data to put it beside)")
    return Path(lake_data.rstrip("/") + "_pipeline")


class _PagePostfix:
    """The page progress of the document in flight, in the per-document bar's postfix
    (``contract.pdf p 412/1000 ETA 7m32s``), redrawn at most every ``seconds``."""

    def __init__(self, bar, seconds: float = 0.5):
        self.bar = bar
        self.seconds = seconds
        self._drawn_at = 0.0

    def __call__(self, p: progress.TextProgress) -> None:
        now = time.monotonic()
        if self.bar.disable or (now - self._drawn_at < self.seconds and not p.finished):
            return
        self._drawn_at = now
        self.bar.set_postfix_str(f"{p.file_name[:30]} {p.short()}")


class RunStopped(Exception):
    """``run_inbox`` was stopped by a signal (see ``assets.stopping``): what it did and did not do."""

    def __init__(self, report: _RunReport, summary: pd.DataFrame):
        super().__init__(f"stopped by {report.stop.name}")
        self.report = report
        self.summary = summary
        self.exit_code = report.stop.exit_code


class _RunReport:
    """What a run has done so far, in the words of its last lines (graceful or hard stop alike)."""

    def __init__(self, stop: GracefulStop, todo: list, skipped: list, started: float):
        self.stop = stop
        self.todo = todo  # the documents this run was to parse, in order
        self.skipped = skipped  # finished by the stopped run this one resumes
        self.done: list = []
        self.in_flight = None
        self.abandoned = None
        #: documents whose run failed before the warehouse had a row of them, and why
        self.failed: list[tuple[Any, str]] = []
        self.started = started

    def lines(self) -> list[str]:
        finished = {rec.doc_id for rec in self.done}
        left = [
            rec
            for rec in self.todo
            if rec.doc_id not in finished and rec is not self.abandoned and rec is not self.in_flight
        ]
        abandoned = self.abandoned or self.in_flight
        out = [
            f"stopped by {self.stop.name} after {time.perf_counter() - self.started:.1f}s: "
            f"{len(self.done)} document(s) done in this run"
            + (f" ({len(self.skipped)} more by the run it resumed)" if self.skipped else "")
            + f", {int(abandoned is not None)} abandoned, {len(left)} not started"
        ]
        if self.done:
            out.append(f"  done: {names(self.done)}")
        if abandoned is not None:
            if self.stop.chunked:
                during = " before its vectors (loaded, in BM25 search)"
            else:
                during = " during its warehouse load" if self.stop.loading else ""
            out.append(
                f"  abandoned{during}: {abandoned.file_name} (a resume re-does it; its OCR'd pages are kept)"
            )
        if left:
            out.append(f"  not started: {names(left)}")
        out.append("run the same command again to resume: it re-does only the documents not done")
        return out

    def print_hard(self, code: int) -> None:
        print("\n".join(self.lines()), flush=True)


# the definitions' imports (Dagster, GX) and the documents: see dagster_ocr.gc_tuning
@rarer_full_collections()
def run_inbox(
    inbox: Path,
    warehouse: str | Path,
    data_dir: Path | None = None,
    settings_file: str | None = None,
    overrides_json: str = "{}",
    ocr_engine: str | None = None,
    show_progress: bool = True,
    verbose: bool = False,
    lake_data: str | None = None,
    stop: GracefulStop | None = None,
) -> pd.DataFrame:
    """Parse every document in ``inbox`` into ``warehouse`` (a DuckDB file, or a lake spec with its
    data under ``lake_data``); returns the per-document summary.

    With ``stop`` (the CLI's signal handling) each document's run executes on a worker thread and
    a SIGTERM or Ctrl-C ends the run early: :class:`RunStopped` says what was done. A run that was
    stopped (or killed) is resumed by the same call: the documents it finished are skipped.
    """
    import dagster as dg
    from tqdm import tqdm

    from assets.definitions import build_definitions
    from assets.partitions import document_tags, documents_partitions
    from dagster_ocr.partition_keys import partition_key

    started = time.perf_counter()
    _check_run_arguments(inbox, settings_file, overrides_json)
    data_dir = data_dir or default_data_dir(warehouse, lake_data)
    defs = build_definitions(
        data_dir, warehouse, inbox, settings_file, overrides_json, ocr_engine, lake_data_path=lake_data
    )
    job = defs.resolve_job_def("ingest_document")
    # what is imported and built so far lives as long as the process: out of the collector's sight, so
    # the run's full collections walk only what the documents make (they cost ~0.1 s each here)
    gc.freeze()
    if stop is not None:
        job = job.with_hooks({stop.hook()})
    scan = register_inbox(inbox, DocumentStore(data_dir / "store"))
    found = [rec for rec, _ in scan.documents]
    wh = open_warehouse(warehouse, lake_data)
    wh.ensure_schema()
    wh.record_files(scan.files, "cli")  # every file, duplicates included
    instance = dg.DagsterInstance.get() if os.environ.get("DAGSTER_HOME") else dg.DagsterInstance.ephemeral()
    keys = {rec.doc_id: partition_key(rec.file_name, rec.doc_id) for rec in found}
    instance.add_dynamic_partitions(documents_partitions.name, list(keys.values()))
    remember_partitions(instance, documents_partitions.name, keys.values())
    reuse_sqlite_engines(instance)

    key = ResumeLedger.command_key(
        Path(inbox).resolve(),
        warehouse,
        lake_data,
        settings_file,
        overrides_json,
        ocr_engine,
        settings_file=settings_file,
    )
    ledger = ResumeLedger(data_dir, key)
    # skipped only where the warehouse holds the document still (not deleted since)
    loaded = set()
    if ledger.done:
        sql = "SELECT doc_id FROM documents WHERE doc_id IN (SELECT unnest(?))"
        loaded = set(wh.query(sql, [ledger.done]).doc_id)
    skipped = [rec for rec in found if rec.doc_id in loaded]
    todo = [rec for rec in found if rec not in skipped]
    if skipped:
        print(
            f"resuming a stopped run: {len(skipped)} document(s) it finished are skipped, {len(todo)} to do",
            file=sys.stderr,
        )
    ledger.start()
    report = _RunReport(stop or GracefulStop(), todo, skipped, started)
    if stop is not None:
        stop.on_hard_exit = report.print_hard
    bar = tqdm(todo, unit="doc", disable=not show_progress, file=sys.stderr)
    with (
        progress.listen(_PagePostfix(bar)),
        progress.listen(stop.listener) if stop else nothing(),
        progress.stoppable(stop.check) if stop else nothing(),
    ):
        for rec in bar:
            if stop is not None and stop.requested:
                break
            bar.set_postfix_str(rec.file_name[:40])

            def work(rec=rec):
                return job.execute_in_process(
                    partition_key=keys[rec.doc_id],
                    instance=instance,
                    raise_on_error=False,
                    run_config=None if verbose else QUIET_RUN_CONFIG,
                    tags=document_tags(rec.doc_id, rec.file_name),
                )

            if stop is None:
                result = work()
            else:
                report.in_flight = rec
                stop.start_document()
                result, ended = run_on_thread(work, stop, name=f"run {rec.file_name[:40]}")
                if not ended:  # the grace period is over and the document holds on: exit now
                    bar.close()
                    stop.hard_exit(stop.exit_code)
                report.in_flight = None
                if stop.abandoned:
                    report.abandoned = rec
                    break
            if result is not None and not result.success and not wh.file_names([rec.doc_id]):
                # a quarantined or damaged document has its row and reason; this one has nothing
                report.failed.append((rec, _first_failure(result)))
            report.done.append(rec)
            ledger.mark_done(rec.doc_id)
    bar.close()
    ids = [rec.doc_id for rec in (*skipped, *report.done)]
    stopped = stop is not None and stop.requested and len(report.done) < len(todo)
    if not stopped:
        ledger.finish()
        if ids and not wh.is_lake and wh.snapshot_record().pending_writes:
            wh.catch_up_snapshot()  # the writes the throttle skipped: the run is over
    # (a stopped run leaves the snapshot's catch-up to the run that resumes it)
    summary = wh.document_summary()
    summary = summary[summary.file_name.isin(wh.file_names(ids))] if ids else summary.iloc[0:0]
    if stopped:
        raise RunStopped(report, summary)
    if report.failed:
        raise RunFailed(report.failed, summary)
    return summary


def remember_partitions(instance: Any, name: str, keys: Iterable[str]) -> None:
    """Answer the instance's "does this partition exist?" for ``keys`` of the partitions ``name``
    from memory: the run has just added them (``add_dynamic_partitions``).

    Dagster asks it about a document's own key about ten times a step (every input's and output's
    partition range is checked at both ends), 132 times for the two 10-K reports' runs, and on a SQLite
    instance each answer opens the index database twice (a new engine and connection for the table
    check, then for the query): 0.36 CPU s of a ~29 s run on a 2-core AVX512-VNNI EPYC (2026-12-05,
    issue 36). Any other key or partitions definition is still asked of the instance. A partition
    deleted by someone else while the run goes on is no longer noticed by the run's later steps
    (they would have failed); the run was asked to parse that document. Only this instance object is
    changed, not Dagster's class."""
    known = frozenset(keys)
    ask = instance.has_dynamic_partition

    def has_dynamic_partition(partitions_def_name: str, partition_key: str) -> bool:  # Dagster's names
        if partitions_def_name == name and partition_key in known:
            return True
        return ask(partitions_def_name, partition_key)

    instance.has_dynamic_partition = has_dynamic_partition


#: event log databases whose SQLAlchemy engine :func:`reuse_sqlite_engines` keeps (a run's, the index)
_KEPT_ENGINES = 4


def reuse_sqlite_engines(instance: Any) -> list[str]:
    """Let the instance's SQLite storages keep one SQLAlchemy engine, and its connections, per
    database file instead of building both anew for every event and query; which storages do (none:
    other storages, left as they are).

    Dagster's ``SqliteEventLogStorage`` and ``SqliteRunStorage`` create an engine with no pool
    (``NullPool``) for every write and read (``_connect``, ``has_table``, ``connect``): each event
    opened the database file and read its schema again, and, as an engine starts with an empty
    statement cache, compiled its INSERT again. A document's run stores about 100 events, some into
    two databases (the run's and the index), and reads the run storage about 50 times. The engines
    kept here have SQLAlchemy's own pool for SQLite files (a few connections, each used by one thread
    at a time, rolled back when handed back: no lock is held between uses, and other processes, the
    UI's, write beside them as before, WAL and the same busy timeout), a database is still
    initialised once a process (``_initdb``), and the event log's engines are kept for the last
    :data:`_KEPT_ENGINES` files (older ones disposed: their connections closed). The two 10-K reports'
    runs, storing their 198 events: 0.95-1.10 CPU s, 0.63-0.70 with kept engines, 0.44-0.46 with
    their connections too; the asset reads 0.31 -> 0.11 (2026-12-05, issue 36, 2-core AVX512-VNNI
    EPYC). Only this instance's storage objects are changed, each only when it is exactly Dagster's
    SQLite class (a local ``DAGSTER_HOME`` without a PostgreSQL storage), whose methods these mirror
    (dagster 1.13)."""
    import contextlib
    import threading
    from collections import OrderedDict

    from dagster._core.storage.event_log.sqlite import sqlite_event_log
    from dagster._core.storage.runs.sqlite import sqlite_run_storage
    from sqlalchemy import create_engine

    done: list[str] = []
    events = getattr(instance, "_event_storage", None)
    if type(events) is sqlite_event_log.SqliteEventLogStorage:
        engines: OrderedDict[str, Any] = OrderedDict()
        # its own lock: has_table is asked inside _connect's block, which holds the storage's lock
        engines_lock = threading.Lock()

        def engine_for(shard: str) -> Any:
            with engines_lock:
                engine = engines.get(shard)
                if engine is None:
                    engine = create_engine(
                        events.conn_string_for_shard(shard),
                        connect_args={"timeout": sqlite_event_log.SQLITE_BUSY_TIMEOUT_SECONDS},
                    )
                    engines[shard] = engine
                    while len(engines) > _KEPT_ENGINES:
                        engines.popitem(last=False)[1].dispose()
                engines.move_to_end(shard)
                return engine

        @contextlib.contextmanager
        def _connect(shard: str) -> Any:
            with events._db_lock:  # noqa: SLF001 - as Dagster's own _connect
                engine = engine_for(shard)
                if shard not in events._initialized_dbs:  # noqa: SLF001
                    events._initdb(engine)  # noqa: SLF001
                    events._initialized_dbs.add(shard)  # noqa: SLF001
                with engine.connect() as conn, conn.begin():
                    yield conn

        def has_table(table_name: str) -> bool:  # asked before every dynamic partitions query
            engine = engine_for(sqlite_event_log.INDEX_SHARD_NAME)
            with engine.connect() as conn:
                return bool(engine.dialect.has_table(conn, table_name))

        events.has_table = has_table
        events._connect = _connect  # noqa: SLF001 - this object only, not the class
        done.append("event_log")
    runs = getattr(instance, "_run_storage", None)
    if type(runs) is sqlite_run_storage.SqliteRunStorage:
        run_engine = create_engine(runs._conn_string)  # noqa: SLF001

        @contextlib.contextmanager
        def connect() -> Any:
            with run_engine.connect() as conn, conn.begin():
                yield conn

        runs.connect = connect
        done.append("runs")
    return done


class RunArgumentError(ValueError):
    """``dagster-ocr run`` was given something it cannot start with (no inbox, unreadable settings)."""


class RunFailed(Exception):
    """Documents whose run failed before the warehouse had a row of them: (record, why) each."""

    def __init__(self, failed: list[tuple[Any, str]], summary: pd.DataFrame):
        super().__init__(f"{len(failed)} document(s) failed")
        self.failed = failed
        self.summary = summary

    def lines(self) -> list[str]:
        return [
            f"{rec.file_name}: its run failed before anything of it was written: {why}"
            for rec, why in self.failed
        ]


def _check_run_arguments(inbox: Path, settings_file: str | None, overrides_json: str) -> None:
    """Fail before any folder is made or run started: every document's run would fail alike."""
    from resources.core import SettingsResource

    if not Path(inbox).is_dir():
        raise RunArgumentError(f"the inbox {inbox} is not a folder")
    try:
        SettingsResource(settings_file=settings_file, overrides_json=overrides_json).load()
    except (OSError, ValueError) as exc:  # JSON, YAML and pydantic's errors are ValueErrors
        given = [f"--settings {settings_file}"] * bool(settings_file)
        given += [f"--set {overrides_json}"] * (overrides_json.strip() not in ("", "{}"))
        raise RunArgumentError(f"the settings ({' and '.join(given)}) cannot be used: {exc}") from exc


def _first_failure(result: Any) -> str:
    """The first step failure's error of an in-process run, in one line."""
    for event in result.all_events:
        if event.is_step_failure and event.step_failure_data and event.step_failure_data.error:
            error = event.step_failure_data.error
            while error.cause is not None:  # Dagster's "Error occurred while executing op" wraps the cause
                error = error.cause
            message = " ".join(error.message.split())
            return f"{event.step_key}: {message[:300]}"
    return "the run failed (no step failure recorded; see the Dagster event log with -v)"
