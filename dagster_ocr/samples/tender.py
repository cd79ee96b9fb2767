"""``tender_notice.pdf``: a 3-page born-digital notice with "Page N of 3" footers and a lot table."""

from __future__ import annotations

import pymupdf

from dagster_ocr.samples.settings import SamplesSettings
from dagster_ocr.samples.typeset import A4, GREY, MARGIN_X, TEXT_W, _document, _finish, _Flow, _Fonts, _text

_LOTS = [
    ("1", "Scanning of paper archives (approx. 1.2 million pages)", "14,500,000", "2025-06-30"),
    ("2", "OCR and data extraction services", "22,000,000", "2025-06-30"),
    ("3", "Secure off-site storage, 5 years", "9,800,000", "2025-07-15"),
    ("4", "Retrieval and delivery on demand", "3,600,000", "2025-07-15"),
    ("5", "Destruction of originals with certificate", "1,400,000", "2025-07-31"),
    ("6", "Training of Authority staff (40 persons)", "850,000", "2025-07-31"),
]


def build_tender_notice(settings: SamplesSettings | None = None) -> bytes:
    """A 3-page born-digital tender notice: "Page N of 3" footers, a ruled lot table, no /PageLabels."""
    with _document() as doc:
        return _build_tender_notice(doc, SamplesSettings() if settings is None else settings)


def _build_tender_notice(doc: pymupdf.Document, settings: SamplesSettings) -> bytes:
    f = _Fonts()
    n_pages = 3

    def decorate(page: pymupdf.Page, idx: int) -> None:
        _text(page, MARGIN_X, 50, "Prefectural Records Authority — Public Procurement", f.sans, 8.5, GREY)
        page.draw_line((MARGIN_X, 56), (A4.width - MARGIN_X, 56), color=GREY, width=0.5)
        _text(
            page,
            A4.width - MARGIN_X,
            A4.height - 45,
            f"Page {idx + 1} of {n_pages}",
            f.sans,
            9,
            align="right",
        )
        _text(page, MARGIN_X, A4.height - 45, "Notice No. PRA-2025-031", f.sans, 9, GREY)

    flow = _Flow(doc, f, decorate)
    first = flow.new_page()
    _text(first, MARGIN_X, flow.y + 20, "CONTRACT NOTICE", f.sans_bold, 20)
    flow.space(34)
    flow.para("Open procedure — records digitisation and archiving services", italic=True, size=12)
    flow.heading("Section I: Contracting Authority")
    flow.para(
        "Prefectural Records Authority, 4-1 Otemachi, Chiyoda-ku, Tokyo 100-0004. Contact: Procurement "
        "Office, telephone +81 3 5555 0100, procurement@records.example.jp."
    )
    flow.para(
        "The Authority is a public body. It purchases on its own behalf; the contract is not reserved "
        "for sheltered workshops."
    )
    flow.heading("Section II: Object")
    flow.para(
        "II.1 Title: Digitisation, recognition and archiving of the Authority's paper records, 2025-2028."
    )
    flow.para(
        "II.2 Short description: scanning of approximately 1.2 million pages of files, optical character "
        "recognition, extraction of structured data into a database, secure storage and retrieval on "
        "demand, and certified destruction of originals after the retention period."
    )
    flow.para(
        "II.3 Estimated total value excluding tax: ¥52,150,000. The contract is divided into six lots; "
        "tenders may be submitted for one, several or all lots. Variants are not accepted."
    )
    flow.para(
        "II.4 Duration: 36 months from the award, renewable once for 12 months. The place of performance "
        "is the Authority's premises in Tokyo and the successful tenderer's secure facility."
    )
    flow.heading("Section III: Legal, economic and technical information")
    for text in [
        "III.1 Conditions for participation: registration in the national register of suppliers; no grounds "
        "for exclusion under the Public Procurement Act; valid ISO/IEC 27001 certification.",
        "III.2 Economic standing: minimum yearly turnover of ¥80,000,000 in each of the last three financial "
        "years; professional liability insurance of at least ¥100,000,000.",
        "III.3 Technical ability: at least three comparable contracts in the last five years, each involving "
        "no less than 250,000 scanned pages, with references.",
        "III.4 Deposits: a tender guarantee of 2 % of the estimated value of each lot tendered for is "
        "required, in the form of a bank guarantee.",
    ]:
        flow.para(text)
    # the lot table opens page 2
    flow.new_page()
    flow.heading("Section IV: Lots")
    flow.para(
        "The lots, their estimated values (in yen, excluding tax) and the deadlines for receipt of "
        "tenders are listed in the table below."
    )
    flow.table(
        "Table — Lots",
        ["Lot", "Description", "Estimated value (¥)", "Deadline"],
        [list(row) for row in _LOTS],
        widths=[36.0, 235.0, 100.0, TEXT_W - 371.0],
        aligns=["left", "left", "right", "left"],
        bold_last=False,
    )
    flow.heading("Section V: Procedure")
    for text in [
        "V.1 Award criteria: price 40 %, technical merit 45 %, delivery schedule and quality assurance 15 %.",
        "V.2 Tenders shall be submitted in Japanese or English through the electronic procurement portal "
        "before 17:00 local time on the deadline of the lot concerned.",
        "V.3 Tenderers remain bound by their tenders for 120 days from the deadline for receipt.",
        "V.4 Opening of tenders takes place in public session at the Authority's address on the first "
        "Business Day after each deadline.",
    ]:
        flow.para(text)
    flow.new_page()
    flow.heading("Section VI: Complementary information")
    for text in [
        "VI.1 Questions about this notice may be sent to the contact point until ten days before the "
        "relevant deadline. Answers will be published on the portal.",
        "VI.2 Review procedures: the Tokyo District Court has jurisdiction. An application for review must "
        "be lodged within ten days of notification of the award decision.",
        "VI.3 Date of dispatch of this notice: 2 April 2025.",
    ]:
        flow.para(text)
    assert doc.page_count == n_pages, doc.page_count
    return _finish(doc, "Contract Notice PRA-2025-031", settings)
