"""Paragraphs on the shared corpus, side by side with PyMuPDF's plain text blocks (the baseline).

Two methods run on the same files in the same process:

* ``ours``   the pipeline's own stages (``pipeline.parse``: text layer → labels → tables →
  paragraphs), so furniture and table text leave the paragraphs as they do in production;
* ``blocks`` ``page.get_text("blocks")``: every text block one paragraph, lines joined by a space.

Metrics on ``corpus/docling/*`` (ground truth: docling's Markdown; blocks, list items and headings
are paragraphs, tables and images skipped). Texts are compared in a normal form: NFKC, dashes and
quotes folded, Markdown escapes and leading list markers removed, all whitespace removed.

* ``exact``  share of ground-truth paragraphs equal to one predicted paragraph (one-to-one);
* ``bP/bR/bF`` paragraph-boundary precision, recall, F1. A boundary is a paragraph start, keyed by
  its first 24 normalised characters. Recall: ground-truth starts found among the predicted
  starts (multiset). Precision: predicted starts that are ground-truth starts, among the predicted
  starts whose key occurs in the ground-truth text at all (text the ground truth leaves out, such
  as table cells and page furniture, is not a boundary error);
* ``sim``    text similarity of the whole document: difflib ratio of the word sequences
  (order-sensitive; 1.0 = identical).

olmOCR-bench checks (``corpus/olmocr_bench/dataset_dev.jsonl``): ``present`` (the text occurs on
the page with at most ``max_diffs`` edits), ``absent`` (it does not), ``order`` (``before`` occurs
before ``after``). The page's text is its paragraphs in reading order, joined by blank lines.
``table`` checks belong to the table benchmark and are skipped here.

    .venv/bin/python bench/paragraphs_corpus.py [CORPUS_DIR]
"""

from __future__ import annotations

import difflib
import json
import re
import sys
import time
import unicodedata
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pymupdf

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import source_of

from dagster_ocr.pipeline import parse

KEY = 24
_FOLD = str.maketrans(
    {"—": "-", "–": "-", "‐": "-", "⁄": "/", "’": "'", "‘": "'", "“": '"', "”": '"', "\u00a0": " "}
)
_LIST = re.compile(r"^\s*(?:[-*•]|\d+\.)\s+")

#: (page index, paragraph text) in reading order, and seconds spent
Method = Callable[[Path], tuple[list[tuple[int, str]], float, int]]


def ours(pdf: Path) -> tuple[list[tuple[int, str]], float, int]:
    source = source_of(pdf)
    t = time.perf_counter()
    out = parse(source)
    seconds = time.perf_counter() - t
    return [(p.page_index, p.text) for p in out.paragraphs.paragraphs], seconds, out.document.n_pages


def blocks(pdf: Path) -> tuple[list[tuple[int, str]], float, int]:
    t = time.perf_counter()
    doc = pymupdf.open(pdf)
    paras = []
    for page in doc:
        for b in page.get_text("blocks"):
            if b[6] == 0 and b[4].strip():
                paras.append((page.number, re.sub(r"\s*\n\s*", " ", b[4]).strip()))
    return paras, time.perf_counter() - t, doc.page_count


METHODS: dict[str, Method] = {"ours": ours, "blocks": blocks}


# ------------------------------------------------------------------------------- docling


def norm(text: str) -> str:
    """Comparison form: no Markdown escapes, no leading list marker, no whitespace."""
    text = unicodedata.normalize("NFKC", text)  # ligatures: docling expands them, the text layer may not
    text = text.replace("\\_", "_").replace("\\", "")
    text = re.sub(r"^\s*[-*•]\s+", "", text)
    text = "".join(c for c in text.translate(_FOLD) if unicodedata.category(c) != "Cc")
    return re.sub(r"\s+", "", text)


def words(text: str) -> list[str]:
    text = unicodedata.normalize("NFKC", text).replace("\\_", "_").replace("\\", "").translate(_FOLD)
    return re.findall(r"\w+|[^\w\s]", text)


def gt_paragraphs(md: str) -> list[str]:
    """Raw paragraphs of a docling Markdown file: blocks, list items and headings."""
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
    return out


def docling_scores(gt_raw: list[str], pred_raw: list[str]) -> dict[str, float]:
    gt = [n for n in map(norm, gt_raw) if n]
    pred = [n for n in map(norm, pred_raw) if n]
    pred_count = Counter(pred)
    exact = sum(min(n, pred_count[g]) for g, n in Counter(gt).items())
    gt_text = "".join(gt)
    gt_starts = Counter(g[:KEY] for g in gt)
    pred_starts = Counter(p[:KEY] for p in pred if p[:KEY] in gt_text)
    hits = sum((gt_starts & pred_starts).values())
    p = hits / max(sum(pred_starts.values()), 1)
    r = hits / max(len(gt), 1)
    sim = difflib.SequenceMatcher(None, words(" ".join(gt_raw)), words(" ".join(pred_raw)), autojunk=False)
    return {
        "gt": len(gt),
        "pred": len(pred),
        "exact": exact,
        "bP": p,
        "bR": r,
        "bF": 2 * p * r / (p + r) if p + r else 0.0,
        "sim": sim.ratio(),
    }


# ------------------------------------------------------------------------------- olmOCR-bench


def olm_norm(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).translate(_FOLD)
    text = text.replace("**", "").replace("\\", "")
    return re.sub(r"\s+", " ", text).strip()


def fuzzy_find(pattern: str, text: str, max_diffs: int) -> int:
    """End offset of the first approximate occurrence of ``pattern`` in ``text`` (Sellers), or -1."""
    if max_diffs == 0 or not pattern:
        i = text.find(pattern)
        return i + len(pattern) if i >= 0 else -1
    m = len(pattern)
    col = list(range(m + 1))
    for j, c in enumerate(text):
        prev_diag, col[0] = col[0], 0
        for i in range(1, m + 1):
            cur = min(col[i] + 1, col[i - 1] + 1, prev_diag + (pattern[i - 1] != c))
            prev_diag, col[i] = col[i], cur
        if col[m] <= max_diffs:
            return j + 1
    return -1


def fuzzy_start(pattern: str, text: str, max_diffs: int) -> int:
    """Start offset of the first approximate occurrence (searching the reversed strings), or -1."""
    end = fuzzy_find(pattern[::-1], text[::-1], max_diffs)
    return len(text) - end if end >= 0 else -1


def olm_check(check: dict, page_text: str) -> bool:
    text = olm_norm(page_text)
    diffs = int(check.get("max_diffs", 0))
    if check["type"] == "present":
        return fuzzy_find(olm_norm(check["text"]), text, diffs) >= 0
    if check["type"] == "absent":
        return fuzzy_find(olm_norm(check["text"]), text, diffs) < 0
    if check["type"] == "order":
        before = fuzzy_start(olm_norm(check["before"]), text, diffs)
        after = fuzzy_start(olm_norm(check["after"]), text, diffs)
        return before >= 0 and after >= 0 and before < after
    raise ValueError(check["type"])


# ------------------------------------------------------------------------------- main


def main() -> None:
    default = Path(__file__).resolve().parents[2] / "shared" / "corpus"
    corpus = Path(sys.argv[1]) if len(sys.argv) > 1 else default

    print("docling ground truth (ours | blocks)")
    head = f"{'document':28} {'gt':>4} " + " ".join(
        f"{m:>6}" for m in ("pred", "exact", "bP", "bR", "bF", "sim")
    )
    print(f"{head}   |  pred  exact    bP     bR     bF    sim")
    totals = {m: Counter() for m in METHODS}
    seconds = Counter()
    n_pages = Counter()
    for d in sorted((corpus / "docling").iterdir()):
        pdf = next(d.glob("*.pdf"), None)
        md = next((d / "groundtruth").glob("*.md"), None)
        if pdf is None or md is None:
            continue
        gt_raw = gt_paragraphs(md.read_text(encoding="utf-8"))
        row = []
        for name, method in METHODS.items():
            paras, sec, pages = method(pdf)
            seconds[name] += sec
            n_pages[name] += pages
            sc = docling_scores(gt_raw, [t for _, t in paras])
            totals[name].update({k: v for k, v in sc.items()})
            totals[name]["docs"] += 1
            row.append(sc)
        a, b = row
        print(
            f"{d.name:28} {a['gt']:4d} {a['pred']:6d} {a['exact'] / a['gt']:6.2f} {a['bP']:6.2f}"
            f" {a['bR']:6.2f}"
            f" {a['bF']:6.2f} {a['sim']:6.2f}   | {b['pred']:5d} {b['exact'] / b['gt']:6.2f} {b['bP']:6.2f}"
            f" {b['bR']:6.2f} {b['bF']:6.2f} {b['sim']:6.2f}"
        )
    print()
    print(
        f"{'method':8} {'exact':>6} {'bP':>6} {'bR':>6} {'bF':>6} {'sim':>6}"
        "  (mean over documents; exact pooled)"
    )
    for name, t in totals.items():
        n = t["docs"]
        print(
            f"{name:8} {t['exact'] / t['gt']:6.3f} {t['bP'] / n:6.3f} {t['bR'] / n:6.3f} {t['bF'] / n:6.3f}"
            f" {t['sim'] / n:6.3f}"
        )

    checks = [
        json.loads(ln) for ln in (corpus / "olmocr_bench/dataset_dev.jsonl").read_text().splitlines() if ln
    ]
    checks = [c for c in checks if c["type"] in ("present", "absent", "order")]
    print()
    print(f"olmOCR-bench checks ({len(checks)} text checks; table checks skipped)")
    passed = {m: Counter() for m in METHODS}
    count = Counter()
    cache: dict[tuple[str, str], list[tuple[int, str]]] = {}
    for c in checks:
        count[c["type"]] += 1
        verdicts = []
        for name, method in METHODS.items():
            key = (name, c["pdf"])
            if key not in cache:
                paras, sec, pages = method(corpus / "olmocr_bench/pdfs" / c["pdf"])
                cache[key] = paras
                seconds[name] += sec
                n_pages[name] += pages
            page_text = "\n\n".join(t for i, t in cache[key] if i == c["page"] - 1)
            ok = olm_check(c, page_text)
            passed[name][c["type"]] += ok
            verdicts.append("pass" if ok else "FAIL")
        print(
            f"  {c['id']:34} {c['type']:8} "
            + "  ".join(f"{m}={v}" for m, v in zip(METHODS, verdicts, strict=True))
        )
    for name in METHODS:
        parts = [f"{t} {passed[name][t]}/{count[t]}" for t in ("present", "absent", "order")]
        total = sum(passed[name].values())
        print(f"{name:8} " + ", ".join(parts) + f"; all {total}/{len(checks)} = {total / len(checks):.3f}")
    print()
    for name in METHODS:
        print(
            f"{name:8} {n_pages[name]} pages in {seconds[name]:.2f} s"
            f" = {n_pages[name] / seconds[name]:.1f} pages/s"
        )


if __name__ == "__main__":
    main()
