"""The text layer on real PDFs: symbol-font bullets, routing of a born-digital page."""

from __future__ import annotations

import pymupdf

from dagster_ocr.textlayer import TextSettings, _symbol_glyphs, extract_lines, route_page


def test_unmapped_wingdings_bullets_become_bullet_marks(corpus):
    # us-005 draws its list bullets in Wingdings without a /ToUnicode map: raw 0x99 glyphs
    with pymupdf.open(corpus / "tables/icdar2013/us-005/us-005.pdf") as doc:
        lines = extract_lines(doc[0])
    bullets = [ln for ln in lines if ln.text.startswith("•")]
    assert len(bullets) == 5
    assert not any("\x99" in ln.text for ln in lines)


def test_symbol_glyph_mapping_only_touches_symbol_fonts():
    assert _symbol_glyphs("\x99", "Wingdings-Regular") == "•"
    assert _symbol_glyphs("\uf0b7 item", "SymbolMT") == "• item"
    assert _symbol_glyphs("\x99", "Helvetica") == "\x99"  # left for validation to flag
    assert _symbol_glyphs("§ ¥ €", "Wingdings") == "§ ¥ €"


def test_born_digital_page_keeps_its_text_layer(corpus):
    with pymupdf.open(corpus / "tables/icdar2013/eu-003/eu-003.pdf") as doc:
        lines = extract_lines(doc[0])
    needs_ocr, reason = route_page(lines, 0.0, TextSettings())
    assert not needs_ocr and reason == "text layer sound"
    assert route_page(lines, 0.0, TextSettings(ocr_mode="always"))[0]
    assert route_page([], 0.0, TextSettings())[0]
