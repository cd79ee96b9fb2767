"""End to end in a real browser: a backfill of two documents launched from the Dagster UI.

dagster-webserver and dagster-daemon run on loopback with the production instance
(deploy/dagster.yaml) on a fresh PostgreSQL database; headless Chromium (Debian's
/usr/bin/chromium, driven by Playwright's Python package: no browser download) opens the asset
graph, picks two of three document partitions and launches a backfill. The daemon runs it through
the queued run coordinator and the pools; then DuckDB must hold exactly those two documents.
A screenshot stays in pytest's tmp dir and is copied to tests/e2e/artifacts/ (git-ignored).
"""

from __future__ import annotations

import os
import re
import shutil
import time
import uuid
from pathlib import Path

import pytest
from support.dagster_ui import dagster_ui, write_workspace

pytestmark = [pytest.mark.slow, pytest.mark.timeout(420)]

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
DOCS = ("page_labels/bug793632.pdf", "page_labels/issue14847.pdf", "tables/icdar2013/us-020/us-020.pdf")
ARTIFACTS = Path(__file__).parent / "artifacts"

if not Path(CHROMIUM).is_file():
    pytest.skip(
        "chromium is not installed (apt-get install -y chromium; .ci/run does it)", allow_module_level=True
    )
sync_playwright = pytest.importorskip("playwright.sync_api").sync_playwright
psycopg2 = pytest.importorskip("psycopg2")


@pytest.fixture(scope="module")
def dagster_service(tmp_path_factory, corpus):
    """(base url, instance, doc ids, warehouse path, root) with webserver and daemon running."""
    try:
        admin = psycopg2.connect(dbname="postgres", host="127.0.0.1", user="postgres", connect_timeout=3)
    except psycopg2.OperationalError as exc:
        pytest.skip(f"no PostgreSQL on 127.0.0.1:5432 ({exc})")
    admin.autocommit = True
    db = f"dagster_ocr_e2e_{uuid.uuid4().hex[:12]}"
    with admin.cursor() as cur:
        cur.execute(f'CREATE DATABASE "{db}"')
    root = tmp_path_factory.mktemp("e2e")
    home = root / "home"
    home.mkdir()
    shutil.copy(REPO / "deploy" / "dagster.yaml", home / "dagster.yaml")
    data = root / "data"
    env = {
        **os.environ,
        "DAGSTER_HOME": str(home),
        "DAGSTER_PG_HOST": "127.0.0.1",
        "DAGSTER_PG_PORT": "5432",
        "DAGSTER_PG_USER": "postgres",
        "DAGSTER_PG_PASSWORD": "unused-with-trust-auth",
        "DAGSTER_PG_DB": db,
        "DAGSTER_OCR_DATA_DIR": str(data),
        "DAGSTER_OCR_OCR_ENGINE": "none",
        "PYTHONPATH": str(REPO),
    }
    workspace = write_workspace(root)
    mp = pytest.MonkeyPatch()
    for k, v in env.items():
        mp.setenv(k, v)
    import dagster as dg

    from dagster_ocr.ingest import DocumentStore

    instance = dg.DagsterInstance.from_config(str(home))
    try:
        store = DocumentStore(data / "store")
        ids = [store.register(corpus / rel)[0].doc_id for rel in DOCS]
        instance.add_dynamic_partitions("documents", ids)
        # each pool's limit set once, as docs/production.md does: left to the default, the first
        # runs to claim a pool race to create its row, and on PostgreSQL Dagster 1.13 fails the
        # loser's run (docs/stack-facts.md, Dagster)
        from assets.partitions import DUCKDB_WRITER_POOL, EMBEDDINGS_POOL, OCR_POOL

        for pool in (OCR_POOL, DUCKDB_WRITER_POOL, EMBEDDINGS_POOL):
            instance.event_log_storage.set_concurrency_slots(pool, 1)
        with dagster_ui(root, workspace, env, start_s=120) as base:
            yield base, instance, ids, data / "warehouse.duckdb", root
    finally:
        instance.dispose()
        mp.undo()
        with admin.cursor() as cur:
            cur.execute(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)')
        admin.close()


def _launch_backfill_in_browser(base: str, partitions: list[str], shot: Path) -> None:
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1600, "height": 1000})
            page.goto(f"{base}/asset-groups/documents", wait_until="networkidle")
            # "Materialize all…", or "Materialize all (8)…" where the graph holds an asset no run
            # builds (source_documents, ingestion's external asset)
            page.locator("button:visible", has_text=re.compile(r"^\s*Materialize all")).first.click()
            page.get_by_text("Select a partition or create one").click()
            for key in partitions:
                # each option row carries its full key as a tooltip (the text is middle-truncated)
                page.locator(f'[data-tooltip="{key}"]').first.click()
            page.keyboard.press("Escape")  # close the picker, keep the dialog
            dialog = page.get_by_role("dialog").first
            assert "2 partitions" in dialog.inner_text()
            page.screenshot(path=str(shot.with_name("backfill_dialog.png")))
            page.get_by_role("button", name="Launch backfill").click()
            page.get_by_text("Created backfill").or_(
                page.get_by_text("backfill", exact=False)
            ).first.wait_for(timeout=30_000)
            page.goto(f"{base}/runs?tab=backfills", wait_until="networkidle")
            page.screenshot(path=str(shot))
        finally:
            browser.close()


def test_backfill_of_two_documents_from_the_ui_loads_exactly_those(dagster_service, tmp_path):
    import dagster as dg
    from dagster._core.execution.backfill import BulkActionStatus  # not exported at the top level

    from dagster_ocr.warehouse import Warehouse

    base, instance, ids, warehouse, root = dagster_service
    chosen = ids[:2]
    shot = tmp_path / "backfills.png"
    _launch_backfill_in_browser(base, chosen, shot)

    deadline = time.monotonic() + 300
    while True:
        backfills = instance.get_backfills()
        assert len(backfills) == 1
        done = backfills[0].status != BulkActionStatus.REQUESTED
        runs = instance.get_runs(dg.RunsFilter(tags={"dagster/backfill": backfills[0].backfill_id}))
        if done and runs and all(r.is_finished for r in runs):
            break
        if time.monotonic() > deadline:
            pytest.fail(
                f"backfill {backfills[0].status} after 300 s; runs {[r.status for r in runs]}\n"
                + (root / "daemon.log").read_text()[-3000:]
            )
        time.sleep(3)
    assert backfills[0].status == BulkActionStatus.COMPLETED_SUCCESS, [r.status for r in runs]
    # a run names its document as a partition, or as a one-key range (runs of a backfill policy)
    run_keys = []
    # "Materialize all…" also selects the unpartitioned quarantine list: one run of it, no document
    listing = [r for r in runs if r.asset_selection == {dg.AssetKey("quarantine")}]
    assert len(listing) <= 1
    runs = [r for r in runs if r not in listing]
    for r in runs:
        start, stop = (r.tags.get(f"dagster/asset_partition_range_{e}") for e in ("start", "end"))
        assert start == stop, "one document per run"
        run_keys.append(r.tags.get("dagster/partition") or start)
    assert set(run_keys) == set(chosen)

    wh = Warehouse(warehouse)
    loaded = wh.query("SELECT doc_id, status FROM documents")
    assert sorted(loaded.doc_id) == sorted(chosen)  # exactly those two: not the third
    assert set(loaded.status) == {"parsed"}
    kb = wh.query("SELECT DISTINCT doc_id FROM kb_chunks")
    assert sorted(kb.doc_id) == sorted(chosen)

    # the screenshot of the backfills page after the run, kept as an artifact
    page_done = tmp_path / "backfill_done.png"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1600, "height": 1000})
        page.goto(f"{base}/runs?tab=backfills", wait_until="networkidle")
        page.screenshot(path=str(page_done))
        browser.close()
    ARTIFACTS.mkdir(exist_ok=True)
    for png in (shot.with_name("backfill_dialog.png"), page_done):
        shutil.copy(png, ARTIFACTS / png.name)
