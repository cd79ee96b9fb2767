"""Issue 37's class (a) on generated pages (tests/support/text_layouts.py): running heads and feet
on a one-page document. Repetition cannot show them, their position and form do
(``furniture._band_stamps``); the body in the bands (a title, a footnote, a memo's heading block,
a letter's signature) stays.
"""

from __future__ import annotations

from pathlib import Path

import pymupdf
import pytest
from support.parsed import parsed as _parsed
from support.text_layouts import make_single_page, normal, score


def _text(out) -> str:
    return "\n".join(p.text for p in out.paragraphs.paragraphs)


@pytest.mark.parametrize("seed", [1, 6, 16, 22])
def test_a_one_page_document_loses_its_running_head_and_foot_and_keeps_its_body(
    seed: int, tmp_path: Path
) -> None:
    case = make_single_page(seed)
    out = _parsed(case.doc, tmp_path)
    ours = normal(_text(out))
    rest = ours
    for block in case.truths[0]:
        assert normal(block) in ours, block  # every body block, titles and footnotes too
        rest = rest.replace(normal(block), "", 1)
    assert [f for f in case.furniture if normal(f) in rest] == []
    assert score(case, _text(out)) >= 0.99


def _page(tmp_path: Path, lines: list[tuple[float, float, str, float]]):
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    for x, y, text, size in lines:
        page.insert_text((x, y), text, fontsize=size)
    return _parsed(doc, tmp_path)


_BODY = [
    "The committee met on four occasions during the year and reviewed the budget of each of",
    "the regional offices in turn, with the help of the finance team and the external auditors,",
    "and agreed a plan for the next three years that the board approved in its autumn session.",
    "Each office reported its spending against the plan, and the committee asked two of them to",
    "explain why their costs for travel and for temporary staff had risen faster than planned.",
]


def test_a_letters_signature_and_a_memos_heading_block_in_the_bands_stay(tmp_path: Path) -> None:
    lines = [
        (72, 60, "To: All regional offices", 10),
        (72, 74, "From: The finance committee", 10),
        (72, 88, "Subject: Budget review", 10),
    ]
    lines += [(72, 130 + 14 * k, t, 10) for k, t in enumerate(_BODY)]
    # a signature block far below the body, in the bottom band, set at the body's size
    lines += [(72, 760, "Yours sincerely", 10), (72, 800, "Jane Doe, Chair", 10)]
    out = _page(tmp_path, lines)
    text = _text(out)
    for t in ("To: All regional offices", "Subject: Budget review", "Yours sincerely", "Jane Doe, Chair"):
        assert t in text
    assert out.paragraphs.furniture == {}


def test_a_footnote_in_the_bottom_band_stays_and_the_page_number_goes(tmp_path: Path) -> None:
    lines = [(72, 300 + 14 * k, t, 10) for k, t in enumerate(_BODY)]
    lines += [
        (72, 770, "1 The figures for the last quarter are provisional and may change", 8),
        (80, 780, "when the auditors report in the spring.", 8),
        (290, 815, "Page 1 of 1", 8),
        (72, 40, "Finance committee · Annual report 2026", 8),
    ]
    out = _page(tmp_path, lines)
    text = _text(out)
    assert "when the auditors report in the spring." in text
    assert "Page 1 of 1" not in text and "Annual report 2026" not in text


def test_a_heading_or_a_first_line_at_the_bodys_spacing_in_the_top_band_stays(tmp_path: Path) -> None:
    # a short page whose first lines sit in the top band at the body's own pitch: a heading that
    # opens the body, not a running head, however short and unpunctuated
    lines = [(250, 70, "Terms of reference", 10), (72, 84, "Published by the committee", 10)]
    lines += [(72, 98 + 14 * k, t, 10) for k, t in enumerate(_BODY[:2])]
    out = _page(tmp_path, lines)
    text = _text(out)
    assert "Terms of reference" in text and "Published by the committee" in text
    assert out.paragraphs.furniture == {}
