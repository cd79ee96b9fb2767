"""What a document's pages hold, and whether the file was damaged: read by the text stage.

A damaged PDF is often not refused: MuPDF repairs it (rebuilds the cross-reference table by
scanning for objects) and opens it, and the pages whose objects were lost come out empty, with no
error anywhere. This module records the evidence, so the quality gate can tell such pages from
deliberately blank ones (``pages_complete`` in :mod:`dagster_ocr.quality`):

* ``repaired``: MuPDF had to repair the file (``Document.is_repaired``, read after every page was
  loaded: repair also happens lazily, when a page's objects are first read);
* ``page_content`` for each page without text: ``image`` (an image is drawn on it), ``graphics``
  (vector drawings or annotations only) or ``blank`` (nothing is drawn at all);
* ``damaged_pages``: pages whose content stream is broken: it names an object that does not exist
  (or is not a stream), or its Flate data does not decompress. Checked on every page without text,
  and on every page of a repaired file (there a page with some text may have lost the rest); on a
  sound file's text pages the check is skipped (it would decompress every content stream again:
  about 5% of the text stage on a 117-page corpus PDF).
"""

from __future__ import annotations

import logging
import zlib
from dataclasses import dataclass, field

import pymupdf

from dagster_ocr.model import Page

log = logging.getLogger(__name__)

#: ``pages.content`` values
PAGE_CONTENT = ("text", "image", "graphics", "blank")


@dataclass(slots=True)
class Integrity:
    """The text stage's evidence of damage and emptiness (see the module docstring)."""

    repaired: bool = False
    #: page index -> "image" | "graphics" | "blank", for the pages without text (absent: text)
    page_content: dict[int, str] = field(default_factory=dict)
    #: page index -> why its content stream is broken
    damaged_pages: dict[int, str] = field(default_factory=dict)


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
            return
        if page.image_coverage > 0:
            self.result.page_content[page.index] = "image"
        pdf_page = self.pdf.load_page(page.index)
        if page.index not in self.result.page_content:
            self.result.page_content[page.index] = "graphics" if _drawn(pdf_page) else "blank"
        self._check(page.index, pdf_page)

    def _check(self, index: int, pdf_page: pymupdf.Page | None = None) -> None:
        if index in self._checked or not self.pdf.is_pdf:
            return
        self._checked.add(index)
        why = content_damage(self.pdf, pdf_page if pdf_page is not None else self.pdf.load_page(index))
        if why:
            self.result.damaged_pages[index] = why

    def finish(self) -> Integrity:
        """The evidence, once every page was read (a repaired file: every page's stream checked)."""
        self.result.repaired = bool(self.pdf.is_pdf and self.pdf.is_repaired)
        if self.result.repaired:
            for index in range(self.pdf.page_count):
                self._check(index)
        return self.result
