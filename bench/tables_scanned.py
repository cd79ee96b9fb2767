"""Ruled tables on scanned pages (``tables.scanned``): generated table pages and pages without a
table, printed to images as a scanner would (an image-only PDF at ``--dpi``), through OCR and the
table stage; scored as ``bench/tables_synthetic.py`` scores text-layer pages (cell-content F1 of
the tables found against the generated truth, and tables found on pages that hold none).

    PYTHONPATH=. .venv/bin/python bench/tables_scanned.py [--split tune|held_out] [--per-class 4]
        [--classes a,b] [--dpi 150] [--json OUT]

Split: the generator's seed ranges (tune / held_out, see tests/support/table_pages.py); tune on
"tune" only. OCR is rapidocr with its defaults, so a run costs about 1-3 CPU s a page.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
from collections import Counter
from pathlib import Path

import pymupdf

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(1, str(ROOT / "tests"))

import _common as C  # noqa: E402
import tables_synthetic as TS  # noqa: E402
from support.table_pages import LATER_NO_TABLE, Case, make_case, seeds  # noqa: E402

from dagster_ocr.ingest import DocumentStore  # noqa: E402
from dagster_ocr.ocr import get_engine  # noqa: E402
from dagster_ocr.pipeline import parse  # noqa: E402
from dagster_ocr.settings import Settings  # noqa: E402

#: ruled table classes, and pages holding no table (prose in two columns, drawn figures)
DEFAULT_CLASSES = ["ruled", "row_span", "stacked_header", "two_column_text", *LATER_NO_TABLE, "box_diagram"]

_WORDS = (
    "system use attitude intention beliefs norms control perceived ease usefulness behaviour "
    "motivation features capabilities evaluation external variables training support quality"
).split()


def box_diagram(seed: int) -> Case:
    """A page of prose around a diagram of labelled boxes in rows and columns, neighbours joined by
    straight lines (some ending in an arrowhead), under a "Figure N:" caption: no table. Drawn here
    (bench-local) so the generator's own classes keep their seeds."""
    rng = random.Random(seed * 7907 + 11)
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    prose = " ".join(rng.choice(_WORDS) for _ in range(90)).capitalize() + "."
    page.insert_textbox(pymupdf.Rect(72, 60, 540, 230), prose, fontsize=11, fontname="tiro")
    rows, cols = rng.choice([(1, 3), (2, 2), (2, 3), (3, 2), (3, 3)])
    w, h = rng.uniform(95, 130), rng.uniform(38, 56)
    gx, gy = rng.uniform(35, 70), rng.uniform(30, 60)
    x0 = 306 - (cols * w + (cols - 1) * gx) / 2
    y0 = 240.0
    width = rng.choice([0.6, 0.8, 1.0, 1.2])
    for r in range(rows):
        for c in range(cols):
            if rows * cols > 3 and rng.random() < 0.2:
                continue  # a gap in the layout
            box = pymupdf.Rect(
                x0 + c * (w + gx), y0 + r * (h + gy), x0 + c * (w + gx) + w, y0 + r * (h + gy) + h
            )
            page.draw_rect(box, width=width)
            label = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(1, 3))).title()
            page.insert_textbox(box + (3, 4, -3, -2), label, fontsize=rng.choice([8, 9]), align=1)
            if c + 1 < cols:  # to the right-hand neighbour, at mid height
                a, b = pymupdf.Point(box.x1, box.y0 + h / 2), pymupdf.Point(box.x1 + gx, box.y0 + h / 2)
                page.draw_line(a, b, width=width)
                if rng.random() < 0.5:
                    page.draw_polyline(
                        [b + (-6, -3), b, b + (-6, 3)], width=width, closePath=True, fill=(0, 0, 0)
                    )
            if r + 1 < rows and rng.random() < 0.5:  # down to the box below
                a, b = pymupdf.Point(box.x0 + w / 2, box.y1), pymupdf.Point(box.x0 + w / 2, box.y1 + gy)
                page.draw_line(a, b, width=width)
    bottom = y0 + rows * (h + gy)
    page.insert_text(
        (150, bottom + 10),
        f"Figure {rng.randint(1, 12)}: {' '.join(rng.choice(_WORDS) for _ in range(6))}",
        fontsize=10,
        fontname="tiro",
    )
    page.insert_textbox(pymupdf.Rect(72, bottom + 30, 540, 740), prose, fontsize=11, fontname="tiro")
    data = doc.tobytes(no_new_id=True)
    return Case(seed=seed, cls="box_diagram", pdf=data, n_pages=1)


def scanned(pdf: bytes, dpi: int) -> bytes:
    """The document printed to images and put back together as an image-only PDF."""
    src = pymupdf.open("pdf", pdf)
    out = pymupdf.open()
    for page in src:
        pix = page.get_pixmap(dpi=dpi, colorspace=pymupdf.csGRAY, alpha=False)
        new = out.new_page(width=page.rect.width, height=page.rect.height)
        new.insert_image(new.rect, pixmap=pix)
    return out.tobytes()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--split", default="tune", choices=["tune", "held_out"])
    ap.add_argument("--per-class", type=int, default=4)
    ap.add_argument("--classes", default=",".join(DEFAULT_CLASSES))
    ap.add_argument("--dpi", type=int, default=150)
    ap.add_argument("--off", action="store_true", help="tables.ocr_pages off (the stage before)")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    C.quiet_logs()
    settings = Settings.model_validate({"tables": {"ocr_pages": not args.off}})
    engine = get_engine(settings.ocr)
    start = seeds(args.split, 1)[0]
    work = Path(tempfile.mkdtemp(prefix="tables_scanned_"))
    store = DocumentStore(work / "store")
    per_class: dict[str, Counter[str]] = {}
    for cls in args.classes.split(","):
        totals: Counter[str] = Counter()
        for k in range(args.per_class):
            case = box_diagram(start + k) if cls == "box_diagram" else make_case(start + k, cls)
            data = scanned(case.pdf, args.dpi)
            tmp = work / f"{cls}_{k}.pdf"
            tmp.write_bytes(data)
            source, _ = store.register(tmp)
            parsed = parse(source, settings, engine)
            pred = [(t.cells[0].page_index, TS._table_grid(t)) for t in parsed.tables if t.cells]
            sc = TS.score_pages(case, pred)
            sc["pages"] = case.n_pages
            sc["no_table_pages"] = case.n_pages if not case.tables else 0
            sc["false_pages"] = int(not case.tables and sc["n_pred"] > 0)
            totals.update(sc)
            print(f"{cls} seed {case.seed}: {dict(sc)}", file=sys.stderr, flush=True)
        per_class[cls] = totals
    head = f"class ({args.split}, {args.dpi} dpi) | pages | tables found | cell F1 | no-table pages given one"
    print(f"\n| {head} |")
    print("|---|---|---|---|---|")
    for cls, t in per_class.items():
        f1 = TS._f1(t["c_tp"], t["c_pred"], t["c_gt"]) if t["c_gt"] else float("nan")
        false = f"{t['false_pages']}/{t['no_table_pages']}" if t["no_table_pages"] else "-"
        print(f"| {cls} | {t['pages']} | {t['n_pred']} | {f1:.3f} | {false} |")
    shutil.rmtree(work, ignore_errors=True)
    if args.json:
        args.json.write_text(json.dumps({c: dict(t) for c, t in per_class.items()}, indent=1))


if __name__ == "__main__":
    main()
