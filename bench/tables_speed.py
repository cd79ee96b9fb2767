"""Time the ruled-table path of dagster_ocr.tables against a saved copy of an earlier tables.py.

Both versions run in the same process on the same files (ICDAR us-024, the sample service
agreement from dagster_ocr.samples, and every tabula-java / camelot / ICDAR PDF of the corpus that
(marked when it draws no grid)), best of ``--repeat`` runs each; the extracted tables (cell
texts, spans, header rows) are compared for equality.

    .venv/bin/python bench/tables_speed.py --before /tmp/tables_before.py [--corpus DIR] [--repeat 3]

``--before`` is a single-module copy (``git show REV:dagster_ocr/tables.py``, revisions before the
package split); to compare two revisions of the package, bench/revisions.py runs each in its own tree.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import pymupdf

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dagster_ocr import tables as after  # noqa: E402
from dagster_ocr.model import Page  # noqa: E402
from dagster_ocr.samples import build_service_agreement  # noqa: E402
from dagster_ocr.tables import TableSettings  # noqa: E402
from dagster_ocr.tables.grid import _has_grid  # noqa: E402


def load(path: Path) -> ModuleType:
    """Import a tables.py copy under its own module name."""
    spec = importlib.util.spec_from_file_location("tables_before", path)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up there
    spec.loader.exec_module(mod)
    return mod


def pages_of(doc: pymupdf.Document) -> list[Page]:
    return [Page(index=i, width=pg.rect.width, height=pg.rect.height) for i, pg in enumerate(doc)]


def summary(tables: list[Any]) -> list[tuple]:
    """What must not change: per table its shape, header rows and cell texts/spans."""
    return [
        (
            t.n_rows,
            t.n_cols,
            t.header_rows,
            sorted((c.row, c.col, c.text, c.row_span, c.col_span) for c in t.cells),
        )
        for t in tables
    ]


def timed(mod: ModuleType, data: bytes, repeat: int) -> tuple[float, list[Any], int]:
    best = float("inf")
    out: list[Any] = []
    n = 0
    for _ in range(repeat):
        doc = pymupdf.open(stream=data, filetype="pdf")  # fresh document: no cached page state
        pages = pages_of(doc)
        n = len(pages)
        t0 = time.perf_counter()
        out = mod.extract_tables(doc, pages, settings=TableSettings())
        best = min(best, time.perf_counter() - t0)
    return best, out, n


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", type=Path, required=True)
    ap.add_argument("--corpus", type=Path, default=Path("/work/shared/corpus/tables"))
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    before = load(a.before)
    cases: list[tuple[str, bytes]] = [("sample service_agreement", build_service_agreement()[0])]
    for pdf in sorted(a.corpus.glob("*/*/*.pdf")):
        data = pdf.read_bytes()
        with pymupdf.open(stream=data, filetype="pdf") as doc:
            if doc.needs_pass:  # camelot's health_protected.pdf: no pages without its password
                continue
            grid = any(_has_grid(pg.get_cdrawings()) for pg in doc)
        cases.append((f"{pdf.parent.parent.name}/{pdf.stem}{'' if grid else ' (no grid)'}", data))
    print(f"{'document':38} {'pages':>5} {'before ms/pg':>13} {'after ms/pg':>12} {'speedup':>8}  same")
    tot_b = tot_a = tot_n = 0.0
    for name, data in cases:
        tb, ob, n = timed(before, data, a.repeat)
        ta, oa, _ = timed(after, data, a.repeat)
        same = summary(ob) == summary(oa)
        tot_b, tot_a, tot_n = tot_b + tb, tot_a + ta, tot_n + n
        print(f"{name:38} {n:5d} {1000 * tb / n:13.1f} {1000 * ta / n:12.1f} {tb / ta:7.2f}x  {same}")
        if not same:
            for k, (x, y) in enumerate(zip(summary(ob), summary(oa), strict=False)):
                if x != y:
                    print(f"    t{k}: before {x[:3]} after {y[:3]}")
            if len(ob) != len(oa):
                print(f"    table count {len(ob)} -> {len(oa)}")
    print(
        f"{'total':38} {int(tot_n):5d} {1000 * tot_b / tot_n:13.1f} {1000 * tot_a / tot_n:12.1f} "
        f"{tot_b / tot_a:7.2f}x"
    )


if __name__ == "__main__":
    main()
