"""Batched lossless speculation (issue 24) on tiny random checkpoints, CPU, offline.

For both target families (TrOCR-style encoder-decoder, Qwen2-VL-style decoder-only through the
image-text-to-text classes) and every draft kind, the batched loop must give the target's own
greedy tokens for batch sizes 1 to 8, with rows ending at different steps. The oracle is
transformers' own ``generate`` on each region alone (batch 1, no draft): an implementation
independent of ours.

Rows end at different steps: EOS is set to a token the random target emits at different
positions in different regions (a random model rarely emits its configured EOS).

Text-grounded drafts need a target whose output matches the page's text. The construction used:
a page whose text layer holds what the target reads from its pixels, which is exactly a scanned
PDF with an invisible OCR text layer (rendering mode 3 leaves the pixels unchanged). Where the
layer matches, drafts are accepted; where it is perturbed, partly; where it is unrelated, hardly,
and the adaptive mode stops paying for it.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pymupdf
import pytest
import torch
from support.tiny_models import CHARSET, build_tiny_target, derive_draft, train_to_read
from support.tiny_vlm import build_tiny_vlm, derive_vlm_draft

from dagster_ocr.ocr import OcrSettings, TransformersOcrSettings, models, ocr_page
from dagster_ocr.ocr.batched import EncoderDecoderRunner, ModelDrafter, speculative_greedy
from dagster_ocr.ocr.speculative import SpeculativeOcrEngine
from dagster_ocr.ocr.stats import DecodeStats

MAX_NEW = 20
#: page text unrelated to what the target reads, with every character in it: lookups always find
#: something to propose, and the target rejects nearly all of it
UNRELATED = (CHARSET[::-1] + CHARSET[::2]) * 2
SIZES = [(24, 40), (24, 150), (24, 90), (24, 200), (30, 60), (20, 120), (28, 70), (24, 180)]


def _crops(seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 256, (h, w, 3), dtype=np.uint8) for h, w in SIZES]


@pytest.fixture(scope="module")
def ed(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("ed")
    target = build_tiny_target(root / "target", seed=11)  # own folder: the eos change below is local
    return {
        "target": target,
        "exact": derive_draft(target, root / "exact", kind="exact"),
        "noisy": derive_draft(target, root / "noisy", kind="noisy", noise=0.05),
    }


@pytest.fixture(scope="module")
def vlm(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("vlm")
    target = build_tiny_vlm(root / "target", seed=3)
    return {
        "target": target,
        "exact": derive_vlm_draft(target, root / "exact", kind="exact"),
        "noisy": derive_vlm_draft(target, root / "noisy", kind="noisy", noise=0.05),
    }


def _engine(paths: dict[str, Path], draft: str | None, **kw) -> SpeculativeOcrEngine:
    settings = {
        "target_path": str(paths["target"]),
        "draft_path": str(paths[draft]) if draft else None,
        "device": "cpu",
        "max_new_tokens": MAX_NEW,
        "cpu_threads": 1,
        "adaptive": False,
        "num_speculative_tokens": 4,
        **kw,
    }
    return SpeculativeOcrEngine(TransformersOcrSettings(**settings))


def _alone(eng: SpeculativeOcrEngine, crop: np.ndarray, eos: int | None) -> list[int]:
    """transformers' greedy generate on one region, no draft: the oracle."""
    m = eng.load()
    with torch.inference_mode():
        if m.family == "encoder_decoder":
            prompt = torch.tensor([eng._prompt_ids()])
            out = m.target.generate(
                pixel_values=eng._pixels([crop], m.target_pre),
                decoder_input_ids=prompt,
                max_new_tokens=MAX_NEW,
                do_sample=False,
                eos_token_id=eos,
            )
        else:
            inputs = eng.vlm_inputs([crop])
            prompt = inputs["input_ids"]
            out = m.target.generate(**inputs, max_new_tokens=MAX_NEW, do_sample=False, eos_token_id=eos)
    row = out[0, prompt.shape[1] :].tolist()
    return row[: row.index(eos) + 1] if eos in row else row


def _with_varied_eos(paths: dict[str, Path], crops: list[np.ndarray]) -> tuple[int, list[list[int]]]:
    """Make EOS a token the target emits at different steps, and return the oracle's tokens."""
    eng = _engine(paths, None)
    m = eng.load()
    free = [_alone(eng, c, None) for c in crops]
    firsts: dict[int, set[int]] = {}
    for row in free:
        for tok in set(row):
            firsts.setdefault(tok, set()).add(row.index(tok))
    eos = max(firsts, key=lambda t: (len(firsts[t]), Counter(x for r in free for x in r)[t]))
    m.target.generation_config.eos_token_id = eos
    m.target.generation_config.save_pretrained(paths["target"])  # engines loaded later see it too
    for key in [k for k in models._MODELS if str(paths["target"]) in k]:
        if models._MODELS[key] is not m:
            del models._MODELS[key]
    ref = [_alone(eng, c, eos) for c in crops]
    assert len({len(r) for r in ref}) >= 3, "rows must end at different steps"
    return eos, ref


@pytest.fixture(scope="module")
def ed_ref(ed) -> tuple[list[np.ndarray], list[list[int]]]:
    crops = _crops(1)
    return crops, _with_varied_eos(ed, crops)[1]


@pytest.fixture(scope="module")
def vlm_ref(vlm) -> tuple[list[np.ndarray], list[list[int]]]:
    crops = _crops(2)
    return crops, _with_varied_eos(vlm, crops)[1]


def _texts(eng: SpeculativeOcrEngine, rows: list[list[int]]) -> list[str]:
    return [eng.load().tokenizer.decode(r, skip_special_tokens=True) for r in rows]


def _noisy(text: str, every: int = 4) -> str:
    return "".join("q" if i % every == every - 1 else ch for i, ch in enumerate(text))


@pytest.mark.parametrize("family", ["ed", "vlm"])
@pytest.mark.parametrize("kind", ["off", "exact", "noisy", "page_text", "page_text_noisy"])
def test_identical_to_target_alone_for_batch_sizes_1_to_8(request, family, kind):
    paths = request.getfixturevalue(family)
    crops, ref = request.getfixturevalue(f"{family}_ref")
    draft = kind if kind in ("exact", "noisy") else None
    totals = DecodeStats()
    for batch in range(1, 9):
        eng = _engine(paths, draft, batch_size=batch)
        refs = None
        if kind.startswith("page_text"):
            refs = _texts(eng, ref[:batch])
            refs = [_noisy(r) for r in refs] if kind == "page_text_noisy" else refs
        stats = DecodeStats()
        speculate = "off" if kind == "off" else ("page_text" if refs else "draft_model")
        out = eng.recognize_crops(crops[:batch], kind=speculate, stats=stats, references=refs)
        assert [t for t, _ in out] == _texts(eng, ref[:batch]), f"batch {batch}"
        assert stats.new_tokens == sum(len(r) for r in ref[:batch])
        totals.add(stats)
    if kind == "off":
        assert totals.draft_forwards == 0 and totals.tokens_per_target_forward == 1.0
    elif kind in ("exact", "page_text"):
        # an exact copy / the target's own reading as page text: every draft is accepted
        # (page text: a repeated n-gram may point the lookup at the wrong place now and then)
        assert totals.acceptance_rate == 1.0 if kind == "exact" else totals.acceptance_rate >= 0.8
        assert totals.tokens_per_target_forward > 2.5
    else:
        assert 0.0 < totals.acceptance_rate < 1.0
        assert 1.0 < totals.tokens_per_target_forward


def test_confidences_are_the_targets_own(ed, ed_ref):
    crops, _ = ed_ref
    alone = _engine(ed, None).recognize_crops(crops, kind="off")
    spec = _engine(ed, "noisy").recognize_crops(crops, kind="draft_model")
    assert [c for _, c in spec] == pytest.approx([c for _, c in alone], abs=1e-4)


def test_cache_compaction_keeps_output_identical(ed, ed_ref):
    """Rejected drafts leave masked holes; gathering the live entries after every round must not
    change a token (max_holes=0 compacts each round)."""
    crops, ref = ed_ref
    eng = _engine(ed, "noisy")
    m = eng.load()
    eos = m.target.generation_config.eos_token_id
    with torch.inference_mode():
        pixels = eng._pixels(crops, m.target_pre)
        prompt = torch.tensor([eng._prompt_ids()]).expand(len(crops), -1)
        target = EncoderDecoderRunner(m.target, m.target.get_encoder()(pixel_values=pixels).last_hidden_state)
        draft = EncoderDecoderRunner(m.draft, m.draft.get_encoder()(pixel_values=pixels).last_hidden_state)
        first = target.prefill(prompt)
        draft.prefill(prompt)
        res = speculative_greedy(
            target, first, ModelDrafter(draft), k=3, max_new_tokens=MAX_NEW, eos={eos}, max_holes=0
        )
        target.close()
        draft.close()
    assert res.tokens == ref
    assert 0 < res.accepted < res.drafted
    assert res.batch_forwards < max(len(r) for r in ref)  # rounds, not tokens


def _scan_with_text_layer(image: np.ndarray, text: str | None) -> pymupdf.Document:
    """A one-page PDF: ``image`` as the page (72 dpi) and ``text`` as an invisible text layer."""
    h, w = image.shape[:2]
    doc = pymupdf.open()
    page = doc.new_page(width=w, height=h)
    pix = pymupdf.Pixmap(pymupdf.csRGB, w, h, np.ascontiguousarray(image).tobytes(), False)
    page.insert_image(page.rect, pixmap=pix)
    if text:
        page.insert_text((2, h / 2), text.replace("\n", " "), fontsize=6, render_mode=3)
    return doc


def test_page_text_layer_drafts_are_accepted_where_the_target_reads_it(vlm):
    """A page-level VLM through ``ocr_page``: its invisible text layer is what it reads."""
    settings = OcrSettings(engine="transformers", min_confidence=0.0, detect_orientation=False)
    eng = _engine(vlm, None, speculation="page_text")
    for seed in range(20):  # a page the random target reads at some length (fixed seeds: deterministic)
        image = np.random.default_rng(seed).integers(0, 256, (64, 96, 3), dtype=np.uint8)
        plain = ocr_page(eng, _scan_with_text_layer(image, None)[0], 0, dpi=72, settings=settings)
        assert eng.take_stats()[0].draft_kind is None  # no text layer: nothing to draft from
        read = " ".join(ln.text for ln in plain.lines)
        if len(read) >= 12:
            break
    assert len(read) >= 12, "the tiny target must read something for this test to mean anything"
    results = {}
    for name, layer in {"same": read, "noisy": _noisy(read, 3), "other": "unrelated words 123"}.items():
        page = ocr_page(eng, _scan_with_text_layer(image, layer)[0], 0, dpi=72, settings=settings)
        assert [ln.text for ln in page.lines] == [ln.text for ln in plain.lines]  # lossless
        (st,) = eng.take_stats()
        assert st.draft_kind == "page_text"
        results[name] = st
    assert results["same"].acceptance_rate >= 0.8
    assert results["same"].tokens_per_target_forward > 2.0
    assert 0.0 < results["noisy"].acceptance_rate < results["same"].acceptance_rate
    assert (results["other"].acceptance_rate or 0.0) < 0.5


def test_auto_prefers_what_pays_and_turns_a_useless_kind_off(ed, ed_ref):
    crops, ref = ed_ref
    eng = _engine(ed, "exact", speculation="auto", adaptive=True, adaptive_window=4, adaptive_probe_every=100)
    eng.load()
    unrelated = [UNRELATED] * len(crops)
    kinds = []
    for _ in range(4):
        for i in range(4):
            kind, _k = eng._policy(has_page_text=True)
            kinds.append(kind)
            out = eng.recognize_crops([crops[i]], kind=kind or "off", references=unrelated[:1])
            assert out[0][0] == _texts(eng, [ref[i]])[0]
    # measured: the exact draft first, then the (useless) page text, which is switched off
    assert kinds[:4] == ["draft_model"] * 4 and "page_text" in kinds
    assert kinds[-4:] == ["draft_model"] * 4
    assert eng._adaptive[(None, "page_text")].off_since is not None


def test_speculation_off_when_nothing_pays(ed, ed_ref):
    crops, ref = ed_ref
    eng = _engine(ed, None, speculation="page_text", adaptive=True, adaptive_window=2, adaptive_probe_every=6)
    eng.load()
    stats = [DecodeStats() for _ in range(4)]
    for st in stats:
        out = eng.recognize_crops(crops[:2], stats=st, references=[UNRELATED] * 2)
        assert [t for t, _ in out] == _texts(eng, ref[:2])
    assert stats[0].draft_forwards > 0 and stats[0].acceptance_rate < 0.5  # measured, then off
    assert eng._adaptive[(None, "page_text")].off_since is not None
    assert stats[2].draft_forwards == 0 and stats[3].draft_forwards == 0


def test_cpu_ocr_reading_feeds_page_text_drafts(ed):
    """page_text_source='cpu_ocr': rapidocr reads the page first; its lines become the drafts."""
    doc = pymupdf.open()
    page = doc.new_page(width=300, height=80)
    page.insert_text((10, 45), "Total due 1,250.00", fontsize=20)
    image = np.ascontiguousarray(
        np.frombuffer(page.get_pixmap(alpha=False).samples, dtype=np.uint8).reshape(80, 300, 3)
    )
    alone = _engine(ed, None).recognize(image)
    eng = _engine(ed, None, page_text_source="cpu_ocr", speculation="page_text")
    seen: list = []
    real = eng.recognize_crops

    def spy(crops, **kw):
        seen.append(kw.get("references"))
        return real(crops, **kw)

    eng.recognize_crops = spy  # type: ignore[method-assign]
    lines = eng.recognize(image)
    (st,) = eng.take_stats()
    assert st.draft_kind == "page_text"
    assert seen and "1,250.00" in (seen[0][0] or "")  # rapidocr's reading is the draft text
    assert [ln.text for ln in lines] == [ln.text for ln in alone]


def test_vlm_draft_must_share_image_tokens(vlm, tmp_path):
    from dagster_ocr.errors import EngineError

    other = build_tiny_vlm(tmp_path / "other", seed=4)
    cfg = json.loads((other / "config.json").read_text())
    cfg["image_token_id"] = cfg["video_token_id"]  # another placeholder token than the target's
    (other / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(EngineError, match="image tokens"):
        _engine({"target": vlm["target"], "other": other}, "other").load()


#: lines a tiny target is trained (for seconds) to read; all in the tiny tokenizer's characters
READ_LINES = ["invoice 2041", "net due: 30 days", "tax 8.5%", "balance 0.00 usd total"]


def _line_page(text: str) -> pymupdf.Document:
    doc = pymupdf.open()
    page = doc.new_page(width=220, height=28)
    page.insert_text((4, 19), text, fontsize=13)  # visible text, and its text layer
    return doc


def _render(doc: pymupdf.Document) -> np.ndarray:
    pix = doc[0].get_pixmap(alpha=False)
    return np.frombuffer(pix.samples, dtype=np.uint8).reshape(pix.height, pix.width, 3).copy()


@pytest.fixture(scope="module")
def reader(tmp_path_factory) -> SpeculativeOcrEngine:
    """A TrOCR-style target trained for seconds to read four rendered lines: a target that copies."""
    path = build_tiny_target(
        tmp_path_factory.mktemp("reader") / "t", image_size=64, d_model=64, init_std=0.02
    )
    eng = _engine(
        {"target": path}, None, speculation="page_text", max_new_tokens=40, num_speculative_tokens=8
    )
    m = eng.load()
    pixels = eng._pixels([_render(_line_page(t)) for t in READ_LINES], m.target_pre)
    train_to_read(
        m.target, pixels, [m.tokenizer(t, add_special_tokens=False)["input_ids"] for t in READ_LINES]
    )
    return eng


def test_text_layer_drafts_accepted_where_a_reading_target_matches_the_page(reader):
    """Each line's pixels under its own text layer and under another line's: drafts are taken
    exactly where what the target reads is what the text layer says, and never change the text."""
    settings = OcrSettings(engine="transformers", min_confidence=0.0, detect_orientation=False)
    read_right = 0
    for i, line in enumerate(READ_LINES):
        doc = _line_page(line)
        alone = reader.recognize_crops([_render(doc)], kind="off")[0][0]
        read_right += alone == line
        other = READ_LINES[(i + 1) % len(READ_LINES)]
        for layer, pdf in ((line, doc), (other, _scan_with_text_layer(_render(doc), other))):
            page = ocr_page(reader, pdf[0], 0, dpi=72, settings=settings)  # drafts from its text layer
            (st,) = reader.take_stats()
            assert st.draft_kind == "page_text" and [ln.text for ln in page.lines] == [alone]  # lossless
            if alone == layer:
                assert st.acceptance_rate >= 0.9 and st.tokens_per_target_forward > 4.0
            else:
                assert (st.acceptance_rate or 0.0) < 0.5
    assert read_right >= 3, "the tiny target did not learn to read its lines"


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize("family", ["ed", "vlm"])
@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
def test_cuda_half_precision_batched_speculation_matches_own_greedy(request, family, dtype):
    """On a GPU in half precision: one forward verifying K+1 tokens must pick the same argmax as
    K+1 one-token forwards (kernels differ; a near-tie could flip, which this would show)."""
    paths = request.getfixturevalue(family)
    crops, _ = request.getfixturevalue(f"{family}_ref")
    base = _engine(paths, None, device="cuda", dtype=dtype, batch_size=8).recognize_crops(crops, kind="off")
    texts = [t for t, _ in base]
    stats = DecodeStats()
    out = _engine(paths, "exact", device="cuda", dtype=dtype, batch_size=8).recognize_crops(
        crops, kind="draft_model", stats=stats
    )
    assert [t for t, _ in out] == texts and stats.acceptance_rate == 1.0
    out = _engine(paths, None, device="cuda", dtype=dtype, batch_size=8).recognize_crops(
        crops, kind="page_text", references=texts
    )
    assert [t for t, _ in out] == texts
