"""The warehouse's columns as a person reads them: name, type, nullability and what each one means.

Names, types and nullability come from the DuckDB file itself (``information_schema.columns``),
so what the UI shows is what the file holds, migrations and all. What a column means comes from
where the schema is written: the ``--`` comment after the column in ``sql/schema.sql`` or in a
migration's ``CREATE TABLE`` (dagster_ocr/schema.py), the migration's description for a column a
migration added with ``ALTER TABLE ... ADD COLUMN``, or a DuckDB ``COMMENT ON COLUMN`` where one
was set (it wins). Nothing here is a hand-kept list that could drift from the schema.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

import duckdb

from dagster_ocr.schema import MIGRATIONS, baseline_sql, create_or_upgrade

_CREATE = re.compile(r"CREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?(\w+)\s*\(", re.IGNORECASE)
_ALTER_ADD = re.compile(
    r"ALTER\s+TABLE\s+(\w+)\s+ADD\s+COLUMN\s+(?:IF\s+NOT\s+EXISTS\s+)?(\w+)", re.IGNORECASE
)
#: words that start a table constraint, not a column
_CONSTRAINTS = frozenset({"primary", "unique", "foreign", "check", "constraint"})


@dataclass(frozen=True, slots=True)
class ColumnDoc:
    """One column of a warehouse table or view."""

    table: str
    name: str
    type: str
    nullable: bool
    description: str


def _columns_on(code: str) -> list[str]:
    """The column names defined on one line of a CREATE TABLE body (``x0 DOUBLE, y0 DOUBLE``)."""
    names = []
    for part in code.split(","):
        words = part.split()
        if len(words) >= 2 and words[0].lower() not in _CONSTRAINTS and re.fullmatch(r"\w+", words[0]):
            names.append(words[0])
    return names


def comments_in(sql: str) -> tuple[dict[tuple[str, str], str], dict[str, str]]:
    """(column comments by (table, column), table comments by table) in ``CREATE TABLE`` statements.

    A column's comment is the ``--`` text after it on its line (said of every column the line
    defines); a table's is the block of ``--`` lines right above its ``CREATE TABLE``.
    """
    columns: dict[tuple[str, str], str] = {}
    tables: dict[str, str] = {}
    table: str | None = None
    depth = 0  # parentheses open in the table's body: it ends where they close
    above: list[str] = []
    for raw in sql.splitlines():
        line = raw.strip()
        if table is None:
            match = _CREATE.search(line)
            if not match:
                above = [*above, line[2:].strip()] if line.startswith("--") else []
                continue
            table, depth = match.group(1), 1
            if above:
                tables[table] = " ".join(above)
            above = []
            line = line[match.end() :]
        code, _, comment = line.partition("--")
        body = []
        for ch in code:
            depth += (ch == "(") - (ch == ")")
            if depth == 0:
                break
            body.append(ch)
        if comment.strip():  # on a line of several columns (x0, y0, x1, y1) it is said of each
            for name in _columns_on("".join(body)):
                columns[(table, name)] = comment.strip()
        if depth == 0:
            table = None
    return columns, tables


@functools.cache
def documented() -> tuple[dict[tuple[str, str], str], dict[str, str]]:
    """Every column and table description the schema's sources carry (schema.sql, then migrations)."""
    columns, tables = comments_in(baseline_sql())
    for step in MIGRATIONS:
        for statement in step.statements:
            if _CREATE.search(statement):
                cols, tabs = comments_in(statement)
                columns.update(cols)
                name = _CREATE.search(statement).group(1)  # type: ignore[union-attr]
                tables.setdefault(name, tabs.get(name) or step.description)
            for table, column in _ALTER_ADD.findall(statement):
                # added for the reason the migration gives (schema version ``step.version``)
                columns.setdefault((table, column), step.description)
    return columns, tables


def table_description(table: str) -> str:
    """What ``table`` holds, from the comment above its ``CREATE TABLE`` ("" where there is none)."""
    return documented()[1].get(table, "")


def warehouse_columns(con: duckdb.DuckDBPyConnection, tables: Sequence[str]) -> list[ColumnDoc]:
    """The columns of ``tables`` (tables or views) as the file on ``con`` has them, in ``tables``'
    order and then column order, each with its description."""
    if not tables:
        return []
    rows = con.execute(
        "SELECT table_name, column_name, data_type, is_nullable, column_comment "
        "FROM information_schema.columns WHERE table_schema = 'main' "
        "AND table_name IN (SELECT unnest(?::VARCHAR[])) ORDER BY table_name, ordinal_position",
        [list(tables)],
    ).fetchall()
    described = documented()[0]
    by_table: dict[str, list[ColumnDoc]] = {t: [] for t in tables}
    for table, name, dtype, nullable, comment in rows:
        by_table[table].append(
            ColumnDoc(
                table=table,
                name=name,
                type=str(dtype),
                nullable=nullable == "YES",
                description=(comment or described.get((table, name), "")).strip(),
            )
        )
    return [c for t in tables for c in by_table[t]]


@functools.cache
def _code_schema() -> duckdb.DuckDBPyConnection:
    # the schema this code creates, in memory: never the warehouse file, which another process may
    # hold (a code location loading must not wait on, or lock out, a run writing it); ~0.05 s CPU once
    con = duckdb.connect(":memory:")
    create_or_upgrade(con)
    return con


def schema_columns(tables: Sequence[str]) -> list[ColumnDoc]:
    """``warehouse_columns`` of the schema this code creates (sql/ and the migrations), for
    definitions that describe a warehouse without opening it."""
    return warehouse_columns(_code_schema().cursor(), tables)
