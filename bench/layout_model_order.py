"""PyMuPDF's layout model as a reading order, against ours and ``get_text()``, on issue 37's text classes.

The model (``page.get_layout()``, pymupdf.layout) sorts its regions into a reading order; its text
here is each region's ``get_text(clip=...)`` in that order, running heads and feet left out. Ours is
what ``bench/text_layouts.py`` scores (``document_blocks`` order, Markdown stripped), on the same
generated pages (tests/support/text_layouts.py) and with the same score (edit similarity to the
nearest acceptable reading). Issue 37 item 3 asked whether the model earns a place as a second
opinion on reading order (BENCHMARKS.md, "Tables and text fidelity", 2026-12-04: it does not).

    PYTHONPATH=. .venv/bin/python bench/layout_model_order.py [--n 12] [--kind interleaved-shuffled ...]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import pymupdf

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import _common as C  # noqa: E402
import reading_order as RO  # noqa: E402
from support.text_layouts import HELD_OUT, score  # noqa: E402
from text_layouts import KINDS, make  # noqa: E402

from dagster_ocr import load_pymupdf_layout  # noqa: E402
from dagster_ocr.pipeline import parse  # noqa: E402

FURNITURE = ("page-header", "page-footer")


def model_text(doc: pymupdf.Document) -> str:
    """The page's text as the layout model orders its regions."""
    out = []
    for pg in doc:
        pg.get_layout()
        for box in pg.layout_information or []:
            if box[4] not in FURNITURE:
                out.append(pg.get_text("text", clip=pymupdf.Rect(box[:4]), sort=True))
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=12, help="seeds per class and split")
    default = ["interleaved-shuffled", "inset-shuffled", "columns-shuffled", "interleaved"]
    ap.add_argument("--kind", choices=KINDS, nargs="*", default=default)
    args = ap.parse_args()
    C.quiet_logs()
    load_pymupdf_layout()
    print("| class | split | pages | ours | get_text | layout model | model > ours |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        for kind in args.kind:
            for split, base in (("tune", 0), ("held_out", HELD_OUT)):
                ours = plain = model = 0.0
                wins = 0
                for k in range(args.n):
                    case = make(kind, base + k)
                    path = tmp / f"{kind}-{k}.pdf"
                    case.doc.save(path)
                    text = RO.strip_markdown(RO.sequence_text(RO.block_sequence(parse(C.source_of(path)))))
                    a = score(case, text)
                    b = score(case, "\n".join(p.get_text() for p in case.doc))
                    with pymupdf.open(path) as doc:
                        c = score(case, model_text(doc))
                    ours, plain, model, wins = ours + a, plain + b, model + c, wins + (c > a + 1e-9)
                n = args.n
                means = " | ".join(f"{x / n:.3f}" for x in (ours, plain, model))
                print(f"| {kind} | {split} | {n} | {means} | {wins}/{n} |", flush=True)


if __name__ == "__main__":
    main()
