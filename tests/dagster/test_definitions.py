"""The code location loads, validates, and keeps the layering (assets → resources → dagster_ocr)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import dagster as dg

from assets.definitions import defs

REPO = Path(__file__).resolve().parents[2]


def test_definitions_hold_every_stage_partitioned_by_document():
    graph = defs.resolve_asset_graph()
    keys = {k.to_user_string() for k in graph.get_all_asset_keys()}
    assert keys == {"document_text", "page_labels", "tables", "paragraphs", "duckdb_tables", "knowledge_base"}
    for key in graph.get_all_asset_keys():
        assert graph.get(key).partitions_def.name == "documents"
    # the knowledge base sits behind the warehouse asset, whose quality checks block it
    gate = [c for c in graph.asset_check_keys if c.asset_key == dg.AssetKey("duckdb_tables")]
    assert {c.name for c in gate} >= {"document_parsed", "pages_complete", "paragraphs_valid"}
    for check in gate:
        if "fresh" not in check.name:
            assert graph.get_check_spec(check).blocking, check
    assert dg.AssetKey("duckdb_tables") in graph.get(dg.AssetKey("knowledge_base")).parent_keys


def test_sensor_schedule_and_job_are_defined():
    assert defs.resolve_sensor_def("inbox_sensor")
    assert defs.resolve_schedule_def("nightly_ingestion").cron_schedule == "0 2 * * *"
    assert defs.resolve_job_def("ingest_document")
    # the snapshot catch-up runs in the writer pool, like every step that touches the DuckDB file
    assert defs.resolve_sensor_def("snapshot_sensor").job_name == "publish_snapshot_job"
    (node,) = defs.resolve_job_def("publish_snapshot_job").nodes
    assert node.definition.pool == "duckdb_writer"


def test_dagster_definitions_validate_accepts_the_workspace(tmp_path):
    proc = subprocess.run(
        [str(Path(sys.executable).parent / "dagster"), "definitions", "validate", "-w", "workspace.yaml"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=180,
        env={"DAGSTER_HOME": str(tmp_path), "PATH": "/usr/bin:/bin"},
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "All code locations passed validation" in proc.stdout + proc.stderr


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_layers_import_one_way_only():
    forbidden = {
        "dagster_ocr": {"dagster", "dagster_postgres", "resources", "assets"},
        "resources": {"assets"},
    }
    for package, banned in forbidden.items():
        for path in (REPO / package).rglob("*.py"):
            bad = _imports(path) & banned
            assert not bad, f"{path.relative_to(REPO)} imports {bad}"
