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
    stages = {
        "source_documents",
        "document_text",
        "page_labels",
        "tables",
        "paragraphs",
        "duckdb_tables",
        "quality_gate",
        "knowledge_base",
        "kb_vectors",
    }
    assert keys == stages | {"quarantine"}
    for key in stages:
        assert graph.get(dg.AssetKey(key)).partitions_def.name == "documents"
    # the reviewers' list of held-back documents: one asset over every document's verdict
    assert graph.get(dg.AssetKey("quarantine")).partitions_def is None
    # the knowledge base sits behind the warehouse asset and its quality checks; a quarantine is an
    # outcome (no blocking ERROR check that would turn the run red): knowledge_base itself loads
    # only parsed documents (tests/dagster/test_quality_gate.py)
    gate = [c for c in graph.asset_check_keys if c.asset_key == dg.AssetKey("duckdb_tables")]
    assert {c.name for c in gate} >= {"document_parsed", "pages_complete", "paragraphs_valid"}
    assert dg.AssetKey("duckdb_tables") in graph.get(dg.AssetKey("quality_gate")).parent_keys


def test_the_graph_reads_as_the_pipeline_ingestion_to_gate_to_knowledge_base():
    """Lineage as docs/ui.md tells it: ingestion → text → labels → tables → paragraphs →
    duckdb_tables → the gate → knowledge_base, and the quarantine list hangs off the gate."""
    graph = defs.resolve_asset_graph()

    def parents(name: str) -> set[str]:
        return {k.to_user_string() for k in graph.get(dg.AssetKey(name)).parent_keys}

    # labels and tables are siblings (both read the text; paragraphs reads both)
    edges = [
        ("source_documents", "document_text"),
        ("document_text", "page_labels"),
        ("document_text", "tables"),
        ("page_labels", "paragraphs"),
        ("tables", "paragraphs"),
        ("paragraphs", "duckdb_tables"),
        ("duckdb_tables", "quality_gate"),
        ("quality_gate", "knowledge_base"),
        ("knowledge_base", "kb_vectors"),
    ]
    for upstream, downstream in edges:
        assert upstream in parents(downstream), (upstream, downstream)
    assert parents("source_documents") == set()
    assert parents("knowledge_base") == {"quality_gate"}
    assert parents("kb_vectors") == {"knowledge_base"}
    assert parents("quarantine") == {"quality_gate"}
    # ingestion is the sensor's work, not a run's: an external asset, left out of every job
    assert not graph.get(dg.AssetKey("source_documents")).is_executable
    for job in ("ingest_document", "reload_warehouse"):
        steps = {n.name for n in defs.resolve_job_def(job).nodes}
        assert "source_documents" not in steps and "duckdb_tables" in steps
    # the gate is decided in the load's step (one commit): no extra step, the step key unchanged
    ingest = defs.resolve_job_def("ingest_document")
    assert {n.name for n in ingest.nodes if not n.name.startswith("freshness_check")} == {
        "document_text",
        "page_labels",
        "tables",
        "paragraphs",
        "duckdb_tables",
        "knowledge_base",
        "kb_vectors",  # a graph-backed asset: one node, its three ops inside
    }
    assert defs.resolve_assets_def("quality_gate") is defs.resolve_assets_def("duckdb_tables")
    # a document backfill stays one run per document, and never pulls in the unpartitioned list
    job_keys = ingest.asset_layer.selected_asset_keys
    assert dg.AssetKey("quarantine") not in job_keys and dg.AssetKey("quality_gate") in job_keys
    assert graph.get(dg.AssetKey("quality_gate")).backfill_policy.max_partitions_per_run == 1


def test_every_definition_says_what_it_is_and_who_owns_it():
    """What the UI's catalog shows beside each name: a description, owners, and kinds (assets)."""
    graph = defs.resolve_asset_graph()
    for key in graph.get_all_asset_keys():
        spec = graph.get(key)
        name = key.to_user_string()
        assert (spec.description or "").strip(), name
        assert spec.owners, name
        assert spec.kinds, name
    for check in graph.asset_check_keys:
        # a check has no owners or kinds of its own in Dagster 1.13: its asset's are shown with it
        assert (graph.get_check_spec(check).description or "").strip(), check
        assert graph.get(check.asset_key).owners, check
    sensors = list(defs.sensors or [])
    schedules = list(defs.schedules or [])
    jobs = [j for j in defs.resolve_all_job_defs() if not j.name.startswith("__")]
    assert {j.name for j in jobs} >= {"ingest_document", "reload_warehouse", "refresh_quarantine"}
    assert len(sensors) >= 6 and schedules
    for definition in [*sensors, *schedules, *jobs]:
        assert (definition.description or "").strip(), definition.name
        owners = getattr(definition, "owners", None) or definition.metadata.get("owners")
        assert owners, definition.name


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


def test_the_code_location_loads_without_warnings_nobody_can_act_on(tmp_path):
    """Loading the definitions and binding a job (what `make demo`, `dagster-ocr run` and `make ui` do)
    prints no Dagster beta warning for the features we use on purpose (assets/dagster_warnings.py)."""
    code = (
        "from assets.definitions import build_definitions\n"
        f"build_definitions({str(tmp_path)!r}).resolve_job_def('ingest_document')\n"
    )
    proc = subprocess.run(
        [sys.executable, "-W", "always", "-c", code], cwd=REPO, capture_output=True, text=True, timeout=180
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Warning" not in proc.stderr, proc.stderr[-2000:]


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


# ---- no import cycles inside the core --------------------------------------------------------------


def _core_modules() -> dict[str, tuple[Path, bool]]:
    """Every module under dagster_ocr/: dotted name -> (file, is a package's __init__)."""
    modules = {}
    for path in sorted((REPO / "dagster_ocr").rglob("*.py")):
        parts = list(path.relative_to(REPO).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        modules[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return modules


def _runtime_imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement, in functions too (cycles hide there), but not under ``if TYPE_CHECKING:``,
    which never runs."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        test = node.test if isinstance(node, ast.If) else None
        if test is not None and "TYPE_CHECKING" in ast.unparse(test):
            skipped.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    return [n for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom) and id(n) not in skipped]


def _core_import_graph() -> dict[str, dict[str, str]]:
    """module -> {imported core module: where (file:line)}.

    ``from a.b import c`` imports a.b, and a.b.c when that is a module; importing a.b.c also runs
    the __init__ of the packages above it (a.b), except the importer's own packages, which are
    already being imported when it runs (a package's __init__ importing its submodules is fine; a
    submodule importing its package's __init__ back is a cycle when that __init__ imports it)."""
    modules = _core_modules()
    graph: dict[str, dict[str, int]] = {}
    for name, (path, is_package) in modules.items():
        package = name if is_package else name.rpartition(".")[0]
        own = {".".join(name.split(".")[:i]) for i in range(1, name.count(".") + 1)}
        edges: dict[str, str] = {}
        for node in _runtime_imports(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                if node.level:  # relative: from .x import y / from .. import y
                    base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    source = ".".join(base + ([node.module] if node.module else []))
                else:
                    source = node.module or ""
                targets = [source] + [f"{source}.{a.name}" for a in node.names]
            for target in targets:
                if target not in modules or target == name:
                    continue
                parents = {".".join(target.split(".")[:i]) for i in range(1, target.count(".") + 1)}
                for module in {target, *(parents - own)} - {name}:
                    edges.setdefault(module, f"{path.relative_to(REPO)}:{node.lineno}")
        graph[name] = edges
    return graph


def _find_cycle(graph: dict[str, dict[str, str]]) -> list[str] | None:
    """One cycle as [a, b, ..., a], or None (iterative depth-first search)."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    for start in sorted(graph):
        if state.get(start):
            continue
        path, stack = [start], [iter(sorted(graph[start]))]
        state[start] = 1
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:
                state[path.pop()] = 2
                stack.pop()
            elif state.get(nxt) == 1:
                return path[path.index(nxt) :] + [nxt]
            elif not state.get(nxt):
                state[nxt] = 1
                path.append(nxt)
                stack.append(iter(sorted(graph.get(nxt, {}))))
    return None


def _describe(cycle: list[str], graph: dict[str, dict[str, str]]) -> str:
    steps = [f"{a} imports {b} ({graph[a][b]})" for a, b in zip(cycle, cycle[1:], strict=False)]
    return "import cycle: " + " -> ".join(cycle) + "\n  " + "\n  ".join(steps)


def test_core_modules_import_without_cycles():
    """No module of the core imports itself back through others (a cycle works only by import order)."""
    graph = _core_import_graph()
    assert "dagster_ocr.warehouse" in graph and graph["dagster_ocr.warehouse"]  # the walk sees imports
    cycle = _find_cycle(graph)
    assert cycle is None, _describe(cycle, graph)


def test_core_packages_depend_one_way():
    """Nor do the core's parts (each module or subpackage directly under dagster_ocr/): a subpackage
    and a module importing each other are tied even when no two single modules form a cycle (the
    warehouse once imported admin/'s migrations while admin/'s doctor imported the warehouse)."""

    def unit(module: str) -> str:
        return ".".join(module.split(".")[:2])

    units: dict[str, dict[str, str]] = {}
    for module, edges in _core_import_graph().items():
        out = units.setdefault(unit(module), {})
        for target, where in edges.items():
            if unit(target) not in (unit(module), "dagster_ocr"):
                out.setdefault(unit(target), where)
    cycle = _find_cycle(units)
    assert cycle is None, _describe(cycle, units)


def test_embedding_runs_outside_the_warehouse_writers_pool():
    """kb_vectors reads and writes the warehouse in the writer pool, and embeds in its own pool
    (issue 34 item 5): a document's embedding never keeps another document's load waiting."""
    from assets.partitions import DUCKDB_WRITER_POOL, EMBEDDINGS_POOL

    graph_def = defs.resolve_assets_def("kb_vectors").node_def
    pools = {node.name: node.definition.pool for node in graph_def.nodes}
    assert pools == {
        "kb_vector_plan": DUCKDB_WRITER_POOL,
        "kb_embed": EMBEDDINGS_POOL,
        "kb_store_vectors": DUCKDB_WRITER_POOL,
    }
    assert defs.resolve_assets_def("knowledge_base").op.pool == DUCKDB_WRITER_POOL
