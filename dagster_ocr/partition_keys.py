"""Partition keys a person can read: ``<file stem>-<first 12 hex digits of the doc_id>``.

The doc_id (sha256 of the bytes) stays the document's identity everywhere in the warehouse; the
partition key is only its name in the Dagster UI (partition picker, runs, plots, backfills), so a
data engineer can find ``annual_report_2023-3f9a2b1c4d5e`` by typing "annual". The key is a pure
function of the file name and the doc_id, so every process derives the same key for a document.

Resolving a key back to a doc_id reads the content-addressed store (files named by sha256; no
warehouse lock involved): the 12-digit prefix names the candidates, the stem picks among them if
two documents ever shared a prefix. Keys made before readable keys existed (the bare 64-digit
sha256) resolve to themselves, so instances and data folders from then keep working.

The warehouse keeps the map (``document_partitions``) for analysts and for tools that start from a
doc_id (``dagster-ocr recheck``) and must find the key the stage outputs were stored under.
"""

from __future__ import annotations

import datetime as dt
import re
import unicodedata
from pathlib import PurePath
from typing import TYPE_CHECKING

import duckdb

if TYPE_CHECKING:  # the store is only passed in; no import cycle at run time
    from dagster_ocr.ingest import DocumentStore
    from dagster_ocr.warehouse import Warehouse

#: hex digits of the doc_id a key carries: 48 bits, so about 1 in 56,000 that two of 100,000
#: documents (Dagster's advised maximum of partitions) share one; the stem still tells them apart
HASH_DIGITS = 12
#: characters of the stem a key keeps (the whole file name stays in the run tags and metadata)
STEM_CHARS = 48

_HEX = frozenset("0123456789abcdef")
# letters and digits of any script, and . _ -: nothing Dagster's partition selection syntax
# reads (commas separate keys, [a...b] is a range) and nothing a path or a URL must escape
_NOT_KEPT = re.compile(r"[^\w.-]+")
_KEY = re.compile(rf"^(?P<stem>.+)-(?P<prefix>[0-9a-f]{{{HASH_DIGITS}}})$")

KEY_HELP = (
    "document partition keys are added by the inbox sensor (or `dagster-ocr run`): drop the file in "
    "the inbox instead of typing a key. A key reads <file stem>-<first "
    f"{HASH_DIGITS} hex digits of its sha256>, "
    "e.g. annual_report-3f9a2b1c4d5e; the full 64-digit sha256 also works."
)


class PartitionKeyError(ValueError):
    """A partition key that names no registered document: bad input, never worth a retry."""


def _is_doc_id(text: str) -> bool:
    return len(text) == 64 and set(text) <= _HEX


def key_stem(file_name: str) -> str:
    """The readable part of a key: the file's stem with only letters, digits, ``.``, ``_``, ``-``."""
    stem = PurePath(unicodedata.normalize("NFC", file_name)).stem
    kept = _NOT_KEPT.sub("_", stem).strip("._-")
    kept = re.sub(r"\.{2,}", ".", kept)  # "..." is Dagster's range separator
    return kept[:STEM_CHARS].rstrip("._-") or "document"


def partition_key(file_name: str, doc_id: str) -> str:
    """The document's partition key: ``<stem>-<first HASH_DIGITS digits of doc_id>``."""
    if not _is_doc_id(doc_id):
        raise ValueError(f"not a document id (64 hex digits): {doc_id!r}")
    return f"{key_stem(file_name)}-{doc_id[:HASH_DIGITS]}"


def doc_id_prefix(key: str) -> str | None:
    """What of the doc_id a key carries: the whole sha256 for an old key, the prefix for a
    readable one, None for text that is neither."""
    if _is_doc_id(key):
        return key
    match = _KEY.match(key)
    return match["prefix"] if match else None


def resolve(key: str, store: DocumentStore) -> str:
    """The doc_id a partition key names; ``PartitionKeyError`` with what to do when it names none."""
    prefix = doc_id_prefix(key)
    if prefix is None:
        raise PartitionKeyError(f"partition key {key!r} is not a document key: {KEY_HELP}")
    candidates = store.doc_ids_with_prefix(prefix)
    if len(prefix) == HASH_DIGITS and len(candidates) > 1:
        # two documents share the 12 digits: the stem tells which (never seen, but cheap to handle)
        stem = _KEY.match(key)["stem"]  # type: ignore[index]
        candidates = [d for d in candidates if key_stem(store.get(d).file_name) == stem]
    if not candidates:
        raise PartitionKeyError(
            f"partition key {key!r} names no document in the store ({store.root}): {KEY_HELP}"
        )
    if len(candidates) > 1:
        raise PartitionKeyError(f"partition key {key!r} is ambiguous ({len(candidates)} documents)")
    return candidates[0]


def lock_name(key: str) -> str:
    """The lake's lock a write of ``key``'s row takes."""
    return f"partition:{key}"


def store(con: duckdb.DuckDBPyConnection, key: str, doc_id: str, file_name: str) -> None:
    """Record ``key`` -> ``doc_id`` on ``con``, in its transaction (the caller holds ``lock_name(key)``)."""
    # delete, then insert (keeping first_seen), not ON CONFLICT: a DuckLake table has no
    # primary key to conflict on; the lake's lock on the key keeps two writers from both inserting
    (first_seen,) = con.execute(
        "SELECT min(first_seen) FROM document_partitions WHERE partition_key = ?", [key]
    ).fetchone() or (None,)
    con.execute("DELETE FROM document_partitions WHERE partition_key = ?", [key])
    con.execute(
        "INSERT INTO document_partitions (partition_key, doc_id, file_name, first_seen) VALUES (?, ?, ?, ?)",
        [key, doc_id, file_name, first_seen or dt.datetime.now(dt.UTC).replace(tzinfo=None)],
    )


def record(wh: Warehouse, key: str, doc_id: str, file_name: str) -> None:
    """Record ``key`` -> ``doc_id`` in the warehouse's ``document_partitions`` (idempotent)."""
    wh.ensure_schema()
    wh.write(lambda con: store(con, key, doc_id, file_name), lock=lock_name(key))


def recorded_key(wh: Warehouse, doc_id: str) -> str | None:
    """The partition key the warehouse last recorded for ``doc_id`` (None: none recorded)."""
    if not wh.exists():
        return None
    try:
        rows = wh.query(
            "SELECT partition_key FROM document_partitions WHERE doc_id = ? ORDER BY first_seen DESC LIMIT 1",
            [doc_id],
        )
    except duckdb.CatalogException:  # a warehouse from before the map (schema version < 8)
        return None
    return str(rows.partition_key.iloc[0]) if len(rows) else None


def recorded_doc_id(wh: Warehouse, key: str) -> str | None:
    """The doc_id the warehouse recorded for partition key ``key`` (None: no such key recorded)."""
    if not wh.exists():
        return None
    try:
        rows = wh.query("SELECT DISTINCT doc_id FROM document_partitions WHERE partition_key = ?", [key])
    except duckdb.CatalogException:  # a warehouse from before the map (schema version < 8)
        return None
    return str(rows.doc_id.iloc[0]) if len(rows) == 1 else None
