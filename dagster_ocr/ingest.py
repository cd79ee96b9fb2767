"""Ingestion: find input files, identify them by content, keep a content-addressed copy.

``doc_id`` is the sha256 of the file's bytes, so the same document dropped twice (under any
name) is one document. The pipeline works from its own copy in the store, never from the inbox,
so a file removed from the inbox after ingestion is not lost and re-runs see the same bytes.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import logging
import os
import re
import shutil
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass
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

    def mark_retired(self, doc_id: str, partition_key: str) -> None:
        """Record that ``doc_id``'s Dagster partition ``partition_key`` was retired once it was loaded
        (docs/scale.md): the inbox sensor counts the document as known without its partition, and the
        file names the key a re-run re-adds. Idempotent; a re-added partition leaves it in place."""
        marker = self._blob(doc_id).with_suffix(".retired")
        tmp = marker.with_suffix(".retired.part")
        tmp.write_text(partition_key, encoding="utf-8")
        os.replace(tmp, marker)

    def retired_key(self, doc_id: str) -> str | None:
        """The partition key ``doc_id`` had when it was retired; None when it never was."""
        try:
            return self._blob(doc_id).with_suffix(".retired").read_text(encoding="utf-8").strip() or None
        except (FileNotFoundError, ValueError):
            return None

    def doc_ids(self) -> list[str]:
        return sorted(p.stem for p in self.root.glob("??/*.json"))

    def doc_ids_with_prefix(self, prefix: str) -> list[str]:
        """The registered doc_ids starting with ``prefix`` (hex digits, at least two)."""
        if len(prefix) < 2 or any(c not in "0123456789abcdef" for c in prefix):
            return []  # never let typed text name a path or a glob
        return sorted(p.stem for p in (self.root / prefix[:2]).glob(f"{prefix}*.json") if len(p.stem) == 64)


@dataclass(frozen=True, slots=True)
class FileSighting:
    """One inbox file as a scan saw it: a ``files`` row's worth (see ``Warehouse.record_files``).

    ``doc_id`` is None for a file the scan did not hash (an incremental scan's file it has read
    before, unchanged since: known by path, size and modification time); such a sighting only
    moves ``last_seen`` on.
    """

    path: str  # absolute, as valid Unicode (display_name)
    file_name: str
    size: int
    mtime: dt.datetime  # UTC, naive (DuckDB TIMESTAMP)
    doc_id: str | None
    seen_at: dt.datetime  # UTC, naive: when the scan saw it

    @classmethod
    def of(cls, path: Path, doc_id: str | None, stat: os.stat_result | None = None) -> FileSighting:
        st = stat or os.stat(path)
        return cls(
            path=display_name(str(Path(path).resolve())),
            file_name=display_name(Path(path).name),
            size=st.st_size,
            mtime=utc_timestamp(st.st_mtime_ns),
            doc_id=doc_id,
            seen_at=dt.datetime.now(dt.UTC).replace(tzinfo=None),
        )

    def as_row(self) -> dict[str, object]:
        return asdict(self)


def utc_timestamp(ns: int) -> dt.datetime:
    """Epoch nanoseconds as a naive UTC datetime (microseconds, as DuckDB keeps them)."""
    return dt.datetime(1970, 1, 1) + dt.timedelta(microseconds=ns // 1000)


@dataclass(slots=True)
class InboxScan:
    """What one scan of an inbox found: each distinct document once, and every file."""

    #: (record, new) per distinct content, in discovery order; the first file's name wins
    documents: list[tuple[SourceDocument, bool]]
    #: every file seen, duplicates included, for the warehouse's ``files`` table
    files: list[FileSighting]


def scan_files(paths: Iterable[Path], store: DocumentStore) -> InboxScan:
    """Register ``paths`` in the store: one record per distinct content, one sighting per file."""
    documents: list[tuple[SourceDocument, bool]] = []
    files: list[FileSighting] = []
    seen: set[str] = set()
    for path in paths:
        try:
            stat = os.stat(path)
        except FileNotFoundError:  # removed between listing and reading
            continue
        record, new = store.register(path)
        files.append(FileSighting.of(path, record.doc_id, stat))
        if record.doc_id in seen:
            log.info("%s has the same content as an earlier file in this inbox: one document", path)
            continue
        seen.add(record.doc_id)
        documents.append((record, new))
    return InboxScan(documents, files)


def register_inbox(inbox: Path, store: DocumentStore) -> InboxScan:
    """Register every file in ``inbox`` (see :func:`scan_files`)."""
    return scan_files(discover(inbox), store)


def ingest_inbox(inbox: Path, store: DocumentStore) -> list[tuple[SourceDocument, bool]]:
    """Register every file in ``inbox``; one (record, new) per distinct content, in discovery order.

    Duplicates (same bytes) are registered once: the files themselves are in
    ``register_inbox(...).files``.
    """
    return register_inbox(inbox, store).documents
