"""How the one-partition-per-document design scales with registered documents (issue 39, item 1).

On a Dagster instance built from deploy/dagster.yaml (run, event log and schedule storage in
PostgreSQL, QueuedRunCoordinator) in a scratch database, the ``documents`` dynamic partitions
definition is filled with N synthetic document keys (registry only: ``add_dynamic_partitions`` in
batches, no parsing, no runs), and at each N the bench times, with the real Dagster code paths:

(c) reads: ``get_dynamic_partitions`` (every key: what the inbox sensor, a backfill launch and
    the UI's pickers load), ``has_dynamic_partition`` (one key), a page of
    ``get_paginated_dynamic_partitions``; the GraphQL queries behind the UI's partition views
    (the asset's partition keys and statuses, the job's partition list, first page of 50).
(a) the inbox sensor with ``--files`` new small PDFs: its evaluation called as the tests call it
    (``build_sensor_context`` + the sensor, cursor empty, so every file is hashed), and one real
    sensor daemon tick (``execute_sensor_iteration`` over an in-process code location) with
    ``--tick-files`` new files, whose per-document work (asset event, partition check and add,
    run-key look-up, run created and queued) is timed by wrapping the daemon's own functions and
    scaled to ``--files`` (it is linear in documents; creating 1,000 runs per step would take
    ~15 min on 2 cores). The SQL statements and new connections of the tick are counted.
(b) a backfill of ``--backfill`` documents: the ``launchPartitionBackfill`` GraphQL mutation that
    ``dagster-ocr backfill`` and the UI send (validation + ``add_backfill``), timed at full size;
    then the backfill daemon's ``execute_job_backfill_iteration`` on a backfill of
    ``--backfill-runs`` of them until each run is created and queued, with the daemon's 1 s pause
    between chunks of 25 removed; the per-run cost is scaled to ``--backfill`` and the pauses
    (a constant: ceil(backfill / 25) - 1 seconds) added back.

With ``--per-run N`` (batch mode, ``DAGSTER_OCR_DOCUMENTS_PER_RUN=N``: one ``ingest_documents`` run
per N documents, assets/batches.py) nothing is scaled: (a) is one real daemon tick with all
``--files`` new files (⌈files/N⌉ runs created and queued), and (b) is ``dagster-ocr backfill
--per-run N`` launching ⌈backfill/N⌉ batch runs through GraphQL ``launchRun`` until each is queued.
``--per-run auto`` (the default deployment since issue 39's adaptive batching) is measured the same way
whenever ``--files`` exceeds R (at least DAGSTER_OCR_RUNS_PER_TICK and deploy/dagster.yaml's
``max_concurrent_runs``, a multiple of the latter: 12 there): R balanced batch runs in the tick, and R for the
backfill above R documents.

Nothing is executed: the queued runs stay queued (no run daemon). The database is dropped at the
end unless ``--keep-db``.

    .venv/bin/python bench/partitions_scale.py --sizes 1000,10000,100000,300000 \
        [--db dagster_scale] [--files 1000] [--tick-files 20] [--backfill 1000] \
        [--backfill-runs 25] [--out /tmp/partitions_scale.json]

About 5 minutes for 1k..300k on 2 shared cores (docs/scale.md has the figures).
"""

# ruff: noqa: B023  (the lambdas timed below are called at once, inside their loop iteration)
from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import functools
import hashlib
import json
import logging
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

PG = {"host": "127.0.0.1", "port": 5432, "user": "postgres"}
SEED_PDF = Path("/work/shared/corpus/tables/icdar2013/us-004/us-004.pdf")
ASSET = "source_documents"
JOB = "ingest_document"

TIMES: dict[str, float] = defaultdict(float)
COUNTS: dict[str, int] = defaultdict(int)


def timed(name: str, fn):
    """``fn`` wrapped so that its wall time adds up under ``name`` (for the daemon's functions)."""

    @functools.wraps(fn)
    def wrapper(*a, **kw):
        t = time.perf_counter()
        try:
            return fn(*a, **kw)
        finally:
            TIMES[name] += time.perf_counter() - t
            COUNTS[name] += 1

    return wrapper


def timed_gen(name: str, fn):
    @functools.wraps(fn)
    def wrapper(*a, **kw):
        gen = fn(*a, **kw)
        while True:
            t = time.perf_counter()
            try:
                item = next(gen)
            except StopIteration:
                TIMES[name] += time.perf_counter() - t
                return
            TIMES[name] += time.perf_counter() - t
            yield item

    return wrapper


def clock(fn, repeat: int = 1):
    """(median wall seconds, last result) of ``repeat`` calls."""
    walls, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        walls.append(time.perf_counter() - t)
    return statistics.median(walls), out


def doc_key(i: int) -> str:
    """A key of the product's form, ``<stem>-<12 hex digits of the sha256>``, for document ``i``."""
    h = hashlib.sha256(f"synthetic-{i}".encode()).hexdigest()
    return f"contract_{2020 + i % 6}_supplier_{i:07d}-{h[:12]}"


def admin():
    import psycopg2

    con = psycopg2.connect(dbname="postgres", connect_timeout=3, **PG)
    con.autocommit = True
    return con


def table_mb(db: str) -> dict[str, float]:
    import psycopg2

    con = psycopg2.connect(dbname=db, **PG)
    with con.cursor() as cur:
        cur.execute(
            "SELECT relname, pg_total_relation_size(c.oid) FROM pg_class c JOIN pg_namespace n ON "
            "n.oid = c.relnamespace WHERE n.nspname = 'public' AND relkind = 'r' AND relname IN "
            "('dynamic_partitions', 'runs', 'run_tags', 'event_logs', 'bulk_actions')"
        )
        out = {name: round(size / 2**20, 1) for name, size in cur.fetchall()}
    con.close()
    return out


def write_pdfs(inbox: Path, level: int, count: int) -> None:
    """``count`` distinct small PDFs: the seed's bytes plus a unique trailer comment."""
    seed = SEED_PDF.read_bytes()
    for j in range(count):
        (inbox / f"scan_{level:02d}_{j:05d}.pdf").write_bytes(seed + f"\n%bench {level} {j}\n".encode())


UI_ASSET_QUERY = """
query ($key: AssetKeyInput!) {
  assetNodeOrError(assetKey: $key) {
    __typename
    ... on AssetNode {
      partitionKeysByDimension { name partitionKeys }
      assetPartitionStatuses {
        __typename
        ... on DefaultPartitionStatuses { materializedPartitions failedPartitions materializingPartitions }
      }
    }
  }
}
"""

UI_JOB_PARTITIONS = """
query ($selector: RepositorySelector!, $name: String!, $limit: Int) {
  partitionSetOrError(repositorySelector: $selector, partitionSetName: $name) {
    __typename
    ... on PartitionSet {
      partitionsOrError(limit: $limit) { __typename ... on Partitions { results { name } } }
    }
  }
}
"""

LAUNCH = """
mutation Launch($params: LaunchBackfillParams!) {
  launchPartitionBackfill(backfillParams: $params) {
    __typename
    ... on LaunchBackfillSuccess { backfillId }
    ... on PythonError { message }
    ... on Error { message }
  }
}
"""


def code_location_origin() -> Any:
    """This repo's definitions as an in-process code location named "dagster_ocr" (the daemon's view)."""
    from dagster._core.remote_origin import InProcessCodeLocationOrigin
    from dagster._core.types.loadable_target_origin import LoadableTargetOrigin

    return InProcessCodeLocationOrigin(
        LoadableTargetOrigin(
            executable_path=sys.executable,
            module_name="assets.definitions",
            attribute="defs",
            working_directory=str(REPO),
        ),
        location_name="dagster_ocr",
    )


def scratch_instance(db: str, prefix: str) -> tuple[Any, Path, Path, dict[str, str]]:
    """A fresh PostgreSQL database ``db`` (dropped first) and a temporary Dagster home and data folder
    for it: (admin connection, root folder, data folder, the environment a process needs to use them)."""
    con = admin()
    with con.cursor() as cur:
        cur.execute(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)')
        cur.execute(f'CREATE DATABASE "{db}"')
    root = Path(tempfile.mkdtemp(prefix=prefix))
    home = root / "home"
    home.mkdir()
    shutil.copy(REPO / "deploy" / "dagster.yaml", home / "dagster.yaml")
    data = root / "data"
    (data / "inbox").mkdir(parents=True)
    env = {
        "DAGSTER_HOME": str(home),
        "DAGSTER_PG_HOST": PG["host"],
        "DAGSTER_PG_PORT": str(PG["port"]),
        "DAGSTER_PG_USER": PG["user"],
        "DAGSTER_PG_PASSWORD": "unused-with-trust-auth",
        "DAGSTER_PG_DB": db,
        "DAGSTER_OCR_DATA_DIR": str(data),
        "DAGSTER_OCR_OCR_ENGINE": "none",
    }
    return con, root, data, env


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="1000,10000,100000", help="registered documents at each step")
    ap.add_argument("--db", default="dagster_scale", help="scratch PostgreSQL database (recreated)")
    ap.add_argument("--files", type=int, default=1000, help="new inbox files per sensor tick")
    ap.add_argument("--backfill", type=int, default=1000, help="documents per backfill")
    ap.add_argument("--tick-files", type=int, default=20, help="new files in the real daemon tick")
    ap.add_argument("--backfill-runs", type=int, default=25, help="runs the backfill daemon creates")
    ap.add_argument("--batch", type=int, default=10000, help="keys per add_dynamic_partitions call")
    ap.add_argument("--out", default="/tmp/partitions_scale.json")
    ap.add_argument("--keep-db", action="store_true")
    ap.add_argument(
        "--per-run",
        type=lambda v: "auto" if v == "auto" else int(v),
        default=1,
        help="batch mode: documents per ingest_documents run (DAGSTER_OCR_DOCUMENTS_PER_RUN); 1: off; "
        "auto: one run per document up to R new documents, R balanced batch runs above",
    )
    ap.add_argument(
        "--submit-workers",
        type=int,
        default=0,
        help="threads the sensor daemon submits a tick's runs with (dagster.yaml sensors: "
        "num_submit_workers); 0: serially, Dagster's default",
    )
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]

    con, root, data, env = scratch_instance(args.db, "partitions-scale-")
    os.environ.update(env | {"DAGSTER_OCR_DOCUMENTS_PER_RUN": str(args.per_run)})
    results: list[dict] = []
    try:
        run_levels(args, sizes, data, results)
    finally:
        Path(args.out).write_text(json.dumps(results, indent=1))
        if not args.keep_db:
            with con.cursor() as cur:
                cur.execute(f'DROP DATABASE IF EXISTS "{args.db}" WITH (FORCE)')
        con.close()
        shutil.rmtree(root, ignore_errors=True)
    print(f"wrote {args.out}")
    return 0


def run_levels(args, sizes: list[int], data: Path, results: list[dict]) -> None:
    import dagster as dg
    import dagster._core.execution.job_backfill as job_backfill
    import dagster._daemon.sensor as sensor_daemon
    from dagster._core.remote_representation.code_location import InProcessCodeLocation
    from dagster._core.test_utils import (
        InProcessTestWorkspaceLoadTarget,
        create_test_daemon_workspace_context,
        freeze_time,
    )
    from dagster_graphql.test.utils import execute_dagster_graphql

    import assets.backfill_cli as backfill_cli
    import assets.sensors as product_sensors
    from assets.backfill_cli import backfill_params
    from assets.partitions import documents_partitions
    from resources import DocumentStoreResource

    name = documents_partitions.name
    from assets.batches import runs_per_tick
    from dagster_ocr.deployment import AUTO, batch_sizes

    per_run = args.per_run if args.per_run == AUTO else max(1, args.per_run)
    logger = logging.getLogger("partitions_scale")
    logging.getLogger("dagster").setLevel(logging.WARNING)

    # the daemon's own functions, timed where they are called (module globals)
    evaluate = InProcessCodeLocation.get_sensor_execution_data

    def evaluate_one(*a, **kw):
        # each sensor's own share of the daemon iteration's evaluation (self, instance, handle, name)
        name = kw.get("name") or a[3]
        t = time.perf_counter()
        try:
            return evaluate(*a, **kw)
        finally:
            TIMES[f"sensor.evaluation.by.{name}"] += time.perf_counter() - t

    InProcessCodeLocation.get_sensor_execution_data = timed("sensor.evaluation", evaluate_one)
    known = product_sensors._known

    def timed_known(instance):
        # the sensor's "which of these documents have a partition?": a set built from every key
        # (KnownDocuments, before), or a query it calls with the scanned files' keys (now)
        found = known(instance)
        return timed("sensor.evaluation.known_documents", found) if callable(found) else found

    product_sensors._known = timed("sensor.evaluation.known_documents", timed_known)
    product_sensors.scan_inbox = timed("sensor.evaluation.scan_inbox", product_sensors.scan_inbox)
    sensor_daemon._handle_dynamic_partitions_requests = timed(
        "daemon.add_partitions", sensor_daemon._handle_dynamic_partitions_requests
    )
    sensor_daemon.fetch_existing_runs = timed("daemon.run_key_lookups", sensor_daemon.fetch_existing_runs)
    sensor_daemon._submit_run_request = timed(
        "daemon.create_and_queue_runs", sensor_daemon._submit_run_request
    )
    job_backfill._get_partitions_chunk = timed("backfill.get_chunk", job_backfill._get_partitions_chunk)
    job_backfill.submit_backfill_runs = timed_gen(
        "backfill.create_and_queue_runs", job_backfill.submit_backfill_runs
    )
    job_backfill.CHECKPOINT_INTERVAL = 0  # the daemon sleeps 1 s between chunks: counted apart
    pauses = max(0, -(-args.backfill // job_backfill.CHECKPOINT_COUNT) - 1) * 1.0

    # every SQL statement and every new database connection (the storages use NullPool: one
    # connection per storage call), counted over the whole process
    from sqlalchemy import event
    from sqlalchemy.engine import Engine

    event.listen(
        Engine, "connect", lambda *a: COUNTS.__setitem__("sql.connections", COUNTS["sql.connections"] + 1)
    )
    event.listen(
        Engine,
        "before_cursor_execute",
        lambda *a: COUNTS.__setitem__("sql.statements", COUNTS["sql.statements"] + 1),
    )

    instance = dg.DagsterInstance.get()
    # R: what the sensor's "auto" cuts a large tick into (unused with a fixed --per-run)
    runs = runs_per_tick(instance)

    def sizes_of(n: int) -> list[int] | None:
        """The batch runs n documents become (None: one run per document)."""
        return batch_sizes(n, per_run, runs)

    def runs_of(n: int) -> int:
        sizes = sizes_of(n)
        return n if sizes is None else len(sizes)

    batched = sizes_of(args.files) is not None
    report_event = timed("daemon.asset_events", instance.report_runless_asset_event)
    instance.report_runless_asset_event = report_event  # type: ignore[method-assign]
    origin = code_location_origin()
    with create_test_daemon_workspace_context(InProcessTestWorkspaceLoadTarget(origin), instance) as wpc:
        ctx = wpc.create_request_context()
        location = ctx.get_code_location("dagster_ocr")
        repo = next(iter(location.get_repositories().values()))
        instance.start_sensor(repo.get_sensor("inbox_sensor"))
        repo_selector = {"repositoryLocationName": "dagster_ocr", "repositoryName": repo.name}
        registered = 0
        start = dt.datetime.now(dt.UTC)
        for level, n in enumerate(sizes):
            row: dict = {"N": n, "per_run": per_run, "runs_per_tick": runs}
            t = time.perf_counter()
            while registered < n:
                batch = [doc_key(i) for i in range(registered, min(n, registered + args.batch))]
                instance.add_dynamic_partitions(name, batch)
                registered += len(batch)
            row["register_s"] = round(time.perf_counter() - t, 2)
            present = len(instance.get_dynamic_partitions(name))
            row["partitions"] = present
            print(
                f"\n== N={n:,} ({present:,} partitions; registered this step in {row['register_s']} s)",
                flush=True,
            )

            # (c) reads
            row["get_dynamic_partitions_s"], keys = clock(lambda: instance.get_dynamic_partitions(name), 3)
            probe = [keys[(k * 7919) % len(keys)] for k in range(200)]
            w, _ = clock(lambda: [instance.has_dynamic_partition(name, k) for k in probe])
            row["has_dynamic_partition_ms"] = round(1000 * w / len(probe), 3)
            row["paginated_page_50_s"], _ = clock(
                lambda: instance.get_paginated_dynamic_partitions(name, limit=50, ascending=False), 3
            )
            # the bounded question the sensor asks now: which of 2,000 candidate keys (1,000 files,
            # readable key and sha256 each) exist
            candidates = [keys[(k * 7919) % len(keys)] for k in range(1000)]
            candidates += [f"new-{i:012x}" for i in range(1000)]
            row["existing_2000_keys_s"], _ = clock(
                lambda: instance.get_existing_dynamic_partitions(name, candidates), 3
            )
            if hasattr(product_sensors, "KnownDocuments"):  # before the sensor's bounded query
                row["known_documents_s"], _ = clock(lambda: product_sensors.KnownDocuments(keys), 3)
            ctx = wpc.create_request_context()
            row["ui_asset_partitions_s"], res = clock(
                lambda: execute_dagster_graphql(ctx, UI_ASSET_QUERY, {"key": {"path": [ASSET]}}), 2
            )
            node = res.data["assetNodeOrError"]
            assert node["__typename"] == "AssetNode", res
            assert len(node["partitionKeysByDimension"][0]["partitionKeys"]) == present
            for limit, label in ((None, "ui_job_partitions_all_s"), (50, "ui_job_partitions_page_50_s")):
                row[label], res = clock(
                    lambda limit=limit: execute_dagster_graphql(
                        ctx,
                        UI_JOB_PARTITIONS,
                        {"selector": repo_selector, "name": f"{JOB}_partition_set", "limit": limit},
                    ),
                    2,
                )
                assert res.data["partitionSetOrError"]["__typename"] == "PartitionSet", res

            # (a1) the sensor's evaluation with --files new documents, called as a test calls it
            # (build_sensor_context + the sensor), on an inbox of its own; its partitions are not added
            eval_inbox = data / f"eval_inbox_{level}"
            eval_inbox.mkdir()
            write_pdfs(eval_inbox, level, args.files)
            store = DocumentStoreResource(
                inbox_dir=str(eval_inbox), store_dir=str(data / f"eval_store_{level}")
            )
            TIMES.clear()
            t = time.perf_counter()
            result = product_sensors.build_inbox_sensor(per_run)(
                dg.build_sensor_context(instance=instance, cursor=None, resources={"store": store})
            )
            row["sensor_eval_s"] = round(time.perf_counter() - t, 2)
            row["sensor_eval.known_documents_s"] = round(TIMES["sensor.evaluation.known_documents"], 2)
            row["sensor_eval.scan_inbox_s"] = round(TIMES["sensor.evaluation.scan_inbox"], 2)
            row["sensor_eval_requests"] = len(result.run_requests)
            assert len(result.run_requests) == runs_of(args.files), len(result.run_requests)
            shutil.rmtree(eval_inbox)

            # (a2) one real sensor daemon tick with --tick-files new documents: what the daemon does
            # with the result per document (asset event, partition check and add, run-key look-up,
            # run created and queued), scaled to --files below
            inbox = data / "inbox"
            for old in inbox.iterdir():
                old.unlink()
            # batch mode: the whole --files in one real tick (1/N of the runs to create)
            tick_files = args.files if batched else args.tick_files
            write_pdfs(inbox, level + 100, tick_files)
            TIMES.clear()
            COUNTS.clear()
            with freeze_time(start + dt.timedelta(minutes=10 * (level + 1))):
                t = time.perf_counter()
                with contextlib.ExitStack() as pools:
                    submit = (
                        pools.enter_context(ThreadPoolExecutor(max_workers=args.submit_workers))
                        if args.submit_workers
                        else None
                    )
                    list(sensor_daemon.execute_sensor_iteration(wpc, logger, None, submit))
                row["tick_s"] = round(time.perf_counter() - t, 2)
                row["tick_submit_workers"] = args.submit_workers
                # wall per new document after the evaluation: with submit threads the timed parts
                # below overlap, so this is the figure to compare across --submit-workers
                row["tick_wall_per_doc_s"] = round(
                    (row["tick_s"] - TIMES["sensor.evaluation"]) / tick_files, 3
                )
            row["tick_files"] = tick_files
            row["tick_sql_connections"] = COUNTS["sql.connections"]
            row["tick_sql_statements"] = COUNTS["sql.statements"]
            row["tick_runs"] = COUNTS["daemon.create_and_queue_runs"]
            assert row["tick_runs"] == runs_of(tick_files), row["tick_runs"]
            for k in sorted(TIMES):
                if k.startswith("sensor.evaluation.by."):
                    row["tick." + k + "_s"] = round(TIMES[k], 2)
            for k in (
                "sensor.evaluation",
                "daemon.asset_events",
                "daemon.add_partitions",
                "daemon.run_key_lookups",
                "daemon.create_and_queue_runs",
            ):
                row["tick." + k + "_s"] = round(TIMES[k], 2)
            per_doc_parts = (
                "daemon.asset_events",
                "daemon.add_partitions",
                "daemon.run_key_lookups",
                "daemon.create_and_queue_runs",
            )
            per_doc = sum(TIMES[k] for k in per_doc_parts) / tick_files
            fixed = row["tick_s"] - TIMES["sensor.evaluation"] - per_doc * tick_files
            row["tick_daemon_per_doc_s"] = round(per_doc, 3)
            row["tick_fixed_s"] = round(fixed, 2)
            # the tick with --files new documents: the evaluation measured at that size, plus the
            # daemon's per-document work measured on the small tick times --files (linear in
            # documents), plus the tick's own bookkeeping
            if batched:  # measured whole, not estimated
                row["sensor_tick_measured_s"] = row["tick_s"]
            else:
                row["sensor_tick_est_s"] = round(row["sensor_eval_s"] + per_doc * args.files + fixed, 1)
            registered = len(instance.get_dynamic_partitions(name))

            # (b) a backfill of --backfill documents, launched the way dagster-ocr backfill does
            step = max(1, len(keys) // args.backfill)
            chosen = keys[::step][: args.backfill]
            names = [k + ".pdf" for k in chosen]
            params = backfill_params(JOB, "dagster_ocr", repo.name, chosen, names)
            ctx = wpc.create_request_context()
            if batched and sizes_of(len(chosen)) is not None:
                # dagster-ocr backfill --per-run N: ceil(backfill/N) launchRun mutations, each run
                # created and queued (QueuedRunCoordinator) before the call returns
                backfill_cli._graphql = lambda url, query, variables=None, timeout=60.0: (
                    execute_dagster_graphql(wpc.create_request_context(), query, variables).data
                )
                before = instance.get_runs_count()
                row["backfill_batches_launch_s"], ids = clock(
                    lambda: backfill_cli.launch_batches(
                        "in-process", chosen, names, sizes=sizes_of(len(chosen))
                    )
                )
                row["backfill_batch_runs"] = len(ids)
                assert instance.get_runs_count() - before == len(ids) == runs_of(len(chosen))
                row["runs_in_storage"] = instance.get_runs_count()
                row["table_mb"] = table_mb(args.db)
                for k, v in row.items():
                    print(f"  {k}: {round(v, 4) if isinstance(v, float) else v}", flush=True)
                results.append(row)
                continue
            row["backfill_launch_s"], res = clock(
                lambda: execute_dagster_graphql(ctx, LAUNCH, {"params": params})
            )
            launched = res.data["launchPartitionBackfill"]
            assert launched["__typename"] == "LaunchBackfillSuccess", launched
            backfill = instance.get_backfill(launched["backfillId"])
            # the backfill daemon on a backfill of --backfill-runs of them (one chunk of 25 is what
            # it submits between checkpoints): the per-run cost, scaled to --backfill below
            small = dict(params, partitionNames=chosen[: args.backfill_runs])
            res = execute_dagster_graphql(ctx, LAUNCH, {"params": small})
            backfill = instance.get_backfill(res.data["launchPartitionBackfill"]["backfillId"])
            TIMES.clear()
            COUNTS.clear()
            t = time.perf_counter()
            job_backfill.execute_job_backfill_iteration(backfill, logger, wpc, None, instance)
            row["backfill_daemon_s"] = round(time.perf_counter() - t, 2)
            row["backfill_daemon_sql_connections"] = COUNTS["sql.connections"]
            row["backfill_daemon_sql_statements"] = COUNTS["sql.statements"]
            row["backfill_daemon_runs"] = len(
                instance.get_run_ids(dg.RunsFilter(tags={"dagster/backfill": backfill.backfill_id}))
            )
            assert row["backfill_daemon_runs"] == args.backfill_runs, row["backfill_daemon_runs"]
            row["backfill.get_chunk_s"] = round(TIMES["backfill.get_chunk"], 2)
            row["backfill.create_and_queue_runs_s"] = round(TIMES["backfill.create_and_queue_runs"], 2)
            run_cost = row["backfill_daemon_s"] / args.backfill_runs
            row["backfill_daemon_per_run_s"] = round(run_cost, 3)
            # all --backfill runs: per-run cost x runs + the daemon's 1 s pause between chunks
            row["backfill_daemon_pauses_s"] = pauses
            row["backfill_daemon_est_s"] = round(run_cost * args.backfill + pauses, 1)
            row["runs_in_storage"] = instance.get_runs_count()
            row["table_mb"] = table_mb(args.db)
            for k, v in row.items():
                print(f"  {k}: {round(v, 4) if isinstance(v, float) else v}", flush=True)
            results.append(row)


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        sys.exit(main())
