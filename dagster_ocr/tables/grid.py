"""Ruled tables: PyMuPDF's line finder (``pymupdf.table``) run on word boxes instead of characters.

A port of PyMuPDF's edge and cell code (``make_edges``, ``intersections_to_cells``,
``cells_to_tables``) that yields the same tables at a third of the cost; see ``_ruled_grids``. It
reaches into ``pymupdf.table``'s internals, so it runs only on the PyMuPDF release it was ported
from and checked against (``PORTED_FROM``); on any other, ``find_tables`` itself does the work.
"""

from __future__ import annotations

import bisect
import itertools
import logging
import math
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pymupdf
from pymupdf import table as mt

from dagster_ocr.layout import BBox, transform_box
from dagster_ocr.tables.words import _Word

logger = logging.getLogger(__name__)

PORTED_FROM = "2.0"
"""``pymupdf.VersionBind`` of the release whose ``pymupdf.table`` the port copies and reaches into
(its context variables, ``TableFinder``, ``edges_to_intersections``, ``Table``). The tests that
compare the port with that release's own functions (tests/unit/test_tables.py) run it whatever
PyMuPDF is installed: after an upgrade they say whether it still matches, and once they pass this
names the new release."""

_warned: set[str] = set()  # installed PyMuPDF versions the fallback was logged for


def _port_fits() -> bool:
    """True when the installed PyMuPDF is the release the port was made from; else warns, once."""
    installed = pymupdf.VersionBind
    if installed == PORTED_FROM:
        return True
    if installed not in _warned:
        _warned.add(installed)
        logger.warning(
            "ruled tables: PyMuPDF %s is installed, the word-fed line finder was ported from PyMuPDF %s "
            "and reads pymupdf.table internals; using page.find_tables(strategy='lines', "
            "use_layout=False) instead (slower; tables printed sideways are read by text alignment only)",
            installed,
            PORTED_FROM,
        )
    return False


def _has_grid(cdrawings: list[dict[str, Any]]) -> bool:
    """True when the page's drawings hold at least two vertical and two horizontal rules.

    Pages with only horizontal rules (booktabs style) or none give the line finder nothing to find,
    so it is skipped there. Reads ``get_cdrawings()`` (plain tuples): ``get_drawings()`` is the same
    call plus a Python pass making Point and Rect objects of every item, which doubled the cost of
    this test on the many pages that turn out to have no grid.

    A thin filled box counts as a rule only where it differs from what lies beside it: statements
    printed with banded rows (every other row shaded) paint each row as a run of abutting cells,
    and the narrow cells between a ``$`` and its figure are thin boxes of the row's own colour; read
    as rules, the grid cut from them lost every unshaded row's label. A white rule between shaded
    cells (a word processor's table) still counts: its neighbours are of another colour.

    Nor does a thin filled box that meets no rule across it count: it frames no cell. An HTML
    table rendered to PDF (SEC filings) paints a column's border as one thin box per row, and its
    totals' underlines as short bars under each figure that stop short of that border; counted as
    rules, they let the line finder cut the page's shaded cells into a grid of every cell edge
    (27 columns where the reader sees 10). A row rule drawn across a column rule still counts.
    """
    vert = horiz = 0
    filled: list[tuple[float, float, float, float, Any]] = []  # every filled box: the neighbours
    thin: list[tuple[float, float, float, float, Any, bool]] = []  # thin filled boxes, judged last
    across: list[tuple[float, float, float, float, bool]] = []  # drawn lines and stroked rules
    for path in cdrawings:
        stroked = path.get("type") in ("s", "fs")
        for item in path.get("items", ()):
            if item[0] == "l":
                (ax, ay), (bx, by) = item[1], item[2]
                if abs(ax - bx) < 1 and abs(ay - by) > 5:
                    vert += 1
                    across.append((min(ax, bx), min(ay, by), max(ax, bx), max(ay, by), True))
                elif abs(ay - by) < 1 and abs(ax - bx) > 5:
                    horiz += 1
                    across.append((min(ax, bx), min(ay, by), max(ax, bx), max(ay, by), False))
            elif item[0] == "re":
                x0, y0, x1, y1 = item[1]
                x0, x1, y0, y1 = min(x0, x1), max(x0, x1), min(y0, y1), max(y0, y1)
                w, h = x1 - x0, y1 - y0
                if not stroked:
                    filled.append((x0, y0, x1, y1, path.get("fill")))
                if (w < 3 and h > 5) or (h < 3 and w > 5):
                    if stroked:
                        vert, horiz = vert + (w < 3), horiz + (w >= 3)
                        across.append((x0, y0, x1, y1, w < 3))
                    else:
                        thin.append((x0, y0, x1, y1, path.get("fill"), w < 3))
                elif w > 5 and h > 5 and stroked:  # a filled box is shading, not a rule
                    vert, horiz = vert + 2, horiz + 2
            if vert >= 2 and horiz >= 2:
                return True
    if not thin:
        return False
    beside = _SameFillNeighbours(filled)
    rules = [
        (x0, y0, x1, y1, v) for x0, y0, x1, y1, fill, v in thin if not beside.found(x0, y0, x1, y1, fill, v)
    ]
    crossing = _Crossings(rules + across)
    for x0, y0, x1, y1, vertical in rules:  # the band cells are left out: shading, not rules
        if not crossing.found(x0, y0, x1, y1, vertical):
            continue  # meets no rule across it: frames no cell
        vert, horiz = vert + vertical, horiz + (not vertical)
        if vert >= 2 and horiz >= 2:
            return True
    return False


class _Crossings:
    """Rules (x0, y0, x1, y1, vertical) sorted by where they stand, to ask whether a rule meets
    (crosses or touches, within a point) one of the other direction."""

    def __init__(self, rules: list[tuple[float, float, float, float, bool]]):
        # vertical rules by x, horizontal ones by y
        self._v = sorted(((r[0] + r[2]) / 2, r[1], r[3]) for r in rules if r[4])
        self._h = sorted(((r[1] + r[3]) / 2, r[0], r[2]) for r in rules if not r[4])

    def found(self, x0: float, y0: float, x1: float, y1: float, vertical: bool) -> bool:
        # a vertical rule looks for horizontal ones standing within its height, reaching its x
        at, lo, hi = ((x0 + x1) / 2, y0, y1) if vertical else ((y0 + y1) / 2, x0, x1)
        others = self._h if vertical else self._v
        i = bisect.bisect_left(others, (lo - 1.0,))
        while i < len(others) and others[i][0] <= hi + 1.0:
            if others[i][1] - 1.0 <= at <= others[i][2] + 1.0:
                return True
            i += 1
        return False


class _SameFillNeighbours:
    """Filled boxes indexed by their edges, to ask whether a box abuts one of its own colour."""

    def __init__(self, boxes: list[tuple[float, float, float, float, Any]]):
        self._by_right: dict[int, list[tuple[float, float, float, float, Any]]] = {}
        self._by_left: dict[int, list[tuple[float, float, float, float, Any]]] = {}
        self._by_bottom: dict[int, list[tuple[float, float, float, float, Any]]] = {}
        self._by_top: dict[int, list[tuple[float, float, float, float, Any]]] = {}
        for b in boxes:
            self._by_right.setdefault(round(b[2]), []).append(b)
            self._by_left.setdefault(round(b[0]), []).append(b)
            self._by_bottom.setdefault(round(b[3]), []).append(b)
            self._by_top.setdefault(round(b[1]), []).append(b)

    @staticmethod
    def _near(index: dict[int, list[Any]], x: float) -> list[Any]:
        k = round(x)
        return index.get(k - 1, []) + index.get(k, []) + index.get(k + 1, [])

    def found(self, x0: float, y0: float, x1: float, y1: float, fill: Any, vertical: bool) -> bool:
        """Whether this thin light box abuts a cell of its own ``fill`` along its long side (within
        0.6 pt): then it is part of a shaded band."""
        if vertical:  # neighbours left and right, overlapping most of its height
            sides = [(b, b[2], x0) for b in self._near(self._by_right, x0)]
            sides += [(b, b[0], x1) for b in self._near(self._by_left, x1)]
            span = lambda b: min(b[3], y1) - max(b[1], y0)  # noqa: E731
            length = y1 - y0
        else:
            sides = [(b, b[3], y0) for b in self._near(self._by_bottom, y0)]
            sides += [(b, b[1], y1) for b in self._near(self._by_top, y1)]
            span = lambda b: min(b[2], x1) - max(b[0], x0)  # noqa: E731
            length = x1 - x0
        return _light(fill) and any(
            abs(edge - at) <= 0.6
            and span(b) >= 0.5 * length
            and min(b[2] - b[0], b[3] - b[1]) >= 5.0  # a cell, not another rule
            and _same_colour(b[4], fill)
            for b, edge, at in sides
        )


def _light(fill: Any) -> bool:
    """Shading is light (luminance >= 0.5): a dark box abutting dark boxes is drawn rules."""
    if not fill:
        return False
    if len(fill) == 3:
        return 0.2126 * fill[0] + 0.7152 * fill[1] + 0.0722 * fill[2] >= 0.5
    if len(fill) == 1:
        return fill[0] >= 0.5
    if len(fill) == 4:
        return 1.0 - min(1.0, max(fill[:3]) + fill[3]) >= 0.5
    return False


def _same_colour(a: Any, b: Any) -> bool:
    if not a or not b or len(a) != len(b):
        return False
    return all(abs(p - q) <= 0.02 for p, q in zip(a, b, strict=True))


#: how far (points) a nested fill may reach past the box it lies on and still lie on it
_NEST_TOL = 0.5
#: how many earlier paths are looked back through for the paint a fill lies on
_NEST_LOOKBACK = 64


def _white(fill: Any) -> bool:
    """The paper's colour: white in gray, RGB or CMYK."""
    if not fill:
        return False
    if len(fill) == 4:
        return max(fill) <= 0.01
    return min(fill) >= 0.99


def _box(path: dict[str, Any]) -> bool:
    """A path that only fills one box (no outline)."""
    return path.get("type") == "f" and path.get("fill") is not None and len(path.get("items", ())) == 1


def _visible_paths(
    cdrawings: list[dict[str, Any]], on_paper: bool | Callable[[], bool] = False
) -> list[dict[str, Any]]:
    """The drawings less the filled boxes whose outline cannot be seen: a box filled in the colour
    of the box it is painted on, and, with ``on_paper`` (the page shows no image), a white box
    painted on nothing but white.

    Word processors export a table cell as a filled box and, inside it, one box of the same colour
    per paragraph or text line, inset by the cell's padding. Nothing marks where such an inner box
    ends (same colour on same colour), but the line finder reads every box's four sides as rules:
    each text line of a shaded cell became a grid row of its own and each padding a column, so a
    wrapped label and a two-line header were cut line by line. A fill-only box is dropped when the
    last earlier path its area overlaps is a fill of the same colour and opacity that contains it.
    A box on a different colour (a white rule on a dark cell, a shaded cell on a white one) is kept.

    A white box on white paper is the paper: a page that pads its table's shaded rows with a white
    box in the margin beside one row had that box's sides read as rules, and the grid a column
    more on that page than on the next, so the continuation was refused. Kept where anything but
    white paint lies under it (its sides are then seen against that paint), where a shaded box
    lies on or under it across most of its width (a zebra table's white row: a first version
    dropped those, and the last row of Apple's index of statements fell out of its table), and
    where the page shows an image (``on_paper`` false: the paper may be a picture).
    """
    out: list[dict[str, Any]] = []
    singles = [_box(p) for p in cdrawings]
    # wider and taller than a rule (a thin fill is a drawn rule: it is always seen)
    big = [
        one and p["rect"][2] - p["rect"][0] > 3 and p["rect"][3] - p["rect"][1] > 3
        for one, p in zip(singles, cdrawings, strict=True)
    ]
    whites = [one and _white(p["fill"]) for one, p in zip(singles, cdrawings, strict=True)]
    # a white box may lie on the paper unseen; whether the paper is what lies under it (no image on
    # the page: ``on_paper``, a callable where asking costs) is asked only where one is
    unseen = any(b and w for b, w in zip(big, whites, strict=True)) and (
        on_paper() if callable(on_paper) else on_paper
    )
    if unseen:
        # a page may hold thousands of paths (a spreadsheet's cells): what lies under a white box
        # is looked up in arrays, not path by path
        rects = np.array([path["rect"] for path in cdrawings], dtype=float).reshape(-1, 4)
        painted = ~np.array(whites)
        # boxes of a colour: not rules drawn as thin filled boxes, nor a path of many (its bounds)
        shaded = np.array(big) & painted
        under, under_at, stripes = rects[painted], np.flatnonzero(painted), rects[shaded]
    for i, path in enumerate(cdrawings):
        if big[i]:
            if (
                unseen
                and whites[i]
                and not _overlaps_any(path["rect"], under[: np.searchsorted(under_at, i)])
                and not _stripe(path["rect"], stripes)
            ):
                continue
            x0, y0, x1, y1 = path["rect"]
            for prev in reversed(cdrawings[max(0, i - _NEST_LOOKBACK) : i]):
                a0, b0, a1, b1 = prev["rect"]
                t = _NEST_TOL
                if a0 >= x1 - t or a1 <= x0 + t or b0 >= y1 - t or b1 <= y0 + t:
                    continue  # no area in common (boxes that touch): not what it is painted on
                if (
                    prev.get("type") in ("f", "fs")
                    and prev.get("fill") == path["fill"]
                    and prev.get("fill_opacity") == path.get("fill_opacity")
                    and a0 - _NEST_TOL <= x0
                    and b0 - _NEST_TOL <= y0
                    and x1 <= a1 + _NEST_TOL
                    and y1 <= b1 + _NEST_TOL
                ):
                    path = None  # type: ignore[assignment]
                break
        if path is not None:
            out.append(path)
    return out


def _stripe(box: Sequence[float], boxes: np.ndarray) -> bool:
    """``box`` lies on or under one of ``boxes`` (n x 4) across most of its width: a white row of a
    zebra table between shaded rows, whose top and bottom are the table's rows."""
    x0, y0, x1, y1 = box
    t = _NEST_TOL
    across = np.minimum(boxes[:, 2], x1) - np.maximum(boxes[:, 0], x0) >= 0.5 * (x1 - x0)
    touch = (np.abs(boxes[:, 3] - y0) <= t) | (np.abs(boxes[:, 1] - y1) <= t)
    return bool(np.any(across & touch))


def _overlaps_any(box: Sequence[float], boxes: np.ndarray) -> bool:
    """``box`` shares some area (more than ``_NEST_TOL`` each way) with one of ``boxes`` (n x 4)."""
    x0, y0, x1, y1 = box
    t = _NEST_TOL
    return bool(
        np.any(
            (boxes[:, 0] < x1 - t) & (boxes[:, 2] > x0 + t) & (boxes[:, 1] < y1 - t) & (boxes[:, 3] > y0 + t)
        )
    )


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
    docs/benchmarks-history.md, "Tables (issue 4)"). The edges come from ``_make_edges`` (PyMuPDF's
    ``make_edges`` on the C-level drawings), the cells from ``_GridFinder``. On another PyMuPDF than
    ``PORTED_FROM`` the port is not trusted and ``find_tables(strategy="lines", use_layout=False)`` runs
    instead.

    MuPDF's drawings are in unrotated page space: the edges are built there, then turned to display
    space before the grid is cut into cells (the cell search walks from top-left corners, so it must
    see the page the way it is read). ``frame`` (see ``sideways._reading_frame``) turns them once
    more, for a table printed sideways; ``words`` are then in that frame.
    """
    if not _port_fits():
        # find_tables reads the page in display space (/Rotate included, like the words), but a grid
        # printed sideways would come out transposed against words in its reading frame
        return [] if frame is not None else pg.find_tables(strategy="lines", use_layout=False).tables

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
    paths = _visible_paths(cdrawings, on_paper=lambda: not pg.get_images(full=True))
    edges = _make_edges(pg, paths, tset, chars)
    if not pg.rotation and frame is None:
        edges += _joint_rules(edges, unrotated, tset.snap_x_tolerance, tset.snap_y_tolerance)
    edges_token = mt._EDGES_VAR.set(edges)
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


def _holds(box: tuple[float, ...], chars: list[tuple[float, float, float, float]]) -> bool:
    """Whether a character (x0, x1, y0, y1) lies in ``box`` (x0, y0, x1, y1), as PyMuPDF asks it."""
    return any(box[0] <= a and b <= box[2] and box[1] <= c and box[3] >= d for a, b, c, d in chars)


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

    One addition, on purpose: PyMuPDF asks whether a joined box holds text of the characters'
    PDF-space y (see ``char_boxes`` below); a box that test refuses becomes a border too when its
    text lies in it in page space and two of its lines run through it, side to side or top to
    bottom (``ruled_through``): a grid with no rule down its outer sides, not a diagram with its
    labels. The edges are PyMuPDF's, in its order, then those extra borders' edges.
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
    # PyMuPDF asks whether a joined box holds text of the characters' "y0"/"y1": PDF space (y up),
    # where the boxes are in page space (y down). A box then holds text only where the text's
    # mirror image across the page's middle falls inside it, so a grid with no rule down its outer
    # sides (a LaTeX ``{l|r|r}`` tabular, a spreadsheet's inner borders) got its border by chance
    # and otherwise lost its first and last columns. That test is kept as it is (every result was
    # measured with it); a box it refuses becomes a border when its characters' page-space boxes
    # lie in it and two of its lines run through it (``ruled_through``, judged below)
    char_boxes = [(c["x0"], c["x1"], c["y0"], c["y1"]) for c in chars]  # y0/y1 as make_chars writes
    page_boxes = [(c["x0"], c["x1"], c["top"], c["bottom"]) for c in chars]
    maybe = []  # boxes PyMuPDF's test refuses: they may hold text in page space
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
        if _holds(box, char_boxes):
            borders.append(box)
        elif box[2] - box[0] > 2 * snap_x and box[3] - box[1] > 2 * snap_y:
            maybe.append(box)  # asked below, once the edges are known (most fail there, cheaply)
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

    def ruled_through(box: tuple[float, ...]) -> bool:
        """Two drawn lines or more run the box's whole width (the row rules of a grid whose sides
        are not drawn) or its whole height (column rules with no rule along the top and bottom).
        A diagram's joined strokes with labels inside hold text too, but its lines rarely span
        it: drawn as a border, its box cut the diagram into a grid of empty cells."""
        bx0, by0, bx1, by1 = box
        across = down = 0
        for e in edges:
            if e["orientation"] == "h":
                if (
                    e["x0"] <= bx0 + snap_x
                    and e["x1"] >= bx1 - snap_x
                    and by0 - snap_y <= e["top"] <= by1 + snap_y
                ):
                    across += 1
            elif (
                e["top"] <= by0 + snap_y
                and e["bottom"] >= by1 - snap_y
                and bx0 - snap_x <= e["x0"] <= bx1 + snap_x
            ):
                down += 1
        return across >= 2 or down >= 2

    border = {"color": (0, 0, 0), "fill": None, "width": 1}

    for x0, y0, x1, y1 in borders + [b for b in maybe if ruled_through(b) and _holds(b, page_boxes)]:
        add(border, (x0, y0), (x1, y0))
        add(border, (x0, y1), (x1, y1))
        add(border, (x0, y0), (x0, y1))
        add(border, (x1, y0), (x1, y1))
    return edges


def _joint_rules(
    edges: list[dict[str, Any]], words: list[tuple[BBox, str]], snap_x: float, snap_y: float
) -> list[dict[str, Any]]:
    """Row rules a grid implies where it draws none: its column rules drawn one segment a row.

    A table exported from HTML or a spreadsheet with cell borders on the sides only (a securities
    report's history of dates and events) draws each column rule as one segment per row, end to
    end, and no rule between the rows: the line finder joins the segments and reads the whole body
    as one row. Where two column rules or more are jointed at the same height (one segment ends
    where the next begins: a dashed rule leaves gaps, so no joints), rules are drawn across those
    columns elsewhere (the table's frame), no row rule is drawn there over any of them, and no
    word's middle crosses it, a rule across those columns is implied; it is added as drawn.
    Written here because PyMuPDF's finder (whose edges these are) builds rows from drawn rules only.
    """
    columns: list[tuple[float, list[tuple[float, float]]]] = []  # x, then its segments' extents
    for e in edges:
        # a white stroke is a gap between shaded cells, seen only against their fill: no rule
        if e["orientation"] != "v" or min(e.get("stroking_color") or (0.0,)) > 0.9:
            continue
        for x, spans in columns:
            if abs(x - e["x0"]) <= snap_x:
                spans.append((e["top"], e["bottom"]))
                break
        else:
            columns.append((e["x0"], [(e["top"], e["bottom"])]))
    joints: list[tuple[float, float]] = []  # (y, x) of each joint
    for x, spans in columns:
        spans.sort()
        for (_, b0), (a1, b1) in itertools.pairwise(spans):
            if abs(a1 - b0) <= snap_y and b1 - a1 > snap_y:
                joints.append(((a1 + b0) / 2, x))
    joints.sort()
    rows = sorted((e for e in edges if e["orientation"] == "h"), key=lambda e: e["top"])
    levels: list[list[dict[str, Any]]] = []  # the row rules at one height (drawn a cell at a time)
    for e in rows:
        if levels and e["top"] - levels[-1][0]["top"] <= snap_y:
            levels[-1].append(e)
        else:
            levels.append([e])
    out: list[dict[str, Any]] = []
    i = 0
    while i < len(joints):
        j = i
        while j + 1 < len(joints) and joints[j + 1][0] - joints[i][0] <= snap_y:
            j += 1
        ys, xs = [y for y, _ in joints[i : j + 1]], sorted({x for _, x in joints[i : j + 1]})
        i = j + 1
        y = sum(ys) / len(ys)
        # a row rule drawn there at all, if only over some columns (a cell spanning rows leaves
        # it out over its column): the row is ruled as drawn
        if len(xs) < 2 or any(
            abs(e["top"] - y) <= snap_y and e["x0"] < xs[-1] and e["x1"] > xs[0] for e in rows
        ):
            continue
        # the columns' frame: rules drawn across them all (the top and the bottom, or under the
        # heads); white strokes between shaded cells frame nothing, and imply no rows
        frames = [level for level in levels if _rules_across(level, xs[0], xs[-1], snap_x)]
        if len(frames) < 2:
            continue
        # every column rule inside the frame jointed there: one running through is a rule between
        # column groups of a table whose rows are not ruled (its segments break where its group's
        # do, not the table's). The jointed rules' own x are passed over: the border drawn round a
        # joined box of graphics holding text runs down them whole
        fx0 = min(e["x0"] for level in frames for e in level)
        fx1 = max(e["x1"] for level in frames for e in level)
        if any(
            e["orientation"] == "v"
            and fx0 - snap_x <= e["x0"] <= fx1 + snap_x
            and all(abs(e["x0"] - x) > snap_x for x in xs)
            and e["top"] < y - snap_y
            and e["bottom"] > y + snap_y
            for e in edges
        ):
            continue
        # a word's box reaches past its glyphs (line boxes of a tightly set font overlap): the
        # middle half of the box is what a rule must not cross
        if any(
            b[1] + (b[3] - b[1]) / 4 < y < b[3] - (b[3] - b[1]) / 4 and b[0] < xs[-1] and b[2] > xs[0]
            for b, _ in words
        ):
            continue
        edge = dict(rows[0])  # a drawn row rule (the frame has two), its fields for the new one
        height = edge["y0"] + edge["top"]  # y0 is the page height less top
        edge.update(
            x0=xs[0],
            x1=xs[-1],
            top=y,
            bottom=y,
            y0=height - y,
            y1=height - y,
            width=xs[-1] - xs[0],
            height=0.0,
            pts=[(xs[0], y), (xs[-1], y)],
            doctop=edge["doctop"] - edge["top"] + y,
            orientation="h",
        )
        out.append(edge)
    return out


def _rules_across(level: list[dict[str, Any]], x0: float, x1: float, snap_x: float) -> bool:
    """Whether the row rules of one height, end to end, run from ``x0`` to ``x1``."""
    reach = x0
    for e in sorted(level, key=lambda e: e["x0"]):
        if e["x0"] > reach + snap_x:
            break
        reach = max(reach, e["x1"])
    return reach >= x1 - snap_x


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


def _split_at_sides(
    pg: pymupdf.Page, tables: Sequence[Any], words: list[_Word], frame: tuple[float, ...] | None = None
) -> list[_Word]:
    """``words`` with each word that runs across a side two cells of a ruled grid share cut there.

    A spreadsheet prints a cell's text past its right side when it does not fit (clipped at the
    rule), and the next cell's text starts right after it with no space between: "Elizab" + "2165
    Princeton Ave" is one word, "Elizab2165", whose centre then puts both halves in one cell. Such
    a word is cut by its characters (``_cut_word``) at each inner side it crosses by more than half
    a character, each piece a word of its own. Only those words' characters are read again
    (``rawdict`` clipped to the word); a word whose characters do not spell it is left whole.
    """
    # the x of each side two cells of a row share, by the rows' whole points of y (a word is
    # looked up by its centre, not tried against every side of the page)
    sides: dict[int, set[float]] = {}
    for tab in tables:
        for y0, y1, xs in row_sides(tab):
            for y in range(math.floor(y0), math.ceil(y1) + 1):
                sides.setdefault(y, set()).update(xs)
    if not sides:
        return words
    cut: dict[int, list[float]] = {}  # word index -> the sides it crosses
    for i, w in enumerate(words):
        at = sides.get(round((w.y0 + w.y1) / 2))
        half = (w.x1 - w.x0) / max(len(w.text), 1) / 2
        if at and (xs := sorted(x for x in at if w.x0 + half < x < w.x1 - half)):
            cut[i] = xs
    if not cut:
        return words
    chars = _page_chars(pg, frame, [(words[i].x0, words[i].y0, words[i].x1, words[i].y1) for i in cut])
    starts = sorted(x.x0 for x in words)  # where the page's words start
    out: list[_Word] = []
    for i, w in enumerate(words):
        pieces = _cut_word(w, cut[i], chars, starts) if i in cut else None
        out.extend(pieces if pieces else [w])
    return out


def row_sides(tab: Any) -> list[tuple[float, float, list[float]]]:
    """Each row of the line finder's grid ``tab`` whose cells share a side: (top, bottom, the x of
    each side two of its cells share)."""
    out = []
    for row in tab.rows:
        cells = [c for c in row.cells if c is not None]
        xs = [a[2] for a, b in itertools.pairwise(cells) if abs(a[2] - b[0]) <= 1]
        if xs:
            out.append((min(c[1] for c in cells), max(c[3] for c in cells), xs))
    return out


def _page_chars(
    pg: pymupdf.Page, frame: tuple[float, ...] | None, boxes: list[BBox]
) -> list[tuple[float, float, float, str]]:
    """The page's visible characters whose centre lies in one of ``boxes``, as (x0, x1, y centre,
    character) in the words' coordinates (display space, turned by ``frame`` when given): the page
    read once for every word to cut, each character tested in the page's own space and only those
    kept turned (a Rect and Matrix per character of the page cost more than the cut saved)."""
    m = pymupdf.Matrix(pg.rotation_matrix) if pg.rotation else pymupdf.Matrix(1, 1)
    if frame is not None:
        m = m * pymupdf.Matrix(frame)
    to_words, to_raw = tuple(m), tuple(~m)
    raw = [transform_box(b, to_raw) for b in boxes]
    ux0, uy0 = min(b[0] for b in raw) - 1, min(b[1] for b in raw) - 1
    ux1, uy1 = max(b[2] for b in raw) + 1, max(b[3] for b in raw) + 1
    out: list[tuple[float, float, float, str]] = []
    for block in pg.get_text("rawdict", clip=(ux0, uy0, ux1, uy1))["blocks"]:
        for line in block.get("lines", ()):
            for span in line["spans"]:
                for ch in span["chars"]:
                    x0, y0, x1, y1 = ch["bbox"]
                    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
                    if ch["c"].strip() and any(
                        b[0] - 1 <= cx <= b[2] + 1 and b[1] <= cy <= b[3] for b in raw
                    ):
                        bx0, by0, bx1, by1 = transform_box((x0, y0, x1, y1), to_words)
                        out.append((bx0, bx1, (by0 + by1) / 2, ch["c"]))
    return out


def _cut_word(
    w: _Word, cuts: list[float], page_chars: list[tuple[float, float, float, str]], starts: list[float]
) -> list[_Word]:
    """``w`` cut at the x positions ``cuts``; [] when its characters (those of ``page_chars`` whose
    centre lies in its box) do not spell it.

    A character that starts before a side (or on it) stays left of it however far it runs past: it
    is the left cell's, its ink clipped at the rule; the right cell's text starts after the side,
    where its padding ends. A piece right of a side must also start where another word of the page
    starts (``starts``): the next cell's own text, set at the padding its column keeps in every row.
    A word running on past a side into an empty cell (a long label over a drawn rule) goes on at no
    such place, and stays whole there.
    """
    mine = [
        (x0, x1, c)
        for x0, x1, cy, c in page_chars
        if w.y0 <= cy <= w.y1 and w.x0 - 0.5 <= (x0 + x1) / 2 <= w.x1 + 0.5
    ]
    chars = sorted(mine)
    text = w.text.replace(" ", "")
    if "".join(c for _, _, c in chars) != text:
        # glyphs overlapping: a cell's text runs past its side under the next cell's, which starts
        # over its last letters ("charged" + "Number", "N" set over the "d"); in the page's order
        # each is a run of its own, the next one starting where x steps back. A run ends at the
        # side the next one starts past (its ink clipped at the rule, as above)
        steps = [i for i in range(1, len(mine)) if mine[i][0] < mine[i - 1][1] - 1.0]
        if not steps or "".join(c for _, _, c in mine) != text:
            return []
        runs = [mine[a:b] for a, b in itertools.pairwise([0, *steps, len(mine)])]
        out = []
        for g, nxt in zip(runs, [*runs[1:], None], strict=True):
            x0, x1 = min(c[0] for c in g), max(c[1] for c in g)
            if nxt is not None:
                x1 = min([x1, *(x for x in cuts if x0 < x <= nxt[0][0])])
            out.append(_Word(x0, w.y0, x1, w.y1, "".join(c for *_, c in g)))
        return out
    groups: list[list[tuple[float, float, str]]] = [[] for _ in range(len(cuts) + 1)]
    for ch in chars:
        groups[bisect.bisect_left(cuts, ch[0])].append(ch)
    pieces: list[list[tuple[float, float, str]]] = []
    for g in groups:
        if not g:
            continue
        k = bisect.bisect_left(starts, g[0][0] - 0.3)
        if pieces and not (k < len(starts) and starts[k] <= g[0][0] + 0.3):
            pieces[-1].extend(g)  # no text of the next cell starts there: the word runs on
        else:
            pieces.append(g)
    return [_Word(g[0][0], w.y0, g[-1][1], w.y1, "".join(c for _, _, c in g)) for g in pieces]
