"""A found table as one part (``_Part``): read from a PyMuPDF grid, and cut back into cells and spans."""

from __future__ import annotations

import itertools
import logging
import math
import statistics
from dataclasses import dataclass, field
from typing import Any

from dagster_ocr.model import BBox
from dagster_ocr.tables.settings import TableSettings
from dagster_ocr.tables.words import (
    _bands,
    _cell_text,
    _clean,
    _column_bounds,
    _is_num,
    _join_cell_lines,
    _reads_on,
    _text_lines,
    _TextLine,
    _Word,
    _words_text,
)

logger = logging.getLogger(__name__)


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
    #: title, units and column headings printed around it (tables.statement.TableContext)
    context: Any = None

    @property
    def n_cols(self) -> int:
        return len(self.col_edges) - 1


def _to_part(
    tab: Any, strategy: str, page_index: int, s: TableSettings, words: list[_Word] | None = None
) -> _Part | None:
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
        rows, row_bboxes = _split_stacked_rows(rows, row_bboxes, edges, words)
        rows, row_bboxes, edges = _split_crowded_columns(rows, row_bboxes, edges, words, s)
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


def _cell_texts(tab: Any, words: list[_Word]) -> list[list[str | None]]:
    """Cell texts of a PyMuPDF grid read from word boxes (Table.extract() drops inter-word spaces).

    A word goes to the smallest cell that holds its centre: an irregular grid can come with a
    cell that frames others (the table's border read as one big cell), and that cell would
    otherwise repeat the text of every cell inside it.
    """
    centres = [((w.x0 + w.x1) / 2, (w.y0 + w.y1) / 2, w) for w in words]
    held: list[list[list[int] | None]] = []  # per cell, the indexes of the words inside
    smallest: dict[int, float] = {}  # word index -> area of the smallest cell holding it
    for r in tab.rows:
        _, ry0, _, ry1 = r.bbox
        # one pass over the page per row, not per cell
        in_row = [i for i, c in enumerate(centres) if ry0 <= c[1] <= ry1]
        row_held: list[list[int] | None] = []
        for c in r.cells:
            if c is None:
                row_held.append(None)
                continue
            x0, y0, x1, y1 = c
            inside = [i for i in in_row if x0 <= centres[i][0] <= x1 and y0 <= centres[i][1] <= y1]
            area = (x1 - x0) * (y1 - y0)
            for i in inside:
                if area < smallest.get(i, float("inf")):
                    smallest[i] = area
            row_held.append(inside)
        held.append(row_held)
    out: list[list[str | None]] = []
    for r, row_held in zip(tab.rows, held, strict=True):
        row: list[str | None] = []
        for c, inside in zip(r.cells, row_held, strict=True):
            if inside is None:
                row.append(None)
                continue
            area = (c[2] - c[0]) * (c[3] - c[1])
            mine = [centres[i][2] for i in inside if smallest[i] >= area]
            row.append(_join_cell_lines(_words_text(band) for band in _cell_lines(mine)))
        out.append(row)
    return out


_BULLETS = frozenset("•●○■□▪◦‣∙·*–-")


def _cell_lines(words: list[_Word]) -> list[list[_Word]]:
    """A cell's words as text lines, each bullet glyph on the line its centre falls in.

    A bullet is drawn smaller or raised against its line's text, so banding it with the words
    would open a band of its own above that line: every bullet of the cell then led its text
    ("• • Reported ... Generates"). The words are banded without the bullets first; each bullet
    then joins the line whose extent holds its centre (the nearest line when none does).
    """
    marks = [w for w in words if w.text in _BULLETS]
    if not marks or len(marks) == len(words):
        return _bands(words)
    lines = _bands([w for w in words if w.text not in _BULLETS])
    spans = [(min(w.y0 for w in ln), max(w.y1 for w in ln)) for ln in lines]
    for m in marks:
        cy = (m.y0 + m.y1) / 2
        k = min(
            range(len(lines)),
            key=lambda i: (not spans[i][0] <= cy <= spans[i][1], abs(cy - sum(spans[i]) / 2)),
        )
        lines[k].append(m)
    return [sorted(ln, key=lambda w: w.x0) for ln in lines]


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
                        rows[i][c] = _cell_text(ws)
                        row_bboxes[i][c] = (edges[c], box[1], edges[c + 1], box[3])
            j = k


def _split_stacked_rows(
    rows: list[list[str | None]], row_bboxes: list[list[BBox | None]], edges: list[float], words: list[_Word]
) -> tuple[list[list[str | None]], list[list[BBox | None]]]:
    """Cut a grid row that holds several printed rows into one row per text line.

    Tables ruled only around the header and the total (no rule between body rows) come out of the
    line finder as one tall row whose cells hold whole columns: "Bulgaria Cyprus Czech Republic"
    beside "2.3 0.21 8.8". Such a row is cut at its text lines when at least two of its cells hold
    two or more lines and every line of every cell but the first is a number: a figure never wraps,
    so those lines are rows; a wrapped label or a multi-line text cell (no numbers) is left whole.
    A row holding a spanning cell is left as it is.
    """
    out_rows: list[list[str | None]] = []
    out_boxes: list[list[BBox | None]] = []
    n_cols = len(edges) - 1
    words = [w for w in words if edges[0] <= (w.x0 + w.x1) / 2 <= edges[-1]]
    for i, (row, boxes) in enumerate(zip(rows, row_bboxes, strict=True)):
        split = None
        if (
            i > 0
            and len(row) == n_cols
            and all(c is not None for c in row)
            and all(b is not None for b in boxes)
        ):
            # cheap text test first: two cells right of the first with two figures or more each
            if sum(
                len(t.split()) >= 2 and all(_is_num(x) for x in t.split()) for t in row[1:] if t
            ) >= 1 and (sum(len(t.split()) >= 2 for t in row if t) >= 2):
                split = _stacked_lines(boxes, edges, words)
        if split is None:
            out_rows.append(row)
            out_boxes.append(boxes)
            continue
        for band_y0, band_y1, cells in _labels_read_on(split):
            out_rows.append([_cell_text(cells.get(c, [])) for c in range(n_cols)])
            out_boxes.append([(edges[c], band_y0, edges[c + 1], band_y1) for c in range(n_cols)])
    return out_rows, out_boxes


#: the least share of a ruled column's filled body cells holding two figures set apart for the column
#: to be read for gutters: 0.4, as two sub-columns each 30% blank fill both on about half the rows
_CROWDED_SHARE = 0.4


def _split_crowded_columns(
    rows: list[list[str | None]],
    row_bboxes: list[list[BBox | None]],
    edges: list[float],
    words: list[_Word],
    s: TableSettings,
) -> tuple[list[list[str | None]], list[list[BBox | None]], list[float]]:
    """Cut a grid column that holds several text-aligned columns at the gutters of its body text.

    A table drawn with a frame and a rule after the stub but no rule between its figure columns
    comes out of the line finder with one column holding "344  75.2  12196  17.4%" on every row.
    When most body rows of a column hold a line with two figures or more set apart by wide gaps
    (the stream finder's chunks) and
    those gaps line up into gutters over the whole column (``_column_bounds``, as for a table
    without rules), the column is cut there on every row; each word goes to the part its centre
    falls in. Spanning cells keep their text.

    Once a column of the grid is cut so, the others are looked at again with two such body rows
    enough, whatever their share: a statistical table rules only its groups of columns, and a group
    whose figures are sparse (a sub-column mostly empty) fills both of its sub-columns on a few rows
    only; measured by the share its full siblings pass, its figures stayed one column.
    """
    cut = len(edges)
    rows, row_bboxes, edges = _cut_crowded(rows, row_bboxes, edges, words, s, _CROWDED_SHARE)
    if len(edges) > cut:
        rows, row_bboxes, edges = _cut_crowded(rows, row_bboxes, edges, words, s, 0.0)
    return rows, row_bboxes, edges


def _cut_crowded(
    rows: list[list[str | None]],
    row_bboxes: list[list[BBox | None]],
    edges: list[float],
    words: list[_Word],
    s: TableSettings,
    share: float,
) -> tuple[list[list[str | None]], list[list[BBox | None]], list[float]]:
    """One pass of :func:`_split_crowded_columns`, right to left: a column is cut where at least two
    of its body rows, and ``share`` of them, hold figures set apart."""
    c = len(edges) - 2
    while c >= 0:
        body = [
            i for i in range(1, len(rows)) if c < len(rows[i]) and rows[i][c] and row_bboxes[i][c] is not None
        ]
        lines = []
        crowded = 0
        # on the second pass (``share`` 0) one such row is enough where the column's head line
        # heads each part: a group's sub-heads ("Total", "Under 18") over figures mostly alone
        least = 2 if share else 1
        # cheap text test first: ``least`` body cells and ``share`` of them must hold two figures or more
        if sum(sum(_is_num(t) for t in (rows[i][c] or "").split()) >= 2 for i in body) < max(
            share * max(len(body), 1), least
        ):
            body = []
        col_words = [w for w in words if edges[c] <= (w.x0 + w.x1) / 2 <= edges[c + 1]] if body else []
        for i in body:
            bb = row_bboxes[i][c]
            assert bb is not None
            inside = [
                w
                for w in col_words
                if bb[0] <= (w.x0 + w.x1) / 2 <= bb[2] and bb[1] <= (w.y0 + w.y1) / 2 <= bb[3]
            ]
            cell_lines = _text_lines(inside, s.chunk_gap) if inside else []
            lines.extend(cell_lines)
            # several figures side by side on one line; a bullet set apart from its item is not
            crowded += any(
                len(ln.chunks) >= 2 and sum(_is_num(_words_text(ch)) for ch in ln.chunks) >= 2
                for ln in cell_lines
            )
        inner = []
        if len(body) >= least and crowded >= max(least, share * len(body)):
            inner = [x for x in _column_bounds(lines, s)[1:-1] if edges[c] + 1 < x < edges[c + 1] - 1]
            if inner and crowded < 2:
                inner = _head_cuts(rows, row_bboxes, c, col_words, lines, inner, s) or []
        if inner:
            sub = [edges[c], *inner, edges[c + 1]]
            k = len(sub) - 1
            col_words = [w for w in words if edges[c] <= (w.x0 + w.x1) / 2 <= edges[c + 1]]
            for i, (row, boxes) in enumerate(zip(rows, row_bboxes, strict=True)):
                bb = boxes[c] if c < len(boxes) else None
                if c >= len(row) or row[c] is None or bb is None:
                    rows[i] = [*row[: c + 1], *([None] * (k - 1)), *row[c + 1 :]]
                    row_bboxes[i] = [*boxes[: c + 1], *([None] * (k - 1)), *boxes[c + 1 :]]
                    continue
                parts: list[list[_Word]] = [[] for _ in range(k)]
                for w in col_words:
                    cx, cy = (w.x0 + w.x1) / 2, (w.y0 + w.y1) / 2
                    if bb[0] <= cx <= bb[2] and bb[1] <= cy <= bb[3]:
                        j = next((j for j in range(k) if cx <= sub[j + 1]), k - 1)
                        parts[j].append(w)
                texts = [_clean(_join_cell_lines(_words_text(b) for b in _cell_lines(p))) for p in parts]
                rows[i] = [*row[:c], *texts, *row[c + 1 :]]
                row_bboxes[i] = [
                    *boxes[:c],
                    *[(sub[j], bb[1], sub[j + 1], bb[3]) for j in range(k)],
                    *boxes[c + 1 :],
                ]
            edges = [*edges[: c + 1], *inner, *edges[c + 1 :]]
        c -= 1
    return rows, row_bboxes, edges


def _head_cuts(
    rows: list[list[str | None]],
    row_bboxes: list[list[BBox | None]],
    c: int,
    col_words: list[_Word],
    lines: list[_TextLine],
    inner: list[float],
    s: TableSettings,
) -> list[float] | None:
    """``inner``, the cuts of column ``c`` found in its body ``lines``, each moved within its body
    gutter to pass between two chunks of a line of the column's head cells (the grid's first rows
    holding no figure there: a group's head band, its sub-heads' band under a rule), where that
    line has a chunk in each part: a head per sub-column (a sub-head wider than its figures
    reaches into their gutter); None where no head line does so."""
    boxes = []
    for i, (row, rbs) in enumerate(zip(rows[:3], row_bboxes[:3], strict=False)):
        bb = rbs[c] if c < len(rbs) else None
        text = row[c] if c < len(row) else None
        # the first row is the head; a row under it only while it holds no figure there
        if bb is None or not text or (i and any(_is_num(t) for t in text.split())):
            break
        boxes.append(bb)
    head = [
        w
        for w in col_words
        if any(bb[0] <= (w.x0 + w.x1) / 2 <= bb[2] and bb[1] <= (w.y0 + w.y1) / 2 <= bb[3] for bb in boxes)
    ]
    heads = {id(w) for w in head}
    body = [w for ln in lines for w in ln.words if id(w) not in heads]
    for ln in _text_lines(head, s.chunk_gap) if head else []:
        if len(ln.chunks) != len(inner) + 1:
            continue
        cuts = []
        for x, (a, b) in zip(inner, itertools.pairwise(ln.chunks), strict=True):
            g0 = max((w.x1 for w in body if w.x1 <= x), default=-math.inf)
            g1 = min((w.x0 for w in body if w.x0 >= x), default=math.inf)
            lo, hi = max(g0, a[-1].x1), min(g1, b[0].x0)
            if lo >= hi:
                break
            cuts.append((lo + hi) / 2)
        else:
            return cuts
    return None


def _labels_read_on(
    bands: list[tuple[float, float, dict[int, list[_Word]]]],
) -> list[tuple[float, float, dict[int, list[_Word]]]]:
    """The text lines of a grid row cut at its lines (``_stacked_lines``), each row label wrapped
    over lines made one row again: a line whose stub reads on in lower case (a label's next line;
    a row's label starts with a capital) joins the line above where that holds the stub alone (the
    label's first line, its figures on its last) or where it holds the stub alone itself (the
    label's last line, its figures on its first). As the text finder joins them (``stream``)."""
    out: list[tuple[float, float, dict[int, list[_Word]]]] = []
    for y0, y1, cells in bands:
        if (
            out
            and 0 in cells
            and _reads_on(_words_text(cells[0]))
            and 0 in out[-1][2]
            and (set(out[-1][2]) == {0} or set(cells) == {0})
        ):
            py0, _, above = out[-1]
            if not _is_num(_words_text(above[0]).split()[-1]):
                joined = {c: above.get(c, []) + cells.get(c, []) for c in sorted(set(above) | set(cells))}
                out[-1] = (py0, y1, joined)
                continue
        out.append((y0, y1, cells))
    return out


def _stacked_lines(
    boxes: list[BBox | None], edges: list[float], words: list[_Word]
) -> list[tuple[float, float, dict[int, list[_Word]]]] | None:
    """The text lines of one grid row as (y0, y1, column -> words), when the row holds stacked rows."""
    y0 = min(b[1] for b in boxes if b is not None)
    y1 = max(b[3] for b in boxes if b is not None)
    inside = [
        w for w in words if y0 <= (w.y0 + w.y1) / 2 <= y1 and edges[0] <= (w.x0 + w.x1) / 2 <= edges[-1]
    ]
    if not inside:
        return None
    per_col: dict[int, list[_Word]] = {}
    for w in inside:
        cx = (w.x0 + w.x1) / 2
        c = next((k for k in range(len(edges) - 1) if cx <= edges[k + 1]), len(edges) - 2)
        per_col.setdefault(c, []).append(w)
    lines_of = {c: _bands(ws) for c, ws in per_col.items()}
    multi = [c for c, ls in lines_of.items() if len(ls) >= 2]
    first = min(lines_of)
    others = [c for c in lines_of if c != first]
    if len(multi) < 2 or not others:
        return None
    if not all(_is_num(_words_text(ln)) for c in others for ln in lines_of[c]):
        return None
    if not any(len(lines_of[c]) >= 2 for c in others):
        return None
    # the row's text bands: lines of every column clustered by vertical overlap
    bands = _bands(inside)
    out = []
    for band in bands:
        cells: dict[int, list[_Word]] = {}
        for w in band:
            cx = (w.x0 + w.x1) / 2
            c = next((k for k in range(len(edges) - 1) if cx <= edges[k + 1]), len(edges) - 2)
            cells.setdefault(c, []).append(w)
        out.append((min(w.y0 for w in band), max(w.y1 for w in band), cells))
    return out if len(out) >= 2 else None


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


#: a gap up to this many line heights between two words of a line is a word space, not a gutter
_CUT_WORD_GAP = 0.6


def _cut_points(x0: float, x1: float, bands: list[list[_Word]]) -> list[float]:
    """The y centres of the words inside x0..x1 whose line runs on across x0 or x1: the next word
    of the line, a word space away (no gutter between), has its centre on the other side."""
    out: list[float] = []
    for band in bands:
        for a, b in itertools.pairwise(band):
            h = min(a.y1 - a.y0, b.y1 - b.y0)
            if b.x0 - a.x1 > _CUT_WORD_GAP * h:
                continue
            ca, cb = (a.x0 + a.x1) / 2, (b.x0 + b.x1) / 2
            for edge in (x0, x1):
                if min(ca, cb) < edge < max(ca, cb):
                    w = a if x0 <= ca <= x1 else b
                    out.append((w.y0 + w.y1) / 2)
    return out


def _without_cut_rows(part: _Part, words: list[_Word]) -> list[_Part]:
    """``part`` less its rows where the grid cuts through running text, split there.

    A ruled grid's outer frame can be a drawing that is no table border: one path drawn around two
    tables and the prose between them, or a figure's box above a plot. The line finder then makes
    the space between into one wide cell, which takes the words of every body line whose middle
    lies in it: text cut off mid-line (the rest of the line lies outside the frame) and, when
    another table sits inside, that table's text a second time. A table's own text stays inside
    its frame; a row holding words of two or more lines that run on past the frame is not the
    table's. Such rows are left out (their words are body text, or another table's) and the rows
    between them are parts of their own; none when no row is left.
    """
    x0, _, x1, _ = part.bbox
    if not words or not part.rows:
        return [part]
    cuts = _cut_points(x0, x1, _bands([w for w in words if w.x1 >= x0 - 50 and w.x0 <= x1 + 50]))
    if len(cuts) < 2:
        return [part]

    def extent(rows: list[list[BBox | None]]) -> tuple[float, float] | None:
        boxes = [b for rb in rows for b in rb if b is not None]
        return (min(b[1] for b in boxes), max(b[3] for b in boxes)) if boxes else None

    cut_rows = set()
    for r, rb in enumerate(part.row_bboxes):
        ys = extent([rb])
        if ys is not None and sum(1 for y in cuts if ys[0] - 1 <= y <= ys[1] + 1) >= 2:
            cut_rows.add(r)
    if not cut_rows:
        return [part]
    runs: list[tuple[int, int]] = []
    start = 0
    for r in range(len(part.rows) + 1):
        if r == len(part.rows) or r in cut_rows:
            if r > start:
                runs.append((start, r))
            start = r + 1
    out: list[_Part] = []
    for a, b in runs:
        ys = extent(part.row_bboxes[a:b])
        rest = [rb for k, rb in enumerate(part.row_bboxes) if not a <= k < b]
        if ys is None or any(
            bb is not None and bb[1] < ys[1] - 1 and bb[3] > ys[0] + 1 for rb in rest for bb in rb
        ):
            return [part]  # a cell spans into a left-out row: the grid stays as it is
        out.append(
            _Part(
                page_index=part.page_index,
                bbox=(part.bbox[0], ys[0], part.bbox[2], ys[1]),
                rows=part.rows[a:b],
                row_bboxes=part.row_bboxes[a:b],
                col_edges=part.col_edges,
                header_rows=(min(part.header_rows, b - a - 1) if a == 0 else int(b - a > 1)),
                strategy=part.strategy,
            )
        )
    logger.debug(
        "page %d: %d row(s) of a ruled grid cut through running text: left out, %d part(s) left",
        part.page_index,
        len(cut_rows),
        len(out),
    )
    return out
