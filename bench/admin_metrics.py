"""Cost of one Prometheus scrape (dagster-ocr metrics) on a synthetic warehouse of N documents.

Usage: .venv/bin/python bench/admin_metrics.py [N_DOCUMENTS]   (default 10,000)

Fills the contract tables with N documents of 20 pages, 30 paragraphs and 2 tables each through
DuckDB's generate_series (the pipeline would take hours), then times read_figures + exposition.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import duckdb

from dagster_ocr.admin.metrics import build_registry, exposition, read_figures
from dagster_ocr.schema import migrate
from dagster_ocr.warehouse import Warehouse


def fill(path: Path, n: int) -> None:
    Warehouse(path).ensure_schema()
    con = duckdb.connect(str(path))
    try:
        migrate(con)
        con.execute(
            "INSERT INTO documents (doc_id, file_name, status, n_pages, parsed_at) "
            "SELECT 'd' || i, 'f' || i || '.pdf', CASE WHEN i % 50 = 0 THEN 'failed' WHEN i % 10 = 0 "
            "THEN 'quarantined' ELSE 'parsed' END, 20, now() FROM range(?) t(i)",
            [n],
        )
        con.execute(
            "INSERT INTO pages (doc_id, page_index, text_source, ocr_confidence) "
            "SELECT 'd' || i, p, CASE WHEN p % 4 = 0 THEN 'ocr' ELSE 'text_layer' END, 0.9 "
            "FROM range(?) t(i), range(20) q(p)",
            [n],
        )
        con.execute(
            "INSERT INTO paragraphs (doc_id, paragraph_id, reading_order, page_index, flags) "
            "SELECT 'd' || i, 'p' || k, k, k % 20, CASE WHEN k % 17 = 0 THEN ['mojibake'] ELSE [] END "
            "FROM range(?) t(i), range(30) q(k)",
            [n],
        )
        con.execute(
            "INSERT INTO tables (doc_id, table_id, first_page_index, last_page_index, pages) "
            "SELECT 'd' || i, 't' || k, k, k + 1, CASE WHEN k = 0 THEN [0, 1] ELSE [k] END "
            "FROM range(?) t(i), range(2) q(k)",
            [n],
        )
    finally:
        con.close()


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "w.duckdb"
        t = time.perf_counter()
        fill(path, n)
        print(
            f"filled {n} documents in {time.perf_counter() - t:.1f}s ({path.stat().st_size / 2**20:.0f} MiB)"
        )
        times = []
        for _ in range(5):
            t = time.perf_counter()
            text = exposition(build_registry(read_figures(path)))
            times.append(time.perf_counter() - t)
        print(
            f"scrape: median {sorted(times)[2] * 1000:.0f} ms, min {min(times) * 1000:.0f} ms; "
            f"{len(text)} bytes"
        )


if __name__ == "__main__":
    main()
