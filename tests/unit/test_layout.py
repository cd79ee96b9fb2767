"""Unit tests of the shared page geometry (dagster_ocr.layout) on small hand-made boxes."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from dagster_ocr import layout
from dagster_ocr.layout import (
    bands,
    centre_inside,
    column,
    crosses,
    find_gutters,
    outside,
    overlap_share,
    transform_box,
    union,
    v_overlap,
    x_gaps,
)


def test_layout_imports_nothing_of_the_project() -> None:
    # every stage and the model import it, so it must sit at the bottom of the core
    tree = ast.parse(Path(layout.__file__).read_text())
    modules = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    modules += [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    assert not [m for m in modules if m.startswith(("dagster_ocr", "dagster"))]


def test_model_boxes_are_layout_boxes() -> None:
    from dagster_ocr import model

    assert model.BBox is layout.BBox


# ----------------------------------------------------------------------------------------- boxes


def test_union_holds_every_box() -> None:
    assert union([(10, 20, 30, 40)]) == (10, 20, 30, 40)
    assert union([(10, 20, 30, 40), (0, 25, 15, 50), (12, 5, 35, 22)]) == (0, 5, 35, 50)


def test_v_overlap_is_the_shared_height_or_minus_the_gap() -> None:
    assert v_overlap((0, 0, 10, 10), (50, 4, 60, 20)) == 6  # x plays no part
    assert v_overlap((0, 0, 10, 10), (0, 2, 10, 5)) == 3  # one inside the other
    assert v_overlap((0, 0, 10, 10), (0, 10, 10, 20)) == 0  # touching
    assert v_overlap((0, 0, 10, 10), (0, 14, 10, 20)) == -4  # apart


def test_overlap_share_is_over_the_smaller_box() -> None:
    big, small = (0, 0, 100, 100), (90, 90, 110, 110)  # a quarter of the small box inside
    assert overlap_share(big, small) == pytest.approx(0.25)
    assert overlap_share(small, big) == pytest.approx(0.25)
    assert overlap_share(big, (10, 10, 20, 20)) == 1.0
    assert overlap_share(big, (100, 0, 120, 10)) == 0.0  # touching edges share nothing
    assert overlap_share(big, (200, 200, 210, 210)) == 0.0
    assert overlap_share((5, 5, 5, 50), big) == 0.0  # an empty box


def test_centre_inside_and_outside_with_a_pad() -> None:
    regions = [(0, 0, 10, 10), (100, 100, 110, 110)]
    assert centre_inside((2, 2, 8, 8), regions) and not outside((2, 2, 8, 8), regions)
    # only the centre counts: a box reaching out of the region is still inside
    assert centre_inside((-20, 0, 30, 10), regions)
    # centre (10.5, 5): inside with the default 1-point pad, outside without
    assert centre_inside((9, 4, 12, 6), regions)
    assert outside((9, 4, 12, 6), regions, pad=0.0)
    assert centre_inside((8, 4, 12, 6), regions, pad=0.0)  # centre on the edge: inside
    assert outside((50, 50, 60, 60), regions)
    assert outside((2, 2, 8, 8), [])


def test_transform_box_maps_rotations_to_boxes() -> None:
    identity = (1, 0, 0, 1, 0, 0)
    assert transform_box((1, 2, 3, 4), identity) == (1, 2, 3, 4)
    shift_scale = (2, 0, 0, 3, 10, 20)
    assert transform_box((1, 2, 3, 4), shift_scale) == (12, 26, 16, 32)
    # 90 degrees clockwise on a page 100 high: (x, y) -> (100 - y, x)
    turn = (0, 1, -1, 0, 100, 0)
    assert transform_box((10, 20, 30, 25), turn) == (75, 10, 80, 30)


def test_x_gaps_between_merged_x_ranges() -> None:
    assert x_gaps([]) == []
    assert x_gaps([(0, 0, 10, 1)]) == []
    boxes = [(0, 0, 10, 1), (5, 5, 30, 6), (12, 0, 20, 1), (40, 0, 50, 1), (50, 3, 60, 4), (70, 0, 80, 1)]
    assert x_gaps(boxes) == [(30, 40), (60, 70)]  # (10, 12) is covered by the second box


# ----------------------------------------------------------------------------------------- bands


def _box(item: tuple[str, tuple[float, float, float, float]]) -> tuple[float, float, float, float]:
    return item[1]


def test_bands_group_lines_and_read_each_left_to_right() -> None:
    words = [
        ("world", (40, 10, 70, 20)),
        ("second", (0, 30, 40, 40)),
        ("hello", (0, 11, 35, 21)),
        ("line", (45, 29, 70, 39)),
    ]
    for grow in (False, True):
        got = [[w for w, _ in band] for band in bands(words, _box, grow=grow)]
        assert got == [["hello", "world"], ["second", "line"]]
    assert bands([], _box, grow=False) == []


def test_bands_join_at_half_the_smaller_height() -> None:
    # heights 10 and 6: overlap 3 is exactly half the smaller, and joins; 2.9 does not
    assert len(bands([("a", (0, 0, 10, 10)), ("b", (20, 7, 30, 13))], _box, grow=False)) == 1
    assert len(bands([("a", (0, 0, 10, 10)), ("b", (20, 7.1, 30, 13.1))], _box, grow=False)) == 2


def test_a_first_extent_band_and_a_growing_band_differ_on_a_superscript() -> None:
    # a superscript sits higher than its line, so it comes first (by centre) and opens the band;
    # the word it belongs to joins; a word of the same line set a little lower overlaps the band
    # grown to the word's extent, but not the superscript's own
    sup = ("2", (20, 8, 26, 14))
    base = ("x", (0, 10, 20, 20))
    lower = ("y", (40, 13, 60, 23))
    words = [lower, base, sup]
    assert bands(words, _box, grow=False) == [[base, sup], [lower]]
    assert bands(words, _box, grow=True) == [[base, sup, lower]]


def test_bands_call_the_accessor_once_per_item() -> None:
    calls: list[str] = []

    def box(item: tuple[str, tuple[float, float, float, float]]) -> tuple[float, float, float, float]:
        calls.append(item[0])
        return item[1]

    bands([("a", (0, 0, 10, 10)), ("b", (20, 0, 30, 10)), ("c", (0, 20, 10, 30))], box, grow=True)
    assert sorted(calls) == ["a", "b", "c"]


# --------------------------------------------------------------------------------------- gutters


def _column_boxes(x0: float, x1: float, n: int, top: float = 100) -> list[tuple[float, float, float, float]]:
    return [(x0, top + 12 * i, x1, top + 12 * i + 10) for i in range(n)]


def test_find_gutters_needs_width_and_counted_boxes_on_each_side() -> None:
    left, right = _column_boxes(50, 280, 3), _column_boxes(300, 530, 3)
    boxes = right + left  # any order
    assert find_gutters(boxes, boxes, min_width=6, min_count=3) == [(280, 300)]
    assert find_gutters(boxes, boxes, min_width=20, min_count=3) == [(280, 300)]  # width 20 is enough
    assert find_gutters(boxes, boxes, min_width=20.5, min_count=3) == []
    assert find_gutters(boxes, boxes, min_width=6, min_count=4) == []
    # only the counted boxes count: two of the left column are not enough
    assert find_gutters(boxes, left[:2] + right, min_width=6, min_count=3) == []


def test_a_box_left_out_of_the_shaping_crosses_without_hiding_the_gutter() -> None:
    left, right = _column_boxes(50, 280, 3), _column_boxes(300, 530, 3)
    title = (50, 40, 530, 60)
    assert find_gutters(left + right + [title], left + right, 6, 3) == []
    assert find_gutters(left + right, left + right + [title], 6, 3) == [(280, 300)]


def test_find_gutters_counts_boxes_within_a_point_of_the_edges() -> None:
    left, right = _column_boxes(50, 280, 2), _column_boxes(300, 530, 3)
    # counted but not shaping: ends a point into the gutter (counts) or more (does not)
    assert find_gutters(left + right, left + right + [(60, 0, 281, 10)], 6, 3) == [(280, 300)]
    assert find_gutters(left + right, left + right + [(60, 0, 281.5, 10)], 6, 3) == []
    left, right = _column_boxes(50, 280, 3), _column_boxes(300, 530, 2)
    assert find_gutters(left + right, left + right + [(299, 0, 400, 10)], 6, 3) == [(280, 300)]
    assert find_gutters(left + right, left + right + [(298.5, 0, 400, 10)], 6, 3) == []


def test_crosses_reaches_more_than_a_point_into_both_sides() -> None:
    gutters = [(280.0, 300.0)]
    assert crosses((50, 0, 530, 10), gutters)
    assert crosses((278.9, 0, 301.1, 10), gutters)
    assert not crosses((279, 0, 400, 10), gutters)  # a point into the left side is not enough
    assert not crosses((100, 0, 301, 10), gutters)
    assert not crosses((50, 0, 280, 10), gutters)
    assert not crosses((50, 0, 530, 10), [])
    assert crosses((50, 0, 530, 10), [(100.0, 120.0), (280.0, 300.0)])


def test_column_counts_the_gutters_left_of_the_centre() -> None:
    gutters = [(100.0, 120.0), (280.0, 300.0)]
    assert column((0, 0, 90, 10), gutters) == 0
    assert column((130, 0, 270, 10), gutters) == 1
    assert column((310, 0, 500, 10), gutters) == 2
    assert column((0, 0, 200, 10), gutters) == 0  # centre 100 is not right of the gutter's start
    assert column((0, 0, 201, 10), gutters) == 1
    assert column((0, 0, 90, 10), []) == 0
