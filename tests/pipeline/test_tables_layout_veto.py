"""The layout model's veto of text-aligned tables (``tables.layout_veto``, opt-in; tables/opinion.py)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pymupdf
from support.table_pages import make_case

from dagster_ocr.model import Table
from dagster_ocr.tables import TableSettings, extract_tables

_BENCH = Path(__file__).resolve().parents[2] / "bench" / "tables_icdar.py"
_spec = importlib.util.spec_from_file_location("tables_icdar", _BENCH)
assert _spec and _spec.loader
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)

VETO = TableSettings(layout_veto=True)


def _on_page(tables: list[Table], page: int) -> list[Table]:
    return [t for t in tables if page in (t.pages or [t.first_page_index])]


def test_the_veto_is_off_by_default() -> None:
    assert TableSettings().layout_veto is False


def test_two_columns_of_prose_read_as_a_table_are_vetoed(corpus: Path) -> None:
    # olmOCR-bench's mathfuncs (tune): two columns of numbered sections align like a two-column
    # table to the rules; the model puts those words in text regions
    doc = pymupdf.open(corpus / "olmocr_bench" / "pdfs" / "mathfuncs.pdf")
    pages = bench.pages_of(doc)
    off = extract_tables(doc, pages, TableSettings())
    on = extract_tables(doc, pages, VETO)
    (false,) = _on_page(off, 0)
    assert false.strategy == "stream" and false.grid()[0][0].startswith("3. The Fundamental Theorem")
    assert _on_page(on, 0) == []
    assert [t.grid() for t in on] == [t.grid() for t in off if t is not false]
    # us-020 (tune) page 6, the appendix's running head over two-column prose: the veto's first
    # case, now left by the rules themselves (a table in one text column takes no lines of the
    # other); the veto keeps every table as it was
    doc = pymupdf.open(corpus / "tables" / "icdar2013" / "us-020" / "us-020.pdf")
    pages = bench.pages_of(doc)
    off = extract_tables(doc, pages, TableSettings())
    assert _on_page(off, 5) == []
    assert [t.grid() for t in extract_tables(doc, pages, VETO)] == [t.grid() for t in off]


def test_a_right_to_left_table_is_never_vetoed() -> None:
    # the model puts every word of this Arabic table in a text region (tune seed 87)
    case = make_case(87, "rtl_wrapped")
    doc = pymupdf.open("pdf", case.pdf)
    pages = bench.pages_of(doc)
    off = extract_tables(doc, pages, TableSettings())
    on = extract_tables(doc, pages, VETO)
    assert off and [t.grid() for t in on] == [t.grid() for t in off]
