"""``dagster-ocr``: run the asset graph over an inbox in process, run the demo, query, export, approve.

The CLI sits in the Dagster layer because it runs the very asset graph the UI runs (one code
path): it registers the inbox files, adds one partition per document, and executes the
``ingest_document`` job once per partition in process.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time
from pathlib import Path
from typing import Any

import pandas as pd

from assets.stopping import GracefulStop, ResumeLedger, exit_now, names, nothing, run_on_thread
from dagster_ocr import progress
from dagster_ocr.ingest import DocumentStore, register_inbox
from dagster_ocr.lake import LakeError, is_lake_spec, open_warehouse
from dagster_ocr.warehouse import Warehouse

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


def _warehouse(args: argparse.Namespace, read_only: bool = False) -> Warehouse:
    """The warehouse a command names: ``--warehouse`` (file or lake), ``--lake-data``, ``--at-version``."""
    return open_warehouse(
        args.warehouse,
        getattr(args, "lake_data", None),
        read_only=read_only and is_lake_spec(args.warehouse),
        version=getattr(args, "at_version", None),
    )


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


def _print_frame(frame: pd.DataFrame) -> None:
    with pd.option_context("display.max_colwidth", 70, "display.width", 160):
        print(frame.to_string(index=False) if len(frame) else "(no rows)")


def cmd_run(args: argparse.Namespace) -> int:
    start = time.perf_counter()
    with GracefulStop() as stop:
        try:
            summary = run_inbox(
                Path(args.inbox),
                args.warehouse,
                Path(args.data_dir) if args.data_dir else None,
                args.settings,
                args.set or "{}",
                args.ocr,
                not args.no_progress,
                args.verbose,
                lake_data=args.lake_data,
                stop=stop,
            )
        except RunStopped as stopped:
            _print_frame(stopped.summary)
            print("\n" + "\n".join(stopped.report.lines()))
            # no interpreter shutdown: it would wait for the threads the abandoned document left
            exit_now(stopped.exit_code)
        except RunFailed as failed:
            _print_frame(failed.summary)
            print("\n" + "\n".join(failed.lines()), file=sys.stderr)
            return 1
    _print_frame(summary)
    counts = summary.status.value_counts().to_dict() if len(summary) else {}
    print(
        f"\n{len(summary)} document(s) in {time.perf_counter() - start:.1f}s: "
        + ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
        + f"; warehouse {args.warehouse}"
    )
    if stop.requested:  # a signal after the last document had started, and it finished
        return stop.exit_code
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from dagster_ocr.samples import write_samples

    root = Path(args.dir)
    inbox = root / "inbox"
    written = write_samples(inbox)
    print(f"sample documents in {inbox}: {', '.join(p.name for p in written)}")
    warehouse = root / "warehouse.duckdb"
    # the samples hold a damaged PDF on purpose: the summary gives its reason, so the core's
    # warning about it (logged while the run's progress bar is drawn) would only say it twice
    logging.getLogger("dagster_ocr").setLevel(logging.ERROR)
    start = time.perf_counter()
    try:
        summary = run_inbox(inbox, warehouse, show_progress=not args.no_progress)
    except RunFailed as failed:
        _print_frame(failed.summary)
        print("\n" + "\n".join(failed.lines()), file=sys.stderr)
        return 1
    print("\nPer-document summary:")
    _print_frame(summary)
    print(f"\n({time.perf_counter() - start:.1f}s)")
    query = (Path(__file__).resolve().parents[1] / "sql" / "queries" / "example.sql").read_text()
    print("\nExample analyst query:\n" + query.strip())
    _print_frame(Warehouse(warehouse).query(query))
    print("\nQuarantine view (documents held back, with reasons):")
    _print_frame(Warehouse(warehouse).quarantined())
    print(
        f"\nQuery it yourself (more queries in sql/queries/):\n"
        f'  .venv/bin/dagster-ocr query --warehouse {warehouse} "$(cat sql/queries/example.sql)"'
    )
    return 0


def cmd_query(args: argparse.Namespace) -> int:
    wh = _warehouse(args, read_only=True)  # a lake: attached read-only (at --at-version if given)
    try:
        _print_frame(wh.query(args.sql))
    finally:
        wh.close()
    return 0


def cmd_publish(args: argparse.Namespace) -> int:
    if is_lake_spec(args.warehouse):
        print("a lake has no snapshot copy: every commit is a snapshot; analysts attach the lake read-only")
        return 0
    wh = Warehouse(args.warehouse)
    if not wh.path.exists():
        print(f"no warehouse at {wh.path}", file=sys.stderr)
        return 2
    path, pending = wh.catch_up_snapshot()  # a lock error (reported by main) if a run is writing
    copy = wh.snapshot_record().copy_seconds
    print(f"published {path} ({pending} pending write(s); copy took {copy:.2f}s)")
    return 0


def cmd_search(args: argparse.Namespace) -> int:
    from dagster_ocr.kb import DocumentFilter, SearchError, format_hits, search

    where = DocumentFilter(
        doc_type=args.type, issuer=args.issuer, fiscal_year=args.year, file_name=args.document
    )
    wh = _warehouse(args, read_only=True)
    if not wh.exists():  # a mistyped path must not read as "nothing matched"
        print(f"dagster-ocr search: no warehouse at {wh.location}", file=sys.stderr)
        return 2
    try:
        # a lake is read at one pinned snapshot; only the local search file is written
        hits = search(wh, args.query, args.limit, mode=args.mode, where=where)
    except SearchError as exc:
        print(f"dagster-ocr search: {exc}", file=sys.stderr)
        return 2
    print(format_hits(hits))
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    import json

    from dagster_ocr.export import ExportError, document_json, document_markdown, resolve_document

    wh = _warehouse(args, read_only=True)
    try:
        doc_id = resolve_document(wh, args.doc)
        if args.format == "json":
            text = json.dumps(document_json(wh, doc_id), ensure_ascii=False, indent=2) + "\n"
        else:
            text = document_markdown(wh, doc_id)
        status = wh.document_verdict(doc_id)
    except ExportError as exc:
        print(f"export: {exc}", file=sys.stderr)
        return 2
    if len(status) and status.status.iat[0] != "parsed":
        # exported all the same (a reviewer may want to read it), but never silently
        print(
            f"note: {status.file_name.iat[0]} is {status.status.iat[0]}: {status.reason.iat[0]}",
            file=sys.stderr,
        )
    if args.out:
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_name(out.name + ".part")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, out)  # never a half-written export under its final name
        print(f"wrote {out} ({args.format}, document {doc_id[:12]})", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def recheck(
    doc_id: str,
    warehouse: str | Path,
    data_dir: Path | None = None,
    settings_file: str | None = None,
    overrides_json: str = "{}",
    lake_data: str | None = None,
) -> bool:
    """Re-run the warehouse load, its quality checks and the knowledge base for one document.

    The earlier stages' outputs come from the data folder, so nothing is re-extracted or re-OCR'd.
    Returns whether the document is in the knowledge base now (False while it stays held back,
    or when the run failed).
    """
    import dagster as dg

    from assets.definitions import build_definitions
    from assets.partitions import documents_partitions
    from dagster_ocr import partition_keys

    data_dir = data_dir or default_data_dir(warehouse, lake_data)
    defs = build_definitions(
        data_dir, warehouse, None, settings_file, overrides_json, lake_data_path=lake_data
    )
    job = defs.resolve_job_def("reload_warehouse")
    wh = open_warehouse(warehouse, lake_data)
    # the key the stage outputs were stored under: the warehouse's map (an old sha256 key, or a
    # readable one), else the readable key made from the stored file name
    key = partition_keys.recorded_key(wh, doc_id)
    if key is None:
        key = partition_keys.partition_key(DocumentStore(data_dir / "store").get(doc_id).file_name, doc_id)
    instance = dg.DagsterInstance.get() if os.environ.get("DAGSTER_HOME") else dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions(documents_partitions.name, [key])
    result = job.execute_in_process(
        partition_key=key, instance=instance, raise_on_error=False, run_config=QUIET_RUN_CONFIG
    )
    doc = wh.document(doc_id)
    return result.success and doc is not None and doc["status"] == "parsed"


def _doc_id(wh: Warehouse, ref: str) -> str | None:
    """The doc_id a command names (doc_id, partition key as the UI shows it, prefix, file name)."""
    from dagster_ocr.export import ExportError, resolve_document

    try:
        return resolve_document(wh, ref)
    except ExportError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return None


def cmd_recheck(args: argparse.Namespace) -> int:
    wh = _warehouse(args)
    doc_id = _doc_id(wh, args.doc_id)
    if doc_id is None:
        return 2
    data_dir = Path(args.data_dir) if args.data_dir else None
    ok = recheck(doc_id, args.warehouse, data_dir, args.settings, args.set or "{}", args.lake_data)
    _print_frame(wh.document_verdict(doc_id))
    return 0 if ok else 1


def cmd_approve(args: argparse.Namespace) -> int:
    wh = _warehouse(args)
    wh.ensure_schema()
    doc_id = _doc_id(wh, args.doc_id)
    if doc_id is None:
        return 2
    wh.approve(doc_id, args.by, args.reason)
    print(f"approved {doc_id}. Load it now with:")
    print(f"  dagster-ocr recheck {doc_id} --warehouse '{args.warehouse}'")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="dagster-ocr", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="parse every document in INBOX into a DuckDB warehouse")
    run.add_argument("inbox")
    run.add_argument(
        "--warehouse",
        required=True,
        help="DuckDB file to write, or a lake: 'ducklake:postgres:dbname=NAME host=... user=...'",
    )
    run.add_argument(
        "--lake-data",
        help="the lake's Parquet data (DuckLake DATA_PATH: a folder, or s3://...), with a ducklake: spec",
    )
    run.add_argument("--data-dir", help="where copies and stage outputs are kept (default: <warehouse>_data)")
    run.add_argument("--settings", help="settings file (JSON or YAML)")
    run.add_argument(
        "--set", help='JSON object of settings overrides, e.g. \'{"text": {"ocr_mode": "never"}}\''
    )
    run.add_argument("--ocr", choices=["rapidocr", "none"], help="OCR engine (overrides settings)")
    run.add_argument("--no-progress", action="store_true")
    run.add_argument("-v", "--verbose", action="store_true", help="show Dagster's event log")
    run.set_defaults(func=cmd_run)

    demo = sub.add_parser("demo", help="generate sample documents and run the pipeline on them")
    demo.add_argument("--dir", default="demo", help="folder for the samples and the warehouse")
    demo.add_argument("--no-progress", action="store_true")
    demo.set_defaults(func=cmd_demo)

    query = sub.add_parser("query", help="run SQL against a warehouse (read-only)")
    query.add_argument("sql")
    query.add_argument("--warehouse", required=True, help="DuckDB file, or ducklake:postgres:... (read-only)")
    query.add_argument(
        "--at-version", type=int, help="a lake: query the snapshot of this version (time travel)"
    )
    query.set_defaults(func=cmd_query)

    publish = sub.add_parser(
        "publish", help="copy the warehouse to the analysts' snapshot now (<stem>.snapshot.duckdb)"
    )
    publish.add_argument("--warehouse", required=True)
    publish.set_defaults(func=cmd_publish)

    search = sub.add_parser("search", help="search the knowledge base, with citations")
    search.add_argument("query")
    search.add_argument("--warehouse", required=True)
    search.add_argument(
        "--lake-data", help="a lake: its local data folder (the search file is kept beside it)"
    )
    search.add_argument("--limit", type=int, default=5)
    search.add_argument(
        "--mode",
        choices=("bm25", "vector", "hybrid"),
        default="bm25",
        help="bm25: words; vector: meaning (all-MiniLM-L6-v2 embeddings); hybrid: both, rank-fused. "
        "vector and hybrid fall back to bm25 when no embeddings are available",
    )
    search.add_argument("--document", help="only documents whose file name contains this")
    search.add_argument("--type", help="only documents of this type (10-K, 10-Q, contract, tender, ...)")
    search.add_argument("--issuer", help="only documents of this issuer (a part of its name: 'tesla')")
    search.add_argument("--year", type=int, help="only documents of this fiscal year")
    search.set_defaults(func=cmd_search)

    export = sub.add_parser(
        "export", help="write one document in reading order as Markdown or JSON (docling-like shape)"
    )
    export.add_argument(
        "doc",
        metavar="DOC_ID",
        help="doc_id, partition key (as the UI shows it), doc_id prefix, or file name",
    )
    export.add_argument("--warehouse", required=True)
    export.add_argument("--at-version", type=int, help="a lake: export the document as of this snapshot")
    export.add_argument("--format", choices=("md", "json"), default="md")
    export.add_argument("--out", help="file to write (default: standard output)")
    export.set_defaults(func=cmd_export)

    recheck_p = sub.add_parser(
        "recheck", help="re-load one document into the warehouse and re-run its checks (no re-extraction)"
    )
    recheck_p.add_argument("doc_id", help="doc_id, partition key, doc_id prefix, or file name")
    recheck_p.add_argument("--warehouse", required=True)
    recheck_p.add_argument("--lake-data", help="a lake's Parquet data (with a ducklake: warehouse)")
    recheck_p.add_argument("--data-dir", help="the run's data folder (default: <warehouse>_data)")
    recheck_p.add_argument("--settings", help="settings file (JSON or YAML), e.g. with new thresholds")
    recheck_p.add_argument("--set", help="JSON object of settings overrides")
    recheck_p.set_defaults(func=cmd_recheck)

    approve = sub.add_parser("approve", help="let a quarantined document into the knowledge base")
    approve.add_argument("doc_id", help="doc_id, partition key, doc_id prefix, or file name")
    approve.add_argument("--warehouse", required=True)
    approve.add_argument("--lake-data", help="a lake's Parquet data (with a ducklake: warehouse)")
    approve.add_argument("--by", required=True, help="who approves")
    approve.add_argument("--reason", required=True)
    approve.set_defaults(func=cmd_approve)

    from assets.admin_cli import add_admin_commands
    from assets.backfill_cli import add_backfill_command

    add_admin_commands(sub)  # doctor, metrics, migrate
    add_backfill_command(sub)  # a backfill on the webserver, tagged with the documents it covers

    # every command that names a warehouse takes the same lake flags as `run`, so a user can pass
    # one set of flags everywhere (readers do not need --lake-data: the catalog records it)
    for name, command in sub.choices.items():
        if (
            name not in ("run", "search", "recheck", "demo")
            and any("--warehouse" in a.option_strings for a in command._actions)
            and not any("--lake-data" in a.option_strings for a in command._actions)
        ):
            command.add_argument(
                "--lake-data", help="a lake's Parquet data (optional here: the catalog records it)"
            )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    import duckdb

    try:
        return args.func(args)
    except (LakeError, RunArgumentError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except duckdb.IOException as exc:
        if "lock" not in str(exc).lower():
            print(f"error: {exc}", file=sys.stderr)  # e.g. no warehouse at that path
            return 2
        # DuckDB lets one process hold a file: say so plainly instead of a traceback
        print(
            f"the warehouse is in use by another process (a run writing it?): {exc}\n"
            "retry when it finishes, or read the snapshot (<stem>.snapshot.duckdb) meanwhile",
            file=sys.stderr,
        )
        return 3
    except (duckdb.ParserException, duckdb.BinderException, duckdb.CatalogException) as exc:
        # an analyst's SQL that DuckDB refuses: its message is the answer, a traceback is noise
        print(f"query error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
