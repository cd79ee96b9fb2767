"""The document model shared by every stage.

Coordinates are PDF points with the origin at the top-left of the (unrotated) page, as PyMuPDF
reports them; OCR engines convert pixels to points so that labels, tables and paragraphs work
unchanged on scanned pages. ``page_index`` is always 0-based and physical.

Plain dataclasses with slots: they are created per line and per cell, pickle cheaply between
Dagster assets, and carry no validation cost on the hot path.
"""

from __future__ import annotations

import itertools
import operator
from array import array
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from dagster_ocr.layout import BBox  # defined with the geometry; the model's boxes are these

if TYPE_CHECKING:  # the settings import every stage, and every stage imports the model
    from dagster_ocr.settings import SettingsSnapshot


class DocStatus(StrEnum):
    PARSED = "parsed"
    QUARANTINED = "quarantined"  # parsed, but held back from the knowledge base by a quality check
    FAILED = "failed"  # could not be parsed at all (bad input)


class TextSource(StrEnum):
    TEXT_LAYER = "text_layer"
    OCR = "ocr"
    NONE = "none"  # no text found and no OCR engine available / OCR disabled


#: how ``Page.route_reason`` starts on a page the text stage found blank (and did not OCR)
BLANK_PAGE = "blank page"


class LabelSource(StrEnum):
    PDF = "pdf"  # the document's /PageLabels tree
    PRINTED = "printed"  # a page number printed on the page itself
    INFERRED = "inferred"  # filled in from a consistent run of printed numbers
    PHYSICAL = "physical"  # fallback: 1-based physical page number


@dataclass(slots=True)
class Span:
    """A run of text in one font."""

    text: str
    bbox: BBox
    font: str = ""
    size: float = 0.0
    bold: bool = False
    italic: bool = False


@dataclass(slots=True)
class Line:
    """One line of text on a page, from the text layer or from OCR."""

    text: str
    bbox: BBox
    spans: list[Span] = field(default_factory=list)
    #: block number from the text layer (layout hint for paragraphs); -1 for OCR lines
    block: int = -1
    #: recognition confidence in [0, 1]; 1.0 for text-layer lines
    confidence: float = 1.0

    @property
    def size(self) -> float:
        """Dominant font size (largest span), or the line height when no span carries one."""
        sizes = [s.size for s in self.spans if s.size > 0]
        return max(sizes) if sizes else self.bbox[3] - self.bbox[1]

    @property
    def bold(self) -> bool:
        """True when every non-blank span is bold."""
        spans = [s for s in self.spans if s.text.strip()]
        return bool(spans) and all(s.bold for s in spans)


_BOX, _TEXT = operator.itemgetter(0, 1, 2, 3), operator.itemgetter(4)


@dataclass(slots=True)
class Words:
    """A page's words (PyMuPDF's ``get_text("words")``) in display coordinates, packed.

    The text stage reads them from the same TextPage as the lines, so the table finders need not
    extract the page's text a second time. Packed because every page carries them between stages:
    four floats per word in one array and the texts joined by newlines (a word holds no whitespace)
    take ~40 bytes a word, where a tuple per word took ~230.
    """

    boxes: array  # type: ignore[type-arg]  # array("d"): x0, y0, x1, y1 of each word in turn
    text: str = ""

    @classmethod
    def pack(cls, words: Sequence[Sequence[Any]]) -> Words:
        """From PyMuPDF's word tuples (x0, y0, x1, y1, text, ...), with C-level iteration: a page has
        hundreds of words, and a Python loop over them cost as much as MuPDF's extraction."""
        boxes = array("d", itertools.chain.from_iterable(map(_BOX, words)))
        text = "\n".join(map(_TEXT, words))
        if text.count("\n") != max(len(words) - 1, 0):  # a word holding a newline: it separates texts
            text = "\n".join(w[4].replace("\n", " ") for w in words)
        return cls(boxes, text)

    def __len__(self) -> int:
        return len(self.boxes) // 4

    def __iter__(self) -> Iterator[tuple[float, float, float, float, str]]:
        b = self.boxes
        texts = self.text.split("\n") if b else []
        return zip(b[0::4], b[1::4], b[2::4], b[3::4], texts, strict=True)


@dataclass(slots=True)
class Page:
    """One physical page and the text found on it."""

    index: int
    width: float
    height: float
    lines: list[Line] = field(default_factory=list)
    text_source: TextSource = TextSource.TEXT_LAYER
    #: what produced the lines: "pymupdf", "rapidocr", "transformers", or "" when nothing did
    engine: str = "pymupdf"
    #: why ``text_source`` was chosen (for example "no text layer", "image covers 97% of page")
    route_reason: str = ""
    rotation: int = 0
    #: share of the page area covered by images, in [0, 1]
    image_coverage: float = 0.0
    ocr_confidence: float | None = None
    #: decoding counts of an engine that reports them (speculative decoding: tokens drafted and
    #: accepted, target forwards, tokens/s), summed over the page; None for other engines
    decode_stats: dict[str, float | int | None] | None = None
    #: the text layer's words (for the table finders); None on OCR'd pages and where not read
    words: Words | None = None
    #: characters of the text layer on lines running up and down the displayed page (a table
    #: printed sideways), read by the text stage so the table stage need not read them again
    vertical_chars: tuple[int, int] = (0, 0)
    #: characters on lines running right to left, upside down, as displayed (a table printed
    #: turned half round), counted by the text stage like ``vertical_chars``
    reversed_chars: int = 0
    #: the text stage found the page blank (nothing or almost nothing drawn) and did not OCR it;
    #: ``route_reason`` says why. Last, so a page stored before it existed reads back as a prefix
    #: of the fields (:func:`upgrade_page` derives it from the reason, the one place that does)
    blank: bool = False
    #: the angle (degrees) by which an OCR'd page's text lines lean in its image, positive when
    #: they fall to the right (``ocr.page_skew``; 0.0 when level, not OCR'd, or not measured): the
    #: table stage looks for a scan's rules on the image turned level by it (``tables.scanned``)
    skew: float = 0.0

    @property
    def text(self) -> str:
        return "\n".join(line.text for line in self.lines)


def upgrade_page(fields: dict[str, Any]) -> dict[str, Any]:
    """A stored page's fields (name -> value) with those it was stored without filled in: a page
    stored before ``Page.blank`` existed is blank when its ``route_reason`` says so (the page store
    and the stage outputs both read older pages through here)."""
    if "blank" not in fields:
        fields["blank"] = str(fields.get("route_reason", "")).startswith(BLANK_PAGE)
    return fields


@dataclass(slots=True)
class PageLabel:
    """The printed label of one physical page."""

    page_index: int
    label: str
    source: LabelSource
    confidence: float
    #: index in ``Page.lines`` of the printed page-number line, so later stages treat it as furniture
    line_index: int | None = None


@dataclass(slots=True)
class Cell:
    """One table cell. A spanning cell sits at its first row and column; covered cells are absent."""

    row: int
    col: int
    text: str
    page_index: int
    row_span: int = 1
    col_span: int = 1
    bbox: BBox | None = None
    is_header: bool = False
    #: size out of line with its row or column: worth a human look (possible merged cell)
    suspicious: bool = False


@dataclass(slots=True)
class Table:
    """A table, possibly merged from parts on consecutive pages."""

    table_id: str
    first_page_index: int
    last_page_index: int
    n_rows: int
    n_cols: int
    cells: list[Cell]
    #: bbox on the first page
    bbox: BBox
    header_rows: int = 0
    #: every physical page that contributed rows, in order
    pages: list[int] = field(default_factory=list)
    #: how the table was found, e.g. "lines" or "text"
    strategy: str = ""
    caption: str = ""
    #: what the page prints around it for a reader (tables.statement): the statement's title,
    #: its units ("In millions"), one heading per column recovered from the lines above the grid
    #: ("Years ended September 28, 2024"; empty when none), and the label printed right above a
    #: table that continues another's columns ("Investing activities:")
    title: str = ""
    units: str = ""
    column_headers: list[str] = field(default_factory=list)
    row_group: str = ""
    #: how the parts were joined: "" (single page), "rows" or "columns"
    merge_kind: str = ""
    #: (page_index, bbox) of every part, and of each line of column headings printed above the
    #: grid that ``column_headers`` holds, so other stages can tell table text from body text
    regions: list[tuple[int, BBox]] = field(default_factory=list)
    #: (page_index, text) of cells a part held that the table keeps once, from an earlier part: a
    #: continuation's repeated header row or stub column. The text was on that page, inside the
    #: table, and is the table's: conservation accounts it here, the paragraphs leave it out.
    repeats: list[tuple[int, str]] = field(default_factory=list)
    #: the lines of column headings printed above the grid on its first page, top first, whose
    #: words ``column_headers`` (or the header cells) hold ("Year Ended", "Jan 26, 2025 Jan 28,
    #: 2024"): the table's text, as its cells are; the paragraphs leave them out
    heads: list[str] = field(default_factory=list)

    def grid(self) -> list[list[str]]:
        """The table as a rectangular list of rows (covered cells empty)."""
        rows = [["" for _ in range(self.n_cols)] for _ in range(self.n_rows)]
        for c in self.cells:
            if c.row < self.n_rows and c.col < self.n_cols:
                rows[c.row][c.col] = c.text
        return rows


@dataclass(slots=True)
class Section:
    section_id: str
    parent_id: str | None
    level: int
    title: str
    page_index: int
    page_label: str = ""
    #: 0-based position among all sections of the document
    ordinal: int = 0
    #: clause number when the heading carries one ("3", "3.2", "Article 5")
    number: str = ""


@dataclass(slots=True)
class Paragraph:
    paragraph_id: str
    section_id: str | None
    #: 0-based position in the document
    reading_order: int
    page_index: int
    text: str
    bbox: BBox
    page_label: str = ""
    #: validation flags such as "replacement_char", "mojibake", "control_char"
    flags: list[str] = field(default_factory=list)
    #: "body", "heading", "list_item", "clause"
    kind: str = "body"
    #: the paragraph continues from the previous page (or past a table) and was joined
    continued: bool = False
    #: last physical page the paragraph reaches (equal to page_index unless continued)
    last_page_index: int = -1


@dataclass(slots=True)
class SourceDocument:
    """A registered input file: its identity and where its bytes are kept."""

    doc_id: str  # sha256 of the bytes
    file_name: str
    source_path: str  # where it was found (inbox)
    stored_path: str  # content-addressed copy kept by the pipeline
    size_bytes: int
    #: detected from magic bytes: "pdf", "png", "jpeg", "tiff", or "unknown"
    kind: str


@dataclass(slots=True)
class ExtractedDocument:
    """Output of the text stage: the document's pages, or the reason it could not be read."""

    source: SourceDocument
    status: DocStatus
    #: in page order; a ``pagestore.PageList`` from the text stage (long documents wait on disk)
    pages: Sequence[Page] = field(default_factory=list)
    error: str = ""
    title: str = ""
    #: physical page count (0 for a failed document)
    n_pages: int = 0
    #: the PDF's /PageLabels, one per page ("" before its first range), or None where it has none:
    #: read by the text stage, so the label stage never opens the file again
    pdf_page_labels: list[str] | None = None
    #: pages whose text came from the text layer: the table stage opens the file only when some did
    #: (None: not counted, as in outputs of earlier versions)
    text_layer_pages: int | None = None
    #: pages read by OCR: the table stage looks for ruled tables on them (None: not counted)
    ocr_pages: int | None = None
    #: MuPDF had to repair the file to open it (a damaged file: its empty pages may be lost ones)
    repaired: bool = False
    #: page index -> "image" | "graphics" | "blank" for every page without text (see integrity.py)
    page_content: dict[int, str] = field(default_factory=dict)
    #: page index -> why its content stream is broken (a missing object, undecodable data)
    damaged_pages: dict[int, str] = field(default_factory=dict)
    #: page index -> "damaged" | "no ink" | "left blank notice" for every empty page (integrity.py)
    blank_reasons: dict[int, str] = field(default_factory=dict)
    #: the settings the document is parsed under, resolved by the text stage and used by every
    #: stage after it (None only on an object built by hand, not by ``pipeline.extract_document``)
    settings: SettingsSnapshot | None = None

    @property
    def ok(self) -> bool:
        return self.status != DocStatus.FAILED


@dataclass(slots=True)
class ParagraphResult:
    paragraphs: list[Paragraph] = field(default_factory=list)
    sections: list[Section] = field(default_factory=list)
    #: page index → {line index → "page_number" | "header" | "footer"}: the furniture found on
    #: each page, the one place it is decided (the warehouse's ``lines.furniture``; the pages
    #: themselves are read-only input and carry no mark)
    furniture: dict[int, dict[int, str]] = field(default_factory=dict)
    #: ids of the tables whose text the paragraph stage kept as paragraphs (columns of prose taken
    #: for a table): their text is in ``paragraphs``, so the reading-order sequence leaves them out
    read_as_text: list[str] = field(default_factory=list)
