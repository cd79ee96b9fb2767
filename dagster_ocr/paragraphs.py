"""Paragraph and section reconstruction from positioned lines.

The input is what the text layer or OCR produced: lines with bboxes, fonts and sizes, in no
trustworthy order. The steps, per document:

1. **Furniture.** Lines already marked, the printed page number found by the label stage
   (``PageLabel.line_index``) and running headers/footers (text that, with digits normalised,
   recurs in the top or bottom zone of many pages) are marked on the ``Page`` objects and left
   out. Lines inside a table region are left out too: the table stage owns them (unless the
   "table" is a narrow grid of sentence-length cells: columns of prose, kept as paragraphs).
2. **Rows.** Fragments of one visual line (the text layer often splits "5.1" from its title, or a
   bullet from its item) are merged into rows. A leading fragment made only of a lone bullet,
   control or private-use glyph (Wingdings bullets and check boxes) becomes the marker "•".
3. **Reading order.** Recursive layout analysis per page: a vertical channel of white space with
   enough text on both sides splits rows into columns (rows crossing it are full-width and break
   the column flow), and each column is analysed again. Where no channel runs through a whole
   region (parts of the page with different gutters), the region is cut horizontally at the
   widest gap that exposes one. A drop cap is joined to the word it begins.
4. **Paragraphs.** Consecutive rows of one flow are split on a vertical gap that is large for the
   local line height, a change of indentation, font size or style, a short line ending a
   sentence, or a clause/list start ("Article 5", "第五条", "5.2", "(a)", "§ 3", "1.", "•").
   Across a column or page break, a paragraph that ends without terminal punctuation is
   continued by a row that starts in lower case (or CJK on both sides); across pages the joined
   paragraph is marked ``continued``. Lines are joined with a space (none between CJK
   characters) and de-hyphenated only when the continuation starts in lower case.
5. **Sections.** Headings are short paragraphs set larger than the body, wholly bold or italic,
   or numbered ("1 Introduction", "3.2 Scope", "Article 5", "ARTICLE V", "第五条"). Their level
   comes from the numbering depth, else from the rank of their font size; each section's parent
   is the nearest earlier section of a lower level.

Ids: ``section_id`` is ``s{ordinal}`` (0-based). ``paragraph_id`` is
``p_{page label}_{section ordinal}_{ordinal within section}``, with ``n`` as the section part
for paragraphs before the first heading and the page label reduced to ``[A-Za-z0-9.-]``. The
pair (section, ordinal within section) is already unique in a document, so the id is unique
whatever the labels are; the label is there for people reading the id.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from pydantic import BaseModel, ConfigDict, Field

from dagster_ocr.model import (
    BBox,
    Line,
    Page,
    PageLabel,
    Paragraph,
    ParagraphResult,
    Section,
    Table,
    x_gaps,
)
from dagster_ocr.pagestore import in_page_order
from dagster_ocr.validation import validate_text

log = logging.getLogger(__name__)

__all__ = ["ParagraphSettings", "build_paragraphs", "clause_number", "is_cjk"]


class ParagraphSettings(BaseModel):
    """Tunables of paragraph and section reconstruction. Distances are relative to font size."""

    model_config = ConfigDict(extra="forbid")

    gap_factor: float = Field(
        0.6,
        description="A vertical gap larger than the page's usual line gap plus this many line heights "
        "starts a new paragraph.",
    )
    indent_tolerance: float = Field(
        0.6, description="A change of left edge larger than this many font sizes counts as (out)indentation."
    )
    size_change: float = Field(
        0.12, description="A relative change of font size larger than this starts a new paragraph."
    )
    short_line_share: float = Field(
        0.15,
        description="A line ending a sentence this share of the column width (and at least "
        "`short_line_sizes` font sizes) short of the column's right edge ends its paragraph.",
    )
    short_line_sizes: float = Field(5.0, description="Minimum shortfall of a short line, in font sizes.")
    margin_zone: float = Field(
        0.12,
        description="Share of the page height at the top and at the bottom searched for headers/footers.",
    )
    repeat_min_pages: int = Field(
        3, description="A header/footer must recur (digits normalised) on at least this many pages."
    )
    repeat_min_share: float = Field(
        0.4, description="... and on at least this share of the document's pages."
    )
    row_join_gap: float = Field(
        3.0,
        description="Fragments of one text-layer block on one visual line are merged when the "
        "horizontal gap is below this many font sizes.",
    )
    row_join_gap_ocr: float = Field(
        0.8, description="The same for lines without a block number (OCR), which may be adjacent columns."
    )
    column_min_gap: float = Field(6.0, description="Narrowest white channel between columns, in points.")
    column_min_rows: int = Field(
        3, description="A column needs at least this many text rows (of `column_min_chars`) on each side."
    )
    column_min_chars: int = Field(20, description="Characters a row needs to count as column text.")
    column_max_share: float = Field(
        0.6, description="Rows wider than this share of the text width are never column rows."
    )
    table_overlap: float = Field(
        0.5, description="A line whose area lies this much inside a table region belongs to the table."
    )
    prose_table_share: float = Field(
        0.75,
        description="A table of at most `prose_table_max_cols` columns whose non-empty cells are this "
        "share sentence-length (25+ characters, 4+ words) is taken for columns of prose: its text stays in "
        "the paragraphs.",
    )
    prose_table_max_cols: int = Field(3, description="Widest table the prose test applies to.")
    drop_cap_ratio: float = Field(
        1.8, description="A lone letter this many times the body size, beside the first lines, is a drop cap."
    )
    heading_max_chars: int = Field(120, description="Longest text a heading may have.")
    heading_max_rows: int = Field(3, description="Most rows a heading may span.")
    heading_size_ratio: float = Field(
        1.12, description="A paragraph set this much larger than the body median size is a heading candidate."
    )


# --------------------------------------------------------------------------- text patterns

_CJK_NUM = "一二三四五六七八九十百千零〇两"
_ROMAN = r"[IVXLCDM]+"
_KEYWORDS = {
    # canonical order: a document's keywords are ranked by this order to give section levels
    "part": 0,
    "book": 0,
    "title": 1,
    "chapter": 2,
    "section": 3,
    "article": 4,
    "art.": 4,
    "clause": 5,
    "rule": 5,
    "annex": 1,
    "appendix": 1,
    "schedule": 1,
}
_KEYWORD_RE = re.compile(
    r"^(?P<kw>Part|PART|Book|BOOK|Title|TITLE|Chapter|CHAPTER|Section|SECTION|Article|ARTICLE|Art\.|"
    r"Clause|CLAUSE|Rule|RULE|Annex|ANNEX|Appendix|APPENDIX|Schedule|SCHEDULE)\s+"
    rf"(?P<num>\d+[A-Za-z]?(?:\.\d+)*|{_ROMAN}|[A-Z])\b[.:]?"
)
_CJK_CLAUSE_RE = re.compile(rf"^第(?P<num>[{_CJK_NUM}0-9]+)(?P<kw>[编部章节条款项])")
_SECTION_SIGN_RE = re.compile(r"^(?P<num>§+\s*\d+[a-z]?(?:\.\d+)*)")
_DOTTED_RE = re.compile(r"^(?P<num>\d{1,3}(?:\.\d{1,3})+)\.?(?=\s|$)")
_NUMBER_RE = re.compile(r"^(?P<num>\d{1,3})[.)](?=\s|$)")
_BARE_NUMBER_RE = re.compile(r"^(?P<num>\d{1,2})(?=\s+\S)")
_PAREN_RE = re.compile(r"^[(（](?P<num>[a-zA-Z]|[ivxlc]+|\d{1,3}|[" + _CJK_NUM + r"]+)[)）]")
_LETTER_RE = re.compile(r"^(?P<num>[a-z])\)(?=\s)")
_CJK_ENUM_RE = re.compile(rf"^(?P<num>[{_CJK_NUM}]+)、")
_BULLETS = "•·▪‣◦●○■□◆◇►▶✓✔☐☑☒➢➤–—-*"
_BULLET_RE = re.compile(rf"^[{re.escape(_BULLETS)}](?=\s)")

_TERMINAL = ".!?。！？…:;；：\"”'’)）»"
_SENTENCE_END = ".!?。！？…:"
_DIGITS = re.compile(r"\d+")
# "12", "- 12 -", "7-45" (chapter-page), "iv": a page number standing alone
_PAGE_NUMBER_RE = re.compile(
    r"(?:[-–—]\s*)?(?:\d{1,4}(?:[-–.]\d{1,4})?|[ivxlcdm]{1,6}|[IVXLCDM]{1,6})(?:\s*[-–—])?"
)
_WS = re.compile(r"\s+")


def is_cjk(ch: str) -> bool:
    """True for CJK ideographs, kana, Hangul and CJK punctuation (joined without spaces)."""
    o = ord(ch)
    return (
        0x3000 <= o <= 0x30FF
        or 0x3400 <= o <= 0x4DBF
        or 0x4E00 <= o <= 0x9FFF
        or 0xAC00 <= o <= 0xD7AF
        or 0xF900 <= o <= 0xFAFF
        or 0xFF00 <= o <= 0xFFEF
        or 0x20000 <= o <= 0x2FA1F
    )


def _clause_match(text: str) -> tuple[str, str, bool] | None:
    """(kind, number, strong) for a clause or list start, else None.

    Strong starts ("Article 5", "第五条", "§ 3", bullets) always open a paragraph; weak ones
    ("1.", "5.2", "(a)") could also be a number wrapped to the start of a line, so they open one
    only after a line that ends a sentence or clause.
    """
    t = text.lstrip()
    if m := _KEYWORD_RE.match(t):
        return "clause", f"{m['kw']} {m['num']}", True
    if m := _CJK_CLAUSE_RE.match(t):
        return "clause", m.group(0), True
    if m := _SECTION_SIGN_RE.match(t):
        return "clause", m["num"], True
    if _BULLET_RE.match(t):
        return "list_item", "", t[0] not in "-–—*"
    for rx in (_DOTTED_RE, _NUMBER_RE, _PAREN_RE, _LETTER_RE, _CJK_ENUM_RE):
        if m := rx.match(t):
            return "clause", m["num"], False
    return None


def clause_number(text: str) -> str:
    """The clause number a text starts with ("5.2", "Article 5", "第五条", "(a)"), or ""."""
    m = _clause_match(text)
    return m[1] if m else ""


# --------------------------------------------------------------------------- rows


@dataclass(slots=True)
class _Row:
    """One visual line: merged fragments of one or more ``Line`` objects."""

    text: str
    bbox: BBox
    size: float
    bold: bool
    italic: bool
    block: int
    page_index: int
    flow: int = 0
    #: some (not necessarily all) spans bold / italic: a mixed row is no style change
    bold_any: bool = False
    italic_any: bool = False
    marker: bool = False  # starts with a bullet glyph we normalised

    @property
    def height(self) -> float:
        return self.bbox[3] - self.bbox[1]

    @property
    def width(self) -> float:
        return self.bbox[2] - self.bbox[0]


def _union(boxes: list[BBox]) -> BBox:
    return (
        min(b[0] for b in boxes),
        min(b[1] for b in boxes),
        max(b[2] for b in boxes),
        max(b[3] for b in boxes),
    )


def _italic(line: Line) -> bool:
    spans = [s for s in line.spans if s.text.strip()]
    return bool(spans) and all(s.italic for s in spans)


def _is_marker_glyph(text: str) -> bool:
    """A lone bullet, or glyphs a symbol font mapped to control/private-use code points."""
    t = text.strip()
    if not t or len(t) > 3:
        return False
    return all(c in _BULLETS or unicodedata.category(c) in ("Cc", "Co") for c in t)


def _join_fragments(left: str, right: str, gap: float, size: float) -> str:
    if not left:
        return right
    if (left[-1:] and is_cjk(left[-1])) and (right[:1] and is_cjk(right[0])):
        return left + right
    # fragments this close are one word the producer split in two
    if gap < 0.1 * size:
        return left + right
    return left.rstrip() + " " + right.lstrip()


def _make_rows(lines: list[Line], page_index: int, settings: ParagraphSettings) -> list[_Row]:
    """Merge the fragments of each visual line, left to right."""
    groups: list[list[Line]] = []
    for line in sorted(lines, key=lambda ln: (ln.bbox[0], ln.bbox[1])):
        x0, y0, _, y1 = line.bbox
        h = max(y1 - y0, 1e-3)
        best, best_overlap = None, 0.0
        for g in groups:
            last = g[-1]
            lx0, ly0, lx1, ly1 = last.bbox
            if ly1 <= y0 or ly0 >= y1:  # no vertical overlap: most groups of the page, cheaply
                continue
            overlap = min(y1, ly1) - max(y0, ly0)
            if overlap < 0.5 * min(h, ly1 - ly0):
                continue
            size = max(line.size, last.size, 1.0)
            if line.block >= 0 and line.block == last.block:
                limit = settings.row_join_gap * size
            elif line.block < 0 and last.block < 0:
                limit = settings.row_join_gap_ocr * size
            else:  # two text-layer blocks side by side are usually two columns
                limit = 0.3 * size
            gap = x0 - lx1
            if -0.5 * size <= gap <= limit and overlap > best_overlap:
                best, best_overlap = g, overlap
        if best is None:
            groups.append([line])
        else:
            best.append(line)

    rows: list[_Row] = []
    for g in groups:
        marker = False
        text = ""
        first = 0
        while first < len(g) - 1 and _is_marker_glyph(g[first].text):
            first += 1
        if first:
            text, marker = "•", True
        for i in range(first, len(g)):
            prev = g[i - 1] if i else None
            gap = g[i].bbox[0] - prev.bbox[2] if prev is not None else 0.0
            text = _join_fragments(text, g[i].text.strip(), gap if text else 0.0, g[i].size)
        text = text.replace("\t", " ").strip()
        if not text:
            continue
        content = g[first:]
        sized = [ln.size for ln in content]
        rows.append(
            _Row(
                text=text,
                bbox=_union([ln.bbox for ln in g]),
                size=max(sized),
                bold=all(ln.bold for ln in content),
                italic=all(_italic(ln) for ln in content),
                bold_any=any(sp.bold for ln in content for sp in ln.spans if sp.text.strip())
                or any(ln.bold for ln in content),
                italic_any=any(sp.italic for ln in content for sp in ln.spans if sp.text.strip()),
                block=g[0].block if g[0].block >= 0 else content[0].block,
                page_index=page_index,
                marker=marker,
            )
        )
    return rows


# --------------------------------------------------------------------------- furniture and tables


def _norm_furniture(text: str) -> str:
    return _WS.sub(" ", _DIGITS.sub("#", text)).strip().lower()


def _zones(page: Page, settings: ParagraphSettings) -> tuple[float, float]:
    return page.height * settings.margin_zone, page.height * (1 - settings.margin_zone)


def _repeated_furniture(
    pages: Iterable[Page], number_lines: dict[int, int], settings: ParagraphSettings
) -> set[tuple[str, str]]:
    """(zone, normalised text) of the header and footer lines repeated on enough pages.

    ``number_lines``: page index → the line the label stage read the page number from (never a
    running head). One pass over the pages, keeping only the margin lines' normalised texts.
    """
    zone_pages: dict[tuple[str, str], set[int]] = defaultdict(set)
    n_pages = 0
    for page in pages:
        n_pages += 1
        top, bottom = _zones(page, settings)
        claimed = number_lines.get(page.index)
        for i, line in enumerate(page.lines):
            if i == claimed or line.furniture is not None or not line.text.strip():
                continue
            if line.bbox[1] <= top:
                zone_pages[("header", _norm_furniture(line.text))].add(page.index)
            elif line.bbox[3] >= bottom:
                zone_pages[("footer", _norm_furniture(line.text))].add(page.index)
    need = max(settings.repeat_min_pages, settings.repeat_min_share * n_pages)
    return {key for key, seen in zone_pages.items() if len(seen) >= need}


def _page_furniture(
    page: Page, repeated: set[tuple[str, str]], number_line: int | None, settings: ParagraphSettings
) -> dict[int, str]:
    """Line index → "page_number", "header" or "footer" for the page's furniture lines."""
    marks = {i: ln.furniture for i, ln in enumerate(page.lines) if ln.furniture is not None}
    if number_line is not None and 0 <= number_line < len(page.lines):
        marks.setdefault(number_line, "page_number")
    top, bottom = _zones(page, settings)
    for i, line in enumerate(page.lines):
        text = line.text.strip()
        zone = "header" if line.bbox[1] <= top else "footer" if line.bbox[3] >= bottom else None
        if i in marks or zone is None or not text:
            continue
        if (zone, _norm_furniture(text)) in repeated:
            marks[i] = zone
        elif _PAGE_NUMBER_RE.fullmatch(text):
            # a bare number in the margin is a page number the label stage did not claim
            marks[i] = "page_number"
    # a running head printed on the same line as the page number ("Title ... 9")
    numbers = [page.lines[i].bbox for i, kind in marks.items() if kind == "page_number"]
    for i, line in enumerate(page.lines):
        if i in marks or not line.text.strip():
            continue
        zone = "header" if line.bbox[1] <= top else "footer" if line.bbox[3] >= bottom else None
        if zone and any(
            min(line.bbox[3], n[3]) - max(line.bbox[1], n[1]) > 0.5 * (line.bbox[3] - line.bbox[1])
            for n in numbers
        ):
            marks[i] = zone
    return marks


def _looks_like_prose(table: Table, settings: ParagraphSettings) -> bool:
    """A narrow "table" whose cells are mostly sentence-length text: columns of prose, not data."""
    if table.n_cols > settings.prose_table_max_cols:
        return False
    cells = [c.text.strip() for c in table.cells if c.text.strip()]
    if len(cells) < 4:
        return False
    long = sum(1 for c in cells if len(c) >= 25 and len(c.split()) >= 4)
    return long >= settings.prose_table_share * len(cells)


def _attach_drop_caps(lines: list[Line], settings: ParagraphSettings) -> list[Line]:
    """Join a drop cap (one large initial letter beside the first lines) to the word it begins.

    Without this the letter is a one-character "heading" and the paragraph's first word is cut
    ("O" + "ver the past"). The lines wrapped around the cap get its left edge, so indentation
    rules see one paragraph. The lines themselves are copied, never changed on the page.
    """
    sizes = sorted(ln.size for ln in lines if len(ln.text) > 3)
    if not sizes:
        return lines
    body_size = sizes[len(sizes) // 2]
    out = list(lines)
    for cap in lines:
        t = cap.text.strip()
        if len(t) != 1 or not t.isalpha() or cap.size < settings.drop_cap_ratio * body_size:
            continue
        cx0, cy0, cx1, cy1 = cap.bbox
        beside = [
            (i, ln)
            for i, ln in enumerate(out)
            if ln is not cap
            and cx1 - 0.3 * cap.size <= ln.bbox[0] <= cx1 + 0.6 * cap.size
            and cy0 - 0.5 * ln.size <= ln.bbox[1]
            and ln.bbox[3] <= cy1 + 0.5 * ln.size
        ]
        if not beside:
            continue
        first_i, first = min(beside, key=lambda il: il[1].bbox[1])
        if not first.text[:1].isalpha():
            continue
        for i, ln in beside:
            out[i] = replace(ln, bbox=(cx0, *ln.bbox[1:]))
        out[first_i] = replace(out[first_i], text=t + first.text.lstrip())
        out = [ln for ln in out if ln is not cap]
    return out


def _in_table(line: Line, regions: list[BBox], settings: ParagraphSettings) -> bool:
    x0, y0, x1, y1 = line.bbox
    area = max((x1 - x0) * (y1 - y0), 1e-6)
    for rx0, ry0, rx1, ry1 in regions:
        w = min(x1, rx1) - max(x0, rx0)
        h = min(y1, ry1) - max(y0, ry0)
        if w > 0 and h > 0 and w * h >= settings.table_overlap * area:
            return True
    return False


# --------------------------------------------------------------------------- columns and reading order


def _column_gaps(
    rows: list[_Row], settings: ParagraphSettings, span_ref: float | None = None
) -> list[tuple[float, float]]:
    """White vertical channels between columns, as (x_start, x_end), left to right.

    Rows wider than ``column_max_share`` of ``span_ref`` (the page's text width; by default the
    rows' own) are left out: a title or a full-width line may cross the channel, and is read as a
    band separator instead.
    """
    if len(rows) < 2 * settings.column_min_rows:
        return []
    left = min(r.bbox[0] for r in rows)
    right = max(r.bbox[2] for r in rows)
    span = right - left
    if span <= 0:
        return []
    limit = settings.column_max_share * (span_ref or span)
    cands = sorted((r for r in rows if r.width < limit), key=lambda r: r.bbox[0])
    if not cands:
        return []
    # merge the rows' x-intervals; what lies between merged intervals is white space
    gaps = x_gaps([r.bbox for r in cands])
    texty = [r for r in cands if len(r.text) >= settings.column_min_chars]
    out = []
    for gs, ge in gaps:
        if ge - gs < settings.column_min_gap:
            continue
        n_left = sum(1 for r in texty if r.bbox[2] <= gs + 1)
        n_right = sum(1 for r in texty if r.bbox[0] >= ge - 1)
        if n_left >= settings.column_min_rows and n_right >= settings.column_min_rows:
            out.append((gs, ge))
    return out


def _split_columns(rows: list[_Row], gaps: list[tuple[float, float]]) -> list[tuple[bool, list[_Row]]]:
    """Rows (sorted top-down) as parts in reading order: (is_column, rows).

    A row that crosses a channel is full-width and breaks the column flow: the rows between two
    full-width rows are read column by column.
    """

    def spans_gap(r: _Row) -> bool:
        return any(r.bbox[0] < gs - 1 and r.bbox[2] > ge + 1 for gs, ge in gaps)

    def column(r: _Row) -> int:
        cx = (r.bbox[0] + r.bbox[2]) / 2
        return sum(1 for gs, _ in gaps if cx > gs)

    parts: list[tuple[bool, list[_Row]]] = []
    band: list[_Row] = []
    wide: list[_Row] = []

    def flush_band() -> None:
        cols: dict[int, list[_Row]] = defaultdict(list)
        for r in band:
            cols[column(r)].append(r)
        parts.extend((True, cols[c]) for c in sorted(cols))
        band.clear()

    for r in rows:
        if spans_gap(r):
            if band:
                flush_band()
            wide.append(r)
        else:
            if wide:
                parts.append((False, wide))
                wide = []
            band.append(r)
    if band:
        flush_band()
    if wide:
        parts.append((False, wide))
    return parts


def _segment(
    rows: list[_Row], settings: ParagraphSettings, span_ref: float, depth: int = 0
) -> list[list[_Row]]:
    """Recursive layout analysis: the rows (sorted top-down) as flows in reading order.

    A vertical white channel through the rows splits them into columns (each analysed again:
    a column may hold its own sub-columns). When no channel runs through all of them (regions of
    the page with different gutters, a full-width line crossing the gutter), the rows are cut
    horizontally at the widest vertical gap that exposes a channel above or below it.
    """
    if depth > 6 or len(rows) < 2 * settings.column_min_rows:
        return [rows]
    gaps = _column_gaps(rows, settings, span_ref)
    if gaps:
        flows: list[list[_Row]] = []
        for is_column, part in _split_columns(rows, gaps):
            if is_column:
                flows.extend(_segment(part, settings, span_ref, depth + 1))
            else:
                flows.append(part)
        return flows
    heights = sorted(r.height for r in rows)
    min_cut = 0.3 * heights[len(heights) // 2]
    cuts: list[tuple[float, int]] = []
    bottom = rows[0].bbox[3]
    for i in range(1, len(rows)):
        gap = rows[i].bbox[1] - bottom
        if gap > min_cut:
            cuts.append((gap, i))
        bottom = max(bottom, rows[i].bbox[3])
    for _, i in sorted(cuts, reverse=True)[:24]:
        top, rest = rows[:i], rows[i:]
        if _column_gaps(top, settings, span_ref) or _column_gaps(rest, settings, span_ref):
            return _segment(top, settings, span_ref, depth + 1) + _segment(
                rest, settings, span_ref, depth + 1
            )
    return [rows]


def _reading_order(rows: list[_Row], settings: ParagraphSettings, flow_start: int) -> tuple[list[_Row], int]:
    """Rows in reading order with ``flow`` set; returns the rows and the next free flow id."""
    rows = sorted(rows, key=lambda r: (r.bbox[1], r.bbox[0]))
    if not rows:
        return rows, flow_start
    span = max(r.bbox[2] for r in rows) - min(r.bbox[0] for r in rows)
    out: list[_Row] = []
    flow = flow_start
    for part in _segment(rows, settings, span):
        for r in part:
            r.flow = flow
            out.append(r)
        flow += 1
    return out, flow


# --------------------------------------------------------------------------- grouping


@dataclass(slots=True)
class _Para:
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

    def seal(self, weights: dict[float, int]) -> None:
        """Summarise the rows, count their characters by font size into ``weights``, drop them."""
        rows = self.rows
        self.n_rows = len(rows)
        self.size = max(r.size for r in rows)
        self.bold = all(r.bold for r in rows)
        self.italic = all(r.italic for r in rows)
        self.first_page, self.last_page = rows[0].page_index, rows[-1].page_index
        self.first_bbox = _union([r.bbox for r in rows if r.page_index == self.first_page])
        for r in rows:
            weights[round(r.size, 1)] += len(r.text)
        self.rows = []


def _ends_sentence(text: str) -> bool:
    t = text.rstrip()
    return bool(t) and t[-1] in _SENTENCE_END


def _ends_clause(text: str) -> bool:
    t = text.rstrip()
    if not t:
        return False
    return t[-1] in _TERMINAL or bool(re.search(r"\b(and|or|und|oder|et|ou|y|o)$", t))


def _starts_lower(text: str) -> bool:
    t = text.lstrip()
    return bool(t) and t[0].islower()


def _join_rows(text: str, nxt: str) -> str:
    """Append a row to paragraph text: de-hyphenate, no space between CJK characters."""
    nxt = nxt.strip()
    if not text:
        return nxt
    if not nxt:
        return text
    if text.endswith("\u00ad"):  # soft hyphen: always a line-break hyphen
        return text[:-1] + nxt
    if len(text) >= 2 and text[-1] in "-\u2010" and text[-2].isalpha():
        # de-hyphenate only when the continuation is lower case ("exam-\nple"); "Self-\nLocking"
        # keeps its hyphen, without a space
        return (text[:-1] + nxt) if nxt[0].islower() else (text + nxt)
    if is_cjk(text[-1]) and is_cjk(nxt[0]):
        return text + nxt
    return text + " " + nxt


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


def _continuation_target(paras: list[_Para], r: _Row, s: ParagraphSettings) -> _Para | None:
    """The unfinished paragraph a row continues after a column, page or table break, or None.

    Usually the last paragraph; figure labels and captions in a smaller font that the layout put
    at the foot of the column may sit in between, so look back past paragraphs in another style.
    """
    for p in reversed(paras[-_LOOK_BACK:]):
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
        self.weights: dict[float, int] = defaultdict(int)
        self._sealed = 0

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
        for r in rows:
            if cur is None:
                cur = self._start(r)
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
                        target.rows.append(r)
                        target.text = _join_rows(target.text, r.text)
                        if r.page_index != target.rows[0].page_index:
                            target.continued = True
                        cur = target
                        continue
                cur = self._start(r)
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
            elif clause is not None and (
                clause[2] or _ends_clause(a.text) or cur.kind in ("clause", "list_item")
            ):
                brk = True
            else:
                tol = s.indent_tolerance * size
                fl, fr = flow_box[r.flow]
                if r.bbox[0] > a.bbox[0] + tol and len(cur.rows) >= 2:
                    brk = True  # first-line indent of a new paragraph
                elif r.bbox[0] < a.bbox[0] - tol:
                    first_line_indent = (
                        len(cur.rows) == 1 and cur.kind == "body" and abs(r.bbox[0] - fl) <= tol
                    )
                    brk = not first_line_indent
                elif _ends_sentence(a.text) and (fr - a.bbox[2]) > max(
                    s.short_line_share * (fr - fl), s.short_line_sizes * size
                ):
                    nxt = r.text.lstrip()[:1]
                    brk = bool(nxt) and not nxt.islower()
                elif a.block >= 0 and r.block >= 0 and a.block != r.block:
                    brk = _ends_sentence(a.text) or gap > usual + 0.25 * h
            if brk:
                cur = self._start(r)
            else:
                cur.rows.append(r)
                cur.text = _join_rows(cur.text, r.text)
        self.cur = cur
        # paragraphs out of the look-back's reach take no more rows
        self._seal(len(paras) - _LOOK_BACK)


# --------------------------------------------------------------------------- headings and sections


def _heading_numbering(text: str) -> tuple[str, str, int] | None:
    """(scheme, number, depth) when ``text`` looks like a numbered heading."""
    t = text.strip()
    if m := _KEYWORD_RE.match(t):
        return "kw:" + m["kw"].lower(), f"{m['kw']} {m['num']}", 1
    if m := _CJK_CLAUSE_RE.match(t):
        return "cjk:" + m["kw"], m.group(0), 1
    if m := _SECTION_SIGN_RE.match(t):
        return "sect", m["num"], 1
    if m := _DOTTED_RE.match(t):
        return "num", m["num"], m["num"].count(".") + 1
    if m := (_NUMBER_RE.match(t) or _BARE_NUMBER_RE.match(t)):
        return "num", m["num"], 1
    if m := re.match(rf"^(?P<num>{_ROMAN})\.\s+\S", t):
        return "roman", m["num"], 1
    return None


def _detect_headings(paras: list[_Para], weights: dict[float, int], s: ParagraphSettings) -> None:
    """Mark headings among sealed paragraphs; ``weights``: characters per font size (the body size)."""
    if not weights:
        return
    body = max(weights, key=lambda k: weights[k])

    for i, p in enumerate(paras):
        text = p.text.strip()
        if (
            p.n_rows > s.heading_max_rows
            or len(text) > s.heading_max_chars
            or not any(c.isalpha() for c in text)
            or text[-1] in ".,;"
            or p.kind == "list_item"
            or text[0].islower()
        ):
            continue
        size = p.size
        larger = size >= body * s.heading_size_ratio
        bold = p.bold
        nxt = paras[i + 1] if i + 1 < len(paras) else None
        italic = (
            p.italic
            and p.n_rows == 1
            and len(text.split()) <= 10
            and text[0].isupper()
            and nxt is not None
            and not nxt.italic
        )
        numbering = _heading_numbering(text)
        numbered = False
        if numbering is not None and size >= body * 0.95:
            scheme = numbering[0]
            words = len(text.split())
            if scheme.startswith(("kw:", "cjk:")):
                # "Article 5" alone or with a short title; "第五条 ..." running into text is a clause
                numbered = (words <= 12 if (bold or larger) else words <= 6) and not _ends_sentence(text)
            elif scheme in ("num", "roman"):
                rest = text[len(numbering[1]) :].lstrip(". )")
                numbered = bool(rest) and rest[0].isupper() and words <= 12 and (bold or larger)
        if size >= body * 0.95 and (larger or bold or italic or numbered):
            p.kind = "heading"
            p.number = numbering[1] if numbering else ""
    _assign_levels([p for p in paras if p.kind == "heading"])


def _assign_levels(heads: list[_Para]) -> None:
    sizes = sorted({round(p.size * 2) / 2 for p in heads}, reverse=True)

    def scheme_rank(k: str) -> int:
        return _KEYWORDS.get(k[3:], 9) if k.startswith("kw:") else "编部章节条款项".find(k[4:])

    schemes = {(_heading_numbering(p.text) or ("",))[0] for p in heads}
    kw_order = sorted((k for k in schemes if k.startswith(("kw:", "cjk:"))), key=scheme_rank)
    depth_by_size: dict[float, int] = {}
    for p in heads:
        num = _heading_numbering(p.text)
        if num and num[0] == "num":
            key = round(p.size * 2) / 2
            depth_by_size[key] = min(depth_by_size.get(key, 99), num[2])
    for p in heads:
        num = _heading_numbering(p.text)
        key = round(p.size * 2) / 2
        if num and num[0] == "num":
            p.heading_level = num[2]
        elif num and num[0] in kw_order:
            p.heading_level = kw_order.index(num[0]) + 1
        elif key in depth_by_size:
            p.heading_level = depth_by_size[key]
        else:
            p.heading_level = sizes.index(key) + 1


# --------------------------------------------------------------------------- assembly


def _label_for(page_index: int, labels: dict[int, str], printed: dict[int, str]) -> str:
    if page_index in labels:
        return labels[page_index]
    return printed.get(page_index) or str(page_index + 1)


def _id_label(label: str) -> str:
    return re.sub(r"[^A-Za-z0-9.\-]+", "-", label).strip("-") or "x"


def build_paragraphs(
    pages: Sequence[Page],
    labels: list[PageLabel],
    tables: list[Table],
    settings: ParagraphSettings | None = None,
) -> ParagraphResult:
    """Rebuild the paragraphs and the section tree of a document from its pages' lines.

    Furniture (page numbers, running headers and footers) is marked on the given ``Page``
    objects (``Line.furniture``) and left out, as is text inside any table region. See the
    module docstring for the rules and the id scheme.
    """
    s = settings or ParagraphSettings()
    result = ParagraphResult()
    number_lines = {lab.page_index: lab.line_index for lab in labels if lab.line_index is not None}
    repeated = _repeated_furniture(in_page_order(pages), number_lines, s)
    tables_by_page: dict[int, list[BBox]] = defaultdict(list)
    for t in tables:
        if _looks_like_prose(t, s):
            # two columns of running text taken for a table: dropping it would lose body text
            log.info("table %s reads as running text; its text stays in the paragraphs", t.table_id)
            continue
        for page_index, bbox in t.regions:
            tables_by_page[page_index].append(bbox)

    grouper = _Grouper(tables_by_page, s)
    printed: dict[int, str] = {}  # page index → the page's own label, where it carries one
    flow = 0
    n_pages = 0
    # one page at a time (pages may be read back from disk: see pagestore); what is kept of a
    # page is its paragraphs' text and a summary of their rows, not its lines
    for page in in_page_order(pages):
        n_pages += 1
        marks = _page_furniture(page, repeated, number_lines.get(page.index), s)
        for i, kind in marks.items():
            page.lines[i].furniture = kind
        if marks:
            result.furniture[page.index] = marks
        if page.label:
            printed[page.index] = page.label
        regions = tables_by_page.get(page.index, [])
        body = [
            ln
            for ln in page.lines
            if ln.furniture is None and ln.text.strip() and not _in_table(ln, regions, s)
        ]
        body = _attach_drop_caps(body, s)
        page_rows, flow = _reading_order(_make_rows(body, page.index, s), s, flow)
        grouper.add_page(page_rows)

    paras = grouper.finish()
    _detect_headings(paras, grouper.weights, s)

    label_map = {lab.page_index: lab.label for lab in labels}
    stack: list[Section] = []
    current: Section | None = None
    counters: dict[str, int] = defaultdict(int)
    seen_ids: set[str] = set()
    for order, p in enumerate(paras):
        first_page = p.first_page
        label = _label_for(first_page, label_map, printed)
        if p.kind == "heading":
            while stack and stack[-1].level >= p.heading_level:
                stack.pop()
            current = Section(
                section_id=f"s{len(result.sections)}",
                parent_id=stack[-1].section_id if stack else None,
                level=p.heading_level,
                title=p.text.strip(),
                page_index=first_page,
                page_label=label,
                ordinal=len(result.sections),
                number=p.number,
            )
            result.sections.append(current)
            stack.append(current)
        sec_key = str(current.ordinal) if current is not None else "n"
        pid = f"p_{_id_label(label)}_{sec_key}_{counters[sec_key]}"
        counters[sec_key] += 1
        while pid in seen_ids:  # cannot happen with the scheme above; a guard, not a rule
            pid += "x"
        seen_ids.add(pid)
        text = p.text.strip()
        result.paragraphs.append(
            Paragraph(
                paragraph_id=pid,
                section_id=current.section_id if current is not None else None,
                reading_order=order,
                page_index=first_page,
                text=text,
                bbox=p.first_bbox,
                page_label=label,
                flags=validate_text(text),
                kind=p.kind,
                continued=p.continued,
                last_page_index=p.last_page,
            )
        )
    log.debug(
        "built %d paragraphs and %d sections from %d pages",
        len(result.paragraphs),
        len(result.sections),
        n_pages,
    )
    return result
