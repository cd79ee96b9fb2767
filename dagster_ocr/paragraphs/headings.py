"""Headings and sections: which paragraphs are headings, and their levels."""

from __future__ import annotations

import re

from dagster_ocr.paragraphs.grouping import _Para
from dagster_ocr.paragraphs.patterns import (
    _BARE_NUMBER_RE,
    _CJK_CLAUSE_RE,
    _DOTTED_RE,
    _KEYWORD_RE,
    _NUMBER_RE,
    _ROMAN,
    _SECTION_SIGN_RE,
    _ends_sentence,
)
from dagster_ocr.paragraphs.settings import ParagraphSettings

_KEYWORDS = {
    # canonical order: a document's keywords are ranked by this order to give section levels
    "part": 0,
    "book": 0,
    "title": 1,
    "chapter": 2,
    "section": 3,
    "article": 4,
    "art.": 4,
    "clause": 5,
    "rule": 5,
    "annex": 1,
    "appendix": 1,
    "schedule": 1,
}


def _heading_numbering(text: str) -> tuple[str, str, int] | None:
    """(scheme, number, depth) when ``text`` looks like a numbered heading."""
    t = text.strip()
    if m := _KEYWORD_RE.match(t):
        return "kw:" + m["kw"].lower(), f"{m['kw']} {m['num']}", 1
    if m := _CJK_CLAUSE_RE.match(t):
        return "cjk:" + m["kw"], m.group(0), 1
    if m := _SECTION_SIGN_RE.match(t):
        return "sect", m["num"], 1
    if m := _DOTTED_RE.match(t):
        return "num", m["num"], m["num"].count(".") + 1
    if m := (_NUMBER_RE.match(t) or _BARE_NUMBER_RE.match(t)):
        return "num", m["num"], 1
    if m := re.match(rf"^(?P<num>{_ROMAN})\.\s+\S", t):
        return "roman", m["num"], 1
    return None


def _detect_headings(
    paras: list[_Para], weights: dict[tuple[bool, float], int], s: ParagraphSettings
) -> None:
    """Mark headings among sealed paragraphs; ``weights``: characters per (OCR'd, font size).

    OCR'd rows are measured against the OCR'd body size and text-layer rows against the text
    layer's: a size estimated from ink differs from a font's by its own bias, so in a document
    of typeset pages and one scanned page every scanned line would otherwise read as "larger".
    """
    if not weights:
        return
    bodies: dict[bool, float] = {}
    for ocr in (False, True):
        sized = {size: n for (o, size), n in weights.items() if o == ocr}
        if sized:
            bodies[ocr] = max(sized, key=lambda k: sized[k])

    for i, p in enumerate(paras):
        text = p.text.strip()
        if (
            p.n_rows > s.heading_max_rows
            or p.confidence < s.heading_min_confidence
            or len(text) > s.heading_max_chars
            or not any(c.isalpha() for c in text)
            or text[-1] in ".,;"
            or p.kind == "list_item"
            or text[0].islower()
            # a line wholly in parentheses that starts in lower case is a note on what is above
            # or below it ("(in millions, except per share data)" under a statement's title,
            # "(unaudited)"), no heading: it was the section of every chunk of a balance sheet
            or (text[0] == "(" and text[-1] == ")" and text[1:2].islower())
        ):
            continue
        size = p.size
        body = bodies.get(p.ocr) or bodies[not p.ocr]
        larger = size >= body * s.heading_size_ratio
        bold = p.bold
        nxt = paras[i + 1] if i + 1 < len(paras) else None
        italic = (
            p.italic
            and p.n_rows == 1
            and len(text.split()) <= 10
            and text[0].isupper()
            and nxt is not None
            and not nxt.italic
        )
        numbering = _heading_numbering(text)
        numbered = False
        if numbering is not None and size >= body * 0.95:
            scheme = numbering[0]
            words = len(text.split())
            if scheme.startswith(("kw:", "cjk:")):
                # "Article 5" alone or with a short title; "第五条 ..." running into text is a clause
                numbered = (words <= 12 if (bold or larger) else words <= 6) and not _ends_sentence(text)
            elif scheme in ("num", "roman"):
                rest = text[len(numbering[1]) :].lstrip(". )")
                numbered = bool(rest) and rest[0].isupper() and words <= 12 and (bold or larger)
        if size >= body * 0.95 and (larger or bold or italic or numbered):
            p.kind = "heading"
            p.number = numbering[1] if numbering else ""
    _assign_levels([p for p in paras if p.kind == "heading"])


def _assign_levels(heads: list[_Para]) -> None:
    sizes = sorted({round(p.size * 2) / 2 for p in heads}, reverse=True)

    def scheme_rank(k: str) -> int:
        return _KEYWORDS.get(k[3:], 9) if k.startswith("kw:") else "编部章节条款项".find(k[4:])

    schemes = {(_heading_numbering(p.text) or ("",))[0] for p in heads}
    kw_order = sorted((k for k in schemes if k.startswith(("kw:", "cjk:"))), key=scheme_rank)
    depth_by_size: dict[float, int] = {}
    for p in heads:
        num = _heading_numbering(p.text)
        if num and num[0] == "num":
            key = round(p.size * 2) / 2
            depth_by_size[key] = min(depth_by_size.get(key, 99), num[2])
    for p in heads:
        num = _heading_numbering(p.text)
        key = round(p.size * 2) / 2
        if num and num[0] == "num":
            p.heading_level = num[2]
        elif num and num[0] in kw_order:
            p.heading_level = kw_order.index(num[0]) + 1
        elif key in depth_by_size:
            p.heading_level = depth_by_size[key]
        else:
            p.heading_level = sizes.index(key) + 1
