"""Conservation of text: where every character of a page's text layer (or OCR output) ended up.

Each non-whitespace character of each line the text stage produced is accounted to exactly one
destination: a paragraph, a heading, a table cell, a furniture line (by its kind: page_number,
header, footer), or **lost** (found in none of them). A measurement, not a repair: it says how
much text the later stages dropped, page by page, and which (``PageAccount.lost_text``).

How a line is matched. The stages rewrite text a little: fragments of a visual line are joined,
lines are joined with spaces, a line-break hyphen is dropped, a bullet glyph becomes "•", a drop
cap is glued to its word. So texts are compared *compacted*: without whitespace, hyphens, bullet
glyphs, and control, format or private-use code points (see :func:`compact`). Then, per page:

1. a line the paragraph stage marked as furniture goes to its kind;
2. every other line, longest first, is looked up whole in the paragraphs and headings that cover
   the page (``page_index .. last_page_index``), then in the cells of the tables on the page;
3. a line not found whole (split over table cells, or partly dropped) is matched word by word, in
   runs as long as possible, in the same destinations;
4. a word found nowhere is matched character by character among what is left unconsumed in the
   page's destinations (the stage reordered it, say a subscript, or another line's match took its
   place); a character found nowhere is lost.

A match *consumes* what it matched, so one destination's text cannot account for two lines and no
character is counted twice. What is left unconsumed in the destinations at the end is text that no
line accounts for (``unsourced``: a marker the stage added, or text that appears twice, as a table
cell and a paragraph); it is reported beside the losses. A table the paragraph stage read as
running text (``ParagraphResult.read_as_text``) is not a destination: its text is in the paragraphs.
What a merged table keeps once (``Table.repeats``: a continuation's repeated header or stub column)
is a destination for that page's lines after the cells, but not output text, so never unsourced.
"""

from __future__ import annotations

import unicodedata
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from dagster_ocr.model import Page, ParagraphResult, Table

#: ``PageAccount`` destinations, in the order reports list them
DESTINATIONS = ("paragraph", "heading", "table", "page_number", "header", "footer", "lost")
FURNITURE_KINDS = ("page_number", "header", "footer")

#: characters the stages may drop or replace, left out of both sides of a comparison
_DROPPED = set("-\u00ad\u2010\u2011•·▪‣◦●○■□◆◇►▶✓✔☐☑☒➢➤–—*")
_CONSUMED = "\x00"
_SEP = "\x01"
#: how much lost text a page keeps for a person to look at
LOST_TEXT_CHARS = 500


class _CompactTable(dict[int, int | None]):
    """``compact``'s ``str.translate`` table: each code point kept (itself) or dropped (None),
    decided on its first sight and remembered (a per-character generator cost ~2 ms a page)."""

    def __missing__(self, code: int) -> int | None:
        c = chr(code)
        invisible = unicodedata.category(c) in ("Cc", "Cf", "Co", "Cs")
        kept = not c.isspace() and c not in _DROPPED and not invisible
        self[code] = code if kept else None
        return self[code]


_COMPACT = _CompactTable()


def compact(text: str) -> str:
    """``text`` as conservation compares it: no whitespace, hyphens, bullets or invisible code points."""
    return text.translate(_COMPACT)


def _chars(text: str) -> int:
    """The characters a text accounts for: every one but whitespace."""
    # str.split() splits at exactly the characters str.isspace() is true of
    return sum(map(len, text.split()))


@dataclass(slots=True)
class PageAccount:
    """One page's characters by destination (see the module docstring)."""

    page_index: int
    text_source: str = ""
    #: non-whitespace characters of the page's lines
    chars: int = 0
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(DESTINATIONS, 0))
    #: compacted characters left in this page's paragraphs and cells that no line accounts for
    unsourced: int = 0
    #: the lost words, in page order (at most LOST_TEXT_CHARS characters)
    lost_text: str = ""

    @property
    def lost(self) -> int:
        return self.counts["lost"]

    @property
    def furniture(self) -> int:
        return sum(self.counts[k] for k in FURNITURE_KINDS)

    def add(self, destination: str, n: int) -> None:
        self.counts[destination] += n

    def as_row(self) -> dict[str, object]:
        """The ``text_conservation`` columns of this page."""
        return {
            "page_index": self.page_index,
            "text_source": self.text_source,
            "chars": self.chars,
            **{f"{k}_chars": v for k, v in self.counts.items()},
            "unsourced_chars": self.unsourced,
            "lost_text": self.lost_text or None,
        }


@dataclass(slots=True)
class _Destinations:
    """One page's destinations as one buffer: compacted texts joined by a separator."""

    owners: list[tuple[str, int]]  # (kind, index into the accountant's store) per part
    buffer: str
    starts: list[int]

    @classmethod
    def build(cls, parts: list[tuple[str, int, str]]) -> _Destinations:
        owners, texts, starts, at = [], [], [], 0
        for kind, index, text in parts:
            owners.append((kind, index))
            texts.append(text)
            starts.append(at)
            at += len(text) + 1
        return cls(owners, _SEP.join(texts), starts)

    def take(self, needle: str, whole: bool = False) -> str | None:
        """Consume the first occurrence of ``needle`` (``whole``: only a part that is exactly it);
        the kind of the part it was in, or None."""
        if not needle:
            return None
        if whole:
            at = (_SEP + self.buffer + _SEP).find(_SEP + needle + _SEP)
        else:
            at = self.buffer.find(needle)
        if at < 0:
            return None
        self.buffer = self.buffer[:at] + _CONSUMED * len(needle) + self.buffer[at + len(needle) :]
        # the part holding position ``at`` (a needle never spans a separator: it holds none)
        lo, hi = 0, len(self.starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.starts[mid] <= at:
                lo = mid
            else:
                hi = mid - 1
        return self.owners[lo][0]

    def has(self, needle: str) -> bool:
        return bool(needle) and needle in self.buffer

    def parts(self) -> list[str]:
        return self.buffer.split(_SEP) if self.owners else []


@dataclass(slots=True)
class _Leftover:
    """A word no text held whole, waiting for the character phase (see ``TextAccountant.finish``)."""

    line_index: int
    raw: str
    key: str
    #: the line overlaps a table cell: look in the cells first
    in_table: bool


class TextAccountant:
    """Accounts a document's pages one at a time (pages may stream from disk), then the leftovers.

    ``page(page)`` matches the page's lines and words; ``finish()`` matches the words left over
    character by character, once every page has taken its own text (a paragraph continuing on
    the next page must not lose its characters to this page's leftovers), counts what no line
    accounted for (``unsourced``), and returns every page's account.
    """

    def __init__(self, paragraphs: ParagraphResult, tables: Sequence[Table]):
        self.furniture = paragraphs.furniture
        self._paras = sorted(paragraphs.paragraphs, key=lambda p: p.reading_order)
        self._texts = [compact(p.text) for p in self._paras]
        self._kinds = ["heading" if p.kind == "heading" else "paragraph" for p in self._paras]
        self._covering: dict[int, list[int]] = defaultdict(list)
        for i, p in enumerate(self._paras):
            last = p.last_page_index if p.last_page_index >= p.page_index else p.page_index
            for page in range(p.page_index, last + 1):
                self._covering[page].append(i)
        skip = set(paragraphs.read_as_text)
        self._cells: dict[int, list[str]] = defaultdict(list)
        #: text a table read on a page and keeps once (``Table.repeats``): a destination for the
        #: page's lines after the cells, but not in the outputs, so never ``unsourced``
        self._repeats: dict[int, list[str]] = defaultdict(list)
        self._cell_boxes: dict[int, list[tuple[float, float, float, float]]] = defaultdict(list)
        for t in tables:
            if t.table_id in skip:
                continue
            for c in t.cells:
                text = compact(c.text or "")
                if text:
                    self._cells[c.page_index].append(text)
                if c.bbox is not None:
                    self._cell_boxes[c.page_index].append(c.bbox)
            # the column headings printed above its grid: the table's text, as its cells are
            for text in t.heads:
                if compact(text):
                    self._cells[t.first_page_index].append(compact(text))
            # a continuation's repeated header or stub: printed in the table, kept in it once
            for page_index, text in t.repeats:
                if compact(text):
                    self._repeats[page_index].append(compact(text))
        self.accounts: dict[int, PageAccount] = {}
        self._cell_state: dict[int, _Destinations] = {}
        self._leftovers: dict[int, list[_Leftover]] = {}

    def _paras_of(self, page_index: int) -> _Destinations:
        covering = self._covering.get(page_index, [])
        return _Destinations.build([(self._kinds[i], i, self._texts[i]) for i in covering])

    def _store(self, paras: _Destinations) -> None:
        """Write a page's consumption of its paragraphs back (a paragraph may continue on the next page)."""
        for (_, index), text in zip(paras.owners, paras.parts(), strict=True):
            self._texts[index] = text

    def _in_table(self, page_index: int, box: tuple[float, float, float, float]) -> bool:
        return any(
            min(box[2], c[2]) > max(box[0], c[0]) and min(box[3], c[3]) > max(box[1], c[1])
            for c in self._cell_boxes.get(page_index, ())
        )

    def _in_tables(self, page_index: int, boxes: list[tuple[float, float, float, float]]) -> list[bool]:
        """``_in_table`` of each box, against the page's cells in arrays (a table page's lines
        times its cells, one Python comparison each, was half of a page's accounting)."""
        cells = self._cell_boxes.get(page_index)
        if not cells or not boxes:
            return [False] * len(boxes)
        c = np.asarray(cells, dtype=np.float64)
        b = np.asarray(boxes, dtype=np.float64)
        if np.isnan(c).any() or np.isnan(b).any():  # min() and max() order NaN their own way
            return [self._in_table(page_index, box) for box in boxes]
        out: list[bool] = []
        step = max(1, 1_000_000 // len(c))  # lines at a time: at most ~a million pairs in memory
        for at in range(0, len(b), step):
            x = b[at : at + step, None, :]
            across = np.minimum(x[..., 2], c[:, 2]) > np.maximum(x[..., 0], c[:, 0])
            down = np.minimum(x[..., 3], c[:, 3]) > np.maximum(x[..., 1], c[:, 1])
            out += (across & down).any(axis=1).tolist()
        return out

    def page(self, page: Page) -> PageAccount:
        account = PageAccount(page.index, str(page.text_source))
        marks = self.furniture.get(page.index, {})
        paras = self._paras_of(page.index)
        cells = _Destinations.build(
            [("table", i, t) for i, t in enumerate(self._cells.get(page.index, []))]
            + [("table", -1, t) for t in self._repeats.get(page.index, [])]
        )
        pending: list[tuple[int, str, str]] = []  # (line index, raw text, compacted)
        for i, line in enumerate(page.lines):
            n = _chars(line.text)
            if not n:
                continue
            account.chars += n
            if i in marks:
                account.add(marks[i] if marks[i] in FURNITURE_KINDS else "header", n)
                continue
            pending.append((i, line.text, compact(line.text)))
        # a line that is a whole cell or a whole paragraph takes it first; then whole lines inside
        # longer texts, longest first (each consumes its own place before a short one could take
        # part of it: a page number "1" inside "1.1"); then what is left, word by word
        # a line over a table cell looks in the cells first (the cells are where its text belongs,
        # and a paragraph that merely holds the same words would lose them to it), others in the
        # paragraphs first
        rest: list[tuple[int, str, str]] = []
        asked = [i for i, _, text in pending if text]
        # by line index: both passes ask
        in_table = dict(
            zip(asked, self._in_tables(page.index, [page.lines[i].bbox for i in asked]), strict=True)
        )
        for i, raw, text in pending:
            if not text:  # only bullets or hyphens: they go with the page's text, as markers do
                account.add("paragraph" if paras.owners else "table" if cells.owners else "lost", _chars(raw))
                continue
            first, second = (cells, paras) if in_table[i] else (paras, cells)
            kind = first.take(text, whole=True) or second.take(text, whole=True)
            if kind is not None:
                account.add(kind, _chars(raw))
            else:
                rest.append((i, raw, text))
        unmatched: list[tuple[int, str, str, bool]] = []
        for i, raw, text in sorted(rest, key=lambda p: -len(p[2])):
            first, second = (cells, paras) if in_table[i] else (paras, cells)
            kind = first.take(text) or second.take(text)
            if kind is not None:
                account.add(kind, _chars(raw))
            else:
                unmatched.append((i, raw, text, in_table[i]))
        leftovers: list[_Leftover] = []
        for i, raw, _, in_table in unmatched:
            leftovers += self._by_words(i, raw, paras, cells, account, in_table)
        self._store(paras)
        self._cell_state[page.index] = cells
        if leftovers:
            self._leftovers[page.index] = leftovers
        self.accounts[page.index] = account
        return account

    @staticmethod
    def _by_words(
        index: int,
        raw: str,
        paras: _Destinations,
        cells: _Destinations,
        account: PageAccount,
        in_table: bool,
    ) -> list[_Leftover]:
        """Match a line word by word, in the longest runs found; returns the words found nowhere."""
        words = raw.split()
        keys = [compact(w) for w in words]
        left: list[_Leftover] = []
        i = 0
        while i < len(words):
            if not keys[i]:  # a lone bullet or hyphen between words
                account.add("paragraph" if paras.owners else "table", _chars(words[i]))
                i += 1
                continue
            run, where = 0, None
            for dest in (cells, paras) if in_table else (paras, cells):
                j = i + 1
                while j <= len(words) and dest.has("".join(keys[i:j])):
                    j += 1
                if j - 1 - i > run:
                    run, where = j - 1 - i, dest
            if where is None:
                left.append(_Leftover(index, words[i], keys[i], in_table))
                i += 1
                continue
            kind = where.take("".join(keys[i : i + run]))
            account.add(kind or "lost", sum(_chars(w) for w in words[i : i + run]))
            i += run
        return left

    def finish(self) -> list[PageAccount]:
        """Every page's account, once the leftover words were matched character by character.

        A word no destination holds whole (the stage reordered it, a subscript say, or another
        line's match took its place) is looked up one character at a time among what is left
        unconsumed in the page's destinations, cells first when its line overlaps a cell; a
        character found nowhere is lost. Then what is left unconsumed is counted as ``unsourced``
        on the page it sits on (a paragraph's: the page it starts on).
        """
        for page_index in sorted(self._leftovers):
            account = self.accounts[page_index]
            paras, cells = self._paras_of(page_index), self._cell_state[page_index]
            lost: list[tuple[int, str]] = []
            for w in self._leftovers[page_index]:
                order = (cells, paras) if w.in_table else (paras, cells)
                found = [order[0].take(c) or order[1].take(c) for c in w.key]
                kinds = [k for k in found if k is not None]
                missing = len(found) - len(kinds)
                dropped = _chars(w.raw) - len(w.key)  # hyphens and bullets compact() left out
                if kinds:  # the dropped characters go with the word's found ones
                    # to the kind most of them went to; a tie to the one its first characters went to
                    # (not a set's order, which changes with each process's string hashing)
                    account.add(max(dict.fromkeys(kinds), key=kinds.count), len(kinds) + dropped)
                if missing:
                    account.add("lost", missing + (0 if kinds else dropped))
                    lost.append(
                        (w.line_index, "".join(c for c, k in zip(w.key, found, strict=True) if k is None))
                    )
            self._store(paras)
            words: dict[int, list[str]] = defaultdict(list)
            for line_index, text in lost:
                words[line_index].append(text)
            account.lost_text = " / ".join(" ".join(words[i]) for i in sorted(words))[:LOST_TEXT_CHARS]
        for page_index, cells in self._cell_state.items():
            self.accounts[page_index].unsourced += sum(
                len(t) - t.count(_CONSUMED)
                for (_, index), t in zip(cells.owners, cells.parts(), strict=True)
                if index >= 0  # a repeat is not in the outputs: left over, it duplicates nothing
            )
        for p, text in zip(self._paras, self._texts, strict=True):
            left = len(text) - text.count(_CONSUMED)
            if left and p.page_index in self.accounts:
                self.accounts[p.page_index].unsourced += left
        return [self.accounts[i] for i in sorted(self.accounts)]


def account_text(
    pages: Iterable[Page], paragraphs: ParagraphResult, tables: Sequence[Table]
) -> list[PageAccount]:
    """Every page's account of its characters (see the module docstring)."""
    accountant = TextAccountant(paragraphs, tables)
    for page in pages:
        accountant.page(page)
    return accountant.finish()


@dataclass(frozen=True, slots=True)
class DocumentAccount:
    """A document's characters by destination, summed over its pages."""

    chars: int
    counts: dict[str, int]
    unsourced: int

    @classmethod
    def of(cls, accounts: Iterable[PageAccount]) -> DocumentAccount:
        counts = dict.fromkeys(DESTINATIONS, 0)
        chars = unsourced = 0
        for a in accounts:
            chars += a.chars
            unsourced += a.unsourced
            for k, v in a.counts.items():
                counts[k] += v
        return cls(chars, counts, unsourced)

    @property
    def furniture(self) -> int:
        return sum(self.counts[k] for k in FURNITURE_KINDS)

    def share(self, n: int) -> float:
        return n / self.chars if self.chars else 0.0
