"""Documents by name in Dagster, and the gate read per document: in-process runs on tiny PDFs.

What the UI shows comes from these events: partition keys named after files, run tags set by the
run itself (so backfill runs carry them), a key typed by hand refused at once and never retried,
and a quarantined document that ends a green run with checks, metadata and a list saying why.
"""

from __future__ import annotations

import base64
import re
from pathlib import Path

import dagster as dg
import pymupdf
import pytest

from assets.alerts import last_update
from assets.definitions import build_definitions
from assets.documents import ADMITTED_CHECK, DUCKDB_TABLES, KB_TABLES, QUALITY_CHECKS
from assets.partitions import documents_partitions
from assets.review import quarantine
from dagster_ocr import partition_keys, thumbnails
from dagster_ocr.ingest import DocumentStore
from dagster_ocr.warehouse import CONTENT_TABLES, Warehouse
from resources import WarehouseResource

QUIET = {"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}}


def _pdf(path: Path, lines: list[str]) -> Path:
    doc = pymupdf.open()
    for _ in range(2):
        page = doc.new_page()
        for i, line in enumerate(lines):
            page.insert_text((72, 72 + 30 * i), line, fontsize=11)
    doc.save(path)
    doc.close()
    return path


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """A data folder with two registered documents (one sound, one mojibake), their partitions in
    one instance, and each run once without any tag, the way a backfill launches it."""
    root = tmp_path_factory.mktemp("byname")
    inbox = root / "inbox"
    inbox.mkdir()
    sound = _pdf(
        inbox / "Annual Report 2023.pdf", [f"Revenue grew in quarter {i} of the year." for i in range(8)]
    )
    garbled = _pdf(
        inbox / "garbled.pdf",
        [f"Ã©tÃ© {i}: la sociÃ©tÃ© â€œfournisseurâ€\x9d sâ€™engage Ã  payer" for i in range(12)],
    )
    data = root / "data"
    store = DocumentStore(data / "store")
    records = {p.name: store.register(p)[0] for p in (sound, garbled)}
    keys = {name: partition_keys.partition_key(r.file_name, r.doc_id) for name, r in records.items()}
    defs = build_definitions(data, ocr_engine="none")
    job = defs.resolve_job_def("ingest_document")
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions(documents_partitions.name, list(keys.values()))
        results = {
            name: job.execute_in_process(
                partition_key=key, instance=instance, raise_on_error=False, run_config=QUIET
            )
            for name, key in keys.items()
        }
        yield {
            "instance": instance,
            "defs": defs,
            "records": records,
            "keys": keys,
            "results": results,
            "warehouse": Warehouse(data / "warehouse.duckdb"),
        }


def test_partitions_are_named_after_their_files(world):
    sound = world["records"]["Annual Report 2023.pdf"]
    assert world["keys"]["Annual Report 2023.pdf"] == f"Annual_Report_2023-{sound.doc_id[:12]}"
    # the key <-> doc_id map, for analysts and for tools that start from a doc_id
    rows = world["warehouse"].query("SELECT partition_key, doc_id, file_name FROM document_partitions")
    assert {(r.partition_key, r.doc_id) for r in rows.itertuples()} == {
        (world["keys"][n], r.doc_id) for n, r in world["records"].items()
    }


def test_runs_launched_without_tags_are_tagged_with_the_document(world):
    instance = world["instance"]
    for name, result in world["results"].items():
        assert result.success, name  # a quarantine is an outcome: the run is green
        tags = instance.get_run_by_id(result.run_id).tags
        assert tags["dagster-ocr/doc_id"] == world["records"][name].doc_id
        assert tags["dagster-ocr/file_name"] == name
        assert tags["dagster/partition"] == world["keys"][name]
    outcome = {
        n: instance.get_run_by_id(r.run_id).tags["dagster-ocr/outcome"] for n, r in world["results"].items()
    }
    assert outcome == {"Annual Report 2023.pdf": "parsed", "garbled.pdf": "quarantined"}
    # why, short, on the held-back run's row (the Runs page shows every tag of ours, clipped at
    # about 48 characters): only there
    why = {n: instance.get_run_by_id(r.run_id).tags.get("held_back") for n, r in world["results"].items()}
    assert why == {"Annual Report 2023.pdf": None, "garbled.pdf": "flagged_paragraph_share 1.0 (<= 0.05)"}
    # and the UI's run filter finds a document's runs by file name
    found = instance.get_runs(dg.RunsFilter(tags={"dagster-ocr/file_name": "garbled.pdf"}))
    assert [r.run_id for r in found] == [world["results"]["garbled.pdf"].run_id]


def test_a_quarantined_document_reads_as_quarantined_not_as_an_incident(world):
    result = world["results"]["garbled.pdf"]
    checks = {e.check_name: e for e in result.get_asset_check_evaluations()}
    failed = [c for c in checks.values() if not c.passed]
    assert failed and all(c.severity == dg.AssetCheckSeverity.WARN for c in failed)
    para = checks["paragraphs_valid"]
    assert {c.partition for c in checks.values() if c.check_name in QUALITY_CHECKS} == {
        world["keys"]["garbled.pdf"]
    }
    assert para.metadata["outcome"].value == "quarantined"
    assert para.metadata["file_name"].value == "garbled.pdf"
    assert para.description.startswith("garbled.pdf: quarantined: ")
    # observed value and threshold as numbers (the check's history lists them; plots draw them)
    observed = para.metadata["flagged_paragraph_share observed"].value
    threshold = para.metadata["flagged_paragraph_share threshold"].value
    assert isinstance(observed, float) and isinstance(threshold, float) and observed > threshold
    table = para.metadata["expectations"].value
    assert "| ⛔ fail | `flagged_paragraph_share` | ERROR |" in table
    assert checks["pages_complete"].passed and checks["pages_complete"].metadata["outcome"].value == "passed"
    # duckdb_tables says so on its materialization; knowledge_base is not materialized but observed
    mats = {e.asset_key.to_user_string(): e for e in result.get_asset_materialization_events()}
    meta = mats["duckdb_tables"].step_materialization_data.materialization.metadata
    assert (
        meta["status"].value == "quarantined" and "flagged_paragraph_share" in meta["held_back_because"].value
    )
    assert isinstance(meta["gate flagged_paragraph_share"].value, float)
    assert "knowledge_base" not in mats
    instance = world["instance"]
    (obs,) = instance.fetch_observations(
        dg.AssetRecordsFilter(asset_key=dg.AssetKey("knowledge_base")), limit=5
    ).records
    assert obs.partition_key == world["keys"]["garbled.pdf"]
    assert obs.asset_observation.metadata["status"].value == "quarantined"
    # freshness counts the decision as an update of the knowledge base
    assert last_update(instance, dg.AssetKey("knowledge_base")) >= obs.timestamp - 1
    # and the knowledge base's own check says it was held back: its partition reads "failed",
    # with why, where a document never run reads "missing"
    admitted = checks[ADMITTED_CHECK]
    assert admitted.asset_key == dg.AssetKey("knowledge_base")
    assert not admitted.passed and admitted.severity == dg.AssetCheckSeverity.WARN
    assert admitted.partition == world["keys"]["garbled.pdf"]
    assert admitted.metadata["status"].value == "quarantined"
    assert "flagged_paragraph_share" in admitted.metadata["held_back_because"].value
    assert admitted.description.startswith("garbled.pdf: quarantined, held back: ")


def test_a_sound_document_passes_every_gate_with_its_figures(world):
    result = world["results"]["Annual Report 2023.pdf"]
    checks = [c for c in result.get_asset_check_evaluations() if c.check_name in QUALITY_CHECKS]
    assert len(checks) == len(QUALITY_CHECKS) and all(c.passed for c in checks)
    assert {c.metadata["file_name"].value for c in checks} == {"Annual Report 2023.pdf"}
    mats = {e.asset_key.to_user_string(): e for e in result.get_asset_materialization_events()}
    assert "knowledge_base" in mats
    (admitted,) = [c for c in result.get_asset_check_evaluations() if c.check_name == ADMITTED_CHECK]
    assert admitted.passed and admitted.metadata["chunks"].value > 0
    # what was extracted, readable on the partition's materialization
    meta = mats["duckdb_tables"].step_materialization_data.materialization.metadata
    summary = meta["summary"].value
    assert summary.startswith("### Annual Report 2023.pdf\n\n**parsed**") and "| 2 | 0 (0%) |" in summary
    assert "Revenue grew in quarter 0" in summary
    assert (
        "Revenue grew"
        in mats["paragraphs"].step_materialization_data.materialization.metadata["preview"].value
    )


def test_the_quarantine_asset_lists_held_back_documents_and_why(world):
    wh = world["warehouse"]
    result = dg.materialize([quarantine], resources={"warehouse": WarehouseResource(path=str(wh.path))})
    (mat,) = result.get_asset_materialization_events()
    meta = mat.step_materialization_data.materialization.metadata
    assert meta["documents_held_back"].value == 1 and meta["quarantined"].value == 1
    listing = meta["held_back"].value
    assert "garbled.pdf" in listing and f"`{world['keys']['garbled.pdf']}`" in listing
    assert "flagged_paragraph_share" in listing and "Annual Report" not in listing
    # at a glance: one short plain-text line per document, right after the counts (the UI shows
    # text entries inline, clipped at the column's edge)
    labels = list(meta)
    assert labels[:4] == ["documents_held_back", "quarantined", "failed", "garbled.pdf"]
    assert meta["garbled.pdf"].value == "quarantined: flagged_paragraph_share 1.0 (<= 0.05)"
    # and the refresh run's row on the Runs page names it
    assert result.dagster_run.tags["held_back"] == "garbled.pdf"


def test_a_key_typed_by_hand_fails_at_once_with_what_to_do_and_is_not_retried(world):
    instance = world["instance"]
    instance.add_dynamic_partitions(documents_partitions.name, ["my document"])
    job = world["defs"].resolve_job_def("ingest_document")
    result = job.execute_in_process(
        partition_key="my document", instance=instance, raise_on_error=False, run_config=QUIET
    )
    assert not result.success
    (failure,) = [e for e in result.all_events if e.event_type == dg.DagsterEventType.STEP_FAILURE]
    assert failure.step_key == "document_text"
    message = failure.step_failure_data.user_failure_data.description
    assert "'my document' is not a document key" in message and "inbox" in message
    retries = [e for e in result.all_events if e.event_type == dg.DagsterEventType.STEP_UP_FOR_RETRY]
    assert retries == []


def test_the_cli_takes_the_name_the_ui_shows(world, capsys):
    from assets.cli import main

    wh = world["warehouse"]
    key = world["keys"]["Annual Report 2023.pdf"]
    assert main(["export", key, "--warehouse", str(wh.path)]) == 0
    assert "Revenue grew in quarter 0" in capsys.readouterr().out
    assert (
        main(
            ["approve", "no-such-key-0123456789ab", "--warehouse", str(wh.path), "--by", "a", "--reason", "b"]
        )
        == 2
    )
    assert "no document 'no-such-key-0123456789ab'" in capsys.readouterr().err


def test_the_duckdb_assets_columns_are_the_real_tables(world):
    """The catalog's column schemas are the warehouse file's columns, in order, with sql/'s words."""
    defs, wh = world["defs"], world["warehouse"]
    shown = {
        "duckdb_tables": DUCKDB_TABLES,
        "knowledge_base": KB_TABLES,
        "kb_vectors": ("kb_embeddings",),
        "quarantine": ("quarantine",),
    }
    # quarantine's columns are metadata of their own ("columns"): a Columns section would sit
    # above the held-back documents on its Overview page
    label = {"quarantine": "columns"}
    with wh.connect(read_only=True) as con:
        for name, tables in shown.items():
            asset = defs.resolve_assets_def(name)
            schema = asset.metadata_by_key[dg.AssetKey(name)][label.get(name, "dagster/column_schema")]
            real = []
            for table in tables:
                rows = con.execute(
                    "SELECT column_name, data_type, is_nullable FROM information_schema.columns "
                    "WHERE table_schema = 'main' AND table_name = ? ORDER BY ordinal_position",
                    [table],
                ).fetchall()
                assert rows, table
                real += [(f"{table}.{c}" if len(tables) > 1 else c, t, n == "YES") for c, t, n in rows]
            assert [(c.name, c.type, c.constraints.nullable) for c in schema.columns] == real, name
    columns = {
        c.name: c
        for c in defs.resolve_assets_def("duckdb_tables")
        .metadata_by_key[dg.AssetKey("duckdb_tables")]["dagster/column_schema"]
        .columns
    }
    assert columns["documents.doc_id"].description == "sha256 of the file's bytes"
    assert columns["paragraphs.kind"].description.startswith("body | heading")


def test_each_load_says_how_many_rows_and_how_to_read_them(world):
    result = world["results"]["Annual Report 2023.pdf"]
    doc_id = world["records"]["Annual Report 2023.pdf"].doc_id
    mats = {e.asset_key.to_user_string(): e for e in result.get_asset_materialization_events()}
    meta = mats["duckdb_tables"].step_materialization_data.materialization.metadata
    wh = world["warehouse"]
    rows = sum(
        int(wh.query(f"SELECT count(*) AS n FROM {t} WHERE doc_id = ?", [doc_id]).n.iat[0])
        for t in ("documents", *CONTENT_TABLES)
    )
    assert meta["dagster/row_count"].value == rows > 0
    assert f"FROM document_blocks WHERE doc_id = '{doc_id}'" in meta["rows_sql"].value
    key = world["keys"]["Annual Report 2023.pdf"]
    assert meta["page_previews"].value == f"/assets/paragraphs?view=partitions&partition={key}"
    kb = mats["knowledge_base"].step_materialization_data.materialization.metadata
    chunks = wh.query("SELECT count(*) AS n FROM kb_chunks WHERE doc_id = ?", [doc_id]).n.iat[0]
    assert kb["dagster/row_count"].value == kb["chunks"].value == chunks > 0


def test_each_document_shows_its_pages_with_the_boxes_found(world):
    """The paragraphs stage's materialization carries the page previews: inline JPEGs a browser
    decodes, one per page shown, each captioned with its printed page and text source."""
    for name, result in world["results"].items():
        mats = {e.asset_key.to_user_string(): e for e in result.get_asset_materialization_events()}
        meta = mats["paragraphs"].step_materialization_data.materialization.metadata
        text = meta["page_previews"].value
        images = re.findall(r"\(data:image/jpeg;base64,([A-Za-z0-9+/=]+)\)", text)
        assert len(images) == 2, name  # both pages of the two-page documents
        assert meta["page_preview_bytes"].value == sum(len(base64.b64decode(i)) for i in images)
        for data in images:
            assert pymupdf.Pixmap(base64.b64decode(data)).width == thumbnails.WIDTH
        assert "| p. 1 (page 1 of 2) | p. 2 (page 2 of 2) |" in text and "| text layer: " in text


def test_a_reason_is_short_enough_to_read_where_the_ui_clips_it():
    from assets.gate_metadata import short_reason
    from assets.review import held_back_tag

    assert short_reason("paragraphs_valid.flagged_paragraph_share: observed 1.0 (expected <= 0.05)") == (
        "flagged_paragraph_share 1.0 (<= 0.05)"
    )
    several = (
        "document_parsed.text_extracted: observed 0 (expected >= 1 chars); "
        "pages_complete.pages_have_content: observed 2 (expected 0); "
        "ocr_confident.mean: observed 0.2 (expected >= 0.6)"
    )
    assert short_reason(several) == "text_extracted 0 (>= 1 chars) +2 more"
    assert short_reason("encrypted: the PDF is encrypted and needs a password") == (
        "encrypted: the PDF is encrypted and needs a password"
    )
    import pandas as pd

    frame = pd.DataFrame({"file_name": [f"f{i}.pdf" for i in range(5)]})
    assert held_back_tag(frame) == "5: f0.pdf, f1.pdf, f2.pdf +2 more"
    assert held_back_tag(frame.head(1)) == "f0.pdf" and held_back_tag(frame.head(0)) == "none"
