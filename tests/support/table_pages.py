"""Generated table pages with known cells: a measure of table extraction that is not the corpus.

``make_case(seed)`` prints one small document (one to three pages) with PyMuPDF and returns it with
its ground truth: every table's cells as printed on each page, and for a table continued over
pages the one table it must become. The class of a case is ``CLASSES[seed % len(CLASSES)]``; all
else (fonts, sizes, spacing, column count and content, margins, rules, captions, text around) is
drawn from ``random.Random(seed)``, so a seed always gives the same document and a range of seeds
gives every class alike. Pages with no table (``NO_TABLE``) count false tables.

Ground-truth conventions (those of the ICDAR-2013 structure files the corpus bench reads):

* a grid is a list of rows of cell texts, "" for an empty cell; a spanning cell's text sits at its
  first row and column, the cells it covers are "";
* a cell printed over several lines is its lines joined by one space;
* a right-to-left table's columns are numbered as displayed, left to right (as ICDAR numbers
  columns by position and tabula-java's right-to-left test expects: the stub is the last column),
  each cell's text in logical (reading) order;
* a table continued by rows holds its header once; one continued by columns holds its stub once.

Used by bench/tables_synthetic.py (scores) and tests/unit/test_tables_synthetic.py (rules).
"""

from __future__ import annotations

import random
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pymupdf

Grid = list[list[str]]

#: classes with tables on one page, then multi-page classes, then pages without a table
SINGLE = [
    "ruled",
    "unruled",
    "header_rule",
    "zebra",
    "sparse",
    "numeric",
    "multiline",
    "row_span",
    "stacked_header",
    "totals",
    "side_by_side",
    "beside_text",
    "caption_footnote",
    "rtl",
]
MULTI = ["continued_rows", "lookalike", "continued_columns"]
NO_TABLE = ["two_column_text", "numbered_list", "transcript", "rtl_prose"]
CLASSES = SINGLE + MULTI + NO_TABLE
#: classes added later, outside ``CLASSES`` so that every seed keeps the class (and document) it
#: had: drawn only when named (``make_case(seed, cls)``, ``bench/tables_synthetic.py --classes``).
#: Turned pages: a page /Rotate 90 or 270 whose content is laid out in rotated coordinates
#: (displayed upright, or sideways once more); content turned by its own matrix on an unrotated
#: page (text running up or down); an upright page with a sideways table among upright text.
#: Each turned page holds a page of a ``SINGLE`` class (tagged ``base:<class>``).
TURNED = ["rotated_page", "sideways_text", "mixed_orientation"]
#: a wrapped text column whose long words break over lines with a hyphen ("con-" / "tracts"); a
#: right-to-left table whose stub or the column beside it wraps over lines
EXTRA = [*TURNED, "hyphenated", "rtl_wrapped"]
#: classes added after ``EXTRA`` (session 10), apart again so that the seeds of ``EXTRA`` keep
#: theirs: a table whose cells are filled boxes, each text line of a cell on a box of its own in
#: the cell's colour (a word processor's export), its header and stub wrapping over lines
#: the runs of ``hyphenated``'s description column also hold hyphenated compounds ("heavy-duty"),
#: broken at their own hyphen when they do not fit; running text on the page names some of them
LATER = ["shaded_cells", "compound_hyphen"]
#: a later page with no table: two charts side by side under their "Figure N." captions, with
#: tick labels (figures), axis titles, legends and source notes (drawn only when named)
#: (session 11, appended so every earlier class keeps its seeds' documents) a bar chart: bars on a
#: baseline, tick-marked axes or none, figures along the value axis, value labels over the bars,
#: category labels under them, a legend of swatches beside short labels; a flow chart: boxed steps
#: in rows joined by arrows (a stroke with a filled head), labels over one or two lines
LATER_NO_TABLE = ["figure_pair", "bar_chart", "flow_chart"]
#: (issue 37) a table running over three to six pages whose last page or two carry another column
#: layout: a wider last column, a last column whose cells hold a figure and a mark at its two ends
#: (a text finder reads one column more), or a totals page whose label cells span columns and
#: whose rows leave columns empty; with and without the header repeated on every page. And the
#: negative: a long table followed at the top of the next page by another table of other columns
#: and another header, nothing between. Drawn only when named.
TAIL_MULTI = ["continued_tail", "new_table_tail"]
#: (issue 37) one page, one or two tables whose shape the finder must get right (drawn only when
#: named): ``sparse_stats``, a statistical table whose figure columns are sparsely filled, figures
#: of widths from one digit to seven set right, on a decimal point or centred, with footnote
#: marks and flags hanging past the figures, negatives in parentheses whose ")" hangs, and
#: placeholders ("-", "..", ":") set apart from the figures; ``sectioned``, one table whose body is
#: cut into sections by rows of one label (in the stub, spanning columns or centred) with more space
#: above them, sub-headings under them, sections that fill fewer columns, subtotal rows; and the
#: guard ``two_stacked``: two tables one under the other, each under its own header (with a caption,
#: a note or only space between), which must stay two.
SHAPE = ["sparse_stats", "sectioned", "two_stacked"]
#: (issue 37) one page, one stream table (no rules, or rules under the header and the table only)
#: with wrapped row labels and empty cells, drawn only when named: ``wrapped_stub``, a stub whose
#: labels wrap over two to four lines (some with a hanging indent), the row's figures set beside the
#: label's first line, its last line or midway, some cells empty; ``blank_cells``, spanning heads over
#: groups of columns, rows with a whole group or single cells empty (a row of a label alone), the
#: stub's head often blank, some labels wrapping with their figures on the first or the last line.
WRAPPED = ["wrapped_stub", "blank_cells"]
#: (issue 37) one page, one financial statement, drawn only when named: ``statement``: row labels
#: indented under section heads ("Revenues:", "Current assets:"), more indent for totals and
#: sub-items; a header row of years (descending), often under a lone period head ("Year Ended
#: December 31,": the columns' context, not a row of the truth); "$" set apart at the left of the
#: figure columns on a section's first row and on totals; negatives in parentheses whose ")" hangs;
#: nil figures as dashes; short rules above totals; a title, units line and a note around the
#: table. Scored like ``SHAPE``. Its own list so that the other lists' figures do not move.
STATEMENT = ["statement"]
#: (issue 37, fourteenth session, appended so every earlier class keeps its seeds) ``noted_statement``:
#: ``statement``'s short form, a few rows of one section (a note's breakdown of a figure: net sales by
#: product), a label carrying a note mark ("Services (1)"), and the note under the grid: its mark
#: set apart at the margin, its sentence running across the figure columns over one or two lines.
#: Scored like ``STATEMENT``.
NOTED = ["noted_statement"]
#: (issue 37, fourteenth session, appended after ``NOTED``) ``wide_statement``: a note's table of many
#: figure columns (fair value by level: cost, gains, losses, fair value and where it is held), each
#: column headed by two or three stacked lines centred over its figures, "$" set apart at the left of
#: every column on the first and the total rows, nil dashes, section labels alone on their line,
#: subtotals, a year over all columns, notes under the grid. Scored like ``STATEMENT``; its truth
#: has one header row, each column's stacked head lines joined.
WIDE = ["wide_statement"]
#: (issues 37 and 34, appended after ``WIDE`` so every earlier class keeps its seeds)
#: ``change_statement``: an MD&A comparison table: two or three year columns under a period head
#: ("Year Ended December 31,") centred over them, one or two change pairs ("$" and "%") each under
#: its own head of one or two lines ("2023 vs. 2022" over "Change") centred over the pair, a line
#: of the years and the "$"/"%" symbols under the heads, the units in the stub cell of that line
#: ("(Dollars in millions)") or on a line above the table; "$" set apart on the first and total
#: rows, "%" after the figure (a space before it, or hanging with a negative's ")"), 1 to 12 rows,
#: section labels alone on their line, ratio rows whose change cells are empty. Scored like
#: ``STATEMENT``; its truth has one header row, each column's heads joined top first
#: ("Year Ended December 31, 2023", "2023 vs. 2022 Change $"), the units no cell of it.
CHANGE = ["change_statement"]
#: (issue 37, sixteenth session, appended after ``CHANGE`` so every earlier class keeps its seeds)
#: ``stacked_statement``: ``statement`` whose period heads are stacked over two lines, one head per
#: figure column ("December 31," over "2023"; "Year ended" or "Three months ended" over "June 30,
#: 2024"), centred over the column's "$" and figure or set right at the figure, so a head line may
#: reach over the "$" set apart at the column's left; half the time under a period head over all the
#: columns when the lower line is the year. Scored like ``STATEMENT``; its truth has one header row,
#: each column's two lines joined ("December 31, 2023"), the head over all columns no cell of it.
STACKED = ["stacked_statement"]
#: (issue 37, seventeenth session, appended after ``STACKED`` so every earlier class keeps its seeds)
#: ``sectioned_heads_statement``: ``statement`` or ``stacked_statement`` whose period heads are set
#: apart from the first row of figures by one or two lines holding a label and no figure: a group's
#: label ("ASSETS:", "LIABILITIES AND EQUITY", bold or not, with a colon or not) centred over the
#: table (as Apple's balance sheet sets it) or at the margin, over the first section's label
#: ("Current assets:") or in place of it; half the time a later section is opened by such a group
#: label too. Scored like ``STATEMENT``; its truth has one header row of periods and each label line
#: a body row (the label in the stub).
SECTIONED_HEADS = ["sectioned_heads_statement"]
#: (issue 37, appended after ``STACKED`` so every earlier class keeps its seeds) ``group_ruled``: a
#: statistical table whose figure columns fall in two to four groups under spanning group heads
#: ("Total", "Male", "Female"), two to four sub-columns a group under their own heads, vertical rules
#: only between the groups (and after the stub; the outer sides sometimes), none between the
#: sub-columns nor between the rows; horizontal rules at the top and bottom, under the group heads
#: (short, over the columns each heads, or across) and/or under the sub-heads. Rows of figures, some
#: cells empty, a stub of labels that may wrap or run on in dot leaders. Its truth: every sub-column
#: a column of its own, the group heads spanning header cells. Scored like ``SHAPE`` too.
GROUP_RULED = ["group_ruled"]
#: (issue 37, seventh session) variants of the classes above that no rule was tuned on, drawn only
#: when named, in their own list so that no other class's seeds move: ``spaced_stats``, a sparse
#: statistical table whose thousands are set apart by a space ("1 234 567", as statistical offices
#: print them), so a figure is several words whose count varies with its size; ``shifted_tail``,
#: a long table whose last pages change their column layout (as ``continued_tail``) on pages that
#: do not line up: mirrored margins (odd pages set further right), column widths fitted to each
#: page's own rows, or a "(continued)" caption over the repeated header.
#: (issue 37, eighth session, appended so every earlier class keeps its seeds) ``label_tail``:
#: ``continued_tail``'s long tables whose last page or two print long row labels ("Other services,
#: excluding public transport"), their stub set wider for them and every figure column moved right,
#: a totals page's labels in the stub alone, often the totals alone under no header. No rule was
#: tuned on it: it is read as held out on both splits.
#: (issue 37, fourteenth session, appended so every earlier class keeps its seeds)
#: ``narrow_table_tail``: ``new_table_tail``'s negative with a narrow second table: a long table
#: whose stub column is wide, and at the top of the next page, nothing between, a table of two to
#: four short columns (codes, small figures under short heads) that fits inside that stub's width.
#: ``open_ruled``: ``ruled``'s tables with no rule down their two outer sides: rules between the
#: columns and across every row, those running on over the first and last columns (a LaTeX
#: ``{l|r|r}`` tabular with ``\\hline``; a spreadsheet's inner borders).
#: ``straddle_table_tail``: ``narrow_table_tail`` with the long table's stub left as wide as its
#: labels, so the short table's columns lie across the stub and the column beside it.
UNSEEN = [
    "spaced_stats",
    "shifted_tail",
    "label_tail",
    "narrow_table_tail",
    "open_ruled",
    "straddle_table_tail",
]
#: the unseen classes scored as multi-page tables
TAIL_UNSEEN = ["shifted_tail", "label_tail", "narrow_table_tail", "straddle_table_tail"]

#: seeds of the tune split start here, those of the held-out split at HELD_OUT
TUNE = 0
HELD_OUT = 100_000

_DEJAVU = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")

# base-14 families (regular, bold), as PyMuPDF names them
_FAMILIES = [("helv", "hebo"), ("tiro", "tibo"), ("cour", "cobo")]

_WORDS = (
    "annual revenue growth index market share sector region output capacity total average rate "
    "export import service labour energy water transport housing health education budget reserve "
    "demand supply balance margin policy contract volume storage network district county factory "
    "retail wholesale quarter forecast estimate target actual variance segment channel customer"
).split()
_PLACES = (
    "Austria Belgium Bulgaria Croatia Cyprus Denmark Estonia Finland France Germany Greece Hungary "
    "Ireland Italy Latvia Lithuania Luxembourg Malta Netherlands Poland Portugal Romania Slovakia "
    "Slovenia Spain Sweden Norway Iceland Albania Serbia Montenegro Kosovo Georgia Armenia Moldova"
).split()
_SENTENCE = (
    "the committee reviewed the figures reported for the period and noted that most regions met "
    "their targets while a few fell short because of delays in delivery and higher costs of energy "
    "which the board expects to ease over the coming year as new contracts take effect and the "
    "network is extended to the remaining districts in line with the plan agreed last spring"
).split()
# Hebrew and Arabic words (the Arabic ones without lam: MuPDF maps the lam-alef ligature's glyph
# to a wrong character, which would test the font, not the table finder)
_COMPOUNDS = (
    "heavy-duty long-term short-term real-time part-time year-end cross-border low-income "
    "well-known state-owned high-speed full-scale mid-sized non-profit third-party one-off"
).split()
_HEBREW = "שנה מחיר סכום אזור כמות מספר עיר חודש הכנסה הוצאה יתרה שירות מוצר ספק סוג".split()
_ARABIC = "سنة سعر قيمة منطقة كمية رقم مدينة شهر عدد مصروف رصيد خدمة منتج مورد نوع".split()


@dataclass
class TruthTable:
    """One table as it must come out: ``grids`` per page as printed, ``merged`` the whole table."""

    pages: list[int]
    grids: dict[int, Grid]
    merged: Grid
    header_rows: int = 1
    kind: str = ""  # "rows" or "columns" when it continues over pages


@dataclass
class Case:
    seed: int
    cls: str
    pdf: bytes
    n_pages: int
    tables: list[TruthTable] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)

    def save(self, path: Path) -> Path:
        path.write_bytes(self.pdf)
        return path


# ---------------------------------------------------------------------------------------- content


def print_rows(
    page: pymupdf.Page, y0: float, rows: list[list[str]], cols: list[float], pitch: float = 14.0
) -> float:
    """Print rows of cells at fixed column positions (left edges), no rules; returns the bottom y.
    The unit tests' hand-made borderless tables."""
    for r, row in enumerate(rows):
        for c, text in enumerate(row):
            if text:
                page.insert_text((cols[c], y0 + r * pitch), text, fontsize=9)
    return y0 + len(rows) * pitch


def _num(rng: random.Random, fmt: str) -> tuple[str, float]:
    """A figure printed in ``fmt`` and its value (for totals)."""
    v = rng.choice([rng.uniform(0, 99), rng.uniform(100, 9999), rng.uniform(1000, 250000)])
    neg = rng.random() < 0.2
    if fmt == "int":
        text = f"{round(v):,}"
    elif fmt == "dec":
        text = f"{v:,.1f}" if v < 1000 else f"{round(v):,}"
    elif fmt == "pct":
        v = rng.uniform(0, 100)
        text = f"{v:.1f}%"
    elif fmt == "cur":
        sym = rng.choice(["$", "£"])  # the base-14 fonts' encoding has no euro sign
        text = f"{sym}{v:,.2f}" if rng.random() < 0.5 else f"{sym} {round(v):,}"
    else:  # parenthesised negatives, accountants' style
        text = f"({round(v):,})" if neg else f"{round(v):,}"
        return text, -round(v) if neg else round(v)
    if neg and fmt in ("int", "dec"):
        text = "-" + text
        v = -v
    return text, v


def _label(rng: random.Random, n: int = 1) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(n)).capitalize()


def _sentence(rng: random.Random, n: int) -> str:
    k = rng.randrange(0, len(_SENTENCE) - n)
    return " ".join(_SENTENCE[k : k + n]).capitalize() + "."


def _body_words(rng: random.Random, n: int) -> list[str]:
    out: list[str] = []
    while len(out) < n:
        out.extend(_SENTENCE[rng.randrange(len(_SENTENCE)) :])
    return out[:n]


@dataclass
class _Spec:
    """A table to print: header rows of (text, column span), body rows, alignments."""

    header: list[list[tuple[str, int]]]
    body: list[list[str]]
    align: list[str]  # "l" / "r" / "c" per column
    wrap: set[int] = field(default_factory=set)  # columns whose cells wrap over lines
    row_span: dict[int, int] = field(default_factory=dict)  # body row -> rows its stub spans
    total: bool = False  # the last body row is a totals row
    hyphenate: bool = False  # wrapped cells break long words with a hyphen
    head_wrap: bool = False  # header cells of two words or more print over two lines
    #: where a row's one-line cells sit beside its wrapped ones: on the first line ("top"), the
    #: last ("bottom") or midway ("middle")
    valign: str = "top"
    indent: float = 0.0  # a wrapped cell's continuation lines start this far in (a hanging indent)

    @property
    def n_cols(self) -> int:
        return len(self.align)

    def grid(self) -> Grid:
        out: Grid = []
        for row in self.header:
            cells: list[str] = []
            for text, span in row:
                cells.append(text)
                cells.extend([""] * (span - 1))
            out.append(cells)
        out.extend([list(r) for r in self.body])
        return out


def _hyphenated_description(rng: random.Random, n_cols: int, n_rows: int, text: Callable[[], str]) -> _Spec:
    """A table with a wrapped, hyphenated "Description" column beside the stub, each body cell's
    run from ``text`` (drawn in row order, after the column is chosen)."""
    sp = _spec(rng, n_cols, min(n_rows, 9))
    desc = rng.randrange(1, n_cols)
    for r in sp.body:
        r[desc] = text()
    sp.header[0][desc] = ("Description", 1)
    sp.align[desc] = "l"
    sp.wrap = {desc}
    sp.hyphenate = True
    return sp


def _spec(
    rng: random.Random,
    n_cols: int,
    n_rows: int,
    *,
    sparse: float = 0.0,
    fmts: list[str] | None = None,
    stub_words: int = 1,
    places: bool | None = None,
) -> _Spec:
    fmts = fmts or [rng.choice(["int", "dec", "pct", "cur", "paren"]) for _ in range(n_cols - 1)]
    use_places = rng.random() < 0.5 if places is None else places
    stubs = (
        rng.sample(_PLACES, n_rows)
        if use_places and n_rows <= len(_PLACES)
        else [_label(rng, rng.randint(1, stub_words + 1)) for _ in range(n_rows)]
    )
    header = [
        [(rng.choice(["Item", "Country", "Region", "Name", "Category"]), 1)]
        + [(_label(rng, rng.randint(1, 2)), 1) for _ in range(n_cols - 1)]
    ]
    body = []
    for r in range(n_rows):
        row = [stubs[r]]
        for c in range(n_cols - 1):
            if sparse and rng.random() < sparse:
                row.append("")
            else:
                row.append(_num(rng, fmts[c])[0])
        body.append(row)
    return _Spec(header=header, body=body, align=["l"] + ["r"] * (n_cols - 1))


# ---------------------------------------------------------------------------------------- printing


@dataclass
class _Style:
    font: tuple[str, str]
    size: float
    pitch: float  # baseline to baseline, in font sizes
    rules: str  # "ruled", "none", "header", "zebra"; "open": ruled, no rule down the outer sides
    pad: float  # column gap, pt


def _style(rng: random.Random, rules: str | None = None) -> _Style:
    return _Style(
        font=rng.choice(_FAMILIES),
        size=rng.choice([7.0, 8.0, 8.5, 9.0, 10.0, 11.0]),
        pitch=rng.uniform(1.25, 1.9),
        rules=rules or rng.choice(["ruled", "none", "header", "zebra"]),
        pad=rng.uniform(10, 28),
    )


_FONTS: dict[str, pymupdf.Font] = {}


def _width(text: str, font: str, size: float) -> float:
    if font == "dejavu" and _DEJAVU.exists():  # right-to-left scripts: a font with their glyphs
        f = _FONTS.get(font) or _FONTS.setdefault(font, pymupdf.Font(fontfile=str(_DEJAVU)))
        return f.text_length(text, fontsize=size)
    if font == "dejavu":  # no such font here: about the width of sans-serif letters
        return 0.55 * size * len(text)
    # not pymupdf.get_text_length: it measures a string holding a character past ASCII short by
    # about that character ("£1,139.13" 35.0 where the page draws 40.0; "£" alone 5.0), and a
    # figure set right by it ran past its column's edge
    f = _FONTS.get(font) or _FONTS.setdefault(font, pymupdf.Font(font))
    return f.text_length(text, fontsize=size)


def _wrap(words: list[str], width: float, font: str, size: float, hyphenate: bool = False) -> list[str]:
    """Words set in lines of ``width``; with ``hyphenate`` a word of 7+ letters that does not fit
    breaks with a hyphen, 3+ letters on each side (a lower-case continuation: the paragraph
    stage's rule joins it back without the hyphen)."""
    lines: list[str] = []
    cur = ""
    for w in words:
        t = f"{cur} {w}".strip()
        if cur and _width(t, font, size) > width:
            if hyphenate and "-" in w and _width(f"{cur} {w[: w.index('-') + 1]}", font, size) <= width:
                lines.append(f"{cur} {w[: w.index('-') + 1]}")  # a compound breaks at its hyphen
                cur = w[w.index("-") + 1 :]
                continue
            if hyphenate and len(w) >= 7 and w.isalpha():
                k = next(
                    (k for k in range(len(w) - 3, 2, -1) if _width(f"{cur} {w[:k]}-", font, size) <= width),
                    0,
                )
                if k:
                    lines.append(f"{cur} {w[:k]}-")
                    cur = w[k:]
                    continue
            lines.append(cur)
            cur = w
        else:
            cur = t
    if cur:
        lines.append(cur)
    return lines


class _Printer:
    """Prints a ``_Spec`` at a place on a page in a ``_Style``; knows each column's x range."""

    def __init__(self, spec: _Spec, st: _Style, max_width: float, wrap_width: float = 110.0):
        self.spec, self.st = spec, st
        # size down until the table fits the width it is given
        for _ in range(8):
            widths = self._widths(wrap_width)
            if sum(widths) + st.pad * (spec.n_cols - 1) <= max_width:
                break
            st.size = max(5.5, st.size * 0.88)
            st.pad = max(7.0, st.pad * 0.85)
        self.widths = widths
        self.wrap_width = wrap_width
        self.later: list[tuple] = []
        #: (x0, x1, top, bottom, text lines) of every cell printed, for the "cells" style
        self.boxes: list[tuple[float, float, float, float, int]] = []
        #: the "cells" style's fill colours (header, body) and padding inside a cell
        self.fills = ((0.09, 0.21, 0.36), (0.78, 0.85, 0.95))
        self.inset = 5.0

    def _widths(self, wrap_width: float) -> list[float]:
        sp, st = self.spec, self.st
        out = []
        for c in range(sp.n_cols):
            head = [
                h
                for row in sp.header
                for k, (t, span) in enumerate(_spans(row))
                if k == c and span == 1 and t
                for h in (_halves(t) if sp.head_wrap else [t])
            ]
            body = [r[c] for r in sp.body if r[c]]
            w = max(
                [_width(t, st.font[1], st.size) for t in head]
                + [_width(t, st.font[0], st.size) for t in body],
                default=10.0,
            )
            out.append(min(w, wrap_width) if c in sp.wrap else w)
        return out

    @property
    def width(self) -> float:
        return sum(self.widths) + self.st.pad * (self.spec.n_cols - 1)

    def _lines(self, text: str, c: int) -> list[str]:
        """A wrapped column's cell as its printed lines (continuation lines indented by ``indent``)."""
        sp, st = self.spec, self.st
        return _wrap(text.split(), self.widths[c] - sp.indent, st.font[0], st.size, sp.hyphenate)

    def draw(
        self,
        page: pymupdf.Page,
        x0: float,
        y0: float,
        rtl: bool = False,
        header: bool = True,
        rows: range | None = None,
    ) -> float:
        """Print the table (``rows``: a range of body rows; ``header``: print the header); the bottom y."""
        sp, st = self.spec, self.st
        lh = st.size * st.pitch
        xs = [x0]
        for w in self.widths:
            xs.append(xs[-1] + w + st.pad)
        col_x = [(xs[c], xs[c] + self.widths[c]) for c in range(sp.n_cols)]
        if rtl:  # column 0 on the right
            right = x0 + self.width
            col_x = [(right - (b - x0), right - (a - x0)) for a, b in col_x]
        left, right_edge = x0 - st.pad / 2, x0 + self.width + st.pad / 2
        y = y0
        rules_y = [y]
        spans_drawn: list[tuple[float, float, float]] = []
        if header:
            for hr, row in enumerate(sp.header):
                top = y
                cells = _col_spans(row)
                n_head = 2 if sp.head_wrap and any(len(t.split()) > 1 for _c, (t, _s) in cells) else 1
                y += lh * n_head
                for c, (text, span) in cells:
                    a = min(col_x[c][0], col_x[c + span - 1][0])
                    b = max(col_x[c][1], col_x[c + span - 1][1])
                    parts = [text] if n_head == 1 else _halves(text)
                    for k, line in enumerate(parts):
                        self._text(
                            page,
                            line,
                            a,
                            b,
                            top + lh * (k + 0.5) + st.size * 0.25,
                            "c" if span > 1 else sp.align[c],
                            bold=True,
                            rtl=rtl,
                        )
                    self.boxes.append((a, b, top, y, len(parts)))
                    if span > 1 and hr < len(sp.header) - 1:
                        spans_drawn.append((a, b, y))
            rules_y.append(y)
        body_rows = rows if rows is not None else range(len(sp.body))
        row_tops: list[float] = []
        span_left = 0
        for r in body_rows:
            row = sp.body[r]
            row_tops.append(y)
            if sp.total and r == len(sp.body) - 1:
                rules_y.append(y)
            n_lines = 1
            for c in sp.wrap:
                if row[c]:
                    n_lines = max(n_lines, len(self._lines(row[c], c)))
            if st.rules == "zebra" and (r % 2 == 1):
                page.draw_rect(
                    pymupdf.Rect(left, y, right_edge, y + lh * n_lines),
                    color=None,
                    fill=(0.88, 0.9, 0.94),
                    overlay=False,
                )
            for c, text in enumerate(row):
                lines = self._lines(text, c) if c in sp.wrap and text else [text]
                self.boxes.append((*col_x[c], y, y + lh * n_lines, len(lines) if text else 0))
                if not text:
                    continue
                bold = sp.total and r == len(sp.body) - 1
                # lines left over beside a taller cell: below it ("top"), above it, or half and half
                off = {"top": 0.0, "bottom": 1.0, "middle": 0.5}[sp.valign] * (n_lines - len(lines))
                for k, line in enumerate(lines):
                    a, b = col_x[c]
                    if k and sp.indent and sp.align[c] == "l":
                        a += sp.indent
                    self._text(
                        page, line, a, b, y + lh * (off + k + 0.5) + st.size * 0.25, sp.align[c], bold, rtl
                    )
            y += lh * n_lines
            # a stub spanning rows: no rule across the stub column until the span ends
            if r in sp.row_span:
                span_left = sp.row_span[r] - 1
            elif span_left:
                span_left -= 1
            if st.rules in ("ruled", "open") and r != body_rows[-1]:
                x_from = col_x[0][1] + st.pad / 2 if (span_left and not rtl) else left
                x_to = col_x[0][0] - st.pad / 2 if (span_left and rtl) else right_edge
                page.draw_line((x_from, y), (x_to, y), width=0.5)
        bottom = y
        if st.rules == "cells":
            self._cell_fills(page, st)
        self.boxes.clear()
        for args in self.later:
            _rtl_text(*args)
        self.later.clear()
        rules_y.append(bottom)
        if st.rules in ("ruled", "header", "open"):
            for ry in (
                ([rules_y[0], rules_y[1], rules_y[-1]] + rules_y[2:-1])
                if header
                else [rules_y[0], rules_y[-1]]
            ):
                page.draw_line((left, ry), (right_edge, ry), width=0.6)
            for a, b, yy in spans_drawn:
                page.draw_line((a, yy), (b, yy), width=0.4)
        if st.rules in ("ruled", "open"):
            edges = (
                [left]
                + [
                    (col_x[c][1] + col_x[c + 1][0]) / 2 if not rtl else (col_x[c][0] + col_x[c + 1][1]) / 2
                    for c in range(sp.n_cols - 1)
                ]
                + [right_edge]
            )
            top = rules_y[0]
            covered = set()  # inner edges a spanning cell of the top header row lies across
            if header and len(sp.header) > 1:
                c = 0
                for _text, span in sp.header[0]:
                    covered.update(range(c + 1, c + span))
                    c += span
            for k, x in enumerate(edges):
                if st.rules == "open" and k in (0, len(edges) - 1):
                    continue  # the row rules run on past the outer columns, no side drawn
                start = top + lh if k in covered else top
                page.draw_line((x, start), (x, bottom), width=0.5)
            if header:
                for hr in range(1, len(sp.header)):
                    yy = y0 + lh * hr
                    page.draw_line((left, yy), (right_edge, yy), width=0.4)
        return bottom

    def _cell_fills(self, page: pymupdf.Page, st: _Style) -> None:
        """The "cells" style: each cell a filled box (the header's darker), inside it one box of
        the same colour per text line, inset by the cell padding, then a thin white rule between
        cells; all painted beneath the text, in that order."""
        sh = page.new_shape()
        lh = st.size * st.pitch
        head_bottom = max((b[3] for b in self.boxes[:1]), default=0.0)
        rules: list[tuple[float, float, float, float]] = []
        for x0, x1, top, bottom, n in self.boxes:
            fill = self.fills[0] if bottom <= head_bottom + 0.01 else self.fills[1]
            a, b = x0 - st.pad / 2, x1 + st.pad / 2
            sh.draw_rect(pymupdf.Rect(a, top, b, bottom))
            sh.finish(color=None, fill=fill, width=0)
            for k in range(n):
                sh.draw_rect(pymupdf.Rect(a + self.inset, top + k * lh, b - self.inset, top + (k + 1) * lh))
                sh.finish(color=None, fill=fill, width=0)
            rules.append((a, top, b, bottom))
        for a, top, b, bottom in rules:  # white rules along every cell's sides
            for r in (
                pymupdf.Rect(a - 0.5, top - 0.5, b + 0.5, top + 0.5),
                pymupdf.Rect(a - 0.5, bottom - 0.5, b + 0.5, bottom + 0.5),
                pymupdf.Rect(a - 0.5, top, a + 0.5, bottom),
                pymupdf.Rect(b - 0.5, top, b + 0.5, bottom),
            ):
                sh.draw_rect(r)
                sh.finish(color=None, fill=(1, 1, 1), width=0)
        sh.commit(overlay=False)

    def _text(
        self,
        page: pymupdf.Page,
        text: str,
        a: float,
        b: float,
        base: float,
        align: str,
        bold: bool,
        rtl: bool,
    ) -> None:
        st = self.st
        if rtl:
            # words after figures: MuPDF's extraction joins a figure set right after (left of) a
            # right-to-left word into that word, which would test its line builder, not the tables
            if any(unicodedata.bidirectional(ch) in ("R", "AL") for ch in text):
                self.later.append((page, text, a, b, base, st.size, align))
            else:
                _rtl_text(page, text, a, b, base, st.size, align)
            return
        font = st.font[1] if bold else st.font[0]
        w = _width(text, font, st.size)
        x = a if align == "l" else b - w if align == "r" else (a + b - w) / 2
        page.insert_text((x, base), text, fontname=font, fontsize=st.size)


def _halves(text: str) -> list[str]:
    """A header cell of two words or more as the two lines a ``head_wrap`` header prints."""
    ws = text.split()
    if len(ws) < 2:
        return [text]
    k = (len(ws) + 1) // 2
    return [" ".join(ws[:k]), " ".join(ws[k:])]


def _mirror(grid: Grid) -> Grid:
    """A grid's columns in the opposite order, each spanning cell's text kept at its first column."""
    out = []
    for row in grid:
        cells = list(reversed(row))
        out.append(cells)
    return out


def _spans(row: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """Header cells expanded per column: (text, span) at a cell's first column, ("", 0) under a span."""
    out: list[tuple[str, int]] = []
    for text, span in row:
        out.append((text, span))
        out.extend([("", 0)] * (span - 1))
    return out


def _col_spans(row: list[tuple[str, int]]) -> list[tuple[int, tuple[str, int]]]:
    out = []
    c = 0
    for text, span in row:
        if text:
            out.append((c, (text, span)))
        c += span
    return out


def _rtl_text(
    page: pymupdf.Page, text: str, a: float, b: float, base: float, size: float, align: str
) -> None:
    """Right-to-left text, shaped and ordered by MuPDF's HTML engine, set in [a, b] on ``base``.

    A right-to-left column's cells are set flush right (``align`` "c" centres). MuPDF's HTML engine
    reads ``text-align`` in a ``dir="rtl"`` paragraph as start/end: "left" sets text on the right.
    """
    html_align = "center" if align == "c" else "left"
    rect = pymupdf.Rect(a - 4, base - size * 1.1, b + 1, base + size * 0.8)
    page.insert_htmlbox(
        rect,
        f'<p dir="rtl" style="text-align:{html_align};margin:0">{text}</p>',
        css=f"* {{font-size:{size}px; line-height:1.1; margin:0; padding:0}}",
    )


def _paragraph(
    page: pymupdf.Page,
    rng: random.Random,
    x0: float,
    x1: float,
    y: float,
    n_lines: int,
    font: str,
    size: float,
    justify: bool = False,
    words: list[str] | None = None,
) -> float:
    """Running text from ``y`` (top) over ``n_lines`` lines between x0 and x1 (``words``, or
    sentences drawn from ``rng``); the bottom y."""
    lh = size * 1.3
    words = words or _body_words(rng, n_lines * 20)
    lines = _wrap(words, x1 - x0, font, size)[:n_lines]
    for k, line in enumerate(lines):
        base = y + lh * (k + 1) - lh * 0.25
        if justify and k < len(lines) - 1 and len(line.split()) > 1:
            ws = line.split()
            free = (x1 - x0) - sum(_width(w, font, size) for w in ws)
            gap = free / (len(ws) - 1)
            x = x0
            for w in ws:
                page.insert_text((x, base), w, fontname=font, fontsize=size)
                x += _width(w, font, size) + gap
        else:
            page.insert_text((x0, base), line, fontname=font, fontsize=size)
    return y + lh * len(lines) + lh * 0.4


def _furniture(page: pymupdf.Page, rng: random.Random, number: int, margin: float) -> None:
    """A running header and a page number: what lies between a table's parts on two pages."""
    w = page.rect.width
    page.insert_text((margin, 30), "Annual statistical report 2025", fontname="helv", fontsize=7.5)
    page.insert_text((w - margin - 40, 30), f"Page {number}", fontname="helv", fontsize=7.5)
    page.insert_text((w / 2 - 5, page.rect.height - 28), str(number), fontname="helv", fontsize=8)


def _fit_rows(
    pr: _Printer, sp: _Spec, size: tuple[float, float], x: float, top: float, bottom: float, least: int
) -> None:
    """Drop ``sp``'s last body rows (keeping ``least``) until ``pr`` prints it at (``x``, ``top``) on
    a page of ``size`` above ``bottom``: rows that would run off the page are not printed (nor truth)."""
    while len(sp.body) > least:
        scratch = pymupdf.open()
        low = pr.draw(scratch.new_page(width=size[0], height=size[1]), x, top)
        scratch.close()
        if low <= bottom:
            break
        sp.body.pop()


def _caption(page: pymupdf.Page, text: str, x: float, y: float, size: float) -> float:
    page.insert_text((x, y + size), text, fontname="hebo", fontsize=size)
    return y + size * 1.8


# ---------------------------------------------------------------------------------------- classes


def _one(
    rng: random.Random, cls: str, doc: pymupdf.Document, tags: list[str], landscape: bool = False
) -> list[TruthTable]:
    """Print one page of class ``cls`` on ``doc`` (``landscape``: the page turned to landscape);
    return its tables."""
    W, H = rng.choice([(595.0, 842.0), (612.0, 792.0)])
    if landscape:
        W, H = H, W
    page = doc.new_page(width=W, height=H)
    margin = rng.uniform(40, 90)
    x0, x1 = margin, W - margin
    font = rng.choice(_FAMILIES)
    size = rng.choice([8.5, 9.0, 10.0, 11.0])
    y = margin
    if rng.random() < 0.5:
        _furniture(page, rng, rng.randint(2, 40), margin)
    truths: list[TruthTable] = []

    def table(spec: _Spec, st: _Style, x: float, top: float, width: float, rtl: bool = False) -> float:
        pr = _Printer(spec, st, width)
        xx = x if rtl or rng.random() < 0.6 else x + max(0.0, (width - pr.width) / 2)
        bottom = pr.draw(page, xx, top, rtl=rtl)
        grid = spec.grid()
        if rtl:  # columns as displayed: the spec's column 0 is printed rightmost
            grid = _mirror(grid)
        truths.append(TruthTable(pages=[0], grids={0: grid}, merged=grid, header_rows=len(spec.header)))
        return bottom

    if cls not in ("beside_text", "side_by_side") and rng.random() < 0.8:
        y = _paragraph(page, rng, x0, x1, y, rng.randint(2, 6), font[0], size, justify=rng.random() < 0.5)
    n_cols, n_rows = rng.randint(3, 7), rng.randint(4, 16)
    st = _style(rng)
    if cls in ("ruled", "unruled", "header_rule", "zebra", "open_ruled"):
        st.rules = {"ruled": "ruled", "unruled": "none", "header_rule": "header", "zebra": "zebra"}.get(
            cls, "open"
        )
        y = table(_spec(rng, n_cols, n_rows), st, x0, y + 10, x1 - x0)
    elif cls == "sparse":
        st.rules = rng.choice(["none", "header"])
        y = table(_spec(rng, n_cols, n_rows, sparse=rng.uniform(0.3, 0.55)), st, x0, y + 10, x1 - x0)
    elif cls == "numeric":
        fm = [rng.choice(["cur", "paren", "pct"]) for _ in range(n_cols - 1)]
        y = table(_spec(rng, n_cols, n_rows, fmts=fm), st, x0, y + 10, x1 - x0)
    elif cls == "multiline":
        sp = _spec(rng, n_cols, min(n_rows, 9))
        desc = rng.randrange(0, n_cols - 1)  # a text column that wraps: the stub or one beside it
        if desc > 0:
            for r in sp.body:
                r.insert(desc, " ".join(_body_words(rng, rng.randint(3, 14))))
                r.pop()
            sp.header[0][desc] = ("Description", 1)
            sp.align[desc] = "l"
        else:
            for r in sp.body:
                r[0] = _label(rng, rng.randint(2, 7))
        sp.wrap = {desc}
        y = table(sp, st, x0, y + 10, x1 - x0)
    elif cls == "hyphenated":
        sp = _hyphenated_description(
            rng, n_cols, n_rows, lambda: " ".join(_body_words(rng, rng.randint(4, 14)))
        )
        y = table(sp, st, x0, y + 10, x1 - x0)
    elif cls == "compound_hyphen":
        # a description column among figures whose runs hold compounds, broken at their hyphen
        # where they do not fit; a paragraph above names half of them whole (or none)
        used = rng.sample(_COMPOUNDS, 4)
        if rng.random() < 0.75:
            words = _body_words(rng, 60)
            for c in used[:2]:
                words.insert(rng.randrange(25), c)
            y = _paragraph(page, rng, x0, x1, y, 3, font[0], size, words=words)

        def run() -> str:
            ws = _body_words(rng, rng.randint(4, 12))
            for _ in range(rng.randint(1, 2)):
                ws.insert(rng.randrange(len(ws) + 1), rng.choice(used))
            return " ".join(ws)

        sp = _hyphenated_description(rng, n_cols, n_rows, run)
        y = table(sp, st, x0, y + 10, x1 - x0)
    elif cls == "shaded_cells":
        # a word processor's table: filled cells, a box per text line inside; two-line headers,
        # a stub that wraps (or a description column beside it)
        st.rules = "cells"
        sp = _spec(rng, n_cols, min(n_rows, 10))
        sp.header[0] = [(t, 1) for t, _s in sp.header[0][:1]] + [
            (_label(rng, rng.randint(2, 4)), 1) for _ in range(n_cols - 1)
        ]
        sp.head_wrap = True
        for r in sp.body:
            r[0] = _label(rng, rng.randint(1, 6))
        sp.wrap = {0}
        pr_fills = (
            rng.choice([(0.09, 0.21, 0.36), (0.55, 0.6, 0.65), (0.85, 0.85, 0.85)]),
            rng.choice([(0.78, 0.85, 0.95), (0.93, 0.93, 0.93), (0.85, 0.93, 0.85)]),
        )
        wrap_width = rng.uniform(70, 130)
        pr = _Printer(sp, st, x1 - x0, wrap_width=wrap_width)
        pr.fills, pr.inset = pr_fills, rng.uniform(2.0, min(6.0, st.pad / 2 - 0.5))
        top = y + 10
        _fit_rows(pr, sp, (W, H), x0, top, H - margin, least=2)
        y = pr.draw(page, x0, top)
        grid = sp.grid()
        truths.append(TruthTable(pages=[0], grids={0: grid}, merged=grid, header_rows=1))
    elif cls == "row_span":
        st.rules = "ruled"
        sp = _spec(rng, n_cols, n_rows)
        r = 0
        while r < len(sp.body) - 1:
            if rng.random() < 0.35:
                sp.row_span[r] = 2
                sp.body[r + 1][0] = ""
                r += 2
            else:
                r += 1
        y = table(sp, st, x0, y + 10, x1 - x0)
    elif cls == "stacked_header":
        n_cols = max(n_cols, 4)
        sp = _spec(rng, n_cols, n_rows)
        top: list[tuple[str, int]] = [("", 1)]
        c = 1
        while c < n_cols:
            span = min(rng.choice([2, 2, 3]), n_cols - c)
            top.append((_label(rng, 2) if span > 1 else "", span))
            c += span
        sp.header.insert(0, top)
        y = table(sp, st, x0, y + 10, x1 - x0)
    elif cls == "totals":
        fm = [rng.choice(["int", "paren", "cur"]) for _ in range(n_cols - 1)]
        sp = _spec(rng, n_cols, n_rows, fmts=fm)
        sp.body.append(["Total"] + [_num(rng, fm[c])[0] for c in range(n_cols - 1)])
        sp.total = True
        y = table(sp, st, x0, y + 10, x1 - x0)
    elif cls == "side_by_side":
        gap = rng.uniform(25, 50)
        half = (x1 - x0 - gap) / 2
        top = y + 10
        bottoms = []
        for k in range(2):
            sp = _spec(rng, rng.randint(2, 4), rng.randint(4, 12))
            s2 = _style(rng, st.rules)
            s2.size = st.size
            bottoms.append(table(sp, s2, x0 + k * (half + gap), top, half))
        y = max(bottoms)
    elif cls == "beside_text":
        gap = rng.uniform(20, 40)
        share = rng.uniform(0.45, 0.6)
        tw = (x1 - x0 - gap) * share
        left_table = rng.random() < 0.5
        tx = x0 if left_table else x1 - tw
        px0, px1 = (x0 + tw + gap, x1) if left_table else (x0, x1 - tw - gap)
        top = y + 10
        sp = _spec(rng, rng.randint(2, 4), rng.randint(5, 14))
        bottom = table(sp, st, tx, top, tw)
        # the text beside runs as long as the table, give or take a line; what follows starts below both
        beside = _paragraph(
            page,
            rng,
            px0,
            px1,
            top - 4,
            max(4, int((bottom - top) / (size * 1.3)) + rng.choice([-1, 0, 1])),
            font[0],
            size,
            justify=rng.random() < 0.5,
        )
        y = max(bottom, beside)
    elif cls == "caption_footnote":
        top = _caption(page, f"Table {rng.randint(1, 30)}. {_label(rng, rng.randint(2, 6))}", x0, y + 8, size)
        y = table(_spec(rng, n_cols, n_rows), st, x0, top, x1 - x0)
        note = rng.choice(["Source: ", "Note: ", "* ", "a "]) + _sentence(rng, rng.randint(6, 16))
        page.insert_text((x0, y + 12), note, fontname=font[0], fontsize=max(6.5, size - 2))
        y += 20
    elif cls in ("rtl", "rtl_wrapped"):
        vocab = _HEBREW if rng.random() < 0.5 else _ARABIC
        tags.append("hebrew" if vocab is _HEBREW else "arabic")
        sp = _spec(rng, n_cols, min(n_rows, 10))
        sp.header = [[(" ".join(rng.sample(vocab, rng.randint(1, 2))), 1) for _ in range(n_cols)]]
        for r in sp.body:
            r[0] = " ".join(rng.sample(vocab, rng.randint(1, 2)))
            # unsigned figures: where a minus or currency sign goes is the bidi algorithm's business
            r[1:] = [
                f"{rng.randint(0, 99999):,}" if rng.random() < 0.6 else f"{rng.uniform(0, 100):.1f}"
                for _ in r[1:]
            ]
        if cls == "rtl_wrapped":  # a text column (the stub or one beside it) wraps over lines
            desc = rng.randrange(0, min(2, n_cols - 1))
            for r in sp.body:
                r[desc] = " ".join(rng.choice(vocab) for _ in range(rng.randint(3, 10)))
            sp.wrap = {desc}
        sp.align = ["r"] * n_cols
        st.font = ("dejavu", "dejavu")  # widths only: the HTML engine picks the script's font
        st.size = max(st.size, 8.0)
        st.pad = max(st.pad, 18.0)
        y = table(sp, st, x0, y + 10, x1 - x0, rtl=True)
    else:
        raise ValueError(cls)
    tags.append(st.rules)
    if y < H - margin - 60 and rng.random() < 0.7:
        _paragraph(page, rng, x0, x1, y + 12, rng.randint(2, 5), font[0], size, justify=rng.random() < 0.5)
    return truths


def _show_turned(doc: pymupdf.Document, src: pymupdf.Document, turn: int, rot: int) -> None:
    """``src``'s first page as a new page of ``doc``, its content turned by ``turn`` degrees
    (anticlockwise, as show_pdf_page counts) as displayed, on a page /Rotate ``rot``.

    The page is built in unrotated space, its content turned by ``turn`` and by what /Rotate turns
    back clockwise; then /Rotate is set (show_pdf_page onto a page already rotated loses content
    turned 90 degrees)."""
    src = pymupdf.open("pdf", src.tobytes())
    r = src[0].rect
    shown_w, shown_h = (r.height, r.width) if turn else (r.width, r.height)
    w, h = (shown_h, shown_w) if rot else (shown_w, shown_h)
    page = doc.new_page(width=w, height=h)
    page.show_pdf_page(page.rect, src, 0, rotate=(turn + rot + 180) % 360 - 180)
    if rot:
        page.set_rotation(rot)


def _turned(rng: random.Random, cls: str, doc: pymupdf.Document, tags: list[str]) -> list[TruthTable]:
    """A page of a ``TURNED`` class: a ``SINGLE`` class's page (or, for ``mixed_orientation``, its
    table alone) printed on a page of its own, then shown turned (``show_pdf_page``: the text
    keeps its glyphs, its matrices turned) on the page of the case."""
    if cls in ("rotated_page", "sideways_text"):
        base = rng.choice([c for c in SINGLE if c != "rtl"])
        tags.append(f"base:{base}")
        # sideways_text: an unrotated portrait page whose content runs up (turned anticlockwise)
        # or down; rotated_page: /Rotate 90 or 270 with the content set in the rotated coordinates,
        # so that the page shows it upright (a landscape scan, a page turned in a viewer) or
        # sideways as the first class does
        rot = rng.choice([90, 270]) if cls == "rotated_page" else 0
        turn = rng.choice([0, 0, 90, -90]) if rot else rng.choice([90, -90])
        tags += [f"rotate:{rot}", f"turn:{turn}"]
        src = pymupdf.open()
        truths = _one(rng, base, src, tags, landscape=bool(turn))
        _show_turned(doc, src, turn, rot)
        return truths
    if cls != "mixed_orientation":
        raise ValueError(cls)
    # upright running text, then a table turned a quarter (its caption with it, or upright above
    # it); a third of such pages on a page /Rotate 90 or 270 that shows them as they are
    rot = rng.choice([0, 0, 0, 0, 90, 270])
    tags.append(f"rotate:{rot}")
    shown = pymupdf.open()
    page, margin, font, size = _prose_page(rng, shown)
    W, H = page.rect.width, page.rect.height
    x0, x1 = margin, W - margin
    y = _paragraph(page, rng, x0, x1, margin, rng.randint(3, 10), font[0], size, justify=rng.random() < 0.5)
    turn = rng.choice([90, -90])
    tags.append(f"turn:{turn}")
    room_w, room_h = x1 - x0, H - margin - y - 20  # the turned table's height and width
    caption = f"Table {rng.randint(1, 30)}. {_label(rng, rng.randint(2, 5))}"
    upright_caption = rng.random() < 0.4
    if upright_caption:
        y = _caption(page, caption, x0, y + 6, size)
        room_h -= size * 1.8
    sp = _spec(rng, rng.randint(3, 8), rng.randint(4, 14))
    st = _style(rng)
    tags.append(st.rules)
    pr = _Printer(sp, st, room_h - 20)
    src = pymupdf.open()
    sp_page = src.new_page(width=room_h, height=max(room_w, 200.0))
    top = 10.0 if upright_caption else _caption(sp_page, caption, 10, 6, size)
    bottom = pr.draw(sp_page, 10 + st.pad / 2, top + 4)
    clip = pymupdf.Rect(0, 0, room_h, min(bottom + 8, sp_page.rect.height))
    # the turned clip: as wide as the clip is tall, set at the left margin under the text
    target = pymupdf.Rect(x0, y + 10, x0 + clip.height, y + 10 + clip.width)
    page.show_pdf_page(target, src, 0, clip=clip, rotate=turn)
    if rng.random() < 0.5 and target.x1 < x1 - 120:  # upright text beside the turned table
        _paragraph(page, rng, target.x1 + 25, x1, target.y0, rng.randint(4, 12), font[0], size)
    _show_turned(doc, shown, 0, rot)
    grid = sp.grid()
    return [TruthTable(pages=[0], grids={0: grid}, merged=grid, header_rows=len(sp.header))]


def _multi(rng: random.Random, cls: str, doc: pymupdf.Document, tags: list[str]) -> list[TruthTable]:
    W, H = 595.0, 842.0
    margin = rng.uniform(45, 80)
    x0, x1 = margin, W - margin
    font = rng.choice(_FAMILIES)
    size = rng.choice([9.0, 10.0])
    st = _style(rng)
    tags.append(st.rules)
    furniture = rng.random() < 0.8
    if furniture:
        tags.append("furniture")
    page_no = rng.randint(1, 30)

    def new_page() -> pymupdf.Page:
        nonlocal page_no
        pg = doc.new_page(width=W, height=H)
        if furniture:
            _furniture(pg, rng, page_no, margin)
        page_no += 1
        return pg

    lh = st.size * st.pitch
    if cls == "continued_rows":
        n_pages = rng.choice([2, 2, 3])
        sp = _spec(rng, rng.randint(3, 6), 200)
        # how the continuation shows itself: its header repeated (one line or two, a spanning
        # group over figures), or not; a note under the part before; columns set per page
        variant = rng.choice(["repeat", "repeat", "no_repeat", "stacked", "note", "widths"])
        tags.append(variant)
        if variant == "stacked":
            n_cols = sp.n_cols
            top: list[tuple[str, int]] = [("", 1), (_label(rng, 2), n_cols - 1)]
            sp.header.insert(0, top)
        pr = _Printer(sp, st, x1 - x0)
        lh = pr.st.size * pr.st.pitch
        head_h = lh * len(sp.header)
        r = 0
        grids: dict[int, Grid] = {}
        cont_caption = rng.random() < 0.5
        if cont_caption:
            tags.append("continued_caption")
        caption = f"Table {rng.randint(1, 20)}. {_label(rng, 3)}"
        for p in range(n_pages):
            pg = new_page()
            y = margin + 10
            if p == 0:
                y = _paragraph(pg, rng, x0, x1, y, rng.randint(3, 12), font[0], size)
                y = _caption(pg, caption, x0, y + 6, size)
            elif cont_caption:
                y = _caption(pg, f"{caption.split('.')[0]} (continued)", x0, y, size)
            header = p == 0 or variant != "no_repeat"
            avail = H - margin - 30 - y - (head_h if header else 0) - (30 if variant == "note" else 0)
            n = int(avail / lh) - 1 if p < n_pages - 1 else rng.randint(3, max(4, int(avail / lh) - 4))
            rows = range(r, r + n)
            printer = pr
            if variant == "widths":  # each page's columns as wide as that page's cells
                part = _Spec(header=sp.header, body=[sp.body[k] for k in rows], align=sp.align)
                printer = _Printer(part, _Style(**vars(pr.st)), x1 - x0)
                printer.st.size, printer.st.pad = pr.st.size, pr.st.pad
                printer.widths = printer._widths(110.0)
                bottom = printer.draw(pg, x0, y + 6)
            else:
                bottom = printer.draw(pg, x0, y + 6, rows=rows, header=header)
            head = sp.grid()[: len(sp.header)] if header else []
            grids[p] = head + [list(sp.body[k]) for k in rows]
            r += n
            if variant == "note" and p < n_pages - 1:
                note = rng.choice(["Continued on next page.", "(continued)", "Note: figures in thousands."])
                pg.insert_text((x0, bottom + 14), note, fontname=font[0], fontsize=max(6.5, size - 2))
            if p == n_pages - 1 and bottom < H - margin - 80:
                _paragraph(pg, rng, x0, x1, bottom + 14, 3, font[0], size)
        sp.body = sp.body[:r]
        merged = sp.grid()
        return [
            TruthTable(
                pages=list(range(n_pages)),
                grids=grids,
                merged=merged,
                header_rows=len(sp.header),
                kind="rows",
            )
        ]
    if cls == "lookalike":
        # two tables, same columns: one ends page 1, the next starts page 2; apart by their
        # captions or by the text that follows the first
        n_cols = rng.randint(3, 6)
        sp1 = _spec(rng, n_cols, 60)
        sp2 = _spec(rng, n_cols, 60)
        sp2.header = [list(sp1.header[0])]
        variant = rng.choice(["captions", "text_after", "new_header"])
        tags.append(variant)
        if variant == "new_header":  # the second table's own header: no caption, nothing between
            sp2.header = [[(sp1.header[0][0][0], 1)] + [(_label(rng, 2), 1) for _ in range(n_cols - 1)]]
        pr1, pr2 = _Printer(sp1, st, x1 - x0), _Printer(sp2, _Style(**vars(st)), x1 - x0)
        pr2.widths = pr1.widths = [max(a, b) for a, b in zip(pr1.widths, pr2.widths, strict=True)]
        lh = pr1.st.size * pr1.st.pitch
        pg = new_page()
        y = _paragraph(pg, rng, x0, x1, margin + 10, rng.randint(3, 10), font[0], size)
        if variant == "captions":
            y = _caption(pg, f"Table {rng.randint(1, 9)}. {_label(rng, 3)}", x0, y + 6, size)
        tail = 5 * size * 1.3 if variant == "text_after" else 0
        n1 = min(len(sp1.body), max(3, int((H - margin - 30 - y - tail) / lh) - 2))
        bottom = pr1.draw(pg, x0, y + 6, rows=range(n1))
        if variant == "text_after":
            _paragraph(pg, rng, x0, x1, bottom + 10, 3, font[0], size)
        sp1.body = sp1.body[:n1]
        pg2 = new_page()
        y = margin + 10
        if variant == "captions":
            y = _caption(pg2, f"Table {rng.randint(10, 19)}. {_label(rng, 3)}", x0, y, size)
        n2 = rng.randint(4, 20)
        bottom = pr2.draw(pg2, x0, y + 6, rows=range(n2))
        sp2.body = sp2.body[:n2]
        _paragraph(pg2, rng, x0, x1, bottom + 14, 3, font[0], size)
        g1, g2 = sp1.grid(), sp2.grid()
        return [
            TruthTable(pages=[0], grids={0: g1}, merged=g1),
            TruthTable(pages=[1], grids={1: g2}, merged=g2),
        ]
    if cls == "continued_columns":
        n_rows = rng.randint(6, 20)
        stubs = [_label(rng, rng.randint(1, 3)) for _ in range(n_rows)]
        while len(set(stubs)) < n_rows:
            stubs = [_label(rng, rng.randint(1, 3)) for _ in range(n_rows)]
        cols = [rng.randint(3, 5), rng.randint(2, 5)]
        caption = f"Table {rng.randint(1, 20)}. {_label(rng, 3)}"
        same_caption = rng.random() < 0.4
        tags.append("same_caption" if same_caption else "continued_caption")
        merged: Grid = [["Item"]] + [[s] for s in stubs]
        grids = {}
        for p, nc in enumerate(cols):
            sp = _spec(rng, nc + 1, n_rows)
            for k, row in enumerate(sp.body):
                row[0] = stubs[k]
            sp.header[0][0] = ("Item", 1)
            pg = new_page()
            y = margin + 10
            if p == 0:
                y = _paragraph(pg, rng, x0, x1, y, rng.randint(2, 8), font[0], size)
                y = _caption(pg, caption, x0, y + 6, size)
            elif same_caption:  # the caption repeated word for word says it goes on
                y = _caption(pg, caption, x0, y, size)
            else:
                y = _caption(pg, f"{caption.split('.')[0]} (continued)", x0, y, size)
            bottom = _Printer(sp, _Style(**vars(st)), x1 - x0).draw(pg, x0, y + 6)
            _paragraph(pg, rng, x0, x1, bottom + 14, 3, font[0], size)
            grid = sp.grid()
            grids[p] = grid
            for k, row in enumerate(grid):
                merged[k].extend(row[1:])
        return [TruthTable(pages=[0, 1], grids=grids, merged=merged, kind="columns")]
    raise ValueError(cls)


def _draw_rows(
    page: pymupdf.Page,
    rows: list[list[tuple[str, int]]],
    cols: list[tuple[float, float]],
    y: float,
    st: _Style,
    align: list[str],
    bold_rows: set[int],
    ruled: bool,
    rule_rows: set[int],
) -> float:
    """Rows of (text, column span) at the given column x ranges; rules around the block, under
    ``rule_rows`` and (``ruled``) between rows and columns, no column rule through a span. Cell
    text "a|b" prints a at the cell's left and b at its right (a figure and its mark)."""
    lh = st.size * st.pitch
    left, right = cols[0][0] - st.pad / 2, cols[-1][1] + st.pad / 2
    top = y
    page.draw_line((left, y), (right, y), width=0.6)
    for r, row in enumerate(rows):
        c = 0
        font = st.font[1] if r in bold_rows else st.font[0]
        base = y + lh * 0.5 + st.size * 0.25
        for text, span in row:
            a, b = cols[c][0], cols[c + span - 1][1]
            if "|" in text:
                fig, mark = text.split("|")
                page.insert_text((a, base), fig, fontname=font, fontsize=st.size)
                page.insert_text(
                    (b - _width(mark, font, st.size), base), mark, fontname=font, fontsize=st.size
                )
            elif text:
                w = _width(text, font, st.size)
                al = "l" if span > 1 else align[c]
                x = a if al == "l" else b - w if al == "r" else (a + b - w) / 2
                page.insert_text((x, base), text, fontname=font, fontsize=st.size)
            if ruled and c > 0:
                page.draw_line(((cols[c - 1][1] + a) / 2, y), ((cols[c - 1][1] + a) / 2, y + lh), width=0.5)
            c += span
        y += lh
        if (ruled and r < len(rows) - 1) or r in rule_rows:
            page.draw_line((left, y), (right, y), width=0.5)
    page.draw_line((left, y), (right, y), width=0.6)
    if ruled:
        page.draw_line((left, top), (left, y), width=0.5)
        page.draw_line((right, top), (right, y), width=0.5)
    return y


def _tail_multi(rng: random.Random, cls: str, doc: pymupdf.Document, tags: list[str]) -> list[TruthTable]:
    """``TAIL_MULTI``: a long table whose last pages change their column layout, or (negative) a
    long table and then another one."""
    W, H = 595.0, 842.0
    margin = rng.uniform(45, 80)
    x0, x1 = margin, W - margin
    font = rng.choice(_FAMILIES)
    size = rng.choice([9.0, 10.0])
    st = _style(rng, rng.choice(["ruled", "none", "header"]))
    ruled = st.rules == "ruled"
    tags.append(st.rules)
    furniture = rng.random() < 0.8
    repeat = rng.random() < 0.6
    tags.append("repeat" if repeat else "no_repeat")
    new_table = cls in ("new_table_tail", "narrow_table_tail", "straddle_table_tail")
    variant = rng.choice(["wide", "split", "totals"]) if not new_table else "new_table"
    tags.append(variant)
    shift = rng.choice(["mirror", "refit", "contd"]) if cls == "shifted_tail" else ""
    if shift:
        tags.append(shift)
    long_tail = cls == "label_tail"
    dx = rng.uniform(15.0, 40.0) if shift == "mirror" else 0.0
    n_pages = rng.randint(3, 6)
    n_cols = rng.randint(3, 6)
    sp = _spec(rng, n_cols, 400)
    head = [t for t, _ in sp.header[0]]
    last = n_cols - 1
    n_tail = rng.choice([1, 1, 2]) if variant != "new_table" else 1
    # the tail's last column: wider figures with a note, or a figure and its mark set apart
    marks = ["(p)", "(e)", "r", "*", "(b)"]
    for row in sp.body:
        if variant == "wide":
            row[last] = f"{row[last]} {rng.choice(['provisional', 'estimated', 'revised', 'n.a. in 2024'])}"
        elif variant == "split":
            row[last] = f"{row[last]}|{rng.choice(marks)}"
    page_no = rng.randint(1, 30)
    plain = [list(r) for r in sp.body]
    for row in plain:  # the early pages' last column: a plain figure
        row[last] = row[last].split(" ")[0].split("|")[0]
    # label_tail: the long labels the last pages print in the stub (some rows keep a short one)
    qualifiers = ["excluding", "including", "of which", "other than", "not elsewhere classified,"]
    longer = [
        f"{_label(rng, 2)}, {rng.choice(qualifiers)} {_label(rng, rng.randint(2, 3)).lower()}"
        if long_tail and rng.random() < 0.6
        else ""
        for _ in sp.body
    ]
    totals_long = [
        f"{rng.choice(['Total', 'All items'])}, {rng.choice(qualifiers)} {_label(rng, 2).lower()}"
        for _ in range(3 if long_tail else 0)
    ]

    def labelled(rows: list[list[str]], start: int) -> list[list[str]]:
        return [[longer[start + i] or row[0], *row[1:]] if long_tail else row for i, row in enumerate(rows)]

    narrow: Grid = []  # narrow_table_tail: the next page's table, drawn before the stub is sized
    rng_pad = 0.0
    if cls in ("narrow_table_tail", "straddle_table_tail"):
        rng_pad = rng.uniform(0.0, 60.0)
        heads = rng.sample(["len", "dose", "supp", "n", "id", "age", "sex", "qty", "grp", "code", "lot"], 4)
        nc = rng.randint(2, 4)
        kinds = [rng.choice(["int", "dec", "code"]) for _ in range(nc)]
        codes = ["VC", "OJ", "A", "B", "M", "F", "x1", "k2"]

        def short(kind: str) -> str:
            if kind == "int":
                return str(rng.randint(1, 999))
            if kind == "dec":
                return f"{rng.uniform(0.1, 40.0):.1f}"
            return rng.choice(codes)

        narrow = [heads[:nc]] + [[short(k) for k in kinds] for _ in range(rng.randint(4, 20))]

    def widths(rows: list[list[str]]) -> list[float]:
        ws = [
            max(_width(r[c].replace("|", "   "), st.font[1], st.size) for r in rows)
            for c in range(len(rows[0]))
        ]
        if narrow and rows[0] == head and cls == "narrow_table_tail":  # a stub wider than the narrow table
            ws[0] = max(ws[0], sum(widths(narrow)) + len(narrow[0]) * st.pad + rng_pad)
        return ws

    def layout(ws: list[float]) -> list[tuple[float, float]]:
        out, x = [], x0 + st.pad / 2
        for w in ws:
            out.append((x, x + w))
            x += w + st.pad
        return out

    def smaller() -> None:  # type and padding a step smaller, for a layout that does not fit
        st.size, st.pad = max(5.5, st.size * 0.9), max(7.0, st.pad * 0.85)

    widest = [head] + labelled(sp.body[:200], 0)
    if long_tail:
        widest += [[t] + [""] * last for t in totals_long]
    for _ in range(10):  # size down until the widest layout fits
        if layout(widths(widest))[-1][1] + dx <= x1 - st.pad / 2:
            break
        smaller()
    lh = st.size * st.pitch
    main_cols = layout(widths([head] + plain[:200]))
    tail_cols = layout(widths([head] + sp.body[:200]))
    grids: dict[int, Grid] = {}
    merged: Grid = [list(head)]
    r = 0
    caption = f"Table {rng.randint(1, 20)}. {_label(rng, 3)}"
    truths: list[TruthTable] = []
    for p in range(n_pages):
        pg = doc.new_page(width=W, height=H)
        if furniture:
            _furniture(pg, rng, page_no, margin)
        page_no += 1
        y = margin + 10
        tail = p >= n_pages - n_tail
        if p == 0:
            y = _paragraph(pg, rng, x0, x1, y, rng.randint(2, 8), font[0], size)
            y = _caption(pg, caption, x0, y + 6, size)
        elif shift == "contd":
            y = _caption(pg, f"{caption} (continued)", x0, y + 6, size)
        if narrow and tail:
            cols2 = layout(widths(narrow))
            bottom = _draw_rows(
                pg,
                [[(t, 1) for t in rr] for rr in narrow],
                cols2,
                y + 6,
                st,
                ["r"] * len(narrow[0]),
                {0},
                ruled,
                {0},
            )
            _paragraph(pg, rng, x0, x1, bottom + 14, 3, font[0], size)
            truths.append(TruthTable(pages=[p], grids={p: narrow}, merged=narrow))
            break
        if variant == "new_table" and tail:
            # another table: its own columns and header, straight at the top of the page
            nc = rng.choice([k for k in range(3, 7) if k != n_cols])
            sp2 = _spec(rng, nc, rng.randint(4, 20))
            h2 = [t for t, _ in sp2.header[0]]
            while set(h2) & set(head):
                sp2 = _spec(rng, nc, len(sp2.body))
                h2 = [t for t, _ in sp2.header[0]]
            g2 = [h2] + [list(b) for b in sp2.body]
            cols2 = layout(widths(g2))
            while cols2[-1][1] > x1 - st.pad / 2 and st.size > 5.5:
                # sized down until it fits the page (drawn past the page's edge, its last column's
                # text was cut off where the truth holds it whole)
                smaller()
                cols2 = layout(widths(g2))
            bottom = _draw_rows(
                pg, [[(t, 1) for t in rr] for rr in g2], cols2, y + 6, st, sp2.align, {0}, ruled, {0}
            )
            _paragraph(pg, rng, x0, x1, bottom + 14, 3, font[0], size)
            truths.append(TruthTable(pages=[p], grids={p: g2}, merged=g2))
            break
        cols = tail_cols if tail and variant in ("wide", "split") else main_cols
        header = p == 0 or repeat
        rows: list[list[tuple[str, int]]] = [[(t, 1) for t in head]] if header else []
        grid: Grid = [list(head)] if header else []
        avail = H - margin - 40 - y - (lh if header else 0)
        last_page = (
            p == n_pages - 1 and variant != "new_table" or (variant == "new_table" and p == n_pages - 2)
        )
        n = int(avail / lh) - 1
        if last_page:
            n = rng.randint(0 if variant == "totals" else 3, max(4, n // 3))
            if long_tail and variant == "totals" and rng.random() < 0.5:
                n = 0  # the totals alone
        n = min(n, len(sp.body) - r)  # label_tail's smaller type fits more rows than the body holds
        body_src = sp.body if tail and variant in ("wide", "split") else plain
        if long_tail and tail:
            body_src = body_src[:r] + labelled(body_src[r : r + max(n, 0)], r) + body_src[r + max(n, 0) :]
        if shift == "refit":  # the widths of this page's own rows (and the header)
            cols = layout(widths([head] + body_src[r : r + max(n, 1)]))
        if shift == "mirror" and p % 2:
            cols = [(a + dx, b + dx) for a, b in cols]
        for k in range(r, r + n):
            rows.append([(t, 1) for t in body_src[k]])
            grid.append([t.replace("|", " ") for t in body_src[k]])
        r += n
        bold: set[int] = {0} if header else set()
        rule_rows = {0} if header else set()
        if variant == "totals" and last_page:
            # totals: the label spans the stub and the next column, some figures left empty
            for t in range(rng.randint(1, 3)):
                label = rng.choice(["Total", "Total all regions", "Grand total", "Subtotal", "All items"])
                label = f"{label} {t + 1}" if t else label
                # label_tail: a long label in the stub alone, a figure (or none) in every other column
                span = 1 if long_tail else 2
                label = totals_long[t] if long_tail else label
                figs = [_num(rng, "int")[0] if rng.random() < 0.7 else "" for _ in range(n_cols - span)]
                if not any(figs):
                    figs[-1] = _num(rng, "int")[0]
                rule_rows.add(len(rows) - 1)
                bold.add(len(rows))
                rows.append([(label, span)] + [(f, 1) for f in figs])
                grid.append([label] + [""] * (span - 1) + figs)
        if not [g for g in grid if g != head]:
            continue
        if long_tail and tail:  # the stub set as wide as this page's labels: the figures move right
            cols = layout(widths([[t for t, _ in rr] for rr in [[(h, 1) for h in head], *rows]]))
        bottom = _draw_rows(pg, rows, cols, y + 6, st, sp.align, bold, ruled, rule_rows)
        grids[p] = grid
        merged.extend(g for g in (grid[1:] if header else grid))
        if last_page and bottom < H - margin - 80 and not narrow:  # narrow: nothing after it
            _paragraph(pg, rng, x0, x1, bottom + 14, 3, font[0], size)
    first = TruthTable(pages=sorted(grids), grids=grids, merged=merged, kind="rows")
    return [first, *truths]


# ------------------------------------------------------------------------------- shape (issue 37)

#: flags and footnote marks set after a figure (statistical offices' "p" provisional, "e" estimated)
_FLAGS = ["p", "e", "b", "r", "u"]
_NOTE_MARKS = ["*", "a", "b", "1", "2", "3"]
#: what an empty statistical cell may show instead of a figure
_PLACEHOLDERS = ["-", "..", ":", "x", "n.a.", "..."]
_SECTIONS = [
    "Males",
    "Females",
    "Urban areas",
    "Rural areas",
    "Public sector",
    "Private sector",
    "Households",
    "Enterprises",
    "Exports",
    "Imports",
    "Full-time",
    "Part-time",
    "Residents",
    "Non-residents",
    "Manufacturing",
    "Services",
]


@dataclass
class _StatRow:
    """A body row of a shape table: ``cells`` (stub, then (figure, mark) per column), or a label row
    (``label``: a section or sub-heading) set as ``style`` ("stub", "span", "centre")."""

    cells: list[tuple[str, str]] = field(default_factory=list)
    label: str = ""
    style: str = ""
    space: float = 0.0  # extra space above the row, in row pitches
    bold: bool = False
    indent: float = 0.0  # the stub's indent, pt
    rule_above: bool = False

    def texts(self, n_cols: int) -> list[str]:
        if self.label:
            return [self.label] + [""] * (n_cols - 1)
        return [f"{f} {m}".strip() for f, m in self.cells]


@dataclass
class _StatTable:
    """A statistical table to print: header rows of (text, span), body rows, figure alignment
    ("right", "decimal", "centre"), how placeholders sit ("same" as figures, or "centre")."""

    header: list[list[tuple[str, int]]]
    rows: list[_StatRow]
    align: str = "right"
    place: str = "same"
    paren: bool = False  # negatives in parentheses, the ")" hanging past the figures

    @property
    def n_cols(self) -> int:
        return sum(s for _t, s in self.header[-1])

    def grid(self) -> Grid:
        out: Grid = []
        for row in self.header:
            cells: list[str] = []
            for text, span in row:
                cells += [text] + [""] * (span - 1)
            out.append(cells)
        return out + [r.texts(self.n_cols) for r in self.rows]


def _drop_last_column(t: _StatTable) -> None:
    """``t`` without its last column: a head spanning it spans one column less, cells past it go."""
    for row in t.header:
        text, span = row[-1]
        if span > 1:
            row[-1] = (text, span - 1)
        else:
            row.pop()
    n = t.n_cols
    for r in t.rows:
        del r.cells[n:]  # the stub and n - 1 figures


def _stat_figure(rng: random.Random, scale: float, dec: int, neg: str, sep: str = ",") -> str:
    v = 10 ** rng.uniform(-0.5, scale)
    text = f"{v:,.{dec}f}".replace(",", sep)
    if rng.random() < 0.12:
        text = f"({text})" if neg == "paren" else f"-{text}"
    return text


def _stat_rows(
    rng: random.Random,
    n_fig: int,
    n_rows: int,
    fill: list[float],
    marks: str,
    places: list[str],
    sep: str = ",",
) -> list[_StatRow]:
    """Data rows: a stub (some indented under the row before), per column a figure (or an empty
    cell, a placeholder) and now and then a mark."""
    scales = [rng.uniform(1.0, 6.5) for _ in range(n_fig)]
    decs = [rng.choice([0, 0, 1, 1, 2]) for _ in range(n_fig)]
    neg = "paren" if rng.random() < 0.5 else "minus"
    mark_share = rng.uniform(0.1, 0.35) if marks != "none" else 0.0
    rows = []
    stubs = rng.sample(_PLACES, min(n_rows, len(_PLACES))) if rng.random() < 0.5 else []
    for r in range(n_rows):
        stub = stubs[r] if r < len(stubs) else _label(rng, rng.randint(1, 3))
        indent = rng.choice([8.0, 12.0]) if r and rng.random() < 0.2 else 0.0
        cells = [(stub, "")]
        for c in range(n_fig):
            if rng.random() < fill[c]:
                mark = ""
                if rng.random() < mark_share:
                    mark = rng.choice(_FLAGS if marks == "flag" else _NOTE_MARKS)
                cells.append((_stat_figure(rng, scales[c], decs[c], neg, sep), mark))
            elif places and rng.random() < 0.5:
                cells.append((rng.choice(places), ""))
            else:
                cells.append(("", ""))
        if not any(f for f, _m in cells[1:]):
            c = rng.randrange(n_fig)
            cells[c + 1] = (_stat_figure(rng, scales[c], decs[c], neg, sep), "")
        rows.append(_StatRow(cells=cells, indent=indent))
    return rows


def _stat_header(rng: random.Random, n_fig: int) -> list[list[tuple[str, int]]]:
    stub = rng.choice(["Item", "Country", "Region", "Sector", "Age group", "Industry"])
    kind = rng.choice(["years", "labels", "labels"])
    if kind == "years":
        y0 = rng.randint(1995, 2015)
        heads = [str(y0 + k) for k in range(n_fig)]
    else:
        heads = [_label(rng, rng.randint(1, 3)) for _ in range(n_fig)]
    header = [[(stub, 1)] + [(h, 1) for h in heads]]
    if n_fig >= 4 and rng.random() < 0.3:  # a group over some of the figure columns
        k = rng.randint(2, n_fig - 1)
        header.insert(0, [("", 1), (_label(rng, 2), k)] + [("", 1)] * (n_fig - k))
    return header


class _StatPrinter:
    """Prints a ``_StatTable``: column x ranges from the widest cell, figures aligned, marks and a
    negative's ")" hanging past the alignment line into the gutter, label rows as drawn."""

    def __init__(self, t: _StatTable, st: _Style, max_width: float):
        self.t, self.st = t, st
        for _ in range(10):
            self.widths = self._widths()
            if self.width <= max_width:
                break
            st.size, st.pad = max(5.5, st.size * 0.9), max(8.0, st.pad * 0.85)
        # still too wide in the smallest type: the last columns go (they were drawn past the page's
        # edge, where no text layer holds them, and the truth kept them: spaced_stats tune 48, 78)
        while self.width > max_width and t.n_cols > 2:
            _drop_last_column(t)
            self.widths = self._widths()

    def _parts(self, fig: str) -> tuple[str, str, str]:
        """A figure as (what lies left of the alignment line, after it (decimals), what hangs)."""
        hang = ")" if self.t.paren and fig.endswith(")") else ""
        core = fig[: -len(hang)] if hang else fig
        if self.t.align == "decimal" and "." in core and core[0].isdigit() | (core[:1] in "(-"):
            a, b = core.split(".", 1)
            return a, "." + b, hang
        return core, "", hang

    def _widths(self) -> list[float]:
        t, st = self.t, self.st
        f0, f1 = st.font
        out = []
        for c in range(t.n_cols):
            heads = [
                _width(x, f1, st.size)
                for row in t.header
                for k, (x, s) in _col_spans(row)
                if k == c and s == 1
            ]
            if c == 0:
                body = [_width(r.cells[0][0], f0, st.size) + r.indent for r in t.rows if r.cells]
            elif t.align == "decimal":
                ps = [self._parts(r.cells[c][0]) for r in t.rows if r.cells and r.cells[c][0]]
                left = max((_width(a, f0, st.size) for a, _b, _h in ps), default=0.0)
                right = max((_width(b, f0, st.size) for _a, b, _h in ps), default=0.0)
                body = [left + right]
            else:
                body = [_width(r.cells[c][0], f0, st.size) for r in t.rows if r.cells and r.cells[c][0]]
            out.append(max(heads + body + [st.size]))
        return out

    @property
    def hang(self) -> float:
        """Room past a column's alignment line for what hangs (a mark, a flag, a ")")."""
        return self.st.size * 1.2

    @property
    def width(self) -> float:
        return sum(self.widths) + (self.st.pad + self.hang) * (self.t.n_cols - 1)

    def cols(self, x0: float) -> list[tuple[float, float]]:
        out, x = [], x0
        for c, w in enumerate(self.widths):
            out.append((x, x + w))
            x += w + self.st.pad + (self.hang if c else self.st.pad * 0.3)
        return out

    def draw(self, page: pymupdf.Page, x0: float, y: float, rules: bool) -> float:
        t, st = self.t, self.st
        f0, f1 = st.font
        lh = st.size * st.pitch
        cols = self.cols(x0)
        left, right = cols[0][0] - 3, cols[-1][1] + self.hang
        if rules:
            page.draw_line((left, y), (right, y), width=0.6)
        for row in t.header:
            base = y + lh * 0.5 + st.size * 0.25
            for c, (text, span) in _col_spans(row):
                a, b = cols[c][0], cols[c + span - 1][1]
                w = _width(text, f1, st.size)
                x = a if c == 0 else (a + b - w) / 2 if span > 1 or t.align != "right" else b - w
                page.insert_text((x, base), text, fontname=f1, fontsize=st.size)
                if span > 1 and rules:
                    page.draw_line((a, y + lh), (b, y + lh), width=0.4)
            y += lh
        if rules:
            page.draw_line((left, y), (right, y), width=0.5)
        for row in t.rows:
            y += row.space * lh
            if row.rule_above:
                page.draw_line((left, y), (right, y), width=0.4)
            base = y + lh * 0.5 + st.size * 0.25
            font = f1 if row.bold or row.label else f0
            if row.label:
                w = _width(row.label, font, st.size)
                x = (left + right - w) / 2 if row.style == "centre" else cols[0][0] + row.indent
                page.insert_text((x, base), row.label, fontname=font, fontsize=st.size)
                y += lh
                continue
            for c, (fig, mark) in enumerate(row.cells):
                if not fig:
                    continue
                a, b = cols[c]
                if c == 0:
                    page.insert_text((a + row.indent, base), fig, fontname=font, fontsize=st.size)
                    continue
                self._figure(page, fig, mark, a, b, base, font, c)
            y += lh
        if rules:
            page.draw_line((left, y), (right, y), width=0.6)
        return y

    def _figure(
        self, page: pymupdf.Page, fig: str, mark: str, a: float, b: float, base: float, font: str, c: int
    ) -> None:
        t, st = self.t, self.st
        placeholder = not any(ch.isdigit() for ch in fig)
        if placeholder and t.place == "centre":
            x = (a + b - _width(fig, font, st.size)) / 2
        elif placeholder or t.align == "right":
            core, _dec, hang = self._parts(fig)
            x = b - _width(core, font, st.size)
        elif t.align == "decimal":
            core, dec, hang = self._parts(fig)
            ps = [self._parts(r.cells[c][0]) for r in t.rows if r.cells and r.cells[c][0]]
            right = max((_width(q, font, st.size) for _p, q, _h in ps), default=0.0)
            x = b - right - _width(core, font, st.size)
        else:  # centred
            x = (a + b - _width(fig, font, st.size)) / 2
        page.insert_text((x, base), fig, fontname=font, fontsize=st.size)
        if mark:
            end = x + _width(fig, font, st.size)
            if mark in _FLAGS:  # a flag after a space, on the line
                page.insert_text((end + st.size * 0.3, base), mark, fontname=font, fontsize=st.size)
            else:  # a note mark, raised and smaller, close after the figure
                page.insert_text(
                    (end + 0.6, base - st.size * 0.35), mark, fontname=font, fontsize=st.size * 0.7
                )


def _stat_table(rng: random.Random, n_fig: int, n_rows: int, sparse: bool, sep: str = ",") -> _StatTable:
    fill = [rng.uniform(0.25, 0.8) if sparse else rng.uniform(0.8, 1.0) for _ in range(n_fig)]
    marks = rng.choice(["none", "note", "flag"])
    places = rng.sample(_PLACEHOLDERS, rng.randint(1, 2)) if rng.random() < 0.6 else []
    t = _StatTable(
        header=_stat_header(rng, n_fig),
        rows=_stat_rows(rng, n_fig, n_rows, fill, marks, places, sep),
        align=rng.choice(["right", "right", "right", "decimal", "centre"]),
        place=rng.choice(["same", "centre"]),
    )
    t.paren = any(f.endswith(")") for r in t.rows for f, _m in r.cells)
    return t


def _sections(rng: random.Random, t: _StatTable, n_fig: int) -> None:
    """Cut ``t``'s body into two to four sections, each opened by a label row (and sometimes a
    sub-heading under it); a section may fill fewer columns, and close with a subtotal."""
    style = rng.choice(["stub", "span", "centre"])
    space = rng.choice([0.0, 0.3, 0.6, 1.0, 1.4])
    rule = rng.random() < 0.3
    n = rng.randint(2, min(4, max(2, len(t.rows) // 3)))
    cuts = sorted(rng.sample(range(1, len(t.rows)), n - 1)) if len(t.rows) > n else list(range(1, n))
    starts = [0, *cuts]
    names = rng.sample(_SECTIONS, n)
    out: list[_StatRow] = []
    for k, s0 in enumerate(starts):
        s1 = starts[k + 1] if k + 1 < n else len(t.rows)
        if style == "span" or (style == "stub" and rng.random() < 0.3):
            label = (
                f"{rng.choice(['Panel', 'Part', 'Section'])} {'ABCD'[k]}. {names[k]}: "
                + _label(rng, rng.randint(3, 7)).lower()
            )
        else:
            label = names[k]
        out.append(_StatRow(label=label, style=style, space=space if k else 0.0, rule_above=rule and k > 0))
        if rng.random() < 0.25:  # a sub-heading under the section's label
            out.append(
                _StatRow(
                    label=rng.choice(["Of which:", "Thereof", "By size class"]), style="stub", indent=8.0
                )
            )
        body = t.rows[s0:s1]
        if k and n_fig >= 3 and rng.random() < 0.35:  # this section fills only the first columns
            keep = rng.randint(1, n_fig - 1)
            for r in body:
                r.cells = r.cells[: keep + 1] + [("", "")] * (n_fig - keep)
                if not any(f for f, _m in r.cells[1:]):
                    r.cells[1] = ("1", "")
        out.extend(body)
        if rng.random() < 0.3 and len(body) >= 2:
            total = [(rng.choice(["Total", "Subtotal", "All"]), "")] + [
                (f"{rng.randint(10, 99999):,}", "") if any(r.cells[c][0] for r in body) else ("", "")
                for c in range(1, n_fig + 1)
            ]
            out.append(_StatRow(cells=total, bold=True))
    t.rows = out


def _shape(rng: random.Random, cls: str, doc: pymupdf.Document, tags: list[str]) -> list[TruthTable]:
    """``SHAPE``: a page with a statistical table (sparse, or in sections), or two tables stacked."""
    W, H = rng.choice([(595.0, 842.0), (612.0, 792.0)])
    page = doc.new_page(width=W, height=H)
    margin = rng.uniform(40, 75)
    x0, x1 = margin, W - margin
    font = rng.choice(_FAMILIES)
    size = rng.choice([8.5, 9.0, 10.0])
    if rng.random() < 0.5:
        _furniture(page, rng, rng.randint(2, 40), margin)
    y = margin + 10
    if rng.random() < 0.6:
        y = _paragraph(page, rng, x0, x1, y, rng.randint(2, 5), font[0], size)
    rules = rng.random() < 0.4
    tags.append("rules" if rules else "no_rules")
    truths: list[TruthTable] = []

    def put(t: _StatTable, top: float, caption: bool) -> float:
        st = _style(rng, "none")
        st.font = font
        st.size = rng.choice([7.0, 8.0, 8.5, 9.0])
        st.pitch = rng.uniform(1.2, 1.7)
        pr = _StatPrinter(t, st, x1 - x0)
        cols = pr.cols(0.0)
        extent = cols[-1][1] - cols[0][0]
        for row in t.rows:  # a label row is set within the table's width: words it has no room for go
            while row.label.count(" ") > 1 and _width(row.label, st.font[1], st.size) > extent - 4:
                row.label = row.label.rsplit(" ", 1)[0]
        if caption:
            top = _caption(
                page, f"Table {rng.randint(1, 40)}. {_label(rng, rng.randint(3, 7))}", x0, top, size
            )
        bottom = pr.draw(page, x0 + 2, top + 4, rules)
        truths.append(TruthTable(pages=[0], grids={0: t.grid()}, merged=t.grid(), header_rows=len(t.header)))
        tags.extend([t.align, f"place:{t.place}"])
        return bottom

    caption = rng.random() < 0.6
    if cls in ("sparse_stats", "sectioned", "spaced_stats"):
        n_fig = rng.randint(3, 8) if cls != "sectioned" else rng.randint(2, 6)
        t = _stat_table(
            rng,
            n_fig,
            rng.randint(8, 22),
            sparse=cls != "sectioned" or rng.random() < 0.3,
            sep=" " if cls == "spaced_stats" else ",",
        )
        if cls == "sectioned":
            _sections(rng, t, n_fig)
            tags.append(t.rows[0].style)
        y = put(t, y + 6, caption)
    elif cls == "two_stacked":
        variant = rng.choice(["caption", "note", "gap"])
        tags.append(variant)
        n1 = rng.randint(2, 6)
        n2 = n1 if rng.random() < 0.5 else rng.randint(2, 6)
        y = put(_stat_table(rng, n1, rng.randint(4, 12), sparse=rng.random() < 0.3), y + 6, caption)
        if variant == "note":
            note = rng.choice(["Source: ", "Note: "]) + _sentence(rng, rng.randint(6, 14))
            page.insert_text((x0, y + 12), note, fontname=font[0], fontsize=max(6.5, size - 2))
            y += 18
        gap = rng.uniform(1.5, 3.5) * size
        y = put(
            _stat_table(rng, n2, rng.randint(4, 12), sparse=rng.random() < 0.3), y + gap, variant == "caption"
        )
    else:
        raise ValueError(cls)
    if rng.random() < 0.5:  # footnotes under the table
        note = rng.choice(["Source: ", "Note: ", "p provisional; e estimated. "]) + _sentence(
            rng, rng.randint(6, 14)
        )
        page.insert_text((x0, y + 12), note, fontname=font[0], fontsize=max(6.0, size - 2.5))
    return truths


def _wrapped(rng: random.Random, cls: str, doc: pymupdf.Document, tags: list[str]) -> list[TruthTable]:
    """``WRAPPED``: a page with a stream table whose row labels wrap and whose cells are partly empty."""
    W, H = rng.choice([(595.0, 842.0), (612.0, 792.0)])
    page = doc.new_page(width=W, height=H)
    margin = rng.uniform(40, 80)
    x0, x1 = margin, W - margin
    font = rng.choice(_FAMILIES)
    size = rng.choice([8.5, 9.0, 10.0, 11.0])
    if rng.random() < 0.5:
        _furniture(page, rng, rng.randint(2, 40), margin)
    y = margin + 10
    if rng.random() < 0.7:
        y = _paragraph(page, rng, x0, x1, y, rng.randint(2, 5), font[0], size, justify=rng.random() < 0.5)
    st = _style(rng, rng.choice(["none", "header"]))
    n_cols, n_rows = rng.randint(3, 7), rng.randint(5, 14)
    if cls == "wrapped_stub":
        sp = _spec(rng, n_cols, n_rows, sparse=rng.choice([0.0, 0.15, 0.3]), places=False)
        for r in sp.body:
            r[0] = _label(rng, rng.randint(1, 8))
        wrap_width = rng.uniform(60, 120)
    elif cls == "blank_cells":
        n_cols = max(n_cols, 5)
        sp = _spec(rng, n_cols, n_rows, sparse=rng.uniform(0.1, 0.3), places=False)
        top: list[tuple[str, int]] = [("", 1)]
        groups: list[range] = []
        c = 1
        while c < n_cols:
            span = min(rng.choice([2, 2, 3]), n_cols - c)
            top.append((_label(rng, 2) if span > 1 else "", span))
            groups.append(range(c, c + span))
            c += span
        sp.header.insert(0, top)
        if rng.random() < 0.6:
            sp.header[1][0] = ("", 1)
        for r in sp.body:
            r[0] = _label(rng, rng.randint(1, 5))
            if rng.random() < 0.3:  # no figures for a whole group of columns
                for c in rng.choice(groups):
                    r[c] = ""
            elif rng.random() < 0.1:  # a row of a label alone
                r[1:] = [""] * (n_cols - 1)
        wrap_width = rng.uniform(80, 140)
    else:
        raise ValueError(cls)
    sp.wrap = {0}
    sp.valign = (
        rng.choice(["top", "bottom", "middle"]) if cls == "wrapped_stub" else rng.choice(["top", "bottom"])
    )
    sp.indent = rng.choice([0.0, 0.0, st.size])
    tags.extend([st.rules, sp.valign] + (["indent"] if sp.indent else []))
    top_y = y + 10
    if rng.random() < 0.5:
        top_y = _caption(
            page, f"Table {rng.randint(1, 30)}. {_label(rng, rng.randint(2, 6))}", x0, y + 8, size
        )
    pr = _Printer(sp, st, x1 - x0, wrap_width=wrap_width)
    _fit_rows(pr, sp, (W, H), x0, top_y, H - margin - 20, least=3)
    y = pr.draw(page, x0, top_y)
    grid = sp.grid()
    truths = [TruthTable(pages=[0], grids={0: grid}, merged=grid, header_rows=len(sp.header))]
    if rng.random() < 0.5 and y < H - margin - 30:
        note = rng.choice(["Source: ", "Note: ", "* "]) + _sentence(rng, rng.randint(6, 14))
        page.insert_text((x0, y + 12), note, fontname=font[0], fontsize=max(6.5, size - 2))
    return truths


def _prose_page(rng: random.Random, doc: pymupdf.Document) -> tuple[pymupdf.Page, float, tuple, float]:
    """A new page of ``doc`` (A4 or Letter) and its margin, font family and body size, with page
    furniture on half of them: (page, margin, font, size). The draws come in this order, so a seed
    keeps its document."""
    W, H = rng.choice([(595.0, 842.0), (612.0, 792.0)])
    page = doc.new_page(width=W, height=H)
    margin = rng.uniform(40, 80)
    font = rng.choice(_FAMILIES)
    size = rng.choice([8.5, 9.0, 10.0, 11.0])
    if rng.random() < 0.5:
        _furniture(page, rng, rng.randint(2, 40), margin)
    return page, margin, font, size


def _no_table(rng: random.Random, cls: str, doc: pymupdf.Document, tags: list[str]) -> None:
    page, margin, font, size = _prose_page(rng, doc)
    W, H = page.rect.width, page.rect.height
    x0, x1 = margin, W - margin
    y = margin
    if cls == "two_column_text":
        gap = rng.uniform(14, 30)
        mid = (x0 + x1) / 2
        justify = rng.random() < 0.6
        tags.append("justified" if justify else "ragged")
        n = int((H - 2 * margin) / (size * 1.3)) - 2
        for a, b in ((x0, mid - gap / 2), (mid + gap / 2, x1)):
            yy = y
            while yy < H - margin - 60:
                k = min(rng.randint(4, 14), int((H - margin - yy) / (size * 1.3)) - 1)
                if k < 1:
                    break
                yy = _paragraph(page, rng, a, b, yy, k, font[0], size, justify=justify) + size * 0.5
        del n
    elif cls == "numbered_list":
        y = _paragraph(page, rng, x0, x1, y, 3, font[0], size)
        style = rng.choice(["{}.", "{})", "({})", "[{}]"])
        indent = rng.uniform(16, 30)
        k = 1
        while y < H - margin - 80:
            page.insert_text((x0, y + size), style.format(k), fontname=font[0], fontsize=size)
            y = _paragraph(page, rng, x0 + indent, x1, y - size * 0.05, rng.randint(1, 4), font[0], size)
            y += rng.uniform(0, size)
            k += 1
    elif cls == "transcript":
        step = rng.choice([1, 1, 5])
        lh = size * rng.uniform(1.6, 2.1)
        tx = x0 + rng.uniform(25, 45)
        n = int((H - 2 * margin) / lh) - 1
        words = _body_words(rng, n * 16)
        lines = _wrap(words, x1 - tx - 40, font[0], size)
        for k in range(min(n, len(lines))):
            base = y + lh * (k + 1)
            if step == 1 or (k + 1) % 5 == 0:
                page.insert_text((x0, base), str(k + 1), fontname=font[0], fontsize=size)
            text = lines[k]
            if rng.random() < 0.25:
                tag = rng.choice(["Q.", "A.", "THE COURT:", "MR. SMITH:"])
                page.insert_text((tx, base), tag, fontname=font[0], fontsize=size)
                page.insert_text(
                    (tx + _width(tag, font[0], size) + rng.uniform(8, 20), base),
                    text,
                    fontname=font[0],
                    fontsize=size,
                )
            else:
                page.insert_text((tx, base), text, fontname=font[0], fontsize=size)
    elif cls == "rtl_prose":
        vocab = _HEBREW if rng.random() < 0.5 else _ARABIC
        tags.append("hebrew" if vocab is _HEBREW else "arabic")
        n = rng.randint(6, 16)
        for _ in range(rng.randint(2, 4)):
            text = " ".join(rng.choice(vocab) for _ in range(n * 8))
            rect = pymupdf.Rect(x0, y, x1, y + n * size * 1.6 + 20)
            align = rng.choice(["justify", "right"])
            page.insert_htmlbox(
                rect,
                f'<p dir="rtl" style="text-align:{align}">{text}</p>',
                css=f"* {{font-size:{size}px; line-height:1.4}}",
            )
            y = rect.y1 + 8
            if y > H - margin - 100:
                break
    else:
        raise ValueError(cls)


def _figure_pair(rng: random.Random, doc: pymupdf.Document, tags: list[str]) -> None:
    """Two line charts side by side, each under a "Figure N." caption over one or two lines, with
    tick labels on both axes, an axis title, a legend and a source note under it; running text
    above or below. No table."""
    page, margin, font, size = _prose_page(rng, doc)
    W = page.rect.width
    x0, x1 = margin, W - margin
    y = margin + 10
    if rng.random() < 0.6:
        y = _paragraph(page, rng, x0, x1, y, rng.randint(2, 5), font[0], size)
    gap = rng.uniform(20, 40)
    half = (x1 - x0 - gap) / 2
    fs = max(6.0, size - rng.choice([1.0, 2.0, 2.5]))
    lh = fs * 1.25
    bottoms = []
    number = rng.randint(1, 9)
    word = rng.choice(["FIGURE", "Figure", "Fig."])
    for k in range(2):
        fx = x0 + k * (half + gap)
        caption = f"{word} {number + k}. " + _label(rng, rng.randint(4, 14)) + f" — {rng.randint(1990, 2010)}"
        yy = y
        for line in _wrap(caption.split(), half, font[1], fs):
            yy += lh
            page.insert_text((fx, yy), line, fontname=font[1], fontsize=fs)
        top, left = yy + lh, fx + fs * 3.5
        right, bottom = fx + half - fs * 3.5, top + rng.uniform(110, 180)
        page.draw_rect(pymupdf.Rect(left, top, right, bottom), color=(0, 0, 0), width=0.5)
        lo, step = rng.choice([(0.86, 0.005), (6700, 100), (0.05, 0.01), (10, 5)])
        n_ticks = rng.randint(5, 8)
        for t in range(n_ticks):
            ty = bottom - (bottom - top) * t / (n_ticks - 1)
            v = lo + step * t
            text = f"{v:,.0f}" if step >= 1 else f"{v:.3f}"
            page.insert_text((fx, ty + fs * 0.3), text, fontname=font[0], fontsize=fs)
        years = list(range(rng.choice([1995, 1997, 2000]), 2012, rng.choice([2, 5])))[:6]
        for t, yr in enumerate(years):
            tx = left + (right - left) * t / max(1, len(years) - 1)
            page.insert_text((tx - fs, bottom + lh), str(yr), fontname=font[0], fontsize=fs)
        page.insert_text(((left + right) / 2 - fs, bottom + 2 * lh), "Year", fontname=font[0], fontsize=fs)
        pts = [
            pymupdf.Point(left + (right - left) * t / 9, top + (bottom - top) * rng.uniform(0.1, 0.9))
            for t in range(10)
        ]
        page.draw_polyline(pts, color=(0.2, 0.3, 0.7), width=0.8)
        ly = top + lh
        for _ in range(rng.randint(1, 3)):  # legend lines inside the plot
            page.insert_text((left + 6, ly), _label(rng, rng.randint(2, 5)), fontname=font[0], fontsize=fs)
            ly += lh
        yy = bottom + 3 * lh
        note = "Source: " + _sentence(rng, rng.randint(10, 24))
        for line in _wrap(note.split(), half, font[0], fs):
            page.insert_text((fx, yy), line, fontname=font[0], fontsize=fs)
            yy += lh
        bottoms.append(yy)
    if rng.random() < 0.6:
        _paragraph(page, rng, x0, x1, max(bottoms) + 10, rng.randint(2, 5), font[0], size)
    tags.append(word)


def _chart_page(rng: random.Random, doc: pymupdf.Document) -> tuple[pymupdf.Page, float, tuple, float, float]:
    """A prose page with running text above (most pages) and a "Figure N." caption: (page,
    margin, font, size, the y under the caption)."""
    page, margin, font, size = _prose_page(rng, doc)
    x0, x1 = margin, page.rect.width - margin
    y = margin + 10
    if rng.random() < 0.7:
        y = _paragraph(page, rng, x0, x1, y, rng.randint(2, 6), font[0], size) + size
    word = rng.choice(["Figure", "FIGURE", "Fig.", "Chart", "Exhibit"])
    caption = f"{word} {rng.randint(1, 12)}. " + _label(rng, rng.randint(3, 9))
    for line in _wrap(caption.split(), x1 - x0, font[1], size):
        y += size * 1.3
        page.insert_text((x0, y), line, fontname=font[1], fontsize=size)
    return page, margin, font, size, y + size


def _arrow(page: pymupdf.Page, a: tuple[float, float], b: tuple[float, float], head: float) -> None:
    """A stroke from a to b ending in a filled triangular head at b."""
    dx, dy = b[0] - a[0], b[1] - a[1]
    n = max((dx * dx + dy * dy) ** 0.5, 1e-6)
    ux, uy = dx / n, dy / n
    base = (b[0] - ux * head, b[1] - uy * head)
    page.draw_line(pymupdf.Point(*a), pymupdf.Point(*base), color=(0, 0, 0), width=0.7)
    left = pymupdf.Point(base[0] - uy * head * 0.45, base[1] + ux * head * 0.45)
    right = pymupdf.Point(base[0] + uy * head * 0.45, base[1] - ux * head * 0.45)
    page.draw_polyline([left, pymupdf.Point(*b), right, left], color=None, fill=(0, 0, 0), closePath=True)


def _bar_chart(rng: random.Random, doc: pymupdf.Document, tags: list[str]) -> None:
    """A bar chart under its caption: bars (one or two series) on a baseline, a value axis with
    evenly spaced figures (ticks on most pages, gridlines or a frame on some), value labels over
    the bars, category labels under them, a legend of swatches; a source note and running text
    under it. No table."""
    page, margin, font, size, y = _chart_page(rng, doc)
    W = page.rect.width
    x0, x1 = margin, W - margin
    fs = max(6.0, size - rng.choice([0.0, 1.0, 2.0]))
    left = x0 + fs * rng.uniform(4, 6)
    right = x1 - rng.uniform(0, 0.35) * (x1 - x0)
    top, bottom = y + fs * 2, y + fs * 2 + rng.uniform(110, 220)
    n_ticks = rng.randint(4, 8)
    step = rng.choice([5, 10, 20, 25, 50, 100, 1000, 0.05])
    ticks = rng.random() < 0.75
    style = rng.choice(["axes", "grid", "frame"])
    tags += [style, "ticks" if ticks else "no_ticks"]
    for t in range(n_ticks):
        ty = bottom - (bottom - top) * t / (n_ticks - 1)
        v = step * t
        text = f"{v:,.0f}" if step >= 1 else f"{v:.2f}"
        page.insert_text(
            (left - fs * 0.6 - _width(text, font[0], fs), ty + fs * 0.3), text, fontname=font[0], fontsize=fs
        )
        if ticks:
            page.draw_line(pymupdf.Point(left - 3, ty), pymupdf.Point(left, ty), color=(0, 0, 0), width=0.5)
        if style == "grid" and t > 0:
            page.draw_line(
                pymupdf.Point(left, ty), pymupdf.Point(right, ty), color=(0.8, 0.8, 0.8), width=0.4
            )
    if style == "frame":
        page.draw_rect(pymupdf.Rect(left, top, right, bottom), color=(0, 0, 0), width=0.5)
    else:
        page.draw_line(pymupdf.Point(left, top), pymupdf.Point(left, bottom), color=(0, 0, 0), width=0.6)
        page.draw_line(pymupdf.Point(left, bottom), pymupdf.Point(right, bottom), color=(0, 0, 0), width=0.6)
    n_cat = rng.randint(3, 9)
    n_ser = rng.choice([1, 1, 2])
    slot = (right - left) / n_cat
    bw = slot * rng.uniform(0.4, 0.7) / n_ser
    colours = [(0.9, 0.5, 0.1), (0.2, 0.4, 0.7)]
    cats = rng.choice(
        [
            [str(2000 + k) for k in range(n_cat)],
            [_label(rng) for _ in range(n_cat)],
            [f"{10 * k}-{10 * k + 9}" for k in range(n_cat)],
        ]
    )
    for k in range(n_cat):
        cx = left + slot * (k + 0.5)
        for j in range(n_ser):
            frac = rng.uniform(0.05, 0.95)
            bx = cx - bw * n_ser / 2 + j * bw
            page.draw_rect(
                pymupdf.Rect(bx, bottom - (bottom - top) * frac, bx + bw, bottom),
                color=None,
                fill=colours[j],
                width=0,
            )
            if rng.random() < 0.5 or n_ser == 1:
                v = step * (n_ticks - 1) * frac
                text = f"{v:,.0f}" if step >= 1 else f"{v:.2f}"
                page.insert_text(
                    (bx + bw / 2 - _width(text, font[0], fs * 0.9) / 2, bottom - (bottom - top) * frac - 2),
                    text,
                    fontname=font[0],
                    fontsize=fs * 0.9,
                )
        text = cats[k]
        page.insert_text(
            (cx - _width(text, font[0], fs) / 2, bottom + fs * 1.3), text, fontname=font[0], fontsize=fs
        )
    ly = top + fs
    for j in range(n_ser if n_ser > 1 or rng.random() < 0.5 else 0):  # the legend, right of the plot
        lx = right + fs
        page.draw_rect(
            pymupdf.Rect(lx, ly - fs * 0.7, lx + fs * 0.7, ly), color=None, fill=colours[j], width=0
        )
        page.insert_text((lx + fs * 1.2, ly), _label(rng, rng.randint(1, 3)), fontname=font[0], fontsize=fs)
        ly += fs * 1.4
    yy = bottom + fs * 3.2
    if rng.random() < 0.6:
        page.insert_text(
            ((left + right) / 2 - fs * 2, bottom + fs * 2.5), _label(rng, 2), fontname=font[0], fontsize=fs
        )
        yy += fs
    note = "Source: " + _sentence(rng, rng.randint(8, 20))
    for line in _wrap(note.split(), x1 - x0, font[0], fs):
        yy += fs * 1.25
        page.insert_text((x0, yy), line, fontname=font[0], fontsize=fs)
    if rng.random() < 0.6:
        _paragraph(page, rng, x0, x1, yy + 10, rng.randint(2, 6), font[0], size)


def _flow_chart(rng: random.Random, doc: pymupdf.Document, tags: list[str]) -> None:
    """A flow chart under its caption: two or three rows of boxed steps (one or two label lines
    each), an arrow from each step to the next along the row and down between rows, some side
    labels by the arrows; running text under it. No table."""
    page, margin, font, size, y = _chart_page(rng, doc)
    W = page.rect.width
    x0, x1 = margin, W - margin
    fs = max(6.5, size - rng.choice([0.0, 1.0]))
    n_rows, n_cols = rng.randint(2, 3), rng.randint(3, 4)
    gap = rng.uniform(18, 36)
    bw = (x1 - x0 - gap * (n_cols - 1)) / n_cols
    bh = fs * rng.choice([2.2, 3.4])
    vgap = rng.uniform(22, 40)
    rounded = rng.random() < 0.4
    tags.append("rounded" if rounded else "square")
    boxes = []
    for r in range(n_rows):
        for c in range(n_cols):
            bx = x0 + c * (bw + gap)
            by = y + fs + r * (bh + vgap)
            rect = pymupdf.Rect(bx, by, bx + bw, by + bh)
            page.draw_rect(rect, color=(0, 0, 0), width=0.7, radius=0.15 if rounded else None)
            lines = _wrap(_label(rng, rng.randint(1, 5)).split(), bw - 6, font[0], fs)[:2]
            ty = by + (bh - len(lines) * fs * 1.2) / 2 + fs
            for line in lines:
                page.insert_text(
                    (bx + (bw - _width(line, font[0], fs)) / 2, ty), line, fontname=font[0], fontsize=fs
                )
                ty += fs * 1.2
            boxes.append(rect)
    for r in range(n_rows):
        for c in range(n_cols - 1):
            a, b = boxes[r * n_cols + c], boxes[r * n_cols + c + 1]
            my = (a.y0 + a.y1) / 2
            _arrow(page, (a.x1, my), (b.x0, my), rng.uniform(4, 6))
        if r + 1 < n_rows:
            c = rng.randrange(n_cols)
            a, b = boxes[r * n_cols + c], boxes[(r + 1) * n_cols + c]
            mx = (a.x0 + a.x1) / 2
            _arrow(page, (mx, a.y1), (mx, b.y0), rng.uniform(4, 6))
            if rng.random() < 0.5:
                page.insert_text(
                    (mx + 4, (a.y1 + b.y0) / 2 + fs * 0.3),
                    _label(rng, 2).lower(),
                    fontname=font[0],
                    fontsize=fs * 0.85,
                )
    yy = y + fs + n_rows * (bh + vgap)
    page.insert_text((x0, yy), "Source: " + _sentence(rng, rng.randint(5, 10)), fontname=font[0], fontsize=fs)
    if rng.random() < 0.7:
        _paragraph(page, rng, x0, x1, yy + 12, rng.randint(2, 6), font[0], size)


# ------------------------------------------------------------------- financial statements (issue 37)

_STATEMENT_SECTIONS = [
    ("Revenues:", ["Product sales", "Services", "Subscriptions and support", "Leasing", "Other revenue"]),
    ("Cost of revenues:", ["Product", "Services and other", "Amortisation of acquired technology"]),
    (
        "Operating expenses:",
        [
            "Research and development",
            "Selling, general and administrative",
            "Restructuring and other",
            "Impairment of goodwill",
        ],
    ),
    (
        "Current assets:",
        [
            "Cash and cash equivalents",
            "Short-term investments",
            "Accounts receivable, net",
            "Inventory",
            "Prepaid expenses and other current assets",
        ],
    ),
    (
        "Current liabilities:",
        [
            "Accounts payable",
            "Accrued liabilities and other",
            "Deferred revenue",
            "Current portion of long-term debt",
        ],
    ),
    (
        "Cash flows from operating activities:",
        ["Net income", "Depreciation and amortisation", "Stock-based compensation", "Deferred income taxes"],
    ),
    (
        "Cash flows from investing activities:",
        [
            "Purchases of property and equipment",
            "Purchases of marketable securities",
            "Business combinations",
        ],
    ),
    ("Other income (expense):", ["Interest income", "Interest expense", "Foreign exchange gains (losses)"]),
]
_STATEMENT_TITLES = [
    "CONSOLIDATED STATEMENTS OF OPERATIONS",
    "CONSOLIDATED BALANCE SHEETS",
    "CONSOLIDATED STATEMENTS OF CASH FLOWS",
    "CONSOLIDATED STATEMENTS OF COMPREHENSIVE INCOME",
]
_PERIOD_HEADS = ["Year Ended December 31,", "Years ended", "As of December 31,", "Fiscal Years Ended"]


def _set_figures(
    page: pymupdf.Page,
    cols: list[tuple[float, float]],
    figs: list[str],
    usd: bool,
    base: float,
    font: str,
    size: float,
    dollar_on_nil: bool,
) -> list[str]:
    """A statement row's figures, each set right at its column's right edge (a closing ")" hanging
    past it, a nil as a dash), with "$" at the column's left where ``usd`` (before a nil's dash too
    with ``dollar_on_nil``); their cells as the truth reads them."""
    cells = []
    for (left, right), f in zip(cols, figs, strict=True):
        if not f:
            cells.append("")
            continue
        if f == "—" and _DEJAVU.exists():  # the base-14 fonts' encoding has no em dash
            w = _width(f, "dejavu", size)
            page.insert_text((right - w, base), f, fontname="dejavu", fontfile=str(_DEJAVU), fontsize=size)
        else:
            core = f[:-1] if f.endswith(")") else f
            page.insert_text((right - _width(core, font, size), base), f, fontname=font, fontsize=size)
        dollar = usd and (dollar_on_nil or f != "—")
        if dollar:
            page.insert_text((left, base), "$", fontname=font, fontsize=size)
        cells.append(f"$ {f}" if dollar else f)
    return cells


def _statement_sheet(
    rng: random.Random,
    doc: pymupdf.Document,
    margins: tuple[float, float],
    families: list[tuple[str, str]],
    sizes: list[float],
    leading: tuple[float, float],
) -> tuple[pymupdf.Page, float, float, float, tuple[str, str], float, float]:
    """A statement generator's page, drawn in one order for all of them: its size, margin, faces,
    type size and line height, half the time running furniture. Returns (page, width, height,
    margin, faces, type size, line height)."""
    W, H = rng.choice([(595.0, 842.0), (612.0, 792.0)])
    page = doc.new_page(width=W, height=H)
    margin = rng.uniform(*margins)
    faces = rng.choice(families)
    size = rng.choice(sizes)
    lh = size * rng.uniform(*leading)
    if rng.random() < 0.5:
        _furniture(page, rng, rng.randint(30, 120), margin)
    return page, W, H, margin, faces, size, lh


def _rules_above_total(page: pymupdf.Page, columns: list[tuple[float, float]], y: float, lh: float) -> float:
    """Short rules over a total's figure columns; the baseline moves down under them."""
    for a, b in columns:
        page.draw_line((a, y + lh * 0.2), (b, y + lh * 0.2), width=0.4)
    return y + lh * 0.15


def _statement(
    rng: random.Random,
    doc: pymupdf.Document,
    tags: list[str],
    noted: bool = False,
    stacked: bool = False,
    sectioned: bool = False,
) -> list[TruthTable]:
    """``STATEMENT``: a page with one financial statement (see ``STATEMENT``); ``noted``: its short
    form with a note mark on a label and the note under the grid (``NOTED``); ``stacked``: its period
    heads over two lines (``STACKED``; drawn after the rows, so the other forms draw as before);
    ``sectioned``: group labels over its sections, one or two label lines between the heads and the
    first row of figures (``SECTIONED_HEADS``; drawn after the rows, so the other forms draw as before)."""
    page, W, H, margin, (f0, f1), size, lh = _statement_sheet(
        rng, doc, (40, 70), _FAMILIES, [7.5, 8.0, 8.5, 9.0, 10.0], (1.3, 1.7)
    )
    x0, x1, y = margin, W - margin, margin + 10
    for line, fnt in (
        (f"{_label(rng, 2).upper()} INC.", f1),
        (rng.choice(_STATEMENT_TITLES), f1),
        (rng.choice(["(in millions, except per share data)", "(in thousands)", "(in millions)"]), f0),
    ):
        page.insert_text(
            ((W - _width(line, fnt, size + 1)) / 2, y + size), line, fontname=fnt, fontsize=size + 1
        )
        y += (size + 1) * 1.4
    if rng.random() < 0.3:
        y = _paragraph(page, rng, x0, x1, y + 4, rng.randint(2, 3), f0, size)
    n_fig = rng.choice([2, 3, 3])
    year = rng.randint(2012, 2025)
    years = [str(year - k) for k in range(n_fig)]
    step = rng.choice([8.0, 10.0, 12.0])  # indent per level, pt
    dec = rng.random() < 0.2
    scale = rng.uniform(2.5, 5.5)

    def figure() -> str:
        v = 10 ** rng.uniform(0.3, scale)
        text = f"{v:,.2f}" if dec else f"{round(v):,}"
        return f"({text})" if rng.random() < 0.2 else text

    # body rows: (label, level, figures, dollar, total, is section head)
    rows: list[tuple[str, int, list[str], bool, bool, bool]] = []
    for head, items in rng.sample(_STATEMENT_SECTIONS, rng.randint(2, 4)):
        rows.append((head, 0, [""] * n_fig, False, False, True))
        first = True
        for item in rng.sample(items, rng.randint(2, len(items))):
            figs = [figure() for _ in range(n_fig)]
            if rng.random() < 0.15:  # a nil row: dashes where a figure would be
                figs = ["—" if k or rng.random() < 0.5 else f for k, f in enumerate(figs)]
            elif rng.random() < 0.12:
                figs[rng.randrange(n_fig)] = "—"
            rows.append((item, 1, figs, first and rng.random() < 0.7, False, False))
            first = False
            if rng.random() < 0.12:  # a sub-item, one level deeper
                rows.append(
                    (_label(rng, rng.randint(2, 4)), 2, [figure() for _ in range(n_fig)], False, False, False)
                )
        total = "Total " + head.rstrip(":").split(" from ")[0].lower()
        rows.append(
            (total, rng.choice([1, 2]), [figure() for _ in range(n_fig)], rng.random() < 0.5, True, False)
        )
    if noted:  # a few rows of one section, one of them marked for the note under the grid
        body = [r for r in rows if not r[5]]
        rows = body[: rng.randint(2, 5)]
        k = rng.randrange(len(rows))
        rows[k] = (f"{rows[k][0]} (1)", *rows[k][1:])
    if rng.random() < 0.6:  # a closing row at the margin, in dollars
        rows.append(
            (
                rng.choice(["Net income", "Net income (loss)", "Total assets"]),
                0,
                [figure() for _ in range(n_fig)],
                True,
                True,
                False,
            )
        )

    groups: dict[int, bool] = {}  # ``sectioned``: the rows that are group labels -> centred
    group_bold = False
    if sectioned:
        rows, groups = _group_labels(rng, rows, n_fig, tags)
        group_bold = rng.random() < 0.6
        tags.append("bold_group" if group_bold else "plain_group")
    heads: list[tuple[str, str]] = []  # ``stacked``: each column's two head lines
    if stacked:
        form = rng.choice(["date_year", "ended_date", "months_ended"])
        day = rng.choice(["December 31", "September 28", "June 30", "March 31", "September 30"])
        quarters = ["Three months ended", "Nine months ended"]
        top = rng.choice(["Year ended", "Year Ended"] if form == "ended_date" else quarters)
        heads = [(f"{day},", yr) if form == "date_year" else (top, f"{day}, {yr}") for yr in years]
        tags.append(f"stacked:{form}")
    # columns: the stub, then per year a "$" slot and the figure, right-aligned, ")" hanging
    gap = rng.uniform(10, 26)
    for _ in range(12):  # a statement too wide for the page is set smaller (its labels never overlap)
        widest = max(_width(r[0], f0, size) + r[1] * step for i, r in enumerate(rows) if not groups.get(i))
        fig_w = max(_width(f.rstrip(")"), f0, size) for r in rows for f in r[2] if f) + size * 0.6
        fig_w = max(fig_w, _width(years[0], f1, size))
        dollar = _width("$", f0, size) + size * 0.4
        if heads:  # a head line fits over its column's "$" and figure
            fig_w = max(fig_w, max(_width(t, f1, size) for hd in heads for t in hd) - dollar)
        hang = _width(")", f0, size) + 1.0
        stub_w = widest + 6
        if stub_w + n_fig * (dollar + fig_w + gap + hang) <= x1 - x0:
            break
        size, gap, lh = size * 0.92, max(6.0, gap * 0.85), lh * 0.92
    fx = []  # (x of "$", right edge of the figure)
    x = x0 + stub_w + gap
    for _ in range(n_fig):
        fx.append((x, x + dollar + fig_w))
        x += dollar + fig_w + hang + gap
    header: list[list[tuple[str, int]]] = []
    if heads:
        y = _stacked_heads(rng, page, fx, heads, y, lh, f1, size, tags)
    elif rng.random() < 0.65:
        period = rng.choice(_PERIOD_HEADS)
        # printed once over the years, the period is the columns' context (``Table.column_headers``,
        # tables/statement.py), no row of the table
        w = _width(period, f1, size)
        page.insert_text(((fx[0][0] + fx[-1][1] - w) / 2, y + lh), period, fontname=f1, fontsize=size)
        page.draw_line((fx[0][0], y + lh + 2.5), (fx[-1][1], y + lh + 2.5), width=0.4)
        y += lh
        tags.append("period_head")
    if heads:
        header.append([("", 1)] + [(f"{a} {b}", 1) for a, b in heads])
    else:
        header.append([("", 1)] + [(yr, 1) for yr in years])
        for (a, b), yr in zip(fx, years, strict=True):
            page.insert_text((b - _width(yr, f1, size), y + lh), yr, fontname=f1, fontsize=size)
            if rng.random() < 0.5:
                page.draw_line((a, y + lh + 2.5), (b, y + lh + 2.5), width=0.4)
        y += lh * 1.3
    grid: Grid = []
    for row in header:
        cells: list[str] = []
        for text, span in row:
            cells += [text] + [""] * (span - 1)
        grid.append(cells)
    bold_heads = rng.random() < 0.5
    for i, (label, level, figs, usd, total, head) in enumerate(rows):
        if head and rng.random() < 0.5:
            y += lh * 0.3
        if total:
            y = _rules_above_total(page, fx, y, lh)
        base = y + lh
        bold = group_bold if i in groups else head and bold_heads
        w = _width(label, f1 if bold else f0, size)
        x = (x0 + fx[-1][1] - w) / 2 if groups.get(i) else x0 + level * step  # centred over the table
        page.insert_text((x, base), label, fontname=f1 if bold else f0, fontsize=size)
        cells = [label] + _set_figures(page, fx, figs, usd, base, f0, size, dollar_on_nil=False)
        grid.append(cells)
        y += lh
        if y > H - margin - 3 * lh:
            break
    if noted:  # the note: its mark at the margin, its sentence across the figure columns
        small = max(6.5, size - 1)
        mark_x = x0 + rng.uniform(0, 20)
        text_x = mark_x + _width("(1)", f0, small) + rng.uniform(4, 12)
        y += lh * rng.uniform(0.6, 1.4)
        page.insert_text((mark_x, y + lh), "(1)", fontname=f0, fontsize=small)
        words = _sentence(rng, rng.randint(14, 40)).split()
        for line in _wrap(words, x1 - text_x, f0, small):
            page.insert_text((text_x, y + lh), line, fontname=f0, fontsize=small)
            y += small * 1.3
        tags.append("note")
    elif rng.random() < 0.6:
        note = "See accompanying notes to consolidated financial statements."
        page.insert_text((x0, y + lh * 1.6), note, fontname=f0, fontsize=max(6.5, size - 1))
    tags.append(f"years:{n_fig}")
    return [TruthTable(pages=[0], grids={0: grid}, merged=grid, header_rows=len(header))]


_GROUP_LABELS = [
    "Assets",
    "Liabilities and shareholders' equity",
    "Liabilities and equity",
    "Operating activities",
    "Continuing operations",
    "Revenues and expenses",
]

#: a statement's row: (label, level, figures, dollar, total, is a section's head)
_StatementRow = tuple[str, int, list[str], bool, bool, bool]


def _group_labels(
    rng: random.Random, rows: list[_StatementRow], n_fig: int, tags: list[str]
) -> tuple[list[_StatementRow], dict[int, bool]]:
    """``SECTIONED_HEADS``' group labels among a statement's ``rows`` (which open with a section's
    head): one over the first section's head (two label lines under the period heads) or in place
    of it (one), half the time another over a later section's head; upper case or not, a colon or
    not, centred over the table or at the margin. Returns the rows and their group labels' indices ->
    whether centred."""
    upper, colon, centred = rng.random() < 0.6, rng.random() < 0.5, rng.random() < 0.5
    names = [n.upper() if upper else n for n in rng.sample(_GROUP_LABELS, 2)]
    names = [f"{n}:" if colon else n for n in names]
    two = rng.random() < 0.65
    out = list(rows)
    later = [i for i, r in enumerate(out) if r[5] and i > 0]
    at = [0]
    if later and rng.random() < 0.5:
        at.append(rng.choice(later))
    for k, i in reversed(list(enumerate(at))):
        group = (names[k], 0, [""] * n_fig, False, False, True)
        if k == 0 and not two:
            out[0] = group  # the group's label in place of its first section's
        else:
            out.insert(i, group)
    index = [0] + [i + two for i in at[1:]]  # the later one moved down by the first, if inserted
    tags.append(f"labels_under_heads:{2 if two else 1}")
    tags.append("centred_group" if centred else "margin_group")
    if len(at) > 1:
        tags.append("later_group")
    return out, dict.fromkeys(index, centred)


def _stacked_heads(
    rng: random.Random,
    page: pymupdf.Page,
    fx: list[tuple[float, float]],
    heads: list[tuple[str, str]],
    y: float,
    lh: float,
    font: str,
    size: float,
    tags: list[str],
) -> float:
    """``STACKED``'s heads: each column's two lines centred over its "$" and figure, or set right at
    the figure; a period head over all the columns above them, half the time, when the lower line
    is the year. Returns the baseline's y under them."""
    if heads[0][1].isdigit() and rng.random() < 0.5:
        period = rng.choice(["Years ended", "Year Ended", "Fiscal Years Ended"])
        w = _width(period, font, size)
        page.insert_text(((fx[0][0] + fx[-1][1] - w) / 2, y + lh), period, fontname=font, fontsize=size)
        page.draw_line((fx[0][0], y + lh + 2.5), (fx[-1][1], y + lh + 2.5), width=0.4)
        y += lh
        tags.append("period_head")
    centred = rng.random() < 0.6
    rule = rng.random() < 0.5
    tags.append("centred" if centred else "set_right")
    for (a, b), lines in zip(fx, heads, strict=True):
        for k, t in enumerate(lines):
            w = _width(t, font, size)
            x = (a + b - w) / 2 if centred else b - w
            page.insert_text((x, y + lh * (k + 1)), t, fontname=font, fontsize=size)
        if rule:
            page.draw_line((a, y + 2 * lh + 2.5), (b, y + 2 * lh + 2.5), width=0.4)
    return y + lh * 2.3


_WIDE_HEADS = [
    ["Adjusted", "Cost"],
    ["Unrealized", "Gains"],
    ["Unrealized", "Losses"],
    ["Fair", "Value"],
    ["Cash and", "Cash", "Equivalents"],
    ["Current", "Marketable", "Securities"],
    ["Non-Current", "Marketable", "Securities"],
    ["Carrying", "Amount"],
    ["Level", "Total"],
]


def _wide_statement(rng: random.Random, doc: pymupdf.Document, tags: list[str]) -> list[TruthTable]:
    """``WIDE``: a page with one wide table of figures under stacked column heads (see ``WIDE``)."""
    # proportional faces: a monospaced stub is another class
    page, W, H, margin, (f0, f1), size, lh = _statement_sheet(
        rng, doc, (36, 60), _FAMILIES[:2], [7.0, 7.5, 8.0, 8.5], (1.35, 1.7)
    )
    x0, x1, y = margin, W - margin, margin + 10
    if rng.random() < 0.6:
        y = _paragraph(page, rng, x0, x1, y, rng.randint(2, 4), f0, size + 1) + lh
    n_fig = rng.randint(5, 7)
    heads = rng.sample(_WIDE_HEADS, n_fig)
    # body rows: (label, level, figures, dollar, is a label alone)
    rows: list[tuple[str, int, list[str], bool, bool]] = []

    def figure() -> str:
        if rng.random() < 0.3:
            return "—"
        v = f"{round(10 ** rng.uniform(0.5, 5.2)):,}"
        return f"({v})" if rng.random() < 0.15 else v

    first = True
    for head, items in rng.sample(_STATEMENT_SECTIONS, rng.randint(1, 3)):
        rows.append((head, 0, [""] * n_fig, False, True))
        for item in rng.sample(items, rng.randint(2, len(items))):
            rows.append((item, 1, [figure() for _ in range(n_fig)], first, False))
            first = False
        rows.append(("Subtotal", 2, [figure() for _ in range(n_fig)], False, False))
    rows.append(("Total", 2, [figure() for _ in range(n_fig)], True, False))
    step = 6.0
    stub_w = max(_width(r[0], f0, size) + r[1] * step for r in rows) + rng.uniform(8, 30)
    dollar = _width("$", f0, size)
    avail = x1 - x0 - stub_w
    col_w = avail / n_fig
    fig_w = max(_width(f, f0, size) for r in rows for f in r[2] if f)
    head_w = max(_width(w, f1, size) for h in heads for w in h)
    if min(col_w - 4, head_w + 4) < dollar + fig_w + 6:
        size *= 0.85
    # each column: "$" at its left edge, the figure set right at its right edge, a gutter after
    cols = [
        (x0 + stub_w + k * col_w, x0 + stub_w + (k + 1) * col_w - rng.uniform(4, 9)) for k in range(n_fig)
    ]
    year = str(rng.randint(2012, 2025))
    if rng.random() < 0.8:  # the year over all the figure columns, centred
        w = _width(year, f1, size)
        page.insert_text(((cols[0][0] + cols[-1][1] - w) / 2, y + lh), year, fontname=f1, fontsize=size)
        y += lh
        tags.append("year_head")
    depth = max(len(h) for h in heads)
    for k in range(depth):  # the stacked heads, bottom-aligned, each line centred over its column
        for (a, b), head in zip(cols, heads, strict=True):
            line = (depth - len(head) <= k) and head[k - (depth - len(head))]
            if line:
                w = _width(line, f1, size)
                page.insert_text(((a + b - w) / 2, y + lh), line, fontname=f1, fontsize=size)
        y += size * 1.15
    y += lh * 0.4
    grid: Grid = [[""] + [" ".join(h) for h in heads]]
    for label, level, figs, usd, alone in rows:
        if alone:
            y += lh * 0.3
        base = y + lh
        page.insert_text((x0 + level * step, base), label, fontname=f0, fontsize=size)
        cells = [label] + _set_figures(page, cols, figs, usd, base, f0, size, dollar_on_nil=True)
        grid.append(cells)
        y += lh
    if rng.random() < 0.7:  # notes under the grid, their marks set apart
        small = size - 0.5
        y += lh * rng.uniform(0.6, 1.4)
        for n in range(rng.randint(1, 3)):
            page.insert_text((x0 + 12, y + lh), f"({n + 1})", fontname=f0, fontsize=small)
            for line in _wrap(_sentence(rng, rng.randint(14, 45)).split(), x1 - x0 - 36, f0, small):
                page.insert_text((x0 + 36, y + lh), line, fontname=f0, fontsize=small)
                y += small * 1.3
            y += small * 0.6
        tags.append("notes")
    tags.append(f"columns:{n_fig}")
    return [TruthTable(pages=[0], grids={0: grid}, merged=grid, header_rows=1)]


_CHANGE_ITEMS = [
    "Automotive sales",
    "Automotive regulatory credits",
    "Automotive leasing",
    "Energy generation and storage",
    "Services and other",
    "Product sales",
    "Subscription revenue",
    "Cost of sales",
    "Research and development",
    "Selling, general and administrative",
    "Restructuring and other",
    "Interest income",
    "Interest expense",
    "Other income (expense), net",
    "Provision for income taxes",
    "Operating income",
    "Gross profit",
]
_CHANGE_SECTIONS = ["Revenues", "Cost of revenues", "Gross profit", "Operating expenses", "Other items"]
_CHANGE_RATIOS = ["Gross margin", "Operating margin", "Effective tax rate", "As a percentage of revenues"]
_CHANGE_HEADS = [
    ["{a} vs. {b} Change"],
    ["{a} vs. {b}", "Change"],
    ["Change", "{a} vs. {b}"],
    ["{a} compared to {b}"],
    ["Increase (Decrease)", "{a} vs. {b}"],
]
_CHANGE_UNITS = ["(Dollars in millions)", "(in millions)", "(in thousands)", "(Dollars in thousands)"]


def _change_statement(rng: random.Random, doc: pymupdf.Document, tags: list[str]) -> list[TruthTable]:
    """``CHANGE``: a page with one MD&A comparison table (see ``CHANGE``)."""
    page, W, H, margin, (f0, f1), size, lh = _statement_sheet(
        rng, doc, (40, 64), _FAMILIES, [7.5, 8.0, 8.5, 9.0], (1.3, 1.65)
    )
    x0, x1, y = margin, W - margin, margin + 10
    if rng.random() < 0.5:
        title = rng.choice(["Results of Operations", "Revenues", "Operating Expenses", "Other Income"])
        page.insert_text((x0, y + size + 1), title, fontname=f1, fontsize=size + 1)
        y += (size + 1) * 1.8
    if rng.random() < 0.6:
        y = _paragraph(page, rng, x0, x1, y, rng.randint(2, 4), f0, size) + lh * 0.3
    n_years = rng.choice([2, 3, 3])
    n_pairs = rng.randint(1, min(2, n_years - 1))
    year = rng.randint(2012, 2025)
    years = [str(year - k) for k in range(n_years)]
    period = rng.choice(_PERIOD_HEADS)
    head = rng.choice(_CHANGE_HEADS)
    changes = [[h.format(a=years[k], b=years[k + 1]) for h in head] for k in range(n_pairs)]
    units = rng.choice(_CHANGE_UNITS)
    units_in_stub = rng.random() < 0.6
    pct_space = rng.random() < 0.6  # "17 %" (else "17%"); a negative's ")%" hangs either way
    scale = rng.uniform(2.5, 5.0)
    ratio = rng.random() < 0.3

    def values() -> list[float]:  # the years' figures, latest first, each some way off the next
        vals = [10 ** rng.uniform(1.0, scale) * (-1 if rng.random() < 0.06 else 1)]
        for _ in years[1:]:
            vals.append(vals[-1] / rng.uniform(0.4, 1.9))
        return vals

    def money(v: float) -> str:
        return f"({abs(round(v)):,})" if round(v) < 0 else f"{round(v):,}"

    def pct(v: float, dec: int = 0) -> str:
        t = f"{abs(v):.{dec}f}"
        return f"({t})%" if v < 0 and float(t) else f"{t} %" if pct_space else f"{t}%"

    # body rows: (label, year figures, change figures, dollar, is a label alone, is a total)
    n_rows = rng.randint(1, 12)
    rows: list[tuple[str, list[str], list[str], bool, bool, bool]] = []
    items = rng.sample(_CHANGE_ITEMS, min(n_rows, len(_CHANGE_ITEMS)))
    sections = n_rows >= 5 and rng.random() < 0.5
    for k in range(n_rows):
        if sections and k in (0, n_rows // 2):
            rows.append(
                (rng.choice([x for x in _CHANGE_SECTIONS if x not in items]), [], [], False, True, False)
            )
            continue
        total = k == n_rows - 1 and n_rows >= 3 and rng.random() < 0.6
        if ratio and k == n_rows - 1 and not total and n_rows >= 2:
            figs = [pct(rng.uniform(-5, 40), 1) for _ in years]
            rows.append((rng.choice(_CHANGE_RATIOS), figs, [""] * (2 * n_pairs), False, False, False))
            continue
        vals = values()
        ch: list[str] = []
        for p in range(n_pairs):
            d = vals[p] - vals[p + 1]
            ch += [money(d), pct(100 * d / abs(vals[p + 1])) if abs(vals[p + 1]) >= 1 else ""]
        if rng.random() < 0.1:  # a row whose change is not shown
            ch = [""] * (2 * n_pairs)
        label = "Total " + items[k % len(items)].lower() if total else items[k % len(items)]
        first = not any(not r[4] for r in rows)
        rows.append((label, [money(v) for v in vals], ch, first or total, False, total))

    # columns: stub; per year "$" slot and figure; per pair "$" slot and figure, then the percentage
    gap = rng.uniform(10, 22)
    for _ in range(12):  # too wide for the page: set smaller
        stub_w = max(_width(r[0], f0, size) for r in rows) + 8
        if units_in_stub:
            stub_w = max(stub_w, _width(units, f1, size) + 8)
        figs_all = [f for r in rows for f in r[1] + r[2][0::2] if f]
        fig_w = max([_width(f.rstrip(")%"), f0, size) for f in figs_all] + [_width(years[0], f1, size)])
        pct_w = max([_width(f.rstrip(")%").rstrip(), f0, size) for r in rows for f in r[2][1::2] if f] + [6])
        dollar = _width("$", f0, size) + size * 0.4
        hang = _width(")%", f0, size) + 1.0
        pair_w = max(_width(line, f1, size) for c in changes for line in c)
        pct_gap = gap + hang + _width(" %", f0, size)  # past a hanging ")" and the sign after the figure
        ch_w = max(dollar + fig_w + pct_gap + pct_w, pair_w) + hang
        need = stub_w + n_years * (dollar + fig_w + hang + gap) + n_pairs * (ch_w + gap * 1.5)
        if need <= x1 - x0:
            break
        size, gap, lh = size * 0.92, max(6.0, gap * 0.85), lh * 0.92
    sp = rng.uniform(0, max(0.0, x1 - x0 - need)) / 2  # some tables leave room at the right
    ycols = []
    x = x0 + stub_w + gap + sp
    for _ in years:
        ycols.append((x, x + dollar + fig_w))
        x += dollar + fig_w + hang + gap
    pcols = []  # ($ slot, figure edge, percentage edge)
    for _ in range(n_pairs):
        x += gap * 0.5
        extra = ch_w - hang - (dollar + fig_w + pct_gap + pct_w)
        a = x + extra / 2
        pcols.append((a, a + dollar + fig_w, a + dollar + fig_w + pct_gap + pct_w))
        x += ch_w + gap

    def put(text: str, right: float, base: float, fnt: str = f0) -> None:
        core = text.rstrip(")%") if text.startswith("(") else text.rstrip("%").rstrip()
        hang_text = text[len(core) :]
        if text.endswith("%") and not text.startswith("(") and " " in text:
            core, hang_text = text, ""  # "17 %": the sign is the column's edge
            right += _width(")%", f0, size) - _width("%", f0, size)
        page.insert_text(
            (right - _width(core, fnt, size), base), core + hang_text, fontname=fnt, fontsize=size
        )

    if not units_in_stub:
        page.insert_text((x0, y + lh), units, fontname=f0, fontsize=size)
        y += lh * rng.uniform(1.2, 1.8)
        tags.append("units_above")
    # the heads, bottom-aligned over the line of years
    depth = max(1, *(len(c) for c in changes))
    span_y = [(ycols[0][0], ycols[-1][1], [period])] + [
        (a, pc, c) for (a, _, pc), c in zip(pcols, changes, strict=True)
    ]
    rules = rng.random() < 0.5
    for k in range(depth):
        for a, b, lines in span_y:
            j = k - (depth - len(lines))
            if j >= 0:
                w = _width(lines[j], f1, size)
                page.insert_text(((a + b - w) / 2, y + lh), lines[j], fontname=f1, fontsize=size)
        y += size * 1.2
    if rules:  # a rule under each head, over the columns it heads
        ry = y - size * 1.2 + lh + 2.5
        for a, b, _ in span_y:
            page.draw_line((a, ry), (b, ry), width=0.4)
    y += lh - size * 1.2
    base = y + lh
    if units_in_stub:
        page.insert_text((x0, base), units, fontname=f1, fontsize=size)
        tags.append("units_in_stub")
    for (_, b), yr in zip(ycols, years, strict=True):
        page.insert_text((b - _width(yr, f1, size), base), yr, fontname=f1, fontsize=size)
    centred = rng.random() < 0.5
    for a, b, c in pcols:
        for sym, lo, hi in (("$", a, b), ("%", b + gap * 0.5, c)):
            w = _width(sym, f1, size)
            page.insert_text(
                ((lo + hi - w) / 2 if centred else hi - w, base), sym, fontname=f1, fontsize=size
            )
    y += lh * 1.3
    header = [""] + [f"{period} {yr}" for yr in years]
    for c in changes:
        header += [f"{' '.join(c)} $", f"{' '.join(c)} %"]
    grid: Grid = [header]
    for label, yfigs, ch, usd, alone, total in rows:
        if alone:
            y += lh * 0.3
        if total:
            y = _rules_above_total(page, ycols, y, lh)
        base = y + lh
        page.insert_text(
            (x0 + (0 if alone else rng.choice([0, 0, 8])), base), label, fontname=f0, fontsize=size
        )
        cells = [label]
        if alone:
            grid.append(cells + [""] * (n_years + 2 * n_pairs))
            y += lh
            continue
        for (a, b), f in zip(ycols, yfigs, strict=True):
            put(f, b, base)
            if usd and not f.endswith("%"):
                page.insert_text((a, base), "$", fontname=f0, fontsize=size)
            cells.append(f"$ {f}" if usd and not f.endswith("%") else f)
        for p, (a, b, c) in enumerate(pcols):
            d, q = ch[2 * p], ch[2 * p + 1]
            if d:
                put(d, b, base)
                if usd:
                    page.insert_text((a, base), "$", fontname=f0, fontsize=size)
            if q:
                put(q, c, base)
            cells += [f"$ {d}" if usd and d else d, q]
        grid.append(cells)
        y += lh
    if rng.random() < 0.5:
        y = _paragraph(page, rng, x0, x1, y + lh, rng.randint(2, 4), f0, size)
    tags.append(f"years:{n_years}")
    tags.append(f"pairs:{n_pairs}")
    tags.append(f"head_lines:{depth}")
    return [TruthTable(pages=[0], grids={0: grid}, merged=grid, header_rows=1)]


_GROUP_HEADS = [
    ["Total", "Male", "Female"],
    ["Urban", "Rural"],
    ["2021", "2022", "2023", "2024"],
    ["Residents", "Non-residents"],
    ["Public sector", "Private sector"],
    ["Full-time", "Part-time"],
    ["Exports", "Imports"],
]
_SUB_HEADS = [
    ["Total", "Under 18", "18 and over"],
    ["Number", "Percent"],
    ["Q1", "Q2", "Q3", "Q4"],
    ["Men", "Women"],
    ["Count", "Share", "Change"],
    ["Value", "Volume", "Price", "Index"],
]


def _group_ruled(rng: random.Random, doc: pymupdf.Document, tags: list[str]) -> list[TruthTable]:
    """``GROUP_RULED``: a page with a table ruled only between its column groups (see the list)."""
    W, H = rng.choice([(595.0, 842.0), (612.0, 792.0)])
    page = doc.new_page(width=W, height=H)
    margin = rng.uniform(36, 70)
    x0, x1 = margin, W - margin
    font = rng.choice(_FAMILIES)
    size = rng.choice([7.0, 8.0, 8.5, 9.0, 10.0])
    if rng.random() < 0.5:
        _furniture(page, rng, rng.randint(2, 40), margin)
    y = margin + 10
    if rng.random() < 0.6:
        y = _paragraph(page, rng, x0, x1, y, rng.randint(2, 4), font[0], size, justify=rng.random() < 0.5)
    n_groups = rng.randint(2, 4)
    n_sub = rng.randint(2, 4)
    while n_groups * n_sub > 10:
        n_sub -= 1
    group_heads = next(g for g in rng.sample(_GROUP_HEADS, len(_GROUP_HEADS)) if len(g) >= n_groups)
    group_heads = group_heads[:n_groups]
    pool = [h for h in _SUB_HEADS if len(h) >= n_sub]
    sub_heads = rng.choice(pool)[:n_sub] if pool and rng.random() < 0.7 else None
    n_cols = 1 + n_groups * n_sub
    n_rows = rng.randint(5, 18)
    fmts = [rng.choice(["int", "int", "dec", "pct", "paren"]) for _ in range(n_sub)] * n_groups
    sp = _spec(rng, n_cols, n_rows, sparse=rng.choice([0.0, 0.08, 0.2]), fmts=fmts, places=None)
    stub_head = rng.choice(["", "Item", "Offense charged", "Region", "Category", "Age group"])
    top: list[tuple[str, int]] = [("", 1)] + [(g, n_sub) for g in group_heads]
    subs: list[tuple[str, int]] = [(stub_head, 1)]
    for _g in range(n_groups):
        subs += [((sub_heads[k] if sub_heads else _label(rng, rng.randint(1, 2))), 1) for k in range(n_sub)]
    sp.header = [top, subs]
    wrap_stub = rng.random() < 0.4
    leaders = not wrap_stub and rng.random() < 0.4
    if leaders:  # dot leaders from each label up to the stub's right edge ("Burglary . . . . .")
        reach = max(_width(r[0], font[0], size) for r in sp.body) + rng.uniform(10, 30)
        dot = _width(". ", font[0], size)
        for r in sp.body:
            k = max(2, int((reach - _width(r[0] + " ", font[0], size)) / dot))
            r[0] = r[0] + " " + ". " * (k - 1) + "."
    if wrap_stub:
        for r in sp.body:
            r[0] = _label(rng, rng.randint(1, 6))
        sp.wrap = {0}
        sp.valign = rng.choice(["top", "bottom"])
    st = _style(rng, "none")
    st.font, st.size = font, size
    st.pad = rng.uniform(8, 20)
    outer = rng.random() < 0.5
    head_rule = rng.choice(["short", "across", "none"])
    sub_rule = rng.random() < 0.6 or head_rule == "none"
    tags.extend(
        [f"groups:{n_groups}", f"sub:{n_sub}", f"head_rule:{head_rule}"]
        + (["outer"] if outer else [])
        + (["sub_rule"] if sub_rule else [])
        + (["wrap_stub"] if wrap_stub else [])
        + (["leaders"] if leaders else [])
    )
    top_y = y + 10
    if rng.random() < 0.6:
        top_y = _caption(
            page, f"Table {rng.randint(1, 400)}. {_label(rng, rng.randint(2, 6))}", x0, y + 8, size
        )
    pr = _Printer(sp, st, x1 - x0, wrap_width=rng.uniform(70, 130))
    _fit_rows(pr, sp, (W, H), x0, top_y, H - margin - 20, least=3)
    bottom = pr.draw(page, x0, top_y)
    # the rules: the printer drew none (style "none"); its column positions, as it set them
    pad, lh = st.pad, st.size * st.pitch
    xs = [x0]
    for w in pr.widths:
        xs.append(xs[-1] + w + pad)
    col_x = [(xs[c], xs[c] + pr.widths[c]) for c in range(n_cols)]
    left, right = x0 - pad / 2, x0 + pr.width + pad / 2
    head_y, sub_y = top_y + lh, top_y + 2 * lh
    cuts = [(col_x[c][1] + col_x[c + 1][0]) / 2 for c in range(0, n_cols - 1, n_sub)]
    verticals = ([left] if outer else []) + cuts + ([right] if outer else [])
    for x in verticals:
        page.draw_line((x, top_y), (x, bottom), width=0.5)
    for ry in (top_y, bottom):
        page.draw_line((left, ry), (right, ry), width=0.6)
    if head_rule == "across":
        page.draw_line((cuts[0], head_y), (right, head_y), width=0.4)
    elif head_rule == "short":
        for g in range(n_groups):
            a, b = col_x[1 + g * n_sub][0], col_x[(g + 1) * n_sub][1]
            page.draw_line((a, head_y), (b, head_y), width=0.4)
    if sub_rule:
        page.draw_line((left, sub_y), (right, sub_y), width=0.5)
    grid = sp.grid()
    truths = [TruthTable(pages=[0], grids={0: grid}, merged=grid, header_rows=2)]
    if rng.random() < 0.5 and bottom < H - margin - 30:
        note = rng.choice(["Source: ", "Note: ", "1 "]) + _sentence(rng, rng.randint(6, 14))
        page.insert_text((x0, bottom + 12), note, fontname=font[0], fontsize=max(6.5, size - 2))
    return truths


def make_case(seed: int, cls: str | None = None) -> Case:
    """The generated document of ``seed`` (class ``CLASSES[seed % len(CLASSES)]`` unless given;
    the ``EXTRA`` classes only when given)."""
    cls = cls or CLASSES[seed % len(CLASSES)]
    drawn = CLASSES + EXTRA + LATER + LATER_NO_TABLE + TAIL_MULTI + SHAPE + WRAPPED + STATEMENT + UNSEEN
    # the fourteenth session added UNSEEN's last three and NOTED + WIDE side by side, each numbered
    # on from "label_tail" as it was measured; the same number draws another class's document
    after = drawn.index("label_tail") + 1
    if cls in CHANGE:  # issues 37 and 34: numbered on after every list above, no other class moves
        index = len(drawn) + len(NOTED + WIDE) + CHANGE.index(cls)
    elif cls in STACKED:  # the sixteenth session's, numbered on after CHANGE
        index = len(drawn) + len(NOTED + WIDE + CHANGE) + STACKED.index(cls)
    elif cls in SECTIONED_HEADS:  # the seventeenth session's, numbered on after STACKED
        index = len(drawn) + len(NOTED + WIDE + CHANGE + STACKED) + SECTIONED_HEADS.index(cls)
    elif cls in GROUP_RULED:  # numbered on after STACKED too (another class, its own documents)
        index = len(drawn) + len(NOTED + WIDE + CHANGE + STACKED) + GROUP_RULED.index(cls)
    else:
        index = after + (NOTED + WIDE).index(cls) if cls in NOTED + WIDE else drawn.index(cls)
    rng = random.Random(seed * 7919 + index)
    doc = pymupdf.open()
    tags: list[str] = []
    tables: list[TruthTable] = []
    if cls == "bar_chart":
        _bar_chart(rng, doc, tags)
    elif cls == "flow_chart":
        _flow_chart(rng, doc, tags)
    elif cls in LATER_NO_TABLE:
        _figure_pair(rng, doc, tags)
    elif cls in SINGLE or cls in ("hyphenated", "rtl_wrapped", "open_ruled", *LATER):
        tables = _one(rng, cls, doc, tags)
    elif cls in TURNED:
        tables = _turned(rng, cls, doc, tags)
    elif cls in MULTI:
        tables = _multi(rng, cls, doc, tags)
    elif cls in TAIL_MULTI + TAIL_UNSEEN:
        tables = _tail_multi(rng, cls, doc, tags)
    elif cls in SHAPE or cls == "spaced_stats":
        tables = _shape(rng, cls, doc, tags)
    elif cls in WRAPPED:
        tables = _wrapped(rng, cls, doc, tags)
    elif cls in WIDE:
        tables = _wide_statement(rng, doc, tags)
    elif cls in GROUP_RULED:
        tables = _group_ruled(rng, doc, tags)
    elif cls in CHANGE:
        tables = _change_statement(rng, doc, tags)
    elif cls in STATEMENT + NOTED + STACKED:
        tables = _statement(rng, doc, tags, noted=cls in NOTED, stacked=cls in STACKED)
    elif cls in SECTIONED_HEADS:
        tables = _statement(rng, doc, tags, stacked=rng.random() < 0.5, sectioned=True)
    else:
        _no_table(rng, cls, doc, tags)
    pdf = doc.tobytes(no_new_id=True)
    n = doc.page_count
    doc.close()
    return Case(seed=seed, cls=cls, pdf=pdf, n_pages=n, tables=tables, tags=tags)


def seeds(split: str, n: int) -> list[int]:
    """``n`` seeds of a split ("tune" or "held_out"): every class ``n / len(CLASSES)`` times."""
    start = {"tune": TUNE, "held_out": HELD_OUT}[split]
    return list(range(start, start + n))
