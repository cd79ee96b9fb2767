"""``dagster-ocr``: run the asset graph over an inbox in process, run the demo, query, export, approve.

The CLI sits in the Dagster layer because it runs the very asset graph the UI runs (one code
path): it registers the inbox files, adds one partition per document, and executes the
``ingest_document`` job once per partition in process (``assets.inbox_run``). This module parses the
arguments and prints.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time
from pathlib import Path

from dagster_ocr.gc_tuning import rarer_full_collections

# pandas and Dagster: what they build lives as long as the process (see dagster_ocr.gc_tuning)
with rarer_full_collections():
    import pandas as pd

    from assets.inbox_run import (  # run_inbox: what benches and tests import from here too
        QUIET_RUN_CONFIG,
        RunArgumentError,
        RunFailed,
        RunStopped,
        default_data_dir,
        run_inbox,
    )
    from assets.stopping import GracefulStop, exit_now
    from dagster_ocr.ingest import DocumentStore
    from dagster_ocr.lake import LakeError, is_lake_spec, open_warehouse
    from dagster_ocr.warehouse import Warehouse


def _warehouse(args: argparse.Namespace, read_only: bool = False) -> Warehouse:
    """The warehouse a command names: ``--warehouse`` (file or lake), ``--lake-data``, ``--at-version``."""
    return open_warehouse(
        args.warehouse,
        getattr(args, "lake_data", None),
        read_only=read_only and is_lake_spec(args.warehouse),
        version=getattr(args, "at_version", None),
    )


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
        help="hybrid (the default, kb.search_mode): words and meaning, their normalised scores combined; "
        "bm25: words; "
        "vector: meaning (all-MiniLM-L6-v2 embeddings). vector and hybrid fall back to bm25 when no "
        "embeddings are available",
    )
    search.add_argument("--document", help="only documents whose file name contains this")
    search.add_argument("--type", help="only documents of this type (10-K, 10-Q, contract, tender, ...)")
    search.add_argument("--issuer", help="only documents of this issuer (a part of its name: 'tesla')")
    search.add_argument(
        "--year",
        type=int,
        help="only documents of this fiscal year (a 10-Q or 8-K: the calendar year of its quarter's end "
        "or date)",
    )
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
