"""The files table: every inbox file recorded, duplicates included, idempotently."""

from __future__ import annotations

import datetime as dt

from dagster_ocr.ingest import DocumentStore, FileSighting, register_inbox
from dagster_ocr.sighting_queue import SightingQueue
from dagster_ocr.warehouse import Warehouse


def _rows(wh: Warehouse):
    return wh.query("SELECT file_name, doc_id, duplicate_of, size FROM files ORDER BY file_name, doc_id")


def test_duplicates_renames_and_rewritten_files_each_have_a_row_and_rescans_add_none(tmp_path):
    inbox, wh = tmp_path / "inbox", Warehouse(tmp_path / "w.duckdb")
    inbox.mkdir()
    store = DocumentStore(tmp_path / "store")
    (inbox / "a.pdf").write_bytes(b"%PDF-1.4 same bytes")
    (inbox / "b.pdf").write_bytes(b"%PDF-1.4 same bytes")
    (inbox / "c.pdf").write_bytes(b"%PDF-1.4 other bytes")
    scan = register_inbox(inbox, store)
    assert len(scan.documents) == 2 and len(scan.files) == 3  # one document per content, every file
    assert wh.record_files(scan.files, "cli") == {"inserted": 3, "updated": 0}
    rows = _rows(wh)
    assert rows.duplicate_of.isna().tolist() == [True, False, True]
    assert rows.duplicate_of.iat[1] == str((inbox / "a.pdf").resolve())
    # a rescan updates, never inserts
    assert wh.record_files(register_inbox(inbox, store).files, "cli") == {"inserted": 0, "updated": 3}
    # c.pdf rewritten with new bytes: a second row for the path (its history stays); a.pdf removed
    # and its bytes dropped again as d.pdf: d is a duplicate of the first file ever seen (a.pdf)
    (inbox / "c.pdf").write_bytes(b"%PDF-1.4 new bytes")
    (inbox / "a.pdf").rename(inbox / "d.pdf")
    assert wh.record_files(register_inbox(inbox, store).files, "cli") == {"inserted": 2, "updated": 1}
    rows = _rows(wh)
    assert rows.file_name.tolist() == ["a.pdf", "b.pdf", "c.pdf", "c.pdf", "d.pdf"]
    assert rows.duplicate_of.iat[4] == str((inbox / "a.pdf").resolve())


def test_pending_sightings_keep_their_times(tmp_path):
    seen = dt.datetime(2026, 1, 2, 3, 4, 5)
    s = FileSighting("/in/x.pdf", "x.pdf", 10, seen, "ab" * 32, seen)
    pending = SightingQueue(tmp_path / "files_pending.jsonl")
    pending.add([s, s], "sensor")
    queued, taken = pending.take()
    waiting = [q for q, _by in queued]
    assert waiting == [s, s] and not pending.path.exists()
    wh = Warehouse(tmp_path / "w.duckdb")
    assert wh.record_files(waiting, "sensor") == {"inserted": 1, "updated": 1}
    pending.done(taken)
    assert pending.take() == ([], [])
    first = wh.query("SELECT first_seen, last_seen FROM files")
    assert first.first_seen.iat[0] == seen and first.last_seen.iat[0] == seen
