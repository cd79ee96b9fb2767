"""The production instance (deploy/dagster.yaml) on the real PostgreSQL at 127.0.0.1:5432.

A database is created for this module and dropped after it. The instance is built from the very
file a deployment copies to $DAGSTER_HOME, with the connection taken from DAGSTER_PG_* variables.
A run killed mid-way through its DuckDB write (SIGKILL, as a lost worker) is failed the way run
monitoring fails it, re-executed from failure, and must leave exactly the rows of a clean run.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import dagster as dg
import pytest

from assets.definitions import build_definitions, definitions_from_env
from assets.partitions import documents_partitions
from dagster_ocr.ingest import DocumentStore
from dagster_ocr.warehouse import Warehouse

psycopg2 = pytest.importorskip("psycopg2")

# Postgres round trips, a subprocess run and three in-process runs: ~20 s on 2 idle cores
pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
PG = {"host": "127.0.0.1", "port": 5432, "user": "postgres"}
DOCS = ("page_labels/bug793632.pdf", "page_labels/issue14847.pdf")
COUNTED = ("documents", "pages", "lines", "sections", "paragraphs", "tables", "table_cells", "kb_chunks")
QUIET = {"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}}


def _admin():
    con = psycopg2.connect(dbname="postgres", connect_timeout=3, **PG)
    con.autocommit = True
    return con


@pytest.fixture(scope="module")
def pg_env(tmp_path_factory):
    """Environment of a fresh Postgres database and a DAGSTER_HOME holding deploy/dagster.yaml."""
    try:
        admin = _admin()
    except psycopg2.OperationalError as exc:
        pytest.skip(f"no PostgreSQL on 127.0.0.1:5432 ({exc})")
    db = f"dagster_ocr_test_{uuid.uuid4().hex[:12]}"
    with admin.cursor() as cur:
        cur.execute(f'CREATE DATABASE "{db}"')
    root = tmp_path_factory.mktemp("pg")
    home = root / "home"
    home.mkdir()
    shutil.copy(REPO / "deploy" / "dagster.yaml", home / "dagster.yaml")
    env = {
        "DAGSTER_HOME": str(home),
        "DAGSTER_PG_HOST": PG["host"],
        "DAGSTER_PG_PORT": str(PG["port"]),
        "DAGSTER_PG_USER": PG["user"],
        "DAGSTER_PG_PASSWORD": "unused-with-trust-auth",
        "DAGSTER_PG_DB": db,
        "DAGSTER_OCR_DATA_DIR": str(root / "data"),
        "DAGSTER_OCR_OCR_ENGINE": "none",
    }
    mp = pytest.MonkeyPatch()
    for k, v in env.items():
        mp.setenv(k, v)
    try:
        yield env | {"ROOT": str(root)}
    finally:
        mp.undo()
        with admin.cursor() as cur:
            cur.execute(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)')
        admin.close()


@pytest.fixture(scope="module")
def instance(pg_env):
    """The instance a deployment gets: deploy/dagster.yaml as is, on the test database."""
    inst = dg.DagsterInstance.from_config(pg_env["DAGSTER_HOME"])
    yield inst
    inst.dispose()


def _sql(pg_env, query: str, params=()) -> list[tuple]:
    con = psycopg2.connect(dbname=pg_env["DAGSTER_PG_DB"], **PG)
    try:
        with con.cursor() as cur:
            cur.execute(query, params)
            return cur.fetchall()
    finally:
        con.close()


def _register(pg_env, instance, rel: str, corpus: Path) -> str:
    data = Path(pg_env["DAGSTER_OCR_DATA_DIR"])
    record, _ = DocumentStore(data / "store").register(corpus / rel)
    instance.add_dynamic_partitions(documents_partitions.name, [record.doc_id])
    return record.doc_id


def _counts(warehouse: Path, doc_id: str) -> dict[str, int]:
    wh = Warehouse(warehouse)
    return {
        t: int(wh.query(f"SELECT count(*) AS n FROM {t} WHERE doc_id = ?", [doc_id]).n[0]) for t in COUNTED
    }


def _reference_counts(tmp_path: Path, corpus: Path, rel: str) -> dict[str, int]:
    """Row counts of one clean in-process run on an ephemeral instance."""
    data = tmp_path / "ref"
    record, _ = DocumentStore(data / "store").register(corpus / rel)
    defs = build_definitions(data, ocr_engine="none")
    with dg.instance_for_test() as inst:
        inst.add_dynamic_partitions(documents_partitions.name, [record.doc_id])
        result = defs.resolve_job_def("ingest_document").execute_in_process(
            partition_key=record.doc_id, instance=inst, run_config=QUIET
        )
    assert result.success
    return _counts(data / "warehouse.duckdb", record.doc_id)


def test_runs_events_and_partitions_are_stored_in_postgres(pg_env, instance, corpus):
    job = definitions_from_env().resolve_job_def("ingest_document")
    ids = [_register(pg_env, instance, rel, corpus) for rel in DOCS]
    run_ids = []
    for doc_id in ids:
        result = job.execute_in_process(
            partition_key=doc_id, instance=instance, run_config=QUIET, tags={"dagster-ocr/doc_id": doc_id}
        )
        assert result.success
        run_ids.append(result.run_id)

    stored_runs = {r[0]: r[1] for r in _sql(pg_env, "SELECT run_id, status FROM runs")}
    assert all(stored_runs[r] == "SUCCESS" for r in run_ids)
    partitions = {
        r[0]
        for r in _sql(
            pg_env, "SELECT partition FROM dynamic_partitions WHERE partitions_def_name = 'documents'"
        )
    }
    assert set(ids) <= partitions
    materialized = _sql(
        pg_env,
        "SELECT count(*) FROM event_logs WHERE run_id = ANY(%s) "
        "AND dagster_event_type = 'ASSET_MATERIALIZATION'",
        (run_ids,),
    )[0][0]
    # six stages, the quality gate and the chunks' vectors (kb_vectors) per document
    assert materialized == 8 * len(ids)
    # the instance answers from Postgres too: run tags per document, materialized partitions
    assert {r.run_id for r in instance.get_runs(dg.RunsFilter(tags={"dagster-ocr/doc_id": ids[0]}))} == {
        run_ids[0]
    }
    assert instance.get_materialized_partitions(dg.AssetKey("knowledge_base")) >= set(ids)
    wh = Warehouse(Path(pg_env["DAGSTER_OCR_DATA_DIR"]) / "warehouse.duckdb")
    assert set(wh.query("SELECT doc_id FROM documents").doc_id) == set(ids)


CRASH_SCRIPT = """
import os, signal, sys
import dagster as dg
from dagster_ocr import warehouse_writes

_insert = warehouse_writes._insert

def insert_then_die(con, table, rows):
    _insert(con, table, rows)
    if table == "paragraphs":  # mid-transaction: pages and lines written, nothing committed
        os.kill(os.getpid(), signal.SIGKILL)

warehouse_writes._insert = insert_then_die  # where _insert_rows looks it up
from assets.definitions import definitions_from_env
job = definitions_from_env().resolve_job_def("ingest_document")
job.execute_in_process(partition_key=sys.argv[1], run_id=sys.argv[2], instance=dg.DagsterInstance.get())
"""


def _ingest_job() -> dg.JobDefinition:
    return definitions_from_env().resolve_job_def("ingest_document")


def test_a_killed_run_resumed_from_failure_leaves_exact_row_counts(pg_env, instance, corpus, tmp_path):
    rel = "tables/icdar2013/us-020/us-020.pdf"
    doc_id = _register(pg_env, instance, rel, corpus)
    script = tmp_path / "crash_run.py"
    script.write_text(CRASH_SCRIPT)
    run_id = str(uuid.uuid4())
    proc = subprocess.run(
        [sys.executable, str(script), doc_id, run_id],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == -9, proc.stderr[-2000:]
    run = instance.get_run_by_id(run_id)
    assert run is not None and run.status == dg.DagsterRunStatus.STARTED  # a dead worker's run
    warehouse = Path(pg_env["DAGSTER_OCR_DATA_DIR"]) / "warehouse.duckdb"
    # the killed transaction left nothing behind
    assert _counts(warehouse, doc_id) == dict.fromkeys(COUNTED, 0)

    # what run monitoring does when a run's worker is gone: fail the run, free its pool slots (the
    # dead run still holds duckdb_writer's only slot, and the resumed run would wait on it forever)
    instance.report_run_failed(run)
    assert instance.event_log_storage.get_concurrency_info("duckdb_writer").active_run_ids == {run_id}
    instance.event_log_storage.free_concurrency_slots_for_run(run_id)
    resumed = dg.execute_job(
        dg.reconstructable(_ingest_job),
        instance=instance,
        run_config=QUIET,  # the definitions' executor is in-process
        tags=run.tags,  # the partition (dagster/partition) and the document's tags
        reexecution_options=dg.ReexecutionOptions.from_failure(run_id, instance),
    )
    assert resumed.success, [str(e.event_specific_data)[:1500] for e in resumed.all_events if e.is_failure]
    # only the steps that had not finished ran again; OCR output was reused from the artifact store
    rerun_steps = {e.step_key for e in resumed.all_events if e.event_type_value == "STEP_START"}
    assert "document_text" not in rerun_steps and "duckdb_tables" in rerun_steps
    expected = _reference_counts(tmp_path, corpus, rel)
    assert expected["paragraphs"] > 0 and expected["kb_chunks"] > 0
    assert _counts(warehouse, doc_id) == expected

    # re-launching the whole run changes nothing twice
    again = dg.execute_job(
        dg.reconstructable(_ingest_job),
        instance=instance,
        run_config=QUIET,  # the definitions' executor is in-process
        tags=run.tags,
        reexecution_options=dg.ReexecutionOptions(parent_run_id=resumed.run_id),
    )
    assert again.success
    assert _counts(warehouse, doc_id) == expected
