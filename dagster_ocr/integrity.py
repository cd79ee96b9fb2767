"""What a document's pages hold, and whether the file was damaged: read by the text stage.

A damaged PDF is often not refused: MuPDF repairs it (rebuilds the cross-reference table by
scanning for objects) and opens it, and the pages whose objects were lost come out empty, with no
error anywhere. This module records the evidence, so the quality gate can tell such pages from
deliberately blank ones (``pages_complete`` in :mod:`dagster_ocr.quality`):

* ``repaired``: MuPDF had to repair the file (``Document.is_repaired``, read after every page was
  loaded: repair also happens lazily, when a page's objects are first read);
* ``page_content`` for each page without text: ``image`` (an image is drawn on it), ``graphics``
  (vector drawings or annotations only) or ``blank`` (nothing is drawn at all);
* ``damaged_pages``: pages whose objects were lost (see ``page_damage``): the page object itself,
  a content stream that is missing (or not a stream) or whose Flate data does not decompress, and
  in a repaired file an image, form or font its content stream draws that the file no longer
  holds. Checked on every page without text, and on every page of a repaired file (there a page
  with some text may have lost the rest); on a sound file's text pages the check is skipped (it
  would decompress every content stream again: about 5% of the text stage on a 117-page corpus PDF);
* ``blank_reasons``: why each empty page is empty, by mechanism, never by how many there are
  (issue 40: a duplex scan is often more than half blank backs): ``damaged`` (no text and its
  objects were lost, as above), ``no ink`` (present and sound, and nothing drawn, or a scan whose
  ink the text stage found below ``text.blank_max_ink``) or ``left blank notice`` (its only text
  says "this page intentionally left blank"). A page absent from it is not empty.
"""

from __future__ import annotations

import logging
import re
import zlib
from dataclasses import dataclass, field

import pymupdf

from dagster_ocr.model import Page
from dagster_ocr.textlayer import left_blank_notice

log = logging.getLogger(__name__)

#: ``pages.content`` values
PAGE_CONTENT = ("text", "image", "graphics", "blank")

#: ``pages.blank_reason`` values (NULL: the page is not empty)
DAMAGED, NO_INK, LEFT_BLANK = "damaged", "no ink", "left blank notice"
BLANK_REASONS = (DAMAGED, NO_INK, LEFT_BLANK)

#: the names a content stream draws (``/Im0 Do``) and sets text in (``/F1 12 Tf``)
_DRAWN_NAME = re.compile(rb"/([^\s/\[\]()<>{}%]+)\s+Do\b")
_FONT_NAME = re.compile(rb"/([^\s/\[\]()<>{}%]+)\s+[-+\d.]+\s+Tf\b")


@dataclass(slots=True)
class Integrity:
    """The text stage's evidence of damage and emptiness (see the module docstring)."""

    repaired: bool = False
    #: page index -> "image" | "graphics" | "blank", for the pages without text (absent: text)
    page_content: dict[int, str] = field(default_factory=dict)
    #: page index -> why its content stream is broken
    damaged_pages: dict[int, str] = field(default_factory=dict)
    #: page index -> "damaged" | "no ink" | "left blank notice", for the empty pages (absent: not empty)
    blank_reasons: dict[int, str] = field(default_factory=dict)


def content_damage(pdf: pymupdf.Document, page: pymupdf.Page) -> str | None:
    """Why the page's content stream is broken, or None when it reads (or the page has none)."""
    try:
        xrefs = page.get_contents()
    except Exception as exc:  # noqa: BLE001 - MuPDF raises several types on a broken page object
        return f"its /Contents cannot be read: {type(exc).__name__}"
    n = pdf.xref_length()
    for xref in xrefs:
        if not 0 < xref < n or not pdf.xref_is_stream(xref):
            return f"its content object {xref} is missing"
        kind, value = pdf.xref_get_key(xref, "Filter")
        if value.strip("[] ") != "/FlateDecode":  # only Flate is checked (what almost every writer uses)
            continue
        try:
            zlib.decompressobj().decompress(pdf.xref_stream_raw(xref) or b"")
        except zlib.error as exc:
            return f"its content stream {xref} does not decompress ({exc})"
    return None


def page_damage(
    pdf: pymupdf.Document, page: pymupdf.Page, repaired: bool, textless: bool = True
) -> str | None:
    """Why the page lost (some of) what it showed, or None when its objects are all there.

    The page object itself is gone (a repaired file's page tree names an object the cut took: MuPDF
    gives an empty page of default size), or its content stream is broken (``content_damage``).
    In a ``repaired`` file also an image or form (``Do``) the content stream draws that the
    file no longer holds: the stream survived, what it drew did not (a scanned page whose image
    object was cut renders white); on a ``textless`` page also a font (``Tf``) its text was set in
    (on a page that kept its text a lost font is not emptiness: garbled text is paragraphs_valid's).
    Not judged on a sound file, where a name without a resource is a writer's slip MuPDF skips,
    not lost bytes. An object MuPDF cannot parse on the way ("bad xref", "invalid key in dict")
    is damage too: the document is then held back by the gate, not failed by the text stage.
    """
    try:
        return _page_damage(pdf, page, repaired, textless)
    except Exception as exc:  # noqa: BLE001 - MuPDF raises several types on objects it cannot parse
        return f"its objects cannot be read: {type(exc).__name__}: {str(exc)[:100]}"


def _page_damage(pdf: pymupdf.Document, page: pymupdf.Page, repaired: bool, textless: bool) -> str | None:
    if page.xref and pdf.xref_object(page.xref, compressed=True).strip() == "null":
        return f"its page object {page.xref} is missing"
    why = content_damage(pdf, page)
    if why or not repaired:
        return why
    try:
        contents = page.read_contents()
        drawn = {n.decode("latin-1") for n in _DRAWN_NAME.findall(contents)}
        fonts = {n.decode("latin-1") for n in _FONT_NAME.findall(contents)} if textless else set()
        if not drawn and not fonts:
            return None
        held = {img[7] for img in page.get_images(full=True)} | {x[1] for x in page.get_xobjects()}
        held_fonts = {f[4] for f in page.get_fonts(full=True)}
    except Exception as exc:  # noqa: BLE001 - MuPDF raises several types on a broken page object
        return f"its resources cannot be read: {type(exc).__name__}"
    for kind, names, have in (("XObject", drawn, held), ("Font", fonts, held_fonts)):
        for name in sorted(names - have):
            if not _resource_held(pdf, page.xref, kind, name):
                return f"it draws /{name}, which the file no longer holds"
    return None


def _resource_held(pdf: pymupdf.Document, page_xref: int, kind: str, name: str) -> bool:
    """Whether the page's /Resources still hold ``/kind/name``: MuPDF's listings above skip an entry
    given inline and one inherited oddly, so the entry itself is read; one that names an object
    the file no longer has (an XObject must be a stream) is gone."""
    what, value = pdf.xref_get_key(page_xref, f"Resources/{kind}/{name}")
    if what == "null":
        return False
    if what != "xref":
        return True  # given inline
    xref = int(value.split()[0])
    if not 0 < xref < pdf.xref_length():
        return False
    if kind == "XObject":
        return bool(pdf.xref_is_stream(xref))
    return pdf.xref_object(xref, compressed=True).strip() != "null"


def _drawn(page: pymupdf.Page) -> bool:
    """Anything but text and images on the page: vector paths, or annotations (form fields, stamps)."""
    try:
        return bool(page.get_drawings()) or page.first_annot is not None or page.first_widget is not None
    except Exception:  # noqa: BLE001 - a page MuPDF cannot interpret draws nothing we could read
        return False


class ContentCensus:
    """Collects :class:`Integrity` while the text stage reads a document's pages, one at a time."""

    def __init__(self, pdf: pymupdf.Document):
        self.pdf = pdf
        self.result = Integrity()
        self._checked: set[int] = set()

    def observe(self, page: Page) -> None:
        """Record one page the text stage produced (its lines from the text layer or OCR)."""
        if any(line.text.strip() for line in page.lines):
            if left_blank_notice(page.lines):
                self.result.blank_reasons[page.index] = LEFT_BLANK
            return
        if page.image_coverage > 0:
            self.result.page_content[page.index] = "image"
        pdf_page = self.pdf.load_page(page.index)
        if page.index not in self.result.page_content:
            self.result.page_content[page.index] = "graphics" if _drawn(pdf_page) else "blank"
        if self.result.page_content[page.index] == "blank" or page.blank:
            self.result.blank_reasons[page.index] = NO_INK
        self._check(page.index, pdf_page)

    def _check(self, index: int, pdf_page: pymupdf.Page | None = None) -> None:
        if index in self._checked or not self.pdf.is_pdf:
            return
        self._checked.add(index)
        textless = index in self.result.page_content or index in self.result.blank_reasons
        try:
            page = pdf_page if pdf_page is not None else self.pdf.load_page(index)
        except Exception as exc:  # noqa: BLE001 - the text stage read it; a second load may not
            self.result.damaged_pages[index] = f"it cannot be loaded again: {type(exc).__name__}"
            return
        why = page_damage(self.pdf, page, bool(self.pdf.is_repaired), textless)
        if why:
            self.result.damaged_pages[index] = why

    def finish(self) -> Integrity:
        """The evidence, once every page was read (a repaired file: every page's stream checked).

        A page that lost its objects and shows no text (or only a left-blank notice, which may be
        all that was left of it) is empty by damage: ``blank_reasons`` says ``damaged``."""
        self.result.repaired = bool(self.pdf.is_pdf and self.pdf.is_repaired)
        if self.result.repaired:
            # pages checked before MuPDF's lazy repair are checked again with the resource test
            self._checked.clear()
            for index in range(self.pdf.page_count):
                self._check(index)
        for index in self.result.damaged_pages:
            if index in self.result.page_content or index in self.result.blank_reasons:
                self.result.blank_reasons[index] = DAMAGED
        return self.result
