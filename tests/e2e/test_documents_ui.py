"""End to end in a real browser, as a data engineer uses the UI: documents by name, a backfill of
two of them, a quarantined one read from the UI alone.

dagster-webserver and dagster-daemon run on loopback on the laptop's instance (`make ui`:
deploy/dagster.local.yaml on SQLite); three documents are registered under readable partition
keys (a corpus PDF, a second corpus PDF, and a mojibake PDF the gate quarantines). Headless
Chromium (Debian's /usr/bin/chromium through Playwright) then: filters a partition list by file
name; launches a backfill of two documents picked by typing their names in the job's launch
dialog; and, once the daemon ran them, opens the quarantined document's partition, its checks,
the quarantine list, the sound document's summary and page previews (each inline image must
decode), and the knowledge base, where the quarantined document's partition is missing and its
admission check failed, with why. Then a first-time user, in a fresh browser and against the
clock, finds the damaged document and why from the Runs page (the quarantine list's run row, then
each document's run row) and from one asset page (`quarantine`, without scrolling); and
`dagster-ocr backfill` launches a backfill whose row on the Runs page names what it covers.
Screenshots are copied to tests/e2e/artifacts/ (git-ignored).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from support.dagster_ui import dagster_ui, write_workspace

pytestmark = [pytest.mark.slow, pytest.mark.e2e, pytest.mark.timeout(600)]

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
ARTIFACTS = Path(__file__).parent / "artifacts"
LOCATION = "assets.definitions%3Adefs"

if not Path(CHROMIUM).is_file():
    pytest.skip(
        "chromium is not installed (apt-get install -y chromium; .ci/run does it)", allow_module_level=True
    )
sync_playwright = pytest.importorskip("playwright.sync_api").sync_playwright


def _garbled_pdf(path: Path) -> None:
    """Every line mojibake (UTF-8 read as Latin-1): the paragraphs_valid gate quarantines it."""
    import pymupdf

    doc = pymupdf.open()
    for _ in range(2):
        page = doc.new_page()
        for i in range(12):
            line = f"Ã©tÃ© {i}: la sociÃ©tÃ© â€œfournisseurâ€\x9d sâ€™engage Ã  payer"
            page.insert_text((72, 72 + 30 * i), line, fontsize=11)
    doc.save(path)
    doc.close()


@pytest.fixture(scope="module")
def ui(tmp_path_factory, corpus):
    """(base url, instance, {file name: partition key}, root) with webserver and daemon running."""
    import dagster as dg

    from dagster_ocr.ingest import DocumentStore
    from dagster_ocr.partition_keys import partition_key

    root = tmp_path_factory.mktemp("e2e_ui")
    home = root / "home"
    home.mkdir()
    shutil.copy(REPO / "deploy" / "dagster.local.yaml", home / "dagster.yaml")
    data, inbox = root / "data", root / "inbox"
    inbox.mkdir()
    shutil.copy(corpus / "page_labels/bug793632.pdf", inbox / "bug793632.pdf")
    shutil.copy(corpus / "tables/icdar2013/us-020/us-020.pdf", inbox / "us-020.pdf")
    _garbled_pdf(inbox / "garbled.pdf")
    store = DocumentStore(data / "store")
    keys = {}
    for path in sorted(inbox.iterdir()):
        record = store.register(path)[0]
        keys[path.name] = partition_key(record.file_name, record.doc_id)
    env = {
        **os.environ,
        "DAGSTER_HOME": str(home),
        "DAGSTER_OCR_DATA_DIR": str(data),
        "DAGSTER_OCR_INBOX": str(inbox),
        "DAGSTER_OCR_OCR_ENGINE": "none",
        "PYTHONPATH": str(REPO),
    }
    workspace = write_workspace(root)
    instance = dg.DagsterInstance.from_config(str(home))
    instance.add_dynamic_partitions("documents", list(keys.values()))  # what the inbox sensor adds
    try:
        with dagster_ui(root, workspace, env, start_s=180) as base:
            yield base, instance, keys, root
    finally:
        instance.dispose()


#: every image of the open dialog has loaded (or failed to); and each one's alt text and decoded size
_DIALOG_IMAGES = "Array.from(document.querySelectorAll('[role=dialog] img'))"
_IMAGES_LOADED = f"() => {_DIALOG_IMAGES}.every(i => i.complete)"
_IMAGE_SIZES = f"{_DIALOG_IMAGES}.map(i => [i.alt, i.naturalWidth, i.naturalHeight])"


def _browser_page(p):
    browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    page = browser.new_page(viewport={"width": 1600, "height": 1000})
    # the webserver's first-visit "Join the Dagster community" dialog covers the page: skip it
    page.add_locator_handler(page.get_by_role("button", name="Skip"), lambda b: b.click())
    return browser, page


def _keep(shots: list[Path]) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    for png in shots:
        shutil.copy(png, ARTIFACTS / png.name)
        shutil.copy(png.with_suffix(".txt"), ARTIFACTS / png.with_suffix(".txt").name)


#: the element's text lies inside every ancestor that clips (overflow not visible): all of it drawn
_UNCLIPPED = """el => {
  const r = el.getBoundingClientRect();
  for (let p = el.parentElement; p; p = p.parentElement) {
    const s = getComputedStyle(p);
    if (s.overflowX === 'visible' && s.overflowY === 'visible') continue;
    const b = p.getBoundingClientRect();
    if (r.right > b.right + 1 || r.left < b.left - 1) return false;
  }
  return true;
}"""


def _in_view(locator, height: int = 1000) -> bool:
    """The element is on screen as the page opened (no scroll needed) and its text is not cut off
    at its column's edge (the Runs page and the metadata table clip, not wrap, a long tag or value)."""
    box = locator.bounding_box()
    if box is None or box["y"] < 0 or box["y"] + box["height"] > height:
        return False
    return bool(locator.evaluate(_UNCLIPPED))


def _shot(page, name: str, shots: list[Path], tmp_path: Path) -> None:
    path = tmp_path / f"{name}.png"
    page.screenshot(path=str(path))
    path.with_suffix(".txt").write_text(page.inner_text("body"))  # what the page said, to read back
    shots.append(path)


def _wait_for_runs(instance, backfill_id: str, n: int, root: Path, timeout: float = 420.0) -> list:
    import dagster as dg

    deadline = time.monotonic() + timeout
    while True:
        runs = instance.get_runs(dg.RunsFilter(tags={"dagster/backfill": backfill_id}))
        if len(runs) >= n and all(r.is_finished for r in runs):
            return runs
        if time.monotonic() > deadline:
            pytest.fail(
                f"backfill runs {[r.status for r in runs]} after {timeout:.0f} s\n"
                + (root / "daemon.log").read_text()[-3000:]
            )
        time.sleep(3)


def test_a_person_finds_backfills_and_judges_documents_by_name(ui, tmp_path):
    import dagster as dg

    base, instance, keys, root = ui
    shots: list[Path] = []
    chosen = ["garbled.pdf", "us-020.pdf"]
    with sync_playwright() as p:
        browser, page = _browser_page(p)
        try:
            # 1. find a document by its file name in a partition list
            page.goto(f"{base}/assets/document_text?view=partitions", wait_until="networkidle")
            page.get_by_placeholder("Filter by name…").fill("us-02")
            page.get_by_text(keys["us-020.pdf"]).first.wait_for(timeout=30_000)
            assert page.get_by_text(keys["bug793632.pdf"]).count() == 0
            _shot(page, "find_by_file_name", shots, tmp_path)

            # 2. backfill two documents from the job, picking them by typing their names
            job_page = f"{base}/locations/{LOCATION}/jobs/ingest_document/partitions"
            page.goto(job_page, wait_until="networkidle")
            page.get_by_role("button", name="Materialize…").first.click()
            page.get_by_text("Select a partition or create one").click()
            for name in chosen:
                page.keyboard.type(Path(name).stem[:5])
                page.locator(f'[data-tooltip="{keys[name]}"]').first.click()
                page.keyboard.press("Control+A")
                page.keyboard.press("Backspace")
            page.keyboard.press("Escape")  # close the picker, keep the dialog
            dialog = page.get_by_role("dialog").first
            assert "2 partitions" in dialog.inner_text()
            page.wait_for_timeout(500)  # the picker's fade-out
            _shot(page, "backfill_two_documents", shots, tmp_path)
            page.get_by_role("button", name="Launch backfill").click()
            page.get_by_text("backfill", exact=False).first.wait_for(timeout=30_000)
        finally:
            browser.close()

    (backfill,) = instance.get_backfills()
    runs = _wait_for_runs(instance, backfill.backfill_id, 2, root)
    # a quarantine is an outcome: both runs are green; each names its document in its tags
    assert {r.status for r in runs} == {dg.DagsterRunStatus.SUCCESS}, [r.status for r in runs]
    by_name = {r.tags.get("dagster-ocr/file_name"): r for r in runs}
    assert set(by_name) == set(chosen)
    assert by_name["garbled.pdf"].tags["dagster-ocr/outcome"] == "quarantined"
    assert by_name["us-020.pdf"].tags["dagster-ocr/outcome"] == "parsed"
    # only the sound document is in the knowledge base: the quarantined one's partition is missing
    assert instance.get_materialized_partitions(dg.AssetKey("knowledge_base")) == {keys["us-020.pdf"]}
    assert keys["garbled.pdf"] in instance.get_materialized_partitions(dg.AssetKey("duckdb_tables"))

    # the quarantine list is refreshed by its sensor after the loads (within about a minute)
    deadline = time.monotonic() + 240
    while not instance.get_latest_materialization_event(dg.AssetKey("quarantine")):
        if time.monotonic() > deadline:
            log = (root / "daemon.log").read_text()[-3000:]
            pytest.fail("quarantine_sensor did not refresh the list:\n" + log)
        time.sleep(5)

    with sync_playwright() as p:
        browser, page = _browser_page(p)
        step = "runs"
        try:
            # 3. the runs of one file, by its name: a green run of ingest_document, tagged quarantined
            runs_of_file = f"{base}/runs?q%5B%5D=tag%3Adagster-ocr%2Ffile_name%3Dgarbled.pdf"
            page.goto(runs_of_file, wait_until="networkidle")
            page.get_by_text("Show runs within backfills").click()
            page.get_by_text("dagster-ocr/outcome: quarantined").first.wait_for(timeout=30_000)
            body = page.inner_text("body")
            assert f"partition: {keys['garbled.pdf']}" in body and "ingest_document" in body
            assert "Success" in body and "us-020" not in body
            _shot(page, "runs_of_one_file", shots, tmp_path)

            step = "quarantined_partition"
            # 4. open the quarantined document's partition: what was extracted and why it is held back
            key = keys["garbled.pdf"]
            page.goto(f"{base}/assets/duckdb_tables?view=partitions", wait_until="networkidle")
            page.get_by_placeholder("Filter by name…").fill("garbled")
            page.get_by_text(key).first.click()
            page.get_by_text("held_back_because").first.wait_for(timeout=30_000)
            body = page.inner_text("body")
            assert "quarantined" in body and "flagged_paragraph_share" in body
            _shot(page, "quarantined_partition", shots, tmp_path)

            step = "checks"
            # 5. its checks, with the file name and the outcome in words
            page.goto(f"{base}/assets/duckdb_tables?view=checks", wait_until="networkidle")
            page.get_by_text("paragraphs_valid").first.click()
            page.get_by_text("Execution history").first.click()
            page.get_by_text(keys["garbled.pdf"]).first.wait_for(timeout=30_000)
            _shot(page, "checks", shots, tmp_path)

            step = "quarantine_list"
            # 6. the quarantine list a reviewer reads
            page.goto(f"{base}/assets/quarantine", wait_until="networkidle")
            page.get_by_text("held_back").first.wait_for(timeout=30_000)
            body = page.inner_text("body")
            assert "garbled.pdf" in body and key in body and "us-020.pdf" not in body
            _shot(page, "quarantine_list", shots, tmp_path)

            step = "document_summary"
            # 7. the sound document's summary: pages, labels, OCR share, sections, tables
            page.goto(f"{base}/assets/duckdb_tables?view=partitions", wait_until="networkidle")
            page.get_by_placeholder("Filter by name…").fill("us-020")
            page.get_by_text(keys["us-020.pdf"]).first.click()
            page.get_by_text("summary").first.wait_for(timeout=30_000)
            page.get_by_text("[Show Markdown]").first.click()
            page.get_by_text("Printed page labels").first.wait_for(timeout=30_000)
            _shot(page, "document_summary", shots, tmp_path)

            step = "page_previews"
            # 8. its pages with the boxes found drawn on them, reached from the same partition's
            # metadata (a link to the paragraphs stage's partition): inline images that decode
            page.keyboard.press("Escape")  # close the summary
            href = page.locator("tr", has_text="page_previews").locator("a").first.get_attribute("href")
            assert href == f"/assets/paragraphs?view=partitions&partition={keys['us-020.pdf']}"
            page.goto(base + href, wait_until="networkidle")
            page.locator("tr", has_text="page_previews").get_by_text("[Show Markdown]").click()
            dialog = page.get_by_role("dialog").first
            dialog.locator("img").first.wait_for(timeout=30_000)
            page.wait_for_function(_IMAGES_LOADED, timeout=30_000)
            sizes = page.evaluate(_IMAGE_SIZES)
            # the first two of its 6 pages and the first page with a table, each decoded (a broken
            # or stripped data: URI decodes to width 0)
            assert len(sizes) == 3 and all(w > 0 and h > 0 for _, w, h in sizes), sizes
            assert [alt for alt, _, _ in sizes][:2] == ["page 1", "page 2"]
            text = dialog.inner_text()
            assert "orange: tables" in text and "1 table" in text and "text layer: " in text
            page.wait_for_timeout(500)  # the dialog's fade-in, for the screenshot
            _shot(page, "page_previews", shots, tmp_path)

            step = "quarantined_knowledge_base"
            # 9. the quarantined document on the knowledge base: not green (its partition is missing:
            # only the sound document materialized), and the admission check says failed, and why
            page.goto(f"{base}/assets/knowledge_base?view=partitions", wait_until="networkidle")
            page.get_by_text("Materialized (1)").first.wait_for(timeout=30_000)
            assert "Missing (2)" in page.inner_text("body")  # garbled (held back), bug793632 (not run)
            _shot(page, "knowledge_base_partitions", shots, tmp_path)
            page.goto(f"{base}/assets/knowledge_base?view=checks", wait_until="networkidle")
            page.get_by_text("document_admitted").filter(visible=True).first.click()
            page.get_by_role("tab", name="Partitions").last.click()
            page.get_by_text("Failed (1)").first.wait_for(timeout=30_000)
            body = page.inner_text("body")
            assert "Passed (1)" in body and "Missing (1)" in body  # the document never run: missing
            page.get_by_text(key).filter(visible=True).last.click()
            page.get_by_text("held back").first.wait_for(timeout=30_000)
            body = page.inner_text("body")
            assert "garbled.pdf: quarantined, held back: " in body and "flagged_paragraph_share" in body
            _shot(page, "quarantined_knowledge_base", shots, tmp_path)
        except Exception:
            _shot(page, f"failed_at_{step}", shots, tmp_path)
            raise
        finally:
            browser.close()
            _keep(shots)


def _loaded(ui) -> None:
    """The state the first test leaves: both documents judged and the quarantine list refreshed."""
    import dagster as dg

    _, instance, _, _ = ui
    if not instance.get_backfills() or not instance.get_latest_materialization_event(
        dg.AssetKey("quarantine")
    ):
        pytest.skip("needs the documents the first test of this module backfills (run the module)")


def test_a_first_time_user_finds_the_damaged_document_and_why_in_under_a_minute(ui, tmp_path):
    """A fresh browser (no remembered settings), the clock running from the first page: the Runs
    page as it opens, then its runs within backfills, then the one asset page that lists what is held
    back. Each step waits for what a person would read, and checks it is on screen without scrolling."""
    _loaded(ui)
    base, _, keys, _ = ui
    shots: list[Path] = []
    timings: dict[str, float] = {}
    why = "flagged_paragraph_share 1.0 (<= 0.05)"
    with sync_playwright() as p:
        browser, page = _browser_page(p)
        step = "runs_page"
        try:
            start = time.monotonic()
            # 1. the Runs page as it opens (a backfill's runs folded into its row): the quarantine
            # list's refresh run says which document is held back, and why
            page.goto(f"{base}/runs", wait_until="networkidle")
            held = page.get_by_text("held_back: garbled.pdf", exact=True).first
            held.wait_for(timeout=30_000)
            assert _in_view(held), held.bounding_box()
            timings["runs page: which document, and why"] = time.monotonic() - start
            _shot(page, "first_look_runs_page", shots, tmp_path)

            step = "runs_within_backfills"
            # 2. each document's own run: green both, but only the held-back one carries a reason
            page.get_by_text("Show runs within backfills").click()
            reason = page.get_by_text(f"held_back: {why}", exact=True).first
            reason.wait_for(timeout=30_000)
            page.get_by_text("dagster-ocr/outcome: parsed").first.wait_for(timeout=30_000)
            body = page.inner_text("body")
            assert body.count(f"held_back: {why}") == 1  # garbled's run, not us-020's
            assert "dagster-ocr/outcome: quarantined" in body
            assert _in_view(reason), reason.bounding_box()
            timings["runs page: the document's own run, and why"] = time.monotonic() - start
            _shot(page, "first_look_document_runs", shots, tmp_path)

            step = "quarantine_page"
            # 3. one asset page: every held-back document, outcome and reason, without a click or scroll
            t = time.monotonic()
            page.goto(f"{base}/assets/quarantine", wait_until="networkidle")
            line = page.get_by_text(f"quarantined: {why}", exact=True).first
            line.wait_for(timeout=30_000)
            row = page.locator("tr", has=line).first
            assert row.inner_text().startswith("garbled.pdf")
            assert _in_view(line), line.bounding_box()
            assert keys["garbled.pdf"] in page.inner_text("body")  # the table below: the key to open it
            timings["quarantine asset page: which document, and why"] = time.monotonic() - t
            _shot(page, "first_look_quarantine_page", shots, tmp_path)
        except Exception:
            _shot(page, f"failed_at_{step}", shots, tmp_path)
            raise
        finally:
            browser.close()
            _keep(shots)
    report = "\n".join(f"{k}: {v:.1f} s" for k, v in timings.items())
    (ARTIFACTS / "first_look_timings.txt").write_text(report + "\n")
    print(report)
    assert max(timings.values()) < 60, report


def test_a_backfill_launched_by_the_cli_names_what_it_covers(ui, tmp_path):
    """`dagster-ocr backfill reload_warehouse --status quarantined`: re-judge every held-back document
    (no OCR) in a job backfill whose row on the Runs page says how many documents and which."""
    import dagster as dg

    _loaded(ui)
    base, instance, keys, root = ui
    before = {b.backfill_id for b in instance.get_backfills()}
    command = [
        str(REPO / ".venv" / "bin" / "dagster-ocr"),
        "backfill",
        "reload_warehouse",
        "--status",
        "quarantined",
        "--warehouse",
        str(root / "data" / "warehouse.duckdb"),
        "--url",
        base,
    ]
    for _ in range(20):  # 3: a run holds the DuckDB file for a moment (the quarantine list's refresh)
        done = subprocess.run(command, capture_output=True, text=True, timeout=120)
        if done.returncode != 3:
            break
        time.sleep(3)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "reload_warehouse: 1 document (garbled.pdf)" in done.stdout
    (backfill,) = [b for b in instance.get_backfills() if b.backfill_id not in before]
    assert backfill.tags["dagster-ocr/documents"] == "1"
    assert backfill.tags["dagster-ocr/covers"] == "garbled.pdf"
    assert backfill.title == "reload_warehouse: 1 document (garbled.pdf)"
    (run,) = _wait_for_runs(instance, backfill.backfill_id, 1, root)
    # a job backfill: its run is named after the job, and carries the backfill's tags and the document's
    assert run.job_name == "reload_warehouse" and run.status == dg.DagsterRunStatus.SUCCESS
    assert run.tags["dagster-ocr/covers"] == "garbled.pdf"
    assert run.tags["dagster-ocr/outcome"] == "quarantined"
    assert run.tags["held_back"] == "flagged_paragraph_share 1.0 (<= 0.05)"
    assert run.tags["dagster/partition"] == keys["garbled.pdf"]

    shots: list[Path] = []
    with sync_playwright() as p:
        browser, page = _browser_page(p)
        try:
            page.goto(f"{base}/runs?tab=backfills", wait_until="networkidle")
            page.get_by_text("dagster-ocr/covers: garbled.pdf").first.wait_for(timeout=30_000)
            assert "dagster-ocr/documents: 1" in page.inner_text("body")
            _shot(page, "backfill_named_by_cli", shots, tmp_path)
        finally:
            browser.close()
            _keep(shots)
