"""Exports of one document from the warehouse: Markdown and JSON, both in reading order.

Both read the ``document_blocks`` view (see :mod:`dagster_ocr.blocks`), so an export, the
knowledge base and an analyst's query agree on the document's text and its order.

* Markdown: headings as ``#`` levels (``sections.level``, capped at 6), paragraphs, and tables as
  Markdown tables (the one rendering the warehouse stored), separated by blank lines.
* JSON: a shape docling users know. ``name`` and ``origin`` (file name, sha256, mimetype);
  ``pages`` with their size (PDF points) and printed label; ``sections`` as a tree (``children``
  section ids, ``items`` the body items each one holds); ``body``, the items in reading order,
  each with ``kind``, ``label`` (docling's item label), ``text``, ``section_id`` and ``prov``:
  page and bounding box (top-left origin, as docling's ``coord_origin: TOPLEFT``). A table item
  has its Markdown as ``text`` and its cells in ``data.table_cells`` with docling's offsets;
  a table merged across pages has one ``prov`` entry per page.

A document is named by its doc_id, a unique prefix of it, or a file name (the name it was parsed
under, or any inbox name recorded for the same bytes in ``files``).
"""

from __future__ import annotations

import math
import re
from pathlib import PurePath
from typing import Any

import numpy as np
import pandas as pd

from dagster_ocr import partition_keys
from dagster_ocr.schema import LATEST_VERSION, current_version
from dagster_ocr.warehouse import Warehouse

#: bumped when the JSON shape changes incompatibly
JSON_VERSION = "1.0"

_MIMETYPES = {"pdf": "application/pdf", "png": "image/png", "jpeg": "image/jpeg", "tiff": "image/tiff"}
_HEX = re.compile(r"[0-9a-f]+")
#: shortest doc_id prefix accepted (git's default abbreviation length)
MIN_PREFIX = 4


class ExportError(ValueError):
    """The document cannot be exported: not found, ambiguous, or without content. Says why."""


def _check_schema(wh: Warehouse) -> None:
    if not wh.exists():
        raise ExportError(f"no warehouse at {wh.location}")
    with wh.connect(read_only=True) as con:
        version = current_version(con)
    if version is None:
        raise ExportError(f"{wh.location} is not a dagster-ocr warehouse (no documents table)")
    if version < LATEST_VERSION:
        raise ExportError(
            f"{wh.location} is at schema version {version}, this code reads {LATEST_VERSION}: run "
            f"`dagster-ocr migrate --warehouse {wh.location}` first"
        )


def resolve_document(wh: Warehouse, ref: str) -> str:
    """The doc_id ``ref`` names: a doc_id, a partition key, a unique doc_id prefix, or a file name.

    A file name matches ``documents.file_name`` and every inbox name in ``files`` (the name of a
    byte-identical duplicate finds the document it duplicates). Raises ``ExportError`` saying what
    matched when nothing or more than one document does.
    """
    _check_schema(wh)
    ref = ref.strip()
    if not ref:
        raise ExportError("no document named (give a doc_id, a doc_id prefix or a file name)")
    found = wh.query("SELECT doc_id FROM documents WHERE doc_id = ?", [ref.lower()])
    if len(found):
        return str(found["doc_id"].iat[0])
    keyed = partition_keys.recorded_doc_id(wh, ref)  # the name the Dagster UI shows
    if keyed is not None:
        return keyed
    by_name = wh.query(
        """
        SELECT DISTINCT d.doc_id, d.file_name FROM documents d
        WHERE d.file_name = ?
           OR d.doc_id IN (SELECT f.doc_id FROM files f WHERE f.file_name = ? OR f.path = ?)
        ORDER BY d.file_name, d.doc_id
        """,
        [PurePath(ref).name if "/" in ref else ref, ref, ref],
    )
    if len(by_name) == 1:
        return str(by_name["doc_id"].iat[0])
    if len(by_name) > 1:
        listed = ", ".join(f"{r.doc_id[:12]} ({r.file_name})" for r in by_name.itertuples())
        raise ExportError(
            f"{len(by_name)} documents are named {ref!r}: {listed}; name one by its doc_id (prefix)"
        )
    prefix = ref.lower()
    if _HEX.fullmatch(prefix) and len(prefix) < 64:
        if len(prefix) < MIN_PREFIX:
            raise ExportError(f"doc_id prefix {ref!r} is too short: give at least {MIN_PREFIX} characters")
        hits = wh.query(
            "SELECT doc_id, file_name FROM documents WHERE starts_with(doc_id, ?) ORDER BY doc_id",
            [prefix],
        )
        if len(hits) == 1:
            return str(hits["doc_id"].iat[0])
        if len(hits) > 1:
            listed = ", ".join(f"{r.doc_id[:12]} ({r.file_name})" for r in hits.head(10).itertuples())
            raise ExportError(f"doc_id prefix {ref!r} matches {len(hits)} documents: {listed}")
    raise ExportError(f"no document {ref!r} in {wh.location} (not a doc_id, a doc_id prefix or a file name)")


_DOCUMENT_SQL = {
    "document": "SELECT doc_id, file_name, kind, status, error, n_pages, title, issuer, doc_type, "
    "period_end, fiscal_year, language FROM documents WHERE doc_id = ?",
    "pages": "SELECT page_index, page_label, width, height, text_source FROM pages WHERE doc_id = ? "
    "ORDER BY page_index",
    "sections": "SELECT section_id, parent_id, level, title, number, page_index, page_label, ordinal "
    "FROM sections WHERE doc_id = ? ORDER BY ordinal",
    "blocks": "SELECT reading_order, kind, source_id, section_id, heading_level, page_index, page_label, "
    "last_page_index, text, x0, y0, x1, y1 FROM document_blocks WHERE doc_id = ? ORDER BY reading_order",
    "paragraphs": "SELECT paragraph_id, kind FROM paragraphs WHERE doc_id = ?",
    "tables": "SELECT table_id, n_rows, n_cols, header_rows, caption, title, units, column_headers, "
    "row_group, pages, merge_kind FROM tables WHERE doc_id = ?",
    "cells": "SELECT table_id, row_idx, col_idx, row_span, col_span, text, is_header, page_index, "
    "x0, y0, x1, y1 FROM table_cells WHERE doc_id = ? ORDER BY table_id, row_idx, col_idx",
}


def _frames(wh: Warehouse, doc_id: str) -> dict[str, pd.DataFrame]:
    frames = wh.read(_DOCUMENT_SQL, [doc_id])
    if not len(frames["document"]):
        raise ExportError(f"no document {doc_id} in {wh.location}")
    doc = frames["document"].iloc[0]
    if doc["status"] == "failed":
        raise ExportError(f"{doc['file_name']} could not be parsed, nothing to export: {doc['error']}")
    return frames


def _num(value: Any) -> float | None:
    if value is None:
        return None
    value = float(value)
    return None if math.isnan(value) else round(value, 2)


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


# ------------------------------------------------------------------------------------ Markdown

_LEADING_MARKUP = re.compile(r"^(#|>|\||[-+*]\s|=+\s*$|`{3})")


def _markdown_paragraph(text: str) -> str:
    text = re.sub(r"\n\s*\n+", "\n", text.strip())  # a blank line would end the paragraph
    if text.startswith("• "):
        return "- " + text[2:]  # the paragraph stage's list marker, as a Markdown list item
    return "\\" + text if _LEADING_MARKUP.match(text) else text


def markdown_blocks(blocks: pd.DataFrame) -> list[str]:
    """The Markdown of each block, in reading order (``document_markdown`` joins them)."""
    out: list[str] = []
    for b in blocks.itertuples():
        text = str(b.text or "")
        if b.kind == "heading":
            level = int(b.heading_level) if not pd.isna(b.heading_level) else 1
            out.append("#" * min(max(level, 1), 6) + " " + " ".join(text.split()))
        elif b.kind == "table":
            out.append(text)
        else:
            out.append(_markdown_paragraph(text))
    return [md for md in out if md.strip()]


def document_markdown(wh: Warehouse, doc_id: str) -> str:
    """The document as Markdown, in reading order (see the module docstring)."""
    frames = _frames(wh, doc_id)
    return "\n\n".join(markdown_blocks(frames["blocks"])) + "\n"


# ---------------------------------------------------------------------------------------- JSON


def _bbox(x0: Any, y0: Any, x1: Any, y1: Any) -> dict[str, Any] | None:
    box = [_num(v) for v in (x0, y0, x1, y1)]
    if any(v is None for v in box):
        return None
    return {"l": box[0], "t": box[1], "r": box[2], "b": box[3], "coord_origin": "TOPLEFT"}


def _prov(page_index: int, labels: dict[int, str], bbox: dict[str, Any] | None) -> dict[str, Any]:
    return {
        "page_no": page_index + 1,
        "page_index": page_index,
        "page_label": labels.get(page_index, str(page_index + 1)),
        "bbox": bbox,
    }


_DOCLING_LABELS = {"heading": "section_header", "list_item": "list_item", "table": "table"}


def document_json(wh: Warehouse, doc_id: str) -> dict[str, Any]:
    """The document as a JSON-ready dict in a docling-like shape (see the module docstring)."""
    frames = _frames(wh, doc_id)
    doc = frames["document"].iloc[0]
    pages = frames["pages"]
    labels = dict(zip(pages["page_index"].astype(int), pages["page_label"].astype(str), strict=False))
    paragraph_kinds = dict(
        zip(frames["paragraphs"]["paragraph_id"], frames["paragraphs"]["kind"], strict=False)
    )
    tables = {str(t.table_id): t for t in frames["tables"].itertuples()}
    cells = frames["cells"]

    body: list[dict[str, Any]] = []
    for i, b in enumerate(frames["blocks"].itertuples()):
        kind = str(b.kind)
        page = int(b.page_index)
        item: dict[str, Any] = {
            "self_ref": f"#/body/{i}",
            "reading_order": int(b.reading_order),
            "kind": kind,
            "label": _DOCLING_LABELS.get(
                kind if kind != "paragraph" else str(paragraph_kinds.get(b.source_id) or ""), "text"
            ),
            "source_id": str(b.source_id),
            "section_id": _str(b.section_id),
            "text": str(b.text or ""),
            "prov": [_prov(page, labels, _bbox(b.x0, b.y0, b.x1, b.y1))],
            "last_page_index": int(b.last_page_index),
        }
        if kind == "heading":
            item["level"] = int(b.heading_level) if not pd.isna(b.heading_level) else 1
        if kind == "table":
            table = _table_item(tables.get(str(b.source_id)), cells, str(b.source_id), page, labels)
            item["prov"] += table.pop("later_prov")
            item.update(table)
        body.append(item)

    items_of: dict[str | None, list[str]] = {}
    for item in body:
        items_of.setdefault(item["section_id"], []).append(item["self_ref"])
    sections = frames["sections"]
    children: dict[str, list[str]] = {}
    for s in sections.itertuples():
        if isinstance(s.parent_id, str):
            children.setdefault(s.parent_id, []).append(str(s.section_id))
    return {
        "schema_name": "dagster_ocr.DocumentExport",
        "version": JSON_VERSION,
        "name": PurePath(str(doc["file_name"])).stem,
        "origin": {
            "filename": str(doc["file_name"]),
            "binary_hash": str(doc["doc_id"]),
            "mimetype": _MIMETYPES.get(str(doc["kind"]), "application/octet-stream"),
        },
        "status": str(doc["status"]),
        "error": _str(doc["error"]),
        "title": _str(doc["title"]) or None,
        # what the document is (dagster_ocr.docinfo): None where its first pages do not say
        "issuer": _str(doc["issuer"]) or None,
        "doc_type": _str(doc["doc_type"]) or None,
        "period_end": _str(doc["period_end"]) or None,
        "fiscal_year": int(doc["fiscal_year"]) if pd.notna(doc["fiscal_year"]) else None,
        "language": _str(doc["language"]) or None,
        "pages": [
            {
                "page_no": int(p.page_index) + 1,
                "page_index": int(p.page_index),
                "label": str(p.page_label),
                "size": {"width": _num(p.width), "height": _num(p.height)},
                "text_source": _str(p.text_source),
            }
            for p in pages.itertuples()
        ],
        "sections": [
            {
                "section_id": str(s.section_id),
                "parent_id": _str(s.parent_id),
                "level": int(s.level) if not pd.isna(s.level) else None,
                "title": str(s.title or ""),
                "number": _str(s.number) or None,
                "page_index": int(s.page_index),
                "page_label": _str(s.page_label),
                "children": children.get(str(s.section_id), []),
                "items": items_of.get(str(s.section_id), []),
            }
            for s in sections.itertuples()
        ],
        # items before the first heading belong to no section
        "front_items": items_of.get(None, []),
        "body": body,
    }


def _table_item(
    table: Any, cells: pd.DataFrame, table_id: str, first_page: int, labels: dict[int, str]
) -> dict[str, Any]:
    tc = cells[cells["table_id"] == table_id]
    table_cells = [
        {
            "text": str(c.text or ""),
            "start_row_offset_idx": int(c.row_idx),
            "end_row_offset_idx": int(c.row_idx) + int(c.row_span or 1),
            "start_col_offset_idx": int(c.col_idx),
            "end_col_offset_idx": int(c.col_idx) + int(c.col_span or 1),
            "row_span": int(c.row_span or 1),
            "col_span": int(c.col_span or 1),
            "column_header": bool(c.is_header),
            "page_index": int(c.page_index),
            "bbox": _bbox(c.x0, c.y0, c.x1, c.y1),
        }
        for c in tc.itertuples()
    ]
    out: dict[str, Any] = {
        "data": {
            "num_rows": int(table.n_rows) if table is not None else 0,
            "num_cols": int(table.n_cols) if table is not None else 0,
            "header_rows": int(table.header_rows or 0) if table is not None else 0,
            "table_cells": table_cells,
        },
        "caption": _str(table.caption) if table is not None else None,
        # what the page prints around it (tables.statement): title, units, headings over columns
        "title": _str(table.title) if table is not None else None,
        "units": _str(table.units) if table is not None else None,
        "column_headers": [str(h) for h in table.column_headers]
        if table is not None and isinstance(table.column_headers, list | tuple | np.ndarray)
        else [],
        "row_group": _str(table.row_group) if table is not None else None,
        "merge_kind": _str(table.merge_kind) if table is not None else None,
    }
    # a table merged across pages: one provenance entry per later page, boxed around its cells there
    later = tc[(tc["page_index"] != first_page) & tc["x0"].notna()]
    out["later_prov"] = [
        _prov(int(page), labels, _bbox(g["x0"].min(), g["y0"].min(), g["x1"].max(), g["y1"].max()))
        for page, g in later.groupby("page_index", sort=True)
    ]
    return out
