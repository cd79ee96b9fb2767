"""Charts and diagrams found in the drawing (dagster_ocr/tables/charts.py): the text finder builds
no table from their labels, the labels stay body text, and ruled tables are still tables.

The generated classes (tests/support/table_pages.py ``LATER_NO_TABLE``): ``figure_pair`` (line
charts side by side), ``bar_chart`` and ``flow_chart``; tune seeds only.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pymupdf
import pytest
from support.table_pages import make_case

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import tables_icdar as TI  # noqa: E402

from dagster_ocr.conservation import DocumentAccount, account_text  # noqa: E402
from dagster_ocr.ingest import DocumentStore  # noqa: E402
from dagster_ocr.pipeline import parse  # noqa: E402
from dagster_ocr.tables import TableSettings, extract_tables  # noqa: E402
from dagster_ocr.tables.charts import _bars, _series, chart_regions  # noqa: E402


def _tables(doc: pymupdf.Document) -> list:
    return extract_tables(doc, TI.pages_of(doc), TableSettings())


@pytest.mark.parametrize(
    ("cls", "seed"),
    [
        ("figure_pair", 2),
        # a fresh tune draw: the running head's two ends over the two captions side by side made a
        # table's first row, so the captions were no longer its first and the pair read as a table
        ("figure_pair", 1657),
        # a sixth fresh tune draw: the right chart's line drawn in two pieces (its flat stretch is
        # no series), each under a quarter of its frame: the frame and the tick labels along it were
        # left out of the chart, and the labels read as a table with the left figure's source note
        ("figure_pair", 7837),
        ("bar_chart", 60),
        ("bar_chart", 6),
        # a fifth fresh tune draw: four wide bars of like heights (27 to 38 on an axis from 0)
        # under gridlines, no ticks: held for shaded cells, the axis labels read as a table
        ("bar_chart", 7268),
        # an eighth: three bars no taller than twice their width, standing on the bottom side of
        # the plot area's stroked frame (no axis line of its own): the labels read as a table
        ("bar_chart", 11048),
        ("flow_chart", 9),
        ("flow_chart", 19),
    ],
)
def test_a_generated_chart_is_no_table_and_keeps_its_words(cls: str, seed: int, tmp_path: Path) -> None:
    """A chart's tick labels, legend and axis titles (a flow chart's step labels) align like a
    table's cells; inside a chart region they build none, and reach the paragraphs."""
    case = make_case(seed, cls)
    doc = pymupdf.open("pdf", case.pdf)
    assert chart_regions(doc[0].get_cdrawings(), 8.0)[0]
    assert case.tables == [] and _tables(doc) == []
    path = tmp_path / "chart.pdf"
    path.write_bytes(case.pdf)
    src, _ = DocumentStore(tmp_path / "store").register(path)
    parsed = parse(src)
    assert parsed.document.ok, parsed.document.error
    total = DocumentAccount.of(account_text(parsed.document.pages, parsed.paragraphs, parsed.tables))
    assert total.counts["lost"] == 0 and total.unsourced == 0
    body = " ".join(p.text for p in parsed.paragraphs.paragraphs)
    assert "Source:" in body


@pytest.mark.parametrize("seed", [0, 21, 42])
def test_a_ruled_table_is_no_chart_and_still_a_table(seed: int) -> None:
    """A grid of level and upright rules enclosing cells holds no series, ticks, bars or arrows."""
    case = make_case(seed, "ruled")
    doc = pymupdf.open("pdf", case.pdf)
    assert chart_regions(doc[0].get_cdrawings(), 8.0) == ([], [])
    (table,) = _tables(doc)
    assert len(table.grid()) == len(case.tables[0].merged)


def test_a_ruled_table_beside_a_chart_stays_whole() -> None:
    """A chart above a ruled table on one page: the chart's labels build nothing, the table is
    found as drawn."""
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    left, top, right, bottom = 100.0, 80.0, 400.0, 220.0
    page.draw_line((left, top), (left, bottom))
    page.draw_line((left, bottom), (right, bottom))
    for t in range(6):  # ticks and figures on both axes
        y = bottom - (bottom - top) * t / 5
        page.draw_line((left - 3, y), (left, y))
        page.insert_text((left - 30, y + 3), f"{20 * t}", fontsize=8)
        x = left + (right - left) * t / 5
        page.draw_line((x, bottom), (x, bottom + 3))
        page.insert_text((x - 8, bottom + 14), str(2000 + t), fontsize=8)
    pts = [pymupdf.Point(left + 30 * k, bottom - 10 - (k * 37 % 100)) for k in range(10)]
    page.draw_polyline(pts, color=(0, 0, 1))
    page.insert_text((left + 10, top + 12), "Exports   Imports", fontsize=8)
    rows = [["Region", "2001", "2002", "2003"]] + [
        [f"Area {i}", str(10 + i), str(20 + i), str(30 + i)] for i in range(5)
    ]
    x_edges, y0, pitch = [60.0, 200.0, 300.0, 400.0, 500.0], 300.0, 18.0
    for r, row in enumerate(rows):
        for c, text in enumerate(row):
            page.insert_text((x_edges[c] + 4, y0 + r * pitch + 13), text, fontsize=9)
    for r in range(len(rows) + 1):
        page.draw_line((x_edges[0], y0 + r * pitch), (x_edges[-1], y0 + r * pitch))
    for x in x_edges:
        page.draw_line((x, y0), (x, y0 + len(rows) * pitch))
    doc = pymupdf.open("pdf", doc.tobytes())
    (region,), _ = chart_regions(doc[0].get_cdrawings(), 8.0)
    assert region[3] < y0  # the chart's region stops above the table
    (table,) = _tables(doc)
    assert table.grid() == rows


def test_what_is_no_data_series_or_bars() -> None:
    """A shape turning back along x (a star) and a lone slash are no series; a row of shaded
    cells (one height) is no bar chart; bars of unlike heights on one baseline are."""
    doc = pymupdf.open()
    page = doc.new_page()
    star = [pymupdf.Point(200 + 40 * k % 90, 100 + 30 * (k % 3)) for k in range(7)]
    page.draw_polyline(star)
    page.draw_line((300, 100), (340, 130))
    for k in range(5):
        page.draw_rect(pymupdf.Rect(60 + 50 * k, 300, 105 + 50 * k, 315), color=None, fill=(0.9, 0.9, 0.9))
    dr = pymupdf.open("pdf", doc.tobytes())[0].get_cdrawings()
    assert _series(dr) == [] and _bars(dr) == []
    page.draw_polyline([pymupdf.Point(60 + 20 * k, 500 - (k % 2) * 15) for k in range(6)])
    for k, h in enumerate([40, 90, 60, 20]):
        page.draw_rect(pymupdf.Rect(60 + 30 * k, 700 - h, 80 + 30 * k, 700), color=None, fill=(0.2, 0.4, 0.8))
    dr = pymupdf.open("pdf", doc.tobytes())[0].get_cdrawings()
    assert len(_series(dr)) == 1 and len(_bars(dr)) == 1


def test_wide_bars_of_like_heights_are_a_chart_on_a_drawn_axis() -> None:
    """Boxes of one width on one baseline, three heights within 1.5x of one another and no taller
    than twice their width, are shaded cells as often as bars: no chart alone; standing on a line
    drawn under them all (the category axis), they are a bar chart."""
    doc = pymupdf.open()
    page = doc.new_page()
    for k, h in enumerate([43, 52, 44, 60]):
        page.draw_rect(
            pymupdf.Rect(116 + 90 * k, 211 - h, 167 + 90 * k, 211), color=None, fill=(0.9, 0.5, 0.1)
        )
    assert _bars(pymupdf.open("pdf", doc.tobytes())[0].get_cdrawings()) == []
    page.draw_line((97, 211), (455, 211))
    assert len(_bars(pymupdf.open("pdf", doc.tobytes())[0].get_cdrawings())) == 1


def test_a_frame_round_a_series_in_two_pieces_is_the_charts() -> None:
    """A plot's frame joins the chart when it is not much larger than the series it holds, all of
    its pieces together: a line drawn in two runs is one series of the frame, not two small ones."""
    doc = pymupdf.open()
    page = doc.new_page()
    page.draw_rect(pymupdf.Rect(352, 138, 522, 317))
    for run in (
        [(352, 213), (371, 256), (390, 233), (409, 232), (427, 209)],
        [(446, 209), (465, 240), (484, 222), (503, 267), (522, 250)],
    ):
        page.draw_polyline([pymupdf.Point(*p) for p in run])
    regions, _ = chart_regions(pymupdf.open("pdf", doc.tobytes())[0].get_cdrawings(), 9.0)
    assert len(regions) == 1 and regions[0][1] < 138 and regions[0][3] > 317


def test_a_grid_drawn_cell_by_cell_has_no_ticks() -> None:
    """A word processor draws a table's borders cell by cell: short upright pieces, one row high
    and evenly spaced (columns of one width), standing on every rule. Each goes on from the piece
    in the row above or below: no tick marks, no axis, no chart."""
    doc = pymupdf.open()
    page = doc.new_page()
    x_edges = [60.0 + 50 * k for k in range(8)]
    for r in range(9):
        y = 100 + 7 * r
        page.draw_line((x_edges[0], y), (x_edges[-1], y), width=0.5)  # each rule whole
        if r < 8:
            for x in x_edges:
                page.draw_line((x, y), (x, y + 7), width=0.5)
    dr = pymupdf.open("pdf", doc.tobytes())[0].get_cdrawings()
    assert chart_regions(dr, 6.0) == ([], [])
