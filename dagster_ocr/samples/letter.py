"""``scanned_letter.png``: a one-page business letter, typeset and then 'scanned' to a greyscale image."""

from __future__ import annotations

import pymupdf

from dagster_ocr.samples.settings import SamplesSettings
from dagster_ocr.samples.typeset import (
    A4,
    BLACK,
    GREY,
    MARGIN_X,
    TEXT_W,
    _document,
    _Fonts,
    _scan,
    _text,
    _wrap,
)


def build_scanned_letter(settings: SamplesSettings | None = None) -> bytes:
    """A one-page business letter rendered to a greyscale PNG (an image-only input)."""
    with _document() as doc:
        return _build_scanned_letter(doc, SamplesSettings() if settings is None else settings)


def _build_scanned_letter(doc: pymupdf.Document, settings: SamplesSettings) -> bytes:
    f = _Fonts()
    page = doc.new_page(width=A4.width, height=A4.height)
    _text(page, MARGIN_X, 80, "Northwind Logistics GmbH", f.sans_bold, 16)
    _text(page, MARGIN_X, 98, "Am Sandtorkai 50, 20457 Hamburg, Germany", f.sans, 10, GREY)
    page.draw_line((MARGIN_X, 108), (A4.width - MARGIN_X, 108), color=BLACK, width=0.8)
    y = 150.0
    for line in [
        "Kaito Systems K.K.",
        "Attn. Mr Haruto Tanaka",
        "2-7-1 Marunouchi, Chiyoda-ku",
        "Tokyo 100-0005, Japan",
    ]:
        _text(page, MARGIN_X, y, line, f.serif, 12)
        y += 17
    _text(page, A4.width - MARGIN_X, 150, "Hamburg, 14 May 2025", f.serif, 12, align="right")
    y += 30
    _text(page, MARGIN_X, y, "Re: Contract No. KS-2025-0417, notice of acceptance", f.serif_bold, 12)
    y += 34
    body = [
        "Dear Mr Tanaka,",
        "We confirm that the transition plan delivered on 28 May 2025 meets the requirements of § 2.2 of the "
        'Service Agreement. The milestone "Transition plan accepted" in Table 1 is therefore achieved, and '
        "your invoice for ¥1,800,000 (about €11,250) may be issued.",
        "Please note that our accounts department requires the contract number on every invoice. Invoices "
        "without it will be returned unpaid.",
        "We look forward to the start of the monthly services in June.",
        "Yours sincerely,",
    ]
    for para in body:
        for line in _wrap(para, f.serif, 12, TEXT_W):
            _text(page, MARGIN_X, y, line, f.serif, 12)
            y += 17
        y += 12
    y += 40
    _text(page, MARGIN_X, y, "Anna Becker", f.serif, 12)
    _text(page, MARGIN_X, y + 17, "Managing Director", f.serif, 12)
    pix = _scan(doc, settings, seed_offset=1)
    return pix.tobytes("png")
