"""Administration subcommands of ``dagster-ocr``: ``doctor``, ``metrics`` and ``migrate``.

Wired into assets/cli.py with one call: ``add_admin_commands(sub)``. The checks themselves live in
the core (dagster_ocr.admin); this module adds the one that needs Dagster (the instance answers).
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Mapping
from pathlib import Path

import duckdb

from dagster_ocr.admin import doctor as doc
from dagster_ocr.admin.metrics import (
    MetricsCache,
    exposition,
    make_server,
    push_metrics,
    registry_from_warehouse,
)
from dagster_ocr.schema import LATEST_VERSION, SchemaVersionError, current_version
from dagster_ocr.settings import Settings


def check_instance(environ: Mapping[str, str] | None = None) -> list[doc.Finding]:
    """The Dagster instance named by DAGSTER_HOME loads and answers a query."""
    env = os.environ if environ is None else environ
    if not env.get("DAGSTER_HOME"):
        return []  # check_instance_storage already warned
    import dagster as dg

    try:
        with dg.DagsterInstance.get() as instance:
            instance.get_run_records(limit=1)
            kind = type(instance.run_storage).__name__
    except Exception as exc:  # any storage error is the finding itself
        return [
            doc.Finding(
                "instance",
                "error",
                f"the Dagster instance in {env['DAGSTER_HOME']} does not answer: "
                + str(exc).splitlines()[0][:300],
                "check dagster.yaml and the database it names; "
                "`dagster instance info` shows the configuration",
            )
        ]
    return [doc.Finding("instance", "ok", f"instance answers ({kind})")]


def step_failures_from_instance(since_s: float = 86400.0) -> dict[str, int] | None:
    """Failed steps per step key over the last ``since_s`` seconds, or None without DAGSTER_HOME."""
    if not os.environ.get("DAGSTER_HOME"):
        return None
    import dagster as dg

    with dg.DagsterInstance.get() as instance:
        records = instance.get_event_records(
            dg.EventRecordsFilter(dg.DagsterEventType.STEP_FAILURE, after_timestamp=time.time() - since_s),
            limit=10_000,
        )
    counts: dict[str, int] = {}
    for record in records:
        step = record.event_log_entry.step_key or "unknown"
        counts[step] = counts.get(step, 0) + 1
    return counts


def cmd_doctor(args: argparse.Namespace) -> int:
    model_paths = None
    if args.model_path:
        model_paths = dict(item.split("=", 1) if "=" in item else ("model", item) for item in args.model_path)
    findings = doc.run_checks(
        warehouse=args.warehouse,
        lock=args.lock or doc.DEFAULT_LOCK,
        model_paths=model_paths,
        require_gpu=args.require_gpu,
        settings=Settings.load(args.settings),  # no --settings: the defaults, as `run` without one
    )
    findings += check_instance()
    text, code = doc.report(findings)
    print(text)
    return code


def cmd_metrics(args: argparse.Namespace) -> int:
    def build():
        return registry_from_warehouse(args.warehouse, step_failures_from_instance())

    if args.push:
        push_metrics(args.push, build(), job=args.job)
        print(f"pushed to {args.push} (job {args.job})")
        return 0
    if args.once:
        print(exposition(build()), end="")
        return 0
    server = make_server(MetricsCache(build, args.min_interval), args.host, args.port)
    print(f"serving http://{args.host}:{server.server_address[1]}/metrics (Ctrl-C to stop)")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


def cmd_migrate(args: argparse.Namespace) -> int:
    from dagster_ocr.lake import LakeWarehouse, is_lake_spec
    from dagster_ocr.warehouse import Warehouse

    if is_lake_spec(args.warehouse):
        # one process migrates under the lake's schema lock; writers starting meanwhile wait for it
        lake = LakeWarehouse(args.warehouse, args.lake_data)
        with lake.connect() as con:
            before = current_version(con)
        try:
            lake.migrate()  # also re-creates the views (a views.sql change alone reaches a lake here)
        except SchemaVersionError as exc:
            print(f"error: {exc}")
            return 1
        print(f"{args.warehouse}: schema version {before or 0} -> {LATEST_VERSION}")
        return 0
    path = Path(args.warehouse)
    before = None
    if path.exists():
        con = duckdb.connect(str(path), read_only=True)
        try:
            before = current_version(con)
        finally:
            con.close()
    try:
        Warehouse(path).ensure_schema()  # schema.sql, then every pending migration, then the views
    except SchemaVersionError as exc:
        print(f"error: {exc}")
        return 1
    if before != LATEST_VERSION:
        print(f"{path}: schema version {before or 0} -> {LATEST_VERSION}")
    else:
        print(f"{path}: already at schema version {LATEST_VERSION} (latest {LATEST_VERSION})")
    return 0


def add_admin_commands(sub: argparse._SubParsersAction) -> None:
    """Add ``doctor``, ``metrics`` and ``migrate`` to the ``dagster-ocr`` subcommands."""
    d = sub.add_parser("doctor", help="check the installation and say how to fix what is wrong")
    d.add_argument(
        "--warehouse",
        help="also check this warehouse's schema version (DuckDB file or ducklake:postgres:...)",
    )
    d.add_argument("--lock", help="lock file to compare packages with (default: requirements.lock)")
    d.add_argument(
        "--model-path",
        action="append",
        metavar="ROLE=PATH",
        help="a transformers checkpoint folder to check (repeatable); default: the ones the "
        "settings' ocr.engine and $DAGSTER_OCR_GPU_TARGET / $DAGSTER_OCR_GPU_DRAFT name",
    )
    d.add_argument("--settings", help="settings file (YAML or JSON) whose OCR engine to check")
    d.add_argument("--require-gpu", action="store_true", help="an invisible GPU is an error, not a note")
    d.set_defaults(func=cmd_doctor)

    m = sub.add_parser("metrics", help="Prometheus figures from a warehouse: serve, print or push")
    m.add_argument("--warehouse", required=True)
    m.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    m.add_argument("--port", type=int, default=9108)
    m.add_argument("--min-interval", type=float, default=10.0, help="seconds between warehouse reads")
    m.add_argument("--once", action="store_true", help="print the exposition and exit")
    m.add_argument("--push", metavar="GATEWAY", help="push once to a Pushgateway (host:port or URL)")
    m.add_argument("--job", default="dagster_ocr", help="Pushgateway job name")
    m.set_defaults(func=cmd_metrics)

    g = sub.add_parser("migrate", help="bring a warehouse to this code's schema version (back it up first)")
    g.add_argument("--warehouse", required=True)
    g.add_argument("--lake-data", help="a lake's Parquet data (to create a lake that does not exist yet)")
    g.set_defaults(func=cmd_migrate)
