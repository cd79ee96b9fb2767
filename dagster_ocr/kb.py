"""The knowledge base: searchable chunks, each citing the printed page it came from.

Chunks are built from the warehouse rows of a document that passed the quality gate: one chunk
per paragraph run inside a section (up to ``max_chars``) and one per table (its header with each
block of rows), so a hit can always be cited as "file, p. <label>, <section path>".

:func:`search` ranks chunks with Okapi BM25. DuckDB 2.0 cannot load its fts extension offline
(FACTS.md), so the index is built here in Python from ``kb_chunks`` and cached per warehouse
file version; it is rebuilt only when the file changes.
"""

from __future__ import annotations

import math
import re
import threading
import unicodedata
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field

from dagster_ocr.warehouse import Warehouse


class KbSettings(BaseModel):
    """Knowledge-base chunking."""

    model_config = ConfigDict(extra="forbid")

    max_chars: int = Field(1200, description="Largest chunk of paragraph text, in characters.")
    table_rows_per_chunk: int = Field(20, description="Table rows per chunk (the header repeats in each).")
    split_at_pages: bool = Field(
        True,
        description="Start a new paragraph chunk on each new page, so a chunk cites one printed page "
        "(a paragraph that itself runs onto the next page still cites both).",
    )
    bm25_k1: float = Field(
        1.2, description="BM25 term-frequency saturation (higher: repeated terms count more)."
    )
    bm25_b: float = Field(0.75, description="BM25 length normalisation, 0 (none) to 1 (full).")
    search_limit: int = Field(5, description="Chunks a search returns by default.")
    snippet_chars: int = Field(160, description="Length of the text excerpt shown with each search hit.")


def _citation(file_name: str, first: str, last: str, section: str | None) -> str:
    pages = f"p. {first}" if first == last else f"pp. {first}–{last}"
    return f"{file_name}, {pages}" + (f", {section}" if section else "")


def build_chunks(
    file_name: str,
    paragraphs: pd.DataFrame,
    sections: pd.DataFrame,
    tables: pd.DataFrame,
    cells: pd.DataFrame,
    page_labels: dict[int, str],
    settings: KbSettings | None = None,
) -> list[dict[str, Any]]:
    """Chunks for one document, from its warehouse rows."""
    s = settings or KbSettings()
    titles = dict(zip(sections["section_id"], sections["title"], strict=False)) if len(sections) else {}
    parents = dict(zip(sections["section_id"], sections["parent_id"], strict=False)) if len(sections) else {}

    def section_path(section_id: str | None) -> str | None:
        """'2. Services › 2.1 Scope': the section's ancestors' titles, outermost first."""
        names: list[str] = []
        seen: set[str] = set()
        while section_id and section_id in titles and section_id not in seen:
            seen.add(section_id)
            if titles[section_id]:
                names.append(str(titles[section_id]))
            parent = parents.get(section_id)
            section_id = parent if isinstance(parent, str) else None
        return " › ".join(reversed(names)) or None

    label = lambda i: page_labels.get(int(i), str(int(i) + 1))  # noqa: E731
    chunks: list[dict[str, Any]] = []

    def emit(
        kind: str,
        source_id: str,
        section_id: str | None,
        first: int,
        last: int,
        text: str,
        paragraph_ids: list[str] | None = None,
    ) -> None:
        title = titles.get(section_id) if section_id else None
        chunks.append(
            {
                "chunk_id": f"c{len(chunks)}",
                "source_kind": kind,
                "source_id": source_id,
                "section_id": section_id,
                "section_title": title,
                "page_index": first,
                "page_label": label(first),
                "last_page_index": last,
                "last_page_label": label(last),
                "text": text,
                "citation": _citation(file_name, label(first), label(last), section_path(section_id)),
                "paragraph_ids": paragraph_ids or [],
            }
        )

    if len(paragraphs):
        body = paragraphs[paragraphs["kind"] != "heading"].sort_values("reading_order")
        run: list[pd.Series] = []

        def flush() -> None:
            if run:
                text = "\n".join(r.text for r in run)
                last = max(int(r.last_page_index) for r in run)
                ids = [r.paragraph_id for r in run]
                emit("paragraph", ids[0], run[0].section_id, int(run[0].page_index), last, text, ids)
                run.clear()

        for row in body.itertuples():
            size = sum(len(r.text) + 1 for r in run)
            new_page = s.split_at_pages and run and row.page_index != run[-1].page_index
            if run and (
                row.section_id != run[0].section_id or size + len(row.text) > s.max_chars or new_page
            ):
                flush()
            run.append(row)
        flush()

    for t in tables.itertuples() if len(tables) else []:
        tc = cells[cells["table_id"] == t.table_id]
        grid = [["" for _ in range(int(t.n_cols))] for _ in range(int(t.n_rows))]
        row_page: dict[int, int] = {}
        for c in tc.itertuples():
            if c.row_idx < t.n_rows and c.col_idx < t.n_cols:
                grid[c.row_idx][c.col_idx] = re.sub(r"\s+", " ", c.text or "").strip()
                row_page.setdefault(c.row_idx, int(c.page_index))
        header_n = int(t.header_rows or 0)
        header = [" | ".join(r) for r in grid[:header_n]]
        body_rows = list(range(header_n, len(grid))) or [0]
        for start in range(0, len(body_rows), s.table_rows_per_chunk):
            block = body_rows[start : start + s.table_rows_per_chunk]
            lines = ([t.caption] if t.caption else []) + header + [" | ".join(grid[i]) for i in block if grid]
            first = row_page.get(block[0], int(t.first_page_index))
            last = row_page.get(block[-1], int(t.last_page_index))
            emit("table", t.table_id, None, first, last, "\n".join(lines))
    return chunks


def load_document(
    warehouse: Warehouse, doc_id: str, settings: KbSettings | None = None
) -> list[dict[str, Any]]:
    """Build one document's chunks from its warehouse rows and replace its ``kb_chunks``.

    The caller decides whether the document may be loaded (the quality gate); this only loads.
    """
    sql = "SELECT * FROM {} WHERE doc_id = ?"
    doc = warehouse.query(sql.format("documents"), [doc_id]).iloc[0]
    frames = {
        t: warehouse.query(sql.format(t), [doc_id])
        for t in ("paragraphs", "sections", "tables", "table_cells")
    }
    pages = warehouse.query("SELECT page_index, page_label FROM pages WHERE doc_id = ?", [doc_id])
    chunks = build_chunks(
        doc["file_name"],
        frames["paragraphs"],
        frames["sections"],
        frames["tables"],
        frames["table_cells"],
        dict(zip(pages["page_index"], pages["page_label"], strict=False)),
        settings,
    )
    warehouse.write_kb(doc_id, chunks)
    return chunks


# ------------------------------------------------------------------------------------------ search

_WORD = re.compile(r"[^\W_]+")
# scripts written without spaces: every character is a token (unigrams), so a query in Chinese
# or Japanese matches without a segmenter
_UNSPACED = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]")


def tokenize(text: str) -> list[str]:
    """Search tokens: NFKC-folded, lower-cased runs of letters and digits; CJK split per character."""
    out: list[str] = []
    for word in _WORD.findall(unicodedata.normalize("NFKC", text or "").casefold()):
        if _UNSPACED.search(word):
            # keep Latin/digit runs whole, split the unspaced script into characters
            out.extend(t for t in re.split(f"({_UNSPACED.pattern})", word) if t)
        else:
            out.append(word)
    return out


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One ranked chunk with what is needed to cite it."""

    rank: int
    score: float
    doc_id: str
    file_name: str
    chunk_id: str
    source_kind: str
    source_id: str
    section_title: str | None
    page_index: int
    page_label: str
    last_page_label: str
    citation: str
    text: str
    snippet: str


@dataclass(slots=True)
class _Index:
    chunks: pd.DataFrame
    postings: dict[str, list[tuple[int, int]]]  # term -> [(chunk row, term frequency)]
    lengths: list[int]
    avg_length: float


_INDEX_LOCK = threading.Lock()
_INDEXES: dict[tuple[str, int, int], _Index] = {}


def _load_index(wh: Warehouse) -> _Index:
    """The BM25 index of every loaded chunk of a parsed document, cached per file version."""
    stat = wh.path.stat()
    key = (str(wh.path.resolve()), stat.st_mtime_ns, stat.st_size)
    with _INDEX_LOCK:
        if key in _INDEXES:
            return _INDEXES[key]
    chunks = wh.query(
        """
        SELECT k.doc_id, d.file_name, k.chunk_id, k.source_kind, k.source_id, k.section_title,
               k.page_index, k.page_label, k.last_page_label, k.citation, k.text
        FROM kb_chunks k JOIN documents d USING (doc_id)
        WHERE d.status = 'parsed'
        ORDER BY k.doc_id, k.chunk_id
        """
    )
    postings: dict[str, list[tuple[int, int]]] = {}
    lengths: list[int] = []
    for row, text in enumerate(chunks["text"].tolist()):
        # the section path is part of what a chunk is about ("Fees and Payment" finds clause 4.x)
        terms = tokenize(f"{chunks['section_title'].iat[row] or ''} {text}")
        lengths.append(len(terms))
        for term, tf in Counter(terms).items():
            postings.setdefault(term, []).append((row, tf))
    index = _Index(chunks, postings, lengths, (sum(lengths) / len(lengths)) if lengths else 0.0)
    with _INDEX_LOCK:
        # one version per file is enough: drop the stale ones
        for old in [k for k in _INDEXES if k[0] == key[0]]:
            del _INDEXES[old]
        _INDEXES[key] = index
    return index


def bm25_scores(index: _Index, query_terms: list[str], k1: float, b: float) -> dict[int, float]:
    """Okapi BM25 score of every chunk that holds at least one query term.

    idf = ln(1 + (N - df + 0.5) / (df + 0.5)) (the non-negative Lucene form): a term found in
    every chunk adds almost nothing, and never a negative amount.
    """
    n = len(index.lengths)
    scores: dict[int, float] = {}
    for term in set(query_terms):
        posting = index.postings.get(term)
        if not posting:
            continue
        idf = math.log(1.0 + (n - len(posting) + 0.5) / (len(posting) + 0.5))
        for row, tf in posting:
            norm = k1 * (1.0 - b + b * index.lengths[row] / (index.avg_length or 1.0))
            scores[row] = scores.get(row, 0.0) + idf * tf * (k1 + 1.0) / (tf + norm)
    return scores


def _snippet(text: str, terms: list[str], width: int) -> str:
    flat = re.sub(r"\s+", " ", text).strip()
    folded = flat.casefold()
    hits = [folded.find(t) for t in terms if t and folded.find(t) >= 0]
    start = max(0, min(hits) - width // 4) if hits else 0
    piece = flat[start : start + width]
    return ("…" if start > 0 else "") + piece + ("…" if start + width < len(flat) else "")


def search(
    warehouse: Warehouse | str | Path,
    query: str,
    limit: int | None = None,
    settings: KbSettings | None = None,
    doc_ids: list[str] | None = None,
) -> list[SearchHit]:
    """The chunks that best match ``query`` (BM25), best first, each with its citation.

    Only documents whose status is ``parsed`` are searched (quarantined ones never reach
    ``kb_chunks``, and this guards a stale row). ``doc_ids`` narrows the search to some documents.
    """
    s = settings or KbSettings()
    wh = warehouse if isinstance(warehouse, Warehouse) else Warehouse(warehouse)
    terms = tokenize(query)
    if not terms or not wh.path.exists():
        return []
    index = _load_index(wh)
    scores = bm25_scores(index, terms, s.bm25_k1, s.bm25_b)
    chunks = index.chunks
    if doc_ids is not None:
        allowed = set(doc_ids)
        scores = {r: v for r, v in scores.items() if chunks["doc_id"].iat[r] in allowed}
    # ties broken by document and chunk order, so results are stable
    ranked = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[: limit or s.search_limit]
    hits = []
    for rank, (row, score) in enumerate(ranked, start=1):
        c = chunks.iloc[row]
        hits.append(
            SearchHit(
                rank=rank,
                score=round(score, 4),
                doc_id=str(c["doc_id"]),
                file_name=str(c["file_name"]),
                chunk_id=str(c["chunk_id"]),
                source_kind=str(c["source_kind"]),
                source_id=str(c["source_id"]),
                section_title=None if pd.isna(c["section_title"]) else str(c["section_title"]),
                page_index=int(c["page_index"]),
                page_label=str(c["page_label"]),
                last_page_label=str(c["last_page_label"]),
                citation=str(c["citation"]),
                text=str(c["text"]),
                snippet=_snippet(str(c["text"]), terms, s.snippet_chars),
            )
        )
    return hits


def format_hits(hits: list[SearchHit]) -> str:
    """Search hits as the CLI prints them: rank, score, citation, then the excerpt."""
    if not hits:
        return "(no matching chunks)"
    return "\n\n".join(f"{h.rank}. [{h.score:.2f}] {h.citation}\n   {h.snippet}" for h in hits)
