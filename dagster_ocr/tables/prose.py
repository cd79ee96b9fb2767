"""Running text that aligns like a table, told apart after a finder found it (``_running_text``).

The text-alignment finder sees columns wherever words line up. Two kinds of running text line up
well enough to pass its own test (``stream._keep``) and would swallow a page of body paragraphs:

* **numbered lines**: a transcript, a pleading, a line-numbered contract or code listing prints a
  number in the margin of every line, so every line has two chunks (the number, the text), often
  three (a speaker tag "Q." / "A." / "THE COURT:" between). The numbers rise by a constant step,
  one per printed line, and the widest column holds prose. A table with a row-number column
  numbers rows, not lines: its other columns hold data, not sentences.
* **gapped prose**: justified or right-to-left text that the PDF writes in fragments with wide
  gaps (Arabic and Hebrew prose often are), so a few short lines seem to share gutters. Its
  gutters are only as wide as the widest word gaps of the lines, where a table's are wide and
  its columns hold short, often numeric, cells.
* **wrapped prose**: running text set in narrow columns (a newsletter, a newspaper page, a
  notice in three or four columns). Its short lines of a few words line up in every column and
  the white between the columns is a clean gutter, so the finder sees a table with a column per
  page column. Each column's lines wrap like prose: the first word of a line would not have fit
  at the end of the line above (the line breaks because the measure is full), and nearly every
  token is a word. A table's text column holds one item a cell: the next label would mostly have
  fitted beside the one above it, and a table has figures somewhere.

A part rejected here is not a table: its region is not claimed, so the paragraph stage reads
its lines as body text (nothing is lost; see ``conservation``).
"""

from __future__ import annotations

import bisect
import math
import re
import statistics
import unicodedata

from dagster_ocr.tables.cells import _Part
from dagster_ocr.tables.settings import TableSettings
from dagster_ocr.tables.stream import _column_cover
from dagster_ocr.tables.words import _bands, _reads_rtl, _text_lines, _Word

_INT_RE = re.compile(r"^\d{1,5}$")
_RTL_BIDI = ("R", "AL")


def _words(text: str | None) -> int:
    return len((text or "").split())


def _numbered_lines(part: _Part, s: TableSettings) -> bool:
    """A margin column (first or last) of line numbers beside a column of prose (see the module)."""
    n = len(part.rows)
    if n < s.min_stream_rows or part.n_cols < 2:
        return False
    for margin in (0, part.n_cols - 1):
        cells = [(row[margin] or "").strip() for row in part.rows]
        numbers = [int(c) for c in cells if _INT_RE.match(c)]
        if len(numbers) < s.line_number_share * n or len(numbers) < len([c for c in cells if c]):
            continue  # not every filled margin cell is a number, or too few rows have one
        steps = {b - a for a, b in zip(numbers, numbers[1:], strict=False)}
        if len(steps) != 1 or not 1 <= next(iter(steps)) <= 5:
            continue  # line numbers rise by one (or every fifth line) without a break
        others = [c for c in range(part.n_cols) if c != margin]
        # the text column: the one holding the most words; running text fills it with sentences
        text_col = max(others, key=lambda c: sum(_words(row[c]) for row in part.rows))
        filled = [_words(row[text_col]) for row in part.rows if row[text_col]]
        if filled and statistics.median(filled) >= s.max_median_words:
            return True
    return False


def _gapped_prose(part: _Part, words: list[_Word], s: TableSettings) -> bool:
    """Right-to-left prose written in gapped fragments (see the module): mostly RTL letters, hardly
    a number, and gutters no wider than the lines' own widest word gaps."""
    inside = _inside(part, words)
    letters = [c for w in inside for c in w.text if c.isalpha()]
    if not letters:
        return False
    rtl = sum(unicodedata.bidirectional(c) in _RTL_BIDI for c in letters)
    if rtl < 0.5 * len(letters):
        return False
    cells = [c for r in part.rows for c in r if c]
    numeric = sum(1 for c in cells if any(ch.isdigit() for ch in c))
    if numeric > s.prose_max_numeric_share * max(len(cells), 1):
        return False
    gutters = _gutter_widths(part, inside, s)
    return bool(gutters) and statistics.median(gutters) < s.prose_max_gutter


def _inside(part: _Part, words: list[_Word]) -> list[_Word]:
    """The words within the part's box (a point's slack)."""
    x0, y0, x1, y1 = part.bbox
    return [w for w in words if w.x0 >= x0 - 1 and w.x1 <= x1 + 1 and w.y0 >= y0 - 1 and w.y1 <= y1 + 1]


def _gutter_widths(part: _Part, inside: list[_Word], s: TableSettings) -> list[float]:
    """The width of the empty x range around each inner column edge of ``part``, in line heights."""
    lines = _text_lines(inside, s.chunk_gap)
    if not lines:
        return []
    h = statistics.median(ln.y1 - ln.y0 for ln in lines)
    x0 = min(ln.x0 for ln in lines)
    n = int(math.ceil(max(ln.x1 for ln in lines) - x0)) + 1
    cover = _column_cover(lines, x0, n)
    limit = int(s.span_tolerance * len(lines))
    widths = []
    for edge in part.col_edges[1:-1]:
        i = min(max(int(edge - x0), 0), n - 1)
        if cover[i] > limit:
            continue
        lo, hi = i, i
        while lo > 0 and cover[lo - 1] <= limit:
            lo -= 1
        while hi < n - 1 and cover[hi + 1] <= limit:
            hi += 1
        widths.append((hi - lo + 1) / h)
    return widths


#: a cell of this many words or more reads as a sentence
_SENTENCE_WORDS = 8


def _sentences(part: _Part, rtl: bool = False) -> bool:
    """Running text cut into columns by chance gaps (a tag set apart, a wide word space): most of the
    part's words lie in cells of a sentence's length, and no column holds figures but the one a
    line starts with (a list's numbers: the first, or the last in a right-to-left part, where a
    table's figures stand at the left). A table's long cells (descriptions) sit beside columns of
    figures or of short labels.
    """
    counts = [len(c.split()) for r in part.rows for c in r if c]
    total = sum(counts)
    if not total or sum(n for n in counts if n >= _SENTENCE_WORDS) < 0.6 * total:
        return False
    start = part.n_cols - 1 if rtl else 0
    for c in range(part.n_cols):
        if c == start:
            continue
        filled = [r[c] for r in part.rows if c < len(r) and r[c]]
        if len(filled) >= 2 and sum(bool(_NUMBER_RE.match(x)) for x in filled) >= 0.5 * len(filled):
            return False
    return True


_NUMBER_RE = re.compile(r"^[\(\[]?[-+$£€¥]?\s?\d[\d,.\s]*%?[\)\]]?$")


def _boxed_text(part: _Part) -> bool:
    """Text set in drawn boxes (cards, call-outs, a boxed two-column layout), not a table: a ruled
    part with two or more filled cells, every one of them a sentence's length. A table's grid holds
    short cells somewhere (its header's labels, figures, a stub); boxed prose has none."""
    filled = [c for r in part.rows for c in r if c]
    return len(filled) >= 2 and all(len(c.split()) >= _SENTENCE_WORDS for c in filled)


#: a line of a prose column holds about this many tokens or more (a table's cells hold fewer)
_PROSE_LINE_WORDS = 3
#: the share of a part's tokens that must be words (letters, no digit) for it to read as prose
_PROSE_WORD_SHARE = 0.9


def _column_lines(part: _Part, words: list[_Word]) -> list[list[list[_Word]]]:
    """Per column of ``part``, its words grouped into text lines, top-down (a word belongs to the
    column its middle lies in)."""
    x0, y0, x1, y1 = part.bbox
    edges = part.col_edges
    cols: list[list[_Word]] = [[] for _ in range(part.n_cols)]
    for w in words:
        cx, cy = (w.x0 + w.x1) / 2, (w.y0 + w.y1) / 2
        if x0 - 1 <= cx <= x1 + 1 and y0 - 1 <= cy <= y1 + 1:
            c = min(max(bisect.bisect_right(edges, cx) - 1, 0), part.n_cols - 1)
            cols[c].append(w)
    return [_bands(ws) for ws in cols]


def _wrapped_prose(part: _Part, words: list[_Word], s: TableSettings) -> bool:
    """Prose set in narrow columns (see the module): nearly every token a word, lines of a few
    words, and in every column of three lines or more at least ``wrapped_share`` of its lines
    followed by a line whose first word would not have fitted after it within the column's
    measure (the right edge of its longest line)."""
    if part.n_cols < 2 or len(part.rows) < s.min_stream_rows:
        return False
    cols = _column_lines(part, words)
    tokens = [w.text for lines in cols for ln in lines for w in ln]
    if not tokens:
        return False
    wordy = sum(any(c.isalpha() for c in t) and not any(c.isdigit() for c in t) for t in tokens)
    if wordy < _PROSE_WORD_SHARE * len(tokens):
        return False
    tested = 0
    for lines in cols:
        if len(lines) < s.min_stream_rows:
            continue
        if statistics.median(len(ln) for ln in lines) < _PROSE_LINE_WORDS:
            return False
        right = max(ln[-1].x1 for ln in lines)
        wraps = 0
        for a, b in zip(lines, lines[1:], strict=False):
            h = a[-1].y1 - a[-1].y0
            # the narrowest word space a line is set with: a tenth of its height
            wraps += a[-1].x1 + 0.1 * h + (b[0].x1 - b[0].x0) > right
        if wraps < s.wrapped_share * (len(lines) - 1):
            return False
        tested += 1
    return tested >= 2


def _running_text(part: _Part, words: list[_Word], s: TableSettings) -> str | None:
    """Why a text-aligned part is running text, not a table ("numbered lines", "gapped prose",
    "sentences", "wrapped prose"); else None."""
    if part.strategy != "stream":
        return None
    if _numbered_lines(part, s):
        return "numbered lines"
    if _gapped_prose(part, words, s):
        return "gapped prose"
    if _sentences(part, _reads_rtl(_inside(part, words))):
        return "sentences"
    if _wrapped_prose(part, words, s):
        return "wrapped prose"
    return None
