"""Columns and reading order: a page's rows as flows, split at white channels between columns."""

from __future__ import annotations

from collections import defaultdict

from dagster_ocr.layout import column, crosses, find_gutters, v_overlap
from dagster_ocr.paragraphs.patterns import clause_number
from dagster_ocr.paragraphs.rows import _Row, running
from dagster_ocr.paragraphs.settings import ParagraphSettings

#: a column's last row ending in one of these does not run on past a white band
_BAND_STOPS = ".!?。！？…:;؟۔)"


def _column_gaps(rows: list[_Row], settings: ParagraphSettings, span_ref: float) -> list[tuple[float, float]]:
    """White vertical channels between columns, as (x_start, x_end), left to right.

    Rows wider than ``column_max_share`` of ``span_ref`` (the page's text width; the rows' own
    when it is 0) are left out, and so are rows set larger than the body (``heading_size_ratio``):
    a title or a full-width line may cross the channel, and is read as a band separator instead
    (a short title over narrow columns is narrower than the share, yet crosses a gutter).
    """
    if len(rows) < 2 * settings.column_min_rows:
        return []
    left = min(r.bbox[0] for r in rows)
    right = max(r.bbox[2] for r in rows)
    span = right - left
    if span <= 0:
        return []
    limit = settings.column_max_share * (span_ref or span)
    body = _body_size(rows)
    cands = [r for r in rows if r.width < limit and r.size <= settings.heading_size_ratio * body]
    if not cands:
        return []
    # every narrow row shapes the channels (what lies between their merged x-intervals); only
    # rows of running text count towards the rows a column needs on each side
    texty = [r.bbox for r in cands if running(r.text, settings)]
    gaps = find_gutters([r.bbox for r in cands], texty, settings.column_min_gap, settings.column_min_rows)
    if gaps:
        return gaps
    # a short row set across the channel (a caption, a figure label) hides it from the test
    # above: shaped by running text alone, the channel counts when what crosses it floats beside
    # column text (see _split_columns), never when it cuts text rows
    return find_gutters(texty, texty, settings.column_min_gap, settings.column_min_rows)


def _body_size(rows: list[_Row]) -> float:
    """The font size that carries most of the rows' characters."""
    weight: dict[float, int] = defaultdict(int)
    for r in rows:
        weight[round(r.size * 2) / 2] += len(r.text)
    return max(weight, key=lambda k: weight[k])


def _split_columns(rows: list[_Row], gaps: list[tuple[float, float]]) -> list[tuple[bool, list[_Row]]]:
    """Rows (sorted top-down) as parts in reading order: (is_column, rows).

    A row that crosses a channel with no column text beside it (a title, a full-width paragraph)
    is full-width and breaks the column flow: the rows between two full-width rows are read
    column by column: from the right when most of their text is in a right-to-left script. A
    row that crosses a channel with column text beside it (a caption or label set between the
    columns, a pull quote) floats: it is read after the columns of its band, so it neither cuts
    the columns nor splices itself into their sentences (the OCR stage's rule, ``ocr.order``).
    """

    parts: list[tuple[bool, list[_Row]]] = []
    band: list[_Row] = []
    floats: list[_Row] = []
    wide: list[_Row] = []
    inside = [r for r in rows if not crosses(r.bbox, gaps)]

    def beside(row: _Row) -> bool:
        return any(
            v_overlap(row.bbox, o.bbox) > 0.3 * min(row.height, o.height)
            and (o.bbox[2] <= row.bbox[0] or o.bbox[0] >= row.bbox[2])
            for o in inside
        )

    def flush_band() -> None:
        cols: dict[int, list[_Row]] = defaultdict(list)
        for r in band:
            cols[column(r.bbox, gaps)].append(r)
        rtl = sum(len(r.text) for r in band if r.rtl) > sum(len(r.text) for r in band if not r.rtl)
        parts.extend((True, cols[c]) for c in sorted(cols, reverse=rtl))
        if floats:
            parts.append((False, list(floats)))
        band.clear()
        floats.clear()

    for r in rows:
        crossing = crosses(r.bbox, gaps)
        if crossing and not beside(r):
            if band or floats:
                flush_band()
            wide.append(r)
        else:
            if wide:
                parts.append((False, wide))
                wide = []
            (floats if crossing else band).append(r)
    if band or floats:
        flush_band()
    if wide:
        parts.append((False, wide))
    return parts


def _band_cut(rows: list[_Row], gaps: list[tuple[float, float]], settings: ParagraphSettings) -> int | None:
    """Where a white band across the whole region splits columned rows into bands of blocks.

    A grid of blocks (cards, articles side by side over two more) has a horizontal band of white
    running through every column, wider than the gaps between paragraphs; the blocks above it
    are read (column by column) before those below it, as a full-width title between two column
    sets already makes them. Returns the index of the first row below the widest such band, or
    None: when it is narrower than ``band_min_gap`` median row heights, when it does not have
    column text on both sides (two or more columns with running text above and below), or when
    a column's sentence runs through it (the last row above ends without terminal punctuation
    and the first row below starts in lower case: the column flows past a figure or a table).
    """
    heights = sorted(r.height for r in rows)
    min_gap = settings.band_min_gap * heights[len(heights) // 2]
    best: tuple[float, int] | None = None
    bottom = rows[0].bbox[3]
    for i in range(1, len(rows)):
        gap = rows[i].bbox[1] - bottom
        if gap >= min_gap and (best is None or gap > best[0]):
            best = (gap, i)
        bottom = max(bottom, rows[i].bbox[3])
    if best is None:
        return None
    i = best[1]
    above: dict[int, list[_Row]] = defaultdict(list)
    below: dict[int, list[_Row]] = defaultdict(list)
    for k, r in enumerate(rows):
        if not crosses(r.bbox, gaps):
            (above if k < i else below)[column(r.bbox, gaps)].append(r)

    def columned(side: dict[int, list[_Row]]) -> bool:
        return sum(1 for rs in side.values() if any(running(r.text, settings) for r in rs)) >= 2

    if not (columned(above) and columned(below)):
        return None
    for c in set(above) & set(below):
        last = max(above[c], key=lambda r: r.bbox[3]).text.rstrip()
        first = min(below[c], key=lambda r: r.bbox[1]).text.lstrip()
        if last and last[-1] not in _BAND_STOPS and first[:1].islower():
            return None
    if _numbered_down_columns(above, below):
        return None
    return i


def _block_number(rows: list[_Row]) -> int | None:
    """The number the topmost row of a block starts with ("3. Results", "(2)"), or None."""
    num = clause_number(min(rows, key=lambda r: r.bbox[1]).text)
    return int(num) if num.isdigit() else None


def _numbered_down_columns(above: dict[int, list[_Row]], below: dict[int, list[_Row]]) -> bool:
    """Do the blocks on both sides of a band carry numbers that run down each column (1 and 2 on
    the left, 3 and 4 on the right) rather than across the band (1 and 2 above)? Numbered
    blocks say in which order their author meant them read, whatever the grid looks like."""
    cols = sorted(set(above) & set(below))
    if len(cols) < 2:
        return False
    down = [n for c in cols for n in (_block_number(above[c]), _block_number(below[c]))]
    if any(n is None for n in down):
        return False
    return all(a < b for a, b in zip(down, down[1:], strict=False))


def _columns_in_bands(
    rows: list[_Row],
    gaps: list[tuple[float, float]],
    settings: ParagraphSettings,
    span_ref: float,
    depth: int,
) -> list[list[_Row]]:
    """Rows split by ``gaps`` into columns, band by band (see ``_band_cut``), each column analysed
    again (it may hold sub-columns)."""
    cut = _band_cut(rows, gaps, settings) if depth <= 6 else None
    if cut is not None:
        return _columns_in_bands(rows[:cut], gaps, settings, span_ref, depth + 1) + _columns_in_bands(
            rows[cut:], gaps, settings, span_ref, depth + 1
        )
    flows: list[list[_Row]] = []
    for is_column, part in _split_columns(rows, gaps):
        if is_column:
            flows.extend(_segment(part, settings, span_ref, depth + 1))
        else:
            flows.append(part)
    return flows


def _segment(
    rows: list[_Row], settings: ParagraphSettings, span_ref: float, depth: int = 0
) -> list[list[_Row]]:
    """Recursive layout analysis: the rows (sorted top-down) as flows in reading order.

    A vertical white channel through the rows splits them into columns (each analysed again:
    a column may hold its own sub-columns). When no channel runs through all of them (regions of
    the page with different gutters, a full-width line crossing the gutter), the rows are cut
    horizontally at the widest vertical gap that exposes a channel above or below it.
    """
    if depth > 6 or len(rows) < 2 * settings.column_min_rows:
        return [rows]
    gaps = _column_gaps(rows, settings, span_ref)
    if gaps:
        return _columns_in_bands(rows, gaps, settings, span_ref, depth)
    heights = sorted(r.height for r in rows)
    min_cut = 0.3 * heights[len(heights) // 2]
    cuts: list[tuple[float, int]] = []
    bottom = rows[0].bbox[3]
    for i in range(1, len(rows)):
        gap = rows[i].bbox[1] - bottom
        if gap > min_cut:
            cuts.append((gap, i))
        bottom = max(bottom, rows[i].bbox[3])
    for _, i in sorted(cuts, reverse=True)[:24]:
        top, rest = rows[:i], rows[i:]
        if _column_gaps(top, settings, span_ref) or _column_gaps(rest, settings, span_ref):
            return _segment(top, settings, span_ref, depth + 1) + _segment(
                rest, settings, span_ref, depth + 1
            )
    band = _side_by_side(rows)
    if band is not None and (band[0] > 0 or band[1] < len(rows)):
        i, j = band
        inset = _inset(rows[i:j], settings)
        if inset is not None:
            above = _segment(rows[:i], settings, span_ref, depth + 1) if i else []
            below = _segment(rows[j:], settings, span_ref, depth + 1) if j < len(rows) else []
            return above + list(inset) + below
    return [rows]


def _inset(rows: list[_Row], settings: ParagraphSettings) -> tuple[list[_Row], list[_Row]] | None:
    """A band of rows (``_side_by_side``) as the column's lines set short beside an inset and the
    inset's lines, in that order (the body's sentence runs on beside the inset: it is read on
    first); None when the band is no such thing.

    The inset's lines are few and short (a pull quote's words in a larger type, a note's in a
    smaller one), so they are no running text by the count ``_column_gaps`` needs; what sets them
    apart is their type: a white channel (``column_min_gap``) runs between the rows set in the
    body's size and slant (the type that carries most of the band's characters) and those set in
    another, every one of each on its own side, with at least two rows on the inset's side (a
    two-line pull quote is one) and ``column_min_rows`` rows of running text on the body's. A label
    and value list, a form's fields, a table's columns share one type (a bold label aside) and keep
    their rows."""

    def kind(r: _Row) -> tuple[float, bool]:
        return round(r.size * 2) / 2, r.italic

    weight: dict[tuple[float, bool], int] = defaultdict(int)
    for r in rows:
        weight[kind(r)] += len(r.text)
    body = max(weight, key=lambda k: weight[k])
    typed = [r for r in rows if kind(r) == body]
    other = [r for r in rows if kind(r) != body]
    n = settings.column_min_rows
    if len(other) < 2 or sum(1 for r in typed if running(r.text, settings)) < n:
        return None
    boxes = [r.bbox for r in rows]
    for gs, _ in find_gutters(boxes, boxes, settings.column_min_gap, 2):
        sides = [{r.bbox[2] <= gs + 1 for r in part} for part in (typed, other)]
        if all(len(side) == 1 for side in sides) and sides[0] != sides[1]:
            return typed, other
    return None


def _side_by_side(rows: list[_Row]) -> tuple[int, int] | None:
    """The rows (sorted top-down) from the first to the last that shares its baseline band with
    another row set apart from it on the left or right, as (start, end) indices; None if none.

    An inset (a pull quote, a note in a box) set into one side of a column has the column's lines
    set short beside it: a band of the column holds two columns, and no white band above or below
    it (the column's lines run on at their pitch) cuts it off from the rows above and below, as
    the horizontal cuts of ``_segment`` need. Cut out as a band of its own, its channel shows."""
    found: list[int] = []
    for k, r in enumerate(rows):
        for m in range(max(0, k - 3), min(len(rows), k + 4)):
            o = rows[m]
            if m != k and v_overlap(r.bbox, o.bbox) > 0.5 * min(r.height, o.height):
                if o.bbox[2] <= r.bbox[0] or o.bbox[0] >= r.bbox[2]:
                    found.append(k)
                    break
    return (found[0], found[-1] + 1) if found else None


def _stream_runs(order: list[_Row], wide: float, rtl: bool) -> list[list[list[_Row]]]:
    """``order`` (rows in stream order) cut into runs at each step no reading takes; each run as
    its flows. Steps a reading takes, from one row to the next:

    * down its column: the next row starts below the previous one and overlaps it horizontally
      (same flow);
    * a new column: the next row starts higher than the previous one and lies wholly to the right
      (left, when ``rtl``) of every row of the current flow that reaches down to it;
    * a new band: the next row starts below every row of the run and spans at least ``wide`` of
      the run's width (a full-width title or caption under the columns).

    Anything else starts a new run: back up its own column; sideways along a line, as a stream that
    writes across the columns line by line does; down into another column, as a grid of blocks
    read band by band is (which way a grid reads is the geometric analysis' call: ``_band_cut``).
    """
    runs: list[list[list[_Row]]] = []
    flows: list[list[_Row]] = []
    bottom = left = right = 0.0
    for row in order:
        x0, y0, x1, y1 = row.bbox
        step = None
        if flows:
            prev = flows[-1][-1]
            tol = 0.5 * min(row.height, prev.height)
            if y0 >= prev.bbox[3] - tol and min(x1, prev.bbox[2]) > max(x0, prev.bbox[0]):
                step = "down"
            elif y0 < prev.bbox[1] - tol and all(
                (x1 <= r.bbox[0] + tol if rtl else x0 >= r.bbox[2] - tol)
                for r in flows[-1]
                if r.bbox[3] > y0 + tol
            ):
                step = "column"
            elif y0 >= bottom - tol and x1 - x0 >= wide * (right - left):
                step = "band"
        if step is None:
            flows = [[row]]
            runs.append(flows)
            bottom, left, right = y1, x0, x1
            continue
        if step == "down":
            flows[-1].append(row)
        else:
            flows.append([row])
        bottom, left, right = max(bottom, y1), min(left, x0), max(right, x1)
    return runs


def _overprinted(rows: list[_Row]) -> bool:
    """Do two rows overlap, by half the smaller one's height and more than a point across? Text set
    by coordinates onto other text (a superscript placed inside its line, formula parts, a stamp
    over the body) comes in whatever order its producer drew it in: the stream's order says nothing
    about reading there."""
    rows = sorted(rows, key=lambda r: r.bbox[1])
    for i, a in enumerate(rows):
        for b in rows[i + 1 :]:
            if b.bbox[1] >= a.bbox[3]:
                break
            if (
                v_overlap(a.bbox, b.bbox) > 0.5 * min(a.height, b.height)
                and min(a.bbox[2], b.bbox[2]) - max(a.bbox[0], b.bbox[0]) > 1.0
            ):
                return True
    return False


def _stream_flows(rows: list[_Row], settings: ParagraphSettings) -> list[list[_Row]] | None:
    """The rows as flows in the text layer's own order (``_Row.seq``), where that order reads as a
    page is read; None where it does not.

    The producer wrote the page in some order; where that order is a reading order it knows what
    geometry can only guess (a narrow sidebar that shows no white channel, a box between two
    paragraphs, a pull quote over the gutter). The stream is cut into runs at each step no reading
    takes (``_stream_runs``). A run set apart by its type (most of its characters in another size,
    or bold or italic where the body is not: a sidebar, a pull quote, a boxed note, a caption, a
    title) is an aside: producers write such frames before, after or between the body's, and it is
    read where the stream puts it, except one that lies wholly above the body, read first (a title
    written last). The rest, the body, must then read as one run: the page falls back to the
    geometric analysis where it does not (one step back up a column or across a line says the
    order is not one to trust), and where rows are printed over each other (``_overprinted``).
    """
    if len(rows) < 2 or any(r.seq < 0 for r in rows) or _overprinted(rows):
        return None
    order = sorted(rows, key=lambda r: r.seq)
    rtl = sum(len(r.text) for r in rows if r.rtl) > sum(len(r.text) for r in rows if not r.rtl)
    runs = _stream_runs(order, settings.column_max_share, rtl)
    if len(runs) == 1:
        return runs[0]

    # the body's type: the size, boldness and slant that carry most of the page's characters
    weight: dict[tuple[float, bool, bool], int] = defaultdict(int)
    for r in rows:
        weight[(round(r.size * 2) / 2, r.bold, r.italic)] += len(r.text)
    size, bold, italic = max(weight, key=lambda k: weight[k])

    def body_typed(r: _Row) -> bool:
        return abs(r.size - size) <= 0.25 and r.bold == bold and r.italic == italic

    aside = [
        2 * sum(len(r.text) for f in run for r in f if body_typed(r))
        < sum(len(r.text) for f in run for r in f)
        for run in runs
    ]
    body = [r for run, a in zip(runs, aside, strict=True) if not a for f in run for r in f]
    body_runs = _stream_runs(body, settings.column_max_share, rtl) if body else []
    if len(body_runs) != 1:
        return None
    # each row's flow: the body's flows, each aside's own; a flow that an aside interrupts in the
    # stream goes on after it as a new flow
    key: dict[int, tuple[int, int]] = {}
    for j, f in enumerate(body_runs[0]):
        for r in f:
            key[id(r)] = (-1, j)
    top = min(r.bbox[1] for r in body)
    first: list[_Row] = []
    rest: list[_Row] = []
    for i, (run, a) in enumerate(zip(runs, aside, strict=True)):
        if a:
            for j, f in enumerate(run):
                for r in f:
                    key[id(r)] = (i, j)
        above = a and max(r.bbox[3] for f in run for r in f) <= top
        (first if above else rest).extend(r for f in run for r in f)
    flows: list[list[_Row]] = []
    last = None
    for r in first + rest:
        if key[id(r)] != last:
            flows.append([])
            last = key[id(r)]
        flows[-1].append(r)
    return flows


def _reading_order(rows: list[_Row], settings: ParagraphSettings, flow_start: int) -> tuple[list[_Row], int]:
    """Rows in reading order with ``flow`` set; returns the rows and the next free flow id.

    The text layer's own order where it is a plausible reading (``_stream_flows``), else the
    geometric analysis (``_segment``)."""
    rows = sorted(rows, key=lambda r: (r.bbox[1], r.bbox[0]))
    if not rows:
        return rows, flow_start
    flows = _stream_flows(rows, settings) if settings.stream_order else None
    if flows is None:
        span = max(r.bbox[2] for r in rows) - min(r.bbox[0] for r in rows)
        flows = [_left_to_right(part) for part in _segment(rows, settings, span)]
    out: list[_Row] = []
    flow = flow_start
    for part in flows:
        for r in part:
            r.flow = flow
            out.append(r)
        flow += 1
    return out, flow


def _left_to_right(rows: list[_Row]) -> list[_Row]:
    """Rows sorted top-down, with the rows of one visual line in reading order.

    Sorting by top edge alone put a line's second fragment first whenever it sat a fraction of a
    point higher (a glossary's definition before its term, set 90 pt to its left, so each term
    fell between the lines of the definition before it). Consecutive rows are one visual line
    when each one's middle lies within every other's height and none overlaps another
    horizontally (rows side by side); they are read left to right, or right to left when most of
    them are right-to-left.
    """

    def beside(a: _Row, b: _Row) -> bool:
        return (
            a.bbox[1] < (b.bbox[1] + b.bbox[3]) / 2 < a.bbox[3]
            and b.bbox[1] < (a.bbox[1] + a.bbox[3]) / 2 < b.bbox[3]
            and (a.bbox[2] <= b.bbox[0] or b.bbox[2] <= a.bbox[0])
        )

    out: list[_Row] = []
    i = 0
    while i < len(rows):
        j = i + 1
        while j < len(rows) and all(beside(r, rows[j]) for r in rows[i:j]):
            j += 1
        line = rows[i:j]
        if len(line) > 1:
            rtl = sum(r.rtl for r in line) * 2 > len(line)
            line = sorted(line, key=lambda r: -r.bbox[2] if rtl else r.bbox[0])
        out.extend(line)
        i = j
    return out
