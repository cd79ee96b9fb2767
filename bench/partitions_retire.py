"""Retired partitions at scale (issue 39, option 2): a million registered documents, only the live ones
as Dagster partitions.

Builds on bench/partitions_scale.py (its instance set-up, key form, UI GraphQL queries): on a Dagster
instance from deploy/dagster.yaml (PostgreSQL storages) in a scratch database,

- the warehouse index: a DuckDB ``document_partitions`` of ``--registered`` rows (the product's
  schema), and the look-ups a re-run by name makes in it (``recorded_doc_id``, ``recorded_key``);
- the event log's history of the retired documents: ``--history`` ``source_documents``
  materializations of keys that are no longer partitions (written with ``store_event_batch``,
  1,000 a statement), because the UI's partition status is rebuilt from every materialized key
  each time the key set changes (Dagster's status cache is keyed by a hash of all the keys);
- at each ``--live`` level L (partitions in the ``documents`` definition): the UI's queries in-process
  (the asset page's partition keys + statuses, cold: first after the key set changed, and warm; the
  job's partition list, all and first 50), and with ``--browser`` the pages themselves in headless
  Chromium against a dagster-webserver on the same instance (the asset page's Partitions tab, the
  partition picker: until a live key is on screen; an asset job has no Partitions tab in 1.13, its
  backfill dialog's list is the GraphQL job query above); the retire tick (``retire_loaded`` over
  ``--retire`` due loads, ``--per-tick`` a tick, plus an idle tick; and the tick at the
  ``DAGSTER_OCR_RETIRE_ABOVE`` threshold, which counts the live keys and retires nothing); the re-add path
  (``readd_partitions``: aliased ``addDynamicPartition`` mutations, as ``dagster-ocr rerun`` sends
  them, for ``--readd`` keys, all retired) and the backfill launch of those keys.

With ``--carry`` (DAGSTER_OCR_CARRY_STATUS_CACHE, assets/status_cache.py) each live key is also
materialized once, as the inbox sensor registers it, the status is built once from the history, and
after the level's adds and after the retire ticks the bench times ``carry_status_cache``, Dagster's
status read and the asset page on the carried cache, then the page rebuilt from the history (the
cache wiped), and asserts both pages give the same statuses.

    .venv/bin/python bench/partitions_retire.py --registered 1000000 --history 200000 \\
        --live 1000,20000,100000 --retire 1000 --readd 1000 --db scale_h39 --browser \\
        --out bench/partitions_retire.json
"""

# ruff: noqa: B023  (the lambdas timed below are called at once, inside their loop iteration)
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from partitions_scale import (  # noqa: E402
    LAUNCH,
    UI_ASSET_QUERY,
    UI_JOB_PARTITIONS,
    clock,
    code_location_origin,
    doc_key,
    scratch_instance,
    table_mb,
)

JOB = "ingest_document"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


def build_registry(path: Path, n: int) -> dict:
    """A warehouse whose ``document_partitions`` holds ``n`` documents; the look-ups' times."""
    import duckdb

    from dagster_ocr import partition_keys
    from dagster_ocr.warehouse import Warehouse

    wh = Warehouse(path)
    wh.ensure_schema()
    t = time.perf_counter()
    con = duckdb.connect(str(path))
    con.execute(
        """
        INSERT INTO document_partitions (partition_key, doc_id, file_name, first_seen)
        SELECT 'contract_' || i || '-' || left(sha256('synthetic-' || i), 12), sha256('synthetic-' || i),
               'contract_' || i || '.pdf', now()::TIMESTAMP
        FROM range(?) t(i)
        """,
        [n],
    )
    con.close()
    out = {"registry_rows": n, "registry_build_s": round(time.perf_counter() - t, 2)}
    probe = [int(i * 7919 % n) for i in range(50)]
    import hashlib

    ids = [hashlib.sha256(f"synthetic-{i}".encode()).hexdigest() for i in probe]
    keys = [f"contract_{i}-{d[:12]}" for i, d in zip(probe, ids, strict=True)]
    w, got = clock(lambda: [partition_keys.recorded_doc_id(wh, k) for k in keys])
    assert got == ids
    out["registry_key_to_doc_ms"] = round(1000 * w / len(keys), 2)
    w, got = clock(lambda: [partition_keys.recorded_key(wh, d) for d in ids])
    assert got == keys
    out["registry_doc_to_key_ms"] = round(1000 * w / len(ids), 2)
    return out


def write_history(instance, keys: list[str], asset: str, batch: int = 1000) -> float:
    """``source_documents``-style materializations of ``keys`` (runless), ``batch`` a statement."""
    import dagster as dg
    from dagster._core.events import DagsterEvent, DagsterEventType, StepMaterializationData
    from dagster._core.events.log import EventLogEntry
    from dagster._core.instance.utils import RUNLESS_JOB_NAME, RUNLESS_RUN_ID

    t = time.perf_counter()
    for start in range(0, len(keys), batch):
        now = time.time()
        entries = [
            EventLogEntry(
                error_info=None,
                level="INFO",
                user_message="",
                run_id=RUNLESS_RUN_ID,
                timestamp=now,
                dagster_event=DagsterEvent(
                    event_type_value=DagsterEventType.ASSET_MATERIALIZATION.value,
                    job_name=RUNLESS_JOB_NAME,
                    event_specific_data=StepMaterializationData(
                        dg.AssetMaterialization(asset_key=asset, partition=k)
                    ),
                ),
            )
            for k in keys[start : start + batch]
        ]
        instance.event_log_storage.store_event_batch(entries)
    return time.perf_counter() - t


def browser_times(base: str, pages: dict[str, str], live_key_pattern: str, timeout_s: float = 120) -> dict:
    """Seconds from navigation until a live key is on screen, per page (headless Chromium), in a
    process of its own (Playwright's sync API hangs beside the event loop Dagster's in-process
    GraphQL leaves in this one)."""
    job = json.dumps([base, pages, live_key_pattern, timeout_s])
    out = subprocess.run(
        [sys.executable, __file__, "--browser-job", job], capture_output=True, text=True, timeout=600
    )
    if out.returncode:
        return {"error": out.stderr[-2000:]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def _browser_times(base: str, pages: dict[str, str], live_key_pattern: str, timeout_s: float) -> dict:  # noqa: E501
    from playwright.sync_api import sync_playwright

    out = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM, args=["--headless", "--no-sandbox", "--disable-gpu"]
        )
        page = browser.new_page(viewport={"width": 1600, "height": 1000})
        page.goto(base + "/overview", wait_until="networkidle")  # the app's bundle, once
        for label, path in pages.items():
            t = time.perf_counter()
            page.goto(base + path)
            try:
                page.get_by_text(re.compile(live_key_pattern)).first.wait_for(timeout=timeout_s * 1000)
                out[label] = round(time.perf_counter() - t, 2)
            except Exception as exc:  # noqa: BLE001  (a page that never shows a key: say so, go on)
                out[label] = f"no key shown in {timeout_s:g} s ({type(exc).__name__})"
                page.screenshot(path=f"/tmp/partitions_retire_{label}.png")
        browser.close()
    return out


def main() -> int:
    import faulthandler
    import signal

    faulthandler.register(signal.SIGUSR1)  # kill -USR1 <pid>: where a long step is
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--registered", type=int, default=1_000_000, help="documents in the warehouse index")
    ap.add_argument("--history", type=int, default=100_000, help="retired documents' materializations")
    ap.add_argument("--live", default="1000,20000,100000", help="live partitions at each step")
    ap.add_argument("--retire", type=int, default=1000, help="due loads the retire ticks work through")
    ap.add_argument("--per-tick", type=int, default=500, help="partitions retired a tick")
    ap.add_argument("--readd", type=int, default=1000, help="retired keys re-added and backfilled")
    ap.add_argument("--db", default="scale_h39", help="scratch PostgreSQL database (recreated, dropped)")
    ap.add_argument("--browser", action="store_true", help="time the pages in headless Chromium")
    ap.add_argument("--browser-timeout", type=float, default=120, help="seconds a page may take")
    ap.add_argument(
        "--carry",
        action="store_true",
        help="carry the status cache after each key change (DAGSTER_OCR_CARRY_STATUS_CACHE) and time "
        "the asset page on the carried cache beside Dagster's rebuild",
    )
    ap.add_argument("--out", default="/tmp/partitions_retire.json")
    args = ap.parse_args()

    con, root, data, env = scratch_instance(args.db, "partitions-retire-")
    os.environ.update(env)
    result: dict = {"args": vars(args), "levels": []}
    web = None
    try:
        result |= build_registry(data / "warehouse.duckdb", args.registered)
        print(json.dumps({k: v for k, v in result.items() if k != "args"}), flush=True)
        if args.browser:
            workspace = root / "workspace.yaml"
            workspace.write_text(
                "load_from:\n  - python_module:\n      module_name: assets.definitions\n"
                f"      attribute: defs\n      working_directory: {REPO}\n"
            )
            port = 3939
            web = subprocess.Popen(
                [
                    str(REPO / ".venv/bin/dagster-webserver"),
                    "-h",
                    "127.0.0.1",
                    "-p",
                    str(port),
                    "-w",
                    str(workspace),
                ],
                cwd=root,
                env={**os.environ, "PYTHONPATH": str(REPO)},
                stdout=(root / "webserver.log").open("w"),
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        run_levels(args, result, data, web and f"http://127.0.0.1:{port}")
    finally:
        Path(args.out).write_text(json.dumps(result, indent=1))
        if web is not None:
            os.killpg(web.pid, 15)
            web.wait(timeout=30)
        with con.cursor() as cur:
            cur.execute(f'DROP DATABASE IF EXISTS "{args.db}" WITH (FORCE)')
        con.close()
        shutil.rmtree(root, ignore_errors=True)
    print(f"wrote {args.out}")
    return 0


def run_levels(args, result: dict, data: Path, base: str | None) -> None:
    import dagster as dg
    from dagster._core.storage.partition_status_cache import get_and_update_asset_status_cache_value
    from dagster._core.test_utils import (
        InProcessTestWorkspaceLoadTarget,
        create_test_daemon_workspace_context,
    )
    from dagster_graphql.test.utils import execute_dagster_graphql

    import assets.backfill_cli as backfill_cli
    from assets.backfill_cli import backfill_params
    from assets.partitions import documents_partitions
    from assets.retire import retire_loaded
    from assets.status_cache import carry_status_cache
    from dagster_ocr.ingest import DocumentStore

    name = documents_partitions.name
    instance = dg.DagsterInstance.get()
    store = DocumentStore(data / "store")
    # history: the retired documents are keys >= 10,000,000, never partitions again here
    history = [doc_key(10_000_000 + i) for i in range(args.history)]
    w = write_history(instance, history, "source_documents")
    result["history_write_s"] = round(w, 1)
    print(f"history: {args.history:,} materializations in {w:.1f} s", flush=True)
    origin = code_location_origin()
    with create_test_daemon_workspace_context(InProcessTestWorkspaceLoadTarget(origin), instance) as wpc:
        location = wpc.create_request_context().get_code_location("dagster_ocr")
        repo = next(iter(location.get_repositories().values()))
        selector = {"repositoryLocationName": "dagster_ocr", "repositoryName": repo.name}
        backfill_cli._graphql = lambda url, query, variables=None, timeout=60.0: (
            execute_dagster_graphql(wpc.create_request_context(), query, variables).data
        )
        live, cursor = 0, None
        source = dg.AssetKey("source_documents")

        def statuses():
            res = execute_dagster_graphql(
                wpc.create_request_context(), UI_ASSET_QUERY, {"key": {"path": ["source_documents"]}}
            )
            return res.data["assetNodeOrError"]["assetPartitionStatuses"]

        def carried_then_rebuilt(row: dict, when: str) -> None:
            """The sensor's carry after a key change, the asset page on the carried cache (cold), then
            the same page rebuilt by Dagster from the event log (the cache thrown away): the same
            statuses, side by side."""
            row[f"carry_after_{when}_s"], carried = clock(lambda: carry_status_cache(instance, [source]))
            row[f"carry_after_{when}"] = [vars(c) for c in carried]
            # Dagster's status read alone (in-process), then the page (GraphQL), both on the carried cache
            row[f"status_read_carried_after_{when}_s"], _ = clock(
                lambda: get_and_update_asset_status_cache_value(instance, source, documents_partitions)
            )
            row[f"ui_asset_page_carried_after_{when}_s"], got = clock(statuses)
            instance.wipe_asset_cached_status([source])
            row[f"ui_asset_page_rebuilt_after_{when}_s"], want = clock(statuses)
            assert got == want, "the carried status differs from Dagster's rebuild"

        if args.carry:
            # the first build of the status from the history (once in an instance's life), so that
            # every key change below has a stored cache to carry
            result["ui_asset_page_first_build_s"], _ = clock(statuses)
        for n in [int(s) for s in args.live.split(",")]:
            t = time.perf_counter()
            while live < n:
                batch = [doc_key(i) for i in range(live, min(n, live + 10_000))]
                instance.add_dynamic_partitions(name, batch)
                if args.carry:  # as the inbox sensor registers them: each live key materialized once
                    write_history(instance, batch, "source_documents")
                live += len(batch)
            row: dict = {"live": n, "history": args.history, "registered": args.registered}
            row["add_s"] = round(time.perf_counter() - t, 2)
            print(f"\n== {n:,} live partitions", flush=True)
            step = lambda what: print(f"  [{time.strftime('%H:%M:%S')}] {what}", flush=True)  # noqa: E731

            def asset_page():
                res = execute_dagster_graphql(
                    wpc.create_request_context(), UI_ASSET_QUERY, {"key": {"path": ["source_documents"]}}
                )
                node = res.data["assetNodeOrError"]
                assert len(node["partitionKeysByDimension"][0]["partitionKeys"]) == n, res
                return node

            # cold: the first query after the key set changed rebuilds the status from every
            # materialized key of the asset (the history included); warm: the cached status
            step("UI queries")
            if args.carry:
                carried_then_rebuilt(row, "add")
            row["ui_asset_page_cold_s"], _ = clock(asset_page)
            row["ui_asset_page_warm_s"], _ = clock(asset_page, 2)
            for limit, label in ((None, "ui_job_partitions_all_s"), (50, "ui_job_partitions_page_50_s")):
                row[label], _ = clock(
                    lambda: execute_dagster_graphql(
                        wpc.create_request_context(),
                        UI_JOB_PARTITIONS,
                        {"selector": selector, "name": f"{JOB}_partition_set", "limit": limit},
                    ),
                    2,
                )
            step("browser")
            if base:
                wait_for_webserver(base)
                # the UI middle-truncates long keys ("contract_2021_supp…0c4d5e"): any live key's start
                pattern = r"contract_20\d\d_su"
                row["browser"] = browser_times(
                    base,
                    {
                        "asset_partitions_page_s": "/assets/source_documents?view=partitions",
                    },
                    pattern,
                    args.browser_timeout,
                )

            step("retire ticks")
            # the sensor's tick at or below DAGSTER_OCR_RETIRE_ABOVE (on by default): it counts the live
            # keys and retires nothing, whatever is due; what every tick costs an instance below it
            row["idle_tick_at_threshold_s"], idle = clock(
                lambda: retire_loaded(instance, store, cursor, 0, args.per_tick, now=time.time() + 1, above=n)
            )
            assert idle.retired == [] and idle.cursor == cursor and idle.live == n
            # the retire ticks: --retire of the live keys loaded (due), ticks of --per-tick
            due = [doc_key(i) for i in range(n - min(args.retire, n), n)]
            write_history(instance, due, "knowledge_base")
            ticks, retired = [], 0  # the cursor carries on from the level before, as the sensor's does
            t_all = time.perf_counter()
            while True:
                t = time.perf_counter()
                tick = retire_loaded(instance, store, cursor, 0, args.per_tick, now=time.time() + 1)
                ticks.append(round(time.perf_counter() - t, 2))
                cursor, retired = tick.cursor, retired + len(tick.retired)
                if not tick.retired and not tick.kept:
                    break
            row["retire_total_s"] = round(time.perf_counter() - t_all, 2)
            row["retire_ticks_s"] = ticks  # the last one: an idle tick (nothing due)
            row["retired"] = retired
            row["retire_per_key_ms"] = round(1000 * sum(ticks[:-1]) / max(1, retired), 2)
            assert retired == len(due), (retired, len(due))
            assert len(instance.get_dynamic_partitions(name)) == n - len(due)
            if args.carry:
                carried_then_rebuilt(row, "retire")
            row["ui_asset_page_after_retire_cold_s"], _ = clock(
                lambda: execute_dagster_graphql(
                    wpc.create_request_context(), UI_ASSET_QUERY, {"key": {"path": ["source_documents"]}}
                )
            )

            step("re-add and backfill")
            # the re-add path: the retired keys back (one GraphQL request per 100), then their backfill
            readd = due[: args.readd]
            row["readd_s"], added = clock(
                lambda: backfill_cli.readd_partitions("in-process", "dagster_ocr", repo.name, readd)
            )
            assert added == readd
            row["readd_again_s"], added = clock(
                lambda: backfill_cli.readd_partitions("in-process", "dagster_ocr", repo.name, readd)
            )
            assert added == []
            names = [k + ".pdf" for k in readd]
            params = backfill_params(JOB, "dagster_ocr", repo.name, readd, names)
            row["backfill_launch_s"], res = clock(
                lambda: execute_dagster_graphql(wpc.create_request_context(), LAUNCH, {"params": params})
            )
            assert res.data["launchPartitionBackfill"]["__typename"] == "LaunchBackfillSuccess", res.data
            instance.add_dynamic_partitions(name, due[args.readd :])  # back to n live
            live = len(instance.get_dynamic_partitions(name))
            assert live == n, live
            row["table_mb"] = table_mb(args.db)
            for k, v in row.items():
                print(f"  {k}: {v}", flush=True)
            result["levels"].append(row)


def wait_for_webserver(base: str, timeout_s: float = 180) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(base + "/server_info", timeout=2)
            return
        except OSError:
            time.sleep(1)
    raise RuntimeError(f"the webserver at {base} did not answer in {timeout_s} s")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--browser-job":
        print(json.dumps(_browser_times(*json.loads(sys.argv[2]))))
        sys.exit(0)
    sys.exit(main())
