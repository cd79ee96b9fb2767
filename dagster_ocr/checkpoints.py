"""OCR'd pages kept on disk page by page, so that no OCR work is thrown away.

OCR is the one expensive step of the pipeline (1-8 s a page on a CPU); everything else re-runs in
milliseconds a page. The text stage therefore writes every page it OCRs to a checkpoint as soon as
it is read, and looks there before it OCRs a page. A run that dies, times out or is retried at
page 700 of 1,000 resumes at page 700; re-running a document after a change of settings that does
not touch OCR (tables, paragraphs, the text-layer router) OCRs nothing at all.

Layout, under a root folder (``<data>/ocr_pages`` in a deployment)::

    <root>/<doc_id[:2]>/<doc_id>/<key>/settings.json    what the key stands for (for people)
    <root>/<doc_id[:2]>/<doc_id>/<key>/000042.page      page 42, ``pagestore.encode_page`` bytes

``key`` is a hash of exactly what changes an OCR'd page (:func:`ocr_fingerprint`): the engine and
its settings, and the OCR settings (dpi, confidence floor, orientation, reading-order columns, ...)
except those that only tune speed. Each page is written to a temporary name and renamed into place,
so a crash leaves a page whole or absent, never half written. When a document's text stage
completes under a key, the document's checkpoints under any other key are removed: one document
keeps one configuration's pages (~8 KB a page), replaced by the next configuration that completes.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from dagster_ocr.model import Page
from dagster_ocr.ocr.settings import OcrSettings
from dagster_ocr.pagestore import decode_page, encode_page

log = logging.getLogger(__name__)

#: bump when the meaning of a stored page changes (its encoding, or what ``ocr_page`` puts in it)
CHECKPOINT_FORMAT = 1

#: OCR settings that change how fast pages are read, never what is read: not part of the key
_SPEED_ONLY = frozenset({"document_type", "workers"})
#: the same for engine settings (added after the first keys were written, so older keys stay);
#: int8_model_dir says where the int8 models are cached, not what they read; runtime says what
#: executes the same float model (OpenVINO and onnxruntime read alike in f32: the same CER on all 59
#: pages of bench/ocr_columns.py), while what OpenVINO computes in bf16 (openvino_bf16) counts
_ENGINE_SPEED_ONLY = frozenset({"onnx_memory_arena", "int8_model_dir", "runtime"})
#: engine settings that count only away from these values (added later: the float models' keys stay)
_ENGINE_COUNTS_UNLESS = {"int8_models": "none"}
#: engine settings that mean something only with int8 models on
_INT8_ONLY = frozenset({"int8_recheck_below"})

_DOC_ID = re.compile(r"[0-9a-f]{64}")
_PAGE_FILE = re.compile(r"(\d{6,})\.page")


def ocr_fingerprint(engine: Any, settings: OcrSettings) -> dict[str, Any]:
    """What an OCR'd page depends on, as plain data: the engine that reads it and the OCR settings.

    The engine's own settings are taken from the engine object where it has them (the resource
    may have swapped the engine the settings name, or configured a GPU engine apart from them),
    else from ``settings.engine``. Every OCR setting counts except those in ``_SPEED_ONLY``, so a
    setting added later is part of the key unless someone decides otherwise.
    """
    engine_settings = getattr(engine, "settings", None)
    if not isinstance(engine_settings, BaseModel):
        engine_settings = settings.engine
    engine_part = engine_settings.model_dump(mode="json", exclude=_ENGINE_SPEED_ONLY)
    if engine_part.get("int8_models", "none") == "none":
        engine_part = {k: v for k, v in engine_part.items() if k not in _INT8_ONLY}
    if getattr(engine_settings, "runtime", None) != "openvino" or engine_part.get("openvino_bf16") == "none":
        engine_part.pop("openvino_bf16", None)
    engine_part = {k: v for k, v in engine_part.items() if _ENGINE_COUNTS_UNLESS.get(k, object()) != v}
    shared = settings.model_dump(mode="json", exclude={"engine", *_SPEED_ONLY})
    return {
        "format": CHECKPOINT_FORMAT,
        "engine": getattr(engine, "name", type(engine).__name__),
        "engine_settings": engine_part,
        "ocr": shared,
    }


def fingerprint_key(fingerprint: dict[str, Any]) -> str:
    """A short, stable name for a fingerprint (16 hex digits of its sha256)."""
    blob = json.dumps(fingerprint, sort_keys=True, separators=(",", ":")).encode()
    return hashlib.sha256(blob).hexdigest()[:16]


class OcrCheckpoints:
    """The checkpoint folder of every document (``root``); see the module docstring."""

    def __init__(self, root: str | Path):
        self.root = Path(root)

    def _doc_dir(self, doc_id: str) -> Path:
        if not _DOC_ID.fullmatch(doc_id):
            # doc ids come from partition keys typed in a UI: never let one name a path
            raise ValueError(f"not a document id: {doc_id!r}")
        return self.root / doc_id[:2] / doc_id

    def document(self, doc_id: str, fingerprint: dict[str, Any]) -> DocumentCheckpoint:
        """The checkpoint of one document under one OCR configuration (created on first write)."""
        return DocumentCheckpoint(self._doc_dir(doc_id), fingerprint)

    def keys(self, doc_id: str) -> list[str]:
        """The configurations a document has checkpoints for."""
        folder = self._doc_dir(doc_id)
        return sorted(p.name for p in folder.iterdir() if p.is_dir()) if folder.is_dir() else []

    def remove(self, doc_id: str) -> None:
        """Forget a document's checkpoints (all configurations)."""
        shutil.rmtree(self._doc_dir(doc_id), ignore_errors=True)


class DocumentCheckpoint:
    """One document's OCR'd pages under one configuration: ``get`` before OCR, ``put`` after."""

    def __init__(self, doc_dir: Path, fingerprint: dict[str, Any]):
        self.doc_dir = doc_dir
        self.fingerprint = fingerprint
        self.key = fingerprint_key(fingerprint)
        self.folder = doc_dir / self.key
        #: pages this object read back / wrote (what a run reused / added)
        self.reused = 0
        self.written = 0

    def _path(self, index: int) -> Path:
        return self.folder / f"{index:06d}.page"

    def pages(self) -> set[int]:
        """Indexes of the pages stored under this key."""
        if not self.folder.is_dir():
            return set()
        return {int(m.group(1)) for name in os.listdir(self.folder) if (m := _PAGE_FILE.fullmatch(name))}

    def get(self, index: int) -> Page | None:
        """Page ``index`` as OCR'd earlier under this key, or None (never stored, or unreadable)."""
        try:
            data = self._path(index).read_bytes()
        except FileNotFoundError:
            return None
        try:
            page = decode_page(data)
        except Exception as exc:  # noqa: BLE001 - a damaged file is a cache miss: OCR the page again
            log.warning("checkpoint %s unreadable (%s): OCR'ing the page again", self._path(index), exc)
            return None
        if page.index != index:
            log.warning("checkpoint %s holds page %d: OCR'ing the page again", self._path(index), page.index)
            return None
        self.reused += 1
        return page

    def put(self, page: Page) -> None:
        """Store an OCR'd page, atomically: a crash leaves it whole or absent."""
        if not self.folder.is_dir():
            self.folder.mkdir(parents=True, exist_ok=True)
            meta = self.folder / "settings.json"
            _write_atomic(meta, json.dumps(self.fingerprint, indent=1, sort_keys=True).encode())
        _write_atomic(self._path(page.index), encode_page(page))
        self.written += 1

    def complete(self) -> int:
        """Mark this configuration as the document's current one: remove the document's other
        configurations' checkpoints (and temporary files a crash left). Returns folders removed."""
        removed = 0
        if not self.doc_dir.is_dir():
            return 0
        for other in self.doc_dir.iterdir():
            if other.is_dir() and other.name != self.key:
                shutil.rmtree(other, ignore_errors=True)
                removed += 1
        if self.folder.is_dir():
            for name in os.listdir(self.folder):
                if name.endswith(".tmp"):
                    (self.folder / name).unlink(missing_ok=True)
        return removed


def _write_atomic(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
