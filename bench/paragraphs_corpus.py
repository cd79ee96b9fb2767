"""Paragraph reconstruction against docling's ground truth.

For every ``corpus/docling/*/`` document: extract the text layer, build paragraphs, and print the
share of ground-truth Markdown paragraphs that appear as exactly one of ours (one-to-one) (all whitespace
removed, dashes and quotes folded, list markers and Markdown escapes removed), plus timing.

    python bench/paragraphs_corpus.py [CORPUS_DIR]
"""

from __future__ import annotations

import re
import sys
import time
import unicodedata
from collections import Counter
from pathlib import Path

import pymupdf

from dagster_ocr.model import Page
from dagster_ocr.paragraphs import build_paragraphs
from dagster_ocr.textlayer import extract_lines

_FOLD = str.maketrans({"—": "-", "–": "-", "⁄": "/", "’": "'", "‘": "'", "“": '"', "”": '"'})
_LIST = re.compile(r"^\s*(?:[-*•]|\d+\.)\s+")


def norm(text: str) -> str:
    """Comparison form: no Markdown escapes, no leading list marker, single spaces."""
    text = unicodedata.normalize("NFKC", text)  # ligatures: docling expands them, the text layer may not
    text = text.replace("\\_", "_").replace("\\", "")
    text = re.sub(r"^\s*[-*•]\s+", "", text)
    # docling folds dashes and quotes and spaces out bold runs ("Word (1983) :"): compare without them
    text = "".join(c for c in text.translate(_FOLD) if unicodedata.category(c) != "Cc")
    return re.sub(r"\s+", "", text)


def gt_paragraphs(md: str) -> list[str]:
    """Paragraphs of a docling Markdown file: blocks, list items and headings; tables and images skipped."""
    out: list[str] = []
    for block in re.split(r"\n\s*\n", md):
        lines = [ln for ln in block.strip().splitlines() if ln.strip()]
        if not lines or lines[0].startswith("|") or lines[0].startswith("<!--"):
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


def score(pdf: Path, md: Path) -> tuple[float, int, int, float]:
    """(share of GT paragraphs matched exactly once, matched, GT count, seconds)."""
    t = time.perf_counter()
    doc = pymupdf.open(pdf)
    pages = []
    for page in doc:
        pages.append(Page(index=page.number, width=page.rect.width, height=page.rect.height,
                          lines=extract_lines(page)))
    result = build_paragraphs(pages, [], [])
    seconds = time.perf_counter() - t
    ours = [norm(p.text) for p in result.paragraphs]
    gt = gt_paragraphs(md.read_text(encoding="utf-8"))
    # one-to-one: each of our paragraphs can stand for one ground-truth paragraph only
    matched = sum(min(n, Counter(ours)[g]) for g, n in Counter(gt).items())
    return matched / max(len(gt), 1), matched, len(gt), seconds


def main() -> None:
    default = Path(__file__).resolve().parents[2] / "shared" / "corpus"
    corpus = Path(sys.argv[1]) if len(sys.argv) > 1 else default
    total_m = total_g = 0
    for d in sorted((corpus / "docling").iterdir()):
        pdf = next(d.glob("*.pdf"), None)
        md = next((d / "groundtruth").glob("*.md"), None)
        if pdf is None or md is None:
            continue
        share, m, g, sec = score(pdf, md)
        total_m, total_g = total_m + m, total_g + g
        print(f"{d.name:32s} {m:3d}/{g:3d} = {share:.2f}   {sec * 1000:.0f} ms")
    print(f"{'ALL':32s} {total_m:3d}/{total_g:3d} = {total_m / max(total_g, 1):.2f}")


if __name__ == "__main__":
    main()
