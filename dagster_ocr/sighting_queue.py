"""Inbox sightings queued beside the store, recorded in ``files`` later by a process that holds the
warehouse anyway, so a scan never opens the DuckDB file (or waits on, or delays, the run writing it).

A JSON-lines file (one sighting and who saw it per line): a scan appends what it listed, in
microseconds whatever the warehouse is doing; the warehouse's writers (a document's load step, the
small sightings job, the nightly sweep) take the queue and record it in one transaction. Taking
renames the file aside first and deletes it after the commit, so a crash in between only records
it again, which ``Warehouse.record_files`` (an upsert) makes harmless. An inbox the sensor lists
every 30 s while no writer comes adds a line per file per tick: past ``COALESCE_BYTES`` the file is
rewritten with only the sightings that still change the outcome (see ``coalesce``). Lines queued
by an older version (the queue of sightings a locked warehouse could not take, same file, no
``seen_by``) are read as the sensor's.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Protocol

from dagster_ocr.ingest import FileSighting

log = logging.getLogger(__name__)

#: the queue's name beside the store (the name older versions queued under too)
QUEUE_NAME = "files_pending.jsonl"
#: past this size an append rewrites the queue coalesced
COALESCE_BYTES = 1 << 18
#: who saw a line written by an older version (no ``seen_by`` field)
DEFAULT_SEEN_BY = "sensor"


class _Recorder(Protocol):
    def record_files(self, sightings: Sequence[FileSighting], seen_by: str) -> dict[str, int]: ...


Queued = tuple[FileSighting, str]


def coalesce(queued: Iterable[Queued]) -> list[Queued]:
    """The sightings that decide what recording all of ``queued`` would leave in ``files``.

    Per file and content (path, doc_id) the first sighting (its ``first_seen``, and which path
    saw the bytes first: ``duplicate_of``) and the last (``last_seen``, size, mtime, name); per
    unhashed file (path, size, mtime) the last one (``last_seen``). In the order seen.
    """
    first: dict[tuple, Queued] = {}
    last: dict[tuple, Queued] = {}
    for item in sorted(queued, key=lambda q: q[0].seen_at):
        s = item[0]
        key = ("h", s.path, s.doc_id) if s.doc_id else ("u", s.path, s.size, s.mtime)
        if s.doc_id:
            first.setdefault(key, item)
        last[key] = item
    kept = {id(q): q for q in [*first.values(), *last.values()]}
    # an unhashed sighting no later than a hashed one of the same file says nothing more (and,
    # recorded after it, would put an older scanner's name in last_seen_by)
    hashed_at: dict[tuple, dt.datetime] = {}
    for (kind, *_), (s, _by) in last.items():
        if kind == "h":
            key = (s.path, s.size, s.mtime)
            hashed_at[key] = max(hashed_at.get(key, s.seen_at), s.seen_at)
    return sorted(
        (
            q
            for q in kept.values()
            if q[0].doc_id
            or q[0].seen_at > hashed_at.get((q[0].path, q[0].size, q[0].mtime), dt.datetime.min)
        ),
        key=lambda q: q[0].seen_at,
    )


class SightingQueue:
    """The queue of sightings not yet in the warehouse's ``files`` table (see the module)."""

    def __init__(self, path: Path, coalesce_bytes: int = COALESCE_BYTES):
        self.path = Path(path)
        self.coalesce_bytes = coalesce_bytes

    @classmethod
    def beside(cls, store_root: Path) -> SightingQueue:
        """The queue of the data folder whose store is ``store_root``."""
        return cls(Path(store_root).parent / QUEUE_NAME)

    # ---- the scans' side: append, never read the warehouse ------------------------------------

    def add(self, sightings: Sequence[FileSighting], seen_by: str) -> None:
        if not sightings:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "a", encoding="utf-8") as f:
            f.write("".join(_line(s, seen_by) for s in sightings))
        try:
            size = self.path.stat().st_size
        except FileNotFoundError:  # a writer took it meanwhile
            return
        if size > self.coalesce_bytes:
            self._coalesce()

    def _coalesce(self) -> None:
        # rewrite through a temporary file and an atomic rename; a writer taking the queue
        # meanwhile records some lines twice (harmless), none is lost
        lines = self._read(self.path)
        tmp = self.path.with_name(f"{self.path.name}.{os.getpid()}.{time.time_ns()}.part")
        tmp.write_text("".join(_line(s, by) for s, by in coalesce(lines)), encoding="utf-8")
        os.replace(tmp, self.path)

    def pending(self) -> int:
        """How many sightings wait (lines in the queue and in any taken-aside file)."""
        return sum(len(p.read_bytes().splitlines()) for p in self._files())

    # ---- the writers' side: take, record, done -------------------------------------------------

    def take(self) -> tuple[list[Queued], list[Path]]:
        """Every queued sighting, and the files they came from (pass them to ``done``)."""
        if self.path.exists():
            os.replace(
                self.path, self.path.with_name(f"{self.path.name}.{os.getpid()}.{time.time_ns()}.taken")
            )
        taken = sorted(self.path.parent.glob(self.path.name + ".*.taken"))
        return [q for p in taken for q in self._read(p)], taken

    @staticmethod
    def done(taken: Sequence[Path]) -> None:
        for p in taken:
            p.unlink(missing_ok=True)

    def record(self, warehouse: _Recorder) -> int:
        """Record every queued sighting in ``warehouse`` (the caller holds its file); how many.

        First the hashed sightings (they insert rows), then the unhashed ones (they move the
        ``last_seen`` of rows that must exist), each grouped by who saw them, oldest group first.
        A failed write leaves the queue taken aside, for the next ``record``.
        """
        queued, taken = self.take()
        if not queued:
            self.done(taken)
            return 0
        kept = coalesce(queued)
        for hashed in (True, False):
            groups: dict[str, list[FileSighting]] = {}
            for s, by in kept:
                if bool(s.doc_id) == hashed:
                    groups.setdefault(by, []).append(s)
            for by, group in sorted(groups.items(), key=lambda g: max(s.seen_at for s in g[1])):
                warehouse.record_files(group, by)
        self.done(taken)
        return len(queued)

    def _files(self) -> list[Path]:
        return [p for p in [self.path, *self.path.parent.glob(self.path.name + ".*.taken")] if p.exists()]

    @staticmethod
    def _read(path: Path) -> list[Queued]:
        out = []
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return out
        for line in text.splitlines():
            try:
                row = json.loads(line)
                by = str(row.pop("seen_by", DEFAULT_SEEN_BY))
                row["mtime"] = dt.datetime.fromisoformat(row["mtime"])
                row["seen_at"] = dt.datetime.fromisoformat(row["seen_at"])
                out.append((FileSighting(**row), by))
            except (ValueError, TypeError, KeyError):  # a line torn by a crash mid-append
                log.warning("skipping an unreadable line of %s", path)
        return out


def _line(s: FileSighting, seen_by: str) -> str:
    row = {**s.as_row(), "mtime": s.mtime.isoformat(), "seen_at": s.seen_at.isoformat(), "seen_by": seen_by}
    return json.dumps(row, ensure_ascii=False) + "\n"
