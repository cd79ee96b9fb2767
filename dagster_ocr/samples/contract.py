"""``service_agreement.pdf``: cover, front matter, the clauses, a scanned annex; and ``SAMPLE_FACTS``."""

from __future__ import annotations

import math
from typing import Any

import pymupdf

from dagster_ocr.samples.clauses import _PAYMENT_ROWS, _TABLE_HEADER, _contract_body
from dagster_ocr.samples.settings import SamplesSettings
from dagster_ocr.samples.typeset import (
    A4,
    BLACK,
    GREY,
    MARGIN_X,
    TEXT_W,
    _document,
    _finish,
    _Flow,
    _Fonts,
    _scan,
    _text,
    _width,
    _wrap,
)

#: the running header of the body pages (``SAMPLE_FACTS["running_header"]``)
HEADER_TEXT = "Service Agreement — Confidential"
_FRONT = ["i", "ii"]

_DEFINITIONS = [
    ("Agreement", "this service agreement, including its Annexes and the payment schedule in Table 1."),
    ("Business Day", "a day other than a Saturday, Sunday or public holiday in Tokyo or in Hamburg."),
    ("Charges", "the fees payable by the Customer under § 4, stated in Japanese yen (¥) unless noted."),
    (
        "Confidential Information",
        "any information disclosed by one party to the other that is marked "
        "confidential or that a reasonable person would treat as confidential.",
    ),
    (
        "Deliverables",
        "all documents, software and other materials supplied by the Supplier in the course "
        "of the Services, whether or not listed in Annex A.",
    ),
    ("Effective Date", "1 April 2025."),
    (
        "Intellectual Property Rights",
        "patents, copyright © and related rights, trade marks, database rights "
        "and all similar rights anywhere in the world.",
    ),
    ("Service Levels", "the performance standards set out in § 2.2 and measured monthly."),
    ("Services", "the document processing and archiving services described in § 2.1."),
    ("Term", "the period described in § 3.1, as extended or shortened under this Agreement."),
]


def _decorate_body(page: pymupdf.Page, number: str, fonts: _Fonts) -> None:
    """Running header with a rule, and the printed page number centred in the footer."""
    _text(page, MARGIN_X, 50, HEADER_TEXT, fonts.sans, 8.5, GREY)
    _text(
        page,
        A4.width - MARGIN_X,
        50,
        "Kaito Systems K.K. / Northwind Logistics GmbH",
        fonts.sans,
        8.5,
        GREY,
        align="right",
    )
    page.draw_line((MARGIN_X, 56), (A4.width - MARGIN_X, 56), color=GREY, width=0.5)
    _text(page, A4.width / 2, A4.height - 45, number, fonts.serif, 10, align="center")


def _cover(page: pymupdf.Page, f: _Fonts) -> None:
    cx = A4.width / 2
    _text(page, cx, 200, "SERVICE AGREEMENT", f.sans_bold, 26, align="center")
    _text(page, cx, 232, "for document processing and archiving services", f.serif_italic, 13, align="center")
    page.draw_line((cx - 120, 258), (cx + 120, 258), color=BLACK, width=0.8)
    _text(page, cx, 310, "between", f.serif, 12, align="center")
    _text(page, cx, 340, "Kaito Systems K.K.", f.serif_bold, 14, align="center")
    _text(page, cx, 358, "2-7-1 Marunouchi, Chiyoda-ku, Tokyo 100-0005, Japan", f.serif, 11, align="center")
    _text(page, cx, 376, '(the "Supplier")', f.serif, 11, align="center")
    _text(page, cx, 414, "and", f.serif, 12, align="center")
    _text(page, cx, 444, "Northwind Logistics GmbH", f.serif_bold, 14, align="center")
    _text(page, cx, 462, "Am Sandtorkai 50, 20457 Hamburg, Germany", f.serif, 11, align="center")
    _text(page, cx, 480, '(the "Customer")', f.serif, 11, align="center")
    _text(page, cx, 560, "Dated 1 April 2025", f.serif, 12, align="center")
    _text(page, cx, 580, "Contract No. KS-2025-0417", f.serif, 12, align="center")
    _text(page, cx, 700, "CONFIDENTIAL", f.sans_bold, 11, align="center")
    _text(page, cx, 760, "© 2025 Kaito Systems K.K. All rights reserved.", f.serif, 9, GREY, align="center")


def _toc(page: pymupdf.Page, f: _Fonts, entries: list[tuple[str, str, int]]) -> None:
    """Table of contents entries ``(title, page label, level)`` with dot leaders."""
    _text(page, MARGIN_X, 110, "Table of Contents", f.sans_bold, 16)
    y = 150.0
    right = A4.width - MARGIN_X
    for title, label, level in entries:
        x = MARGIN_X + 20 * level
        _text(page, x, y, title, f.serif, 11)
        tw = _width(title, f.serif, 11) + 20 * level
        lw = _width(label, f.serif, 11)
        # dot leaders, as in a real table of contents
        dots_w = right - lw - 6 - (MARGIN_X + tw + 6)
        n = int(dots_w / _width(" .", f.serif, 11))
        if n > 0:
            _text(page, right - lw - 6, y, " ." * n, f.serif, 11, GREY, align="right")
        _text(page, right, y, label, f.serif, 11, align="right")
        y += 22


def _glossary(page: pymupdf.Page, f: _Fonts) -> None:
    _text(page, MARGIN_X, 110, "Glossary of Defined Terms", f.sans_bold, 16)
    y = 145.0
    for term, meaning in _DEFINITIONS:
        lines = _wrap(f"means {meaning}", f.serif, 10.5, TEXT_W - 150)
        _text(page, MARGIN_X, y, f"“{term}”", f.serif_bold, 10.5)
        for line in lines:
            _text(page, MARGIN_X + 150, y, line, f.serif, 10.5)
            y += 14.5
        y += 7


def _signature_page(doc: pymupdf.Document, number: str, f: _Fonts) -> None:
    """The annex that gets 'scanned' (drawn into the empty ``doc``): large, clear print so OCR reads it."""
    page = doc.new_page(width=A4.width, height=A4.height)
    _decorate_body(page, number, f)
    _text(page, MARGIN_X, 120, "Annex B — Signature Page", f.sans_bold, 16)
    y = 160.0
    intro = (
        "IN WITNESS WHEREOF the parties have executed this Agreement by their duly authorised "
        "representatives on the dates written below."
    )
    for line in _wrap(intro, f.serif, 12, TEXT_W):
        _text(page, MARGIN_X, y, line, f.serif, 12)
        y += 17
    for party, name, title, date in [
        ("Signed for Kaito Systems K.K.", "Haruto Tanaka", "Representative Director", "1 April 2025"),
        ("Signed for Northwind Logistics GmbH", "Anna Becker", "Managing Director", "3 April 2025"),
    ]:
        y += 40
        _text(page, MARGIN_X, y, party, f.serif_bold, 13)
        y += 60
        # a hand-drawn-looking squiggle stands in for the signature
        # a cursive-looking stroke: a drifting curve with loops (trochoid), fixed so it is deterministic
        ts = [k / 160 * 6 * math.pi for k in range(161)]
        pts = [
            pymupdf.Point(
                MARGIN_X + 15 + 28 * t / math.pi - 9 * math.sin(2 * t),
                y - 16 - 12 * math.cos(2 * t) * (1 - t / (8 * math.pi)),
            )
            for t in ts
        ]
        page.draw_polyline(pts, color=(0.1, 0.1, 0.45), width=1.3)
        page.draw_line((MARGIN_X, y), (MARGIN_X + 230, y), color=BLACK, width=0.6)
        _text(page, MARGIN_X, y + 18, f"Name: {name}", f.serif, 12)
        _text(page, MARGIN_X, y + 36, f"Title: {title}", f.serif, 12)
        _text(page, MARGIN_X + 280, y + 18, f"Date: {date}", f.serif, 12)
        y += 40
    y += 90
    _text(
        page,
        MARGIN_X,
        y,
        "Witnessed by the notary public, Tokyo Legal Affairs Bureau, Reg. No. 1187.",
        f.serif_italic,
        11.5,
    )


def build_service_agreement(settings: SamplesSettings | None = None) -> tuple[bytes, dict[str, Any]]:
    """Build the contract; returns its bytes and the facts measured while laying it out."""
    with _document() as doc:
        return _build_service_agreement(doc, SamplesSettings() if settings is None else settings)


def _build_service_agreement(
    doc: pymupdf.Document, settings: SamplesSettings
) -> tuple[bytes, dict[str, Any]]:
    f = _Fonts()
    _cover(doc.new_page(width=A4.width, height=A4.height), f)
    for num in _FRONT:
        page = doc.new_page(width=A4.width, height=A4.height)
        _text(page, A4.width / 2, A4.height - 45, num, f.serif, 10, align="center")
    # page objects go stale once later pages are added: reload by index when writing into them
    gloss_page = doc.load_page(2)
    _glossary(gloss_page, f)
    n_front = 1 + len(_FRONT)

    def body_number(index: int) -> str:
        return str(index - n_front + 1)

    flow = _Flow(doc, f, lambda page, idx: _decorate_body(page, body_number(idx), f))
    _contract_body(flow)

    scan_index = doc.page_count
    with _document() as scan_src:
        _signature_page(scan_src, body_number(scan_index), f)
        pix = _scan(scan_src, settings)
    scan_page = doc.new_page(width=A4.width, height=A4.height)
    scan_page.insert_image(scan_page.rect, stream=pix.tobytes("png"))

    # top-level clauses only ("4. Fees and Payment", not "2.1 Scope")
    toc = [(t, body_number(i), 0) for t, i in flow.anchors.items() if t.split(" ")[0].endswith(".")]
    at = next(i for i, (t, _, _) in enumerate(toc) if t.startswith("4.")) + 1
    toc.insert(at, ("Table 1 — Payment schedule", body_number(min(flow.table_rows)), 1))
    toc = [
        ("Glossary of Defined Terms", _FRONT[1], 0),
        *toc,
        ("Annex B — Signature Page", body_number(scan_index), 0),
    ]
    toc_page = doc.load_page(1)
    _toc(toc_page, f, toc)

    doc.set_page_labels(
        [
            {"startpage": 0, "prefix": "Cover", "style": "", "firstpagenum": 1},
            {"startpage": 1, "prefix": "", "style": "r", "firstpagenum": 1},
            {"startpage": n_front, "prefix": "", "style": "D", "firstpagenum": 1},
        ]
    )
    labels = ["Cover", *_FRONT] + [body_number(i) for i in range(n_front, doc.page_count)]
    measured = {
        "n_pages": doc.page_count,
        "labels": labels,
        "table_pages": sorted(flow.table_rows),
        "table_rows_per_page": [flow.table_rows[p] for p in sorted(flow.table_rows)],
        "scanned_page_index": scan_index,
        "section_pages": dict(flow.anchors),
    }
    return _finish(doc, "Service Agreement", settings), measured


#: What ``service_agreement.pdf`` contains (0-based physical page indexes). Tests assert that the
#: generator still produces exactly this, so pipeline tests can rely on it.
SAMPLE_FACTS: dict[str, Any] = {
    "file_name": "service_agreement.pdf",
    "n_pages": 8,
    # /PageLabels as page.get_label() returns them; they equal the numbers printed in the footers
    # (the cover prints none; "Cover" is its prefix-only label)
    "labels": ["Cover", "i", "ii", "1", "2", "3", "4", "5"],
    "printed_numbers": [None, "i", "ii", "1", "2", "3", "4", "5"],
    "front_matter_pages": [1, 2],
    "body_first_page_index": 3,
    "running_header": HEADER_TEXT,
    "header_pages": [3, 4, 5, 6, 7],
    "symbols": ["§", "¥", "€", "©"],
    "fee_sentence": "a monthly service fee of ¥1,200,000 (about €7,500) per § 4.2",
    "scanned_page_index": 7,
    "scanned_page_text": ["Annex B — Signature Page", "Haruto Tanaka", "Anna Becker"],
    "table": {
        "caption": "Table 1 — Payment schedule (amounts in ¥, excluding tax)",
        "continued_caption": "Table 1 (continued)",
        "header": list(_TABLE_HEADER),
        "n_cols": 3,
        "pages": [4, 5],
        # rows drawn per page, the header row included (it is repeated on the continuation page)
        "rows_per_page": [7, 21],
        "n_data_rows": 25,
        # one header + 25 data rows + the total row, once the continuation is merged
        "n_rows_merged": 27,
        "first_row": list(_PAYMENT_ROWS[0]),
        "last_row": list(_PAYMENT_ROWS[-1]),
        "total": _PAYMENT_ROWS[-1][2],
    },
    "sections": [
        "1. Definitions and Interpretation",
        "2. Services",
        "2.1 Scope",
        "2.2 Service Levels",
        "2.3 Subcontracting",
        "3. Term and Termination",
        "4. Fees and Payment",
        "5. Intellectual Property",
        "6. Confidentiality",
        "7. Liability",
        "8. Data Protection",
        "9. Governing Law and Disputes",
        "10. General",
    ],
}
