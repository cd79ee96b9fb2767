"""Grouping: rows into paragraphs (``_Grouper``), across columns, tables and pages."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from dagster_ocr.layout import BBox, union, v_overlap
from dagster_ocr.paragraphs.patterns import (
    _CAPTION_RE,
    Vocabulary,
    _clause_match,
    _ends_clause,
    _ends_mid_phrase,
    _ends_sentence,
    ends_toc_entry,
    is_cjk,
    join_lines,
)
from dagster_ocr.paragraphs.rows import RUNNING_WORDS, _Row
from dagster_ocr.paragraphs.settings import ParagraphSettings


@dataclass(slots=True)
class _Para:
    """A paragraph: its rows while it can still grow, a summary of them once sealed."""

    rows: list[_Row] = field(default_factory=list)
    text: str = ""
    kind: str = "body"
    number: str = ""
    continued: bool = False
    heading_level: int = 0
    # what headings and assembly need of the rows, kept when the rows are let go (``seal``)
    n_rows: int = 0
    size: float = 0.0  # the largest row font size
    bold: bool = False  # every row bold
    italic: bool = False  # every row italic
    first_page: int = 0
    last_page: int = 0
    first_bbox: BBox = (0.0, 0.0, 0.0, 0.0)  # its rows on the first page
    ocr: bool = False  # every row OCR'd (its size is estimated from ink, not read from a font)
    confidence: float = 1.0  # the least confident row's recognition confidence

    def seal(self, weights: dict[tuple[bool, float], int]) -> None:
        """Summarise the rows, count their characters by (OCR'd, font size) into ``weights``, drop
        them."""
        rows = self.rows
        self.n_rows = len(rows)
        self.size = max(r.size for r in rows)
        self.bold = all(r.bold for r in rows)
        self.italic = all(r.italic for r in rows)
        self.first_page, self.last_page = rows[0].page_index, rows[-1].page_index
        self.first_bbox = union([r.bbox for r in rows if r.page_index == self.first_page])
        self.ocr = all(r.block < 0 for r in rows)
        self.confidence = min(r.confidence for r in rows)
        for r in rows:
            weights[(r.block < 0, round(r.size, 1))] += len(r.text)
        self.rows = []


def _starts_lower(text: str) -> bool:
    t = text.lstrip()
    return bool(t) and t[0].islower()


def _page_gap_baseline(rows: list[_Row]) -> dict[tuple[int, int], float]:
    """Usual gap between consecutive rows, per (flow, size bucket): the 25th percentile."""
    gaps: dict[tuple[int, int], list[float]] = defaultdict(list)
    for a, b in zip(rows, rows[1:], strict=False):
        gap = b.bbox[1] - a.bbox[3]
        # only running text teaches the line gap: table cells and labels overlap or sit apart
        if (
            a.flow == b.flow
            and abs(a.size - b.size) < 0.5
            and gap > -0.5 * a.height
            and min(len(a.text), len(b.text)) >= 20
        ):
            gaps[(a.page_index, round(a.size))].append(gap)
    out = {}
    for key, vals in gaps.items():
        vals.sort()
        out[key] = vals[len(vals) // 4]
    return out


def _style_break(a: _Row, b: _Row, s: ParagraphSettings) -> bool:
    if abs(a.size - b.size) > s.size_change * max(a.size, b.size):
        return True
    # only a clean switch counts: a row mixing bold and regular text continues either kind
    return (
        (a.bold and not b.bold_any)
        or (b.bold and not a.bold_any)
        or (a.italic and not b.italic_any)
        or (b.italic and not a.italic_any)
    )


#: how many of the latest paragraphs a row after a break may continue (see _continuation_target)
_LOOK_BACK = 8


def _continue_with(target: _Para, r: _Row, vocab: Vocabulary | None = None) -> None:
    """``r`` goes on ``target``'s text (a sentence resumed after a column, page, table or caption)."""
    target.rows.append(r)
    target.text = join_lines(target.text, r.text, vocab)
    if r.page_index != target.rows[0].page_index:
        target.continued = True


def _continuation_target(paras: list[_Para], r: _Row, s: ParagraphSettings) -> _Para | None:
    """The unfinished paragraph a row continues after a column, page or table break, or None.

    Usually the last paragraph; figure labels and captions in a smaller font that the layout put
    at the foot of the column may sit in between, so look back past paragraphs in another style,
    and past an inset the row's column runs round (``_set_into``): a pull quote in a larger type
    between the column's lines is no heading that opens a new section.
    """
    window = paras[-_LOOK_BACK:]
    for p in reversed(window):
        if _set_into(p, window, r):
            continue
        last = p.rows[-1]
        if abs(last.size - r.size) <= 0.5 and not _style_break(last, r, s):
            if p.kind == "heading" or _ends_sentence(p.text):
                return None
            if _starts_lower(r.text) or (is_cjk(p.text.rstrip()[-1]) and is_cjk(r.text.lstrip()[0])):
                return p
            return None
        if last.size > r.size * (1 + s.size_change):
            return None  # a larger heading in between: a new section, not an interruption
    return None


def _set_into(p: _Para, window: list[_Para], r: _Row) -> bool:
    """Is ``p`` an inset set into the column ``r`` goes on in (a pull quote, a boxed note): on
    ``r``'s page, above ``r``, with another paragraph's lines set short beside it (one of its lines
    shares its baseline band with one of theirs, apart across), a line of ``r``'s column (it
    overlaps ``r`` across)? A heading over a column has no text of that column beside it; one over
    the next column has the previous column's text beside it, not the next one's."""
    rows = p.rows
    if not rows or any(q.page_index != r.page_index for q in rows):
        return False
    if max(q.bbox[3] for q in rows) > r.bbox[1] + 0.5 * r.height:
        return False
    for other in window:
        if other is p:
            continue
        for o in other.rows:
            if o.page_index != r.page_index or min(o.bbox[2], r.bbox[2]) <= max(o.bbox[0], r.bbox[0]):
                continue
            for q in rows:
                if v_overlap(q.bbox, o.bbox) > 0.5 * min(q.height, o.height) and (
                    o.bbox[2] <= q.bbox[0] or o.bbox[0] >= q.bbox[2]
                ):
                    return True
    return False


def _wordy(text: str) -> int:
    """Words of two letters or more in ``text`` (a formula's parts have few)."""
    return sum(1 for w in text.split() if sum(c.isalpha() for c in w) >= 2)


def _boxed_between(paras: list[_Para], target: _Para, r: _Row) -> bool:
    """Are ``r`` and what stands between ``target`` and it prose: ``r`` a line of running words,
    the paragraphs in between two lines or more of them (a callout's, a note's text), not the
    parts of a displayed formula set in other sizes?"""
    at = next(i for i in range(len(paras) - 1, -1, -1) if paras[i] is target)
    between = [q for p in paras[at + 1 :] for q in p.rows]
    return _wordy(r.text) >= RUNNING_WORDS and sum(_wordy(q.text) >= RUNNING_WORDS for q in between) >= 2


class _Grouper:
    """Rows into paragraphs, fed one page at a time.

    Only the last few paragraphs can still take a row (the current one, or a continuation target
    within ``_continuation_target``'s look-back), so older ones are sealed as the pages go by:
    their rows are summarised and let go, and a long document's rows never sit in memory together.
    """

    def __init__(self, tables_by_page: dict[int, list[BBox]], s: ParagraphSettings) -> None:
        self.tables_by_page, self.s = tables_by_page, s
        self.paras: list[_Para] = []
        self.cur: _Para | None = None
        #: characters per font size over every row (the body size, for headings)
        self.weights: dict[tuple[bool, float], int] = defaultdict(int)
        self._sealed = 0
        #: the document's words so far, which tell a compound's hyphen from a line-break hyphen
        #: (fed each page's lines by the caller before ``add_page``)
        self.vocab = Vocabulary()

    def finish(self) -> list[_Para]:
        self.cur = None
        self._seal(len(self.paras))
        return self.paras

    def _seal(self, upto: int) -> None:
        while self._sealed < upto and self.paras[self._sealed] is not self.cur:
            self.paras[self._sealed].seal(self.weights)
            self._sealed += 1

    def _start(self, r: _Row) -> _Para:
        p = _Para(rows=[r], text=r.text)
        m = _clause_match(r.text)
        if m:
            p.kind, p.number = m[0], m[1]
        self.paras.append(p)
        return p

    def add_page(self, rows: list[_Row]) -> None:
        """One page's rows in reading order (flows never span pages, nor do gap baselines)."""
        s, paras, tables_by_page = self.s, self.paras, self.tables_by_page
        baseline = _page_gap_baseline(rows)
        flows: dict[int, list[_Row]] = defaultdict(list)
        for r in rows:
            flows[r.flow].append(r)
        flow_box = {f: (min(r.bbox[0] for r in rs), max(r.bbox[2] for r in rs)) for f, rs in flows.items()}
        cur = self.cur
        #: the first paragraph started in each flow of the page
        flow_first: dict[int, _Para] = {}
        for r in rows:
            if cur is None:
                cur = self._start(r)
                flow_first.setdefault(r.flow, cur)
                continue
            a = cur.rows[-1]
            clause = _clause_match(r.text)
            same_flow = a.flow == r.flow and a.page_index == r.page_index
            table_between = same_flow and any(
                a.bbox[3] <= ty0 + 1 and ty1 <= r.bbox[1] + 1 and tx0 < a.bbox[2] and tx1 > a.bbox[0]
                for tx0, ty0, tx1, ty1 in tables_by_page.get(r.page_index, [])
            )
            if not same_flow or table_between:
                # a column, page or table interrupts the text: continue only an unfinished sentence
                cont = clause is None and (_starts_lower(r.text) or is_cjk(r.text.lstrip()[0]))
                if cont:
                    target = _continuation_target(paras, r, s)
                    if target is not None:
                        _continue_with(target, r, self.vocab)
                        cur = target
                        continue
                cur = self._start(r)
                flow_first.setdefault(r.flow, cur)
                continue

            brk = False
            h = (a.height + r.height) / 2
            size = max(a.size, r.size, 1.0)
            gap = r.bbox[1] - a.bbox[3]
            usual = baseline.get((r.page_index, round(r.size)), 0.15 * h)
            usual = min(usual, 0.8 * h)  # a page of one-line paragraphs must not teach us huge gaps
            if gap > usual + s.gap_factor * h:
                brk = True
            elif _style_break(a, r, s):
                brk = True
            elif _ends_sentence(a.text) and not any(c.isalnum() for c in r.text):
                brk = True  # a stray punctuation row after a finished sentence stands alone
            elif ends_toc_entry(a.text):
                brk = True  # one entry of a table of contents, its leaders and page: complete
            elif (
                clause is not None
                # a clause number after "... set out in" is a cross-reference the line break fell
                # before; a bullet is drawn, so it opens an item wherever it stands
                and not (clause[0] == "clause" and _ends_mid_phrase(a.text))
                and (clause[2] or _ends_clause(a.text) or cur.kind in ("clause", "list_item"))
            ):
                brk = True
            else:
                tol = s.indent_tolerance * size
                fl, fr = flow_box[r.flow]
                short_line = max(s.short_line_share * (fr - fl), s.short_line_sizes * size)
                # edges in reading direction: a right-to-left line starts at its right edge, so
                # its indentation and its short last line are those of the mirrored page
                if a.rtl and r.rtl:
                    a_start, a_end, r_start, fl, fr = -a.bbox[2], -a.bbox[0], -r.bbox[2], -fr, -fl
                else:
                    a_start, a_end, r_start = a.bbox[0], a.bbox[2], r.bbox[0]
                if r_start > a_start + tol and len(cur.rows) >= 2:
                    brk = True  # first-line indent of a new paragraph
                elif r_start < a_start - tol:
                    # an indented first line, unless it is a short finished sentence: that is a
                    # paragraph of one line (a definition set beside its term)
                    first_line_indent = (
                        len(cur.rows) == 1
                        and cur.kind == "body"
                        and abs(r_start - fl) <= tol
                        and not (_ends_sentence(a.text) and (fr - a_end) > short_line)
                    )
                    # the sentence runs on back at the paragraph's own start, where its lines were
                    # set short beside an inset (a note, a pull quote, a figure): the line before
                    # reached the column's far edge (a displayed formula's line does not)
                    returns = (
                        clause is None
                        and _starts_lower(r.text)
                        and not _ends_sentence(a.text)
                        and (fr - a_end) <= short_line
                        and any(
                            q.page_index == r.page_index
                            and abs((-q.bbox[2] if a.rtl and r.rtl else q.bbox[0]) - r_start) <= tol
                            for q in cur.rows[:-1]
                        )
                    )
                    brk = not (first_line_indent or returns)
                elif _ends_sentence(a.text) and (fr - a_end) > short_line:
                    nxt = r.text.lstrip()[:1]
                    brk = bool(nxt) and not nxt.islower()
                elif a.block >= 0 and r.block >= 0 and a.block != r.block:
                    brk = _ends_sentence(a.text) or gap > usual + 0.25 * h
            if (
                brk
                and _starts_lower(r.text)
                and clause is None
                and _style_break(a, r, s)
                and _ends_sentence(cur.text)
            ):
                # a box set in another type between a sentence's lines (a callout, a note), its
                # text finished: the row in the body's type goes on with the sentence before it
                target = _continuation_target(paras, r, s)
                if target is not None and target is not cur and _boxed_between(paras, target, r):
                    _continue_with(target, r, self.vocab)
                    cur = target
                    continue
            if brk and _starts_lower(r.text) and clause is None:
                # a column that opens with a figure's caption (the figure at the column's top):
                # the text under the caption, once the caption has ended its sentence, may go on
                # with the previous column's sentence
                first = flow_first.get(r.flow)
                if first is not None and _CAPTION_RE.match(first.text) and _ends_sentence(cur.text):
                    at = next(i for i in range(len(paras) - 1, -1, -1) if paras[i] is first)
                    target = _continuation_target(paras[:at], r, s)
                    if target is not None:
                        _continue_with(target, r, self.vocab)
                        cur = target
                        continue
            if brk:
                cur = self._start(r)
                flow_first.setdefault(r.flow, cur)
            else:
                cur.rows.append(r)
                cur.text = join_lines(cur.text, r.text, self.vocab)
        self.cur = cur
        # paragraphs out of the look-back's reach take no more rows
        self._seal(len(paras) - _LOOK_BACK)
