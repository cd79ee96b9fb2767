"""Ingestion: identity by content, type by magic bytes, a kept copy, duplicates skipped."""

from __future__ import annotations

import pytest

from dagster_ocr.ingest import DocumentStore, detect_kind, discover, ingest_inbox, sha256_file


@pytest.mark.parametrize(
    ("head", "kind"),
    [
        (b"%PDF-1.7\n", "pdf"),
        (b"\x89PNG\r\n\x1a\n....", "png"),
        (b"\xff\xd8\xff\xe0", "jpeg"),
        (b"II*\x00", "tiff"),
        (b"MM\x00*", "tiff"),
        (b"junk before the header %PDF-1.4", "pdf"),
        (b"PK\x03\x04", "unknown"),
        (b"", "unknown"),
        (b"hello.pdf", "unknown"),
    ],
)
def test_detect_kind_reads_magic_bytes_not_names(head, kind):
    assert detect_kind(head) == kind


def test_register_copies_by_content_and_dedupes(tmp_path):
    inbox = tmp_path / "inbox"
    (inbox / "sub").mkdir(parents=True)
    (inbox / "a.pdf").write_bytes(b"%PDF-1.4 same bytes")
    (inbox / "sub" / "b copy.pdf").write_bytes(b"%PDF-1.4 same bytes")
    (inbox / "c.png").write_bytes(b"\x89PNG\r\n\x1a\nother")
    (inbox / ".hidden.pdf").write_bytes(b"%PDF-1.4 hidden")
    store = DocumentStore(tmp_path / "store")
    found = ingest_inbox(inbox, store)
    assert [(r.file_name, new) for r, new in found] == [("a.pdf", True), ("c.png", True)]
    rec = found[0][0]
    assert rec.doc_id == sha256_file(inbox / "a.pdf") and rec.kind == "pdf"
    # the pipeline keeps its own copy: deleting the inbox file loses nothing
    (inbox / "a.pdf").unlink()
    assert store.get(rec.doc_id).stored_path and open(
        store.get(rec.doc_id).stored_path, "rb"
    ).read().startswith(b"%PDF")
    assert rec.doc_id in store and sorted(store.doc_ids()) == sorted(r.doc_id for r, _ in found)
    again = ingest_inbox(inbox, store)
    assert all(not new for _, new in again)


def test_store_rejects_ids_that_could_name_a_path(tmp_path):
    store = DocumentStore(tmp_path)
    for bad in ("../../etc/passwd", "a" * 63, "A" * 64, ""):
        assert bad not in store
        with pytest.raises(ValueError):
            store.get(bad)


def test_discover_skips_symlinks_out_of_the_inbox(tmp_path):
    outside = tmp_path / "secret.pdf"
    outside.write_bytes(b"%PDF-1.4 secret")
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    (inbox / "link.pdf").symlink_to(outside)
    (inbox / "real.pdf").write_bytes(b"%PDF-1.4 real")
    assert [p.name for p in discover(inbox)] == ["real.pdf"]
