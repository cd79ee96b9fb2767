"""Page labels: /PageLabels reading (built PDFs) and printed-number inference (synthetic pages)."""

from __future__ import annotations

import logging
import sys

import pymupdf
import pytest

from dagster_ocr.labels import (
    LabelSettings,
    decode_hex_prefix,
    decode_pdf_text,
    format_label,
    label_for_page,
    label_pages,
    page_number_candidates,
    pages_for_label,
    pdf_page_labels,
    to_roman,
)
from dagster_ocr.model import LabelSource, Line, Page, PageLabel

H = 800.0
W = 600.0


def make_page(index: int, footer: str | None = None, header: str | None = None, body: int = 3) -> Page:
    """A page with a running header, body lines and an optional footer/header number."""
    lines = [Line(text="A Study of Things", bbox=(200, 20, 400, 32))]
    if header is not None:
        lines.append(Line(text=header, bbox=(520, 20, 560, 32)))
    for k in range(body):
        y = 100 + 20 * k
        lines.append(Line(text=f"Body text line {k} mentions 42 and 2019.", bbox=(72, y, 520, y + 12)))
    lines.append(Line(text="7", bbox=(72, 400, 80, 412)))  # a lone number in the body: never a label
    if footer is not None:
        lines.append(Line(text=footer, bbox=(290, 760, 310, 772)))
    return Page(index=index, width=W, height=H, lines=lines)


def labels(result):
    return [pl.label for pl in result]


def sources(result):
    return [pl.source for pl in result]


def footer_index(page: Page) -> int:
    return next(i for i, ln in enumerate(page.lines) if ln.bbox[1] >= 760)


# --------------------------------------------------------------------------------------------
# printed numbers


def test_roman_front_matter_then_arabic():
    printed = ["i", "ii", "iii", "iv", "1", "2", "3", "4", "5", "6"]
    pages = [make_page(i, f) for i, f in enumerate(printed)]
    result = label_pages(None, pages, settings=LabelSettings())
    assert labels(result) == printed
    assert set(sources(result)) == {LabelSource.PRINTED}
    assert [pl.line_index for pl in result] == [footer_index(p) for p in pages]
    assert all(pl.confidence >= 0.9 for pl in result)


def test_missing_number_is_filled_from_the_run():
    pages = [make_page(i, None if i == 4 else str(i + 1)) for i in range(8)]
    result = label_pages(None, pages, settings=LabelSettings())
    assert labels(result) == [str(i + 1) for i in range(8)]
    assert result[4].source == LabelSource.INFERRED
    assert result[4].line_index is None
    assert 0.3 < result[4].confidence < result[3].confidence
    assert all(pl.source == LabelSource.PRINTED for k, pl in enumerate(result) if k != 4)


def test_misread_number_is_outvoted():
    printed = ["1", "2", "3", "4", "8", "6", "7", "8"]  # OCR read "5" as "8"
    pages = [make_page(i, f) for i, f in enumerate(printed)]
    result = label_pages(None, pages, settings=LabelSettings())
    assert labels(result) == [str(i + 1) for i in range(8)]
    assert result[4].source == LabelSource.INFERRED
    # the misread line is still the page-number line: page furniture
    assert result[4].line_index == footer_index(pages[4])


def test_restart_on_last_page_and_roman_run():
    printed = ["i", "ii", "iii", "1"]
    result = label_pages(None, [make_page(i, f) for i, f in enumerate(printed)], settings=LabelSettings())
    assert labels(result) == printed


def test_unnumbered_cover_and_chapter_openers():
    # cover without number, then 1.. with chapter-opening pages (3, 7) unnumbered
    footers = [None, "1", "2", None, "4", "5", "6", None, "8"]
    result = label_pages(None, [make_page(i, f) for i, f in enumerate(footers)], settings=LabelSettings())
    assert labels(result) == ["1", "1", "2", "3", "4", "5", "6", "7", "8"]
    assert result[0].source == LabelSource.PHYSICAL  # the run would give 0 there: not a page number
    assert result[3].source == result[7].source == LabelSource.INFERRED


def test_year_on_cover_is_not_a_page_number():
    footers = ["2023"] + [str(i) for i in range(1, 6)]
    result = label_pages(None, [make_page(i, f) for i, f in enumerate(footers)], settings=LabelSettings())
    assert result[0].source == LabelSource.PHYSICAL
    assert labels(result)[1:] == ["1", "2", "3", "4", "5"]


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("Page {n} of 40", "{n}"),
        ("page {n}", "{n}"),
        ("- {n} -", "{n}"),
        ("— {n} —", "{n}"),
        ("{n}/40", "{n}"),
        ("{n} / 40", "{n}"),
        ("第{n}页", "{n}"),
        ("第 {n} 页 共 40 页", "{n}"),
        ("A-{n}", "A-{n}"),
        ("Seite {n} von 40", "{n}"),
        ("[{n}]", "{n}"),
    ],
)
def test_printed_number_patterns(template, expected):
    pages = [make_page(i, template.format(n=i + 3)) for i in range(4)]
    result = label_pages(None, pages, settings=LabelSettings())
    assert labels(result) == [expected.format(n=i + 3) for i in range(4)]
    assert set(sources(result)) == {LabelSource.PRINTED}


def test_single_page_with_page_of_total():
    result = label_pages(None, [make_page(0, "Page 3 of 40")], settings=LabelSettings())
    assert labels(result) == ["3"]
    assert result[0].source == LabelSource.PRINTED
    assert result[0].line_index == footer_index(make_page(0, "Page 3 of 40"))


def test_number_in_running_header():
    # header "12" at the outer edge; footer none
    pages = [make_page(i, None, header=str(i + 11)) for i in range(5)]
    result = label_pages(None, pages, settings=LabelSettings())
    assert labels(result) == [str(i + 11) for i in range(5)]
    assert all(pages[k].lines[pl.line_index].text == pl.label for k, pl in enumerate(result))


def test_number_at_the_edge_of_a_running_header():
    pages = []
    for i in range(6):
        text = f"{i + 1} Chapter One" if i % 2 else f"Chapter One {i + 1}"
        pages.append(Page(index=i, width=W, height=H, lines=[Line(text=text, bbox=(72, 20, 520, 32))]))
    result = label_pages(None, pages, settings=LabelSettings())
    assert labels(result) == [str(i + 1) for i in range(6)]


def test_no_numbers_at_all_is_physical():
    pages = [make_page(i) for i in range(5)]
    result = label_pages(None, pages, settings=LabelSettings())
    assert labels(result) == ["1", "2", "3", "4", "5"]
    assert set(sources(result)) == {LabelSource.PHYSICAL}
    assert all(pl.confidence <= 0.1 and pl.line_index is None for pl in result)


def test_empty_pages_and_empty_input():
    assert label_pages(None, [], settings=LabelSettings()) == []
    result = label_pages(None, [Page(index=0, width=W, height=H)], settings=LabelSettings())
    assert labels(result) == ["1"]


def test_result_follows_input_order_and_physical_indexes():
    pages = [make_page(i, str(i + 1)) for i in range(10, 16)]
    shuffled = [pages[3], pages[0], pages[5], pages[1], pages[4], pages[2]]
    result = label_pages(None, shuffled, settings=LabelSettings())
    assert [pl.page_index for pl in result] == [p.index for p in shuffled]
    assert labels(result) == [str(p.index + 1) for p in shuffled]


def test_candidates_only_in_header_and_footer_zones():
    page = make_page(0, "5")
    found = page_number_candidates(page, settings=LabelSettings())
    assert [c.label for c in found] == ["5"]
    narrow = page_number_candidates(page, LabelSettings(zone_fraction=0.01, isolated_edge_lines=False))
    assert narrow == []


def test_isolated_centred_number_below_the_text_is_a_candidate():
    """A cropped page: the number sits right under the last paragraph, far from the bottom margin."""
    lines = [
        Line(text=f"Body text line {k} mentions 42.", bbox=(72, 100 + 20 * k, 520, 112 + 20 * k))
        for k in range(5)
    ]
    numbered = Page(index=0, width=W, height=H, lines=[*lines, Line(text="62", bbox=(293, 230, 307, 242))])
    assert [(c.label, c.line_index) for c in page_number_candidates(numbered, settings=LabelSettings())] == [
        ("62", 5)
    ]
    # off centre (a table total, a figure value) or hugging the text above: not a page number
    off_centre = Page(index=0, width=W, height=H, lines=[*lines, Line(text="62", bbox=(480, 230, 494, 242))])
    hugging = Page(index=0, width=W, height=H, lines=[*lines, Line(text="62", bbox=(293, 194, 307, 206))])
    assert page_number_candidates(off_centre, settings=LabelSettings()) == []
    assert page_number_candidates(hugging, settings=LabelSettings()) == []


def test_settings_reject_unknown_keys():
    with pytest.raises(ValueError):
        LabelSettings(zone_fractoin=0.2)


def test_long_document_is_fast():
    import time

    pages = [make_page(i, str(i + 1) if i % 7 else None) for i in range(1000)]
    t0 = time.perf_counter()
    result = label_pages(None, pages, settings=LabelSettings())
    assert time.perf_counter() - t0 < 2.0
    assert labels(result) == [str(i + 1) for i in range(1000)]


# --------------------------------------------------------------------------------------------
# formatting and decoding


def test_format_label_styles():
    assert to_roman(1994) == "mcmxciv"
    assert [format_label("A", "", n) for n in (1, 26, 27, 53)] == ["A", "Z", "AA", "AAA"]
    assert format_label("a", "p-", 28) == "p-bb"
    assert format_label("R", "", 14) == "XIV"
    assert format_label("", "Cover", 5) == "Cover"


def test_decode_text_strings():
    assert decode_hex_prefix("<FEFF0058>3") == "X3"
    assert decode_hex_prefix("<feff 00c4 002d>7") == "Ä-7"
    assert decode_hex_prefix("plain") == "plain"
    assert decode_pdf_text(b"\xfe\xff\x00X") == "X"
    assert decode_pdf_text(b"\x8dA\x8e\x93") == "“A”ﬁ"  # PDFDocEncoding, not Latin-1
    assert decode_pdf_text(b"\xef\xbb\xbf\xc3\xa4") == "ä"


# --------------------------------------------------------------------------------------------
# /PageLabels


def new_doc(n: int) -> pymupdf.Document:
    doc = pymupdf.open()
    for _ in range(n):
        doc.new_page()
    return doc


def set_labels_object(doc: pymupdf.Document, text: str) -> None:
    """Point the catalog's /PageLabels at a new object with ``text`` as its source."""
    xref = doc.get_new_xref()
    doc.update_object(xref, text)
    doc.xref_set_key(doc.pdf_catalog(), "PageLabels", f"{xref} 0 R")


def test_set_page_labels_round_trip_all_styles():
    doc = new_doc(16)
    rules = [
        {"startpage": 0, "prefix": "", "style": "r", "firstpagenum": 1},
        {"startpage": 3, "prefix": "", "style": "R", "firstpagenum": 4},
        {"startpage": 5, "prefix": "", "style": "D", "firstpagenum": 1},
        {"startpage": 8, "prefix": "A-", "style": "D", "firstpagenum": 1},
        {"startpage": 10, "prefix": "", "style": "a", "firstpagenum": 26},
        {"startpage": 12, "prefix": "", "style": "A", "firstpagenum": 1},
        {"startpage": 14, "prefix": "Cover", "style": "", "firstpagenum": 1},
        {"startpage": 15, "prefix": "", "style": "D", "firstpagenum": 100},
    ]
    doc.set_page_labels(rules)
    doc = pymupdf.open("pdf", doc.tobytes())  # reload: read what was written, not what is cached
    expected = ["i", "ii", "iii", "IV", "V", "1", "2", "3", "A-1", "A-2", "z", "aa", "A", "B", "Cover", "100"]
    assert pdf_page_labels(doc) == expected
    # PyMuPDF agrees on plain ASCII labels
    assert [doc[i].get_label() for i in range(doc.page_count)] == expected
    result = label_pages(
        pdf_page_labels(doc), [Page(index=i, width=W, height=H) for i in range(16)], settings=LabelSettings()
    )
    assert labels(result) == expected
    assert set(sources(result)) == {LabelSource.PDF}


def test_hex_utf16_prefix_kids_tree_and_indirect_values():
    doc = new_doc(5)
    leaf_a, leaf_b, rule = doc.get_new_xref(), doc.get_new_xref(), doc.get_new_xref()
    doc.update_object(rule, "<</S/D/P<FEFF00C4002D>/St 3>>")
    doc.update_object(leaf_a, f"<</Limits[0 0]/Nums[0 {rule} 0 R]>>")
    doc.update_object(leaf_b, "<</Limits[3 3]/Nums[3<</S/r/P(\\(x\\) )>>]>>")
    set_labels_object(doc, f"<</Kids[{leaf_a} 0 R {leaf_b} 0 R]>>")
    doc = pymupdf.open("pdf", doc.tobytes())
    assert pdf_page_labels(doc) == ["Ä-3", "Ä-4", "Ä-5", "(x) i", "(x) ii"]


def test_pages_before_the_first_range_fall_back():
    doc = new_doc(4)
    set_labels_object(doc, "<</Nums[2<</S/D>>]>>")
    assert pdf_page_labels(doc) == ["", "", "1", "2"]
    pages = [make_page(i) for i in range(4)]
    result = label_pages(pdf_page_labels(doc), pages, settings=LabelSettings())
    assert labels(result) == ["1", "2", "1", "2"]
    assert sources(result) == [LabelSource.PHYSICAL, LabelSource.PHYSICAL, LabelSource.PDF, LabelSource.PDF]


@pytest.mark.parametrize(
    "tree",
    [
        "<</Nums 7>>",  # not an array
        "<</Nums[0 999 0 R]>>",  # dangling reference
        "<</Nums[(x)<</S/D>>]>>",  # key is not a number
        "<</Kids[(junk)]>>",  # kid is not a dictionary
        "[1 2 3]",  # the tree is not a dictionary
        "<</Nums[]>>",  # no range at all
    ],
)
def test_malformed_tree_is_logged_not_raised(tree, caplog):
    doc = new_doc(3)
    set_labels_object(doc, tree)
    with caplog.at_level(logging.WARNING, logger="dagster_ocr.labels"):
        assert pdf_page_labels(doc) is None
    assert any("page labels" in r.message for r in caplog.records)
    pages = [make_page(i, str(i + 1)) for i in range(3)]
    assert labels(label_pages(pdf_page_labels(doc), pages, settings=LabelSettings())) == ["1", "2", "3"]
    assert set(sources(label_pages(pdf_page_labels(doc), pages, settings=LabelSettings()))) == {
        LabelSource.PRINTED
    }


def test_kids_cycle_terminates():
    doc = new_doc(3)
    node = doc.get_new_xref()
    doc.update_object(node, f"<</Kids[{node} 0 R]/Nums[0<</S/R>>]>>")
    doc.xref_set_key(doc.pdf_catalog(), "PageLabels", f"{node} 0 R")
    assert pdf_page_labels(doc) == ["I", "II", "III"]


def test_unknown_style_keeps_prefix_and_bad_start_is_one():
    doc = new_doc(2)
    set_labels_object(doc, "<</Nums[0<</S/Q/P(P)>>1<</S/D/St -4>>]>>")
    assert pdf_page_labels(doc) == ["P", "1"]


def test_no_page_labels_and_non_pdf():
    assert pdf_page_labels(new_doc(2)) is None
    assert labels(
        label_pages(pdf_page_labels(new_doc(2)), [make_page(0), make_page(1)], settings=LabelSettings())
    ) == ["1", "2"]


def test_all_identical_labels_are_broken_printed_numbers_win(caplog):
    doc = new_doc(4)
    set_labels_object(doc, "<</Nums[0<</P(1)>>]>>")  # every page labelled "1"
    assert pdf_page_labels(doc) == ["1", "1", "1", "1"]
    printed = ["ix", "x", "xi", "xii"]
    with caplog.at_level(logging.WARNING, logger="dagster_ocr.labels"):
        result = label_pages(
            pdf_page_labels(doc), [make_page(i, f) for i, f in enumerate(printed)], settings=LabelSettings()
        )
    assert labels(result) == printed
    assert set(sources(result)) == {LabelSource.PRINTED}
    assert any("every page" in r.message for r in caplog.records)


def test_page_labels_win_over_disagreeing_printed_numbers():
    doc = new_doc(5)
    doc.set_page_labels([{"startpage": 0, "prefix": "", "style": "D", "firstpagenum": 1}])
    printed = ["iii", "iv", "v", "vi", "vii"]
    pages = [make_page(i, f) for i, f in enumerate(printed)]
    result = label_pages(pdf_page_labels(doc), pages, settings=LabelSettings())
    assert labels(result) == ["1", "2", "3", "4", "5"]
    assert set(sources(result)) == {LabelSource.PDF}
    assert all(pl.confidence == LabelSettings().pdf_disagree_confidence for pl in result)
    # the printed number is still page furniture
    assert [pl.line_index for pl in result] == [footer_index(p) for p in pages]


def test_page_labels_confirmed_by_print_are_most_confident():
    doc = new_doc(3)
    doc.set_page_labels([{"startpage": 0, "prefix": "", "style": "D", "firstpagenum": 5}])
    pages = [make_page(0, "5"), make_page(1, None), make_page(2, "Page 7")]
    result = label_pages(pdf_page_labels(doc), pages, settings=LabelSettings())
    assert labels(result) == ["5", "6", "7"]
    assert [pl.confidence for pl in result] == [1.0, pytest.approx(0.95), 1.0]
    assert result[0].line_index == footer_index(pages[0])
    assert result[1].line_index is None


def test_use_pdf_labels_off():
    doc = new_doc(2)
    doc.set_page_labels([{"startpage": 0, "prefix": "", "style": "r", "firstpagenum": 1}])
    pages = [make_page(0), make_page(1)]
    result = label_pages(pdf_page_labels(doc), pages, LabelSettings(use_pdf_labels=False))
    assert set(sources(result)) == {LabelSource.PHYSICAL}


def test_chinese_numerals_and_chapter_page_numbers():
    pages = [make_page(i, f) for i, f in enumerate(["第十一页", "第十二页", "第十三页"])]
    assert labels(label_pages(None, pages, settings=LabelSettings())) == ["11", "12", "13"]
    pages = [make_page(i, f"5 - {i + 3}") for i in range(3)]
    assert labels(label_pages(None, pages, settings=LabelSettings())) == ["5-3", "5-4", "5-5"]


def test_lone_numbers_whole_line_believed_edge_not():
    # a one-page excerpt numbered 447: believed
    assert labels(label_pages(None, [make_page(0, "447")], settings=LabelSettings())) == ["447"]
    # a table row ending in a number near the bottom of one page out of five: not a page number
    pages = [make_page(i) for i in range(5)]
    pages[3].lines.append(Line(text="Plumbers Local Union 34", bbox=(72, 770, 400, 782)))
    assert set(sources(label_pages(None, pages, settings=LabelSettings()))) == {LabelSource.PHYSICAL}


@pytest.mark.parametrize(
    ("settings", "test"),
    [
        (LabelSettings(switch_penalty=0.1), test_misread_number_is_outvoted),
        (LabelSettings(restart_penalty=1.5), test_restart_on_last_page_and_roman_run),
    ],
)
def test_the_penalties_matter(settings, test, monkeypatch):
    """The inference tests above fail with the wrong tunables: they measure the penalties."""
    # the tests above pass ``LabelSettings()``, looked up in this module when they run
    monkeypatch.setattr(sys.modules[__name__], "LabelSettings", lambda: settings)
    with pytest.raises(AssertionError):
        test()


# --------------------------------------------------------------------------------------------
# lookups both ways


def test_pages_for_label_finds_every_part_of_a_restarting_document():
    printed = ["i", "ii", "1", "2", "3", "1", "2"]
    result = label_pages(None, [make_page(i, f) for i, f in enumerate(printed)], settings=LabelSettings())
    assert labels(result) == printed
    assert pages_for_label(result, "1") == [2, 5]  # a label repeats across parts: every page
    assert pages_for_label(result, " ii ") == [1]  # whitespace never matters
    assert pages_for_label(result, "3") == [4]
    assert pages_for_label(result, "99") == []
    assert pages_for_label(result, "") == []


def test_pages_for_label_falls_back_to_case_insensitive():
    result = [
        PageLabel(0, "iv", LabelSource.PDF, 1.0),
        PageLabel(1, "IV", LabelSource.PDF, 1.0),
        PageLabel(2, "A-3", LabelSource.PDF, 1.0),
    ]
    assert pages_for_label(result, "IV") == [1]  # an exact match wins over a case-folded one
    assert pages_for_label(result, "a-3") == [2]


def test_label_for_page_round_trips_and_falls_back_to_physical():
    printed = ["i", "ii", "1", "2", "A-1", "A-2"]
    result = label_pages(None, [make_page(i, f) for i, f in enumerate(printed)], settings=LabelSettings())
    for pl in result:
        assert label_for_page(result, pl.page_index) == pl.label
        assert pl.page_index in pages_for_label(result, pl.label)
    assert label_for_page(result, 40) == "41"
