"""Column descriptions come from where the schema is written (sql/, the migrations), not a copied list."""

from __future__ import annotations

import duckdb

from dagster_ocr import schema_docs
from dagster_ocr.schema import create_or_upgrade


def test_comments_are_read_from_create_table_statements() -> None:
    sql = """
-- what a holds
CREATE TABLE a (x INTEGER);

-- what t holds
-- on two lines
CREATE TABLE IF NOT EXISTS t (
    id    VARCHAR NOT NULL,   -- the key
    plain INTEGER,
    x0 DOUBLE, y0 DOUBLE,     -- a corner
    amount DECIMAL(10, 2),    -- money
    PRIMARY KEY (id)          -- not a column
);
"""
    columns, tables = schema_docs.comments_in(sql)
    assert columns == {
        ("t", "id"): "the key",
        ("t", "x0"): "a corner",
        ("t", "y0"): "a corner",
        ("t", "amount"): "money",
    }
    assert tables == {"a": "what a holds", "t": "what t holds on two lines"}


def test_every_description_names_a_real_column_and_the_contract_is_described() -> None:
    con = duckdb.connect(":memory:")
    create_or_upgrade(con)
    real = set(
        con.execute(
            "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'main'"
        ).fetchall()
    )
    columns, tables = schema_docs.documented()
    assert set(columns) <= real, set(columns) - real  # no comment outlives its column
    # a column a migration added is described by that migration
    assert "settings" in columns[("documents", "settings_json")]
    assert columns[("documents", "doc_id")] == "sha256 of the file's bytes"
    docs = {(c.table, c.name): c for c in schema_docs.warehouse_columns(con, ["documents", "quarantine"])}
    assert docs[("documents", "status")].description == "parsed | quarantined | failed"
    assert (
        docs[("documents", "status")].nullable is False and docs[("documents", "size_bytes")].type == "BIGINT"
    )
    assert ("quarantine", "file_name") in docs  # views too
    # a DuckDB comment set on the file wins over the SQL comment
    con.execute("COMMENT ON COLUMN documents.status IS 'set in the file'")
    (status,) = [c for c in schema_docs.warehouse_columns(con, ["documents"]) if c.name == "status"]
    assert status.description == "set in the file"
    assert tables["files"].startswith("files: every inbox file")
    assert schema_docs.table_description("paragraphs")
