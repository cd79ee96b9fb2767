"""Ruled grids whose rules part only groups of columns: read again by text alignment inside the frame.

A statistical table often draws its vertical rules only between column groups ("Total" | "Male" |
"Female", each group two to four sub-columns of figures) and its horizontal rules only at the top,
the bottom and under the heads: no rule between the sub-columns, none between the rows. The line
finder's grid then has one column per group and one body row, each cell a block of several columns
and rows of figures. ``_split_stacked_rows`` and ``_split_crowded_columns`` (``cells``) cut a grid
whose rows or columns alone hold more than one; neither fires where both do (a cell's lines are not
single figures, and there is one body row to find gutters over).

Such a grid is read again as a table without rules would be, from the words inside its frame
(``stream._stream_tables``), when a ruled column's body lines hold two figures or more set apart
(the sign that a rule is missing, not that a cell holds a list) and the reading agrees with the
rules: one table holding the frame's words and more columns than the grid. A column of the
reading across a rule is cut there (the gutter at a rule is certain, however narrow the space
between a stub's dot leaders and the first figures). The heads are then set by the groups the rules
make: a head line whose text is one phrase per group (the group's head), stacked by the reading onto
the sub-heads below it, is a header row of its own, each group head spanning its group's columns
(text at the first); a line of a label alone between the heads' last rule and the body is the first
line of the next row's label. A grid whose ruled columns ``_split_crowded_columns`` already cut
(row rules present) gets its header rows so too (``_split_heads``). The grid is read so before
``_keep``: a grid of one row (heads and body in one, no rule between reaching the rules) holds a
table.
"""

from __future__ import annotations

import bisect
import dataclasses
import itertools
import logging
from collections import Counter
from collections.abc import Callable
from typing import Any

from dagster_ocr.model import BBox
from dagster_ocr.tables.cells import _Part
from dagster_ocr.tables.grid import row_sides
from dagster_ocr.tables.settings import TableSettings
from dagster_ocr.tables.stream import _col_of, _stream_tables
from dagster_ocr.tables.words import (
    _bands,
    _cell_text,
    _clean,
    _is_num,
    _text_lines,
    _TextLine,
    _Word,
    _words_text,
)

logger = logging.getLogger(__name__)

#: the least number of body lines of one ruled column holding several figures set apart
_MIN_CROWDED_LINES = 3
#: ... and their least share of that column's body lines
_MIN_CROWDED_SHARE = 0.6


def _crowded(part: _Part, inside: list[_Word], s: TableSettings) -> bool:
    """Whether a ruled column's body lines mostly hold two figures or more set apart by gutters."""
    edges = part.col_edges
    for c in range(1, part.n_cols):
        # below the column's own head cells (the stub's head cell may run down the whole table)
        head = [rb[c] for rb in part.row_bboxes[: part.header_rows] if c < len(rb) and rb[c] is not None]
        body_top = max((b[3] for b in head), default=part.bbox[1])
        ws = [
            w
            for w in inside
            if edges[c] <= (w.x0 + w.x1) / 2 <= edges[c + 1] and (w.y0 + w.y1) / 2 > body_top
        ]
        if not ws:
            continue
        lines = _text_lines(ws, s.chunk_gap)
        crowded = [
            ln
            for ln in lines
            if len(ln.chunks) >= 2 and sum(_is_num(_words_text(ch)) for ch in ln.chunks) >= 2
        ]
        if len(crowded) < _MIN_CROWDED_LINES:
            continue
        if len(crowded) >= _MIN_CROWDED_SHARE * len(lines):
            return True
        # a sparse group (blank cells): a line left one figure still stands in one of the
        # sub-columns the full lines set, and the sub-heads' line holds no figure to count
        figures = [ln for ln in lines if any(_is_num(_words_text(ch)) for ch in ln.chunks)]
        spans = _sub_columns(crowded)
        placed = sum(1 for ln in figures if ln not in crowded and _in_one_sub_column(ln, spans))
        if len(crowded) + placed >= _MIN_CROWDED_SHARE * len(figures):
            return True
    return False


def _sub_columns(crowded: list[_TextLine]) -> list[tuple[float, float]]:
    """The sub-columns the ``crowded`` lines set: the k-th figures of the crowded lines of the
    commonest figure count, each sub-column their span from the leftmost start to the rightmost end."""
    counts = Counter(len(ln.chunks) for ln in crowded)
    m = max(counts, key=lambda k: (counts[k], -k))
    full = [ln for ln in crowded if len(ln.chunks) == m]
    return [
        (min(ln.chunks[k][0].x0 for ln in full), max(ln.chunks[k][-1].x1 for ln in full)) for k in range(m)
    ]


def _in_one_sub_column(line: _TextLine, spans: list[tuple[float, float]]) -> bool:
    """Whether ``line`` is one figure lying across exactly one of the sub-column ``spans``."""
    if len(line.chunks) != 1 or not _is_num(_words_text(line.chunks[0])):
        return False
    x0, x1 = line.chunks[0][0].x0, line.chunks[0][-1].x1
    return sum(1 for a, b in spans if x0 < b and x1 > a) == 1


def _within_rules(part: _Part, words: list[_Word], s: TableSettings, tab: Any = None) -> _Part:
    """``part`` (a ruled grid, ``tab`` the line finder's) read again by text alignment inside its
    frame, where its rules part only groups of the columns its text sets (see the module); else
    ``part`` as it is."""
    try:
        if part.strategy != "lines" or part.n_cols < 2 or len(part.col_edges) != part.n_cols + 1:
            return part
        rules = _rule_edges(tab, part) if tab is not None else None
        sides = _grid_sides(tab) if tab is not None else None
        if rules is not None and len(rules) < len(part.col_edges):
            return _split_heads(part, words, rules, s, sides)
        return _read_within_rules(part, words, s, sides)
    except Exception:  # a reading that fails must not cost the grid the line finder found
        logger.warning("page %d: ruled grid not read again inside its rules", part.page_index, exc_info=True)
        return part


def _rule_edges(tab: Any, part: _Part) -> list[float] | None:
    """The x of the grid's column rules, each at an edge of ``part``'s columns; None where the grid's
    cells give no such set (``part``'s columns are the grid's, or were cut from them)."""
    xs = sorted({round(x, 1) for r in tab.rows for c in r.cells if c is not None for x in (c[0], c[2])})
    rules: list[float] = []
    for x in xs:
        e = min(part.col_edges, key=lambda e: abs(e - x))
        if abs(e - x) > 1:
            return None
        if e not in rules:
            rules.append(e)
    return (
        rules
        if len(rules) >= 2 and rules[0] == part.col_edges[0] and rules[-1] == part.col_edges[-1]
        else None
    )


def _inside(box: BBox, words: list[_Word]) -> list[_Word]:
    """The words whose middle lies inside ``box`` (a part's frame, a cell)."""
    x0, y0, x1, y1 = box
    return [w for w in words if x0 <= (w.x0 + w.x1) / 2 <= x1 and y0 <= (w.y0 + w.y1) / 2 <= y1]


def _cell(words: list[_Word], edges: list[float], c: int) -> tuple[str, BBox]:
    """Column ``c``'s cell of ``words``: its text, and a box across the column around them."""
    return _cell_text(words), (edges[c], min(w.y0 for w in words), edges[c + 1], max(w.y1 for w in words))


def _split_heads(
    part: _Part,
    words: list[_Word],
    rules: list[float],
    s: TableSettings,
    sides: Callable[[float], list[float]] | None,
) -> _Part:
    """A grid whose ruled columns ``_split_crowded_columns`` already cut into their text columns:
    its header rows set by the groups the rules make, as a reading's (``_heads_at_rules``)."""
    inside = _inside(part.bbox, words)
    owner = {k: _col_of(_mid(part.col_edges, k), rules) for k in range(part.n_cols)}
    if not inside or all(sum(1 for o in owner.values() if o == g) < 2 for g in set(owner.values())):
        return part
    rows, boxes, header_rows = _heads_at_rules(part, part, inside, owner, s, sides)
    return dataclasses.replace(part, rows=rows, row_bboxes=boxes, header_rows=header_rows)


def _read_within_rules(
    part: _Part, words: list[_Word], s: TableSettings, sides: Callable[[float], list[float]] | None
) -> _Part:
    inside = _inside(part.bbox, words)
    if not inside or not _crowded(part, inside, s):
        return part
    new = _reading(part, inside, s)
    if new is None:
        return part
    # which ruled column each column of the reading lies in (its edges at the rules: ``_fit_rules``)
    owner = {
        k: _col_of((a + b) / 2, part.col_edges) for k, (a, b) in enumerate(itertools.pairwise(new.col_edges))
    }
    rows, boxes, header_rows = _heads_at_rules(part, new, inside, owner, s, sides)
    logger.debug(
        "page %d: a ruled grid of %d columns read as %d inside its rules",
        part.page_index,
        part.n_cols,
        new.n_cols,
    )
    return _Part(
        page_index=part.page_index,
        bbox=part.bbox,
        rows=rows,
        row_bboxes=boxes,
        col_edges=new.col_edges,
        header_rows=header_rows,
        strategy=part.strategy,
    )


def _reading(part: _Part, inside: list[_Word], s: TableSettings) -> _Part | None:
    """The text reading of the words inside the frame: the body's below the grid's head row (its
    columns set by the body alone: a group's head crossing the gutters of its sub-columns, in a
    table of few rows, would erase them), the head row's words then placed in those columns; the
    whole frame's where that reading fails. None where neither has more columns than the grid."""
    ends = (
        [b[3] for b in part.row_bboxes[part.header_rows - 1][1:] if b is not None] if part.header_rows else []
    )
    if ends and len(part.rows) > part.header_rows:
        y = min(ends)
        body = [w for w in inside if (w.y0 + w.y1) / 2 > y]
        head = [w for w in inside if (w.y0 + w.y1) / 2 <= y]
        new = _one_reading(part, body, s) if body and head else None
        if new is not None:
            new = _fit_rules(new, part.col_edges, body)
        if new is not None and new.n_cols > part.n_cols:
            return _with_head(new, head, s)
    new = _one_reading(part, inside, s)
    if new is not None:
        new = _fit_rules(new, part.col_edges, inside)
    return new if new is not None and new.n_cols > part.n_cols else None


def _fit_rules(new: _Part, rules: list[float], ws: list[_Word]) -> _Part:
    """``new`` (read from ``ws``) with its column edges at the rules: an edge in a rule's gutter (no
    word's middle between them) moved onto the rule; where a column of the reading lies across a
    rule, cut there (``_cut_at_rules``)."""
    edges = list(new.col_edges)
    for k in range(1, len(edges) - 1):
        for r in rules[1:-1]:
            lo, hi = min(edges[k], r), max(edges[k], r)
            if not any(lo < (w.x0 + w.x1) / 2 < hi for w in ws):
                edges[k] = r
    if any(
        _col_of((w.x0 + w.x1) / 2, rules) != _col_of(_mid(edges, _col_of((w.x0 + w.x1) / 2, edges)), rules)
        for w in ws
    ):
        return _cut_at_rules(new, rules, ws)
    moved = dict(zip(new.col_edges, edges, strict=True))
    boxes = [
        [b if b is None else (moved.get(b[0], b[0]), b[1], moved.get(b[2], b[2]), b[3]) for b in rb]
        for rb in new.row_bboxes
    ]
    return dataclasses.replace(new, col_edges=edges, row_bboxes=boxes)


def _mid(edges: list[float], k: int) -> float:
    return (edges[k] + edges[k + 1]) / 2


def _one_reading(part: _Part, ws: list[_Word], s: TableSettings) -> _Part | None:
    found = _stream_tables(_text_lines(ws, s.chunk_gap), part.page_index, s)
    if len(found) != 1:
        return None
    new = found[0]
    held = sum(len(c.split()) for r in new.rows for c in r if c)
    if new.n_cols <= part.n_cols or held < 0.95 * len(ws):
        return None
    return new


def _placed(
    ws: list[_Word],
    edges: list[float],
    s: TableSettings,
    below: list[_Word] | None = None,
    sides: Callable[[float], list[float]] | None = None,
    above: list[_Word] | None = None,
) -> dict[int, list[_Word]]:
    """Head words by column: each phrase (a line's chunk) whole in the column its middle lies in (a
    head set right over its figures and wider than them reaches over the gutter to its left).
    ``below``: the words of the line under them, read beside the heads so that a line of heads
    spaced alike ("Offense charged  Number  Percent  Number  Percent") is told from a justified line
    by the row under it (``_text_lines``), and left out after; ``above``: the words of the line of
    group heads over them, read beside them so too (sub-heads over a sparse first row, "Number
    Percent" four times under "2021" to "2024", are told so by the heads above). ``sides``: the
    ruled grid's around them (``_grid_sides``), each side between two cells of a row cutting a
    phrase (a stub's head run on to the first sub-head a space apart, "Offense charged Number",
    past the rule)."""
    body = {id(w) for w in [*(below or ()), *(above or ())]}
    per: dict[int, list[_Word]] = {}
    for ln in _text_lines([*ws, *(below or ()), *(above or ())], s.chunk_gap) if ws else []:
        if any(id(w) in body for w in ln.words):
            continue
        for ch in ln.chunks:
            xs = sides((ch[0].y0 + ch[0].y1) / 2) if sides is not None else []
            # (the chunk's words between two sides of the grid, by their middles)
            pieces = [
                list(g) for _, g in itertools.groupby(ch, key=lambda w: bisect.bisect(xs, (w.x0 + w.x1) / 2))
            ]
            for p in pieces:
                per.setdefault(_col_of((p[0].x0 + p[-1].x1) / 2, edges), []).extend(p)
    return per


def _grid_sides(tab: Any) -> Callable[[float], list[float]]:
    """The line finder's grid ``tab`` as a lookup: y -> the sides its row there shares between
    cells (``grid.row_sides``), left to right, or []."""
    rows = row_sides(tab)
    return lambda y: next((xs for y0, y1, xs in rows if y0 <= y <= y1), [])


def _with_head(new: _Part, head: list[_Word], s: TableSettings) -> _Part:
    """``new`` under one more header row holding ``head``'s words, each in the column its centre
    falls in (``_heads_at_rules`` cuts it into its lines' rows and spans the groups' heads)."""
    edges = new.col_edges
    # the reading's own header rows, less those of figures (a body read alone has no head to find)
    heads = 0
    while heads < new.header_rows and not any(_is_num(t or "") for t in new.rows[heads][1:]):
        heads += 1
    per = _placed(head, edges, s)
    texts: list[str | None] = [""] * new.n_cols
    bbs: list[BBox | None] = [None] * new.n_cols
    for c, cws in per.items():
        texts[c], bbs[c] = _cell(cws, edges, c)
    return _Part(
        page_index=new.page_index,
        bbox=new.bbox,
        rows=[texts, *new.rows],
        row_bboxes=[bbs, *new.row_bboxes],
        col_edges=edges,
        header_rows=1 + heads,
        strategy=new.strategy,
    )


def _heads_at_rules(
    part: _Part,
    new: _Part,
    inside: list[_Word],
    owner: dict[int, int],
    s: TableSettings,
    sides: Callable[[float], list[float]] | None,
) -> tuple[list[list[str | None]], list[list[BBox | None]], int]:
    """``new``'s rows, bboxes and header row count, its header rows cut where a rule of the grid
    runs between their lines, or under a line of group heads over a line of sub-heads (the text
    reading stacks a group's head onto the sub-heads below it: "Urban Share"); above such a cut, or
    in a header row of group heads alone, a group's head spans the columns of the reading inside its
    ruled column (its text at the first, as a spanning cell's)."""
    ys = sorted({min(b[1] for b in rb if b is not None) for rb in part.row_bboxes[1:] if any(rb)})
    groups = [sorted(c for c, o in owner.items() if o == g) for g in sorted(set(owner.values()))]
    groups = [g for g in groups if len(g) >= 2]
    edges = new.col_edges
    n = new.n_cols
    rows: list[list[str | None]] = []
    boxes: list[list[BBox | None]] = []
    header_rows = new.header_rows
    carried: tuple[str, BBox] | None = None
    placed: set[int] = set()  # the words the header rows cut into lines hold (by id)
    for i, (row, rb) in enumerate(zip(new.rows, new.row_bboxes, strict=True)):
        cells = [b for b in rb if b is not None]
        # (only the header rows and the first row under them can repeat them: no search further down)
        mine = [w for b in cells for w in _inside(b, inside)] if placed and i <= new.header_rows else []
        if mine and all(id(w) in placed for w in mine):
            # a row whose every word a header row above took (a stub head's cell spanning the group
            # heads' line and the sub-heads' line held both, and was cut into the two): read once
            continue
        if i >= new.header_rows or not cells:
            if carried and row and row[0] is not None:  # a label's first lines, read as a head
                text, bb = carried
                row = [_clean(f"{text} {row[0]}"), *row[1:]]
                b0 = rb[0]
                rb = [(bb[0], bb[1], bb[2], b0[3] if b0 is not None else bb[3]), *rb[1:]]
                carried = None
            rows.append(row)
            boxes.append(rb)
            continue
        top, bottom = min(b[1] for b in cells), max(b[3] for b in cells)
        ws = [w for w in inside if top <= (w.y0 + w.y1) / 2 <= bottom]
        cuts = [
            y for y in ys if any((w.y0 + w.y1) / 2 < y for w in ws) and any((w.y0 + w.y1) / 2 > y for w in ws)
        ]
        lines = sorted(_bands(ws), key=lambda ln: min(w.y0 for w in ln))
        for a, b in itertools.pairwise(lines):  # under the lines of the groups' heads, their sub-heads
            if _group_heads(a, groups, edges, s) and not _group_heads(b, groups, edges, s):
                y = (max(w.y1 for w in a) + min(w.y0 for w in b)) / 2
                if not any(abs(y - c) < 1 for c in cuts):
                    cuts.append(y)
        cuts.sort()
        heads_only = all(_group_heads(ln, groups, edges, s) for ln in lines)
        if not cuts and not heads_only:
            rows.append(row)
            boxes.append(rb)
            continue
        placed.update(id(w) for w in ws)
        bounds = [top - 1, *cuts, bottom + 1]
        before = len(rows)
        over: list[_Word] = []  # the band above's last line: group heads over this band
        for k, (a, b) in enumerate(itertools.pairwise(bounds)):
            band = [w for w in ws if a < (w.y0 + w.y1) / 2 <= b]
            if not band:
                continue
            # the line under the band (the next band's, or the body's first row) tells its heads
            reach = b + 2 * max(w.y1 - w.y0 for w in band)
            below = [w for w in inside if b < (w.y0 + w.y1) / 2 <= reach]
            per = _placed(band, edges, s, below, sides, over)
            over = max(_bands(band), key=lambda ln: min(w.y0 for w in ln))
            if k and k == len(bounds) - 2 and i == new.header_rows - 1 and set(per) == {0}:
                # below the last rule of the heads, a stub's words alone: a row label's first
                # lines, its figures on the line below (the body's), not a head
                carried = _cell(per[0], edges, 0)
                continue
            texts: list[str | None] = [""] * n
            bbs: list[BBox | None] = [None] * n
            for c, cws in sorted(per.items()):
                if texts[c] is None:
                    continue
                texts[c], bbs[c] = _cell(cws, edges, c)
            if k < len(bounds) - 2 or heads_only:  # above a cut: a group's head spans its columns
                for mine in groups:
                    held = [c for c in mine if c in per]
                    if len(held) != 1 or not _over_group(per[held[0]], mine, edges):
                        continue
                    first, last = mine[0], mine[-1]
                    text, bb = texts[held[0]], bbs[held[0]]
                    assert bb is not None
                    for c in mine:
                        texts[c], bbs[c] = None, None
                    texts[first] = text
                    bbs[first] = (edges[first], bb[1], edges[last + 1], bb[3])
            rows.append(texts)
            boxes.append(bbs)
        header_rows += len(rows) - before - 1
    return rows, boxes, header_rows


def _group_heads(line: list[_Word], groups: list[list[int]], edges: list[float], s: TableSettings) -> bool:
    """Whether a text line holds heads of ruled column groups: in each group (two columns of the
    reading or more inside one ruled column) it reaches, one phrase (no gutter inside) set over the
    group, across a gutter of its columns or centred on the group (the top line of one column's
    head stacked over three lines is none), and it reaches one at least."""
    found = False
    for mine in groups:
        a, b = edges[mine[0]], edges[mine[-1] + 1]
        ws = [w for w in line if a <= (w.x0 + w.x1) / 2 <= b]
        if not ws:
            continue
        if len(_text_lines(ws, s.chunk_gap)[0].chunks) != 1:
            return False
        if not _over_group(ws, mine, edges):
            return False
        found = True
    return found


def _over_group(ws: list[_Word], mine: list[int], edges: list[float]) -> bool:
    """Whether a phrase is set over a group of columns: across a gutter of them, or centred on them."""
    a, b = edges[mine[0]], edges[mine[-1] + 1]
    x0, x1 = min(w.x0 for w in ws), max(w.x1 for w in ws)
    return any(x0 < edges[c] < x1 for c in mine[1:]) or abs((x0 + x1) / 2 - (a + b) / 2) <= (b - a) / 6


def _cut_at_rules(new: _Part, rules: list[float], inside: list[_Word]) -> _Part:
    """``new`` with a column edge at each inner rule (no text crosses a rule: the gutter there is
    certain, however narrow the space between a stub's dot leaders and the figures), every row's
    cells read again from its words between the edges (a spanning cell no longer spans)."""

    def same_gutter(e: float, r: float) -> bool:  # no word's middle between an edge of the reading and a rule
        lo, hi = min(e, r), max(e, r)
        return not any(lo < (w.x0 + w.x1) / 2 < hi for w in inside)

    inner = rules[1:-1]
    edges = sorted([e for e in new.col_edges[1:-1] if not any(same_gutter(e, r) for r in inner)] + inner)
    edges = [new.col_edges[0], *edges, new.col_edges[-1]]
    n = len(edges) - 1
    rows: list[list[str | None]] = []
    boxes: list[list[BBox | None]] = []
    for rb in new.row_bboxes:
        cells = [b for b in rb if b is not None]
        if not cells:
            continue
        top, bottom = min(b[1] for b in cells), max(b[3] for b in cells)
        per: dict[int, list[_Word]] = {}
        for w in inside:
            if top <= (w.y0 + w.y1) / 2 <= bottom:
                per.setdefault(_col_of((w.x0 + w.x1) / 2, edges), []).append(w)
        texts: list[str | None] = [""] * n
        bbs: list[BBox | None] = [None] * n
        for c, cws in per.items():
            texts[c], bbs[c] = _cell(cws, edges, c)
        rows.append(texts)
        boxes.append(bbs)
    return _Part(
        page_index=new.page_index,
        bbox=new.bbox,
        rows=rows,
        row_bboxes=boxes,
        col_edges=edges,
        header_rows=min(new.header_rows, len(rows)),
        strategy=new.strategy,
    )
