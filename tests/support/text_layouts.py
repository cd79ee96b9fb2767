"""Generated pages for the two text-fidelity classes of issue 37, with the text a reader keeps.

* ``make_single_page(seed)``: a one-page document (a page of a report, an article, a letter, a
  memo) whose margin bands carry what a reader drops: a running head (with or without the page
  number on its baseline), a bare or worded page number ("Page 1 of 1", "- 4 -"), a date, URL or
  copyright line, a document code, a letterhead. Repetition across pages cannot show any of it:
  there is one page. The body may run into the bands (a title, a section heading set at the top,
  a paragraph's last lines near the foot, a footnote): that is kept.
* ``make_letterhead(seed)``: a one-page business letter on letterhead paper: a name over address
  and contact lines in the top band, company details in the bottom band, a recipient's address in
  the body (which stays).
* ``make_interleaved(seed)``: a page whose blocks interleave: a sidebar beside one or two body
  columns, a pull quote across the gutter, a boxed callout inside a column, a full-width figure
  caption between two columns. The body's sentences run on across the interruption.

Each case carries ``truths``: the acceptable readings of the page (the body in its order; an aside
as one unit before, after or between the body's paragraphs), and ``furniture`` (lines a reader
drops). ``score(case, text)`` is the best edit similarity of ``text`` to any truth, in the normal
form of bench/text_fidelity.py (whitespace collapsed, NFKC).

Page size, fonts, sizes, margins, columns and which furniture or aside appears are drawn from
``random.Random(seed)``; seeds below ``HELD_OUT`` are the tune split, seeds from ``HELD_OUT`` on the
held-out split (looked at only to report). Used by tests/unit/test_text_layouts.py and
bench/text_layouts.py.
"""

from __future__ import annotations

import random
import re
import unicodedata
from dataclasses import dataclass, field

import pymupdf

FURNITURE_CLASSES = ["report", "article", "letter", "memo"]
INTERLEAVED_CLASSES = ["sidebar", "pull_quote", "callout", "figure_caption"]
TUNE = 0
HELD_OUT = 100_000

SIZES = [(595.0, 842.0), (612.0, 792.0), (420.0, 595.0)]
#: (regular, bold, italic)
FAMILIES = [("helv", "hebo", "heit"), ("tiro", "tibo", "tiit"), ("cour", "cobo", "coit")]

_WORDS = (
    "the of and to in a is that for it as was with be by on not he this are or his from at which but "
    "have an they you were her all she there would their we him been has when who will more no if out "
    "so said what up its about into than them can only other new some could time these two may then do "
    "first any my now such like our over man me even most made after also did many before must through "
    "back years where much your way well down should because each just those people how too little state "
    "good very make world still own see men work long get here between both life being under never day "
    "same another know while last might us great old year off come since against go came right used take "
    "three water market report council budget survey region figure method sample results growth energy"
).split()
_TOPICS = [
    "Regional water supply",
    "Annual budget review",
    "Survey of housing needs",
    "Energy use in schools",
    "Market outlook",
    "Transport strategy",
]
_ORGS = ["Northwind Ltd", "Contoso plc", "Globex BV", "Initech AB", "Acme Foundation", "Umbrella Trust"]
_STREETS = ["12 Harbour Road, Leeds LS1 4AB", "4 Rue des Lilas, 69001 Lyon", "77 King Street, Perth WA 6000"]
_MONTHS = ["January", "March", "May", "July", "September", "November"]


def _sentence(rng: random.Random, lo: int = 6, hi: int = 16) -> str:
    words = [rng.choice(_WORDS) for _ in range(rng.randint(lo, hi))]
    rng.choice(".?;")  # a draw kept so that each seed's page stays the one BENCHMARKS.md measured
    return words[0].capitalize() + " " + " ".join(words[1:]) + "."


def _paragraph(rng: random.Random, n: int | None = None) -> str:
    return " ".join(_sentence(rng) for _ in range(n or rng.randint(2, 5)))


def _wrap(text: str, width: float, font: str, size: float) -> list[str]:
    lines: list[str] = []
    cur = ""
    for w in text.split():
        trial = f"{cur} {w}" if cur else w
        if cur and pymupdf.get_text_length(trial, fontname=font, fontsize=size) > width:
            lines.append(cur)
            cur = w
        else:
            cur = trial
    if cur:
        lines.append(cur)
    return lines


_FOLD = str.maketrans({"‘": "'", "’": "'", "“": '"', "”": '"', "–": "-", "—": "-"})


def normal(text: str) -> str:
    """The bench's normal form: NFKC, quotes and dashes folded, whitespace collapsed."""
    text = unicodedata.normalize("NFKC", text).translate(_FOLD)
    return re.sub(r"\s+", " ", text).strip()


@dataclass(slots=True)
class LayoutCase:
    """One generated page and the readings of it a reader accepts."""

    seed: int
    cls: str
    doc: pymupdf.Document
    #: acceptable readings, each a list of blocks (body paragraphs, headings, asides) in order
    truths: list[list[str]] = field(default_factory=list)
    #: lines a reader drops (running heads, page numbers, stamps)
    furniture: list[str] = field(default_factory=list)
    #: lines in the margin bands that are body text and must stay
    kept_in_bands: list[str] = field(default_factory=list)

    @property
    def split(self) -> str:
        return "held_out" if self.seed >= HELD_OUT else "tune"


def _lev(a: str, b: str) -> int:
    from support.text_metrics import levenshtein

    return levenshtein(a, b)


def score(case: LayoutCase, text: str) -> float:
    """Edit similarity (1 - Levenshtein / longer length) of ``text`` to the nearest truth."""
    hyp = normal(text)
    best = 0.0
    for truth in case.truths:
        ref = normal(" ".join(truth))
        if not ref and not hyp:
            return 1.0
        best = max(best, 1.0 - _lev(ref, hyp) / max(len(ref), len(hyp)))
    return best


class _Pen:
    """Writes lines on a page and records them.

    ``deferred``: lines are held, each under the current ``group`` (a piece of the page: the title,
    one paragraph's lines in one column, an aside), and written by ``flush`` in an order of its
    own, so the content stream is not the reading order.
    """

    def __init__(self, page: pymupdf.Page, family: tuple[str, str, str], deferred: bool = False):
        self.page = page
        self.regular, self.bold, self.italic = family
        self.deferred = deferred
        self.group: object = None
        self._held: dict[object, list[tuple[float, float, str, float, str]]] = {}

    def line(self, x: float, y: float, text: str, size: float, style: str = "regular") -> None:
        if self.deferred:
            self._held.setdefault(self.group, []).append((x, y, text, size, style))
            return
        font = getattr(self, style)
        self.page.insert_text((x, y), text, fontname=font, fontsize=size)

    def flush(self, rng: random.Random) -> None:
        """Write the held groups in a shuffled order (each group's lines in their own order)."""
        groups = list(self._held.values())
        rng.shuffle(groups)
        self.deferred = False
        for g in groups:
            for x, y, text, size, style in g:
                self.line(x, y, text, size, style)
        self._held.clear()

    def width(self, text: str, size: float, style: str = "regular") -> float:
        return pymupdf.get_text_length(text, fontname=getattr(self, style), fontsize=size)

    def block(
        self, x: float, y: float, width: float, text: str, size: float, pitch: float, style: str = "regular"
    ) -> float:
        """``text`` wrapped to ``width`` from baseline ``y``; returns the next free baseline."""
        for ln in _wrap(text, width, getattr(self, style), size):
            self.line(x, y, ln, size, style)
            y += pitch
        return y


# ------------------------------------------------------------------------------------ class (a)


def _header(rng: random.Random, org: str, topic: str, number: int) -> tuple[str, list[str]]:
    """A header kind and its lines (left, right parts; empty when absent)."""
    kind = rng.choice(["none", "title", "title_number", "org_date", "letterhead", "code"])
    if kind == "title":
        return kind, [rng.choice([topic, f"{org} · {topic}", f"{topic} {2020 + rng.randint(0, 6)}"])]
    if kind == "title_number":
        return kind, [topic, str(number)]
    if kind == "org_date":
        return kind, [org, f"{rng.randint(1, 28)} {rng.choice(_MONTHS)} {2020 + rng.randint(0, 6)}"]
    if kind == "letterhead":
        return kind, [org, f"{rng.choice(_STREETS)} · Tel. +44 113 496 {rng.randint(1000, 9999)}"]
    if kind == "code":
        return kind, [f"Ref. {org.split()[0][:3].upper()}-{rng.randint(100, 999)}/{rng.randint(1, 9)}"]
    return kind, []


def _footer(rng: random.Random, org: str, topic: str, number: int) -> tuple[str, list[str]]:
    kind = rng.choice(["none", "number", "page_of", "dashed", "url", "copyright", "printed", "number_title"])
    slug = org.split()[0].lower()
    if kind == "number":
        return kind, [str(number)]
    if kind == "page_of":
        return kind, [f"Page {number} of {number + rng.randint(0, 3)}"]
    if kind == "dashed":
        return kind, [f"- {number} -"]
    if kind == "url":
        return kind, [rng.choice([f"www.{slug}.example", f"https://{slug}.example/reports/{number}"])]
    if kind == "copyright":
        return kind, [f"© {2020 + rng.randint(0, 6)} {org}. All rights reserved."]
    if kind == "printed":
        return kind, [
            f"Printed {rng.randint(1, 28):02d}/{rng.randint(1, 12):02d}/2026 {rng.randint(8, 18)}:05"
        ]
    if kind == "number_title":
        return kind, [f"{number} | {topic}"]
    return kind, []


def make_single_page(seed: int) -> LayoutCase:
    """A one-page document with margin-band furniture (see the module docstring)."""
    rng = random.Random(seed)
    cls = FURNITURE_CLASSES[seed % len(FURNITURE_CLASSES)]
    w, h = rng.choice(SIZES)
    family = rng.choice(FAMILIES)
    size = rng.choice([9.0, 10.0, 10.5, 11.0])
    pitch = size * rng.uniform(1.2, 1.45)
    left = rng.uniform(0.09, 0.14) * w
    right = w - rng.uniform(0.09, 0.14) * w
    top = rng.uniform(0.075, 0.11) * h  # the body's first baseline: inside the 12 % band
    bottom = h - rng.uniform(0.07, 0.1) * h  # the body runs down into the bottom band
    org, topic = rng.choice(_ORGS), rng.choice(_TOPICS)
    number = rng.randint(1, 240)
    doc = pymupdf.open()
    page = doc.new_page(width=w, height=h)
    pen = _Pen(page, family)
    case = LayoutCase(seed, cls, doc)
    blocks: list[str] = []

    # furniture in the bands, set smaller than the body (or italic), apart from it
    fsize = size - rng.choice([0.0, 1.0, 1.5, 2.0])
    hkind, hparts = _header(rng, org, topic, number)
    fkind, fparts = _footer(rng, org, topic, number)
    hy = rng.uniform(0.03, 0.055) * h
    if hparts:
        style = "bold" if hkind == "letterhead" else rng.choice(["regular", "italic"])
        if hkind == "letterhead":
            pen.line(left, hy, hparts[0], size + 1, "bold")
            pen.line(left, hy + 1.2 * size, hparts[1], fsize)
        elif len(hparts) == 2:
            pen.line(left, hy, hparts[0], fsize, style)
            pen.line(right - pen.width(hparts[1], fsize), hy, hparts[1], fsize)
        else:
            x = rng.choice(
                [
                    left,
                    (w - pen.width(hparts[0], fsize, style)) / 2,
                    right - pen.width(hparts[0], fsize, style),
                ]
            )
            pen.line(x, hy, hparts[0], fsize, style)
        case.furniture += hparts
        if rng.random() < 0.4:
            ry = hy + (2.6 if hkind == "letterhead" else 0.5) * size
            page.draw_line((left, ry), (right, ry), width=0.5)
        top = max(top, hy + (3.2 if hkind == "letterhead" else 2.2) * size)
    fy = h - rng.uniform(0.03, 0.055) * h
    if fparts:
        t = fparts[0]
        x = rng.choice([left, (w - pen.width(t, fsize)) / 2, right - pen.width(t, fsize)])
        pen.line(x, fy, t, fsize)
        case.furniture += fparts
        bottom = min(bottom, fy - 2.2 * size)

    y = top + size
    if cls in ("report", "article") and rng.random() < 0.5:
        title = topic if cls == "report" else f"{topic}: {rng.choice(_WORDS)} and {rng.choice(_WORDS)}"
        pen.line(left, y, title, size + rng.choice([4.0, 6.0, 8.0]), "bold")
        blocks.append(title)
        y += 2.2 * size
    elif cls == "letter":
        for text in (
            f"Dear {rng.choice(['Ms', 'Mr', 'Dr'])} {rng.choice(['Shaw', 'Okafor', 'Lind', 'Moreau'])},",
        ):
            pen.line(left, y, text, size)
            blocks.append(text)
            y += 2 * pitch
    elif cls == "memo":
        for label in ("To:", "From:", "Subject:"):
            text = f"{label} {rng.choice(_ORGS) if label != 'Subject:' else topic}"
            pen.line(left, y, text, size)
            blocks.append(text)
            y += pitch
        y += pitch
    heading_at = rng.randint(1, 3) if rng.random() < 0.5 else -1
    k = 0
    footnote = rng.random() < 0.3
    if footnote:
        note = f"1 {_sentence(rng, 5, 9)}"
        bottom -= 1.8 * size
    while True:
        if k == heading_at:
            head = f"{rng.randint(1, 6)}. {rng.choice(_TOPICS)}"
            if y + 2 * pitch > bottom:
                break
            pen.line(left, y, head, size, "bold")
            blocks.append(head)
            y += 1.4 * pitch
        para = _paragraph(rng)
        lines = _wrap(para, right - left, pen.regular, size)
        room = int((bottom - y) / pitch) + 1
        if room < 2:
            break
        lines = lines[:room]  # the page may end mid-paragraph: what is printed is what a reader reads
        for ln in lines:
            pen.line(left, y, ln, size)
            y += pitch
        blocks.append(" ".join(lines))
        y += 0.6 * pitch
        k += 1
    if footnote:
        ny = bottom + 2.2 * size
        page.draw_line((left, ny - 1.2 * size), (left + 0.3 * (right - left), ny - 1.2 * size), width=0.4)
        pen.line(left, ny, note, size - 2)
        blocks.append(note)
        case.kept_in_bands.append(note)
    case.truths = [blocks]
    return case


# ------------------------------------------------------------------------------------ class (b)


def _flow_columns(
    pen: _Pen,
    paras: list[str],
    cols: list[tuple[float, float]],
    y0: float,
    y1: float,
    size: float,
    pitch: float,
    skip: tuple[float, float] | None = None,
) -> tuple[list[str], list[str]]:
    """``paras`` flowed down ``cols`` (x0, x1) from baseline ``y0`` to ``y1``, jumping over the
    vertical range ``skip`` in every column. Returns the paragraphs as printed (the last one cut
    where the columns end), read column by column, and the same lines read band by band (every
    column above ``skip``, then every column below it): where the interruption is a band break."""
    lines = [
        (ln, i) for i, p in enumerate(paras) for ln in _wrap(p, cols[0][1] - cols[0][0], pen.regular, size)
    ]
    out: dict[int, list[str]] = {}
    above: list[str] = []
    below: list[str] = []
    k = 0
    for x0, _ in cols:
        y = y0
        while k < len(lines) and y <= y1:
            if skip and skip[0] - size <= y <= skip[1] + size:
                y = skip[1] + size + pitch
                continue
            text, i = lines[k]
            pen.group = ("body", x0, i, skip is not None and y > skip[1])
            pen.line(x0, y, text, size)
            out.setdefault(i, []).append(text)
            (below if skip and y > skip[1] else above).append(text)
            y += pitch
            k += 1
    return [" ".join(out[i]) for i in sorted(out)], [" ".join(above), " ".join(below)]


def _with_aside(body: list[str], aside: list[str]) -> list[list[str]]:
    """Every reading with ``aside`` as one unit between two body paragraphs (or first, or last)."""
    return [body[:k] + aside + body[k:] for k in range(len(body) + 1)]


#: how the content stream orders a generated page's text: as it is read (the aside before or after
#: the body), or in pieces (the title, each paragraph's lines in one column, each aside) shuffled
STREAMS = ["reading", "shuffled"]


def make_interleaved(seed: int, stream: str = "reading") -> LayoutCase:
    """A page whose blocks interleave (see the module docstring).

    ``stream="shuffled"``: the same page (same seed, same drawing), its text written to the content
    stream in a shuffled order of pieces, so that the stream order is not a reading order and a
    reader that trusts it cannot win by construction (``get_text()`` reads the shuffled order).
    """
    if stream not in STREAMS:
        raise ValueError(f"stream must be one of {STREAMS}")
    rng = random.Random(seed)
    cls = INTERLEAVED_CLASSES[seed % len(INTERLEAVED_CLASSES)]
    w, h = rng.choice(SIZES[:2])
    family = rng.choice(FAMILIES)
    size = rng.choice([9.0, 9.5, 10.0])
    pitch = size * rng.uniform(1.2, 1.4)
    left, right = rng.uniform(50, 72), w - rng.uniform(50, 72)
    top, bottom = rng.uniform(0.13, 0.16) * h, h - rng.uniform(0.13, 0.16) * h
    gutter = rng.uniform(12, 24)
    doc = pymupdf.open()
    page = doc.new_page(width=w, height=h)
    pen = _Pen(page, family, deferred=stream == "shuffled")
    case = LayoutCase(seed, cls, doc)
    paras = [_paragraph(rng, rng.randint(3, 6)) for _ in range(12)]
    asize = size - rng.choice([0.5, 1.0, 1.5])
    title = rng.choice(_TOPICS)

    def aside_text(n_paras: int) -> tuple[str, list[str]]:
        return rng.choice(["Key facts", "In brief", "Note", "Case study", "Did you know?"]), [
            _paragraph(rng, rng.randint(2, 3)) for _ in range(n_paras)
        ]

    body_first = rng.random() < 0.6  # the stream order: body before or after the aside

    bands: list[str] = []

    def draw_body(cols: list[tuple[float, float]], y0: float, y1: float, skip=None) -> list[str]:
        body, by_band = _flow_columns(pen, paras, cols, y0, y1, size, pitch, skip)
        bands[:] = by_band
        return body

    if cls == "sidebar":
        # one or two body columns and a sidebar column (a shaded box) on one side
        side_w = rng.uniform(0.26, 0.33) * (right - left)
        on_right = rng.random() < 0.6
        bx0, bx1 = (right - side_w, right) if on_right else (left, left + side_w)
        body_l, body_r = (left, bx0 - gutter) if on_right else (bx1 + gutter, right)
        n_cols = rng.choice([1, 1, 2])
        cw = (body_r - body_l - (n_cols - 1) * gutter) / n_cols
        cols = [(body_l + k * (cw + gutter), body_l + k * (cw + gutter) + cw) for k in range(n_cols)]
        sy0 = top + rng.uniform(0, 0.3) * (bottom - top)
        head, texts = aside_text(rng.randint(1, 3))

        def draw_side() -> list[str]:
            pen.group = "aside"
            y = sy0
            out = [head]
            pen.line(bx0 + 6, y, head, asize + 1, "bold")
            y += 1.6 * asize
            for t in texts:
                y = pen.block(bx0 + 6, y, bx1 - bx0 - 12, t, asize, 1.25 * asize) + 0.4 * asize
                out.append(t)
            page.draw_rect(
                pymupdf.Rect(bx0, sy0 - 1.5 * asize, bx1, y),
                color=(0.4, 0.4, 0.4),
                fill=(0.9, 0.9, 0.95),
                overlay=False,
            )
            return out

        pen.group = "title"
        pen.line(body_l, top - 1.5 * size, title, size + 5, "bold")
        if body_first:
            body = draw_body(cols, top + size, bottom)
            side = draw_side()
        else:
            side = draw_side()
            body = draw_body(cols, top + size, bottom)
        case.truths = [[title, *body, *side], [title, *side, *body], [*side, title, *body]]
    elif cls == "pull_quote":
        # two columns, a pull quote in larger italic across the gutter; the columns jump over it
        cw = (right - left - gutter) / 2
        cols = [(left, left + cw), (left + cw + gutter, right)]
        qsize = size + rng.choice([3.0, 4.0, 6.0])
        quote = f"“{_sentence(rng, 8, 14)}”"
        qw = rng.uniform(0.5, 0.75) * (right - left)
        qx = (left + right - qw) / 2
        qy0 = top + rng.uniform(0.3, 0.55) * (bottom - top)
        qlines = _wrap(quote, qw, pen.italic, qsize)
        qy1 = qy0 + (len(qlines) - 1) * 1.25 * qsize

        def draw_quote() -> None:
            pen.group = "aside"
            # the quote's own box blanks the columns behind it: the columns jump over it
            for i, ln in enumerate(qlines):
                pen.line(qx, qy0 + i * 1.25 * qsize, ln, qsize, "italic")
            page.draw_line((qx, qy0 - 1.3 * qsize), (qx + qw, qy0 - 1.3 * qsize), width=0.8)
            page.draw_line((qx, qy1 + 0.7 * qsize), (qx + qw, qy1 + 0.7 * qsize), width=0.8)

        pen.group = "title"
        pen.line(left, top - 1.5 * size, title, size + 5, "bold")
        skip = (qy0 - 1.3 * qsize - pitch, qy1 + 0.7 * qsize + 0.5 * pitch)
        if body_first:
            body = draw_body(cols, top + size, bottom, skip)
            draw_quote()
        else:
            draw_quote()
            body = draw_body(cols, top + size, bottom, skip)
        quote_text = " ".join(qlines)
        case.truths = [[title, *t] for t in _with_aside(body, [quote_text])]
        case.truths.append([title, bands[0], quote_text, bands[1]])
    elif cls == "callout":
        # one or two columns; a bordered box with a bold title inside one column, between paragraphs
        n_cols = rng.choice([1, 2])
        cw = (right - left - (n_cols - 1) * gutter) / n_cols
        cols = [(left + k * (cw + gutter), left + k * (cw + gutter) + cw) for k in range(n_cols)]
        head, texts = aside_text(1)
        c = rng.randrange(n_cols)
        bx0, bx1 = cols[c][0] + rng.uniform(0, 10), cols[c][1] - rng.uniform(0, 10)
        inner = _wrap(texts[0], bx1 - bx0 - 14, pen.regular, asize)
        box_h = 1.6 * asize + len(inner) * 1.25 * asize + asize
        by0 = top + rng.uniform(0.25, 0.5) * (bottom - top)

        def draw_box() -> list[str]:
            pen.group = "aside"
            y = by0 + asize
            pen.line(bx0 + 7, y, head, asize + 0.5, "bold")
            y += 1.6 * asize
            for ln in inner:
                pen.line(bx0 + 7, y, ln, asize)
                y += 1.25 * asize
            page.draw_rect(
                pymupdf.Rect(bx0, by0 - 0.3 * asize, bx1, by0 + box_h), color=(0.2, 0.2, 0.2), width=0.8
            )
            return [head, " ".join(inner)]

        # the box sits in column c only: the other columns run on beside it
        pen.group = "title"
        pen.line(left, top - 1.5 * size, title, size + 5, "bold")
        lines = [(ln, i) for i, p in enumerate(paras) for ln in _wrap(p, cw, pen.regular, size)]
        out: dict[int, list[str]] = {}

        printed: list[str] = []
        jump: list[int] = []  # where the column jumps over the box, in printed lines

        def draw_cols() -> list[str]:
            k = 0
            for ci, (x0, _) in enumerate(cols):
                y = top + size
                while k < len(lines) and y <= bottom:
                    if ci == c and by0 - 1.2 * size <= y <= by0 + box_h + 1.2 * size:
                        y = by0 + box_h + 1.2 * size + pitch
                        jump.append(len(printed))
                        continue
                    text, i = lines[k]
                    pen.group = ("body", x0, i, bool(jump) and ci == c)
                    pen.line(x0, y, text, size)
                    out.setdefault(i, []).append(text)
                    printed.append(text)
                    y += pitch
                    k += 1
            return [" ".join(out[i]) for i in sorted(out)]

        if body_first:
            body = draw_cols()
            box = draw_box()
        else:
            box = draw_box()
            body = draw_cols()
        case.truths = [[title, *t] for t in _with_aside(body, box)]
        if jump and printed[jump[0] - 1][-1:] == ".":
            # the box set where a sentence ends: read where it sits is as good as between paragraphs
            case.truths.append([title, *printed[: jump[0]], *box, *printed[jump[0] :]])
    else:  # figure_caption: two columns, a full-width figure and its caption across both
        cw = (right - left - gutter) / 2
        cols = [(left, left + cw), (left + cw + gutter, right)]
        fy0 = top + rng.uniform(0.25, 0.45) * (bottom - top)
        fy1 = fy0 + rng.uniform(0.15, 0.25) * (bottom - top)
        caption = f"Figure {rng.randint(1, 9)}. {_sentence(rng, 14, 30)}"
        clines = _wrap(caption, right - left, pen.regular, asize)
        cy1 = fy1 + 1.2 * asize + (len(clines) - 1) * 1.2 * asize

        def draw_figure() -> None:
            pen.group = "aside"
            page.draw_rect(
                pymupdf.Rect(left, fy0, right, fy1), color=(0.3, 0.3, 0.3), fill=(0.85, 0.85, 0.85)
            )
            for i, ln in enumerate(clines):
                pen.line(left, fy1 + 1.2 * asize + i * 1.2 * asize, ln, asize)

        pen.group = "title"
        pen.line(left, top - 1.5 * size, title, size + 5, "bold")
        skip = (fy0 - 0.5 * pitch, cy1 + 0.3 * pitch)
        if body_first:
            body = draw_body(cols, top + size, bottom, skip)
            draw_figure()
        else:
            draw_figure()
            body = draw_body(cols, top + size, bottom, skip)
        case.truths = [[title, *t] for t in _with_aside(body, [caption])]
        case.truths.append([title, bands[0], caption, bands[1]])
    if stream == "shuffled":
        pen.flush(random.Random(f"{seed}-stream"))
    return case


# ------------------------------------------------------------------------------------ class (c)

#: how many narrow columns a ``make_columns`` page sets its prose in (drawn per seed)
COLUMN_COUNTS = [2, 3, 4, 4, 5]


def make_columns(seed: int, stream: str = "reading") -> LayoutCase:
    """A page of prose in narrow columns (a newsletter, a newspaper page, a notice): two to five
    columns of 85 to 250 points, ragged right, paragraphs set apart by a little white or by
    nothing, under a title across them. Short lines of a few words line up in every column, so a
    text-alignment table finder sees a table with a column per page column; a reader reads each
    column down, paragraphs running on from one column into the next.

    ``stream="shuffled"``: the same page, its text written in a shuffled order of pieces (the
    title, each paragraph's lines in one column), as ``make_interleaved`` does.
    """
    if stream not in STREAMS:
        raise ValueError(f"stream must be one of {STREAMS}")
    rng = random.Random(f"columns-{seed}")
    w, h = rng.choice(SIZES[:2])
    family = rng.choice(FAMILIES)
    size = rng.choice([8.0, 8.5, 9.0, 9.5, 10.0])
    pitch = size * rng.uniform(1.15, 1.35)
    n_cols = rng.choice(COLUMN_COUNTS)
    left, right = rng.uniform(36, 60), w - rng.uniform(36, 60)
    gutter = rng.uniform(10, 20)
    cw = (right - left - (n_cols - 1) * gutter) / n_cols
    top, bottom = rng.uniform(0.1, 0.14) * h, h - rng.uniform(0.08, 0.12) * h
    doc = pymupdf.open()
    page = doc.new_page(width=w, height=h)
    pen = _Pen(page, family, deferred=stream == "shuffled")
    case = LayoutCase(seed, f"columns{n_cols}", doc)
    title = rng.choice(_TOPICS)
    pen.group = "title"
    pen.line(left, top - 1.5 * size, title, size + rng.choice([4.0, 6.0]), "bold")
    paras = [_paragraph(rng, rng.randint(2, 5)) for _ in range(40)]
    cols = [(left + k * (cw + gutter), left + k * (cw + gutter) + cw) for k in range(n_cols)]
    # paragraphs apart by white (a blank line's share) or by nothing but the last line's ragged end
    lead = rng.choice([0.0, 0.4, 1.0])
    lines = [(ln, i) for i, p in enumerate(paras) for ln in _wrap(p, cw, pen.regular, size)]
    out: dict[int, list[str]] = {}
    k = 0
    for x0, _ in cols:
        y = top + size
        while k < len(lines) and y <= bottom:
            text, i = lines[k]
            pen.group = ("body", x0, i)
            pen.line(x0, y, text, size)
            out.setdefault(i, []).append(text)
            y += pitch
            k += 1
            if k < len(lines) and lines[k][1] != i:
                y += lead * pitch
    case.truths = [[title, *(" ".join(out[i]) for i in sorted(out))]]
    if stream == "shuffled":
        pen.flush(random.Random(f"columns-{seed}-stream"))
    return case


# ------------------------------------------------------------------------------------ class (d)

#: where a letterhead sets its name and contact lines; the held-out split draws from all of them,
#: the tune split only from the first two (held-out pages carry layouts never tuned on)
LETTERHEAD_LAYOUTS = ["left", "centre", "right", "split"]
_NAMES = ["Ms Shaw", "Mr Okafor", "Dr Lind", "Ms Moreau", "Mr Novak"]
_CITIES = ["Leeds LS1 4AB", "69001 Lyon", "Perth WA 6000", "Utrecht 3511 AB"]
_ROADS = ["12 Harbour Road", "4 Rue des Lilas", "77 King Street", "9 Mill Lane", "31 Station Road"]


def make_letterhead(seed: int) -> LayoutCase:
    """A one-page business letter on letterhead paper: the sender's name (bold, often larger than
    the body) over one to three lines of address and contact details in the top band, sometimes a
    rule under them, and one to three small lines of company details (registration, registered
    office, VAT, a page number) in the bottom band. Its body opens with a date and the recipient's
    address (an address in the body, which stays), a salutation, paragraphs and a signature block.

    A reader keeps the body and drops the letterhead and the company details: with one page,
    repetition cannot show them; their position, size, separation and form (contact details,
    registration numbers) do. Seeds from ``HELD_OUT`` also draw right-aligned and split letterheads
    (the name on the left, the contacts on the right), which the tune split never shows.
    """
    rng = random.Random(f"letterhead-{seed}")
    layouts = LETTERHEAD_LAYOUTS if seed >= HELD_OUT else LETTERHEAD_LAYOUTS[:2]
    layout = rng.choice(layouts)
    w, h = rng.choice(SIZES[:2])
    family = rng.choice(FAMILIES)
    size = rng.choice([9.5, 10.0, 10.5, 11.0])
    pitch = size * rng.uniform(1.2, 1.4)
    left = rng.uniform(0.09, 0.14) * w
    right = w - rng.uniform(0.09, 0.14) * w
    org = rng.choice(_ORGS)
    slug = org.split()[0].lower()
    doc = pymupdf.open()
    page = doc.new_page(width=w, height=h)
    pen = _Pen(page, family)
    case = LayoutCase(seed, f"letterhead-{layout}", doc)

    def at(text: str, y: float, s: float, style: str = "regular", where: str = layout) -> None:
        tw = pen.width(text, s, style)
        x = {"left": left, "centre": (w - tw) / 2, "right": right - tw}.get(where, left)
        pen.line(x, y, text, s, style)

    # the letterhead: a name, then contact lines (smaller than the body, or at its size)
    nsize = size + rng.choice([1.0, 2.0, 4.0, 6.0])
    csize = size - rng.choice([0.0, 1.0, 1.5, 2.0])
    contacts = [
        f"{rng.choice(_ROADS)}, {rng.choice(_CITIES)}",
        rng.choice(
            [
                f"Tel. +44 113 496 {rng.randint(1000, 9999)}",
                f"Tel +31 30 {rng.randint(100, 999)} {rng.randint(1000, 9999)} · Fax +31 30 123 4567",
                f"Phone: (555) {rng.randint(200, 999)}-{rng.randint(1000, 9999)}",
            ]
        ),
        rng.choice([f"info@{slug}.example · www.{slug}.example", f"www.{slug}.example"]),
    ][: rng.randint(1, 3)]
    y = rng.uniform(0.035, 0.055) * h + nsize
    if layout == "split":
        at(org, y, nsize, "bold", "left")
        cy = y - nsize + csize
        for c in contacts:
            at(c, cy, csize, where="right")
            cy += 1.25 * csize
        y = max(y, cy - 1.25 * csize)
    else:
        at(org, y, nsize, "bold")
        y += 0.4 * nsize
        for c in contacts:
            y += 1.25 * csize
            at(c, y, csize)
    case.furniture += [org, *contacts]
    if rng.random() < 0.5:
        page.draw_line((left, y + 0.8 * csize), (right, y + 0.8 * csize), width=0.6)

    # the bottom band: company details, small, centred or at the left
    fsize = size - rng.choice([1.5, 2.0, 2.5])
    number = f"{rng.randint(1000000, 9999999):08d}"
    details = [
        rng.choice(
            [
                f"Registered in England and Wales No. {number}",
                f"{org} · Company No. {number}",
                f"KvK {number[:8]} · BTW NL{number}B01",
            ]
        ),
        f"Registered office: {rng.choice(_ROADS)}, {rng.choice(_CITIES)}",
        rng.choice([f"VAT No. GB {number[:3]} {number[3:7]} 21", "Page 1 of 1", f"IBAN NL91 ABNA {number}"]),
    ][: rng.randint(1, 3)]
    fwhere = rng.choice(["left", "centre"])
    fy = h - rng.uniform(0.03, 0.045) * h - (len(details) - 1) * 1.25 * fsize
    bottom = fy - rng.uniform(2.5, 4.0) * size
    if rng.random() < 0.4:
        page.draw_line((left, fy - 1.3 * fsize), (right, fy - 1.3 * fsize), width=0.4)
    for d in details:
        at(d, fy, fsize, where=fwhere)
        fy += 1.25 * fsize
    case.furniture += details

    # the body: date, the recipient's address, salutation, paragraphs, signature
    blocks: list[str] = []
    y += rng.uniform(3.0, 5.0) * pitch
    date = f"{rng.randint(1, 28)} {rng.choice(_MONTHS)} {2020 + rng.randint(0, 6)}"
    at(date, y, size, where=rng.choice(["left", "right"]))
    blocks.append(date)
    y += 2 * pitch
    recipient = [rng.choice(_NAMES), rng.choice(_ORGS), rng.choice(_ROADS), rng.choice(_CITIES)]
    for ln in recipient:
        pen.line(left, y, ln, size)
        y += pitch
    blocks.append(" ".join(recipient))
    y += pitch
    salutation = f"Dear {recipient[0]},"
    pen.line(left, y, salutation, size)
    blocks.append(salutation)
    y += 2 * pitch
    closing = ["Yours sincerely,", rng.choice(_NAMES), rng.choice(["Director", "Head of Finance", "Manager"])]
    room_for_close = 4.5 * pitch
    while True:
        lines = _wrap(_paragraph(rng), right - left, pen.regular, size)
        if y + len(lines) * pitch + room_for_close > bottom:
            break
        for ln in lines:
            pen.line(left, y, ln, size)
            y += pitch
        blocks.append(" ".join(lines))
        y += 0.8 * pitch
    pen.line(left, y, closing[0], size)
    y += 2.5 * pitch
    for ln in closing[1:]:
        pen.line(left, y, ln, size)
        y += pitch
    blocks += [closing[0], " ".join(closing[1:])]
    case.truths = [blocks]
    return case


# ------------------------------------------------------------------------------------ class (e)

#: where an inset sits in its column: the body's lines beside it are set short on the other side
INSET_SIDES = ["right", "left"]


def make_inset(seed: int, stream: str = "reading") -> LayoutCase:
    """A page of one or two columns with an inset (a pull quote in larger italic between rules, or
    a shaded note) set into one column at one side: the body's lines beside it are set short, so
    each of the inset's lines shares its baseline band with a line of body text, and a sentence of
    the body runs on past it. A reader keeps each body line whole and reads the inset as one unit
    (before, between or after the paragraphs); reading across the row mixes their words.

    ``stream="shuffled"``: the same page written in a shuffled order of pieces (as
    ``make_interleaved``)."""
    if stream not in STREAMS:
        raise ValueError(f"stream must be one of {STREAMS}")
    rng = random.Random(f"inset-{seed}")
    w, h = rng.choice(SIZES[:2])
    family = rng.choice(FAMILIES)
    size = rng.choice([9.0, 9.5, 10.0, 10.5])
    pitch = size * rng.uniform(1.2, 1.4)
    left, right = rng.uniform(50, 72), w - rng.uniform(50, 72)
    top, bottom = rng.uniform(0.1, 0.14) * h, h - rng.uniform(0.1, 0.14) * h
    gutter = rng.uniform(14, 24)
    n_cols = rng.choice([1, 1, 2])
    cw = (right - left - (n_cols - 1) * gutter) / n_cols
    cols = [(left + k * (cw + gutter), left + k * (cw + gutter) + cw) for k in range(n_cols)]
    side = rng.choice(INSET_SIDES)
    kind = rng.choice(["quote", "note"])
    doc = pymupdf.open()
    page = doc.new_page(width=w, height=h)
    pen = _Pen(page, family, deferred=stream == "shuffled")
    case = LayoutCase(seed, f"inset-{kind}-{side}-{n_cols}col", doc)
    title = rng.choice(_TOPICS)
    pen.group = "title"
    pen.line(left, top - 1.5 * size, title, size + 5, "bold")

    # the inset: in the first column, its width a share of the column's, at a height drawn
    ix0, ix1 = cols[0]
    iw = rng.uniform(0.38, 0.5) * cw
    bx0, bx1 = (ix1 - iw, ix1) if side == "right" else (ix0, ix0 + iw)
    isize = size + (rng.choice([2.0, 3.0, 4.0]) if kind == "quote" else -rng.choice([0.5, 1.0]))
    style = "italic" if kind == "quote" else "regular"
    text = f"“{_sentence(rng, 8, 14)}”" if kind == "quote" else _paragraph(rng, 2)
    pad = 6.0
    ilines = _wrap(text, iw - 2 * pad, getattr(pen, style), isize)
    ipitch = 1.25 * isize
    iy0 = top + size + rng.uniform(0.2, 0.45) * (bottom - top)
    iy1 = iy0 + (len(ilines) - 1) * ipitch
    # the band of the column the body's lines must keep clear of (box and padding)
    clear = (iy0 - isize - pad, iy1 + 0.5 * isize + pad)

    def draw_inset() -> None:
        pen.group = "aside"
        if kind == "quote":
            page.draw_line((bx0, clear[0] + 2), (bx1, clear[0] + 2), width=0.8)
            page.draw_line((bx0, clear[1] - 2), (bx1, clear[1] - 2), width=0.8)
        else:
            page.draw_rect(
                pymupdf.Rect(bx0, clear[0] + 2, bx1, clear[1] - 2),
                color=(0.4, 0.4, 0.4),
                fill=(0.9, 0.9, 0.95),
                overlay=False,
            )
        for i, ln in enumerate(ilines):
            pen.line(bx0 + pad, iy0 + i * ipitch, ln, isize, style)

    body_first = rng.random() < 0.6
    if not body_first:
        draw_inset()
    paras = [_paragraph(rng, rng.randint(3, 6)) for _ in range(14)]
    words = [(wd, i) for i, p in enumerate(paras) for wd in p.split()]
    out: dict[int, list[str]] = {}
    k = 0
    beside = 0
    for c, (x0, x1) in enumerate(cols):
        y = top + size
        while k < len(words) and y <= bottom:
            short = c == 0 and clear[0] <= y <= clear[1] + size
            lx0, lx1 = (x0, bx0 - gutter / 2) if short and side == "right" else (x0, x1)
            if short and side == "left":
                lx0 = bx1 + gutter / 2
            beside += short
            i = words[k][1]
            line = words[k][0]
            k += 1
            while k < len(words) and words[k][1] == i:
                trial = f"{line} {words[k][0]}"
                if pen.width(trial, size) > lx1 - lx0:
                    break
                line = trial
                k += 1
            pen.group = ("body", x0, i, short)
            pen.line(lx0, y, line, size)
            out.setdefault(i, []).append(line)
            y += pitch
    if body_first:
        draw_inset()
    body = [" ".join(out[i]) for i in sorted(out)]
    case.truths = [[title, *t] for t in _with_aside(body, [" ".join(ilines)])]
    if stream == "shuffled":
        pen.flush(random.Random(f"inset-{seed}-stream"))
    return case


# ------------------------------------------------------------------------------------ class (f)

#: how a scan carries its OCR layer: drawn invisible over the image (render mode 3: Tesseract's
#: and OCRmyPDF's PDFs), or drawn first and covered by the image (scanner and archive software)
OCR_LAYER_MODES = ["invisible", "under"]


def make_ocr_layer(seed: int, mode: str | None = None) -> LayoutCase:
    """A scanned page of prose with its OCR layer: the page of ``make_columns`` as an image, its
    lines laid over (or under) it as text a reader does not see, each line's size the OCR
    producer's fit to the line's box (the print's size times 0.85 to 1.18, line by line) and its
    width stretched to the line's width on the image, as an OCR layer is. The truth is the page's.
    """
    base = make_columns(seed)
    rng = random.Random(f"ocr-layer-{seed}")
    mode = mode or rng.choice(OCR_LAYER_MODES)
    if mode not in OCR_LAYER_MODES:
        raise ValueError(f"mode must be one of {OCR_LAYER_MODES}")
    src = base.doc[0]
    scan = src.get_pixmap(dpi=rng.choice([100, 150]), colorspace=pymupdf.csGRAY)
    doc = pymupdf.open()
    page = doc.new_page(width=src.rect.width, height=src.rect.height)

    def layer() -> None:
        for block in src.get_text("dict")["blocks"]:
            for ln in block.get("lines", []):
                text = "".join(s["text"] for s in ln["spans"]).strip()
                if not text:
                    continue
                first = ln["spans"][0]
                size = first["size"] * rng.uniform(0.85, 1.18)
                origin = pymupdf.Point(first["origin"])
                stretch = (ln["bbox"][2] - ln["bbox"][0]) / pymupdf.get_text_length(text, "helv", size)
                page.insert_text(
                    origin,
                    text,
                    fontname="helv",
                    fontsize=size,
                    render_mode=3 if mode == "invisible" else 0,
                    color=(1, 1, 1),
                    morph=(origin, pymupdf.Matrix(stretch, 0, 0, 1, 0, 0)),
                )

    if mode == "under":
        layer()
    page.insert_image(page.rect, pixmap=scan)
    if mode == "invisible":
        layer()
    return LayoutCase(seed, f"ocr_layer_{mode}_{base.cls}", doc, truths=base.truths)
