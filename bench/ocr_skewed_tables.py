"""Ruled tables on askew scans (issue 37): does the table stage still find a ruled table when the
page was fed in turned by a degree or two?

Generated one-page ruled tables (``tests/support/table_pages.py``, class ``ruled``) are rendered at
150 dpi, turned by each ``--angles`` value (degrees, counter-clockwise as seen, white fill), wrapped
as image-only PDFs and parsed by ``pipeline.parse`` with the default settings and CPU engine.
Printed: per page the tables found at each angle, then per angle the pages with a table found, the
cell-content F1 against the generated truth (scored as ``bench/tables_synthetic.py`` scores) and
the CPU ms a page of the ruled-table search on the OCR'd page (``tables.scanned``, rules and
levelling; the OCR itself, 1-2 s a page, is not counted).

    PYTHONPATH=. .venv/bin/python bench/ocr_skewed_tables.py [--angles 0,0.5,1,2] [--pages 5]
        [--split tune|held_out] [--start SEED]

Seeds: the tune split from 1000 (``--start`` overrides), held_out from the generator's held-out
range plus 1000; tune on "tune" only.

Measured 2026-12-04 (5 pages from seed 1000): a table found on 5/5 pages level and at 0.5 degrees,
1/5 at 1 degree, 0/5 at 2: the rules are looked for in the tilted image (``tables/scanned.py``),
where a tilted rule breaks into short steps. Since the search runs on the image levelled by the
lines' tilt and the rules' own (``Page.skew``, ``scanned.rule_tilt``): see BENCHMARKS.md, issue 37.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import cv2
import numpy as np
import pymupdf

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(1, str(ROOT / "tests"))

import _common as C  # noqa: E402
import tables_synthetic as TS  # noqa: E402
from support.table_pages import HELD_OUT, TUNE, make_case  # noqa: E402

import dagster_ocr.tables.document as TD  # noqa: E402
from dagster_ocr.ocr import get_engine  # noqa: E402
from dagster_ocr.pipeline import parse  # noqa: E402
from dagster_ocr.settings import Settings  # noqa: E402


def askew_scan(pdf: bytes, degrees: float, out: Path, dpi: int = 150) -> Path:
    """The first page of ``pdf`` scanned at ``dpi`` and turned by ``degrees``, as an image-only PDF."""
    with pymupdf.open(stream=pdf) as src:
        rect = src[0].rect
        pix = src[0].get_pixmap(dpi=dpi, colorspace=pymupdf.csGRAY)
    img = np.frombuffer(pix.samples, np.uint8).reshape(pix.height, pix.width)
    h, w = img.shape
    turn = cv2.getRotationMatrix2D((w / 2, h / 2), degrees, 1.0)
    ok, buf = cv2.imencode(".png", cv2.warpAffine(img, turn, (w, h), flags=cv2.INTER_LINEAR, borderValue=255))
    assert ok
    doc = pymupdf.open()
    page = doc.new_page(width=rect.width, height=rect.height)
    page.insert_image(page.rect, stream=buf.tobytes())
    doc.save(out)
    return out


_SEARCH_CPU = [0.0]


def _timed_search(original):  # noqa: ANN001, ANN202
    def search(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        t0 = time.process_time()
        try:
            return original(*args, **kwargs)
        finally:
            _SEARCH_CPU[0] += time.process_time() - t0

    return search


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--angles", default="0,0.5,1,2")
    ap.add_argument("--pages", type=int, default=5)
    ap.add_argument("--split", default="tune", choices=["tune", "held_out"])
    ap.add_argument("--start", type=int, help="first generator seed (default: the split's + 1000)")
    args = ap.parse_args()
    C.quiet_logs()
    angles = [float(a) for a in args.angles.split(",")]
    engine = get_engine(Settings().ocr)
    engine.load()
    TD._ocr_page = _timed_search(TD._ocr_page)
    work = Path(tempfile.mkdtemp(prefix="ocr-skewed-tables-"))
    found = dict.fromkeys(angles, 0)
    counts = {a: [0, 0, 0] for a in angles}  # cell tp, predicted, truth
    cpu = dict.fromkeys(angles, 0.0)
    pages = 0
    seed = args.start if args.start is not None else {"tune": TUNE, "held_out": HELD_OUT}[args.split] + 1000
    while pages < args.pages:
        case = make_case(seed, "ruled")
        seed += 1
        if case.n_pages != 1 or not case.tables:
            continue
        row = []
        for a in angles:
            _SEARCH_CPU[0] = 0.0
            parsed = parse(C.source_of(askew_scan(case.pdf, a, work / "page.pdf")), engine=engine)
            cpu[a] += _SEARCH_CPU[0]
            n = len(parsed.tables)
            pred = [(t.cells[0].page_index, TS._table_grid(t)) for t in parsed.tables if t.cells]
            sc = TS.score_pages(case, pred)
            for k, key in enumerate(("c_tp", "c_pred", "c_gt")):
                counts[a][k] += sc[key]
            found[a] += n > 0
            row.append(f"{a:g} deg: {n}")
        pages += 1
        print(f"seed {seed - 1}: " + ", ".join(row), flush=True)
    print(f"\n| {args.split} | " + " | ".join(f"{a:g} deg" for a in angles) + " |")
    print("|---|" + "---|" * len(angles))
    print("| pages with a table | " + " | ".join(f"{found[a]}/{pages}" for a in angles) + " |")
    print("| cell F1 | " + " | ".join(f"{TS._f1(*counts[a]):.3f}" for a in angles) + " |")
    print("| search CPU ms/page | " + " | ".join(f"{1000 * cpu[a] / pages:.0f}" for a in angles) + " |")


if __name__ == "__main__":
    main()
