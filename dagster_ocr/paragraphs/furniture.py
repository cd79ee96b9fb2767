"""What is not body text: page numbers, running headers and footers, table regions; drop caps."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from dagster_ocr.conservation import compact
from dagster_ocr.layout import v_overlap
from dagster_ocr.model import BBox, Line, Page, Table
from dagster_ocr.paragraphs.patterns import _CAPTION_RE
from dagster_ocr.paragraphs.settings import ParagraphSettings

_DIGITS = re.compile(r"\d+")
# "12", "- 12 -", "7-45" (chapter-page), "iv": a page number standing alone
_PAGE_NUMBER_RE = re.compile(
    r"(?:[-–—]\s*)?(?:\d{1,4}(?:[-–.]\d{1,4})?|[ivxlcdm]{1,6}|[IVXLCDM]{1,6})(?:\s*[-–—])?"
)
_WS = re.compile(r"\s+")


#: full-width forms (U+FF01-FF5E, the ideographic space) to their ASCII characters
_HALF_WIDTH = {**{c: c - 0xFEE0 for c in range(0xFF01, 0xFF5F)}, 0x3000: 0x20}


def _is_page_number(text: str) -> bool:
    """Is ``text`` a page number standing alone (``_PAGE_NUMBER_RE``)? Full-width digits and dashes
    ("－15 －", "１２"), which CJK documents set their page numbers in, read as the ASCII ones."""
    return bool(_PAGE_NUMBER_RE.fullmatch(text.translate(_HALF_WIDTH).strip()))


#: how close (in font sizes) a neighbour on the same baseline makes a number part of a line
_TIGHT = 1.5


def _chars(text: str) -> int:
    """The characters of ``text`` as conservation counts them: every one but whitespace."""
    # str.split() splits at exactly the characters str.isspace() is true of (as conservation's own)
    return sum(map(len, text.split()))


def _norm_furniture(text: str) -> str:
    return _WS.sub(" ", _DIGITS.sub("#", text)).strip().lower()


def _body_between_bands(page: Page, settings: ParagraphSettings) -> tuple[list[Line], float]:
    """The page's text lines between its header and footer bands, and their median size."""
    top, bottom = _zones(page, settings)
    body = [ln for ln in page.lines if ln.text.strip() and ln.bbox[1] > top and ln.bbox[3] < bottom]
    sizes = sorted(ln.size for ln in body)
    return body, sizes[len(sizes) // 2] if sizes else 0.0


def _zones(page: Page, settings: ParagraphSettings) -> tuple[float, float]:
    return page.height * settings.margin_zone, page.height * (1 - settings.margin_zone)


def _attached_to_body(
    zone_lines: list[Line], body_lines: list[Line], settings: ParagraphSettings
) -> list[bool]:
    """For each margin-zone line: is it part of the body block (reached from a line outside the
    margin zones through lines that overlap horizontally and sit at most ``body_attach_gap`` line
    heights apart)? A running head stands apart from the text under it; a body line does not."""
    attached = [False] * len(zone_lines)
    frontier = list(body_lines)
    while frontier:
        reached: list[Line] = []
        for i, ln in enumerate(zone_lines):
            if attached[i]:
                continue
            x0, y0, x1, y1 = ln.bbox
            for other in frontier:
                ox0, oy0, ox1, oy1 = other.bbox
                if min(x1, ox1) - max(x0, ox0) <= 0:
                    continue
                gap = max(oy0 - y1, y0 - oy1)
                if gap <= settings.body_attach_gap * max(y1 - y0, oy1 - oy0):
                    attached[i] = True
                    reached.append(ln)
                    break
        frontier = reached
    return attached


def _body_shaped(line: Line, measure: float, settings: ParagraphSettings) -> bool:
    """A line shaped like running prose: several words, and ending a clause or sentence or as
    wide as the body's text lines (``measure``: the width of the page's body block). A centred
    report title or a short running head is neither."""
    text = line.text.strip()
    return len(text.split()) >= settings.body_line_min_words and (
        text[-1:] in ".!?;:,"
        or (measure > 0 and line.bbox[2] - line.bbox[0] >= settings.body_line_min_share * measure)
    )


@dataclass(frozen=True, slots=True)
class _Repeated:
    """What repetition makes furniture in a document, and what share of its text that would be."""

    #: (zone, normalised text) of the running headers and footers
    keys: frozenset[tuple[str, str]]
    #: characters (non-whitespace) of the document's lines
    chars: int
    #: ... of them in the running headers and footers and the label stage's page-number lines
    furniture_chars: int
    #: the document's pages
    pages: int = 0

    def too_short(self, settings: ParagraphSettings) -> bool:
        """Has the document too few pages for a running head to recur (``repeat_min_pages``)?"""
        return self.pages < settings.repeat_min_pages

    def takes_the_body(self, settings: ParagraphSettings) -> bool:
        """Would furniture take all or most of the document's text? Then what repeats is the body
        (a form, a form letter, a short contract whose pages share their lines), not furniture."""
        return self.chars > 0 and self.furniture_chars > settings.furniture_max_share * self.chars


def _repeated_furniture(
    pages: Iterable[Page], number_lines: dict[int, int], settings: ParagraphSettings
) -> _Repeated:
    """(zone, normalised text) of the header and footer lines repeated on enough pages, and the
    share of the document's characters they and the page-number lines hold.

    ``number_lines``: page index → the line the label stage read the page number from (never a
    running head). One pass over the pages, keeping only the margin lines' normalised texts and
    character counts.

    Repetition alone is weak evidence in a short document (a form's or a template's body lines
    recur at the same place on each of three pages): an occurrence that is body-shaped (several
    words, as wide as the body or ending in punctuation) *and* part of the body block (see
    ``_attached_to_body``) does not count towards the pages a running head needs.
    """
    zone_pages: dict[tuple[str, str], set[int]] = defaultdict(set)
    zone_chars: dict[tuple[str, str], int] = defaultdict(int)
    n_pages = chars = number_chars = 0
    for page in pages:
        n_pages += 1
        top, bottom = _zones(page, settings)
        claimed = number_lines.get(page.index)
        zone: list[tuple[str, Line]] = []
        body: list[Line] = []
        for i, line in enumerate(page.lines):
            if not line.text.strip():
                continue
            n = _chars(line.text)
            chars += n
            if i == claimed:
                number_chars += n
            if line.bbox[1] <= top:
                kind = "header"
            elif line.bbox[3] >= bottom:
                kind = "footer"
            else:
                body.append(line)
                continue
            if i != claimed:
                zone.append((kind, line))
        measure = max((b.bbox[2] for b in body), default=0.0) - min((b.bbox[0] for b in body), default=0.0)
        shaped = [_body_shaped(ln, measure, settings) for _, ln in zone]
        attached = (
            _attached_to_body([ln for _, ln in zone], body, settings) if any(shaped) else [False] * len(zone)
        )
        for (kind, line), sh, at in zip(zone, shaped, attached, strict=True):
            key = (kind, _norm_furniture(line.text))
            # every occurrence counts towards the share furniture would take; only those not
            # shaped like and attached to the body count towards the pages a running head needs
            zone_chars[key] += _chars(line.text)
            if not (sh and at):
                zone_pages[key].add(page.index)
    need = max(settings.repeat_min_pages, settings.repeat_min_share * n_pages)
    keys = frozenset(key for key, seen in zone_pages.items() if len(seen) >= need)
    return _Repeated(keys, chars, number_chars + sum(zone_chars[k] for k in keys), n_pages)


def _text_beyond(page: Page, index: int, zone: str, repeated: set[tuple[str, str]]) -> bool:
    """Is there a text line wholly beyond line ``index`` toward its zone's page edge (under it for
    the footer zone, over it for the header zone) that shares its horizontal extent and is not a
    running header or footer itself?

    A page number is the outermost text of its margin: body text under a "footer" number says
    the number is part of the body (a formula's index, a figure's tick label) that happens to
    reach into the margin zone."""
    x0, y0, x1, y1 = page.lines[index].bbox
    for j, other in enumerate(page.lines):
        if j == index or not other.text.strip() or (zone, _norm_furniture(other.text)) in repeated:
            continue
        ox0, oy0, ox1, oy1 = other.bbox
        if min(x1, ox1) - max(x0, ox0) <= 0:
            continue
        if (zone == "footer" and oy0 >= y1) or (zone == "header" and oy1 <= y0):
            return True
    return False


#: words that may stand tight beside a page number ("Page 7", "S. 7", "- 7 -")
_PAGE_WORD_RE = re.compile(r"(?i)(?:page|pages|pg\.?|p\.|s\.|seite|pagina|página|стр\.?|[-–—|/]+)")


def _set_in_a_line(page: Page, index: int) -> bool:
    """Is line ``index`` a fragment of a longer visual line: another text line on its baseline
    within ``_TIGHT`` font sizes of it (other than a page word such as "Page")? A page number
    stands apart; a number set tight in a line of text is part of that text."""
    line = page.lines[index]
    x0, _, x1, _ = line.bbox
    reach = _TIGHT * max(line.size, line.bbox[3] - line.bbox[1], 1.0)
    for j, other in enumerate(page.lines):
        text = other.text.strip()
        if j == index or not text or _PAGE_WORD_RE.fullmatch(text):
            continue
        h = min(line.bbox[3] - line.bbox[1], other.bbox[3] - other.bbox[1])
        if v_overlap(line.bbox, other.bbox) <= 0.5 * h:
            continue
        gap = max(other.bbox[0] - x1, x0 - other.bbox[2])
        if gap < reach:
            return True
    return False


#: a footnote's marker ("*", "**", "†", "1 ", "(2)", "³"): a note at the page's foot is body text
_FOOTNOTE_RE = re.compile(r"^\s*(?:\*+|[†‡§¶]|\(?\d{1,2}\)|\d{1,2}\s|[¹²³⁴⁵⁶⁷⁸⁹⁰])")


def _edge_stamps(page: Page, marks: dict[int, str], settings: ParagraphSettings) -> dict[int, str]:
    """Line index -> "header" / "footer" for stamps at the page's very edge, repeated or not.

    A line wholly within ``edge_zone`` of the top or bottom edge, set no larger than the body
    and standing apart from it (``_attached_to_body``), is what a publisher or a repository
    stamps on a page ("Downloaded from ... on July 12, 2017", "Authorized licensed use limited
    to ...", an arXiv identifier): furniture, even on a single page where repetition cannot show
    it. Body text does not run into the outer few percent of a page; a tightly cropped page's
    text that does is attached to the body block below it and stays, and so does a footnote
    (a line opening with a note marker).
    """
    top, bottom = page.height * settings.edge_zone, page.height * (1 - settings.edge_zone)
    edge = [
        i
        for i, ln in enumerate(page.lines)
        if i not in marks
        and ln.text.strip()
        and (ln.bbox[3] <= top or ln.bbox[1] >= bottom)
        and not _FOOTNOTE_RE.match(ln.text)
    ]
    if not edge:
        return {}
    body, body_size = _body_between_bands(page, settings)
    if not body:
        return {}
    lines = [page.lines[i] for i in edge]
    attached = _attached_to_body(lines, body, settings)
    return {
        i: "header" if ln.bbox[3] <= top else "footer"
        for i, ln, at in zip(edge, lines, attached, strict=True)
        if not at and ln.size <= body_size + 0.5
    }


#: what a running head or foot says and body text rarely does on its own line: a page reference
#: ("Page 3", "3 of 5", "12 | Title", "Title · 12"), a date, an address on the web or a mail
#: address, a copyright, a print stamp, a reference code
_FURNITURE_FORM = re.compile(
    r"(?i)\bpage\s+\d|\b\d+\s+of\s+\d+\b|^\d{1,4}\s*[|·•–—]|[|·•–—]\s*\d{1,4}$"
    r"|\b\d{1,2}[./-]\d{1,2}[./-]\d{2,4}\b"
    r"|\b\d{1,2}\s+(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+\d{4}\b"
    r"|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+\d{1,2},?\s+\d{4}\b"
    r"|\bwww\.|https?://|\S@\S|\bdoi\b|©|\(c\)\s*\d{4}|\bcopyright\b|all rights reserved"
    r"|\bprinted\b|\bconfidential\b|\b(?:ref|rev|no)\.\s*\S*\d|\b[A-Z]{2,}-\d+"
)


#: what a letterhead's contact lines say: a telephone or fax number, a mail or web address, a
#: postal address (a house number and street, a comma, a place with a postal code: "4 Rue des
#: Lilas, 69001 Lyon", "Hauptstraße 5, 10115 Berlin")
_CONTACT_FORM = re.compile(
    r"(?i)\b(?:tel|phone|fax|mobile)\b|\+\d{1,3}[\s(]\d|\(\d{3}\)\s*\d{3}-\d{4}|\S@\S|\bwww\.|https?://"
    r"|^\s*\d{1,5}[a-z]?\s+[^\d,]+,[^,]*\d{3}|^[^\d,]+\s\d{1,5}[a-z]?,\s*\S*\d{4}"
)


def _letterhead_name(outer: list[tuple[int, Line]], body_size: float) -> Line | None:
    """The name of a letterhead, when the header band's outermost block is one: exactly one of its
    lines set larger than the body or bold (the sender's name: at most six words, ending no
    clause), the others no larger than the body and not bold, one of them a contact line
    (``_CONTACT_FORM``: a telephone number, a mail, web or postal address). A report's title over a
    date or a subtitle has no contact line under it; a memo's heading block has no line set apart by size
    or weight."""
    strong = [ln for _, ln in outer if ln.size > body_size + 0.5 or ln.bold]
    if len(strong) != 1 or len(outer) < 2:
        return None
    name = strong[0]
    text = name.text.strip()
    if len(text.split()) > 6 or text[-1:] in ".!?:;,":
        return None
    rest = [ln for _, ln in outer if ln is not name]
    if any(ln.size > body_size + 0.5 for ln in rest):
        return None
    return name if any(_CONTACT_FORM.search(ln.text) for ln in rest) else None


def _usual_pitch(lines: list[Line]) -> float:
    """The usual distance between consecutive baselines of ``lines`` within a paragraph (their
    lower quartile: the wider gaps between paragraphs do not count; lines on one baseline count
    once); 0 with fewer than two baselines."""
    baselines: list[float] = []
    for ln in sorted(lines, key=lambda ln: ln.bbox[3]):
        if not baselines or ln.bbox[3] - baselines[-1] >= 0.5 * max(ln.bbox[3] - ln.bbox[1], 1.0):
            baselines.append(ln.bbox[3])
    gaps = sorted(b - a for a, b in zip(baselines, baselines[1:], strict=False))
    return gaps[len(gaps) // 4] if gaps else 0.0


def _band_stamps(page: Page, marks: dict[int, str], settings: ParagraphSettings) -> dict[int, str]:
    """Line index -> "header" / "footer" for running heads and feet a page shows by its position and
    their form alone: on a document too short for repetition to show them (see
    ``_Repeated.too_short``).

    A line in a margin band (``margin_zone``) is furniture when it stands apart from the body:
    not part of the body block (``_attached_to_body``; a footnote's lines, which open with a note
    marker and do not read as furniture, count as body; a line set smaller than the body that reads
    as furniture by its form is judged by its baseline alone, as the gap test reaches a foot set
    half a line under the body or a stamp over a title's large type) and further from the nearest line of the
    body block than ``band_apart_pitches`` times the page's usual line pitch (a heading or a first
    line that opens the body sits at the body's own spacing, however short the page). It is set no
    larger than the body and not bold at its size (a heading), is no fragment of a longer line
    (``_set_in_a_line``) nor a figure's or table's caption (``_CAPTION_RE``: a figure between it
    and the body sets it apart), and belongs to the band's outermost block of lines standing apart,
    of at most two visual lines (a memo's "To / From / Subject" block or an address is a block of
    its own). And it reads as furniture: one of ``_FURNITURE_FORM`` or a bare page number
    (full-width forms too: ``_is_page_number``), or, in the header band, a short line that ends no
    clause and is not shaped like prose (``_body_shaped``: a running title, a letterhead's address,
    a date); in the footer band, where a letter's signature stands apart too, the form or a line
    set smaller than the body.
    """
    top, bottom = _zones(page, settings)
    body, body_size = _body_between_bands(page, settings)
    if not body:
        return {}
    measure = max(b.bbox[2] for b in body) - min(b.bbox[0] for b in body)
    texts = [ln for ln in page.lines if ln.text.strip()]
    pitch = _usual_pitch(body) if len({round(b.bbox[3]) for b in body}) > 1 else _usual_pitch(texts)
    band = [
        i
        for i, ln in enumerate(page.lines)
        if i not in marks and ln.text.strip() and (ln.bbox[1] <= top or ln.bbox[3] >= bottom)
    ]
    lines = [page.lines[i] for i in band]
    notes = [
        ln
        for ln in lines
        if ln.bbox[1] > top and _FOOTNOTE_RE.match(ln.text) and not _FURNITURE_FORM.search(ln.text)
    ]

    def apart_from(ln: Line, block: list[Line]) -> bool:
        nearest = min(abs(ln.bbox[3] - b.bbox[3]) for b in block)
        return pitch <= 0 or nearest > settings.band_apart_pitches * pitch

    # a line set smaller than the body that reads as furniture by its form (a print stamp, a
    # reference code, a date or a page reference; no footnote) and whose baseline stands apart
    # from the body block is no part of it, though the gap test reaches it: a running foot set
    # half a line under the last body line, a stamp over a title whose large type reaches far
    formed = [
        ln.size < body_size - 0.5
        and not ln.bold
        and not _FOOTNOTE_RE.match(ln.text)
        and bool(_FURNITURE_FORM.search(ln.text) or _is_page_number(ln.text.strip()))
        for ln in lines
    ]
    cut: set[int] = set()
    if any(formed):  # (most pages have none: the body block below is then the one measured here)
        plain = [ln for ln, f in zip(lines, formed, strict=True) if not f]
        plain_block = body + [
            ln for ln, at in zip(plain, _attached_to_body(plain, body, settings), strict=True) if at
        ]
        cut = {id(ln) for ln, f in zip(lines, formed, strict=True) if f and apart_from(ln, plain_block)}
    kept = [ln for ln in lines if id(ln) not in cut]
    attached_kept = {
        id(ln): at for ln, at in zip(kept, _attached_to_body(kept, body + notes, settings), strict=True)
    }
    attached = [attached_kept.get(id(ln), False) for ln in lines]

    # the body block: the lines between the bands and the band lines they reach (a footnote, which
    # sits apart from the body too, is not measured from)
    reached = _attached_to_body(kept, body, settings)
    block = body + [ln for ln, at in zip(kept, reached, strict=True) if at]

    def apart(ln: Line) -> bool:
        return apart_from(ln, block)

    out: dict[int, str] = {}
    for zone in ("header", "footer"):
        standing = [
            (i, ln)
            for i, ln, at in zip(band, lines, attached, strict=True)
            if not at and (ln.bbox[1] <= top if zone == "header" else ln.bbox[3] >= bottom)
        ]
        # only the block of lines outermost in the band (toward the page's edge) can be a running
        # head or foot: a memo's heading block or a footnote under it is a block of its own
        standing.sort(key=lambda item: item[1].bbox[3], reverse=zone == "footer")
        outer: list[tuple[int, Line]] = []
        reach = settings.band_apart_pitches * max(pitch, 1.0)
        for i, ln in standing:
            if outer and abs(ln.bbox[3] - outer[-1][1].bbox[3]) > reach:
                break
            outer.append((i, ln))
        baselines: list[float] = []
        for _, ln in outer:
            if not any(abs(ln.bbox[3] - b) < 0.5 * max(ln.bbox[3] - ln.bbox[1], 1.0) for b in baselines):
                baselines.append(ln.bbox[3])
        name = _letterhead_name(outer, body_size) if zone == "header" else None
        rest = [ln for _, ln in outer if ln is not name]
        # a block of more than two lines is a running head or foot only when it is a letterhead
        # (a name over contact lines), is set apart from the body by size (a letter's company
        # details at the foot, set smaller than the body) or every line of it reads as furniture
        if len(baselines) > 2 and not (
            name is not None
            or all(ln.size < body_size - 0.5 for ln in rest)
            or all(_FURNITURE_FORM.search(ln.text) or _CONTACT_FORM.search(ln.text) for ln in rest)
        ):
            continue
        for i, ln in outer:
            text = ln.text.strip()
            if ln is name:
                if apart(ln) and not _set_in_a_line(page, i):
                    out[i] = zone
                continue
            if ln.size > body_size + 0.5 or (ln.bold and ln.size >= body_size - 0.5) or not apart(ln):
                continue
            if _set_in_a_line(page, i):  # a fragment of a longer line of text ("p <" "0.0005")
                continue
            if _CAPTION_RE.match(text):  # a figure's caption stands apart from the body too
                continue
            furniture = bool(_FURNITURE_FORM.search(text)) or _is_page_number(text)
            furniture = furniture or (name is not None and bool(_CONTACT_FORM.search(text)))
            if zone == "header" and not furniture:
                furniture = (
                    len(text.split()) <= 12
                    and text[-1:] not in ".!?:;,"
                    and not _body_shaped(ln, measure, settings)
                )
            elif zone == "footer" and not furniture:
                furniture = ln.size < body_size - 0.5
            if furniture:
                out[i] = zone
    return out


def _page_furniture(
    page: Page,
    repeated: frozenset[tuple[str, str]],
    number_line: int | None,
    settings: ParagraphSettings,
    short_document: bool = False,
) -> dict[int, str]:
    """Line index → "page_number", "header" or "footer" for the page's furniture lines.

    ``short_document``: the document has too few pages for repetition to show a running head;
    lines in the margin bands are then judged by their position and form (``_band_stamps``)."""
    marks: dict[int, str] = {}
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
        elif (
            _is_page_number(text)
            and not _text_beyond(page, i, zone, repeated)
            and not _set_in_a_line(page, i)
        ):
            # a bare number in the margin is a page number the label stage did not claim; with
            # text set beyond it (below a footer-zone number, above a header-zone one) or text
            # set tight beside it it is a fragment of the body (a subscript, an equation
            # number, a statistic "p < 0.0005" whose parts are separate text-layer lines)
            marks[i] = "page_number"
    marks.update(_edge_stamps(page, marks, settings))
    if short_document:
        marks.update(_band_stamps(page, marks, settings))
    # a running head printed on the same line as the page number ("Title ... 9")
    numbers = [page.lines[i].bbox for i, kind in marks.items() if kind == "page_number"]
    for i, line in enumerate(page.lines):
        if i in marks or not line.text.strip():
            continue
        zone = "header" if line.bbox[1] <= top else "footer" if line.bbox[3] >= bottom else None
        if zone and any(v_overlap(line.bbox, n) > 0.5 * (line.bbox[3] - line.bbox[1]) for n in numbers):
            marks[i] = zone
    return marks


def _keep_page_body(page: Page, marks: dict[int, str], held: set[int]) -> dict[int, str]:
    """``marks`` less what the page needs to keep body text: furniture never takes a page's body.

    A page whose every text line would be furniture (``held``: lines a table holds, which are
    the page's content) is not a page of furniture: it is a page whose body repeats (a form, a
    form letter) or sits in the margin bands (a slip, a short last page). Its lines stay body
    text, but for bare page numbers ("7", "- iv -"), which are no body text on any page."""
    if not marks or any(i not in marks and (i in held or ln.text.strip()) for i, ln in enumerate(page.lines)):
        return marks
    return {i: kind for i, kind in marks.items() if _is_page_number(page.lines[i].text)}


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


def _word_boxes(line: Line) -> list[tuple[str, BBox]]:
    """The line's words with their boxes: from its spans (each character an equal share of its
    span's width), or shares of the line's box when the spans do not spell the line."""
    chars: list[tuple[str, BBox]] = []
    if line.spans and "".join(sp.text for sp in line.spans) == line.text:
        for sp in line.spans:
            x0, y0, x1, y1 = sp.bbox
            step = (x1 - x0) / max(len(sp.text), 1)
            chars += [(c, (x0 + k * step, y0, x0 + (k + 1) * step, y1)) for k, c in enumerate(sp.text)]
    else:
        x0, y0, x1, y1 = line.bbox
        step = (x1 - x0) / max(len(line.text), 1)
        chars = [(c, (x0 + k * step, y0, x0 + (k + 1) * step, y1)) for k, c in enumerate(line.text)]
    out: list[tuple[str, BBox]] = []
    word: list[tuple[str, BBox]] = []
    for c, box in [*chars, (" ", (0.0, 0.0, 0.0, 0.0))]:
        if not c.isspace():
            word.append((c, box))
        elif word:
            boxes = [b for _, b in word]
            text = "".join(ch for ch, _ in word)
            out.append(
                (text, (boxes[0][0], min(b[1] for b in boxes), boxes[-1][2], max(b[3] for b in boxes)))
            )
            word = []
    return out


def _overlaps(box: BBox, regions: list[BBox]) -> bool:
    return any(
        min(box[2], r[2]) > max(box[0], r[0]) and min(box[3], r[3]) > max(box[1], r[1]) for r in regions
    )


def _centre_in(box: BBox, regions: list[BBox]) -> bool:
    cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    return any(r[0] <= cx <= r[2] and r[1] <= cy <= r[3] for r in regions)


@dataclass(slots=True)
class _TableText:
    """The tables on one page as the paragraph stage sees them: their regions and the text they hold.

    A line inside a region belongs to the table only when the table holds its words (a cell, or a
    repeat the merge kept once: ``Table.repeats``); a line the finder left out of every cell (an
    axis label, a note, a paragraph the region swallowed) is body text, so a table never costs text.
    """

    regions: list[BBox] = field(default_factory=list)
    #: the compacted texts of the page's cells and repeats, joined by a separator
    held: str = ""

    def add(self, bbox: BBox | None, texts: list[str]) -> None:
        if bbox is not None:
            self.regions.append(bbox)
        held = "\x01".join(t for t in map(compact, texts) if t)
        self.held = f"{self.held}\x01{held}" if self.held else held

    def _take(self, text: str, whole: bool = False) -> bool:
        """Consume the first occurrence of ``text`` (``whole``: only a whole cell); False if none."""
        if whole:
            at = f"\x01{self.held}\x01".find(f"\x01{text}\x01")
        else:
            at = self.held.find(text)
        if not text or at < 0:
            return False
        self.held = self.held[:at] + "\x00" * len(text) + self.held[at + len(text) :]
        return True

    def split(self, lines: list[Line], settings: ParagraphSettings) -> dict[int, str]:
        """Line index -> the words of that line the page's tables do not hold ("": a table line),
        for the lines inside a region and those reaching into one with a word the tables hold;
        other lines are not listed.

        Matched as the conservation check matches (``conservation``), each held text taken once:
        lines that are a whole cell first, then lines inside a cell, longest first, then word by
        word (a word inside a cell, then one the finder cut over two cells, then one whose every
        character a cell still holds); a word no cell holds (a note, a caption or a sentence the
        region swallowed), or one another line's words took already, stays body text, so a table
        never costs text and holds nothing twice.
        """
        inside = {
            i: compact(ln.text)
            for i, ln in enumerate(lines)
            if ln.text.strip() and _in_table(ln, self.regions, settings)
        }
        # a line that only reaches into a region (a header run on past the last column rule, a
        # label astride the grid's edge): the words whose middle is inside may be a cell's, as
        # the table finder puts a word in the cell that holds its middle; the rest is body text
        partial = {
            i: [_centre_in(box, self.regions) for _, box in _word_boxes(ln)]
            for i, ln in enumerate(lines)
            if i not in inside and ln.text.strip() and _overlaps(ln.bbox, self.regions)
        }
        partial = {
            i: flags
            for i, flags in partial.items()
            if any(flags) and len(flags) == len(lines[i].text.split())
        }
        out: dict[int, str] = {}
        for i, text in inside.items():
            if not text or self._take(text, whole=True):  # a dash or dot filler: the region's
                out[i] = ""
        for i in sorted(set(inside) - set(out), key=lambda k: -len(inside[k])):
            if self._take(inside[i]):
                out[i] = ""
        for i in sorted((set(inside) - set(out)) | set(partial)):
            rest = []
            words = lines[i].text.split()
            within = partial.get(i, [True] * len(words))
            for word, held in zip(words, within, strict=True):
                w = compact(word)
                if held and (not w or self._take(w) or self._take_across(w) or self._take_chars(w)):
                    continue
                rest.append(word)
            if i in inside or len(rest) < len(words):
                out[i] = " ".join(rest)
        return out

    def _take_chars(self, text: str) -> bool:
        """Consume ``text`` one character at a time where the cells hold every one of them (the
        finder cut the word over cells out of order, or a subscript moved): the last resort of the
        conservation check too, so what it finds there it does not find twice."""
        held = list(self.held)
        for c in text:
            at = self.held.find(c)
            while at >= 0 and held[at] != c:
                at = self.held.find(c, at + 1)
            if at < 0:
                return False
            held[at] = "\x00"
        self.held = "".join(held)
        return True

    def _take_across(self, text: str) -> bool:
        """Consume ``text`` where the finder cut it over two cells (a word split at a column edge):
        found with the separators between the cells left out, each of its characters taken once."""
        start = self.held.replace("\x01", "").find(text)
        if start < 0:
            return False
        at = [k for k, c in enumerate(self.held) if c != "\x01"]
        held = list(self.held)
        for k in at[start : start + len(text)]:
            held[k] = "\x00"
        self.held = "".join(held)
        return True
