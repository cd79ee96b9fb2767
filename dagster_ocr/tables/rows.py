"""Row continuations: a table whose rows go on at the top of the next page, repeated header dropped."""

from __future__ import annotations

import bisect
import dataclasses
import itertools
import math
import re
from collections.abc import Iterator
from typing import Any

from dagster_ocr.layout import outside, union
from dagster_ocr.model import BBox, Cell, Line, Page, Table
from dagster_ocr.tables.areas import _PERIOD_RE
from dagster_ocr.tables.cells import _cell_shape, _Part
from dagster_ocr.tables.settings import _CONTINUED_RE, TableSettings
from dagster_ocr.tables.words import _LEADING, _figure_nil_or_mark, _is_num, _norm


def _running_key(ln: Line, page: Page) -> tuple[str, int]:
    """What a line printed at the same place on every page keeps from page to page: its words,
    and where it stands (the page height in 1% steps). Its figures too: a statistic under each
    table ("chi2 = 484.6, p < 0.0005") stands where the next page's does with other figures, and
    is each table's own (a page number changing from page to page is in the margin bands)."""
    return " ".join(ln.text.split()).casefold(), round(100 * (ln.bbox[1] + ln.bbox[3]) / 2 / page.height)


def _gap_ok(
    lines: list[Line],
    page: Page,
    regions: list[BBox],
    y_from: float,
    y_to: float,
    skip: set[int],
    relax: int,
    s: TableSettings,
    other: tuple[list[Line], Page] | None = None,
) -> bool:
    """True when only furniture or a few short lines lie between y_from and y_to on the page.

    Furniture is what lies in the margin bands, and, with ``other`` (the lines of the page before
    or after, and that page), a line printed there too at the same height with the same words:
    a running footnote or legend ("Abbreviations: ...") repeated on every page of a long table,
    however long, is no text that ends the table."""
    lo, hi = page.height * s.margin_fraction, page.height * (1 - s.margin_fraction)
    running: set[tuple[str, int]] = set()
    if other is not None:
        for ln in other[0]:
            text, at = _running_key(ln, other[1])
            running.update((text, at + d) for d in (-1, 0, 1))
    count = 0
    for i, ln in enumerate(lines):
        if i in skip or not outside(ln.bbox, regions):
            continue
        cy = (ln.bbox[1] + ln.bbox[3]) / 2
        if not (y_from <= cy <= y_to) or cy < lo or cy > hi:
            continue
        if running and _running_key(ln, page) in running:
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


def _header_repeat(a: _Part, b: _Part, s: TableSettings, skip_stub: bool = False) -> int:
    """Number of leading rows of ``b`` that repeat ``a``'s header (0 when none).

    Text finders cut a multi-line header into one row per printed line, and a continuation may
    start its header one line lower or rename the stub column, so each leading row of ``b`` is
    compared with any of ``a``'s first rows, column by column, rather than row ``i`` with row ``i``.
    With ``skip_stub`` the stub column is left out (a column continuation repeats its stub header
    by design: only the other columns tell a repeated header).
    """
    depth = max(a.header_rows, s.header_scan_rows)
    a_rows = [[_norm(c) for c in r] for r in a.rows[:depth]]

    a_words = {_row_words(ar, skip_stub) for ar in a_rows} - {""}
    dropped = matched = 0
    for row in b.rows[: depth + 1]:
        cells = [_norm(c) for c in row]
        filled = [i for i, c in enumerate(cells) if c and (i > 0 or not skip_stub)]
        if not filled:
            dropped += 1
            continue
        if not any(_repeats_row(ar, cells, filled, s) for ar in a_rows) and (
            len(filled) < 2 or _row_words(cells, skip_stub) not in a_words
        ):
            # the same words in the same order, their cells cut elsewhere (a short page reads its
            # gutters from a few rows: "Share water" as "Share" | "water"), repeat the header too
            break
        dropped += 1
        matched += 1
    # Never drop the whole continuation, and only when a real header line was recognised.
    return dropped if matched and dropped < len(b.rows) else 0


def _row_words(row: list[str | None], skip_stub: bool = False) -> str:
    """A row's words in order, wherever its cells are cut (normalised as ``_norm``); with
    ``skip_stub``, less the stub's."""
    return "".join(_norm(c) for i, c in enumerate(row) if c and (i > 0 or not skip_stub))


def _repeats_row(ar: list[str], cells: list[str], filled: list[int], s: TableSettings) -> bool:
    """Does a row of ``cells`` (normalised; ``filled`` its non-empty columns) print ``ar`` again: most
    of its cells the same, and no figure of its own? A data row shares labels with a row above
    (a group's name in the stub, the same fund or item again) but not its figures."""
    same = [i for i in filled if i < len(ar) and ar[i] == cells[i]]
    if len(same) < s.header_match_ratio * len(filled):
        return False
    return not any(_is_num(cells[i]) for i in filled if i not in same)


def _continues(
    a: _Part,
    b: _Part,
    pages: dict[int, Page],
    lines: dict[int, list[Line]],
    regions: dict[int, list[BBox]],
    s: TableSettings,
) -> bool:
    """True when ``b``, first on its page, continues ``a``, last on the page before (the caller
    checks both), by rows: same column layout and only furniture or a few short lines between."""
    if not _same_columns(a, b, s):
        return False
    return _placed_as_continuation(a, b, pages, lines, regions, s)


def _placed_as_continuation(
    a: _Part,
    b: _Part,
    pages: dict[int, Page],
    lines: dict[int, list[Line]],
    regions: dict[int, list[BBox]],
    s: TableSettings,
) -> bool:
    """Only furniture or a few short lines between ``a`` and ``b``, no fresh caption, no fresh header."""
    continued = bool(b.caption and _CONTINUED_RE.search(b.caption))
    relax = s.continued_relax_factor if continued else 1
    pa, pb = pages[a.page_index], pages[b.page_index]
    la, lb = lines[a.page_index], lines[b.page_index]
    below_a = _gap_ok(la, pa, regions[a.page_index], a.bbox[3], pa.height, set(), relax, s, (lb, pb))
    above_b = _gap_ok(lb, pb, regions[b.page_index], 0.0, b.bbox[1], set(b.caption_lines), relax, s, (la, pa))
    # A fresh caption that is not a continuation ("Table 5" under "Table 4") starts a new table.
    if b.caption and not continued and a.caption and _norm(a.caption) != _norm(b.caption):
        return False
    if not continued and (_fresh_header(a, b, s) or _own_header(a, b, s)):
        return False
    return below_a and above_b


def _fresh_header(a: _Part, b: _Part, s: TableSettings) -> bool:
    """``b`` opens with a header of its own: a first row of labels over the columns where ``a``
    holds figures, which does not repeat ``a``'s header.

    A continuation goes on with data rows or repeats the header it continues; two tables of the
    same layout, one ending a page and one starting the next, differ in their header. (A header
    line that renames only the stub column still repeats the others: ``_header_repeat``.)
    """
    if not b.rows or len(b.rows) < 2:
        return False
    figures = _figure_columns(a, 1, a.header_rows)
    return bool(figures) and _labels_over(b.rows[0], figures) and _header_repeat(a, b, s) == 0


#: a year in a table's headings
_YEAR_IN = re.compile(r"\b(?:19|20)\d\d\b")


def _heading_years(part: _Part) -> set[str]:
    """The years in the headings printed above ``part``'s grid (``statement.find_context``) and in
    its header rows right of the stub (a statement whose dates head its grid: "September 28," over
    "2024")."""
    headers = list(getattr(part.context, "column_headers", None) or [])
    headers += [t for row in part.rows[: part.header_rows] for t in row[1:]]
    return {y for h in headers for y in _YEAR_IN.findall(h or "")}


def _own_header(a: _Part, b: _Part, s: TableSettings) -> bool:
    """``b`` opens with a row of periods of its own: years or dates over two columns or more right
    of an empty stub (a statement's header, under at most a line of heads such as "Year Ended December
    31,"), which ``a``'s first rows do not hold. A statement continued on the next page repeats
    its years or goes on with data rows; one that prints its own years is another statement, as
    is the next table of a note under its own years. The same holds for years printed above the
    grid: a note's table "2023" under the same column heads as the page before's "2024" is the
    other year's table, not that one going on."""
    ya, yb = _heading_years(a), _heading_years(b)
    if ya and yb and ya != yb:
        return True
    for row in b.rows[: s.header_scan_rows]:
        filled = [(c, " ".join(t.split())) for c, t in enumerate(row) if t and t.strip()]
        if not filled:
            continue
        if len(filled) >= 2 and all(c > 0 and _PERIOD_RE.match(t) for c, t in filled):
            return _header_repeat(a, b, s) == 0
        if any(_is_num(t) for _c, t in filled):
            return False  # a data row before any row of years
    return False


def _column_map(
    a: _Part, b: _Part, s: TableSettings, extents: list[tuple[float, float]] | None = None
) -> list[int] | None:
    """For each column of ``b``, the column of ``a`` it lies in, by x-extent; None when a column of
    ``b`` straddles a boundary of ``a`` or the order is broken.

    A continuation's columns may differ from its part before in count and width: the last pages'
    last column set wider, one column read as two (a figure and its mark, a header cut in two), a
    totals page whose label spans the stub and the next column. They still lie inside the
    columns they continue. ``a``'s first and last columns are open to the outside, so a wider
    stub or last column still maps.
    """
    ea, eb = a.col_edges, b.col_edges
    if a.n_cols < 2 or b.n_cols < 1:
        return None
    out: list[int] = []
    for j in range(b.n_cols):
        lo, hi = extents[j] if extents is not None else (eb[j], eb[j + 1])
        if hi - lo <= 0:
            return None
        best, share = -1, 0.0
        for i in range(a.n_cols):
            alo = -math.inf if i == 0 else ea[i]
            ahi = math.inf if i == a.n_cols - 1 else ea[i + 1]
            ov = (min(hi, ahi) - max(lo, alo)) / (hi - lo)
            if ov > share:
                best, share = i, ov
        if share < s.col_map_share:
            return None
        out.append(best)
    if any(y < x for x, y in itertools.pairwise(out)):
        return None
    if len(out) >= 2 and len(set(out)) == 1:
        # every column of ``b`` inside one column of ``a``: joined, each of ``b``'s rows would become
        # one cell. A continuation's columns lie in the columns they continue, several of them; a
        # table that fits inside one column of the table before (a narrow table under a wide stub)
        # is a table of its own
        return None
    return out


def _refitted(a: _Part, b: _Part, cmap: list[int]) -> bool:
    """``b`` has as many columns as ``a``, each of the kind it continues (labels, figures), and
    ``cmap`` joins two of them while it leaves a column of ``a`` empty: the page set its columns to
    its own widths (a stub narrower or wider for its own labels moves every figure), so positions
    compared with the page before name the wrong columns; column for column is the reading."""
    return b.n_cols == a.n_cols and len(set(cmap)) < a.n_cols and _same_kinds(a, b)


def _column_lines(
    part: _Part, lines: list[Line], top: float | None = None
) -> Iterator[tuple[int, BBox, bool]]:
    """For each of ``lines`` whose middle lies in ``part``'s box (from ``top`` down, the box's top
    by default): its column (by its middle), its box, and whether it keeps within that column's
    edges (to a point)."""
    e = part.col_edges
    y_from = part.bbox[1] if top is None else top
    for ln in lines:
        x0, y0, x1, y1 = ln.bbox
        if y_from <= (y0 + y1) / 2 <= part.bbox[3] and e[0] <= (x0 + x1) / 2 <= e[-1]:
            j = min(bisect.bisect_right(e, (x0 + x1) / 2) - 1, part.n_cols - 1)
            yield j, ln.bbox, e[j] - 1 <= x0 and x1 <= e[j + 1] + 1


def _printed_extents(b: _Part, lines: list[Line]) -> list[tuple[float, float]] | None:
    """The x extent of the lines printed in each column of ``b`` (by their middles, inside its
    box); None where a column holds none, or a line runs past its column's edges."""
    printed: list[list[BBox]] = [[] for _ in range(b.n_cols)]
    for j, box, within in _column_lines(b, lines):
        if not within:
            return None
        printed[j].append(box)
    if any(not boxes for boxes in printed):
        return None
    return [(min(bx[0] for bx in boxes), max(bx[2] for bx in boxes)) for boxes in printed]


def _right_edges(part: _Part, lines: list[Line], tol: float = 1.5) -> list[float | None]:
    """Each column's right edge as its body lines print it, where they all end there (to ``tol``
    points: figures set flush right); None for a column of ragged or no lines."""
    first = part.row_bboxes[part.header_rows][0] if len(part.row_bboxes) > part.header_rows else None
    ends: list[list[float]] = [[] for _ in range(part.n_cols)]
    for j, box, within in _column_lines(part, lines, first[1] if first is not None else None):
        if within:
            ends[j].append(box[2])
    return [sorted(e)[len(e) // 2] if e and max(e) - min(e) <= tol else None for e in ends]


def _moved_figures_map(
    a: _Part, b: _Part, extents: list[tuple[float, float]], lines: list[Line], tol: float = 1.5
) -> list[int] | None:
    """For a continuation of a label and figures under no header (a totals row alone on its page)
    set in a layout of its own (a stub set wider or narrower for its long label moves every figure
    as much): ``b``'s columns in ``a``'s, found by the one shift that sets each of ``b``'s figures
    flush with the right edge of one of ``a``'s figure columns, in order (a total may leave a column
    empty). Positions compared as printed name the wrong columns there; a figure alone fits any
    shift, and evenly spaced columns several, so two figures at least and exactly one shift."""
    if b.n_cols < 3 or b.n_cols > a.n_cols:
        return None
    edges = _right_edges(a, lines, tol)
    ends = [x1 for _, x1 in extents[1:]]
    found: list[list[int]] = []
    for k, edge in enumerate(edges):
        if k == 0 or edge is None:
            continue
        shift = edge - ends[-1]
        cols = [
            next((i for i, e in enumerate(edges) if i and e is not None and abs(e - x - shift) <= tol), -1)
            for x in ends
        ]
        if -1 not in cols and all(x < y for x, y in itertools.pairwise(cols)):
            found.append([0, *cols])
    return found[0] if len(found) == 1 else None


def _remapped(a: _Part, b: _Part, cmap: list[int]) -> _Part:
    """``b`` laid out in ``a``'s columns (``cmap`` from ``_column_map``): the cells of columns that
    fall in one column of ``a`` joined left to right, a column of ``a`` that ``b`` lacks empty."""
    n = a.n_cols
    rows: list[list[str | None]] = []
    bboxes: list[list[BBox | None]] = []
    for r, row in enumerate(b.rows):
        rb = b.row_bboxes[r] if r < len(b.row_bboxes) else []
        texts: list[list[str]] = [[] for _ in range(n)]
        boxes: list[list[BBox]] = [[] for _ in range(n)]
        seen = [False] * n
        for j, text in enumerate(row):
            i = cmap[j] if j < len(cmap) else n - 1
            if text is None:
                continue
            seen[i] = True
            if text:
                texts[i].append(text)
            bb = rb[j] if j < len(rb) else None
            if bb is not None:
                boxes[i].append(bb)
        rows.append(
            [" ".join(texts[i]) if texts[i] else ("" if seen[i] or i not in cmap else None) for i in range(n)]
        )
        bboxes.append(
            [
                (
                    min(x[0] for x in boxes[i]),
                    min(x[1] for x in boxes[i]),
                    max(x[2] for x in boxes[i]),
                    max(x[3] for x in boxes[i]),
                )
                if boxes[i]
                else None
                for i in range(n)
            ]
        )
    edges: list[float] = []
    for i in range(n + 1):
        js = [j for j, c in enumerate(cmap) if c == i]
        if i == n:
            edges.append(b.col_edges[-1] if cmap[-1] == n - 1 else a.col_edges[n])
        else:
            edges.append(b.col_edges[js[0]] if js else a.col_edges[i])
    for k in range(1, len(edges)):  # the page's own edges, kept in order
        edges[k] = max(edges[k], edges[k - 1])
    return dataclasses.replace(b, rows=rows, row_bboxes=bboxes, col_edges=edges)


def _shifted(part: _Part, dx: float) -> _Part:
    """``part`` with its column edges moved by ``dx`` (its cells and boxes where they are)."""
    return dataclasses.replace(part, col_edges=[x + dx for x in part.col_edges])


def _opens_with_labels(a: _Part, b: _Part) -> bool:
    """``b``'s first row holds labels over (most of) the columns where ``a`` holds figures; True
    too when ``a`` has no column of figures, where nothing tells a header from a row of data."""
    figures = _figure_columns(a, 1, a.header_rows)
    if not b.rows:
        return False
    return not figures or _labels_over(b.rows[0], figures)


def _opens_with_own_header(b: _Part) -> bool:
    """``b``'s first row holds labels over (most of) ``b``'s own columns of figures, at least one:
    a table that opens with a header of its own. Read in ``b``'s columns, before any mapping onto
    the columns of the table it might continue."""
    if len(b.rows) < 2:
        return False
    figures = _figure_columns(b, 0, 1)
    return bool(figures) and _labels_over(b.rows[0], figures)


def _figure_columns(part: _Part, first_col: int, first_row: int) -> list[int]:
    """The columns (from ``first_col``) whose filled cells from row ``first_row`` on are mostly
    figures (60%)."""
    out = []
    for c in range(first_col, part.n_cols):
        filled = [r[c] for r in part.rows[first_row:] if c < len(r) and r[c]]
        if filled and sum(_is_num(x) for x in filled) >= 0.6 * len(filled):
            out.append(c)
    return out


def _labels_over(row: list[str], figures: list[int]) -> bool:
    """``row`` holds labels (text, no figure) over two thirds of the columns ``figures``, one at least."""
    labels = sum(1 for c in figures if c < len(row) and row[c] and not _is_num(row[c]))
    return labels >= max(1, 2 * len(figures) / 3)


#: a currency sign printed alone in a figure's cell (the figure set in the next cell, or none)
_SIGNS = _LEADING - {"("}


def _opens_with_figure(text: str) -> bool:
    """A figure, or a figure and a note after it ("143,205 estimated", "£ 62 provisional"), or a
    currency sign alone."""
    words = text.split()
    return _is_num(text) or _is_num(words[0]) or _is_num(" ".join(words[:2])) or text.strip() in _SIGNS


def _column_kinds(part: _Part, skip: int) -> list[str]:
    """Per column of ``part`` below its first ``skip`` rows: "figure" where most filled cells open
    with a figure ("143,205 estimated", "$ 1,930 *") or are a currency sign alone, "text" where
    most do not, "" when empty."""
    out = []
    for c in range(part.n_cols):
        filled = [r[c] for r in part.rows[skip:] if c < len(r) and r[c] and r[c].strip()]
        figures = sum(1 for x in filled if _opens_with_figure(x))
        out.append("" if not filled else "figure" if figures >= 0.6 * len(filled) else "text")
    return out


def _same_kinds(a: _Part, b: _Part) -> bool:
    """``a`` and ``b`` have their columns of labels and of figures in the same order (a column empty
    in either agrees with anything), with at least one column of figures, where data tells from a
    header."""
    ka, kb = _column_kinds(a, a.header_rows), _column_kinds(b, 0)
    if len(ka) != len(kb) or "figure" not in ka:
        return False
    return all(x == y or not x or not y for x, y in zip(ka, kb, strict=True))


#: a figure's mark printed apart from it: a flag letter ("p" provisional, "(e)" estimated, "r" revised)
#: or a footnote sign ("*", "†")
_MARK_RE = re.compile(r"^(?:[(\[]?[a-z][)\]]?|[*†‡§¶#]{1,3})$")


def _leading_heads(part: _Part) -> int:
    """How many of ``part``'s leading rows hold no figure (its header lines)."""
    return next((r for r, row in enumerate(part.rows) if any(c and _is_num(c) for c in row)), len(part.rows))


def _mark_columns(part: _Part) -> list[int]:
    """The columns of ``part`` that hold only figures' marks (``_MARK_RE``), each right of a column
    of figures and beside a figure in every row where it holds one (at least two), below the part's
    leading rows without a figure (its header lines)."""
    skip = _leading_heads(part)
    body = part.rows[skip:]
    kinds = _column_kinds(part, skip)
    out = []
    for c in range(2, part.n_cols):
        pairs = [(r[c - 1] or "", (r[c] or "").strip()) for r in body if c < len(r) and r[c] and r[c].strip()]
        if (
            len(pairs) >= 2
            and kinds[c - 1] == "figure"
            and all(_MARK_RE.match(m) and fig.strip() for fig, m in pairs)
        ):
            out.append(c)
    return out


def _sign_columns(part: _Part) -> list[int]:
    """The columns of ``part`` that hold only currency signs set apart ("$", "£") below its leading
    rows without a figure (its header lines), each left of a column of figures and before a figure
    or nil in every row where it holds one (at least two)."""
    skip = _leading_heads(part)
    out = []
    for c in range(1, part.n_cols - 1):
        pairs = [
            ((r[c] or "").strip(), r[c + 1] or "")
            for r in part.rows[skip:]
            if c < len(r) and r[c] and r[c].strip()
        ]
        if len(pairs) >= 2 and all(
            sign in _SIGNS and _figure_nil_or_mark(fig.strip()) for sign, fig in pairs
        ):
            out.append(c)
    return out


def _marks_folded(part: _Part) -> _Part:
    """``part`` with each column of marks (``_mark_columns``) joined to the figures on its left, and
    each column of currency signs set apart (``_sign_columns``) to the figures on its right.

    A figure and its mark set apart ("128,946   (b)"), or a sign and its figure ("$   66" where
    other rows print "$64.43"), read as two columns where the gap between them is as wide as one
    between columns. On a page whose columns line up with the page before, such a column falls
    inside the figure's and ``_column_map`` joins them; on a page set to its own widths (a wider
    stub moving every figure right) nothing lines up, and the continuation has a column more than
    the table it continues. Its header lines join the same way ("Market" / "housing")."""
    marks = set(_mark_columns(part))
    signs = set(_sign_columns(part)) - marks
    if not marks and not signs:
        return part
    keep = [c for c in range(part.n_cols) if c not in marks and c - 1 not in signs]
    rows: list[list[str | None]] = []
    bboxes: list[list[BBox | None]] = []
    for r, row in enumerate(part.rows):
        rb = part.row_bboxes[r] if r < len(part.row_bboxes) else []
        texts: list[str | None] = []
        boxes: list[BBox | None] = []
        for c in range(part.n_cols):
            text = row[c] if c < len(row) else None
            bb = rb[c] if c < len(rb) else None
            if (c in marks or c - 1 in signs) and texts:
                if text and text.strip():
                    texts[-1] = " ".join(t for t in (texts[-1] or "", text.strip()) if t)
                boxes[-1] = union([x for x in (boxes[-1], bb) if x is not None]) if boxes[-1] or bb else None
                continue
            texts.append(text)
            boxes.append(bb)
        rows.append(texts)
        bboxes.append(boxes)
    edges = [part.col_edges[c] for c in keep] + [part.col_edges[-1]]
    return dataclasses.replace(part, rows=rows, row_bboxes=bboxes, col_edges=edges)


def _mapped_continuation(
    first: _Part,
    a: _Part,
    b: _Part,
    pages: dict[int, Page],
    lines: dict[int, list[Line]],
    regions: dict[int, list[BBox]],
    s: TableSettings,
) -> _Part | None:
    """``b`` in ``a``'s columns when it continues ``a`` by rows with another column layout (see
    ``_column_map``); None when it does not. ``first`` is the table's first part (its header).

    Another layout is weaker evidence than the same one, so ``b`` must either open with data (figures
    under ``first``'s figure columns) or repeat ``first``'s header: a table of its own under a header
    of its own stays apart, and so does one after a part of text columns only (an index, a block of
    labels the finder took for a table), where data and a header look alike.
    """
    if _same_columns(a, b, s):
        return None  # the same layout: ``_continues`` said no for another reason
    if b.n_cols > a.n_cols and (folded := _marks_folded(b)) is not b:
        # a column more than the part before, of marks beside figures: the figures' own column
        b = folded
        if _same_columns(a, b, s):
            return b if _placed_as_continuation(a, b, pages, lines, regions, s) else None
    m = None
    if b.n_cols == a.n_cols and _header_repeat(first, b, s) >= max(1, first.header_rows):
        # the same columns under the header repeated whole: the header says which column is which,
        # whatever widths the page fitted to its own rows or wherever its margins set it
        m = b
    # mirrored margins (odd pages set further right or left) move the whole table with the page:
    # its left edge, where its stub starts flush left, tells by how much, and the columns are
    # compared from there first
    dx = a.col_edges[0] - b.col_edges[0]
    shifts = () if m is not None else (dx, 0.0) if abs(dx) > 1.0 else (0.0,)
    for shift in shifts:
        moved = _shifted(b, shift) if shift else b
        cmap = _column_map(a, moved, s)
        if cmap is not None:
            if _refitted(a, b, cmap):
                m = b
            else:
                m = _remapped(a, moved, cmap)
                m = _shifted(m, -shift) if shift else m
            break
    if (
        m is None
        and any(_is_num(c) for row in b.rows for c in row[1:] if c)
        and (ext := _printed_extents(b, lines[b.page_index])) is not None
    ):
        # a part of a few rows of figures (a totals page) puts its column edges in the middles of
        # wide gutters, across the columns of the part before: where its cells' own lines lie says
        # which they are (a block of labels, a header printed apart, is not mapped so)
        cmap = _column_map(a, b, s, ext) or _moved_figures_map(a, b, ext, lines[a.page_index])
        m = None if cmap is None else b if _refitted(a, b, cmap) else _remapped(a, b, cmap)
    if m is None and b.n_cols == a.n_cols and _same_kinds(a, b):
        # as many columns, each of the kind it continues (labels, figures), only set narrower or
        # wider: the page fitted its columns to its own rows (the header not repeated to say so)
        m = b
    if m is None:
        return None
    if _opens_with_labels(first, m) and _header_repeat(first, m, s) == 0:
        return None
    if _opens_with_own_header(b) and _header_repeat(first, b, s) == 0 == _header_repeat(first, m, s):
        # a header of its own, read in its own columns: mapped, its labels may land beside the
        # figures or all in one column, where the test above cannot see them (the header repeated
        # over a column the page read more, an empty one or a sign's, repeats once mapped)
        return None
    if m is not b and _words_under_figures(a, m):
        return None
    return m if _placed_as_continuation(a, m, pages, lines, regions, s) else None


def _words_under_figures(a: _Part, m: _Part) -> bool:
    """``m``, a part mapped onto ``a``'s columns, fills ``a``'s columns of figures with words only:
    two cells or more there, no figure, nil nor mark among them. A short table of codes under its
    own heads ("lot", "supp") straddling a long table's stub and its first column of figures maps
    there as rows (its header is no header of figures to tell it by); a table's next page fills its
    figure columns with figures."""
    cells = [
        t
        for c in _figure_columns(a, 1, a.header_rows)
        for r in m.rows[m.header_rows :]
        if c < len(r) and (t := (r[c] or "").strip())
    ]
    return len(cells) >= 2 and not any(_figure_nil_or_mark(t) for t in cells)


def _without_running_head(first: _Part, b: _Part, page: Page, s: TableSettings) -> _Part:
    """``b`` (first on its page, a candidate continuation) less its leading rows that are the page's
    running head: rows wholly inside the top furniture band (``margin_fraction``), set apart from
    the table's first row below the band by more than the table's row pitch, that do not repeat the
    header of ``first``. A text finder takes in a running head that lines up with the columns (on a
    mirrored page its two ends fall over the first and last columns); it then sits above the
    repeated header, which is no longer the part's first row and stays in. The same furniture
    between two parts is ignored by ``_gap_ok``; here it is left to the page's text."""
    band = page.height * s.margin_fraction
    found = [[x for x in rb if x is not None] for rb in b.row_bboxes[: len(b.rows)]]
    if len(found) != len(b.rows) or not all(found):
        return b
    ys = [(u[1], u[3]) for u in map(union, found)]
    k = 0
    while k < len(ys) - 1 and ys[k][1] <= band:
        k += 1
    if k == 0 or ys[k][0] <= band or len(ys) - k < 2:
        return b
    pitch = sorted(y1[0] - y0[0] for y0, y1 in itertools.pairwise(ys[k:]))
    if ys[k][0] - ys[k - 1][1] <= pitch[len(pitch) // 2]:
        return b  # close over the rows below: a row of the table
    head = [[_norm(c) for c in r] for r in first.rows[: max(first.header_rows, 1)]]
    for row in b.rows[:k]:
        cells = [_norm(c) for c in row]
        if any(c and i < len(h) and h[i] == c for h in head for i, c in enumerate(cells)):
            return b  # a line of the header: ``_header_repeat`` drops it
    bbox = (b.bbox[0], union([x for rb in found[k:] for x in rb])[1], b.bbox[2], b.bbox[3])
    return dataclasses.replace(b, rows=b.rows[k:], row_bboxes=b.row_bboxes[k:], bbox=bbox)


def _context_fields(part: _Part) -> dict[str, Any]:
    """The ``Table`` fields a part's page context (``tables.statement``) fills."""
    ctx = part.context
    if ctx is None:
        return {}
    return {
        "title": ctx.title,
        "units": ctx.units,
        "column_headers": list(ctx.column_headers) if any(ctx.column_headers) else [],
        "row_group": ctx.row_group,
    }


def _build_rows(parts: list[_Part], drop: list[int], table_id: str, s: TableSettings) -> Table:
    """One table from parts joined by rows (``drop`` = repeated header rows skipped per part)."""
    first = parts[0]
    # the heading lines above the grid its column_headers were read from (tables.statement)
    heads = first.context.heads if first.context is not None else []
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
        **_context_fields(first),
        merge_kind="rows" if len(parts) > 1 else "",
        regions=[(p.page_index, p.bbox) for p in parts] + [(first.page_index, box) for box, _ in heads],
    )
