"""Hybrid search's fusion (kb_search._fuse): each ranking's scores normalised, then weighted."""

from __future__ import annotations

import pytest

from dagster_ocr.kb_search import _fuse
from dagster_ocr.kb_settings import KbSettings


def _ranking(*scored: tuple[str, float]) -> list[tuple[dict, float]]:
    return [({"doc_id": "d", "chunk_id": cid}, score) for cid, score in scored]


def _order(fused: list[tuple[dict, float]]) -> list[str]:
    return [c["chunk_id"] for c, _ in fused]


def test_a_clear_vector_best_outranks_what_a_weak_bm25_list_merely_contains():
    # BM25 finds only loosely related chunks (close scores); the vectors' best stands far ahead.
    words = _ranking(("a", 3.1), ("b", 3.0), ("c", 2.9))
    vector = _ranking(("v", 0.71), ("b", 0.52), ("a", 0.50))
    fused = _fuse([words, vector], [0.4, 0.6])
    assert _order(fused)[0] == "v"
    # reciprocal rank fusion (k = 60) put "a" and "b" (in both lists) above "v", rank 1 of one
    rrf = {cid: 0.0 for cid in "abcv"}
    for ranking in (words, vector):
        for rank, (chunk, _) in enumerate(ranking, start=1):
            rrf[chunk["chunk_id"]] += 1 / (60 + rank)
    assert max(rrf, key=rrf.get) != "v"


def test_scores_are_normalised_per_ranking_and_weighted():
    words = _ranking(("a", 12.0), ("b", 6.0), ("c", 2.0))
    vector = _ranking(("b", 0.9), ("a", 0.5))
    fused = dict((c["chunk_id"], s) for c, s in _fuse([words, vector], [0.4, 0.6]))
    assert fused["a"] == pytest.approx(0.4 * 1.0 + 0.6 * 0.0)
    assert fused["b"] == pytest.approx(0.4 * 0.4 + 0.6 * 1.0)
    assert fused["c"] == pytest.approx(0.0)  # the worst of one list and absent from the other


def test_an_empty_ranking_or_a_single_candidate_is_no_division_by_zero():
    assert _order(_fuse([[], _ranking(("x", 0.3))], [0.4, 0.6])) == ["x"]
    assert _fuse([[], []], [0.4, 0.6]) == []


def test_the_default_weight_and_the_retired_rank_fusion_setting():
    s = KbSettings()
    assert s.search_mode == "hybrid" and s.hybrid_vector_weight == 0.6
    assert KbSettings(rrf_k=30) == s  # an old settings file still loads (the key is ignored)
    with pytest.raises(ValueError):
        KbSettings(hybrid_vector_weight=1.5)
