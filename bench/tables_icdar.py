"""Score dagster_ocr.tables on the ICDAR-2013 DEV documents: adjacency-relation P/R/F1 and pages/s.

Metric (ICDAR 2013 table competition, strict): for each table region, the multiset of
(cell, right neighbour) and (cell, below neighbour) relations over non-empty cells, the neighbour
being the next non-empty cell in that row / column; texts compared whitespace- and case-
insensitively. Ground-truth regions and predicted per-page parts on the same page are matched one
to one by shared relations; every predicted table counts, so an unmatched prediction only adds
false positives. Predicted tables merged across pages are split back per page, since the ground
truth annotates one region per page.

    .venv/bin/python bench/tables_icdar.py [--corpus DIR] [--finder layout_text] [--all] [--docs us-020,...]
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import pymupdf

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dagster_ocr.model import Page, Table  # noqa: E402
from dagster_ocr.tables import TableSettings, _norm, extract_tables  # noqa: E402

Grid = list[list[str]]
Relations = Counter[tuple[str, str, str]]


def relations(grid: Grid) -> Relations:
    """Adjacency relations of a grid: (cell, next non-empty to the right / below, direction)."""
    rel: Relations = Counter()
    n_rows = len(grid)
    n_cols = max((len(r) for r in grid), default=0)
    g = [[_norm(r[c]) if c < len(r) else "" for c in range(n_cols)] for r in grid]
    for r in range(n_rows):
        for c in range(n_cols):
            if not g[r][c]:
                continue
            right = next((g[r][k] for k in range(c + 1, n_cols) if g[r][k]), None)
            if right is not None:
                rel[(g[r][c], right, "h")] += 1
            below = next((g[k][c] for k in range(r + 1, n_rows) if g[k][c]), None)
            if below is not None:
                rel[(g[r][c], below, "v")] += 1
    return rel


def gt_regions(xml_path: Path) -> list[tuple[int, Grid]]:
    """(0-based page index, grid) of every region in an ICDAR -str.xml."""
    out: list[tuple[int, Grid]] = []
    for region in ET.parse(xml_path).getroot().iter("region"):
        cells = [
            (int(c.get("start-row")), int(c.get("start-col")), (c.findtext("content") or ""))
            for c in region.iter("cell")
        ]
        if not cells:
            continue
        n_rows = max(r for r, _, _ in cells) + 1
        n_cols = max(c for _, c, _ in cells) + 1
        grid = [["" for _ in range(n_cols)] for _ in range(n_rows)]
        for r, c, t in cells:
            grid[r][c] = t
        out.append((int(region.get("page")) - 1, grid))
    return out


def predicted_parts(tables: list[Table]) -> list[tuple[int, Grid]]:
    """Split (possibly merged) tables back into one grid per page."""
    out: list[tuple[int, Grid]] = []
    for t in tables:
        for p in t.pages or [t.first_page_index]:
            cells = [c for c in t.cells if c.page_index == p]
            if not cells:
                continue
            r0 = min(c.row for c in cells)
            n_rows = max(c.row for c in cells) - r0 + 1
            grid = [["" for _ in range(t.n_cols)] for _ in range(n_rows)]
            for c in cells:
                grid[c.row - r0][c.col] = c.text
            out.append((p, grid))
    return out


def score_doc(gt: list[tuple[int, Grid]], pred: list[tuple[int, Grid]]) -> tuple[int, int, int]:
    """(true positives, predicted relations, ground-truth relations) with one-to-one table matching."""
    g_rel = [(p, relations(g)) for p, g in gt]
    p_rel = [(p, relations(g)) for p, g in pred]
    pairs = []
    for i, (gp, gr) in enumerate(g_rel):
        for j, (pp, pr) in enumerate(p_rel):
            if gp == pp:
                common = sum((gr & pr).values())
                if common:
                    pairs.append((common, i, j))
    used_g: set[int] = set()
    used_p: set[int] = set()
    tp = 0
    for common, i, j in sorted(pairs, reverse=True):
        if i not in used_g and j not in used_p:
            used_g.add(i)
            used_p.add(j)
            tp += common
    return tp, sum(sum(r.values()) for _, r in p_rel), sum(sum(r.values()) for _, r in g_rel)


def pages_of(doc: pymupdf.Document) -> list[Page]:
    """Minimal text-layer pages (lines are read from the document by the table stage itself)."""
    out = []
    for i in range(doc.page_count):
        pg = doc[i]
        out.append(Page(index=i, width=pg.rect.width, height=pg.rect.height))
    return out


def run(corpus: Path, settings: TableSettings, docs: list[str] | None = None) -> dict:
    """Score every ICDAR document under corpus/tables/icdar2013; returns totals and per-document rows."""
    root = corpus / "tables" / "icdar2013"
    names = sorted(d.name for d in root.iterdir() if d.is_dir())
    if docs:
        names = [n for n in names if n in docs]
    tp = n_pred = n_gt = n_pages = 0
    elapsed = 0.0
    per_doc = {}
    for name in names:
        doc = pymupdf.open(root / name / f"{name}.pdf")
        pages = pages_of(doc)
        t0 = time.perf_counter()
        tables = extract_tables(doc, pages, settings)
        dt = time.perf_counter() - t0
        a, b, c = score_doc(gt_regions(root / name / f"{name}-str.xml"), predicted_parts(tables))
        per_doc[name] = {
            "tp": a,
            "pred": b,
            "gt": c,
            "tables": len(tables),
            "seconds": round(dt, 2),
            "merged": [(t.table_id, t.pages, t.merge_kind) for t in tables if len(t.pages) > 1],
        }
        tp, n_pred, n_gt = tp + a, n_pred + b, n_gt + c
        n_pages, elapsed = n_pages + doc.page_count, elapsed + dt
    p = tp / n_pred if n_pred else 0.0
    r = tp / n_gt if n_gt else 0.0
    f1 = 2 * p * r / (p + r) if p + r else 0.0
    return {
        "finder": settings.finder,
        "precision": round(p, 3),
        "recall": round(r, 3),
        "f1": round(f1, 3),
        "pages": n_pages,
        "pages_per_s": round(n_pages / elapsed, 2) if elapsed else 0.0,
        "docs": per_doc,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "corpus")
    ap.add_argument("--finder", default=None, help="one finder; default: the settings default")
    ap.add_argument("--all", action="store_true", help="score every finder")
    ap.add_argument("--docs", default="", help="comma-separated document names (default: all)")
    ap.add_argument("--no-merge", action="store_true")
    ap.add_argument("--refine", action="store_true", help="find_tables(refine=True)")
    ap.add_argument("--json", action="store_true", help="print per-document details as JSON")
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)
    all_finders = ["layout", "lines", "text", "layout_text"]
    finders = all_finders if args.all else [args.finder or TableSettings().finder]
    docs = [d for d in args.docs.split(",") if d] or None
    print("| finder | precision | recall | F1 | pages/s |\n|---|---|---|---|---|")
    results = []
    for f in finders:
        res = run(args.corpus, TableSettings(finder=f, merge=not args.no_merge, refine=args.refine), docs)
        results.append(res)
        name = f + ("+refine" if args.refine else "")
        cols = [name, res["precision"], res["recall"], res["f1"], res["pages_per_s"]]
        print("| " + " | ".join(str(x) for x in cols) + " |", flush=True)
    if args.json:
        print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
