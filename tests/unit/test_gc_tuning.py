"""rarer_full_collections: full collections rarer inside the block, the thresholds restored after it."""

import gc

import pytest

from dagster_ocr.gc_tuning import FULL_EVERY, rarer_full_collections


def test_the_block_raises_only_the_full_threshold_and_restores_it():
    before = gc.get_threshold()
    with rarer_full_collections():
        inside = gc.get_threshold()
        with rarer_full_collections():  # nested (a caller's own block around run_inbox): no change
            assert gc.get_threshold() == inside
        assert gc.get_threshold() == inside
    assert inside == (before[0], before[1], max(before[2], FULL_EVERY))
    assert gc.get_threshold() == before


def test_the_thresholds_are_restored_when_the_block_raises():
    before = gc.get_threshold()
    with pytest.raises(RuntimeError), rarer_full_collections():
        raise RuntimeError("a document failed")
    assert gc.get_threshold() == before


def test_the_cli_leaves_the_thresholds_as_it_found_them():
    before = gc.get_threshold()
    import assets.cli  # noqa: F401  (its imports run inside the block)

    assert gc.get_threshold() == before
