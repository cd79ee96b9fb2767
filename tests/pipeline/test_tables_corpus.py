"""Table extraction on real ICDAR-2013 documents: adjacency-relation F1 and cross-page merging."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pymupdf
import pytest

from dagster_ocr.model import Page
from dagster_ocr.tables import TableSettings, extract_tables

_BENCH = Path(__file__).resolve().parents[2] / "bench" / "tables_icdar.py"
_spec = importlib.util.spec_from_file_location("tables_icdar", _BENCH)
assert _spec and _spec.loader
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)

# The default finder (ruled grids, then text alignment) recovers us-020's 7 printed columns on both
# pages, so the parts match and the continuations merge.
SETTINGS_US020 = TableSettings()
# A fast subset (about 3 s) of the ICDAR DEV documents; the default scored F1 0.989 on it (0.983 on
# all ten, bench/tables_icdar.py), where PyMuPDF's layout model scores 0.31 on all ten.
SUBSET = ["eu-003", "eu-005", "us-003", "us-005", "us-012", "us-018"]


def _open(corpus: Path, name: str) -> tuple[pymupdf.Document, list[Page]]:
    doc = pymupdf.open(corpus / "tables" / "icdar2013" / name / f"{name}.pdf")
    return doc, bench.pages_of(doc)


@pytest.mark.parametrize(
    ("name", "min_f1"), [("eu-003", 0.97), ("us-005", 0.97), ("eu-010", 0.9), ("eu-014", 0.72)]
)
def test_icdar_adjacency_f1(corpus: Path, name: str, min_f1: float) -> None:
    res = bench.run(corpus, TableSettings(), docs=[name])
    assert res["docs"][name]["tables"] >= 1
    assert res["f1"] >= min_f1, res


def test_icdar_subset_f1_beats_plain_layout_model(corpus: Path) -> None:
    res = bench.run(corpus, TableSettings(), docs=SUBSET)
    assert res["f1"] >= 0.97 and res["precision"] >= 0.95 and res["recall"] >= 0.95, res
    # the borderless us-018 table: the ruling-line finder sees nothing, text alignment all of it
    us018 = res["docs"]["us-018"]
    assert us018["tp"] >= 0.95 * max(us018["pred"], us018["gt"]), us018
    lines = bench.run(corpus, TableSettings(finder="lines"), docs=["us-018"])
    assert lines["f1"] < 0.2, lines


def test_tabula_csv_rotated_ruled_table(corpus: Path) -> None:
    # schools.pdf is a /Rotate 90 page: word boxes must be turned into the grid's coordinates
    name, pdf, gt = next(c for c in bench.csv_cases(corpus) if c[0] == "tabula-java/schools")
    doc = pymupdf.open(pdf)
    doc.select([0])  # the expected CSV describes page 1 only
    tp, n_pred, n_gt = bench.score_doc(gt, bench.ours(TableSettings())(pdf, doc))
    assert tp >= 0.9 * max(n_pred, n_gt), (name, tp, n_pred, n_gt)


@pytest.mark.parametrize("name", ["camelot/anticlockwise_table_1", "camelot/clockwise_table_1"])
def test_a_table_printed_sideways_is_read_along_its_rows(corpus: Path, name: str) -> None:
    """Text running up (or down) the displayed page (clockwise_table_1 is also a /Rotate 180 page):
    the table is read in the frame its text runs in, and its boxes come back in display coordinates
    (inside the page, around the words)."""
    _, pdf, gt = next(c for c in bench.csv_cases(corpus) if c[0] == name)
    doc = pymupdf.open(pdf)
    tp, n_pred, n_gt = bench.score_doc(gt, bench.ours(TableSettings())(pdf, doc))
    assert tp >= 0.95 * max(n_pred, n_gt), (name, tp, n_pred, n_gt)  # 6 of 223 when read across
    (table,) = extract_tables(doc, bench.pages_of(doc), TableSettings())
    page = doc[0].rect
    x0, y0, x1, y1 = table.bbox
    assert 0 <= x0 < x1 <= page.width and 0 <= y0 < y1 <= page.height
    assert y1 - y0 > x1 - x0  # a landscape table on a portrait page stands tall
    inside = [c.bbox for c in table.cells if c.bbox is not None]
    assert inside and all(
        x0 - 1 <= b[0] and b[2] <= x1 + 1 and y0 - 1 <= b[1] and b[3] <= y1 + 1 for b in inside
    )


def test_zebra_striped_health_table(corpus: Path) -> None:
    """camelot's health.pdf shades every other row with one box across the table: those rows came
    out as one cell each (F1 0.38); split back into their columns they score like the others."""
    name, pdf, gt = next(c for c in bench.csv_cases(corpus) if c[0] == "camelot/health")
    tp, n_pred, n_gt = bench.score_doc(gt, bench.ours(TableSettings())(pdf, pymupdf.open(pdf)))
    assert 2 * tp / (n_pred + n_gt) >= 0.95, (name, tp, n_pred, n_gt)


def test_metric_is_strict() -> None:
    grid = [["a", "b"], ["c", "d"]]
    expected = {("a", "b", "h"): 1, ("c", "d", "h"): 1, ("a", "c", "v"): 1, ("b", "d", "v"): 1}
    assert bench.relations(grid) == expected
    # an extra predicted table on the page only adds false positives
    tp, n_pred, n_gt = bench.score_doc([(0, grid)], [(0, grid), (0, [["x", "y"]])])
    assert (tp, n_pred, n_gt) == (4, 5, 4)


def test_us020_row_continuations_are_merged(corpus: Path) -> None:
    manifest = json.loads((corpus / "MANIFEST.json").read_text())
    entry = next(f for f in manifest["files"] if f["file"].endswith("us-020/us-020.pdf"))
    expected = [[p["page"] - 1 for p in lt["parts"]] for lt in entry["multipage"]["logical_tables"]]
    doc, pages = _open(corpus, "us-020")
    pages = pages[1:5]  # the four table pages; keeps the test fast
    tables = extract_tables(doc, pages, SETTINGS_US020)
    merged = [t for t in tables if len(t.pages) > 1]
    assert [t.pages for t in merged] == expected  # [[1, 2], [3, 4]]
    for t in merged:
        assert t.merge_kind == "rows"
        # a part's region a page, then the lines of headings above the first grid (Table.heads)
        assert [p for p, _ in t.regions][: len(t.pages)] == t.pages
        assert {p for p, _ in t.regions[len(t.pages) :]} <= {t.pages[0]}
        grid = t.grid()
        # the continuation repeats the header: it must not appear again as a data row
        first_page_rows = {c.row for c in t.cells if c.page_index == t.pages[0]}
        cont_rows = sorted({c.row for c in t.cells if c.page_index == t.pages[1]})
        assert cont_rows and min(cont_rows) == max(first_page_rows) + 1
        assert grid[min(cont_rows)] != grid[0]
        cont_cells = [c.text.lower() for c in t.cells if c.page_index == t.pages[1]]
        assert not any("benchmarking" in c or "percentageof" in c for c in cont_cells)
        assert "Continued" not in t.caption and t.caption.startswith("Table A-")
    # the first logical table ends with the benchmarking participants, which sit on page 3
    cont_text = " ".join(c.text for c in merged[0].cells if c.page_index == 2)
    assert "alberta" in cont_text.lower()


def _manifest_multipage(corpus: Path, name: str) -> dict:
    manifest = json.loads((corpus / "MANIFEST.json").read_text())
    return next(f for f in manifest["files"] if f["file"].endswith(f"{name}/{name}.pdf"))["multipage"]


@pytest.mark.parametrize(
    ("name", "pages", "label", "first_value", "cont_value"),
    [
        # Table 14: "Actual" years on page 1, "Projected—Continued" years on page 2; page 3 holds
        # Table 15 with the same state stubs, which must stay a table of its own.
        ("us-018", [0, 1, 2], "Wyoming", "5,833", "6,280"),
        # TABLE 3 (Rodent / Leaks) continued on page 6 (Peeling paint / smoke alarm); TABLE 1 (p2) and
        # TABLE 2 (p3) share TABLE 3's row labels and column layout but are separate tables.
        ("us-024", [1, 2, 4, 5], "Female", "51,084", "2,806"),
    ],
)
def test_column_continuations_are_joined_on_the_stub(
    corpus: Path, name: str, pages: list[int], label: str, first_value: str, cont_value: str
) -> None:
    mp = _manifest_multipage(corpus, name)
    assert mp["kind"] == "horizontal (column) continuation"
    (lt,) = mp["logical_tables"]
    assert lt["join"] == "columns (same rows)"
    expected = [p["page"] - 1 for p in lt["parts"]]
    doc, all_pages = _open(corpus, name)
    tables = extract_tables(doc, [all_pages[i] for i in pages], TableSettings())
    merged = [t for t in tables if len(t.pages) > 1]
    assert [(t.pages, t.merge_kind) for t in merged] == [(expected, "columns")]
    assert all(len(t.pages) == 1 and t.merge_kind == "" for t in tables if t not in merged)
    assert len(tables) == len(pages) - 1  # every other page keeps its own table
    t = merged[0]
    assert [p for p, _ in t.regions] == expected
    grid = t.grid()
    # the stub is kept once: each row label appears in one row only, in column 0 only
    stubs = [row[0] for row in grid if row[0]]
    assert len(stubs) == len({(r, row[0]) for r, row in enumerate(grid) if row[0]})
    assert not any(c.col > 0 and c.text == "Region and state" for c in t.cells)
    r = next(r for r, row in enumerate(grid) if row[0] == label)
    by_text = {c.text: c for c in t.cells if c.row == r}
    assert by_text[first_value].page_index == expected[0] and by_text[cont_value].page_index == expected[1]
    # columns come from their own page; the first part's columns come first
    first_cols = {c.col for c in t.cells if c.page_index == expected[0]}
    cont_cols = {c.col for c in t.cells if c.page_index == expected[1]}
    assert max(first_cols) < min(cont_cols) and max(cont_cols) == t.n_cols - 1
    assert len({(c.row, c.col) for c in t.cells}) == len(t.cells)
    # the continuation's own header cells are kept (years / characteristics of page 2)
    assert any(c.is_header and c.page_index == expected[1] for c in t.cells)


def test_us024_wrapped_stub_joined_by_the_continuation(corpus: Path) -> None:
    # page 5 wraps "American Indian/Alaska" + "Native" over two lines; page 6 prints it on one
    doc, pages = _open(corpus, "us-024")
    (t,) = [t for t in extract_tables(doc, pages[4:6], TableSettings()) if t.merge_kind == "columns"]
    grid = t.grid()
    labels = [r[0] for r in grid]
    assert labels.count("American Indian/Alaska Native") == 3 and "Native" not in labels
    assert len(grid) == 42  # page 6's 42 rows; page 5's 45 lines fold into them


def test_column_merge_scores_like_separate_parts(corpus: Path) -> None:
    # the bench splits a column-merged table back per page (continuation + the stub it covers)
    merged = bench.run(corpus, TableSettings(), docs=["us-018", "us-024"])
    apart = bench.run(corpus, TableSettings(merge_columns=False), docs=["us-018", "us-024"])
    assert [m for d in merged["docs"].values() for m in d["merged"]] == [
        ("t0", [0, 1], "columns"),
        ("t2", [4, 5], "columns"),
    ]
    assert not any(d["merged"] for d in apart["docs"].values())
    assert merged["f1"] >= apart["f1"] >= 0.97, (merged["f1"], apart["f1"])


def test_a_note_table_under_its_own_years_does_not_continue_the_table_before(corpus: Path) -> None:
    """Tesla's 10-K, pages 78-79 (0-based): the lease balances end page 78; page 79 opens with the
    lease expense table under its own "Year Ended December 31," and years. It is a table of its own
    (issue 37: it was joined to the balances as their continuation), headed by its years."""
    path = corpus.parent / "reports" / "tesla-10k-fy2023.pdf"
    if not path.is_file():
        pytest.skip(f"reports not found: {path}")
    doc = pymupdf.open(path)
    doc.select([78, 79])
    tables = extract_tables(doc, bench.pages_of(doc), TableSettings())
    assert [(t.first_page_index, t.last_page_index) for t in tables][:2] == [(0, 0), (1, 1)]
    expense = tables[1]
    assert expense.header_rows == 1 and [x for x in expense.grid()[0] if x] == ["2023", "2022", "2021"]
    assert "Year Ended December 31," in expense.column_headers  # the period, the years' context
    assert expense.grid()[1][0] == "Operating lease expense:"
