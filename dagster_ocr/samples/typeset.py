"""Typesetting for the samples: A4 geometry, fonts, measured text, a flowing layout, scans, fixed bytes."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np
import pymupdf

from dagster_ocr.samples.settings import SamplesSettings

A4 = pymupdf.paper_rect("a4")  # 595 x 842 pt
MARGIN_X = 72.0
TOP = 86.0  # first baseline region starts below the running header
BOTTOM = A4.height - 80.0  # text never goes below this; the footer sits under it
TEXT_W = A4.width - 2 * MARGIN_X

BLACK = (0, 0, 0)
GREY = (0.35, 0.35, 0.35)


@dataclass(frozen=True)
class _Fonts:
    """MuPDF's built-in Nimbus fonts embedded as Unicode fonts, so § ¥ € © — survive extraction.

    (Writing with the non-embedded base-14 names would use a one-byte encoding and lose glyphs.)
    """

    serif: pymupdf.Font = field(default_factory=lambda: pymupdf.Font("tiro"))
    serif_bold: pymupdf.Font = field(default_factory=lambda: pymupdf.Font("tibo"))
    serif_italic: pymupdf.Font = field(default_factory=lambda: pymupdf.Font("tiit"))
    sans: pymupdf.Font = field(default_factory=lambda: pymupdf.Font("helv"))
    sans_bold: pymupdf.Font = field(default_factory=lambda: pymupdf.Font("hebo"))


_ADVANCES: dict[tuple[str, str], float] = {}


def _width(text: str, font: pymupdf.Font, size: float) -> float:
    """Text width from cached glyph advances (``Font.text_length`` costs a library call per character)."""
    name = font.name
    total = 0.0
    for ch in text:
        adv = _ADVANCES.get((name, ch))
        if adv is None:
            adv = _ADVANCES[(name, ch)] = font.glyph_advance(ord(ch))
        total += adv
    return total * size


def _wrap(text: str, font: pymupdf.Font, size: float, width: float) -> list[str]:
    """Greedy word wrap measured with the real font metrics."""
    lines: list[str] = []
    cur = ""
    words: list[str] = []
    for token in text.split():
        # keep "§ 4.2" on one line, as typesetters do
        if words and words[-1] == "§":
            words[-1] = f"§ {token}"
        else:
            words.append(token)
    space = _width(" ", font, size)
    cur_w = 0.0
    for word in words:
        w = _width(word, font, size)
        if cur and cur_w + space + w > width:
            lines.append(cur)
            cur, cur_w = word, w
        elif cur:
            cur, cur_w = f"{cur} {word}", cur_w + space + w
        else:
            cur, cur_w = word, w
    if cur:
        lines.append(cur)
    return lines


def _text(
    page: pymupdf.Page,
    x: float,
    y: float,
    text: str,
    font: pymupdf.Font,
    size: float,
    color: tuple[float, float, float] = BLACK,
    align: str = "left",
) -> None:
    """Write one line with its baseline at ``y``; ``align`` anchors ``x`` left, centre or right."""
    if align != "left":
        w = _width(text, font, size)
        x = x - w / 2 if align == "center" else x - w
    # one TextWriter per page and colour, written by _flush: a write_text per line costs ~2 ms
    key = (id(page.parent), page.number, color)
    with _WRITERS_LOCK:
        tw = _WRITERS.get(key)
        if tw is None:
            tw = _WRITERS[key] = pymupdf.TextWriter(page.rect, color=color)
    tw.append((x, y), text, font=font, fontsize=size)


# pending text per (document id, page number, colour); guarded so concurrent builds cannot collide
_WRITERS: dict[tuple[int, int, tuple[float, float, float]], pymupdf.TextWriter] = {}
_WRITERS_LOCK = threading.Lock()


def _take_writers(doc: pymupdf.Document) -> list[tuple[int, pymupdf.TextWriter]]:
    with _WRITERS_LOCK:
        keys = sorted(k for k in _WRITERS if k[0] == id(doc))
        return [(k[1], _WRITERS.pop(k)) for k in keys]


def _flush(doc: pymupdf.Document) -> None:
    """Write the pending text of ``doc`` onto its pages (text lands above the drawings)."""
    for pno, tw in _take_writers(doc):
        tw.write_text(doc.load_page(pno))


@contextmanager
def _document() -> Iterator[pymupdf.Document]:
    """A new empty PDF whose pending text is dropped if the build fails (its id may be reused)."""
    doc = pymupdf.open()
    try:
        yield doc
    finally:
        _take_writers(doc)
        doc.close()


class _Flow:
    """A tiny flowing layout engine: paragraphs, headings and ruled tables with page breaks.

    ``decorate(page, physical_index)`` draws the running header and footer of each new page.
    """

    def __init__(self, doc: pymupdf.Document, fonts: _Fonts, decorate: Callable[[pymupdf.Page, int], None]):
        self.doc = doc
        self.f = fonts
        self.decorate = decorate
        self.page: pymupdf.Page | None = None
        self.y = TOP
        #: heading text -> physical page index, for the table of contents
        self.anchors: dict[str, int] = {}
        #: physical page index -> number of table rows drawn there (header included)
        self.table_rows: dict[int, int] = {}

    def new_page(self) -> pymupdf.Page:
        self.page = self.doc.new_page(width=A4.width, height=A4.height)
        self.decorate(self.page, self.page.number)
        self.y = TOP
        return self.page

    def _room(self, h: float) -> pymupdf.Page:
        if self.page is None or self.y + h > BOTTOM:
            self.new_page()
        assert self.page is not None
        return self.page

    def space(self, h: float) -> None:
        self.y += h

    def heading(self, text: str, size: float = 12.0, keep_with: float = 40.0) -> None:
        """A bold sans heading kept together with at least ``keep_with`` points of what follows."""
        page = self._room(size * 1.3 + 8 + keep_with)
        self.y += 8 if self.y > TOP else 0
        _text(page, MARGIN_X, self.y + size, text, self.f.sans_bold, size)
        self.anchors[text] = page.number
        self.y += size * 1.3 + 5

    def para(
        self, text: str, indent: float = 0.0, label: str = "", size: float = 10.5, italic: bool = False
    ) -> None:
        """A wrapped body paragraph; ``label`` (e.g. "(a)" or "2.1") hangs in the indent."""
        font = self.f.serif_italic if italic else self.f.serif
        lead = size * 1.38
        x = MARGIN_X + indent + (26 if label else 0)
        lines = _wrap(text, font, size, A4.width - MARGIN_X - x)
        for i, line in enumerate(lines):
            page = self._room(lead)
            if i == 0 and label:
                _text(page, MARGIN_X + indent, self.y + size, label, self.f.serif_bold, size)
            _text(page, x, self.y + size, line, font, size)
            self.y += lead
        self.y += 4

    def table(
        self,
        caption: str,
        header: list[str],
        rows: list[list[str]],
        widths: list[float],
        aligns: list[str],
        bold_last: bool = True,
    ) -> None:
        """A ruled table that breaks across pages, repeating the header under a "(continued)" caption."""
        row_h = 17.0
        size = 9.5
        cap_h = 18.0
        first = True

        def start_part() -> pymupdf.Page:
            nonlocal first
            # keep the caption, the header and at least two body rows together
            page = self._room(cap_h + 3 * row_h)
            cap = caption if first else f"{caption.split(' — ')[0]} (continued)"
            _text(page, MARGIN_X, self.y + 10, cap, self.f.sans_bold if first else self.f.serif_italic, 10)
            self.y += cap_h
            first = False
            self._row(page, header, widths, aligns, row_h, size, header=True)
            return page

        page = start_part()
        for i, row in enumerate(rows):
            if self.y + row_h > BOTTOM:
                page = self.new_page()
                page = start_part()
            last = bold_last and i == len(rows) - 1
            self._row(page, row, widths, aligns, row_h, size, header=False, bold=last)
        self.y += 10

    def _row(
        self,
        page: pymupdf.Page,
        cells: list[str],
        widths: list[float],
        aligns: list[str],
        row_h: float,
        size: float,
        header: bool,
        bold: bool = False,
    ) -> None:
        x = MARGIN_X
        font = self.f.sans_bold if header else (self.f.serif_bold if bold else self.f.serif)
        for text, w, al in zip(cells, widths, aligns, strict=True):
            r = pymupdf.Rect(x, self.y, x + w, self.y + row_h)
            # each cell is its own stroked rectangle: the line-based table finder needs real rules
            page.draw_rect(r, color=BLACK, fill=(0.88, 0.88, 0.88) if header else None, width=0.6)
            base = self.y + row_h - 5
            if al == "right":
                _text(page, r.x1 - 5, base, text, font, size, align="right")
            else:
                _text(page, r.x0 + 5, base, text, font, size)
            x += w
        self.y += row_h
        self.table_rows[page.number] = self.table_rows.get(page.number, 0) + 1


def _scan(doc: pymupdf.Document, settings: SamplesSettings, seed_offset: int = 0) -> pymupdf.Pixmap:
    """Render page 0 of ``doc`` to a greyish greyscale image with seeded speckles, like a scan."""
    _flush(doc)
    page = doc[0]
    pix = page.get_pixmap(dpi=settings.scan_dpi, colorspace=pymupdf.csGRAY, alpha=False)
    a = np.frombuffer(pix.samples, dtype=np.uint8).reshape(pix.height, pix.width).astype(np.float32) / 255.0
    paper, ink = settings.scan_paper_grey, settings.scan_ink_grey
    a = ink + a * (paper - ink)  # compress the range: grey paper, not-quite-black ink
    rng = np.random.default_rng(settings.scan_noise_seed + seed_offset)
    # gentle uneven illumination towards one edge, as on a flatbed scanner
    a *= (1.0 - 0.04 * np.linspace(0, 1, pix.width, dtype=np.float32))[None, :]
    ys = rng.integers(0, pix.height, settings.scan_speckles)
    xs = rng.integers(0, pix.width, settings.scan_speckles)
    a[ys, xs] = rng.uniform(0.3, 0.7, settings.scan_speckles).astype(np.float32)
    out = np.clip(a * 255.0 + 0.5, 0, 255).astype(np.uint8)
    res = pymupdf.Pixmap(pymupdf.csGRAY, pix.width, pix.height, out.tobytes(), False)
    res.set_dpi(settings.scan_dpi, settings.scan_dpi)
    return res


def _finish(doc: pymupdf.Document, title: str, settings: SamplesSettings) -> bytes:
    """Fixed metadata and no fresh /ID: the same content always gives the same bytes."""
    _flush(doc)
    doc.set_metadata(
        {
            "title": title,
            "author": "dagster-ocr sample generator",
            "subject": "",
            "keywords": "",
            "creator": "dagster_ocr.samples",
            "producer": "PyMuPDF",
            "creationDate": settings.pdf_date,
            "modDate": settings.pdf_date,
        }
    )
    return doc.tobytes(garbage=3, deflate=True, no_new_id=True)
