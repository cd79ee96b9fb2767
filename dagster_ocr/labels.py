"""Page labels: the name a reader uses for a page ("iv", "12", "A-3"), not its physical index.

Two sources, in this order of trust:

1. The PDF's own ``/PageLabels`` number tree (``pdf_page_labels``). It is read here directly
   through PyMuPDF's low-level xref API and a small PDF object parser, not through
   ``Document.get_page_labels()``: MuPDF 1.28 returns prefixes stored as hex UTF-16 strings
   undecoded (``<FEFF0058>3`` instead of ``X3``), and reading the tree ourselves also lets a
   malformed tree (cycles, wrong types, dangling references) be logged and skipped instead of
   raising. All styles are supported (D, R, r, A, a, no style = prefix only), with prefixes and
   ``/St`` start values; nodes with ``/Kids`` are walked recursively.
2. Page numbers printed in the header and footer zones of each page (``infer_printed_labels``):
   arabic, roman, "Page 3 of 40", "- 3 -", "3/40", "第3页", "A-3". Each candidate number votes for
   a run ``(style, prefix, offset)`` where ``value = page_index + offset``; a Viterbi pass over the
   pages picks the best sequence of runs (switching runs costs a penalty), so a single misread
   number is outvoted, missing numbers are filled from the run, and roman front matter followed
   by arabic numbering or a restart is a switch between two runs.

Policy when both exist and disagree: **/PageLabels win** per page, because the author put them
there on purpose and viewers show them; their confidence drops (``pdf_disagree_confidence``)
when a well-supported printed run says otherwise. They are ignored as *clearly broken* when a
document of two or more pages gives every page the same label (all "1", all empty): then the
printed-number inference (or the physical fallback) is used. A page whose /PageLabels label is
empty (outside every range, or a range with neither style nor prefix) also falls back to the
printed inference for that page.

The first or last line of a page also counts as a candidate outside the zones when it is only a
number, centred and set apart (a cropped page whose number sits right under the text).
``pages_for_label`` and ``label_for_page`` look labels up both ways (a label may repeat).

``PageLabel.line_index`` points at the printed page-number line whenever one is found on the
page (also when the label itself comes from /PageLabels), so the paragraph stage can drop it.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import pymupdf
from pydantic import BaseModel, ConfigDict, Field

from dagster_ocr.model import LabelSource, Page, PageLabel

log = logging.getLogger(__name__)


class LabelSettings(BaseModel):
    """Tunables of the page-label stage."""

    model_config = ConfigDict(extra="forbid")

    use_pdf_labels: bool = Field(
        True, description="Read the PDF's /PageLabels tree when the document has one."
    )
    zone_fraction: float = Field(
        0.12, description="Height share at the top and at the bottom of a page searched for printed numbers."
    )
    max_lines_per_zone: int = Field(
        6, description="Only this many lines nearest the page edge, per zone, are page-number candidates."
    )
    edge_numbers: bool = Field(
        True, description="Also accept a number at the start or end of a running header/footer line."
    )
    isolated_edge_lines: bool = Field(
        True,
        description="Also take the first and last line of a page, outside the zones, when it is only a "
        "number, centred, and set apart (cropped pages, short last pages).",
    )
    isolated_gap: float = Field(
        1.5, description="... set apart by at least this many of its own line heights from the next line."
    )
    isolated_centre: float = Field(
        0.08, description="... centred within this share of the page width of the page's centre."
    )
    strong_weight: float = Field(
        1.0, description="Vote of an explicit pattern: 'Page 3', '- 3 -', '3/40', '第3页'."
    )
    bare_weight: float = Field(0.9, description="Vote of a line that is only a number ('12', 'iv', 'A-3').")
    edge_weight: float = Field(
        0.5, description="Vote of a number at the edge of a longer header/footer line."
    )
    switch_penalty: float = Field(
        1.5, description="Cost of switching runs between pages; above one vote so a lone misread is outvoted."
    )
    contradiction_weight: float = Field(
        0.3, description="Share of a candidate's vote charged to a run that the page's numbers contradict."
    )
    restart_penalty: float = Field(
        0.5,
        description="Cost of switching to a run that starts at 1 on that page (body after front matter, "
        "a chapter restart): cheaper than other switches, so a restart on the last page is still seen.",
    )
    min_run_support: int = Field(
        2,
        description="Runs seen on fewer pages are dropped, unless the lone number is a whole line that is "
        "not far ahead of the physical page (see lone_max_lead), or no run reaches this support.",
    )
    lone_max_lead: int = Field(
        10,
        description="A number seen on one page only is kept as a run when it exceeds the 1-based physical "
        "page number by at most this much ('iii' on the third page yes, a year '2023' on the cover no).",
    )
    max_runs: int = Field(
        64, description="Keep at most this many candidate runs (by support) in the inference."
    )
    max_arabic: int = Field(99999, description="Largest arabic number taken as a page number.")
    max_roman: int = Field(500, description="Largest roman number taken as a page number.")
    physical_confidence: float = Field(0.1, description="Confidence of the physical fallback label.")
    pdf_confidence: float = Field(
        0.95, description="Confidence of a /PageLabels label with no printed evidence."
    )
    pdf_disagree_confidence: float = Field(
        0.7, description="Confidence of a /PageLabels label contradicted by a supported printed run."
    )


# --------------------------------------------------------------------------------------------
# Label formatting


_ROMAN = [
    (1000, "m"), (900, "cm"), (500, "d"), (400, "cd"), (100, "c"), (90, "xc"),
    (50, "l"), (40, "xl"), (10, "x"), (9, "ix"), (5, "v"), (4, "iv"), (1, "i"),
]  # fmt: skip


def to_roman(n: int) -> str:
    """Lower-case roman numeral of ``n`` >= 1 (thousands repeat 'm', as pdf.js and pypdf do)."""
    out = []
    for value, digits in _ROMAN:
        count, n = divmod(n, value)
        out.append(digits * count)
    return "".join(out)


def _from_roman(text: str) -> int | None:
    """Value of a canonical roman numeral (either case), or None ('iiii', 'vx' are rejected)."""
    t = text.lower()
    if not t or any(c not in "ivxlcdm" for c in t):
        return None
    values = {"i": 1, "v": 5, "x": 10, "l": 50, "c": 100, "d": 500, "m": 1000}
    total = 0
    for i, c in enumerate(t):
        v = values[c]
        total += -v if i + 1 < len(t) and values[t[i + 1]] > v else v
    return total if total > 0 and to_roman(total) == t else None


def _to_letters(n: int) -> str:
    """A..Z, AA..ZZ, AAA.. (PDF 32000 12.4.2: the letter repeats)."""
    return chr(ord("A") + (n - 1) % 26) * ((n - 1) // 26 + 1)


def format_label(style: str, prefix: str, value: int) -> str:
    """The label text of page number ``value`` in PDF style ``style`` ('' = prefix only)."""
    if style == "D":
        body = str(value)
    elif style == "r":
        body = to_roman(value)
    elif style == "R":
        body = to_roman(value).upper()
    elif style == "a":
        body = _to_letters(value).lower()
    elif style == "A":
        body = _to_letters(value)
    else:
        body = ""
    return prefix + body


# --------------------------------------------------------------------------------------------
# A minimal PDF object parser (for the text PyMuPDF's xref API returns)


class _Ref(NamedTuple):
    xref: int


class _Name(str):
    """A PDF name (``/S``), kept apart from strings."""


_WS = " \t\r\n\f\x00"
_DELIM = "()<>[]{}/%"
_ESCAPES = {"n": 10, "r": 13, "t": 9, "b": 8, "f": 12, "(": 40, ")": 41, "\\": 92}


class _Parser:
    def __init__(self, text: str):
        self.t = text
        self.i = 0

    def _ws(self) -> None:
        t = self.t
        while self.i < len(t):
            if t[self.i] in _WS:
                self.i += 1
            elif t[self.i] == "%":
                while self.i < len(t) and t[self.i] not in "\r\n":
                    self.i += 1
            else:
                break

    def _token(self) -> str:
        start = self.i
        while self.i < len(self.t) and self.t[self.i] not in _WS and self.t[self.i] not in _DELIM:
            self.i += 1
        return self.t[start : self.i]

    def value(self) -> Any:
        self._ws()
        t = self.t
        if self.i >= len(t):
            raise ValueError("unexpected end of object")
        c = t[self.i]
        if t.startswith("<<", self.i):
            return self._dict()
        if c == "<":
            return self._hex()
        if c == "(":
            return self._literal()
        if c == "[":
            return self._array()
        if c == "/":
            self.i += 1
            return _Name(re.sub(r"#([0-9A-Fa-f]{2})", lambda m: chr(int(m.group(1), 16)), self._token()))
        tok = self._token()
        if not tok:
            raise ValueError(f"unexpected {c!r} at {self.i}")
        if tok in ("true", "false"):
            return tok == "true"
        if tok == "null":
            return None
        if re.fullmatch(r"[+-]?\d+", tok):
            # "n g R" is a reference; anything else leaves the integer alone
            save = self.i
            self._ws()
            gen = self._token()
            if re.fullmatch(r"\d+", gen):
                self._ws()
                if self._token() == "R":
                    return _Ref(int(tok))
            self.i = save
            return int(tok)
        return float(tok)  # raises ValueError on junk, which the caller logs

    def _dict(self) -> dict[str, Any]:
        self.i += 2
        out: dict[str, Any] = {}
        while True:
            self._ws()
            if self.t.startswith(">>", self.i):
                self.i += 2
                return out
            key = self.value()
            if not isinstance(key, _Name):
                raise TypeError(f"dictionary key {key!r} is not a name")
            out[str(key)] = self.value()

    def _array(self) -> list[Any]:
        self.i += 1
        out: list[Any] = []
        while True:
            self._ws()
            if self.i < len(self.t) and self.t[self.i] == "]":
                self.i += 1
                return out
            out.append(self.value())

    def _hex(self) -> bytes:
        end = self.t.index(">", self.i)
        digits = re.sub(r"\s", "", self.t[self.i + 1 : end])
        self.i = end + 1
        if len(digits) % 2:
            digits += "0"  # PDF 32000 7.3.4.3: a missing final digit is 0
        return bytes.fromhex(digits)

    def _literal(self) -> bytes:
        t = self.t
        self.i += 1
        depth = 1
        out = bytearray()
        while self.i < len(t):
            c = t[self.i]
            self.i += 1
            if c == "\\":
                if self.i >= len(t):
                    break
                e = t[self.i]
                self.i += 1
                if e in _ESCAPES:
                    out.append(_ESCAPES[e])
                elif e in "01234567":
                    digits = e
                    while len(digits) < 3 and self.i < len(t) and t[self.i] in "01234567":
                        digits += t[self.i]
                        self.i += 1
                    out.append(int(digits, 8) & 0xFF)
                elif e == "\r":
                    if self.i < len(t) and t[self.i] == "\n":
                        self.i += 1
                elif e != "\n":
                    out.extend(e.encode("utf-8"))
                continue
            if c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
                if depth == 0:
                    return bytes(out)
            out.extend(bytes([ord(c)]) if ord(c) < 256 else c.encode("utf-8"))
        raise ValueError("unterminated string")


def _parse(text: str) -> Any:
    return _Parser(text).value()


# PDFDocEncoding where it differs from Latin-1 (PDF 32000 Annex D)
_PDFDOC = {
    **dict(zip(range(0x18, 0x20), "˘ˇˆ˙˝˛˚˜", strict=True)),
    **dict(zip(range(0x80, 0x9F), "•†‡…—–ƒ⁄‹›−‰„“”‘’‚™ﬁﬂŁŒŠŸŽıłœšž", strict=True)),
    0xA0: "€",
}


def decode_pdf_text(raw: bytes) -> str:
    """Decode a PDF text string: UTF-16 (BOM), UTF-8 (BOM) or PDFDocEncoding."""
    if raw[:2] == b"\xfe\xff":
        return raw[2:].decode("utf-16-be", errors="replace")
    if raw[:2] == b"\xff\xfe":
        return raw[2:].decode("utf-16-le", errors="replace")
    if raw[:3] == b"\xef\xbb\xbf":
        return raw[3:].decode("utf-8", errors="replace")
    return "".join(_PDFDOC.get(b, chr(b)) for b in raw)


_HEX_TEXT = re.compile(r"<((?:FEFF|FFFE|EFBBBF)[0-9A-Fa-f\s]*)>", re.IGNORECASE)


def decode_hex_prefix(text: str) -> str:
    """Decode hex text strings left undecoded in ``text`` ('<FEFF0058>3' -> 'X3').

    For labels that came through ``Document.get_page_labels()``/``Page.get_label()``, which
    return such prefixes raw in PyMuPDF 2.0.
    """

    def repl(m: re.Match[str]) -> str:
        digits = re.sub(r"\s", "", m.group(1))
        if len(digits) % 2:
            return m.group(0)
        return decode_pdf_text(bytes.fromhex(digits))

    return _HEX_TEXT.sub(repl, text)


# --------------------------------------------------------------------------------------------
# /PageLabels


_MAX_DEPTH = 32  # number trees are shallow; deeper means a cycle or garbage


class _Resolver:
    def __init__(self, doc: pymupdf.Document):
        self.doc = doc
        self.n_xref = doc.xref_length()

    def __call__(self, v: Any) -> Any:
        for _ in range(_MAX_DEPTH):
            if not isinstance(v, _Ref):
                return v
            if not 0 < v.xref < self.n_xref:
                raise ValueError(f"dangling reference {v.xref} 0 R")
            v = _parse(self.doc.xref_object(v.xref, compressed=True))
        raise ValueError("reference chain too long")


def _collect_nums(
    resolve: _Resolver, node: Any, out: dict[int, dict[str, Any]], seen: set[int], depth: int
) -> None:
    """Walk a number tree node (``/Nums`` leaves, ``/Kids`` children) into ``out``."""
    if depth > _MAX_DEPTH:
        raise ValueError("number tree too deep")
    if isinstance(node, _Ref):
        if node.xref in seen:
            log.warning("page labels: number tree cycle at %d 0 R, skipped", node.xref)
            return
        seen.add(node.xref)
    node = resolve(node)
    if not isinstance(node, dict):
        raise TypeError(f"number tree node is {type(node).__name__}, not a dictionary")
    nums = resolve(node.get("Nums"))
    if nums is not None:
        if not isinstance(nums, list):
            raise ValueError("/Nums is not an array")
        for key, value in zip(nums[0::2], nums[1::2], strict=False):
            value = resolve(value)
            if isinstance(key, int) and not isinstance(key, bool) and isinstance(value, dict):
                out.setdefault(key, value)
            else:
                log.warning("page labels: bad /Nums entry %r -> %r, skipped", key, value)
    kids = resolve(node.get("Kids"))
    if isinstance(kids, list):
        for kid in kids:
            _collect_nums(resolve, kid, out, seen, depth + 1)


def _range_rule(entry: dict[str, Any]) -> tuple[str, str, int]:
    style = entry.get("S")
    style = str(style) if isinstance(style, _Name) and str(style) in ("D", "R", "r", "A", "a") else ""
    if entry.get("S") is not None and not style:
        log.warning("page labels: unknown style %r, using the prefix only", entry.get("S"))
    prefix = entry.get("P")
    prefix = decode_pdf_text(prefix) if isinstance(prefix, bytes) else ""
    start = entry.get("St", 1)
    start = int(start) if isinstance(start, int | float) and not isinstance(start, bool) and start >= 1 else 1
    return style, prefix, start


def pdf_page_labels(doc: pymupdf.Document) -> list[str] | None:
    """Labels of every page from the PDF's /PageLabels tree, or None when it has none.

    Pages before the first range get an empty label (the caller falls back for them). A
    malformed tree is logged and gives None: it never raises.
    """
    try:
        if not getattr(doc, "is_pdf", False) or doc.page_count == 0:
            return None
        catalog = doc.pdf_catalog()
        if catalog <= 0:
            return None
        kind, value = doc.xref_get_key(catalog, "PageLabels")
        if kind in ("null", "") or not value:
            return None
        ranges: dict[int, dict[str, Any]] = {}
        _collect_nums(_Resolver(doc), _parse(value), ranges, set(), 0)
        starts = sorted(k for k in ranges if 0 <= k < doc.page_count)
        if not starts:
            log.warning("page labels: /PageLabels has no usable range")
            return None
        labels = [""] * doc.page_count
        for i, start in enumerate(starts):
            style, prefix, first = _range_rule(ranges[start])
            end = starts[i + 1] if i + 1 < len(starts) else doc.page_count
            for page in range(start, end):
                labels[page] = format_label(style, prefix, first + page - start)
        return labels
    # a broken tree is the document's fault (MuPDF raises its own types too): record a fallback, not a crash
    except Exception as exc:  # noqa: BLE001
        log.warning("page labels: unreadable /PageLabels tree (%s: %s)", type(exc).__name__, exc)
        return None


# --------------------------------------------------------------------------------------------
# Printed page numbers


@dataclass(slots=True, frozen=True)
class _Candidate:
    line_index: int
    style: str  # "D", "r" or "R"
    prefix: str
    value: int
    weight: float
    #: the whole line is the number (with its decoration): surely page furniture
    whole_line: bool

    @property
    def label(self) -> str:
        return format_label(self.style, self.prefix, self.value)


_NUM = r"(?P<num>\d{1,5}|[ivxlcdmIVXLCDM]{1,9})"
_STRONG = [
    re.compile(
        r"^(?:page|pg\.?|p\.|seite|s\.|página|pagina|side|sida|strona|str\.|стр\.?|страница)\s*" + _NUM
        + r"(?:\s*(?:of|/|von|de|di|sur|из|z|av|af)\s*(?P<total>\d{1,5}))?$",
        re.IGNORECASE,
    ),
    re.compile(r"^[-–—~]\s*" + _NUM + r"\s*[-–—~]$"),
    re.compile(r"^[\[(]\s*" + _NUM + r"\s*[\])]$"),
    re.compile(r"^(?P<num>\d{1,5})\s*/\s*(?P<total>\d{1,5})$"),
    re.compile(r"^(?:共\s*(?P<total0>\d+)\s*页\s*[,，]?\s*)?第\s*(?P<num>\d{1,5}|[〇零一二两三四五六七八九十百千]+)\s*页"
               r"(?:\s*[,，/]?\s*共\s*(?P<total>\d{1,5})\s*页)?$"),
]  # fmt: skip
_BARE = re.compile(r"^" + _NUM + r"$")
_PREFIXED = re.compile(r"^(?P<prefix>[A-Z]{1,3}\s?[-–.]\s?|\d{1,2}\s?[-–]\s?)(?P<num>\d{1,4})$")
_EDGE_START = re.compile(r"^(?P<num>\d{1,4}|[ivxlcdm]{1,7})\s+\S.{2,}$")
_EDGE_END = re.compile(r"^.{2,}\S\s+(?P<num>\d{1,4}|[ivxlcdm]{1,7})$")

_CJK_DIGITS = dict(zip("〇零一二两三四五六七八九", (0, 0, 1, 2, 2, 3, 4, 5, 6, 7, 8, 9), strict=True))
_CJK_UNITS = {"十": 10, "百": 100, "千": 1000}


def _cjk_number(text: str) -> int | None:
    """Value of a simple Chinese numeral ('十二' -> 12, '一百零五' -> 105)."""
    total, digit = 0, None
    for c in text:
        if c in _CJK_DIGITS:
            digit = _CJK_DIGITS[c]
        elif c in _CJK_UNITS:
            total += (1 if digit is None else digit) * _CJK_UNITS[c]
            digit = None
        else:
            return None
    return total + (digit or 0)


def _normalise(text: str) -> str:
    text = text.replace("\u00a0", " ").replace("\u2212", "-").replace("\u2010", "-").replace("\u2011", "-")
    return re.sub(r"\s+", " ", text).strip()


def _number(token: str, settings: LabelSettings, allow_upper_roman: bool = True) -> tuple[str, int] | None:
    """(style, value) of a printed number token, or None when it is not a plausible page number."""
    if token.isdigit() and token.isascii():
        value = int(token)
        return ("D", value) if 1 <= value <= settings.max_arabic else None
    if re.fullmatch(r"[〇零一二两三四五六七八九十百千]+", token):
        value = _cjk_number(token)
        return ("D", value) if value and value <= settings.max_arabic else None
    value = _from_roman(token)
    if value is None or value > settings.max_roman:
        return None
    if token.islower():
        return "r", value
    if token.isupper() and allow_upper_roman:
        return "R", value
    return None


def _parse_line(text: str, line_index: int, settings: LabelSettings) -> _Candidate | None:
    """The page-number candidate a header/footer line carries, if any."""
    text = _normalise(text)
    if not text or len(text) > 80:
        return None
    for pattern in _STRONG:
        m = pattern.match(text)
        if m:
            num = _number(m.group("num"), settings)
            if num is None:
                continue
            total = m.groupdict().get("total")
            if total and int(total) < num[1]:
                continue  # "7/3" is a fraction or a date, not page 7 of 3
            return _Candidate(line_index, num[0], "", num[1], settings.strong_weight, True)
    m = _BARE.match(text)
    if m:
        num = _number(m.group("num"), settings)
        if num:
            return _Candidate(line_index, num[0], "", num[1], settings.bare_weight, True)
    m = _PREFIXED.match(text)
    if m:
        num = _number(m.group("num"), settings)
        if num:
            prefix = m.group("prefix").replace(" ", "")
            return _Candidate(line_index, num[0], prefix, num[1], settings.bare_weight, True)
    if settings.edge_numbers:
        for pattern in (_EDGE_START, _EDGE_END):
            m = pattern.match(text)
            if m:
                # upper-case roman at a line's edge is too often a word ("Part I", "I think")
                num = _number(m.group("num"), settings, allow_upper_roman=False)
                if num:
                    return _Candidate(line_index, num[0], "", num[1], settings.edge_weight, False)
    return None


def page_number_candidates(page: Page, settings: LabelSettings | None = None) -> list[_Candidate]:
    """Printed page-number candidates in the header and footer zones of ``page``."""
    s = settings or LabelSettings()
    if not page.lines or page.height <= 0:
        return []
    top_limit = page.height * s.zone_fraction
    bottom_limit = page.height * (1 - s.zone_fraction)
    top = [(ln.bbox[1], i) for i, ln in enumerate(page.lines) if ln.bbox[3] <= top_limit]
    bottom = [(-ln.bbox[3], i) for i, ln in enumerate(page.lines) if ln.bbox[1] >= bottom_limit]
    chosen = sorted(top)[: s.max_lines_per_zone] + sorted(bottom)[: s.max_lines_per_zone]
    out = []
    for _, i in chosen:
        cand = _parse_line(page.lines[i].text, i, s)
        if cand is not None:
            out.append(cand)
    if s.isolated_edge_lines:
        out.extend(_isolated_edge_candidates(page, {i for _, i in chosen}, s))
    return out


def _isolated_edge_candidates(page: Page, seen: set[int], s: LabelSettings) -> list[_Candidate]:
    """A number on a line of its own, centred, set apart below (or above) everything else.

    A cropped page or a short last page puts the page number well inside the page, out of the
    margin zones ("62" at two thirds of the height, right under the last paragraph).
    """
    order = sorted(range(len(page.lines)), key=lambda i: page.lines[i].bbox[1])
    if len(order) < 2:
        return []
    out = []
    for i, neighbour in ((order[-1], order[-2]), (order[0], order[1])):
        if i in seen:
            continue
        ln, other = page.lines[i], page.lines[neighbour]
        height = max(ln.bbox[3] - ln.bbox[1], 1.0)
        gap = ln.bbox[1] - other.bbox[3] if i == order[-1] else other.bbox[1] - ln.bbox[3]
        centre = (ln.bbox[0] + ln.bbox[2]) / 2
        if gap < s.isolated_gap * height or abs(centre - page.width / 2) > s.isolated_centre * page.width:
            continue
        cand = _parse_line(ln.text, i, s)
        if cand is not None and cand.whole_line:
            out.append(cand)
    return out


_Key = tuple[str, str, int]  # (style, prefix, offset): value = page.index + offset


def _value_ok(style: str, value: int, s: LabelSettings) -> bool:
    return 1 <= value <= (s.max_arabic if style == "D" else s.max_roman)


#: (page index, position in the caller's sequence, the page's candidates), in page-index order
_Found = list[tuple[int, int, list[_Candidate]]]


def _find_candidates(pages: Sequence[Page], s: LabelSettings) -> _Found:
    # one pass over the pages (they may be read back from disk one at a time: see pagestore)
    found = ((p.index, k, page_number_candidates(p, s)) for k, p in enumerate(pages))
    return sorted(found, key=lambda item: item[:2])


def infer_printed_labels(pages: Sequence[Page], settings: LabelSettings | None = None) -> list[PageLabel]:
    """Labels from printed page numbers alone, one per page (in the order of ``pages``)."""
    s = settings or LabelSettings()
    return _infer_printed(_find_candidates(pages, s), s)


def _infer_printed(found: _Found, s: LabelSettings) -> list[PageLabel]:
    indexes = [idx for idx, _, _ in found]
    order = [k for _, k, _ in found]
    cands = [cs for _, _, cs in found]

    # every candidate votes for its run; each page counts once per run. Deduplicated in candidate
    # order, not through a set: a set of string-keyed tuples iterates in an order that changes
    # with the process's hash seed, and it broke ties in most_common() (a page showing "208" and
    # "209" was labelled either way from one run to the next)
    support: Counter[_Key] = Counter()
    for idx, cs in zip(indexes, cands, strict=True):
        support.update(list(dict.fromkeys((c.style, c.prefix, c.value - idx) for c in cs)))
    # keys backed by a number on a line of its own; for a key, value - (index + 1) is offset - 1
    whole = {
        (c.style, c.prefix, c.value - idx)
        for idx, cs in zip(indexes, cands, strict=True)
        for c in cs
        if c.whole_line
    }
    keys = [
        k
        for k, n in support.most_common()
        if n >= s.min_run_support or (k in whole and k[2] - 1 <= s.lone_max_lead)
    ]
    # nothing repeats (a one-page excerpt "447"): a number on a line of its own is still believed;
    # a lone number at the edge of a longer line is not (too often a table row or a date)
    keys = keys or [k for k, _ in support.most_common() if k in whole]
    keys = keys[: s.max_runs]

    path = _viterbi(indexes, cands, keys, s) if keys else [None] * len(indexes)

    # support of each maximal segment of the path (pages with a matching printed number)
    seg_support = [0] * len(path)
    seg_interior = [False] * len(path)
    start = 0
    for end in range(1, len(path) + 1):
        if end == len(path) or path[end] != path[start]:
            key = path[start]
            hits = [
                j for j in range(start, end) if key and any(_matches(c, key, indexes[j]) for c in cands[j])
            ]
            for j in range(start, end):
                seg_support[j] = len(hits)
                seg_interior[j] = bool(hits) and hits[0] < j < hits[-1]
            start = end

    out: list[PageLabel | None] = [None] * len(found)
    for j, k in enumerate(order):
        idx, key, cs = indexes[j], path[j], cands[j]
        if key is None:
            out[k] = PageLabel(idx, str(idx + 1), LabelSource.PHYSICAL, s.physical_confidence)
            continue
        style, prefix, offset = key
        label = format_label(style, prefix, idx + offset)
        n = min(seg_support[j], 3)
        hit = next((c for c in cs if _matches(c, key, idx)), None)
        if hit is not None:
            out[k] = PageLabel(idx, label, LabelSource.PRINTED, round(0.5 + 0.15 * n, 3), hit.line_index)
        else:
            # an outvoted number on its own line is still the page-number line (misread): furniture
            misread = next((c for c in cs if c.whole_line and c.style == style), None)
            conf = 0.35 + 0.1 * n + (0.1 if seg_interior[j] else 0.0)
            out[k] = PageLabel(
                idx, label, LabelSource.INFERRED, round(conf, 3), misread.line_index if misread else None
            )
    return [o for o in out if o is not None]


def _matches(c: _Candidate, key: _Key, index: int) -> bool:
    return (c.style, c.prefix, c.value - index) == key


def _viterbi(
    indexes: list[int], cands: list[list[_Candidate]], keys: list[_Key], s: LabelSettings
) -> list[_Key | None]:
    """Best run per page: votes for the page's run, minus a penalty per switch of run.

    State ``None`` is "no run" (physical label). Gaps in ``indexes`` are harmless: a run is an
    offset, so it carries across them.
    """
    states: list[_Key | None] = [None, *keys]
    neg = float("-inf")
    score: list[float] = []
    back: list[list[int]] = []
    for j, idx in enumerate(indexes):
        votes: dict[_Key, float] = {}
        for c in cands[j]:
            k = (c.style, c.prefix, c.value - idx)
            votes[k] = max(votes.get(k, 0.0), c.weight)
        contradiction = s.contradiction_weight * max((c.weight for c in cands[j]), default=0.0)
        emit = [0.0]
        for style, prefix, offset in keys:
            if not _value_ok(style, idx + offset, s):
                emit.append(neg)
            else:
                emit.append(votes.get((style, prefix, offset), -contradiction))
        if j == 0:
            score = emit
            back.append(list(range(len(states))))
            continue
        best = max(range(len(states)), key=score.__getitem__)
        new_score, ptr = [], []
        for t in range(len(states)):
            stay = score[t]
            restart = t > 0 and idx + keys[t - 1][2] == 1
            switch = score[best] - (s.restart_penalty if restart else s.switch_penalty)
            if stay >= switch:
                new_score.append(stay + emit[t])
                ptr.append(t)
            else:
                new_score.append(switch + emit[t])
                ptr.append(best)
        score = new_score
        back.append(ptr)
    t = max(range(len(states)), key=score.__getitem__)
    path = [0] * len(indexes)
    for j in range(len(indexes) - 1, -1, -1):
        path[j] = t
        t = back[j][t]
    return [states[t] for t in path]


# --------------------------------------------------------------------------------------------
# The stage


def _pdf_labels_broken(labels: list[str]) -> bool:
    """All pages carry one label (e.g. every page "1"): a generator bug, useless to a reader."""
    return len(labels) >= 2 and len(set(labels)) == 1


def label_pages(
    doc: pymupdf.Document | None, pages: Sequence[Page], settings: LabelSettings | None = None
) -> list[PageLabel]:
    """One ``PageLabel`` per page, in the order of ``pages``.

    /PageLabels first (unless absent or clearly broken, see the module docstring), then printed
    page numbers inferred over consistent runs, then the physical page number. ``doc`` may be
    None (image inputs): only printed numbers are used.
    """
    s = settings or LabelSettings()
    found = _find_candidates(pages, s)
    printed = _infer_printed(found, s)
    pdf = pdf_page_labels(doc) if doc is not None and s.use_pdf_labels else None
    if pdf is not None and _pdf_labels_broken(pdf):
        log.warning("page labels: every page of /PageLabels reads %r; using printed numbers instead", pdf[0])
        pdf = None
    if pdf is None:
        return printed

    out: list[PageLabel] = []
    disagreements = 0
    cands_at = {k: (index, cs) for index, k, cs in found}
    for k, fallback in enumerate(printed):
        index, cands = cands_at[k]
        label = pdf[index] if 0 <= index < len(pdf) else ""
        if not label:
            out.append(fallback)
            continue
        seen = next((c for c in cands if c.label.casefold() == label.casefold()), None)
        if seen is not None:
            out.append(PageLabel(index, label, LabelSource.PDF, 1.0, seen.line_index))
        elif fallback.source == LabelSource.PRINTED and fallback.confidence >= 0.8:
            # a printed run seen on two or more pages says otherwise: keep /PageLabels, trust less
            disagreements += 1
            out.append(
                PageLabel(index, label, LabelSource.PDF, s.pdf_disagree_confidence, fallback.line_index)
            )
        else:
            out.append(PageLabel(index, label, LabelSource.PDF, s.pdf_confidence, fallback.line_index))
    if disagreements:
        log.info(
            "page labels: /PageLabels and printed numbers disagree on %d page(s); /PageLabels kept",
            disagreements,
        )
    return out


# --------------------------------------------------------------------------------------------
# Lookups both ways


def _label_key(label: str) -> str:
    return re.sub(r"\s+", " ", label).strip()


def pages_for_label(labels: list[PageLabel], label: str) -> list[int]:
    """Physical page indexes (0-based, ascending) whose label is ``label``.

    A label can repeat across parts of a document (each appendix restarting at "1"), so this is a
    list. Exact matches win; when there are none, the match is retried ignoring case ("iv" finds
    a page labelled "IV"). Surrounding and repeated whitespace never matters.
    """
    want = _label_key(label)
    exact = sorted({pl.page_index for pl in labels if _label_key(pl.label) == want})
    if exact or not want:
        return exact
    folded = want.casefold()
    return sorted({pl.page_index for pl in labels if _label_key(pl.label).casefold() == folded})


def label_for_page(labels: list[PageLabel], page_index: int) -> str:
    """The label of physical page ``page_index``; its 1-based number when no label covers it."""
    for pl in labels:
        if pl.page_index == page_index:
            return pl.label
    return str(page_index + 1)
