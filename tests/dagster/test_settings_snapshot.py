"""One settings snapshot per document (issue 38 item 2): the text stage resolves the settings, the
later stages parse under that snapshot whatever the settings file says by then, the warehouse
records it, and the stages that start from the warehouse read it back from there."""

from __future__ import annotations

import json
from pathlib import Path

import dagster as dg

from assets.definitions import build_definitions
from dagster_ocr.ingest import DocumentStore
from dagster_ocr.samples import build_service_agreement
from dagster_ocr.settings import Settings, SettingsSnapshot
from dagster_ocr.warehouse import Warehouse

REST = ["page_labels", "tables", "paragraphs", "duckdb_tables", "quality_gate", "knowledge_base"]


def _run(defs: dg.Definitions, instance: dg.DagsterInstance, key: str, assets: list[str]):
    job = defs.resolve_job_def("ingest_document")
    result = job.execute_in_process(
        partition_key=key, instance=instance, asset_selection=[dg.AssetKey(a) for a in assets]
    )
    assert result.success
    return result


def test_a_settings_file_edited_between_stages_changes_nothing_until_the_text_stage_reruns(
    tmp_path: Path,
) -> None:
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "contract.pdf").write_bytes(build_service_agreement(None)[0])
    record, _ = DocumentStore(tmp_path / "data" / "store").register(tmp_path / "in" / "contract.pdf")
    settings_file = tmp_path / "settings.json"
    first = {"ocr": {"engine": "none"}, "kb": {"embeddings": False}}
    settings_file.write_text(json.dumps(first))
    defs = build_definitions(tmp_path / "data", settings_file=str(settings_file))
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("documents", [record.doc_id])
    wh = Warehouse(tmp_path / "data" / "warehouse.duckdb")
    snapshot = SettingsSnapshot.of(Settings.load(settings_file))

    text = _run(defs, instance, record.doc_id, ["document_text"])
    (mat,) = text.asset_materializations_for_node("document_text")
    assert mat.metadata["settings_hash"].value == snapshot.hash

    # edited after the text stage: no tables, short chunks. The later stages do not see it
    edited = {**first, "tables": {"min_rows": 1000}, "kb": {"embeddings": False, "max_chars": 200}}
    settings_file.write_text(json.dumps(edited))
    _run(defs, instance, record.doc_id, REST)
    row = wh.query("SELECT settings_json, settings_hash FROM documents").iloc[0]
    assert (row.settings_json, row.settings_hash) == (snapshot.json, snapshot.hash)
    assert wh.query("SELECT count(*) AS n FROM tables").n.iat[0] > 0
    chunks = wh.query("SELECT count(*) AS n, max(length(text)) AS longest FROM kb_chunks").iloc[0]
    assert chunks.longest > 200  # chunked under the recorded snapshot (1200), not the file's 200

    # a re-run of the later stages alone is idempotent: same rows, same recorded settings
    _run(defs, instance, record.doc_id, REST)
    assert wh.query("SELECT settings_hash FROM documents").settings_hash.tolist() == [snapshot.hash]

    # the edit takes effect once the text stage is re-materialized, for every stage after it
    _run(defs, instance, record.doc_id, ["document_text", *REST])
    now = SettingsSnapshot.of(Settings.load(settings_file))
    assert wh.query("SELECT settings_hash FROM documents").settings_hash.tolist() == [now.hash]
    assert wh.query("SELECT count(*) AS n FROM tables").n.iat[0] == 0
    assert wh.query("SELECT count(*) AS n FROM kb_chunks").n.iat[0] > chunks.n  # shorter chunks
