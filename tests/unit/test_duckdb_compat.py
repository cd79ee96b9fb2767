"""The warehouse file opens in DuckDB 1.x tools: the analysts' CLI, DBeaver (JDBC), R, older Python.

DuckDB 2.0 writes storage version 999, which every 1.x release refuses ("Trying to read a database
file with version number 999"); 1.x files carry version 64, which 1.0 onwards reads. The pin is
duckdb 1.5.5 (docs/analysts.md, "Why DuckDB 1.5.5"); bench/duckdb_compat.py opens the same file with older
releases installed in scratch environments (BENCHMARKS.md).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import duckdb
from test_warehouse import _doc  # tests/unit is on sys.path (pytest rootdir import)

from dagster_ocr.warehouse import Warehouse

#: storage version of a DuckDB 1.x file (1.0 reads 64; 1.5 reads 64-68; 2.0 writes 999)
STORAGE_VERSION_1X = 64

# a reader with nothing but duckdb: no project code, no extensions loaded (as an analyst's tool)
_READER = textwrap.dedent(
    """
    import json, sys, duckdb
    con = duckdb.connect(sys.argv[1], read_only=True)
    names = [r[0] for r in con.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main' ORDER BY 1").fetchall()]
    counts = {n: con.execute(f'SELECT count(*) FROM "{n}"').fetchone()[0] for n in names}
    print(json.dumps({"version": duckdb.__version__, "counts": counts}))
    """
)


def storage_version(path) -> int:
    """The storage version number in a DuckDB file's main header (bytes 12-20 after the magic)."""
    with open(path, "rb") as f:
        head = f.read(20)
    assert head[8:12] == b"DUCK", "not a DuckDB file"
    return int.from_bytes(head[12:20], "little")


def write_sample_warehouse(path) -> Warehouse:
    """A warehouse written by the product's own write paths: a document, its gate, chunks."""
    wh = Warehouse(path)
    wh.write_document(*_doc("a" * 64))
    wh.write_kb(
        "a" * 64,
        [
            {"chunk_id": "c0", "source_kind": "paragraph", "source_id": "p_iv_0_0", "page_index": 0}
            | {"page_label": "iv", "last_page_label": "iv", "text": "§ 1 text", "citation": "aaaa.pdf, p. iv"}
        ],
    )
    return wh


def test_the_pinned_duckdb_is_a_1x_release():
    # a 2.x pin would write files no 1.x tool opens; moving it is a decision for docs/analysts.md
    # ("Why DuckDB 1.5.5") first
    assert duckdb.__version__.split(".")[0] == "1"


def test_the_warehouse_file_opens_in_a_plain_duckdb_1x(tmp_path):
    wh = write_sample_warehouse(tmp_path / "w.duckdb")
    assert storage_version(wh.path) == STORAGE_VERSION_1X
    out = subprocess.run(
        [sys.executable, "-c", _READER, str(wh.path)], capture_output=True, text=True, timeout=120, check=True
    )
    seen = json.loads(out.stdout)
    assert seen["version"].startswith("1.")
    assert seen["counts"]["documents"] == 1 and seen["counts"]["kb_chunks"] == 1
    assert seen["counts"]["table_cells"] == 2


def test_fts_and_vss_load_offline_from_their_wheels():
    from dagster_ocr import duck

    con = duckdb.connect()
    duck.load(con, "fts", "vss")
    duck.load(con, "fts")  # idempotent
    sql = "SELECT extension_name FROM duckdb_extensions() WHERE loaded"
    loaded = {r[0] for r in con.execute(sql).fetchall()}
    assert {"fts", "vss"} <= loaded
    assert con.execute("SELECT stem('payments', 'porter')").fetchone()[0] == "payment"
