"""The settings a stage after the text stage uses: the document's snapshot, never a fresh read.

``document_text`` resolves the settings once per document and its output carries them
(``ExtractedDocument.settings``: their JSON and hash); the stages fed by it use that snapshot
(:func:`parsed_under`). The warehouse records it on the document's row, and the stages that start
from the warehouse instead (``knowledge_base``, ``kb_vectors``) read it back from there
(:func:`recorded_settings`). A settings file edited between two stages therefore never parses
one document under two configurations; a new configuration takes effect for a document when its
``document_text`` is re-materialized (OCR'd pages are reused from the checkpoints).
"""

from __future__ import annotations

import dagster as dg

from dagster_ocr.model import ExtractedDocument
from dagster_ocr.settings import Settings
from dagster_ocr.warehouse import Warehouse


def parsed_under(document_text: ExtractedDocument) -> Settings:
    """The settings the document is parsed under: the snapshot its text stage resolved and carried
    on its output (an output of an earlier version, stored without one, was given the settings in
    force when it was read: ``dagster_ocr.stage_outputs``, version 3)."""
    if document_text.settings is None:  # only an object built by hand: the text stage always sets it
        raise dg.Failure(
            f"{document_text.source.file_name}: its text-stage output carries no settings: "
            "re-materialize document_text",
            allow_retries=False,
        )
    return document_text.settings.settings()


def recorded_settings(wh: Warehouse, doc_id: str) -> Settings:
    """The settings the warehouse recorded for the document (``documents.settings_json``: the
    snapshot its stages parsed it under), for a stage that starts from the warehouse."""
    snapshot = wh.document_settings(doc_id)
    if snapshot is None:
        raise dg.Failure(
            f"document {doc_id}: its warehouse row records no settings (a row of an earlier "
            "version): re-materialize duckdb_tables",
            allow_retries=False,
        )
    return snapshot.settings()
