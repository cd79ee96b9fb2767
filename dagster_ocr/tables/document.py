"""The document driver: each page's tables found, then joined with the next page's where they continue."""

from __future__ import annotations

import dataclasses
import logging
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pymupdf

from dagster_ocr import load_pymupdf_layout
from dagster_ocr.layout import centre_inside, outside, overlap_share, transform_box
from dagster_ocr.model import BBox, Line, Page, Table, TextSource
from dagster_ocr.pagestore import in_page_order
from dagster_ocr.paragraphs.patterns import Vocabulary
from dagster_ocr.tables.cells import _Part, _to_part, _without_cut_rows
from dagster_ocr.tables.charts import chart_regions, level_rules
from dagster_ocr.tables.columns import _build_columns, _continued_evidence, _same_stubs, _StubMatch
from dagster_ocr.tables.grid import _has_grid, _ruled_grids, _split_at_sides
from dagster_ocr.tables.grouped import _within_rules
from dagster_ocr.tables.opinion import regions, vetoed
from dagster_ocr.tables.prose import _boxed_text, _running_text
from dagster_ocr.tables.rows import (
    _build_rows,
    _column_map,
    _continues,
    _gap_ok,
    _header_repeat,
    _mapped_continuation,
    _row_words,
    _without_running_head,
)
from dagster_ocr.tables.scanned import OcrTablePage, has_an_empty_column, ocr_page_as_pdf
from dagster_ocr.tables.settings import _CAPTION_RE, Finder, TableSettings
from dagster_ocr.tables.sideways import (
    _reading_frame,
    _sideways_share,
    _table_to_display,
    _turn_lines,
    _upside_down,
)
from dagster_ocr.tables.statement import find_context, fold_symbol_columns, merge_stacked_heads
from dagster_ocr.tables.stream import _keep, _stream_tables
from dagster_ocr.tables.words import (
    _VOCAB,
    _clean,
    _is_num,
    _page_lines,
    _page_words,
    _text_lines,
    _Word,
)

logger = logging.getLogger(__name__)


@dataclass
class _Group:
    """Parts that form one table: joined by rows (``drop``) or by columns (``aligns``)."""

    parts: list[_Part]
    drop: list[int] = field(default_factory=lambda: [0])
    aligns: list[list[_StubMatch]] = field(default_factory=list)
    kind: str = ""


def extract_tables(doc: pymupdf.Document, pages: Sequence[Page], settings: TableSettings) -> list[Table]:
    """Find the tables of a document and join those that continue across pages.

    An OCR'd page is searched for ruled tables only, rebuilt from its image's rules and its OCR
    lines (``tables.scanned``, setting ``ocr_pages``); other pages without a text layer are
    skipped. Tables are numbered "t0", "t1", ... in document order; every cell keeps the
    physical page it came from.

    Two kinds of continuation are joined, each only between the last table of page N and the first
    table of page N+1. Rows: same column layout, only furniture between (see ``_continues``); a
    repeated header is dropped. Columns: the continuation repeats the first part's stub column row
    for row (``_same_stubs``) AND says so ("continued" in its caption or header, or the same
    caption); the stub is kept once and the continuation's other columns are appended. Two tables
    with the same row labels but no such marker stay separate, and are never joined by rows either
    (a row continuation does not repeat the rows it continues).
    """
    token = _VOCAB.set(Vocabulary())
    try:
        return _extract_tables(doc, pages, settings)
    finally:
        _VOCAB.reset(token)


def _extract_tables(doc: pymupdf.Document, pages: Sequence[Page], s: TableSettings) -> list[Table]:
    vocab = _VOCAB.get()
    groups: list[_Group] = []
    # a table continues only from the page right before, so only that page's context is kept
    # (pages may be read back from disk one at a time: see pagestore)
    by_index: dict[int, Page] = {}
    lines: dict[int, list[Line]] = {}
    per_page: dict[int, list[_Part]] = {}
    regions: dict[int, list[BBox]] = {}
    back: dict[int, tuple[float, ...]] = {}  # pages read turned (text printed sideways): inverse frames
    turned: dict[int, tuple[float, ...]] = {}  # id of a part read turned on a mixed page: inverse frame
    for page in in_page_order(pages):
        i = page.index
        if page.text_source == TextSource.TEXT_LAYER:
            pg = doc[i]
        else:
            if vocab is not None:  # every page's words, as the paragraph stage counts them
                vocab.add_lines([ln.text for ln in page.lines])
            scan = _ocr_page(doc, page, s)
            if scan is None:
                continue
            # the OCR'd page rebuilt with its image's rules, and its OCR'd words (tables/scanned.py)
            pg, page = scan.doc[0], scan.page
            if scan.back is not None:  # searched levelled: its boxes go back to the page as read
                back[i] = scan.back
        by_index[i], lines[i] = page, _page_lines(pg, page)
        if vocab is not None and page.text_source == TextSource.TEXT_LAYER:
            vocab.add_lines([ln.text for ln in lines[i]])
        words: list[_Word] = []
        frame = None
        if s.finder in ("auto", "stream"):
            words = _page_words(pg, page, lines[i])
            frame = _reading_frame(page, words) or _upside_down(page, words)
        if frame is not None:
            # the whole page is seen turned, so captions, gaps and merges read it as it is read
            levelled = pymupdf.Matrix(back[i]) if i in back else pymupdf.Identity
            back[i] = tuple(~pymupdf.Matrix(frame) * levelled)
            words = [_Word(*transform_box((w.x0, w.y0, w.x1, w.y1), frame), w.text) for w in words]
            lines[i] = _turn_lines(lines[i], frame)
            quarter = frame[0] == 0.0  # a quarter turn swaps the page's sides, a half turn does not
            w, h = (page.height, page.width) if quarter else (page.width, page.height)
            by_index[i] = dataclasses.replace(page, width=w, height=h, lines=lines[i])
        per_page[i] = _page_parts(pg, page, lines[i], s, words, frame)
        if page.text_source != TextSource.TEXT_LAYER:  # ruled tables only, no diagram's boxes
            per_page[i] = [
                p for p in per_page[i] if p.strategy == "lines" and not has_an_empty_column(p.rows)
            ]
        elif frame is None and words and (mixed := _sideways_share(pg, page, words)) is not None:
            # upright text and a sideways table on one page: the sideways words read in their frame
            turn, tall, upright = mixed
            inverse = tuple(~pymupdf.Matrix(turn))
            framed = [_Word(*transform_box((w.x0, w.y0, w.x1, w.y1), turn), w.text) for w in tall]
            kept = _page_parts(pg, page, lines[i], s, upright, None)
            for part in _page_parts(pg, page, _turn_lines(lines[i], turn), s, framed, turn):
                turned[id(part)] = inverse
                kept.append(part)
            per_page[i] = sorted(
                kept, key=lambda p: (p.bbox[1], p.bbox[0]) if id(p) not in turned else (1e9, 0)
            )
        regions[i] = [
            transform_box(p.bbox, turned[id(p)]) if id(p) in turned else p.bbox for p in per_page[i]
        ]
        short = None
        if s.merge and groups and frame is None and words and not turned and s.min_stream_rows > 2:
            short = _short_continuation(groups[-1], pg, page, lines, by_index, per_page, regions, s, words)
            if short is not None:
                per_page[i].insert(0, short)
                regions[i].insert(0, short.bbox)
                if not _join(groups[-1], short, per_page, by_index, lines, regions, s):
                    # found only as a continuation: otherwise the page's text
                    del per_page[i][0], regions[i][0]
                    short = None
        for j, part in enumerate(per_page[i]):
            # a part read in its own frame on a mixed page is a table of its own: its rows and
            # columns do not compare with an upright part's
            joined = (
                s.merge
                and j == 0
                and groups
                and id(part) not in turned
                and id(groups[-1].parts[-1]) not in turned
            )
            if j == 0 and short is not None:  # joined above (as found, or remapped by ``_join``)
                continue
            if joined and _join(groups[-1], part, per_page, by_index, lines, regions, s):
                continue
            if s.merge and j > 0 and groups and _reheaded(groups[-1], per_page[i][j - 1], part, lines[i], s):
                continue
            groups.append(_Group([part]))
        for window in (by_index, lines, per_page, regions):
            for old in [k for k in window if k < i - 1]:
                del window[old]
    tables = [
        _build_columns(g.parts, g.aligns, f"t{k}", s)
        if g.kind == "columns"
        else _build_rows(g.parts, g.drop, f"t{k}", s)
        for k, g in enumerate(groups)
    ]
    for g, t in zip(groups, tables, strict=True):
        if len(g.parts) > 1:
            t.repeats = _repeats(g.parts, t)
    out = []
    for g, t in zip(groups, tables, strict=True):
        own = {p.page_index: turned[id(p)] for p in g.parts if id(p) in turned}
        t = _table_to_display(t, own or back) if own or back else t
        t = merge_stacked_heads(fold_symbol_columns(t) if s.fold_sign_columns else t)
        if g.kind != "columns":  # a column continuation reads no headings above its grid
            t.heads = _held_heads(g.parts[0], t)
        out.append(t)
    return out


def _held_heads(first: _Part, table: Table) -> list[str]:
    """The lines of headings printed above ``first``'s grid (``TableContext.heads``) whose words the
    finished ``table`` holds, in ``column_headers`` or its header cells, top first.

    They are the table's text now (``Table.heads``): the paragraph stage leaves them out, where
    they were read as lines above the table ("Year Ended" over "Jan 26, 2025 Jan 28, 2024" made
    headings of their own and sections named by a date) and then again in the table's header. A
    line whose words the table lost (a column folded away) stays body text: it is never dropped.
    """
    heads = first.context.heads if first.context is not None else []
    if not heads:
        return []
    held = Counter(
        w.casefold()
        for text in [*table.column_headers, *(c.text for c in table.cells if c.row < table.header_rows)]
        for w in text.split()
    )
    # TableContext.heads runs from the grid up
    return [text for _, text in reversed(heads) if not Counter(w.casefold() for w in text.split()) - held]


def _repeats(parts: list[_Part], table: Table) -> list[tuple[int, str]]:
    """The cells of ``parts`` the joined ``table`` does not hold on their page: (page_index, text).

    A row continuation drops its repeated header, a column continuation its stub column; those
    words were printed inside the table on that page, so they are the table's text (see
    ``Table.repeats``), not body text and not lost. Compared as word multisets per page, so a cell
    the builder joined with another (a folded stub line) still counts as held.
    """
    held: dict[int, Counter[str]] = {}
    for cell in table.cells:
        held.setdefault(cell.page_index, Counter()).update(cell.text.split())
    out: list[tuple[int, str]] = []
    for part in parts:
        left = held.get(part.page_index, Counter())
        for row in part.rows:
            for text in row:
                words = (text or "").split()
                need = Counter(words)
                if not words:
                    continue
                if all(left[w] >= n for w, n in need.items()):
                    left.subtract(need)
                else:
                    out.append((part.page_index, text or ""))
    return out


def _ends_page_before(g: _Group, page_index: int, per_page: dict[int, list[_Part]]) -> bool:
    """Whether group ``g``'s last part is the last table of the page before ``page_index``: only
    then can a part on ``page_index`` continue it."""
    prev = g.parts[-1]
    return prev.page_index == page_index - 1 and prev is per_page[prev.page_index][-1]


def _join(
    g: _Group,
    part: _Part,
    per_page: dict[int, list[_Part]],
    pages: dict[int, Page],
    lines: dict[int, list[Line]],
    regions: dict[int, list[BBox]],
    s: TableSettings,
) -> bool:
    """Append ``part`` (first on its page) to group ``g`` when it continues it; True when it did."""
    prev = g.parts[-1]
    if not _ends_page_before(g, part.page_index, per_page):
        return False
    if g.kind != "rows":
        # columns are aligned to the first part, which holds the full stub
        stubs = _same_stubs(g.parts[0], part, s)
        if stubs is not None:
            if (
                s.merge_columns
                and _continued_evidence(g.parts[0], part)
                and not _header_repeat(g.parts[0], part, s, skip_stub=True)
            ):
                g.parts.append(part)
                g.aligns.append(stubs)
                g.kind = "columns"
                logger.debug(
                    "table on page %d continues by columns on page %d", prev.page_index, part.page_index
                )
                return True
            return False  # the same rows again without a marker: a separate table
    elif _same_stubs(prev, part, s) is not None:
        return False
    if g.kind == "columns":
        return False
    whole = part
    part = _without_running_head(g.parts[0], part, pages[part.page_index], s)
    if not _continues(prev, part, pages, lines, regions, s):
        mapped = _mapped_continuation(g.parts[0], prev, part, pages, lines, regions, s)
        if mapped is None:
            return False
        part = mapped
    if part is not whole:  # the part as joined from here on: the next page is compared with it
        per_page[part.page_index][0] = part
        regions[part.page_index][0] = part.bbox
    g.parts.append(part)
    g.drop.append(_header_repeat(g.parts[0], part, s))
    g.kind = "rows"
    logger.debug("table on page %d continues on page %d", prev.page_index, part.page_index)
    return True


def _reheaded(g: _Group, before: _Part, part: _Part, lines: list[Line], s: TableSettings) -> bool:
    """Append ``part`` to ``g`` when it goes on with that table on the same page under its header
    printed again (dropped, as a continuation's is); True when it did.

    A statement or register set out in sections (an account's holdings, one contribution type after
    another) prints the column heads over each section, a blank line above: each section is then a
    table of its own though the page holds one table. ``part`` goes on with it when it comes right
    after the group's last part (``before``), in the same columns, opens with the group's header
    and nothing but white space lies between them: a title, a caption or a line of text between two
    tables with the same heads makes them two tables, and so does a header that differs.
    """
    prev, first = g.parts[-1], g.parts[0]
    if g.kind == "columns" or prev is not before or part.caption or not first.header_rows:
        return False
    # its columns lie in the group's, one for one: a section's longer labels may move a gutter
    same = part.n_cols == first.n_cols and _column_map(first, part, s) == list(range(first.n_cols))
    if not same or part.bbox[1] < prev.bbox[3]:
        return False
    left, right = max(prev.bbox[0], part.bbox[0]), min(prev.bbox[2], part.bbox[2])
    if right - left < 0.8 * min(prev.bbox[2] - prev.bbox[0], part.bbox[2] - part.bbox[0]):
        return False
    # its first rows print the group's header again, row for row (its words in order: a section's
    # gutters may cut a head elsewhere)
    drop = first.header_rows
    if len(part.rows) <= drop or part.header_rows > drop:
        return False
    if any(_row_words(a) != _row_words(b) for a, b in zip(first.rows[:drop], part.rows, strict=False)):
        return False
    # the space between them: a few row pitches at most, and no text in it
    pitch = (prev.bbox[3] - prev.bbox[1]) / max(len(prev.rows), 1)
    if part.bbox[1] - prev.bbox[3] > 3 * pitch:
        return False
    for ln in lines:
        cy = (ln.bbox[1] + ln.bbox[3]) / 2
        if prev.bbox[3] < cy < part.bbox[1] and ln.bbox[0] < right and ln.bbox[2] > left and ln.text.strip():
            return False
    g.parts.append(part)
    g.drop.append(drop)
    g.kind = "rows"
    logger.debug("table on page %d goes on under its header printed again", part.page_index)
    return True


def _short_continuation(
    g: _Group,
    pg: pymupdf.Page,
    page: Page,
    lines: dict[int, list[Line]],
    pages: dict[int, Page],
    per_page: dict[int, list[_Part]],
    regions: dict[int, list[BBox]],
    s: TableSettings,
    words: list[_Word],
) -> _Part | None:
    """A block of two aligned lines at the top of ``page``, above its first table, where the table
    of group ``g`` ends the page before: a candidate continuation (a last page of totals, alone or
    under the repeated header), joined only if ``_join`` takes it. Two aligned lines alone are as
    often a definition list or a signature block as a table (``min_stream_rows``), so such a block
    is never a table of its own. One line is searched only where it reads as the table's totals
    row (``_totals_line``); the running head, in the page's top band, is never the block."""
    prev = g.parts[-1]
    if not _ends_page_before(g, page.index, per_page):
        return None
    a, pa = prev.page_index, pages[prev.page_index]
    if not _gap_ok(lines[a], pa, regions[a], prev.bbox[3], pa.height, set(), 1, s, (lines[page.index], page)):
        return None  # text after the table: it ends on its page
    top = per_page[page.index][0].bbox[1] if per_page[page.index] else math.inf
    lo = page.height * s.margin_fraction
    above = sorted(
        (ln for ln in lines[page.index] if lo < (ln.bbox[1] + ln.bbox[3]) / 2 < top),
        key=lambda ln: ln.bbox[1],
    )
    # the first row: the lines beside the first line (a label and figures are lines of their own)
    y0, y1 = (above[0].bbox[1], above[0].bbox[3]) if above else (0.0, 0.0)
    row = sorted((ln for ln in above if y0 < (ln.bbox[1] + ln.bbox[3]) / 2 < y1), key=lambda ln: ln.bbox[0])
    text = " ".join(ln.text for ln in row)
    one = bool(row) and _totals_line(text, prev)
    # a row drawn between rules is a table's row: a total alone with fewer figures than columns too;
    # unruled, one of two figures or more, which only a mapping onto the columns above joins
    ruled = bool(row) and not one and _totals_line(text, prev, least=1) and _between_rules(pg, row)
    partial = bool(row) and not one and not ruled and _totals_line(text, prev, least=2)
    if len(above) < 2 and not one and not ruled and not partial:
        return None
    alone = len(above) < 2 and partial
    if alone:
        # that line alone: the words above the page's first table searched by alignment only, not
        # the whole page again with its rules (that cost the corpus's parse a few percent)
        words = [w for w in words if (w.y0 + w.y1) / 2 < top]
    relaxed = s.model_copy(
        update=({"min_stream_rows": 1, "min_rows": 1} if one or ruled or partial else {"min_stream_rows": 2})
        | ({"finder": "stream"} if alone else {})
    )
    found = [
        p
        for p in _stream_parts(pg, page.index, relaxed, words, None)
        if (p.strategy == "stream" or ruled) and len(p.rows) < s.min_stream_rows and lo < p.bbox[3] <= top
    ]
    if not found:
        return None
    part = min(found, key=lambda p: p.bbox[1])
    if _running_text(part, words, s) is not None:
        return None
    _find_caption(part, lines[page.index], s)
    part.context = find_context(part, lines[page.index], words, None)
    return part


def _totals_line(text: str, prev: _Part, least: int = 0) -> bool:
    """A line that can be a table's last row alone on its page: a label, then a figure for each
    column of ``prev`` right of its stub (with ``least``, for that many of them at least), nothing
    else (a totals row that the page break left behind). Any other single line at a page's top is
    as often prose or a heading; a label and one figure short of a figure a column ("Note 12") is
    such a row only drawn between rules."""
    words = text.split()
    figures = 0
    while words and _is_num(words[-1]):
        words.pop()
        figures += 1
    wanted = least <= figures <= prev.n_cols - 1 if least else figures == prev.n_cols - 1
    return bool(words) and not _is_num(words[0]) and wanted and prev.n_cols >= 3


def _between_rules(pg: pymupdf.Page, row: list[Line]) -> bool:
    """The lines ``row`` (one printed row) lie between two level rules drawn across them, one a
    line height or less above, one below: a ruled table's row. Read from the page's drawings, so a
    page whose top line merely reads like a total costs no table search."""
    x0, y0 = min(ln.bbox[0] for ln in row), min(ln.bbox[1] for ln in row)
    x1, y1 = max(ln.bbox[2] for ln in row), max(ln.bbox[3] for ln in row)
    h = y1 - y0
    across = [y for a, y, b in level_rules(pg.get_cdrawings()) if a <= x0 + h and b >= x1 - h]
    return any(y0 - h <= y <= y0 + 1 for y in across) and any(y1 - 1 <= y <= y1 + h for y in across)


def _ocr_page(doc: pymupdf.Document, page: Page, s: TableSettings) -> OcrTablePage | None:
    """An OCR'd page as a PDF page the finders can read, where it may hold a ruled table (the
    source page is loaded only then: a blank or unread page costs nothing here)."""
    if page.text_source != TextSource.OCR or s.finder != "auto" or not s.ocr_pages:
        return None
    try:
        return ocr_page_as_pdf(doc[page.index], page)
    except Exception:  # an image OpenCV or MuPDF chokes on must not sink the document's tables
        logger.warning("page %d: no ruled-table search on the OCR'd page", page.index, exc_info=True)
        return None


def _page_parts(
    pg: pymupdf.Page,
    page: Page,
    lines: list[Line],
    s: TableSettings,
    words: list[_Word],
    frame: tuple[float, ...] | None,
) -> list[_Part]:
    """The page's tables, before merging. ``words`` feed the auto and stream finders; with
    ``frame``, they, ``lines`` and the parts are in it."""
    parts: list[_Part] = []
    if s.finder in ("auto", "stream"):
        parts = []
        found = _stream_parts(pg, page.index, s, words, frame)
        if s.layout_veto and s.finder == "auto":
            found = _layout_veto(pg, page, found, s, words, frame)
        for part in found:
            if frame is None and (part := _without_page_head(part, page, s)) is None:
                continue
            why = _running_text(part, words, s)
            if why is None:
                parts.append(part)
            else:  # its lines stay body text: the paragraph stage reads them
                logger.debug("page %d: a text-aligned part is running text (%s)", page.index, why)
    else:
        for tab, strategy in _raw_tables(pg, s.finder, s.refine):
            part = _to_part(tab, strategy, page.index, s)
            if part is not None and _keep(part, s):
                parts.append(part)
    parts.sort(key=lambda p: (p.bbox[1], p.bbox[0]))
    previous = None
    for part in parts:
        _find_caption(part, lines, s)
        if words:  # the headings are read from words (the auto and stream finders have them)
            part.context = find_context(part, lines, words, previous)
        previous = part
    return parts


def _without_page_head(part: _Part, page: Page, s: TableSettings) -> _Part | None:
    """A text-aligned ``part`` less the page's running head it took in as its first rows (see
    ``_without_running_head``: rows wholly in the top band, set apart from the rows below by more
    than their pitch); None when what is left is no table. A running head of two ends ("Annual
    report 2025" ... "Page 3") lines up with the first and last columns of a table, or with two
    captions side by side, under it: it made a header row of a table's, or a table of two figures'
    captions."""
    if part.strategy != "stream":
        return part
    bare = _without_running_head(dataclasses.replace(part, rows=[], header_rows=0), part, page, s)
    if bare is part:
        return part
    cut = len(part.rows) - len(bare.rows)
    bare = dataclasses.replace(bare, header_rows=max(0, part.header_rows - cut))
    return bare if _keep(bare, s) else None


def _layout_veto(
    pg: pymupdf.Page,
    page: Page,
    parts: list[_Part],
    s: TableSettings,
    words: list[_Word],
    frame: tuple[float, ...] | None,
) -> list[_Part]:
    """The parts less the text-aligned ones the layout model sees as prose or a figure
    (``tables.layout_veto``, tables/opinion.py). Only on text-layer pages with a text-aligned part,
    read upright and without /Rotate: elsewhere the model is not run."""
    if page.text_source != TextSource.TEXT_LAYER or frame is not None or pg.rotation:
        return parts
    if not any(p.strategy == "stream" for p in parts):
        return parts
    boxes = regions(pg)
    kept = []
    for p in parts:
        if vetoed(p, words, boxes, s):
            logger.debug("page %d: the layout model vetoes a text-aligned part at %s", page.index, p.bbox)
        else:
            kept.append(p)
    return kept


def _raw_tables(pg: pymupdf.Page, finder: Finder, refine: bool) -> list[tuple[Any, str]]:
    """Run the configured PyMuPDF finder; returns (pymupdf Table, strategy name) pairs."""
    if finder in ("layout", "layout_text"):
        load_pymupdf_layout()  # kept from loading at import: only these finders use it
    if finder == "layout":
        return [(t, "layout") for t in pg.find_tables(refine=refine).tables]
    if finder == "lines":
        return [(t, "lines") for t in pg.find_tables(use_layout=False, refine=refine).tables]
    if finder == "text":
        return [(t, "text") for t in pg.find_tables(strategy="text", use_layout=False).tables]
    found: list[tuple[Any, str]] = []
    for region in pg.find_tables().tables:
        clip = pymupdf.Rect(region.bbox)
        # The layout model draws tight boxes; a little slack keeps edge glyphs inside the clip.
        clip = pymupdf.Rect(clip.x0 - 2, clip.y0 - 2, clip.x1 + 2, clip.y1 + 2) & pg.rect
        inner = pg.find_tables(clip=clip, strategy="text", use_layout=False).tables
        if inner:
            best = max(inner, key=lambda t: t.row_count * t.col_count)
            found.append((best, "layout_text"))
        else:  # the text finder saw no alignment: keep the layout model's own grid
            found.append((region, "layout"))
    return found


def _stream_parts(
    pg: pymupdf.Page,
    page_index: int,
    s: TableSettings,
    all_words: list[_Word],
    frame: tuple[float, ...] | None,
) -> list[_Part]:
    """Ruled tables (line finder, cell text from words) plus text-aligned tables elsewhere on the page.

    ``all_words`` are the page's words in display coordinates, or in ``frame`` when given.
    """
    ruled: list[_Part] = []
    boxed: list[_Part] = []  # text in drawn boxes: no table, and no place to look for one
    charts: list[BBox] = []  # charts and diagrams: their words build no text-aligned table
    if s.finder == "auto":
        cdrawings = pg.get_cdrawings()
        charts, series = _charts(pg, cdrawings, all_words, frame)
        if _has_grid(cdrawings):
            try:
                grids = _ruled_grids(pg, cdrawings, all_words, frame)
            except Exception:  # a drawing the line finder chokes on must not sink the document
                logger.warning(
                    "ruled-table finder failed on page %d; text alignment only", page_index, exc_info=True
                )
                grids = []

            def charted(box: BBox) -> bool:
                """A grid holding a data series, or in a plot: a chart's, no table."""
                return any(centre_inside(b, [box], pad=0.0) for b in series) or centre_inside(
                    box, series, pad=0.0
                )

            # text run past its cell's side into the next cell is cut there, not read whole in one
            # (not in a chart's grid, which holds no table)
            tables = [t for t in grids if not charted(tuple(t.bbox))]
            cut = _split_at_sides(pg, tables, all_words, frame) if tables else all_words
            for tab in grids:
                found = _to_part(tab, "lines", page_index, s, cut)
                for whole in _without_cut_rows(found, cut) if found is not None else ():
                    if charted(whole.bbox):
                        continue
                    # (before the test: a grid of one body row, its rows unruled, holds a table)
                    part = _within_rules(whole, cut, s, tab)
                    if not _keep(part, s):
                        continue
                    (boxed if _boxed_text(part) else ruled).append(part)
    ruled = _without_envelopes(ruled)
    # words the ruled tables (or text boxes) already hold are not looked at again, nor a chart's
    regions = [p.bbox for p in (*ruled, *boxed)] + charts
    if regions:
        words = [w for w in all_words if outside((w.x0, w.y0, w.x1, w.y1), regions, pad=0.0)]
    else:  # the test above keeps every word: a page with no ruled table, text box nor chart
        words = list(all_words)
    parts = list(ruled)
    for part in _stream_tables(_text_lines(words, s.chunk_gap), page_index, s):
        if not any(overlap_share(part.bbox, r.bbox) > 0.5 for r in ruled):
            parts.append(part)
    return parts


def _charts(
    pg: pymupdf.Page, cdrawings: list[dict[str, Any]], words: list[_Word], frame: tuple[float, ...] | None
) -> tuple[list[BBox], list[BBox]]:
    """The page's chart regions and chart parts (series, bars, plot areas: ``charts``), in the
    words' coordinates."""
    if not words or not cdrawings:
        return [], []
    heights = sorted(w.y1 - w.y0 for w in words)
    h = heights[len(heights) // 2]
    regions, series = chart_regions(cdrawings, h)
    for turn in (tuple(pg.rotation_matrix) if pg.rotation else None, frame):
        if turn is not None:  # drawings are in unrotated page space
            regions = [transform_box(b, turn) for b in regions]
            series = [transform_box(b, turn) for b in series]
    return regions, series


def _without_envelopes(parts: list[_Part]) -> list[_Part]:
    """The ruled parts less those that frame another: a box drawn around a caption and a ruled
    table (or cell backgrounds that tile one) reads as a grid whose one big cell holds the inner
    table, so every cell of it would be there twice. A part that holds another covering at least
    half its area is such a frame; what it has beside the inner table (a caption, a title) stays
    text for the caption search and the paragraphs."""

    def inside(a: BBox, b: BBox) -> bool:  # a within b, give or take a point
        return a[0] >= b[0] - 1 and a[1] >= b[1] - 1 and a[2] <= b[2] + 1 and a[3] <= b[3] + 1

    def area(b: BBox) -> float:
        return max(0.0, b[2] - b[0]) * max(0.0, b[3] - b[1])

    return [
        outer
        for outer in parts
        if not any(
            inner is not outer
            and inner.bbox != outer.bbox
            and inside(inner.bbox, outer.bbox)
            and area(inner.bbox) >= 0.5 * area(outer.bbox)
            for inner in parts
        )
    ]


def _find_caption(part: _Part, lines: list[Line], s: TableSettings) -> None:
    """Attach the 'Table ...' line just above the table (and lines up to the table top) as caption."""
    x0, top, x1, _ = part.bbox
    above = [
        (i, ln)
        for i, ln in enumerate(lines)
        if ln.bbox[3] <= top + 1
        and top - ln.bbox[3] <= s.caption_max_gap * 3
        and ln.bbox[2] >= x0 - 20
        and ln.bbox[0] <= x1 + 20
    ]
    above.sort(key=lambda il: -il[1].bbox[3])
    for k, (_i, ln) in enumerate(above[:4]):
        if _CAPTION_RE.match(ln.text) and top - ln.bbox[3] <= s.caption_max_gap + 14 * k:
            chosen = [il for il in above[: k + 1]]
            chosen.sort(key=lambda il: (il[1].bbox[1], il[1].bbox[0]))
            part.caption = _clean(" ".join(ln2.text for _, ln2 in chosen))
            part.caption_lines = [i for i, _ in chosen]
            return
