"""Paragraph and section reconstruction on synthetic pages."""

from __future__ import annotations

from dagster_ocr.model import LabelSource, Line, Page, PageLabel, Span, Table
from dagster_ocr.paragraphs import ParagraphSettings, build_paragraphs, clause_number

W, H = 595.0, 842.0


def line(text: str, x0: float, y0: float, size: float = 10.0, *, x1: float | None = None,
         bold: bool = False, italic: bool = False, block: int = 0) -> Line:
    """A text-layer line; width is estimated from the text unless given."""
    x1 = x1 if x1 is not None else x0 + 0.5 * size * len(text)
    bbox = (x0, y0, x1, y0 + 1.2 * size)
    return Line(text=text, bbox=bbox, spans=[Span(text, bbox, "Times", size, bold, italic)], block=block)


def page(lines: list[Line], index: int = 0) -> Page:
    return Page(index=index, width=W, height=H, lines=lines)


def texts(pages: list[Page], labels: list[PageLabel] | None = None,
          tables: list[Table] | None = None) -> list[str]:
    return [p.text for p in build_paragraphs(pages, labels or [], tables or []).paragraphs]


def body(lines: list[str], x0: float = 72, y0: float = 100, pitch: float = 12.0,
         x1: float = 500) -> list[Line]:
    """Full-width justified lines at a tight pitch (last one short)."""
    out = []
    for i, t in enumerate(lines):
        right = x1 if i < len(lines) - 1 else x0 + 5 * len(t)
        out.append(line(t, x0, y0 + i * pitch, x1=right))
    return out


def test_new_clause_starts_paragraph_despite_tight_spacing() -> None:
    lines = body(["(a) the buyer shall pay the price within thirty days of delivery of", "the goods; and",
                  "(b) the seller shall deliver the goods at the agreed place.",
                  "Article 5 Either party may terminate this agreement by notice",
                  "第五条 本合同自双方签字之日起生效。"])
    paras = build_paragraphs([page(lines)], [], []).paragraphs
    assert [p.text for p in paras] == [
        "(a) the buyer shall pay the price within thirty days of delivery of the goods; and",
        "(b) the seller shall deliver the goods at the agreed place.",
        "Article 5 Either party may terminate this agreement by notice",
        "第五条 本合同自双方签字之日起生效。",
    ]
    assert [p.kind for p in paras] == ["clause"] * 4


def test_wrapped_number_does_not_split_a_sentence() -> None:
    lines = body(["The amount was increased several times until",
                  "2010. After that it stayed flat for years."])
    assert texts([page(lines)]) == ["The amount was increased several times until 2010. After that it stayed "
                                    "flat for years."]


def test_clause_numbers() -> None:
    assert clause_number("Article 5 Scope") == "Article 5"
    assert clause_number("ARTICLE V") == "ARTICLE V"
    assert clause_number("第五条 规定") == "第五条"
    assert clause_number("5.2 Scope") == "5.2"
    assert clause_number("(a) text") == "a"
    assert clause_number("§ 3 Text") == "§ 3"
    assert clause_number("1. First") == "1"
    assert clause_number("Plain text") == ""


def test_hyphenation_and_cjk_joining() -> None:
    lines = body(["This is a long exam-", "ple of the Self-", "Locking nut, see the well-", "Known case."])
    expected = "This is a long example of the Self-Locking nut, see the well-Known case."
    assert texts([page(lines)]) == [expected]
    cjk = body(["本合同适用于双方之间的全部交易", "并自签字之日起生效。"])
    assert texts([page(cjk)]) == ["本合同适用于双方之间的全部交易并自签字之日起生效。"]


def test_gap_relative_to_line_height_and_indentation() -> None:
    first = body(["The first paragraph runs over two lines of text that are justified", "and end here."])
    second = body(["The second paragraph starts after a gap of one line height and", "ends here."], y0=136)
    assert len(texts([page(first + second)])) == 2
    # same absolute gap, but in 30pt type the gap is small: one paragraph
    big = [line("Large type line one goes on", 72, 100, 30, x1=500),
           line("and continues here.", 72, 140, 30, x1=300)]
    assert len(texts([page(big)])) == 1
    # tight spacing, but the next paragraph has a first-line indent
    indented = body(["Body text of the first paragraph, long enough to be justified here",
                     "and more body text",
                     "that ends the paragraph here."])
    indented.append(line("Indented start of the next paragraph, again long enough", 90, 136, x1=500))
    indented.append(line("to wrap onto a second line.", 72, 148, x1=220))
    assert len(texts([page(indented)])) == 2


def test_two_columns_read_column_by_column() -> None:
    title = line("A Title Across Both Columns", 72, 60, 16, x1=520, bold=True, block=0)
    left = [line(f"left column line {i} with some words in it.", 72, 100 + 12 * i, x1=285, block=1)
            for i in range(6)]
    right = [line(f"Right column line {i} with some words too", 310, 100 + 12 * i, x1=523, block=2)
             for i in range(6)]
    lines = [title] + [x for pair in zip(left, right, strict=True) for x in pair]  # interleaved, as in PDFs
    result = build_paragraphs([page(lines)], [], [])
    paras = [p.text for p in result.paragraphs]
    assert paras[0] == "A Title Across Both Columns"
    joined = " ".join(paras[1:])
    assert joined.index("left column line 5") < joined.index("Right column line 0")
    assert all("left" not in p or "Right" not in p for p in paras)
    assert paras[-1].startswith("Right column line 0") and paras[-1].endswith("line 5 with some words too")


def test_column_flow_continues_unfinished_sentence() -> None:
    left = [line("The agreement binds both parties and remains in force", 72, 100 + 12 * i, x1=285, block=1)
            for i in range(4)]
    right = [line("until it is terminated by either party in writing.", 310, 100, x1=523, block=2)]
    right += [line(f"Another paragraph of the right column number {i}.", 310, 130 + 12 * i, x1=523, block=3)
              for i in range(3)]
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
    result = build_paragraphs([page(lines)], [], [])
    secs = result.sections
    assert [(s.section_id, s.title, s.level, s.parent_id) for s in secs] == [
        ("s0", "1 Introduction", 1, None),
        ("s1", "1.1 Scope", 2, "s0"),
        ("s2", "Definitions", 2, "s0"),
        ("s3", "2 Methods", 1, None),
    ]
    assert secs[1].number == "1.1"
    kinds = [(p.kind, p.section_id) for p in result.paragraphs]
    assert kinds == [("heading", "s0"), ("body", "s0"), ("heading", "s1"), ("body", "s1"),
                     ("heading", "s2"), ("body", "s2"), ("heading", "s3"), ("body", "s3")]


def test_legal_headings_article_and_chinese() -> None:
    lines = [line("ARTICLE V", 250, 80, 10, bold=True), line("The parties agree as follows.", 72, 110),
             line("第五条", 250, 140, 10, bold=True), line("本合同自签字之日起生效。", 72, 170)]
    result = build_paragraphs([page(lines)], [], [])
    assert [s.title for s in result.sections] == ["ARTICLE V", "第五条"]
    assert [s.number for s in result.sections] == ["ARTICLE V", "第五条"]


def test_cross_page_continuation() -> None:
    p0 = page(body(["A paragraph that is long enough to fill the line and keeps going",
                    "and the contract shall remain in force until it is"], y0=700, x1=500)
              [:1] + [line("and the contract shall remain in force until it is", 72, 712, x1=500)], 0)
    p1 = page([line("terminated by either party.", 72, 80, x1=210),
               line("A new paragraph.", 72, 110, x1=160)], 1)
    labels = [PageLabel(0, "iv", LabelSource.PDF, 1.0), PageLabel(1, "v", LabelSource.PDF, 1.0)]
    paras = build_paragraphs([p0, p1], labels, []).paragraphs
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
        lines = [line(f"ACME Annual Report {2024} - Page {i + 1}", 72, 30, 8, x1=300),
                 line("Confidential draft", 72, 800, 8, x1=200),
                 line(f"Body text on page {i} that is a sentence.", 72, 300, x1=300),
                 line(str(i + 1), 290, 815, 8, x1=300)]
        pages.append(page(lines, i))
    labels = [PageLabel(i, str(i + 1), LabelSource.PRINTED, 0.9, line_index=3) for i in range(4)]
    result = build_paragraphs(pages, labels, [])
    expected = [f"Body text on page {i} that is a sentence." for i in range(4)]
    assert [p.text for p in result.paragraphs] == expected
    assert [ln.furniture for ln in pages[0].lines] == ["header", "footer", None, "page_number"]
    lines = [line("Pre-marked running head", 72, 300, x1=300), line("Real text.", 72, 330, x1=150)]
    lines[0].furniture = "header"
    assert texts([page(lines)]) == ["Real text."]


def test_table_regions_excluded() -> None:
    lines = [line("Text before the table.", 72, 100, x1=200),
             line("cell A", 72, 130, x1=120), line("cell B", 200, 130, x1=250),
             line("Text after the table.", 72, 170, x1=200)]
    table = Table("t0", 0, 0, 1, 2, [], (60, 125, 300, 150), regions=[(0, (60, 125, 300, 150))])
    assert texts([page(lines)], tables=[table]) == ["Text before the table.", "Text after the table."]


def test_symbols_survive_and_flags() -> None:
    lines = body(["Under § 3 the fee is € 12 or ¥ 1500, © ACME ™, 20 °C ± 2."])
    lines.append(line("Broken \ufffd glyph here.", 72, 140, x1=200))
    paras = build_paragraphs([page(lines)], [], []).paragraphs
    assert paras[0].text == "Under § 3 the fee is € 12 or ¥ 1500, © ACME ™, 20 °C ± 2."
    assert paras[0].flags == []
    assert paras[1].flags == ["replacement_char"]


def test_wingdings_bullets_become_list_items() -> None:
    lines = [line("\x84", 60, 100, 10, x1=66), line("First option of the list", 72, 100, x1=200),
             line("\x84", 60, 114, 10, x1=66), line("Second option", 72, 114, x1=150)]
    paras = build_paragraphs([page(lines)], [], []).paragraphs
    assert [(p.text, p.kind, p.flags) for p in paras] == [
        ("• First option of the list", "list_item", []), ("• Second option", "list_item", [])]


def test_ids_unique_and_shaped() -> None:
    pages = []
    for i in range(3):
        pages.append(page([line("Heading Same", 72, 200, 14, x1=200, bold=True),
                           line("Body one.", 72, 240, x1=150), line("Body two.", 72, 270, x1=150)], i))
    labels = [PageLabel(i, "A 1", LabelSource.PDF, 1.0) for i in range(3)]  # duplicate labels on purpose
    result = build_paragraphs(pages, labels, [])
    ids = [p.paragraph_id for p in result.paragraphs]
    assert len(set(ids)) == len(ids) == 9
    assert ids[:3] == ["p_A-1_0_0", "p_A-1_0_1", "p_A-1_0_2"]
    assert [p.reading_order for p in result.paragraphs] == list(range(9))
    assert [s.section_id for s in result.sections] == ["s0", "s1", "s2"]
    front = build_paragraphs([page([line("No heading yet.", 72, 100, x1=150)])], [], [])
    assert front.paragraphs[0].paragraph_id == "p_1_n_0" and front.paragraphs[0].section_id is None


def test_settings_reject_unknown_keys() -> None:
    import pydantic
    import pytest

    with pytest.raises(pydantic.ValidationError):
        ParagraphSettings(gap_factr=1.0)  # type: ignore[call-arg]
    assert ParagraphSettings(gap_factor=2.0).gap_factor == 2.0


def test_empty_input() -> None:
    result = build_paragraphs([page([])], [], [])
    assert result.paragraphs == [] and result.sections == []
