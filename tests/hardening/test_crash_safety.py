"""SIGKILL a process while it writes documents into DuckDB, again and again; nothing is ever half.

After every kill the warehouse is opened (DuckDB replays or discards its write-ahead log) and
each document must be wholly present (every table at its expected row count, knowledge-base
chunks all or none) or wholly absent, with no row duplicated. A final run writes everything once
and must succeed on top of whatever the kills left.
"""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import crash_writer
import duckdb
import pytest

from dagster_ocr.warehouse import Warehouse

N_DOCS = 12
KILLS = 8
WRITER = Path(crash_writer.__file__)


def check_whole(path: Path) -> dict[str, int]:
    """Assert every document is wholly present or absent; returns {"present": n, "absent": n}."""
    con = duckdb.connect(str(path), read_only=True)
    try:
        counts = {}
        for table in ("documents", "pages", "lines", "paragraphs", "kb_chunks"):
            rows = con.execute(f"SELECT doc_id, count(*) FROM {table} GROUP BY doc_id").fetchall()
            counts[table] = dict(rows)
        dupes = con.execute(
            "SELECT count(*) FROM (SELECT doc_id, page_index, line_index FROM lines "
            "GROUP BY ALL HAVING count(*) > 1)"
        ).fetchone()[0]
    finally:
        con.close()
    assert dupes == 0
    present = absent = 0
    for k in range(N_DOCS):
        want = crash_writer.expected(k)
        doc = crash_writer.doc_id(k)
        if counts["documents"].get(doc, 0) == 0:
            absent += 1
            for table in ("pages", "lines", "paragraphs", "kb_chunks"):
                assert counts[table].get(doc, 0) == 0, f"document {k} absent but has {table} rows"
            continue
        present += 1
        for table in ("documents", "pages", "lines", "paragraphs"):
            assert counts[table].get(doc, 0) == want[table], f"document {k}: {table} half-written"
        assert counts["kb_chunks"].get(doc, 0) in (0, want["kb_chunks"]), f"document {k}: kb half-loaded"
    return {"present": present, "absent": absent}


def kill_loop(path: Path, kills: int, seed: int) -> dict[str, int]:
    """Start the writer, SIGKILL it at a random moment ``kills`` times; check after each kill."""
    rng = random.Random(seed)
    stats = {"kills": 0, "writes_before_kill": 0, "checks": 0}
    for i in range(kills):
        proc = subprocess.Popen(
            [sys.executable, str(WRITER), str(path), str(N_DOCS), str(seed + i)],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        # wait for the first write so the kill lands mid-stream, not during interpreter start-up
        first = proc.stdout.readline()
        assert first, "the writer died before writing"
        time.sleep(rng.uniform(0.0, 1.2))
        proc.send_signal(signal.SIGKILL)
        out, _ = proc.communicate()
        assert proc.returncode == -signal.SIGKILL
        stats["kills"] += 1
        stats["writes_before_kill"] += 1 + out.count("\n")
        check_whole(path)
        stats["checks"] += 1
    return stats


@pytest.mark.slow
def test_sigkill_mid_write_leaves_documents_whole(tmp_path: Path) -> None:
    path = tmp_path / "warehouse.duckdb"
    stats = kill_loop(path, KILLS, seed=11)
    assert stats["kills"] == KILLS and stats["writes_before_kill"] > KILLS
    # re-run: every document written once more, on top of whatever the kills left
    subprocess.run([sys.executable, str(WRITER), str(path), str(N_DOCS), "0", "once"], check=True, timeout=60)
    assert check_whole(path) == {"present": N_DOCS, "absent": 0}
    kb = Warehouse(path).query("SELECT count(*) AS n FROM kb_chunks").n[0]
    assert kb == sum(crash_writer.expected(k)["kb_chunks"] for k in range(N_DOCS))
