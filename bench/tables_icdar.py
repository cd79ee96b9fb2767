"""Score dagster_ocr.tables on the ICDAR-2013 DEV documents: adjacency-relation P/R/F1 and pages/s.

Metric (ICDAR 2013 table competition, strict): for each table region, the multiset of
(cell, right neighbour) and (cell, below neighbour) relations over non-empty cells, the neighbour
being the next non-empty cell in that row / column; texts compared whitespace- and case-
insensitively. Ground-truth regions and predicted per-page parts on the same page are matched one
to one by shared relations; every predicted table counts, so an unmatched prediction only adds
false positives. Predicted tables merged across pages are split back per page, since the ground
truth annotates one region per page.

The same metric is applied to the tabula-java and camelot test PDFs in the corpus, scored against
their expected CSVs (page 1 only; camelot's "hybrid" variant of health.pdf and the image-only
unstructured PDF are left out). Baselines run in the same process on the same files: plain PyMuPDF
``find_tables()`` (layout model), ``find_tables(use_layout=False)`` and pdfplumber
``extract_tables()`` (bench-only dependency: ``pip install pdfplumber==0.11.10``).

    .venv/bin/python bench/tables_icdar.py [--corpus DIR] [--finder auto] [--all] [--baselines] [--docs ...]
"""

from __future__ import annotations

import argparse
import csv
import json
import logging
import sys
import time
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pymupdf

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import split_of  # noqa: E402

from dagster_ocr.model import Page, Table  # noqa: E402
from dagster_ocr.tables import TableSettings, extract_tables  # noqa: E402
from dagster_ocr.tables.words import _norm  # noqa: E402
from dagster_ocr.textlayer import read_text_layer  # noqa: E402

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
    """Split (possibly merged) tables back into one grid per page.

    A row-merged table gives each page its rows. A column-merged table keeps its stub (column 0)
    once, on the first page's cells: each continuation page gets its own columns plus that stub over
    the rows it covers, as printed on that page.
    """
    out: list[tuple[int, Grid]] = []
    for t in tables:
        first = t.pages[0] if t.pages else t.first_page_index
        for p in t.pages or [t.first_page_index]:
            cells = [c for c in t.cells if c.page_index == p]
            if not cells:
                continue
            r0 = min(c.row for c in cells)
            r1 = max(c.row for c in cells)
            if t.merge_kind == "columns" and p != first:
                cells += [c for c in t.cells if c.page_index == first and c.col == 0 and r0 <= c.row <= r1]
            grid = [["" for _ in range(t.n_cols)] for _ in range(r1 - r0 + 1)]
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
    """Minimal text-layer pages (lines are read from the document by the table stage itself), with
    what the text stage records for turned pages: /Rotate, and its counts of characters running
    up and down the page and upside down (for sideways tables)."""
    out = []
    for i in range(doc.page_count):
        pg = doc[i]
        _lines, vertical, upside_down = read_text_layer(pg)
        out.append(
            Page(
                index=i,
                width=pg.rect.width,
                height=pg.rect.height,
                rotation=pg.rotation,
                vertical_chars=vertical,
                reversed_chars=upside_down,
            )
        )
    return out


def _prf(tp: int, n_pred: int, n_gt: int) -> dict[str, float]:
    p = tp / n_pred if n_pred else 0.0
    r = tp / n_gt if n_gt else 0.0
    return {
        "precision": round(p, 3),
        "recall": round(r, 3),
        "f1": round(2 * p * r / (p + r), 3) if p + r else 0.0,
    }


def by_split(per_doc: dict[str, dict]) -> dict[str, dict[str, float]]:
    """Micro-averaged P/R/F1 per corpus split ("tune", "check"; see the corpus README)."""
    out = {}
    for split in ("tune", "check"):
        rows = [d for d in per_doc.values() if d.get("split") == split]
        out[split] = {**_prf(*(sum(d[k] for d in rows) for k in ("tp", "pred", "gt"))), "docs": len(rows)}
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
            "split": split_of(root / name / f"{name}.pdf", corpus),
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
        "splits": by_split(per_doc),
        "docs": per_doc,
    }


Extractor = Callable[[Path, pymupdf.Document], list[tuple[int, Grid]]]


def ours(settings: TableSettings) -> Extractor:
    """dagster_ocr.tables with the given settings, merged tables split back per page."""
    return lambda _path, doc: predicted_parts(extract_tables(doc, pages_of(doc), settings))


def pymupdf_plain(use_layout: bool) -> Extractor:
    """Plain PyMuPDF ``find_tables`` with ``Table.extract()`` cell texts."""

    def run_one(_path: Path, doc: pymupdf.Document) -> list[tuple[int, Grid]]:
        out = []
        for i in range(doc.page_count):
            pg = doc[i]
            for t in pg.find_tables(use_layout=use_layout).tables:
                out.append((i, [[c or "" for c in r] for r in t.extract()]))
        return out

    return run_one


def pdfplumber_plain(path: Path, _doc: pymupdf.Document) -> list[tuple[int, Grid]]:
    """pdfplumber ``extract_tables()`` with default settings."""
    import pdfplumber

    out = []
    with pdfplumber.open(path) as pdf:
        for i, pg in enumerate(pdf.pages):
            for t in pg.extract_tables():
                out.append((i, [[c or "" for c in r] for r in t]))
    return out


def csv_cases(corpus: Path) -> list[tuple[str, Path, list[tuple[int, Grid]]]]:
    """(name, pdf, ground-truth regions on page index 0) for the tabula-java and camelot test PDFs."""
    cases = []
    for sub in ("tabula-java", "camelot"):
        for d in sorted((corpus / "tables" / sub).iterdir()):
            pdf = d / f"{d.name}.pdf"
            files = sorted(f for f in (d / "expected").glob("*.csv") if "hybrid" not in f.name)
            if pdf.exists() and files:
                with pymupdf.open(pdf) as probe:
                    if probe.needs_pass:  # the product fails such a file as encrypted (no password)
                        print(f"skipped {sub}/{d.name}: encrypted", file=sys.stderr)
                        continue
                gt = [(0, list(csv.reader(f.open(encoding="utf-8", newline="")))) for f in files]
                cases.append((f"{sub}/{d.name}", pdf, gt))
    return cases


def score_set(cases: list[tuple[str, Path, list[tuple[int, Grid]]]], extract: Extractor) -> dict:
    """Micro-averaged P/R/F1 and pages/s of one extractor over (name, pdf, ground truth) cases."""
    tp = n_pred = n_gt = n_pages = 0
    elapsed = 0.0
    per_doc = {}
    for name, pdf, gt in cases:
        doc = pymupdf.open(pdf)
        gt_pages = {p for p, _ in gt} if name.startswith(("tabula", "camelot")) else None
        t0 = time.perf_counter()
        pred = extract(pdf, doc)
        elapsed += time.perf_counter() - t0
        if gt_pages is not None:  # only the page the expected CSVs describe is scored
            pred = [(p, g) for p, g in pred if p in gt_pages]
        a, b, c = score_doc(gt, pred)
        per_doc[name] = {"tp": a, "pred": b, "gt": c, "split": split_of(pdf)}
        tp, n_pred, n_gt, n_pages = tp + a, n_pred + b, n_gt + c, n_pages + doc.page_count
    p = tp / n_pred if n_pred else 0.0
    r = tp / n_gt if n_gt else 0.0
    return {
        "precision": round(p, 3),
        "recall": round(r, 3),
        "f1": round(2 * p * r / (p + r), 3) if p + r else 0.0,
        "pages": n_pages,
        "pages_per_s": round(n_pages / elapsed, 2) if elapsed else 0.0,
        "splits": by_split(per_doc),
        "docs": per_doc,
    }


def icdar_cases(
    corpus: Path, docs: list[str] | None = None
) -> list[tuple[str, Path, list[tuple[int, Grid]]]]:
    """(name, pdf, ground-truth regions) for the ICDAR-2013 documents."""
    root = corpus / "tables" / "icdar2013"
    names = sorted(d.name for d in root.iterdir() if d.is_dir())
    return [
        (n, root / n / f"{n}.pdf", gt_regions(root / n / f"{n}-str.xml"))
        for n in names
        if not docs or n in docs
    ]


def side_by_side(corpus: Path, docs: list[str] | None = None) -> list[tuple[str, dict, dict]]:
    """Our default and every baseline on the ICDAR and CSV sets: (tool, icdar result, csv result)."""
    tools: list[tuple[str, Extractor]] = [
        (f"dagster_ocr ({TableSettings().finder})", ours(TableSettings())),
        ("PyMuPDF find_tables() (layout)", pymupdf_plain(True)),
        ("PyMuPDF find_tables(use_layout=False)", pymupdf_plain(False)),
        ("pdfplumber extract_tables()", pdfplumber_plain),
    ]
    icdar, csvs = icdar_cases(corpus, docs), csv_cases(corpus)
    return [(name, score_set(icdar, fn), score_set(csvs, fn)) for name, fn in tools]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "corpus")
    ap.add_argument("--finder", default=None, help="one finder; default: the settings default")
    ap.add_argument("--all", action="store_true", help="score every finder")
    ap.add_argument("--docs", default="", help="comma-separated document names (default: all)")
    ap.add_argument("--no-merge", action="store_true")
    ap.add_argument("--refine", action="store_true", help="find_tables(refine=True)")
    ap.add_argument("--json", action="store_true", help="print per-document details as JSON")
    ap.add_argument("--baselines", action="store_true", help="our default and the baselines, side by side")
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)
    docs = [d for d in args.docs.split(",") if d] or None
    if args.baselines:
        rows = side_by_side(args.corpus, docs)
        print(
            "| tool | ICDAR P | ICDAR R | ICDAR F1 | F1 tune | F1 check | pages/s "
            "| tabula+camelot CSV P | R | F1 | F1 tune | F1 check |"
        )
        print("|---|---|---|---|---|---|---|---|---|---|---|---|")
        for name, a, b in rows:
            cols = [
                name,
                a["precision"],
                a["recall"],
                a["f1"],
                a["splits"]["tune"]["f1"],
                a["splits"]["check"]["f1"],
                a["pages_per_s"],
                b["precision"],
                b["recall"],
                b["f1"],
                b["splits"]["tune"]["f1"],
                b["splits"]["check"]["f1"],
            ]
            print("| " + " | ".join(str(x) for x in cols) + " |", flush=True)
        best = max(rows[1:], key=lambda r: r[1]["f1"])
        print(
            f"\nICDAR F1 margin over the best baseline ({best[0]}): {rows[0][1]['f1'] - best[1]['f1']:+.3f}"
        )
        if args.json:
            print(json.dumps({n: {"icdar": a["docs"], "csv": b["docs"]} for n, a, b in rows}, indent=1))
        return
    all_finders = ["auto", "stream", "layout", "lines", "text", "layout_text"]
    finders = all_finders if args.all else [args.finder or TableSettings().finder]
    print("| finder | precision | recall | F1 | F1 tune (docs) | F1 check (docs) | pages/s |")
    print("|---|---|---|---|---|---|---|")
    results = []
    for f in finders:
        res = run(args.corpus, TableSettings(finder=f, merge=not args.no_merge, refine=args.refine), docs)
        results.append(res)
        name = f + ("+refine" if args.refine else "")
        tune, check = res["splits"]["tune"], res["splits"]["check"]
        cols = [
            name,
            res["precision"],
            res["recall"],
            res["f1"],
            f"{tune['f1']} ({tune['docs']})",
            f"{check['f1']} ({check['docs']})",
            res["pages_per_s"],
        ]
        print("| " + " | ".join(str(x) for x in cols) + " |", flush=True)
    if args.json:
        print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
