"""Page-label accuracy on the shared corpus (exact-match share of pages, per file).

Columns: ``stage`` is ``label_pages`` as the pipeline runs it; ``tree`` is ``pdf_page_labels``
(our own /PageLabels reader); ``pymupdf`` is ``Page.get_label()`` as PyMuPDF returns it;
``printed`` is the printed-number inference alone (as if the PDF had no /PageLabels).

    .venv/bin/python bench/labels_corpus.py [CORPUS_DIR]

``printed`` is expected to fall short on files whose printed numbers differ from their
/PageLabels (issue14847.pdf prints "iii", "1", "2", "3" where /PageLabels say i..iv, 1, 2) or
that carry no text (labelled_pages.pdf): the truth there is the /PageLabels tree.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pymupdf

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import split_of

from dagster_ocr.labels import LabelSettings, label_pages, pdf_page_labels
from dagster_ocr.model import Page
from dagster_ocr.textlayer import TextSettings, iter_pages


def pages_from_pdf(doc: pymupdf.Document) -> list[Page]:
    """The text stage's pages (text layer only: labels never need OCR here)."""
    return list(iter_pages(doc, TextSettings(ocr_mode="never")))


def share(got: list[str] | None, want: list[str]) -> float:
    if not got:
        return 0.0
    return sum(g == w for g, w in zip(got, want, strict=False)) / len(want)


def main() -> None:
    corpus = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[2] / "shared/corpus"
    folder = corpus / "page_labels"
    expected = {}
    for truth_file in sorted(folder.glob("expected_labels*.json")):  # the first batch and later ones
        expected.update(json.loads(truth_file.read_text()))
    printed_only = LabelSettings(use_pdf_labels=False)
    print(
        f"{'file':28} {'split':5} {'pages':>5} {'stage':>6} {'tree':>6} {'pymupdf':>7} "
        f"{'printed':>7} {'ms':>6}"
    )
    totals: dict[str, list[float]] = {}
    for name, truth in expected.items():
        want = truth["labels"]
        doc = pymupdf.open(folder / name)
        if doc.needs_pass and not doc.authenticate(""):
            print(f"{name:28} skipped: encrypted")
            continue
        split = split_of(folder / name)
        t0 = time.perf_counter()
        pages = pages_from_pdf(doc)
        stage = [pl.label for pl in label_pages(pdf_page_labels(doc), pages, settings=LabelSettings())]
        ms = (time.perf_counter() - t0) * 1000
        tree = pdf_page_labels(doc)
        raw = [doc[i].get_label() for i in range(doc.page_count)]
        printed = [pl.label for pl in label_pages(None, pages, printed_only)]
        row = [share(stage, want), share(tree, want), share(raw, want), share(printed, want)]
        for group in (split, "all"):
            sums = totals.setdefault(group, [0.0, 0.0, 0.0, 0.0, 0.0])
            sums[:] = [a + b for a, b in zip(sums, [*row, 1], strict=True)]
        print(
            f"{name:28} {split:5} {len(want):5d} "
            + " ".join(f"{v:6.3f}" for v in row[:2])
            + f" {row[2]:7.3f} {row[3]:7.3f} {ms:6.0f}"
        )
    for group, sums in sorted(totals.items()):
        n = sums[4]
        print(
            f"{'mean ' + group:28} {'':5} {int(n):5d} "
            + " ".join(f"{v / n:6.3f}" for v in sums[:2])
            + f" {sums[2] / n:7.3f} {sums[3] / n:7.3f}"
        )


if __name__ == "__main__":
    main()
