"""Searching the knowledge base: BM25, vectors and both fused, each hit cited to its printed page.

:func:`search` ranks chunks with Okapi BM25 from DuckDB's fts extension (``match_bm25``) and
finds the nearest vectors through a vss HNSW index, both in the search file beside the warehouse
(:mod:`dagster_ocr.search_index`), which a search refreshes first when the warehouse changed.
Filters (:class:`DocumentFilter`) narrow it to documents of a type, issuer, year or file name; a
question naming an issuer is answered from that issuer's documents first. ``dagster_ocr.kb``
re-exports these names (``from dagster_ocr.kb import search`` keeps working).
"""

from __future__ import annotations

import dataclasses
import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pandas as pd

from dagster_ocr import embeddings
from dagster_ocr.kb_settings import KbSettings
from dagster_ocr.search_index import SearchIndex, tokenize
from dagster_ocr.warehouse import Warehouse

log = logging.getLogger(__name__)


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
    """``width`` characters of ``text`` around the question's words: the window, starting a quarter
    of its width before one of their occurrences (at a word's start), that holds the most of them,
    each word counted once by its length (words under three letters not at all) and two words side
    by side as the question has them once more, the earliest among equals.

    A table's chunk names its periods in its first lines, so the first word found ("2024") began
    the excerpt at the header, 800 characters above the row that answers ("Total assets | $
    364,980"), which the excerpt then never showed."""
    flat = re.sub(r"\s+", " ", text).strip()
    folded = flat.casefold()
    # at a word's start ("the" is no hit in "Other"); a script written without spaces has no word
    # starts to find, so its characters are matched anywhere
    found = {
        t: [m.start() for m in re.finditer((r"(?<!\w)" if t.isascii() else "") + re.escape(t), folded)][:100]
        for t in set(terms)
        if t
    }
    starts = sorted({max(0, at - width // 4) for ats in found.values() for at in ats})

    # two of the question's words next to each other, as it writes them ("total assets"), weigh
    # again: a statement's header holds "Total current assets" and "2024" as well
    pairs = [f"{a} {b}" for a, b in zip(terms, terms[1:], strict=False) if len(a) >= 3 and len(b) >= 3]

    def weight(start: int) -> int:
        window = folded[start : start + width]
        words = sum(
            len(t) for t, ats in found.items() if len(t) >= 3 and any(start <= a < start + width for a in ats)
        )
        return words + sum(len(pair) - 1 for pair in pairs if pair in window)

    start = max(starts, key=lambda st: (weight(st), -st)) if starts else 0
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
    embedder = embeddings.get_embedder(**s.embedder_args())
    if embedder is None:
        return None
    return index.nearest(con, embedder.embed([query])[0].tolist(), n, doc_ids, s.vector_centring)


def _fuse(
    rankings: list[list[tuple[dict[str, Any], float]]], weights: list[float]
) -> list[tuple[dict[str, Any], float]]:
    """A convex combination of the rankings' scores, each min-max normalised over its own
    candidates (a chunk missing from a ranking scores 0 there), best first.

    BM25 scores and cosine similarities are on scales that do not compare, so each list is first
    mapped to [0, 1] by its own best and worst candidate (Bruch, Gai and Ingber, "An Analysis of
    Fusion Functions for Hybrid Retrieval", ACM TOIS 2023: the normalised convex combination beat
    reciprocal rank fusion, which is what this replaced). Rank fusion with its usual constant (60)
    gave ranks 1 and 5 of one list nearly the same weight (1/61 against 1/65), so a chunk that a
    weak BM25 list merely contained outranked the vectors' best: on questions worded unlike their
    page (bench/kb_questions_paraphrased.json) hybrid fell to 0.57 recall@5, below the vectors
    alone (0.68) and naive MiniLM chunks (0.71). A score keeps how far ahead a list's best is.
    """
    fused: dict[tuple[str, str], list[Any]] = {}
    for ranking, weight in zip(rankings, weights, strict=True):
        if not ranking:
            continue
        scores = [score for _, score in ranking]
        low, span = min(scores), max(scores) - min(scores)
        for chunk, score in ranking:
            key = (str(chunk["doc_id"]), str(chunk["chunk_id"]))
            entry = fused.setdefault(key, [chunk, 0.0])
            entry[1] += weight * ((score - low) / span if span > 0 else 1.0)
    return sorted(((c, v) for c, v in fused.values()), key=lambda cv: -cv[1])


def _pages_first(ranked: list[tuple[dict[str, Any], float]]) -> list[tuple[dict[str, Any], float]]:
    """The ranking with each cited page (range) listed once before any page is listed twice.

    The pages' best chunks keep their order among themselves, then come the pages' second chunks in
    theirs, then the third, ...; a page is a document's cited range (first page, last label). A
    statement or a page of prose makes several chunks whose vectors lie close together, and several
    of them in the top 5 left no room for the next page, which is what an analyst looks for
    (bench/kb_retrieval.py, one document, hybrid MRR tune / check: dev set 0.882 / 0.837 -> 0.887 /
    0.843, paraphrased 0.692 / 0.444 -> 0.710 / 0.455; BENCHMARKS.md, retrieval).
    """
    seen: dict[tuple[str, int, str], int] = {}
    tiers: list[list[tuple[dict[str, Any], float]]] = []
    for chunk, score in ranked:
        key = (str(chunk["doc_id"]), int(chunk["page_index"]), str(chunk["last_page_label"]))
        tier = seen.get(key, 0)
        seen[key] = tier + 1
        if tier == len(tiers):
            tiers.append([])
        tiers[tier].append((chunk, score))
    return [hit for tier in tiers for hit in tier]


class SearchError(ValueError):
    """A search that cannot be run as asked (no words, a filter no document matches): its message
    says why, for the CLI and the UI to show instead of a traceback."""


@dataclass(frozen=True, slots=True)
class DocumentFilter:
    """Which documents a search looks in; every field given must match (case-insensitive
    substring for text, exact for the year)."""

    doc_type: str | None = None  # "10-K", "contract", ...
    issuer: str | None = None  # "Apple", "tesla, inc."
    fiscal_year: int | None = None  # a 10-K's fiscal year; a 10-Q's or an 8-K's calendar year
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


#: words of a company name that say nothing about which company it is (a web domain's "com" too:
#: "Amazon.com, Inc." is named "Amazon")
_LEGAL_WORDS = frozenset(
    "inc incorporated corp corporation company co ltd limited llc plc ag se gmbh sa nv bv spa ab holdings "
    "holding group the and of com".split()
)


#: a document's year in SQL: its fiscal year, else the year of its period's end or date (a 10-Q's
#: quarter, an 8-K's date of report), which is not always the issuer's fiscal year
DOCUMENT_YEAR = "coalesce(fiscal_year, try_cast(left(period_end, 4) AS INTEGER))"
#: the parsed documents of some issuers (a parameter) with their year; built once from constants
_ISSUERS_DOCUMENTS = (
    f"SELECT doc_id, {DOCUMENT_YEAR} AS year FROM documents WHERE status = 'parsed' "
    "AND issuer IN (SELECT unnest(?::VARCHAR[]))"
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
        sql.append(f"AND {DOCUMENT_YEAR} = ?")
        params.append(int(f.fiscal_year))
    if doc_ids is not None:
        sql.append("AND doc_id IN (SELECT unnest(?::VARCHAR[]))")
        params.append(list(doc_ids))
    return wh.query(" ".join(sql), params)["doc_id"].astype(str).tolist()


def named_issuers(query: str, issuers: list[str]) -> list[str]:
    """The issuers a question names: those whose distinctive words all appear in it ("What was
    Tesla's capital expenditure in 2023?" names "Tesla, Inc."; legal-form words do not count).

    Where it names none so, those it calls by one capitalised word of their name that no other
    issuer's name has: analysts say "Costco", "Meta" and "Cisco" for "Costco Wholesale
    Corporation", "Meta Platforms, Inc." and "Cisco Systems, Inc.". Capitalised, as a name is
    written: a word of a name is often a common word too ("General", "Bank"), read in lower case
    it names nobody, and a name said in full takes precedence."""
    words = set(tokenize(query))
    names = {issuer: {w for w in tokenize(issuer) if w not in _LEGAL_WORDS} for issuer in issuers}
    named = [issuer for issuer, name in names.items() if name and name <= words]
    if named:
        return named
    capitalised = set(tokenize(" ".join(re.findall(r"(?<!\w)[A-Z]\w*", query))))
    owners: dict[str, set[str]] = {}
    for issuer, name in names.items():
        for w in name:
            owners.setdefault(w, set()).add(issuer)
    return [
        issuer
        for issuer, name in names.items()
        if any(w in capitalised and len(owners[w]) == 1 for w in name)
    ]


def named_documents(wh: Warehouse, query: str, doc_ids: list[str] | None) -> list[str]:
    """The parsed documents (among ``doc_ids``) of the issuers ``query`` names, narrowed to those of
    the year it names when some are (``DOCUMENT_YEAR``); empty when it names none.
    Reads the distinct issuers, not every document, so its cost follows the number of companies,
    not of documents."""
    try:
        issuers = wh.query(
            "SELECT DISTINCT issuer FROM documents WHERE status = 'parsed' AND issuer IS NOT NULL"
        )["issuer"].tolist()
    except Exception:  # a warehouse from before schema 9 (read-only, not migrated): no issuers
        return []
    named = named_issuers(query, issuers)
    if not named:
        return []
    docs = wh.query(_ISSUERS_DOCUMENTS, [named])
    if doc_ids is not None:
        docs = docs[docs["doc_id"].isin(doc_ids)]
    years = {int(w) for w in tokenize(query) if w.isdigit() and len(w) == 4}
    of_year = docs[docs["year"].isin(years)] if years else docs.iloc[:0]
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

    ``mode`` (default: the settings' ``search_mode``, hybrid) is ``bm25`` (words), ``vector``
    (cosine similarity of all-MiniLM-L6-v2 embeddings) or ``hybrid`` (both, their normalised scores
    combined: :func:`_fuse`).
    ``vector`` and ``hybrid`` fall back to BM25, with a logged warning, when the embedding model
    is not installed or no chunk has been embedded; each hit's ``mode`` says which ranking it came from.

    Only documents whose status is ``parsed`` are searched (quarantined ones never reach
    ``kb_chunks``, and this guards a stale row). ``doc_ids`` narrows the search to some documents,
    ``where`` to those of a type, issuer, fiscal year or file name (:class:`DocumentFilter`). With
    ``prefer_named``, a question that names the issuer of one or more of the documents searched
    (and a fiscal year) gets their chunks first (:func:`named_documents`).

    ``settings`` None searches with the defaults (``KbSettings()``): a query API, for the CLI's
    ``search`` and for scripts; the pipeline never calls it.

    Raises :class:`SearchError` for a question without words and a filter no document matches.
    """
    s = KbSettings() if settings is None else settings
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
    # with pages first, a page's further chunks give way to other pages' chunks further down
    pool = max(n, s.hybrid_candidates) if s.pages_first else n
    index = SearchIndex(wh, s.fts_stemmer)
    with index.connection() as con:
        if mode in ("vector", "hybrid"):
            k = pool if mode == "vector" else s.hybrid_candidates
            vector = _vector_ranked(index, con, query, s, doc_ids, k)
            if vector is not None and mode == "vector":
                ranked, used = vector, "vector"
            elif vector is not None:
                words = _bm25_ranked(index, con, terms, s, doc_ids, s.hybrid_candidates) if terms else []
                weights = [1.0 - s.hybrid_vector_weight, s.hybrid_vector_weight]
                ranked, used = _fuse([words, vector], weights), "hybrid"
        if ranked is None:
            if not terms:
                return []
            ranked = _bm25_ranked(index, con, terms, s, doc_ids, pool)
    if s.pages_first:
        ranked = _pages_first(ranked)
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
