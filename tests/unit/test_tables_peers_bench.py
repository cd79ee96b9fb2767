"""The peers bench's reading of MANIFEST parameters and its cell-content metric (bench/tables_peers.py)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import tables_peers as P  # noqa: E402


def test_camelot_parameters_are_read_from_the_first_clause() -> None:
    text = (
        'flavor="stream", columns=["72,95,209"] (x separators, PDF points), split_text=True; the same data '
        'is asserted for flavor="network"'
    )
    assert P._camelot_params(text) == {"flavor": "stream", "columns": ["72,95,209"], "split_text": True}
    assert P._camelot_params('flavor="stream", strip_text=" ,\\n" (spaces)')["strip_text"] == " ,\n"
    assert (
        P._camelot_params('flavor="stream", password="ownerpass" or password="userpass"')["password"]
        == "ownerpass"
    )
    assert P._camelot_params("tables[0]")["flavor"] == "lattice"  # camelot's default


def test_tabula_parameters() -> None:
    got = P._tabula_params(
        "page 3, stream (BasicExtractionAlgorithm), area top=1.5 left=2 bottom=30 right=40 (pt)"
    )
    assert got == {"pages": 3, "area": [1.5, 2.0, 30.0, 40.0], "guess": False, "stream": True}
    assert P._tabula_params("page 1, whole page, lattice extraction")["lattice"] is True
    assert P._tabula_params("tabula-py read_pdf defaults (pages=1, guess=True)") == {"pages": 1}


def _group(area: bool) -> P.Group:
    truth = [[["Region", "Value"], ["North", "1\n0"], ["South", "20"]]]
    return P.Group("g", Path("x.pdf"), "camelot", {}, 0, area, truth)


def test_cell_metric_is_a_multiset_and_ignores_tables_outside_an_area() -> None:
    inside = (0, [["region", "Value"], ["North", "10"], ["South", "20"], ["South", "20"]])
    outside = (0, [["Other", "table"], ["a", "b"]])
    other_page = (1, [["Region", "Value"]])
    # whole page: every predicted cell counts (the repeated "South"/"20" and the other table too)
    assert P.score_group(_group(False), [inside, outside, other_page]) == (6, 12, 6)
    # an area: the table mostly outside the expected cells is left out
    assert P.score_group(_group(True), [inside, outside, other_page]) == (6, 8, 6)
