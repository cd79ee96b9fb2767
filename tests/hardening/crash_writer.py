"""Child process of the crash-safety test: writes synthetic documents into a warehouse forever.

``python crash_writer.py WAREHOUSE N_DOCS SEED [once]``: picks documents at random and replaces
each one's rows (``Warehouse.write_document``) then its knowledge-base chunks (``write_kb``),
printing a line after each write, until killed; with ``once`` it writes every document once and
exits. Row counts are a function of the document number, so the parent can tell whole from half.
"""

from __future__ import annotations

import random
import sys

from dagster_ocr.model import (
    DocStatus,
    ExtractedDocument,
    Line,
    Page,
    Paragraph,
    ParagraphResult,
    SourceDocument,
)
from dagster_ocr.warehouse import Warehouse

LINES_PER_PAGE = 40


def expected(k: int) -> dict[str, int]:
    """Rows document ``k`` has in each table when wholly present."""
    pages = 1 + k % 4
    return {
        "documents": 1,
        "pages": pages,
        "lines": pages * LINES_PER_PAGE,
        "paragraphs": 5 + k % 7,
        "kb_chunks": 3 + k % 5,
    }


def doc_id(k: int) -> str:
    return f"{k:064x}"


def document(k: int) -> tuple[ExtractedDocument, ParagraphResult, list[dict]]:
    n = expected(k)
    source = SourceDocument(doc_id(k), f"doc {k} x'); DROP TABLE pages; --.pdf", "/in", "/store", 1, "pdf")
    pages = [
        Page(
            index=i,
            width=595.0,
            height=842.0,
            lines=[
                Line(text=f"page {i} line {j} " * 8, bbox=(0.0, 12.0 * j, 500.0, 12.0 * j + 10))
                for j in range(LINES_PER_PAGE)
            ],
        )
        for i in range(n["pages"])
    ]
    paras = ParagraphResult(
        paragraphs=[
            Paragraph(f"p{i}", None, i, 0, f"paragraph {i} of document {k} " * 20, (0.0, 0.0, 1.0, 1.0))
            for i in range(n["paragraphs"])
        ]
    )
    chunks = [
        {
            "chunk_id": f"c{i}",
            "source_kind": "paragraph",
            "source_id": f"p{i}",
            "page_index": 0,
            "page_label": "1",
            "text": f"chunk {i} " * 30,
            "citation": f"doc {k}, p. 1",
        }
        for i in range(n["kb_chunks"])
    ]
    doc = ExtractedDocument(source, DocStatus.PARSED, pages=pages, n_pages=n["pages"], title=f"doc {k}")
    return doc, paras, chunks


def main() -> None:
    path, n_docs, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    once = len(sys.argv) > 4 and sys.argv[4] == "once"
    wh = Warehouse(path)
    rng = random.Random(seed)
    order = list(range(n_docs)) if once else iter(lambda: rng.randrange(n_docs), None)
    for k in order:
        doc, paras, chunks = document(k)
        wh.write_document(doc, [], [], paras)
        print(f"doc {k}", flush=True)
        wh.write_kb(doc_id(k), chunks)
        print(f"kb {k}", flush=True)


if __name__ == "__main__":
    main()
