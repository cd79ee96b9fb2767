"""Opening documents safely, reading the PDF text layer, and routing each page to OCR when needed.

A page keeps its text layer when the layer is present and sound. It is sent to OCR when it has no
text, when its text fails validation (replacement characters, unmapped glyphs, mojibake), or when
an image covers most of it and little text sits on top (a scan with a thin, partial OCR layer).
"""

from __future__ import annotations

import functools
import itertools
import logging
import re
import sys
import threading
import time
import unicodedata
from array import array
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, Literal

import pymupdf
from pydantic import BaseModel, ConfigDict, Field

from dagster_ocr.errors import (
    BadInputError,
    CorruptInputError,
    EmptyInputError,
    EncryptedInputError,
    OverLimitError,
    UnsupportedInputError,
)
from dagster_ocr.ingest import SUPPORTED_KINDS
from dagster_ocr.layout import transform_box
from dagster_ocr.model import Line, Page, SourceDocument, Span, TextSource, Words
from dagster_ocr.validation import garbage_ratio

log = logging.getLogger(__name__)

_SURROGATE = re.compile("[\ud800-\udfff]")

pymupdf.TOOLS.mupdf_display_errors(False)  # MuPDF's own stderr chatter on broken files; we report ourselves


class LimitSettings(BaseModel):
    """Limits that protect a run from hostile or absurd inputs; each breach is a recorded reason."""

    model_config = ConfigDict(extra="forbid")

    max_file_bytes: int = Field(512 * 1024 * 1024, description="Largest input file accepted, in bytes.")
    max_pages: int = Field(5000, description="Most pages a document may have.")
    max_page_area: float = Field(
        200.0 * 200.0 * 72 * 72, description="Largest page area in square points (default: 200x200 inches)."
    )
    max_image_pixels: int = Field(
        100_000_000,
        description="Largest image (pixels) accepted as a document or embedded in a PDF page: a "
        "bigger one is refused before anything decodes it (decompression bombs).",
    )
    max_seconds_per_document: float = Field(
        600.0,
        gt=0,
        description="Wall-clock budget for reading one document's pages (text layer and OCR). Checked "
        "before every page, so a document overruns it by at most one page (or one OCR timeout).",
    )
    pages_in_memory: int = Field(
        256,
        ge=0,
        description="Pages of a document held in memory between stages; a longer document's pages "
        "move to a temporary file and are read back one at a time, so memory stays flat in "
        "document length (see dagster_ocr/pagestore.py).",
    )
    ocr_page_timeout_s: float = Field(
        120.0,
        gt=0,
        description="Longest one page's OCR may take; a page that runs over fails the document with "
        "an over_limit reason instead of hanging the run.",
    )


class TextSettings(BaseModel):
    """How each page's text is obtained."""

    model_config = ConfigDict(extra="forbid")

    ocr_mode: Literal["auto", "always", "never"] = Field(
        "auto",
        description="auto: OCR pages whose text layer is missing or unsound; always / never: override.",
    )
    min_chars: int = Field(
        8, description="A page with fewer non-space text-layer characters than this counts as having no text."
    )
    max_garbage_ratio: float = Field(
        0.10,
        description="Share of suspicious characters (U+FFFD, unmapped glyphs, mojibake) above which "
        "the text layer is rejected and the page is OCR'd.",
    )
    scan_image_coverage: float = Field(
        0.85, description="A page covered by images at least this much is treated as a scan ..."
    )
    scan_max_chars: int = Field(
        200, description="... unless its text layer holds more than this many characters."
    )


def open_document(source: SourceDocument, limits: LimitSettings | None = None) -> pymupdf.Document:
    """Open a registered file as a PyMuPDF document (images become one page per frame).

    Raises a ``BadInputError`` subclass with a clear reason for empty, unsupported, corrupt,
    encrypted or over-limit input; never returns a document that cannot be read.
    """
    limits = limits or LimitSettings()
    if source.size_bytes == 0:
        raise EmptyInputError("the file is empty (0 bytes)")
    if source.size_bytes > limits.max_file_bytes:
        raise OverLimitError(
            f"file is {source.size_bytes} bytes, above max_file_bytes={limits.max_file_bytes}"
        )
    if source.kind not in SUPPORTED_KINDS:
        raise UnsupportedInputError(
            f"{source.file_name!r} is not a PDF or a PNG/JPEG/TIFF image (content does not match any "
            "supported file signature)"
        )
    try:
        doc = pymupdf.open(source.stored_path, filetype=source.kind)
    except Exception as exc:  # MuPDF raises FileDataError, RuntimeError, ValueError on broken input
        # MuPDF names the store's path in its message: the reason is about the file, not our folders
        msg = clean_text(str(exc)).replace(source.stored_path, "<stored copy>")
        raise CorruptInputError(f"cannot open {source.kind}: {msg}") from exc
    try:
        if doc.needs_pass and not doc.authenticate(""):
            raise EncryptedInputError("the PDF is encrypted and needs a password")
        if doc.page_count == 0:
            raise CorruptInputError("the document has no readable pages")
        if doc.page_count > limits.max_pages:
            raise OverLimitError(f"{doc.page_count} pages, above max_pages={limits.max_pages}")
        if not doc.is_pdf:
            doc = _image_as_pdf(doc, limits)
        for page in doc:  # touching each page's size is cheap and catches broken page trees early
            area = page.rect.width * page.rect.height
            if area > limits.max_page_area:
                raise OverLimitError(
                    f"page {page.number} is {page.rect.width:.0f}x{page.rect.height:.0f} pt, above "
                    f"max_page_area={limits.max_page_area:.0f}"
                )
            _check_images(page, limits)
    except BadInputError:
        doc.close()
        raise
    except Exception as exc:
        doc.close()
        raise CorruptInputError(f"cannot read the page tree: {clean_text(str(exc))}") from exc
    return doc


def reopen_document(source: SourceDocument) -> pymupdf.Document:
    """Open again a stored PDF the text stage read: no size, page or image checks this time.

    The store is content-addressed (the file's sha256 is its doc_id), so the bytes are the ones
    ``open_document`` already judged; later stages only need its drawings and glyphs back.
    """
    try:
        doc = pymupdf.open(source.stored_path, filetype="pdf")
    except Exception as exc:  # noqa: BLE001 - the stored copy went missing or changed under us
        raise CorruptInputError(f"cannot reopen the stored copy: {type(exc).__name__}: {exc}") from exc
    if doc.needs_pass and not doc.authenticate(""):
        doc.close()
        raise EncryptedInputError("the stored copy is encrypted and needs a password")
    return doc


def _check_images(page: pymupdf.Page, limits: LimitSettings) -> None:
    """Refuse a page that embeds an image above ``max_image_pixels``.

    ``get_images`` reads /Width and /Height from the image dictionaries without decoding a
    sample, so a decompression bomb (a few MB of deflate that inflates to gigabytes) is caught
    before any renderer or OCR step would inflate it.
    """
    for info in page.get_images(full=False):
        width, height = int(info[2] or 0), int(info[3] or 0)
        if width * height > limits.max_image_pixels:
            raise OverLimitError(
                f"page {page.number} embeds a {width}x{height} image ({width * height} pixels), above "
                f"max_image_pixels={limits.max_image_pixels}"
            )


def clean_text(text: str) -> str:
    """``text`` with lone UTF-16 surrogates replaced by U+FFFD.

    Broken /ToUnicode maps and /Info strings decode to lone surrogates, which no UTF-8 store
    (DuckDB, JSON, the Dagster event log) accepts: one such character would crash the write.
    """
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text)
    return text


def _image_as_pdf(doc: pymupdf.Document, limits: LimitSettings) -> pymupdf.Document:
    for page in doc:
        info = page.get_image_info()
        pixels = max((i["width"] * i["height"] for i in info), default=0)
        if pixels > limits.max_image_pixels:
            raise OverLimitError(
                f"image has {pixels} pixels, above max_image_pixels={limits.max_image_pixels}"
            )
    pdf = pymupdf.open("pdf", doc.convert_to_pdf())
    doc.close()
    return pdf


def _image_coverage(page: pymupdf.Page, n_chars: int, settings: TextSettings) -> float:
    """Share of the page that images cover.

    ``get_image_info`` interprets the whole page again (as costly as reading its text), so it is
    skipped where its answer cannot matter: a page with more text than ``scan_max_chars`` whose
    resources list no image (then only inline images could cover it) reports 0.
    """
    if n_chars > settings.scan_max_chars and not page.get_images(full=False):
        return 0.0
    area = abs(page.rect) or 1.0
    covered = 0.0
    for info in page.get_image_info():
        r = pymupdf.Rect(info["bbox"]) & page.rect
        covered += abs(r)
    return min(covered / area, 1.0)


#: fonts whose code points are pictures, not letters (their glyphs map to C0/C1 controls or
#: private-use code points when the PDF has no /ToUnicode map)
_SYMBOL_FONT = re.compile(r"wingding|webding|dingbat|zapf|symbolmt|marlett|monotypesorts", re.I)


def _symbol_glyphs(text: str) -> str:
    """A symbol font's unmapped glyphs (bullets or check boxes drawn as control characters) as "•".

    Without this the glyph reaches paragraphs as a control character and fails validation, and
    the bullet that should start a list item is lost.
    """
    return "".join(
        "•" if unicodedata.category(c) in ("Cc", "Co") or 0x80 <= ord(c) < 0xA0 else c for c in text
    )


#: what the text layer is read with: dict's flags without images, which are also the words' flags,
#: so one TextPage per page serves both (building it is most of the cost of reading a page)
TEXT_FLAGS = pymupdf.TEXTFLAGS_DICT & ~pymupdf.TEXT_PRESERVE_IMAGES


@functools.lru_cache(maxsize=4096)
def _font_facts(font: str) -> tuple[str, bool, bool]:
    """(clean interned name, a symbol font, bold by its name): asked once per font, not per span."""
    return sys.intern(clean_text(font)), bool(_SYMBOL_FONT.search(font)), "bold" in font.lower()


def extract_lines(page: pymupdf.Page, textpage: pymupdf.TextPage | None = None) -> list[Line]:
    """The text-layer lines of a page, with spans, fonts and bboxes in displayed coordinates."""
    return read_text_layer(page, textpage)[0]


def read_text_layer(
    page: pymupdf.Page, textpage: pymupdf.TextPage | None = None
) -> tuple[list[Line], tuple[int, int]]:
    """``extract_lines``, and the characters on lines running up and down the displayed page.

    The direction counts are what the table stage needs to turn a page printed sideways
    (``Page.vertical_chars``); they are read here, where the lines are, so that stage does not
    extract the page's text a second time.
    """
    data = page.get_text("dict", flags=TEXT_FLAGS, sort=False, textpage=textpage)
    rot = tuple(page.rotation_matrix) if page.rotation else None
    bold_flag, italic_flag = pymupdf.TEXT_FONT_BOLD, pymupdf.TEXT_FONT_ITALIC
    # a line's direction is in unrotated space: its displayed dy is (b, d) of the rotation
    dir_b, dir_d = (rot[1], rot[3]) if rot is not None else (0.0, 1.0)
    up = down = 0

    # Memory matters here (a 5,000-page document keeps every line until it is loaded): bbox tuples
    # are PyMuPDF's own, a one-span line shares its span's, and font names are interned.
    lines: list[Line] = []
    for block in data["blocks"]:
        if block.get("type") != 0:
            continue
        for ln in block["lines"]:
            dx, dy = ln["dir"]
            dy = dir_b * dx + dir_d * dy
            if dy < -0.9:
                up += sum(len(sp["text"].strip()) for sp in ln["spans"])
            elif dy > 0.9:
                down += sum(len(sp["text"].strip()) for sp in ln["spans"])
            spans = []
            for s in ln["spans"]:
                font, symbol, bold_name = _font_facts(s["font"])
                text = clean_text(s["text"])
                flags = s["flags"]
                spans.append(
                    Span(
                        text=_symbol_glyphs(text) if symbol else text,
                        bbox=s["bbox"] if rot is None else transform_box(s["bbox"], rot),
                        font=font,
                        size=round(s["size"], 2),
                        bold=bool(flags & bold_flag) or bold_name,
                        italic=bool(flags & italic_flag),
                    )
                )
            text = (spans[0].text if len(spans) == 1 else "".join(s.text for s in spans)).strip()
            if text:
                bbox = ln["bbox"] if rot is None else transform_box(ln["bbox"], rot)
                if len(spans) == 1 and spans[0].bbox == bbox:
                    bbox = spans[0].bbox
                lines.append(Line(text=text, bbox=bbox, spans=spans, block=block["number"]))
    return lines, (up, down)


def extract_words(page: pymupdf.Page, textpage: pymupdf.TextPage | None = None) -> Words:
    """The page's words in displayed coordinates (what the table finders read), packed.

    Words of no width or no visible character are kept here and skipped by the reader.
    """
    words = Words.pack(page.get_text("words", flags=TEXT_FLAGS, sort=False, textpage=textpage))
    words.text = clean_text(words.text)
    if page.rotation:
        rot, b = tuple(page.rotation_matrix), words.boxes
        turned = (transform_box(tuple(b[i : i + 4]), rot) for i in range(0, len(b), 4))
        words.boxes = array("d", itertools.chain.from_iterable(turned))
    return words


def _visible_chars(lines: list[Line]) -> int:
    return sum(len("".join(line.text.split())) for line in lines)


def route_page(
    lines: list[Line], image_coverage: float, settings: TextSettings, n_chars: int | None = None
) -> tuple[bool, str]:
    """Decide whether a page needs OCR. Returns (needs_ocr, reason).

    ``n_chars`` (the lines' non-space characters) is counted here unless the caller has it already.
    """
    if settings.ocr_mode == "always":
        return True, "ocr_mode=always"
    text = "".join(line.text for line in lines)
    if n_chars is None:
        n_chars = _visible_chars(lines)
    if settings.ocr_mode == "never":
        return False, "ocr_mode=never"
    if n_chars < settings.min_chars:
        return True, f"no text layer ({n_chars} characters)"
    ratio = garbage_ratio(text)
    if ratio > settings.max_garbage_ratio:
        return True, f"text layer fails validation ({ratio:.0%} suspicious characters)"
    if image_coverage >= settings.scan_image_coverage and n_chars <= settings.scan_max_chars:
        return True, f"image covers {image_coverage:.0%} of the page with little text ({n_chars} characters)"
    return False, "text layer sound"


#: OCR one page: (pymupdf page, physical index) -> Page with text_source=ocr
PageOcr = Callable[[pymupdf.Page, int], Page]


def iter_pages(
    doc: pymupdf.Document,
    settings: TextSettings | None = None,
    ocr: PageOcr | None = None,
    deadline: float | None = None,
) -> Iterator[Page]:
    """Yield one ``Page`` per physical page, streaming (nothing but the current page is rendered).

    ``ocr`` is called for pages the router sends to OCR; without it such pages keep whatever text
    layer they have and record why (``text_source`` "none" when they have no text at all).
    ``deadline`` (a ``time.monotonic()`` value) is checked before every page: past it, an
    ``OverLimitError`` names the page reached.
    """
    settings = settings or TextSettings()
    for page in doc:
        if deadline is not None and time.monotonic() > deadline:
            raise OverLimitError(
                f"time limit reached after {page.number} of {doc.page_count} pages (max_seconds_per_document)"
            )
        textpage = page.get_textpage(flags=TEXT_FLAGS)
        lines, vertical = read_text_layer(page, textpage)
        n_chars = _visible_chars(lines)
        coverage = _image_coverage(page, n_chars, settings)
        needs_ocr, reason = route_page(lines, coverage, settings, n_chars)
        result = Page(
            index=page.number,
            width=page.rect.width,
            height=page.rect.height,
            lines=lines,
            text_source=TextSource.TEXT_LAYER,
            engine="pymupdf",
            route_reason=reason,
            rotation=page.rotation,
            image_coverage=round(coverage, 4),
            vertical_chars=vertical,
        )
        if needs_ocr:
            if ocr is not None:
                result = ocr(page, page.number)
                result.route_reason = reason
                result.image_coverage = round(coverage, 4)
            elif not lines:
                result.text_source, result.engine = TextSource.NONE, ""
                result.route_reason = f"{reason}; OCR disabled"
            else:
                result.route_reason = f"{reason}; OCR disabled, text layer kept"
        if result.text_source == TextSource.TEXT_LAYER:
            result.words = extract_words(page, textpage)
        del textpage
        yield result


class TimedOcrEngine:
    """An OCR engine wrapper that gives up on a page after ``timeout`` seconds.

    Only ``recognize`` (pure numpy in, lines out) runs in the worker thread; rendering stays on the
    caller's thread because MuPDF objects must not cross threads. A thread cannot be killed, so a
    page that times out leaves its worker running to completion in the background; the document
    fails with an over_limit reason and the run moves on.
    """

    def __init__(self, engine: Any, timeout: float, deadline: float | None = None):
        self.engine = engine
        self.name = engine.name
        self.timeout = timeout
        self.deadline = deadline
        self._pool: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()

    def document(self, document_type: str | None) -> Any:
        return self.engine.document(document_type)

    def take_stats(self) -> Any:
        return self.engine.take_stats()

    def recognize(self, image: Any) -> Any:
        """The wrapped engine's ``recognize``, bounded by the page timeout and the document deadline."""
        timeout = self.timeout
        if self.deadline is not None:
            timeout = min(timeout, max(self.deadline - time.monotonic(), 0.0))
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ocr-page")
            future = self._pool.submit(self.engine.recognize, image)
        try:
            return future.result(timeout=timeout)
        except FutureTimeout:
            self.close()  # abandon the stuck worker; a later page gets a fresh one
            raise OverLimitError(
                f"OCR of a page took longer than {timeout:.1f} s (ocr_page_timeout_s / "
                "max_seconds_per_document)"
            ) from None

    def close(self) -> None:
        """Release the worker thread without waiting for a page still running."""
        with self._lock:
            if self._pool is not None:
                self._pool.shutdown(wait=False, cancel_futures=True)
                self._pool = None
