"""A long scan's OCR over several steps: page ranges planned, read and checkpointed, then the text
stage reads the document and OCRs nothing; a re-run plans only what is not stored."""

from __future__ import annotations

import functools
from pathlib import Path

import dagster as dg
import numpy as np
from support.scans import scanned_pdf

from assets.definitions import build_definitions
from assets.page_ranges import ocr_ranges_then_ingest
from dagster_ocr.ingest import DocumentStore
from dagster_ocr.ocr.base import OcrEngineBase, OcrLine, OcrSettings
from resources import OcrEngineResource


class _Engine(OcrEngineBase):
    name = "ranges"
    calls = 0  # every copy counts here (the steps run in this process under execute_in_process)

    def recognize(self, image: np.ndarray) -> list[OcrLine]:
        type(self).calls += 1
        return [OcrLine(f"line {int((image < 128).sum())}", (10.0, 10.0, 300.0, 40.0), 0.97)]

    def worker_factory(self):
        return functools.partial(_Engine)  # a CPU engine: copies may run in other steps


class _Resource(OcrEngineResource):
    def get_engine(self, settings: OcrSettings) -> _Engine:
        return _Engine()


def test_page_ranges_are_read_in_steps_and_the_text_stage_reuses_them(tmp_path: Path) -> None:
    pages = [f"Page {i}\nThe parties agree to the terms of clause {i}." for i in range(20)]
    pages[5] = "white"  # a blank page: no OCR, nothing stored
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "scan.pdf").write_bytes(scanned_pdf(pages))
    record, _ = DocumentStore(tmp_path / "data" / "store").register(tmp_path / "in" / "scan.pdf")
    defs = build_definitions(tmp_path / "data", ocr=_Resource())
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("documents", [record.doc_id])
    job = defs.resolve_job_def("ocr_page_ranges")
    config = {"ops": {"plan_page_ranges": {"config": {"ranges": 2}}}}

    _Engine.calls = 0
    result = job.execute_in_process(partition_key=record.doc_id, instance=instance, run_config=config)
    assert result.success
    ranges = list(result.output_for_node("plan_page_ranges").values())
    assert ranges == [list(range(10)), list(range(10, 20))]  # one range per step, in page order
    assert result.output_for_node("join_page_ranges") == 19 == _Engine.calls
    assert len(list((tmp_path / "data" / "ocr_pages").rglob("*.page"))) == 19

    # the document's text stage: every page from the checkpoint, none OCR'd again
    _Engine.calls = 0
    text = defs.resolve_job_def("ingest_document").execute_in_process(
        partition_key=record.doc_id, instance=instance, asset_selection=[dg.AssetKey("document_text")]
    )
    (mat,) = text.asset_materializations_for_node("document_text")
    assert _Engine.calls == 0
    assert mat.metadata["ocr_pages_reused"].value == 19 and mat.metadata["status"].value == "parsed"

    # a re-run plans only what is not stored (the blank page) and OCRs nothing
    again = job.execute_in_process(partition_key=record.doc_id, instance=instance, run_config=config)
    assert list(again.output_for_node("plan_page_ranges").values()) == [[5]]
    assert again.output_for_node("join_page_ranges") == 0 == _Engine.calls

    # success launches the document's ingestion for the same partition
    run = instance.get_run_by_id(result.run_id)
    context = dg.build_run_status_sensor_context(
        sensor_name=ocr_ranges_then_ingest.name,
        dagster_instance=instance,
        dagster_run=run,
        dagster_event=result.get_run_success_event(),
    )
    request = ocr_ranges_then_ingest(context)
    assert isinstance(request, dg.RunRequest) and request.partition_key == record.doc_id
