"""Our tables against the peers in the same run: ICDAR adjacency F1 and cell-content multiset F1.

Tools, each on the same PDFs in one process:

* ``dagster_ocr``: ``dagster_ocr.tables.extract_tables`` with its default settings, always.
* pdfplumber 0.11 ``extract_tables()`` (lines strategy, its default) and with the text strategy.
* camelot 2.0 ``read_pdf`` with ``flavor="stream"`` and with ``flavor="lattice"`` (its default).
* tabula-py 2.10 ``read_pdf`` (runs tabula-java; needs a ``java`` on PATH: Debian's
  default-jre-headless) with its defaults (``guess=True``).
* the tool that wrote each expected CSV with the parameters MANIFEST.json records for it
  (camelot's flavor, table_areas/regions, columns, split_text, edge_tol, password...; tabula's page,
  area and lattice/stream), on that tool's expectations only: ``camelot (recorded parameters)``
  scores the camelot CSVs, ``tabula (recorded parameters)`` the tabula-java/tabula-py CSVs.

Peers are bench-only dependencies (``pip install .[bench]``; tabula also needs Java). A peer that
is missing is skipped with a message, never an error. A tool that fails on a file (an encrypted
PDF opened without its password, a page it cannot parse) scores nothing on it and the failure is
listed; it never stops the run.

Metrics:

* ICDAR-2013 adjacency-relation F1 on tables/icdar2013 (``tables_icdar.score_doc``).
* Cell-content multiset F1 on the tabula-java, tabula-py and camelot expected CSVs (camelot's
  "hybrid" CSVs left out): per expectation group (one input file, one parameter set, one page),
  the multiset of non-empty cell texts of the expected CSVs against that of the tool's tables on the
  same page; texts compared whitespace- and case-insensitively (``_norm``), camelot's ``<s>``
  superscript tags dropped, and the characters of a recorded ``strip_text`` removed on both sides.
  Where the expectation covers an area (table_areas, table_regions, area, columns), only predicted
  tables at least half of whose cells are expected ones count (the others lie outside the area);
  for a whole-page expectation every predicted table on the page counts. Micro-averaged per split.

    PYTHONPATH=. .venv/bin/python bench/tables_peers.py [--corpus DIR] [--tools a,b] [--skip-icdar]
        [--per-doc] [--json OUT]
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import io
import json
import logging
import re
import shutil
import sys
import time
import warnings
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pymupdf

sys.path.insert(0, str(Path(__file__).resolve().parent))

import tables_icdar as TI  # noqa: E402
from _common import split_of  # noqa: E402

from dagster_ocr.tables.words import _norm  # noqa: E402

Grid = list[list[str]]
Parts = list[tuple[int, Grid]]


@dataclass
class Group:
    """One expectation: an input file, one tool's parameters, the page they describe, its CSVs."""

    name: str
    pdf: Path
    tool: str  # "camelot" or "tabula": the tool the expected CSVs come from
    params: dict[str, Any]
    page: int  # 0-based
    area: bool  # the expectation covers part of the page only
    truth: list[Grid]
    strip: str = ""
    split: str = "?"
    files: list[str] = field(default_factory=list)


# ---------------------------------------------------------------- parameters recorded in MANIFEST

#: parameters that restrict an expectation to part of its page
_AREA_KEYS = ("table_areas", "table_regions", "columns", "area")


def _camelot_params(text: str) -> dict[str, Any]:
    """camelot read_pdf keyword arguments from a MANIFEST ``extraction_parameters`` string.

    Only the first clause (before ';') is read: later clauses name other flavors that assert the
    same data. "network or hybrid" reads as network.
    """
    head = text.split(";")[0]
    m = re.search(r'flavor="(\w+)"', head)
    out: dict[str, Any] = {"flavor": m.group(1) if m else "lattice"}
    for key in ("table_areas", "table_regions", "columns"):
        if mm := re.search(key + r'=\["([^"]+)"\]', head):
            out[key] = [mm.group(1)]
    for key in ("split_text", "flag_size"):
        if re.search(key + r"=True", head):
            out[key] = True
    if mm := re.search(r"edge_tol=(\d+)", head):
        out["edge_tol"] = int(mm.group(1))
    if mm := re.search(r'strip_text="((?:[^"\\]|\\.)*)"', head):
        out["strip_text"] = mm.group(1).encode().decode("unicode_escape")
    if re.search(r'"detect_vertical":\s*False', head):
        out["layout_kwargs"] = {"detect_vertical": False}
    if mm := re.search(r'password="([^"]+)"', head):
        out["password"] = mm.group(1)
    return out


def _tabula_params(text: str) -> dict[str, Any]:
    """tabula-py read_pdf keyword arguments from a MANIFEST ``extraction_parameters`` string.

    tabula-java's page, area (top, left, bottom, right in points) and method (lattice = its
    SpreadsheetExtractionAlgorithm, stream = BasicExtractionAlgorithm); tabula-py's template areas
    (x1, x2, y1, y2). Externally supplied ruling lines cannot be passed to tabula-py: that
    expectation runs as lattice on its page.
    """
    out: dict[str, Any] = {"pages": 1}
    if mm := re.search(r"\bpage (\d+)", text):
        out["pages"] = int(mm.group(1))
    if mm := re.search(r"pages=(\d+)", text):
        out["pages"] = int(mm.group(1))
    num = r"([\d.]+)"
    if mm := re.search(rf"top={num} left={num} bottom={num} right={num}", text):
        out["area"] = [float(x) for x in mm.groups()]
    elif mm := re.search(rf"x1={num} x2={num} y1={num} y2={num}", text):
        x1, x2, y1, y2 = (float(x) for x in mm.groups())
        out["area"] = [y1, x1, y2, x2]
    if "read_pdf defaults" in text and "area" not in out:
        return out  # guess=True, neither method forced
    out["guess"] = False
    if re.search(r"\blattice\b", text):
        out["lattice"] = True
    else:
        out["stream"] = True
    return out


def _read_csv(path: Path) -> Grid:
    with path.open(encoding="utf-8", newline="") as f:
        return [list(r) for r in csv.reader(f)]


def load_groups(corpus: Path) -> list[Group]:
    """Every expectation group of the tabula-java, tabula-py and camelot inputs in MANIFEST.json."""
    manifest = json.loads((corpus / "MANIFEST.json").read_text())
    entries = {f["file"]: f for f in manifest["files"]}
    groups: dict[tuple[str, str], Group] = {}
    for f in manifest["files"]:
        if f.get("role") != "input" or not f["file"].startswith(
            ("tables/camelot/", "tables/tabula-java/", "tables/tabula-py/")
        ):
            continue
        gt = f.get("ground_truth") or {}
        tool = "camelot" if f["file"].startswith("tables/camelot/") else "tabula"
        for gf in gt.get("files", []):
            entry = entries.get(gf, {})
            if not gf.endswith(".csv") or "hybrid" in Path(gf).name:
                continue
            text = entry.get("extraction_parameters") or gt.get("extraction_parameters") or ""
            # camelot's expectations on a tabula input (us-007) name camelot's flavors
            this_tool = "camelot" if "flavor=" in text else tool
            params = _camelot_params(text) if this_tool == "camelot" else _tabula_params(text)
            page = (params.get("pages", 1) if this_tool == "tabula" else 1) - 1
            area = any(k in params for k in _AREA_KEYS)
            # lattice given external rulings, or one table of several on the page (tables[0], dfs[0])
            area = area or "rulings" in text or bool(re.search(r"(tables|dfs)\[\d\]", text))
            key = (f["file"], json.dumps(params, sort_keys=True))
            g = groups.get(key)
            if g is None:
                name = f"{Path(f['file']).parent.parent.name}/{Path(f['file']).stem}"
                g = groups[key] = Group(
                    name=f"{name} [{Path(gf).stem.split('__')[-1]}]",
                    pdf=corpus / f["file"],
                    tool=this_tool,
                    params=params,
                    page=page,
                    area=area,
                    truth=[],
                    strip=params.get("strip_text", ""),
                    split=f.get("split", "?"),
                )
            g.truth.append(_read_csv(corpus / gf))
            g.files.append(gf)
    for g in groups.values():
        if len(g.files) > 1 and not any(k in g.params for k in _AREA_KEYS):
            g.area = False  # every table of the page is expected (tables[0] and tables[1] ...)
    return list(groups.values())


# ---------------------------------------------------------------- metric

_TAG_RE = re.compile(r"</?s>")


def _cell_key(text: str | None, strip: str) -> str:
    t = _TAG_RE.sub("", text or "")
    if strip:
        t = t.translate({ord(ch): None for ch in strip})
    return _norm(t)


def _multiset(grid: Grid, strip: str) -> Counter[str]:
    return Counter(k for r in grid for c in r if (k := _cell_key(c, strip)))


def score_group(g: Group, pred: Parts) -> tuple[int, int, int]:
    """(true positives, predicted cells counted, expected cells) of one tool on one group."""
    truth: Counter[str] = Counter()
    for grid in g.truth:
        truth += _multiset(grid, g.strip)
    got: Counter[str] = Counter()
    for page, grid in pred:
        if page != g.page:
            continue
        cells = _multiset(grid, g.strip)
        if g.area and sum((cells & truth).values()) * 2 < sum(cells.values()):
            continue  # a table outside the expected area
        got += cells
    return sum((got & truth).values()), sum(got.values()), sum(truth.values())


# ---------------------------------------------------------------- tools

#: (path, group or None, pymupdf document) -> per-page grids; group None = ICDAR whole document
Tool = Callable[[Path, "Group | None", pymupdf.Document], Parts]


def _ours(path: Path, g: Group | None, doc: pymupdf.Document) -> Parts:
    if doc.needs_pass:  # the product records such a file as encrypted and extracts nothing
        raise ValueError("encrypted PDF: the product records it as bad input")
    return TI.ours(TI.TableSettings())(path, doc)


def _plumber(strategy: str) -> Tool:
    def run(path: Path, g: Group | None, _doc: pymupdf.Document) -> Parts:
        import pdfplumber

        ts = {} if strategy == "lines" else {"vertical_strategy": "text", "horizontal_strategy": "text"}
        out = []
        with pdfplumber.open(path) as pdf:
            pages = [g.page] if g else range(len(pdf.pages))
            for i in pages:
                for t in pdf.pages[i].extract_tables(ts):
                    out.append((i, [[c or "" for c in r] for r in t]))
        return out

    return run


def _camelot_run(path: Path, pages: str, kw: dict[str, Any]) -> Parts:
    import camelot

    with warnings.catch_warnings(), contextlib.redirect_stderr(io.StringIO()):
        warnings.simplefilter("ignore")
        tables = camelot.read_pdf(str(path), pages=pages, suppress_stdout=True, **kw)
    return [(int(t.page) - 1, [[str(c) for c in r] for r in t.df.values.tolist()]) for t in tables]


def _camelot(flavor: str) -> Tool:
    def run(path: Path, g: Group | None, _doc: pymupdf.Document) -> Parts:
        return _camelot_run(path, str(g.page + 1) if g else "all", {"flavor": flavor})

    return run


def _camelot_recorded(path: Path, g: Group | None, _doc: pymupdf.Document) -> Parts:
    assert g is not None
    kw = dict(g.params)
    kw.pop("strip_text", None)  # applied by the metric to every tool alike
    return _camelot_run(path, str(g.page + 1), kw)


def _tabula_run(path: Path, kw: dict[str, Any]) -> Parts:
    import tabula

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = tabula.read_pdf(str(path), output_format="json", multiple_tables=True, silent=True, **kw)
    out = []
    for t in res:
        grid = [[c.get("text", "") for c in r] for r in t.get("data", [])]
        out.append((int(kw.get("pages", 1)) - 1, grid))
    return out


def _tabula_default(path: Path, g: Group | None, doc: pymupdf.Document) -> Parts:
    if g is not None:
        return _tabula_run(path, {"pages": g.page + 1})
    # tabula-java's JSON does not say which page a table is on: one call per page
    return [part for i in range(doc.page_count) for part in _tabula_run(path, {"pages": i + 1})]


def _tabula_recorded(path: Path, g: Group | None, _doc: pymupdf.Document) -> Parts:
    assert g is not None
    return _tabula_run(path, dict(g.params))


def available_tools(wanted: set[str] | None = None) -> tuple[dict[str, tuple[Tool, str | None]], list[str]]:
    """name -> (tool, expectation tool it is limited to or None); plus messages for skipped peers."""
    import importlib.util

    tools: dict[str, tuple[Tool, str | None]] = {"dagster_ocr (defaults)": (_ours, None)}
    skipped = []
    have = {m: importlib.util.find_spec(m) is not None for m in ("pdfplumber", "camelot", "tabula")}
    java = shutil.which("java") is not None
    if have["pdfplumber"]:
        tools["pdfplumber (lines, default)"] = (_plumber("lines"), None)
        tools["pdfplumber (text strategy)"] = (_plumber("text"), None)
    else:
        skipped.append("pdfplumber: not installed (pip install pdfplumber==0.11.10)")
    if have["camelot"]:
        tools["camelot stream"] = (_camelot("stream"), None)
        tools["camelot lattice"] = (_camelot("lattice"), None)
        tools["camelot (recorded parameters)"] = (_camelot_recorded, "camelot")
    else:
        skipped.append("camelot: not installed (pip install .[bench], see pyproject)")
    if have["tabula"] and java:
        tools["tabula-py (defaults)"] = (_tabula_default, None)
        tools["tabula (recorded parameters)"] = (_tabula_recorded, "tabula")
    else:
        skipped.append(
            "tabula-py: "
            + (
                "no java on PATH (apt-get install default-jre-headless)"
                if have["tabula"]
                else "not installed"
            )
        )
    if wanted:
        tools = {k: v for k, v in tools.items() if any(w in k for w in wanted)}
    return tools, skipped


# ---------------------------------------------------------------- driver


def _prf(tp: int, n_pred: int, n_gt: int) -> dict[str, float]:
    return TI._prf(tp, n_pred, n_gt)


def run_cells(groups: list[Group], tool: Tool, only: str | None) -> dict[str, Any]:
    per: dict[str, dict[str, Any]] = {}
    cache: dict[Path, Parts] = {}
    for g in groups:
        if only and g.tool != only:
            continue
        err = ""
        try:
            with pymupdf.open(g.pdf) as doc:
                if tool is _ours:  # one run per file, whatever the expectation (its defaults)
                    if g.pdf not in cache:
                        cache[g.pdf] = tool(g.pdf, None, doc) if not doc.needs_pass else []
                        if doc.needs_pass:
                            err = "encrypted: recorded as bad input, no tables"
                    pred = cache[g.pdf]
                else:
                    pred = tool(g.pdf, g, doc)
        except Exception as exc:  # a peer failing on one file scores nothing there
            pred, err = [], f"{type(exc).__name__}: {str(exc)[:120]}"
        a, b, c = score_group(g, pred)
        per[g.name] = {"tp": a, "pred": b, "gt": c, "split": g.split, **({"error": err} if err else {})}
    return {"splits": TI.by_split(per), "docs": per}


def run_icdar(corpus: Path, tool: Tool) -> dict[str, Any]:
    per: dict[str, dict[str, Any]] = {}
    t_total = 0.0
    n_pages = 0
    for name, pdf, gt in TI.icdar_cases(corpus):
        err = ""
        with pymupdf.open(pdf) as doc:
            t0 = time.perf_counter()
            try:
                pred = tool(pdf, None, doc)
            except Exception as exc:
                pred, err = [], f"{type(exc).__name__}: {str(exc)[:120]}"
            t_total += time.perf_counter() - t0
            n_pages += doc.page_count
        a, b, c = TI.score_doc(gt, pred)
        per[name] = {
            "tp": a,
            "pred": b,
            "gt": c,
            "split": split_of(pdf, corpus),
            **({"error": err} if err else {}),
        }
    return {
        "splits": TI.by_split(per),
        "docs": per,
        "pages_per_s": round(n_pages / t_total, 2) if t_total else 0,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "corpus")
    ap.add_argument("--tools", default="", help="comma-separated substrings of tool names (default: all)")
    ap.add_argument("--skip-icdar", action="store_true", help="cell-content F1 only")
    ap.add_argument("--per-doc", action="store_true", help="print each expectation group's scores")
    ap.add_argument("--json", type=Path, help="write every per-document result here")
    args = ap.parse_args()
    logging.basicConfig(level=logging.ERROR)
    logging.getLogger("camelot").setLevel(logging.ERROR)
    wanted = {w for w in args.tools.split(",") if w} or None
    tools, skipped = available_tools(wanted)
    for msg in skipped:
        print(f"skipped peer {msg}", file=sys.stderr)
    groups = load_groups(args.corpus)
    results: dict[str, dict[str, Any]] = {}
    print(
        "| tool | ICDAR F1 tune | ICDAR F1 check | ICDAR pages/s | cell F1 tune (P/R) | cell F1 check (P/R) |"
    )
    print("|---|---|---|---|---|---|")
    for name, (tool, only) in tools.items():
        cells = run_cells(groups, tool, only)
        icdar = None if (args.skip_icdar or only) else run_icdar(args.corpus, tool)
        results[name] = {"cells": cells, "icdar": icdar}
        ct, cc = cells["splits"]["tune"], cells["splits"]["check"]
        it = f"{icdar['splits']['tune']['f1']}" if icdar else "-"
        ic = f"{icdar['splits']['check']['f1']}" if icdar else "-"
        ips = f"{icdar['pages_per_s']}" if icdar else "-"
        print(
            f"| {name} | {it} | {ic} | {ips} | {ct['f1']} ({ct['precision']}/{ct['recall']}, {ct['docs']}) "
            f"| {cc['f1']} ({cc['precision']}/{cc['recall']}, {cc['docs']}) |",
            flush=True,
        )
    if args.per_doc:
        for name, res in results.items():
            print(f"\n{name}")
            for doc, d in res["cells"]["docs"].items():
                f = _prf(d["tp"], d["pred"], d["gt"])
                print(
                    f"  {d['split']:5} {doc:70} F1 {f['f1']:.3f} P {f['precision']:.3f} "
                    f"R {f['recall']:.3f} {d.get('error', '')}"
                )
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
