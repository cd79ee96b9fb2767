"""Where rapidocr's CPU seconds per page go: detection, angle classifier, recognition, and the rest.

Each page goes through ``ocr_page`` (the text stage's own path: render, recognise, orientation
retry, reading order) with the rapidocr engine's stages wrapped to count their CPU seconds
(``time.process_time``: every thread of this process). For detection and recognition the
onnxruntime session's share is counted apart from rapidocr's Python pre/post-processing; the
detector's input size, the lines found and the recognition batches and their padded width are
recorded. Pages: the corpus OCR pages (tune and check split as MANIFEST.json says) and two pages
of the long-scan bench's generated 200-dpi scan (reference: the generated document's text).

    .venv/bin/python bench/ocr_profile.py [--variants default,det960] [--json out.json] [--repeat 1]

Variants are engine/OCR settings to compare on the same rendered pages (CER must not move on tune).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import pymupdf

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(1, str(ROOT / "tests"))
sys.path.insert(2, str(ROOT / "bench"))

import _common as C  # noqa: E402
from ocr_cpu import Item, items, score  # noqa: E402

from dagster_ocr.ocr.base import ocr_page  # noqa: E402
from dagster_ocr.ocr.rapid import RapidOcrEngine  # noqa: E402
from dagster_ocr.ocr.settings import OcrSettings, RapidOcrSettings  # noqa: E402

#: name -> (engine settings, OCR settings) overrides
VARIANTS: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "default": ({}, {}),
    "det-max-1600": ({"det_limit_type": "max", "det_limit_side_len": 1600}, {}),
    "det-max-1280": ({"det_limit_type": "max", "det_limit_side_len": 1280}, {}),
    "det-max-960": ({"det_limit_type": "max", "det_limit_side_len": 960}, {}),
    "rec-batch-1": ({"rec_batch_size": 1}, {}),
    "rec-batch-6": ({"rec_batch_size": 6}, {}),  # rapidocr's own, the default before session 8
    "rec-batch-12": ({"rec_batch_size": 12}, {}),
    "threads-2": ({"num_threads": 2}, {}),
    "arena": ({"onnx_memory_arena": True}, {}),
    "rec-batch-2": ({"rec_batch_size": 2}, {}),
    "rec-batch-3": ({"rec_batch_size": 3}, {}),
    "classifier": ({"use_angle_classifier": True}, {}),
    "no-orientation": ({}, {"detect_orientation": False}),
    "dpi-120": ({}, {"dpi": 120}),
    "no-crop": ({}, {"crop_to_ink": False}),  # the whole page to the engine, as before session 9
    # int8 copies of the models (static QDQ, ocr/quantize.py), session 10
    "int8-rec": ({"int8_models": "rec"}, {}),
    "int8-det": ({"int8_models": "det"}, {}),
    "int8": ({"int8_models": "det_rec"}, {}),
    "float": ({"int8_models": "none"}, {}),
    "int8-rec-norecheck": ({"int8_models": "rec", "int8_recheck_below": 0.0}, {}),
    "int8-norecheck": ({"int8_models": "det_rec", "int8_recheck_below": 0.0}, {}),
    # the detector at rapidocr's own size, as before session 11 (det_text_height off)
    "det-full": ({"det_text_height": 0.0}, {}),
    # every page whose letters allow it (the first default of session 11)
    "det-any-scale": ({"det_max_scale": 1.0}, {}),
    "det-text-6": ({"det_text_height": 6.0, "det_max_scale": 1.0}, {}),
    "det-text-10": ({"det_text_height": 10.0, "det_max_scale": 1.0}, {}),
    "det-no-recheck": ({"det_full_scale_below": 0.0, "det_max_scale": 1.0}, {}),
    # the runtime (session 12): onnxruntime (the default before), OpenVINO in f32 / bf16 throughout
    "ort": ({"runtime": "onnxruntime"}, {}),
    "ov-f32": ({"openvino_bf16": "none"}, {}),
    "ov-bf16-det-rec": ({"openvino_bf16": "det_rec"}, {}),
}


class _Timed:
    """A callable's proxy that adds its CPU seconds (and calls) to ``sink[key]``."""

    def __init__(self, target: Any, sink: dict[str, float], key: str, on_call: Any = None):
        self._target, self._sink, self._key, self._on_call = target, sink, key, on_call

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self._on_call is not None:
            self._on_call(*args)
        c = time.process_time()
        try:
            return self._target(*args, **kwargs)
        finally:
            self._sink[self._key] += time.process_time() - c
            self._sink[self._key + "_calls"] += 1

    def __getattr__(self, name: str) -> Any:
        return getattr(self._target, name)


def instrument(engine: RapidOcrEngine, sink: dict[str, float]) -> None:
    """Wrap the loaded rapidocr object's stages and sessions so each call adds to ``sink``."""
    engine.load()
    ocr = engine._ocr

    def det_input(img: np.ndarray) -> None:
        sink["det_input_px"] += img.shape[-1] * img.shape[-2]  # NCHW

    def rec_batch(batch: np.ndarray) -> None:
        sink["rec_batches"] += 1
        sink["rec_padded_width"] += batch.shape[0] * batch.shape[-1]

    ocr.detect_and_crop = _Timed(ocr.detect_and_crop, sink, "det")
    ocr.text_det.session = _Timed(ocr.text_det.session, sink, "det_onnx", det_input)
    ocr.cls_and_rotate = _Timed(ocr.cls_and_rotate, sink, "cls")
    ocr.recognize_txt = _Timed(ocr.recognize_txt, sink, "rec")
    ocr.text_rec.session = _Timed(ocr.text_rec.session, sink, "rec_onnx", rec_batch)
    ocr.preprocess_img = _Timed(ocr.preprocess_img, sink, "preprocess")
    ocr.build_final_output = _Timed(ocr.build_final_output, sink, "final")


def run(item: Item, engine: RapidOcrEngine, ocr_settings: OcrSettings, sink: dict[str, float]) -> dict:
    sink.clear()
    with pymupdf.open(item.path) as doc:
        page = doc[item.page]
        c, t = time.process_time(), time.perf_counter()
        result = ocr_page(engine, page, item.page, dpi=item.dpi, settings=ocr_settings)
        cpu, wall = time.process_time() - c, time.perf_counter() - t
    row = {"item": item.name, "group": item.group, "cpu_s": cpu, "wall_s": wall, "lines": len(result.lines)}
    row.update(score(item, result.text))
    row.update({k: float(v) for k, v in sink.items()})
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--variants", default="default", help=f"comma-separated, of: {', '.join(VARIANTS)}")
    ap.add_argument("--only", help="comma-separated substrings of page names")
    ap.add_argument("--repeat", type=int, default=1, help="rounds (variants alternate page by page)")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    C.quiet_logs()
    pages = [it for it in items() if not it.group.startswith("born-digital")]  # the scans
    if args.only:
        pages = [p for p in pages if any(s in p.name for s in args.only.split(","))]
    engines: dict[str, tuple[RapidOcrEngine, OcrSettings, dict[str, float]]] = {}
    for name in args.variants.split(","):
        eng_kw, ocr_kw = VARIANTS[name]
        sink: dict[str, float] = defaultdict(float)
        engine = RapidOcrEngine(RapidOcrSettings(**eng_kw))
        instrument(engine, sink)
        engines[name] = (engine, OcrSettings(**ocr_kw), sink)
    rows = []
    for r in range(args.repeat):
        for item in pages:
            split = item.split
            for name, (engine, ocr_settings, sink) in engines.items():
                row = run(item, engine, ocr_settings, sink)
                row.update(variant=name, split=split, round=r)
                rows.append(row)
                print(
                    f"{item.name:28s} {split:9s} {name:15s} cer={row['cer']:.3f} cpu={row['cpu_s']:.2f}s "
                    f"det={row.get('det', 0):.2f} (onnx {row.get('det_onnx', 0):.2f}, "
                    f"{row.get('det_input_px', 0) / 1e6:.2f} MPx) cls={row.get('cls', 0):.2f} "
                    f"rec={row.get('rec', 0):.2f} (onnx {row.get('rec_onnx', 0):.2f}, "
                    f"{row.get('rec_batches', 0):.0f} batches) lines={row['lines']}",
                    file=sys.stderr,
                )
    head = (
        "| split | variant | pages | mean CER | CPU s/page | det | det onnx | cls | rec | rec onnx | rest |"
    )
    print("\n" + head)
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for split in ("tune", "check", "generated"):
        for name in engines:
            sel = [x for x in rows if x["split"] == split and x["variant"] == name]
            if not sel:
                continue

            def m(key: str, sel: list[dict] = sel) -> float:
                return float(np.mean([x.get(key, 0.0) for x in sel]))

            rest = m("cpu_s") - m("det") - m("cls") - m("rec")
            print(
                f"| {split} | {name} | {len(sel) // args.repeat} | {m('cer'):.4f} | {m('cpu_s'):.2f} "
                f"| {m('det'):.2f} | {m('det_onnx'):.2f} | {m('cls'):.2f} | {m('rec'):.2f} "
                f"| {m('rec_onnx'):.2f} | {rest:.2f} |"
            )
    print(f"\nload average {os.getloadavg()}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
