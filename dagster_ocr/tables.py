"""Table extraction per page and merging of tables that continue across pages.

Extraction uses PyMuPDF's ``page.find_tables()``; which finder runs is a setting (see
``TableSettings.finder`` and bench/tables_icdar.py for the measurements behind the default).
Merging is evidence-based: the last table on page N is joined with the first table on page N+1
only when nothing but page furniture or a few short lines separates them, the column layouts
agree, and (optionally) a "continued" caption says so. A continuation's repeated header is dropped.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any, Literal

import pymupdf
from pydantic import BaseModel, ConfigDict, Field

from dagster_ocr.model import BBox, Cell, Line, Page, Table, TextSource

logger = logging.getLogger(__name__)

Finder = Literal["layout", "lines", "text", "layout_text"]

_CAPTION_RE = re.compile(r"^\s*(table|tab\.|表|续表)\s*", re.IGNORECASE)
_CONTINUED_RE = re.compile(
    r"(continued|cont['’]?d\.?|\(cont\.?\)|—\s*cont|续表|續表|\bsuite\b|fortsetzung)", re.IGNORECASE
)


class TableSettings(BaseModel):
    """Tunables of table extraction and cross-page merging."""

    model_config = ConfigDict(extra="forbid")

    finder: Finder = Field(
        "layout",
        description=(
            "How tables are found: 'layout' = PyMuPDF's ML layout model (find_tables default), "
            "'lines' = classic ruling-line finder (use_layout=False), 'text' = text-alignment "
            "finder on the whole page, 'layout_text' = layout model for table regions, then the "
            "text-alignment finder inside each region. Measured on ICDAR-2013 (bench/tables_icdar.py): "
            "layout F1 0.31, layout_text 0.23, text 0.16, lines 0.10; layout_text gives the most "
            "consistent column grids across pages (it merges continuations the layout grid misses)."
        ),
    )
    refine: bool = Field(
        False,
        description="Pass refine=True to find_tables (PyMuPDF splits rows/columns the grid merged, "
        "rebuilds spans and header rows); applies to the 'layout' and 'lines' finders.",
    )
    min_rows: int = Field(2, description="Drop detected tables with fewer rows than this.")
    min_cols: int = Field(2, description="Drop detected tables with fewer columns than this.")
    min_filled_ratio: float = Field(
        0.15, description="Drop tables whose share of non-empty cells is below this (text-finder noise)."
    )
    merge: bool = Field(True, description="Join tables that continue on the next page.")
    caption_max_gap: float = Field(
        40.0, description="Max vertical distance (pt) between a 'Table ...' caption line and the table top."
    )
    margin_fraction: float = Field(
        0.07,
        description="Top/bottom page bands (share of page height) whose lines count as furniture "
        "(running headers, page numbers) when judging what lies between two table parts.",
    )
    max_gap_lines: int = Field(
        3, description="Max non-furniture lines allowed between a table and the page edge for a merge."
    )
    max_gap_line_chars: int = Field(
        60, description="Lines longer than this between two parts count as body text and block a merge."
    )
    continued_relax_factor: int = Field(
        2, description="With a 'continued' caption, the gap limits above are multiplied by this."
    )
    col_tolerance: float = Field(
        0.04,
        description="Max difference of column boundaries, as a share of table width, for two parts "
        "to count as the same column layout.",
    )
    header_scan_rows: int = Field(
        6, description="How many leading rows may form a (multi-line) header repeated on a continuation."
    )
    header_match_ratio: float = Field(
        0.6, description="Share of equal header cells for a continuation's first row(s) to be a repeat."
    )


@dataclass
class _Part:
    """One table as found on one page, before merging."""

    page_index: int
    bbox: BBox
    rows: list[list[str | None]]  # None = covered by a span
    row_bboxes: list[list[BBox | None]]
    col_edges: list[float]  # n_cols + 1 x positions
    header_rows: int
    strategy: str
    caption: str = ""
    caption_lines: list[int] = field(default_factory=list)

    @property
    def n_cols(self) -> int:
        return len(self.col_edges) - 1


def _norm(text: str | None) -> str:
    """Whitespace- and case-insensitive form used to compare cell texts."""
    return "".join(unicodedata.normalize("NFKC", text or "").split()).casefold()


def _clean(text: str | None) -> str:
    return " ".join((text or "").split())


def _page_lines(doc: pymupdf.Document, page: Page) -> list[Line]:
    """The page's lines; falls back to the text layer when the stage got pages without lines."""
    if page.lines:
        return page.lines
    pg = doc[page.index]
    lines: list[Line] = []
    for block in pg.get_text("dict")["blocks"]:
        for ln in block.get("lines", []):
            text = "".join(s["text"] for s in ln["spans"]).strip()
            if text:
                lines.append(Line(text=text, bbox=tuple(ln["bbox"]), block=block["number"]))
    return lines


def _raw_tables(pg: pymupdf.Page, finder: Finder, refine: bool = False) -> list[tuple[Any, str]]:
    """Run the configured PyMuPDF finder; returns (pymupdf Table, strategy name) pairs."""
    if finder == "layout":
        return [(t, "layout") for t in pg.find_tables(refine=refine).tables]
    if finder == "lines":
        return [(t, "lines") for t in pg.find_tables(use_layout=False, refine=refine).tables]
    if finder == "text":
        return [(t, "text") for t in pg.find_tables(strategy="text", use_layout=False).tables]
    found: list[tuple[Any, str]] = []
    for region in pg.find_tables().tables:
        clip = pymupdf.Rect(region.bbox)
        # The layout model draws tight boxes; a little slack keeps edge glyphs inside the clip.
        clip = pymupdf.Rect(clip.x0 - 2, clip.y0 - 2, clip.x1 + 2, clip.y1 + 2) & pg.rect
        inner = pg.find_tables(clip=clip, strategy="text", use_layout=False).tables
        if inner:
            best = max(inner, key=lambda t: t.row_count * t.col_count)
            found.append((best, "layout_text"))
        else:  # the text finder saw no alignment: keep the layout model's own grid
            found.append((region, "layout"))
    return found


def _to_part(tab: Any, strategy: str, page_index: int) -> _Part | None:
    try:
        rows = tab.extract()
    except Exception:  # a malformed grid from the finder must not sink the document
        logger.warning("table extraction failed on page %d", page_index, exc_info=True)
        return None
    row_bboxes: list[list[BBox | None]] = []
    xs: set[float] = set()
    for r in tab.rows:
        row_bboxes.append([tuple(c) if c is not None else None for c in r.cells])
        for c in r.cells:
            if c is not None:
                xs.add(round(c[0], 1))
                xs.add(round(c[2], 1))
    n_cols = max((len(r) for r in rows), default=0)
    edges = sorted(xs)
    if len(edges) != n_cols + 1:  # spans make edge sets irregular: fall back to the first full row
        full = next((rb for rb in row_bboxes if all(c is not None for c in rb) and len(rb) == n_cols), None)
        if full:
            edges = [full[0][0]] + [c[2] for c in full]
        else:
            x0, _, x1, _ = tab.bbox
            edges = [x0 + (x1 - x0) * i / max(n_cols, 1) for i in range(n_cols + 1)]
    header_rows = 0
    hdr = getattr(tab, "header", None)
    refined = getattr(tab, "header_rows", None)  # set by refine=True
    if isinstance(refined, int) and 0 < refined < len(rows):
        header_rows = refined
    elif hdr is not None and not hdr.external and len(rows) > 1:
        header_rows = 1
    return _Part(
        page_index=page_index,
        bbox=tuple(tab.bbox),
        rows=[[c if c is None else _clean(c) for c in r] + [""] * (n_cols - len(r)) for r in rows],
        row_bboxes=row_bboxes,
        col_edges=edges,
        header_rows=header_rows,
        strategy=strategy,
    )


def _keep(part: _Part, s: TableSettings) -> bool:
    n_rows = len(part.rows)
    if n_rows < s.min_rows or part.n_cols < s.min_cols:
        return False
    cells = [c for r in part.rows for c in r if c is not None]
    filled = sum(1 for c in cells if c)
    return bool(cells) and filled / len(cells) >= s.min_filled_ratio


def _outside(line: Line, regions: list[BBox]) -> bool:
    x0, y0, x1, y1 = line.bbox
    cy = (y0 + y1) / 2
    cx = (x0 + x1) / 2
    return not any(r[0] - 1 <= cx <= r[2] + 1 and r[1] - 1 <= cy <= r[3] + 1 for r in regions)


def _find_caption(part: _Part, lines: list[Line], s: TableSettings) -> None:
    """Attach the 'Table ...' line just above the table (and lines up to the table top) as caption."""
    x0, top, x1, _ = part.bbox
    above = [
        (i, ln)
        for i, ln in enumerate(lines)
        if ln.bbox[3] <= top + 1
        and top - ln.bbox[3] <= s.caption_max_gap * 3
        and ln.bbox[2] >= x0 - 20
        and ln.bbox[0] <= x1 + 20
    ]
    above.sort(key=lambda il: -il[1].bbox[3])
    for k, (_i, ln) in enumerate(above[:4]):
        if _CAPTION_RE.match(ln.text) and top - ln.bbox[3] <= s.caption_max_gap + 14 * k:
            chosen = [il for il in above[: k + 1]]
            chosen.sort(key=lambda il: (il[1].bbox[1], il[1].bbox[0]))
            part.caption = _clean(" ".join(ln2.text for _, ln2 in chosen))
            part.caption_lines = [i for i, _ in chosen]
            return


def _page_parts(doc: pymupdf.Document, page: Page, lines: list[Line], s: TableSettings) -> list[_Part]:
    pg = doc[page.index]
    parts: list[_Part] = []
    for tab, strategy in _raw_tables(pg, s.finder, s.refine):
        part = _to_part(tab, strategy, page.index)
        if part is not None and _keep(part, s):
            parts.append(part)
    parts.sort(key=lambda p: (p.bbox[1], p.bbox[0]))
    for part in parts:
        _find_caption(part, lines, s)
    return parts


def _gap_ok(
    lines: list[Line],
    page: Page,
    regions: list[BBox],
    y_from: float,
    y_to: float,
    skip: set[int],
    relax: int,
    s: TableSettings,
) -> bool:
    """True when only furniture or a few short lines lie between y_from and y_to on the page."""
    lo, hi = page.height * s.margin_fraction, page.height * (1 - s.margin_fraction)
    count = 0
    for i, ln in enumerate(lines):
        if i in skip or ln.furniture or not _outside(ln, regions):
            continue
        cy = (ln.bbox[1] + ln.bbox[3]) / 2
        if not (y_from <= cy <= y_to) or cy < lo or cy > hi:
            continue
        if len(ln.text.strip()) > s.max_gap_line_chars * relax:
            return False
        count += 1
    return count <= s.max_gap_lines * relax


def _same_columns(a: _Part, b: _Part, s: TableSettings) -> bool:
    if a.n_cols != b.n_cols:
        return False
    wa = a.col_edges[-1] - a.col_edges[0]
    wb = b.col_edges[-1] - b.col_edges[0]
    if wa <= 0 or wb <= 0:
        return False
    # Relative boundaries (width ratios) match whether or not the page offsets differ (odd/even pages).
    ra = [(x - a.col_edges[0]) / wa for x in a.col_edges]
    rb = [(x - b.col_edges[0]) / wb for x in b.col_edges]
    return max(abs(x - y) for x, y in zip(ra, rb, strict=True)) <= s.col_tolerance


def _header_repeat(a: _Part, b: _Part, s: TableSettings) -> int:
    """Number of leading rows of ``b`` that repeat ``a``'s header (0 when none).

    Text finders cut a multi-line header into one row per printed line, and a continuation may
    start its header one line lower or rename the stub column, so each leading row of ``b`` is
    compared with any of ``a``'s first rows, column by column, rather than row ``i`` with row ``i``.
    """
    depth = max(a.header_rows, s.header_scan_rows)
    a_rows = [[_norm(c) for c in r] for r in a.rows[:depth]]
    dropped = matched = 0
    for row in b.rows[: depth + 1]:
        cells = [_norm(c) for c in row]
        filled = [i for i, c in enumerate(cells) if c]
        if not filled:
            dropped += 1
            continue
        if not any(
            sum(1 for i in filled if i < len(ar) and ar[i] == cells[i]) / len(filled) >= s.header_match_ratio
            for ar in a_rows
        ):
            break
        dropped += 1
        matched += 1
    # Never drop the whole continuation, and only when a real header line was recognised.
    return dropped if matched and dropped < len(b.rows) else 0


def _continues(
    a: _Part,
    b: _Part,
    pages: dict[int, Page],
    lines: dict[int, list[Line]],
    regions: dict[int, list[BBox]],
    last_on_page: bool,
    first_on_page: bool,
    s: TableSettings,
) -> bool:
    if b.page_index != a.page_index + 1 or not (last_on_page and first_on_page):
        return False
    if not _same_columns(a, b, s):
        return False
    continued = bool(b.caption and _CONTINUED_RE.search(b.caption))
    relax = s.continued_relax_factor if continued else 1
    pa, pb = pages[a.page_index], pages[b.page_index]
    below_a = _gap_ok(lines[a.page_index], pa, regions[a.page_index], a.bbox[3], pa.height, set(), relax, s)
    above_b = _gap_ok(
        lines[b.page_index], pb, regions[b.page_index], 0.0, b.bbox[1], set(b.caption_lines), relax, s
    )
    # A fresh caption that is not a continuation ("Table 5" under "Table 4") starts a new table.
    if b.caption and not continued and a.caption and _norm(a.caption) != _norm(b.caption):
        return False
    return below_a and above_b


def _build(parts: list[_Part], drop: list[int], table_id: str) -> Table:
    first = parts[0]
    n_cols = first.n_cols
    cells: list[Cell] = []
    row0 = 0
    for part, skip in zip(parts, drop, strict=True):
        for r_local in range(skip, len(part.rows)):
            row = part.rows[r_local]
            r = row0 + r_local - skip
            bbs = part.row_bboxes[r_local] if r_local < len(part.row_bboxes) else []
            for c, text in enumerate(row):
                if text is None:
                    continue
                bb = bbs[c] if c < len(bbs) else None
                col_span = row_span = 1
                if bb is not None:
                    col_span = max(1, sum(1 for x in part.col_edges[c + 1 : -1] if x < bb[2] - 1) + 1)
                    for rr in range(r_local + 1, len(part.rows)):
                        below = part.row_bboxes[rr] if rr < len(part.row_bboxes) else []
                        if c < len(below) and below[c] is None and part.rows[rr][c] is None:
                            rb = part.row_bboxes[rr]
                            ys = [x[1] for x in rb if x is not None]
                            if ys and min(ys) < bb[3] - 1:
                                row_span += 1
                                continue
                        break
                cells.append(
                    Cell(
                        row=r,
                        col=c,
                        text=text,
                        page_index=part.page_index,
                        row_span=row_span,
                        col_span=min(col_span, n_cols - c),
                        bbox=bb,
                        is_header=(part is first and r_local < first.header_rows),
                    )
                )
        row0 += len(part.rows) - skip
    return Table(
        table_id=table_id,
        first_page_index=first.page_index,
        last_page_index=parts[-1].page_index,
        n_rows=row0,
        n_cols=n_cols,
        cells=cells,
        bbox=first.bbox,
        header_rows=first.header_rows,
        pages=sorted({p.page_index for p in parts}),
        strategy=first.strategy,
        caption=first.caption,
        merge_kind="rows" if len(parts) > 1 else "",
        regions=[(p.page_index, p.bbox) for p in parts],
    )


def extract_tables(
    doc: pymupdf.Document, pages: list[Page], settings: TableSettings | None = None
) -> list[Table]:
    """Find the tables of a document and join those that continue across pages.

    Pages whose ``text_source`` is not the text layer are skipped (OCR'd pages have no glyphs for
    PyMuPDF's finders). Tables are numbered "t0", "t1", ... in document order; every cell keeps the
    physical page its row came from.
    """
    s = settings or TableSettings()
    by_index = {p.index: p for p in pages}
    lines: dict[int, list[Line]] = {}
    per_page: dict[int, list[_Part]] = {}
    for page in sorted(pages, key=lambda p: p.index):
        if page.text_source != TextSource.TEXT_LAYER:
            continue
        lines[page.index] = _page_lines(doc, page)
        per_page[page.index] = _page_parts(doc, page, lines[page.index], s)
    regions = {i: [p.bbox for p in ps] for i, ps in per_page.items()}

    groups: list[tuple[list[_Part], list[int]]] = []
    for idx in sorted(per_page):
        for j, part in enumerate(per_page[idx]):
            if s.merge and j == 0 and groups:
                chain, drop = groups[-1]
                prev = chain[-1]
                prev_last = prev is per_page.get(prev.page_index, [None])[-1]
                if _continues(prev, part, by_index, lines, regions, prev_last, True, s):
                    chain.append(part)
                    drop.append(_header_repeat(chain[0], part, s))
                    logger.debug("table on page %d continues on page %d", prev.page_index, idx)
                    continue
            groups.append(([part], [0]))
    return [_build(chain, drop, f"t{k}") for k, (chain, drop) in enumerate(groups)]
