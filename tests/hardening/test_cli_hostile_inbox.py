"""End to end: a mixed inbox of sound, broken and hostile files through the CLI's in-process runner.

The same asset graph the UI runs; every file must end with a documents row (status and reason),
the sound ones must reach the knowledge base, and the run must not raise.
"""

from __future__ import annotations

import hostile
import pytest

from assets.cli import run_inbox
from dagster_ocr.warehouse import Warehouse

#: kept small: each document is one in-process Dagster run (about 5 s here)
MIXED = {
    "sound.pdf",
    "zero-bytes.pdf",
    "encrypted-user-pw.pdf",
    "bomb-in-pdf.pdf",
    "active-content.pdf",
    "x'); DROP TABLE documents; --.pdf",
}


@pytest.mark.slow
def test_mixed_hostile_inbox_through_the_cli_runner(tmp_path, monkeypatch) -> None:
    monkeypatch.delenv("DAGSTER_HOME", raising=False)  # an ephemeral instance, nothing persisted elsewhere
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    cases = {c.name: c for c in hostile.cases() if c.name in MIXED}
    assert set(cases) == MIXED
    for case in cases.values():
        (inbox / case.name).write_bytes(case.data)
    warehouse = tmp_path / "out" / "warehouse.duckdb"
    summary = run_inbox(inbox, warehouse, ocr_engine="none", show_progress=False)
    assert len(summary) == len(MIXED)
    docs = Warehouse(warehouse).query("SELECT file_name, status, error FROM documents")
    assert set(docs.file_name) == MIXED
    for row in docs.itertuples():
        expect = cases[row.file_name].expect
        if expect and expect.startswith("failed:"):
            assert row.status == "failed" and row.error.startswith(expect.split(":")[1]), row
        else:
            # parsed by the text stage; the quality gate may still hold it back, with a reason
            assert row.status in ("parsed", "quarantined"), row
            assert row.status == "parsed" or row.error, row
    kb = Warehouse(warehouse).query(
        "SELECT DISTINCT d.file_name FROM kb_chunks k JOIN documents d USING (doc_id)"
    )
    assert "sound.pdf" in set(kb.file_name)
    assert not set(kb.file_name) & {n for n, c in cases.items() if c.expect and c.expect.startswith("failed")}
    # nothing written next to the warehouse but its own files and data folder
    assert {p.name for p in (tmp_path / "out").iterdir()} <= {
        "warehouse.duckdb",
        "warehouse.duckdb.wal",
        "warehouse.snapshot.duckdb",  # the analysts' read-only copy
        "warehouse.snapshot.json",  # when it was published, what it cost, what it lacks
        "warehouse_data",
    }
