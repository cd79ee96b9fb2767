"""A word space lined up from line to line is no gutter (tables/words.py ``_word_space``, issue 37).

In a monospaced font a space is a whole character wide, as wide as a gutter may be, and in a
column of labels ("Other revenue (1)" over "Subscriptions and support") or under a head of two
words ("Volume revenue") the spaces at the same character line up into a channel no word crosses:
each label was cut into columns. A table set tight parts its cells by a gap inside a phrase too,
but twice its word spaces, and that gap stays a gutter.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pymupdf
import pytest
from support.table_pages import make_case

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import tables_icdar as TI  # noqa: E402
import tables_synthetic as TS  # noqa: E402

from dagster_ocr.tables import TableSettings, extract_tables  # noqa: E402


def _tables(pdf: bytes):
    doc = pymupdf.open("pdf", pdf)
    return extract_tables(doc, TI.pages_of(doc), TableSettings())


# tune seeds of a fresh draw (3000-4499): 3714 a statement in Courier, its labels' spaces lined up
# (5 columns of 3); 3980 a table's last page, its repeated head "Volume revenue" over one totals
# row (the head cut in two, the page not joined); of the next (4500-5999): 5960 a last page of long
# labels, its repeated head "Estimate forecast" cut at its space once the stub was moved past the
# labels (an empty column, the page joined one column off)
@pytest.mark.parametrize(
    ("seed", "cls"), [(3714, "noted_statement"), (3980, "label_tail"), (5960, "label_tail")]
)
def test_monospaced_labels_and_heads_keep_their_word_spaces(seed: int, cls: str) -> None:
    case = make_case(seed, cls)
    tables = _tables(case.pdf)
    if cls == "label_tail":
        assert TS.merge_right(case, tables) == (True, "")
    else:
        assert TS.shape_right(case, tables) == (True, "")


def test_a_gap_twice_the_word_spaces_inside_a_phrase_stays_a_gutter(corpus: Path) -> None:
    """camelot's m27: a licence register set tight, "(405) 680-3701 2014/09/14", phone and expiry
    a gap apart that the phrases finder reads inside one phrase: two columns all the same."""
    pdf = (corpus / "tables/camelot/m27/m27.pdf").read_bytes()
    (table, *_) = _tables(pdf)
    assert table.n_cols == 9
    head = [c.text for c in table.cells if c.row == 0]
    assert "EXPIRES" in head and "PHONE NUMBER" in head
