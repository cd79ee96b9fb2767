"""The words and text lines the finders read, and the text forms cells are compared in."""

from __future__ import annotations

import itertools
import math
import operator
import re
import statistics
import unicodedata
from collections.abc import Callable, Iterable
from contextvars import ContextVar
from dataclasses import dataclass, field

import pymupdf

from dagster_ocr.layout import BBox, bands
from dagster_ocr.model import Line, Page
from dagster_ocr.paragraphs.patterns import Vocabulary, join_lines
from dagster_ocr.tables.settings import TableSettings
from dagster_ocr.textlayer import extract_lines, extract_words


@dataclass(slots=True)
class _Word:
    x0: float
    y0: float
    x1: float
    y1: float
    text: str


@dataclass(slots=True)
class _TextLine:
    """Words on one baseline band, split into chunks at gaps wider than a few spaces."""

    words: list[_Word]
    chunks: list[list[_Word]]
    #: a label row the text finder bridged (a section's title between a table's rows): a row of
    #: its own, no header line, and no evidence for or against a gutter (it spans columns)
    label: bool = False
    #: a label row that is a row label, its cell the stub's whatever columns it runs over: a group's
    #: label centred under a statement's period heads ("ASSETS:", ``areas._label_under_heads``)
    stub: bool = False
    #: a row's figures set midway beside its wrapped label were taken into this line (its label's
    #: first line, ``areas._figures_set_midway``): the next line goes on with that label
    wraps_on: bool = False
    # the band's extent, computed once (the finders read it many times per line)
    x0: float = field(init=False)
    y0: float = field(init=False)
    x1: float = field(init=False)
    y1: float = field(init=False)

    def __post_init__(self) -> None:
        ws = self.words
        self.x0, self.y0 = min(w.x0 for w in ws), min(w.y0 for w in ws)
        self.x1, self.y1 = max(w.x1 for w in ws), max(w.y1 for w in ws)


def _page_words(pg: pymupdf.Page, page: Page, lines: list[Line] | None = None) -> list[_Word]:
    """Horizontal words of the page, in display coordinates (the line finder's grid is in them too).

    The text stage's words when the page carries them (read from the TextPage its lines came from),
    else read from the PDF here; a note's mark set as a superscript against a figure a word of its
    own (``_notes_apart``, from the page's ``lines``).
    """
    words = page.words if page.words is not None else extract_words(pg)
    found = [_Word(*w) for w in words if w[2] > w[0] and w[3] > w[1] and w[4].strip()]
    return _join_digit_groups(_notes_apart(found, lines) if lines else found)


#: a note's mark set as a superscript: a number or a letter or two, an asterisk or a dagger
_NOTE_MARK_RE = re.compile(r"^(?:\d{1,2}|[a-z]|[*†‡]{1,2})$")
#: a superscript is set this much smaller than the text before it, at most
_SUPERSCRIPT_SIZE = 0.8


def _notes_apart(words: list[_Word], lines: list[Line]) -> list[_Word]:
    """``words`` with each note's mark set as a superscript straight after a figure cut off it: "27"
    and a raised "3" in a smaller size are one word to PyMuPDF ("273"), no space between, and the
    figure read so is another figure; a thousands group so marked ("2 496" and a raised "3") no
    longer joins its lead digits either, and the column splits in two. The text stage's spans tell
    the mark: set smaller, raised (its foot above the figure's), right after a span ending in a
    digit or a per cent sign. A subscript (lowered), a superscript after a word ("m²", "Revenue¹"
    keep their reading) and one after a bracket ("(20)1" reads as a figure and its note as it is,
    ``_NUM_RE``) are left alone."""
    marks: list[tuple[float, float, float, str]] = []  # (x0, y0, y1, text) of each mark's span
    for ln in lines:
        for a, b in itertools.pairwise(ln.spans):
            text, before = b.text.strip(), a.text.rstrip()
            if (
                text
                and before
                and b.text == text  # no space before it: set against the figure
                and a.text == before
                and 0 < b.size <= _SUPERSCRIPT_SIZE * a.size
                and b.bbox[3] < a.bbox[3] - 0.1 * a.size  # raised
                and (before[-1].isdigit() or before[-1] == "%")
                and _NOTE_MARK_RE.match(text)
            ):
                marks.append((b.bbox[0], b.bbox[1], b.bbox[3], text))
    if not marks:
        return words
    out: list[_Word] = []
    for w in words:
        mark = next(
            (
                m
                for m in marks
                if w.x0 < m[0] < w.x1
                and m[1] < w.y1
                and m[2] > w.y0
                and len(w.text) > len(m[3])
                and w.text.endswith(m[3])
            ),
            None,
        )
        if mark is None:
            out.append(w)
            continue
        x, _, _, text = mark
        out.append(_Word(w.x0, w.y0, x, w.y1, w.text[: -len(text)]))
        out.append(_Word(x, w.y0, w.x1, w.y1, text))
    return out


#: a figure's leading digits, before a space-set thousands group: "1" of "1 234", "(12 345" of
#: "(12 345 678)" (groups already joined)
_LEAD_GROUP_RE = re.compile(r"^[(\[]?[-–−+]?\d{1,3}(?: \d{3})*$")
#: a thousands group after a space, perhaps the last: "234", "567.8", "345)", "901,5", "722.9*",
#: "991a" (a note's mark or letter set close after the figure)
_NEXT_GROUP_RE = re.compile(r"^\d{3}(?:[.,]\d+)?[)\]]?%?(?:[*†‡]{1,2}|[a-z])?$")


def _join_digit_groups(words: list[_Word]) -> list[_Word]:
    """Figures whose thousands are set apart by a space ("1 234 567", as statistical offices and
    most of Europe print them) as one word each.

    Read as words, such a figure is two to three of them, and in a column of figures set right the
    space before each thousands group lines up from row to row: a gutter as wide as a space, and a
    column per digit position. A group joins the word before it on its line when that word is a
    figure's first one to three digits and the space between is no wider than a digit of the group
    (a word space is narrower than a digit in every common font; a column's gutter is wider).
    """
    out: list[_Word] = []
    for w in words:
        prev = out[-1] if out else None
        if (
            prev is not None
            and _NEXT_GROUP_RE.match(w.text)
            and _LEAD_GROUP_RE.match(prev.text)
            and 0 <= w.x0 - prev.x1 <= 1.1 * (w.x1 - w.x0) / len(w.text)
            and min(w.y1, prev.y1) - max(w.y0, prev.y0) > 0.5 * (w.y1 - w.y0)
        ):
            out[-1] = _Word(prev.x0, min(prev.y0, w.y0), w.x1, max(prev.y1, w.y1), f"{prev.text} {w.text}")
            continue
        out.append(w)
    return out


def _page_lines(pg: pymupdf.Page, page: Page) -> list[Line]:
    """The page's lines; where the stage got pages without lines (the table benches), the text
    stage's own reading of the text layer (fonts, sizes, display coordinates)."""
    return page.lines or extract_lines(pg)


#: a word's box, built in C (a few per cent of banding a page's words, against a lambda)
_word_box: Callable[[_Word], BBox] = operator.attrgetter("x0", "y0", "x1", "y1")


def _bands(words: list[_Word]) -> list[list[_Word]]:
    """Words clustered into lines by vertical overlap, each line left to right.

    A band keeps its first word's extent (``grow=False``), so superscripts do not stretch it
    into the next line.
    """
    return bands(words, _word_box, grow=False)


def _text_lines(words: list[_Word], gap_factor: float) -> list[_TextLine]:
    """Cluster words into lines by vertical overlap, then cut each line into chunks at wide gaps.

    A line of prose whose word gaps are all wide alike (justified text, a monospaced font whose
    space is half a line height) stays one chunk: see ``_even_prose``.
    """
    lines: list[_TextLine] = []
    even: dict[int, list[list[_Word]]] = {}  # lines read as evenly spaced prose: their chunks
    for band in _bands(words):
        h = statistics.median(w.y1 - w.y0 for w in band)
        cut = gap_factor * h
        if len(band) >= 3 and any(b.x0 - a.x1 > cut for a, b in itertools.pairwise(band)):
            # a monospaced font's space is a whole character wide, more than half a line height:
            # a gap of about one character (the line's mean advance) is a word space there
            if advance := _mean_advance(band):
                cut = max(cut, _SPACE_CHARS * advance)
        chunks: list[list[_Word]] = [[band[0]]]
        for w in band[1:]:
            if w.x0 - chunks[-1][-1].x1 > cut:
                chunks.append([w])
            else:
                chunks[-1].append(w)
        if len(chunks) >= 4 and _even_prose(chunks, h):
            even[len(lines)] = chunks
            chunks = [list(band)]
        lines.append(_TextLine(band, chunks))
    for i, chunks in even.items():
        beside = [j for j in (i - 1, i + 1) if 0 <= j < len(lines)]
        if not any(_set_as_one(lines[i], lines[j]) for j in beside) or any(
            _heads_row(chunks, lines[j]) for j in beside if j not in even
        ):
            lines[i].chunks = chunks
    return lines


def _set_as_one(ln: _TextLine, beside: _TextLine) -> bool:
    """Whether ``beside``, the line above or below ``ln``, may be a line of the same paragraph: within
    a line height and a half of it (double-spaced text), its left or its right edge within a line
    height of ``ln``'s. Justification stretches a line's word spaces only to set it as wide as the
    paragraph's other lines; a line set so alone, no line beside it of its measure, is a row of
    heads spaced alike ("County Balance Output actual Contract" between a group head and a
    section's label), not prose."""
    h = ln.y1 - ln.y0
    near = max(beside.y0 - ln.y1, ln.y0 - beside.y1) <= 1.5 * h
    return near and (abs(beside.x0 - ln.x0) <= h or abs(beside.x1 - ln.x1) <= h)


def _heads_row(chunks: list[list[_Word]], beside: _TextLine) -> bool:
    """The chunks of a line read as evenly spaced prose are a table row's cells after all: the line
    next to it, within a line height, has as many chunks (or one more, a row label left of them
    all, under heads that leave the stub's head blank), each under (or over) its own, or one
    fewer right of its label, all figures, each under a head of its own (one column left blank). A short
    header of a table set in a monospaced font ("supp   grp   code   lot") spaces its heads alike,
    as a justified line does its words, and so do sub-heads repeated over groups ("Number
    Percent Number Percent"); a line of prose holds more words than the rows beside it have
    cells, and prose beside it reads as one chunk. Or the line above holds group heads, two or
    more, each centred over a run of the chunks (``_centred_over_group``): sub-heads under them."""
    h = chunks[0][0].y1 - chunks[0][0].y0
    if max(beside.y0 - chunks[0][0].y1, chunks[0][0].y0 - beside.y1) > h:
        return False
    if beside.y1 <= chunks[0][0].y0 and len(beside.chunks) >= 2:
        # group heads above, each phrase centred over a run of these chunks: sub-heads (a
        # monospaced font's, a space inside a head and a space and a half between heads)
        heads = [(ch[0].x0, ch[-1].x1) for ch in chunks]
        if all(_centred_over_group(ch[0].x0, ch[-1].x1, heads, one=False) for ch in beside.chunks):
            return True
    cells = beside.chunks
    if cells and cells[0][-1].x1 < chunks[0][0].x0 and len(cells) > len(chunks) - 1:
        cells = cells[1:]  # a row under heads that leave the stub's head blank: its label
    if len(cells) == len(chunks):
        return all(a[0].x0 <= b[-1].x1 and b[0].x0 <= a[-1].x1 for a, b in zip(chunks, cells, strict=True))
    # a row of figures that leaves one head's column blank (a sparse table's first row): each
    # figure under a head of its own, in order
    under = [
        next((i for i, a in enumerate(chunks) if a[0].x0 <= b[-1].x1 and b[0].x0 <= a[-1].x1), -1)
        for b in cells
    ]
    return (
        len(cells) == len(chunks) - 1 >= 2
        and -1 not in under
        and under == sorted(set(under))
        and all(_figure_nil_or_mark(_words_text(b)) for b in cells)
    )


#: a gap up to this many average character widths of its line is a word space
_SPACE_CHARS = 1.2


def _mean_advance(words: list[_Word]) -> float:
    """The mean width of a character of the words of three characters or more (0 without any): a
    monospaced font's advance, and its space's width."""
    n = width = 0.0
    for w in words:
        if len(w.text) >= 3:
            n += len(w.text)
            width += w.x1 - w.x0
    return width / n if n else 0.0


#: the widest gap (line heights) a justified or monospaced word space stretches to
_PROSE_MAX_GAP = 1.2


def _even_prose(chunks: list[list[_Word]], h: float) -> bool:
    """True when a line's chunks are words set apart by gaps of one width: running text.

    Justification spreads a line's free space over its word gaps evenly, and a monospaced font's
    space is as wide as half a line height: every gap of such a line exceeds the chunk gap, and the
    line would read as a row of one-word cells. A table row's gutters differ (columns of unlike
    widths, figures set right), and its cells are often figures. So: four chunks or more, gaps
    within 25% of one another and under ``_PROSE_MAX_GAP`` line heights, most chunks words.
    """
    gaps = [b[0].x0 - a[-1].x1 for a, b in itertools.pairwise(chunks)]
    lo, hi = min(gaps), max(gaps)
    if hi > _PROSE_MAX_GAP * h or hi > 1.25 * lo:
        return False
    if sum(1 for ch in chunks if len(ch) > 1 and _widest_gap(ch) < 0.55 * lo) >= 2:
        # two chunks or more whose words sit a plain space apart, the gaps between them twice that
        # or wider (within a tenth: a monospaced font's two spaces against one, measured between
        # glyph boxes): the heads of a table set tight (a column per head), not a line whose
        # every word space was stretched alike
        return False
    texts = [" ".join(w.text for w in ch) for ch in chunks]
    return sum(any(c.isalpha() for c in t) and not _is_num(t) for t in texts) >= 0.75 * len(texts)


def _widest_gap(ws: list[_Word]) -> float:
    return max(b.x0 - a.x1 for a, b in itertools.pairwise(ws))


def _words_text(ws: list[_Word]) -> str:
    """The words' text in reading order: lines top to bottom (``_bands``), each left to right; a
    line written mostly in a right-to-left script (Arabic, Hebrew) reads right to left, its
    left-to-right runs (numbers, Latin words) kept in their own order. A cell's lines join as a
    paragraph's rows do (``_join_cell_lines``): "con-" over "tracts" is one word.

    Lines are told apart by height, not by x falling back: a right-to-left cell's lines are set
    flush right, so a short last line may start right of where the line above starts."""
    # ASCII holds no right-to-left letter: the per-character test only for the words beyond it
    rtl = any(not w.text.isascii() and any(_is_rtl(c) for c in w.text) for w in ws)
    if not rtl and not any(w.text[-1] in _BREAKS for w in ws):
        return " ".join(w.text for w in ws)
    lines = _bands(ws)
    if rtl:
        return _join_cell_lines(_line_in_reading_order([w.text for w in line]) for line in lines)
    return _join_cell_lines(" ".join(w.text for w in line) for line in lines)


#: what a line broken inside a word ends with: a hyphen, or a soft hyphen
_BREAKS = frozenset("-\u2010\u00ad")


#: the words of the document whose tables are being read (``extract_tables`` sets it, page by
#: page), so that a cell's lines are joined as the paragraph stage joins a paragraph's rows: a
#: context variable rather than an argument through every finder that reads a cell's text
_VOCAB: ContextVar[Vocabulary | None] = ContextVar("table_vocabulary", default=None)


def _join_cell_lines(lines: Iterable[str]) -> str:
    """A cell's wrapped lines, top to bottom, as one text, joined by the paragraph stage's rule
    (``paragraphs.patterns.join_lines``): a line ending in a hyphen after a letter runs on into a
    lower-case next line without it ("con-" / "tracts": "contracts") unless the document says the
    hyphen is a compound's ("heavy-" / "duty" where "heavy-duty" occurs, see
    ``patterns.Vocabulary``), a soft hyphen always; else one space. Lines not broken so are joined
    by one space as before."""
    out = ""
    vocab = _VOCAB.get()
    for line in lines:
        if not (line := line.strip()):
            continue
        out = (
            join_lines(out, line, vocab) if out.endswith(tuple(_BREAKS)) else f"{out} {line}" if out else line
        )
    return out


def _is_rtl(c: str) -> bool:
    return unicodedata.bidirectional(c) in ("R", "AL")


def _reads_rtl(ws: list[_Word]) -> bool:
    """Words written mostly in a right-to-left script (more such letters than left-to-right ones)."""
    rtl = sum(_is_rtl(c) for w in ws for c in w.text)
    return rtl > 0 and rtl > sum(unicodedata.bidirectional(c) == "L" for w in ws for c in w.text)


def _line_in_reading_order(words: list[str]) -> str:
    """One line's words, given left to right as displayed, in logical (reading) order.

    A line with more right-to-left letters than left-to-right ones reads right to left: the runs
    of words holding no right-to-left letter (numbers, Latin words) stay in display order inside
    the reversed sequence, as the Unicode bidirectional algorithm displays them.
    """
    rtl = sum(_is_rtl(c) for w in words for c in w)
    ltr = sum(unicodedata.bidirectional(c) == "L" for w in words for c in w)
    if rtl <= ltr:
        return " ".join(words)
    runs: list[list[str]] = []
    for w in words:
        kind = any(_is_rtl(c) for c in w)
        if runs and not kind and not any(_is_rtl(c) for c in runs[-1][-1]):
            runs[-1].append(w)  # extends a left-to-right run
        else:
            runs.append([w])
    return " ".join(" ".join(run) for run in reversed(runs))


def _norm(text: str | None) -> str:
    """Whitespace- and case-insensitive form used to compare cell texts."""
    return "".join(unicodedata.normalize("NFKC", text or "").split()).casefold()


def _clean(text: str | None) -> str:
    return " ".join((text or "").split())


def _cell_text(words: list[_Word]) -> str:
    """A cell's text from its words: their lines in reading order, joined (a hyphen broken over lines
    rejoined, :func:`_join_cell_lines`)."""
    return _clean(_join_cell_lines(_words_text(band) for band in _bands(words)))


#: a figure as a cell prints it: "1,234", "(23)", "12.7%", "5a" (a note's mark, also a space apart:
#: "258 u", "(0.6) r"; a note's superscript number read into the word after a bracket: "(20)1"); a
#: currency sign before or after it, with or without a space ("$ 12", "8 €"), also before the bracket
#: of a negative ("$ (23)"); a negative share's "%" after the bracket ("(63)%")
_NUM_RE = re.compile(
    r"^(?:[$€£¥]\s*)?[\(\[]?[-–—+−]?(?:[$€£¥]\s?)?\d[\d,.\s]*%?(?:\s?[$€£¥])?[\)\]]?%?"
    r"(?:\s?[a-z*†‡]|(?<=[\)\]])\d{1,2})?$",
    re.IGNORECASE,
)


#: signs a statement sets apart from its figure, in a column of their own, and which neighbour each
#: belongs to: before it ("$", "(") and after it ("%", a hanging ")"); no letters (an "x" column is a
#: table of check marks, not a multiplier)
_LEADING = frozenset({"$", "€", "£", "¥", "(", "US$", "C$", "A$", "R$"})
_TRAILING = frozenset({"%", ")", ")%", "%)"})
_SIGNS = _LEADING | _TRAILING


def _is_num(text: str) -> bool:
    return bool(_NUM_RE.match(text.strip())) if text.strip() else False


#: what opens a figure and cannot go on one before it: a sign, a bracket, a currency sign
_FIGURE_OPENS = re.compile(r"^[\(\[\-–—+−$€£¥]")
#: a figure grouped or with decimals ("1,267", "0.5"), after which a space groups no digits
_GROUPED = re.compile(r"\d[,.]\d")


def _figures_apart(a: str, b: str) -> bool:
    """Words ``a`` then ``b`` (a space apart) are two figures, never one: ``b`` opens with a sign,
    a bracket or a currency sign, or ``a`` is grouped with commas or points already, so the space
    is no thousands separator ("1 234 567" stays one figure). A wide figure set right in its column
    can come within a space of the figure before it ("1,267 -240,888"): the columns' gutter is
    there all the same."""
    return _whole_figure(a) and _whole_figure(b) and bool(_FIGURE_OPENS.match(b) or _GROUPED.search(a))


def _whole_figure(text: str) -> bool:
    """A figure, its brackets closed where it opens one ("(1,234)", not "(1" of a formula)."""
    return _is_num(text) and (text[0] not in "([" or text[-1] in ")]")


def _column_cover(area: list[_TextLine], x0: float, n: int, chunks: bool = False) -> list[int]:
    """How many lines of ``area`` have a word over each 1-pt column ``x0 + i``, i < n (with
    ``chunks``, a chunk: the spaces between its words covered too).

    Each line's words are merged into runs first, so a line counts once per column; the runs go
    into a difference array that running sums turn into counts (one pass, not one per point).
    """
    delta = [0] * (n + 1)
    for ln in area:
        boxes = [(ch[0].x0, ch[-1].x1) for ch in ln.chunks] if chunks else [(w.x0, w.x1) for w in ln.words]
        runs = sorted((max(0, int(a - x0)), min(n, int(math.ceil(b - x0)))) for a, b in boxes)
        start, end = runs[0]
        for a, b in runs[1:]:
            if a > end:
                if end > start:
                    delta[start] += 1
                    delta[end] -= 1
                start, end = a, b
            else:
                end = max(end, b)
        if end > start:
            delta[start] += 1
            delta[end] -= 1
    return list(itertools.accumulate(delta[:n]))


#: "in millions", "in thousands, except per share data", "($000)", "(€m)", "in EUR million"
_UNITS_RE = re.compile(
    r"\bin\s+(?:(?:u\.?s\.?|[A-Z]{3})\s+)?(?:dollars\s+|euros?\s+)?(?:thousands|millions?|billions?|mn|bn)\b"
    r"|\((?:[$€£¥]|usd|eur|gbp)\s*(?:000|'000|m|mn|bn|k)\)"
    r"|\bin\s+(?:[$€£¥]|usd|eur|gbp)\s*(?:000|'000|m|mn|bn|k)\b",
    re.IGNORECASE,
)


def is_units(text: str) -> bool:
    """Whether ``text`` states the units of figures ("(in millions, except per share data)")."""
    return bool(_UNITS_RE.search(text))


#: a year, as a column head prints it ("2024", "2023a", "FY24")
_HEAD_YEAR_RE = re.compile(r"^(?:19|20)\d\d[a-z*]?$|^FY\s?\d{2,4}$", re.IGNORECASE)


def _years_and_signs(texts: list[str], sign: bool = True) -> bool:
    """The texts of a head line right of its stub are years and lone signs ("$", "%") alone, two or
    more, a year among them and, with ``sign``, a sign: a comparison table's line of periods and its
    change columns' units. (Years alone under heads over groups of them are a table of several
    measures by year: no such line.)"""
    return (
        len(texts) >= 2
        and all(_HEAD_YEAR_RE.match(t) or t in _SIGNS for t in texts)
        and any(_HEAD_YEAR_RE.match(t) for t in texts)
        and (not sign or any(t in _SIGNS for t in texts))
    )


def _over_groups(area: list[_TextLine], depth: int = 4) -> list[_TextLine]:
    """``area`` less the head phrases set centred over a group of the cells of a line of years and
    signs below them, those phrases' lines kept with the rest of their words.

    A comparison table prints a period head over its year columns and a head over each pair of
    change columns ("$" and "%"), above one line of the years and the signs; each such phrase
    crosses the gutters of the group it heads. In a table of a few rows that one line is more than
    the share of lines allowed to cross a gutter, and the group's columns would be one. The line of
    years and signs (at most one label in the stub before them) and the body below decide the
    gutters; the heads are placed over them later (``stream._phrase_spans``). Only under a line
    holding a sign: years alone under heads over groups of them keep the gutters as they were.

    Failing that, heads of words over a line of heads of words, one over each column below, are
    left out the same way where each is centred over a group of those heads
    (:func:`_centred_over_group`): "Revenue energy" over "Annual" and "Sector demand" in a table of
    five rows made the two one column ("$ 9,428 30.6" one cell; generated ``stacked_header``).
    """
    for k in range(1, min(depth, len(area))):
        chunks = area[k].chunks
        texts = [" ".join(w.text for w in ch) for ch in chunks]
        start = int(bool(texts) and not any(ch.isdigit() for ch in texts[0]) and texts[0] not in _SIGNS)
        cells = [(ch[0].x0, ch[-1].x1) for ch in chunks[start:]]
        if _years_and_signs(texts[start:]):
            return _without_heads(area, k, lambda ch, cells=cells: _over_group(ch[0].x0, ch[-1].x1, cells))
    # Heads of words over groups of column heads of words ("Revenue" over "Annual" and "Sector
    # demand"), each centred on its group: the same, with the head line of the group's own heads in
    # place of the years and signs (a phrase that is not centred on the heads it crosses is a head
    # wrapped past its column, or a line of text, and keeps counting against the gutters)
    left = min(ln.x0 for ln in area)
    for k in range(1, min(depth, len(area))):
        chunks = area[k].chunks
        if any(_figure_head(" ".join(w.text for w in ch)) for ch in chunks):
            continue
        # the heads of the columns right of the stub (the stub's head starts at the table's left)
        heads = [ch for ch in chunks if ch[0].x0 > left + 3.0]
        cells = _column_extents([(ch[0].x0, ch[-1].x1) for ch in heads], area[k + 1 :])
        if len(cells) < 2:
            continue
        # a phrase reaching one head only is weighed where every head is a word or a quarter ("Q3")
        # (not a brace's "{z" under a formula)
        worded = all(
            _LETTERS_RE.search(t) or _HEAD_PART_RE.match(t) for ch in heads if (t := _words_text(ch))
        )
        # lines of a phrase per group or so (at most one for two heads below) may head groups of three
        sparse = {id(ch) for ln in area[:k] if 2 * len(ln.chunks) <= len(cells) for ch in ln.chunks}
        over = lambda ch, cells=cells, worded=worded, sparse=sparse: _centred_over_group(  # noqa: E731
            ch[0].x0, ch[-1].x1, cells, worded, _words_text(ch), id(ch) in sparse
        )
        # the few phrases above first; the body's every chunk only where one of them heads a group
        # (the gutter finder runs for each line the area finder weighs)
        if any(over(ch) for ln in area[:k] for ch in ln.chunks) and _heads_every_column(area[k + 1 :], cells):
            return _without_heads(area, k, over)
    return area


def _over_own_columns(area: list[_TextLine], gap: float) -> list[_TextLine]:
    """``area`` less the head phrases wider than their column, each centred on it, that reach over
    a narrow gutter of the body to the column beside (those phrases' lines kept with the rest).
    ``gap``: the narrowest gutter (``TableSettings.min_col_gap`` line heights).

    A statement of many columns set tight prints heads wider than their figures ("Non-Current" /
    "Marketable" / "Securities" over "$ 33" and "134"), centred on their columns: each line of such
    a head reaches a point or two past the gutter between the body's figures (a figure's hanging
    ")" and the next column's "$"), three head lines crossing it where the gutter finder lets one
    or two, and the two columns were one. The body (the lines from the first with a figure right
    of the stub) says where its gutters are, runs no body word covers; a head phrase covering such
    a run whole, or reaching into it so far that less than a gutter of it stays clear (a head
    "Non-Current" beginning 0.6 points into the 1.2 between a hanging ")" and the next "$"), is
    left out where it is centred on the body's column on either side of it, within a fifth of that
    column's width, and reaches past the run by under a fifth of its own width."""
    # each line read once: a figure right of its stub
    figured = [any(_is_num(_words_text(ch)) for ch in ln.chunks[1:]) for ln in area]
    first = next((k for k, f in enumerate(figured) if f), None)
    if first is None or first < 2:
        return area  # a head line or none: within the share of lines that may cross a gutter
    body = area[first:]
    if len(body) < 3 or 3 * sum(figured[first:]) < 2 * len(body):
        return area  # no body of figures, two lines in three at least, to say where its gutters are
    x0 = min(ln.x0 for ln in area)
    n = int(math.ceil(max(ln.x1 for ln in area) - x0)) + 1
    cover = _column_cover(body, x0, n)
    runs = _zero_runs(cover, 0, n, 1)
    if len(runs) < 2:
        return area
    # the body's columns: between consecutive clear runs, less the space after a column's "$"
    words = [w for ln in body for w in ln.words]

    def after_signs(a: int) -> bool:
        ends = [w.text for w in words if x0 + a - 1.5 <= w.x1 <= x0 + a + 0.5]
        return bool(ends) and all(t in _OPENING_SIGNS for t in ends)

    edges = [r for r in runs if not after_signs(r[0])]
    cols = [(x0 + a[1], x0 + b[0]) for a, b in itertools.pairwise(edges)]

    def own(ch: list[_Word]) -> bool:
        if not all(_WORD_RE.search(w.text) for w in ch):
            return False  # a head of words, no figure, mark or stray glyph among them
        c0, c1 = ch[0].x0, ch[-1].x1
        mid = (c0 + c1) / 2
        for a, b in runs:
            r0, r1 = x0 + a, x0 + b
            if not (c0 < r1 and c1 > r0) or max(c0 - r0, 0) + max(r1 - c1, 0) >= gap:
                continue  # the phrase leaves a gutter of this run clear
            past = min(r1 - c0, c1 - r0)  # its part on the nearer side of the run
            if past > 0.2 * (c1 - c0):
                continue
            if any(abs(mid - (k0 + k1) / 2) <= 0.2 * (k1 - k0) for k0, k1 in cols if k0 - 1 <= mid <= k1 + 1):
                return True
        return False

    if not any(own(ch) for ln in area[:first] for ch in ln.chunks):
        return area
    return _without_heads(area, first, own)


def _column_extents(cells: list[tuple[float, float]], body: list[_TextLine]) -> list[tuple[float, float]]:
    """Each head's extent ``cells`` widened to the body's chunks under it (each under that head
    alone): the column the head names. A head set right over figures wider than itself ("Men" over
    "-208,880") covers the right of its column only, and a head over its group ("2023" over "Men"
    and "Women") is centred on the group's columns, not on their heads. Where widened columns
    would meet, the heads' extents stay."""
    out = []
    for a, b in cells:
        under = [
            (ch[0].x0, ch[-1].x1)
            for ln in body
            for ch in ln.chunks
            if ch[0].x0 < b
            and ch[-1].x1 > a
            and sum(1 for c, d in cells if ch[0].x0 < d and ch[-1].x1 > c) == 1
        ]
        out.append((min([a, *(u[0] for u in under)]), max([b, *(u[1] for u in under)])))
    if any(p[1] >= q[0] for p, q in itertools.pairwise(out)):
        return cells
    return out


def _without_heads(area: list[_TextLine], k: int, over: Callable[[list[_Word]], bool]) -> list[_TextLine]:
    """``area`` less the phrases above its line ``k`` that ``over`` says head a group of columns."""
    out: list[_TextLine] = []
    for j, ln in enumerate(area):
        keep = [ch for ch in ln.chunks if j >= k or not over(ch)]
        if len(keep) == len(ln.chunks):
            out.append(ln)
        elif keep:
            out.append(_TextLine(words=[w for ch in keep for w in ch], chunks=keep, label=ln.label))
    return out


def _heads_every_column(body: list[_TextLine], cells: list[tuple[float, float]]) -> bool:
    """Every chunk of ``body`` right of the stub stands under one of ``cells``: a line of heads,
    one over each column (a line of a stacked head that leaves some columns' heads blank does not
    tell where its groups are: a one-line head beside it sits over the blank)."""
    return all(
        any(a - 2.0 < ch[-1].x1 and ch[0].x0 < b + 2.0 for a, b in cells)
        for ln in body
        for ch in ln.chunks
        if ch[-1].x1 > cells[0][0] - 2.0
    )


#: a quarter or half year as a column's head: "Q1", "4Q", "H2" ("Q1 2024" reads as two tokens)
_HEAD_PART_RE = re.compile(r"^(?:Q[1-4]|[1-4]Q|H[12]|[12]H)(?:\d\d)?$", re.IGNORECASE)


def _figure_head(text: str) -> bool:
    """A head line's cell holding a figure other than a year or a quarter ("Q3", "H1"): the line is
    a row of the body."""
    return any(ch.isdigit() for ch in text) and not all(
        _HEAD_YEAR_RE.match(t) or _HEAD_PART_RE.match(t) for t in text.split()
    )


#: a word of three letters or more
_WORD_RE = re.compile(r"[^\W\d_]{3,}")


def _reads_on(text: str) -> bool:
    """A stub's text going on with a label above it: words, not a figure, starting with a lower-case
    letter (a row's label starts with a capital)."""
    return text[:1].islower() and not _is_num(text) and bool(_WORD_RE.search(text))


#: a word of two letters or more
_LETTERS_RE = re.compile(r"[^\W\d_]{2,}")
#: more than a word space at table sizes, in points: how far a phrase runs past a head to reach beyond it
_SPACE = 2.0


def _centred_over_group(
    x0: float,
    x1: float,
    cells: list[tuple[float, float]],
    one: bool = True,
    text: str = "",
    three: bool = False,
) -> bool:
    """Whether a phrase at ``x0``..``x1`` reaches over two or more of ``cells`` (the column heads of
    a line below it, left to right, the stub's left out) and is centred over a run of them, within
    a fifth of the run's extent (as ``stream._phrase_spans`` places such a head), better than over
    any one head it reaches, and not wider than the run by more than a fifth: a head of the group
    of columns the run heads. The run is the heads the phrase reaches over, and perhaps one more on
    either side (a head centred over three columns may reach the middle one and the edge of one
    beside it).

    With ``one``, a phrase over one head only heads a group of that head and the one beside it
    that it runs past its edge towards, by more than a space (heads set right in their columns: the
    group's head stops short of a short head at its column's right, "Channel", or starts right of
    the head before it), and a phrase between two heads, reaching neither, heads the two where it
    is centred on them within a fifth of their extent and in the middle third of the space between
    them, and its ``text`` is a word or a year (a formula's ")" between two terms is neither).
    With ``three`` too (a line of a phrase or so per group, at most one for two heads below), a
    phrase reaching one head only and running past its edge heads that head and its neighbours
    where centred on the three ("Female" over "Value", "Volume", "Price", set tight): a stacked
    head's upper lines hold a phrase per column, each over its own."""
    reached = [i for i, (a, b) in enumerate(cells) if a < x1 and b > x0]
    mid = (x0 + x1) / 2
    if not reached:
        # a head between two heads, reaching neither ("2024" over "Men" and "Women" set apart for
        # narrow figures), heads the pair where it is centred on them
        pair = [i for i in range(len(cells) - 1) if cells[i][1] <= x0 and x1 <= cells[i + 1][0]]
        head = bool(_WORD_RE.search(text) or _HEAD_YEAR_RE.match(text))
        return (
            one
            and head
            and any(
                abs(mid - (cells[i][0] + cells[i + 1][1]) / 2) <= 0.2 * (cells[i + 1][1] - cells[i][0])
                and abs(mid - (cells[i][1] + cells[i + 1][0]) / 2) <= (cells[i + 1][0] - cells[i][1]) / 6
                for i in pair
            )
        )
    # a head of one column wrapped wider than the line under it ("population overall" over "exclusion
    # rate", set right) is centred on that column's head better than on any group; a phrase more than
    # twice as wide as a head is no head of its column alone ("Channel contract" over "Water",
    # "Supply" and "Output" is centred on "Supply" as on the three)
    own = [i for i in reached if x1 - x0 <= 2 * (cells[i][1] - cells[i][0])]
    alone = min((abs(mid - (cells[i][0] + cells[i][1]) / 2) for i in own), default=math.inf)
    first, last = reached[0], reached[-1]
    if len(reached) > 1:
        runs = [(a, b) for a in {max(first - 1, 0), first} for b in {last, min(last + 1, len(cells) - 1)}]
    elif one:
        runs = [(first, first + 1)] if first + 1 < len(cells) and x1 > cells[first][1] + _SPACE else []
        runs += [(first - 1, first)] if first > 0 and x0 < cells[first][0] - _SPACE else []
        if three and runs and 0 < first < len(cells) - 1:
            # centred over three, reaching the middle one only: a head over a group of three
            runs.append((first - 1, first + 1))
    else:
        return False
    for a, b in runs:
        g0, g1 = cells[a][0], cells[b][1]
        off = abs(mid - (g0 + g1) / 2)
        if b > a and off <= 0.2 * (g1 - g0) and off <= alone and x1 - x0 <= 1.2 * (g1 - g0):
            return True
    return False


def _over_group(x0: float, x1: float, cells: list[tuple[float, float]]) -> bool:
    """Whether a phrase at ``x0``..``x1`` crosses the space between two of ``cells`` (left to right)
    with its middle over them: a head of the group of columns those cells head."""
    mid = (x0 + x1) / 2
    for a, b in itertools.pairwise(cells):
        if x0 < b[0] and x1 > a[1] and cells[0][0] <= mid <= cells[-1][1]:
            return True
    return False


def _zero_runs(cover: list[int], i: int, j: int, gap: float) -> list[tuple[int, int]]:
    """The runs no word covers within ``cover[i:j]`` that are at least ``gap`` wide, left to right."""
    runs: list[tuple[int, int]] = []
    k = i
    while k < j:
        if cover[k] == 0:
            e = k
            while e < j and cover[e] == 0:
                e += 1
            if e - k >= gap:
                runs.append((k, e))
            k = e
        else:
            k += 1
    return runs


def _clear_runs(cover: list[int], i: int, j: int, gap: float) -> list[tuple[int, int]]:
    """The gutters within ``cover[i:j]``, a stretch that few enough lines cross to part columns:
    itself, or where two runs no word covers (each at least ``gap`` wide) lie either side of words
    of two lines or more, each such run. A column filled on fewer lines than the share allowed to
    cross a gutter (a sparse column of a long table: "89.2%" on two rows of thirty-eight lines,
    wrapped labels making most of them) lay inside one such stretch, and was read as part of the
    column beside it."""
    runs = _zero_runs(cover, i, j, gap)
    if len(runs) < 2 or any(max(cover[a[1] : b[0]], default=0) < 2 for a, b in itertools.pairwise(runs)):
        return [(i, j)]
    return runs


def _sparse_stub(cover: list[int], j: int, gap: float) -> float | None:
    """Where a first column filled on few lines parts from the next: the middle of the last run
    no word covers, at least ``gap`` wide, inside ``cover[:j]`` (the stretch from the area's left
    edge that few enough lines cross to be a gutter), with words of two lines or more left of it.

    A grouping column names its group on the group's first row and its total only ("ELECT
    DEFERRAL" over twenty rows of funds): fewer lines than may cross a gutter fill it, so the
    stretch from the area's edge to the next column reads as one gutter at the edge, and the
    group labels went into the next column. None where no such run lies there."""
    runs = [(k, e) for k, e in _zero_runs(cover, 0, j, gap) if k > 0 and max(cover[:k]) >= 2]
    return (runs[-1][0] + runs[-1][1]) / 2 if runs else None


def _sparse_last(cover: list[int], i: int, gap: float) -> float | None:
    """Where a last column filled on few lines parts from the one before: the middle of the first
    run no word covers, at least ``gap`` wide, inside ``cover[i:]`` (the stretch from the last gutter
    to the area's right edge that few enough lines cross to be a gutter), with words of two lines
    or more right of it (:func:`_sparse_stub` on the other side).

    A sparse statistical table's last column may hold one figure under its head ("Variance" over
    "24,654.2" in a table of 24 rows): the stretch from the column before to the area's right edge
    read as no gutter at all, and the figure went into the column before. None where no such run
    lies there."""
    runs = [
        (k, e) for k, e in _zero_runs(cover, i, len(cover), gap) if e < len(cover) and max(cover[e:]) >= 2
    ]
    return (runs[0][0] + runs[0][1]) / 2 if runs else None


#: a currency sign that opens a figure's cell, set apart at the cell's left ("$ 30,950")
_OPENING_SIGNS = _LEADING - {"("}
#: a nil figure: a dash where a statement has no amount ("$ —"); it fills a cell as a figure does
_NIL_RE = re.compile(r"^[—–-]{1,3}$")


def _figure_or_nil(text: str) -> bool:
    return _is_num(text) or bool(_NIL_RE.match(text))


#: a statistical table's marks for a figure not available, not applicable or suppressed, in its
#: cell's place: "..", "...", ":" (Eurostat), "n.a.", "n/a", "x" (suppressed: Statistics Canada, ONS)
_NOT_AVAILABLE_RE = re.compile(r"^(?:\.{2,3}|:|n\.a\.?|n/a|x)$", re.IGNORECASE)


def _figure_nil_or_mark(text: str) -> bool:
    """A cell a data row fills: a figure, a nil's dash or a statistical table's mark in its place."""
    return _figure_or_nil(text) or bool(_NOT_AVAILABLE_RE.match(text))


def _sign_starts(area: list[_TextLine]) -> list[tuple[int, float, float | None]]:
    """The currency signs of ``area`` set apart before a figure or a nil: (line, the sign's left,
    the right of the word before it on its line, None at the line's start). Read once a gutter
    search (``_column_bounds``), where a narrow run asks for them (``_opens_sign_cells``)."""
    return [
        (k, w.x0, ln.words[i - 1].x1 if i else None)
        for k, ln in enumerate(area)
        for i, (w, nxt) in enumerate(itertools.pairwise(ln.words))
        if w.text in _OPENING_SIGNS and _figure_or_nil(nxt.text)
    ]


def _opens_sign_cells(signs: list[tuple[int, float, float | None]], lo: float, x: float, gap: float) -> bool:
    """Whether a clear run ``lo..x`` too narrow for a gutter is one all the same: two lines or more
    have a currency sign beginning at ``x`` (or inside the run), set apart before a figure (``signs``:
    ``_sign_starts``), and on one of them at least the word before the sign ends less than a
    gutter (``gap``) before the run: the run is the space between a figure and the sign, narrowed
    further by what hangs out of other lines ("(447)").

    A statement of many columns sets each column's "$" at its left edge, a few points after the
    figure of the column before ("4,002 $ 18,110", "(131,734) $ —" where the parenthesis hangs
    out): on the rows that carry signs the gutter is that space alone, no wider than a word space
    on some, and the columns ran together. A leading sign before a figure begins a cell wherever
    it stands; two lines with one at the same place are a column's signs, not a phrase's. A run
    bounded on the left by other lines only (signs set a space before figures of different widths,
    "$ 6,333" under "$ 190,134", all set right) lies inside one column."""
    lines: set[int] = set()
    bounded = False
    for k, sign_x0, before in signs:
        # a line's first sign there, or inside the run (the signs' own lines are within the share
        # allowed to cross a gutter, so the run may reach past where they begin)
        if k not in lines and lo - 1.0 <= sign_x0 <= x + 1.5:
            lines.add(k)
            bounded = bounded or (before is not None and before > lo - gap)
    return len(lines) >= 2 and bounded


def _figure_gaps(area: list[_TextLine]) -> tuple[list[tuple[float, float]], list[tuple[float, float]]]:
    """The spaces of ``area`` a narrow gutter may lie in (``_figures_part``): between two figures
    that are never one (``_figures_apart``) on a line, and between two phrases of a line. Read once
    a gutter search, where a narrow run asks for them."""
    figures = [
        (w.x1, v.x0) for ln in area for w, v in itertools.pairwise(ln.words) if _figures_apart(w.text, v.text)
    ]
    phrases = [(a[-1].x1, b[0].x0) for ln in area for a, b in itertools.pairwise(ln.chunks)]
    return figures, phrases


def _figures_part(
    gaps: tuple[list[tuple[float, float]], list[tuple[float, float]]], lo: float, hi: float, h: float
) -> bool:
    """Whether a clear run ``lo..hi`` too narrow for a gutter is one all the same: a quarter of a
    line height ``h`` wide at least (not a sliver other lines' words narrowed it to), two figures
    that are never one either side of it on one line, and another line parting two phrases there
    by more (a head line over the two columns); ``gaps``: ``_figure_gaps``. A figure as wide as its
    column comes within a space of the column before ("1,267 -240,888" under "Network output" and
    "Import"), where the other lines' gutter is the head's."""
    figures, phrases = gaps
    return (
        hi - lo >= 0.25 * h
        and any(a <= lo + 1.5 and b >= hi - 1.5 for a, b in figures)
        and any(a < lo - 0.5 and b >= hi - 0.5 or a <= lo + 0.5 and b > hi + 0.5 for a, b in phrases)
    )


def _signs_after_a_sliver(
    area: list[_TextLine],
    bounds: list[float],
    signs: list[tuple[int, float, float | None]],
    limit: int,
    gap: float,
) -> list[float]:
    """Bounds just before a column's currency signs set a sliver after the widest figures of the
    column before: ``_opens_sign_cells``' case where the cover, counted on whole points rounded
    outward, finds no clear run at all ("(1,370)" ends at 383.2, the next column's "$" begins at
    384.5, its parenthesis hanging out), and two columns of a wide statement read as one ("$ (1,370)
    $ 15"). Two lines or more with a sign beginning within a point of one another, set apart
    before a figure (``signs``: ``_sign_starts``); less than a gutter (``gap``) between them and the
    nearest word end before them on any line (a wide figure of the column before, hanging out: on
    the signs' own lines the space before them may be wider); no more lines than may cross a gutter
    (``limit``) across the point just before the signs, no bound within a gutter of it, and no line
    of theirs ending on a sign (one set after its figure, "1 234 $", ends its line so)."""
    out: list[float] = []
    starts = sorted(signs, key=lambda t: t[1])
    i = 0
    while i < len(starts):
        j = i
        while j + 1 < len(starts) and starts[j + 1][1] - starts[i][1] <= 1.0:
            j += 1
        group, i = starts[i : j + 1], j + 1
        lines = {k for k, _, _ in group}
        x = group[0][1] - 0.25
        if (
            len(lines) >= 2
            and not any(abs(b - x) < gap for b in [*bounds, *out])
            and not any(area[k].words[-1].text in _OPENING_SIGNS for k in lines)
            and _crossings(area, x) <= limit
            and max((w.x1 for ln in area for w in ln.words if w.x1 <= x), default=x - gap) > x - gap
        ):
            out.append(x)
    return out


def _inside_figures(area: list[_TextLine], x: float) -> bool:
    """Whether the words crossing ``x`` are figures set right with figures right of ``x``: the run
    of space they cross is the inside of one column of figures set right, not a gutter.

    A sparse column of short figures under a wide head ("4", "—", "(5)" under "Current Marketable
    Securities") leaves clear space between the head's end and the figures' left, crossed by the
    one long figure ("1,228") alone: fewer lines than may cross a gutter, and the column was cut
    in two, a column per figure width."""
    crossing = [w for ln in area for w in ln.words if w.x0 < x < w.x1]
    # a figure, not two read as one word across the gutter ("11 156,643": a space in it)
    if not crossing or not all(_is_num(w.text) and len(w.text.split()) == 1 for w in crossing):
        return False
    return all(
        sum(
            1
            for ln in area
            for v in ln.words
            if v.x0 > x and abs(v.x1 - w.x1) <= 1.0 and _figure_or_nil(v.text)
        )
        >= 2
        for w in crossing
    )


def _signs_from_figures(area: list[_TextLine], left: float, x: float) -> bool:
    """Whether the words between ``left`` (the bound before) and ``x`` on the lines no word crosses
    at ``x`` are all currency signs set apart before a figure right of ``x``, one at least: the
    run crossed at ``x`` parts a sign from its figure, not two columns.

    Figures of different widths set right, each with its sign a space before it ("$ 9,139 n.a."
    under "$ 71,607 estimated"), leave the space after the leftmost signs clear on every line but
    those whose figure reaches across it; a fixed-pitch font makes that space as wide as a gutter
    that a line may cross, and the column became a sliver holding a sign or two. Only signs a
    word space from their figure: a statement's "$" set at its column's left, its figures set
    right, is a column of signs that is parted here and folded into its figures later
    (``fold_symbol_columns``), as the head over the pair is read."""
    found = False
    for ln in area:
        # a word across x, or a phrase of words across it: a head over the column ("Education
        # budget") with its word space at x
        if any(w.x0 < x < w.x1 for w in ln.words) or any(
            ch[0].x0 < x < ch[-1].x1 and all(_LETTERS_RE.search(w.text) for w in ch) for ch in ln.chunks
        ):
            continue
        for i, w in enumerate(ln.words):
            if not (left < w.x0 and w.x1 <= x):
                continue
            nxt = ln.words[i + 1] if i + 1 < len(ln.words) else None
            if (
                w.text not in _OPENING_SIGNS
                or nxt is None
                or nxt.x0 < x
                or nxt.x0 - w.x1 > 0.75 * (w.y1 - w.y0)  # a statement's "$" set at its column's left
                or not _figure_or_nil(nxt.text)
            ):
                return False
            found = True
    return found


def _crossings(area: list[_TextLine], x: float) -> int:
    """How many lines of ``area`` have a word across ``x``."""
    return sum(any(w.x0 < x < w.x1 for w in ln.words) for ln in area)


def _after_signs(area: list[_TextLine], lo: float, hi: float, x: float, crossed: int) -> float:
    """Just right of a column's currency signs where fewer lines cross there than the ``crossed``
    at ``x`` once words are read to the fraction of a point (the nearest such place to ``x``),
    else ``x``.

    The cover is counted on whole points, rounded outward: the sliver of a point or two between a
    column's "$" and the wide head over its figure ("$" ends at 339.6, "Unrealized" begins at
    340.7) reads as covered, and the gutter was set inside the head's word, the head cut in two.
    Only after signs, which go with the figure to their right: a sliver between a head and the
    head of a group over it and the next column is where the group's head crosses, as it should."""
    ends = {w.x1 for ln in area for w in ln.words if w.text in _OPENING_SIGNS and lo <= w.x1 < hi}
    best, fewest = x, crossed
    for a in sorted(ends):
        b = min((w.x0 for ln in area for w in ln.words if a < w.x0 <= hi), default=hi)
        m = (a + b) / 2
        n = _crossings(area, m)
        if n < fewest or (n == fewest < crossed and abs(m - x) < abs(best - x)):
            best, fewest = m, n
    return best


def _column_bounds(area: list[_TextLine], s: TableSettings) -> list[float]:
    """Column boundaries: x ranges that (almost) no word of the area covers, wide enough to be gutters."""
    area = [ln for ln in area if not ln.label] or area
    limit = int(s.span_tolerance * len(area))
    x0 = min(ln.x0 for ln in area)
    x1 = max(ln.x1 for ln in area)
    h = statistics.median(ln.y1 - ln.y0 for ln in area)
    n = int(math.ceil(x1 - x0)) + 1
    area = _over_own_columns(_over_groups(area), s.min_col_gap * h)
    cover = _column_cover(area, x0, n)
    phrases: list[int] | None = None
    signs: list[tuple[int, float, float | None]] | None = None
    gaps: tuple[list[tuple[float, float]], list[tuple[float, float]]] | None = None
    bounds: list[float] = []
    i = 0
    while i < n:
        if cover[i] <= limit:
            j = i
            while j < n and cover[j] <= limit:
                j += 1
            wide = (j - i) >= s.min_col_gap * h
            if not wide and 0 < i and j < n and signs is None:
                signs = _sign_starts(area)
                gaps = _figure_gaps(area)
            if (
                i > 0
                and j < n
                and (
                    wide
                    or (signs and _opens_sign_cells(signs, x0 + i, x0 + j, s.min_col_gap * h))
                    or (gaps is not None and _figures_part(gaps, x0 + i, x0 + j, h))
                )
            ):
                # inside the gutter, the position with the fewest crossings: of words, then of
                # phrases (a header cell wider than its figures reaches into the gutter, and the
                # space between two of its words must not be where the columns part)
                if phrases is None:
                    phrases = _column_cover(area, x0, n, chunks=True)
                for a, b in _clear_runs(cover, i, j, s.min_col_gap * h):
                    if b - a <= h and _word_space(area, x0 + a, x0 + b):  # no space is a line height wide
                        continue
                    best = min(range(a, b), key=lambda k: (cover[k], phrases[k], abs(k - (a + b) / 2)))
                    x = x0 + best + 0.5
                    if cover[best]:
                        if _inside_figures(area, x) or _signs_from_figures(
                            area, bounds[-1] if bounds else x0, x
                        ):
                            continue
                        x = _after_signs(area, x0 + a - 1, x0 + b, x, cover[best])
                    bounds.append(x)
            elif i == 0 and j < n and (stub := _sparse_stub(cover, j, s.min_col_gap * h)) is not None:
                bounds.append(x0 + stub)
            elif i > 0 and j == n and (last := _sparse_last(cover, i, s.min_col_gap * h)) is not None:
                bounds.append(x0 + last)
            i = j
        else:
            i += 1
    found = [*bounds, *_years_apart(area, bounds)]
    signs = signs if signs is not None else _sign_starts(area)  # read once, here or for a narrow run
    found += _signs_after_a_sliver(area, found, signs, limit, s.min_col_gap * h)
    return [x0 - 0.5, *sorted([*found, *_heads_over_nothing(area, found)]), x1 + 0.5]


def _word_space(area: list[_TextLine], a: float, b: float) -> bool:
    """Whether the clear run ``a``..``b`` is a word space lined up from line to line: as many lines
    or more hold it between two words of one phrase as part two phrases there.

    A monospaced font's space is a whole character wide, half a line height and more, as wide as a
    gutter may be; in a column of labels set in it ("Other revenue (1)" over "Subscriptions and
    support") or under heads of two words ("Volume revenue"), the spaces at the same character line
    up into a channel no word crosses, and each label was cut into columns. A gap inside a phrase
    (``_text_lines``) is a word space where it is no wider than the line's other word spaces (or,
    on a line with none, than its characters' mean advance, as ``_text_lines`` cuts): a table set
    tight parts its cells by a gap inside a phrase too, twice its spaces ("(405) 680-3701
    2014/09/14"), and that gap stays a gutter."""
    inside = apart = 0
    for ln in area:
        for k, ch in enumerate(ln.chunks):
            gap = next(
                (v.x0 - w.x1 for w, v in itertools.pairwise(ch) if w.x1 <= a + 0.5 and v.x0 >= b - 0.5), None
            )
            if gap is not None and _a_word_space(ln, gap):
                inside += 1
            elif gap is not None or (k and ln.chunks[k - 1][-1].x1 <= a + 0.5 and ch[0].x0 >= b - 0.5):
                apart += 1
    return inside >= max(apart, 1)


def _a_word_space(ln: _TextLine, gap: float) -> bool:
    """Whether ``gap``, between two words of a phrase of ``ln``, is as wide as the line's word spaces."""
    spaces = [v.x0 - w.x1 for ch in ln.chunks for w, v in itertools.pairwise(ch)]
    spaces.remove(min(spaces, key=lambda g: abs(g - gap)))  # the gap itself
    if spaces:
        return gap <= 1.25 * statistics.median(spaces)
    return gap <= _SPACE_CHARS * _mean_advance(ln.words)


def _heads_over_nothing(area: list[_TextLine], bounds: list[float]) -> list[float]:
    """Bounds beside a head of words over a column empty on every line below it, where no bound
    parts it from the head before or after it on a head line of three phrases or more.

    A sparse statistical table may leave a column blank on every row of a page ("Factory" over
    nothing between "Share service" and "Reserve total"): the stretch from the column before to the
    column after is crossed by the head alone, fewer lines than may cross a gutter, so it read as
    one gutter and the head went to a neighbour's cell (as an empty year's column did, see
    ``_years_apart``)."""
    out: list[float] = []
    for k, ln in enumerate(area):
        if len(ln.chunks) < 3 or not all(_LETTERS_RE.search(_words_text(ch)) for ch in ln.chunks):
            continue
        below = [w for x in area[k + 1 :] for w in x.words]
        if not below:
            continue

        def over_nothing(ch: list[_Word], below: list[_Word] = below) -> bool:
            return not any(w.x0 < ch[-1].x1 and w.x1 > ch[0].x0 for w in below)

        for i, (a, b) in enumerate(itertools.pairwise(ln.chunks)):
            if any(a[-1].x1 <= x <= b[0].x0 for x in [*bounds, *out]):
                continue
            # one of the two over nothing (the first, the stub's head, is no empty column's)
            if (i and over_nothing(a)) or over_nothing(b):
                out.append((a[-1].x1 + b[0].x0) / 2)
    return out


def _years_apart(area: list[_TextLine], bounds: list[float]) -> list[float]:
    """Bounds between two years of a head line of years that no bound parts: each year heads a
    column of its own. A year's column empty in every row ("2013" over nothing, in a table of
    2010 to 2015) leaves a stretch that only its head crosses, and the gutter finder, which lets a
    line or two cross a gutter, took it for one gutter and gave the head to a neighbour."""
    out: list[float] = []
    for ln in area:
        if len(ln.chunks) < 3:  # most lines: no three heads to part (this runs for every area)
            continue
        heads = ln.chunks[1:] if not _HEAD_YEAR_RE.match(_words_text(ln.chunks[0])) else ln.chunks
        if len(heads) < 3 or not all(_HEAD_YEAR_RE.match(_words_text(ch)) for ch in heads):
            continue
        for a, b in itertools.pairwise(heads):
            if not any(a[-1].x1 <= x <= b[0].x0 for x in [*bounds, *out]):
                out.append((a[-1].x1 + b[0].x0) / 2)
    return out
