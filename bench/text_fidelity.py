"""Text fidelity on every corpus PDF: our exported text against PyMuPDF's plain ``get_text()``.

Why: on documents kept from us our text scored far below plain ``get_text()`` against reference
transcripts, so something we do (drop, duplicate, reorder, reformat) loses on unseen documents.
This bench finds *which* class, on every corpus PDF, with no ground truth tied to a file: plain
``get_text()`` (content-stream order, every glyph once) is the yardstick for what words a page
holds and, mostly, in which local order; where the corpus has a reference (docling's Markdown) we
score both against it too.

``ours`` is the ``document_blocks`` sequence (headings, paragraphs, tables as Markdown, in the
view's order: ``reading_order.block_sequence``), i.e. what the export, the knowledge base and an
analyst read; ``rows`` is the warehouse's ``paragraphs`` rows in reading order (the same sequence,
a table as its plain text: kind 'table'); ``para`` the paragraph objects alone (no tables), what
the paragraphs table held before tables had rows there.

Normal form of both sides before any metric (``normal``):

* Markdown syntax stripped (``reading_order.strip_markdown``: table pipes and ``|---|`` rows go,
  cells separated by spaces; heading ``#``; list markers);
* a line-break hyphen joined on the get_text side when the next line starts in lower case (the
  rule the paragraph stage applies to its own lines), so de-hyphenation is not counted as a loss;
* NFKC, quotes and dashes folded, bullets dropped, whitespace collapsed (``reading_order.norm``).

Metrics, per document:

* ``sim``: edit similarity, 1 - Levenshtein / max length, over characters (documents over
  ``--whole-limit`` characters are compared page by page and summed: one cost, one length);
* ``recall`` / ``precision``: bag of words (``\\w+`` tokens, lower-cased) of ours against get_text:
  recall = get_text's words we have, precision = our words get_text has (duplicates count);
* ``order``: share of get_text's word 4-grams found in ours (multiset): local reading order;
* ``lost``: where get_text's words we lack went: ``furniture`` (lines the paragraph stage marked
  header/footer/page number), ``other``; ``dup``: words we have more often than get_text has
  them; ``new``: words get_text has not at all (joined fragments, OCR text on a scan).

A class is named for each document below 0.95 on any of the four. Inputs are grouped by their
MANIFEST.json split (tune apart from check); the encrypted input and files without a text layer
(scans: get_text is empty) are listed, not scored.

The scans' OCR output against their transcripts and the olmOCR-bench checks are scored by
``bench/reading_order.py`` (``--ocr`` for the scans: rapidocr is slow on 2 cores); the corpus has
no olmOCR transcripts, only checks.

    .venv/bin/python bench/text_fidelity.py [--json OUT.json] [--worst 15] [--only SUBSTRING]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import _common as C
import pymupdf
import reading_order as RO
from support.text_metrics import levenshtein

from dagster_ocr.pipeline import parse

_HYPHEN_BREAK = re.compile(r"(\w)-\n\s*(?=[a-z])")
_WORD = re.compile(r"\w+")
#: documents longer than this (characters, normal form) are compared page by page
WHOLE_LIMIT = 30_000
#: below this on a metric, the document is named with that metric's class
CLASS_AT = 0.95


def normal(text: str, markdown: bool, dehyphenate: bool) -> str:
    if markdown:
        text = RO.strip_markdown(text)
    if dehyphenate:
        text = _HYPHEN_BREAK.sub(r"\1", text)
    return RO.norm(text)


def words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def grams(ws: list[str], n: int = 4) -> Counter[tuple[str, ...]]:
    return Counter(tuple(ws[i : i + n]) for i in range(len(ws) - n + 1))


def similarity(ref_pages: list[str], hyp_pages: list[str], whole_limit: int = WHOLE_LIMIT) -> float:
    """Edit similarity; page by page (pages paired by index) when the documents are long."""
    ref, hyp = " ".join(ref_pages).strip(), " ".join(hyp_pages).strip()
    if not ref and not hyp:
        return 1.0
    if max(len(ref), len(hyp)) <= whole_limit:
        return 1.0 - levenshtein(ref, hyp) / max(len(ref), len(hyp))
    cost = length = 0
    for i in range(max(len(ref_pages), len(hyp_pages))):
        a = ref_pages[i] if i < len(ref_pages) else ""
        b = hyp_pages[i] if i < len(hyp_pages) else ""
        cost += levenshtein(a, b)
        length += max(len(a), len(b))
    return 1.0 - cost / length if length else 1.0


def compare(ref_words: list[str], hyp_words: list[str]) -> dict[str, float]:
    r, h = Counter(ref_words), Counter(hyp_words)
    both = sum((r & h).values())
    rg, hg = grams(ref_words), grams(hyp_words)
    return {
        "recall": both / max(1, sum(r.values())),
        "precision": both / max(1, sum(h.values())),
        "order": sum((rg & hg).values()) / max(1, sum(rg.values())),
    }


def classify(row: dict[str, Any]) -> str:
    """The problem classes a document shows (empty when every metric is at CLASS_AT or above)."""
    out = []
    if row["recall"] < CLASS_AT:
        lost = row["lost"]
        where = max(lost, key=lost.get) if lost else "other"
        out.append(f"lost({where})")
    if row["precision"] < CLASS_AT:
        out.append("dup" if row["dup"] >= row["new"] else "added")
    if row["order"] < CLASS_AT and row["recall"] >= CLASS_AT - 0.05:
        out.append("order")
    if not out and row["sim"] < CLASS_AT:
        out.append("format")
    return ",".join(out)


def measure(path: Path, corpus: Path, whole_limit: int) -> dict[str, Any]:
    row: dict[str, Any] = {"split": C.split_of(path, corpus)}
    try:
        with pymupdf.open(path) as doc:
            if doc.needs_pass:
                return {**row, "skipped": "encrypted"}
            gt_pages = [p.get_text() for p in doc]
    except Exception as exc:  # noqa: BLE001  # a file PyMuPDF cannot open is reported, not fatal
        return {**row, "skipped": f"pymupdf: {exc}"}
    t = time.perf_counter()
    out = parse(C.source_of(path))
    row["seconds"] = round(time.perf_counter() - t, 3)
    if not out.document.ok:
        return {**row, "skipped": f"parse: {out.document.error}"}
    gt = [normal(p, markdown=False, dehyphenate=True) for p in gt_pages]
    if sum(len(p) for p in gt) < 20:
        return {**row, "skipped": "no text layer (scan)"}
    seq = RO.block_sequence(out)
    n = len(gt_pages)
    ours_pages = [normal(RO.sequence_text(seq, i), markdown=True, dehyphenate=False) for i in range(n)]
    para_pages = [
        normal("\n".join(p.text for p in out.paragraphs.paragraphs if p.page_index == i), False, False)
        for i in range(n)
    ]
    # the warehouse's paragraphs rows in reading order: tables in them as plain text (kind 'table')
    row_seq = RO.block_sequence(out, markdown=False)
    rows_pages = [normal(RO.sequence_text(row_seq, i), False, False) for i in range(n)]
    gw = words(" ".join(gt))
    ow = words(" ".join(ours_pages))
    row.update(compare(gw, ow))
    row["sim"] = similarity(gt, ours_pages, whole_limit)
    row["para_sim"] = similarity(gt, para_pages, whole_limit)
    row["para_recall"] = compare(gw, words(" ".join(para_pages)))["recall"]
    row["rows_sim"] = similarity(gt, rows_pages, whole_limit)
    row["chars"] = sum(len(p) for p in gt)
    # where the missing words went: furniture lines first, the rest "other"
    missing = Counter(gw) - Counter(ow)
    furniture: Counter[str] = Counter()
    for page_index, lines in out.paragraphs.furniture.items():
        page = out.document.pages[page_index]
        for line_index in lines:
            if 0 <= line_index < len(page.lines):
                furniture.update(words(RO.norm(page.lines[line_index].text)))
    in_furniture = sum((missing & furniture).values())
    row["lost"] = {"furniture": in_furniture, "other": sum(missing.values()) - in_furniture}
    row["lost_sample"] = " ".join(w for w, _ in (missing - furniture).most_common(12))
    extra = Counter(ow) - Counter(gw)
    gset = set(gw)
    row["dup"] = sum(c for w, c in extra.items() if w in gset)
    row["new"] = sum(c for w, c in extra.items() if w not in gset)
    row["new_sample"] = " ".join(w for w, _ in extra.most_common(12))
    row["class"] = classify(row)
    row["_texts"] = (" ".join(ours_pages), " ".join(gt), " ".join(rows_pages))
    return row


def references(corpus: Path) -> dict[str, str]:
    """Reference texts by input path: docling's ground-truth Markdown, stripped of its syntax."""
    refs: dict[str, str] = {}
    for d in sorted((corpus / "docling").iterdir()):
        pdf, md = next(d.glob("*.pdf"), None), next((d / "groundtruth").glob("*.md"), None)
        if pdf and md:
            refs[str(pdf.relative_to(corpus))] = md.read_text(encoding="utf-8")
    return refs


def run(corpus: Path, only: str | None, whole_limit: int) -> dict[str, dict[str, Any]]:
    manifest = json.loads((corpus / "MANIFEST.json").read_text())
    inputs = [f["file"] for f in manifest["files"] if f["role"] == "input" and f["file"].endswith(".pdf")]
    refs = references(corpus)
    results: dict[str, dict[str, Any]] = {}
    for name in inputs:
        if only and only not in name:
            continue
        path = corpus / name
        row = measure(path, corpus, whole_limit)
        if name in refs and "skipped" not in row:
            ref = normal(refs[name], markdown=True, dehyphenate=False)
            ours_text, gt_text, rows_text = row["_texts"]
            row["ref"] = {
                "ours_sim": similarity([ref], [ours_text], 10**9),
                "rows_sim": similarity([ref], [rows_text], 10**9),
                "get_text_sim": similarity([ref], [gt_text], 10**9),
                "ours": compare(words(ref), words(ours_text)),
                "get_text": compare(words(ref), words(gt_text)),
            }
        row.pop("_texts", None)
        results[name] = row
        print(f"  {name}: {row.get('class', row.get('skipped', ''))}", file=sys.stderr)
    return results


def _mean(rows: list[dict[str, Any]], key: str) -> float:
    return sum(r[key] for r in rows) / len(rows) if rows else float("nan")


def _weighted(rows: list[dict[str, Any]], key: str) -> float:
    total = sum(r["chars"] for r in rows)
    return sum(r[key] * r["chars"] for r in rows) / total if total else float("nan")


def report(results: dict[str, dict[str, Any]], worst: int) -> str:
    lines: list[str] = []
    keys = ("sim", "rows_sim", "para_sim", "recall", "para_recall", "precision", "order")
    lines += [
        "Ours (document_blocks) against PyMuPDF get_text(), per split: mean over documents "
        "(character-weighted in brackets)",
        "",
        "| split | docs | " + " | ".join(keys) + " | classes |",
        "|---|---|" + "---|" * len(keys) + "---|",
    ]
    for split in ("tune", "check"):
        rows = [r for r in results.values() if r["split"] == split and "skipped" not in r]
        classes = Counter(c.split("(")[0] for r in rows for c in r["class"].split(",") if c)
        cells = " | ".join(f"{_mean(rows, k):.3f} ({_weighted(rows, k):.3f})" for k in keys)
        lines.append(
            f"| {split} | {len(rows)} | {cells} | "
            + ", ".join(f"{k} {v}" for k, v in classes.most_common())
            + " |"
        )
    skipped = {k: v["skipped"] for k, v in results.items() if "skipped" in v}
    lines += ["", "Not scored: " + "; ".join(f"{k} ({v})" for k, v in skipped.items()), ""]
    refd = {k: v for k, v in results.items() if "ref" in v}
    if refd:
        lines += [
            "Against docling's ground-truth Markdown (stripped): edit similarity, word recall / precision",
            "",
            "| document | split | ours sim | rows sim | get_text sim | ours R/P | get_text R/P |",
            "|---|---|---|---|---|---|---|",
        ]
        for k, v in refd.items():
            r = v["ref"]
            lines.append(
                f"| {k} | {v['split']} | {r['ours_sim']:.3f} | {r['rows_sim']:.3f} | {r['get_text_sim']:.3f} "
                f"| {r['ours']['recall']:.3f}/{r['ours']['precision']:.3f} "
                f"| {r['get_text']['recall']:.3f}/{r['get_text']['precision']:.3f} |"
            )
        lines.append("")
    scored = [(k, v) for k, v in results.items() if "skipped" not in v]
    scored.sort(key=lambda kv: min(kv[1][m] for m in ("sim", "recall", "precision", "order")))
    lines += [
        f"Worst {worst} documents (by their lowest metric)",
        "",
        "| document | split | sim | recall | precision | order | lost furn/other | dup/new | class "
        "| lost words (sample) | added words (sample) |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for k, v in scored[:worst]:
        lines.append(
            f"| {k} | {v['split']} | {v['sim']:.3f} | {v['recall']:.3f} | {v['precision']:.3f} "
            f"| {v['order']:.3f} | {v['lost']['furniture']}/{v['lost']['other']} | {v['dup']}/{v['new']} "
            f"| {v['class'] or '-'} | {v['lost_sample'][:60]} | {v['new_sample'][:60]} |"
        )
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=None)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--worst", type=int, default=15)
    ap.add_argument("--only", help="only inputs whose path contains this")
    ap.add_argument("--whole-limit", type=int, default=WHOLE_LIMIT)
    args = ap.parse_args()
    C.quiet_logs()
    corpus = args.corpus or C.find_corpus()
    if corpus is None:
        sys.exit("no corpus found (set DAGSTER_OCR_CORPUS)")
    results = run(corpus, args.only, args.whole_limit)
    print(report(results, args.worst))
    if args.json:
        args.json.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
