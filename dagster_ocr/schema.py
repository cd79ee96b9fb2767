"""The warehouse's schema: the baseline in ``sql/``, its version, and its forward migrations.

``sql/schema.sql`` is the baseline (version 1, every ``CREATE TABLE IF NOT EXISTS``). Every later
change is one ``Migration``: an ordered list of SQL statements, each safe to run twice (``ADD
COLUMN IF NOT EXISTS``, ``CREATE ... IF NOT EXISTS``), applied in its own transaction together
with its row in ``schema_version``. A crash mid-migration therefore leaves the file at the previous
version, and re-running ``migrate`` finishes the job. There are no down migrations: the way back
to an earlier version is the backup taken before ``dagster-ocr migrate`` (see docs/operations.md,
"Upgrades and rollback").
``sql/views.sql`` comes last, as views may read columns a migration added.

The same module creates and migrates a DuckLake warehouse (``lake=True``): the same statements,
through ``lake_dialect``, which rewrites the two things DuckLake refuses (a fixed-size array
``FLOAT[384]`` becomes ``FLOAT[]``; ``PRIMARY KEY`` goes, DuckLake has no constraints but NOT NULL).
A version bump therefore reaches both modes from one ``Migration``: ``LakeWarehouse.ensure_schema``
runs the pending steps under a PostgreSQL advisory lock, so of many writers starting at once one
migrates and the others wait, then find the lake current.

Its own module, below both the warehouse (``Warehouse.ensure_schema`` runs ``create_or_upgrade``)
and the administration tools (``doctor`` and ``metrics`` read the version without a Warehouse),
so neither imports the other for it.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from pathlib import Path

import duckdb

#: schema.sql and views.sql: the project's top-level sql/ folder (installed editable)
SQL_DIR = Path(__file__).resolve().parents[1] / "sql"

SCHEMA_VERSION_TABLE = "schema_version"

_CREATE_VERSION_TABLE = f"""
CREATE TABLE IF NOT EXISTS {SCHEMA_VERSION_TABLE} (
    version     INTEGER NOT NULL,       -- one row per applied migration; the maximum is the version
    description VARCHAR NOT NULL,
    applied_at  TIMESTAMP NOT NULL
)
"""


class SchemaVersionError(RuntimeError):
    """The warehouse's schema version cannot be used by this code (newer, or not a warehouse)."""


@dataclass(frozen=True, slots=True)
class Migration:
    """One forward step: ``statements`` run in order inside one transaction."""

    version: int
    description: str
    statements: tuple[str, ...] = ()


#: every schema change, oldest first; append only, never edit a released step
MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "baseline: sql/schema.sql"),
    Migration(
        2,
        "documents.settings_json/settings_hash: the settings each document was parsed with, so a "
        "document can be re-materialized with an earlier configuration",
        (
            "ALTER TABLE documents ADD COLUMN IF NOT EXISTS settings_json VARCHAR",
            "ALTER TABLE documents ADD COLUMN IF NOT EXISTS settings_hash VARCHAR",
        ),
    ),
    Migration(
        3,
        "documents.processing_seconds/peak_rss_bytes/peak_gpu_bytes: per-document run figures",
        (
            "ALTER TABLE documents ADD COLUMN IF NOT EXISTS processing_seconds DOUBLE",
            "ALTER TABLE documents ADD COLUMN IF NOT EXISTS peak_rss_bytes BIGINT",
            "ALTER TABLE documents ADD COLUMN IF NOT EXISTS peak_gpu_bytes BIGINT",
        ),
    ),
    Migration(
        4,
        "tables.markdown/read_as_text/section_id/precedes_reading_order: each table's Markdown and its "
        "place among the paragraphs, for the document_blocks view (one reading-order sequence)",
        (
            "ALTER TABLE tables ADD COLUMN IF NOT EXISTS markdown VARCHAR",
            "ALTER TABLE tables ADD COLUMN IF NOT EXISTS read_as_text BOOLEAN",
            "ALTER TABLE tables ADD COLUMN IF NOT EXISTS section_id VARCHAR",
            "ALTER TABLE tables ADD COLUMN IF NOT EXISTS precedes_reading_order INTEGER",
        ),
    ),
    Migration(
        5,
        "files: every inbox file ever seen, duplicates included (lineage: what happened to file X)",
        (
            """CREATE TABLE IF NOT EXISTS files (
                path         VARCHAR NOT NULL,    -- absolute path in the inbox
                file_name    VARCHAR NOT NULL,
                size         BIGINT,
                mtime        TIMESTAMP,           -- the file's modification time (UTC) when last seen
                doc_id       VARCHAR NOT NULL,    -- sha256 of its bytes: the document it is
                first_seen   TIMESTAMP NOT NULL,  -- UTC
                last_seen    TIMESTAMP NOT NULL,  -- UTC: the latest scan that saw it there
                duplicate_of VARCHAR,             -- path of the first file seen with the same bytes
                last_seen_by VARCHAR              -- sensor | schedule | cli
            )""",
        ),
    ),
    Migration(
        6,
        "documents.repaired, pages.content/content_damage (why its content stream is broken): damaged "
        "input (a file MuPDF repaired, pages left without text or image) for the pages_complete check",
        (
            "ALTER TABLE documents ADD COLUMN IF NOT EXISTS repaired BOOLEAN",
            "ALTER TABLE pages ADD COLUMN IF NOT EXISTS content VARCHAR",
            "ALTER TABLE pages ADD COLUMN IF NOT EXISTS content_damage VARCHAR",
        ),
    ),
    Migration(
        7,
        "text_conservation: where every character of each page's text layer or OCR output went "
        "(paragraph, heading, table cell, furniture by kind, or lost)",
        (
            """CREATE TABLE IF NOT EXISTS text_conservation (
                doc_id            VARCHAR NOT NULL,
                page_index        INTEGER NOT NULL,
                page_label        VARCHAR,
                text_source       VARCHAR,
                chars             INTEGER,  -- non-whitespace characters of the page's lines
                paragraph_chars   INTEGER,
                heading_chars     INTEGER,
                table_chars       INTEGER,
                page_number_chars INTEGER,  -- furniture, by kind
                header_chars      INTEGER,
                footer_chars      INTEGER,
                lost_chars        INTEGER,  -- in no paragraph, heading, cell or furniture line
                unsourced_chars   INTEGER,  -- in this page's paragraphs/cells but from no line (twice?)
                lost_text         VARCHAR   -- the lost words, for a person to look at
            )""",
        ),
    ),
    Migration(
        8,
        "document_partitions: each document's partition key in Dagster (<file stem>-<12 hex digits>) "
        "and its doc_id; quality_results.observed_number/threshold_number: the gate's figures as "
        "numbers (plots in the UI, trends in SQL)",
        (
            """CREATE TABLE IF NOT EXISTS document_partitions (
                partition_key VARCHAR PRIMARY KEY,  -- the name the Dagster UI shows
                doc_id        VARCHAR NOT NULL,     -- sha256 of the bytes: the document
                file_name     VARCHAR,              -- the file name the key was made from
                first_seen    TIMESTAMP NOT NULL    -- UTC: when the warehouse first saw the key
            )""",
            "ALTER TABLE quality_results ADD COLUMN IF NOT EXISTS observed_number DOUBLE",
            "ALTER TABLE quality_results ADD COLUMN IF NOT EXISTS threshold_number DOUBLE",
        ),
    ),
    Migration(
        9,
        "tables.title/units/column_headers/row_group: what the page prints around a table for a reader "
        "(statement title, units, the periods over each column); documents.issuer/doc_type/period_end/"
        "fiscal_year/language: what the document is, read from its first pages (dagster_ocr.docinfo; "
        "documents.title now comes from there too: the metadata title where it is words, else the cover); "
        "kb_chunks.context: what a chunk is indexed with besides its text (issuer, type, year, section)",
        (
            "ALTER TABLE tables ADD COLUMN IF NOT EXISTS title VARCHAR",
            "ALTER TABLE tables ADD COLUMN IF NOT EXISTS units VARCHAR",
            "ALTER TABLE tables ADD COLUMN IF NOT EXISTS column_headers VARCHAR[]",
            "ALTER TABLE tables ADD COLUMN IF NOT EXISTS row_group VARCHAR",
            "ALTER TABLE documents ADD COLUMN IF NOT EXISTS issuer VARCHAR",
            "ALTER TABLE documents ADD COLUMN IF NOT EXISTS doc_type VARCHAR",
            "ALTER TABLE documents ADD COLUMN IF NOT EXISTS period_end VARCHAR",
            "ALTER TABLE documents ADD COLUMN IF NOT EXISTS fiscal_year INTEGER",
            "ALTER TABLE documents ADD COLUMN IF NOT EXISTS language VARCHAR",
            "ALTER TABLE kb_chunks ADD COLUMN IF NOT EXISTS context VARCHAR",
        ),
    ),
    Migration(
        10,
        "pages.blank_reason: why an empty page is empty (damaged: its objects were lost; no ink; left "
        "blank notice), NULL on a page with content: a scan's blank backs are not damage (issue 40)",
        ("ALTER TABLE pages ADD COLUMN IF NOT EXISTS blank_reason VARCHAR",),
    ),
    Migration(
        11,
        "kb_embeddings.input_md5: md5 of what the model read for the chunk (its context line, then its "
        "text; a table's without its figures), NULL on a vector stored before: a vector is reused on "
        "re-load only while that input is unchanged, so a changed context re-embeds an unchanged text",
        ("ALTER TABLE kb_embeddings ADD COLUMN IF NOT EXISTS input_md5 VARCHAR",),
    ),
)

#: the version this code writes and expects
LATEST_VERSION: int = MIGRATIONS[-1].version


def lake_dialect(sql: str) -> str:
    """``sql`` as DuckLake takes it: variable-length float arrays, no PRIMARY KEY constraints.

    Nothing else differs: the vectors are still 384 floats (the search file casts them to
    ``FLOAT[384]`` for its HNSW index), and the key the constraint stood for is kept by the writer
    (``partition_keys.record`` deletes, then inserts, under the lake's per-key lock).
    """
    return re.sub(r"\s+PRIMARY KEY", "", re.sub(r"FLOAT\[\d+\]", "FLOAT[]", sql))


def _has_table(con: duckdb.DuckDBPyConnection, name: str) -> bool:
    # current_database(): a lake connection also holds the empty in-memory catalog it attached from
    row = con.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_name = ? AND table_schema = 'main' "
        "AND table_catalog = current_database()",
        [name],
    ).fetchone()
    return bool(row and row[0])


def current_version(con: duckdb.DuckDBPyConnection) -> int | None:
    """The file's schema version: None for an empty file, 0 for a warehouse made before versioning."""
    if _has_table(con, SCHEMA_VERSION_TABLE):
        row = con.execute(f"SELECT max(version) FROM {SCHEMA_VERSION_TABLE}").fetchone()
        return int(row[0]) if row and row[0] is not None else 0
    return 0 if _has_table(con, "documents") else None


def pending(version: int | None) -> list[Migration]:
    """The migrations a file at ``version`` still needs, in order."""
    start = version or 0
    return [m for m in MIGRATIONS if m.version > start]


def migrate(con: duckdb.DuckDBPyConnection, lake: bool = False) -> list[int]:
    """Apply every pending migration, one transaction each; returns the versions applied.

    Expects the baseline tables to exist (run schema.sql first). Idempotent: a second call applies
    nothing. Raises ``SchemaVersionError`` when the file is newer than this code, because writing
    to it with an older pipeline could drop what the newer one relies on.
    """
    con.execute(_CREATE_VERSION_TABLE)
    version = current_version(con) or 0
    if version > LATEST_VERSION:
        raise SchemaVersionError(
            f"warehouse schema version {version} is newer than this code's {LATEST_VERSION}: "
            "upgrade dagster-ocr, or restore the backup taken before the upgrade"
        )
    applied: list[int] = []
    for step in pending(version):
        con.execute("BEGIN TRANSACTION")
        try:
            for statement in step.statements:
                con.execute(lake_dialect(statement) if lake else statement)
            con.execute(
                f"INSERT INTO {SCHEMA_VERSION_TABLE} VALUES (?, ?, ?)",
                [step.version, step.description, dt.datetime.now(dt.UTC).replace(tzinfo=None)],
            )
        except BaseException:
            con.execute("ROLLBACK")
            raise
        con.execute("COMMIT")
        applied.append(step.version)
    return applied


def baseline_sql() -> str:
    """``sql/schema.sql``: every contract table, created where missing (schema version 1)."""
    return (SQL_DIR / "schema.sql").read_text()


def views_sql() -> str:
    """``sql/views.sql``: the analysts' views, replaced on every upgrade."""
    return (SQL_DIR / "views.sql").read_text()


def create_or_upgrade(con: duckdb.DuckDBPyConnection, lake: bool = False) -> list[int]:
    """Bring the file (or with ``lake``, the DuckLake catalog) on ``con`` to this code's schema;
    returns the migration versions applied.

    schema.sql only creates what is missing, so new tables reach old files; new columns on existing
    tables come from the forward migrations, which run before the views that use them.
    """
    con.execute(lake_dialect(baseline_sql()) if lake else baseline_sql())
    applied = migrate(con, lake)
    con.execute(views_sql())
    return applied
