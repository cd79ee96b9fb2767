"""Rows: the fragments of one visual line merged into a ``_Row``, in reading order (left to right,
or right to left on a line of a right-to-left script)."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

from dagster_ocr.layout import BBox, is_rtl, union, v_overlap
from dagster_ocr.model import Line
from dagster_ocr.paragraphs.patterns import _BULLETS, LEADER_DOTS, is_cjk
from dagster_ocr.paragraphs.settings import ParagraphSettings


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
    #: a line of a right-to-left script: it starts at its right edge (indentation, short lines
    #: and column order are mirrored)
    rtl: bool = False
    confidence: float = 1.0  # the least confident of its lines (1.0 for the text layer)
    #: where the row comes in the text layer's own (content-stream) order: the position of its
    #: first line among the page's lines; -1 where that order is not kept (OCR)
    seq: int = -1

    @property
    def height(self) -> float:
        return self.bbox[3] - self.bbox[1]

    @property
    def width(self) -> float:
        return self.bbox[2] - self.bbox[0]


def _italic(line: Line) -> bool:
    spans = [s for s in line.spans if s.text.strip()]
    return bool(spans) and all(s.italic for s in spans)


def _is_marker_glyph(text: str) -> bool:
    """A lone bullet, or glyphs a symbol font mapped to control/private-use code points."""
    t = text.strip()
    if not t or len(t) > 3:
        return False
    return all(c in _BULLETS or unicodedata.category(c) in ("Cc", "Co") for c in t)


#: characters a run of dot leaders is drawn with (a table of contents' "Title . . . . 12")
_LEADER_CHARS = frozenset(LEADER_DOTS + " \u00a0")
#: how far (in font sizes) a run of dot leaders reaches to the fragment beside it on its line
LEADER_REACH = 2.5


def _is_leader(text: str) -> bool:
    """A fragment that is only dot leaders (at least four dots: an ellipsis is three)."""
    t = text.strip()
    return sum(c not in " \u00a0" for c in t) >= 4 and all(c in _LEADER_CHARS for c in t)


def _join_fragments(left: str, right: str, gap: float, size: float, spaced: bool = False) -> str:
    """Two fragments of one visual line as one text; ``spaced``: the text layer put a space
    between them (at the end of the left one or the start of the right one)."""
    if not left:
        return right
    if (left[-1:] and is_cjk(left[-1])) and (right[:1] and is_cjk(right[0])):
        return left + right
    # fragments this close are one word the producer split in two, unless a space divides them
    if gap < 0.1 * size and not spaced:
        return left + right
    return left.rstrip() + " " + right.lstrip()


def _other_type(a: Line, b: Line) -> bool:
    """Lines of two text-layer blocks in two types, one a fifth larger or more and one slanted where
    the other is not, each of three words or more: a pull quote or a note set into a column beside
    the body's line, never one line with it however close they come (the quote's box may touch the
    body's first word)."""
    if a.block < 0 or b.block < 0 or a.block == b.block:
        return False
    if min(len(a.text.split()), len(b.text.split())) < 3:
        return False  # a formula's parts (a big operator, its limit, a root's sign) are a word or two
    small, large = sorted((max(a.size, 1.0), max(b.size, 1.0)))
    return large >= 1.2 * small and _italic(a) != _italic(b)


def _make_rows(lines: list[Line], page_index: int, settings: ParagraphSettings) -> list[_Row]:
    """Merge the fragments of each visual line, left to right (right to left when most of the
    line's strongly directional characters are right-to-left: the text layer gives each fragment
    in logical order, but the fragments of an Arabic or Hebrew line follow from the right)."""
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
            overlap = v_overlap(line.bbox, last.bbox)
            if overlap < 0.5 * min(h, ly1 - ly0):
                continue
            size = max(line.size, last.size, 1.0)
            if line.block >= 0 and line.block == last.block:
                limit = settings.row_join_gap * size
            elif line.block < 0 and last.block < 0:
                limit = settings.row_join_gap_ocr * size
            elif _other_type(line, last):
                continue  # an inset's line beside the body's (a pull quote in a larger slanted type)
            else:  # two text-layer blocks side by side are usually two columns
                limit = 0.3 * size
            gap = x0 - lx1
            if -0.5 * size <= gap <= limit and overlap > best_overlap:
                if gap >= settings.column_min_gap and _gutter(last, line, lines, settings):
                    continue  # two columns' lines that the text layer put in one block
                best, best_overlap = g, overlap
        if best is None:
            groups.append([line])
        else:
            best.append(line)

    position = {id(ln): i for i, ln in enumerate(lines)}
    return _rows_of(_join_leaders(groups), page_index, position)


#: a row of this many words is running text however few its characters (a narrow column's line)
RUNNING_WORDS = 4


def running(text: str, settings: ParagraphSettings) -> bool:
    """Does a row of ``text`` count as running text (column text)? ``column_min_chars`` characters,
    or ``RUNNING_WORDS`` words: a narrow column's lines hold few characters but several words."""
    return len(text) >= settings.column_min_chars or len(text.split()) >= RUNNING_WORDS


def _gutter(left: Line, right: Line, lines: list[Line], settings: ParagraphSettings) -> bool:
    """Is the gap between ``left`` and ``right`` (fragments on one visual line) a gutter between two
    columns rather than a wide space inside a line?

    A text layer may put the lines of two columns side by side in one block (narrow columns with a
    gutter of one or two font sizes), so the gap alone does not tell them from one line's parts.
    A gutter is a white channel: just above or just below the line (``2 * column_min_rows`` line
    heights), no line crosses a strip of the gap at least ``column_min_gap`` wide, and at least
    ``column_min_rows`` lines of running text (``running``) lie wholly on each side of it. A wide
    space inside a line (a justified line, a tab stop) has lines running through it above and below.
    """
    gs, ge = left.bbox[2], right.bbox[0]
    y0, y1 = min(left.bbox[1], right.bbox[1]), max(left.bbox[3], right.bbox[3])
    reach = 2 * settings.column_min_rows * max(y1 - y0, 1.0)
    for wy0, wy1 in ((y0 - reach, y1), (y0, y1 + reach)):
        near = [ln for ln in lines if ln.bbox[3] > wy0 and ln.bbox[1] < wy1 and ln.text.strip()]
        # the widest strip of [gs, ge] that no nearby line covers
        covered = sorted(
            (max(ln.bbox[0], gs), min(ln.bbox[2], ge)) for ln in near if ln.bbox[0] < ge and ln.bbox[2] > gs
        )
        best, x = (0.0, gs, gs), gs
        for a, b in covered + [(ge, ge)]:
            if a - x > best[0]:
                best = (a - x, x, a)
            x = max(x, b)
        width, ws, we = best
        if width < settings.column_min_gap:
            continue
        n_left = sum(1 for ln in near if ln.bbox[2] <= ws + 1 and running(ln.text, settings))
        n_right = sum(1 for ln in near if ln.bbox[0] >= we - 1 and running(ln.text, settings))
        if n_left >= settings.column_min_rows and n_right >= settings.column_min_rows:
            return True
    return False


def _beside(left: Line, right: Line) -> bool:
    """``right`` continues ``left``'s visual line within a leader's reach."""
    lx0, ly0, lx1, ly1 = left.bbox
    overlap = v_overlap(left.bbox, right.bbox)
    if overlap < 0.5 * min(max(ly1 - ly0, 1e-3), max(right.bbox[3] - right.bbox[1], 1e-3)):
        return False
    size = max(left.size, right.size, 1.0)
    return -0.5 * size <= right.bbox[0] - lx1 <= LEADER_REACH * size


def _join_leaders(groups: list[list[Line]]) -> list[list[Line]]:
    """An entry of a table of contents as one visual line: title, dot leaders, page reference.

    Producers draw the leaders as a fragment of their own, set off from the title and from the
    page number by gaps that read as column breaks, so the number joined the next entry's title.
    Leaders are joined to what they lead to only when that is a short reference (a page number or
    label) on their line, and then to the title they lead from: a dotted rule beside a column of
    text (a sidebar's separator) stays apart from the text beside it.
    """
    if not any(_is_leader(ln.text) for g in groups for ln in g):
        return groups
    gone: set[int] = set()
    for i, g in enumerate(groups):
        if i in gone or not _is_leader(g[-1].text):
            continue
        label = next(
            (
                j
                for j, h in enumerate(groups)
                if j != i
                and j not in gone
                and len("".join(ln.text for ln in h).strip()) <= 8
                and _beside(g[-1], h[0])
            ),
            None,
        )
        if label is None:
            continue
        g.extend(groups[label])
        gone.add(label)
        if _is_leader(g[0].text):  # leaders and number alone: join the title they lead from
            title = next(
                (j for j, h in enumerate(groups) if j != i and j not in gone and _beside(h[-1], g[0])), None
            )
            if title is not None:
                groups[title].extend(g)
                gone.add(i)
    return [g for i, g in enumerate(groups) if i not in gone]


def _rows_of(groups: list[list[Line]], page_index: int, position: dict[int, int] | None = None) -> list[_Row]:
    """Each group of fragments of one visual line as a ``_Row`` (groups in order, empty ones
    left out); fragments are joined left to right, or right to left on a right-to-left line.
    ``position``: each line's place in the text layer's order (by ``id``), for ``_Row.seq``."""
    rows: list[_Row] = []
    for g in groups:
        rtl = is_rtl("".join(ln.text for ln in g))
        if rtl and len(g) > 1:
            g = sorted(g, key=lambda ln: -ln.bbox[2])
        marker = False
        text = ""
        first = 0
        while first < len(g) - 1 and _is_marker_glyph(g[first].text):
            first += 1
        if first:
            text, marker = "•", True
        for i in range(first, len(g)):
            prev = g[i - 1] if i else None
            if prev is None:
                gap = 0.0
            else:
                gap = prev.bbox[0] - g[i].bbox[2] if rtl else g[i].bbox[0] - prev.bbox[2]
            # the text layer may keep the space between two words at the end of one fragment
            # (stripped from the line's text) while the next fragment starts where it ends
            spaced = prev is not None and (
                (bool(prev.spans) and prev.spans[-1 if not rtl else 0].text[-1:].isspace())
                or (bool(g[i].spans) and g[i].spans[0 if not rtl else -1].text[:1].isspace())
            )
            text = _join_fragments(text, g[i].text.strip(), gap if text else 0.0, g[i].size, spaced)
        text = text.replace("\t", " ").strip()
        if not text:
            continue
        content = g[first:]
        sized = [ln.size for ln in content]
        rows.append(
            _Row(
                text=text,
                bbox=union([ln.bbox for ln in g]),
                size=max(sized),
                bold=all(ln.bold for ln in content),
                italic=all(_italic(ln) for ln in content),
                bold_any=any(sp.bold for ln in content for sp in ln.spans if sp.text.strip())
                or any(ln.bold for ln in content),
                italic_any=any(sp.italic for ln in content for sp in ln.spans if sp.text.strip()),
                block=g[0].block if g[0].block >= 0 else content[0].block,
                confidence=min(ln.confidence for ln in content),
                page_index=page_index,
                marker=marker,
                rtl=rtl,
                seq=min(position[id(ln)] for ln in g) if position is not None else -1,
            )
        )
    return rows


def _ocr_rows(lines: list[Line], page_index: int, settings: ParagraphSettings) -> list[_Row]:
    """Rows of an OCR page, keeping the order the lines come in, with ``flow`` set relative to 0.

    The OCR stage already put the page's lines in reading order (``ocr.order.reading_order``:
    columns, bands, captions floated after their columns) from the whole image's layout; sorting
    them again top-down here would read across the columns. Consecutive lines on one visual line
    (the engine cut a line at a wide gap) merge; a row that is not below the previous one in the
    same column (it moves up, or sideways out of its x-range) starts a new flow.
    """
    groups: list[list[Line]] = []
    for line in lines:
        if groups:
            last = groups[-1][-1]
            h = min(line.bbox[3] - line.bbox[1], last.bbox[3] - last.bbox[1])
            size = max(line.size, last.size, 1.0)
            gap = line.bbox[0] - last.bbox[2]
            if (
                v_overlap(line.bbox, last.bbox) >= 0.5 * h
                and -0.5 * size <= gap <= settings.row_join_gap_ocr * size
            ):
                groups[-1].append(line)
                continue
        groups.append([line])
    rows = _rows_of(groups, page_index)
    flow = 0
    for prev, row in zip([None, *rows], rows, strict=False):
        if prev is not None and (
            row.bbox[1] < prev.bbox[1] or min(row.bbox[2], prev.bbox[2]) <= max(row.bbox[0], prev.bbox[0])
        ):
            flow += 1
        row.flow = flow
    return rows
