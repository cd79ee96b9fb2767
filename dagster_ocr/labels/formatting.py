"""Label text from a PDF numbering style: arabic, roman, letters (``format_label``)."""

from __future__ import annotations

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
