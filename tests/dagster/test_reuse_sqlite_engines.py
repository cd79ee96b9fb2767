"""``dagster-ocr run`` on a local SQLite instance builds one SQLAlchemy engine per database (issue 36)."""

from typing import Any

import dagster as dg
import pytest
import sqlalchemy as sa
from dagster._core.storage.event_log.sqlite import sqlite_event_log
from dagster._core.storage.runs.sqlite import sqlite_run_storage

from assets.inbox_run import reuse_sqlite_engines


@dg.asset
def number() -> int:
    return 1


@dg.asset
def double(number: int) -> int:
    return 2 * number


def _materialize_counting(
    instance: dg.DagsterInstance, monkeypatch: pytest.MonkeyPatch
) -> tuple[list[Any], list[Any]]:
    """Materialize two assets on ``instance``; the engines Dagster's SQLite storages built meanwhile,
    and the SQLite connections opened."""
    made: list[Any] = []
    opened: list[Any] = []

    def on_connect(dbapi_connection: Any, record: Any) -> None:
        opened.append(dbapi_connection)

    sa.event.listen(sa.engine.Engine, "connect", on_connect)
    for module in (sqlite_event_log, sqlite_run_storage):
        real = module.create_engine

        def counting(*args: Any, _real: Any = real, **kwargs: Any) -> Any:
            made.append(args)
            return _real(*args, **kwargs)

        monkeypatch.setattr(module, "create_engine", counting)
    try:
        assert dg.materialize([number, double], instance=instance).success
    finally:
        sa.event.remove(sa.engine.Engine, "connect", on_connect)
        monkeypatch.undo()
    return made, opened


def test_events_and_runs_are_stored_through_kept_engines(tmp_path, monkeypatch) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    with dg.DagsterInstance.local_temp(str(tmp_path / "a")) as plain:
        per_event, connections = _materialize_counting(plain, monkeypatch)
    # Dagster's own way: an engine and a connection for every event and query
    assert len(per_event) > 20
    assert len(connections) > 20
    with dg.DagsterInstance.local_temp(str(tmp_path / "b")) as instance:
        assert reuse_sqlite_engines(instance) == ["event_log", "runs"]
        made, opened = _materialize_counting(instance, monkeypatch)
        assert made == []
        assert len(opened) <= 6  # a connection or two per database file (run shards, index, runs)
        # what was stored reads back as before: the run, its events, the materializations
        (run,) = instance.get_runs()
        assert run.is_success
        assert instance.get_latest_materialization_event(dg.AssetKey("double")) is not None
        kinds = {e.dagster_event_type for e in instance.all_logs(run.run_id) if e.dagster_event}
        assert dg.DagsterEventType.ASSET_MATERIALIZATION in kinds
        assert dg.DagsterEventType.RUN_SUCCESS in kinds


def test_other_storages_are_left_alone() -> None:
    with dg.DagsterInstance.ephemeral() as instance:  # in-memory storages
        assert reuse_sqlite_engines(instance) == []
