"""Text patterns: clause and list starts, numbered headings, sentence ends, CJK characters."""

from __future__ import annotations

import re

_CJK_NUM = "一二三四五六七八九十百千零〇两"
_ROMAN = r"[IVXLCDM]+"
_KEYWORD_RE = re.compile(
    r"^(?P<kw>Part|PART|Book|BOOK|Title|TITLE|Chapter|CHAPTER|Section|SECTION|Article|ARTICLE|Art\.|"
    r"Clause|CLAUSE|Rule|RULE|Annex|ANNEX|Appendix|APPENDIX|Schedule|SCHEDULE)\s+"
    rf"(?P<num>\d+[A-Za-z]?(?:\.\d+)*|{_ROMAN}|[A-Z])\b[.:]?"
)
_CJK_CLAUSE_RE = re.compile(rf"^第(?P<num>[{_CJK_NUM}0-9]+)(?P<kw>[编部章节条款项])")
_SECTION_SIGN_RE = re.compile(r"^(?P<num>§+\s*\d+[a-z]?(?:\.\d+)*)")
#: "5.2", "5.2.1.", and a Roman section's "II.1", "III.2.1)" (the European notices' numbering)
_DOTTED_RE = re.compile(r"^(?P<num>(?:\d{1,3}|[IVXLC]{1,6})(?:\.\d{1,3})+)[.)]?(?=\s|$)")
_NUMBER_RE = re.compile(r"^(?P<num>\d{1,3})[.)](?=\s|$)")
_BARE_NUMBER_RE = re.compile(r"^(?P<num>\d{1,2})(?=\s+\S)")
_PAREN_RE = re.compile(r"^[(（](?P<num>[a-zA-Z]|[ivxlc]+|\d{1,3}|[" + _CJK_NUM + r"]+)[)）]")
_LETTER_RE = re.compile(r"^(?P<num>[a-z])\)(?=\s)")
_CJK_ENUM_RE = re.compile(rf"^(?P<num>[{_CJK_NUM}]+)、")
_BULLETS = "•·▪‣◦●○■□◆◇►▶✓✔☐☑☒➢➤–—-*"
_BULLET_RE = re.compile(rf"^[{re.escape(_BULLETS)}](?=\s)")

#: a figure's or table's caption: "Figure 1 |", "Fig. 2:", "Table 3.", "Abb. 4", "FIGURE 5"
_CAPTION_RE = re.compile(
    r"^(?:fig(?:ure)?\.?|table|tab\.|abb(?:ildung)?\.?|chart|exhibit|scheme|plate)\s*\d+[a-z]?\b",
    re.IGNORECASE,
)

_TERMINAL = ".!?。！？…:;；：\"”'’)）»"
_SENTENCE_END = ".!?。！？…:؟۔"  # with the Arabic question mark and the Urdu full stop


def is_cjk(ch: str) -> bool:
    """True for CJK ideographs, kana, Hangul and CJK punctuation (joined without spaces)."""
    o = ord(ch)
    return (
        0x3000 <= o <= 0x30FF
        or 0x3400 <= o <= 0x4DBF
        or 0x4E00 <= o <= 0x9FFF
        or 0xAC00 <= o <= 0xD7AF
        or 0xF900 <= o <= 0xFAFF
        or 0xFF00 <= o <= 0xFFEF
        or 0x20000 <= o <= 0x2FA1F
    )


def _clause_match(text: str) -> tuple[str, str, bool] | None:
    """(kind, number, strong) for a clause or list start, else None.

    Strong starts ("Article 5", "第五条", "§ 3", bullets) always open a paragraph; weak ones
    ("1.", "5.2", "(a)") could also be a number wrapped to the start of a line, so they open one
    only after a line that ends a sentence or clause.
    """
    t = text.lstrip()
    if m := _KEYWORD_RE.match(t):
        return "clause", f"{m['kw']} {m['num']}", True
    if m := _CJK_CLAUSE_RE.match(t):
        return "clause", m.group(0), True
    if m := _SECTION_SIGN_RE.match(t):
        return "clause", m["num"], True
    if _BULLET_RE.match(t):
        return "list_item", "", t[0] not in "-–—*"
    for rx in (_DOTTED_RE, _NUMBER_RE, _PAREN_RE, _LETTER_RE, _CJK_ENUM_RE):
        if m := rx.match(t):
            return "clause", m["num"], False
    return None


def clause_number(text: str) -> str:
    """The clause number a text starts with ("5.2", "Article 5", "第五条", "(a)"), or ""."""
    m = _clause_match(text)
    return m[1] if m else ""


def _ends_sentence(text: str) -> bool:
    t = text.rstrip()
    return bool(t) and t[-1] in _SENTENCE_END


# Words a sentence does not end on: prepositions and articles (en, de, fr, es, it, nl). A strong
# clause start ("§ 2.2", "Article 5") after one of them is a cross-reference wrapped to the start
# of a line ("... the requirements of / § 2.2 of the Agreement"), not a new clause.
_MID_PHRASE_WORDS = frozenset(
    "of in under to with by per see from into pursuant within the a an "
    "gemäß gemäss nach laut von vom im des der dem den die das einer eines "
    "de du des la le les au aux à selon "
    "del el los las al según conforme "
    "di della dello degli nel nella ai al secondo "
    "van het een volgens bij".split()
)


#: a line ending in dot leaders and a short page reference ("Fees . . . . 12", "Annex ...... A-3")
#: (four dots at least: an ellipsis and a word at a line's end is running text)
_LEADER_END_RE = re.compile(r"(?:[.·…‥․]\s*){4,}[^\s.·…‥․]{1,8}$")


def ends_toc_entry(text: str) -> bool:
    """True when a line ends as an entry of a table of contents (or list of tables) ends: its
    leaders reached the page it points to, so the entry is complete."""
    return bool(_LEADER_END_RE.search(text.rstrip()))


def _ends_mid_phrase(text: str) -> bool:
    """True when a line ends on a word no sentence or heading ends on (it wrapped mid-phrase)."""
    words = text.rstrip().rsplit(None, 1)
    return bool(words) and words[-1] in _MID_PHRASE_WORDS


def _ends_clause(text: str) -> bool:
    t = text.rstrip()
    if not t:
        return False
    return t[-1] in _TERMINAL or bool(re.search(r"\b(and|or|und|oder|et|ou|y|o)$", t))


def join_lines(text: str, nxt: str) -> str:
    """Append a line to text set over lines (a paragraph's rows, a table cell's wrapped lines):
    de-hyphenate, no space between CJK characters, else one space."""
    nxt = nxt.strip()
    if not text:
        return nxt
    if not nxt:
        return text
    if text.endswith("\u00ad"):  # soft hyphen: always a line-break hyphen
        return text[:-1] + nxt
    if len(text) >= 2 and text[-1] in "-\u2010" and text[-2].isalpha():
        # de-hyphenate only when the continuation is lower case ("exam-\nple"); "Self-\nLocking"
        # keeps its hyphen, without a space
        return (text[:-1] + nxt) if nxt[0].islower() else (text + nxt)
    if is_cjk(text[-1]) and is_cjk(nxt[0]):
        return text + nxt
    return text + " " + nxt
