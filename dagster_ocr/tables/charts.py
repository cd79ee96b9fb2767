"""Charts and diagrams found in a page's drawings: regions where the text finder builds no table.

A chart's tick labels, legend lines and axis titles align like a table's cells, and a flow chart's
boxes set their labels in rows; the words alone cannot tell them from a table, the drawing can:

- a *data series*: three or more slanted segments or curves joined end to end that run one way
  along x (a line chart's polyline or smoothed curve). A table's rules are level or upright, a
  cell's diagonal slash is one segment, an arrowhead two that turn back;
- an *axis*: a level or upright line with four or more short ticks square to it, evenly spaced
  (a table has no ticks);
- a *flow chart*: two or more arrows (a thin filled shaft with a slanted head, or a slanted
  head's pair of strokes) each touching one of three or more drawn boxes.

Each piece of evidence is grown by the drawn paths it overlaps (the plot's frame, its axes) and
then by a margin of a few text heights, where a chart sets its tick labels and axis titles. A
ruled grid is never evidence: its rules are level and upright, and carry no ticks.
"""

from __future__ import annotations

from typing import Any

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


def _segments(cdrawings: list[dict[str, Any]]) -> tuple[list[BBox], list[BBox]]:
    """Level and upright stroked segments (thin boxes count too): (level, upright) as boxes."""
    level: list[BBox] = []
    upright: list[BBox] = []
    for path in cdrawings:
        for item in path.get("items", ()):
            if item[0] == "l":
                (ax, ay), (bx, by) = item[1], item[2]
                box = (min(ax, bx), min(ay, by), max(ax, bx), max(ay, by))
            elif item[0] == "re":
                box = tuple(item[1])
                box = (min(box[0], box[2]), min(box[1], box[3]), max(box[0], box[2]), max(box[1], box[3]))
                w, h = box[2] - box[0], box[3] - box[1]
                if w > 1.5 and h > 1.5:
                    # a box: its four sides
                    x0, y0, x1, y1 = box
                    level += [(x0, y0, x1, y0), (x0, y1, x1, y1)]
                    upright += [(x0, y0, x0, y1), (x1, y0, x1, y1)]
                    continue
            else:
                continue
            w, h = box[2] - box[0], box[3] - box[1]
            if h <= 1.5 and w > 0.5:
                level.append(box)
            elif w <= 1.5 and h > 0.5:
                upright.append(box)
    return level, upright


def _even(xs: list[float]) -> bool:
    if len(xs) < _AXIS_TICKS:
        return False
    xs = sorted(xs)
    steps = [b - a for a, b in zip(xs, xs[1:], strict=False)]
    mean = sum(steps) / len(steps)
    return mean > 2.0 and all(abs(s - mean) <= 0.12 * mean + 0.5 for s in steps)


def _axes(level: list[BBox], upright: list[BBox]) -> list[BBox]:
    """Boxes of the axes: a long line with evenly spaced short ticks square to it."""
    out: list[BBox] = []
    for axis, ticks, along in ((level, upright, 0), (upright, level, 1)):
        short = [t for t in ticks if (t[3] - t[1] if along == 0 else t[2] - t[0]) <= _TICK_MAX]
        if len(short) < _AXIS_TICKS:
            continue
        for a in axis:
            length = a[2] - a[0] if along == 0 else a[3] - a[1]
            if length < _AXIS_LENGTH:
                continue
            pos: list[float] = []
            for t in short:
                if along == 0:  # a level axis at y = a[1]; upright ticks touching it
                    if a[0] - 1 <= t[0] <= a[2] + 1 and (abs(t[1] - a[1]) <= 1 or abs(t[3] - a[1]) <= 1):
                        pos.append(t[0])
                elif a[1] - 1 <= t[1] <= a[3] + 1 and (abs(t[0] - a[0]) <= 1 or abs(t[2] - a[0]) <= 1):
                    pos.append(t[1])
            pos = sorted({round(p, 1) for p in pos})
            if _even(pos):
                out.append(a)
    return out


def _arrows(cdrawings: list[dict[str, Any]]) -> list[BBox]:
    """Boxes of arrows: a filled path, thin and long, with slanted edges (its head)."""
    out: list[BBox] = []
    for path in cdrawings:
        if "f" not in (path.get("type") or ""):
            continue
        x0, y0, x1, y1 = path["rect"]
        w, h = x1 - x0, y1 - y0
        if not (min(w, h) <= 6.0 and max(w, h) >= 8.0):
            continue
        slanted = sum(
            1
            for it in path.get("items", ())
            if it[0] == "l" and abs(it[1][0] - it[2][0]) >= 0.3 and abs(it[1][1] - it[2][1]) >= 0.3
        )
        if slanted >= 2:
            out.append((x0, y0, x1, y1))
    return out


def _boxes(cdrawings: list[dict[str, Any]]) -> list[BBox]:
    """Stroked boxes of a text's size or more (a flow chart's steps)."""
    out: list[BBox] = []
    for path in cdrawings:
        if "s" not in (path.get("type") or ""):
            continue
        for item in path.get("items", ()):
            if item[0] == "re":
                b = item[1]
                box = (min(b[0], b[2]), min(b[1], b[3]), max(b[0], b[2]), max(b[1], b[3]))
                if box[2] - box[0] >= 15 and box[3] - box[1] >= 8:
                    out.append(box)
    return out


def _touch(a: BBox, b: BBox, pad: float = 3.0) -> bool:
    return a[0] - pad <= b[2] and b[0] - pad <= a[2] and a[1] - pad <= b[3] and b[1] - pad <= a[3]


def _flow_charts(cdrawings: list[dict[str, Any]]) -> list[BBox]:
    """Boxes of flow charts: arrows and the boxes they touch, when 2+ arrows touch 3+ boxes."""
    arrows = _arrows(cdrawings)
    if len(arrows) < 2:
        return []
    boxes = _boxes(cdrawings)
    touching = [a for a in arrows if any(_touch(a, b) for b in boxes)]
    linked = [b for b in boxes if any(_touch(a, b) for a in touching)]
    if len(touching) < 2 or len(linked) < 3:
        return []
    return _merge([*touching, *linked], pad=3.0)


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


def chart_regions(cdrawings: list[dict[str, Any]], text_height: float) -> list[BBox]:
    """The page's chart and diagram regions (unrotated page space, as the drawings are), each
    grown by the margin where a chart sets its labels (``text_height`` the page's usual word
    height). Empty for a page whose drawings hold no series, tick-marked axis or flow chart."""
    seeds = _series(cdrawings)
    level, upright = _segments(cdrawings)
    seeds += _axes(level, upright)
    regions = _flow_charts(cdrawings)
    if seeds:
        core = _merge(seeds, pad=2.0)
        # the plot's frame and axes: drawn paths overlapping a core, not much larger than it
        grown = []
        for c in core:
            box = c
            for path in cdrawings:
                r = tuple(path["rect"])
                if _touch(r, c, 1.0) and _area(r) <= 4.0 * max(_area(c), 400.0):
                    box = (min(box[0], r[0]), min(box[1], r[1]), max(box[2], r[2]), max(box[3], r[3]))
            grown.append(box)
        h = max(text_height, 4.0)
        regions += [(b[0] - 5 * h, b[1] - 1 * h, b[2] + 5 * h, b[3] + 3 * h) for b in _merge(grown, pad=2.0)]
    return regions


def series_boxes(cdrawings: list[dict[str, Any]]) -> list[BBox]:
    """The data series alone (see ``_series``): a ruled grid holding one is a chart's panels."""
    return _series(cdrawings)
