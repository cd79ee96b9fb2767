"""Many writer processes on one DuckLake at once end with exactly the rows of a serial run.

Against the local PostgreSQL (each test its own database, dropped after; skipped when PostgreSQL
is unreachable). Five writer processes start together: three over overlapping ranges of the
documents, one re-running documents the others are writing, and one that stalls inside its first
document's transaction (its rows partly inserted, the document's lock held) and is SIGKILLed there.
Meanwhile a reader in this process queries every document's row counts, each query one snapshot,
and must never see a document half there. At the end each table's rows (times left out) must be
those a serial run wrote into a DuckDB file: nothing lost, nothing doubled; compaction and time
travel keep them so.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import crash_writer
import pytest
from support.lake import scratch_lake, table_digests

from dagster_ocr.lake import LakeWarehouse
from dagster_ocr.warehouse import CONTENT_TABLES, Warehouse

N_DOCS = 12
WRITER = Path(__file__).with_name("lake_writer.py")
TABLES = ("documents", *CONTENT_TABLES, "kb_chunks")
#: one query, so one snapshot: every document's rows in the tables a write replaces together
COUNTS = " UNION ALL ".join(
    f"SELECT '{t}' AS t, doc_id, count(*) AS n FROM {t} GROUP BY doc_id"
    for t in ("documents", "pages", "lines", "paragraphs", "kb_chunks")
)


def serial_digests(tmp_path: Path) -> dict[str, tuple[int, str]]:
    wh = Warehouse(tmp_path / "serial.duckdb")
    for k in range(N_DOCS):
        doc, paras, chunks = crash_writer.document(k)
        wh.write_document(doc, [], [], paras)
        wh.write_kb(doc.source.doc_id, chunks)
    return table_digests(wh, TABLES)


def check_consistent(rows: list[tuple[str, str, int]]) -> int:
    """Assert no document is half there in one snapshot's counts; returns how many are whole."""
    counts: dict[str, dict[str, int]] = {}
    for table, doc, n in rows:
        counts.setdefault(doc, {})[table] = n
    for doc, have in counts.items():
        k = int(doc, 16)
        want = crash_writer.expected(k)
        assert "documents" in have, f"document {k}: rows without its documents row: {have}"
        for table in ("documents", "pages", "lines", "paragraphs"):
            assert have.get(table) == want[table], f"document {k} half there: {have} (want {want})"
        # the chunks are a second transaction (as in the pipeline): all or none
        assert have.get("kb_chunks", 0) in (0, want["kb_chunks"]), f"document {k}: chunks half there"
    return len(counts)


def test_writer_processes_on_a_lake_match_a_serial_run(tmp_path: Path) -> None:
    with scratch_lake(tmp_path) as (spec, data):
        expected = serial_digests(tmp_path)

        plans = {
            "low": list(range(0, 6)),
            "middle": list(range(3, 9)),  # overlaps both neighbours
            "high": list(range(6, 12)),
            "rerun": [5, 8, 0, 11, 3],  # documents the others are writing, again
        }
        procs = {
            name: subprocess.Popen(
                [sys.executable, str(WRITER), spec, data, *map(str, keys)],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for name, keys in plans.items()
        }
        victim = subprocess.Popen(
            [sys.executable, str(WRITER), spec, data, "4", "7"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "DAGSTER_OCR_TEST_STALL": "1"},
        )

        reader = LakeWarehouse(spec, read_only=True)
        seen = {"queries": 0, "max_whole": 0}
        failures: list[BaseException] = []
        stop = threading.Event()

        def read_throughout() -> None:
            while not stop.is_set():
                try:
                    if not reader.exists():
                        time.sleep(0.05)
                        continue
                    with reader.connect(read_only=True) as con:
                        rows = con.execute(COUNTS).fetchall()
                    seen["max_whole"] = max(seen["max_whole"], check_consistent(rows))
                    seen["queries"] += 1
                except AssertionError as exc:
                    failures.append(exc)
                    return
                except Exception as exc:  # noqa: BLE001  # the schema may be mid-creation
                    if "does not exist" not in str(exc):
                        failures.append(exc)
                        return
                time.sleep(0.02)

        thread = threading.Thread(target=read_throughout, daemon=True)
        thread.start()
        try:
            # the victim stalls inside its first document's transaction; kill it there
            line = victim.stdout.readline() if victim.stdout else ""
            while line and not line.startswith("mid "):
                line = victim.stdout.readline() if victim.stdout else ""
            if not line.startswith("mid 4"):
                err = victim.stderr.read()[-3000:] if victim.stderr else ""
                raise AssertionError(f"the stalling writer never reached its write: {err}")
            victim.send_signal(signal.SIGKILL)
            victim.wait(30)
            outputs = {name: p.communicate(timeout=120) for name, p in procs.items()}
        finally:
            stop.set()
            thread.join(30)
            for p in (*procs.values(), victim):
                if p.poll() is None:
                    p.kill()
        for name, p in procs.items():
            assert p.returncode == 0, f"writer {name} failed: {outputs[name][1][-2000:]}"
        assert not failures, failures[0]
        retries = sum(int(out.split("retries ")[-1]) for out, _ in outputs.values())
        print(f"reader queries: {seen['queries']}; write conflicts retried: {retries}")
        assert seen["queries"] >= 3, "the reader never got to query while the writers ran"

        lake = LakeWarehouse(spec, data)
        assert table_digests(lake, TABLES) == expected
        with lake.connect(read_only=True) as con:
            assert check_consistent(con.execute(COUNTS).fetchall()) == N_DOCS

        # time travel: a snapshot keeps what it held after a later change
        before = lake.snapshot_id()
        doc0 = crash_writer.doc_id(0)
        lake.delete_kb(doc0)
        then = LakeWarehouse(spec, version=before)
        try:
            n_then = then.query("SELECT count(*) AS n FROM kb_chunks WHERE doc_id = ?", [doc0]).n.iat[0]
        finally:
            then.close()
        n_now = lake.query("SELECT count(*) AS n FROM kb_chunks WHERE doc_id = ?", [doc0]).n.iat[0]
        assert (n_then, n_now) == (crash_writer.expected(0)["kb_chunks"], 0)
        lake.write_kb(doc0, crash_writer.document(0)[2])

        # compaction rewrites files, never rows
        figures = lake.compact()
        assert figures["files_after"] <= figures["files_before"] or figures["files_before"] == 0
        assert table_digests(lake, TABLES) == expected


def test_lake_spec_is_checked() -> None:
    with pytest.raises(Exception, match="ducklake:postgres:"):
        LakeWarehouse("ducklake:sqlite:x.db")


def test_a_lake_behind_is_migrated_and_one_ahead_refused(tmp_path: Path) -> None:
    from dagster_ocr.schema import LATEST_VERSION, SchemaVersionError

    with scratch_lake(tmp_path) as (spec, data):
        LakeWarehouse(spec, data).ensure_schema()
        old = LakeWarehouse(spec, data)
        # the lake as an earlier release (schema 7) left it: without step 8's table, and without
        # the rows of every step from 8 on (the later steps add columns: IF NOT EXISTS, idempotent)
        old.write(lambda con: con.execute("DELETE FROM schema_version WHERE version >= 8"))
        old.write(lambda con: con.execute("DROP TABLE document_partitions"))
        lake = LakeWarehouse(spec, data)
        lake.ensure_schema()
        assert lake.query("SELECT max(version) AS v FROM schema_version").v.iat[0] == LATEST_VERSION
        assert lake.query("SELECT count(*) AS n FROM document_partitions").n.iat[0] == 0
        # a lake written by a newer release: refused, never written over
        lake.write(lambda con: con.execute("INSERT INTO schema_version VALUES (?, 'future', now())", [99]))
        with pytest.raises(SchemaVersionError, match="newer than this code"):
            LakeWarehouse(spec, data).ensure_schema()
