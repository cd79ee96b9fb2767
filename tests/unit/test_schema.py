"""Schema versions: forward migrations apply in order, once, and refuse a newer file."""

from __future__ import annotations

import duckdb
import pytest

from dagster_ocr.schema import (
    LATEST_VERSION,
    MIGRATIONS,
    SchemaVersionError,
    baseline_sql,
    current_version,
    migrate,
    pending,
)
from dagster_ocr.warehouse import Warehouse


def test_versions_are_ordered_and_contiguous():
    assert [m.version for m in MIGRATIONS] == list(range(1, LATEST_VERSION + 1))


def test_migrate_an_existing_unversioned_warehouse_keeps_its_rows(tmp_path):
    wh = Warehouse(tmp_path / "w.duckdb")
    con = duckdb.connect(str(wh.path))
    try:
        con.execute(baseline_sql())  # a warehouse made before versioning
        con.execute("INSERT INTO documents (doc_id, file_name, status) VALUES ('d1', 'a.pdf', 'parsed')")
        assert current_version(con) == 0
        assert migrate(con) == [m.version for m in MIGRATIONS]
        assert current_version(con) == LATEST_VERSION
        assert migrate(con) == []  # idempotent
        cols = {r[0] for r in con.execute("DESCRIBE documents").fetchall()}
        assert {"settings_json", "settings_hash", "processing_seconds", "peak_rss_bytes"} <= cols
        assert con.execute("SELECT file_name FROM documents").fetchall() == [("a.pdf",)]
    finally:
        con.close()


def test_a_crash_mid_migration_leaves_the_previous_version(tmp_path, monkeypatch):
    import dagster_ocr.schema as m

    broken = (
        *MIGRATIONS[:2],
        m.Migration(3, "bad", ("ALTER TABLE documents ADD COLUMN x INT", "SELECT nope")),
    )
    monkeypatch.setattr(m, "MIGRATIONS", broken)
    con = duckdb.connect(str(tmp_path / "w.duckdb"))
    try:
        con.execute(baseline_sql())
        with pytest.raises(duckdb.Error):
            m.migrate(con)
        assert current_version(con) == 2
        assert "x" not in {r[0] for r in con.execute("DESCRIBE documents").fetchall()}
    finally:
        con.close()


def test_a_newer_file_is_refused(tmp_path):
    con = duckdb.connect(str(tmp_path / "w.duckdb"))
    try:
        con.execute(baseline_sql())
        migrate(con)
        con.execute("INSERT INTO schema_version VALUES (?, 'future', now())", [LATEST_VERSION + 1])
        with pytest.raises(SchemaVersionError, match="newer than this code"):
            migrate(con)
    finally:
        con.close()


def test_pending():
    assert pending(None) == list(MIGRATIONS)
    assert pending(LATEST_VERSION) == []


def test_lake_dialect_keeps_everything_but_what_ducklake_refuses() -> None:
    from dagster_ocr.schema import lake_dialect

    sql = "CREATE TABLE t (k VARCHAR PRIMARY KEY, v FLOAT[384] NOT NULL, w DOUBLE)"
    assert lake_dialect(sql) == "CREATE TABLE t (k VARCHAR, v FLOAT[] NOT NULL, w DOUBLE)"
    # every baseline and migration statement survives it (same tables, same columns)
    from dagster_ocr.schema import MIGRATIONS, baseline_sql

    assert lake_dialect(baseline_sql()).count("CREATE TABLE") == baseline_sql().count("CREATE TABLE")
    assert all("PRIMARY KEY" not in lake_dialect(s) for m in MIGRATIONS for s in m.statements)


def test_object_store_lake_data_names_the_missing_extension(monkeypatch) -> None:
    """Where the httpfs wheel is missing, an s3:// lake says which package to install (the wheel
    is in the lock, so its absence is simulated)."""
    import importlib.util

    import duckdb
    import pytest

    from dagster_ocr import duck
    from dagster_ocr.errors import EngineError
    from dagster_ocr.lake import _object_store

    find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        duck.importlib.util,
        "find_spec",
        lambda name, *a: None if name == "duckdb_extension_httpfs" else find_spec(name, *a),
    )
    con = duckdb.connect()
    with pytest.raises(EngineError, match="duckdb-extension-httpfs"):
        _object_store(con)
