"""Charts and diagrams found in a page's drawings: regions where the text finder builds no table.

A chart's tick labels, legend lines and axis titles align like a table's cells, and a flow chart's
boxes set their labels in rows; the words alone cannot tell them from a table, the drawing can:

- a *data series*: three or more slanted segments or curves joined end to end that run one way
  along x (a line chart's polyline or smoothed curve). A table's rules are level or upright, a
  cell's diagonal slash is one segment, an arrowhead two that turn back;
- an *axis*: a level or upright line with four or more short ticks square to it, evenly spaced
  (a table has no ticks);
- *bars*: three or more filled boxes of one width on one baseline, of unlike heights (a row of
  shaded cells shares its height);
- a *flow chart*: two or more arrows (a thin filled shaft with a slanted head, or a small filled
  head at a stroke's end) each touching one of three or more drawn boxes.

Each piece of evidence is grown by the drawn paths it overlaps (the plot's frame, its axes) and
then by a margin of a few text heights, where a chart sets its tick labels and axis titles. A
ruled grid is never evidence: its rules are level and upright, and carry no ticks.
"""

from __future__ import annotations

from typing import Any

from dagster_ocr.layout import union
from dagster_ocr.model import BBox

#: least number of slanted pieces joined end to end that make a data series
_SERIES_PIECES = 3
#: a series spans at least this wide (points)
_SERIES_WIDTH = 30.0
#: least number of evenly spaced ticks on an axis
_AXIS_TICKS = 4
#: a tick is at most this long (points), a rule at least _AXIS_LENGTH
_TICK_MAX = 8.0
_AXIS_LENGTH = 60.0
#: the widest gap (points) between a flow chart's steps and arrows that still joins them
_FLOW_GAP = 40.0


def _key(p: tuple[float, float]) -> tuple[int, int]:
    return (round(p[0] * 2), round(p[1] * 2))


def _series(cdrawings: list[dict[str, Any]]) -> list[BBox]:
    """Boxes of the data series: chains of slanted strokes or curves, monotone in x."""
    pieces: list[tuple[tuple[float, float], tuple[float, float], BBox]] = []
    for path in cdrawings:
        if "s" not in (path.get("type") or ""):
            continue
        for item in path.get("items", ()):
            if item[0] == "l":
                a, b = item[1], item[2]
                if abs(a[0] - b[0]) < 0.5 or abs(a[1] - b[1]) < 0.5:
                    continue  # level or upright: a rule, an axis, a tick
            elif item[0] == "c":
                a, b = item[1], item[4]
                if abs(a[0] - b[0]) < 0.5:
                    continue  # a rounded corner's arc turning back, or an upright curve
            else:
                continue
            box = (min(a[0], b[0]), min(a[1], b[1]), max(a[0], b[0]), max(a[1], b[1]))
            pieces.append((a, b, box))
    if len(pieces) < _SERIES_PIECES:
        return []
    parent = list(range(len(pieces)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    ends: dict[tuple[int, int], int] = {}
    for i, (a, b, _) in enumerate(pieces):
        for p in (a, b):
            k = _key(p)
            if k in ends:
                parent[find(i)] = find(ends[k])
            else:
                ends[k] = i
    groups: dict[int, list[int]] = {}
    for i in range(len(pieces)):
        groups.setdefault(find(i), []).append(i)
    out: list[BBox] = []
    for members in groups.values():
        if len(members) < _SERIES_PIECES:
            continue
        x0 = min(pieces[i][2][0] for i in members)
        x1 = max(pieces[i][2][2] for i in members)
        run = sum(pieces[i][2][2] - pieces[i][2][0] for i in members)
        if x1 - x0 < _SERIES_WIDTH or run > 1.1 * (x1 - x0):
            continue  # too narrow, or it turns back along x (a shape, a star, a pair of arrowheads)
        y0 = min(pieces[i][2][1] for i in members)
        y1 = max(pieces[i][2][3] for i in members)
        out.append((x0, y0, x1, y1))
    return out


def _segments(cdrawings: list[dict[str, Any]]) -> tuple[list[BBox], list[BBox], list[BBox], list[BBox]]:
    """Level and upright segments (stroked lines, thin boxes, a box's sides) that may be an axis
    (long) or a tick (short), as boxes: (long level, long upright, short level, short upright).
    The edges of a filled area are left out: a chart drawn as filled outlines (a line exported as
    the shape it covers) has thousands, short ones among them, beside its axes."""
    long_l: list[BBox] = []
    long_u: list[BBox] = []
    tick_l: list[BBox] = []
    tick_u: list[BBox] = []
    starts_l: set[tuple[int, int]] = set()  # where short level and upright pieces start and end
    ends_l: set[tuple[int, int]] = set()
    starts_u: set[tuple[int, int]] = set()
    ends_u: set[tuple[int, int]] = set()
    for path in cdrawings:
        stroked = "s" in (path.get("type") or "")
        for item in path.get("items", ()):
            kind = item[0]
            if kind == "l":
                if not stroked:  # an edge of a filled area (a line drawn as its outline), no rule
                    continue
                (ax, ay), (bx, by) = item[1], item[2]
                x0, x1 = (ax, bx) if ax <= bx else (bx, ax)
                y0, y1 = (ay, by) if ay <= by else (by, ay)
            elif kind == "re":
                r = item[1]
                x0, x1 = (r[0], r[2]) if r[0] <= r[2] else (r[2], r[0])
                y0, y1 = (r[1], r[3]) if r[1] <= r[3] else (r[3], r[1])
                if x1 - x0 > 1.5 and y1 - y0 > 1.5:  # a box: its four sides
                    if x1 - x0 >= _AXIS_LENGTH:
                        long_l += [(x0, y0, x1, y0), (x0, y1, x1, y1)]
                    if y1 - y0 >= _AXIS_LENGTH:
                        long_u += [(x0, y0, x0, y1), (x1, y0, x1, y1)]
                    continue
            else:
                continue
            w, h = x1 - x0, y1 - y0
            if h <= 1.5 and w > 0.5:
                if w >= _AXIS_LENGTH:
                    long_l.append((x0, y0, x1, y1))
                elif w <= _TICK_MAX:
                    tick_l.append((x0, y0, x1, y1))
                    starts_l.add((round(x0), round(y0)))
                    ends_l.add((round(x1), round(y0)))
            elif w <= 1.5 and h > 0.5:
                if h >= _AXIS_LENGTH:
                    long_u.append((x0, y0, x1, y1))
                elif h <= _TICK_MAX:
                    tick_u.append((x0, y0, x1, y1))
                    starts_u.add((round(x0), round(y0)))
                    ends_u.add((round(x0), round(y1)))
    # a short piece of rule that another short piece goes on from, end to start (a table's
    # border drawn cell by cell, one row high, across a rule), is no tick: a tick stands alone
    # (a gridline going on from it across the axis is long; a tick drawn twice, major over minor,
    # shares its start)
    tick_l = [
        t
        for t in tick_l
        if (round(t[0]), round(t[1])) not in ends_l and (round(t[2]), round(t[1])) not in starts_l
    ]
    tick_u = [
        t
        for t in tick_u
        if (round(t[0]), round(t[1])) not in ends_u and (round(t[0]), round(t[3])) not in starts_u
    ]
    return long_l, long_u, tick_l, tick_u


def _even(xs: list[float]) -> bool:
    if len(xs) < _AXIS_TICKS:
        return False
    xs = sorted(xs)
    steps = [b - a for a, b in zip(xs, xs[1:], strict=False)]
    mean = sum(steps) / len(steps)
    return mean > 2.0 and all(abs(s - mean) <= 0.12 * mean + 0.5 for s in steps)


def _axes(cdrawings: list[dict[str, Any]]) -> list[BBox]:
    """Boxes of the axes: a long line with evenly spaced short ticks square to it."""
    long_l, long_u, tick_l, tick_u = _segments(cdrawings)
    out: list[BBox] = []
    for axis, ticks, along in ((long_l, tick_u, 0), (long_u, tick_l, 1)):
        if len(ticks) < _AXIS_TICKS or not axis:
            continue
        # ticks by the coordinate where they meet a line (both ends), a point's slack either way
        ends: dict[int, list[float]] = {}
        for t in ticks:
            pos, e0, e1 = (t[0], t[1], t[3]) if along == 0 else (t[1], t[0], t[2])
            for e in {round(e0), round(e1)}:
                ends.setdefault(e, []).append(pos)
        for a in axis:
            lo, hi, at = (a[0], a[2], a[1]) if along == 0 else (a[1], a[3], a[0])
            near = {p for k in (round(at) - 1, round(at), round(at) + 1) for p in ends.get(k, ())}
            if len(near) < _AXIS_TICKS:
                continue
            pos = sorted({round(p, 1) for p in near if lo - 1 <= p <= hi + 1})
            if _even(pos):
                out.append(a)
    return out


def _arrows(cdrawings: list[dict[str, Any]]) -> list[BBox]:
    """Boxes of arrows: a filled path with slanted edges (a head) that is thin and long (the
    shaft drawn with it) or small (a triangle at a stroke's end)."""
    out: list[BBox] = []
    for path in cdrawings:
        if "f" not in (path.get("type") or ""):
            continue
        x0, y0, x1, y1 = path["rect"]
        w, h = x1 - x0, y1 - y0
        items = path.get("items", ())
        thin = min(w, h) <= 6.0 and max(w, h) >= 8.0
        head = 2.0 <= max(w, h) <= 12.0 and len(items) <= 4
        if not (thin or head):
            continue
        slanted = sum(
            1
            for it in items
            if it[0] == "l" and abs(it[1][0] - it[2][0]) >= 0.3 and abs(it[1][1] - it[2][1]) >= 0.3
        )
        if slanted >= 2:
            out.append((x0, y0, x1, y1))
    return out


def _closed(path: dict[str, Any]) -> bool:
    items = path["items"]
    if path.get("closePath"):
        return True
    a, b = items[0][1], items[-1][-1]
    return abs(a[0] - b[0]) < 0.5 and abs(a[1] - b[1]) < 0.5


def _boxes(cdrawings: list[dict[str, Any]]) -> list[BBox]:
    """Stroked boxes of a text's size or more (a flow chart's steps): a drawn rectangle, or a
    closed stroked path of four sides or more (a rounded box: sides and corner arcs)."""
    out: list[BBox] = []
    for path in cdrawings:
        if "s" not in (path.get("type") or ""):
            continue
        items = path.get("items", ())
        if len(items) >= 4 and all(it[0] in ("l", "c") for it in items) and _closed(path):
            box = tuple(path["rect"])
            if box[2] - box[0] >= 15 and box[3] - box[1] >= 8:
                out.append(box)
            continue
        for item in items:
            if item[0] == "re":
                b = item[1]
                box = (min(b[0], b[2]), min(b[1], b[3]), max(b[0], b[2]), max(b[1], b[3]))
                if box[2] - box[0] >= 15 and box[3] - box[1] >= 8:
                    out.append(box)
    return out


def _bars(cdrawings: list[dict[str, Any]]) -> list[BBox]:
    """Boxes of bar charts: three or more filled boxes of one width standing on one baseline,
    of unlike heights (a row of shaded cells shares its height), the tallest at least twice as
    tall as wide, none holding another filled box or overlapping another bar (a word processor's
    shaded cell holds a box per text line)."""
    rects: list[BBox] = []
    for path in cdrawings:
        if "f" not in (path.get("type") or ""):
            continue
        for item in path.get("items", ()):
            if item[0] == "re":
                b = item[1]
                box = (min(b[0], b[2]), min(b[1], b[3]), max(b[0], b[2]), max(b[1], b[3]))
                if box[2] - box[0] >= 2.0 and box[3] - box[1] >= 1.0:
                    rects.append(box)
    if len(rects) < 3:
        return []
    by_base: dict[int, list[BBox]] = {}
    for r in rects:
        by_base.setdefault(round(r[3]), []).append(r)
    out: list[BBox] = []
    for group in by_base.values():
        if len(group) < 3:
            continue
        widths = sorted(r[2] - r[0] for r in group)
        wmed = widths[len(widths) // 2]
        same = [r for r in group if abs((r[2] - r[0]) - wmed) <= 0.1 * wmed + 0.5]
        heights = {round(r[3] - r[1]) for r in same}
        if len(same) < 3 or len(heights) < 3:
            continue
        if (max(heights) < 1.5 * max(min(heights), 1) or max(heights) < 2.0 * wmed) and not _stand_on(
            same, cdrawings
        ):
            # bars of like heights, or no taller than twice their width, are shaded cells and text
            # lines' boxes as often, unless they stand on a line drawn under them all (an axis)
            continue
        # a bar holds no other filled box and overlaps no other bar (a shaded cell holds its lines')
        same = [
            r
            for r in same
            if not any(o is not r and _inside(o, r, 0.0) for o in rects)
            and not any(o is not r and _overlap(o, r) for o in same)
        ]
        if len({round(r[3] - r[1]) for r in same}) < 3:
            continue
        out.append(
            (
                min(r[0] for r in same),
                min(r[1] for r in same),
                max(r[2] for r in same),
                max(r[3] for r in same),
            )
        )
    return out


def _stand_on(bars: list[BBox], cdrawings: list[dict[str, Any]]) -> bool:
    """The bars, of one baseline, stand on a level line drawn under them all: a chart's axis, or
    the bottom side of a stroked frame round them (a plot area's border). A table's shaded cells
    of one row share their top as they share their bottom: never three heights on one rule."""
    base, x0, x1 = bars[0][3], min(b[0] for b in bars), max(b[2] for b in bars)
    return any(
        abs(y - base) <= 1.5 and a <= x0 + 1.0 and b >= x1 - 1.0
        for a, y, b in [*level_rules(cdrawings), *_frame_bottoms(cdrawings)]
    )


def _frame_bottoms(cdrawings: list[dict[str, Any]]) -> list[tuple[float, float, float]]:
    """The bottom sides of stroked boxes (as (x0, y, x1)) too tall to be rules themselves."""
    out: list[tuple[float, float, float]] = []
    for path in cdrawings:
        if "s" not in (path.get("type") or ""):
            continue
        for item in path.get("items", ()):
            if item[0] == "re":
                rx0, ry0, rx1, ry1 = item[1]
                if abs(ry1 - ry0) >= 3.0:
                    out.append((min(rx0, rx1), max(ry0, ry1), max(rx0, rx1)))
    return out


def level_rules(cdrawings: list[dict[str, Any]]) -> list[tuple[float, float, float]]:
    """The level rules ``get_cdrawings()`` holds, as (x0, y, x1): stroked lines within a point of
    level, and boxes under three points tall (a rule drawn as a thin box). The edges of a filled
    shape are its outline, no rule. Read only where a test needs them (a chart's axis, the rules
    round a table's row), not for every page."""
    out: list[tuple[float, float, float]] = []
    for path in cdrawings:
        stroked = "s" in (path.get("type") or "")
        for item in path.get("items", ()):
            if item[0] == "l" and stroked:
                (ax, ay), (bx, by) = item[1], item[2]
                if abs(ay - by) <= 1.0:
                    out.append((min(ax, bx), (ay + by) / 2, max(ax, bx)))
            elif item[0] == "re":
                rx0, ry0, rx1, ry1 = item[1]
                if abs(ry1 - ry0) < 3.0 and abs(rx1 - rx0) > 3.0:
                    out.append((min(rx0, rx1), (ry0 + ry1) / 2, max(rx0, rx1)))
    return out


def _overlap(a: BBox, b: BBox) -> bool:
    """``a`` and ``b`` share more than an edge."""
    return a[0] < b[2] - 0.5 and b[0] < a[2] - 0.5 and a[1] < b[3] - 0.5 and b[1] < a[3] - 0.5


def _touch(a: BBox, b: BBox, pad: float = 3.0) -> bool:
    return a[0] - pad <= b[2] and b[0] - pad <= a[2] and a[1] - pad <= b[3] and b[1] - pad <= a[3]


def _inside(a: BBox, b: BBox, pad: float = 1.0) -> bool:
    """``a`` within ``b``, give or take ``pad``."""
    return a[0] >= b[0] - pad and a[1] >= b[1] - pad and a[2] <= b[2] + pad and a[3] <= b[3] + pad


def _flow_charts(cdrawings: list[dict[str, Any]]) -> list[BBox]:
    """Boxes of flow charts: steps (drawn boxes holding no arrow: a frame round the chart is not a
    step) and the arrows touching them, joined across the gaps arrows bridge; a group with two
    arrows or more touching its steps, and three steps or more, is a flow chart."""
    arrows = _arrows(cdrawings)
    if len(arrows) < 2:
        return []
    boxes = [b for b in _boxes(cdrawings) if not any(_inside(a, b, 0.0) for a in arrows)]
    touching = [a for a in arrows if any(_touch(a, b) for b in boxes)]
    if len(touching) < 2 or len(boxes) < 3:
        return []
    out = []
    for group in _merge([*touching, *boxes], pad=_FLOW_GAP):
        n_arrows = sum(_inside(a, group) for a in touching)
        n_boxes = sum(_inside(b, group) for b in boxes)
        if n_arrows >= 2 and n_boxes >= 3:
            out.append(group)
    return out


def _merge(boxes: list[BBox], pad: float) -> list[BBox]:
    """Boxes that touch (within ``pad``) joined, until none do."""
    out = [tuple(b) for b in boxes]
    changed = True
    while changed:
        changed = False
        for i in range(len(out)):
            for j in range(i + 1, len(out)):
                if _touch(out[i], out[j], pad):
                    a, b = out[i], out[j]
                    out[i] = (min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3]))
                    del out[j]
                    changed = True
                    break
            if changed:
                break
    return out  # type: ignore[return-value]


def _area(b: BBox) -> float:
    return max(0.0, b[2] - b[0]) * max(0.0, b[3] - b[1])


def chart_regions(cdrawings: list[dict[str, Any]], text_height: float) -> tuple[list[BBox], list[BBox]]:
    """The page's chart and diagram regions, and its chart parts (data series, bars and plot
    areas: the frame and axes round them), in unrotated page space as the drawings are. Each
    region is grown by the margin where a chart sets its labels (``text_height`` the page's usual
    word height); a ruled grid holding a series or bars, or lying in a plot area (a legend's
    box), is part of a chart. Both empty for a page whose drawings hold no series, bars,
    tick-marked axis or flow chart."""
    marks = _series(cdrawings) + _bars(cdrawings)
    seeds = marks + _axes(cdrawings)
    regions = _flow_charts(cdrawings)
    if seeds:
        core = _merge(seeds, pad=2.0)
        # the plot's frame and axes: drawn paths overlapping a core, not much larger than the cores
        # they touch together (a series drawn in pieces, a flat stretch left out, is two cores
        # inside one frame)
        rects = [tuple(path["rect"]) for path in cdrawings]
        touched = [[c for c in core if _touch(r, c, 1.0)] for r in rects]
        grown = []
        for c in core:
            box = c
            for r, cs in zip(rects, touched, strict=True):
                if c in cs and _area(r) <= 4.0 * max(_area(union(cs)), 400.0):
                    box = (min(box[0], r[0]), min(box[1], r[1]), max(box[2], r[2]), max(box[3], r[3]))
            grown.append(box)
        plots = _merge(grown, pad=2.0)
        h = max(text_height, 4.0)
        regions += [(b[0] - 5 * h, b[1] - 1 * h, b[2] + 5 * h, b[3] + 3 * h) for b in plots]
        marks += plots
    return regions, marks
