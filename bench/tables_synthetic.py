"""Tables on generated pages nobody tuned for: the corpus benches' metrics on hundreds of seeded documents.

tests/support/table_pages.py prints each document with PyMuPDF and knows its cells: ruled,
unruled, header-rule-only and zebra tables, sparse alignment-only columns, figures in currency,
parentheses and per cent, wrapped cells and row spans, stacked and spanning headers, totals rows,
two tables side by side, a table beside running text, captions and footnotes, right-to-left
tables (Hebrew, Arabic); tables continued over pages (repeated header and page furniture between),
look-alike tables on consecutive pages, columns continued on the next page; and pages with no
table (two-column running text, numbered lists, transcripts with margin line numbers,
right-to-left prose). Fonts, sizes, spacing, column counts, margins vary with the seed.

Scored per split (seeds ``tune`` 0.., ``held_out`` 100000..; fix rules on tune, read held-out):

* ICDAR-2013 adjacency-relation F1 (``tables_icdar.score_doc``: every predicted table counts);
* cell-content multiset F1 per page (all predicted tables of the page against all expected ones,
  texts compared whitespace- and case-insensitively, as ``tables_peers.score_group`` does for a
  whole-page expectation);
* false tables: tables predicted on pages with none, and on table pages tables sharing no cell
  with an expected one;
* multi-page expectations (ours only; no peer merges): right when the predicted tables of the
  document are the expected ones, on the expected pages, each with cell F1 >= 0.95 against the
  whole expected table, no header cell more often than the expected table has it, and each
  page's rows (a row its non-empty cells in order) read as that page prints them (row F1 >= 0.9,
  its repeated header aside): cell texts alone count a page joined one column off as right.

Multi-page documents are left out of the two F1s (their per-page truth depends on the merge).
Peers (bench-only dependencies, see bench/tables_peers.py) run with their defaults on single-page
documents: camelot stream, pdfplumber (lines), and with ``--tools tabula`` tabula-py (slow: one
Java start per page).

    PYTHONPATH=. .venv/bin/python bench/tables_synthetic.py [--n 210] [--splits tune,held_out]
        [--tools dagster,camelot,pdfplumber] [--classes extra|all|A,B] [--per-class] [--dump DIR]
        [--json OUT]

``--classes`` draws other classes than the 21 (tests/support/table_pages.py ``EXTRA``: pages
turned by /Rotate 90 or 270, content turned sideways by its own matrices, a sideways table among
upright text, hyphenated wrapped cells; ``later``: ``LATER``, tables of filled cells with a box per
text line inside, as word processors export them, and compounds broken at their hyphen; by name,
``figure_pair``: two charts side by side under "Figure N." captions, no table; ``continued_tail``,
``new_table_tail``: a table over 3-6 pages whose last pages change column layout, and its negative;
``sparse_stats``, ``sectioned``, ``two_stacked``: a sparse statistical table, one table cut into sections,
and two tables stacked under their own headers, scored also as "shape right": as many tables as
expected, each with the expected column count and cell F1 >= 0.95); ``wrapped_stub``, ``blank_cells``:
stream tables whose row labels wrap (figures on the label's first, last or middle line) and whose
cells are partly empty, under spanning heads for the second; ``statement``: a financial statement
(indented row labels under section heads, a year header row under a period head, "$" set apart,
negatives in parentheses, dash rows), scored as "shape right" too, and ``stacked_statement`` (its period
heads stacked over two lines per column, "December 31," over "2023", one header row in the truth; scored
so too) and ``sectioned_heads_statement`` (either, its heads set apart from the first row of figures by
one or two label lines, "ASSETS:" over "Current assets:"; scored so too); ``group_ruled`` (figure columns in
groups under spanning heads, vertical rules only between the groups, none between sub-columns nor rows;
scored as "shape right" too); ``spaced_stats`` (a sparse
statistical table whose thousands are set apart by a space, scored as "shape right") and
``shifted_tail`` (``continued_tail`` on pages that do not line up: mirrored margins, column widths
fitted per page, a "(continued)" caption; scored as multi-page) and ``label_tail`` (``continued_tail``
whose last pages print long row labels in a wider stub, the figure columns moved right, often a totals
block alone; scored as multi-page), issue 37's variants no rule was tuned on; each seed's class being the
seed modulo their number.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import pymupdf

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(1, str(ROOT / "tests"))  # tests/support: the generator

import tables_icdar as TI  # noqa: E402
import tables_peers as TP  # noqa: E402
from support.table_pages import (  # noqa: E402
    CHANGE,
    CLASSES,
    EXTRA,
    GROUP_RULED,
    LATER,
    LATER_NO_TABLE,
    MULTI,
    NO_TABLE,
    NOTED,
    SECTIONED_HEADS,
    SHAPE,
    STACKED,
    STATEMENT,
    TAIL_MULTI,
    TAIL_UNSEEN,
    UNSEEN,
    WIDE,
    WRAPPED,
    Case,
    Grid,
    TruthTable,
    make_case,
    seeds,
)

from dagster_ocr.model import Table  # noqa: E402
from dagster_ocr.tables import TableSettings, extract_tables  # noqa: E402
from dagster_ocr.tables.words import _norm  # noqa: E402

Parts = list[tuple[int, Grid]]


#: the 30 classes drawn after the 21 base ones, in the order the fresh tune draws of BENCHMARKS.md
#: (seeds 1500-5999) used: a seed's class is the seed modulo 30 in this list
LATER30 = (
    EXTRA
    + LATER
    + LATER_NO_TABLE
    + TAIL_MULTI
    + SHAPE
    + WRAPPED
    + STATEMENT
    + UNSEEN
    + NOTED
    + WIDE
    + CHANGE
    + STACKED
    + SECTIONED_HEADS
    + GROUP_RULED
)


def _cells(grid: Grid) -> Counter[str]:
    return Counter(k for r in grid for c in r if (k := _norm(c)))


def _table_grid(t: Table) -> Grid:
    grid = [["" for _ in range(t.n_cols)] for _ in range(t.n_rows)]
    for c in t.cells:
        grid[c.row][c.col] = c.text
    return grid


def _f1(tp: int, pred: int, gt: int) -> float:
    return TI._prf(tp, pred, gt)["f1"]


def score_pages(case: Case, pred: Parts) -> dict[str, int]:
    """Adjacency and cell-content counts, and false tables, of one single-page or no-table case."""
    truth: Parts = [(p, g) for t in case.tables for p, g in t.grids.items()]
    a_tp, a_pred, a_gt = TI.score_doc(truth, pred)
    c_tp = c_pred = c_gt = 0
    false = 0
    for p in range(case.n_pages):
        want: Counter[str] = Counter()
        for q, g in truth:
            if q == p:
                want += _cells(g)
        got: Counter[str] = Counter()
        for q, g in pred:
            if q != p:
                continue
            cells = _cells(g)
            got += cells
            if not cells & want:
                false += 1
        c_tp, c_pred, c_gt = (
            c_tp + sum((got & want).values()),
            c_pred + sum(got.values()),
            c_gt + sum(want.values()),
        )
    return {
        "a_tp": a_tp,
        "a_pred": a_pred,
        "a_gt": a_gt,
        "c_tp": c_tp,
        "c_pred": c_pred,
        "c_gt": c_gt,
        "false": false,
        "n_pred": len(pred),
    }


def merge_right(case: Case, tables: list[Table]) -> tuple[bool, str]:
    """Whether our tables of a multi-page case are the expected ones (see the module), and why not."""
    if len(tables) != len(case.tables):
        return False, f"{len(tables)} tables, {len(case.tables)} expected ({[t.pages for t in tables]})"
    for t, e in zip(tables, case.tables, strict=True):
        if t.pages != e.pages:
            return False, f"pages {t.pages}, expected {e.pages}"
        got, want = _cells(_table_grid(t)), _cells(e.merged)
        f1 = _f1(sum((got & want).values()), sum(got.values()), sum(want.values()))
        if f1 < 0.95:
            return False, f"cell F1 {f1:.3f}"
        head = _cells(e.merged[: e.header_rows])
        extra = [k for k in head if got[k] > want[k]]
        if extra:
            return False, f"header repeated: {extra[:3]}"
        if e.kind == "rows" and (why := _pages_misread(t, e)):
            return False, why
    return True, ""


#: the share of a page's rows (as the page prints them, in order) a joined table must read alike
PAGE_ROWS_F1 = 0.9


def _pages_misread(t: Table, e: TruthTable) -> str:
    """Why a table joined over pages reads one of them wrong, or "": each page's rows as the table
    holds them (its cells from that page), each row its non-empty cells in order, against the
    page's rows as printed (less the header it repeats).

    The cell F1 above counts cell texts, wherever they stand: a last page joined one column to the
    left (its figures under the labels, its labels lost) kept it at 0.97 over a long table."""
    header = {_row_key(r) for r in e.merged[: e.header_rows]}
    grid = _table_grid(t)
    rows_of: dict[int, set[int]] = {}
    for c in t.cells:
        rows_of.setdefault(c.page_index, set()).add(c.row)
    for p in e.pages:
        want = Counter(k for r in e.grids[p] if (k := _row_key(r)) and k not in header)
        got = Counter(k for r in sorted(rows_of.get(p, ())) if (k := _row_key(grid[r])))
        f1 = _f1(sum((got & want).values()), sum(got.values()), sum(want.values()))
        if want and f1 < PAGE_ROWS_F1:
            return f"page {p}: rows F1 {f1:.3f}"
    return ""


def _row_key(row: list[str]) -> tuple[str, ...]:
    return tuple(k for c in row if (k := _norm(c)))


def shape_right(case: Case, tables: list[Table]) -> tuple[bool, str]:
    """Whether the tables of a ``SHAPE`` (or ``STATEMENT``) case have the expected shape: as many
    tables as expected, top to bottom each with the expected column count and cell F1 >= 0.95."""
    if len(tables) != len(case.tables):
        return False, f"{len(tables)} tables, {len(case.tables)} expected ({[t.n_rows for t in tables]} rows)"
    for t, e in zip(tables, case.tables, strict=True):
        if t.n_cols != len(e.merged[0]):
            return False, f"{t.n_cols} columns, {len(e.merged[0])} expected"
        got, want = _cells(_table_grid(t)), _cells(e.merged)
        f1 = _f1(sum((got & want).values()), sum(got.values()), sum(want.values()))
        if f1 < 0.95:
            return False, f"cell F1 {f1:.3f}"
    return True, ""


def _ours(path: Path, doc: pymupdf.Document) -> tuple[Parts, list[Table]]:
    tables = extract_tables(doc, TI.pages_of(doc), TableSettings())
    return TI.predicted_parts(tables), tables


def _peer_tools(wanted: set[str]) -> dict[str, Any]:
    tools, skipped = TP.available_tools()
    for msg in skipped:
        print(f"skipped peer {msg}", file=sys.stderr)
    pick = {
        "camelot": "camelot stream",
        "pdfplumber": "pdfplumber (lines, default)",
        "tabula": "tabula-py (defaults)",
    }
    return {name: tools[name][0] for key, name in pick.items() if key in wanted and name in tools}


def run_split(
    split: str,
    n: int,
    wanted: set[str],
    dump: Path | None,
    classes: list[str] | None = None,
    first: int = 0,
) -> dict[str, Any]:
    """Every tool on the split's ``n`` cases: totals, per-class totals, multi-page results.
    ``classes``: draw these classes (seed modulo their number) instead of the 21 of ``CLASSES``;
    ``first``: skip the split's first seeds (a fresh draw beside one already read)."""
    peers = _peer_tools(wanted)
    names = (["dagster_ocr"] if "dagster" in wanted else []) + list(peers)
    tot: dict[str, Counter[str]] = {k: Counter() for k in names}
    per_class: dict[str, dict[str, Counter[str]]] = {k: defaultdict(Counter) for k in names}
    multi: list[dict[str, Any]] = []
    shape: list[dict[str, Any]] = []
    seconds: dict[str, float] = Counter()
    pages: dict[str, int] = Counter()
    worst: list[tuple[float, int, str]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for seed in seeds(split, first + n)[first:]:
            case = make_case(seed, classes[seed % len(classes)] if classes else None)
            path = case.save(Path(tmp) / f"case-{seed}.pdf")
            with pymupdf.open(path) as doc:
                for name in names:
                    if name != "dagster_ocr" and case.cls in MULTI + TAIL_MULTI + TAIL_UNSEEN:
                        continue  # no peer merges tables across pages
                    t0 = time.perf_counter()
                    try:
                        if name == "dagster_ocr":
                            pred, tables = _ours(path, doc)
                        else:
                            pred, tables = peers[name](path, None, doc), []
                    except Exception as exc:  # a peer failing on one document scores nothing there
                        logging.warning("%s failed on seed %d: %s", name, seed, exc)
                        pred, tables = [], []
                    seconds[name] += time.perf_counter() - t0
                    pages[name] += case.n_pages
                    if case.cls in MULTI + TAIL_MULTI + TAIL_UNSEEN:
                        ok, why = merge_right(case, tables)
                        multi.append(
                            {"seed": seed, "cls": case.cls, "tags": case.tags, "right": ok, "why": why}
                        )
                        continue
                    if (
                        case.cls
                        in SHAPE
                        + STATEMENT
                        + NOTED
                        + CHANGE
                        + STACKED
                        + SECTIONED_HEADS
                        + GROUP_RULED
                        + ["spaced_stats"]
                        and name == "dagster_ocr"
                    ):
                        ok, why = shape_right(case, tables)
                        shape.append(
                            {"seed": seed, "cls": case.cls, "tags": case.tags, "right": ok, "why": why}
                        )
                    sc = score_pages(case, pred)
                    sc["docs"] = 1
                    sc["no_table_pages"] = case.n_pages if case.cls in NO_TABLES else 0
                    sc["false_pages"] = int(case.cls in NO_TABLES and sc["n_pred"] > 0)
                    tot[name].update(sc)
                    per_class[name][case.cls].update(sc)
                    if name == "dagster_ocr":
                        f = (
                            _f1(sc["a_tp"], sc["a_pred"], sc["a_gt"])
                            if sc["a_gt"]
                            else float(sc["n_pred"] == 0)
                        )
                        worst.append((f, seed, case.cls))
                        if dump is not None and f < 0.9:
                            dump.mkdir(parents=True, exist_ok=True)
                            case.save(dump / f"{split}-{case.cls}-{seed}.pdf")
    out: dict[str, Any] = {"split": split, "n": n, "tools": {}}
    for name in names:
        t = tot[name]
        out["tools"][name] = {
            "adjacency": TI._prf(t["a_tp"], t["a_pred"], t["a_gt"]),
            "cells": TI._prf(t["c_tp"], t["c_pred"], t["c_gt"]),
            "false_tables_on_table_pages": t["false"]
            - sum(per_class[name].get(c, Counter())["false"] for c in NO_TABLES),
            "tables_on_no_table_pages": sum(per_class[name].get(c, Counter())["n_pred"] for c in NO_TABLES),
            "no_table_pages_with_a_table": f"{t['false_pages']}/{t['no_table_pages']}",
            "ms_per_page": round(1000 * seconds[name] / max(pages[name], 1), 1),
            "classes": {
                c: {
                    "adjacency_f1": _f1(v["a_tp"], v["a_pred"], v["a_gt"]),
                    "cell_f1": _f1(v["c_tp"], v["c_pred"], v["c_gt"]),
                    "false": v["false"],
                    "docs": v["docs"],
                }
                for c, v in sorted(per_class[name].items())
            },
        }
    by_cls: dict[str, list[bool]] = defaultdict(list)
    for m in multi:
        by_cls[m["cls"]].append(m["right"])
    out["multi"] = {
        "right": sum(m["right"] for m in multi),
        "of": len(multi),
        "classes": {c: f"{sum(v)}/{len(v)}" for c, v in sorted(by_cls.items())},
        "wrong": [m for m in multi if not m["right"]],
    }
    by_shape: dict[str, list[bool]] = defaultdict(list)
    for m in shape:
        by_shape[m["cls"]].append(m["right"])
    out["shape"] = {
        "right": sum(m["right"] for m in shape),
        "of": len(shape),
        "classes": {c: f"{sum(v)}/{len(v)}" for c, v in sorted(by_shape.items())},
        "wrong": [m for m in shape if not m["right"]],
    }
    out["worst"] = sorted(worst)[:15]
    return out


#: classes whose pages hold no table
NO_TABLES = [*NO_TABLE, *LATER_NO_TABLE]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=210, help="documents per split (21 classes: 10 each)")
    ap.add_argument("--splits", default="tune,held_out")
    ap.add_argument(
        "--first",
        type=int,
        default=0,
        help="skip each split's first seeds: --first 1500 --n 1500 draws 1500 new ones",
    )
    ap.add_argument(
        "--tools", default="dagster,camelot,pdfplumber", help="dagster, camelot, pdfplumber, tabula"
    )
    ap.add_argument(
        "--classes",
        help="comma-separated classes to draw instead of the 21 (seed modulo their number); "
        f"'extra' for the later ones ({', '.join(EXTRA)}); 'later' for {', '.join(LATER)}; "
        f"'all' for all {len(CLASSES) + len(EXTRA) + len(LATER) + len(LATER_NO_TABLE)} "
        f"of the base and extra ones; 'later30' for the {len(LATER30)} drawn after the 21 base ones, "
        "in the order the fresh tune draws of BENCHMARKS.md used; "
        f"({', '.join(LATER_NO_TABLE)} only by name or 'all'; "
        f"{', '.join(TAIL_MULTI + SHAPE + WRAPPED + STATEMENT + UNSEEN + NOTED + WIDE + CHANGE)}, "
        f"{', '.join(STACKED + SECTIONED_HEADS + GROUP_RULED)} "
        "only by name)",
    )
    ap.add_argument("--per-class", action="store_true", help="our scores per class")
    ap.add_argument("--dump", type=Path, help="write the documents we score below 0.9 here")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    logging.basicConfig(level=logging.ERROR)
    logging.getLogger("camelot").setLevel(logging.ERROR)
    wanted = {w for w in args.tools.split(",") if w}
    every = CLASSES + EXTRA + LATER + LATER_NO_TABLE
    classes = {"extra": EXTRA, "later": LATER, "all": every, "later30": LATER30, None: None}.get(args.classes)
    if classes is None and args.classes:
        classes = args.classes.split(",")
        unknown = (
            set(classes)
            - set(every)
            - set(TAIL_MULTI)
            - set(SHAPE)
            - set(WRAPPED)
            - set(STATEMENT)
            - set(NOTED)
            - set(WIDE)
            - set(CHANGE)
            - set(STACKED)
            - set(SECTIONED_HEADS)
            - set(GROUP_RULED)
            - set(UNSEEN)
        )
        if unknown:
            ap.error(f"unknown classes {sorted(unknown)}")
    results = {}
    print(
        "| split | tool | adjacency F1 (P/R) | cell F1 (P/R) | false tables: no-table pages with one "
        "| on table pages | multi-page right | shape right | ms/page |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for split in args.splits.split(","):
        res = run_split(split, args.n, wanted, args.dump, classes, args.first)
        results[split] = res
        for name, r in res["tools"].items():
            a, c = r["adjacency"], r["cells"]
            mp = f"{res['multi']['right']}/{res['multi']['of']}" if name == "dagster_ocr" else "-"
            sh = f"{res['shape']['right']}/{res['shape']['of']}" if name == "dagster_ocr" else "-"
            print(
                f"| {split} | {name} | {a['f1']} ({a['precision']}/{a['recall']}) | {c['f1']} "
                f"({c['precision']}/{c['recall']}) | {r['no_table_pages_with_a_table']} "
                f"({r['tables_on_no_table_pages']} tables) | {r['false_tables_on_table_pages']} "
                f"| {mp} | {sh} | {r['ms_per_page']} |",
                flush=True,
            )
    if args.per_class:
        for split, res in results.items():
            print(f"\n{split}: per class (adjacency F1 / cell F1 / false tables)")
            names = list(res["tools"])
            print("| class | " + " | ".join(names) + " |")
            print("|---|" + "---|" * len(names))
            classes = sorted({c for r in res["tools"].values() for c in r["classes"]})
            for c in classes:
                cols = []
                for n in names:
                    v = res["tools"][n]["classes"].get(c)
                    cols.append(f"{v['adjacency_f1']} / {v['cell_f1']} / {v['false']}" if v else "-")
                print(f"| {c} | " + " | ".join(cols) + " |")
            print(f"multi-page: {res['multi']['classes']}")
            for m in res["multi"]["wrong"]:
                print(f"  wrong: seed {m['seed']} {m['cls']} {m['tags']}: {m['why']}")
            print(f"shape: {res['shape']['classes']}")
            for m in res["shape"]["wrong"]:
                print(f"  wrong: seed {m['seed']} {m['cls']} {m['tags']}: {m['why']}")
            print(f"worst: {res['worst']}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
