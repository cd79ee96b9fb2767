"""``LakeWarehouse.write``: a DuckLake write conflict reruns the whole transaction, bounded, logged.

No PostgreSQL needed: the transaction and the advisory lock are replaced by stand-ins, so this
checks only the retry policy (tests/hardening/test_lake_concurrency.py checks it for real).
"""

from __future__ import annotations

import contextlib
import logging

import duckdb
import pytest

from dagster_ocr.lake import LakeError, LakeWarehouse, is_lake_spec, open_warehouse
from dagster_ocr.warehouse import Warehouse

SPEC = "ducklake:postgres:dbname=nowhere host=127.0.0.1 user=postgres"
CONFLICT = "Failed to commit DuckLake transaction.\nTransaction conflict - another transaction deleted"


@pytest.fixture
def lake(monkeypatch) -> LakeWarehouse:
    wh = LakeWarehouse(SPEC, "/tmp/nowhere/", max_attempts=4, backoff_s=0.001)
    monkeypatch.setattr(wh, "transaction", contextlib.nullcontext)
    monkeypatch.setattr(wh, "_lock", lambda name: contextlib.nullcontext())
    return wh


def test_conflicts_rerun_the_whole_write_and_are_logged(lake, caplog) -> None:
    calls = []

    def work(con):
        calls.append(con)
        if len(calls) < 3:
            raise duckdb.TransactionException(CONFLICT)
        return "done"

    with caplog.at_level(logging.WARNING, logger="dagster_ocr.lake"):
        assert lake.write(work, lock="doc-1") == "done"
    assert len(calls) == 3 and lake.retries == 2
    assert [r.message.split(" (")[0] for r in caplog.records] == ["lake write conflict on doc-1"] * 2


def test_commit_collisions_past_ducklakes_own_retries_are_retried(lake) -> None:
    calls = []

    def work(con):
        calls.append(1)
        if len(calls) == 1:
            raise duckdb.TransactionException(
                "Failed to commit DuckLake transaction.\nExceeded the maximum retry count of 10 set by "
                "the ducklake_max_retry_count setting. ... duplicate key value violates unique constraint "
                '"ducklake_snapshot_pkey"'
            )

    lake.write(work, lock="doc-3")
    assert calls == [1, 1] and lake.retries == 1


def test_retries_are_bounded(lake) -> None:
    def work(con):
        raise duckdb.TransactionException(CONFLICT)

    with pytest.raises(LakeError, match="still conflicting after 4 attempts"):
        lake.write(work, lock="doc-2")
    assert lake.retries == 3


def test_other_errors_are_not_retried(lake) -> None:
    calls = []

    def work(con):
        calls.append(1)
        raise duckdb.ConstraintException("NOT NULL constraint failed: documents.file_name")

    with pytest.raises(duckdb.ConstraintException):
        lake.write(work)
    assert calls == [1] and lake.retries == 0


def test_a_read_only_lake_refuses_writes() -> None:
    with pytest.raises(LakeError, match="read-only"):
        LakeWarehouse(SPEC, read_only=True).write(lambda con: None)


def test_the_spec_alone_picks_the_mode(tmp_path) -> None:
    assert is_lake_spec(SPEC) and not is_lake_spec(str(tmp_path / "w.duckdb"))
    assert type(open_warehouse(tmp_path / "w.duckdb")) is Warehouse
    lake = open_warehouse(SPEC, "/srv/lake/data/")
    assert isinstance(lake, LakeWarehouse) and lake.is_lake
    assert str(lake.search_file) == "/srv/lake/nowhere.search.duckdb"  # beside the data, not in it
    with pytest.raises(LakeError, match="time travel"):
        open_warehouse(tmp_path / "w.duckdb", version=3)
