"""Ingestion: find input files, identify them by content, keep a content-addressed copy.

``doc_id`` is the sha256 of the file's bytes, so the same document dropped twice (under any
name) is one document. The pipeline works from its own copy in the store, never from the inbox,
so a file removed from the inbox after ingestion is not lost and re-runs see the same bytes.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import shutil
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path

from dagster_ocr.model import SourceDocument

log = logging.getLogger(__name__)

#: file signatures of the types we accept (the extension is never trusted)
_MAGIC: list[tuple[bytes, str]] = [
    (b"%PDF-", "pdf"),
    (b"\x89PNG\r\n\x1a\n", "png"),
    (b"\xff\xd8\xff", "jpeg"),
    (b"II*\x00", "tiff"),
    (b"MM\x00*", "tiff"),
]
SUPPORTED_KINDS = frozenset(kind for _, kind in _MAGIC)
_HASH_CHUNK = 1 << 20


def detect_kind(head: bytes) -> str:
    """The file type from its first bytes: "pdf", "png", "jpeg", "tiff" or "unknown".

    A PDF header may sit after some junk bytes (the spec tolerates up to 1024), so look there too.
    """
    for magic, kind in _MAGIC:
        if head.startswith(magic):
            return kind
    if b"%PDF-" in head[:1024]:
        return "pdf"
    return "unknown"


def display_name(name: str) -> str:
    """A file name as valid Unicode text, for records, SQL parameters and logs.

    POSIX names are bytes; Python decodes undecodable ones with lone surrogates
    (``surrogateescape``), which no UTF-8 store accepts. Such bytes become U+FFFD; every other
    name (quotes, spaces, SQL, separators-lookalikes) is kept exactly as it is.
    """
    try:
        name.encode("utf-8")
        return name
    except UnicodeEncodeError:
        try:
            raw = os.fsencode(name)
        except UnicodeEncodeError:  # lone surrogates that did not come from the file system
            return re.sub("[\ud800-\udfff]", "\ufffd", name)
        return raw.decode("utf-8", "replace")


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(_HASH_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def discover(inbox: Path) -> Iterator[Path]:
    """Every regular file under ``inbox`` (recursively, sorted, hidden files skipped, no symlinks).

    Symlinks are skipped so that nothing outside the inbox is read through it.
    """
    inbox = Path(inbox)
    if not inbox.is_dir():
        raise FileNotFoundError(f"inbox {inbox} is not a directory")
    for root, dirs, files in os.walk(inbox):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and not Path(root, d).is_symlink())
        for name in sorted(files):
            p = Path(root, name)
            if name.startswith(".") or p.is_symlink() or not p.is_file():
                continue
            yield p


class DocumentStore:
    """A content-addressed folder: ``<sha256>`` holds the bytes, ``<sha256>.json`` what we know of them."""

    def __init__(self, root: Path):
        self.root = Path(root)

    def _blob(self, doc_id: str) -> Path:
        if len(doc_id) != 64 or any(c not in "0123456789abcdef" for c in doc_id):
            # doc ids come from partition keys typed in a UI: never let one name a path
            raise ValueError(f"not a document id: {doc_id!r}")
        return self.root / doc_id[:2] / doc_id

    def register(self, path: Path) -> tuple[SourceDocument, bool]:
        """Copy ``path`` into the store. Returns the record and whether it was new."""
        path = Path(path)
        doc_id = sha256_file(path)
        blob = self._blob(doc_id)
        meta = blob.with_suffix(".json")
        if meta.exists() and blob.exists():
            return self.get(doc_id), False
        with open(path, "rb") as f:
            kind = detect_kind(f.read(1024))
        blob.parent.mkdir(parents=True, exist_ok=True)
        tmp = blob.with_suffix(".part")
        shutil.copyfile(path, tmp)
        os.replace(tmp, blob)  # atomic: a crash never leaves a half-copied blob under its final name
        record = SourceDocument(
            doc_id=doc_id,
            file_name=display_name(path.name),
            source_path=display_name(str(path.resolve())),
            stored_path=str(blob.resolve()),
            size_bytes=blob.stat().st_size,
            kind=kind,
        )
        tmp_meta = meta.with_suffix(".json.part")
        tmp_meta.write_text(json.dumps(asdict(record), ensure_ascii=False), encoding="utf-8")
        os.replace(tmp_meta, meta)
        return record, True

    def get(self, doc_id: str) -> SourceDocument:
        """The record of a registered document; KeyError when unknown."""
        meta = self._blob(doc_id).with_suffix(".json")
        if not meta.exists():
            raise KeyError(f"document {doc_id} is not registered in {self.root}")
        return SourceDocument(**json.loads(meta.read_text(encoding="utf-8")))

    def __contains__(self, doc_id: str) -> bool:
        try:
            return self._blob(doc_id).with_suffix(".json").exists()
        except ValueError:
            return False

    def doc_ids(self) -> list[str]:
        return sorted(p.stem for p in self.root.glob("??/*.json"))


def ingest_inbox(inbox: Path, store: DocumentStore) -> list[tuple[SourceDocument, bool]]:
    """Register every file in ``inbox``; duplicates (same bytes) come back with ``new=False``."""
    out = []
    seen: set[str] = set()
    for path in discover(inbox):
        record, new = store.register(path)
        if record.doc_id in seen:
            log.info("skipping %s: same content as an earlier file in this inbox", path)
            continue
        seen.add(record.doc_id)
        out.append((record, new))
    return out
