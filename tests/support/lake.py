"""A scratch DuckLake for tests: its own uniquely named PostgreSQL database, dropped afterwards.

The local PostgreSQL (127.0.0.1:5432, trust auth, user postgres) holds the catalog; the Parquet
data goes to the test's tmp_path. Tests skip, saying why, when PostgreSQL cannot be reached.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

SERVER_DSN = "dbname=postgres host=127.0.0.1 port=5432 user=postgres connect_timeout=5"

#: columns that differ between two runs of the same writes (when, not what)
TIME_COLUMNS = frozenset({"parsed_at", "loaded_at", "evaluated_at", "embedded_at", "first_seen"})


def _server():
    psycopg2 = pytest.importorskip("psycopg2")
    try:
        con = psycopg2.connect(SERVER_DSN)
    except psycopg2.Error as exc:
        pytest.skip(f"no local PostgreSQL on 127.0.0.1:5432 for the lake's catalog: {exc}".strip())
    con.autocommit = True
    return con


@contextmanager
def scratch_lake(tmp_path: Path) -> Iterator[tuple[str, str]]:
    """(warehouse spec, data path) of a new empty lake; its database is dropped on exit."""
    name = f"dagster_ocr_test_{os.getpid()}_{uuid.uuid4().hex[:10]}"
    con = _server()
    try:
        with con.cursor() as cur:
            cur.execute(f'CREATE DATABASE "{name}"')
        data = tmp_path / "lake_data"
        data.mkdir(parents=True, exist_ok=True)
        yield f"ducklake:postgres:dbname={name} host=127.0.0.1 port=5432 user=postgres", f"{data}/"
    finally:
        with con.cursor() as cur:
            cur.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        con.close()


def table_digests(wh, tables) -> dict[str, tuple[int, str]]:
    """Per table: (rows, sha256 of its rows sorted, time columns left out), comparable across modes."""
    import hashlib

    out: dict[str, tuple[int, str]] = {}
    with wh.connect(read_only=True) as con:
        for table in tables:
            cols = [
                r[0]
                for r in con.execute(
                    "SELECT column_name FROM information_schema.columns WHERE table_name = ? "
                    "AND table_catalog = current_database() ORDER BY ordinal_position",
                    [table],
                ).fetchall()
                if r[0] not in TIME_COLUMNS
            ]
            rows = con.execute(f"SELECT {', '.join(cols)} FROM {table}").fetchall()
            text = sorted(repr(tuple(v for v in row)) for row in rows)
            out[table] = (len(rows), hashlib.sha256("\n".join(text).encode()).hexdigest()[:16])
    return out
