"""Text validation flags, garbage ratio and lost symbols."""

from __future__ import annotations

import pytest

from dagster_ocr.validation import PROTECTED_SYMBOLS, garbage_ratio, lost_symbols, validate_text


@pytest.mark.parametrize(
    ("text", "flags"),
    [
        ("A clean sentence, with accents: café, naïve, Zürich.", []),
        ("", ["empty"]),
        ("   \n ", ["empty"]),
        ("bad \ufffd glyph", ["replacement_char"]),
        ("bell\x07 and C1 \x84 control", ["control_char"]),
        ("private \ue001 use", ["private_use"]),
        ("glyph (cid:12) here", ["unmapped_glyph"]),
        ("unmapped ???? run", ["unmapped_glyph"]),
        ("boxes \u25a1\u25a1\u25a1", ["unmapped_glyph"]),
        ("Ã©tÃ© it\u00e2\u20ac\u2122s", ["mojibake"]),
        ("(cid:3) \ufffd Ã©", ["mojibake", "replacement_char", "unmapped_glyph"]),
    ],
)
def test_validate_text_flags(text: str, flags: list[str]) -> None:
    assert validate_text(text) == flags


def test_protected_symbols_never_flagged() -> None:
    text = "§ 3 ¶ 2 © ® ™ € 10 £ 5 ¥ 7 20° ±1 2×3 6÷2 5‰ † ‡ 第五条，规定：「甲」。（一）"
    assert validate_text(text) == []
    assert garbage_ratio(text) == 0.0
    for sym in "§¶©®™€£¥°±×÷‰†‡。，「」（）":
        assert sym in PROTECTED_SYMBOLS


def test_single_question_mark_is_punctuation() -> None:
    assert validate_text("Why? Because.") == []


def test_garbage_ratio() -> None:
    assert garbage_ratio("clean text") == 0.0
    assert garbage_ratio("") == 0.0
    assert garbage_ratio("\ufffd\ufffd") == 1.0
    assert 0.4 < garbage_ratio("ab \ufffd\ufffd") < 0.6
    # a cid marker counts as wholly suspicious
    assert garbage_ratio("(cid:1)(cid:2)") == 1.0


def test_lost_symbols() -> None:
    assert lost_symbols("§ 3 costs € 5 or ¥ 7", "3 costs E 5 or Y 7") == {"§", "€", "¥"}
    assert lost_symbols("§ 3 costs € 5", "§ 3 costs € 5") == set()
    assert lost_symbols("plain", "") == set()
