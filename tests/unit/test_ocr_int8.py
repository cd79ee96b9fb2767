"""int8 copies of the OCR models: built once into the cache, reused, metadata kept, float fallback."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from dagster_ocr.ocr import quantize  # noqa: E402
from dagster_ocr.ocr.quantize import cached_path, calibration_pages, ensure_quantized  # noqa: E402
from dagster_ocr.ocr.settings import OcrSettings  # noqa: E402


def _tiny_conv_model(path: Path, seed: int = 0) -> None:
    """Two convolutions with a ReLU, opset 11 like rapidocr's models, a metadata entry."""
    rng = np.random.default_rng(seed)
    w1 = numpy_helper.from_array(rng.normal(0, 0.5, (8, 3, 3, 3)).astype(np.float32), "w1")
    b1 = numpy_helper.from_array(rng.normal(0, 0.1, (8,)).astype(np.float32), "b1")
    w2 = numpy_helper.from_array(rng.normal(0, 0.5, (4, 8, 3, 3)).astype(np.float32), "w2")
    b2 = numpy_helper.from_array(rng.normal(0, 0.1, (4,)).astype(np.float32), "b2")
    graph = helper.make_graph(
        [
            helper.make_node("Conv", ["x", "w1", "b1"], ["h"], pads=[1, 1, 1, 1]),
            helper.make_node("Relu", ["h"], ["r"]),
            helper.make_node("Conv", ["r", "w2", "b2"], ["y"], pads=[1, 1, 1, 1]),
        ],
        "tiny",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 3, "h", "w"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 4, "h", "w"])],
        [w1, b1, w2, b2],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])
    helper.set_model_props(model, {"character": "a\nb\nc"})
    onnx.save(model, str(path))


def _inputs(n: int = 6) -> list[np.ndarray]:
    rng = np.random.default_rng(1)
    return [rng.uniform(-1, 1, (1, 3, 16, 24)).astype(np.float32) for _ in range(n)]


def _run(path: Path, x: np.ndarray) -> np.ndarray:
    return ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]


def test_the_int8_model_is_built_once_and_reused(tmp_path):
    model = tmp_path / "tiny.onnx"
    _tiny_conv_model(model)
    cache = tmp_path / "cache"
    calls = []

    def calibration() -> list[np.ndarray]:
        calls.append(1)
        return _inputs()

    first, built = ensure_quantized(model, cache, calibration)
    assert built and first.exists() and len(calls) == 1
    assert first == cached_path(model, cache) and first.parent == cache
    mtime = first.stat().st_mtime_ns
    again, built_again = ensure_quantized(model, cache, calibration)
    assert again == first and not built_again
    assert len(calls) == 1  # no second calibration run
    assert first.stat().st_mtime_ns == mtime  # not rewritten
    assert not list(cache.glob("*.tmp"))  # no half-written file left behind

    q = onnx.load(str(first))
    ops = {n.op_type for n in q.graph.node}
    assert "QuantizeLinear" in ops and "DequantizeLinear" in ops  # really quantized
    assert {p.key: p.value for p in q.metadata_props}["character"] == "a\nb\nc"  # the char list kept
    x = _inputs(1)[0]
    want, got = _run(model, x), _run(first, x)
    assert got.shape == want.shape
    assert np.abs(got - want).max() < 0.05 * np.abs(want).max()  # close to the float model


def test_a_changed_model_or_recipe_gets_its_own_cache_entry(tmp_path, monkeypatch):
    a, b = tmp_path / "a.onnx", tmp_path / "b.onnx"
    _tiny_conv_model(a, seed=0)
    _tiny_conv_model(b, seed=1)
    cache = tmp_path / "cache"
    assert cached_path(a, cache) != cached_path(b, cache)
    before = cached_path(a, cache)
    monkeypatch.setattr(quantize, "RECIPE", quantize.RECIPE + "-changed")
    assert cached_path(a, cache) != before


def test_a_failed_build_leaves_no_file_and_raises(tmp_path):
    model = tmp_path / "tiny.onnx"
    _tiny_conv_model(model)
    cache = tmp_path / "cache"
    with pytest.raises(ValueError):
        ensure_quantized(model, cache, list)  # no calibration inputs
    assert not cached_path(model, cache).exists()
    assert not list(cache.glob("*.tmp"))


def test_calibration_pages_are_deterministic_text_pages():
    a, b = calibration_pages(n=2), calibration_pages(n=2)
    assert len(a) == 2 and all(x.ndim == 3 and x.shape[2] == 3 and x.dtype == np.uint8 for x in a)
    assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
    assert all((x < 128).mean() > 0.01 for x in a)  # ink on the page


def test_rapidocr_falls_back_to_the_float_model_when_int8_cannot_be_built(tmp_path, caplog):
    from dagster_ocr.ocr.rapid import RapidOcrEngine, model_in_use
    from dagster_ocr.ocr.settings import RapidOcrSettings

    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("x")  # the cache "folder" is a file: nothing can be written there
    engine = RapidOcrEngine(RapidOcrSettings(int8_models="det_rec", int8_model_dir=str(not_a_folder)))
    with caplog.at_level(logging.WARNING, logger="dagster_ocr.ocr.rapid"):
        engine.load()
    warnings = [r.getMessage() for r in caplog.records if "int8 model unavailable" in r.getMessage()]
    assert len(warnings) == 2  # det and rec, each said once
    for part in (engine._ocr.text_det, engine._ocr.text_rec):
        assert ".int8." not in model_in_use(part)[1]  # the float models run


def test_calibration_keeps_every_recogniser_input_and_runs_the_recogniser_once():
    """While calibrating, the recogniser's answers are thrown away: its inputs are kept whole, but
    only the first row of its first input is really run; the detector (whose boxes feed the
    recogniser) runs on everything."""
    from dagster_ocr.ocr.rapid import _Recorder

    ran: list[tuple[int, ...]] = []

    def model(x: np.ndarray) -> np.ndarray:
        ran.append(x.shape)
        return x.sum(axis=(2, 3))

    a, b = _inputs(2)[0].repeat(3, axis=0), _inputs(2)[1][:, :, :, :8].repeat(2, axis=0)
    rec = _Recorder(model, outputs_used=False)
    out_a, out_b = rec(a), rec(b)
    assert len(rec.inputs) == 2 and np.array_equal(rec.inputs[0], a) and np.array_equal(rec.inputs[1], b)
    assert rec.inputs[0] is not a  # a copy: the caller may reuse its buffer
    assert ran == [(1, 3, 16, 24)]  # one row, once
    assert out_a.shape == (3, 3) and out_b.shape == (2, 3)  # as many answers as rows
    ran.clear()
    det = _Recorder(model)
    assert np.array_equal(det(a), model(a)) and ran == [a.shape, a.shape] and len(det.inputs) == 1


@pytest.mark.slow  # builds the real recogniser's int8 copy once (~30-60 CPU s, ~2 GB)
# on an AVX2-only CPU, where onnxruntime's int8 kernels are slowest, it took 127 s beside a loaded
# suite and ran past the suite's 300 s limit with a second suite beside it; 173 s -> 114 s alone
# (load 3-5) once the calibration stopped running the recogniser it only records inputs of
@pytest.mark.timeout(900)
def test_rapidocr_with_an_int8_recogniser_reads_a_scan_and_reuses_its_cache(tmp_path, corpus: Path, caplog):
    import pymupdf
    from support.text_metrics import cer

    from dagster_ocr.ocr import ocr_page
    from dagster_ocr.ocr.rapid import RapidOcrEngine, model_in_use
    from dagster_ocr.ocr.settings import RapidOcrSettings

    settings = RapidOcrSettings(int8_models="rec", int8_model_dir=str(tmp_path / "models"))
    with caplog.at_level(logging.INFO, logger="dagster_ocr.ocr.rapid"):
        first = RapidOcrEngine(settings)
        first.load()
        second = RapidOcrEngine(settings)
        second.load()
    said = [r.getMessage() for r in caplog.records if "int8 model" in r.getMessage()]
    assert len(said) == 2 and said[0].endswith("(built)") and said[1].endswith("(cached)"), said
    assert len(list((tmp_path / "models").glob("*.int8.onnx"))) == 1
    runtime, rec_path = model_in_use(second._ocr.text_rec)
    assert ".int8." in rec_path and ".int8." not in model_in_use(second._ocr.text_det)[1]
    assert runtime == "onnxruntime"  # int8 copies run on onnxruntime whatever the runtime setting
    tif = corpus / "ocr" / "tesseract" / "phototest.tif"
    with pymupdf.open(tif) as doc:
        result = ocr_page(second, doc[0], 0, dpi=None, settings=OcrSettings())
    ref = tif.with_suffix(".txt").read_text(encoding="utf-8")
    assert cer(ref, result.text) < 0.02, result.text  # measured 0.000, as the float model


def test_lines_the_int8_recogniser_doubts_are_read_again_by_the_float_model():
    from rapidocr.ch_ppocr_rec import TextRecOutput

    from dagster_ocr.ocr.rapid import _recheck_doubtful_lines

    class Wrapper:
        session = "int8"

    wrapper = Wrapper()
    seen: list[tuple[str, int]] = []

    class FakeOcr:
        def recognize_txt(self, imgs):  # reads each "image" (a name) with whichever model is in
            seen.append((wrapper.session, len(imgs)))
            confident = {"int8": {"clean": 0.97, "smudge": 0.7}, "float": {"clean": 0.98, "smudge": 0.85}}
            scores = [confident[wrapper.session][img] for img in imgs]
            txts = tuple(f"{img}-{wrapper.session}" for img in imgs)
            return TextRecOutput(
                imgs=list(imgs), txts=txts, scores=scores, word_results=tuple(() for _ in imgs)
            )

    ocr = FakeOcr()
    _recheck_doubtful_lines(ocr, wrapper, float_session="float", below=0.9)
    res = ocr.recognize_txt(["clean", "smudge", "clean", "smudge"])
    assert res.txts == ("clean-int8", "smudge-float", "clean-int8", "smudge-float")
    assert res.scores == [0.97, 0.85, 0.97, 0.85]
    assert seen == [("int8", 4), ("float", 2)]  # only the two doubtful lines read twice
    assert wrapper.session == "int8"  # the int8 model is back in place
    seen.clear()
    assert ocr.recognize_txt(["clean"]).txts == ("clean-int8",) and seen == [("int8", 1)]


def test_the_weight_range_follows_the_cpu(monkeypatch, tmp_path):
    from dagster_ocr import cpu

    model = tmp_path / "tiny.onnx"
    _tiny_conv_model(model)
    keys = {}
    for flags, want in ((frozenset({"avx2"}), "reduced"), (frozenset({"avx2", "avx512_vnni"}), "full")):
        monkeypatch.setattr(cpu, "cpu_flags", lambda flags=flags: flags)
        assert quantize.weight_range() == want
        keys[want] = cached_path(model, tmp_path)
    assert keys["full"] != keys["reduced"]  # one cache entry per kind of CPU


@pytest.mark.parametrize("reduce_range", [True, False])
def test_the_range_this_cpu_uses_is_accurate_and_reduced_is_accurate_everywhere(tmp_path, reduce_range):
    from dagster_ocr.cpu import has_int8_dot

    if not reduce_range and not has_int8_dot():
        pytest.skip("full-range int8 weights saturate on a CPU without VNNI: that is why they are not used")
    model = tmp_path / "tiny.onnx"
    _tiny_conv_model(model)
    out = tmp_path / "q.onnx"
    quantize.quantize_model(model, out, _inputs(), reduce_range=reduce_range)
    x = _inputs(1)[0]
    want, got = _run(model, x), _run(out, x)
    assert np.abs(got - want).max() < 0.05 * np.abs(want).max()
