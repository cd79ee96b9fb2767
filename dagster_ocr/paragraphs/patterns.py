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
#: the dots a run of leaders is drawn with (rows.py joins a run drawn as a fragment of its own)
LEADER_DOTS = ".·…‥․"
_LEADER_END_RE = re.compile(rf"(?:[{LEADER_DOTS}]\s*){{4,}}[^\s{LEADER_DOTS}]{{1,8}}$")


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


#: a word, letters only, hyphenated compounds ("heavy-duty") as one
_TOKEN_RE = re.compile(r"[^\W\d_]+(?:[-\u2010][^\W\d_]+)*")
#: a line ending in a word broken at a hyphen: its last letters
_BROKEN_END_RE = re.compile(r"([^\W\d_]+)[-\u2010]$")
_FIRST_WORD_RE = re.compile(r"[^\W\d_]+")
#: a suspended compound before the break: "light- and heavy-" / "duty", "pre- or post-" / "war"
_SUSPENDED_RE = re.compile(
    r"[^\W\d_][-\u2010],?\s+(?:and|or|nor|to|und|oder|bis|et|ou|y|o|e)\s+[^\W\d_]+[-\u2010]$"
)


class Vocabulary:
    """The words of a document so far, to tell a compound broken at its hyphen ("heavy-" /
    "duty") from a word hyphenated at a line break ("deli-" / "very").

    No dictionary decides that; the document does. Fed every line of each page before that page's
    lines are joined (a stage reads pages in order, one at a time), it counts the words and the
    hyphenated compounds set whole within lines. The broken pieces themselves are not counted: a
    line's last word ending in a hyphen, and the first word of the line after it. Lines are
    counted when a break is first judged, not when fed: most pages never ask.
    """

    def __init__(self) -> None:
        self.words: dict[str, int] = {}
        self.compounds: dict[str, int] = {}
        self._pending: list[list[str]] = []

    def add_lines(self, lines: list[str]) -> None:
        """One page's lines, in order (counted on the next question)."""
        self._pending.append(lines)

    def _flush(self) -> None:
        for lines in self._pending:
            self._count(lines)
        self._pending.clear()

    def _count(self, lines: list[str]) -> None:
        broken_before = False
        for line in lines:
            t = line.strip()
            toks = _TOKEN_RE.findall(t)
            broken = bool(_BROKEN_END_RE.search(t))
            for k, w in enumerate(toks):
                if (broken and k == len(toks) - 1) or (broken_before and k == 0):
                    continue
                w = w.lower()
                seen = self.compounds if ("-" in w or "\u2010" in w) else self.words
                seen[w] = seen.get(w, 0) + 1
            broken_before = broken

    def joined_seen(self, head: str, tail: str) -> bool:
        """True when the word "head-" / "tail" run together occurs in the document."""
        self._flush()
        a = (m.group(1) if (m := _BROKEN_END_RE.search(head)) else "").lower()
        b = (m.group(0) if (m := _FIRST_WORD_RE.match(tail)) else "").lower()
        return bool(a and b and self.words.get(a + b))

    def keeps_hyphen(self, head: str, tail: str) -> bool:
        """True when "head-" / "tail" is a compound broken at its hyphen: the word run together
        occurs nowhere else in the document while the compound does, or both its parts (3 letters
        or more each) do as words of their own."""
        self._flush()
        a = (m.group(1) if (m := _BROKEN_END_RE.search(head)) else "").lower()
        b = (m.group(0) if (m := _FIRST_WORD_RE.match(tail)) else "").lower()
        if not a or not b or self.words.get(a + b):
            return False
        if self.compounds.get(f"{a}-{b}") or self.compounds.get(f"{a}\u2010{b}"):
            return True
        return len(a) >= 3 and len(b) >= 3 and bool(self.words.get(a)) and bool(self.words.get(b))


def join_lines(text: str, nxt: str, vocab: Vocabulary | None = None) -> str:
    """Append a line to text set over lines (a paragraph's rows, a table cell's wrapped lines):
    de-hyphenate, no space between CJK characters, else one space.

    A hyphen after a letter before a lower-case line is dropped ("exam-" / "ple"), unless the
    break is a compound's own hyphen: ``vocab`` (the document's words) says so
    (``Vocabulary.keeps_hyphen``), or a suspended compound comes before it ("light- and heavy-" /
    "duty") and the word run together is not one the document has ("Innen- und Außenwin-" /
    "kel" where "Außenwinkel" occurs: closed compounds, as German sets them). A
    capital after it keeps the hyphen ("Self-" / "Locking"); a soft hyphen is always dropped."""
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
        if not nxt[0].islower():
            return text + nxt
        if vocab is not None and vocab.keeps_hyphen(text, nxt):
            return text + nxt
        if _SUSPENDED_RE.search(text) and not (vocab is not None and vocab.joined_seen(text, nxt)):
            return text + nxt
        return text[:-1] + nxt
    if is_cjk(text[-1]) and is_cjk(nxt[0]):
        return text + nxt
    return text + " " + nxt
