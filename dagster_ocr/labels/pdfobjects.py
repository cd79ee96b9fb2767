"""A minimal PDF object parser, for the object text PyMuPDF's xref API returns, and PDF text strings."""

from __future__ import annotations

import re
from typing import Any, NamedTuple


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
