"""The inbox sensor's cursor and the nightly sweep: a restart does not re-ingest, nothing is lost."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import dagster as dg
import pytest

from assets.partitions import documents_partitions
from assets.sensors import InboxCursor, inbox_sensor, nightly_ingestion
from dagster_ocr import ingest
from resources import DocumentStoreResource


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


def _tick(instance, store, cursor):
    """One sensor evaluation, then what the daemon does with it (add the requested partitions)."""
    ctx = dg.build_sensor_context(instance=instance, cursor=cursor, resources={"store": store})
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
        assert req.run_key == req.partition_key == req.tags["dagster-ocr/doc_id"]
        assert req.tags["dagster-ocr/file_name"] in {"a copy.pdf", "b.pdf"}
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
    ctx = dg.build_schedule_context(instance=instance, resources={"store": store})
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
