"""Paragraphs and sections on real PDFs, scored against docling's ground-truth Markdown.

Score: the share of ground-truth paragraphs (Markdown blocks, list items and headings; tables
and images skipped) that equal one of our paragraphs, one-to-one, after normalisation (all
whitespace removed, NFKC for ligatures, dashes/quotes folded, list markers and Markdown escapes
removed, control characters dropped). Thresholds sit just under what the code reached when the
test was last tightened (1.00, 1.00, 0.98, 0.61) so a regression fails.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from pathlib import Path

import pymupdf
import pytest

from dagster_ocr.model import Page, ParagraphResult
from dagster_ocr.paragraphs import ParagraphSettings, build_paragraphs

try:  # the real text-layer module when present; otherwise a minimal local reader
    from dagster_ocr.textlayer import extract_lines
except ImportError:  # pragma: no cover - only while textlayer is being written
    from dagster_ocr.model import Line, Span

    def extract_lines(page: pymupdf.Page) -> list[Line]:
        lines = []
        for block in page.get_text("dict")["blocks"]:
            for ln in block.get("lines", []):
                spans = [
                    Span(s["text"], tuple(s["bbox"]), s["font"], s["size"], bool(s["flags"] & 16))
                    for s in ln["spans"]
                ]
                text = "".join(s.text for s in spans).strip()
                if text:
                    lines.append(Line(text, tuple(ln["bbox"]), spans, block=block["number"]))
        return lines


_FOLD = str.maketrans({"—": "-", "–": "-", "⁄": "/", "’": "'", "‘": "'", "“": '"', "”": '"'})
_LIST = re.compile(r"^\s*(?:[-*•]|\d+\.)\s+")

THRESHOLDS = {
    "2305.03393v1-pg9": 0.95,
    "amt_handbook_sample": 0.95,
    "multi_page": 0.95,
    "table_mislabeled_as_picture": 0.55,
}


def norm(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).replace("\\_", "_").replace("\\", "")
    text = re.sub(r"^\s*[-*•]\s+", "", text)
    text = "".join(c for c in text.translate(_FOLD) if unicodedata.category(c) != "Cc")
    return re.sub(r"\s+", "", text)


def gt_paragraphs(md: str) -> list[str]:
    out: list[str] = []
    for block in re.split(r"\n\s*\n", md):
        lines = [ln for ln in block.strip().splitlines() if ln.strip()]
        if not lines or lines[0].startswith(("|", "<!--")):
            continue
        cur: list[str] = []
        for ln in lines:
            if _LIST.match(ln) and cur:
                out.append(" ".join(cur))
                cur = []
            cur.append(re.sub(r"^#+\s*", "", ln))
        if cur:
            out.append(" ".join(cur))
    return [n for n in (norm(p) for p in out) if n]


def load(pdf: Path) -> list[Page]:
    doc = pymupdf.open(pdf)
    pages = []
    for page in doc:
        pages.append(
            Page(index=page.number, width=page.rect.width, height=page.rect.height, lines=extract_lines(page))
        )
    return pages


def run(corpus: Path, name: str) -> tuple[list[Page], ParagraphResult, float, int]:
    d = corpus / "docling" / name
    pages = load(next(d.glob("*.pdf")))
    result = build_paragraphs(pages, [], [], settings=ParagraphSettings())
    gt = Counter(gt_paragraphs(next((d / "groundtruth").glob("*.md")).read_text(encoding="utf-8")))
    ours = Counter(norm(p.text) for p in result.paragraphs)
    matched = sum(min(n, ours[g]) for g, n in gt.items())
    return pages, result, matched / sum(gt.values()), matched


@pytest.mark.parametrize("name", sorted(THRESHOLDS))
def test_ground_truth_paragraphs_recovered(corpus: Path, name: str) -> None:
    _, result, share, _ = run(corpus, name)
    assert share >= THRESHOLDS[name], f"{name}: {share:.2f}"
    ids = [p.paragraph_id for p in result.paragraphs]
    assert len(ids) == len(set(ids))
    assert all(p.text.strip() for p in result.paragraphs)


def test_multi_page_sections(corpus: Path) -> None:
    _, result, _, _ = run(corpus, "multi_page")
    titles = [s.title for s in result.sections]
    assert "The Modern Era (1990s - Present)" in titles
    assert "A Glimpse Into the Future" in titles
    assert len(titles) == 11
    # the document title is set smaller than the section headings: a lower rank
    assert result.sections[0].title == "The Evolution of the Word Processor"
    assert {s.level for s in result.sections[1:]} == {1}
    items = [p for p in result.paragraphs if p.kind == "list_item"]
    assert len(items) == 16 and all(p.text.startswith("• ") for p in items)
    assert sum(p.kind == "clause" for p in result.paragraphs) == 10  # the two numbered lists
    assert [p.page_index for p in result.paragraphs] == sorted(p.page_index for p in result.paragraphs)


def test_two_column_page_flows_across_columns(corpus: Path) -> None:
    _, result, _, _ = run(corpus, "amt_handbook_sample")
    texts = [p.text for p in result.paragraphs]
    joined = [t for t in texts if "The wing type that is the most common ranges" in t]
    assert len(joined) == 1  # the sentence runs from the foot of the left column to the right one
    assert [s.title for s in result.sections] == [
        "Boots Self-Locking Nut",
        "Stainless Steel Self-Locking Nut",
        "Elastic Stop Nut",
    ]
    order = [
        texts.index(next(t for t in texts if t.startswith(s)))
        for s in (
            "pulleys, provided",
            "The two general types",
            "The Boots self-locking nut is",
            "The stainless steel self-locking nut",
            "The elastic stop nut",
        )
    ]
    assert order == sorted(order)
    assert not any(t == "7-45" for t in texts)  # the printed page number is furniture


def test_running_head_is_furniture(corpus: Path) -> None:
    pages, result, _, _ = run(corpus, "2305.03393v1-pg9")
    marked = {pages[0].lines[i].text: kind for i, kind in result.furniture.get(0, {}).items()}
    assert marked.get("9") == "page_number"
    assert marked.get("Optimized Table Tokenization for Table Structure Recognition") == "header"
    assert result.paragraphs[0].text.startswith("order to compute the TED score.")
    heads = [(s.title, s.number, s.level) for s in result.sections]
    assert heads == [("5.1 Hyper Parameter Optimization", "5.1", 2), ("5.2 Quantitative Results", "5.2", 2)]


def test_symbol_font_bullets_do_not_flag_text(corpus: Path) -> None:
    _, result, _, _ = run(corpus, "table_mislabeled_as_picture")
    flagged = [p.text for p in result.paragraphs if p.flags]
    assert flagged == []
    assert sum(p.kind == "list_item" for p in result.paragraphs) >= 30


def test_olmocr_page_with_two_layouts_reads_in_order(corpus: Path) -> None:
    """multi_column_miss.pdf: the top half and the article below use different gutters; a drop cap."""
    pages = load(corpus / "olmocr_bench" / "pdfs" / "multi_column_miss.pdf")
    text = "\n\n".join(
        p.text for p in build_paragraphs(pages, [], [], settings=ParagraphSettings()).paragraphs
    )
    flat = re.sub(r"\s+", " ", text)
    assert "Over the past three decades increasing pressure from non-governmental" in flat
    # olmOCR-bench "order" checks: each pair must come in this order
    for before, after in [
        ("It now looks like that with vigilance", "this leaves BAT to argue why it should not be held"),
        (
            "Corporate social responsibility and the tobacco industry: hope or hype?",
            "The unprecedented expansion",
        ),
        ("Corporate social responsibility (CSR) emerged", "perspective on its own behaviour; and reflects"),
    ]:
        assert 0 <= flat.find(before) < flat.find(after), (before, after)
