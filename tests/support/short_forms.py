"""Generated short documents whose pages share their lines: contracts, forms, form letters, notices.

The furniture detector finds running headers and footers by repetition: a line that recurs (digits
normalised) in the top or bottom band of many pages. A short document whose *body* recurs the same
way (a form printed once per applicant, a form letter run off per customer, a two-line contract
page) looks like furniture and nothing else; before issue 35 such documents lost every line to
furniture and were quarantined ("text_extracted: observed 0").

``make_form(seed)`` prints one such document with PyMuPDF and returns it with what the pipeline must
keep. The class is ``CLASSES[seed % len(CLASSES)]``; page size, page count, fonts, sizes, where the
text sits (often wholly inside the margin bands) and which lines repeat or vary only in their
numbers are drawn from ``random.Random(seed)``. What is asserted of every case (tests and
bench/conservation.py ``--forms``): each page that prints words keeps words as body text, and the
document's body holds most of its characters (furniture never takes all or most of a document).

Used by tests/unit/test_furniture_short_docs.py and bench/conservation.py.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import pymupdf

CLASSES = ["contract", "form", "form_letter", "notice", "slip"]

#: (width, height) in points: A4, Letter, A5, A6, a landscape slip
SIZES = [(595.0, 842.0), (612.0, 792.0), (420.0, 595.0), (298.0, 420.0), (420.0, 200.0)]
FONTS = ["helv", "tiro", "cour"]

_PARTIES = ["Acme Ltd", "Beta GmbH", "Northwind SARL", "Contoso plc", "Globex BV", "Initech AB"]
_FIELDS = ["Name of applicant", "Date of birth", "Address", "Reference", "Amount due", "Signature"]


@dataclass(slots=True)
class FormCase:
    """One generated document and what it prints."""

    seed: int
    cls: str
    doc: pymupdf.Document
    #: per page, the text lines printed on it, in order
    lines: list[list[str]] = field(default_factory=list)
    #: lines a reader takes for page furniture (a "Page 2 of 3" footer): allowed to leave the body
    furniture: list[list[str]] = field(default_factory=list)


def _writer(page: pymupdf.Page, case: FormCase, i: int, font: str, size: float):
    def put(x: float, y: float, text: str, *, furniture: bool = False, sz: float | None = None) -> None:
        sz = sz or size
        room = page.rect.width - x - 12
        while sz > 5 and pymupdf.get_text_length(text, fontname=font, fontsize=sz) > room:
            sz -= 0.5  # set smaller rather than run off a narrow page
        page.insert_text((x, y), text, fontname=font, fontsize=sz)
        (case.furniture if furniture else case.lines)[i].append(text)

    return put


def make_form(seed: int) -> FormCase:
    """The document of class ``CLASSES[seed % len(CLASSES)]`` drawn from ``random.Random(seed)``."""
    rng = random.Random(seed)
    cls = CLASSES[seed % len(CLASSES)]
    w, h = rng.choice(SIZES[:4]) if cls != "slip" else SIZES[4]
    n_pages = rng.randint(1, 4) if cls in ("form", "slip") else rng.randint(2, 4)
    font = rng.choice(FONTS)
    size = rng.choice([8.0, 9.0, 10.0, 11.0])
    pitch = size * rng.uniform(1.3, 1.8)
    margin = rng.uniform(0.05, 0.1) * h  # where the text starts: in the top band (12 % of the height)
    x = rng.uniform(36, 72) if w > 300 else 24.0
    numbered = rng.random() < 0.5  # a "Page k of n" footer
    a, b = rng.sample(_PARTIES, 2)
    case = FormCase(seed, cls, pymupdf.open())
    for i in range(n_pages):
        page = case.doc.new_page(width=w, height=h)
        case.lines.append([])
        case.furniture.append([])
        put = _writer(page, case, i, font, size)
        y = margin + size
        n = rng.randint(10, 99) + 17 * i  # a number that differs from page to page
        if cls == "contract":
            # two lines a page: one the same on every page, one differing only in its numbers
            put(x, y, f"Service agreement between {a} and {b}")
            put(x, y + pitch, f"Contract no. 2024-{n} signed on {i + 3} March 2024")
        elif cls == "form":
            put(x, y, f"Application form B-{rng.randint(2, 9)}", sz=size + 2)
            for k, name in enumerate(rng.sample(_FIELDS, rng.randint(2, 5))):
                yy = y + (k + 1.5) * pitch
                put(x, yy, f"{k + 1}. {name}:")
                if rng.random() < 0.6:
                    put(x + 0.45 * w, yy, f"{n + k}-{rng.randint(100, 999)}")
        elif cls == "form_letter":
            put(x, y, f"{a} · Customer service")
            put(x, y + pitch, f"Your reference {n}/{2024 + i}, {i + 2} May 2024")
            put(x, y + 3 * pitch, "Dear customer,")
            put(x, y + 4 * pitch, f"your payment of {n} EUR has been received. Thank you.")
            put(x, y + 5 * pitch, f"Yours sincerely, {b}")
        elif cls == "notice":
            # one line a page, in the bottom band: a reminder printed per recipient
            put(x, h - margin, f"Reminder: invoice {n} of {i + 1} June is due within 14 days.")
        else:  # slip: a receipt on a small landscape page, text across the whole height
            put(x, 0.08 * h + size, f"Receipt {n}", sz=size + 1)
            put(x, 0.45 * h, f"Received from {a}: {n}.00 EUR")
            put(x, 0.9 * h, "Thank you for your payment")
        if numbered and n_pages > 1:
            put(w / 2 - 20, h - 0.04 * h, f"Page {i + 1} of {n_pages}", furniture=True, sz=size - 1)
    return case


def _squash(text: str) -> str:
    return "".join(text.split())


def taken_lines(case: FormCase, paragraphs, tables) -> list[str]:
    """The printed lines (furniture aside) that are in no paragraph and no table cell."""
    kept = _squash(
        " ".join([p.text for p in paragraphs.paragraphs] + [c.text for t in tables for c in t.cells])
    )
    return [
        f"page {i}: {text!r}"
        for i, printed in enumerate(case.lines)
        for text in printed
        if _squash(text) not in kept
    ]


def body_problems(pages, paragraphs, tables) -> list[str]:
    """What furniture does wrong to a document (empty: nothing): a page that prints words left
    without body text, furniture taking most of the document's characters
    (``furniture_max_share``), characters lost. ``pages``, ``paragraphs``, ``tables``: the text,
    paragraph and table stages' output."""
    from dagster_ocr.conservation import DocumentAccount, account_text
    from dagster_ocr.paragraphs import ParagraphSettings

    accounts = account_text(pages, paragraphs, tables)
    problems = []
    by_index = {p.index: p for p in pages}
    for a in accounts:
        words = any(any(c.isalpha() for c in ln.text) for ln in by_index[a.page_index].lines)
        if words and a.chars and a.furniture == a.chars:
            problems.append(f"page {a.page_index}: all {a.chars} characters taken for furniture")
    total = DocumentAccount.of(accounts)
    furniture = sum(total.counts[k] for k in ("page_number", "header", "footer"))
    if total.chars and furniture > ParagraphSettings().furniture_max_share * total.chars:
        problems.append(f"furniture takes {furniture} of {total.chars} characters")
    if total.counts["lost"]:
        problems.append(f"{total.counts['lost']} characters lost")
    return problems
