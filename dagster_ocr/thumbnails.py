"""Page thumbnails with what the pipeline found drawn on them, for a person to judge at a glance.

Each thumbnail is the page as displayed, rendered small, with a box for every table, heading,
paragraph and piece of page furniture (running header, footer, page number) found on it, one
colour per kind, and a badge saying where the page's text came from (OCR or the text layer). The
Dagster UI shows them inline: ``thumbnails_markdown`` makes Markdown whose images are ``data:``
URIs, which the UI's Markdown renderer displays (it allows ``data:`` image sources; no file or
server is needed to see them).

Bounded whatever the document (``PreviewSettings``): at most ``pages`` pages (the first
``FIRST_PAGES``, then the first page of tables not shown yet), ``width`` pixels wide, JPEG, the
quality lowered until each image fits ``max_image_bytes``. The document is opened again from its
stored copy (the stage outputs keep text and boxes, not pixels); only the chosen pages are
rendered.
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Sequence
from dataclasses import dataclass

import pymupdf
from pydantic import BaseModel, ConfigDict, Field

from dagster_ocr.errors import BadInputError
from dagster_ocr.limits import LimitSettings
from dagster_ocr.model import ExtractedDocument, Page, PageLabel, ParagraphResult, Table, TextSource
from dagster_ocr.textlayer import open_document, reopen_document

log = logging.getLogger(__name__)

#: pages drawn at most, of which the document's first ``FIRST_PAGES``
MAX_PAGES = 3
FIRST_PAGES = 2
#: thumbnail width in pixels (the height follows the page's shape, at most twice the width)
WIDTH = 240
#: bytes per image at most: the JPEG quality steps down from the first value until it fits (a
#: dense A4 page of text is ~12 KB at 45, a sparse one ~5 KB), so a document's previews stay under
#: ~48 KB of base64 in the event log whatever its length
MAX_BYTES = 12_000
QUALITIES = (60, 45, 30, 20)


class PreviewSettings(BaseModel):
    """How much of each document the UI's page previews show (they are stored in the event log)."""

    model_config = ConfigDict(extra="forbid")

    pages: int = Field(
        MAX_PAGES,
        ge=0,
        le=12,
        description="Pages previewed per document (the first two, then the first page of tables not "
        "shown yet); 0 turns previews off.",
    )
    width: int = Field(WIDTH, ge=120, le=1200, description="Preview width in pixels.")
    max_image_bytes: int = Field(
        MAX_BYTES,
        ge=2_000,
        le=200_000,
        description="Bytes per JPEG at most (about 4/3 of that in the event log, as base64); the "
        "quality, then the size, steps down until an image fits.",
    )


#: the colour of each kind of box (RGB, 0-1) and its name in the legend (words, not emoji: a
#: browser without an emoji font, headless Chromium on Debian among them, shows emoji as boxes)
COLOURS: dict[str, tuple[tuple[float, float, float], str]] = {
    "table": ((1.0, 0.55, 0.0), "orange"),
    "heading": ((0.55, 0.2, 0.8), "purple"),
    "paragraph": ((0.1, 0.45, 0.9), "blue"),
    "furniture": ((0.55, 0.55, 0.55), "grey"),
}
#: what each kind is called in a caption (singular, plural)
_NOUNS = {
    "table": ("table", "tables"),
    "heading": ("heading", "headings"),
    "paragraph": ("paragraph", "paragraphs"),
    "furniture": ("furniture line", "furniture lines"),
}
#: the badge of a page by where its text came from: its text, colour and colour name
SOURCE_BADGES: dict[str, tuple[str, tuple[float, float, float], str]] = {
    TextSource.OCR: ("OCR", (0.85, 0.1, 0.1), "red"),
    TextSource.TEXT_LAYER: ("TEXT", (0.1, 0.6, 0.25), "green"),
    TextSource.NONE: ("NO TEXT", (0.3, 0.3, 0.3), "dark grey"),
}


@dataclass(frozen=True, slots=True)
class Thumbnail:
    """One page's annotated image and what it shows."""

    page_index: int
    page_label: str
    text_source: str
    #: boxes drawn per kind ("table", "heading", "paragraph", "furniture")
    boxes: dict[str, int]
    jpeg: bytes
    width: int
    height: int

    def data_uri(self) -> str:
        return "data:image/jpeg;base64," + base64.b64encode(self.jpeg).decode("ascii")


def chosen_pages(n_pages: int, tables: Sequence[Table], limit: int = MAX_PAGES) -> list[int]:
    """The pages worth a thumbnail: the first ``FIRST_PAGES``, then the first page of each table
    not shown yet, then the next pages in order, ``limit`` at most, in page order."""
    chosen: list[int] = list(range(min(FIRST_PAGES, n_pages, limit)))
    for table in tables:
        if len(chosen) >= limit:
            break
        if 0 <= table.first_page_index < n_pages and table.first_page_index not in chosen:
            chosen.append(table.first_page_index)
    nxt = 0
    while len(chosen) < min(limit, n_pages):
        if nxt not in chosen:
            chosen.append(nxt)
        nxt += 1
    return sorted(chosen)


def page_boxes(
    page: Page, tables: Sequence[Table], paragraphs: ParagraphResult
) -> dict[str, list[tuple[float, float, float, float]]]:
    """The boxes found on ``page`` by kind, in displayed page coordinates (PDF points)."""
    i = page.index
    as_text = set(paragraphs.read_as_text)
    boxes: dict[str, list[tuple[float, float, float, float]]] = {k: [] for k in COLOURS}
    for table in tables:
        if table.table_id in as_text:  # its text is among the paragraphs, drawn as those
            continue
        regions = table.regions or [(table.first_page_index, table.bbox)]
        boxes["table"] += [tuple(bbox) for p, bbox in regions if p == i]  # type: ignore[misc]
    for para in paragraphs.paragraphs:
        if para.page_index == i:
            boxes["heading" if para.kind == "heading" else "paragraph"].append(tuple(para.bbox))  # type: ignore[arg-type]
    for line_index in paragraphs.furniture.get(i, {}):
        if 0 <= line_index < len(page.lines):
            boxes["furniture"].append(tuple(page.lines[line_index].bbox))  # type: ignore[arg-type]
    return boxes


def _annotate(
    pix: pymupdf.Pixmap,
    scale: float,
    boxes: dict[str, list[tuple[float, float, float, float]]],
    source: str,
) -> pymupdf.Pixmap:
    """The rendered page with its boxes and badge drawn over it (vector shapes on a page the
    pixmap's size, rendered once more at 1:1)."""
    canvas = pymupdf.open()
    page = canvas.new_page(width=pix.width, height=pix.height)
    page.insert_image(page.rect, pixmap=pix)
    shape = page.new_shape()
    for kind, rects in boxes.items():
        colour = COLOURS[kind][0]
        for x0, y0, x1, y1 in rects:
            r = pymupdf.Rect(x0 * scale, y0 * scale, x1 * scale, y1 * scale)
            if r.is_empty or not r.is_valid:
                continue
            shape.draw_rect(r)
            # tables thicker: a table's box encloses many cells and is the one a reviewer checks first
            shape.finish(
                color=colour,
                fill=colour,
                width=2.0 if kind == "table" else 1.5,
                fill_opacity=0.15,
                stroke_opacity=0.9,
            )
    text, colour, _ = SOURCE_BADGES.get(source, SOURCE_BADGES[TextSource.NONE])
    frame = pymupdf.Rect(0, 0, pix.width, pix.height)
    shape.draw_rect(frame)
    shape.finish(color=colour, width=4 if source == TextSource.OCR else 2)
    badge = pymupdf.Rect(0, 0, 10 + 7 * len(text), 16)
    shape.draw_rect(badge)
    shape.finish(color=colour, fill=colour)
    shape.insert_text((4, 12), text, fontsize=10, fontname="hebo", color=(1, 1, 1))
    shape.commit()
    out = page.get_pixmap(alpha=False)
    canvas.close()
    return out


def _jpeg(pix: pymupdf.Pixmap, max_bytes: int) -> tuple[pymupdf.Pixmap, bytes]:
    """``pix`` as JPEG within ``max_bytes``: lower quality first, then half the size (a page of
    photographs or noise), so the bound holds for any page."""
    while True:
        for quality in QUALITIES:
            data = pix.tobytes("jpg", jpg_quality=quality)
            if len(data) <= max_bytes:
                return pix, data
        if pix.width < 16:
            return pix, data
        pix.shrink(1)


def page_thumbnails(
    doc: ExtractedDocument,
    labels: Sequence[PageLabel],
    tables: Sequence[Table],
    paragraphs: ParagraphResult,
    limits: LimitSettings,
    preview: PreviewSettings,
) -> list[Thumbnail]:
    """Annotated thumbnails of the document's chosen pages (none for a document that was not read,
    or with ``preview.pages`` 0)."""
    if not doc.ok or doc.n_pages == 0 or not doc.pages or preview.pages == 0:
        return []
    try:
        # a PDF's bytes were judged by the text stage (the store is content-addressed): reopen it
        # without the per-page limit checks; an image is converted to a PDF again the same way
        if doc.source.kind == "pdf":
            pdf = reopen_document(doc.source)
        else:
            pdf = open_document(doc.source, limits)
    except BadInputError as exc:  # the stored copy went missing or changed: no preview, no crash
        log.warning("%s: no page thumbnails: %s", doc.source.file_name, exc)
        return []
    by_page = {lab.page_index: lab.label for lab in labels}
    out: list[Thumbnail] = []
    try:
        for i in chosen_pages(min(doc.n_pages, pdf.page_count, len(doc.pages)), tables, preview.pages):
            src = pdf[i]
            scale = min(preview.width / src.rect.width, 2 * preview.width / src.rect.height)
            try:
                pix = src.get_pixmap(matrix=pymupdf.Matrix(scale, scale), alpha=False)
            except Exception as exc:  # noqa: BLE001 - a page MuPDF cannot draw loses its preview only
                log.warning("%s: no preview of page %d: %s", doc.source.file_name, i + 1, exc)
                continue
            page = doc.pages[i]
            boxes = page_boxes(page, tables, paragraphs)
            drawn, jpeg = _jpeg(_annotate(pix, scale, boxes, str(page.text_source)), preview.max_image_bytes)
            out.append(
                Thumbnail(
                    page_index=i,
                    page_label=by_page.get(i, str(i + 1)),
                    text_source=str(page.text_source),
                    boxes={k: len(v) for k, v in boxes.items()},
                    jpeg=jpeg,
                    width=drawn.width,
                    height=drawn.height,
                )
            )
    finally:
        pdf.close()
    return out


def legend_markdown() -> str:
    """What the colours mean, in words."""
    kinds = " · ".join(f"{name}: {_NOUNS[kind][1]}" for kind, (_, name) in COLOURS.items())
    return (
        f"Boxes, {kinds} (running headers, footers, page numbers). Badge and frame: "
        f"{SOURCE_BADGES[TextSource.OCR][2]} OCR, the page was read by OCR; "
        f"{SOURCE_BADGES[TextSource.TEXT_LAYER][2]} TEXT, from the PDF's text layer; "
        f"{SOURCE_BADGES[TextSource.NONE][2]} NO TEXT, none found."
    )


def _found(thumb: Thumbnail) -> str:
    found = [f"{n} {_NOUNS[kind][n != 1]}" for kind, n in thumb.boxes.items() if n]
    source = "OCR" if thumb.text_source == TextSource.OCR else thumb.text_source.replace("_", " ")
    return f"{source}: {', '.join(found) or 'nothing found'}"


def thumbnails_markdown(thumbs: Sequence[Thumbnail], n_pages: int) -> str:
    """The thumbnails side by side as a Markdown table (printed page and place above each image,
    what was found on it below), then the legend."""
    if not thumbs:
        return "_No page preview: the document could not be read._"
    lines = [
        "| " + " | ".join(f"p. {t.page_label} (page {t.page_index + 1} of {n_pages})" for t in thumbs) + " |",
        "|" + "---|" * len(thumbs),
        "| " + " | ".join(f"![page {t.page_index + 1}]({t.data_uri()})" for t in thumbs) + " |",
        "| " + " | ".join(_found(t) for t in thumbs) + " |",
        "",
        legend_markdown(),
    ]
    if n_pages > len(thumbs):
        lines += ["", f"_{n_pages - len(thumbs)} more pages not shown._"]
    return "\n".join(lines)
