"""GpuOcrResource inside an in-process Dagster materialization, on tiny CPU checkpoints."""

from __future__ import annotations

import dagster as dg
import pymupdf
import pytest
from support.tiny_models import build_tiny_target, derive_draft

from dagster_ocr.ocr import OcrSettings, ocr_page
from dagster_ocr.ocr.speculative import SpeculativeOcrEngine
from dagster_ocr.ocr.stats import summarize
from resources.gpu_ocr import GpuOcrResource


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory):
    root = tmp_path_factory.mktemp("gpu_resource")
    target = build_tiny_target(root / "target")
    return target, derive_draft(target, root / "draft", kind="exact")


@dg.asset(pool="gpu")
def ocr_text(ocr: GpuOcrResource) -> dg.MaterializeResult:
    """A two-page scan OCRed through the resource, statistics attached as metadata."""
    settings = OcrSettings(engine="transformers", min_confidence=0.0)
    engine = ocr.get_engine(settings)
    assert isinstance(engine, SpeculativeOcrEngine)
    doc = pymupdf.open()
    for text in ("Payment due within 30 days", "Total 1,250.00"):
        doc.new_page(width=240, height=60).insert_text((10, 35), text, fontsize=12)
    engine.take_stats()
    with engine.document("contract") as stats:
        pages = [ocr_page(engine, page, i, dpi=72, settings=settings) for i, page in enumerate(doc)]
    total = summarize(stats)
    return dg.MaterializeResult(
        metadata={
            "pages": len(pages),
            "k": stats[0].k,
            "tokens_drafted": total.draft_forwards,
            "tokens_accepted": total.accepted,
            "acceptance_rate": total.acceptance_rate,
            "tokens_per_target_forward": total.tokens_per_target_forward,
        }
    )


def test_the_resource_config_is_the_settings_class_declared_once():
    """Every field of TransformersOcrSettings (but ``kind``) is a config field, with its type,
    bounds, default and description: checked by pydantic in Python and by Dagster at launch."""
    from pydantic import ValidationError

    from dagster_ocr.ocr.settings import TransformersOcrSettings

    fields = TransformersOcrSettings.model_fields
    assert set(GpuOcrResource.model_fields) == set(fields) - {"kind"}
    for name, field in GpuOcrResource.model_fields.items():
        assert field.description == fields[name].description, name
        if name != "target_path":  # required on the resource: nothing to run without it
            assert field.get_default(call_default_factory=True) == fields[name].get_default(
                call_default_factory=True
            ), name
    schema = GpuOcrResource.to_config_schema().as_field().config_type
    assert set(schema.fields) == set(GpuOcrResource.model_fields)
    resource = GpuOcrResource(target_path="/t", device="cuda", batch_size=16, adaptive_window=4)
    assert resource.speculative_settings() == TransformersOcrSettings(
        target_path="/t", device="cuda", batch_size=16, adaptive_window=4
    )
    for bad in ({"device": "tpu"}, {"batch_size": 0}, {"num_speculative_tokens": 65}):
        with pytest.raises(ValidationError):
            GpuOcrResource(target_path="/t", **bad)

    @dg.asset
    def batch(ocr: GpuOcrResource) -> int:
        return ocr.speculative_settings().batch_size

    config = {"resources": {"ocr": {"config": {"target_path": "/t", "device": "cpu", "batch_size": 3}}}}
    result = dg.materialize(
        [batch], resources={"ocr": GpuOcrResource.configure_at_launch()}, run_config=config
    )
    assert result.output_for_node("batch") == 3
    config["resources"]["ocr"]["config"]["device"] = "tpu"
    with pytest.raises(dg.DagsterInvalidConfigError, match="device"):
        dg.materialize([batch], resources={"ocr": GpuOcrResource.configure_at_launch()}, run_config=config)


@pytest.mark.slow  # ~20 s of imports plus a run; ~70 s on a loaded 2-core machine
def test_resource_in_materialization(checkpoints):
    target, draft = checkpoints
    resource = GpuOcrResource(
        target_path=str(target),
        draft_path=str(draft),
        device="cpu",
        max_new_tokens=12,
        num_speculative_tokens_by_doc_type={"contract": 5},
        adaptive=False,
        cpu_threads=1,
    )
    result = dg.materialize([ocr_text], resources={"ocr": resource})
    assert result.success
    (mat,) = result.asset_materializations_for_node("ocr_text")
    meta = {k: v.value for k, v in mat.metadata.items()}
    assert meta["pages"] == 2 and meta["k"] == 5
    assert meta["acceptance_rate"] == 1.0 and meta["tokens_drafted"] > 0
    # the model loaded once: a second get_engine returns the same engine
    assert resource.get_engine(OcrSettings()) is resource.get_engine(OcrSettings())
    assert resource.get_engine(OcrSettings(engine="none")) is None


@pytest.mark.slow
def test_the_real_graph_records_decoding_statistics_per_page(checkpoints, tmp_path):
    """document_text → duckdb_tables with the speculative resource: stats in metadata and DuckDB."""
    from assets.definitions import build_definitions
    from dagster_ocr.ingest import DocumentStore
    from dagster_ocr.samples import build_scanned_letter
    from dagster_ocr.warehouse import Warehouse

    target, draft = checkpoints
    image = tmp_path / "letter.png"
    image.write_bytes(build_scanned_letter(None))
    record, _ = DocumentStore(tmp_path / "data" / "store").register(image)
    resource = GpuOcrResource(
        target_path=str(target), draft_path=str(draft), device="cpu", max_new_tokens=8, adaptive=False
    )
    defs = build_definitions(
        tmp_path / "data",
        overrides_json='{"ocr": {"engine": "transformers", "min_confidence": 0.0}}',
        ocr=resource,
    )
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("documents", [record.doc_id])
    result = defs.resolve_job_def("ingest_document").execute_in_process(
        partition_key=record.doc_id,
        instance=instance,
        raise_on_error=False,
        asset_selection=[
            dg.AssetKey("document_text"),
            dg.AssetKey("page_labels"),
            dg.AssetKey("tables"),
            dg.AssetKey("paragraphs"),
            dg.AssetKey("duckdb_tables"),
        ],
    )
    (mat,) = result.asset_materializations_for_node("document_text")
    meta = {k: v.value for k, v in mat.metadata.items()}
    assert meta["ocr_pages"] == 1
    assert meta["speculative_acceptance_rate"] == 1.0  # the draft is an exact copy
    assert meta["peak_rss_mb"] > 0
    stats = Warehouse(tmp_path / "data" / "warehouse.duckdb").query("SELECT * FROM ocr_decode_stats")
    assert stats.page_index.tolist() == [0]
    assert stats.acceptance_rate[0] == 1.0 and stats.new_tokens[0] > 0
