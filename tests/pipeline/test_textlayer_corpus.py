"""The text layer on real PDFs: symbol-font bullets, routing of a born-digital page."""

from __future__ import annotations

import pymupdf

from dagster_ocr.textlayer import TextSettings, _font_facts, _symbol_glyphs, extract_lines, route_page


def test_unmapped_wingdings_bullets_become_bullet_marks(corpus):
    # us-005 draws its list bullets in Wingdings without a /ToUnicode map: raw 0x99 glyphs
    with pymupdf.open(corpus / "tables/icdar2013/us-005/us-005.pdf") as doc:
        lines = extract_lines(doc[0])
    bullets = [ln for ln in lines if ln.text.startswith("•")]
    assert len(bullets) == 5
    assert not any("\x99" in ln.text for ln in lines)


def test_symbol_glyph_mapping_only_touches_symbol_fonts():
    def glyphs(text: str, font: str) -> str:  # what extract_lines does per span
        return _symbol_glyphs(text) if _font_facts(font)[1] else text

    assert glyphs("\x99", "Wingdings-Regular") == "•"
    assert glyphs("\uf0b7 item", "SymbolMT") == "• item"
    assert glyphs("\x99", "Helvetica") == "\x99"  # left for validation to flag
    assert glyphs("§ ¥ €", "Wingdings") == "§ ¥ €"


def test_born_digital_page_keeps_its_text_layer(corpus):
    with pymupdf.open(corpus / "tables/icdar2013/eu-003/eu-003.pdf") as doc:
        lines = extract_lines(doc[0])
    needs_ocr, reason = route_page(lines, 0.0, TextSettings())
    assert not needs_ocr and reason == "text layer sound"
    assert route_page(lines, 0.0, TextSettings(ocr_mode="always"))[0]
    assert route_page([], 0.0, TextSettings())[0]


def _page_with_image(doc: pymupdf.Document, text: str) -> None:
    page = doc.new_page(width=400, height=500)
    pix = pymupdf.Pixmap(pymupdf.csGRAY, pymupdf.IRect(0, 0, 40, 50), False)
    pix.clear_with(200)
    page.insert_image(page.rect, pixmap=pix)  # a "scan" covering the whole page
    page.insert_textbox(pymupdf.Rect(20, 20, 380, 480), text, fontsize=9)


def test_scan_with_a_thin_text_layer_is_routed_to_ocr_and_coverage_is_measured_where_it_matters():
    from dagster_ocr.textlayer import iter_pages

    doc = pymupdf.open()
    _page_with_image(doc, "Scanned page 1")  # a thin OCR layer on top of a full-page image
    _page_with_image(doc, "Plenty of real text on top of a background image. " * 12)
    doc.new_page(width=400, height=500).insert_textbox(
        pymupdf.Rect(20, 20, 380, 480), "A born-digital page without images. " * 12, fontsize=9
    )
    thin, full, plain = list(iter_pages(doc, TextSettings()))
    assert thin.image_coverage > 0.95 and "image covers" in thin.route_reason
    assert full.image_coverage > 0.95 and full.route_reason == "text layer sound"
    # no image in the page's resources and more text than scan_max_chars: coverage cannot change the
    # route, so the second page interpretation that measures it is skipped
    assert plain.image_coverage == 0.0 and plain.route_reason == "text layer sound"
