"""The text asset on a scan that times out half way: its OCR'd pages are checkpointed beside the
stage outputs, the re-run OCRs only the rest, and the run's logs and metadata say how far it got."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import dagster as dg
import numpy as np
from support.scans import scanned_pdf

from assets.definitions import build_definitions
from assets.inbox_run import _PagePostfix
from dagster_ocr.ingest import DocumentStore
from dagster_ocr.ocr.base import OcrEngineBase, OcrLine, OcrSettings
from dagster_ocr.progress import TextProgress
from resources import OcrEngineResource


class _Engine(OcrEngineBase):
    name = "counting"

    def __init__(self) -> None:
        self.calls = 0
        self.hang_at: int | None = None
        # the hung page waits (no CPU) until the test releases it, and says when it has returned:
        # an abandoned page's thread runs on after its timeout, and were it to wake by the clock it
        # could count itself into the next run's calls on a loaded machine
        self.release = threading.Event()
        self.hung_returned = threading.Event()

    def recognize(self, image: np.ndarray) -> list[OcrLine]:
        hang = self.hang_at is not None and self.calls == self.hang_at
        if hang:
            self.release.wait(timeout=120.0)
        self.calls += 1
        if hang:
            self.hung_returned.set()
        return [OcrLine(f"line {int((image < 128).sum())}", (10.0, 10.0, 300.0, 40.0), 0.97)]

    def reset(self, hang_at: int | None) -> None:
        """Release a page still hanging from an earlier run, wait for its thread to return, and
        start counting afresh."""
        if self.hang_at is not None:
            self.release.set()
            assert self.hung_returned.wait(timeout=60.0), "the abandoned page's thread never returned"
        self.release.clear()
        self.hung_returned.clear()
        self.calls, self.hang_at = 0, hang_at


ENGINE = _Engine()


class CountingOcrResource(OcrEngineResource):
    def get_engine(self, settings: OcrSettings) -> _Engine:
        return ENGINE


def _materialize_text(defs: dg.Definitions, doc_id: str) -> tuple[dict, list[str]]:
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("documents", [doc_id])
    result = defs.resolve_job_def("ingest_document").execute_in_process(
        partition_key=doc_id, instance=instance, asset_selection=[dg.AssetKey("document_text")]
    )
    (mat,) = result.asset_materializations_for_node("document_text")
    logs = [
        e.message
        for e in instance.all_logs(result.run_id)
        if e.user_message and e.message and "text: " in e.message
    ]
    return {k: v.value for k, v in mat.metadata.items()}, logs


def test_a_scan_that_times_out_resumes_on_the_next_run(tmp_path: Path) -> None:
    pages = [f"Page {i}\nThe parties agree to the terms of clause {i}." for i in range(8)]
    pages[3] = "white"  # a blank page: not OCR'd, counted
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "scan.pdf").write_bytes(scanned_pdf(pages))
    record, _ = DocumentStore(tmp_path / "data" / "store").register(tmp_path / "in" / "scan.pdf")
    # the hang waits (no CPU): the wall-clock backstop, at the timeout itself with factor 1, catches
    # it. 2 s is the wait on the hung page and what every other page may take: a page of this engine
    # reads in milliseconds, so only a hung one reaches it even on a loaded 2-core machine.
    overrides = json.dumps({"limits": {"ocr_page_timeout_s": 2.0, "wall_clock_factor": 1}})
    defs = build_definitions(tmp_path / "data", overrides_json=overrides, ocr=CountingOcrResource())

    ENGINE.reset(hang_at=4)  # the fifth OCR'd page hangs past the page timeout
    first, _ = _materialize_text(defs, record.doc_id)
    assert first["status"] == "failed" and "a re-run resumes" in first["error"]
    assert first["ocr_pages_read"] == 4 and first["ocr_pages_reused"] == 0
    assert len(list((tmp_path / "data" / "ocr_pages").rglob("*.page"))) == 4

    ENGINE.reset(hang_at=None)  # the hung page's thread has returned: it cannot count in the re-run
    second, logs = _materialize_text(defs, record.doc_id)
    assert second["status"] == "parsed" and ENGINE.calls == 3, "only the pages the first run did not read"
    assert second["ocr_pages_read"] == 3 and second["ocr_pages_reused"] == 4
    assert second["ocr_pages"] == 7 and second["blank_pages"] == 1 and second["pages_per_second"] > 0
    assert logs and logs[-1].startswith("text: 8/8 pages (3 OCR'd, 4 reused, 1 blank)")


def test_the_cli_bar_shows_the_page_progress_of_the_document_in_flight() -> None:
    class Bar:
        disable = False
        postfix = ""

        def set_postfix_str(self, s: str) -> None:
            self.postfix = s

    bar = Bar()
    postfix = _PagePostfix(bar, seconds=0.0)
    postfix(TextProgress("contract.pdf", done=412, total=1000, elapsed_s=412 / 1.3, ocr_pages=412))
    assert bar.postfix == "contract.pdf p 412/1000 ETA 7m32s"


def test_the_run_of_a_long_document_gets_a_max_runtime_from_its_page_count(tmp_path: Path) -> None:
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "scan.pdf").write_bytes(scanned_pdf([f"Page {i}\nClause {i}." for i in range(3)]))
    record, _ = DocumentStore(tmp_path / "data" / "store").register(tmp_path / "in" / "scan.pdf")

    def runtime_tag(overrides: dict) -> str | None:
        defs = build_definitions(
            tmp_path / "data", overrides_json=json.dumps(overrides), ocr=CountingOcrResource()
        )
        instance = dg.DagsterInstance.ephemeral()
        instance.add_dynamic_partitions("documents", [record.doc_id])
        result = defs.resolve_job_def("ingest_document").execute_in_process(
            partition_key=record.doc_id, instance=instance, asset_selection=[dg.AssetKey("document_text")]
        )
        return instance.get_run_by_id(result.run_id).tags.get("dagster/max_runtime")

    ENGINE.reset(hang_at=None)
    assert runtime_tag({}) == "7200"  # 3 pages x 60 s: the instance's own two hours as the floor
    assert runtime_tag({"limits": {"run_seconds_per_page": 4000}}) == "12000"  # 3 x 4000 s
    assert runtime_tag({"limits": {"run_seconds_per_page": 0}}) is None  # the instance's limit
