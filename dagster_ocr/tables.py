"""Table extraction per page and merging of tables that continue across pages.

The default finder ('auto') reads ruled tables with PyMuPDF's line finder (``use_layout=False``,
run only on pages that draw a grid) and finds every other table by text alignment, the way
camelot's stream mode and Nurminen's tabula algorithm do: words are cut into chunks at wide gaps,
runs of multi-chunk lines form table areas, column gutters are x ranges no word covers, rows are
text lines (stacked header lines and wrapped cells joined). Cell text always comes from word boxes
(``Table.extract()`` drops inter-word spaces). Other finders remain selectable for comparison
(see ``TableSettings.finder`` and bench/tables_icdar.py).
Merging is evidence-based: the last table on page N is joined with the first table on page N+1
only when nothing but page furniture or a few short lines separates them, the column layouts
agree, and (optionally) a "continued" caption says so. A continuation's repeated header is dropped.
A wide table whose columns continue on the next page (same rows) is joined on its stub column when
the continuation repeats the stubs row for row AND a "continued" marker or the same caption says so.
"""

from __future__ import annotations

import dataclasses
import itertools
import logging
import math
import re
import statistics
import unicodedata
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import pymupdf
from pydantic import BaseModel, ConfigDict, Field
from pymupdf import table as mt

from dagster_ocr.model import BBox, Cell, Line, Page, Table, TextSource, transform_box
from dagster_ocr.pagestore import in_page_order
from dagster_ocr.textlayer import TEXT_FLAGS, extract_words

logger = logging.getLogger(__name__)

Finder = Literal["auto", "stream", "layout", "lines", "text", "layout_text"]

_CAPTION_RE = re.compile(r"^\s*(table|tab\.|表|续表)\s*", re.IGNORECASE)
_CONTINUED_RE = re.compile(
    r"(continued|cont['’]?d\.?|\(cont\.?\)|—\s*cont|续表|續表|\bsuite\b|fortsetzung)", re.IGNORECASE
)


class TableSettings(BaseModel):
    """Tunables of table extraction and cross-page merging."""

    model_config = ConfigDict(extra="forbid")

    finder: Finder = Field(
        "auto",
        description=(
            "How tables are found: 'auto' = ruled tables from PyMuPDF's line finder (use_layout=False), "
            "then the text-alignment ('stream') finder on the rest of the page; 'stream' = text "
            "alignment only; 'layout' = PyMuPDF's ML layout model (find_tables default), 'lines' = "
            "the classic ruling-line finder, 'text' = PyMuPDF's text strategy, 'layout_text' = layout "
            "regions re-read with PyMuPDF's text strategy. bench/tables_icdar.py has the measurements."
        ),
    )
    chunk_gap: float = Field(
        0.5,
        description="A horizontal gap wider than this many line heights cuts a text line into separate "
        "cells (an inter-word space is about 0.2 line heights).",
    )
    min_col_gap: float = Field(
        0.35, description="Minimum width of a column gutter, in median line heights of the table."
    )
    span_tolerance: float = Field(
        0.12,
        description="Share of a table's lines that may cross a gutter (spanning header cells, "
        "overflowing text) without erasing that column boundary.",
    )
    max_row_gap: float = Field(
        2.2, description="A vertical gap above this many line heights ends a text-aligned table."
    )
    max_bridge_lines: int = Field(
        3,
        description="How many consecutive single-cell lines (stub-only rows) a text-aligned table may hold.",
    )
    merge_wrapped: bool = Field(
        True,
        description="Join a line into the row above when it fills none of the key columns and only "
        "columns that row fills (a cell wrapped onto a second line).",
    )
    key_column_fill: float = Field(
        0.7, description="A column filled in at least this share of body lines is a key column."
    )
    wrap_gap: float = Field(
        0.35, description="Max vertical gap (line heights) between a wrapped line and the line above."
    )
    min_stream_rows: int = Field(
        3,
        description="Minimum rows of a table found by text alignment alone (two aligned lines are "
        "as often a definition list or a signature block as a table).",
    )
    max_median_words: float = Field(
        5.0,
        description="A text-aligned table whose median filled cell holds at least this many words is "
        "prose set in columns (two-column pages, footnotes), not a table.",
    )
    suspicious_ratio: float = Field(
        1.8,
        description="A cell whose height exceeds this multiple of its row's median cell height, or a "
        "body cell spanning columns, is flagged suspicious (possible merged cell).",
    )
    refine: bool = Field(
        False,
        description="Pass refine=True to find_tables (PyMuPDF splits rows/columns the grid merged, "
        "rebuilds spans and header rows); applies to the 'layout' and 'lines' finders.",
    )
    min_rows: int = Field(2, description="Drop detected tables with fewer rows than this.")
    min_cols: int = Field(2, description="Drop detected tables with fewer columns than this.")
    min_filled_ratio: float = Field(
        0.15, description="Drop tables whose share of non-empty cells is below this (text-finder noise)."
    )
    merge: bool = Field(True, description="Join tables that continue on the next page.")
    caption_max_gap: float = Field(
        40.0, description="Max vertical distance (pt) between a 'Table ...' caption line and the table top."
    )
    margin_fraction: float = Field(
        0.07,
        description="Top/bottom page bands (share of page height) whose lines count as furniture "
        "(running headers, page numbers) when judging what lies between two table parts.",
    )
    max_gap_lines: int = Field(
        3, description="Max non-furniture lines allowed between a table and the page edge for a merge."
    )
    max_gap_line_chars: int = Field(
        60, description="Lines longer than this between two parts count as body text and block a merge."
    )
    continued_relax_factor: int = Field(
        2, description="With a 'continued' caption, the gap limits above are multiplied by this."
    )
    col_tolerance: float = Field(
        0.04,
        description="Max difference of column boundaries, as a share of table width, for two parts "
        "to count as the same column layout.",
    )
    header_scan_rows: int = Field(
        6, description="How many leading rows may form a (multi-line) header repeated on a continuation."
    )
    header_match_ratio: float = Field(
        0.6, description="Share of equal header cells for a continuation's first row(s) to be a repeat."
    )
    merge_columns: bool = Field(
        True,
        description="Join a wide table whose columns continue on the next page for the same rows "
        "(stub column repeated row for row, plus a 'continued' marker or the same caption).",
    )
    stub_match_ratio: float = Field(
        0.9,
        description="Share of each part's labelled rows whose stub (first-column text) must match the "
        "other part's stubs, in order, for two parts to count as the same rows.",
    )
    min_stub_rows: int = Field(
        3, description="Fewest matched stub rows (and distinct stub texts) for a column continuation."
    )
    stub_resync: int = Field(
        3, description="How many rows the stub alignment may skip on either side to find the next match."
    )


@dataclass
class _Part:
    """One table as found on one page, before merging."""

    page_index: int
    bbox: BBox
    rows: list[list[str | None]]  # None = covered by a span
    row_bboxes: list[list[BBox | None]]
    col_edges: list[float]  # n_cols + 1 x positions
    header_rows: int
    strategy: str
    caption: str = ""
    caption_lines: list[int] = field(default_factory=list)

    @property
    def n_cols(self) -> int:
        return len(self.col_edges) - 1


def _norm(text: str | None) -> str:
    """Whitespace- and case-insensitive form used to compare cell texts."""
    return "".join(unicodedata.normalize("NFKC", text or "").split()).casefold()


def _clean(text: str | None) -> str:
    return " ".join((text or "").split())


def _page_lines(pg: pymupdf.Page, page: Page) -> list[Line]:
    """The page's lines; falls back to the text layer when the stage got pages without lines."""
    if page.lines:
        return page.lines
    lines: list[Line] = []
    for block in pg.get_text("dict")["blocks"]:
        for ln in block.get("lines", []):
            text = "".join(s["text"] for s in ln["spans"]).strip()
            if text:
                lines.append(Line(text=text, bbox=tuple(ln["bbox"]), block=block["number"]))
    return lines


def _raw_tables(pg: pymupdf.Page, finder: Finder, refine: bool = False) -> list[tuple[Any, str]]:
    """Run the configured PyMuPDF finder; returns (pymupdf Table, strategy name) pairs."""
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


def _to_part(tab: Any, strategy: str, page_index: int, words: list[_Word] | None = None) -> _Part | None:
    try:
        rows = tab.extract() if words is None else _cell_texts(tab, words)
    except Exception:  # a malformed grid from the finder must not sink the document
        logger.warning("table extraction failed on page %d", page_index, exc_info=True)
        return None
    row_bboxes: list[list[BBox | None]] = []
    xs: set[float] = set()
    for r in tab.rows:
        row_bboxes.append([tuple(c) if c is not None else None for c in r.cells])
        for c in r.cells:
            if c is not None:
                xs.add(round(c[0], 1))
                xs.add(round(c[2], 1))
    n_cols = max((len(r) for r in rows), default=0)
    edges = sorted(xs)
    if len(edges) != n_cols + 1:  # spans make edge sets irregular: fall back to the first full row
        full = next((rb for rb in row_bboxes if all(c is not None for c in rb) and len(rb) == n_cols), None)
        if full:
            edges = [full[0][0]] + [c[2] for c in full]
        else:
            x0, _, x1, _ = tab.bbox
            edges = [x0 + (x1 - x0) * i / max(n_cols, 1) for i in range(n_cols + 1)]
    if words is not None and len(edges) == n_cols + 1:
        _split_shaded_rows(rows, row_bboxes, edges, words)
    # PyMuPDF's ``Table.header`` is not read: it re-reads the text above the table (get_textbox),
    # most of the line finder's cost. Its own fallback is kept: the top row of a grid is the header.
    header_rows = 0
    refined = getattr(tab, "header_rows", None)  # set by refine=True
    if isinstance(refined, int) and 0 < refined < len(rows):
        header_rows = refined
    elif len(rows) > 1:
        header_rows = 1
    return _Part(
        page_index=page_index,
        bbox=tuple(tab.bbox),
        rows=[[c if c is None else _clean(c) for c in r] + [""] * (n_cols - len(r)) for r in rows],
        row_bboxes=row_bboxes,
        col_edges=edges,
        header_rows=header_rows,
        strategy=strategy,
    )


def _split_shaded_rows(
    rows: list[list[str | None]], row_bboxes: list[list[BBox | None]], edges: list[float], words: list[_Word]
) -> None:
    """Give back its columns to a grid row read as one cell spanning three or more columns (in place).

    Zebra-striped tables draw each shaded row as one filled box across the table, with no column
    lines inside it; the line finder then sees one wide cell, and every other row of the table came
    out as a single string ("Bihar 21,016,708 4,332,141 ..."). The row is split when no word in it
    crosses a column line and its words fill the columns a neighbouring unspanned row fills (at
    least three, and three quarters of them). A cell that truly spans (a note, a group heading) has
    words straddling the lines it covers, or too few of them.
    """

    def filled(r: int, j: int, k: int) -> set[int] | None:
        if not 0 <= r < len(rows) or any(rows[r][c] is None for c in range(j, k)):
            return None
        return {c for c in range(j, k) if (rows[r][c] or "").strip()}

    for i in range(1, len(rows)):  # the top row may be a header that spans by design
        j = 0
        while j < len(rows[i]):
            k = j + 1
            while k < len(rows[i]) and rows[i][k] is None:
                k += 1
            box = row_bboxes[i][j]
            ref = filled(i - 1, j, k) or filled(i + 1, j, k) if k - j >= 3 and box is not None else None
            if ref and box is not None:
                cols: dict[int, list[_Word]] = {}
                for w in words:
                    cx, cy = (w.x0 + w.x1) / 2, (w.y0 + w.y1) / 2
                    if not (box[0] <= cx <= box[2] and box[1] <= cy <= box[3]):
                        continue
                    col = next(
                        (c for c in range(j, k) if edges[c] - 1 <= w.x0 and w.x1 <= edges[c + 1] + 1), None
                    )
                    if col is None:  # a word across a column line: a real span
                        cols = {}
                        break
                    cols.setdefault(col, []).append(w)
                if len(cols) >= 3 and set(cols) <= ref and len(cols) >= 0.75 * len(ref):
                    for c in range(j, k):
                        ws = cols.get(c, [])
                        rows[i][c] = _clean(" ".join(_words_text(band) for band in _bands(ws)))
                        row_bboxes[i][c] = (edges[c], box[1], edges[c + 1], box[3])
            j = k


# ------------------------------------------------------------------------------------------------
# Text-alignment ("stream") finder
# ------------------------------------------------------------------------------------------------

_NUM_RE = re.compile(r"^[\(\[]?[-–—+−]?[$€£¥]?\d[\d,.\s]*%?[\)\]]?[a-z*†‡]?$", re.IGNORECASE)


@dataclass(slots=True)
class _Word:
    x0: float
    y0: float
    x1: float
    y1: float
    text: str


@dataclass(slots=True)
class _TextLine:
    """Words on one baseline band, split into chunks at gaps wider than a few spaces."""

    words: list[_Word]
    chunks: list[list[_Word]]
    # the band's extent, computed once (the finders read it many times per line)
    x0: float = field(init=False)
    y0: float = field(init=False)
    x1: float = field(init=False)
    y1: float = field(init=False)

    def __post_init__(self) -> None:
        ws = self.words
        self.x0, self.y0 = min(w.x0 for w in ws), min(w.y0 for w in ws)
        self.x1, self.y1 = max(w.x1 for w in ws), max(w.y1 for w in ws)


def _page_words(pg: pymupdf.Page, page: Page | None = None) -> list[_Word]:
    """Horizontal words of the page, in display coordinates (the line finder's grid is in them too).

    The text stage's words when the page carries them (read from the TextPage its lines came from),
    else read from the PDF here.
    """
    words = page.words if page is not None and page.words is not None else extract_words(pg)
    return [_Word(*w) for w in words if w[2] > w[0] and w[3] > w[1] and w[4].strip()]


def _bands(words: list[_Word]) -> list[list[_Word]]:
    """Words clustered into lines by vertical overlap, each line left to right."""
    words = sorted(words, key=lambda w: ((w.y0 + w.y1) / 2, w.x0))
    bands: list[list[_Word]] = []
    band_y: list[tuple[float, float]] = []
    for w in words:
        h = w.y1 - w.y0
        if bands:
            by0, by1 = band_y[-1]
            overlap = min(by1, w.y1) - max(by0, w.y0)
            if overlap >= 0.5 * min(h, by1 - by0):
                bands[-1].append(w)
                # the band keeps the core of its first words so superscripts do not stretch it
                continue
        bands.append([w])
        band_y.append((w.y0, w.y1))
    for band in bands:
        band.sort(key=lambda w: w.x0)
    return bands


def _text_lines(words: list[_Word], gap_factor: float) -> list[_TextLine]:
    """Cluster words into lines by vertical overlap, then cut each line into chunks at wide gaps."""
    lines: list[_TextLine] = []
    for band in _bands(words):
        h = statistics.median(w.y1 - w.y0 for w in band)
        chunks: list[list[_Word]] = [[band[0]]]
        for w in band[1:]:
            if w.x0 - chunks[-1][-1].x1 > gap_factor * h:
                chunks.append([w])
            else:
                chunks[-1].append(w)
        lines.append(_TextLine(band, chunks))
    return lines


def _cell_texts(tab: Any, words: list[_Word]) -> list[list[str | None]]:
    """Cell texts of a PyMuPDF grid read from word boxes (Table.extract() drops inter-word spaces)."""
    out: list[list[str | None]] = []
    centres = [((w.x0 + w.x1) / 2, (w.y0 + w.y1) / 2, w) for w in words]
    for r in tab.rows:
        _, ry0, _, ry1 = r.bbox
        in_row = [c for c in centres if ry0 <= c[1] <= ry1]  # one pass over the page per row, not per cell
        row: list[str | None] = []
        for c in r.cells:
            if c is None:
                row.append(None)
                continue
            x0, y0, x1, y1 = c
            inside = [w for cx, cy, w in in_row if x0 <= cx <= x1 and y0 <= cy <= y1]
            row.append(" ".join(_words_text(band) for band in _bands(inside)))
        out.append(row)
    return out


def _is_num(text: str) -> bool:
    return bool(_NUM_RE.match(text.strip())) if text.strip() else False


def _table_areas(lines: list[_TextLine], s: TableSettings) -> list[list[_TextLine]]:
    """Runs of consecutive multi-chunk lines (with short stub-only lines bridged) = table candidates."""
    if not lines:
        return []
    h = statistics.median(ln.y1 - ln.y0 for ln in lines)
    areas: list[list[_TextLine]] = []
    cur: list[_TextLine] = []
    pending: list[_TextLine] = []
    for ln in lines:
        multi = len(ln.chunks) >= 2
        if cur:
            last = pending[-1] if pending else cur[-1]
            gap = ln.y0 - last.y1
            if gap > s.max_row_gap * h:
                areas.append(cur)
                cur, pending = [], []
        if multi:
            if cur:
                cur.extend(pending)
            pending = []
            cur.append(ln)
            continue
        if not cur:
            continue
        # A single-chunk line inside a table: a stub-only row (section label, wrapped stub) starts in
        # the first column; a centred caption or a paragraph does not.
        left = min(x.x0 for x in cur)
        right = max(x.x1 for x in cur)
        if (
            len(pending) < s.max_bridge_lines
            and abs(ln.x0 - left) <= 3 * h
            and ln.x1 <= right + h
            and ln.x1 - ln.x0 < 0.6 * (right - left)
        ):
            pending.append(ln)
        else:
            areas.append(cur)
            cur, pending = [], []
    if cur:
        areas.append(cur)
    return [a for a in areas if len(a) >= s.min_rows]


def _column_cover(area: list[_TextLine], x0: float, n: int) -> list[int]:
    """How many lines of ``area`` have a word over each 1-pt column ``x0 + i``, i < n.

    Each line's words are merged into runs first, so a line counts once per column; the runs go
    into a difference array that running sums turn into counts (one pass, not one per point).
    """
    delta = [0] * (n + 1)
    for ln in area:
        runs = sorted((max(0, int(w.x0 - x0)), min(n, int(math.ceil(w.x1 - x0)))) for w in ln.words)
        start, end = runs[0]
        for a, b in runs[1:]:
            if a > end:
                if end > start:
                    delta[start] += 1
                    delta[end] -= 1
                start, end = a, b
            else:
                end = max(end, b)
        if end > start:
            delta[start] += 1
            delta[end] -= 1
    return list(itertools.accumulate(delta[:n]))


def _column_bounds(area: list[_TextLine], s: TableSettings) -> list[float]:
    """Column boundaries: x ranges that (almost) no word of the area covers, wide enough to be gutters."""
    x0 = min(ln.x0 for ln in area)
    x1 = max(ln.x1 for ln in area)
    h = statistics.median(ln.y1 - ln.y0 for ln in area)
    n = int(math.ceil(x1 - x0)) + 1
    cover = _column_cover(area, x0, n)
    limit = int(s.span_tolerance * len(area))
    bounds: list[float] = []
    i = 0
    while i < n:
        if cover[i] <= limit:
            j = i
            while j < n and cover[j] <= limit:
                j += 1
            if i > 0 and j < n and (j - i) >= s.min_col_gap * h:
                # inside the gutter, the position with the fewest crossings
                best = min(range(i, j), key=lambda k: (cover[k], abs(k - (i + j) / 2)))
                bounds.append(x0 + best + 0.5)
            i = j
        else:
            i += 1
    return [x0 - 0.5, *bounds, x1 + 0.5]


def _col_of(x: float, edges: list[float]) -> int:
    for c in range(len(edges) - 1):
        if x < edges[c + 1]:
            return c
    return len(edges) - 2


def _line_cells(ln: _TextLine, edges: list[float]) -> dict[int, tuple[int, list[_Word]]]:
    """Cells of one line: first column -> (last column, words); a chunk crossing a gutter spans."""
    cells: dict[int, tuple[int, list[_Word]]] = {}
    inner = edges[1:-1]
    for chunk in ln.chunks:
        crosses = any(w.x0 + 1 < e < w.x1 - 1 for w in chunk for e in inner)
        if crosses:
            c0 = _col_of((chunk[0].x0 + chunk[0].x1) / 2, edges)
            c1 = _col_of((chunk[-1].x0 + chunk[-1].x1) / 2, edges)
            c0 = min(c0, _col_of(chunk[0].x0 + 1, edges))
            c1 = max(c1, _col_of(chunk[-1].x1 - 1, edges))
            groups = [(c0, c1, chunk)]
        else:
            groups = []
            for w in chunk:
                c = _col_of((w.x0 + w.x1) / 2, edges)
                if groups and groups[-1][0] == c:
                    groups[-1][2].append(w)
                else:
                    groups.append((c, c, [w]))
        for c0, c1, ws in groups:
            if c0 in cells:  # two chunks in one column (a gap inside the cell): join them
                e1, prev = cells[c0]
                cells[c0] = (max(e1, c1), prev + ws)
            else:
                cells[c0] = (c1, list(ws))
    return cells


def _words_text(ws: list[_Word]) -> str:
    return " ".join(w.text for w in ws)


def _stream_part(area: list[_TextLine], page_index: int, s: TableSettings) -> _Part | None:
    edges = _column_bounds(area, s)
    n_cols = len(edges) - 1
    if n_cols < s.min_cols:
        return None
    line_cells = [_line_cells(ln, edges) for ln in area]
    h = statistics.median(ln.y1 - ln.y0 for ln in area)

    # Header: leading lines whose stub is empty or whose other cells hold no number.
    def headerish(cells: dict[int, tuple[int, list[_Word]]]) -> bool:
        if 0 not in cells:
            return True
        return not any(_is_num(_words_text(ws)) for c, (_, ws) in cells.items() if c > 0)

    n_head = 0
    while n_head < min(len(area) - 1, s.header_scan_rows) and headerish(line_cells[n_head]):
        n_head += 1
    if n_head == len(area) - 1 or n_head == 0:
        n_head = 1 if len(area) > 2 else 0

    # Group lines into rows. Header lines without spanning cells stack into one header row
    # (a multi-line header); body lines continue the previous row only when they fill none of
    # the key columns (filled in most body lines) and only columns the previous row fills.
    body = line_cells[n_head:]
    fill = [sum(1 for lc in body if c in lc) for c in range(n_cols)]
    key = {c for c in range(n_cols) if fill[c] >= s.key_column_fill * max(len(body), 1)}
    rows: list[dict[int, tuple[int, list[_Word]]]] = []
    row_kind: list[bool] = []  # True = header
    for k, (ln, cells) in enumerate(zip(area, line_cells, strict=True)):
        is_head = k < n_head
        spans = any(e > c for c, (e, _) in cells.items())
        if rows and k > 0:
            prev_ln = area[k - 1]
            tight = ln.y0 - prev_ln.y1 <= s.wrap_gap * h
            prev = rows[-1]
            prev_spans = any(e > c for c, (e, _) in prev.items())
            join = False
            if is_head and row_kind[-1] and not spans and not prev_spans and tight:
                join = True
            elif (
                not is_head
                and not row_kind[-1]
                and s.merge_wrapped
                and tight
                and key
                and not (key & set(cells))
                and set(cells) <= set(prev)
            ):
                join = True
            if join:
                for c, (e, ws) in cells.items():
                    if c in prev:
                        pe, pws = prev[c]
                        prev[c] = (max(pe, e), pws + ws)
                    else:
                        prev[c] = (e, list(ws))
                continue
        rows.append({c: (e, list(ws)) for c, (e, ws) in cells.items()})
        row_kind.append(is_head)

    grid: list[list[str | None]] = []
    bbs: list[list[BBox | None]] = []
    for row in rows:
        texts: list[str | None] = [""] * n_cols
        boxes: list[BBox | None] = [None] * n_cols
        for c, (e, ws) in sorted(row.items()):
            if texts[c] is None:  # covered by a span to its left: keep the words with that cell
                continue
            # order words by line, then x, so a stacked header reads top to bottom
            ws_sorted = sorted(ws, key=lambda w: (round((w.y0 + w.y1) / 2 / max(h * 0.5, 1)), w.x0))
            texts[c] = _clean(_words_text(ws_sorted))
            boxes[c] = (edges[c], min(w.y0 for w in ws), edges[e + 1], max(w.y1 for w in ws))
            for cc in range(c + 1, e + 1):
                if cc in row:  # a chunk in a covered column: its words join the spanning cell
                    texts[c] = _clean(f"{texts[c]} {_words_text(row[cc][1])}")
                texts[cc] = None
        grid.append(texts)
        bbs.append(boxes)
    header_rows = sum(1 for k in row_kind if k)
    if header_rows >= len(rows):
        header_rows = 0
    top = min(ln.y0 for ln in area)
    bottom = max(ln.y1 for ln in area)
    part = _Part(
        page_index=page_index,
        bbox=(edges[0], top, edges[-1], bottom),
        rows=grid,
        row_bboxes=bbs,
        col_edges=edges,
        header_rows=header_rows,
        strategy="stream",
    )
    return part


_MARKER_RE = re.compile(r"^([•●○■□▪◦‣∙·*–—-]|\(?[0-9]{1,2}[.)]|\(?[a-z][.)]|[ivx]{1,4}[.)])$", re.IGNORECASE)


def _keep(part: _Part, s: TableSettings) -> bool:
    n_rows = len(part.rows)
    if n_rows < s.min_rows or part.n_cols < s.min_cols:
        return False
    cells = [c for r in part.rows for c in r if c is not None]
    filled = [c for c in cells if c]
    if not cells or len(filled) / len(cells) < s.min_filled_ratio:
        return False
    if part.strategy != "stream":
        return True
    if n_rows < s.min_stream_rows:
        return False
    # Prose in columns and bulleted lists align like tables; their cells give them away.
    if statistics.median(len(c.split()) for c in filled) >= s.max_median_words:
        return False
    stubs = [r[0] for r in part.rows if r[0]]
    return not (part.n_cols == 2 and stubs and all(_MARKER_RE.match(x) for x in stubs))


def _outside(box: BBox, regions: list[BBox], pad: float = 1.0) -> bool:
    """True when the centre of ``box`` lies in none of ``regions`` (each grown by ``pad``)."""
    cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    return not any(r[0] - pad <= cx <= r[2] + pad and r[1] - pad <= cy <= r[3] + pad for r in regions)


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


def _overlap(a: BBox, b: BBox) -> float:
    """Intersection area over the smaller box's area."""
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    if w <= 0 or h <= 0:
        return 0.0
    small = min((a[2] - a[0]) * (a[3] - a[1]), (b[2] - b[0]) * (b[3] - b[1]))
    return w * h / small if small > 0 else 0.0


def _has_grid(cdrawings: list[dict[str, Any]]) -> bool:
    """True when the page's drawings hold at least two vertical and two horizontal rules.

    Pages with only horizontal rules (booktabs style) or none give the line finder nothing to find,
    so it is skipped there. Reads ``get_cdrawings()`` (plain tuples): ``get_drawings()`` is the same
    call plus a Python pass making Point and Rect objects of every item, which doubled the cost of
    this test on the many pages that turn out to have no grid.
    """
    vert = horiz = 0
    for path in cdrawings:
        stroked = path.get("type") in ("s", "fs")
        for item in path.get("items", ()):
            if item[0] == "l":
                (ax, ay), (bx, by) = item[1], item[2]
                if abs(ax - bx) < 1 and abs(ay - by) > 5:
                    vert += 1
                elif abs(ay - by) < 1 and abs(ax - bx) > 5:
                    horiz += 1
            elif item[0] == "re":
                x0, y0, x1, y1 = item[1]
                w, h = abs(x1 - x0), abs(y1 - y0)
                if w < 3 and h > 5:
                    vert += 1
                elif h < 3 and w > 5:
                    horiz += 1
                elif w > 5 and h > 5 and stroked:  # a filled box is shading, not a rule
                    vert, horiz = vert + 2, horiz + 2
            if vert >= 2 and horiz >= 2:
                return True
    return False


def _ruled_grids(
    pg: pymupdf.Page,
    cdrawings: list[dict[str, Any]],
    words: list[_Word],
    frame: tuple[float, ...] | None = None,
) -> list[Any]:
    """Ruled tables: PyMuPDF's line finder (``find_tables(use_layout=False)``) fed our word boxes.

    ``find_tables`` first reads every character of the page through 'rawdict' into Python dicts
    (about half its time) and, on rotated pages, re-reads each table's top row for a header (another
    quarter); we use neither: cell text comes from word boxes. Its line finder needs characters for
    two tests only, whether a box of joined graphics holds text (it then becomes a table border) and
    whether a candidate grid holds text, and word boxes answer both. So the finder's own steps
    (edges from the drawings, then ``TableFinder``; module functions of ``pymupdf.table``, the
    version pinned in requirements.lock, tests/unit/test_tables.py compares against
    ``find_tables``) run here with words in place of characters: the same tables on every ICDAR,
    tabula-java and camelot file of the corpus in a third of the time (bench/tables_speed.py,
    BENCHMARKS.md). The edges come from ``_make_edges`` (PyMuPDF's ``make_edges`` on the C-level
    drawings), the cells from ``_GridFinder``.

    MuPDF's drawings are in unrotated page space: the edges are built there, then turned to display
    space before the grid is cut into cells (the cell search walks from top-left corners, so it must
    see the page the way it is read). ``frame`` (see ``_reading_frame``) turns them once more, for
    a table printed sideways; ``words`` are then in that frame.
    """

    def as_chars(boxes: list[tuple[BBox, str]]) -> list[dict[str, Any]]:
        # "top"/"bottom" in page space, "y0"/"y1" in PDF space (what make_chars writes)
        h = pg.mediabox.height
        return [
            {"x0": b[0], "x1": b[2], "top": b[1], "bottom": b[3], "y0": h - b[3], "y1": h - b[1], "text": t}
            for b, t in boxes
        ]

    display = reading = [((w.x0, w.y0, w.x1, w.y1), w.text) for w in words]
    if frame is not None:
        back = tuple(~pymupdf.Matrix(frame))
        display = [(transform_box(b, back), t) for b, t in reading]
    unrotated = display
    if pg.rotation:
        derot = tuple(pg.derotation_matrix)
        unrotated = [(transform_box(b, derot), t) for b, t in display]
    tset = mt.TableSettings.resolve()
    chars = as_chars(unrotated)
    chars_token = mt._CHARS_VAR.set(chars)
    edges_token = mt._EDGES_VAR.set(_make_edges(pg, cdrawings, tset, chars))
    try:
        for turn in (tuple(pg.rotation_matrix) if pg.rotation else None, frame):
            if turn is not None:
                mt._EDGES_VAR.set([_edge_to_display(e, turn) for e in mt.EDGES])
        if pg.rotation or frame is not None:
            mt._CHARS_VAR.set(as_chars(reading))
        return _GridFinder(pg, tset).tables
    finally:
        mt._EDGES_VAR.reset(edges_token)
        mt._CHARS_VAR.reset(chars_token)


def _make_edges(
    pg: pymupdf.Page, cdrawings: list[dict[str, Any]], tset: Any, chars: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """``pymupdf.table.make_edges(page, tset=tset, paths=page.get_drawings())``, from ``get_cdrawings()``.

    The same edges in the same order (tests/unit/test_tables.py compares them on every ruled page
    of the corpus). PyMuPDF's version needs ``get_drawings()``, which turns every point and box of
    the page's drawings into Point and Rect objects, and then grows the joined graphics boxes one
    ``Rect | Point`` at a time through MuPDF's C API: on the corpus's ruled pages those two were
    three quarters of the edge building. Here the drawings stay tuples and a box grows by min/max
    (MuPDF's ``fz_include_point_in_rect`` is that; the coordinates are already C floats, so its
    rounding to float changes nothing). Supports the settings ``_ruled_grids`` uses (``lines``,
    not ``lines_strict``; no clip, no added lines or boxes).
    """
    assert "lines_strict" not in (tset.vertical_strategy, tset.horizontal_strategy)
    snap_x, snap_y, min_length = tset.snap_x_tolerance, tset.snap_y_tolerance, tset.edge_min_length
    page_height = pg.rect.height
    doctop_basis = pg.number * page_height
    page_number = pg.number + 1
    cx0, cy0, cx1, cy1 = pg.rect
    if pg.rotation in (90, 270):
        cx0, cy0, cx1, cy1 = 0.0, 0.0, cy1, cx1
    edges: list[dict[str, Any]] = []

    def neighbors(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
        return (
            (b[0] - snap_x <= a[0] <= b[2] + snap_x or b[0] - snap_x <= a[2] <= b[2] + snap_x)
            and (b[1] - snap_y <= a[1] <= b[3] + snap_y or b[1] - snap_y <= a[3] <= b[3] + snap_y)
        ) or (
            (a[0] - snap_x <= b[0] <= a[2] + snap_x or a[0] - snap_x <= b[2] <= a[2] + snap_x)
            and (a[1] - snap_y <= b[1] <= a[3] + snap_y or a[1] - snap_y <= b[3] <= a[3] + snap_y)
        )

    def add(path: dict[str, Any], p1: tuple[float, float], p2: tuple[float, float]) -> None:
        if not (abs(p1[0] - p2[0]) <= snap_x or abs(p1[1] - p2[1]) <= snap_y):
            return  # only axis-parallel lines
        x0, x1 = min(p1[0], p2[0]), max(p1[0], p2[0])
        y0, y1 = min(p1[1], p2[1]), max(p1[1], p2[1])
        if x0 > cx1 or x1 < cx0 or y0 > cy1 or y1 < cy0:
            return
        x0, x1 = cx0 if x0 < cx0 else x0, cx1 if x1 > cx1 else x1
        y0, y1 = cy0 if y0 < cy0 else y0, cy1 if y1 > cy1 else y1
        width, height = x1 - x0, y1 - y0
        if width == height == 0:
            return
        edges.append(
            {
                "x0": x0,
                "y0": page_height - y0,
                "x1": x1,
                "y1": page_height - y1,
                "width": width,
                "height": height,
                "pts": [(x0, y0), (x1, y1)],
                "linewidth": path.get("width"),
                "stroke": True,
                "fill": False,
                "evenodd": False,
                "stroking_color": path.get("color") or path.get("fill"),
                "non_stroking_color": None,
                "object_type": "line",
                "page_number": page_number,
                "stroking_pattern": None,
                "non_stroking_pattern": None,
                "top": y0,
                "bottom": y1,
                "doctop": y0 + doctop_basis,
                "orientation": "h" if y0 == y1 else "v",
            }
        )

    # graphics boxes that (almost) touch are joined; a joined box holding text becomes a border
    boxes = sorted({tuple(path["rect"]) for path in cdrawings}, key=lambda r: (r[3], r[0]))
    char_boxes = [(c["x0"], c["x1"], c["y0"], c["y1"]) for c in chars]  # y0/y1 as make_chars writes
    borders = []
    while boxes:
        box = boxes[0]
        grown = True
        while grown:
            grown = False
            for i in range(len(boxes) - 1, 0, -1):
                other = boxes[i]
                if neighbors(box, other):
                    box = (
                        min(box[0], other[0], other[2]),
                        min(box[1], other[1], other[3]),
                        max(box[2], other[0], other[2]),
                        max(box[3], other[1], other[3]),
                    )
                    del boxes[i]
                    grown = True
        if any(box[0] <= a and b <= box[2] and box[1] <= c and box[3] >= d for a, b, c, d in char_boxes):
            borders.append(box)
        del boxes[0]

    for path in cdrawings:
        items = path["items"]
        if path.get("closePath") and items[0][0] == "l" and items[-1][0] == "l":
            items = [*items, ("l", items[-1][2], items[0][1])]
        for item in items:
            kind = item[0]
            if kind == "l":
                add(path, item[1], item[2])
            elif kind == "re":
                x0, y0, x1, y1 = item[1]
                if x1 < x0:
                    x0, x1 = x1, x0
                if y1 < y0:
                    y0, y1 = y1, y0
                w, h = x1 - x0, y1 - y0
                if (w <= min_length and w < h) or (h <= min_length and h < w):  # a drawn line
                    if w < h:
                        x = abs(x1 + x0) / 2
                        add(path, (x, y0), (x, y1))
                    else:
                        y = abs(y1 + y0) / 2
                        add(path, (x0, y), (x1, y))
                    continue
                add(path, (x0, y0), (x0, y1))
                add(path, (x0, y1), (x1, y1))
                add(path, (x1, y1), (x1, y0))
                add(path, (x1, y0), (x0, y0))
            elif kind == "qu":
                ul, ur, ll, lr = item[1]
                add(path, ul, ll)
                add(path, ll, lr)
                add(path, lr, ur)
                add(path, ur, ul)
    border = {"color": (0, 0, 0), "fill": None, "width": 1}
    for x0, y0, x1, y1 in borders:
        add(border, (x0, y0), (x1, y0))
        add(border, (x0, y1), (x1, y1))
        add(border, (x0, y0), (x0, y1))
        add(border, (x1, y0), (x1, y1))
    return edges


class _GridFinder(mt.TableFinder):
    """PyMuPDF's ``TableFinder`` with its two quadratic steps rewritten, same tables out.

    ``intersections_to_cells`` scans every later intersection for each one and rebuilds the edge
    sets of both points on every test; ``cells_to_tables`` unions ``pymupdf.Rect`` objects per cell.
    On a dense grid (tabula's schools.pdf: ~500 intersections a page) that was 80% of the ruled
    finder's time. The versions below index points by column and by row and build each point's edge
    sets once; they return the same cells in the same order and the same cell groups
    (tests/unit/test_tables.py runs both on every ruled page of the corpus).
    """

    def __init__(self, page: pymupdf.Page, settings: Any):
        self.page = weakref.proxy(page)
        self.textpage = None
        self.settings = settings
        self.edges = self.get_edges()
        self.intersections = mt.edges_to_intersections(
            self.edges, settings.intersection_x_tolerance, settings.intersection_y_tolerance
        )
        self.cells = _grid_cells(self.intersections)
        self.tables = [mt.Table(self.page, group) for group in _cell_groups(self.cells, mt.CHARS)]


def _grid_cells(intersections: dict[tuple[float, float], dict[str, list[Any]]]) -> list[BBox]:
    """The smallest cell at each intersection: ``pymupdf.table.intersections_to_cells``, indexed."""
    v_of = {p: {mt.bbox_getter(e) for e in edges["v"]} for p, edges in intersections.items()}
    h_of = {p: {mt.bbox_getter(e) for e in edges["h"]} for p, edges in intersections.items()}
    points = sorted(intersections)  # by x, then y
    column: dict[float, list[tuple[float, float]]] = {}  # points of one x, by y
    row: dict[float, list[tuple[float, float]]] = {}  # points of one y, by x
    place: dict[tuple[float, float], tuple[int, int]] = {}  # a point's index in its column and row
    for pt in points:
        col, line = column.setdefault(pt[0], []), row.setdefault(pt[1], [])
        place[pt] = len(col), len(line)
        col.append(pt)
        line.append(pt)
    cells: list[BBox] = []
    for pt in points:
        x, y = pt
        v, h = v_of[pt], h_of[pt]
        in_col, in_row = place[pt]
        rights: list[tuple[float, float]] | None = None  # built on first need: most points need it once
        for down in column[x][in_col + 1 :]:
            if v.isdisjoint(v_of[down]):
                continue
            if rights is None:
                rights = [r for r in row[y][in_row + 1 :] if not h.isdisjoint(h_of[r])]
            corner = next(
                (
                    (r[0], down[1])
                    for r in rights
                    if (r[0], down[1]) in v_of
                    and not v_of[(r[0], down[1])].isdisjoint(v_of[r])
                    and not h_of[(r[0], down[1])].isdisjoint(h_of[down])
                ),
                None,
            )
            if corner is not None:
                cells.append((x, y, *corner))
                break
    return cells


def _cell_groups(cells: list[BBox], chars: Sequence[dict[str, Any]]) -> list[list[BBox]]:
    """Cells grouped into tables: ``pymupdf.table.cells_to_tables`` without ``Rect`` arithmetic.

    Same passes (a group grows by the cells that share a corner with it, in list order, until a pass
    adds none), same filter (at least two distinct x0 and x1, some non-space character inside),
    same order (by top-left cell).
    """
    remaining = list(cells)
    groups: list[list[BBox]] = []
    current: list[BBox] = []
    corners: set[tuple[float, float]] = set()
    while remaining:
        before, left = len(current), []
        for cell in remaining:
            x0, y0, x1, y1 = cell
            four = ((x0, y0), (x0, y1), (x1, y0), (x1, y1))
            if not current or any(c in corners for c in four):
                corners.update(four)
                current.append(cell)
            else:
                left.append(cell)
        remaining = left
        if len(current) == before:
            groups.append(current)
            current, corners = [], set()
    if current:
        groups.append(current)
    if not groups:
        return groups
    boxes = [(c["x0"], c["top"], c["x1"], c["bottom"]) for c in chars if c["text"] not in mt.white_spaces]

    def keep(group: list[BBox]) -> bool:
        if len({c[0] for c in group}) < 2 or len({c[2] for c in group}) < 2:
            return False
        rx0, ry0 = min(c[0] for c in group), min(c[1] for c in group)
        rx1, ry1 = max(c[2] for c in group), max(c[3] for c in group)
        return any(x0 < rx1 and x1 > rx0 and y0 < ry1 and y1 > ry0 for x0, y0, x1, y1 in boxes)

    return sorted((g for g in groups if keep(g)), key=lambda g: min((c[1], c[0]) for c in g))


def _edge_to_display(edge: dict[str, Any], rot: tuple[float, ...]) -> dict[str, Any]:
    x0, top, x1, bottom = transform_box((edge["x0"], edge["top"], edge["x1"], edge["bottom"]), rot)
    return {
        **edge,
        "x0": x0,
        "x1": x1,
        "top": top,
        "bottom": bottom,
        "width": x1 - x0,
        "height": bottom - top,
        "orientation": "h" if top == bottom else "v",
    }


def _stream_parts(
    pg: pymupdf.Page,
    page_index: int,
    s: TableSettings,
    all_words: list[_Word],
    frame: tuple[float, ...] | None = None,
) -> list[_Part]:
    """Ruled tables (line finder, cell text from words) plus text-aligned tables elsewhere on the page.

    ``all_words`` are the page's words in display coordinates, or in ``frame`` when given.
    """
    ruled: list[_Part] = []
    if s.finder == "auto":
        cdrawings = pg.get_cdrawings()
        if _has_grid(cdrawings):
            try:
                grids = _ruled_grids(pg, cdrawings, all_words, frame)
            except Exception:  # a drawing the line finder chokes on must not sink the document
                logger.warning(
                    "ruled-table finder failed on page %d; text alignment only", page_index, exc_info=True
                )
                grids = []
            for tab in grids:
                part = _to_part(tab, "lines", page_index, all_words)
                if part is not None and _keep(part, s):
                    ruled.append(part)
    regions = [p.bbox for p in ruled]  # words the ruled tables already read are not looked at again
    words = [w for w in all_words if _outside((w.x0, w.y0, w.x1, w.y1), regions, pad=0.0)]
    parts = list(ruled)
    for area in _table_areas(_text_lines(words, s.chunk_gap), s):
        part = _stream_part(area, page_index, s)
        if part is not None and _keep(part, s) and not any(_overlap(part.bbox, r.bbox) > 0.5 for r in ruled):
            parts.append(part)
    return parts


def _reading_frame(pg: pymupdf.Page, words: list[_Word]) -> tuple[float, ...] | None:
    """A matrix from display coordinates to a frame where the page's text runs left to right, for a
    page whose text mostly runs up or down (a landscape table printed on a portrait page); else None.

    Both finders read rows as horizontal bands of words, so on such a page they cut the table
    across its rows. Most words of three or more characters must be taller than wide; which way the
    text turns comes from the text layer's line directions (read on those pages only).
    """
    long = [w for w in words if len(w.text) >= 3]
    if len(long) < 10 or sum(w.y1 - w.y0 > 1.5 * (w.x1 - w.x0) for w in long) < 0.6 * len(long):
        return None
    a, b, c, d = tuple(pg.rotation_matrix)[:4]  # line directions are in unrotated space
    up = down = 0
    for block in pg.get_text("dict", flags=TEXT_FLAGS)["blocks"]:
        for ln in block.get("lines", ()):
            dx, dy = ln["dir"]
            dy = b * dx + d * dy
            n = sum(len(sp["text"].strip()) for sp in ln["spans"])
            if dy < -0.9:
                up += n
            elif dy > 0.9:
                down += n
    width, height = pg.rect.width, pg.rect.height
    if up > 2 * down:  # text reads bottom to top: turn the page a quarter clockwise
        return (0.0, 1.0, -1.0, 0.0, height, 0.0)
    if down > 2 * up:  # top to bottom: a quarter anticlockwise
        return (0.0, -1.0, 1.0, 0.0, 0.0, width)
    return None


def _turn_lines(lines: list[Line], frame: tuple[float, ...]) -> list[Line]:
    return [dataclasses.replace(ln, bbox=transform_box(ln.bbox, frame)) for ln in lines]


def _table_to_display(table: Table, back: dict[int, tuple[float, ...]]) -> Table:
    """Boxes of a table found in reading frames (``_reading_frame``) mapped back to display space
    (``back``: each turned page's inverse frame)."""
    if table.first_page_index in back:
        table.bbox = transform_box(table.bbox, back[table.first_page_index])
    table.regions = [(i, transform_box(b, back[i]) if i in back else b) for i, b in table.regions]
    for cell in table.cells:
        if cell.bbox is not None and cell.page_index in back:
            cell.bbox = transform_box(cell.bbox, back[cell.page_index])
    return table


def _page_parts(
    pg: pymupdf.Page,
    page: Page,
    lines: list[Line],
    s: TableSettings,
    words: list[_Word],
    frame: tuple[float, ...] | None = None,
) -> list[_Part]:
    """The page's tables, before merging. ``words`` feed the auto and stream finders; with
    ``frame``, they, ``lines`` and the parts are in it."""
    parts: list[_Part] = []
    if s.finder in ("auto", "stream"):
        parts = _stream_parts(pg, page.index, s, words, frame)
    else:
        for tab, strategy in _raw_tables(pg, s.finder, s.refine):
            part = _to_part(tab, strategy, page.index)
            if part is not None and _keep(part, s):
                parts.append(part)
    parts.sort(key=lambda p: (p.bbox[1], p.bbox[0]))
    for part in parts:
        _find_caption(part, lines, s)
    return parts


def _gap_ok(
    lines: list[Line],
    page: Page,
    regions: list[BBox],
    y_from: float,
    y_to: float,
    skip: set[int],
    relax: int,
    s: TableSettings,
) -> bool:
    """True when only furniture or a few short lines lie between y_from and y_to on the page."""
    lo, hi = page.height * s.margin_fraction, page.height * (1 - s.margin_fraction)
    count = 0
    for i, ln in enumerate(lines):
        if i in skip or ln.furniture or not _outside(ln.bbox, regions):
            continue
        cy = (ln.bbox[1] + ln.bbox[3]) / 2
        if not (y_from <= cy <= y_to) or cy < lo or cy > hi:
            continue
        if len(ln.text.strip()) > s.max_gap_line_chars * relax:
            return False
        count += 1
    return count <= s.max_gap_lines * relax


def _same_columns(a: _Part, b: _Part, s: TableSettings) -> bool:
    if a.n_cols != b.n_cols:
        return False
    wa = a.col_edges[-1] - a.col_edges[0]
    wb = b.col_edges[-1] - b.col_edges[0]
    if wa <= 0 or wb <= 0:
        return False
    # Relative boundaries (width ratios) match whether or not the page offsets differ (odd/even pages).
    ra = [(x - a.col_edges[0]) / wa for x in a.col_edges]
    rb = [(x - b.col_edges[0]) / wb for x in b.col_edges]
    return max(abs(x - y) for x, y in zip(ra, rb, strict=True)) <= s.col_tolerance


def _header_repeat(a: _Part, b: _Part, s: TableSettings) -> int:
    """Number of leading rows of ``b`` that repeat ``a``'s header (0 when none).

    Text finders cut a multi-line header into one row per printed line, and a continuation may
    start its header one line lower or rename the stub column, so each leading row of ``b`` is
    compared with any of ``a``'s first rows, column by column, rather than row ``i`` with row ``i``.
    """
    depth = max(a.header_rows, s.header_scan_rows)
    a_rows = [[_norm(c) for c in r] for r in a.rows[:depth]]
    dropped = matched = 0
    for row in b.rows[: depth + 1]:
        cells = [_norm(c) for c in row]
        filled = [i for i, c in enumerate(cells) if c]
        if not filled:
            dropped += 1
            continue
        if not any(
            sum(1 for i in filled if i < len(ar) and ar[i] == cells[i]) / len(filled) >= s.header_match_ratio
            for ar in a_rows
        ):
            break
        dropped += 1
        matched += 1
    # Never drop the whole continuation, and only when a real header line was recognised.
    return dropped if matched and dropped < len(b.rows) else 0


def _continues(
    a: _Part,
    b: _Part,
    pages: dict[int, Page],
    lines: dict[int, list[Line]],
    regions: dict[int, list[BBox]],
    last_on_page: bool,
    first_on_page: bool,
    s: TableSettings,
) -> bool:
    if b.page_index != a.page_index + 1 or not (last_on_page and first_on_page):
        return False
    if not _same_columns(a, b, s):
        return False
    continued = bool(b.caption and _CONTINUED_RE.search(b.caption))
    relax = s.continued_relax_factor if continued else 1
    pa, pb = pages[a.page_index], pages[b.page_index]
    below_a = _gap_ok(lines[a.page_index], pa, regions[a.page_index], a.bbox[3], pa.height, set(), relax, s)
    above_b = _gap_ok(
        lines[b.page_index], pb, regions[b.page_index], 0.0, b.bbox[1], set(b.caption_lines), relax, s
    )
    # A fresh caption that is not a continuation ("Table 5" under "Table 4") starts a new table.
    if b.caption and not continued and a.caption and _norm(a.caption) != _norm(b.caption):
        return False
    return below_a and above_b


def _cell_shape(part: _Part, r_local: int, c: int, s: TableSettings) -> tuple[BBox | None, int, int, bool]:
    """(bbox, local row span, column span, too tall for its row) of the cell at (r_local, c) of a part."""
    bbs = part.row_bboxes[r_local] if r_local < len(part.row_bboxes) else []
    bb = bbs[c] if c < len(bbs) else None
    col_span = row_span = 1
    if bb is not None:
        col_span = max(1, sum(1 for x in part.col_edges[c + 1 : -1] if x < bb[2] - 1) + 1)
        for rr in range(r_local + 1, len(part.rows)):
            below = part.row_bboxes[rr] if rr < len(part.row_bboxes) else []
            if c < len(below) and below[c] is None and part.rows[rr][c] is None:
                ys = [x[1] for x in below if x is not None]
                if ys and min(ys) < bb[3] - 1:
                    row_span += 1
                    continue
            break
    heights = [b[3] - b[1] for b in bbs if b is not None]
    tall = (
        bb is not None
        and len(heights) > 1
        and bb[3] - bb[1] > s.suspicious_ratio * statistics.median(heights)
    )
    return bb, row_span, col_span, tall


def _build(parts: list[_Part], drop: list[int], table_id: str, s: TableSettings) -> Table:
    """One table from parts joined by rows (``drop`` = repeated header rows skipped per part)."""
    first = parts[0]
    n_cols = first.n_cols
    cells: list[Cell] = []
    row0 = 0
    for part, skip in zip(parts, drop, strict=True):
        for r_local in range(skip, len(part.rows)):
            r = row0 + r_local - skip
            for c, text in enumerate(part.rows[r_local]):
                if text is None:
                    continue
                bb, row_span, col_span, tall = _cell_shape(part, r_local, c, s)
                is_header = part is first and r_local < first.header_rows
                # A body cell spanning columns, or one much taller than its row, is often two cells
                # the finder fused: flag it for review rather than guess.
                suspicious = (not is_header and col_span > 1) or tall
                cells.append(
                    Cell(
                        row=r,
                        col=c,
                        text=text,
                        page_index=part.page_index,
                        row_span=row_span,
                        col_span=min(col_span, n_cols - c),
                        bbox=bb,
                        is_header=is_header,
                        suspicious=suspicious,
                    )
                )
        row0 += len(part.rows) - skip
    return Table(
        table_id=table_id,
        first_page_index=first.page_index,
        last_page_index=parts[-1].page_index,
        n_rows=row0,
        n_cols=n_cols,
        cells=cells,
        bbox=first.bbox,
        header_rows=first.header_rows,
        pages=sorted({p.page_index for p in parts}),
        strategy=first.strategy,
        caption=first.caption,
        merge_kind="rows" if len(parts) > 1 else "",
        regions=[(p.page_index, p.bbox) for p in parts],
    )


# ------------------------------------------------------------------------------------------------
# Column continuations: a wide table whose further columns follow on the next page, same rows
# ------------------------------------------------------------------------------------------------


@dataclass
class _StubMatch:
    """Rows ``a_rows`` of the first part and ``b_rows`` of the continuation carry the same stub.

    One side may hold a stub wrapped over two rows (the second row holding nothing but the rest of
    the stub) where the other side prints it on one row.
    """

    a_rows: tuple[int, ...]
    b_rows: tuple[int, ...]


def _stub_keys(part: _Part) -> tuple[list[str], list[bool]]:
    """Normalised stub (first-column) text per row, and whether the row holds nothing else."""
    keys = [_norm(r[0]) if r else "" for r in part.rows]
    only = [bool(k) and not any(c for c in r[1:]) for k, r in zip(keys, part.rows, strict=True)]
    return keys, only


def _align_stubs(a: _Part, b: _Part, s: TableSettings) -> list[_StubMatch]:
    """Align two parts' rows by their stub texts, in order (linear, with a small resync window)."""
    ka, oa = _stub_keys(a)
    kb, ob = _stub_keys(b)
    out: list[_StubMatch] = []
    i = j = 0
    while i < len(ka) and j < len(kb):
        if not ka[i]:
            i += 1
            continue
        if not kb[j]:
            j += 1
            continue
        if ka[i] == kb[j]:
            out.append(_StubMatch((i,), (j,)))
            i, j = i + 1, j + 1
            continue
        if i + 1 < len(ka) and oa[i + 1] and ka[i] + ka[i + 1] == kb[j]:
            out.append(_StubMatch((i, i + 1), (j,)))
            i, j = i + 2, j + 1
            continue
        if j + 1 < len(kb) and ob[j + 1] and ka[i] == kb[j] + kb[j + 1]:
            out.append(_StubMatch((i,), (j, j + 1)))
            i, j = i + 1, j + 2
            continue
        for d in range(1, s.stub_resync + 1):  # a row only one side has: skip it and resynchronise
            if i + d < len(ka) and ka[i + d] == kb[j]:
                i += d
                break
            if j + d < len(kb) and kb[j + d] == ka[i]:
                j += d
                break
        else:
            i, j = i + 1, j + 1
    return out


def _same_stubs(a: _Part, b: _Part, s: TableSettings) -> list[_StubMatch] | None:
    """The stub alignment when ``b`` repeats ``a``'s row labels row for row, else None.

    Both parts must have most of their labelled rows matched (``stub_match_ratio``), with at least
    ``min_stub_rows`` matches and as many distinct labels, so that a pattern like Male/Female/Male/
    Female repeated by a row continuation does not count.
    """
    ka, _ = _stub_keys(a)
    kb, _ = _stub_keys(b)
    la = [k for k in ka if k]
    lb = [k for k in kb if k]
    if min(len(la), len(lb)) < s.min_stub_rows:
        return None
    # cheap filter first: most labels of each side must occur on the other at all
    sa, sb = set(la), set(lb)
    if sum(k in sb for k in la) < 0.5 * len(la) or sum(k in sa for k in lb) < 0.5 * len(lb):
        return None
    matches = _align_stubs(a, b, s)
    matched_a = sum(len(m.a_rows) for m in matches)
    matched_b = sum(len(m.b_rows) for m in matches)
    distinct = {ka[m.a_rows[0]] for m in matches}
    if (
        len(matches) < s.min_stub_rows
        or len(distinct) < s.min_stub_rows
        or matched_a < s.stub_match_ratio * len(la)
        or matched_b < s.stub_match_ratio * len(lb)
    ):
        return None
    return matches


def _continued_evidence(a: _Part, b: _Part, s: TableSettings) -> bool:
    """A caption or header cell of ``b`` says "continued", or ``b`` repeats ``a``'s caption exactly."""
    if b.caption and _CONTINUED_RE.search(b.caption):
        return True
    head = b.rows[: max(b.header_rows, 1)]
    if any(c and _CONTINUED_RE.search(c) for r in head for c in r):
        return True
    return bool(a.caption) and _norm(a.caption) == _norm(b.caption)


def _build_columns(
    parts: list[_Part], aligns: list[list[_StubMatch]], table_id: str, s: TableSettings
) -> Table:
    """One table from a first part and column continuations aligned to its rows by stub.

    The first part's rows and stub column are kept; each continuation adds its other columns
    (header cells included) on the rows its stubs matched. Continuation rows that matched nothing
    get rows of their own: leading ones (header lines) pair bottom-up with the first part's leading
    rows, later ones follow the last matched row. A stub wrapped over two rows on the first part
    but printed on one row of a continuation is joined into one cell (the continuation shows it is
    one label).
    """
    first = parts[0]
    n_a = len(first.rows)
    # slot keys order the merged rows: (first-part row, continuation number, sequence)
    a_key: dict[int, tuple[int, int, int]] = {i: (i, 0, 0) for i in range(n_a)}
    fold: dict[int, int] = {}  # first-part row -> row it is folded into (second line of a wrapped stub)
    b_keys: list[dict[int, tuple[int, int, int]]] = []
    skip_b: dict[int, set[int]] = {k: set() for k in range(1, len(parts))}
    for k, matches in enumerate(aligns, start=1):
        b = parts[k]
        keys: dict[int, tuple[int, int, int]] = {}
        for m in matches:
            keys[m.b_rows[0]] = (m.a_rows[0], 0, 0)
            if len(m.b_rows) == 2:  # the rest of a wrapped stub: nothing but the stub, kept once
                skip_b[k].add(m.b_rows[1])
            if len(m.a_rows) == 2:
                fold[m.a_rows[1]] = m.a_rows[0]
        first_a = matches[0].a_rows[0]
        first_b = matches[0].b_rows[0]
        lead_a = list(range(first_a))
        for n, j in enumerate(reversed(range(first_b))):  # header lines: pair from the bottom up
            keys[j] = (lead_a[-1 - n], 0, 0) if n < len(lead_a) else (-1, k, -n)
        anchor, seq = first_a, 0
        for j in range(first_b, len(b.rows)):
            if j in skip_b[k]:
                continue
            if j in keys:
                anchor, seq = keys[j][0], 0
                continue
            seq += 1  # unmatched: a row of its own after the last matched row
            keys[j] = (anchor, k, seq)
        b_keys.append(keys)
    for i in fold:
        a_key.pop(i)
    order = sorted(set(a_key.values()).union(*(set(d.values()) for d in b_keys)))
    rank = {key: r for r, key in enumerate(order)}

    cells: list[Cell] = []
    offsets = [0]
    for part in parts:
        offsets.append(offsets[-1] + (part.n_cols if part is first else part.n_cols - 1))
    n_cols = offsets[-1]
    header_rows = 0
    for k, part in enumerate(parts):
        keys = a_key if k == 0 else b_keys[k - 1]
        rows_of = {r: rank[keys[r]] for r in range(len(part.rows)) if r in keys}
        if part.header_rows:
            hdr = [rows_of[r] for r in range(part.header_rows) if r in rows_of]
            header_rows = max(header_rows, max(hdr, default=-1) + 1)
        for r_local, row in enumerate(part.rows):
            if r_local not in rows_of:
                continue  # a folded stub line: its text joins the row above
            for c, text in enumerate(row):
                if text is None:
                    continue
                bb, span, col_span, tall = _cell_shape(part, r_local, c, s)
                if k == 0:
                    col = c
                    if c == 0 and r_local + 1 in fold:
                        text = (
                            _clean(f"{text} {row_next}") if (row_next := part.rows[r_local + 1][0]) else text
                        )
                        nb = part.row_bboxes[r_local + 1][0] if r_local + 1 < len(part.row_bboxes) else None
                        if bb is not None and nb is not None:
                            bb = (min(bb[0], nb[0]), bb[1], max(bb[2], nb[2]), max(bb[3], nb[3]))
                else:
                    if c == 0 and col_span == 1:
                        continue  # the stub is kept once, from the first part
                    col = offsets[k] + max(c - 1, 0)
                    col_span = col_span - 1 if c == 0 else col_span
                last = r_local + span - 1
                while last > r_local and last not in rows_of:
                    last -= 1
                is_header = r_local < part.header_rows
                cells.append(
                    Cell(
                        row=rows_of[r_local],
                        col=col,
                        text=text,
                        page_index=part.page_index,
                        row_span=rows_of[last] - rows_of[r_local] + 1,
                        col_span=max(1, min(col_span, offsets[k + 1] - col)),
                        bbox=bb,
                        is_header=is_header,
                        suspicious=(not is_header and col_span > 1) or tall,
                    )
                )
    if header_rows >= len(order):
        header_rows = 0
    return Table(
        table_id=table_id,
        first_page_index=first.page_index,
        last_page_index=parts[-1].page_index,
        n_rows=len(order),
        n_cols=n_cols,
        cells=cells,
        bbox=first.bbox,
        header_rows=header_rows,
        pages=sorted({p.page_index for p in parts}),
        strategy=first.strategy,
        caption=first.caption,
        merge_kind="columns",
        regions=[(p.page_index, p.bbox) for p in parts],
    )


@dataclass
class _Group:
    """Parts that form one table: joined by rows (``drop``) or by columns (``aligns``)."""

    parts: list[_Part]
    drop: list[int] = field(default_factory=lambda: [0])
    aligns: list[list[_StubMatch]] = field(default_factory=list)
    kind: str = ""


def extract_tables(
    doc: pymupdf.Document, pages: Sequence[Page], settings: TableSettings | None = None
) -> list[Table]:
    """Find the tables of a document and join those that continue across pages.

    Pages whose ``text_source`` is not the text layer are skipped (OCR'd pages have no glyphs for
    PyMuPDF's finders). Tables are numbered "t0", "t1", ... in document order; every cell keeps the
    physical page it came from.

    Two kinds of continuation are joined, each only between the last table of page N and the first
    table of page N+1. Rows: same column layout, only furniture between (see ``_continues``); a
    repeated header is dropped. Columns: the continuation repeats the first part's stub column row
    for row (``_same_stubs``) AND says so ("continued" in its caption or header, or the same
    caption); the stub is kept once and the continuation's other columns are appended. Two tables
    with the same row labels but no such marker stay separate, and are never joined by rows either
    (a row continuation does not repeat the rows it continues).
    """
    s = settings or TableSettings()
    groups: list[_Group] = []
    # a table continues only from the page right before, so only that page's context is kept
    # (pages may be read back from disk one at a time: see pagestore)
    by_index: dict[int, Page] = {}
    lines: dict[int, list[Line]] = {}
    per_page: dict[int, list[_Part]] = {}
    regions: dict[int, list[BBox]] = {}
    back: dict[int, tuple[float, ...]] = {}  # pages read turned (text printed sideways): inverse frames
    for page in in_page_order(pages):
        if page.text_source != TextSource.TEXT_LAYER:
            continue
        i = page.index
        pg = doc[i]
        by_index[i], lines[i] = page, _page_lines(pg, page)
        words: list[_Word] = []
        frame = None
        if s.finder in ("auto", "stream"):
            words = _page_words(pg, page)
            frame = _reading_frame(pg, words)
        if frame is not None:
            # the whole page is seen turned, so captions, gaps and merges read it as it is read
            back[i] = tuple(~pymupdf.Matrix(frame))
            words = [_Word(*transform_box((w.x0, w.y0, w.x1, w.y1), frame), w.text) for w in words]
            lines[i] = _turn_lines(lines[i], frame)
            by_index[i] = dataclasses.replace(page, width=page.height, height=page.width, lines=lines[i])
        per_page[i] = _page_parts(pg, page, lines[i], s, words, frame)
        regions[i] = [p.bbox for p in per_page[i]]
        for j, part in enumerate(per_page[i]):
            joined = s.merge and j == 0 and groups
            if joined and _join(groups[-1], part, per_page, by_index, lines, regions, s):
                continue
            groups.append(_Group([part]))
        for window in (by_index, lines, per_page, regions):
            for old in [k for k in window if k < i - 1]:
                del window[old]
    tables = [
        _build_columns(g.parts, g.aligns, f"t{k}", s)
        if g.kind == "columns"
        else _build(g.parts, g.drop, f"t{k}", s)
        for k, g in enumerate(groups)
    ]
    return [_table_to_display(t, back) for t in tables] if back else tables


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
    if part.page_index != prev.page_index + 1 or prev is not per_page[prev.page_index][-1]:
        return False
    if g.kind != "rows":
        # columns are aligned to the first part, which holds the full stub
        stubs = _same_stubs(g.parts[0], part, s)
        if stubs is not None:
            if (
                s.merge_columns
                and _continued_evidence(g.parts[0], part, s)
                and not _header_repeat(g.parts[0], part, s)
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
    if g.kind == "columns" or not _continues(prev, part, pages, lines, regions, True, True, s):
        return False
    g.parts.append(part)
    g.drop.append(_header_repeat(g.parts[0], part, s))
    g.kind = "rows"
    logger.debug("table on page %d continues on page %d", prev.page_index, part.page_index)
    return True
