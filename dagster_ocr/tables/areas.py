"""Where a stream table runs on a page: the lines of each table area, before any column is cut.

A table area is a run of lines with several chunks (words cut at wide gaps) that share column
gutters. What ends an area and what it carries over (a gap, a section label, a heading row of its
own, a wrapped cell, a caption) is decided here, and a note under a grid of figures whose sentence
runs across its gutters is left out of it (``_without_notes``); ``stream`` then cuts each area into
columns and rows and tells a table from prose set in columns.
"""

from __future__ import annotations

import itertools
import math
import re
import statistics

from dagster_ocr.tables.settings import _CAPTION_RE, TableSettings
from dagster_ocr.tables.words import (
    _OPENING_SIGNS,
    _SIGNS,
    _WORD_RE,
    _column_bounds,
    _column_cover,
    _figure_nil_or_mark,
    _figure_or_nil,
    _is_num,
    _reads_rtl,
    _TextLine,
    _Word,
    _words_text,
    is_units,
)

#: how near a head's centre (or either end) sits to the head's under it when the two stack
STACK_TOL = 1.5
#: a head's word: three letters or more (not a formula's index, "n", nor a figure)
_HEAD_WORD_RE = re.compile(r"[^\W\d_]{3}")


def _table_areas(lines: list[_TextLine], s: TableSettings) -> list[list[_TextLine]]:
    """Runs of consecutive multi-chunk lines (with short stub-only lines bridged) = table candidates.

    A table's body may be cut into sections: a label row (in the stub, spanning columns or centred,
    often with more space above) and sometimes a sub-heading under it. Such lines, and a wide gap,
    end the run only if the row after them does not go on with the table (``_resumes``: a data row
    set in the run's columns); bridged label lines are flagged (``_TextLine.label``)."""
    if not lines:
        return []
    h = statistics.median(ln.y1 - ln.y0 for ln in lines)
    lines = _figures_set_midway(lines, h, s)
    areas: list[list[_TextLine]] = []
    cur: list[_TextLine] = []
    pending: list[_TextLine] = []
    held: list[_TextLine] = []  # label lines that end the run unless the next row resumes it
    wrapped = 0  # leading pending lines that go on with a text cell of the row above
    conts: set[int] = set()  # ids of lines that go on with a wrapped row label (not bridged lines)
    apart: set[int] = set()  # ids of held lines that go on with a cell right of the stub, set apart
    before: list[_TextLine] = []  # the last one-chunk lines outside any area

    def labels_alone() -> int:
        """The pending lines that are rows of a label alone, not a wrapped label's lines."""
        return len(pending) - sum(id(x) in conts for x in pending)

    def close() -> None:
        # the last row's wrapped lines belong to it; other pending lines (a caption, a note) do not
        if cur:
            areas.append(cur + pending[:wrapped])

    for ln in lines:
        multi = len(ln.chunks) >= 2
        if cur:
            last = held[-1] if held else pending[-1] if pending else cur[-1]
            gap = ln.y0 - last.y1
            if gap > s.max_row_gap * h:
                # a section's space: the table goes on under it if a label or a data row follows
                go_on = gap <= s.max_section_gap * h and (
                    _resumes(cur, ln, h, s)
                    if multi
                    else len(held) < s.max_bridge_lines and _label_line(ln, cur, h)
                )
                if not go_on:
                    close()
                    cur, pending, wrapped, held = [], [], 0, []
                elif not multi:
                    held.append(ln)
                    continue
        if multi:
            if cur and not held and _opens_table(cur, pending, ln, h):
                close()
                cur, pending, wrapped = [], [], 0
            elif (
                cur
                and not held
                and labels_alone() > s.max_bridge_lines
                and not _resumes(cur, ln, h, s, indented=_reads_on(ln))
                # the first rows' labels (each perhaps wrapped) under heads that leave the stub
                # blank, taken in as such (their lines counted there): the heads' table goes on
                and not all(_label_under_heads(x, cur, h) for x in pending)
            ):
                # more rows of a label alone than a table bridges, not followed by a row in the
                # table's columns: the table ended above them
                close()
                cur, pending, wrapped, before = [], [], 0, pending[-3:]
            if held:
                # the last held line is the first line of a row label that wraps onto this line,
                # beside that row's figures: a stub cell, not a label, however deep the stub indents it
                wraps = _reads_on(ln) and abs(ln.x0 - held[-1].x0) <= 3 * h
                if _resumes(cur, ln, h, s, indented=wraps):
                    for x in held[:-1] if wraps else held:
                        x.label = id(x) not in apart
                    pending.extend(held)
                else:
                    close()
                    cur, pending, wrapped = [], [], 0
                held = []
            if cur:
                for x in pending:  # a group's label centred under the heads: a row label
                    kind = _label_under_heads(x, cur, h)
                    if kind == "over" or (kind == "stub" and _centred_over_rows(x, [*cur, ln], h)):
                        x.label = x.stub = True
                _flag_labels(cur, pending, ln, s)
                cur.extend(pending)
            else:
                cur.extend(_label_above(ln, before, h, s) or _heads_above(ln, before, h, s))
            pending, wrapped = [], 0
            cur.append(ln)
            continue
        if not cur:
            before = [*before[-3:], ln]
            continue
        if _CAPTION_RE.match(_words_text(ln.words)):
            # a "Table N" caption opens a table: whatever aligned above it (a running header, the
            # table before) is not this table's first rows
            close()
            cur, pending, wrapped, held = [], [], 0, []
            continue
        # A single-chunk line inside a table: a stub-only row (section label, wrapped stub) starts in
        # the first column; a centred caption or a paragraph does not.
        left = min(x.x0 for x in cur)
        right = max(x.x1 for x in cur)
        if held:
            if (len(held) < s.max_bridge_lines and _label_line(ln, cur, h)) or (
                len(held) < 4 * s.max_bridge_lines
                and id(held[-1]) in apart
                and _under_cell_line(ln, held[-1], h, s)
            ):
                held.append(ln)
                if id(held[-2]) in apart:
                    apart.add(id(ln))
                continue
            close()
            cur, pending, wrapped, held, before = [], [], 0, [], [ln]
        elif len(pending) < 4 * s.max_bridge_lines and (
            _wrapped_cell_line(ln, cur, pending, h, s)
            or (_label_continuation(ln, cur, pending, h, s) and not conts.add(id(ln)))
        ):
            wrapped += wrapped == len(pending)
            pending.append(ln)
        elif (
            # rows of a label alone (empty rows of a sparse table), each perhaps wrapped: a few are
            # bridged; more only where a row in the table's columns follows them
            labels_alone() < 4 * s.max_bridge_lines
            and abs(ln.x0 - left) <= 3 * h
            and ln.x1 <= right + h
            and ln.x1 - ln.x0 < 0.6 * (right - left)
        ):
            pending.append(ln)
        elif sum(not _reads_on(x) for x in [*pending, ln]) <= _LABELS_UNDER_HEADS and all(
            # a label's wrapped lines (reading on in lower case) count with its first
            _label_under_heads(x, cur, h)
            for x in [*pending, ln]
        ):
            pending.append(ln)
        elif len(pending) < 4 * s.max_bridge_lines and _first_label_reads_on(ln, cur, pending, h, s):
            pending.append(ln)
        elif len(pending) < s.max_bridge_lines and (
            (under := _wrapped_cell_line(ln, cur, pending, h, s, near=False)) or _label_line(ln, cur, h)
        ):
            held.append(ln)
            if under:
                # a cell's line set apart below its row (a note under a name, in a row band of its
                # own height): it ends the table unless the next row goes on with it, as a label does
                apart.add(id(ln))
        else:
            close()
            cur, pending, wrapped, held, before = [], [], 0, [], [ln]
    close()
    for a in areas:
        _labels_set_alike(a, h)
    parts = (part for a in areas for part in _split_at_notes(a, s))
    return [a for a in (_without_notes(a, s) for a in parts) if len(a) >= s.min_rows]


def _labels_set_alike(area: list[_TextLine], h: float) -> None:
    """Flag a one-chunk line under the heads set as two of the area's section labels or more are,
    right of the stub (their middles within a point: labels centred over the table), or straight
    under a line of heads as one is, set on no head as a head's lower line would be: the first
    section's label, straight under the heads without the space the later ones have over them,
    reads as a head's lower line when it falls inside one column ("Part-time" under "Customer")."""
    first = next((k for k, x in enumerate(area) if len(x.chunks) >= 2), None)
    if first is None:
        return
    left = min(x.x0 for x in area[first:])
    mids = [(x.x0 + x.x1) / 2 for x in area[first:] if x.label and not x.stub and x.x0 > left + h]
    heads = area[first].chunks
    heads_only = not any(_is_num(_words_text(ch)) for ch in heads)
    for k, x in enumerate(area[first + 1 :]):
        mid = (x.x0 + x.x1) / 2
        if not x.label and len(x.chunks) == 1 and x.x0 > left + h and not _reads_on(x):
            alike = sum(abs(mid - m) <= 1.0 for m in mids)
            # one label alike will do for the line straight under a line of heads where it is set
            # on none of them, as a head's lower line would be
            x.label = alike >= 2 or (
                alike == 1
                and k == 0
                and heads_only
                and not any(_stacked_under(x.x0, x.x1, ch) for ch in heads)
            )


def _off_centre(x0: float, x1: float, head: list[_Word]) -> float:
    """How far the middle of words from ``x0`` to ``x1`` lies from ``head``'s middle."""
    return abs((x0 + x1) - (head[0].x0 + head[-1].x1)) / 2


def _stacked_under(x0: float, x1: float, head: list[_Word]) -> bool:
    """Words from ``x0`` to ``x1`` set under (or over) ``head`` as a head's other line is: centred
    on it, or level with one of its ends, to ``STACK_TOL``."""
    h0, h1 = head[0].x0, head[-1].x1
    return min(_off_centre(x0, x1, head), abs(x0 - h0), abs(x1 - h1)) <= STACK_TOL


def _figures_set_midway(lines: list[_TextLine], h: float, s: TableSettings) -> list[_TextLine]:
    """The lines with a row's figures set midway beside its wrapped label read on the label's line
    above them.

    A row label wrapped over an even number of lines, its figures centred on the row, puts the
    figures' line between two of the label's: it overlaps both by less than half a line, so the
    words band into a line of their own, and the stub's lines and the figures' come out as one-chunk
    lines in turn, none of them a row of the table (an area is a run of multi-chunk lines): the
    table was lost, or read a label line per row. Such a line (figures only, wholly right of the
    lines above and below it by more than a word space, overlapping both in height and as tall) is
    taken into the line above it, as if printed on its baseline: the label's line then holds the
    row's figures, as when they are set at its top. The line's extent takes the figures in (with the
    label's alone, their words fell outside the table's region and were read twice, in the table
    and as a paragraph: us-023), and it is marked ``wraps_on``: the line below is the label's rest,
    read on in the row whatever its first letter ("(HALex), ages 18-65 yrs").
    """
    out: list[_TextLine] = []
    gap = s.chunk_gap * h
    for k, ln in enumerate(lines):
        above = out[-1] if out else None
        below = lines[k + 1] if k + 1 < len(lines) else None
        tall = ln.y1 - ln.y0
        if (
            above is not None
            and below is not None
            and above.y1 <= below.y0 + 0.1 * h  # the two label lines do not overlap
            and above.y0 < ln.y0 < above.y1
            and below.y0 < ln.y1 < below.y1
            and above.x1 + gap < ln.x0
            and below.x1 + gap < ln.x0
            and 0.7 * tall <= above.y1 - above.y0 <= 1.4 * tall
            and all(_figure_or_nil(_words_text(ch)) for ch in ln.chunks)
        ):
            out[-1] = _TextLine(
                sorted([*above.words, *ln.words], key=lambda w: w.x0),
                [*above.chunks, *ln.chunks],
                wraps_on=True,
            )
            continue
        out.append(ln)
    return out


def _ends_in_figure(ln: _TextLine) -> bool:
    """Whether the line's last chunk is a figure or a nil's dash (a row of a table of figures)."""
    last = _words_text(ln.chunks[-1])
    return _figure_or_nil(last)


def _without_notes(area: list[_TextLine], s: TableSettings) -> list[_TextLine]:
    """The area less the note lines under its grid of figures (most lines above end in a figure or
    a nil's dash): a last line holding a sentence (four words or more, few figures) that runs across
    two or more of the gutters every line above keeps ("(1) Services net sales include amortization
    of ..." under a statement: its mark set apart, the line reads as two chunks and joined the area).

    With few rows no line may cross a gutter (``span_tolerance``), so such a note erased every
    gutter it ran over and the table read as two columns, three periods' figures in one cell; with
    many, its mark and sentence became a row. The note is text under the table, not a row of it:
    left out, it is read as the paragraph it is. Formulas and prose set in columns end their lines
    in other things, and keep their lines.
    """

    while len(area) > s.min_rows:
        rest = area[:-1]
        if 2 * sum(map(_ends_in_figure, rest)) < len(rest):
            break
        if _ends_in_figure(area[-1]) and sum(_is_num(_words_text(ch)) for ch in area[-1].chunks) >= 2:
            break  # a row: its label runs long, its figures stand in their columns ("Total ...")
        gutters = _column_bounds(rest, s)[1:-1]
        if not any(_sentence_across(ch, gutters) for ch in area[-1].chunks):
            break
        area = rest
    return area


def _sentence(chunk: list[_Word]) -> bool:
    """Four words or more, few figures: a sentence's words, not a row's cell."""
    return len(_WORD_RE.findall(_words_text(chunk))) >= 4 and 4 * sum(_is_num(w.text) for w in chunk) <= len(
        chunk
    )


def _sentence_across(chunk: list[_Word], gutters: list[float]) -> bool:
    """A sentence running across two or more of a grid's ``gutters``: a note, not a row."""
    return sum(chunk[0].x0 < g < chunk[-1].x1 for g in gutters) >= 2 and _sentence(chunk)


def _split_at_notes(area: list[_TextLine], s: TableSettings) -> list[list[_TextLine]]:
    """The area cut at a note under its grid of figures that another table follows.

    A statement's notes ("(1) Accrued purchases primarily reflects receipts of goods ...") and
    the next note's heading and lead-in sentence were bridged as the table's label rows where a
    table of the same columns follows ("Note 10 – Other Long-Term Liabilities", Tesla's 10-K): one
    area of two tables and their notes, the notes' words cut into its columns. A line that runs a
    sentence across two gutters of the grid of figures above it (most of whose lines end in a
    figure) ends the table; the lines after it up to the next line of cells (two chunks or more, no
    sentence among them: the next table's head) are text, and the rest is read again. A line
    whose grid above is not yet one of figures (a section's label under the heads, "Cash flows
    from investing activities:") is passed over: notes further down still end the table."""
    ends = list(itertools.accumulate(map(_ends_in_figure, area), initial=0))  # lines ending in a figure, by i
    h = 0.0  # the area's line height, once a note candidate needs it
    for i in range(s.min_rows, len(area)):
        ln = area[i]
        if ln.label or ends[i + 1] > ends[i] or not any(map(_sentence, ln.chunks)):
            continue
        grid = area[:i]
        if 2 * ends[i] < i:
            continue  # a section's label under the heads is no note: the grid has not begun
        gutters = _column_bounds(grid, s)[1:-1]
        if not any(_sentence_across(ch, gutters) for ch in ln.chunks):
            continue
        h = h or statistics.median(x.y1 - x.y0 for x in area)
        nxt = next((x for x in area[i + 1 : i + 1 + s.max_bridge_lines] if len(x.chunks) >= 2), None)
        if nxt is not None and _resumes(grid, nxt, h, s):
            # a row of figures in the grid's columns right under it, or under a label or two: the
            # next section's label ("Cash flows from operating activities:" after the revenues; a
            # group's "LIABILITIES AND SHAREHOLDERS' EQUITY" over "Current liabilities:")
            continue
        rest = area[i + 1 :]
        while rest and (len(rest[0].chunks) < 2 or any(map(_sentence, rest[0].chunks))):
            rest = rest[1:]
        return [grid, *_split_at_notes(rest, s)] if rest else [grid]
    return [area]


#: how many label lines (no figure) a statement may print between its period heads and its first
#: row of figures: a group's label over its first section's ("ASSETS:" over "Current assets:")
_LABELS_UNDER_HEADS = 2
#: a line of figures that are all years heads columns (a header), it is no data row
_YEAR_RE = re.compile(r"^(1[89]|20)\d\d$")
#: a period heading a column: a year, alone or after a few words and a day ("December 31, 2023",
#: "Fiscal 2024")
_PERIOD_RE = re.compile(r"^(?:[^\d\s]\S*,?\s+(?:\d{1,2},?\s+)?){0,3}(?:1[89]|20)\d\d$")
#: two years set against each other ("2023 vs. 2022", "2023-2022"): a change column's head
_YEAR_IN_RE = re.compile(r"\b(?:1[89]|20)\d\d\b")
#: a quarter or a half heading a column, as a year does ("Q1" to "Q4", "H1", "H2")
_PART_OF_YEAR_RE = re.compile(r"^[QH][1-4]$")
_IN_YEARS_RE = re.compile(
    r"(?:(?:1[89]|20)\d\d|[^\W\d_]{1,3}\.?|[-/–])(?:\s+(?:(?:1[89]|20)\d\d|[^\W\d_]{1,3}\.?|[-/–]))*"
)


def _flag_labels(cur: list[_TextLine], pending: list[_TextLine], ln: _TextLine, s: TableSettings) -> None:
    """Flag the bridged one-chunk lines that cross a gutter of the rows around them: a section's
    label set from the stub across the columns, which must not erase the gutters it crosses."""
    lines = [x for x in pending if not x.label]
    if not lines:
        return
    rows = [x for x in cur if len(x.chunks) >= 2 and not x.label] + [ln]
    inner = _column_bounds(rows, s)[1:-1]
    after = [*pending, ln]
    figures = any(_is_num(_words_text(ch)) for r in rows for ch in r.chunks[1:])
    for x in lines:
        nxt = after[after.index(x) + 1]
        # a row label wrapped over lines (one reading on from the line above, or going on in the
        # line below) beside rows of figures is a stub cell, where the columns are not known yet
        # from a few rows
        wrapped = figures and (_reads_on(x) or (_reads_on(nxt) and abs(nxt.x0 - x.x0) <= 3 * (x.y1 - x.y0)))
        if wrapped or _is_num(_words_text(x.words)):
            continue
        if any(x.x0 + 1 < e < x.x1 - 1 for e in inner) or _centred_in_a_column(x, rows, inner):
            x.label = True


def _centred_in_a_column(ln: _TextLine, rows: list[_TextLine], inner: list[float]) -> bool:
    """A section's label set centred over a table of three columns or more, right of its stub,
    short enough to fall inside one column ("Manufacturing" over the first year's figures): it
    crosses no gutter, yet it is the section's label, not that column's cell (``stream._area_cells``
    puts a label ``_centred_over`` the table in the stub). A line that reads on, or one over a
    column of text, is a cell's wrapped line (an address's second line, centred by chance)."""
    edges = [min(x.x0 for x in rows), *inner, max(x.x1 for x in rows)]
    if len(inner) < 2 or _reads_on(ln) or not _centred_over(ln, edges):
        return False
    # the cells under it in the rows holding a figure (or a mark) right of their stub, not heads
    data = [x for x in rows if any(_figure_nil_or_mark(_words_text(ch)) for ch in x.chunks[1:])]
    under = [_words_text(ch) for x in data for ch in x.chunks[1:] if ch[0].x0 < ln.x1 and ch[-1].x1 > ln.x0]
    return bool(under) and all(_figure_nil_or_mark(t) for t in under)


def _centred_over(ln: _TextLine, edges: list[float]) -> bool:
    """Whether a section's label ``ln`` is centred over the table ``edges`` bound, away from its
    stub: its middle within a line height of the table's ("Rural areas" set centred between a
    statistical table's sections falls inside a middle column, whose cell it is not)."""
    h = ln.y1 - ln.y0
    return ln.x0 > edges[1] and abs((ln.x0 + ln.x1) / 2 - (edges[0] + edges[-1]) / 2) <= h


def _reads_on(ln: _TextLine) -> bool:
    """The line starts mid-phrase: its first word begins with a lower-case letter, and it holds a
    word (a line of math starts with a variable as often)."""
    return ln.words[0].text[:1].islower() and bool(_WORD_RE.search(_words_text(ln.words)))


def _opens_table(cur: list[_TextLine], pending: list[_TextLine], ln: _TextLine, h: float) -> bool:
    """``ln`` heads a table of its own stacked under the table of ``cur``: set apart by more space
    than the rows above keep, it holds labels in three cells or more (and in most of the columns
    the rows above fill) and no figure but years (they head columns), under rows that hold
    figures. A table's body may be cut by a section's label; a row of column heads opens another
    table. With two columns a section's label beside one cell reads alike, so nothing is cut there.
    Heads over fewer than most of the columns above open a table only after a wider space (a
    narrower table stacked under a wide one, each between its own rules).
    """
    texts = [_words_text(ch) for ch in ln.chunks[1:]]
    if len(ln.chunks) < 3 or any(_is_num(t) and not _YEAR_RE.match(t) for t in texts):
        return False
    rows = [x for x in cur if len(x.chunks) >= 2]
    data = [x for x in rows if any(_is_num(_words_text(ch)) for ch in x.chunks[1:])]
    if len(data) < 2:
        return False
    gaps = [b.y0 - a.y1 for a, b in itertools.pairwise(cur)]
    usual = statistics.median(gaps) if gaps else 0.0
    above = (pending[-1] if pending else cur[-1]).y1
    if len(ln.chunks) < 0.6 * statistics.median(len(x.chunks) for x in rows):
        # heads over fewer columns than the rows above fill: a narrower table's, where a wider
        # space than a section's sets it apart (a section's heads repeat most of the columns)
        return ln.y0 - above > usual + 1.5 * h
    return ln.y0 - above > usual + 0.5 * h


def _label_line(ln: _TextLine, cur: list[_TextLine], h: float) -> bool:
    """A one-chunk line that may be a section's label inside a table: a few words, no figure,
    within the table's width (a title set across the columns, centred or from the stub)."""
    text = _words_text(ln.words)
    if _is_num(text) or len(text.split()) > 12 or _CAPTION_RE.match(text):
        return False
    left = min(x.x0 for x in cur)
    right = max(x.x1 for x in cur)
    # a section's head may stand out left of the stub's rows by a character or two
    return ln.x0 >= left - 2 * h and ln.x1 <= right + h


def _resumes(cur: list[_TextLine], ln: _TextLine, h: float, s: TableSettings, indented: bool = False) -> bool:
    """``ln`` goes on with the table of ``cur`` after a section's label or space: a data row set in
    its columns, under rows that already read as a table. It starts at the stub, holds a figure
    right of it (not a header of years), and none of its cells reaches across a gutter of the
    rows above. A table stacked under another opens with its own header: it does not resume.
    ``indented``: ``ln`` goes on with a wrapped row label, so it may start anywhere inside the stub
    (a sub-item's label set in two or three steps under its group), short of the first gutter."""
    rows = [x for x in cur if len(x.chunks) >= 2 and not x.label]
    data = [x for x in rows if any(_is_num(_words_text(ch)) for ch in x.chunks[1:])]
    if len(data) < 2 and max((len(x.chunks) for x in rows), default=0) < 3:
        return False  # not a table yet: two rows of figures, or a header of three cells, vouch for one
    # the body's columns: heads centred over a "$" and its figure cover the gutter between them
    gutters = _gutters(data if len(data) >= 2 else rows, s)
    left = min(x.x0 for x in rows)
    in_stub = indented and bool(gutters) and left < ln.x0 and ln.chunks[0][-1].x1 <= gutters[0][1]
    # a currency sign set apart before its figure ("$   42.17" on a section's first row) is no cell of
    # its own: most rows print none, so the gutters read from them have no column for it
    cells = sum(1 for ch in ln.chunks if _words_text(ch) not in _OPENING_SIGNS)
    if cells > len(gutters) + 1 and len(data) >= 2:
        # the rows so far fill fewer columns than the heads over them (a sparse table's first
        # section, its figures in one column): the heads' gutters count too, read from the head
        # lines alone where the rows under them leave their columns blank (a head line is within
        # the share of lines allowed to cross a gutter)
        heads = [
            x
            for x in rows
            if not any(
                _figure_nil_or_mark(t) and not _YEAR_RE.match(t)
                for ch in x.chunks[1:]
                if (t := _words_text(ch))
            )
        ]
        gutters = max(gutters, _gutters(rows, s), _gutters(heads, s) if heads else [], key=len)
    if cells > len(gutters) + 1 or (abs(ln.x0 - left) > 3 * h and not in_stub):
        return False
    if ln.x1 > max(x.x1 for x in rows) + 2 * h and not any(
        # a last column of text is set ragged right: a longer cell of it reaches further
        abs(ln.chunks[-1][0].x0 - x.chunks[-1][0].x0) <= h and not _is_num(_words_text(x.chunks[-1]))
        for x in rows
        if len(x.chunks) == len(ln.chunks)
    ):
        return False
    # a nil ("-", "—") or a statistical table's mark ("..", "x") fills a cell as a figure does: a
    # section's first row may have no amount
    figures = [t for ch in ln.chunks[1:] if _figure_nil_or_mark(t := _words_text(ch))]
    if not figures or all(_YEAR_RE.match(t) for t in figures):
        return False
    # a cell may reach into a gutter (a longer stub), not across it into the next column
    return not any(ch[0].x0 < a and ch[-1].x1 > b for ch in ln.chunks for a, b in gutters)


def _gutters(rows: list[_TextLine], s: TableSettings) -> list[tuple[float, float]]:
    """The x ranges between ``rows``' columns: no chunk of them (bar ``span_tolerance`` of the
    lines) covers them, at least ``min_col_gap`` line heights wide."""
    x0 = min(ln.x0 for ln in rows)
    h = statistics.median(ln.y1 - ln.y0 for ln in rows)
    n = int(math.ceil(max(ln.x1 for ln in rows) - x0)) + 1
    cover = _column_cover(rows, x0, n, chunks=True)
    limit = int(s.span_tolerance * len(rows))
    out: list[tuple[float, float]] = []
    i = 0
    while i < n:
        if cover[i] <= limit:
            j = i
            while j < n and cover[j] <= limit:
                j += 1
            if i > 0 and j < n and j - i >= s.min_col_gap * h:
                out.append((x0 + i, x0 + j))
            i = j
        else:
            i += 1
    return out


def _line_gap(lines: list[_TextLine], h: float, s: TableSettings) -> float:
    """The widest vertical gap a cell's wrapped line may leave to the line above: ``wrap_gap`` line
    heights, or the table's usual gap between lines where its rows are spaced as its lines are."""
    gaps = [b.y0 - a.y1 for a, b in itertools.pairwise(lines) if b.y0 > a.y1 - 0.2 * h]
    usual = statistics.median(gaps) if gaps else 0.0
    return max(s.wrap_gap * h, min(usual, h) + 0.1 * h)


def _wrapped_cell_line(
    ln: _TextLine,
    cur: list[_TextLine],
    pending: list[_TextLine],
    h: float,
    s: TableSettings,
    near: bool = True,
) -> bool:
    """A one-chunk line that goes on with a text cell of a column right of the stub.

    A description column wraps its cells over lines that hold nothing else; each starts where the
    cell above starts (text is set left) and ends before the next column, close below the line
    above, under a row that holds figures. Such lines do not end the table (the row builder joins
    them to their row, ``_continues_text``). ``near=False``: placed so, at any distance below.
    """
    multi: list[_TextLine] = []  # the last few multi-chunk lines, oldest first
    for x in reversed(cur):
        if len(x.chunks) >= 2:
            multi.insert(0, x)
            if len(multi) == 4:
                break
    ref = multi[-1]
    # right of the stub: a right-to-left table's stub is its rightmost cell
    cells = ref.chunks[:-1] if _reads_rtl(ref.words) else ref.chunks[1:]
    if not any(_is_num(_words_text(ch)) for ch in cells) and not (len(cur) == 1 and len(ref.chunks) >= 3):
        # a data row's figures never wrap; a bulleted list's items do, and are no table (a header
        # line of three cells or more, the only line so far, vouches for the table to come)
        return False
    if _is_num(_words_text(ln.words)) or not _aligned_below(ln, multi, h):
        return False
    return not near or _close_below(ln, pending[-1] if pending else cur[-1], cur[-12:], h, s)


def _under_cell_line(ln: _TextLine, above: _TextLine, h: float, s: TableSettings) -> bool:
    """``ln`` goes on with the one-chunk line ``above``, a cell's line: it starts where it starts
    and follows it at a line's spacing."""
    return len(ln.chunks) == 1 and abs(ln.x0 - above.x0) <= 0.5 * h and ln.y0 - above.y1 <= s.wrap_gap * h


def _label_continuation(
    ln: _TextLine, cur: list[_TextLine], pending: list[_TextLine], h: float, s: TableSettings
) -> bool:
    """A one-chunk line that goes on with the row label (stub) of the line above.

    A stub of long labels wraps them over lines that hold nothing else, the row's figures beside
    the label's first line, its last or midway: a table of such rows runs more stub-only lines
    than a few section labels. A label's wrapped line starts at the stub (or a hanging indent in),
    ends before the first column right of it, sits close below the line above, and reads on
    mid-phrase: a lower-case first letter (a row's label starts with a capital). It is no bridged
    row of its own (``max_bridge_lines``); the row builder joins it to its label.
    """
    text = _words_text(ln.words)
    if not _reads_on(ln) or _is_num(text):
        return False
    multi = [x for x in cur if len(x.chunks) >= 2][-4:]
    if not any(_is_num(_words_text(ch)) for x in multi for ch in x.chunks[1:]):
        return False  # a table's labels wrap beside rows of figures (display math aligns no figures)
    left = min(x.x0 for x in cur + pending)
    if not (left - h <= ln.x0 <= left + 3 * h):
        return False
    if ln.x1 > min(x.chunks[1][0].x0 for x in multi) - 0.2 * h:
        return False
    return _close_below(ln, pending[-1] if pending else cur[-1], cur[-12:], h, s)


def _label_under_heads(ln: _TextLine, cur: list[_TextLine], h: float) -> str | None:
    """``ln``, a one-chunk line, is a label under a statement's heads that leave the stub's head blank
    (:func:`_heads_leave_stub_blank`): "stub", the first section's label, ending before the first head
    (:func:`_under_blank_stub_head`); "over", a group's over it ("ASSETS:" over "Current assets:")
    centred over the table (from the stub on, running under the heads, or centred over the whole
    table and so starting under the heads; within the table's width); else None."""
    heads = _head_lines(cur)
    if not _heads_leave_stub_blank(ln, heads):
        return None
    left, right = min(x.x0 for x in heads), max(x.x1 for x in heads)
    if ln.x1 < left - h:
        return "stub"
    if (
        (ln.x0 < left - h or all(_PERIOD_RE.match(_words_text(ch)) for ch in heads[-1].chunks))
        and ln.x1 <= right + h
        and len(ln.words) <= 8  # a label's few words, not a line of a sentence
        and not _CAPTION_RE.match(_words_text(ln.words))
        and not is_units(_words_text(ln.words))  # "(In millions)" under the periods: the units
    ):
        # from the stub on; or centred over the whole table, starting under the heads ("ASSETS"
        # midway between the stub's left and the last column's right), below a line of periods,
        # which ends a statement's heads: under other heads such a line is a head's lower line
        # ("occupied" under "total", over "housing units")
        return "over"
    return None


def _centred_over_rows(ln: _TextLine, rows: list[_TextLine], h: float) -> bool:
    """``ln`` is centred over ``rows``, the heads and the first row under it, its middle within a
    line height of theirs, away from the stub's left: a group's label ("Assets:") set centred over
    a statement in a short word that ends before the heads over the figures begin, which reads as
    the first row's label set in the stub until the first row shows where the stub starts."""
    left, right = min(x.x0 for x in rows), max(x.x1 for x in rows)
    return ln.x0 > left + h and abs((ln.x0 + ln.x1) / 2 - (left + right) / 2) <= h


def _head_lines(cur: list[_TextLine]) -> list[_TextLine]:
    """The area's lines from its first of two chunks or more on: one-chunk lines over the first head
    line (a units line, the top line of a stacked head, ``_label_above``) stand above the stub or over
    the heads, and the head lines decide."""
    first = next((k for k, x in enumerate(cur) if len(x.chunks) >= 2), 0)
    return cur[first:]


def _under_blank_stub_head(ln: _TextLine, cur: list[_TextLine], h: float) -> bool:
    """``ln``, a one-chunk line, is the first row's label under a header that leaves the stub's head
    blank (:func:`_heads_leave_stub_blank`), ending before the header's first head starts."""
    heads = _head_lines(cur)
    return _heads_leave_stub_blank(ln, heads) and ln.x1 < min(x.x0 for x in heads) - h


def _heads_leave_stub_blank(ln: _TextLine, cur: list[_TextLine]) -> bool:
    """The head lines ``cur`` (:func:`_head_lines`) hold column heads only (words, no figure but
    years), one of them three heads or more (two chunks side by side are as often a title and a date)
    or all of them periods (a statement's two years or dates), and ``ln`` is words, no figure: a
    label under them."""
    heads = [[_words_text(ch) for ch in x.chunks] for x in cur]
    widest = max(len(row) for row in heads)
    # a statement's two periods: years or dates, or each stacked over lines of no figure ("December
    # 31," over "2023", "Year ended" over "June 30, 2024"), two heads to a line
    multi = [row for row in heads if len(row) > 1]
    periods = widest == 2 and (
        all(_PERIOD_RE.match(t) for row in multi for t in row)
        or (
            all(_PERIOD_RE.match(t) for t in multi[-1])
            and not any(_is_num(t) or _PERIOD_RE.match(t) for row in multi[:-1] for t in row)
        )
    )
    if (
        (widest < 3 and not periods)
        or _is_num(_words_text(ln.words))
        or any(_is_num(t) and not _YEAR_RE.match(t) for row in heads for t in row)
    ):
        return False
    # heads and the label are words (display math aligns symbols and short variables alike); a
    # lone currency or per cent sign heads a column of a line of years ("$", "%" under a change)
    return bool(_WORD_RE.search(_words_text(ln.words))) and all(
        _WORD_RE.search(t)
        or _YEAR_RE.match(t)
        or _PART_OF_YEAR_RE.match(t)
        or (_IN_YEARS_RE.fullmatch(t) and len(_YEAR_IN_RE.findall(t)) >= 2)
        or (t in _SIGNS and any(map(_YEAR_RE.match, row)))
        for row in heads
        for t in row
    )


def _first_label_reads_on(
    ln: _TextLine, cur: list[_TextLine], pending: list[_TextLine], h: float, s: TableSettings
) -> bool:
    """``ln`` goes on with the first row's label, opened under a header that leaves the stub's head
    blank (``_under_blank_stub_head``), or under a stub head of its own ("Name", the label starting
    under it): it reads on in lower case, starts at that label (or a hanging indent in), ends before
    the header's first head over the figures, and sits close below the line above.
    (``_label_continuation`` wants rows of figures above, and there are none yet: the label, left
    of every head, ended the area and the header went with it.)"""
    if not pending or not all(len(x.chunks) == 1 for x in pending):
        return False
    first = pending[0]
    if _under_blank_stub_head(first, cur, h):
        limit = min(x.x0 for x in cur)
    elif _under_stub_head(first, cur, h):
        limit = min(x.chunks[1][0].x0 for x in _head_lines(cur) if len(x.chunks) >= 2)
    else:
        return False
    return (
        _reads_on(ln)
        and not _is_num(_words_text(ln.words))
        and first.x0 - h <= ln.x0 <= first.x0 + 3 * h
        and max(x.x1 for x in [*pending, ln]) < limit - h
        and all(_reads_on(x) for x in pending[1:])
        and _close_below(ln, pending[-1], [*cur[-12:], *pending], h, s)
    )


def _under_stub_head(ln: _TextLine, cur: list[_TextLine], h: float) -> bool:
    """``ln``, a one-chunk line of words, is the first row's label under a header that heads the
    stub too: head lines of words (no figure but years), three heads or more on one of them, whose
    first head starts where ``ln`` does, within a line height."""
    heads = _head_lines(cur)
    texts = [_words_text(ch) for x in heads for ch in x.chunks]
    return (
        bool(heads)
        and max(len(x.chunks) for x in heads) >= 3
        and not any(_is_num(t) and not _YEAR_RE.match(t) for t in texts)
        and bool(_WORD_RE.search(_words_text(ln.words)))
        and not _is_num(_words_text(ln.words))
        and abs(min(x.x0 for x in heads) - ln.x0) <= h
    )


def _label_above(ln: _TextLine, before: list[_TextLine], h: float, s: TableSettings) -> list[_TextLine]:
    """The lines of the first row's label set above ``ln``, the first line of an area, when ``ln``'s
    stub reads on from them (its figures on the label's last line): one-chunk lines up from ``ln``,
    each at the stub and close above the next, reading on but the first, which starts the label
    with a capital; none when no such run ends within four lines."""
    if len(ln.chunks) < 2 or not _reads_on(ln) or not any(_is_num(_words_text(ch)) for ch in ln.chunks[1:]):
        return []
    out: list[_TextLine] = []
    nxt = ln
    for x in reversed(before):
        if (
            not (ln.x0 - 3 * h <= x.x0 <= ln.x0 + h)
            or x.x1 > ln.chunks[1][0].x0 - 0.2 * h
            or _is_num(_words_text(x.words))
            or not _close_below(nxt, x, [x, nxt], h, s)
        ):
            return []
        out.insert(0, x)
        if not _reads_on(x):
            return out
        if len(out) == 4:
            return []
        nxt = x
    return []


def _heads_above(ln: _TextLine, before: list[_TextLine], h: float, s: TableSettings) -> list[_TextLine]:
    """The top lines of a head stacked higher than its neighbours, set above ``ln``, the first line
    of an area and a line of three heads or more (words, no digit): one-chunk lines up from ``ln``
    (two at most), each holding a word of three letters, close above the next, centred on one head
    of it to a point and a half and inside that head's side of the gaps to its neighbours ("Cash
    and" over "Cash" over "Equivalents", "Current" over "Marketable Securities", "Trading" over
    "symbol(s)"). An area starts at its first line of several chunks, so a head's line alone above
    the others was left out of the table, its words the table's context, not its column's head."""
    texts = [_words_text(ch) for ch in ln.chunks]
    if (
        len(texts) < 3
        or not all(_HEAD_WORD_RE.search(t) and not re.search(r"\d", t) for t in texts)
        or len(set(texts)) == 1
    ):
        # periods below ("September 28,", "2024"): a line centred over the middle one is the run's
        # head ("Years ended"), not one column's; heads all alike ("Year Ended" over each year)
        # are the same depth, so a line over one of them is not that one's alone
        return []
    out: list[_TextLine] = []
    heads, nxt = ln.chunks, ln
    for x in reversed(before[-2:]):
        k = next((k for k, ch in enumerate(heads) if ch[0].x0 + 1 < x.x1 and x.x0 < ch[-1].x1 - 1), None)
        if k is None or not _HEAD_WORD_RE.search(text := _words_text(x.words)) or is_units(text):
            break
        head = heads[k]
        # within the head's own side of the gaps to its neighbours: a group's head over several
        # columns, centred over the middle one, reaches past them
        lo = (heads[k - 1][-1].x1 + head[0].x0) / 2 if k else -math.inf
        hi = (head[-1].x1 + heads[k + 1][0].x0) / 2 if k + 1 < len(heads) else math.inf
        if (
            not lo < x.x0 <= x.x1 < hi
            or _off_centre(x.x0, x.x1, head) > STACK_TOL
            or not _close_below(nxt, x, [x, nxt], h, s)
        ):
            break
        out.insert(0, x)
        heads, nxt = x.chunks, x
    return out


def _close_below(ln: _TextLine, above: _TextLine, lines: list[_TextLine], h: float, s: TableSettings) -> bool:
    """``ln`` close enough below ``above`` to go on with its cell: the gap between them is within
    ``_line_gap`` of ``lines``, or their bottoms are the lines' usual pitch apart. Figures and words
    in fonts of unlike boxes (a right-to-left script beside digits) leave gaps unlike from line to
    line; their bottoms keep the pitch the lines are set at."""
    if ln.y0 - above.y1 <= _line_gap(lines, h, s):
        return True
    pitches = [b.y1 - a.y1 for a, b in itertools.pairwise(lines) if b.y0 > a.y1 - 0.2 * h]
    return bool(pitches) and ln.y1 - above.y1 <= min(statistics.median(pitches), 2.0 * h) + 0.1 * h


def _aligned_below(ln: _TextLine, multi: list[_TextLine], h: float) -> bool:
    """``ln`` starts under a cell of the last multi-chunk line right of its stub and ends before the
    next cell, or under the last cell (a sentence) of one of the lines before. A line written in a
    right-to-left script starts at its right: it ends under the end of such a cell, and starts
    after the cell before ends (a right-to-left table's stub is its rightmost cell)."""
    ref = multi[-1]
    rtl = _reads_rtl(ln.words)
    for k, chunk in enumerate(ref.chunks[1:], start=1):
        if rtl:
            if abs(chunk[-1].x1 - ln.x1) <= h and ln.x0 > ref.chunks[k - 1][-1].x1 + 0.2 * h:
                return True
            continue
        nxt = ref.chunks[k + 1][0].x0 if k + 1 < len(ref.chunks) else math.inf
        if abs(chunk[0].x0 - ln.x0) <= h and ln.x1 < nxt - 0.2 * h:
            return True
    # running text set beside the table, in lines spaced unlike its rows: a line of it between two
    # rows starts where the text's lines in the rows above start, as the rows' last chunk, a
    # sentence of words (no digit), and so do not end the table (``_prose_beside`` cuts it off)
    for line in multi[:-1]:
        last = _words_text(line.chunks[-1])
        if (
            abs(line.chunks[-1][0].x0 - ln.x0) <= h
            and len(last.split()) >= 4
            and not any(ch.isdigit() for ch in last)
        ):
            return True
    return False
