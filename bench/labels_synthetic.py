"""Page-label accuracy on synthetic PDFs built here with PyMuPDF, plus the shared corpus.

Every case is a real PDF (built in memory, saved, reopened) read through the pipeline's own text
layer (``textlayer.extract_lines``) and labelled by ``labels.label_pages``. Cases:

* ``pdf:*``      one per /PageLabels style (D, r, R, a, A, prefix only, prefix + start), no print;
* ``print:*``    one per printed-number pattern ("Page 3 of 40", "- 3 -", "3/40", "第3页", "A-3",
  bare arabic, roman then arabic, a restart per appendix, header instead of footer), no /PageLabels;
* ``noisy:*``    printed numbers with pages where the number is missing or misread;
* ``conflict:*`` /PageLabels that contradict the printed numbers: by the documented policy the
  /PageLabels win, so they are the truth.

Accuracy is the share of pages whose label equals the truth exactly; pages/s counts text
extraction plus labelling (``label`` column) and labelling alone (``label only``).

    .venv/bin/python bench/labels_synthetic.py [CORPUS_DIR]
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pymupdf

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dagster_ocr.labels import LabelSettings, format_label, label_pages, pdf_page_labels, to_roman
from dagster_ocr.model import Page
from dagster_ocr.textlayer import extract_lines

W, H = 595.0, 842.0
BODY = [
    "Section 4 explains the 12 measures adopted in 2019 and their cost.",
    "Table 3 lists 45 sites; 7 of them closed before 2021 for repairs.",
    "The committee met 3 times and approved the plan by 11 votes to 2.",
]


def build(
    printed: list[str | None], *, where: str = "footer", rules: list[dict] | None = None, header: str = ""
) -> pymupdf.Document:
    """A PDF with body text, a running header, and ``printed[i]`` as page i's number (None: none)."""
    doc = pymupdf.open()
    for i, number in enumerate(printed):
        page = doc.new_page(width=W, height=H)
        heads = header.split("|") if header else []
        head = heads[i] if len(heads) > 1 else header or "Annual Report of the Example Society"
        page.insert_text((72, 40), head, fontsize=9)
        for k, text in enumerate(BODY):
            page.insert_text((72, 120 + 16 * k), text, fontsize=11)
        page.insert_text((72, 420), str(i + 7), fontsize=11)  # a stray number in the body: never a label
        if number is not None:
            y = 40 if where == "header" else H - 36
            x = 520 if where == "header" else W / 2 - 10
            font = "china-s" if any(ord(c) > 0x2000 for c in number) else "helv"
            page.insert_text((x, y), number, fontsize=10, fontname=font)
    if rules:
        doc.set_page_labels(rules)
    return pymupdf.open("pdf", doc.tobytes())  # reopen: read what a file holds, not the cache


def pdf_cases() -> list[tuple[str, pymupdf.Document, list[str]]]:
    n = 12
    out = []
    for style in ("D", "r", "R", "a", "A"):
        rules = [{"startpage": 0, "prefix": "", "style": style, "firstpagenum": 1}]
        out.append(
            (
                f"pdf:{style}",
                build([None] * n, rules=rules),
                [format_label(style, "", i + 1) for i in range(n)],
            )
        )
    rules = [{"startpage": 0, "prefix": "Cover", "style": "", "firstpagenum": 1},
             {"startpage": 1, "prefix": "", "style": "r", "firstpagenum": 1},
             {"startpage": 4, "prefix": "", "style": "D", "firstpagenum": 1},
             {"startpage": 9, "prefix": "A-", "style": "D", "firstpagenum": 1}]  # fmt: skip
    truth = ["Cover", "i", "ii", "iii", "1", "2", "3", "4", "5", "A-1", "A-2", "A-3"]
    out.append(("pdf:prefix+mixed", build([None] * n, rules=rules), truth))
    rules = [{"startpage": 0, "prefix": "S-", "style": "D", "firstpagenum": 40}]
    out.append(("pdf:prefix+start", build([None] * n, rules=rules), [f"S-{40 + i}" for i in range(n)]))
    return out


def print_cases() -> list[tuple[str, pymupdf.Document, list[str]]]:
    n, total = 12, 40
    out = []
    patterns: list[tuple[str, Callable[[int], str], Callable[[int], str]]] = [
        ("Page n of N", lambda v: f"Page {v} of {total}", str),
        ("- n -", lambda v: f"- {v} -", str),
        ("n/N", lambda v: f"{v}/{total}", str),
        ("第n页", lambda v: f"第{v}页", str),
        ("第n页 共N页", lambda v: f"第 {v} 页 共 {total} 页", str),
        ("A-n", lambda v: f"A-{v}", lambda v: f"A-{v}"),
        ("bare n", str, str),
        ("[n]", lambda v: f"[{v}]", str),
        ("roman r", to_roman, to_roman),
        ("roman R", lambda v: to_roman(v).upper(), lambda v: to_roman(v).upper()),
        ("Page r", lambda v: f"Page {to_roman(v)}", to_roman),
    ]
    for name, printed, label in patterns:
        values = [i + 3 for i in range(n)]
        out.append((f"print:{name}", build([printed(v) for v in values]), [label(v) for v in values]))
    # cover without a number, roman front matter, arabic body
    truth = ["1", "i", "ii", "iii", "iv", "1", "2", "3", "4", "5", "6", "7"]
    printed = [None, "i", "ii", "iii", "iv", "1", "2", "3", "4", "5", "6", "7"]
    got = truth[:]
    got[0] = "1"  # an unnumbered cover keeps its physical number
    out.append(("print:roman then arabic", build(printed), got))
    # body 1..6, then appendices A and B restart at 1 with a prefix
    printed = ["1", "2", "3", "4", "5", "6", "A-1", "A-2", "A-3", "B-1", "B-2", "B-3"]
    out.append(("print:restart per appendix", build(printed), printed))
    # chapter restarts without prefix: 1..5, 1..4, 1..3
    printed = ["1", "2", "3", "4", "5", "1", "2", "3", "4", "1", "2", "3"]
    out.append(("print:bare restarts", build(printed), printed))
    printed = [str(v) for v in range(5, 17)]
    out.append(("print:header", build(printed, where="header"), printed))
    # book layout: the number at the outer edge of a running head ("12    Chapter 2 Methods" on even
    # pages, "Chapter 2 Methods    13" on odd pages), no separate number line
    heads = [
        f"{v}    Chapter 2 Methods" if v % 2 == 0 else f"Chapter 2 Methods    {v}" for v in range(12, 24)
    ]
    out.append(
        (
            "print:number in running head",
            build([None] * 12, header="|".join(heads)),
            [str(v) for v in range(12, 24)],
        )
    )
    return out


def noisy_cases() -> list[tuple[str, pymupdf.Document, list[str]]]:
    truth = [str(v) for v in range(1, 21)]
    out = []
    missing = [None if i in (0, 4, 9, 10, 15) else t for i, t in enumerate(truth)]
    out.append(("noisy:missing numbers", build(missing), truth))
    misread = truth[:]
    misread[6], misread[13] = "1", "74"  # OCR-style misreads ("7" → "1", "14" → "74")
    out.append(("noisy:misread numbers", build(misread), truth))
    both = [None if i in (2, 11) else t for i, t in enumerate(misread)]
    out.append(("noisy:missing+misread", build(both), truth))
    front = ["i", "ii", None, "iv"] + [str(v) for v in range(1, 9)]
    truth = ["i", "ii", "iii", "iv"] + [str(v) for v in range(1, 9)]
    out.append(("noisy:roman gap", build(front), truth))
    # a short document (5 pages) with one misread number
    out.append(("noisy:short misread", build(["1", "2", "8", "4", "5"]), ["1", "2", "3", "4", "5"]))
    return out


def conflict_cases() -> list[tuple[str, pymupdf.Document, list[str]]]:
    out = []
    # printed "1".."12" but /PageLabels say roman front matter then 1..: /PageLabels win
    rules = [{"startpage": 0, "prefix": "", "style": "r", "firstpagenum": 1},
             {"startpage": 3, "prefix": "", "style": "D", "firstpagenum": 1}]  # fmt: skip
    truth = ["i", "ii", "iii"] + [str(v) for v in range(1, 10)]
    out.append(("conflict:print 1..12 vs r+D", build([str(v) for v in range(1, 13)], rules=rules), truth))
    # printed numbers offset by 10 (an excerpt of a longer book) vs /PageLabels from 1
    rules = [{"startpage": 0, "prefix": "", "style": "D", "firstpagenum": 1}]
    out.append(
        (
            "conflict:print +10 vs D",
            build([str(v) for v in range(11, 23)], rules=rules),
            [str(v) for v in range(1, 13)],
        )
    )
    # /PageLabels with a prefix the print does not show
    rules = [{"startpage": 0, "prefix": "Vol2-", "style": "D", "firstpagenum": 5}]
    out.append(
        (
            "conflict:prefix vs bare",
            build([str(v) for v in range(5, 17)], rules=rules),
            [f"Vol2-{v}" for v in range(5, 17)],
        )
    )
    return out


def run_case(doc: pymupdf.Document) -> tuple[list[str], float, float]:
    """(labels, seconds for text + labels, seconds for labels alone)."""
    t0 = time.perf_counter()
    pages = [
        Page(index=p.number, width=p.rect.width, height=p.rect.height, lines=extract_lines(p)) for p in doc
    ]
    t1 = time.perf_counter()
    got = [pl.label for pl in label_pages(pdf_page_labels(doc), pages, settings=LabelSettings())]
    t2 = time.perf_counter()
    return got, t2 - t0, t2 - t1


def corpus_cases(corpus: Path) -> list[tuple[str, pymupdf.Document, list[str]]]:
    folder = corpus / "page_labels"
    expected = json.loads((folder / "expected_labels.json").read_text())
    return [(f"corpus:{name}", pymupdf.open(folder / name), t["labels"]) for name, t in expected.items()]


def main() -> None:
    corpus = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[2] / "shared/corpus"
    groups = {
        "corpus": corpus_cases(corpus),
        "pdf": pdf_cases(),
        "print": print_cases(),
        "noisy": noisy_cases(),
        "conflict": conflict_cases(),
    }
    print(f"{'case':34} {'pages':>5} {'correct':>7} {'acc':>6}  wrong (page: got/want)")
    summary = []
    for group, cases in groups.items():
        right = total = 0
        secs = secs_label = 0.0
        for name, doc, truth in cases:
            got, s_all, s_label = run_case(doc)
            ok = sum(g == w for g, w in zip(got, truth, strict=True))
            wrong = [f"{i}:{g}/{w}" for i, (g, w) in enumerate(zip(got, truth, strict=True)) if g != w]
            print(f"{name:34} {len(truth):5d} {ok:7d} {ok / len(truth):6.3f}  {' '.join(wrong[:6])}")
            right, total = right + ok, total + len(truth)
            secs, secs_label = secs + s_all, secs_label + s_label
        summary.append((group, len(cases), total, right, total / secs, total / secs_label))
    print()
    print(f"{'group':10} {'files':>5} {'pages':>6} {'accuracy':>8} {'pages/s':>8} {'label only':>10}")
    for group, files, total, right, pps, pps_label in summary:
        print(f"{group:10} {files:5d} {total:6d} {right / total:8.3f} {pps:8.0f} {pps_label:10.0f}")


if __name__ == "__main__":
    main()
