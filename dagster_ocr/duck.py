"""DuckDB extensions loaded from their PyPI wheels: fts (BM25) and vss (HNSW), offline.

``INSTALL fts`` downloads from extensions.duckdb.org; the packages ``duckdb-extension-fts`` and
``duckdb-extension-vss`` (pinned to the same release as duckdb) carry the signed binaries instead,
under ``<site-packages>/duckdb_extension_<name>/extensions/v<duckdb version>/``. Signed, so no
``allow_unsigned_extensions`` is needed. A signed load checks the signature each time (0.15-0.5 s
per extension here), so callers load only what a connection uses, once per connection.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import duckdb

from dagster_ocr.errors import EngineError

#: extension name -> its PyPI package
PACKAGES = {
    "fts": "duckdb-extension-fts",
    "vss": "duckdb-extension-vss",
    "ducklake": "duckdb-extension-ducklake",
    "postgres_scanner": "duckdb-extension-postgres-scanner",
    # only for a lake whose data is on an object store (s3://...): in the lock and the lake-s3 extra
    "httpfs": "duckdb-extension-httpfs",
}


def extension_path(name: str) -> Path:
    """The extension binary for the installed duckdb, from its wheel; EngineError if missing."""
    package = PACKAGES[name]
    spec = importlib.util.find_spec(package.replace("-", "_"))
    path = (
        Path(spec.origin).parent / "extensions" / f"v{duckdb.__version__}" / f"{name}.duckdb_extension"
        if spec and spec.origin
        else None
    )
    if path is None or not path.is_file():
        raise EngineError(
            f"DuckDB extension {name!r} for duckdb {duckdb.__version__} is not installed: "
            f"pip install {package}=={duckdb.__version__} (or `make`, which installs requirements.lock)"
        )
    return path


def load(con: duckdb.DuckDBPyConnection, *names: str) -> None:
    """Load the extensions into ``con``'s database (idempotent: a loaded one is skipped)."""
    loaded = {
        r[0] for r in con.execute("SELECT extension_name FROM duckdb_extensions() WHERE loaded").fetchall()
    }
    for name in names:
        if name not in loaded:
            con.load_extension(str(extension_path(name)))


def sql_str(value: str | Path) -> str:
    """``value`` for inside a single-quoted SQL literal (quotes doubled): for the statements that
    take no parameters (ATTACH, CREATE SECRET, a DuckLake function's table name)."""
    return str(value).replace("'", "''")
