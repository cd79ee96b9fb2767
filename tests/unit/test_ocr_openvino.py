"""rapidocr's models on OpenVINO's CPU plugin (``ocr.engine.runtime``, issue 21 session 12): the same
model files computing the same outputs, an explicit precision, onnxruntime where OpenVINO fails."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pymupdf
import pytest

pytest.importorskip("openvino")
ort = pytest.importorskip("onnxruntime")

from dagster_ocr.ocr import OcrSettings, RapidOcrSettings, ocr_page  # noqa: E402
from dagster_ocr.ocr.openvino_runtime import OpenVinoSession, use_openvino  # noqa: E402
from dagster_ocr.ocr.rapid import REC_WIDTH_STEP, RapidOcrEngine, model_in_use  # noqa: E402


def _bundled(name: str) -> Path:
    import rapidocr

    [path] = (Path(rapidocr.__file__).parent / "models").glob(f"*{name}*.onnx")
    return path


def _ort(path: Path, x: np.ndarray) -> np.ndarray:
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return session.run(None, {session.get_inputs()[0].name: x})[0]


@pytest.mark.parametrize(("model", "shape"), [("det", (1, 3, 96, 128)), ("rec", (2, 3, 48, 192))])
def test_openvino_computes_what_onnxruntime_computes_in_f32(model, shape):
    path = _bundled(f"_{model}_")
    x = np.random.default_rng(0).uniform(-1, 1, shape).astype(np.float32)
    got, want = OpenVinoSession(path)(x), _ort(path, x)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, atol=1e-3)
    # a second shape, and the first again: outputs are the caller's, not the request's memory
    y = x[..., : shape[-1] - 32].copy()
    session = OpenVinoSession(path)
    first = session(x)
    second = session(y)
    np.testing.assert_array_equal(first, session(x))
    assert second.shape == _ort(path, y).shape


def test_the_precision_is_always_explicit():
    # OpenVINO's own default on CPUs with bf16 instructions is bf16: never left to it
    import openvino as ov

    session = OpenVinoSession(_bundled("_det_"))
    compiled = session._request.get_compiled_model()
    assert compiled.get_property("INFERENCE_PRECISION_HINT") == ov.Type.f32
    assert int(compiled.get_property("INFERENCE_NUM_THREADS")) == 1


def test_a_recognition_batch_padded_to_its_width_step_keeps_its_own_length():
    path = _bundled("_rec_")
    x = np.random.default_rng(1).uniform(-1, 1, (3, 3, 48, 200)).astype(np.float32)
    stepped = OpenVinoSession(path, width_step=64)
    out = stepped(x)
    assert out.shape == _ort(path, x).shape  # 25 columns of 8 px, not the padded 256 px's 32
    assert stepped(x[..., :192]).shape == _ort(path, x[..., :192]).shape  # a multiple: no padding


LINES = ("Invoice 2024 total 1,250.00", "Payment due within 30 days", "§ 12 Fees in EUR")


def _text_page() -> tuple[pymupdf.Document, pymupdf.Page]:
    doc = pymupdf.open()
    page = doc.new_page(width=420, height=240)
    for y, text in zip((60, 110, 160), LINES, strict=True):
        page.insert_text((40, y), text, fontname="helv", fontsize=14)
    return doc, page


def test_the_engine_reads_the_same_on_either_runtime_in_f32_and_alike_with_a_bf16_recogniser():
    engines = {
        "onnxruntime": RapidOcrEngine(RapidOcrSettings(runtime="onnxruntime")),
        "openvino": RapidOcrEngine(RapidOcrSettings(openvino_bf16="none")),
        "default": RapidOcrEngine(RapidOcrSettings()),  # OpenVINO, the recogniser in bf16
    }
    doc, page = _text_page()
    read = {}
    for name, engine in engines.items():
        engine.load()
        for part in (engine._ocr.text_det, engine._ocr.text_rec):
            assert model_in_use(part)[0] == ("onnxruntime" if name == "onnxruntime" else "openvino")
        result = ocr_page(engine, page, 0, dpi=150, settings=OcrSettings())
        read[name] = [(ln.text, tuple(round(v) for v in ln.bbox)) for ln in result.lines]
    assert read["openvino"] == read["onnxruntime"]
    assert [box for _, box in read["default"]] == [box for _, box in read["openvino"]]  # an f32 detector
    for name in read:
        assert [text for text, _ in read[name]][:2] == list(LINES[:2]), name
    assert engines["default"]._ocr.text_rec.session.width_step == REC_WIDTH_STEP
    assert engines["openvino"]._ocr.text_rec.session.width_step == 0


def test_without_openvino_the_engine_stays_on_onnxruntime(monkeypatch, caplog):
    import dagster_ocr.ocr.openvino_runtime as ov_runtime

    monkeypatch.setattr(ov_runtime, "openvino_available", lambda: False)
    engine = RapidOcrEngine(RapidOcrSettings())
    with caplog.at_level(logging.WARNING, logger="dagster_ocr.ocr.rapid"):
        engine.load()
    assert any("openvino is not installed" in r.getMessage() for r in caplog.records)
    assert model_in_use(engine._ocr.text_det)[0] == "onnxruntime"


def test_a_model_openvino_cannot_load_stays_on_onnxruntime(tmp_path, caplog):
    broken = tmp_path / "broken.onnx"
    broken.write_bytes(b"not a model")

    class OrtSession:
        _model_path = str(broken)

    class Wrapper:
        session = OrtSession()

    class Part:
        session = Wrapper()

    part, good = Part(), Part()
    good.session = Wrapper()
    good.session.session = type("S", (), {"_model_path": str(_bundled("_cls_"))})()
    with caplog.at_level(logging.WARNING, logger="dagster_ocr.ocr.openvino_runtime"):
        done = use_openvino({"det": part, "cls": good}, threads=1)
    assert done == ["cls"]
    assert isinstance(part.session, Wrapper)  # untouched
    assert isinstance(good.session, OpenVinoSession)
    assert any("det: OpenVINO unavailable" in r.getMessage() for r in caplog.records)


def test_the_runtime_is_speed_only_for_checkpoints_but_bf16_is_not():
    from dagster_ocr.checkpoints import fingerprint_key, ocr_fingerprint

    def key(**engine) -> str:
        engine_obj = RapidOcrEngine(RapidOcrSettings(**engine))
        return fingerprint_key(ocr_fingerprint(engine_obj, OcrSettings()))

    f32 = key(openvino_bf16="none")
    assert key(runtime="onnxruntime") == f32  # the same float model, read alike
    assert key(runtime="onnxruntime", openvino_bf16="det_rec") == f32  # bf16 means nothing there
    assert len({f32, key(), key(openvino_bf16="det_rec")}) == 3  # bf16 reads differently
