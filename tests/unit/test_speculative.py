"""Speculative decoding engine on tiny random TrOCR-style checkpoints (CPU, offline).

The checkpoints are written with save_pretrained and loaded through the engine's real loading
code. Drafts: an exact copy of the target (acceptance must be 1.0) and a noisy copy (strictly
between 0 and 1); output must equal the target's greedy output alone in both cases.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pymupdf
import pytest
import torch
from support.tiny_models import build_tiny_target, derive_draft

from dagster_ocr.errors import EngineError
from dagster_ocr.ocr import ENGINES, OcrEngine, OcrSettings, TransformersOcrSettings, get_engine, ocr_page
from dagster_ocr.ocr.speculative import SpeculativeOcrEngine, choose_k
from dagster_ocr.ocr.stats import DecodeStats, summarize

MAX_NEW = 16


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("tiny_models")
    target = build_tiny_target(root / "target")
    return {
        "target": target,
        "exact": derive_draft(target, root / "exact", kind="exact"),
        "noisy": derive_draft(target, root / "noisy", kind="noisy", noise=0.05),
    }


@pytest.fixture(scope="module")
def crops() -> list[np.ndarray]:
    rng = np.random.default_rng(7)
    return [rng.integers(0, 256, (24, int(w), 3), dtype=np.uint8) for w in (40, 150, 90, 200)]


def _engine(models: dict[str, Path], draft: str | None, **kw) -> SpeculativeOcrEngine:
    settings = TransformersOcrSettings(
        target_path=str(models["target"]),
        draft_path=str(models[draft]) if draft else None,
        device="cpu",
        max_new_tokens=MAX_NEW,
        cpu_threads=1,  # tiny matmuls: thread hand-offs cost more than they save
        **{"adaptive": False, "num_speculative_tokens": 4, **kw},
    )
    return SpeculativeOcrEngine(settings)


@pytest.fixture(scope="module")
def reference(models, crops) -> list[tuple[str, float]]:
    """The target's own greedy output (batched, no draft)."""
    stats = DecodeStats()
    out = _engine(models, None).recognize_crops(crops, stats=stats)
    assert stats.draft_forwards == 0 and stats.target_forwards >= MAX_NEW
    return out


def test_engine_satisfies_the_protocol(models):
    assert isinstance(_engine(models, None), OcrEngine)
    assert "transformers" in ENGINES


def test_exact_copy_draft_gives_identical_output_and_full_acceptance(models, crops, reference):
    stats = DecodeStats()
    out = _engine(models, "exact").recognize_crops(crops, stats=stats)
    assert [t for t, _ in out] == [t for t, _ in reference]
    assert stats.acceptance_rate == 1.0
    # K=4 accepted every round: 5 tokens per target forward, except a shorter last round
    assert stats.tokens_per_target_forward >= 4.0
    assert stats.accepted == stats.new_tokens - stats.target_forwards


def test_noisy_draft_gives_identical_output_and_partial_acceptance(models, crops, reference):
    stats = DecodeStats()
    out = _engine(models, "noisy").recognize_crops(crops, stats=stats)
    assert [t for t, _ in out] == [t for t, _ in reference]
    # confidences are the target's own token probabilities, whatever drafted them
    assert [c for _, c in out] == pytest.approx([c for _, c in reference], abs=1e-4)
    assert 0.0 < stats.acceptance_rate < 1.0
    assert 1.0 < stats.tokens_per_target_forward < 5.0


def test_k_per_document_type(models, crops):
    eng = _engine(models, "exact", num_speculative_tokens_by_doc_type={"contract": 8, "free_text": 2})
    eng.load()
    with eng.document("contract") as pages:
        eng.recognize(crops[1])
    with eng.document("free_text") as pages2:
        eng.recognize(crops[1])
    assert pages[0].k == 8 and pages2[0].k == 2
    # exact draft: every round yields K+1 tokens
    assert pages[0].tokens_per_target_forward > pages2[0].tokens_per_target_forward
    assert eng.configured_k("unknown") == 4
    total = summarize(eng.take_stats())
    assert total.regions == 2 and total.acceptance_rate == 1.0
    assert eng.take_stats() == []  # statistics do not accumulate across documents


def test_adaptive_mode_switches_speculation_off_when_acceptance_is_low(models, crops, reference):
    eng = _engine(
        models,
        "noisy",
        adaptive=True,
        adaptive_window=2,
        adaptive_min_acceptance=0.99,
        adaptive_probe_every=3,
    )
    eng.load()
    stats = [DecodeStats() for _ in range(3)]
    for st in stats:
        out = eng.recognize_crops(crops[:2], stats=st)
        assert [t for t, _ in out] == [t for t, _ in reference[:2]]
    assert stats[0].draft_forwards > 0  # speculated while measuring
    assert stats[1].draft_forwards == 0 and stats[2].draft_forwards == 0  # then off
    st = DecodeStats()
    eng.recognize_crops(crops[:1], stats=st)  # off for 4 regions >= probe_every: probe again
    assert st.draft_forwards > 0


def test_choose_k_follows_acceptance():
    assert choose_k(0.95, 8, 0.1) == 8
    assert choose_k(0.1, 8, 0.3) == 1
    assert 1 < choose_k(0.76, 16, 0.15) < 16


def test_oom_halves_the_batch_and_retries_the_same_crops(models, crops, reference, monkeypatch):
    eng = _engine(models, None, batch_size=4)
    eng.load()
    real = eng._decode_chunk
    sizes: list[int] = []
    freed: list[bool] = []

    def flaky(chunk, *args):
        sizes.append(len(chunk))
        if len(chunk) > 1:
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB (simulated)")
        return real(chunk, *args)

    monkeypatch.setattr(eng, "_decode_chunk", flaky)
    monkeypatch.setattr(eng, "_free_memory", lambda: freed.append(True))
    out = eng.recognize_crops(crops)
    assert [t for t, _ in out] == [t for t, _ in reference]  # no crop skipped, order kept
    assert sizes[:3] == [4, 2, 1] and eng.batch_size == 1 and len(freed) == 2

    monkeypatch.setattr(eng, "_decode_chunk", lambda *a: (_ for _ in ()).throw(torch.OutOfMemoryError("oom")))
    with pytest.raises(EngineError, match="single region"):
        eng.recognize_crops(crops[:1])


def test_page_through_ocr_page_and_stats(models):
    eng = _engine(models, "exact")
    doc = pymupdf.open()
    page = doc.new_page(width=200, height=60)
    page.insert_text((10, 35), "Total due 1,250.00", fontsize=14)
    result = ocr_page(eng, page, 0, dpi=72, settings=OcrSettings(engine="transformers", min_confidence=0.0))
    assert result.engine == "transformers" and result.text_source == "ocr"
    assert len(result.lines) <= 1  # line_detector="none": the page is one region
    stats = eng.take_stats()  # one per recognize call (ocr_page may retry a turned page)
    assert stats and all(s.regions == 1 and s.acceptance_rate == 1.0 and s.speculative for s in stats)


def test_missing_checkpoint_is_an_engine_error(tmp_path):
    eng = SpeculativeOcrEngine(TransformersOcrSettings(target_path=str(tmp_path / "nope"), device="cpu"))
    with pytest.raises(EngineError, match="never downloaded"):
        eng.load()
    with pytest.raises(EngineError, match="ocr.engine.target_path"):
        get_engine(OcrSettings(engine="transformers"))


def test_checkpoints_come_from_the_settings(models):
    """No environment variable: the transformers engine is configured like any other engine."""
    settings = OcrSettings.model_validate(
        {"engine": {"kind": "transformers", "target_path": str(models["target"]), "device": "cpu"}}
    )
    eng = get_engine(settings)
    assert isinstance(eng, SpeculativeOcrEngine) and eng.settings.target_path == str(models["target"])


def test_settings_reject_unknown_keys_and_bad_dtype(tmp_path):
    with pytest.raises(ValueError):
        TransformersOcrSettings(target_path="x", dtype="int4")
    with pytest.raises(ValueError):
        TransformersOcrSettings(target_path="x", num_speculative_token=3)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
def test_cuda_half_precision_matches_target_alone(models, crops, dtype):
    base = _engine(models, None, device="cuda", dtype=dtype).recognize_crops(crops)
    stats = DecodeStats()
    out = _engine(models, "exact", device="cuda", dtype=dtype).recognize_crops(crops, stats=stats)
    assert [t for t, _ in out] == [t for t, _ in base] and stats.acceptance_rate == 1.0
