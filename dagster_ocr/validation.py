"""Text validation: flag extraction defects without ever flagging legitimate symbols.

A text layer can look fine and still be broken: unmapped glyphs come out as U+FFFD, ``(cid:12)``
markers or runs of ``?``; fonts with a private encoding yield control or private-use characters;
a producer that wrote UTF-8 bytes read back as Latin-1/cp1252 gives mojibake such as ``Ã©`` or
``â€™``. Every paragraph carries the flags of :func:`validate_text`; :func:`garbage_ratio` lets
OCR routing decide that a page's text layer is not worth keeping.

Legitimate symbols (``§``, ``€``, ``¥``, CJK punctuation, ...) are listed in
:data:`PROTECTED_SYMBOLS`: they are never counted as suspicious, and :func:`lost_symbols` tells
when an extraction dropped them.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = [
    "FLAGS",
    "GLYPH_FLAGS",
    "PROTECTED_SYMBOLS",
    "garbage_ratio",
    "glyph_chars",
    "lost_symbols",
    "suspicious_spans",
    "validate_text",
]

#: every flag :func:`validate_text` can return
FLAGS = ("control_char", "empty", "mojibake", "private_use", "replacement_char", "unmapped_glyph")

#: flags for glyphs a font printed without a Unicode mapping. Math and symbol fonts do this in sound
#: documents (a formula line, a bullet), so the quality gate judges them by their share of the
#: characters (:func:`glyph_chars`), not by the paragraphs they appear in; mojibake and U+FFFD are
#: decoding damage that hits every paragraph holding the characters concerned
GLYPH_FLAGS = frozenset({"control_char", "private_use", "unmapped_glyph"})

_CJK_PUNCTUATION = (
    "\u3000\u3001\u3002\u3003\u3008\u3009\u300a\u300b\u300c\u300d\u300e\u300f\u3010\u3011"
    "\u3014\u3015\u3016\u3017\u301c\u301d\u301e\u30fb\uff01\uff08\uff09\uff0c\uff0e\uff1a"
    "\uff1b\uff1f\uff3b\uff3d\uff5b\uff5d\uff5e\u2026\u2014"
)

#: symbols that carry meaning in legal, financial and technical text and must survive extraction
PROTECTED_SYMBOLS: frozenset[str] = frozenset("§¶©®™€£¥°±×÷‰†‡" + _CJK_PUNCTUATION)

_CID = re.compile(r"\(cid:\d+\)")
# Three or more '?' (or two or more white squares) in a row: what many extractors print for a
# glyph they cannot map. A single '?' is punctuation.
_UNMAPPED_RUN = re.compile(r"\?{3,}|[\u25a1\u25af]{2,}|[?\u25a1\u25af]{3,}")

# cp1252 maps these bytes 0x80-0x9F to printable characters; UTF-8 continuation bytes read as
# cp1252 therefore show up as one of these or as a Latin-1 character in U+0080..U+00BF.
_CP1252_HIGH = "€‚ƒ„…†‡ˆ‰Š‹ŒŽ‘’“”•–—˜™š›œžŸ"
_CONT = "[\u0080-\u00bf" + re.escape(_CP1252_HIGH) + "]"
# A UTF-8 lead byte (0xC2..0xF4) read as Latin-1, followed by the continuation bytes it needs.
_MOJIBAKE_CANDIDATE = re.compile(
    "[\u00c2-\u00df]" + _CONT + "|[\u00e0-\u00ef]" + _CONT + "{2}|[\u00f0-\u00f4]" + _CONT + "{3}"
)
_ALLOWED_CONTROLS = frozenset("\t\n\r")


def _to_bytes(s: str) -> bytes | None:
    """Encode back to the bytes a Latin-1/cp1252 decoder would have seen, or None."""
    out = bytearray()
    for ch in s:
        try:
            out += ch.encode("cp1252")
        except UnicodeEncodeError:
            if ord(ch) < 256:  # Latin-1 C1 controls, which cp1252 leaves undefined
                out.append(ord(ch))
            else:
                return None
    return bytes(out)


def _mojibake_matches(text: str) -> list[re.Match[str]]:
    """Candidate sequences that really do decode as UTF-8 (so are mojibake, not accented words)."""
    found = []
    for m in _MOJIBAKE_CANDIDATE.finditer(text):
        raw = _to_bytes(m.group())
        if raw is None:
            continue
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            continue
        found.append(m)
    return found


#: the characters ``_char_flag`` flags: U+FFFD, C0/C1 controls but tab/CR/LF (category Cc) and
#: private-use code points (category Co); one regex scan instead of a Python loop per character
_BAD_CHAR = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ufffd\ue000-\uf8ff\U000f0000-\U000ffffd\U00100000-\U0010fffd]"
)


def _char_flag(ch: str) -> str | None:
    if ch in PROTECTED_SYMBOLS:
        return None
    if ch == "\ufffd":
        return "replacement_char"
    cat = unicodedata.category(ch)
    if cat == "Cc" and ch not in _ALLOWED_CONTROLS:
        return "control_char"
    if cat == "Co":
        return "private_use"
    return None


def suspicious_spans(text: str) -> list[tuple[int, int, str]]:
    """(start, end, flag) for every suspicious stretch of ``text``; spans may overlap."""
    spans: list[tuple[int, int, str]] = []
    for m in _BAD_CHAR.finditer(text):
        flag = _char_flag(m.group())
        if flag:
            spans.append((m.start(), m.end(), flag))
    for m in _CID.finditer(text):
        spans.append((m.start(), m.end(), "unmapped_glyph"))
    for m in _UNMAPPED_RUN.finditer(text):
        spans.append((m.start(), m.end(), "unmapped_glyph"))
    for m in _mojibake_matches(text):
        spans.append((m.start(), m.end(), "mojibake"))
    return spans


def validate_text(text: str) -> list[str]:
    """Sorted, unique validation flags of ``text`` (see :data:`FLAGS`); ``[]`` when it looks clean.

    Protected symbols (:data:`PROTECTED_SYMBOLS`) never raise a flag on their own.
    """
    if not text or not text.strip():
        return ["empty"]
    return sorted({flag for _, _, flag in suspicious_spans(text)})


def glyph_chars(text: str) -> int:
    """How many visible characters of ``text`` are glyphs without a mapping (:data:`GLYPH_FLAGS`)."""
    bad: set[int] = set()
    for start, end, flag in suspicious_spans(text):
        if flag in GLYPH_FLAGS:
            bad.update(range(start, end))
    return sum(1 for i in bad if not text[i].isspace())


def garbage_ratio(text: str) -> float:
    """Share of the non-whitespace characters of ``text`` that look like extraction garbage.

    0.0 for clean text and for empty text (emptiness is a separate signal); 1.0 when every
    character is suspicious. OCR routing compares this with a threshold to decide whether a
    page's text layer is worth keeping.
    """
    n_visible = len("".join(text.split()))
    if not n_visible:
        return 0.0
    bad: set[int] = set()
    for start, end, _ in suspicious_spans(text):
        bad.update(range(start, end))
    return sum(1 for i in bad if not text[i].isspace()) / n_visible


def lost_symbols(source: str, extracted: str) -> set[str]:
    """Protected symbols that occur in ``source`` but nowhere in ``extracted``."""
    return {ch for ch in source if ch in PROTECTED_SYMBOLS} - set(extracted)
