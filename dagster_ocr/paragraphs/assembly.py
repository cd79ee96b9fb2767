"""``build_paragraphs``: the stages in order over a document's pages, and the ids and labels."""

from __future__ import annotations

import logging
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import replace

from dagster_ocr.model import Page, PageLabel, Paragraph, ParagraphResult, Section, Table
from dagster_ocr.pagestore import in_page_order
from dagster_ocr.paragraphs.columns import _reading_order
from dagster_ocr.paragraphs.furniture import (
    _attach_drop_caps,
    _keep_page_body,
    _looks_like_prose,
    _page_furniture,
    _repeated_furniture,
    _TableText,
)
from dagster_ocr.paragraphs.grouping import _Grouper
from dagster_ocr.paragraphs.headings import _detect_headings
from dagster_ocr.paragraphs.rows import _make_rows, _ocr_rows
from dagster_ocr.paragraphs.settings import ParagraphSettings
from dagster_ocr.validation import validate_text

log = logging.getLogger(__name__)


def _label_for(page_index: int, labels: dict[int, str]) -> str:
    return labels[page_index] if page_index in labels else str(page_index + 1)


def _id_label(label: str) -> str:
    return re.sub(r"[^A-Za-z0-9.\-]+", "-", label).strip("-") or "x"


def build_paragraphs(
    pages: Sequence[Page],
    labels: list[PageLabel],
    tables: list[Table],
    settings: ParagraphSettings,
) -> ParagraphResult:
    """Rebuild the paragraphs and the section tree of a document from its pages' lines.

    Furniture (page numbers, running headers and footers) is returned in ``furniture`` (page
    index -> line index -> kind; the pages are not touched) and left out, as is text inside any
    table region. See the
    package docstring (``dagster_ocr.paragraphs``) for the rules and the id scheme.
    """
    s = settings
    result = ParagraphResult()
    number_lines = {lab.page_index: lab.line_index for lab in labels if lab.line_index is not None}
    repeated = _repeated_furniture(in_page_order(pages), number_lines, s)
    # furniture never takes a document's body: where it would take most of the text, what
    # repeats is the body itself, and the document has no furniture
    no_furniture = repeated.takes_the_body(s)
    if no_furniture:
        log.info(
            "furniture would take %d of %d characters: every line is kept as body text",
            repeated.furniture_chars,
            repeated.chars,
        )
    tables_by_page: dict[int, _TableText] = defaultdict(_TableText)
    for t in tables:
        if _looks_like_prose(t, s):
            # two columns of running text taken for a table: dropping it would lose body text
            log.info("table %s reads as running text; its text stays in the paragraphs", t.table_id)
            result.read_as_text.append(t.table_id)
            continue
        texts: dict[int, list[str]] = defaultdict(list)
        for c in t.cells:
            texts[c.page_index].append(c.text)
        for page_index, text in getattr(t, "repeats", None) or ():
            texts[page_index].append(text)
        texts[t.first_page_index] += t.heads  # the lines of headings above its grid
        for page_index, bbox in t.regions:
            tables_by_page[page_index].add(bbox, texts.pop(page_index, []))

    grouper = _Grouper({k: v.regions for k, v in tables_by_page.items()}, s)
    flow = 0
    n_pages = 0
    # one page at a time (pages may be read back from disk: see pagestore); what is kept of a
    # page is its paragraphs' text and a summary of their rows, not its lines
    for page in in_page_order(pages):
        n_pages += 1
        number_line = number_lines.get(page.index)
        marks = (
            {}
            if no_furniture
            else _page_furniture(page, repeated.keys, number_line, s, short_document=repeated.too_short(s))
        )
        held = tables_by_page.get(page.index)
        # a line in a table region the table holds is the table's; the words it does not hold
        # (a note or a sentence the region swallowed) stay body text: a table never costs text
        rest = held.split(page.lines, s) if held else {}
        claimed = {i for i, text in rest.items() if not text.strip()}
        # a table row near the page edge is the table's, not a running header or a page number
        # (nor is a header year the label stage took for the page's number: the cell holds it)
        marks = {i: kind for i, kind in marks.items() if i not in claimed}
        marks = _keep_page_body(page, marks, set(rest))
        if marks:
            result.furniture[page.index] = marks
        body = [
            ln if rest.get(i, ln.text) == ln.text else replace(ln, text=rest[i])
            for i, ln in enumerate(page.lines)
            if i not in marks and ln.text.strip() and i not in claimed
        ]
        body = _attach_drop_caps(body, s)
        if body and all(ln.block < 0 for ln in body):
            # OCR lines arrive in the OCR stage's reading order (see _ocr_rows): keep it
            page_rows = _ocr_rows(body, page.index, s)
            for r in page_rows:
                r.flow += flow
            flow = page_rows[-1].flow + 1 if page_rows else flow
        else:
            page_rows, flow = _reading_order(_make_rows(body, page.index, s), s, flow)
        grouper.vocab.add_lines([ln.text for ln in page.lines])  # as the table stage counts them
        grouper.add_page(page_rows)

    paras = grouper.finish()
    _detect_headings(paras, grouper.weights, s)

    label_map = {lab.page_index: lab.label for lab in labels}
    stack: list[Section] = []
    current: Section | None = None
    counters: dict[str, int] = defaultdict(int)
    for order, p in enumerate(paras):
        first_page = p.first_page
        label = _label_for(first_page, label_map)
        if p.kind == "heading":
            while stack and stack[-1].level >= p.heading_level:
                stack.pop()
            current = Section(
                section_id=f"s{len(result.sections)}",
                parent_id=stack[-1].section_id if stack else None,
                level=p.heading_level,
                title=p.text.strip(),
                page_index=first_page,
                page_label=label,
                ordinal=len(result.sections),
                number=p.number,
            )
            result.sections.append(current)
            stack.append(current)
        # (section, ordinal within it) is unique, and the label part holds no "_": so is the id
        sec_key = str(current.ordinal) if current is not None else "n"
        pid = f"p_{_id_label(label)}_{sec_key}_{counters[sec_key]}"
        counters[sec_key] += 1
        text = p.text.strip()
        result.paragraphs.append(
            Paragraph(
                paragraph_id=pid,
                section_id=current.section_id if current is not None else None,
                reading_order=order,
                page_index=first_page,
                text=text,
                bbox=p.first_bbox,
                page_label=label,
                flags=validate_text(text),
                kind=p.kind,
                continued=p.continued,
                last_page_index=p.last_page,
            )
        )
    log.debug(
        "built %d paragraphs and %d sections from %d pages",
        len(result.paragraphs),
        len(result.sections),
        n_pages,
    )
    return result
