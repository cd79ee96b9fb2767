"""Columns and reading order: a page's rows as flows, split at white channels between columns."""

from __future__ import annotations

from collections import defaultdict

from dagster_ocr.layout import x_gaps
from dagster_ocr.paragraphs.rows import _Row
from dagster_ocr.paragraphs.settings import ParagraphSettings


def _column_gaps(rows: list[_Row], settings: ParagraphSettings, span_ref: float) -> list[tuple[float, float]]:
    """White vertical channels between columns, as (x_start, x_end), left to right.

    Rows wider than ``column_max_share`` of ``span_ref`` (the page's text width; the rows' own
    when it is 0) are left out: a title or a full-width line may cross the channel, and is read
    as a band separator instead.
    """
    if len(rows) < 2 * settings.column_min_rows:
        return []
    left = min(r.bbox[0] for r in rows)
    right = max(r.bbox[2] for r in rows)
    span = right - left
    if span <= 0:
        return []
    limit = settings.column_max_share * (span_ref or span)
    cands = sorted((r for r in rows if r.width < limit), key=lambda r: r.bbox[0])
    if not cands:
        return []
    # merge the rows' x-intervals; what lies between merged intervals is white space
    gaps = x_gaps([r.bbox for r in cands])
    texty = [r for r in cands if len(r.text) >= settings.column_min_chars]
    out = []
    for gs, ge in gaps:
        if ge - gs < settings.column_min_gap:
            continue
        n_left = sum(1 for r in texty if r.bbox[2] <= gs + 1)
        n_right = sum(1 for r in texty if r.bbox[0] >= ge - 1)
        if n_left >= settings.column_min_rows and n_right >= settings.column_min_rows:
            out.append((gs, ge))
    return out


def _split_columns(rows: list[_Row], gaps: list[tuple[float, float]]) -> list[tuple[bool, list[_Row]]]:
    """Rows (sorted top-down) as parts in reading order: (is_column, rows).

    A row that crosses a channel is full-width and breaks the column flow: the rows between two
    full-width rows are read column by column.
    """

    def spans_gap(r: _Row) -> bool:
        return any(r.bbox[0] < gs - 1 and r.bbox[2] > ge + 1 for gs, ge in gaps)

    def column(r: _Row) -> int:
        cx = (r.bbox[0] + r.bbox[2]) / 2
        return sum(1 for gs, _ in gaps if cx > gs)

    parts: list[tuple[bool, list[_Row]]] = []
    band: list[_Row] = []
    wide: list[_Row] = []

    def flush_band() -> None:
        cols: dict[int, list[_Row]] = defaultdict(list)
        for r in band:
            cols[column(r)].append(r)
        parts.extend((True, cols[c]) for c in sorted(cols))
        band.clear()

    for r in rows:
        if spans_gap(r):
            if band:
                flush_band()
            wide.append(r)
        else:
            if wide:
                parts.append((False, wide))
                wide = []
            band.append(r)
    if band:
        flush_band()
    if wide:
        parts.append((False, wide))
    return parts


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
        flows: list[list[_Row]] = []
        for is_column, part in _split_columns(rows, gaps):
            if is_column:
                flows.extend(_segment(part, settings, span_ref, depth + 1))
            else:
                flows.append(part)
        return flows
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
    return [rows]


def _reading_order(rows: list[_Row], settings: ParagraphSettings, flow_start: int) -> tuple[list[_Row], int]:
    """Rows in reading order with ``flow`` set; returns the rows and the next free flow id."""
    rows = sorted(rows, key=lambda r: (r.bbox[1], r.bbox[0]))
    if not rows:
        return rows, flow_start
    span = max(r.bbox[2] for r in rows) - min(r.bbox[0] for r in rows)
    out: list[_Row] = []
    flow = flow_start
    for part in _segment(rows, settings, span):
        for r in part:
            r.flow = flow
            out.append(r)
        flow += 1
    return out, flow
