"""What a reader quotes with a table's figures: its title, its units and the column headings.

A financial statement prints its periods ("Years ended", "September 28, 2024") and its units
("(In millions)") above the grid, and its title ("CONSOLIDATED STATEMENTS OF CASH FLOWS") above
those, often in lines the table finder leaves outside the table because they do not align with
its rows. Without them a figure reads "| Purchases of property | (9,447) | (10,959) |": no year, no
unit, no statement. This module finds them by geometry, on the page the table starts on:

* **column headings** (:func:`find_context`): the bands of words right above the table whose every
  word lies over the figure columns (right of the row labels), nearest first, stopping at the first
  band that reaches into the label column (a title, a paragraph, a row label of another table) or
  after a gap wider than two line heights. A band of one phrase heads every figure column ("Years
  ended", "Three months ended"); a band of several puts each phrase over the figure columns its
  extent covers, or the nearest one; stacked bands join per column, top first ("September 28,"
  over "2024" gives "September 28, 2024").
* **units**: a line saying "in millions / thousands / billions" (or "($000)", "(€m)") in the
  heading bands or just above them.
* **title**: the nearest line above those that reads as a title: short, not a sentence (no final
  full stop), not a figure; or the sentence ending with ":" that introduces the table ("The
  following table shows ... (in millions):"), its last whole sentences that fit 300 characters.
* a table with no heading of its own right below another on the same page, whose figure columns
  sit where that one's do, with at most a row label between them (no prose), is that statement's
  next section (the finder cuts a statement at its section rows: "Investing activities:"): it
  takes the other's headings, title and units, and the label between them as its ``row_group``.

:func:`fold_symbol_columns` then folds the columns that hold only ``$``/``%``/``)`` signs, and the
empty spacer columns, into the figure they belong to, so a cell reads "$ 391,035" or "(1,577)"
as printed and a row has one cell per period.

Everything here is page geometry and the shape of numbers; no rule names a statement, a phrase
or a layout of one document.
"""

from __future__ import annotations

import itertools
import re
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from dagster_ocr.model import Cell, Line, Table
from dagster_ocr.tables.cells import _Part
from dagster_ocr.tables.settings import _CAPTION_RE
from dagster_ocr.tables.words import (
    _LEADING,
    _NIL_RE,
    _SIGNS,
    _TRAILING,
    _UNITS_RE,
    _WORD_RE,
    _bands,
    _is_num,
    _Word,
    _years_and_signs,
    is_units,
)

_YEAR_RE = re.compile(r"^(?:19|20)\d\d[a-z*]?$|^FY\s?\d{2,4}$", re.IGNORECASE)
#: a heading band this far (in line heights) above the band below it no longer heads the table
_HEADING_GAP = 2.6
#: how far above the table (points) headings, units and title are looked for
_WINDOW = 110.0


@dataclass
class TableContext:
    """What the page prints around a table for a reader: see the module docstring."""

    title: str = ""
    units: str = ""
    #: one heading per column of the part (the stub column's is usually ""), or empty
    column_headers: list[str] = field(default_factory=list)
    #: the label line printed right above a table that continues another's columns
    row_group: str = ""
    #: the figure columns: column -> (x0, x1) of their cells (figures are set flush right: a later
    #: part whose columns end where these do continues this one's columns)
    figures: dict[int, tuple[float, float]] = field(default_factory=dict)
    #: the lines of headings above the grid that ``column_headers`` was read from: (box, text) each
    heads: list[tuple[tuple[float, float, float, float], str]] = field(default_factory=list)


def units_of(text: str) -> str:
    """The units ``text`` states: the parenthesis holding them ("in millions, except per share
    data"), else the words themselves ("in millions"); "" when it states none."""
    m = _UNITS_RE.search(text)
    if m is None:
        return ""
    start, end = text.rfind("(", 0, m.start() + 1), text.find(")", m.end() - 1)
    if start >= 0 and end >= 0 and ")" not in text[start : m.start()]:
        return " ".join(text[start + 1 : end].split())
    return m.group(0)


def _figure_columns(part: _Part) -> dict[int, tuple[float, float]]:
    """The columns (after the first) most of whose filled cells are figures: col -> (x0, x1) of
    the cells' extent, a column of ``$`` signs just before one included (its heading is centred
    over sign and figure)."""
    out: dict[int, tuple[float, float]] = {}
    sign_x0: float | None = None
    for c in range(1, part.n_cols):
        texts, boxes = [], []
        for r, row in enumerate(part.rows):
            t = row[c] if c < len(row) else None
            if r < part.header_rows and t and t.strip() in _SIGNS:
                # a sign heading its column ("$", "%" under "2016 vs. 2015"): the column's unit,
                # not a cell of words; a statement of one row counted it against the figure
                continue
            if t and t.strip():
                texts.append(t.strip())
                bb = (
                    part.row_bboxes[r][c]
                    if r < len(part.row_bboxes) and c < len(part.row_bboxes[r])
                    else None
                )
                if bb is not None:
                    boxes.append(bb)
        x0 = min(b[0] for b in boxes) if boxes else part.col_edges[c]
        x1 = max(b[2] for b in boxes) if boxes else part.col_edges[c + 1]
        if texts and all(t in _LEADING for t in texts):
            sign_x0 = x0
            continue
        nums = sum(_is_num(_bare(t)) or t in ("—", "–", "-") for t in texts)
        if texts and nums >= 0.6 * len(texts):
            out[c] = (min(x0, sign_x0) if sign_x0 is not None else x0, x1)
        sign_x0 = None
    return out


def _bare(text: str) -> str:
    """A figure less the currency sign set apart before it and a per cent sign after its ")"
    ("$ (10,138)", "(39)%"): the number a reader sees."""
    words = text.split()
    if len(words) == 2 and words[0] in _LEADING:
        text = words[1]
    return text[:-1] if text.endswith(")%") else text


def _header_is_data(part: _Part, figures: Sequence[int]) -> bool:
    """Whether the part's detected header rows hold figures that are neither years nor column
    numbers: a data row the finder promoted ("| Products | $ | 294,866 |" as the header of an
    income statement). Column numbers are small integers rising left to right ("1 2 3 4")."""
    for row in part.rows[: part.header_rows]:
        cells = [(row[c] or "").strip() if c < len(row) else "" for c in figures]
        # a day before its comma ("28,") is a date's, cut from its month by a column edge (a sign
        # column's: "September" over the "$", "28," over the figures); no figure ends in a comma
        numbers = [
            t
            for t in cells
            if t and _is_num(t) and not _YEAR_RE.match(t.replace(" ", "")) and not t.endswith(",")
        ]
        if numbers and not _column_numbers(numbers):
            return True
    return False


def _column_numbers(texts: list[str]) -> bool:
    values = [int(t) for t in texts if t.isdigit() and len(t) <= 2]
    return len(values) == len(texts) > 1 and all(a < b for a, b in itertools.pairwise(values))


def _chunks(band: list[_Word], gap: float) -> list[list[_Word]]:
    """A band's words in phrases, cut where the gap between words is wider than ``gap``."""
    band = sorted(band, key=lambda w: w.x0)
    out = [[band[0]]]
    for w in band[1:]:
        if w.x0 - out[-1][-1].x1 > gap:
            out.append([w])
        else:
            out[-1].append(w)
    return out


def find_context(
    part: _Part, lines: Sequence[Line], words: Sequence[_Word], previous: _Part | None
) -> TableContext:
    """The context of ``part`` on its page (``lines``, ``words``); ``previous`` is the part right
    above it on the same page, whose context (``part_context``) it may continue."""
    ctx = TableContext()
    figures = _figure_columns(part)
    if not figures:
        return ctx
    ctx.figures = figures
    if part.header_rows and _header_is_data(part, list(figures)):
        part.header_rows = 0
    left = min(x0 for x0, _ in figures.values()) - 8.0
    spans = _head_spans(part)
    # as far right as the figures, or the grid's own heads over columns no row fills yet (a change
    # statement's "$" and "%" on a page of one row without a change: "(Decrease)" was cut off)
    x_end = max([x1 for _, x1 in figures.values()] + [x1 for _, x1, _ in spans]) + 30.0
    top = part.bbox[1]
    floor = previous.bbox[3] if previous is not None else float("-inf")
    # a word whose middle is above the grid's top (stacked heading lines set tight overlap their boxes)
    above = [
        w
        for w in words
        if w.y0 + w.y1 <= 2 * top and w.y0 >= max(floor, top - _WINDOW) - 0.5 and w.x0 < x_end
    ]
    heading_bands: list[list[_Word]] = []
    edge = top
    stop_at = top - _WINDOW
    skipped = 0
    skipped_units = ""
    first_skipped = None  # the bottom of the nearest line passed over, where the title search starts
    for band in sorted(_bands(above), key=lambda b: -max(w.y1 for w in b)):
        height = statistics.median(w.y1 - w.y0 for w in band)
        y1 = max(w.y1 for w in band)
        if edge - y1 > _HEADING_GAP * height:
            stop_at = y1
            break
        if min(w.x0 for w in band) < left:
            # Between the grid and its headings a statement may print a section label ("Net
            # sales:") or a row the finder left out (a balance whose label wraps): look past up
            # to three such bands, until a heading is found; anything else ends the search.
            label_only = max(w.x1 for w in band) < left
            figures_only = all(_is_num(w.text) or w.text in _LEADING for w in band if w.x0 >= left)
            if not heading_bands and skipped < 3 and (label_only or figures_only):
                skipped += 1
                first_skipped = y1 if first_skipped is None else first_skipped
                edge = min(w.y0 for w in band)
                text = " ".join(w.text for w in sorted(band, key=lambda w: w.x0))
                if label_only and part.header_rows and is_units(text) and units_of(text) == text.strip("() "):
                    # the units alone over the stub of a grid holding its own heads ("(in millions)")
                    skipped_units = skipped_units or units_of(text)
                continue
            stop_at = y1
            break
        text = " ".join(w.text for w in sorted(band, key=lambda w: w.x0))
        if part.header_rows and is_units(text) and units_of(text) == text.strip("() "):
            # the units line under the title, over a grid that holds its own headings: the
            # units of every column, not a heading of each ("(in millions)" 9 times). Over a
            # grid without them it may sit under the periods ("Year Ended" / dates / "(In
            # millions)"), and the headings are looked for above it as before
            stop_at = y1
            break
        if _CAPTION_RE.match(text) and len(_chunks(band, 0.8 * height)) == 1:
            # "Table 1: State-wise coverage ..." centred over the grid is its caption, no heading
            # of every column (it was folded into each column's head, nine times over a survey)
            stop_at = y1
            break
        heading_bands.append(band)
        edge = min(w.y0 for w in band)
    texts = [" ".join(w.text for w in sorted(b, key=lambda w: w.x0)) for b in heading_bands]  # nearest first
    if heading_bands:
        row_bottom = max((b[3] for b in part.row_bboxes[0] if b is not None), default=top)
        first = [w for w in words if top <= (w.y0 + w.y1) / 2 <= row_bottom and left <= w.x0 < x_end]
        ctx.column_headers = _assign(heading_bands, figures, part.n_cols, first, spans)
        stop_at = edge
        if any(ctx.column_headers) and not skipped:
            # those lines are the table's now, not paragraphs above it (not across lines passed
            # over between them and the grid: a label or a units line, which would read before
            # them); a line of signs alone ("%", "+" over a chart's grid) heads nothing
            ctx.heads = [
                (_union([(w.x0, w.y0, w.x1, w.y1) for w in b]), t)
                for b, t in zip(heading_bands, texts, strict=True)
                if any(ch.isalnum() for ch in t)
            ]
    ctx.units = next((units_of(t) for t in reversed(texts) if is_units(t)), "") or skipped_units
    prev = getattr(previous, "context", None) if not heading_bands else None
    if prev is not None and prev.column_headers and _aligned(figures, prev.figures):
        group = _label_between(lines, previous.bbox[3], top, left)
        if group is not None:  # the next section of the statement above: its headings and title
            ctx.column_headers = _remap(prev, figures, part.n_cols)
            ctx.title, ctx.units, ctx.row_group = prev.title, ctx.units or prev.units, group
            return ctx
    ctx.title, units = _title(part, lines, stop_at + 0.5, floor)
    if not heading_bands and first_skipped is not None:
        # no heading over the figures, and lines passed over as left of them: over a grid holding
        # its own heads, a title and units centred on a page wider than narrow figure columns
        # ("Consolidated Balance Sheets" over "(in millions ...)"), or the last line of a sentence
        # leading into the table ("... were as follows (in millions):"), are such lines. The search
        # above began where the heading search stopped: above them all where it ran out of lines
        # (no title), at the title or the sentence's line before where that crossed into the
        # figures (the units line under it, the sentence's colon lost). From the nearest line
        # passed over, first; as before where that finds none (those lines are rows the grid left
        # out, "Consolidated Statements of Operations ... 29" under an index's "Page").
        title, near_units = _title(part, lines, first_skipped + 0.5, floor)
        if title:
            ctx.title, units = title, near_units or units
        else:
            units = units or near_units
    ctx.units = ctx.units or units
    return ctx


def _head_spans(part: _Part) -> list[tuple[float, float, list[int]]]:
    """The cells of the part's first header row that span columns (a head over a group of columns:
    the cells it covers are None) right of the stub, over a last header row of years and signs
    (``_periods_and_signs``): their x extents and columns."""
    if part.header_rows < 2 or not part.rows or not _periods_and_signs(part.rows[part.header_rows - 1][1:]):
        return []
    row, boxes = part.rows[0], part.row_bboxes[0] if part.row_bboxes else []
    out = []
    for c, t in enumerate(row):
        if c and t and c + 1 < len(row) and row[c + 1] is None and c < len(boxes) and boxes[c] is not None:
            e = c + 1
            while e + 1 < len(row) and row[e + 1] is None:
                e += 1
            out.append((boxes[c][0], boxes[c][2], list(range(c, e + 1))))
    return out


def _assign(
    bands: list[list[_Word]],
    figures: dict[int, tuple[float, float]],
    n_cols: int,
    grid_top: list[_Word] | None = None,
    spans: Sequence[tuple[float, float, list[int]]] = (),
) -> list[str]:
    """Each heading band's phrases placed over figure columns, joined per column top first
    (``bands`` nearest the grid first; ``grid_top``: the words of the grid's first line, under them;
    ``spans``: the x extents of the grid's first-row heads over groups of columns: a phrase over one
    of them heads that group, the top line of a head stacked over two lines)."""
    centres = {c: (x0 + x1) / 2 for c, (x0, x1) in figures.items()}
    xs = sorted(centres.values())
    pitch = statistics.median(b - a for a, b in itertools.pairwise(xs)) if len(xs) > 1 else 40.0
    parts: dict[int, list[str]] = {c: [] for c in range(n_cols)}

    def phrases_of(band: list[_Word]) -> list[list[_Word]]:
        return _chunks(band, 0.8 * statistics.median(w.y1 - w.y0 for w in band))  # a space: ~0.3 of it

    for i in reversed(range(len(bands))):  # top first; bands[i - 1] is the band under bands[i]
        phrases = phrases_of(bands[i])
        below = bands[i - 1] if i else grid_top
        phrases_below = phrases_of(below) if below else []
        for words in phrases:
            x0, x1 = words[0].x0, words[-1].x1
            text = " ".join(w.text for w in words)
            # the top line of one column's stacked heading ("Current" over "Marketable" over
            # "Securities") sits off the middle of the figure columns, mostly over a phrase of the
            # band under it at least as wide as itself; a heading of every column ("Years ended"
            # over the years, "[In thousands]") is centred over them, or wider than what it heads,
            # or has nothing under it, or names the units
            under = [p for p in phrases_below if p[0].x0 < x1 and x0 < p[-1].x1]
            stacked = (
                len(under) == 1
                and under[0][-1].x1 - under[0][0].x0 >= x1 - x0
                and min(x1, under[0][-1].x1) - max(x0, under[0][0].x0) >= (x1 - x0) / 2
                and abs((x0 + x1) / 2 - (xs[0] + xs[-1]) / 2) > pitch / 2
                and not is_units(text)
            )
            group = next((g for g in spans if g[0] <= (x0 + x1) / 2 <= g[1]), None)
            # one phrase heads every column, but not one set beside every group head of the grid's
            # first row ("2016 vs. 2015" over the change columns, right of "Year Ended December 31,")
            beside = bool(spans) and not any(x0 < g[1] and g[0] < x1 for g in spans)
            if group is not None:
                cols = group[2]
            elif len(phrases) == 1 and len(centres) > 1 and not stacked and not beside:
                cols = list(centres)
            else:
                cols = [c for c, m in centres.items() if x0 - pitch / 2 <= m <= x1 + pitch / 2]
                if len(cols) > 1 and x1 - x0 < pitch * 0.9:  # a narrow phrase heads one column
                    cols = [min(cols, key=lambda c: abs(centres[c] - (x0 + x1) / 2))]
            cols = cols or [min(centres, key=lambda c: abs(centres[c] - (x0 + x1) / 2))]
            for c in cols:
                parts[c].append(text)
    return [" ".join(parts[c]) for c in range(n_cols)]


def _aligned(fa: dict[int, tuple[float, float]], fb: dict[int, tuple[float, float]]) -> bool:
    """Same number of figure columns, the last ending where the other's does (within 8 pt), the
    others within 16 (a parenthesised negative or a sign column moves a column's edge a little)."""
    a, b = sorted(x1 for _, x1 in fa.values()), sorted(x1 for _, x1 in fb.values())
    if len(a) != len(b) or not a:
        return False
    return abs(a[-1] - b[-1]) <= 8.0 and all(abs(x - y) <= 16.0 for x, y in zip(a, b, strict=True))


def _remap(prev: TableContext, figures: dict[int, tuple[float, float]], n_cols: int) -> list[str]:
    """The previous part's headings on this part's columns (figure columns matched in order)."""
    out = [""] * n_cols
    for pc, c in zip(sorted(prev.figures), sorted(figures), strict=False):
        if pc < len(prev.column_headers):
            out[c] = prev.column_headers[pc]
    return out


#: what may stand between two parts of one statement: a row label of a few lines, no prose
_MAX_LABEL_LINES, _MAX_LABEL_CHARS = 3, 160


def _label_between(lines: Sequence[Line], y_from: float, y_to: float, left: float) -> str | None:
    """The label printed between two parts of one statement ("Investing activities:"), "" when
    nothing is, None when what is there is not a label (prose, a sentence: two tables)."""
    found = sorted(
        (ln for ln in lines if ln.bbox[1] >= y_from - 1 and ln.bbox[3] <= y_to + 1), key=lambda ln: ln.bbox[1]
    )
    text = " ".join(" ".join(ln.text.split()) for ln in found)
    if (
        len(found) > _MAX_LABEL_LINES
        or len(text) > _MAX_LABEL_CHARS
        or any(ln.bbox[0] >= left for ln in found)
        or text.endswith(".")
    ):
        return None
    return text


def _title(part: _Part, lines: Sequence[Line], below: float, floor: float) -> tuple[str, str]:
    """(title, units) from the lines above ``below`` (nearest first) down to ``floor``."""
    if part.caption:
        return part.caption, ""
    units = ""
    body = _body_size(part, lines)
    cands = sorted(
        (ln for ln in lines if ln.bbox[3] <= below and ln.bbox[1] >= max(floor, below - _WINDOW) - 0.5),
        key=lambda ln: -ln.bbox[3],
    )
    for ln in cands[:4]:
        text = " ".join(ln.text.split())
        if not any(c.isalnum() for c in text):  # a colon set apart from its line reads as a line
            continue
        if is_units(text) and len(text) <= 160:
            units = units or units_of(text)
            if text.startswith("("):
                continue
        if text.endswith(":") and len(text) > 20:  # the sentence that introduces the table
            block = [x for x in cands if x.block == ln.block and x.block >= 0] or [ln]
            joined = " ".join(" ".join(x.text.split()) for x in sorted(block, key=lambda x: x.bbox[1]))
            return _lead_in(joined), units or units_of(joined)
        if text.endswith(".") or len(text) > 100 or _is_num(text):
            break
        if ln.bold or text.isupper() or ln.size > body or _CAPTION_RE.match(text):
            return text, units
    return "", units


#: a sentence's start after the end of the one before it
_SENTENCE_START = re.compile(r"(?<=[.!?;])\s+(?=[\"“‘(]?[A-Z0-9])")


def _lead_in(text: str, most: int = 300) -> str:
    """The end of a paragraph that introduces a table, as its title: as many of its last whole
    sentences as ``most`` characters hold, or the last one from a word's start. Its last 300
    characters began inside a word ("ranty expense is recorded ...", "ghted-average interest ...")."""
    if len(text) <= most:
        return text
    for start in (m.end() for m in _SENTENCE_START.finditer(text)):
        if len(text) - start <= most:
            return text[start:]
    tail = text[-most:]
    return tail[tail.find(" ") + 1 :] if " " in tail else tail


def _body_size(part: _Part, lines: Sequence[Line]) -> float:
    sizes = [ln.size for ln in lines if ln.bbox[1] >= part.bbox[1] and ln.bbox[3] <= part.bbox[3]]
    return statistics.median(sizes) if sizes else 0.0


# ------------------------------------------------------------------------------- symbol columns


def _labels_into_stub(
    table: Table, by_pos: dict[tuple[int, int], Cell], text: Callable[[int, int], str]
) -> None:
    """Words the column right of the stub holds in a table that sets its currency signs apart there
    go to the stub (in place): the end of a row label longer than the others ("Purchases of
    marketable | securities"), or a group's label centred over the table ("ASSETS"), cut at the
    gutter between the stub and the signs. Left there, the column held more than signs and no
    "$" of the table was folded into its figure. Only where the column holds signs on as many rows
    as words, every word cell one column wide and without a digit."""
    col = {r: text(r, 1) for r in range(table.header_rows, table.n_rows)}
    signs = [r for r, t in col.items() if t in _LEADING]
    words = [r for r, t in col.items() if t and t not in _LEADING]
    if not words or len(signs) < max(2, len(words)):
        return
    if any(
        by_pos[(r, 1)].col_span > 1 or not _WORD_RE.search(col[r]) or any(ch.isdigit() for ch in col[r])
        for r in words
    ):
        return
    joined: list[Cell] = []
    for r in words:
        cell = by_pos.pop((r, 1))
        stub = by_pos.get((r, 0))
        if stub is None:
            cell.col = 0
            by_pos[(r, 0)] = cell
            continue
        stub.text = f"{stub.text.rstrip()} {cell.text.strip()}"
        if stub.bbox is not None and cell.bbox is not None:
            stub.bbox = _union([stub.bbox, cell.bbox])
        joined.append(cell)
    gone = {id(c) for c in joined}
    table.cells = [c for c in table.cells if id(c) not in gone]


def _fold_target(texts: list[str]) -> str | None:
    """'right' for a column of only leading signs ($, €, '('), 'left' for trailing ones (%, ')'),
    'drop' for an empty spacer column, None for a column with content of its own."""
    filled = [t for t in texts if t]
    if not filled:
        return "drop"
    if all(t in _LEADING for t in filled):
        return "right"
    if all(t in _TRAILING for t in filled):
        return "left"
    return None


def _union(boxes: list[Any]) -> Any:
    real = [b for b in boxes if b is not None]
    if not real:
        return None
    return (
        min(b[0] for b in real),
        min(b[1] for b in real),
        max(b[2] for b in real),
        max(b[3] for b in real),
    )


def _label_alone(cell: Cell, by_pos: dict[tuple[int, int], Cell], n_cols: int) -> bool:
    """``cell`` holds words and no figure, and the other cells of its row are empty."""
    text = " ".join(cell.text.split())
    if not text or _is_num(text) or not any(ch.isalpha() for ch in text):
        return False
    return not any(
        (other := by_pos.get((cell.row, k))) is not None and other is not cell and other.text.strip()
        for k in range(n_cols)
    )


def fold_symbol_columns(table: Table) -> Table:
    """``table`` with its sign-only and empty columns folded into their figures (in place).

    A lone currency sign a stream finder glued to the end of the figure before it ("78,509 $")
    goes back to the start of the figure (or the nil's dash) it precedes. A body cell spanning
    columns is folded only where every column it spans past its first is empty or sign-only in the
    other rows (a long row label running over the empty cells beside it, as a wrapped label's first
    line does): it then spans what stays, like a heading. Tables with another body span are left
    as they are (which column a span would move with is not clear), but for a label alone on its
    row set across the columns of a table with a column of currency signs (a statement's group
    label centred over it): the row's label, the stub's cell. The column headings move with their
    columns; a folded column's heading joins its target's.
    """
    if table.n_cols < 2:
        return table
    by_pos = {(c.row, c.col): c for c in table.cells}

    def text(r: int, c: int) -> str:
        cell = by_pos.get((r, c))
        return " ".join(cell.text.split()) if cell is not None else ""

    _labels_into_stub(table, by_pos, text)

    def kind_of(c: int) -> str | None:
        return _fold_target([text(r, c) for r in range(table.header_rows, table.n_rows)]) if c else None

    def blocks(c: Cell) -> bool:
        return kind_of(c.col) is not None or any(
            kind_of(k) is None for k in range(c.col + 1, c.col + c.col_span)
        )

    spans = [c for c in table.cells if c.col_span > 1 and c.row >= table.header_rows]
    # a label alone on its row set across the figure columns ("LIABILITIES AND EQUITY:" centred
    # over a statement that sets its currency sign apart) is the row's label: the stub's cell, the
    # columns it ran over empty
    currency = any(kind_of(c) == "right" for c in range(1, table.n_cols))
    labels = [c for c in spans if currency and blocks(c) and _label_alone(c, by_pos, table.n_cols)]
    if any(blocks(c) for c in spans if c not in labels):
        return table
    for cell in labels:
        empty = [c for c in table.cells if c.row == cell.row and c is not cell]
        table.cells = [c for c in table.cells if not any(c is e for e in empty)]
        for c in [cell, *empty]:
            by_pos.pop((c.row, c.col), None)
        cell.col, cell.col_span = 0, 1
        by_pos[(cell.row, 0)] = cell
    spans = [c for c in spans if c not in labels]

    # a sign glued to the end of the cell before its figure; right to left, as that cell may be a
    # figure with the next one's sign glued to it ("$ — $" | "— $" | "57,698")
    for r in range(table.n_rows):
        for c in reversed(range(table.n_cols - 1)):
            cell = by_pos.get((r, c))
            words = cell.text.split() if cell is not None else []
            if len(words) > 1 and words[-1] in _LEADING and (nxt := by_pos.get((r, c + 1))) is not None:
                if _is_num(nxt.text) or _NIL_RE.match(nxt.text.strip()):  # a figure, or a nil's dash
                    cell.text = " ".join(words[:-1])
                    nxt.text = f"{words[-1]} {nxt.text.strip()}"
    # what a column holds below its header rows decides; a heading over a sign column (a period
    # printed flush left over its "$") joins the heading of the figure it folds into
    kinds = {c: kind_of(c) for c in range(table.n_cols)}
    for c, kind in kinds.items():  # a column with a heading and nothing under it is a column
        heading = [text(r, c) for r in range(table.header_rows)]
        heading.append(table.column_headers[c] if c < len(table.column_headers) else "")
        if kind == "drop" and any(heading):
            kinds[c] = None
    own = [c for c in range(table.n_cols) if kinds[c] is None]
    if any(k in own for c in spans for k in range(c.col + 1, c.col + c.col_span)):
        return table  # a span over a column that stays (one with a heading of its own)
    fate: dict[int, tuple[str, int | None]] = {}
    for c, kind in kinds.items():
        if kind == "right" and (later := [k for k in own if k > c]):
            fate[c] = ("right", later[0])
        elif kind == "left" and (earlier := [k for k in own if k < c]):
            fate[c] = ("left", earlier[-1])
        elif kind is not None:
            fate[c] = ("drop", None)
    if not fate:
        return table

    def final(c: int) -> int:
        return fate[c][1] if c in fate and fate[c][1] is not None else c

    keep = [c for c in range(table.n_cols) if c not in fate]
    if not keep:
        return table
    new_index = {c: i for i, c in enumerate(keep)}
    merged: dict[tuple[int, int], Cell] = {}
    signs: dict[tuple[int, int], tuple[list[str], list[str]]] = {}
    heading_parts: dict[tuple[int, int], list[tuple[int, str]]] = {}
    boxes: dict[tuple[int, int], list[Any]] = {}  # where the folded text was printed
    for cell in sorted(table.cells, key=lambda c: (c.row, c.col)):
        c = cell.col
        kept = [k for k in range(c, c + cell.col_span) if k in new_index]
        if c in fate and cell.row < table.header_rows and cell.col_span > 1 and len(kept) > 1:
            # a head over a group of columns set from the sign left of its first figure: it heads
            # the columns of the group that stay ("2023 vs. 2022 Change" over "$" and "%")
            cell.col, cell.col_span = kept[0], c + cell.col_span - kept[0]
            c = kept[0]
        if c in fate:
            kind, _ = fate[c]
            t = " ".join(cell.text.split())
            if not t or final(c) in fate:
                continue
            boxes.setdefault((cell.row, new_index[final(c)]), []).append(cell.bbox)
            if cell.row < table.header_rows:
                heading_parts.setdefault((cell.row, new_index[final(c)]), []).append((c, t))
                continue
            lead, trail = signs.setdefault((cell.row, new_index[final(c)]), ([], []))
            (lead if kind == "right" else trail).append(t)
            continue
        if cell.col_span > 1:  # a heading over several columns spans those of them that stay
            cell.col_span = max(1, sum(1 for k in range(c, c + cell.col_span) if k in new_index))
        cell.col = new_index[c]
        merged[(cell.row, cell.col)] = cell
    for (r, c), pieces in heading_parts.items():
        cell = merged.get((r, c))
        if cell is None:
            cell = merged[(r, c)] = Cell(
                row=r, col=c, text="", page_index=table.first_page_index, is_header=True
            )
        own = (keep[c], " ".join(cell.text.split()))
        cell.text = " ".join(t for _, t in sorted([*pieces, own]) if t)
    for (r, c), (lead, trail) in signs.items():
        cell = merged.get((r, c))
        if cell is None:  # a sign beside no figure still keeps the text printed there
            cell = merged[(r, c)] = Cell(row=r, col=c, text="", page_index=table.first_page_index)
        cell.text = " ".join(p for p in (" ".join(lead), cell.text.strip()) if p) + "".join(trail)
    for key, folded in boxes.items():
        cell = merged.get(key)
        if cell is not None:  # the cell covers what was folded into it (text accounting reads boxes)
            cell.bbox = _union([cell.bbox, *folded])
    if table.column_headers:
        heads = [""] * len(keep)
        for c, h in enumerate(table.column_headers):
            target = final(c)
            if target in new_index and h and not heads[new_index[target]]:
                heads[new_index[target]] = h
        table.column_headers = heads
    table.cells = list(merged.values())
    table.n_cols = len(keep)
    return table


# ------------------------------------------------------------------------------ stacked heads


def _periods_and_signs(cells: Sequence[str | None]) -> bool:
    """Header cells right of the stub that hold a comparison table's line of years and its change
    columns' "$" and "%" (``words._years_and_signs``; empty cells aside)."""
    return _years_and_signs([" ".join(t.split()) for t in cells if t and t.strip()])


def _stacked_periods(table: Table, text: Callable[[int, int], str]) -> bool:
    """The header rows are one period head per column stacked over lines ("September 28," over
    "2024"; "Three months ended" over "June 30, 2024"): right of the stub every header row fills
    the same columns, one cell each (no head spans columns), the last row's cells end in a year and
    the rows above hold no figure. A stream finder keeps such lines apart when a head centred over
    its column's "$" reaches over the sign's own column (a head spanning two columns): once the
    sign column is folded into its figure (``fold_symbol_columns``) the lines line up again."""
    h = table.header_rows
    if any(c.row < h and c.col_span > 1 for c in table.cells):
        return False
    filled = [{c for c in range(1, table.n_cols) if text(r, c)} for r in range(h)]
    if not filled[0] or any(f != filled[0] for f in filled):
        return False
    last = [text(h - 1, c).split()[-1] for c in filled[0]]
    upper = [text(r, c) for r in range(h - 1) for c in filled[0]]
    return all(_YEAR_RE.match(t) for t in last) and not any(_is_num(t) or _YEAR_RE.match(t) for t in upper)


def merge_stacked_heads(table: Table) -> Table:
    """``table`` with its header rows made one (in place) where they print heads over groups of
    columns above a line of periods and signs: a comparison table's "Year Ended December 31," over
    its years and "2023 vs. 2022 Change" over a "$" and a "%" column. Each column's heads join top
    first ("Year Ended December 31, 2023", "2023 vs. 2022 Change $"), as a reader quotes them; a
    stub head that states the units ("(Dollars in millions)") becomes the table's ``units``.

    Only where the last header row holds, right of the stub, years and lone signs alone (a year
    among them) and a row above it holds a head spanning some of the columns but not all of them:
    a head over every figure column is the columns' context (``find_context``), and header rows of
    labels keep their own rows. Or where the header rows are one period head per column stacked over
    lines (``_stacked_periods``: "December 31," over "2023"), each column's lines joined top first.
    """
    h = table.header_rows
    if h < 2 or table.n_cols < 2:
        return table
    by_pos = {(c.row, c.col): c for c in table.cells}

    def text(r: int, c: int) -> str:
        cell = by_pos.get((r, c))
        return " ".join(cell.text.split()) if cell is not None else ""

    if _stacked_periods(table, text):
        return _one_header_row(table, {(c.row, c.col): (c.col, c.col + 1) for c in table.cells if c.row < h})
    if table.n_cols < 3 or not _periods_and_signs([text(h - 1, c) for c in range(1, table.n_cols)]):
        return table
    upper = [c for c in table.cells if c.row < h - 1 and c.col > 0 and " ".join(c.text.split())]
    spans = [c for c in upper if c.col_span > 1]
    if not spans or any(c.col == 1 and c.col_span >= table.n_cols - 1 for c in spans):
        return table
    # a head of one column over a head spanning a group (the top line of a stacked head the finder
    # cut at a column's edge) heads the group too; bottom up, so a head over it does as well
    cover = {(c.row, c.col): (c.col, c.col + c.col_span) for c in table.cells if c.row < h}
    for r in range(h - 2, -1, -1):
        under = [v for (rr, _), v in cover.items() if rr == r + 1 and v[1] - v[0] > 1]
        for (rr, col), (a, b) in list(cover.items()):
            if rr == r and b - a == 1 and a > 0:
                cover[(rr, col)] = next((g for g in under if g[0] <= a < g[1]), (a, b))
    return _one_header_row(table, cover)


def _one_header_row(table: Table, cover: dict[tuple[int, int], tuple[int, int]]) -> Table:
    """``table``'s header rows made one (in place), each header cell's text joined, top first, to the
    columns ``cover`` gives it (by the cell's row and column: its columns from..to)."""
    h = table.header_rows
    heads: list[list[str]] = [[] for _ in range(table.n_cols)]
    boxes: list[list[Any]] = [[] for _ in range(table.n_cols)]
    for cell in sorted((c for c in table.cells if c.row < h), key=lambda c: (c.row, c.col)):
        t = " ".join(cell.text.split())
        a, b = cover[(cell.row, cell.col)]
        for k in range(a, min(table.n_cols, b)):
            if t:
                heads[k].append(t)
            boxes[k].append(cell.bbox)
    context = table.column_headers
    if context and not all(context[k] for k in range(1, min(len(context), table.n_cols))):
        # heads printed above the grid over some of its columns (the top line of a stacked head)
        for k, t in enumerate(context[: table.n_cols]):
            if t:
                heads[k].insert(0, t)
        table.column_headers = []
    stub = " ".join(heads[0])
    if stub and is_units(stub) and units_of(stub) == stub.strip("() "):
        table.units = table.units or units_of(stub)
        heads[0] = []
    page = min((c.page_index for c in table.cells if c.row < h), default=table.first_page_index)
    new = [
        Cell(row=0, col=k, text=" ".join(heads[k]), page_index=page, bbox=_union(boxes[k]), is_header=True)
        for k in range(table.n_cols)
        if heads[k] or boxes[k]
    ]
    body = [c for c in table.cells if c.row >= h]
    for cell in body:
        cell.row -= h - 1
    table.cells = new + body
    table.n_rows -= h - 1
    table.header_rows = 1
    return table
