"""Furniture never takes a page's body, nor a document's (issue 35).

Short documents whose pages share their lines (a contract of two lines a page, a form, a form
letter run off per customer) looked like running headers and nothing else: every line went to
furniture and the quality gate quarantined them ("text_extracted: observed 0"). Each test prints
such a document with PyMuPDF, runs the pipeline's own stages on it (``pipeline.parse``) and checks
that its text stays body text; two also load it and run the quality gate. Real running headers on
a longer document are still removed (the last test; more in test_paragraphs.py).
"""

from __future__ import annotations

from pathlib import Path

import pymupdf
import pytest
from support.parsed import account as _account
from support.parsed import parsed as _parsed
from support.short_forms import CLASSES, body_problems, make_form, taken_lines

from dagster_ocr.gate import load_and_judge
from dagster_ocr.pipeline import ParsedDocument
from dagster_ocr.quality import QualitySettings
from dagster_ocr.warehouse import Warehouse


def _gate(parsed: ParsedDocument, tmp_path: Path) -> str:
    _, decision = load_and_judge(
        Warehouse(tmp_path / "wh.duckdb"),
        parsed.document,
        parsed.labels,
        parsed.tables,
        parsed.paragraphs,
        partition_key="doc",
        quality_settings=QualitySettings(),
    )
    return f"{decision.status}: {decision.error}"


def _contract() -> tuple[pymupdf.Document, list[str]]:
    """The issue's contract: three pages, two lines each, in the top margin band; one line the
    same on every page, one differing only in its numbers."""
    doc, printed = pymupdf.open(), []
    for i in range(3):
        page = doc.new_page()
        lines = [
            "Service agreement between Acme Ltd and Beta GmbH",
            f"Contract no. 2024-{17 + i}, signed on {i + 3} May",
        ]
        for k, text in enumerate(lines):
            page.insert_text((72, 72 + 18 * k), text, fontsize=11)
        printed += lines
    return doc, printed


def test_a_short_contract_whose_pages_share_their_lines_keeps_them_as_body(tmp_path: Path) -> None:
    doc, printed = _contract()
    parsed = _parsed(doc, tmp_path)
    assert all(ln.bbox[3] <= 0.12 * 842 for p in parsed.document.pages for ln in p.lines)  # in the band
    body = " ".join(p.text for p in parsed.paragraphs.paragraphs)
    assert all(text in body for text in printed)
    assert parsed.paragraphs.furniture == {}
    total = _account(parsed)
    assert total.counts["paragraph"] + total.counts["heading"] == total.chars
    assert _gate(parsed, tmp_path).startswith("parsed")


def test_a_one_page_form_in_the_margin_bands_keeps_its_words(tmp_path: Path) -> None:
    # a parking permit: its title ends in "1" (the label stage reads it as the page's number)
    # and its bay number sits alone at the foot; before, both were page numbers, the page was
    # empty and the document quarantined. Furniture would take all its text: none is furniture
    doc = pymupdf.open()
    page = doc.new_page(width=298, height=420)
    page.insert_text((40, 40), "Parking permit 1", fontsize=10)
    page.insert_text((140, 410), "1", fontsize=9)
    parsed = _parsed(doc, tmp_path)
    assert parsed.labels[0].line_index == 0  # the title line, read as holding the page number
    assert [p.text for p in parsed.paragraphs.paragraphs] == ["Parking permit 1", "1"]
    assert parsed.paragraphs.furniture == {}
    assert not body_problems(parsed.document.pages, parsed.paragraphs, parsed.tables)
    assert _gate(parsed, tmp_path).startswith("parsed")


def test_a_form_letter_repeated_over_pages_with_varying_numbers_keeps_its_text(tmp_path: Path) -> None:
    # a letter run off per customer, all of it inside the top band of the page, with a
    # "Page k of 4" footer: the letter repeats (digits aside) and would be all running header
    doc, printed = pymupdf.open(), []
    for i in range(4):
        page = doc.new_page()
        n = 4711 + 37 * i
        lines = [
            "Northwind SARL, customer service",
            f"Your reference {n}/24 of {i + 2} May 2024",
            "Dear customer,",
            f"your payment of {n % 900} EUR has been received. Thank you.",
        ]
        for k, text in enumerate(lines):
            page.insert_text((60, 40 + 14 * k), text, fontsize=10)
        page.insert_text((270, 820), f"Page {i + 1} of 4", fontsize=8)
        printed += lines
    parsed = _parsed(doc, tmp_path)
    body = " ".join(p.text for p in parsed.paragraphs.paragraphs)
    assert all(text in body for text in printed), body
    assert not body_problems(parsed.document.pages, parsed.paragraphs, parsed.tables)


@pytest.mark.parametrize("seed", range(0, 40))
def test_generated_short_forms_keep_their_body(seed: int, tmp_path: Path) -> None:
    case = make_form(seed)
    parsed = _parsed(case.doc, tmp_path)
    pages, paragraphs, tables = parsed.document.pages, parsed.paragraphs, parsed.tables
    assert body_problems(pages, paragraphs, tables) == []
    assert any(p.text.strip() for p in paragraphs.paragraphs)  # text_extracted > 0
    if case.cls in ("contract", "notice"):  # every line repeats: all of it is the body
        assert taken_lines(case, paragraphs, tables) == []


def test_the_generator_draws_every_class() -> None:
    assert {make_form(seed).cls for seed in range(len(CLASSES))} == set(CLASSES)
    assert make_form(3).lines == make_form(3).lines  # a seed always gives the same document


def test_running_heads_on_a_longer_document_are_still_furniture(tmp_path: Path) -> None:
    # ten pages, a running head and a page number each, a body that differs from page to page
    doc = pymupdf.open()
    for i in range(10):
        page = doc.new_page()
        page.insert_text((72, 40), "Annual Report 2024 · Northwind SARL", fontsize=8)
        for k in range(12):
            page.insert_text(
                (72, 150 + 14 * k), f"Body line {k} of page {i + 1} tells part {i * 12 + k} of the story."
            )
        page.insert_text((290, 810), str(i + 1), fontsize=9)
    parsed = _parsed(doc, tmp_path)
    kinds = {
        parsed.document.pages[p].lines[i].text: kind
        for p, marks in parsed.paragraphs.furniture.items()
        for i, kind in marks.items()
    }
    assert kinds == {
        "Annual Report 2024 · Northwind SARL": "header",
        **{str(i + 1): "page_number" for i in range(10)},
    }
    assert not any("Annual Report" in p.text for p in parsed.paragraphs.paragraphs)
