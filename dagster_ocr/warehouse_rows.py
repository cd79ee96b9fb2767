"""A parse as warehouse rows: (table, rows) batches for every contract table of one document,
built from the document model (``iter_document_rows``), a batch at a time.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

from dagster_ocr import __version__
from dagster_ocr.blocks import TablePlacement, block_sequence, place_tables, table_markdown, table_text
from dagster_ocr.conservation import TextAccountant
from dagster_ocr.docinfo import describe
from dagster_ocr.model import ExtractedDocument, PageLabel, Paragraph, ParagraphResult, Table
from dagster_ocr.warehouse_writes import _INSERT_BATCH, _now

#: the first pages a document's title, issuer, type and period are read from (docinfo)
_INFO_PAGES = 3


def _paragraph_row(
    doc_id: str,
    b: Paragraph | Table,
    reading_order: int,
    placements: dict[str, TablePlacement],
    page_label: Callable[[int], str],
) -> dict[str, Any]:
    """A ``paragraphs`` row: a paragraph or heading, or a table as its plain text (kind 'table',
    ``paragraph_id`` its table_id, ``continued`` when merged across pages)."""
    if isinstance(b, Table):
        return {
            "doc_id": doc_id,
            "paragraph_id": b.table_id,
            "section_id": placements[b.table_id].section_id,
            "reading_order": reading_order,
            "page_index": b.first_page_index,
            "page_label": page_label(b.first_page_index),
            "last_page_index": b.last_page_index,
            "text": table_text(b.grid(), b.heads),
            "x0": b.bbox[0],
            "y0": b.bbox[1],
            "x1": b.bbox[2],
            "y1": b.bbox[3],
            "flags": [],
            "kind": "table",
            "continued": b.last_page_index > b.first_page_index,
        }
    return {
        "doc_id": doc_id,
        "paragraph_id": b.paragraph_id,
        "section_id": b.section_id,
        "reading_order": reading_order,
        "page_index": b.page_index,
        "page_label": b.page_label or page_label(b.page_index),
        "last_page_index": b.last_page_index if b.last_page_index >= 0 else b.page_index,
        "text": b.text,
        "x0": b.bbox[0],
        "y0": b.bbox[1],
        "x1": b.bbox[2],
        "y1": b.bbox[3],
        "flags": list(b.flags),
        "kind": b.kind,
        "continued": b.continued,
    }


def iter_document_rows(
    doc: ExtractedDocument,
    labels: Sequence[PageLabel],
    tables: Sequence[Table],
    paragraphs: ParagraphResult,
    document_extra: dict[str, Any] | None = None,
    batch_size: int = _INSERT_BATCH,
) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """(table, rows) for every contract table of one document, at most ``batch_size`` rows at a time.

    The pages are read once, one at a time (they may come back from disk: see pagestore); the
    ``documents`` row comes last, as it counts what the pages held. ``document_extra`` adds
    columns to it.
    """
    doc_id = doc.source.doc_id
    label_of = {lab.page_index: lab for lab in labels}

    def page_label(i: int) -> str:
        lab = label_of.get(i)
        return lab.label if lab else str(i + 1)

    pages: list[dict[str, Any]] = []
    lines: list[dict[str, Any]] = []
    decode_stats: list[dict[str, Any]] = []
    n_ocr = 0
    # what each page holds, whether its content stream is broken, why an empty page is empty
    page_content, damaged, blank_reasons = doc.page_content, doc.damaged_pages, doc.blank_reasons
    # where every character of each page went (paragraph, heading, cell, furniture, lost)
    accountant = TextAccountant(paragraphs, tables)
    first_pages: list[list[tuple[str, float]]] = []  # what the document is (docinfo) is read from these
    for page in doc.pages:
        accountant.page(page)
        if len(first_pages) < _INFO_PAGES:
            first_pages.append([(ln.text, ln.size if ln.spans else 0.0) for ln in page.lines])
        n_ocr += str(page.text_source) == "ocr"
        if page.decode_stats:
            decode_stats.append(
                {
                    **page.decode_stats,
                    "doc_id": doc_id,
                    "page_index": page.index,
                    "page_label": page_label(page.index),
                }
            )
        lab = label_of.get(page.index)
        pages.append(
            {
                "doc_id": doc_id,
                "page_index": page.index,
                "page_label": page_label(page.index),
                "label_source": str(lab.source) if lab else "physical",
                "label_confidence": lab.confidence if lab else 0.0,
                "text_source": str(page.text_source),
                "engine": page.engine,
                "route_reason": page.route_reason,
                "width": page.width,
                "height": page.height,
                "rotation": page.rotation,
                "image_coverage": page.image_coverage,
                "ocr_confidence": page.ocr_confidence,
                "n_lines": len(page.lines),
                "text": page.text,
                "content": page_content.get(page.index, "text"),
                "content_damage": damaged.get(page.index),
                "blank_reason": blank_reasons.get(page.index),
            }
        )
        # furniture is decided in one place: the paragraph stage (which takes the label stage's
        # page-number line into account)
        furniture = paragraphs.furniture.get(page.index, {})
        for i, line in enumerate(page.lines):
            span = line.spans[0] if line.spans else None
            lines.append(
                {
                    "doc_id": doc_id,
                    "page_index": page.index,
                    "line_index": i,
                    "page_label": page_label(page.index),
                    "text": line.text,
                    "x0": line.bbox[0],
                    "y0": line.bbox[1],
                    "x1": line.bbox[2],
                    "y1": line.bbox[3],
                    "font": span.font if span else "",
                    "size": line.size,
                    "bold": line.bold,
                    "confidence": line.confidence,
                    "furniture": furniture.get(i),
                }
            )
        for table, held in (("pages", pages), ("lines", lines), ("ocr_decode_stats", decode_stats)):
            if len(held) >= batch_size:
                yield table, held[:]
                held.clear()
    yield "pages", pages
    yield "lines", lines
    yield "ocr_decode_stats", decode_stats
    yield (
        "text_conservation",
        [
            {**a.as_row(), "doc_id": doc_id, "page_label": page_label(a.page_index)}
            for a in accountant.finish()
        ],
    )

    yield (
        "sections",
        [
            {
                "doc_id": doc_id,
                "section_id": s.section_id,
                "parent_id": s.parent_id,
                "level": s.level,
                "title": s.title,
                "number": s.number,
                "page_index": s.page_index,
                "page_label": s.page_label or page_label(s.page_index),
                "ordinal": s.ordinal,
            }
            for s in paragraphs.sections
        ],
    )

    # one reading order for headings, paragraphs and tables: a placed table is a paragraphs row of
    # kind 'table' too (dagster_ocr/blocks.py), so the paragraphs read in order are the whole text
    paras = paragraphs.paragraphs
    read_as_text = set(paragraphs.read_as_text)
    placements = place_tables(paras, tables, read_as_text)
    sequence = block_sequence(paras, tables, placements)
    for start in range(0, len(sequence), batch_size):
        yield (
            "paragraphs",
            [
                _paragraph_row(doc_id, b, start + k, placements, page_label)
                for k, b in enumerate(sequence[start : start + batch_size])
            ],
        )
    table_order = {b.table_id: i for i, b in enumerate(sequence) if isinstance(b, Table)}

    # each table's Markdown and its place in that order (the document_blocks view)
    table_rows: list[dict[str, Any]] = []
    cells: list[dict[str, Any]] = []
    for t in tables:
        placed = placements.get(t.table_id)
        table_rows.append(
            {
                "doc_id": doc_id,
                "table_id": t.table_id,
                "first_page_index": t.first_page_index,
                "last_page_index": t.last_page_index,
                "first_page_label": page_label(t.first_page_index),
                "last_page_label": page_label(t.last_page_index),
                "n_rows": t.n_rows,
                "n_cols": t.n_cols,
                "header_rows": t.header_rows,
                "pages": list(t.pages or [t.first_page_index]),
                "merge_kind": t.merge_kind,
                "strategy": t.strategy,
                "caption": t.caption,
                "title": t.title or None,
                "units": t.units or None,
                "column_headers": list(t.column_headers) or None,
                "row_group": t.row_group or None,
                "x0": t.bbox[0],
                "y0": t.bbox[1],
                "x1": t.bbox[2],
                "y1": t.bbox[3],
                "markdown": "\n".join(table_markdown(t.grid(), t.header_rows, t.column_headers)),
                "read_as_text": t.table_id in read_as_text,
                "section_id": placed.section_id if placed else None,
                "precedes_reading_order": table_order.get(t.table_id),
            }
        )
        for c in t.cells:
            bb = c.bbox or (None, None, None, None)
            cells.append(
                {
                    "doc_id": doc_id,
                    "table_id": t.table_id,
                    "row_idx": c.row,
                    "col_idx": c.col,
                    "text": c.text,
                    "page_index": c.page_index,
                    "page_label": page_label(c.page_index),
                    "row_span": c.row_span,
                    "col_span": c.col_span,
                    "is_header": c.is_header,
                    "suspicious": c.suspicious,
                    "x0": bb[0],
                    "y0": bb[1],
                    "x1": bb[2],
                    "y1": bb[3],
                }
            )
        if len(cells) >= batch_size:
            yield "table_cells", cells[:]
            cells.clear()
    yield "tables", table_rows
    yield "table_cells", cells

    src = doc.source
    yield (
        "documents",
        [
            {
                "doc_id": doc_id,
                "file_name": src.file_name,
                "source_path": src.source_path,
                "stored_path": src.stored_path,
                "kind": src.kind,
                "size_bytes": src.size_bytes,
                "n_pages": doc.n_pages,
                "status": str(doc.status),
                "error": doc.error or None,
                **describe(first_pages, {"title": doc.title}).as_row(),
                "n_paragraphs": len(paras),
                "n_tables": len(table_rows),
                "n_ocr_pages": n_ocr,
                "pipeline_version": __version__,
                "parsed_at": _now(),
                "repaired": doc.repaired,
                **(document_extra or {}),
            }
        ],
    )
