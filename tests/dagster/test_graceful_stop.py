"""SIGTERM and Ctrl-C stop a run within seconds, with nothing half-written and a resume that
re-does only what was not done (issue 35). Real signals to a real ``dagster-ocr run`` process on
small real PDFs (born-digital ones and a scan that is OCR'd with the product's engine).

Every test starts a process that imports Dagster and loads the OCR model: tens of seconds on a
loaded 2-core machine, hence ``slow``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pymupdf
import pytest
from support.scans import scanned_pdf

from dagster_ocr.warehouse import Warehouse

REPO = Path(__file__).resolve().parents[2]
#: how long a run may take to reach the point a test signals it (the OCR model's first load on a
#: busy machine included)
REACH_S = 240.0
#: the promise is an exit within 10 s of the signal: the grace period (8 s) and a hard exit after it.
#: What a quiet machine does is bench/stop_signal.py's figure (BENCHMARKS.md); here the bound has
#: room for a machine loaded by the rest of the suite (a run starved of CPU took 11.0 s once), and
#: the grace itself is held to the promise by test_the_grace_period_keeps_the_promise
EXIT_WITHIN_S = 20.0

pytestmark = pytest.mark.slow


def _text_pdf(path: Path, name: str, pages: int = 3) -> None:
    doc = pymupdf.open()
    for p in range(pages):
        page = doc.new_page()
        for i in range(20):
            line = f"Agreement {name}, page {p + 1}, clause {i}: the parties agree."
            page.insert_text((72, 72 + 20 * i), line, fontsize=11)
    doc.save(path)


def _scan(path: Path, pages: int, extra_lines: int = 0) -> None:
    text = "Page {}\nThe parties agree to the terms of clause {}.\nPayment within 30 days."
    more = "".join(f"\nClause {k}: the supplier delivers the services as agreed." for k in range(extra_lines))
    path.write_bytes(scanned_pdf([text.format(i + 1, i) + more for i in range(pages)]))


def _command(root: Path, *extra: str) -> list[str]:
    return [
        sys.executable, "-m", "assets.cli", "run", str(root / "inbox"),
        "--warehouse", str(root / "w.duckdb"), "--no-progress", *extra,
    ]  # fmt: skip


def _start(root: Path, *extra: str) -> subprocess.Popen[str]:
    # its own session, so that a signal to its process group reaches it and its OCR workers only,
    # as a terminal's Ctrl-C reaches a foreground job
    return subprocess.Popen(
        _command(root, *extra),
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def _ocr_pages(root: Path) -> dict[str, int]:
    """The OCR checkpoint's page files and their modification times (ns)."""
    return {p.name: p.stat().st_mtime_ns for p in (root / "w_data" / "ocr_pages").rglob("*.page")}


def _wait_until(proc: subprocess.Popen[str], ready, what: str) -> None:
    deadline = time.monotonic() + REACH_S
    while not ready():
        if proc.poll() is not None:
            out, err = proc.communicate()
            pytest.fail(f"the run ended (rc {proc.returncode}) before {what}:\n{out}\n{err[-3000:]}")
        if time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"the run did not reach {what} in {REACH_S:.0f}s")
        time.sleep(0.1)


def _stop(proc: subprocess.Popen[str], signum: int, group: bool = False, again_after: float | None = None):
    """Send ``signum`` (to the process group: a terminal's Ctrl-C); (rc, seconds to exit, out, err).

    With ``again_after``: send it again that long after the process said it heard the first (its
    "stopping:" line on stderr), and count the seconds from that second signal. Two signals sent
    closer together than the process gets the CPU would merge into one (a pending standard signal
    does not queue): 50 ms apart they did on 2 cores busy with parallel test workers."""
    send = (lambda: os.killpg(proc.pid, signum)) if group else (lambda: proc.send_signal(signum))
    sent = time.monotonic()
    send()
    print(f"{signal.Signals(signum).name} sent", end="")
    heard = ""
    if again_after is not None:
        for line in proc.stderr:  # ends at EOF if the process exits without saying it
            heard += line
            if "stopping:" in line:
                break
        time.sleep(again_after)
        sent = time.monotonic()
        send()
    try:
        out, err = proc.communicate(timeout=60)
        err = heard + err
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        pytest.fail(f"still running 60 s after {signal.Signals(signum).name}:\n{out}\n{err[-3000:]}")
    seconds = time.monotonic() - sent
    print(f": exited {seconds:.2f}s later, rc {proc.returncode}")  # the figure, with pytest -s
    return proc.returncode, seconds, out, err


def _children(pid: int) -> list[int]:
    """The process's children (Linux /proc): its OCR workers, once it has started them."""
    kids = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            kids.append(int(stat.parent.name))
    return kids


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _documents(root: Path) -> dict[str, dict]:
    """Each document in the warehouse with its status and the rows it has: a document is there
    whole (its status, a row per page, its knowledge base when parsed) or not at all."""
    wh = Warehouse(root / "w.duckdb")
    rows = wh.query(
        """
        SELECT d.file_name, d.status, d.n_pages, d.parsed_at,
               (SELECT count(*) FROM pages p WHERE p.doc_id = d.doc_id) AS pages,
               (SELECT count(*) FROM kb_chunks k WHERE k.doc_id = d.doc_id) AS chunks
        FROM documents d
        """
    )
    return {r.file_name: r._asdict() for r in rows.itertuples(index=False)}


def _assert_whole(docs: dict[str, dict]) -> None:
    for name, d in docs.items():
        assert d["status"] in ("parsed", "quarantined", "failed"), name
        assert d["pages"] == d["n_pages"], f"{name}: {d['pages']} page rows of {d['n_pages']}"
        if d["status"] == "parsed":
            assert d["chunks"] > 0, f"{name}: loaded without its knowledge base"


@pytest.fixture(scope="module")
def sigterm_run(tmp_path_factory):
    """SIGTERM while the second of three documents (a scan) is being OCR'd, then the same command again."""
    root = tmp_path_factory.mktemp("sigterm")
    (root / "inbox").mkdir()
    _text_pdf(root / "inbox" / "a.pdf", "A")
    _scan(root / "inbox" / "b_scan.pdf", 12)
    _text_pdf(root / "inbox" / "c.pdf", "C")
    proc = _start(root)
    _wait_until(proc, lambda: len(_ocr_pages(root)) >= 1, "the scan's OCR")
    rc, seconds, out, err = _stop(proc, signal.SIGTERM)
    stopped = {"rc": rc, "seconds": seconds, "out": out, "err": err}
    stopped["docs"] = _documents(root)
    stopped["pages"] = _ocr_pages(root)
    ledger = root / "w_data" / "stopped_run.json"
    stopped["ledger"] = json.loads(ledger.read_text()) if ledger.exists() else None
    again = subprocess.run(_command(root), cwd=REPO, capture_output=True, text=True, timeout=600)
    return root, stopped, again


def test_sigterm_exits_143_within_seconds(sigterm_run):
    _, stopped, _ = sigterm_run
    assert stopped["rc"] == 143, stopped["err"][-3000:]
    assert stopped["seconds"] < EXIT_WITHIN_S


def test_the_stopped_run_says_what_was_done_and_what_not(sigterm_run):
    _, stopped, _ = sigterm_run
    out = stopped["out"]
    assert "stopped by SIGTERM" in out and "1 document(s) done in this run, 1 abandoned, 1 not started" in out
    assert "  done: a.pdf" in out
    assert "  abandoned: b_scan.pdf" in out
    assert "  not started: c.pdf" in out
    assert "a.pdf parsed" in " ".join(out.split())  # the done document's summary row
    assert "SIGTERM: stopping" in stopped["err"]


def test_the_warehouse_holds_whole_documents_only(sigterm_run):
    _, stopped, _ = sigterm_run
    docs = stopped["docs"]
    assert set(docs) == {"a.pdf"}, "the abandoned and the unstarted documents are absent"
    _assert_whole(docs)
    assert stopped["pages"], "the scan's OCR'd pages are kept for the resume"
    assert stopped["ledger"] is not None and len(stopped["ledger"]["done"]) == 1


def test_the_same_command_again_redoes_only_what_was_not_done(sigterm_run):
    root, stopped, again = sigterm_run
    assert again.returncode == 0, again.stderr[-3000:]
    assert "resuming a stopped run: 1 document(s) it finished are skipped, 2 to do" in again.stderr
    docs = _documents(root)
    assert set(docs) == {"a.pdf", "b_scan.pdf", "c.pdf"}
    _assert_whole(docs)
    assert all(d["status"] == "parsed" for d in docs.values())
    assert docs["a.pdf"]["parsed_at"] == stopped["docs"]["a.pdf"]["parsed_at"], "a.pdf was not re-done"
    after = _ocr_pages(root)
    assert len(after) == 12
    # the pages OCR'd before the stop were taken from the checkpoint, not OCR'd (written) again
    assert {name: after[name] for name in stopped["pages"]} == stopped["pages"]
    assert not (root / "w_data" / "stopped_run.json").exists(), "a finished run leaves nothing to resume"


def test_ctrl_c_to_the_process_group_stops_ocr_workers_and_exits_130(tmp_path):
    """A terminal's Ctrl-C (SIGINT to the whole foreground group) while two OCR worker processes
    read a scan: the workers neither die with a traceback nor finish their page ranges."""
    (tmp_path / "inbox").mkdir()
    _scan(tmp_path / "inbox" / "a_scan.pdf", 20)  # enough pages for two workers (8 each at least)
    _text_pdf(tmp_path / "inbox" / "b.pdf", "B")
    proc = _start(tmp_path, "--set", json.dumps({"ocr": {"workers": 2}}))
    _wait_until(proc, lambda: len(_ocr_pages(tmp_path)) >= 1, "the workers' OCR")
    workers = _children(proc.pid)
    assert workers, "OCR worker processes running"
    rc, seconds, out, err = _stop(proc, signal.SIGINT, group=True)
    assert rc == 130, err[-3000:]
    assert seconds < EXIT_WITHIN_S
    assert "0 document(s) done in this run, 1 abandoned, 1 not started" in out
    assert "  abandoned: a_scan.pdf" in out and "  not started: b.pdf" in out
    assert "KeyboardInterrupt" not in err
    time.sleep(1.0)
    assert not [pid for pid in workers if _alive(pid)], "the OCR workers were stopped with the run"
    assert _documents(tmp_path) == {}
    assert 1 <= len(_ocr_pages(tmp_path)) < 20


def test_a_second_ctrl_c_stops_at_once(tmp_path):
    """The first Ctrl-C lands while a page is being OCR'd (the stop would wait for that page to
    end); the second, as soon as the run said it heard the first, exits at once. (Sent 50 ms after,
    the page in flight ended in between on a fast CPU, the run stopped gracefully and 'SIGINT again'
    was never printed: a fresh clone on an AVX512-VNNI EPYC. The first signal is handled once the
    run says so, so the second cannot merge with it.)"""
    (tmp_path / "inbox").mkdir()
    # pages of 15 lines: a page's OCR lasts well past the 50 ms between the two Ctrl-Cs (with 3 lines
    # the page in flight sometimes ended in between, the run stopped gracefully and the second
    # Ctrl-C found nothing to cut short)
    _scan(tmp_path / "inbox" / "a_scan.pdf", 8, extra_lines=12)
    _text_pdf(tmp_path / "inbox" / "b.pdf", "B")
    proc = _start(tmp_path)
    # a page has just been stored: the next one is being OCR'd (a second or more)
    _wait_until(proc, lambda: len(_ocr_pages(tmp_path)) >= 1, "the scan's OCR")
    rc, seconds, out, err = _stop(proc, signal.SIGINT, again_after=0.0)
    assert rc == 130, err[-3000:]
    assert "SIGINT again: stopping at once" in err
    assert seconds < 2.0
    assert "stopped by SIGINT" in out
    assert "  abandoned: a_scan.pdf" in out and "  not started: b.pdf" in out
    assert _documents(tmp_path) == {}
    assert 1 <= len(_ocr_pages(tmp_path)) < 8


RUN_WORKER = textwrap.dedent(
    """
    import json, sys
    from pathlib import Path

    import dagster as dg

    from assets.definitions import build_definitions
    from dagster_ocr.ingest import DocumentStore
    from dagster_ocr.partition_keys import partition_key


    def main():
        root = Path(sys.argv[1])
        rec, _ = DocumentStore(root / "data" / "store").register(root / "scan.pdf")
        defs = build_definitions(root / "data", root / "w.duckdb")
        # a run worker's instance is persistent (DAGSTER_HOME's SQLite files or PostgreSQL), and so
        # is this one: the ephemeral instance keeps its runs in one shared-cache in-memory SQLite
        # database, where a read cut short by the interrupt (the step's run-tag write, landing on
        # the signal) keeps a table lock until its cursor is collected, and the run's FAILURE
        # event then failed with "database table is locked: runs" (one clean-clone CI run in many)
        (root / "dagster_home").mkdir()
        instance = dg.DagsterInstance.local_temp(str(root / "dagster_home"))
        key = partition_key(rec.file_name, rec.doc_id)
        instance.add_dynamic_partitions("documents", [key])
        result = defs.resolve_job_def("ingest_document").execute_in_process(
            partition_key=key, instance=instance, raise_on_error=False
        )
        kinds = [e.event_type_value for e in result.all_events]
        failed = [e.step_key for e in result.all_events if e.event_type_value == "STEP_FAILURE"]
        print(json.dumps({"retries": kinds.count("STEP_UP_FOR_RETRY"), "failed": failed}))


    if __name__ == "__main__":
        main()
    """
)


def test_an_interrupted_dagster_run_ends_instead_of_retrying(tmp_path):
    """A run driven as Dagster's run worker drives it (the run in the main thread, Dagster's
    interrupt handlers installed: a UI termination or a pod's SIGTERM): the text stage, which has
    a RetryPolicy, fails for good instead of starting again 10 s later."""
    _scan(tmp_path / "scan.pdf", 12)
    (tmp_path / "worker.py").write_text(RUN_WORKER)
    proc = subprocess.Popen(
        [sys.executable, str(tmp_path / "worker.py"), str(tmp_path)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    _wait_until(proc, lambda: any((tmp_path / "data" / "ocr_pages").rglob("*.page")), "the scan's OCR")
    rc, seconds, out, err = _stop(proc, signal.SIGTERM)
    assert rc == 0, err[-3000:]
    assert seconds < EXIT_WITHIN_S
    result = json.loads(out.strip().splitlines()[-1])
    assert result == {"retries": 0, "failed": ["document_text"]}


SWALLOWED_WORKER = textwrap.dedent(
    """
    import json, os, signal, sys, time

    import dagster as dg

    from assets.stopping import stop_not_retry
    from dagster_ocr import progress

    class Collected:
        def __del__(self):
            # the signal lands while Python collects an object (PyMuPDF's pages are collected all
            # through the text stage): the handler's raise is printed as "Exception ignored" and lost
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(0.5)

    @dg.op(retry_policy=dg.RetryPolicy(max_retries=2, delay=5))
    @stop_not_retry
    def stage():
        Collected()
        time.sleep(0.2)
        if sys.argv[1] == "reports":
            progress.stop_point()  # what the text stage's next page and the embedding's next batch do
            print("went on past its stop point", file=sys.stderr)
        return 1

    @dg.job
    def job():
        stage()

    result = job.execute_in_process(raise_on_error=False)
    kinds = [e.event_type_value for e in result.all_events]
    failed = [e.step_key for e in result.all_events if e.event_type_value == "STEP_FAILURE"]
    print(json.dumps({"retries": kinds.count("STEP_UP_FOR_RETRY"), "failed": failed}))
    """
)


@pytest.mark.parametrize("then", ["reports", "returns"])
def test_an_interrupt_python_swallowed_still_ends_the_step(tmp_path, then):
    """The interrupt lands in a ``__del__`` (Python prints its exception and goes on): the stage
    still fails unretried, at its next stop point, or when it returns at the latest."""
    (tmp_path / "worker.py").write_text(SWALLOWED_WORKER)
    done = subprocess.run(
        [sys.executable, str(tmp_path / "worker.py"), then],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=REACH_S,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Exception ignored" in done.stderr  # the raise was swallowed, as in the field
    assert "went on past its stop point" not in done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {"retries": 0, "failed": ["stage"]}


def test_the_grace_period_keeps_the_promise():
    """The hard exit comes 8 s after the first signal, leaving 2 s of the 10 promised to exit."""
    from assets.stopping import GRACE_SECONDS, GracefulStop

    assert GRACE_SECONDS <= 8.0 and GracefulStop().grace_s == GRACE_SECONDS
