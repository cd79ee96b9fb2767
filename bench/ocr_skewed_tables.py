"""Ruled tables on askew scans (issue 37): does the table stage still find a ruled table when the
page was fed in turned by a degree or two?

Generated one-page ruled tables (``tests/support/table_pages.py``, class ``ruled``, seeds from
``--start``) are rendered at 150 dpi, turned by each ``--angles`` value (degrees, white fill), wrapped
as image-only PDFs and parsed by ``pipeline.parse`` with the default settings and CPU engine. Printed:
per page the tables found at each angle, then how many pages had a table found per angle.

    PYTHONPATH=. .venv/bin/python bench/ocr_skewed_tables.py [--angles 0,0.5,1,2] [--pages 5] [--start 1000]

Measured 2026-12-04 (5 pages from seed 1000): a table found on 5/5 pages level and at 0.5 degrees,
1/5 at 1 degree, 0/5 at 2: the rules are looked for in the tilted image (``tables/scanned.py``),
where a tilted rule breaks into short steps.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import cv2
import numpy as np
import pymupdf

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(1, str(ROOT / "tests"))

import _common as C  # noqa: E402
from support.table_pages import make_case  # noqa: E402

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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--angles", default="0,0.5,1,2")
    ap.add_argument("--pages", type=int, default=5)
    ap.add_argument("--start", type=int, default=1000, help="first generator seed")
    args = ap.parse_args()
    C.quiet_logs()
    angles = [float(a) for a in args.angles.split(",")]
    engine = get_engine(Settings().ocr)
    engine.load()
    work = Path(tempfile.mkdtemp(prefix="ocr-skewed-tables-"))
    found = dict.fromkeys(angles, 0)
    pages = 0
    seed = args.start
    while pages < args.pages:
        case = make_case(seed, "ruled")
        seed += 1
        if case.n_pages != 1 or not case.tables:
            continue
        row = []
        for a in angles:
            n = len(parse(C.source_of(askew_scan(case.pdf, a, work / "page.pdf")), engine=engine).tables)
            found[a] += n > 0
            row.append(f"{a:g} deg: {n}")
        pages += 1
        print(f"seed {seed - 1}: " + ", ".join(row), flush=True)
    print("pages with a table found: " + ", ".join(f"{a:g} deg {found[a]}/{pages}" for a in angles))


if __name__ == "__main__":
    main()
