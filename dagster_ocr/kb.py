"""The knowledge base: searchable chunks, each citing the printed page it came from.

Chunks are built from the reading-order sequence (the ``document_blocks`` view, see
:mod:`dagster_ocr.blocks`) of a document that passed the quality gate: one chunk per paragraph run
inside a section (up to ``max_chars``) and one per table (its header with each block of rows),
where the table sits in the text, so a hit can always be cited as "file, p. <label>, <section path>".

Their vectors: :mod:`dagster_ocr.kb_vectors`; search: :mod:`dagster_ocr.kb_search` (its names are
re-exported here: ``from dagster_ocr.kb import search``); settings: :mod:`dagster_ocr.kb_settings`.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Any

import pandas as pd

from dagster_ocr import kb_vectors
from dagster_ocr.blocks import markdown_row
from dagster_ocr.kb_search import (  # noqa: F401 - the search API, re-exported
    DocumentFilter,
    SearchError,
    SearchHit,
    format_hits,
    named_documents,
    named_issuers,
    search,
)
from dagster_ocr.kb_settings import STRAY_CHARS, KbSettings
from dagster_ocr.search_index import tokenize  # noqa: F401 - re-exported: callers tokenize queries as search does
from dagster_ocr.warehouse import Warehouse

log = logging.getLogger(__name__)

#: the longest line read as a statement's row label between two parts of its table (a printed
#: line of a row's length; a paragraph is longer)
LABEL_CHARS = 120
#: the rows of figures a table chunk holds before a row group's label row may open the next chunk
GROUP_ROWS = 3
_CELL_BAR = re.compile(r"(?<!\\)\|")  # a Markdown cell boundary (not an escaped "\|" in a cell)


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
    settings: KbSettings,
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
    s = settings
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

    def flush(table: Any = None, whole: bool = False) -> list[Any]:
        """Chunk the paragraph run; ``table``: the table block that ends it.

        Lines shorter than :data:`STRAY_CHARS` are no passage of their own (alone, a chunk's
        vector is its context's and matches any question about the document). Those right above
        the table, on its page and in its section (its lead-in, "(in millions)", a header line
        printed above the grid), are returned for the table's first chunk; a short run left otherwise
        is read with the chunk before it where that is in its section and on its page. ``whole``:
        the table goes on with the table above it (:func:`_goes_on`), the whole run is its row
        labels."""
        nonlocal above
        lead: list[Any] = []
        heading = about.get(str(table.source_id), "") if table is not None else ""
        while (
            table is not None
            and run
            and (whole or len(run[-1].text) < STRAY_CHARS or _told(run[-1].text, heading))
            and _section(run[-1]) == _section(table)
            and int(run[-1].page_index) == int(run[-1].last_page_index) == int(table.page_index)
        ):
            lead.insert(0, run.pop())
        if run:
            above = None  # text between: the next table does not go on with the last one
            text = "\n".join(r.text for r in run)
            first, last = int(run[0].page_index), max(int(r.last_page_index) for r in run)
            ids, section = [r.source_id for r in run], _section(run[0])
            run.clear()
            before = chunks[-1] if chunks else None
            if (
                len(text) < STRAY_CHARS
                and before
                and before["section_id"] == section
                and before["last_page_index"] == first == last
            ):
                before["text"] += "\n" + text
                before["paragraph_ids"] = before["paragraph_ids"] + ids
            else:
                emit("paragraph", ids[0], section, first, last, text, ids)
        return lead

    def emit_table(block: Any, lead: list[Any], under: _Statement | None) -> None:
        """Chunk one table; ``under``: the table above it that it goes on with (its title, units
        and header row head this one's chunks too)."""
        nonlocal above
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
        if under is not None:
            prefix, header = under.prefix, under.header
        above = _Statement(int(block.last_page_index), _section(block), prefix, header)
        first_page, last_page = int(block.page_index), int(block.last_page_index)
        said = "\n".join([heading, *prefix, *header])  # what a line above the grid need not say again
        for start, part, group in _row_parts(rows, s.table_rows_per_chunk):
            # the first and last grid rows of this part (a table of header rows only: the header)
            lo, hi = first_row + start, first_row + start + max(len(part), 1) - 1
            first = row_page.get(lo, first_page)
            last = row_page.get(hi, last_page) if part else first
            # the lines printed right above the grid go with its first rows, as on the page (in every
            # part they would tell the investing rows of a cash-flow statement "Operating Activities");
            # not those the heading or header row says already: the units, a stacked head's top line
            lines_above = lead if start == 0 else []
            above_grid = [r.text for r in lines_above if not kb_vectors.said_in(r.text, said)]
            if under is None:
                head = [*above_grid, *header]
            else:  # going on under the statement above: the lines between are label rows of its grid
                width = len(_CELL_BAR.split(header[0].strip().strip("|")))
                head = [*header, *(markdown_row([line, *[""] * (width - 1)]) for line in above_grid)]
            text = "\n".join(prefix + head + group + part)
            emit("table", table_id, _section(block), first, last, text, [r.source_id for r in lines_above])

    above: _Statement | None = None  # the last table, while nothing but row labels follow it
    for block in blocks.sort_values("reading_order").itertuples() if len(blocks) else []:
        if block.kind == "heading":
            flush()  # a heading starts a section: the run before it ends
            above = None
            continue
        if block.kind == "table":
            under = above if _goes_on(block, above, run, about) else None
            emit_table(block, flush(table=block, whole=under is not None), under)
            continue
        size = sum(len(r.text) + 1 for r in run)
        new_page = s.split_at_pages and run and block.page_index != run[-1].page_index
        if run and (_section(block) != _section(run[0]) or size + len(block.text) > s.max_chars or new_page):
            flush()
        run.append(block)
    flush()
    return chunks


@dataclass(frozen=True, slots=True)
class _Statement:
    """What a table's chunks are headed with, for a table that goes on under it on its page."""

    page_index: int  # the page it ends on
    section_id: str | None
    prefix: list[str]  # title, row group and units
    header: list[str]  # the Markdown header row and its rule


def _goes_on(block: Any, above: _Statement | None, between: list[Any], about: dict[str, str]) -> bool:
    """The table ``block`` is the table ``above`` going on, cut where a row label was too long.

    A statement's row label printed wider than its stub ("Net income per share of common stock
    attributable to common stockholders" over the Basic and Diluted rows) crosses the column
    gutters: the table finder ends the table there and reads the rows under it as a table of their
    own, with no title and a blank header; its chunks then said "| Diluted | $ 4.30 |" with no
    statement, period or unit. Such a table goes on with the one above when it starts on the page
    that one ends on, in its section, with as many columns, and at most two lines lie between,
    each a label (a line of a row's length that ends no sentence)."""
    if above is None or about.get(str(block.source_id)):
        return False
    header = block.text.splitlines()[0] if isinstance(block.text, str) and block.text else ""
    if header.replace("|", "").strip() or header.count("|") != above.header[0].count("|"):
        return False
    if int(block.page_index) != above.page_index or _section(block) != above.section_id:
        return False
    return len(between) <= 2 and all(
        len(b.text) <= LABEL_CHARS and "\n" not in b.text and not b.text.rstrip().endswith(".")
        for b in between
    )


def _label_only(row: str) -> bool:
    """A Markdown row that holds a label and nothing else: a statement's row group ("| Investing
    activities: |  |  |")."""
    cells = [c.strip() for c in _CELL_BAR.split(row.strip().strip("|"))]
    return len(cells) > 1 and bool(cells[0]) and not any(cells[1:])


def _first_cell(row: str) -> str:
    return _CELL_BAR.split(row.strip().strip("|"))[0].strip()


def _totals(row: str, label: str) -> bool:
    """Whether ``row`` is the total of the group under the label row ``label``: "Total" and the
    group's name ("Total operating expenses" under "Operating expenses:"), the group's last row. A
    statement goes on under no group after it ("Income from operations", "Interest expense" ...
    are no operating expenses), and a chunk cut below it repeated the closed group's label over
    rows that were not in it. Only "Total <name>" closes a group: a row that merely ends in the
    name is often a member ("Total automotive revenues" under "Revenues", "Other current
    liabilities"); a group whose total is worded otherwise ("Cash generated by operating
    activities") runs on to the next label row, as before."""
    name = " ".join(_first_cell(label).rstrip(":").lower().split())
    return bool(name) and " ".join(_first_cell(row).lower().split()) == f"total {name}"


def _row_parts(rows: list[str], size: int) -> list[tuple[int, list[str], list[str]]]:
    """A table's body rows in chunks of at most ``size``: (index of the first row, the rows, the
    row group they are under, [] or its label row, repeated over them).

    A statement's rows fall in groups under label rows of their own ("Operating activities:",
    "Investing activities:"). Cut every ``size`` rows, a chunk held one group's last rows and the
    next group's label alone at its end, and the next chunk that group's rows with no word of what
    they were: the payments for property and equipment were rows of a chunk that began with
    marketable securities and said "Financing activities:" at its foot. So a label row opens a new
    chunk once the chunk has :data:`GROUP_ROWS` rows besides labels, a chunk never ends on label
    rows (they open the next), and a chunk that starts inside a group repeats the group's label
    row under the header, as a continued statement does on its next page. The rows left are shared
    evenly among as few chunks as hold them: a statement of 9 rows was 8 and its total alone. A
    chunk at its even share still takes its group's last row when it has room for it (up to
    ``size``): cut one row short, each group's total ("Cash generated by operating activities")
    went under the next group's label, apart from the rows it sums. A group ends at its total
    (:func:`_totals`); the rows after it are repeated under no label."""
    parts: list[tuple[int, list[str], list[str]]] = []
    start, part, group, label = 0, [], [], ""
    for i, row in enumerate(rows):
        opens = _label_only(row)
        # the rows left from this chunk's start, shared evenly among as few chunks as hold them (9
        # rows are 5 and 4, not 8 and a total alone under the header)
        left = len(rows) - start
        full = len(part) >= -(-left // -(-left // size))
        total = not opens and bool(label) and _totals(row, label)  # the group's total closes it
        ends_group = total or (i + 1 < len(rows) and _label_only(rows[i + 1]))
        if full and not opens and len(part) < size and ends_group:
            full = False  # the group's last row (its total, or the next row opens a chunk of its own)
        if part and (full or (opens and sum(not _label_only(r) for r in part) >= GROUP_ROWS)):
            tail = 0
            while tail < len(part) - 1 and _label_only(part[-1 - tail]):
                tail += 1  # label rows at a full chunk's foot open the next one
            keep = len(part) - tail
            parts.append((start, part[:keep], group))
            start, part = start + keep, part[keep:]
            group = [label] if label and not (part and _label_only(part[0])) and not opens else []
        part.append(row)
        if opens:
            label = row
        elif total:
            label = ""  # the rows below the group's total are not its rows
    if parts and part and all(map(_label_only, part)):
        parts[-1][1].extend(part)  # a label closing the table heads nothing: it stays with the rows above
    elif part or not parts:
        parts.append((start, part, group))
    return parts


def _told(text: str, heading: str) -> bool:
    """The paragraph ``text`` is said in the table's heading line already: the sentence that leads
    into the table ("Products and Services gross margin ... were as follows (dollars in millions):")
    is its caption. Read as a chunk of its own as well, it was the page's best match for questions
    on the table's figures and listed the page by a sentence that holds none of them."""
    return len(" ".join(text.split())) >= STRAY_CHARS and kb_vectors.said_in(text, heading)


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def _table_heading(row: Any) -> str:
    """The line a table's chunks start with: "CONSOLIDATED STATEMENTS OF CASH FLOWS — Investing
    activities: (In millions)" (caption or title, row group, units; empty when it has none)."""
    name = _text(row.caption) or _text(getattr(row, "title", None))
    group = _text(getattr(row, "row_group", None))
    units = _text(getattr(row, "units", None))
    line = " — ".join(p for p in (name, group) if p)
    if not units or units.strip("()").lower() in line.lower():
        return line  # a caption that states its units ("... (dollars in millions):") says them once
    return f"{line} ({units})".strip()


def _section(block: Any) -> str | None:
    section_id = block.section_id
    return section_id if isinstance(section_id, str) else None


#: what build_chunks reads of a document, and only that (a long document's page texts, boxes and
#: paragraph flags are tens of MB it does not need)
_CHUNK_SOURCES = {
    "documents": "SELECT file_name, title, issuer, doc_type, period_end, fiscal_year FROM documents "
    "WHERE doc_id = ?",
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
        period_end=_text(doc.get("period_end")),
        fiscal_year=int(year) if year is not None and not pd.isna(year) else None,
    ).context()


def load_document(
    warehouse: Warehouse, doc_id: str, settings: KbSettings, embed: bool = True
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


def embed_document(warehouse: Warehouse, doc_id: str, settings: KbSettings) -> dict[str, Any]:
    """Embed the document's loaded chunks and replace its ``kb_embeddings`` rows (one transaction).

    The three steps of :mod:`dagster_ocr.kb_vectors` in a row (the Dagster asset ``kb_vectors``
    runs them as separate ops, embedding outside the warehouse writers' pool). A chunk whose model
    input (context line and text) is unchanged since the last load keeps its vector. Returns
    figures for the asset's metadata: ``embedded`` (computed now), ``reused``, ``seconds`` and
    ``skipped`` (the reason, when embeddings are off or unavailable here and the document keeps
    BM25 only).
    """
    s = settings
    plan = kb_vectors.plan_vectors(warehouse, doc_id, enabled=s.embeddings)
    plan = kb_vectors.compute_vectors(plan, **embedder_options(s))
    return kb_vectors.store_vectors(warehouse, plan)


def embedder_options(s: KbSettings) -> dict[str, Any]:
    """The settings :func:`kb_vectors.compute_vectors` takes, from the knowledge-base settings."""
    return {**s.embedder_args(), "batch_size": s.embed_batch_size}
