"""A table in one text column beside the other column's running text, on generated pages (issue 37).

Each page sets two text columns (a two-page spread on one sheet, gutter 252 pt, or a two-column
page, gutter 24 or 18 pt): one column runs paragraphs of two to five lines, then a question's
answers as short lines at the table rows' pitch; the other runs paragraphs, then a table (a stub
of group names under a blank head, two columns set right: figures, or "*" marks). Seeds vary the
paragraphs, so where each paragraph breaks beside the table varies; ``mirror`` puts the table in
the left column. A page is right when the text finder returns one table, within its column, of
three columns and nine rows (the head and eight groups): none of the other column's text in it.

Seeds 0-29 were looked at while the mechanism was written (``stream._text_column_cut``); read
30 and up as held out.

    PYTHONPATH=. .venv/bin/python bench/tables_text_columns.py [--seeds 30:50] [--verbose]
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

import pymupdf

sys.path.insert(0, str(Path(__file__).resolve().parent))

import tables_icdar as TI  # noqa: E402

from dagster_ocr.tables import TableSettings, extract_tables  # noqa: E402

_PROSE = (
    "legal aid providers coordinate appointments of private practitioners and supervise the staff "
    "who take cases in courts of first instance across every region of the country while the "
    "ministry keeps the register of practitioners and publishes its annual report on caseloads"
).split()
_GROUPS = ["Persons with disabilities", "Children", "Women", "The elderly", "Migrants", "Refugees"]
_GROUPS += ["Displaced persons", "Minorities"]
_OPTIONS = ["Yes, at the national level", "Yes, at regional level", "Yes, at the local level", "No"]


def _paragraph(page: pymupdf.Page, x: float, y: float, width: float, lines: int, rng: random.Random) -> float:
    for i in range(lines):
        words: list[str] = []
        while True:
            w = rng.choice(_PROSE)
            if pymupdf.get_text_length(" ".join([*words, w]), fontsize=9) > width:
                break
            words.append(w)
        if i == lines - 1:
            words = words[: max(2, len(words) // 2)]
            words[-1] += "?"
        page.insert_text((x, y), " ".join(words), fontsize=9)
        y += 12
    return y


def _right(page: pymupdf.Page, x: float, y: float, text: str) -> None:
    page.insert_text((x - pymupdf.get_text_length(text, fontsize=9), y), text, fontsize=9)


def build(seed: int, gutter: float, page_w: float, marks: bool, mirror: bool) -> pymupdf.Document:
    rng = random.Random(seed)
    doc = pymupdf.open()
    page = doc.new_page(width=page_w, height=792)
    col = (page_w - 120 - gutter) / 2
    text_x, table_x = 60.0, 60 + col + gutter
    if mirror:
        text_x, table_x = table_x, text_x
    y = 60.0
    while y < 560:
        y = _paragraph(page, text_x, y, col, rng.randint(2, 5), rng) + 14
    for option in _OPTIONS:
        page.insert_text((text_x + 18, y), option, fontsize=9)
        y += 18
    y = 60.0
    while y < 480:
        y = _paragraph(page, table_x, y, col, rng.randint(2, 5), rng) + 14
    y += 10
    page.insert_text((table_x + col - 110, y), "State funded", fontsize=9)
    page.insert_text((table_x + col - 35, y), "CSOs", fontsize=9)
    y += 18
    for name in _GROUPS:
        page.insert_text((table_x + 10, y), name, fontsize=9)
        if marks:
            page.insert_text((table_x + col - 95, y), "*", fontsize=9)
            page.insert_text((table_x + col - 28, y), "*", fontsize=9)
        else:
            _right(page, table_x + col - 80, y, str(rng.randint(10, 999)))
            _right(page, table_x + col, y, str(rng.randint(10, 999)))
        y += 18
    return doc


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", default="30:50", help="first:last (last excluded)")
    ap.add_argument("--verbose", action="store_true", help="list the pages read wrong")
    args = ap.parse_args()
    lo, hi = (int(x) for x in args.seeds.split(":"))
    rows: dict[tuple[float, bool], list[int]] = {}
    for seed in range(lo, hi):
        for gutter, width in ((252.0, 1224.0), (24.0, 612.0), (18.0, 612.0)):
            for marks in (False, True):
                for mirror in (False, True):
                    doc = build(seed, gutter, width, marks, mirror)
                    tables = extract_tables(doc, TI.pages_of(doc), TableSettings())
                    mid = width / 2
                    right = (
                        len(tables) == 1
                        and (tables[0].bbox[2] <= mid if mirror else tables[0].bbox[0] >= mid)
                        and len(tables[0].grid()) == 9
                        and len(tables[0].grid()[0]) == 3
                    )
                    tally = rows.setdefault((gutter, mirror), [0, 0])
                    tally[0] += right
                    tally[1] += 1
                    if args.verbose and not right:
                        shapes = [(len(t.grid()), [round(v) for v in t.bbox]) for t in tables]
                        print(f"seed {seed} gutter {gutter} marks {marks} mirror {mirror}: {shapes}")
    print("| gutter (pt) | table in | right |")
    print("|---|---|---|")
    for (gutter, mirror), (ok, n) in sorted(rows.items()):
        print(f"| {gutter:g} | {'left' if mirror else 'right'} column | {ok}/{n} |")
    total = sum(ok for ok, _ in rows.values()), sum(n for _, n in rows.values())
    print(f"| all | | {total[0]}/{total[1]} |")


if __name__ == "__main__":
    main()
