"""Issue 37's text classes on generated pages: ours and plain ``get_text()`` against the truth.

* ``furniture``: one-page documents whose margin bands carry a running head, a page number, a
  date, URL or copyright line, a reference code, a letterhead (``make_single_page``): repetition
  cannot show them; a reader drops them and keeps the body (a title, a footnote) in the bands.
* ``letterhead``: one-page business letters on letterhead paper (``make_letterhead``): a bold or
  larger name over one to three address and contact lines in the top band, one to three small lines
  of company details in the bottom band; the body opens with a date and the recipient's address.
  Held-out seeds also draw right-aligned and split letterheads, which tune seeds never show.
* ``interleaved``: pages whose blocks interleave: a sidebar beside the body, a pull quote across
  the gutter, a boxed callout inside a column, a full-width figure caption between two columns
  (``make_interleaved``), their text written to the content stream in reading order (the aside
  before or after the body: ``get_text()`` reads an accepted reading by construction).
* ``interleaved-shuffled``: the same pages, their text written to the content stream in a shuffled
  order of pieces (title, each paragraph's lines in one column, each aside; ``stream="shuffled"``):
  a reader that trusts the stream order cannot win here by construction.
* ``inset``: a pull quote or a shaded note set into one side of a column, the body's lines beside
  it set short (``make_inset``): each inset line shares its baseline band with a body line;
  ``inset-shuffled``: the same pages written in shuffled pieces.
* ``columns``: prose in two to five narrow ragged-right columns under a title (``make_columns``):
  short lines line up in every column, so a text-alignment table finder sees a table there;
  ``columns-shuffled``: the same pages written in shuffled pieces.
* ``ocr-layer``: the ``columns`` pages scanned, their text an OCR layer a reader does not see
  (``make_ocr_layer``: invisible over the image, or drawn under it), each line's size the
  producer's fit to its box (0.85 to 1.18 times the print's), its width stretched to the line's.

Per class and split (tune seeds from 0, held-out seeds from ``HELD_OUT``; see
tests/support/text_layouts.py): mean edit similarity to the nearest acceptable reading for ours
(``document_blocks`` order, Markdown stripped) and for ``get_text()``; for ``furniture`` and
``letterhead`` also the furniture lines we keep and the body blocks we lose (must stay 0; not
counted on ``interleaved``, whose truth paragraphs a column break may split); "blocks read whole":
the truth blocks (title, paragraphs) that are one of our blocks exactly, in the normal form.

    .venv/bin/python bench/text_layouts.py [--n 24] [--split tune|held_out|both] [--kind ...]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import _common as C
import reading_order as RO
from support.text_layouts import (
    HELD_OUT,
    make_columns,
    make_inset,
    make_interleaved,
    make_letterhead,
    make_ocr_layer,
    make_single_page,
    normal,
    score,
)

from dagster_ocr.pipeline import parse

KINDS = [
    "furniture",
    "letterhead",
    "interleaved",
    "interleaved-shuffled",
    "inset",
    "inset-shuffled",
    "columns",
    "columns-shuffled",
    "ocr-layer",
]


def make(kind: str, seed: int):
    if kind == "furniture":
        return make_single_page(seed)
    if kind == "letterhead":
        return make_letterhead(seed)
    if kind.startswith("inset"):
        return make_inset(seed, "shuffled" if kind.endswith("-shuffled") else "reading")
    if kind == "ocr-layer":
        return make_ocr_layer(seed)
    if kind.startswith("columns"):
        return make_columns(seed, "shuffled" if kind.endswith("-shuffled") else "reading")
    return make_interleaved(seed, "shuffled" if kind.endswith("-shuffled") else "reading")


def measure(kind: str, seed: int, tmp: Path) -> dict:
    case = make(kind, seed)
    path = tmp / f"{kind}-{seed}.pdf"
    case.doc.save(path)
    out = parse(C.source_of(path))
    ours = RO.strip_markdown(RO.sequence_text(RO.block_sequence(out)))
    gt = "\n".join(p.get_text() for p in case.doc)
    rest = normal(ours)
    for block in case.truths[0]:
        rest = rest.replace(normal(block), "", 1)
    kept = sum(1 for f in case.furniture if normal(f) in rest)
    lost = sum(1 for b in case.truths[0] if normal(b) not in normal(ours))
    blocks = {normal(RO.strip_markdown(t)) for _, t in RO.block_sequence(out)}
    whole = sum(1 for b in case.truths[0] if normal(b) in blocks)
    return {
        "cls": case.cls,
        "ours": score(case, ours),
        "get_text": score(case, gt),
        "kept": kept,
        "furniture": len(case.furniture),
        "lost": lost,
        "whole": whole,
        "blocks": len(case.truths[0]),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=24, help="seeds per class and split")
    ap.add_argument("--split", choices=["tune", "held_out", "both"], default="both")
    ap.add_argument("--kind", choices=KINDS, nargs="*", help="classes to run (default: all)")
    args = ap.parse_args()
    C.quiet_logs()
    splits = ["tune", "held_out"] if args.split == "both" else [args.split]
    print(
        "| class | split | pages | ours sim | get_text sim | ours ≥ get_text | furniture kept | body lost "
        "| blocks read whole |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        for kind in args.kind or KINDS:
            for split in splits:
                base = 0 if split == "tune" else HELD_OUT
                rows = [measure(kind, base + k, tmp) for k in range(args.n)]
                n = len(rows)
                ours = sum(r["ours"] for r in rows) / n
                gt = sum(r["get_text"] for r in rows) / n
                wins = sum(r["ours"] >= r["get_text"] - 1e-9 for r in rows)
                kept = (
                    f"{sum(r['kept'] for r in rows)}/{sum(r['furniture'] for r in rows)}"
                    if kind in ("furniture", "letterhead")
                    else "-"
                )
                lost = sum(r["lost"] for r in rows) if kind in ("furniture", "letterhead") else "-"
                whole = f"{sum(r['whole'] for r in rows)}/{sum(r['blocks'] for r in rows)}"
                cells = [kind, split, n, f"{ours:.3f}", f"{gt:.3f}", f"{wins}/{n}", kept, lost, whole]
                print("| " + " | ".join(map(str, cells)) + " |")
                worst = sorted(rows, key=lambda r: r["ours"] - r["get_text"])[:3]
                print(
                    f"  worst: {[(r['cls'], round(r['ours'], 3), round(r['get_text'], 3)) for r in worst]}",
                    file=sys.stderr,
                )


if __name__ == "__main__":
    main()
