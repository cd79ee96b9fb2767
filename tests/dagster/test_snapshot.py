"""The snapshot catch-up: pending writes are published once writes go quiet, never while they come."""

from __future__ import annotations

import dagster as dg
import duckdb
import pytest

from assets.snapshot import QUIET_SECONDS, publish_snapshot_job, snapshot_sensor
from dagster_ocr.warehouse import Warehouse
from resources import WarehouseResource


@pytest.fixture
def pending(tmp_path):
    """A warehouse with one document whose write the throttle skipped."""
    wh = Warehouse(tmp_path / "w.duckdb")
    wh.ensure_schema()
    wh.publish_snapshot()
    with wh.transaction() as con:
        con.execute("INSERT INTO approvals VALUES ('d1', 'me', 'test', now())")
    record = wh.snapshot_record()
    record.pending_writes, record.last_write_at = 1, record.published_at
    record.save(wh.snapshot_path.with_suffix(".json"))
    return wh


def _evaluate(wh: Warehouse, **fields):
    ctx = dg.build_sensor_context(resources={"warehouse": WarehouseResource(path=str(wh.path), **fields)})
    return snapshot_sensor(ctx)


def test_sensor_waits_for_quiet_then_requests_one_publish_per_burst(pending, monkeypatch):
    import assets.snapshot as snap

    last = pending.snapshot_record().last_write_at
    monkeypatch.setattr(snap.time, "time", lambda: last + QUIET_SECONDS - 1)
    assert isinstance(_evaluate(pending), dg.SkipReason)  # writes may still be coming
    monkeypatch.setattr(snap.time, "time", lambda: last + QUIET_SECONDS + 1)
    request = _evaluate(pending)
    assert isinstance(request, dg.RunRequest) and request.run_key == f"snapshot-{last:.6f}"
    assert "off" in _evaluate(pending, publish_snapshot=False).skip_message


def test_publish_job_copies_pending_writes_and_the_sensor_goes_quiet(pending):
    result = publish_snapshot_job.execute_in_process(
        resources={"warehouse": WarehouseResource(path=str(pending.path))}
    )
    assert result.success
    assert pending.snapshot_record().pending_writes == 0
    con = duckdb.connect(str(pending.snapshot_path), read_only=True)
    try:
        assert con.execute("SELECT doc_id FROM approvals").fetchall() == [("d1",)]
    finally:
        con.close()
    assert "current" in _evaluate(pending).skip_message


def test_cli_publish_and_a_clear_message_when_another_process_holds_the_file(pending, capsys):
    import subprocess
    import sys

    from assets.cli import main

    assert main(["publish", "--warehouse", str(pending.path)]) == 0
    assert "1 pending write(s)" in capsys.readouterr().out
    assert pending.snapshot_record().pending_writes == 0

    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"import duckdb,sys,time; c=duckdb.connect({str(pending.path)!r}); "
            "print('held', flush=True); sys.stdin.read()",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        assert main(["publish", "--warehouse", str(pending.path)]) == 3
        assert "in use by another process" in capsys.readouterr().err
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
