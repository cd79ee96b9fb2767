"""The warehouse's column schemas as Dagster metadata (``dagster/column_schema``), for the asset
catalog's Columns section: names, types and nullability from DuckDB, descriptions from sql/
(dagster_ocr.schema_docs), so the UI never shows a hand-kept list that drifts from the tables."""

from __future__ import annotations

from collections.abc import Sequence

import dagster as dg

from dagster_ocr.schema_docs import ColumnDoc, schema_columns, table_description


def table_schema(columns: Sequence[ColumnDoc]) -> dg.TableSchema:
    """One TableSchema; columns of several tables are named ``table.column``."""
    several = len({c.table for c in columns}) > 1
    return dg.TableSchema(
        columns=[
            dg.TableColumn(
                name=f"{c.table}.{c.name}" if several else c.name,
                type=c.type,
                description=c.description or None,
                constraints=dg.TableColumnConstraints(nullable=c.nullable),
            )
            for c in columns
        ]
    )


def schema_metadata(tables: Sequence[str]) -> dict[str, object]:
    """Definition metadata for an asset stored in ``tables``: the column schema and what each
    table holds."""
    listed = [f"- `{t}`" + (f": {table_description(t)}" if table_description(t) else "") for t in tables]
    return {
        "dagster/column_schema": table_schema(schema_columns(tables)),
        "warehouse_tables": dg.MetadataValue.md("\n".join(listed)),
    }
