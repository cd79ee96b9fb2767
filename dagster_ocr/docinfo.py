"""What a document is: its title, issuer, type, period and language, from its first pages.

A question in a shared knowledge base names a company and a year ("Tesla's capital expenditure
in 2023"); the chunks that answer it say neither (a cash-flow row knows its statement, not its
filer). :func:`describe` reads them once per document from the text of its first pages and its
metadata, so the ``documents`` row, every citation and every chunk's indexed context carry them.

The rules read the shapes documents of a kind share, not any one document: an SEC filing's cover
("FORM 10-K", "For the fiscal year ended ...", the name over "(Exact name of registrant as
specified in its charter)"), the words that name a contract, a tender or an invoice, a company's
legal-form suffix, a stop-word count for the language. What they cannot tell is left empty.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass

#: first-page forms of regulatory filings, most specific first
_FORMS = (
    ("10-K", re.compile(r"\bFORM\s+10-?K\b", re.I)),
    ("10-Q", re.compile(r"\bFORM\s+10-?Q\b", re.I)),
    ("8-K", re.compile(r"\bFORM\s+8-?K\b", re.I)),
    ("20-F", re.compile(r"\bFORM\s+20-?F\b", re.I)),
    ("S-1", re.compile(r"\bFORM\s+S-1\b", re.I)),
)
#: other kinds, by the words their first page uses (first match wins)
_KINDS = (
    ("invoice", re.compile(r"\binvoice\s*(?:no\.?|number|#|date)|\bfactura\b|\brechnung\b", re.I)),
    (
        "tender",
        re.compile(
            r"\b(?:invitation\s+to\s+tender|call\s+for\s+tenders?|request\s+for\s+(?:proposals?|quotations?|"
            r"tenders?)|tender\s+(?:notice|documents?|dossier)|contract\s+notice|procurement)\b",
            re.I,
        ),
    ),
    ("annual report", re.compile(r"\bannual\s+report\b|\bgesch[äa]ftsbericht\b|\brapport\s+annuel\b", re.I)),
    ("quarterly report", re.compile(r"\bquarterly\s+report\b|\binterim\s+report\b", re.I)),
    (
        "contract",
        re.compile(
            r"\b(?:agreement|contract|lease|memorandum\s+of\s+understanding|terms\s+and\s+conditions)\b", re.I
        ),
    ),
    ("report", re.compile(r"\breport\b", re.I)),
)
_REGISTRANT = re.compile(r"\(\s*exact\s+name\s+of\s+(?:the\s+)?registrant", re.I)
_LEGAL = re.compile(
    r"^[A-Z0-9][\w&.,'’\- ]{1,80}?\b(?:Inc\.?|Incorporated|Corp\.?|Corporation|Company|Co\.|Ltd\.?|Limited|"
    r"LLC|L\.L\.C\.|plc|PLC|AG|SE|GmbH|S\.A\.|SA|N\.V\.|B\.V\.|S\.p\.A\.|AB|ASA|Oyj|K\.K\.|Holdings?)$"
)
_MONTHS = {
    m: i + 1
    for i, m in enumerate(
        "january february march april may june july august september october november december".split()
    )
}
_PERIOD = re.compile(
    r"\b(?:for\s+the\s+)?(fiscal\s+year|quarterly\s+period|year|period|quarter|six\s+months|nine\s+months)"
    r"\s+ended\s+(" + "|".join(_MONTHS) + r")\s+(\d{1,2}),?\s+((?:19|20)\d\d)",
    re.I,
)
#: an 8-K's cover: its date ("Date of Report (Date of earliest event reported): February 1, 2023"), on
#: the label's line or the lines around it
_REPORT_DATE = re.compile(r"\bdate\s+of\s+(?:report|earliest\s+event)", re.I)
_DATE = re.compile(r"\b(" + "|".join(_MONTHS) + r")\s+(\d{1,2}),?\s+((?:19|20)\d\d)", re.I)
_STOPWORDS = {
    "en": "the of and to in is that for with as by this are be on which from".split(),
    "de": "der die und das ist nicht mit von den des zu sich auf für eine".split(),
    "fr": "le la les et des est une pour dans que par sur du qui aux".split(),
    "es": "el la los las y de que en por con para una del se al".split(),
    "it": "il la le di che per una sono con del della dei gli nel".split(),
    "nl": "de het een en van dat is op te voor met zijn niet aan".split(),
    "pt": "o os as e de que em para com uma do da dos não por".split(),
}
_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)


@dataclass(frozen=True, slots=True)
class DocumentInfo:
    """What a document is; an empty string (or None) where its pages do not say."""

    title: str = ""
    issuer: str = ""
    doc_type: str = ""
    period_end: str = ""  # ISO date, "2024-09-28"
    fiscal_year: int | None = None
    language: str = ""

    def as_row(self) -> dict[str, object]:
        """The ``documents`` columns."""
        return {k: (v if v != "" else None) for k, v in asdict(self).items()}

    def context(self) -> str:
        """One line a chunk is indexed with: "Apple Inc. 10-K fiscal year 2024", "Apple Inc. 10-Q
        quarter ended December 30, 2023" (a quarter's end says more than its calendar year, which
        is not the issuer's fiscal year when that ends in September), "Tesla, Inc. 8-K dated
        January 24, 2024"."""
        parts = [self.issuer, self.doc_type]
        printed = _printed(self.period_end)
        if self.doc_type == "10-Q" and printed:
            parts.append(f"quarter ended {printed}")
        elif self.doc_type == "8-K" and printed:
            parts.append(f"dated {printed}")
        elif self.fiscal_year:
            parts.append(f"fiscal year {self.fiscal_year}")
        text = " ".join(p for p in parts if p)
        if self.title and self.title.casefold() not in text.casefold() and not self.doc_type:
            text = f"{self.title} {text}".strip()
        return text


def _iso(month: str, day: str, year: str) -> str:
    try:
        return dt.date(int(year), _MONTHS[month.lower()], int(day)).isoformat()
    except ValueError:
        return ""


def _printed(iso: str) -> str:
    """ "2024-06-29" as a cover prints it: "June 29, 2024" ("" for no date)."""
    try:
        day = dt.date.fromisoformat(iso)
    except ValueError:
        return ""
    return f"{day:%B} {day.day}, {day.year}"


def _report_date(lines: Sequence[str]) -> str:
    """An 8-K's date of report, from the cover's label and the date on its line or the two lines
    after or before it (covers print the date above, beside or below its label); "" without one."""
    for i, line in enumerate(lines[:120]):
        if _REPORT_DATE.search(line):
            for near in (line, *lines[i + 1 : i + 3], *reversed(lines[max(0, i - 2) : i])):
                if m := _DATE.search(near):
                    return _iso(*m.groups())
    return ""


def _issuer(lines: Sequence[str]) -> str:
    for i, line in enumerate(lines):
        if _REGISTRANT.search(line):
            for prev in reversed(lines[max(0, i - 3) : i]):
                name = prev.strip()
                if name and not name.startswith("(") and not re.search(r"\d{3}-\d", name):
                    return name[:120]
    for line in lines[:80]:
        name = " ".join(line.split())
        if 3 <= len(name) <= 80 and _LEGAL.match(name):
            return name
    return ""  # the metadata's author is the person who made the file, not the issuer


def _language(text: str) -> str:
    words = Counter(w.casefold() for w in _WORD.findall(text[:20000]))
    scores = {lang: sum(words[w] for w in stop) for lang, stop in _STOPWORDS.items()}
    best = max(scores, key=lambda k: scores[k])
    total = sum(words.values())
    return best if total >= 20 and scores[best] >= 0.08 * total else ""


def _title(metadata_title: str, first_page: Sequence[tuple[str, float]], doc_type: str, issuer: str) -> str:
    meta = " ".join((metadata_title or "").split())
    # a metadata title that is words, not a file or job name ("Microsoft Word - x.docx", "doc1")
    if (
        len(_WORD.findall(meta)) >= 2
        and not re.search(r"\.(?:docx?|pdf|xlsx?|indd|tmp)\b|^microsoft\b|^untitled", meta, re.I)
        and sum(c.isdigit() for c in meta) < len(meta) / 3
    ):
        return meta[:200]
    if doc_type in {f for f, _ in _FORMS} and issuer:
        return f"{issuer} Form {doc_type}"
    sized = [(t, s) for t, s in first_page if len(_WORD.findall(t)) >= 1 and len(t) <= 150]
    sizes = sorted(s for _, s in first_page if s > 0)
    body = sizes[(len(sizes) - 1) // 2] if sizes else 0.0
    if sized and max(s for _, s in sized) > body + 0.5:  # a title is printed larger than the body
        biggest = max(s for _, s in sized)
        # the first lines in that size (a title wrapped over lines, maybe beside a sidebar's lines):
        # a heading in that size after two lines of body text is a section, not more of the title
        parts: list[str] = []
        body_lines = 0
        for t, size in first_page:
            if size >= biggest - 0.1 and (t, size) in sized:
                parts.append(" ".join(t.split()))
                body_lines = 0
            elif parts and size <= body + 0.5:
                body_lines += 1
                if body_lines >= 2:
                    break
        top = " ".join(parts[:3])
        if len(_WORD.findall(top)) >= 2 and sum(len(w) for w in _WORD.findall(top)) >= 6:
            return top[:200]
    return ""


def describe(
    first_pages: Sequence[Sequence[tuple[str, float]]],
    metadata: dict[str, str] | None = None,
) -> DocumentInfo:
    """What a document is, from its first pages' lines as (text, font size) pairs (size 0 where
    unknown: OCR) and its PDF metadata (``title``, ``author``)."""
    meta = metadata or {}
    lines = [" ".join(t.split()) for page in first_pages for t, _ in page if t.strip()]
    text = "\n".join(lines)
    head = "\n".join(lines[:120])
    doc_type = next((name for name, rx in _FORMS if rx.search(head)), "")
    if not doc_type:
        # a kind is what the cover calls the document: its largest print (its first lines where
        # the print has one size), not a word met in the body ("the agreement" in a report's text)
        cover = first_pages[0] if first_pages else []
        big = max((size for _, size in cover), default=0.0)
        named = [t for t, size in cover if big and size >= big - 0.5] or [t for t, _ in cover[:2]]
        title_text = "\n".join(named + [meta.get("title", "")])
        doc_type = next((name for name, rx in _KINDS if rx.search(title_text)), "")
    issuer = _issuer(lines)
    period_end = ""
    fiscal_year = None
    if m := _PERIOD.search(text):
        period_end = _iso(*m.groups()[1:])
        # a year is a fiscal year only where a year's period is stated (a report's body names many
        # years; a quarter ended in December 2023 may be in fiscal 2024): its end's calendar year
        if period_end and " ".join(m.group(1).lower().split()) in ("fiscal year", "year"):
            fiscal_year = int(period_end[:4])
    if not period_end and doc_type == "8-K":  # a current report covers a day, not a period
        period_end = _report_date(lines)
    return DocumentInfo(
        title=_title(meta.get("title", ""), first_pages[0] if first_pages else [], doc_type, issuer),
        issuer=issuer,
        doc_type=doc_type,
        period_end=period_end,
        fiscal_year=fiscal_year,
        language=_language(text),
    )
