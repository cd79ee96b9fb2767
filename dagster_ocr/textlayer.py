"""Opening documents safely, reading the PDF text layer, and routing each page to OCR when needed.

A page keeps its text layer when the layer is present and sound. It is sent to OCR when it has no
text, when its text fails validation (replacement characters, unmapped glyphs, mojibake), or when
an image covers most of it and little text sits on top (a scan with a thin, partial OCR layer).

The input limits, the time budgets and the OCR page timeout are in :mod:`dagster_ocr.limits`; their
names are re-exported here for the callers that import them from this module.
"""

from __future__ import annotations

import functools
import itertools
import logging
import re
import sys
import unicodedata
from array import array
from collections.abc import Callable, Iterator, Sequence
from typing import Literal

import numpy as np
import pymupdf
from pydantic import BaseModel, ConfigDict, Field

from dagster_ocr.budget import DocumentBudget
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
from dagster_ocr.limits import (  # noqa: F401 - re-exported
    LimitSettings,
    TimedOcrEngine,
    document_budget,
    run_max_runtime,
    start_budget,
)
from dagster_ocr.model import BLANK_PAGE, Line, Page, SourceDocument, Span, TextSource, Words
from dagster_ocr.validation import garbage_ratio

log = logging.getLogger(__name__)

_SURROGATE = re.compile("[\ud800-\udfff]")

pymupdf.TOOLS.mupdf_display_errors(False)  # MuPDF's own stderr chatter on broken files; we report ourselves


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
    skip_blank_pages: bool = Field(
        True,
        description="Do not OCR a blank page (no text layer, and nothing drawn on it or almost no ink "
        "on a low-resolution thumbnail): its row says 'blank page: ...', text_source 'none'.",
    )
    blank_thumbnail_dpi: int = Field(
        30,
        ge=12,
        le=72,
        description="Resolution of the grayscale thumbnail a page without text is judged blank on. "
        "Low on purpose: scanner speckle averages away, a 9-pt digit still leaves a few pixels.",
    )
    blank_ink_contrast: int = Field(
        16,
        ge=1,
        le=255,
        description="Gray levels a thumbnail pixel must differ from the page's background (its median) "
        "to count as ink. Low, so that a faint scan of real text (light gray print) is never taken "
        "for blank; a page with uneven background is then OCR'd, which costs time, not text.",
    )
    blank_max_ink: float = Field(
        0.00005,
        ge=0.0,
        le=0.01,
        description="A page without text whose thumbnail has at most this share of ink pixels is blank "
        "(0.005%: about 4 pixels of an A4 page at 30 dpi, less than one 9-pt page-number digit leaves).",
    )


def open_document(source: SourceDocument, limits: LimitSettings) -> pymupdf.Document:
    """Open a registered file as a PyMuPDF document (images become one page per frame).

    Raises a ``BadInputError`` subclass with a clear reason for empty, unsupported, corrupt,
    encrypted or over-limit input; never returns a document that cannot be read.
    """
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
) -> tuple[list[Line], tuple[int, int], int]:
    """``extract_lines``, the characters on lines running up and down the displayed page, and
    those on lines running right to left, upside down (``Page.reversed_chars``).

    The direction counts are what the table stage needs to turn a page printed sideways
    (``Page.vertical_chars``); they are read here, where the lines are, so that stage does not
    extract the page's text a second time.
    """
    data = page.get_text("dict", flags=TEXT_FLAGS, sort=False, textpage=textpage)
    rot = tuple(page.rotation_matrix) if page.rotation else None
    bold_flag, italic_flag = pymupdf.TEXT_FONT_BOLD, pymupdf.TEXT_FONT_ITALIC
    # a line's direction is in unrotated space: its displayed dy is (b, d) of the rotation
    dir_a, dir_b, dir_c, dir_d = (rot[0], rot[1], rot[2], rot[3]) if rot is not None else (1.0, 0.0, 0.0, 1.0)
    up = down = left = 0

    # Memory matters here (a 5,000-page document keeps every line until it is loaded): bbox tuples
    # are PyMuPDF's own, a one-span line shares its span's, and font names are interned.
    lines: list[Line] = []
    for block in data["blocks"]:
        if block.get("type") != 0:
            continue
        for ln in block["lines"]:
            dx, dy = ln["dir"]
            dx, dy = dir_a * dx + dir_c * dy, dir_b * dx + dir_d * dy
            if dy < -0.9:
                up += sum(len(sp["text"].strip()) for sp in ln["spans"])
            elif dy > 0.9:
                down += sum(len(sp["text"].strip()) for sp in ln["spans"])
            elif dx < -0.9:
                left += sum(len(sp["text"].strip()) for sp in ln["spans"])
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
    return lines, (up, down), left


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


#: share of a scan's text characters that must be hidden for its text layer to be taken for an
#: OCR layer (a few visible lines on top, a stamp or a repository's banner, do not change that)
_OCR_LAYER_HIDDEN = 0.8
#: on an OCR layer, a line whose size is within this share of the page's body size is set in the
#: body size: the producer fitted each line's size to its box on the image (Tesseract, OCRmyPDF,
#: scanner software), so sizes scatter about a fifth either way where the print has one size
_FITTED_SIZE_SPREAD = 0.25


def hidden_text_share(page: pymupdf.Page) -> float:
    """Share of the page's text characters a reader cannot see: drawn invisible (render mode 3) or
    fully transparent, or drawn before an image that covers them (an OCR layer laid under its scan).

    Read from the display list's order (``get_texttrace``'s ``seqno`` is the span's place among
    ``get_bboxlog``'s entries); costs an interpretation of the page, so it is asked only of pages
    that images cover (:func:`iter_pages`).
    """
    trace = page.get_texttrace()
    images = [
        (i, pymupdf.Rect(box)) for i, (kind, box) in enumerate(page.get_bboxlog()) if kind == "fill-image"
    ]
    hidden = total = 0
    for span in trace:
        n = len(span["chars"])
        total += n
        box = pymupdf.Rect(span["bbox"])
        if (
            span["type"] == 3
            or span["opacity"] == 0
            or any(seq > span["seqno"] and rect.contains(box) for seq, rect in images)
        ):
            hidden += n
    return hidden / total if total else 0.0


def snap_fitted_sizes(lines: list[Line]) -> None:
    """On an OCR layer, set each span within ``_FITTED_SIZE_SPREAD`` of the page's body size (the
    size most characters have) in that size, in place.

    An OCR layer's sizes are the producer's fit of each line to its box, not the print's type: on a
    scanned journal page one body type read 24 to 36 points line by line, so every line broke its
    paragraph at a "change of type" (``paragraphs``' ``size_change``). A heading set larger than
    the spread keeps its size, and with it its break and its level.
    """
    weights: dict[float, int] = {}
    for line in lines:
        for span in line.spans:
            weights[span.size] = weights.get(span.size, 0) + len(span.text)
    if not weights:
        return
    body = max(weights, key=lambda k: (weights[k], -k))
    for line in lines:
        for span in line.spans:
            if abs(span.size - body) <= _FITTED_SIZE_SPREAD * body:
                span.size = body


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


#: "This page intentionally left blank" and its variants ("Page left blank intentionally",
#: "Deliberately blank"), matched on lower-cased words (OCR's "intentionaly" too)
_LEFT_BLANK = re.compile(
    r"\b(?:(?:intention|deliberate|purpose)\w*(?: left)? blank"
    r"|blank (?:intention|deliberate|on purpose)\w*"
    r"|(?:page|side|sheet)(?: is| has been| was)? left blank)\b"
)
#: "Blank page", "This page is blank": a notice only as the page's whole text (page number aside);
#: a title page "Blank pages in scanned archives" is text
_BLANK_ALONE = re.compile(r"(?:this )?(?:page|side|sheet) (?:is )?blank|blank (?:page|side|sheet)")
#: a left-blank page may carry a page number and a running header, not more words than this
_LEFT_BLANK_MAX_WORDS = 16


def left_blank_notice(lines: Sequence[Line]) -> bool:
    """True when a page's only text is a "this page intentionally left blank" notice (give or take
    a page number and a running header): the page is empty by design, not a text page."""
    words = re.findall(r"[^\W_]+", " ".join(line.text for line in lines).lower())
    if not 0 < len(words) <= _LEFT_BLANK_MAX_WORDS:
        return False
    text = " ".join(words)
    if _LEFT_BLANK.search(text):
        return True
    return bool(_BLANK_ALONE.fullmatch(" ".join(w for w in words if not w.isdigit())))


def ink_share(page: pymupdf.Page, dpi: int, contrast: int) -> float:
    """Share of a grayscale thumbnail's pixels that are ink: they differ from the page's background
    (the median gray) by more than ``contrast`` levels, dark on light or light on dark, and touch
    another such pixel. A lone pixel is a speck of dust or scanner noise, not print: a text line, or
    a single digit, covers several neighbouring pixels even at 24 dpi."""
    pix = page.get_pixmap(dpi=dpi, colorspace=pymupdf.csGRAY, alpha=False)
    gray = np.frombuffer(pix.samples, dtype=np.uint8).reshape(pix.height, pix.stride)[:, : pix.width]
    if not gray.size:
        return 0.0
    hist = np.bincount(gray.ravel(), minlength=256)
    background = int(np.searchsorted(np.cumsum(hist), (gray.size + 1) // 2))
    ink = np.abs(gray.astype(np.int16) - background) > contrast
    if not ink.any():
        return 0.0
    touching = np.zeros_like(ink)
    touching[:, 1:] |= ink[:, :-1]
    touching[:, :-1] |= ink[:, 1:]
    touching[1:, :] |= ink[:-1, :]
    touching[:-1, :] |= ink[1:, :]
    return float(np.count_nonzero(ink & touching)) / gray.size


def blank_page_reason(page: pymupdf.Page, settings: TextSettings) -> str | None:
    """Why a page without text is blank, or None when it has ink worth OCR'ing.

    Cheapest first: a page whose content stream draws nothing and that has no annotation is
    "blank page: no content" without being rendered; otherwise a thumbnail at
    ``blank_thumbnail_dpi`` is rendered and the share of ink pixels compared with ``blank_max_ink``
    ("blank page: ink 0.002%"). A scanned page's image is decoded for the thumbnail at most once:
    MuPDF keeps it for the OCR render that follows when the page is not blank.
    """
    if page.first_annot is None and page.first_widget is None and not page.read_contents().strip():
        return f"{BLANK_PAGE}: no content"
    ink = ink_share(page, settings.blank_thumbnail_dpi, settings.blank_ink_contrast)
    if ink <= settings.blank_max_ink:
        return f"{BLANK_PAGE}: ink {ink:.3%}"
    return None


#: OCR one page: (pymupdf page, physical index) -> Page with text_source=ocr
PageOcr = Callable[[pymupdf.Page, int], Page]


def iter_pages(
    doc: pymupdf.Document,
    settings: TextSettings,
    ocr: PageOcr | None = None,
    budget: DocumentBudget | None = None,
    indices: Sequence[int] | None = None,
) -> Iterator[Page]:
    """Yield one ``Page`` per physical page, streaming (nothing but the current page is rendered).

    ``ocr`` is called for pages the router sends to OCR, except blank ones (no text layer and
    nothing or almost nothing drawn, see ``blank_page_reason``), which get ``text_source`` "none",
    ``blank`` set and a ``route_reason`` saying why ("blank page: ..."). Without ``ocr`` such pages
    keep whatever text layer they have and record why (``text_source`` "none" when they have no
    text at all).
    ``budget`` is checked before every page: spent (CPU seconds or its wall-clock backstop), an
    ``OverLimitError`` names the page reached and the budget.
    ``indices`` limits the pages read to those (in that order; an OCR worker's page range).
    """
    for page in doc if indices is None else (doc[i] for i in indices):
        if budget is not None:
            budget.check(page.number, doc.page_count)
        textpage = page.get_textpage(flags=TEXT_FLAGS)
        lines, vertical, upside_down = read_text_layer(page, textpage)
        n_chars = _visible_chars(lines)
        coverage = _image_coverage(page, n_chars, settings)
        needs_ocr, reason = route_page(lines, coverage, settings, n_chars)
        if (
            not needs_ocr
            and lines
            and coverage >= settings.scan_image_coverage
            and hidden_text_share(page) >= _OCR_LAYER_HIDDEN
        ):
            snap_fitted_sizes(lines)
            reason = f"{reason} (an OCR layer under a scan: line sizes fitted, set in the body size)"
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
            reversed_chars=upside_down,
        )
        blank = None
        if needs_ocr and ocr is not None and settings.skip_blank_pages and not lines:
            blank = blank_page_reason(page, settings)
        if blank is not None:
            result.text_source, result.engine, result.route_reason = TextSource.NONE, "", blank
            result.blank = True
        elif needs_ocr:
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
