"""Paragraph and section reconstruction on synthetic pages."""

from __future__ import annotations

import dataclasses

from dagster_ocr.labels import LabelSettings
from dagster_ocr.model import Cell, LabelSource, Line, Page, PageLabel, Span, Table
from dagster_ocr.paragraphs import ParagraphSettings, build_paragraphs, clause_number

W, H = 595.0, 842.0


def line(
    text: str,
    x0: float,
    y0: float,
    size: float = 10.0,
    *,
    x1: float | None = None,
    bold: bool = False,
    italic: bool = False,
    block: int = 0,
) -> Line:
    """A text-layer line; width is estimated from the text unless given."""
    x1 = x1 if x1 is not None else x0 + 0.5 * size * len(text)
    bbox = (x0, y0, x1, y0 + 1.2 * size)
    return Line(text=text, bbox=bbox, spans=[Span(text, bbox, "Times", size, bold, italic)], block=block)


def page(lines: list[Line], index: int = 0) -> Page:
    return Page(index=index, width=W, height=H, lines=lines)


def texts(
    pages: list[Page], labels: list[PageLabel] | None = None, tables: list[Table] | None = None
) -> list[str]:
    return [
        p.text
        for p in build_paragraphs(pages, labels or [], tables or [], settings=ParagraphSettings()).paragraphs
    ]


def body(
    lines: list[str], x0: float = 72, y0: float = 100, pitch: float = 12.0, x1: float = 500
) -> list[Line]:
    """Full-width justified lines at a tight pitch (last one short)."""
    out = []
    for i, t in enumerate(lines):
        right = x1 if i < len(lines) - 1 else x0 + 5 * len(t)
        out.append(line(t, x0, y0 + i * pitch, x1=right))
    return out


def test_new_clause_starts_paragraph_despite_tight_spacing() -> None:
    lines = body(
        [
            "(a) the buyer shall pay the price within thirty days of delivery of",
            "the goods; and",
            "(b) the seller shall deliver the goods at the agreed place.",
            "Article 5 Either party may terminate this agreement by notice",
            "第五条 本合同自双方签字之日起生效。",
        ]
    )
    paras = build_paragraphs([page(lines)], [], [], settings=ParagraphSettings()).paragraphs
    assert [p.text for p in paras] == [
        "(a) the buyer shall pay the price within thirty days of delivery of the goods; and",
        "(b) the seller shall deliver the goods at the agreed place.",
        "Article 5 Either party may terminate this agreement by notice",
        "第五条 本合同自双方签字之日起生效。",
    ]
    assert [p.kind for p in paras] == ["clause"] * 4


def test_wrapped_number_does_not_split_a_sentence() -> None:
    lines = body(
        ["The amount was increased several times until", "2010. After that it stayed flat for years."]
    )
    assert texts([page(lines)]) == [
        "The amount was increased several times until 2010. After that it stayed flat for years."
    ]


def test_a_clause_reference_wrapped_to_a_line_start_does_not_split_the_sentence() -> None:
    # "§ 2.2" and "Article 12" open a clause at a line start, unless the line before ended on a
    # word no sentence ends on: then they are a cross-reference the line break fell before
    lines = body(
        [
            "We confirm that the delivered plan meets the requirements of",
            "§ 2.2 of the Service Agreement, and the milestone is achieved as set out in",
            "Article 12 of the Agreement. Die Vergütung richtet sich nach",
            "§ 5 Abs. 2 des Vertrags.",
            "§ 6 Neither party is liable for delays caused by events beyond its control.",
        ]
    )
    assert texts([page(lines)]) == [
        "We confirm that the delivered plan meets the requirements of § 2.2 of the Service "
        "Agreement, and the milestone is achieved as set out in Article 12 of the Agreement. "
        "Die Vergütung richtet sich nach § 5 Abs. 2 des Vertrags.",
        "§ 6 Neither party is liable for delays caused by events beyond its control.",
    ]


def test_clause_numbers() -> None:
    assert clause_number("Article 5 Scope") == "Article 5"
    assert clause_number("ARTICLE V") == "ARTICLE V"
    assert clause_number("第五条 规定") == "第五条"
    assert clause_number("5.2 Scope") == "5.2"
    assert clause_number("(a) text") == "a"
    assert clause_number("§ 3 Text") == "§ 3"
    assert clause_number("1. First") == "1"
    assert clause_number("Plain text") == ""
    # a Roman section numbered on, as European contract notices do
    assert clause_number("II.1 Title: digitisation") == "II.1"
    assert clause_number("III.2.1) Economic standing") == "III.2.1"
    assert clause_number("I.e. the supplier") == ""


def test_hyphenation_and_cjk_joining() -> None:
    lines = body(["This is a long exam-", "ple of the Self-", "Locking nut, see the well-", "Known case."])
    expected = "This is a long example of the Self-Locking nut, see the well-Known case."
    assert texts([page(lines)]) == [expected]
    cjk = body(["本合同适用于双方之间的全部交易", "并自签字之日起生效。"])
    assert texts([page(cjk)]) == ["本合同适用于双方之间的全部交易并自签字之日起生效。"]


def test_a_compound_broken_at_its_hyphen_keeps_it_where_the_document_says_so() -> None:
    """No dictionary tells "heavy-" / "duty" from "deli-" / "very"; the document does. The hyphen
    stays when the run-together word occurs nowhere else while the compound, or both its parts as
    words, do; and before a suspended compound ("light- and heavy-" / "duty")."""
    from dagster_ocr.paragraphs.patterns import Vocabulary, join_lines

    v = Vocabulary()
    v.add_lines(["real-time data from an ion", "trap and the delivery of a heavy-", "duty load"])
    assert join_lines("in real-", "time", v) == "in real-time"  # the compound occurs whole
    assert join_lines("an ion-", "trap", v) == "an ion-trap"  # both parts occur as words
    assert join_lines("the deli-", "very", v) == "the delivery"  # the joined word occurs
    assert join_lines("con-", "tracts", v) == "contracts"  # no evidence: a line-break hyphen
    # the broken pieces are not evidence of themselves: "heavy" and "duty" were not counted
    assert join_lines("a heavy-", "duty", v) == "a heavyduty"
    assert join_lines("light- and heavy-", "duty trucks") == "light- and heavy-duty trucks"
    # a closed compound after a suspended one, the word seen whole: "Innen- und Außenwinkel"
    de = Vocabulary()
    de.add_lines(["Im Dreieck gibt es Innenwinkel und Außenwinkel."])
    assert join_lines("(b) Innen- und Außenwin-", "kel", de) == "(b) Innen- und Außenwinkel"
    assert join_lines("exam-", "ple") == "example"  # no vocabulary: as before
    # in a document, across its paragraphs
    doc = body(["The time-critical part is done.", "Each part of the pipeline is time-", "critical here."])
    assert texts([page(doc)])[-1].endswith("is time-critical here.")


def test_gap_relative_to_line_height_and_indentation() -> None:
    first = body(["The first paragraph runs over two lines of text that are justified", "and end here."])
    second = body(["The second paragraph starts after a gap of one line height and", "ends here."], y0=136)
    assert len(texts([page(first + second)])) == 2
    # same absolute gap, but in 30pt type the gap is small: one paragraph
    big = [
        line("Large type line one goes on", 72, 100, 30, x1=500),
        line("and continues here.", 72, 140, 30, x1=300),
    ]
    assert len(texts([page(big)])) == 1
    # tight spacing, but the next paragraph has a first-line indent
    indented = body(
        [
            "Body text of the first paragraph, long enough to be justified here",
            "and more body text",
            "that ends the paragraph here.",
        ]
    )
    indented.append(line("Indented start of the next paragraph, again long enough", 90, 136, x1=500))
    indented.append(line("to wrap onto a second line.", 72, 148, x1=220))
    assert len(texts([page(indented)])) == 2


def test_two_columns_read_column_by_column() -> None:
    title = line("A Title Across Both Columns", 72, 60, 16, x1=520, bold=True, block=0)
    left = [
        line(f"left column line {i} with some words in it.", 72, 100 + 12 * i, x1=285, block=1)
        for i in range(6)
    ]
    right = [
        line(f"Right column line {i} with some words too", 310, 100 + 12 * i, x1=523, block=2)
        for i in range(6)
    ]
    lines = [title] + [x for pair in zip(left, right, strict=True) for x in pair]  # interleaved, as in PDFs
    result = build_paragraphs([page(lines)], [], [], settings=ParagraphSettings())
    paras = [p.text for p in result.paragraphs]
    assert paras[0] == "A Title Across Both Columns"
    joined = " ".join(paras[1:])
    assert joined.index("left column line 5") < joined.index("Right column line 0")
    assert all("left" not in p or "Right" not in p for p in paras)
    assert paras[-1].startswith("Right column line 0") and paras[-1].endswith("line 5 with some words too")


def test_table_of_contents_entries_with_dot_leaders() -> None:
    """Title, leaders and page number drawn as three fragments with gaps between them (as report
    and contract generators do): each entry is one paragraph, its page number at its end, never
    at the start of the next entry; a title wrapped over two lines stays one entry."""
    entries = [
        ("Glossary of Defined Terms", "ii"),
        ("1. Definitions and Interpretation", "1"),
        ("Appendix A — Schedule of rates and", None),  # wraps: no leaders on its first line
        ("charges for additional services", "A-3"),
        ("2. Services", "12"),
    ]
    lines = [line("Contents", 72, 70, 16, bold=True, block=0)]
    for i, (title, label) in enumerate(entries):
        y = 110 + 22 * i
        lines.append(line(title, 72, y, 11, block=1 + 3 * i))
        if label is not None:
            x = 72 + 5.5 * len(title) + 10  # a gap of two font sizes to the leaders
            lines.append(line(" ." * 30, x, y, 11, x1=505, block=2 + 3 * i))
            lines.append(line(label, 512, y, 11, x1=523, block=3 + 3 * i))
    result = texts([page(lines)])
    dots = " ." * 30
    assert result == [
        "Contents",
        "Glossary of Defined Terms" + dots + " ii",
        "1. Definitions and Interpretation" + dots + " 1",
        "Appendix A — Schedule of rates and charges for additional services" + dots + " A-3",
        "2. Services" + dots + " 12",
    ]


def test_a_dotted_rule_beside_a_column_is_no_leader() -> None:
    """A sidebar's dotted separator ends a few points before the next column's text: dots join a
    neighbour only when it is a short page reference, so the column's text stays its own."""
    rule = line(" ." * 20, 40, 200, 8, x1=150, block=0)
    column = [
        line(f"Running text of the main column, line {i}, with words", 160, 200 + 12 * i, 10, x1=520, block=1)
        for i in range(3)
    ]
    result = texts([page([rule, *column])])
    assert result[0] == (" ." * 20).strip()
    assert result[1].startswith("Running text of the main column, line 0")


def test_a_term_beside_its_definition_is_read_before_it() -> None:
    """A glossary: each term on the left, its definition 90 pt to the right over two lines, the
    definition's first line a fraction of a point higher than the term (as generators set them).
    Each term comes before its own definition, never between the lines of the one before."""
    lines: list[Line] = []
    for i, (term, first, second) in enumerate(
        [
            ("Agreement", "means this service agreement, including its Annexes and", "the payment schedule."),
            ("Business Day", "means a day other than a Saturday, Sunday or public", "holiday in Tokyo."),
            ("Charges", "means the fees payable by the Customer under this Agreement,", "stated in yen."),
        ]
    ):
        y = 140 + 36 * i
        lines.append(line(first, 222, y - 0.4, 10.5, x1=515, block=2 + i))
        lines.append(line(term, 72, y, 10.5, bold=True, block=2 + i))
        lines.append(line(second, 222, y + 14.5, 10.5, block=2 + i))
    result = texts([page(lines)])
    assert result == [
        "Agreement",
        "means this service agreement, including its Annexes and the payment schedule.",
        "Business Day",
        "means a day other than a Saturday, Sunday or public holiday in Tokyo.",
        "Charges",
        "means the fees payable by the Customer under this Agreement, stated in yen.",
    ]


def test_a_short_finished_line_then_a_line_further_left_is_two_paragraphs() -> None:
    """A one-line definition set to the right ("means 1 April 2025.") and, under it, the next entry
    starting at the left margin: not a paragraph with an indented first line."""
    lines = [
        line("Effective Date", 72, 140, 10.5, bold=True, block=1),
        line("means 1 April 2025.", 222, 140, 10.5, block=1),
        line(
            "Intellectual Property Rights means patents, copyright and related rights, trade",
            72,
            161,
            10.5,
            x1=515,
            block=2,
        ),
        line("marks and all similar rights anywhere in the world.", 222, 175.5, 10.5, block=2),
    ]
    result = texts([page(lines)])
    assert result[-2:] == [
        "means 1 April 2025.",
        "Intellectual Property Rights means patents, copyright and related rights, trade marks and all "
        "similar rights anywhere in the world.",
    ]


def test_column_flow_continues_unfinished_sentence() -> None:
    left = [
        line("The agreement binds both parties and remains in force", 72, 100 + 12 * i, x1=285, block=1)
        for i in range(4)
    ]
    right = [line("until it is terminated by either party in writing.", 310, 100, x1=523, block=2)]
    right += [
        line(f"Another paragraph of the right column number {i}.", 310, 130 + 12 * i, x1=523, block=3)
        for i in range(3)
    ]
    paras = texts([page(left + right)])
    assert paras[0].endswith("remains in force until it is terminated by either party in writing.")


def test_headings_and_section_tree() -> None:
    y = 80.0
    lines: list[Line] = []

    def add(t: str, size: float = 10, bold: bool = False, gap: float = 6) -> None:
        nonlocal y
        lines.append(line(t, 72, y, size, x1=72 + 0.5 * size * len(t), bold=bold))
        y += 1.2 * size + gap

    add("1 Introduction", 14, True)
    add("Body of the introduction.")
    add("1.1 Scope", 12, True)
    add("Body of the scope.")
    add("Definitions", 12, True)
    add("Body of the definitions.")
    add("2 Methods", 14, True)
    add("Body of methods.")
    result = build_paragraphs([page(lines)], [], [], settings=ParagraphSettings())
    secs = result.sections
    assert [(s.section_id, s.title, s.level, s.parent_id) for s in secs] == [
        ("s0", "1 Introduction", 1, None),
        ("s1", "1.1 Scope", 2, "s0"),
        ("s2", "Definitions", 2, "s0"),
        ("s3", "2 Methods", 1, None),
    ]
    assert secs[1].number == "1.1"
    kinds = [(p.kind, p.section_id) for p in result.paragraphs]
    assert kinds == [
        ("heading", "s0"),
        ("body", "s0"),
        ("heading", "s1"),
        ("body", "s1"),
        ("heading", "s2"),
        ("body", "s2"),
        ("heading", "s3"),
        ("body", "s3"),
    ]


def test_a_note_in_parentheses_under_a_title_is_no_heading() -> None:
    """A statement's units line, bold under its bold title, is a note on the title, not a section
    of its own: every chunk of the statement below was filed under "(in millions ...)". A
    parenthesised line that starts in capitals keeps being read as it was."""
    lines = [
        line("Consolidated Balance Sheets", 200, 80, 12, bold=True),
        line("(in millions, except per share data)", 190, 98, 12, bold=True),
        line("Cash and cash equivalents are held at major banks.", 72, 130, x1=400),
        line("(Benefit from) Provision for Income Taxes", 72, 160, 12, bold=True),
        line("The provision was lower than the year before.", 72, 180, x1=400),
    ]
    result = build_paragraphs([page(lines)], [], [], settings=ParagraphSettings())
    assert [s.title for s in result.sections] == [
        "Consolidated Balance Sheets",
        "(Benefit from) Provision for Income Taxes",
    ]
    kinds = {p.text: p.kind for p in result.paragraphs}
    assert kinds["(in millions, except per share data)"] != "heading"


def _ocr_line(text: str, y0: float, size: float, confidence: float = 0.99, x0: float = 72) -> Line:
    """An OCR'd line: no text-layer block, its size estimated (as from ink height)."""
    bbox = (x0, y0, x0 + 0.5 * size * len(text), y0 + 1.2 * size)
    return Line(text=text, bbox=bbox, spans=[Span(text, bbox, "", size)], block=-1, confidence=confidence)


def test_a_scanned_page_is_measured_against_the_scans_body_size() -> None:
    # typeset pages at 10 pt, then a scanned signature page whose body lines the OCR sizes at
    # 12.9 "pt": they are that page's body, not headings; its title (18.7) still is one, and a
    # signature read with low confidence as tall letters is not a section title
    prose = "The parties agree to the terms set out in this agreement and in its annexes."
    typeset = [page(body([prose] * 30), 0)]
    scan = [
        _ocr_line("Annex B - Signature Page", 100, 18.7),
        _ocr_line("IN WITNESS WHEREOF the parties have executed this Agreement.", 140, 12.9),
        _ocr_line("Ceee", 200, 29.9, confidence=0.56),
        _ocr_line("Name: Haruto Tanaka", 260, 12.9),
        _ocr_line("Date: 1 April 2025", 300, 12.9),
        _ocr_line("Title: Representative Director", 340, 12.9),
    ]
    result = build_paragraphs([*typeset, page(scan, 1)], [], [], settings=ParagraphSettings())
    assert [s.title for s in result.sections] == ["Annex B - Signature Page"]


def test_legal_headings_article_and_chinese() -> None:
    lines = [
        line("ARTICLE V", 250, 80, 10, bold=True),
        line("The parties agree as follows.", 72, 110),
        line("第五条", 250, 140, 10, bold=True),
        line("本合同自签字之日起生效。", 72, 170),
    ]
    result = build_paragraphs([page(lines)], [], [], settings=ParagraphSettings())
    assert [s.title for s in result.sections] == ["ARTICLE V", "第五条"]
    assert [s.number for s in result.sections] == ["ARTICLE V", "第五条"]


def test_cross_page_continuation() -> None:
    p0 = page(
        body(
            [
                "A paragraph that is long enough to fill the line and keeps going",
                "and the contract shall remain in force until it is",
            ],
            y0=700,
            x1=500,
        )[:1]
        + [line("and the contract shall remain in force until it is", 72, 712, x1=500)],
        0,
    )
    p1 = page(
        [line("terminated by either party.", 72, 80, x1=210), line("A new paragraph.", 72, 110, x1=160)], 1
    )
    labels = [PageLabel(0, "iv", LabelSource.PDF, 1.0), PageLabel(1, "v", LabelSource.PDF, 1.0)]
    paras = build_paragraphs([p0, p1], labels, [], settings=ParagraphSettings()).paragraphs
    assert len(paras) == 2
    first = paras[0]
    assert first.text.endswith("until it is terminated by either party.")
    assert first.continued and first.page_index == 0 and first.last_page_index == 1
    assert first.page_label == "iv" and first.bbox[3] <= 712 + 12 + 0.01  # bbox on its first page only
    assert not paras[1].continued and paras[1].page_label == "v"


def test_finished_paragraph_is_not_joined_across_pages() -> None:
    p0 = page([line("The first page ends a sentence here.", 72, 700, x1=300)], 0)
    p1 = page([line("lower case start, but the previous paragraph ended.", 72, 80, x1=400)], 1)
    assert len(texts([p0, p1])) == 2


def test_furniture_removed_and_marked() -> None:
    pages = []
    for i in range(4):
        lines = [
            line(f"ACME Annual Report {2024} - Page {i + 1}", 72, 30, 8, x1=300),
            line("Confidential draft", 72, 800, 8, x1=200),
            line(f"Body text on page {i} that is a sentence.", 72, 300, x1=300),
            line(str(i + 1), 290, 815, 8, x1=300),
        ]
        pages.append(page(lines, i))
    labels = [PageLabel(i, str(i + 1), LabelSource.PRINTED, 0.9, line_index=3) for i in range(4)]
    result = build_paragraphs(pages, labels, [], settings=ParagraphSettings())
    expected = [f"Body text on page {i} that is a sentence." for i in range(4)]
    assert [p.text for p in result.paragraphs] == expected
    assert result.furniture[0] == {0: "header", 1: "footer", 3: "page_number"}
    # the pages are input: the stage returns its marks and leaves the lines as they were
    before = [dataclasses.replace(ln) for ln in pages[0].lines]
    assert build_paragraphs(pages, labels, [], settings=ParagraphSettings()).furniture == result.furniture
    assert pages[0].lines == before


def test_table_regions_excluded() -> None:
    lines = [
        line("Text before the table.", 72, 100, x1=200),
        line("cell A", 72, 130, x1=120),
        line("cell B", 200, 130, x1=250),
        line("Text after the table.", 72, 170, x1=200),
    ]
    cells = [Cell(0, 0, "cell A", 0), Cell(0, 1, "cell B", 0)]
    table = Table("t0", 0, 0, 1, 2, cells, (60, 125, 300, 150), regions=[(0, (60, 125, 300, 150))])
    assert texts([page(lines)], tables=[table]) == ["Text before the table.", "Text after the table."]
    # a line inside the region that no cell holds is body text: a table never costs text
    empty = Table("t0", 0, 0, 1, 2, [], (60, 125, 300, 150), regions=[(0, (60, 125, 300, 150))])
    assert "cell A" in " ".join(texts([page(lines)], tables=[empty]))


def test_symbols_survive_and_flags() -> None:
    lines = body(["Under § 3 the fee is € 12 or ¥ 1500, © ACME ™, 20 °C ± 2."])
    lines.append(line("Broken \ufffd glyph here.", 72, 140, x1=200))
    paras = build_paragraphs([page(lines)], [], [], settings=ParagraphSettings()).paragraphs
    assert paras[0].text == "Under § 3 the fee is € 12 or ¥ 1500, © ACME ™, 20 °C ± 2."
    assert paras[0].flags == []
    assert paras[1].flags == ["replacement_char"]


def test_wingdings_bullets_become_list_items() -> None:
    lines = [
        line("\x84", 60, 100, 10, x1=66),
        line("First option of the list", 72, 100, x1=200),
        line("\x84", 60, 114, 10, x1=66),
        line("Second option", 72, 114, x1=150),
    ]
    paras = build_paragraphs([page(lines)], [], [], settings=ParagraphSettings()).paragraphs
    assert [(p.text, p.kind, p.flags) for p in paras] == [
        ("• First option of the list", "list_item", []),
        ("• Second option", "list_item", []),
    ]


def test_ids_unique_and_shaped() -> None:
    pages = []
    for i in range(3):
        pages.append(
            page(
                [
                    line("Heading Same", 72, 200, 14, x1=200, bold=True),
                    line("Body one.", 72, 240, x1=150),
                    line("Body two.", 72, 270, x1=150),
                ],
                i,
            )
        )
    labels = [PageLabel(i, "A 1", LabelSource.PDF, 1.0) for i in range(3)]  # duplicate labels on purpose
    result = build_paragraphs(pages, labels, [], settings=ParagraphSettings())
    ids = [p.paragraph_id for p in result.paragraphs]
    assert len(set(ids)) == len(ids) == 9
    assert ids[:3] == ["p_A-1_0_0", "p_A-1_0_1", "p_A-1_0_2"]
    assert [p.reading_order for p in result.paragraphs] == list(range(9))
    assert [s.section_id for s in result.sections] == ["s0", "s1", "s2"]
    front = build_paragraphs(
        [page([line("No heading yet.", 72, 100, x1=150)])], [], [], settings=ParagraphSettings()
    )
    assert front.paragraphs[0].paragraph_id == "p_1_n_0" and front.paragraphs[0].section_id is None


def test_settings_reject_unknown_keys() -> None:
    import pydantic
    import pytest

    with pytest.raises(pydantic.ValidationError):
        ParagraphSettings(gap_factr=1.0)  # type: ignore[call-arg]
    assert ParagraphSettings(gap_factor=2.0).gap_factor == 2.0


def test_empty_input() -> None:
    result = build_paragraphs([page([])], [], [], settings=ParagraphSettings())
    assert result.paragraphs == [] and result.sections == []


# --------------------------------------------------------------------------- real PDFs built with PyMuPDF
# Each test below writes a PDF, reopens it and reads it back through the text layer
# (textlayer.extract_lines), so fonts, spans and bboxes are what production sees.

import pymupdf  # noqa: E402

from dagster_ocr.textlayer import extract_lines  # noqa: E402

_FONTS: dict[str, pymupdf.Font] = {}


def _font(name: str) -> pymupdf.Font:
    if name not in _FONTS:
        _FONTS[name] = pymupdf.Font(name)
    return _FONTS[name]


def pdf_pages(spec: list[list[tuple[float, float, str, float, str]]]) -> list[Page]:
    """Pages from [(x, baseline y, text, size, font name)] per page, via a saved and reopened PDF."""
    doc = pymupdf.open()
    for items in spec:
        pg = doc.new_page(width=W, height=H)
        tw = pymupdf.TextWriter(pg.rect)
        for x, y, text, size, font in items:
            tw.append((x, y), text, font=_font(font), fontsize=size)
        tw.write_text(pg)
    doc = pymupdf.open("pdf", doc.tobytes())
    return [Page(index=p.number, width=W, height=H, lines=extract_lines(p)) for p in doc]


def stack(
    lines: list[str],
    y0: float = 100,
    pitch: float = 12.0,
    size: float = 10.0,
    x: float = 72,
    font: str = "tiro",
    gaps: dict[int, float] | None = None,
) -> list[tuple[float, float, str, float, str]]:
    """Lines at a fixed pitch; ``gaps[i]`` adds extra space before line i."""
    out, y = [], y0
    for i, t in enumerate(lines):
        y += (gaps or {}).get(i, 0.0)
        out.append((x, y, t, size, font))
        y += pitch
    return out


def paras_of(pages: list[Page], tables: list[Table] | None = None) -> list:
    return build_paragraphs(pages, [], tables or [], settings=ParagraphSettings()).paragraphs


def test_pdf_contract_clauses_two_points_apart_stay_apart() -> None:
    # size 10 at a 12 pt pitch: every line, inside a clause or between clauses, sits ~2 pt below the last
    clauses = [
        [
            "Article 5 The Supplier shall deliver the goods to the premises named by the Buyer",
            "within ten days.",
        ],
        [
            "5.1 The Buyer shall pay the price within thirty days of the date of the invoice",
            "issued by the Supplier.",
        ],
        [
            "5.2 Late payment bears interest at the statutory rate from the due date until the",
            "day of payment.",
        ],
        ["(a) the Buyer may withhold payment of any amount it disputes in good faith;"],
        ["(b) the Supplier may suspend deliveries while an undisputed amount is overdue."],
        ["§ 6 Neither party is liable for delays caused by events beyond its control."],
    ]
    lines = [t for c in clauses for t in c]
    pages = pdf_pages([stack(lines)])
    gaps = [b.bbox[1] - a.bbox[3] for a, b in zip(pages[0].lines, pages[0].lines[1:], strict=False)]
    assert max(gaps) < 3.5  # the geometry really is tight: only clause structure can split
    assert [p.text for p in paras_of(pages)] == [" ".join(c) for c in clauses]


def test_pdf_whitelisted_symbols_survive_unchanged_and_unflagged() -> None:
    from dagster_ocr.validation import PROTECTED_SYMBOLS

    latin = "Fees under § 3 ¶ 2: € 12, £ 9, ¥ 1500, 20 °C ± 2, 3 × 4 ÷ 2, 5 ‰, © ACME ® Widget™, note† and‡."
    marks = sorted(c for c in PROTECTED_SYMBOLS if ord(c) >= 0x2000 and not c.isspace() and c not in "™‰†‡")
    half = len(marks) // 2
    cjk = ["根据" + "".join(f"{m}条" for m in marks[:half]), "根据" + "".join(f"{m}条" for m in marks[half:])]
    pages = pdf_pages(
        [[(72, 100, latin, 10, "cjk"), (72, 160, cjk[0], 10, "cjk"), (72, 220, cjk[1], 10, "cjk")]]
    )
    paras = paras_of(pages)
    assert [p.text for p in paras] == [latin, *cjk]
    assert all(p.flags == [] for p in paras)
    wanted = {c for c in PROTECTED_SYMBOLS if not c.isspace()}
    assert wanted <= set(latin + "".join(cjk))  # the page really carries every whitelisted symbol


def test_pdf_mojibake_is_flagged_clean_accents_are_not() -> None:
    pages = pdf_pages(
        [
            [
                (72, 100, "The cafÃ© menu lists crÃ¨me brÃ»lÃ©e.", 10, "tiro"),
                (72, 160, "The café menu lists crème brûlée.", 10, "tiro"),
            ]
        ]
    )
    assert [p.flags for p in paras_of(pages)] == [["mojibake"], []]


def test_pdf_gap_threshold_follows_the_local_line_height() -> None:
    # small print: two paragraphs 6 pt apart; large print: one paragraph with 8 pt between its lines
    small = stack(
        ["Small print paragraph one runs over two lines of text in", "a small size."],
        y0=100,
        pitch=9,
        size=7,
        gaps={},
    )
    small += stack(
        ["Small print paragraph two starts after a visible gap and", "goes on."], y0=124, pitch=9, size=7
    )
    large = stack(
        [
            "Large print paragraph with generous leading between all",
            "its lines stays one paragraph",
            "even though its line gap is wider than the small gap.",
        ],
        y0=300,
        pitch=22,
        size=14,
    )
    paras = paras_of(pdf_pages([small + large]))
    assert [p.text.split()[:3] for p in paras] == [["Small", "print", "paragraph"]] * 2 + [
        ["Large", "print", "paragraph"]
    ]
    assert paras[2].text.endswith("small gap.")


def test_pdf_indentation_dehyphenation_and_hyphen_kept() -> None:
    lines = stack(
        [
            "The first paragraph explains the exam-",
            "ple in detail and ends here with a full line",
            "of text.",
            "A new paragraph starts indented and mentions the Self-",
            "Locking nut which keeps",
            "its hyphen.",
        ]
    )
    # indent the first line of the second paragraph
    lines[3] = (90, *lines[3][1:])
    texts_ = [p.text for p in paras_of(pdf_pages([lines]))]
    assert texts_ == [
        "The first paragraph explains the example in detail and ends here with a full line of text.",
        "A new paragraph starts indented and mentions the Self-Locking nut which keeps its hyphen.",
    ]


def test_pdf_two_columns_and_continuation_across_columns() -> None:
    left = stack(
        [
            "Left column text begins the story and it goes on",
            "for a while in the left column of the",
            "page, until the column ends in the middle of a",
        ],
        x=50,
        size=9,
        pitch=11,
    )
    right = stack(
        [
            "sentence that continues at the top of the right",
            "column and is finished here at last.",
            "A second paragraph follows in the right column",
            "and ends quickly.",
        ],
        x=320,
        size=9,
        pitch=11,
        gaps={2: 8},
    )
    paras = paras_of(pdf_pages([left + right]))
    assert [p.text for p in paras] == [
        "Left column text begins the story and it goes on for a while in the left column of the page, "
        "until the column ends in the middle of a sentence that continues at the top of the right column "
        "and is finished here at last.",
        "A second paragraph follows in the right column and ends quickly.",
    ]


def test_pdf_paragraph_continues_onto_the_next_page_and_past_a_table() -> None:
    p1 = stack(
        ["This paragraph starts on the first page and describes the terms", "agreed between the"], y0=700
    )
    p2 = stack(["parties, which are binding on both of them from the date of", "signature."], y0=80)
    p2 += [(72, 200, "Cell A", 10, "tiro"), (300, 200, "Cell B", 10, "tiro")]
    p2 += stack(
        ["A paragraph interrupted by a table goes on", "after it when the text resumes in lower case"], y0=160
    )
    p2 = p2[:2] + p2[4:] + p2[2:4]
    p2 += stack(["and finishes below the table."], y0=240)
    pages = pdf_pages([p1, p2])
    cells = [Cell(0, 0, "Cell A", 1), Cell(0, 1, "Cell B", 1)]
    table = Table("t0", 1, 1, 1, 2, cells, (60, 185, 400, 210), regions=[(1, (60, 185, 400, 210))])
    paras = paras_of(pages, [table])
    assert [p.text for p in paras] == [
        "This paragraph starts on the first page and describes the terms agreed between the parties, "
        "which are binding on both of them from the date of signature.",
        "A paragraph interrupted by a table goes on after it when the text resumes in lower case and "
        "finishes below the table.",
    ]
    assert paras[0].continued and (paras[0].page_index, paras[0].last_page_index) == (0, 1)
    assert not paras[1].continued


def test_pdf_running_header_and_page_numbers_are_furniture() -> None:
    spec = []
    for i in range(3):
        items = [
            (72, 40, "ACME Supply Agreement — Confidential", 8, "tiro"),
            (290, 810, str(i + 1), 9, "tiro"),
        ]
        items += stack([f"Body paragraph on page {i + 1} that carries the real content."], y0=120)
        spec.append(items)
    from dagster_ocr.labels import label_pages

    pages = pdf_pages(spec)
    result = build_paragraphs(
        pages, label_pages(None, pages, settings=LabelSettings()), [], settings=ParagraphSettings()
    )
    assert [p.text for p in result.paragraphs] == [
        f"Body paragraph on page {i + 1} that carries the real content." for i in range(3)
    ]
    kinds = {pages[p].lines[i].text: k for p, marks in result.furniture.items() for i, k in marks.items()}
    assert kinds == {
        "ACME Supply Agreement — Confidential": "header",
        "1": "page_number",
        "2": "page_number",
        "3": "page_number",
    }


def test_pdf_headings_sections_and_ids() -> None:
    items = [(72, 80, "1 Introduction", 14, "tibo")]
    items += stack(["The introduction has one paragraph of body text here."], y0=110)
    items += [(72, 160, "1.1 Scope", 12, "tibo")]
    items += stack(["The scope applies to all goods delivered under the agreement."], y0=190)
    items += [(72, 240, "2 Definitions", 14, "tibo")]
    items += stack(["Terms used in this agreement have the meanings below."], y0=270)
    result = build_paragraphs(pdf_pages([items]), [], [], settings=ParagraphSettings())
    assert [(s.title, s.level, s.parent_id) for s in result.sections] == [
        ("1 Introduction", 1, None),
        ("1.1 Scope", 2, "s0"),
        ("2 Definitions", 1, None),
    ]
    assert [(p.paragraph_id, p.kind, p.section_id) for p in result.paragraphs] == [
        ("p_1_0_0", "heading", "s0"),
        ("p_1_0_1", "body", "s0"),
        ("p_1_1_0", "heading", "s1"),
        ("p_1_1_1", "body", "s1"),
        ("p_1_2_0", "heading", "s2"),
        ("p_1_2_1", "body", "s2"),
    ]


def test_pdf_regions_with_different_gutters_are_read_column_by_column() -> None:
    # top: two columns with the gutter at 295-312; below a title, two columns with the gutter at 347-359
    # (the union of the two layouts has no white channel through the whole page)
    top_l = stack(
        [f"Top left column line {k} of the first article text" for k in range(4)] + ["ends here."],
        x=68,
        y0=60,
        size=8.5,
        pitch=10,
    )
    top_r = stack(
        [f"Top right column line {k} of the first article" for k in range(4)] + ["ends too."],
        x=312,
        y0=60,
        size=8.5,
        pitch=10,
    )
    title = [(68, 200, "A Title Set Across The Whole Width Of The Page Between Articles", 18, "tibo")]
    low_l = stack(
        [f"Lower left column line {k} of the second article, set a good deal wider, okay" for k in range(4)]
        + ["finishes."],
        x=68,
        y0=240,
        size=8.5,
        pitch=10,
    )
    low_r = stack(
        [f"Lower right line {k} of the second article" for k in range(4)] + ["done."],
        x=359,
        y0=240,
        size=8.5,
        pitch=10,
    )
    paras = paras_of(pdf_pages([top_l + top_r + title + low_l + low_r]))
    firsts = [p.text.split(" line")[0] for p in paras]
    assert firsts == [
        "Top left column",
        "Top right column",
        "A Title Set Across The Whole Width Of The Page Between Articles",
        "Lower left column",
        "Lower right",
    ]


def test_pdf_drop_cap_joins_its_word() -> None:
    items = [(72, 128, "O", 34, "tiro")]
    items += stack(
        [
            "ver the past three decades increasing pressure from",
            "governments has required companies to",
            "examine their impact, and this paragraph wraps around",
            "the initial before it reaches the full",
            "width of the column again at the end.",
        ],
        x=100,
        y0=104,
        size=10,
        pitch=12,
    )
    items = items[:4] + [(72, y, t, sz, f) for (x, y, t, sz, f) in items[4:]]
    paras = paras_of(pdf_pages([items]))
    assert len(paras) == 1 and paras[0].text.startswith("Over the past three decades")
    assert paras[0].kind == "body"


def test_columns_of_prose_taken_for_a_table_keep_their_text() -> None:
    lines = body(
        [
            "The first column of running text is long enough to be prose.",
            "It goes on for several lines without any numbers at all.",
        ]
    )
    prose = Table(
        "t0",
        0,
        0,
        2,
        2,
        [
            Cell(0, 0, "The first column of running text is long", 0),
            Cell(0, 1, "enough to be prose and it goes", 0),
            Cell(1, 0, "on for several lines without any numbers", 0),
            Cell(1, 1, "at all in any of its cells, none", 0),
        ],
        (60, 95, 520, 130),
        regions=[(0, (60, 95, 520, 130))],
    )
    assert len(texts([page(lines)], tables=[prose])) == 1
    data = Table(
        "t1",
        0,
        0,
        2,
        2,
        [Cell(0, 0, "Year", 0), Cell(0, 1, "2024", 0), Cell(1, 0, "Sales", 0), Cell(1, 1, "1,136", 0)],
        (60, 95, 520, 130),
        regions=[(0, (60, 95, 520, 130))],
    )
    # a data table whose region swallowed the lines but whose cells do not hold them: they stay
    assert len(texts([page(lines)], tables=[data])) == 1
    held = Table(
        "t2",
        0,
        0,
        2,
        1,
        [Cell(0, 0, lines[0].text, 0), Cell(1, 0, lines[1].text, 0)],
        (60, 95, 520, 130),
        regions=[(0, (60, 95, 520, 130))],
    )
    assert texts([page(lines)], tables=[held]) == []


def test_pdf_body_lines_repeated_on_three_pages_are_not_running_headers() -> None:
    # a three-page form: the same instructions open every page, inside the top margin zone and set
    # like the body (long, punctuated, one line-pitch from the text below); a short running head
    # stands apart above them and is furniture
    def question(i: int) -> list[str]:
        return [
            f"Question {i + 1} asks for the details of applicant number {i + 1}: the name, the",
            "address and the date of birth, as they appear on the passport of the applicant",
            "who signs the form at its end, in the presence of the officer who receives it.",
        ]

    intro = [
        "Please read every question carefully before you answer it in the space below,",
        "and write clearly in black ink; incomplete forms are returned to the sender.",
    ]
    spec = []
    for i in range(3):
        items = [(72, 36, "Form B-7", 8, "tiro")]
        items += stack([*intro, *question(i)], y0=66)
        spec.append(items)
    pages = pdf_pages(spec)
    assert all(ln.bbox[1] <= H * ParagraphSettings().margin_zone for ln in pages[0].lines[:3])
    result = build_paragraphs(pages, [], [], settings=ParagraphSettings())
    texts_ = [p.text for p in result.paragraphs]
    assert texts_ == [" ".join([*intro, *question(i)]) for i in range(3)]
    kinds = {pages[p].lines[i].text: k for p, marks in result.furniture.items() for i, k in marks.items()}
    assert kinds == {"Form B-7": "header"}


def test_pdf_running_header_tight_to_the_body_is_still_furniture() -> None:
    # short and unpunctuated: a running head even when set one line-pitch above the body
    spec = []
    for i in range(3):
        items = [(72, 82, "Annual Report 2024", 8, "tiro")]
        items += stack(
            [
                f"Body text of page {i + 1} that differs from page to page, as body",
                "text does, and it runs on over a third line of the page, as the",
                "body does.",
            ],
            y0=94,
        )
        spec.append(items)
    pages = pdf_pages(spec)
    result = build_paragraphs(pages, [], [], settings=ParagraphSettings())
    assert [p.text for p in result.paragraphs] == [
        f"Body text of page {i + 1} that differs from page to page, as body text does, and it runs on over"
        " a third line of the page, as the body does."
        for i in range(3)
    ]
    assert pages[0].lines[1].bbox[1] <= H * ParagraphSettings().margin_zone
    assert all(list(m.values()) == ["header"] for m in result.furniture.values())


_HE_A = (
    "שלום עולם זה טקסט בעברית ארוך יותר שנמשך על פני כמה שורות של טקסט כדי לבדוק את הסדר"
    " של השורות והמילים בתוך הפסקה."
)
_HE_B = (
    "זוהי הפסקה השנייה והיא מתחילה בשורה חדשה אחרי הפסקה הראשונה ויש בה מספיק מילים כדי"
    " להימשך על פני שלוש שורות לפחות בעמוד."
)


def _html_pages(boxes: list[tuple[tuple[float, float, float, float], str]]) -> list[Page]:
    """One page of right-to-left HTML boxes (PyMuPDF shapes them and writes visual glyph runs)."""
    doc = pymupdf.open()
    pg = doc.new_page(width=W, height=H)
    for rect, html in boxes:
        pg.insert_htmlbox(pymupdf.Rect(*rect), html)
    doc = pymupdf.open("pdf", doc.tobytes())
    return [Page(index=p.number, width=W, height=H, lines=extract_lines(p)) for p in doc]


def test_pdf_right_to_left_paragraphs_keep_ragged_left_lines_together() -> None:
    # a right-to-left paragraph is aligned on the right and ragged on the left: its left edge
    # moves from line to line, which is no indentation
    pages = _html_pages([((72, 150, 520, 400), f'<p dir="rtl">{_HE_A}</p><p dir="rtl">{_HE_B}</p>')])
    assert len({round(ln.bbox[0]) for ln in pages[0].lines}) > 2  # ragged on the left
    assert [p.text for p in paras_of(pages)] == [_HE_A, _HE_B]


def test_pdf_right_to_left_columns_are_read_from_the_right() -> None:
    pages = _html_pages(
        [
            ((310, 150, 520, 700), f'<p dir="rtl">{_HE_A} {_HE_A}</p>'),
            ((72, 150, 285, 700), f'<p dir="rtl">{_HE_B} {_HE_B}</p>'),
        ]
    )
    assert [p.text for p in paras_of(pages)] == [f"{_HE_A} {_HE_A}", f"{_HE_B} {_HE_B}"]


def test_right_to_left_fragments_of_one_line_join_from_the_right() -> None:
    # two fragments of one visual line (one text-layer block): the right one comes first
    right = line("שלום עולם", 300, 100, x1=360, block=0)
    left = line("זה טקסט בעברית.", 200, 100, x1=296, block=0)
    ltr_a, ltr_b = line("Left part", 72, 130, x1=120, block=1), line("right part.", 124, 130, x1=180, block=1)
    paras = build_paragraphs(
        [page([left, right, ltr_b, ltr_a])], [], [], settings=ParagraphSettings()
    ).paragraphs
    assert [p.text for p in paras] == ["שלום עולם זה טקסט בעברית.", "Left part right part."]


def test_ocr_lines_keep_the_ocr_stage_reading_order() -> None:
    # an OCR page: two columns with a short caption set across the gutter between them. The OCR
    # stage read it column by column, the caption after the columns (ocr.order.reading_order);
    # the paragraphs keep that order instead of sorting the lines top-down again, which read
    # every row across both columns when the caption hid the gutter
    left = [f"left column line {i} of running text goes on and" for i in range(8)]
    right = [f"right column line {i} of running text goes on and" for i in range(8)]
    left[-1], right[-1] = "the left column ends here.", "the right column ends here."
    lines = [line(t, 72, 100 + 14 * i, x1=290, block=-1) for i, t in enumerate(left)]
    lines += [line(t, 310, 100 + 14 * i, x1=530, block=-1) for i, t in enumerate(right)]
    lines.append(line("Figure 1", 280, 150, x1=320, size=7, block=-1))
    paras = [p.text for p in build_paragraphs([page(lines)], [], [], settings=ParagraphSettings()).paragraphs]
    assert paras[:2] == [" ".join(left), " ".join(right)]
    assert paras[2:] == ["Figure 1"]


def test_a_caption_across_the_gutter_does_not_hide_the_columns() -> None:
    # text-layer columns narrowed around a short caption set across the gutter between them:
    # the columns are read one after the other and the caption after them, not row by row
    left = [f"Left column line {i} of running text goes on." for i in range(8)]
    right = [f"Right column line {i} of running text goes on." for i in range(8)]
    lines = [line(t, 72, 100 + 14 * i, x1=255 if i in (3, 4) else 290, block=0) for i, t in enumerate(left)]
    lines += [
        line(t, 345 if i in (3, 4) else 310, 100 + 14 * i, x1=530, block=1) for i, t in enumerate(right)
    ]
    lines.append(line("Figure 1", 270, 150, x1=330, size=7, block=2))
    text = " ".join(
        p.text for p in build_paragraphs([page(lines)], [], [], settings=ParagraphSettings()).paragraphs
    )
    assert text == " ".join([*left, *right, "Figure 1"])


def test_pdf_a_number_with_body_text_below_it_in_the_footer_zone_is_not_a_page_number() -> None:
    # a formula's index ("1") reaching into the footer zone, body text under it; the real page
    # number is the page's lowest text. Before: the "1" was a page number and the body line it
    # sits on ("a running head printed beside the page number") was dropped as a footer.
    body = stack(
        [f"Body text line {k} of a long paragraph that runs down the page and on and on" for k in range(3)],
        y0=700,
    )
    beside = [(72, 745, "The time-averaged coefficients", 10, "tiro"), (300, 745, "1", 10, "tiro")]
    below = stack(
        ["can be used to compute the transverse modes of the crystal, as the next lines show,"]
        + [f"with body text line {k} set under the number, down to the bottom margin" for k in range(3)],
        y0=757,
    )
    pages = pdf_pages([body + beside + below + [(290, 830, "7", 9, "tiro")]])
    result = build_paragraphs(pages, [], [], settings=ParagraphSettings())
    kinds = {pages[0].lines[i].text: k for i, k in result.furniture.get(0, {}).items()}
    assert kinds == {"7": "page_number"}
    text = " ".join(p.text for p in result.paragraphs)
    assert "The time-averaged coefficients" in text and "1" in text.split()


def _grid_of_blocks(heads: list[str], bodies_continue: bool = False) -> list[Page]:
    """Four blocks in a 2x2 grid (top-left, top-right, bottom-left, bottom-right), one white band
    of ~3 line heights across the page between the two rows of blocks."""
    items = []
    for k, (x, y0) in enumerate([(68, 80), (320, 80), (68, 200), (320, 200)]):
        items.append((x, y0, heads[k], 11, "tibo"))
        lines = [f"Block {k} text line {j} of the card set here" for j in range(4)]
        if not (bodies_continue and k < 2):
            lines[-1] = f"Block {k} ends its text."
        items += stack(lines, x=x, y0=y0 + 16)
    return pdf_pages([items])


def test_pdf_a_grid_of_blocks_is_read_band_by_band() -> None:
    paras = paras_of(_grid_of_blocks(["North", "East", "South", "West"]))
    order = [p.text.split()[0] for p in paras if p.text.split()[0] in {"North", "East", "South", "West"}]
    assert order == ["North", "East", "South", "West"]


def test_pdf_numbered_blocks_down_the_columns_keep_the_column_order() -> None:
    paras = paras_of(_grid_of_blocks(["1. North", "3. East", "2. South", "4. West"]))
    heads = [p.text.split()[0] for p in paras if p.text[:1].isdigit()]
    assert heads == ["1.", "2.", "3.", "4."]


def test_pdf_columns_whose_sentences_run_through_a_white_band_are_read_down() -> None:
    # the text of each upper block runs on below the band (no full stop, lower-case next line)
    paras = paras_of(_grid_of_blocks(["North", "East", "south", "west"], bodies_continue=True))
    text = " ".join(p.text for p in paras)
    assert text.index("Block 0 text line 3") < text.index("south") < text.index("East")


def test_pdf_a_caption_opening_the_next_column_does_not_cut_the_sentence() -> None:
    # the figure sits at the top of the right column, its caption under it, then the text the
    # left column broke off mid-word goes on
    left = stack(
        [f"Left column line {k} of the story that runs down the page" for k in range(4)]
        + ["and breaks off at the foot of the column in micro-"],
        x=50,
        size=9,
        pitch=11,
    )
    right = stack(
        [
            "Figure 1 | The trap and its ions. The caption is set in",
            "the body font under the figure and ends here.",
            "motion, which the left column began, and the sentence",
            "ends in the right column at last.",
        ],
        x=320,
        y0=200,
        size=9,
        pitch=11,
        gaps={2: 14},
    )
    texts = [p.text for p in paras_of(pdf_pages([left + right]))]
    assert any(
        t.endswith(
            "in micromotion, which the left column began, and the sentence ends in the right column at last."
        )
        for t in texts
    ), texts
    assert (
        "Figure 1 | The trap and its ions. The caption is set in the body font under the figure "
        "and ends here." in texts
    )


def test_pdf_a_number_set_tight_in_a_line_of_text_is_not_a_page_number() -> None:
    # a statistic low on the page whose number the text layer splits off its line ("p <" and
    # "0.0005" as two lines 8 pt apart); the page number at the foot stands apart
    lead = "The difference is significant, p <"
    end = 72 + _font("tiro").text_length(lead, fontsize=9)
    items = stack([f"Body paragraph line {k} that carries the real content of the page." for k in range(3)])
    items += [(72, 770, lead, 9, "tiro"), (end + 8, 770, "0.0005", 9, "tiro"), (290, 830, "7", 9, "tiro")]
    pages = pdf_pages([items])
    assert [ln.text for ln in pages[0].lines if ln.bbox[1] > 700] == [lead, "0.0005", "7"]
    result = build_paragraphs(pages, [], [], settings=ParagraphSettings())
    kinds = {pages[0].lines[i].text: k for i, k in result.furniture.get(0, {}).items()}
    assert kinds == {"7": "page_number"}
    assert "significant, p < 0.0005" in " ".join(p.text for p in result.paragraphs)


def test_pdf_a_stamp_at_the_page_edge_is_furniture_on_a_single_page() -> None:
    # a repository stamp 12 pt from the top edge, small and apart from the body: furniture, though
    # a one-page document cannot show it repeating; a footnote at the foot edge stays body text
    items = [(150, 14, "Downloaded from http://journal.example.org/ on July 12, 2017", 7, "tiro")]
    items += stack([f"Body paragraph line {k} that carries the real content of the page." for k in range(4)])
    items += [(72, 836, "* Corresponding author: a note at the very foot.", 7, "tiro")]
    pages = pdf_pages([items])
    result = build_paragraphs(pages, [], [], settings=ParagraphSettings())
    kinds = {pages[0].lines[i].text: k for i, k in result.furniture.get(0, {}).items()}
    assert kinds == {"Downloaded from http://journal.example.org/ on July 12, 2017": "header"}
    assert "* Corresponding author: a note at the very foot." in [p.text for p in result.paragraphs]


def test_pdf_a_tightly_cropped_page_keeps_its_first_line() -> None:
    # the body starts 14 pt from the top edge: its first line is attached to the lines under it
    items = stack(
        [f"Body paragraph line {k} of a page cropped tight to its text block." for k in range(4)], y0=14
    )
    pages = pdf_pages([items])
    result = build_paragraphs(pages, [], [], settings=ParagraphSettings())
    assert result.furniture.get(0, {}) == {}
    assert " ".join(p.text for p in result.paragraphs).startswith("Body paragraph line 0")


def test_fragments_touching_where_the_text_layer_kept_the_space_in_the_span_stay_two_words() -> None:
    # "Published by " ends in a space its line's text drops; "group.example.com" starts where
    # that span ends: two words, not "bygroup.example.com". Touching fragments without a space
    # in between ("exam" + "ple") stay one word.
    left = line("Published by", 72, 100, x1=140)
    left.spans[0] = Span("Published by ", left.bbox, "Times", 10.0)
    right = line("group.example.com", 140, 100, x1=230)
    split_word = [line("exam", 72, 130, x1=95), line("ple of a word.", 95, 130, x1=160)]
    assert texts([page([left, right, *split_word])]) == [
        "Published by group.example.com",
        "example of a word.",
    ]
