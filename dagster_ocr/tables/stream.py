"""The text-alignment ("stream") finder: tables found in word positions alone, no rules needed.

Words are cut into chunks at wide gaps, runs of multi-chunk lines form table areas (``areas``), column gutters
are x ranges no word covers, rows are text lines (stacked header lines and wrapped cells joined, a row
label wrapped over lines joined with its figures on its first, last or middle line), a header phrase
centred over a group of columns spans them; ``_keep`` then tells tables from prose set in columns and
bulleted lists.
"""

from __future__ import annotations

import itertools
import math
import re
import statistics
from collections.abc import Callable, Iterator

from dagster_ocr.model import BBox
from dagster_ocr.paragraphs.furniture import _is_page_number
from dagster_ocr.tables.areas import (
    _PERIOD_RE,
    _YEAR_RE,
    _centred_over,
    _close_below,
    _line_gap,
    _stacked_under,
    _table_areas,
)
from dagster_ocr.tables.cells import _Part
from dagster_ocr.tables.settings import TableSettings
from dagster_ocr.tables.words import (
    _HEAD_YEAR_RE,
    _OPENING_SIGNS,
    _SIGNS,
    _WORD_RE,
    _bands,
    _clean,
    _column_bounds,
    _column_cover,
    _figure_nil_or_mark,
    _figure_or_nil,
    _is_num,
    _text_lines,
    _TextLine,
    _Word,
    _words_text,
    _years_and_signs,
)
from dagster_ocr.tables.words import _reads_on as _reads_on_text


def _col_of(x: float, edges: list[float]) -> int:
    for c in range(len(edges) - 1):
        if x < edges[c + 1]:
            return c
    return len(edges) - 2


def _end(w: _Word) -> float:
    """How far a word's end may reach over a column's edge without crossing it: a point; a figure,
    set right against the next column's sign, up to a tenth of it (three points at most). A label's
    word reaching over an edge is a long label spanning columns, however little it reaches."""
    return max(1.0, min(3.0, 0.1 * (w.x1 - w.x0))) if _is_num(w.text) else 1.0


def _crosses(w: _Word, edges: list[float]) -> bool:
    """Does ``w`` reach over one of ``edges`` by more than its end (``_end``, read once a word)?"""
    t = _end(w)
    return any(w.x0 + t < e < w.x1 - t for e in edges)


#: the most words a phrase of heads set a space apart holds (``_cut_at_edges``); a longer chunk is
#: a sentence (a note under the grid), placed whole
_HEAD_WORDS = 4


def _cut_at_edges(chunk: list[_Word], inner: list[float]) -> list[list[_Word]]:
    """``chunk``, a chunk a word of which crosses an edge (``_crosses``), cut at the spaces between
    its words that an edge lies in, or lies past within the space's width (the next word begins a
    little left of its column's sign edge: "Equivalents" at 272.8, the "$" edge at 276.0, a space of
    4.4 after "Securities"). Heads wider than their narrow figures are set a space apart
    ("Securities Equivalents" over two columns): the word that reaches over its own column's sign
    edge spans that column, not its neighbour's head too."""
    if not 2 <= len(chunk) <= _HEAD_WORDS:
        return [chunk]
    pieces = [[chunk[0]]]
    for w, v in itertools.pairwise(chunk):
        if any(w.x1 <= e <= v.x0 + (v.x0 - w.x1) for e in inner):
            pieces.append([v])
        else:
            pieces[-1].append(v)
    return pieces


def _line_cells(ln: _TextLine, edges: list[float]) -> dict[int, tuple[int, list[_Word]]]:
    """Cells of one line: first column -> (last column, words); a chunk crossing a gutter spans."""
    cells: dict[int, tuple[int, list[_Word]]] = {}
    inner = edges[1:-1]
    for whole in ln.chunks:
        # a word crosses a gutter's edge when more than its end reaches over it: a figure set right
        # against the next column's "$" sign puts the edge a point or two inside it
        crossing = any(_crosses(w, inner) for w in whole)
        pieces = _cut_at_edges(whole, inner) if crossing else [whole]
        for chunk in pieces:
            if crossing and (len(pieces) == 1 or any(_crosses(w, inner) for w in chunk)):
                c0 = _col_of((chunk[0].x0 + chunk[0].x1) / 2, edges)
                c1 = _col_of((chunk[-1].x0 + chunk[-1].x1) / 2, edges)
                if chunk is pieces[0]:  # a piece after a cut begins at the edge it was cut at
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


def _area_cells(area: list[_TextLine], edges: list[float]) -> list[dict[int, tuple[int, list[_Word]]]]:
    """Each line's cells between ``edges``: a section's label is one cell from its first column on,
    however many gutters it crosses; a group's label under the heads, and a section's label centred
    over the whole table, is the stub's cell."""
    return [
        (
            {0: (0, list(ln.words))}
            if ln.stub or _centred_over(ln, edges)
            else {_col_of(ln.x0, edges): (_col_of(ln.x1, edges), list(ln.words))}
        )
        if ln.label
        else _line_cells(ln, edges)
        for ln in area
    ]


def _stream_part(area: list[_TextLine], page_index: int, s: TableSettings) -> _Part | None:
    edges = _column_bounds(area, s)
    if len(edges) - 1 < s.min_cols:
        return None
    line_cells = _area_cells(area, edges)

    def drop_edges(find: Callable[[], int | None], after: int = 0) -> None:
        """Drop the column edge ``find`` names (its index in ``edges``, less ``after``) until it
        names none, the lines' cells read again after each."""
        nonlocal line_cells
        while (e := find()) is not None:
            del edges[e + after]
            line_cells = _area_cells(area, edges)

    drop_edges(lambda: _edge_inside_a_lone_phrase(area, line_cells, len(edges) - 1))
    if len(edges) - 1 < s.min_cols:
        return None
    h = statistics.median(ln.y1 - ln.y0 for ln in area)

    # Header: leading lines whose stub is empty or whose other cells hold no number.
    def headerish(k: int) -> bool:
        cells, ln = line_cells[k], area[k]
        if ln.label:  # a section's label: the body has begun
            return False
        if 0 not in cells or _periods_line(cells):
            return True
        if (
            set(cells) == {0}
            and k
            and (
                _periods_only(line_cells[k - 1])
                or _periods_line(line_cells[k - 1])
                or all(0 not in line_cells[j] for j in range(k))
            )
        ):
            # a label under the periods' row, or under column heads that leave the stub empty: the
            # body's first section ("Level 1:" under "Adjusted Cost", "Fair Value", ...)
            return False
        if set(cells) == {0} and k and first_section_label(k):
            # the first section's label right under the heads, as the later sections' labels are
            # set between their rows: the body has begun
            return False
        if set(cells) == {0} and k and _label_opens_body(area[k:], line_cells[k:]):
            # the first row's label under the header, wrapped down to its figures (which sit on a
            # lower line of it): the body has begun, the label is no line of the stub's head
            return False
        # a dash stands for a nil figure: a row of them is a data row
        return not figures_beside(k)

    def figures_beside(k: int) -> bool:
        """A figure (or a nil's dash, or a statistical table's "not available": "..", ":", "n.a.")
        right of the stub on line ``k``: a row of a country with no figure that year is a data row."""
        cells = line_cells[k].items()
        return any(_figure_nil_or_mark(t) for c, (_, ws) in cells if c > 0 and (t := _words_text(ws)))

    def first_section_label(k: int) -> bool:
        """Line ``k``, a label alone in the stub under a head line that fills other columns, opens a
        section as lines further down do: it starts a phrase (no lower-case start reading on from
        the head above), a line of figures follows it (or a sub-label alone in the stub, then one),
        and the body holds another such label, a line alone in the stub between lines of figures (or
        over a sub-label of its own, then figures: "Part-time" over "By size class")."""
        if set(line_cells[k - 1]) == {0} or _reads_on(line_cells[k]) or not opens_rows(k, wrapped=True):
            return False
        return any(
            set(line_cells[j]) == {0} and figures_beside(j - 1) and opens_rows(j)
            for j in range(k + 2, len(area) - 1)
        )

    def opens_rows(k: int, wrapped: bool = False) -> bool:
        """Figures on the line after ``k``, or on the line after that under a sub-label alone in the
        stub that starts a phrase of its own ("Urban areas" over "Of which:"), or with ``wrapped``
        under the label's own lower line (which reads on: for a line further down, the first line
        of a wrapped row label with no figure is no section's label)."""
        if k + 1 < len(area) and figures_beside(k + 1):
            return True
        return (
            k + 2 < len(area)
            and set(line_cells[k + 1]) == {0}
            and (wrapped or not _reads_on(line_cells[k + 1]))
            and figures_beside(k + 2)
        )

    n_head = 0
    headless = _label_opens_body(area, line_cells)
    while not headless and n_head < min(len(area) - 1, s.header_scan_rows) and headerish(n_head):
        n_head += 1
    if n_head == s.header_scan_rows and not any(map(figures_beside, range(len(area)))):
        # no figure right of the stub on any line: a table of words (codes, names), where "no number"
        # cannot tell a head from the body; its head is its first line and the lines under it that
        # leave the stub empty, a stacked head's lower lines (a stack of the scan's every line took
        # the body's first rows into the head)
        n_head = 1
        while n_head < len(area) - 1 and 0 not in line_cells[n_head] and 0 not in line_cells[n_head - 1]:
            n_head += 1
    # a table of one row under its heads keeps them when their last line is one of years and signs
    periods_last = n_head >= 2 and _periods_line(line_cells[n_head - 1])
    if ((n_head == len(area) - 1 and not periods_last) or n_head == 0) and not headless:
        n_head = 1 if len(area) > 2 else 0
    # the header lines that hold column heads: labels, no figure but years
    heads = [
        k
        for k in range(n_head)
        if headerish(k)
        and not any(_is_num(t := _words_text(ch)) and not _YEAR_RE.match(t) for ch in area[k].chunks)
    ]
    drop_edges(lambda: _crossed_only(line_cells, len(edges) - 1))
    drop_edges(lambda: _one_column(area, line_cells, heads, edges), after=1)
    drop_edges(lambda: _phrase_tail_column(area, line_cells, edges))
    if (moved := _stub_edge_past_labels(area[n_head:], area, edges)) is not None:
        edges[:] = moved
        line_cells = _area_cells(area, edges)
        # with the stub past the labels, a head over a column beside it may be one again ("Estimate
        # forecast" in a fixed-pitch font, cut at its space where long labels were cut at theirs)
        drop_edges(lambda: _one_column(area, line_cells, heads, edges), after=1)
    _label_tails_back(area[n_head:], line_cells[n_head:], edges, h)
    n_cols = len(edges) - 1
    if n_cols < s.min_cols:
        return None
    for i, k in enumerate(heads):  # a head centred over a group of columns, above their heads, spans them
        line_cells[k] = _phrase_spans(area[k], line_cells[k], edges, [line_cells[j] for j in heads[i + 1 :]])
    for i in range(len(heads) - 2, -1, -1):  # heads stacked a head over a head, bottom up
        line_cells[heads[i]] = _stacked_heads(
            line_cells[heads[i]], [line_cells[j] for j in heads[i + 1 :]], edges
        )
    signs = _sign_columns(line_cells[n_head:], n_cols)
    for k in heads if signs else []:
        line_cells[k] = _over_sign_gutter(area[k], line_cells[k], signs)

    # Group lines into rows. Header lines without spanning cells stack into one header row
    # (a multi-line header); body lines continue the previous row only when they fill none of
    # the key columns (filled in most body lines) and only columns the previous row fills.
    body = line_cells[n_head:]
    fill = [sum(1 for lc in body if c in lc) for c in range(n_cols)]
    key = {c for c in range(n_cols) if fill[c] >= s.key_column_fill * max(len(body), 1)}
    line_gap = _line_gap(area, h, s)
    rows: list[dict[int, tuple[int, list[_Word]]]] = []
    row_kind: list[bool] = []  # True = header

    def stacks(cells: dict[int, tuple[int, list[_Word]]]) -> bool:
        """A head line that stacks with the head lines above and below it: no head over two columns
        or more. A head of words over a "$" column and its figures' (placed so by
        ``_over_sign_gutter``) heads one column ("Unrealized" over "Gains"); a period's head over
        them ("September 28," over "2016") is read as its own row and joined by
        ``statement.merge_stacked_heads``."""
        if not any(e > c for c, (e, _) in cells.items()):
            return True
        if any(ch.isdigit() for _, ws in cells.values() for ch in _words_text(ws)):
            return False
        return not any(
            e > c and sum(j not in signs for j in range(c, e + 1)) > 1 for c, (e, _) in cells.items()
        )

    for k, (ln, cells) in enumerate(zip(area, line_cells, strict=True)):
        is_head = k < n_head
        spans = any(e > c for c, (e, _) in cells.items())
        if rows and k > 0 and not ln.label and not area[k - 1].label:
            prev_ln = area[k - 1]
            tight = ln.y0 - prev_ln.y1 <= s.wrap_gap * h
            prev = rows[-1]
            prev_spans = any(e > c for c, (e, _) in prev.items())
            join = False
            if is_head and row_kind[-1] and stacks(cells) and stacks(prev) and tight:
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
            elif (
                not is_head
                and not row_kind[-1]
                and s.merge_wrapped
                and _continues_text(cells, prev)
                and (
                    ln.y0 - prev_ln.y1 <= line_gap
                    or _close_below(ln, prev_ln, area[max(0, k - 12) : k], h, s)
                )
            ):
                join = True
            elif (
                not is_head
                and not row_kind[-1]
                and s.merge_wrapped
                and set(prev) == {0}
                and _reads_on(cells)
                and ln.y0 - prev_ln.y1 <= line_gap
                and not _is_num(_words_text(prev[0][1]).split()[-1])
                and not any(_WORD_RE.search(_words_text(ws)) for c, (_, ws) in cells.items() if c > 0)
            ):
                # a row label wrapped over lines with the row's figures on its last line (or midway):
                # the lines above the figures hold the label alone, and the label reads on here, the
                # line holding figures or nothing right of it (entries of an index read on in lower
                # case too, beside words, after a page number)
                join = True
            elif not is_head and not row_kind[-1] and prev_ln.wraps_on and set(cells) == {0}:
                # the rest of a label whose figures, set midway, were taken into its first line
                join = True
            elif (
                not is_head
                and not row_kind[-1]
                and not spans
                and not prev_spans
                and ln.y0 < prev_ln.y1 - 0.2 * h
                and not set(cells) & set(line_cells[k - 1])
            ):
                # Interleaved lines: figures set midway beside a label wrapped over two lines (or a
                # label beside a figure) overlap both in height; they are one row, a row span.
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
    for row, head in zip(rows, row_kind, strict=True):
        if head:
            row = _unstraddled(row)
        else:
            row = _sign_to_its_figure(row, h, edges)
        texts: list[str | None] = [""] * n_cols
        boxes: list[BBox | None] = [None] * n_cols
        for c, (e, ws) in sorted(row.items()):
            if texts[c] is None:  # covered by a span to its left: keep the words with that cell
                continue
            covered = [cc for cc in range(c + 1, e + 1) if cc in row]
            if head and covered:
                # a head of lines stacked over a "$" column and its figures' ("Cash and" over
                # "Equivalents", the lower line reaching into the "$" column): its words read as
                # printed, line by line, wherever each line's chunk began
                ws = [*ws, *(w for cc in covered for w in row[cc][1])]
                covered = []
            # order words by line, then x, so a stacked header reads top to bottom; lines are told
            # by overlap (``_bands``), so a raised footnote mark stays after its figure
            ws_sorted = [w for band in _bands(ws) for w in band]
            texts[c] = _clean(_words_text(ws_sorted))
            boxes[c] = (edges[c], min(w.y0 for w in ws), edges[e + 1], max(w.y1 for w in ws))
            for cc in covered:  # a chunk in a covered column: its words join the spanning cell
                texts[c] = _clean(f"{texts[c]} {_words_text(row[cc][1])}")
            for cc in range(c + 1, e + 1):
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


#: a line's or a row's cells: first column -> (last column, words)
_Cells = dict[int, tuple[int, list[_Word]]]


def _unstraddled(row: _Cells) -> _Cells:
    """A header row's cells, each head that reaches back into the columns of the head before it
    and on past them started after them.

    Heads on one line, each centred over its group of columns ("Year Ended December 31," over the
    years, "2020 vs. 2019 Change" over a "$" and a "%" column): a head wider than its group starts
    a little left of the gutter before it, so ``_line_cells`` starts it in the last column of the
    group before, which the head before already covers, and the two heads would be read as one.
    A head that lies wholly inside another's columns is a line of it and stays there."""
    out = dict(row)
    reach = -1
    for c in sorted(row):
        end, ws = out[c]
        if c <= reach < end and reach + 1 not in out:
            del out[c]
            out[reach + 1] = (end, ws)
        reach = max(reach, end)
    return out


def _sign_to_its_figure(row: _Cells, h: float, edges: list[float]) -> _Cells:
    """A body row whose stub cell ends in a currency sign set far right of its label, a figure after
    it: the sign is the figure's ("$" at the left of its column, as a statement sets it on a
    section's first and total rows), in its own column. A label reaching past the stub's edge spans
    the sign's column, and took the sign in (long labels leave a narrow gutter before it)."""
    if 0 not in row:
        return row
    end, ws = row[0]
    covered = [w for c in range(1, end + 1) if c in row for w in row[c][1]]
    words = ws + covered
    sign = max(words, key=lambda w: w.x1)
    before = [w for w in words if w is not sign and w.y0 < sign.y1 and sign.y0 < w.y1]
    if sign.text not in _OPENING_SIGNS or not before or sign.x0 - max(w.x1 for w in before) <= 1.5 * h:
        return row
    figure = next((row[c] for c in sorted(row) if c > end), None)
    if figure is None or not _figure_or_nil(_words_text(figure[1])):
        return row
    at = max(1, _col_of((sign.x0 + sign.x1) / 2, edges))
    out = {c: cell for c, cell in row.items() if not 0 < c <= end}
    out[0] = (at - 1, [w for w in words if w is not sign])
    if at in out:  # the figure's own column: the sign goes before it
        last, fws = out[at]
        out[at] = (last, [sign, *fws])
    else:
        out[at] = (at, [sign])
    return out


def _sign_columns(body: list[dict[int, tuple[int, list[_Word]]]], n_cols: int) -> set[int]:
    """The columns right of the stub whose body cells hold a lone sign ("$", "%") or nothing, a sign
    at least: the "$" a statement sets apart at the left of its figures."""
    seen: dict[int, set[str]] = {c: set() for c in range(1, n_cols)}
    for cells in body:
        for c, (e, ws) in cells.items():
            if c in seen:
                seen[c].add(_words_text(ws) if e == c else "")
    return {c for c, texts in seen.items() if texts and texts <= _SIGNS}


def _over_sign_gutter(
    ln: _TextLine, cells: dict[int, tuple[int, list[_Word]]], signs: set[int]
) -> dict[int, tuple[int, list[_Word]]]:
    """A header line's cells with a period cut at the gutter right of a sign column made one cell
    spanning both columns: a date centred over its column's "$" and figure ("September 28, 2017")
    whose word space lies on that gutter is one head, as it is when a word crosses it (its column
    is the figure's once the sign column is folded, ``statement.fold_symbol_columns``). Periods
    only: signs in garbled text (a symbol font read as "$", "%") stand in columns of their own."""
    chunk_of = {id(w): k for k, ch in enumerate(ln.chunks) for w in ch}
    out = dict(cells)
    for c in sorted(signs, reverse=True):
        if c not in out or out[c][0] != c or c + 1 not in out:
            continue
        (e, right), left = out[c + 1], out[c][1]
        chunk = chunk_of.get(id(left[-1]))
        one = chunk is not None and chunk == chunk_of.get(id(right[0]))
        if one and _PERIOD_RE.match(_words_text(left + right)):
            out[c] = (e, left + right)
            del out[c + 1]
    return dict(sorted(out.items()))


def _periods_line(cells: dict[int, tuple[int, list[_Word]]]) -> bool:
    """The line holds years and lone signs right of the stub (``words._years_and_signs``, a sign not
    needed): the line of a comparison table's periods and its change columns' units, under their
    heads; the stub may name the units ("(Dollars in millions)"), not hold a figure."""
    texts = [_words_text(ws) for c, (_, ws) in cells.items() if c > 0]
    stub = _words_text(cells[0][1]) if 0 in cells else ""
    return _years_and_signs(texts, sign=False) and not any(ch.isdigit() for ch in stub)


def _periods_only(cells: dict[int, tuple[int, list[_Word]]]) -> bool:
    """The line holds periods alone (years, dates), right of the stub: a statement's row of periods."""
    texts = [_words_text(ws) for c, (_, ws) in cells.items()]
    return 0 not in cells and len(texts) >= 2 and all(_PERIOD_RE.match(t) for t in texts)


def _phrase_spans(
    ln: _TextLine,
    cells: dict[int, tuple[int, list[_Word]]],
    edges: list[float],
    below: list[dict[int, tuple[int, list[_Word]]]],
) -> dict[int, tuple[int, list[_Word]]]:
    """A header line's cells with a phrase cut by a column edge made one cell spanning its columns.

    A head set centred over a group of columns (a spanning head) is a phrase, one chunk of its
    line, whose words fall in two columns or more when an edge lies in one of its word spaces. It
    spans them when a header line ``below`` holds the group's own heads (two cells at least in
    those columns) and the phrase sits centred over the group (a head wrapped in its own column
    that reaches over an edge does not). Figures (years) head columns of their own; the stub
    column is left as it is.
    """
    chunk_of = {id(w): k for k, ch in enumerate(ln.chunks) for w in ch}
    out: dict[int, tuple[int, list[_Word]]] = {}
    prev: int | None = None
    for c, (e, ws) in sorted(cells.items()):
        if prev and out[prev][0] + 1 == c:
            left, right = out[prev][1][-1], ws[0]
            chunk = chunk_of.get(id(left))
            # figures (years) head columns of their own; a phrase of words runs on past a number
            # it holds ("As of December 31,", "2023 vs. 2022 Change")
            phrase = chunk is not None and any(not _is_num(w.text) for w in ln.chunks[chunk])
            if chunk == chunk_of.get(id(right)) and (
                phrase or not (_is_num(left.text) or _is_num(right.text))
            ):
                out[prev] = (e, out[prev][1] + ws)
                continue
        out[c] = (e, list(ws))
        prev = c
    for c, (e, ws) in list(out.items()):
        if e == cells[c][0]:
            continue  # nothing joined here
        mid, group = (ws[0].x0 + ws[-1].x1) / 2, (edges[c] + edges[e + 1]) / 2
        heads_below = any(sum(c <= x <= e for x in lc) >= 2 for lc in below)
        if not heads_below or abs(mid - group) > 0.2 * (edges[e + 1] - edges[c]):
            out.pop(c)
            run = _centred_year_run(ws, c, e, below, set(out))
            if run is not None:  # "Years ended" over two years, cut at the "$" column between them
                out[run[0]] = (run[1], ws)
            else:
                out.update({x: cells[x] for x in cells if c <= x <= e})
    for c, (e, ws) in list(out.items()):
        if c == 0:
            continue
        # the columns between the heads on either side of this one
        lo = max((out[x][0] for x in out if x < c), default=0) + 1
        hi = min((x for x in out if x > c), default=len(edges) - 1) - 1
        if e == c:
            # a head of words over one year of a run of years no other head stands over, centred over
            # the run at least as well as over its own year: it heads the run ("Years ended" set
            # over the middle one of three years)
            below_c = next((lc for lc in below if c in lc), None)
            if (
                below_c is None
                or not _WORD_RE.search(_words_text(ws))
                or _head_kind(_words_text(below_c[c][1])) != "year"
            ):
                continue
            run = [x for x in sorted(below_c) if lo <= x <= hi]
            run_ok = [x for x in run if _head_kind(_words_text(below_c[x][1])) == "year"]
            if len(run_ok) < 2 or run_ok != run:
                continue
            mid = (ws[0].x0 + ws[-1].x1) / 2
            first, last = below_c[run[0]][1], below_c[run[-1]][1]
            own = below_c[c][1]
            # (within a point: the middle one of three years right-aligned sits at the run's middle)
            if abs(mid - (first[0].x0 + last[-1].x1) / 2) <= abs(mid - (own[0].x0 + own[-1].x1) / 2) + 1.0:
                out.pop(c)
                out[run[0]] = (run[-1], ws)
            continue
        # a head over a run of years reaching past its words' columns (a short period
        # head over three years): it spans the run's cells beside it that no other head of its
        # line stands over, in the nearest line below holding one of its columns
        line = next((lc for lc in below if any(c <= x <= e for x in lc)), None)
        if line is None:
            continue
        kinds = {_head_kind(_words_text(line[x][1])) for x in line if c <= x <= e}
        if kinds != {"year"}:
            continue
        a, b = c, e
        for x in range(e + 1, hi + 1):
            if x in line:
                if _head_kind(_words_text(line[x][1])) not in kinds:
                    break
                b = x
        for x in range(c - 1, lo - 1, -1):
            if x in line:
                if _head_kind(_words_text(line[x][1])) not in kinds:
                    break
                a = x
        if (a, b) != (c, e):
            out.pop(c)
            out[a] = (b, ws)
    return dict(sorted(out.items()))


def _stacked_heads(
    cells: dict[int, tuple[int, list[_Word]]],
    below: list[dict[int, tuple[int, list[_Word]]]],
    edges: list[float],
) -> dict[int, tuple[int, list[_Word]]]:
    """A head line set a head over a head: each of its cells (or each word of a cell of several, or
    its words by the column their middles lie in) centred on a head of the lines below (or level
    with one of its ends, to a point and a half), over no other, one over each. Each takes the
    columns of the head under it, however far it reaches over the body's edges ("Cash / Unrealized /
    Unrealized / Marketable" over "Equivalents / Losses / Gains / Securities", heads wider than
    their narrow figures, set a space apart, were one head spanning four columns; "Non-Current" and
    "Cash and" a space apart over "Marketable" and "Cash"). Any head of the line over none, or over
    two, leaves the line as it is: a phrase spanning a group of columns is not set word by word
    over their heads."""
    units: list[list[_Word]] = []
    under: list[tuple[int, int]] = []
    for _, ws in (cells[c] for c in sorted(cells)):
        found = next((f for split in _head_splits(ws, edges) if (f := _all_stacked(split, below))), None)
        if found is None:
            return cells
        for head, unit in found:
            units.append(unit)
            under.append(head)
    if len(units) < 2 or any(b[0] <= a[1] for a, b in itertools.pairwise(under)):
        return cells
    return {x: (y, unit) for (x, y), unit in zip(under, units, strict=True)}


def _head_splits(ws: list[_Word], edges: list[float]) -> Iterator[list[list[_Word]]]:
    """A head cell's words as ``_stacked_heads`` tries them, in turn: whole, each word, then by the
    column their middles lie in (read only when the first two fail)."""
    yield [ws]
    if len(ws) > 1:
        yield [[w] for w in ws]
        by_column = [
            list(g) for _, g in itertools.groupby(ws, key=lambda w: _col_of((w.x0 + w.x1) / 2, edges))
        ]
        if len(by_column) > 1:
            yield by_column


def _all_stacked(
    split: list[list[_Word]], below: list[dict[int, tuple[int, list[_Word]]]]
) -> list[tuple[tuple[int, int], list[_Word]]] | None:
    """Each unit of ``split`` with the columns of the head it stacks on; None at the first unit
    stacked on none."""
    out = []
    for unit in split:
        if (head := _stacked_on(unit, below)) is None:
            return None
        out.append((head, unit))
    return out


def _stacked_on(ws: list[_Word], below: list[dict[int, tuple[int, list[_Word]]]]) -> tuple[int, int] | None:
    """The columns of the head ``ws`` stacks on (``_stacked_heads``), in the nearest line below
    with a head under them, or None."""
    x0, x1 = ws[0].x0, ws[-1].x1
    for lc in below:
        # heads reaching a point or more under these words
        hs = [(c, e, hw) for c, (e, hw) in lc.items() if hw[0].x0 + 1 < x1 and x0 < hw[-1].x1 - 1]
        if not hs:
            continue
        if len(hs) > 1:
            return None
        c, e, hw = hs[0]
        return (c, e) if _stacked_under(x0, x1, hw) else None
    return None


def _centred_year_run(
    ws: list[_Word],
    c: int,
    e: int,
    below: list[dict[int, tuple[int, list[_Word]]]],
    taken: set[int],
) -> tuple[int, int] | None:
    """The first and last column of the run of years under a phrase cut over columns ``c``..``e``,
    where the phrase is centred over the run's words and no other head of its line (``taken``)
    stands over the run; else None.

    A period head over two years whose figures have "$" columns of their own ("Years ended" over
    "$ 43" and "$ 34") is no head of the columns its words fall in (a year's and the next "$"):
    centred over the years, it heads them, as a head over a run of years does elsewhere."""
    line = next((lc for lc in below if any(c <= x <= e for x in lc)), None)
    if line is None:
        return None
    runs: list[list[int]] = [[]]
    for x in sorted(line):
        if _head_kind(_words_text(line[x][1])) == "year":
            runs[-1].append(x)
        elif runs[-1]:
            runs.append([])
    mid = (ws[0].x0 + ws[-1].x1) / 2
    for run in runs:
        if len(run) < 2 or run[0] > e or run[-1] < c or any(run[0] <= x <= run[-1] for x in taken):
            continue
        x0, x1 = line[run[0]][1][0].x0, line[run[-1]][1][-1].x1
        if abs(mid - (x0 + x1) / 2) <= 0.2 * (x1 - x0):
            return run[0], run[-1]
    return None


def _head_kind(text: str) -> str:
    """What a head line's cell holds: a "year", a lone "sign" ("$", "%"), or "word"s."""
    if _HEAD_YEAR_RE.match(text):
        return "year"
    return "sign" if text in _SIGNS else "word"


def _reads_on(cells: dict[int, tuple[int, list[_Word]]]) -> bool:
    """The line's stub cell goes on with a label above it: words, not a figure, starting with a
    lower-case letter (a row's label starts with a capital)."""
    return 0 in cells and _reads_on_text(_words_text(cells[0][1]))


def _label_opens_body(area: list[_TextLine], line_cells: list[dict[int, tuple[int, list[_Word]]]]) -> bool:
    """The area's first line holds a row label alone whose wrapped lines below read on
    (``_reads_on``) down to a line of figures: the first body row, its figures on its label's last
    line (or midway), not a header line; the table has no header line of its own.

    (Only the first line: a stub-only line under header lines that fill other columns stays in
    the header, as it did. Told by the same test there, the corpus' check split lost a table's
    whole body, where the generated tune cases gained.)"""
    if set(line_cells[0]) != {0}:
        return False
    h = statistics.median(ln.y1 - ln.y0 for ln in area)
    for j in range(1, len(area)):
        lc = line_cells[j]
        if area[j].label or (0 in lc and not _reads_on(lc)):
            return False
        if set(lc) != {0}:
            # figures beside the label's last line, or midway between two of its lines (a line
            # without a stub that overlaps the line above); a line of years heads columns
            figures = [t for c, (_, ws) in lc.items() if c > 0 and _is_num(t := _words_text(ws))]
            if 0 not in lc and area[j].y0 >= area[j - 1].y1 - 0.2 * h:
                return False
            return bool(figures) and not all(_YEAR_RE.match(t) for t in figures)
    return False


def _crossed_only(line_cells: list[dict[int, tuple[int, list[_Word]]]], n_cols: int) -> int | None:
    """The first column right of the stub in which no line begins a cell, every word in it one of a
    cell begun left of it (a long row label crossing where the gutter finder, which lets a line or
    two cross a gutter, cut at its words), or None. It is the column on its left run wide: its left
    edge goes, where the next column's would take the gutter beside it (the only one no line
    crosses) and its figures into the labels' column."""
    for c in range(1, n_cols):
        if not any(c in lc for lc in line_cells) and any(
            c0 < c <= e for lc in line_cells for c0, (e, _) in lc.items()
        ):
            return c
    return None


def _one_column(
    area: list[_TextLine],
    line_cells: list[dict[int, tuple[int, list[_Word]]]],
    heads: list[int],
    edges: list[float],
) -> int | None:
    """The first column right of the stub that is one column with the next, or None.

    A column of figures whose cells sit at more than one x position (a placeholder centred where
    figures are set right, figures centred or on a decimal point under a wider header, a header
    wider than its figures) leaves a gap between those positions that no row bridges, and the
    gutter finder makes a column of each. What tells them from two sparse columns: no row fills
    both, and over them the header has one cell, a phrase (one chunk) or text over one of them
    only, where two columns each have a header of their own. Without a header line (of labels:
    a line of figures with an empty stub is no header), nothing tells.
    """
    if not heads:
        return None
    body = [
        lc for k, (ln, lc) in enumerate(zip(area, line_cells, strict=True)) if k not in heads and not ln.label
    ]
    # a column of signs ("$") is its own (folded into its figures' later): one with an empty body
    # beside it is not the head's over-wide part of the sign, but of the figures on its other side
    signs = _sign_columns(body, len(edges) - 1)
    for c in range(1, len(edges) - 2):
        if c in signs or any(c in lc and c + 1 in lc for lc in body):
            continue
        one = False
        for k in heads:
            words = [w for w in area[k].words if edges[c] <= (w.x0 + w.x1) / 2 < edges[c + 2]]
            if not words:
                continue
            chunks = {id(ch) for ch in area[k].chunks for w in ch if any(w is x for x in words)}
            cols = {_col_of((w.x0 + w.x1) / 2, edges) for w in words}
            if len(chunks) > 1 and len(cols) > 1:
                break  # each column has a header of its own
            one = True
        else:
            if one:
                return c
    return None


def _phrase_tail_column(
    area: list[_TextLine], line_cells: list[dict[int, tuple[int, list[_Word]]]], edges: list[float]
) -> int | None:
    """The column right of the stub when it holds nothing but the ends of row labels begun in the
    stub, or None. The longest row label of a statement may run past where the others end, and the
    gutter finder (which lets a line or two cross a gutter) cuts it at a word space: its last words
    make a column of their own. Chunks are cut at wide gaps only, so words of one chunk on both
    sides of the edge are one phrase. Such a column is filled in a line or two, by words (no
    figure); a column filled in many lines is a column even where its cells sit close to the stub's
    (a date beside a phone number, one chunk)."""
    if len(edges) < 3:
        return None
    tails = 0
    for ln, lc in zip(area, line_cells, strict=True):
        if 1 not in lc or ln.label:
            continue
        words, left = lc[1][1], lc.get(0)
        if left is None or any(ch.isdigit() for w in words for ch in w.text):
            return None
        chunk = next((ch for ch in ln.chunks if any(words[0] is x for x in ch)), [])
        if not any(v is y for y in chunk for v in left[1]):
            return None
        tails += 1
    return 1 if 0 < tails <= max(2, len(area) // 10) else None


def _edge_inside_a_lone_phrase(
    area: list[_TextLine], line_cells: list[dict[int, tuple[int, list[_Word]]]], n_cols: int
) -> int | None:
    """The index in the column edges of an edge that cuts one phrase (a chunk) of the only line that
    fills a column beside it, or None.

    A head of words over figures set right ("18 and over" over a sub-column of a ruled group) leaves
    a clear stretch at its figures' left that the head's word space lines up with: the gutter finder
    cuts the head there, "18" a column of its own that no other line fills. A lone figure right of
    the stub then made the head line read as a row of figures, no head. Such a column goes into the
    one its phrase runs on in."""
    if len(area) < 3:
        return None  # one line of two is no evidence of a column
    for c in range(1, n_cols):
        filled = [k for k, lc in enumerate(line_cells) if c in lc]
        if len(filled) != 1:
            continue
        k = filled[0]
        words = line_cells[k][c][1]
        chunk = next((ch for ch in area[k].chunks if any(words[0] is w for w in ch)), [])
        in_chunk = {id(w) for w in chunk}
        for side, edge in ((c + 1, c + 1), (c - 1, c)):
            if side >= 1 and side in line_cells[k] and any(id(w) in in_chunk for w in line_cells[k][side][1]):
                return edge
    return None


def _stub_edge_past_labels(
    body: list[_TextLine], area: list[_TextLine], edges: list[float]
) -> list[float] | None:
    """The column edges with the stub's right edge moved where it cuts row labels inside a phrase
    that nothing else reaches: past the phrases' ends, or None where it stays.

    A label spanning the stub and the column beside it ("Grand total 2" on a table's last page of
    two rows, "2" a plain space after "total") leaves the gutter finder a gap of a word space
    between its words that no other line covers, and a short area gives it no other evidence: the
    label's last word went into the next column. A chunk is cut at wide gaps only, so words of
    one chunk on both sides of the edge are one phrase; the edge moves past the phrases when no
    word of any other line (heads included) lies between, so every other line's cells stay as
    they were (a long label running into the column of a statement's figures, whose figures lie
    beside it, keeps the edge); a section's label, one cell from the stub on, counts for neither.

    Where no word lies between the phrases' end and the next edge, the edge was no column's: the
    stub's labels have their word spaces one over another (a fixed-pitch font sets "Capacity
    county" and "Contract segment" so), wide enough for a gutter that a line or two may cross. The
    stub is one column, and the edge goes (moved, it would leave an empty column that no page of
    the same table has)."""
    if len(edges) < 3:
        return None
    x = edges[1]
    crossing = [ch for ln in body if not ln.label for ch in ln.chunks if ch[0].x0 < x < ch[-1].x1]
    if not crossing:
        return None
    # a head line's phrase across the edge is one too (a page's first row of a table continued
    # without its head, read as the head: "Estimate education" over "Total all regions 2")
    rows = {id(ln) for ln in body}
    crossing += [
        ch
        for ln in area
        if id(ln) not in rows and not ln.label
        for ch in ln.chunks
        if ch[0].x0 < x < ch[-1].x1
    ]
    end = max(ch[-1].x1 for ch in crossing)
    phrase_words = {id(w) for ch in crossing for w in ch}
    # (a section's label is one cell from the stub on, wherever the edge goes)
    right = [w.x0 for ln in area if not ln.label for w in ln.words if id(w) not in phrase_words and w.x1 > x]
    if any(x0 <= end for x0 in right):
        return None
    nxt = min(right, default=edges[2])
    if end < edges[2] < nxt:
        return [edges[0], *edges[2:]]
    return [edges[0], (end + nxt) / 2, *edges[2:]] if end < nxt and (end + nxt) / 2 < edges[2] else None


def _label_tails_back(
    body: list[_TextLine], line_cells: list[dict[int, tuple[int, list[_Word]]]], edges: list[float], h: float
) -> None:
    """Give a row label back the figure its phrase ends with where the gutter finder put it in the
    first figure column (``line_cells`` changed in place): a note's number a plain space after the
    label ("Total all regions 2") that lies over that column's left, where the column's figures
    are set right, most ending at one x and this one more than half a line height short of it.
    The edge stays where the column's figures need it (``_stub_edge_past_labels`` moves it only
    where no word lies between)."""
    if len(edges) < 3:
        return
    rights = [lc[1][1][-1].x1 for lc in line_cells if 1 in lc and _is_num(_words_text(lc[1][1]))]
    if len(rights) < 3:
        return
    right = statistics.median(rights)
    if sum(abs(x - right) <= 1.0 for x in rights) < 0.6 * len(rights):
        return  # the column's figures are not set right
    for ln, lc in zip(body, line_cells, strict=True):
        if lc.get(0, (1,))[0] != 0 or lc.get(1, (0,))[0] != 1 or abs(lc[1][1][-1].x1 - right) <= h / 2:
            continue
        label, tail = lc[0][1], lc[1][1]
        # one phrase: the label's last word and the tail's words in one chunk (a plain space apart)
        if any(label[-1] in ch and all(w in ch for w in tail) for ch in ln.chunks):
            lc[0] = (0, label + tail)
            del lc[1]


def _left_open(above: str, text: str) -> bool:
    """``above`` breaks off inside a bracket that ``text`` closes ("... ethanamine (2C-" over "P)"),
    or at a hyphen inside a word ("...-1-(2-(pyrrolidin-1-yl)ethyl)-" over "1H-benzimidazole"): a
    name wrapped where it may break, whatever letter the line starts with."""
    if above.count("(") > above.count(")"):
        return text.count(")") > text.count("(")
    # a soft hyphen marks a break inside a word by definition, a hard one only after a letter or digit
    return above.endswith("\u00ad") or (len(above) > 1 and above[-1] == "-" and above[-2].isalnum())


def _continues_text(
    cells: dict[int, tuple[int, list[_Word]]], prev: dict[int, tuple[int, list[_Word]]]
) -> bool:
    """A line that holds only the rest of text cells of the row above (a wrapped description or stub).

    It fills only columns the row fills, with words, no figure; where those are text columns right
    of the stub the row holds figures elsewhere (a data row, whose figures never wrap); where it is
    the stub alone, it reads on mid-sentence (a lower-case first letter, or the rest of a name
    broken inside a bracket or at a hyphen: ``_left_open``), where a stub-only row (a section
    label) starts with a capital.
    """
    if not cells or len(cells) >= len(prev) or not set(cells) <= set(prev):
        return False  # it fills fewer columns than its row, all of them the row's
    if 0 in cells and len(cells) > 1:
        return False
    texts = {c: _words_text(ws) for c, (_, ws) in cells.items()}
    if 0 in cells and _left_open(_words_text(prev[0][1]), texts[0]):
        return True  # before the figure test: "2)" closing "(2C-T-" reads as a note's mark
    if any(_is_num(t) or _is_num(_words_text(prev[c][1])) for c, t in texts.items()):
        return False
    if 0 in cells:
        return texts[0][:1].islower()
    return any(_is_num(_words_text(ws)) for c, (_, ws) in prev.items() if c not in cells)


def _widest_gutter(area: list[_TextLine], s: TableSettings) -> tuple[float, float] | None:
    """The widest x range inside ``area`` that no word of it covers, at least a line height wide."""
    x0 = min(ln.x0 for ln in area)
    x1 = max(ln.x1 for ln in area)
    h = statistics.median(ln.y1 - ln.y0 for ln in area)
    n = int(math.ceil(x1 - x0)) + 1
    cover = _column_cover(area, x0, n)
    best: tuple[float, float] | None = None
    i = 0
    while i < n:
        if cover[i] == 0:
            j = i
            while j < n and cover[j] == 0:
                j += 1
            if i > 0 and j < n and j - i >= h and (best is None or j - i > best[1] - best[0]):
                best = (x0 + i, x0 + j)
            i = j
        else:
            i += 1
    return best


def _split_beside(area: list[_TextLine], page_index: int, s: TableSettings) -> list[_Part]:
    """Tables printed beside running text, found in an area rejected as prose.

    Where a page sets a table in one of its text columns, each printed line holds words of both
    columns, so the text finder sees one area of two-column prose and rejects it. Cut at the
    widest gutter no word of the area crosses, each side is read again on its own: the prose side
    makes single-chunk lines (no table), the table side its rows. Only rejected areas are cut, so a
    table kept whole is never split. A side's table must hold a column of figures right of its stub:
    cut out of running text, numbered references and bulleted lists align like two-column tables.
    """
    words = [w for ln in area for w in ln.words]
    if sum(_is_num(w.text) for w in words) < 3:  # no column of figures can come out of it
        return []
    gutter = _widest_gutter(area, s)
    if gutter is None:
        return []
    cut = (gutter[0] + gutter[1]) / 2
    out: list[_Part] = []
    for side in ([w for w in words if w.x1 <= cut], [w for w in words if w.x0 >= cut]):
        if side:
            out.extend(_figure_tables(side, page_index, s))
    return out


def _figure_tables(words: list[_Word], page_index: int, s: TableSettings) -> list[_Part]:
    """The tables holding figures among ``words`` read on their own: one side of a cut through an
    area (a table beside running text, two tables side by side)."""
    return [
        p
        for sub in _table_areas(_text_lines(words, s.chunk_gap), s)
        if (p := _stream_part(sub, page_index, s)) is not None and _keep(p, s) and _has_figures(p)
    ]


def _has_figures(part: _Part) -> bool:
    """A column right of the stub whose filled cells (three at least) are mostly numbers."""
    for c in range(1, part.n_cols):
        filled = [r[c] for r in part.rows[part.header_rows :] if c < len(r) and r[c]]
        if len(filled) >= 3 and sum(_is_num(x) for x in filled) >= 0.6 * len(filled):
            return True
    return False


def _stream_tables(
    lines: list[_TextLine], page_index: int, s: TableSettings, page: list[_TextLine] | None = None
) -> list[_Part]:
    """Every table the text finder keeps among ``lines``, tables beside running text and side by
    side included. ``page``: the page's lines, where ``lines`` are one side of a cut (the text
    around an area is looked for there)."""
    if page is None:
        lines = page = _without_running_lines(lines)
    out: list[_Part] = []
    for area in _table_areas(lines, s):
        part = _stream_part(area, page_index, s)
        if part is not None and _keep(part, s):
            cut = _text_column_cut(area, part, page)
            if cut is not None:
                words = [w for ln in area for w in ln.words]
                for side in ([w for w in words if w.x1 <= cut], [w for w in words if w.x0 >= cut]):
                    out.extend(_stream_tables(_text_lines(side, s.chunk_gap), page_index, s, page))
                continue
            out.extend(
                _side_by_side(area, part, page_index, s) or _prose_beside(area, part, page_index, s) or [part]
            )
        else:
            out.extend(_split_beside(area, page_index, s))
    return out


#: what a running head or foot prints around its page number: "Page 39", "page 3 of 12"
_PAGE_WORDS_RE = re.compile(r"^page\s+|\s+of\s+\d{1,4}$", re.IGNORECASE)


def _without_running_lines(lines: list[_TextLine]) -> list[_TextLine]:
    """The page's lines less its running head and foot: a top or bottom line of a title and a page
    number in chunks of their own ("Annual statistical report 2025" ... "Page 39"), set apart from
    the next line by more than one and a half of its own height, or by its height and twice the
    space between the next two lines.

    Its two chunks line up with a table's stub and last column: a table under it began with it, the
    page number in its last column's head (a statement under "Page 39" read "Page 39 2015 vs. 2014
    Change $"). A table's own rows are set closer, and a contents page's entries too."""
    if len(lines) < 3:
        return lines

    def running(ln: _TextLine, gap: float, inner: float) -> bool:
        ends = (_words_text(ln.chunks[0]), _words_text(ln.chunks[-1]))
        h = ln.y1 - ln.y0  # its own: a running head is often set smaller
        return (
            len(ln.chunks) >= 2
            # set apart: or at least its height and twice the space between the next two lines
            # (a larger type's taller boxes below it leave less space than it looks)
            and (gap > 1.5 * h or gap > max(h, 2 * inner))
            and any(_is_page_number(_PAGE_WORDS_RE.sub("", t)) for t in ends)
            and any(_WORD_RE.search(t) for t in ends)
            # between the two ends, no figure: a totals row ("Total  12  35") is no running line
            and not any(_is_num(_words_text(ch)) for ch in ln.chunks[1:-1])
        )

    first, last = 0, len(lines)
    if running(lines[0], lines[1].y0 - lines[0].y1, lines[2].y0 - lines[1].y1):
        first = 1
    if running(lines[-1], lines[-1].y0 - lines[-2].y1, lines[-2].y0 - lines[-3].y1):
        last -= 1
    return lines[first:last]


def _text_column_cut(area: list[_TextLine], part: _Part, page: list[_TextLine]) -> float | None:
    """The x of a page's text-column gutter the area reaches over, or None.

    Where a table sits in one column of a page (or one page of a spread printed on one sheet), the
    neighbouring column's lines share its rows' bands, and the text finder reads them as the
    table's first or last column (or as a header line stacked over it). That column's text is
    running text going on from above the area (or on below it): on one side of a gap between
    the part's columns at least a line height wide, the area's first line on that side sits at a
    line's pitch under a line of prose of that side alone, at its left edge, a line that does not
    reach over the gap (or the area's last line over such a line below it), or a paragraph of
    that side opens in the area (its first two lines prose, a line's pitch apart); and beyond the area
    the other side holds a column of text of its own, the gutter clear between them
    (``_beside_column``). A table's own columns start under a space, a caption or a heading
    spanning the table, never mid-paragraph of one side with another column of text beside it.
    The area is then cut there and each side read on its own (``_stream_tables``).
    """
    words = [w for ln in area for w in ln.words]
    h = statistics.median(ln.y1 - ln.y0 for ln in area)
    in_area = {id(ln) for ln in area}
    for c in range(part.n_cols - 1):
        e = part.col_edges[c + 1]
        g0 = max((w.x1 for w in words if w.x1 <= e), default=None)
        g1 = min((w.x0 for w in words if w.x0 >= e), default=None)
        if g0 is None or g1 is None or g1 - g0 < h:
            continue
        cut = (g0 + g1) / 2
        for left in (True, False):
            if _runs_on(area, page, in_area, g0, g1, left, h):
                return cut
    return None


def _runs_on(
    area: list[_TextLine],
    page: list[_TextLine],
    in_area: set[int],
    g0: float,
    g1: float,
    left: bool,
    h: float,
) -> bool:
    """The area's lines on one side of the gap g0-g1 go on from a paragraph of that side above the
    area, or run on into one below it (see ``_text_column_cut``): a line of prose a line's pitch
    away, at the same left edge, that runs most of the way to the gap on its side (a column's line,
    ragged or justified) and no word of which reaches over to the other side's columns; and the
    other side is a column of its own there too (``_beside_column``)."""
    edge = g1 if left else g0  # where the other side's words start (end)

    def side(ln: _TextLine, area_line: bool) -> list[_Word] | None:
        if area_line:
            return [w for w in ln.words if (w.x1 <= g0 + 0.5 if left else w.x0 >= g1 - 0.5)]
        if any(w.x0 < edge < w.x1 for w in ln.words):
            return None  # a line over the gap: one column of text there, not two
        return [w for w in ln.words if (w.x1 <= edge if left else w.x0 >= edge)]

    mine = [ws for ln in area if (ws := side(ln, True))]
    if not mine:
        return False
    for first, below in ((mine[0], True), (mine[-1], False)):
        y = min(w.y0 for w in first) if below else max(w.y1 for w in first)
        line, dist = _nearest_outside(page, in_area, y, below, h)
        near = side(line, False) if line is not None else None
        # the area's own line on that side must read as text too: a table's row (a label and its
        # figures, heads over columns) goes on from no paragraph above it, nor into a note below it
        if not near or dist > 0.5 * h or not _prose_line(near, h) or not _set_as_text(first, h):
            continue
        x0, x1 = min(w.x0 for w in near), max(w.x1 for w in near)
        reaches = x1 - x0 >= 0.7 * (g0 - x0) if left else x0 <= g1 + h
        if (
            reaches
            and abs(x0 - min(w.x0 for w in first)) <= h
            and _beside_column(area, page, in_area, x0, x1, g0, g1, left, below, h)
        ):
            return True
    # or a paragraph of that side opens in the area: its first two lines are prose a line's pitch
    # apart, at one left edge, each running most of the way across that side (on the right side,
    # from the gap on)
    if len(mine) < 2:
        return False
    if left and _labels_of_figures(area, g0, g1):
        return False
    a, b = mine[0], mine[1]
    x0, x1 = min(w.x0 for w in a), max(w.x1 for w in (*a, *b))
    if not left and x0 > g1 + h:
        return False
    edge = g0 if left else max(w.x1 for ws in mine for w in ws)
    return (
        -0.25 * h <= min(w.y0 for w in b) - max(w.y1 for w in a) <= 0.5 * h
        and abs(min(w.x0 for w in b) - x0) <= h
        and all(_prose_line(ws, h) and max(w.x1 for w in ws) - x0 >= 0.7 * (edge - x0) for ws in (a, b))
        and _beside_column(area, page, in_area, x0, x1, g0, g1, left, True, h)
    )


def _labels_of_figures(area: list[_TextLine], g0: float, g1: float) -> bool:
    """The area's lines left of the gap g0-g1 are a stub of long row labels: each line after the
    first opens a name ("Purchases of marketable securities (1)" over "Purchases of property and
    equipment"), where a paragraph's lines go on mid-sentence, and each line with words on the left
    has figures (or dashes) right of the gap, a row of a statement, or is a section's label over
    such rows. Two columns of lists (names and affiliations) open a name on every line too, but
    hold no figures."""
    firsts = []  # each left side's first word
    for ln in area:
        if lw := [w for w in ln.words if w.x1 <= g0 + 0.5]:
            if not any(w.x0 >= g1 - 0.5 and _figure_or_nil(w.text) for w in ln.words):
                if ln.label or lw[-1].text.endswith(":"):
                    continue  # a section's label over its rows ("Cash flows from investing activities:")
                return False
            firsts.append(lw[0].text)
    return len(firsts) >= 2 and _open_names(firsts[1:])


def _open_names(texts: list[str]) -> bool:
    """Four in five of ``texts`` (lines, cells) open with a capital: each line an item's name (a stub
    of row labels), where a paragraph's wrapped lines go on mid-sentence."""
    return sum(t.lstrip()[:1].isupper() for t in texts) >= 0.8 * len(texts)


def _beside_column(
    area: list[_TextLine],
    page: list[_TextLine],
    in_area: set[int],
    x0: float,
    x1: float,
    g0: float,
    g1: float,
    left: bool,
    up: bool,
    h: float,
) -> bool:
    """Beyond the area on the same side (above it when ``up``), the other side holds a column of
    text of its own too: the nearest line with words on the other side has two words there at
    least and leaves the gutter clear, half a line height across its middle (between the text
    column, x0-x1 and the area's words up to the gap g0-g1 on its side, and the other side's
    words). A line over both (a paragraph across the page, a table's caption over its columns)
    says the gap is the table's own, and the text beside it a caption or a note of one side."""
    mid = (max(x1, g0) + g1) / 2 if left else (g0 + min(x0, g1)) / 2
    y = min(ln.y0 for ln in area) if up else max(ln.y1 for ln in area)
    best, _ = _nearest_outside(
        page, in_area, y, up, h, lambda ln: any((w.x1 > mid if left else w.x0 < mid) for w in ln.words)
    )
    if best is None or any(w.x0 < mid + 0.25 * h and w.x1 > mid - 0.25 * h for w in best.words):
        return False
    beside = [w for w in best.words if (w.x0 > mid if left else w.x1 < mid)]
    return sum(bool(_WORD_RE.search(w.text)) for w in beside) >= 2


def _nearest_outside(
    page: list[_TextLine],
    in_area: set[int],
    y: float,
    up: bool,
    h: float,
    wanted: Callable[[_TextLine], bool] | None = None,
) -> tuple[_TextLine | None, float]:
    """The page's line nearest above ``y`` (below it unless ``up``) that is not the area's (and that
    ``wanted`` accepts), with its distance; (None, inf) where there is none."""
    best: _TextLine | None = None
    dist = math.inf
    for ln in page:
        if id(ln) in in_area or not (ln.y1 <= y + 0.25 * h if up else ln.y0 >= y - 0.25 * h):
            continue
        d = y - ln.y1 if up else ln.y0 - y
        if d < dist and (wanted is None or wanted(ln)):
            best, dist = ln, d
    return best, dist


def _set_as_text(ws: list[_Word], h: float) -> bool:
    """Words set as running text: no gap wider than a line height, one figure at most."""
    return sum(_is_num(w.text) for w in ws) <= 1 and all(b.x0 - a.x1 <= h for a, b in itertools.pairwise(ws))


def _prose_line(ws: list[_Word], h: float) -> bool:
    """Five words or more set as running text (``_set_as_text``)."""
    return len(ws) >= 5 and _set_as_text(ws, h)


def _prose_beside(
    area: list[_TextLine], part: _Part, page_index: int, s: TableSettings
) -> list[_Part] | None:
    """A table kept with a column of the running text set beside it: the table alone, or None.

    Where a page sets a table in one text column, each printed line pairs a table row with a line
    of the text beside; when the lines line up, the text is read as the table's first or last
    column. That column is prose: most of its rows hold a line of several words and no figure,
    and its top cell is such a line too, where a table's text column (a description, remarks) has
    a header of a word or two. Cut it off; the rest must still read as a table holding figures.
    """
    if part.n_cols < 3:
        return None
    n = len(part.rows)
    for c, keep_left in ((part.n_cols - 1, True), (0, False)):
        cells = [r[c] or "" for r in part.rows]
        filled = [x for x in cells if x]
        if (
            # the text's lines may be set wider apart than the rows: half of them hold one
            len(filled) < 0.5 * n
            or sum(_is_num(x) or any(ch.isdigit() for ch in x) for x in filled) > 0.1 * n
        ):
            continue
        if statistics.median(len(x.split()) for x in filled) < 4 or len(cells[0].split()) < 4:
            continue
        if not _even_lines(area, part.col_edges[c], part.col_edges[c + 1]):
            continue  # lines of unlike lengths: labels (a stub of long names), not a text column
        if _open_names(filled):
            # every line opens a name ("Import balance, excluding ..."): a stub of long labels of
            # like lengths, each its own item, where wrapped prose goes on mid-sentence line after line
            continue
        cut = part.col_edges[c] if keep_left else part.col_edges[c + 1]
        words = [w for ln in area for w in ln.words]
        side = [w for w in words if w.x1 <= cut] if keep_left else [w for w in words if w.x0 >= cut]
        found = _figure_tables(side, page_index, s)
        if found:
            return found
    return None


def _even_lines(area: list[_TextLine], x0: float, x1: float) -> bool:
    """The area's lines between x0 and x1 run (nearly) the width of that column, as a paragraph's
    lines do (but its last): at least 60% of them span 80% of the widest."""
    widths = []
    for ln in area:
        ws = [w for w in ln.words if x0 <= (w.x0 + w.x1) / 2 <= x1]
        if ws:
            widths.append(max(w.x1 for w in ws) - min(w.x0 for w in ws))
    return bool(widths) and sum(w >= 0.8 * max(widths) for w in widths) >= 0.6 * len(widths)


def _column_kinds(part: _Part) -> list[float]:
    """Per column, the share of its filled body cells that are figures; a column of signs set
    apart from their figures ("$" on a statement's first and total rows, a hanging ")") counts as
    figures: it is no column of labels."""
    out = []
    for c in range(part.n_cols):
        filled = [r[c] for r in part.rows[part.header_rows :] if c < len(r) and r[c]]
        if filled and all(x in _SIGNS for x in filled):
            out.append(1.0)
        else:
            out.append(sum(_is_num(x) for x in filled) / len(filled) if filled else 0.0)
    return out


def _side_by_side(
    area: list[_TextLine], part: _Part, page_index: int, s: TableSettings
) -> list[_Part] | None:
    """Two tables set side by side, read as one area: the two tables, or None.

    A table's columns right of its stub hold figures; a column of labels after a column of figures
    is where a second table starts, the more so at the area's widest gutter. Cut there (both sides
    at least two columns), each side must read as a table of its own holding figures, with a stub
    of labels: then it is two tables, not one whose rows pair unrelated lines.
    """
    if part.n_cols < 4:
        return None
    kinds = _column_kinds(part)
    if not any(kinds[c] >= 0.6 and kinds[c + 1] <= 0.2 for c in range(1, part.n_cols - 2)):
        return None  # no column of labels after a column of figures (most tables: stop here)
    words = [w for ln in area for w in ln.words]
    gaps = []
    for c in range(part.n_cols - 1):
        e = part.col_edges[c + 1]
        left = max((w.x1 for w in words if w.x1 <= e), default=e)
        right = min((w.x0 for w in words if w.x0 >= e), default=e)
        gaps.append(right - left)
    widest = max(range(len(gaps)), key=lambda c: gaps[c])
    c = widest  # the cut lies between columns c and c + 1
    others = [g for k, g in enumerate(gaps) if k != c]
    if not (1 <= c <= part.n_cols - 3 and kinds[c] >= 0.6 and kinds[c + 1] <= 0.2):
        return None
    if gaps[c] < 1.5 * statistics.median(others):
        return None
    cut = part.col_edges[c + 1]
    out: list[_Part] = []
    for side in ([w for w in words if w.x1 <= cut], [w for w in words if w.x0 >= cut]):
        found = _figure_tables(side, page_index, s)
        if not found:
            return None
        out.extend(found)
    return out


#: a list item's marker: a bullet, a dash, a number or letter; also a lone geometric shape or
#: dingbat (U+25A0-25FF, U+2700-27BF) and a Private Use Area glyph, which is what a Symbol or
#: Wingdings bullet (U+F0B7, U+F0A7, U+F0D8 ...) extracts as from word processors' PDFs
_MARKER_RE = re.compile(
    r"^([•●○■□▪◦‣∙·*–—\-\u25a0-\u25ff\u2700-\u27bf\ue000-\uf8ff]|\(?[0-9]{1,2}[.)]|\(?[a-z][.)]|[ivx]{1,4}[.)])$",
    re.IGNORECASE,
)


#: a figure's caption: "Figure 2.", "FIGURE 3:", "Fig. 4"
#: a word: three letters in a row (a variable of math is one or two, with primes or indices)
_FIGURE_RE = re.compile(r"^fig(?:ure|\.)?\s*\d+[a-z]?\b", re.IGNORECASE)


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
    if part.n_cols == 2 and stubs and all(_MARKER_RE.match(x) for x in stubs):
        return False
    # display math set on a grid (a matrix, aligned equations) aligns like a table too: its cells
    # hold symbols and one- or two-letter variables, never a figure or a word
    if not any(_is_num(c) or _WORD_RE.search(c) for c in filled):
        return False
    # figures side by side under their captions ("FIGURE 2. ..." beside "FIGURE 3. ..."): the
    # captions head the "columns" and the plots' labels fill the "rows"; a table has no such cell
    return not any(_FIGURE_RE.match(c) for c in part.rows[0] if c)
