"""``gate.load_and_judge``: a document's rows, its partition key and its verdict in one commit.

The same rows and verdict as the three separate writes it replaces (``write_document``,
``partition_keys.record``, ``judge_document``), in a file and on a lake; on a lake one snapshot,
before which none of it is there and after which all of it is (a reader never sees rows without
their verdict). The lake half runs against the local PostgreSQL (skipped when unreachable).
"""

from __future__ import annotations

import duckdb
from support.lake import scratch_lake, table_digests

from dagster_ocr import partition_keys
from dagster_ocr.gate import judge_document, load_and_judge
from dagster_ocr.lake import RETRY_WAIT_MS, WRITE_THREADS, LakeWarehouse
from dagster_ocr.pipeline import parse
from dagster_ocr.quality import QualitySettings
from dagster_ocr.settings import Settings
from dagster_ocr.warehouse import CONTENT_TABLES, Warehouse

TABLES = ("documents", *CONTENT_TABLES, "quality_results", "document_partitions")
KEY = "report-1a2b3c4d"


def _parsed(corpus, tmp_path):
    from dagster_ocr.ingest import DocumentStore

    src = DocumentStore(tmp_path / "store").register(corpus / "tables/icdar2013/eu-022/eu-022.pdf")[0]
    return parse(src, Settings.load(overrides={"text": {"ocr_mode": "never"}}))


def _separately(wh, r) -> str:
    wh.write_document(r.document, r.labels, r.tables, r.paragraphs)
    partition_keys.record(wh, KEY, r.document.source.doc_id, r.document.source.file_name)
    doc = r.document
    return str(judge_document(wh, doc.source.doc_id, doc.status, doc.error, QualitySettings()).status)


def _at_once(wh, r) -> str:
    counts, decision = load_and_judge(
        wh,
        r.document,
        r.labels,
        r.tables,
        r.paragraphs,
        partition_key=KEY,
        quality_settings=QualitySettings(),
    )
    assert counts["tables"] == len(r.tables) and counts["documents"] == 1
    return str(decision.status)


def test_one_commit_writes_what_three_did_in_a_file(corpus, tmp_path):
    r = _parsed(corpus, tmp_path)
    apart, together = Warehouse(tmp_path / "apart.duckdb"), Warehouse(tmp_path / "together.duckdb")
    assert _separately(apart, r) == _at_once(together, r) == "parsed"
    assert table_digests(together, TABLES) == table_digests(apart, TABLES)
    assert together.query("SELECT count(*) AS n FROM quality_results").n.iat[0] > 0
    # a re-run replaces, never doubles
    _at_once(together, r)
    assert table_digests(together, TABLES) == table_digests(apart, TABLES)


def test_on_a_lake_the_load_and_its_verdict_are_one_snapshot(corpus, tmp_path):
    r = _parsed(corpus, tmp_path)
    doc_id = r.document.source.doc_id
    apart = Warehouse(tmp_path / "apart.duckdb")
    _separately(apart, r)
    with scratch_lake(tmp_path) as (spec, data):
        lake = LakeWarehouse(spec, data)
        lake.ensure_schema()
        before = lake.snapshot_id()
        assert _at_once(lake, r) == "parsed"
        assert lake.snapshot_id() == before + 1
        assert table_digests(lake, TABLES) == table_digests(apart, TABLES)
        earlier = LakeWarehouse(spec, data, version=before)
        try:
            assert earlier.query("SELECT count(*) AS n FROM documents").n.iat[0] == 0
            assert earlier.query("SELECT count(*) AS n FROM quality_results").n.iat[0] == 0
        finally:
            earlier.close()
        verdict = lake.query("SELECT status FROM documents WHERE doc_id = ?", [doc_id]).status.tolist()
        assert verdict == ["parsed"]
        assert partition_keys.recorded_key(lake, doc_id) == KEY
        # a writer's attachment runs one DuckDB thread (lake.WRITE_THREADS: writers scale by
        # processes); a reader's keeps DuckDB's default of every core
        # and retries a commit that lost the race for the next snapshot id at once (RETRY_WAIT_MS)
        with lake.connect() as con:
            assert con.execute("SELECT current_setting('threads')").fetchone()[0] == WRITE_THREADS
            wait = con.execute("SELECT current_setting('ducklake_retry_wait_ms')").fetchone()[0]
            assert wait == RETRY_WAIT_MS
        reader = LakeWarehouse(spec, read_only=True)
        with reader.connect(read_only=True) as con:
            threads = con.execute("SELECT current_setting('threads')").fetchone()[0]
        assert threads == duckdb.connect().execute("SELECT current_setting('threads')").fetchone()[0]
