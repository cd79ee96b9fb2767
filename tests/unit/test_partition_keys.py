"""Partition keys a person can read, that resolve to exactly one document or say why not."""

from __future__ import annotations

from pathlib import Path

import pytest

from dagster_ocr import partition_keys as pk
from dagster_ocr.ingest import DocumentStore


def _store(tmp_path: Path, files: dict[str, bytes]) -> tuple[DocumentStore, dict[str, str]]:
    store = DocumentStore(tmp_path / "store")
    ids = {}
    for name, data in files.items():
        path = tmp_path / name
        path.write_bytes(data)
        ids[name] = store.register(path)[0].doc_id
    return store, ids


@pytest.mark.parametrize(
    ("file_name", "stem"),
    [
        ("Annual Report 2023.pdf", "Annual_Report_2023"),
        ("契約書（最終版）.pdf", "契約書_最終版"),
        ("a,b[1...3].pdf", "a_b_1.3"),  # nothing Dagster's partition selection reads as syntax
        ("..pdf", "document"),
        ("x" * 200 + ".pdf", "x" * pk.STEM_CHARS),
        ("scan.tar.gz", "scan.tar"),
    ],
)
def test_a_key_keeps_the_readable_part_of_the_file_name(file_name: str, stem: str) -> None:
    doc_id = "ab" * 32
    key = pk.partition_key(file_name, doc_id)
    assert key == f"{stem}-{doc_id[: pk.HASH_DIGITS]}"
    assert "..." not in key and "," not in key and "/" not in key
    assert pk.doc_id_prefix(key) == doc_id[: pk.HASH_DIGITS]


def test_keys_resolve_to_their_document_and_old_sha256_keys_still_do(tmp_path: Path) -> None:
    store, ids = _store(tmp_path, {"report.pdf": b"%PDF-1.4 one", "memo.pdf": b"%PDF-1.4 two"})
    for name, doc_id in ids.items():
        assert pk.resolve(pk.partition_key(name, doc_id), store) == doc_id
        assert pk.resolve(doc_id, store) == doc_id  # an instance made before readable keys


@pytest.mark.parametrize(
    "key", ["hello", "report.pdf", "report-zzzzzzzzzzzz", "../../etc/passwd-0123456789ab"]
)
def test_a_key_that_names_no_document_is_refused_with_what_to_do(tmp_path: Path, key: str) -> None:
    store, _ = _store(tmp_path, {"report.pdf": b"%PDF-1.4 one"})
    with pytest.raises(pk.PartitionKeyError) as err:
        pk.resolve(key, store)
    message = str(err.value)
    assert repr(key) in message and "inbox" in message and "<file stem>-<first 12 hex digits" in message


def test_a_well_formed_key_of_an_unknown_document_is_refused(tmp_path: Path) -> None:
    store, ids = _store(tmp_path, {"report.pdf": b"%PDF-1.4 one"})
    other = "0" * 64 if not ids["report.pdf"].startswith("0" * 12) else "1" * 64
    with pytest.raises(pk.PartitionKeyError, match="names no document in the store"):
        pk.resolve(pk.partition_key("report.pdf", other), store)


def test_two_documents_sharing_the_short_hash_are_told_apart_by_the_stem(tmp_path: Path) -> None:
    store = DocumentStore(tmp_path / "store")
    # two records whose ids share 12 digits (made by hand: finding a real collision takes 2^24 files)
    twins = ["abcdef012345" + "0" * 52, "abcdef012345" + "1" * 52]
    for doc_id, name in zip(twins, ("alpha.pdf", "beta.pdf"), strict=True):
        blob = store.root / doc_id[:2] / doc_id
        blob.parent.mkdir(parents=True, exist_ok=True)
        blob.write_bytes(b"x")
        meta = {
            "doc_id": doc_id,
            "file_name": name,
            "source_path": name,
            "stored_path": str(blob),
            "size_bytes": 1,
            "kind": "pdf",
        }
        blob.with_suffix(".json").write_text(__import__("json").dumps(meta))
    assert pk.resolve(pk.partition_key("alpha.pdf", twins[0]), store) == twins[0]
    assert pk.resolve(pk.partition_key("beta.pdf", twins[1]), store) == twins[1]
    with pytest.raises(pk.PartitionKeyError, match="names no document"):
        pk.resolve(f"gamma-{twins[0][:12]}", store)


def test_the_warehouse_keeps_the_map_both_ways(tmp_path: Path) -> None:
    from dagster_ocr.warehouse import Warehouse

    wh = Warehouse(tmp_path / "w.duckdb")
    doc_id = "d" * 64
    assert pk.recorded_key(wh, doc_id) is None
    key = pk.partition_key("Report.pdf", doc_id)
    pk.record(wh, key, doc_id, "Report.pdf")
    pk.record(wh, key, doc_id, "Report.pdf")  # idempotent
    assert pk.recorded_key(wh, doc_id) == key
    rows = wh.query("SELECT partition_key, doc_id, file_name FROM document_partitions")
    assert rows.to_dict("records") == [{"partition_key": key, "doc_id": doc_id, "file_name": "Report.pdf"}]
