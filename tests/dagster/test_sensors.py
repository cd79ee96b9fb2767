"""The inbox sensor's cursor and the nightly sweep: a restart does not re-ingest, nothing is lost."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import dagster as dg
import pandas as pd
import pytest

from assets.file_sightings import record_queued_sightings
from assets.partitions import documents_partitions
from assets.sensors import InboxCursor, inbox_sensor, nightly_ingestion
from dagster_ocr import ingest
from dagster_ocr.partition_keys import resolve
from resources import DocumentStoreResource, WarehouseResource


@pytest.fixture
def setup(tmp_path, corpus):
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    shutil.copy(corpus / "page_labels/bug793632.pdf", inbox / "a.pdf")
    shutil.copy(corpus / "page_labels/issue14847.pdf", inbox / "b.pdf")
    shutil.copy(corpus / "page_labels/bug793632.pdf", inbox / "a copy.pdf")  # same bytes
    store = DocumentStoreResource(inbox_dir=str(inbox), store_dir=str(tmp_path / "store"))
    with dg.instance_for_test() as instance:
        yield instance, store, inbox, corpus


def _warehouse(store):
    return WarehouseResource(path=str(Path(store.store_dir).parent / "w.duckdb"))


def _tick(instance, store, cursor):
    """One sensor evaluation, then what the daemon does with it (add the requested partitions)."""
    resources = {"store": store, "warehouse": _warehouse(store)}
    ctx = dg.build_sensor_context(instance=instance, cursor=cursor, resources=resources)
    result = inbox_sensor(ctx)
    for req in result.dynamic_partitions_requests or []:
        instance.add_dynamic_partitions(req.partitions_def_name, list(req.partition_keys))
    return result


def test_first_tick_requests_each_document_once_with_tags(setup):
    instance, store, _, _ = setup
    result = _tick(instance, store, None)
    keys = [r.partition_key for r in result.run_requests]
    assert len(keys) == 2 == len(set(keys))  # the copy has the same sha256
    assert set(instance.get_dynamic_partitions(documents_partitions.name)) == set(keys)
    for req in result.run_requests:
        doc_id, file_name = req.tags["dagster-ocr/doc_id"], req.tags["dagster-ocr/file_name"]
        assert req.run_key == doc_id
        assert file_name in {"a copy.pdf", "b.pdf"}
        # the partition is named after the file, and resolves to the document in the store
        assert req.partition_key == Path(file_name).stem.replace(" ", "_") + "-" + doc_id[:12]
        assert resolve(req.partition_key, store.store()) == doc_id
    assert json.loads(result.cursor)["mtime_ns"] > 0


def test_a_restarted_sensor_neither_rehashes_nor_requests_again(setup, monkeypatch):
    instance, store, inbox, corpus = setup
    cursor = _tick(instance, store, None).cursor
    hashed: list[Path] = []
    original = ingest.sha256_file
    monkeypatch.setattr(ingest, "sha256_file", lambda p: hashed.append(Path(p)) or original(p))
    # a restart: the daemon hands the stored cursor to a fresh evaluation
    again = _tick(instance, store, cursor)
    assert again.run_requests == [] and hashed == []
    assert again.cursor == cursor
    # a new file: only it is read
    new = inbox / "c.pdf"
    shutil.copy(corpus / "tables/icdar2013/us-020/us-020.pdf", new)
    os.utime(new, ns=(10**19, 10**19))  # strictly after the mark, whatever the clock did
    third = _tick(instance, store, again.cursor)
    assert [r.tags["dagster-ocr/file_name"] for r in third.run_requests] == ["c.pdf"]
    assert hashed == [new]


def test_a_file_with_an_old_mtime_is_caught_by_the_nightly_sweep(setup):
    instance, store, inbox, corpus = setup
    cursor = _tick(instance, store, None).cursor
    late = inbox / "restored.pdf"
    shutil.copy(corpus / "tables/icdar2013/us-020/us-020.pdf", late)
    os.utime(late, ns=(1, 1))  # copied with its 1970 modification time kept (cp -p, rsync -t)
    assert _tick(instance, store, cursor).run_requests == []
    resources = {"store": store, "warehouse": _warehouse(store)}
    # closed when done: the context opens its own instance, and an unclosed one stays Dagster's
    # current state storage after it is gone, failing the next definitions load in this process
    with dg.build_schedule_context(instance=instance, resources=resources) as ctx:
        requests = nightly_ingestion(ctx)
        assert [r.tags["dagster-ocr/file_name"] for r in requests] == ["restored.pdf"]
        # and the next sweep finds nothing new
        assert isinstance(nightly_ingestion(ctx), dg.SkipReason)


def test_cursor_ties_on_the_mark_are_not_lost(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    cursor = InboxCursor().advance([(a, 5)])
    assert not cursor.is_new(a, 5) and cursor.is_new(b, 5) and cursor.is_new(a, 6) and not cursor.is_new(b, 4)
    cursor = cursor.advance([(b, 5)])
    assert cursor.names_at_mark == [str(a), str(b)]
    assert InboxCursor.parse(cursor.dump()) == cursor


def _files(store):
    """The ``files`` table once the next step holding the warehouse recorded the sensor's queue."""
    wh = _warehouse(store).warehouse()
    with wh.held():
        record_queued_sightings(wh, store.store())
    return (
        _warehouse(store)
        .warehouse()
        .query(
            "SELECT file_name, duplicate_of, doc_id, first_seen, last_seen, last_seen_by FROM files "
            "ORDER BY file_name"
        )
    )


def test_every_inbox_file_is_recorded_duplicates_included_and_a_rescan_adds_no_rows(setup):
    instance, store, inbox, corpus = setup
    cursor = _tick(instance, store, None).cursor
    files = _files(store)
    # the two byte-identical files both appear; the first one seen (in scan order) is the original
    assert list(files.file_name) == ["a copy.pdf", "a.pdf", "b.pdf"]
    dup = files.set_index("file_name")
    assert dup.at["a copy.pdf", "doc_id"] == dup.at["a.pdf", "doc_id"]
    assert dup.at["a copy.pdf", "duplicate_of"] is None or pd.isna(dup.at["a copy.pdf", "duplicate_of"])
    assert dup.at["a.pdf", "duplicate_of"] == str((inbox / "a copy.pdf").resolve())
    assert pd.isna(dup.at["b.pdf", "duplicate_of"])
    # a later tick (nothing new, nothing hashed) and the nightly sweep (everything hashed again):
    # no new rows, last_seen moves on
    _tick(instance, store, cursor)
    resources = {"store": store, "warehouse": _warehouse(store)}
    with dg.build_schedule_context(instance=instance, resources=resources) as ctx:
        nightly_ingestion(ctx)
    again = _files(store)
    assert len(again) == 3
    assert (again.last_seen > files.last_seen).all() and (again.first_seen == files.first_seen).all()
    assert set(again.last_seen_by) == {"schedule"}
    # the user's question: what happened to "a.pdf"? (not parsed yet: no run has written it)
    answer = (
        _warehouse(store)
        .warehouse()
        .query("SELECT status, outcome FROM file_status WHERE file_name = 'a.pdf'")
    )
    assert answer.status.tolist() == ["pending"]
    assert "same bytes as" in answer.outcome.iat[0]


def test_sightings_wait_while_the_warehouse_is_locked_and_are_recorded_later(setup, caplog):
    instance, store, _, _ = setup
    wh = _warehouse(store).warehouse()
    wh.ensure_schema()
    # another process holds the file (a run writing): the tick requests runs without noticing
    hold = f"import duckdb, time; c = duckdb.connect({str(wh.path)!r}); print('held', flush=True); "
    hold += "time.sleep(60)"
    holder = subprocess.Popen([sys.executable, "-c", hold], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        result = _tick(instance, store, None)
        assert len(result.run_requests) == 2
    finally:
        holder.kill()
        holder.wait()
    assert "warehouse busy" not in caplog.text
    pending = Path(store.store_dir).parent / "files_pending.jsonl"
    assert len(pending.read_text().splitlines()) == 3
    # the next step that holds the warehouse records the queue, with the times the files were seen
    assert len(_files(store)) == 3 and not pending.exists()


def test_documents_known_under_old_sha256_keys_are_not_added_again(setup):
    """An instance made before readable keys: its partitions are sha256 keys, and stay the only ones."""
    instance, store, _, _ = setup
    # what an older sensor did: register and add the bare doc_ids
    known = [rec.doc_id for rec, _ in ingest.register_inbox(Path(store.inbox_dir), store.store()).documents]
    instance.add_dynamic_partitions(documents_partitions.name, known)
    result = _tick(instance, store, None)
    # no document run; the files' sightings are recorded by the one-step files job
    assert [r.job_name for r in result.run_requests] == ["record_file_sightings"]
    assert sorted(instance.get_dynamic_partitions(documents_partitions.name)) == sorted(known)


def test_a_tick_never_reads_every_partition_key(setup, monkeypatch):
    """The tick asks only about the keys of the files it hashed (one bounded query), so its cost
    does not grow with the documents registered (docs/scale.md: ~5 s a tick at a million keys).
    Where a stored asset status cache exists, a tick that adds keys reads the key list once more to
    carry that cache (assets/status_cache.py); this instance has none, so it must never read it."""
    instance, store, inbox, corpus = setup
    monkeypatch.setattr(
        instance, "get_dynamic_partitions", lambda *a, **k: pytest.fail("the whole key list was read")
    )
    asked: list[list[str]] = []
    existing = instance.get_existing_dynamic_partitions
    monkeypatch.setattr(
        instance,
        "get_existing_dynamic_partitions",
        lambda name, keys: asked.append(list(keys)) or existing(name, keys),
    )
    first = _tick(instance, store, None)
    assert len(first.run_requests) == 2
    # two documents: each one's readable key and its bare sha256, and the key of the copy's name
    assert len(asked) == 1 and len(asked[0]) == 5
    # the same bytes under a new name, after the first tick: known, not a second partition
    renamed = inbox / "renamed.pdf"
    shutil.copy(corpus / "page_labels/issue14847.pdf", renamed)
    os.utime(renamed, ns=(10**19, 10**19))
    second = _tick(instance, store, first.cursor)
    assert [r.job_name for r in second.run_requests] == ["record_file_sightings"]
    resources = {"store": store, "warehouse": _warehouse(store)}
    with dg.build_schedule_context(instance=instance, resources=resources) as ctx:
        assert isinstance(nightly_ingestion(ctx), dg.SkipReason)  # the sweep asks the same way
