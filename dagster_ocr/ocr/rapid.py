"""The default CPU OCR engine: rapidocr (PP-OCR models run with onnxruntime).

rapidocr 3.x ships its default detection, orientation and recognition models inside the wheel,
so it works offline; any other model choice would be downloaded at first use and fail on an
offline host, which is why the configuration below only touches runtime knobs, never models.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import math
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from dagster_ocr.errors import EngineError
from dagster_ocr.ocr.engine import OcrEngineBase, OcrLine
from dagster_ocr.ocr.ink import channel_mean, ink_text_height, split_at_ink_bands
from dagster_ocr.ocr.settings import RapidOcrSettings

logger = logging.getLogger(__name__)

#: recognition batches on OpenVINO are padded to a multiple of this many pixels wide, so that
#: their shapes repeat (``openvino_runtime.OpenVinoSession``)
REC_WIDTH_STEP = 64

#: rapidocr's own logger: it has a coloured stream handler and does not propagate
_RAPIDOCR_LOGGER = "RapidOCR"


def _stop_spinning(ocr: Any) -> None:
    """Re-open rapidocr's onnxruntime sessions with idle worker threads that sleep, not spin.

    onnxruntime's intra-op threads busy-wait between operators by default. rapidocr runs many
    small operators (one recognition batch per six lines), so on a shared or loaded machine the
    spinning burned up to half the CPU time of a page without making it faster. rapidocr 3.10
    offers no option for it, so each session is rebuilt from its model file with the same options
    plus ``session.intra_op.allow_spinning=0``; a session that cannot be rebuilt is left as is.
    """
    from onnxruntime import InferenceSession

    for part in (ocr.text_det, ocr.text_cls, ocr.text_rec):
        wrapper = getattr(part, "session", None)
        session = getattr(wrapper, "session", None)
        path = getattr(session, "_model_path", None)
        if not isinstance(session, InferenceSession) or not path:
            continue
        options = session.get_session_options()
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.add_session_config_entry("session.inter_op.allow_spinning", "0")
        wrapper.session = InferenceSession(path, sess_options=options, providers=session.get_providers())


def model_in_use(part: Any) -> tuple[str, str | None]:
    """What a rapidocr model part (``ocr.text_det``, ``text_cls``, ``text_rec``) runs: the runtime
    ('openvino', 'onnxruntime' or the wrapper's type name) and the model file."""
    from dagster_ocr.ocr.openvino_runtime import OpenVinoSession

    wrapper = getattr(part, "session", None)
    if isinstance(wrapper, OpenVinoSession):
        return "openvino", wrapper.model_path
    path = getattr(getattr(wrapper, "session", None), "_model_path", None)
    return ("onnxruntime", path) if path else (type(wrapper).__name__, None)


class _Recorder:
    """Stands in for a rapidocr session wrapper and keeps every input it is called with.

    ``outputs_used=False``: what the part answers is thrown away (the recogniser while calibrating:
    nothing rapidocr feeds any model depends on the text read), so only its first input's first
    row is really run, and that answer, repeated to the batch's size, answers every call.
    """

    def __init__(self, target: Any, outputs_used: bool = True):
        self.target, self.inputs, self.outputs_used = target, [], outputs_used
        self._answer: np.ndarray | None = None

    def __call__(self, x: np.ndarray) -> Any:
        self.inputs.append(np.array(x, copy=True))
        if self.outputs_used:
            return self.target(x)
        if self._answer is None:
            self._answer = np.asarray(self.target(x[:1]))
        return np.repeat(self._answer[:1], len(x), axis=0)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.target, name)


def _calibration_inputs(ocr: Any) -> dict[str, list[np.ndarray]]:
    """What rapidocr's detector and recogniser are fed while the float engine reads generated pages."""
    from dagster_ocr.ocr.quantize import calibration_pages

    # the recogniser's reading of the generated pages is not kept: its inputs are all calibration
    # needs (running it cost 44 of the 55 s calibration on a 2-core AVX2-only EPYC)
    recorders = {
        "det": _Recorder(ocr.text_det.session),
        "rec": _Recorder(ocr.text_rec.session, outputs_used=False),
    }
    ocr.text_det.session, ocr.text_rec.session = recorders["det"], recorders["rec"]
    try:
        for page in calibration_pages():
            ocr(np.ascontiguousarray(page[:, :, ::-1]))  # rapidocr takes BGR
    finally:
        ocr.text_det.session, ocr.text_rec.session = recorders["det"].target, recorders["rec"].target
    return {k: r.inputs for k, r in recorders.items()}


def _recheck_doubtful_lines(ocr: Any, wrapper: Any, float_session: Any, below: float) -> None:
    """Make ``ocr.recognize_txt`` read again, with the float model, every line the int8 recogniser
    read with a confidence under ``below``.

    int8 reads clean print as the float model does; where they differ the int8 confidence is low
    (a handwritten letter's lines), so only such lines pay for a second, float reading.
    ``wrapper`` is rapidocr's session wrapper whose ``session`` is swapped for that call.
    """
    from rapidocr.ch_ppocr_rec import TextRecOutput

    int8_read = ocr.recognize_txt

    def recognize_txt(imgs: list[np.ndarray]) -> Any:
        res = int8_read(imgs)
        doubtful = [i for i, score in enumerate(res.scores or []) if score < below]
        if not doubtful or res.txts is None or len(res.txts) != len(imgs):
            return res
        quantized, wrapper.session = wrapper.session, float_session
        try:
            again = int8_read([imgs[i] for i in doubtful])
        finally:
            wrapper.session = quantized
        txts, scores = list(res.txts), list(res.scores)
        words = list(res.word_results) if len(res.word_results) == len(txts) else None
        for j, i in enumerate(doubtful):
            txts[i], scores[i] = again.txts[j], again.scores[j]
            if words is not None and len(again.word_results) == len(doubtful):
                words[i] = again.word_results[j]
        return TextRecOutput(
            imgs=res.imgs,
            txts=tuple(txts),
            scores=scores,
            word_results=tuple(words) if words is not None else res.word_results,
            elapse=res.elapse,
        )

    ocr.recognize_txt = recognize_txt


#: marks a recogniser reads for a speck of dust or JPEG noise lying in a word gap
GAP_MARKS = frozenset(".,;:'\"`-\u2010\u2011\u2013\u2014\u00b7\u2018\u2019")


class _WordGapDecoder:
    """rapidocr's CTC decoder (``text_rec.postprocess_op``) with two rules before it decodes, both
    for a word gap the recogniser nearly read as one (a space at least ``min_space`` probable):

    * a mark of ``GAP_MARKS`` read between two letters or figures (not two figures: 6.8, 1,200)
      where the space was that probable is read as the space;
    * a run of blank frames between two letters where one frame gave the space that probability
      reads a space there.

    On a worn scan a speck in a word gap is read as a mark in place of the space ("based'on",
    "in-their", "proficiency.can"), and a faint gap as none ("ofthe", "tainigwhich"), which costs
    both words. On issue 37's simulated worn scans (tune pages) the ten such marks had a space at
    0.18-0.43 behind them; of the printed marks between two letters one did ("Data.gov", 0.23), the
    others under 0.07. The frames concerned are given the space between rapidocr's argmax and its
    decoding, with the mark's (or blank's) probability, so word boxes and confidences come as
    rapidocr gives them.
    """

    def __init__(self, decoder: Any, min_space: float):
        self.decoder, self.min_space = decoder, min_space
        chars = list(decoder.character)
        self.space = chars.index(" ")
        self.marks = np.array([c in GAP_MARKS for c in chars])
        self.alnum = np.array([c.isalnum() and len(c) == 1 for c in chars])
        self.digit = np.array([c.isdigit() and len(c) == 1 for c in chars])
        self.alpha = np.array([c.isalpha() and len(c) == 1 for c in chars])

    def __getattr__(self, name: str) -> Any:
        return getattr(self.decoder, name)

    def __call__(self, preds: np.ndarray, return_word_box: bool = False, **kwargs: Any) -> Any:
        # ``CTCLabelDecode.__call__`` (rapidocr 3.10) with the rules between its argmax and its
        # decoding: over rapidocr's 18,710 classes the argmax is most of the decoder's own cost
        idx = preds.argmax(axis=2)
        prob = np.take_along_axis(preds, idx[..., None], axis=2)[..., 0]  # the max, without a 2nd pass
        self._read_word_gaps(preds, idx)
        return self.decoder.decode(
            idx,
            prob,
            return_word_box,
            kwargs.get("wh_ratio_list", (1.0,)),
            kwargs.get("max_wh_ratio", 1.0),
            remove_duplicate=True,
        )

    def _read_word_gaps(self, preds: np.ndarray, idx: np.ndarray) -> None:
        """Set the frames of ``idx`` (argmax of ``preds``, batch x frames) that the two rules read
        as a space to the space, in place; each keeps its probability (the mark's or the blank's)
        as the space's confidence."""
        emitted = np.ones(idx.shape, dtype=bool)
        emitted[:, 1:] = idx[:, 1:] != idx[:, :-1]
        emitted &= idx != 0  # 0 is CTC's blank
        kept = idx.copy()  # the rules look at what the recogniser read, not at each other's result
        for b in range(idx.shape[0]):
            frames = np.flatnonzero(emitted[b])
            if frames.size < 2:
                continue
            read = kept[b, frames]
            # a mark between two letters or figures, not two figures, with the space behind it
            for k in np.flatnonzero(self.marks[read[1:-1]]) + 1:
                before, after = read[k - 1], read[k + 1]
                if not (self.alnum[before] and self.alnum[after]) or (
                    self.digit[before] and self.digit[after]
                ):
                    continue
                f = frames[k]
                if preds[b, f, self.space] < self.min_space:
                    continue
                g = f
                while g < idx.shape[1] and kept[b, g] == read[k]:  # the mark's run of frames
                    idx[b, g] = self.space
                    g += 1
            # a run of blanks between two letters with a space-like frame
            sp = np.where(kept[b] == 0, preds[b, :, self.space], 0.0)
            best = np.maximum.reduceat(sp, frames)[:-1]
            letters = self.alpha[read]
            for k in np.flatnonzero((best >= self.min_space) & letters[:-1] & letters[1:]):
                j = frames[k] + int(np.argmax(sp[frames[k] : frames[k + 1]]))
                idx[b, j] = self.space


def _smooth_faint_lines(recognizer: Any, max_contrast: float, sigma: float) -> None:
    """Make rapidocr's ``recognizer`` (``ocr.text_rec``) smooth a faint line's crop in its own
    frame, after it is scaled to the recogniser's height and before it is read: a Gaussian of
    ``sigma`` pixels of that frame where the crop's contrast (its 95th less its 5th percentile
    gray) is under ``max_contrast``.

    Faint print (toner at 90-140 on paper at 185-215) scanned with grain and saved as a small JPEG
    keeps noise of a few gray levels, grain and the JPEG's blocks, which is large against the
    print's 40-75 levels of contrast: the recogniser misread the strokes ('stares' for 'states').
    The median filter of a speckled page (``ink.despeckle``) takes the specks, not that noise.
    In the recogniser's frame (48 pixels high) the same ``sigma`` is the same share of the type,
    whatever the print's size: smoothing the page itself lost a footnote's small print. Print of
    ordinary contrast (100 and more: black on white, a grainy or blurred scan) is read as it is.
    """
    import cv2

    own = recognizer.resize_norm_img

    def resize_norm_img(img: np.ndarray, max_wh_ratio: float) -> np.ndarray:
        _, height, _ = recognizer.rec_image_shape
        h, w = img.shape[:2]
        width = min(int(math.ceil(height * w / float(h))), int(height * max_wh_ratio))
        scaled = cv2.resize(img, (max(1, width), height))
        sample = scaled[::2, ::2, 1] if scaled.ndim == 3 else scaled[::2, ::2]  # green: most of the luma
        lo, hi = np.percentile(sample, (5, 95))
        if hi - lo < max_contrast:
            scaled = cv2.GaussianBlur(scaled, (0, 0), sigma)
        return own(scaled, max_wh_ratio)  # scaled already: its own resize leaves the size as it is

    recognizer.resize_norm_img = resize_norm_img


def _use_int8(ocr: Any, which: str, cache_dir: str | None, recheck_below: float = 0.0) -> list[str]:
    """Swap the chosen sessions (``which``: rec, det or det_rec) for int8 copies of their models.

    A copy is built (``quantize.ensure_quantized``) only where the cache lacks it; the calibration
    run happens at most once for both. A part whose copy cannot be built or loaded keeps its float
    session, with a warning. Returns the parts now running int8.
    """
    from onnxruntime import InferenceSession

    from dagster_ocr.ocr.quantize import default_cache_dir, ensure_quantized

    folder = Path(cache_dir) if cache_dir else default_cache_dir()
    parts = {"det": ocr.text_det, "rec": ocr.text_rec}
    calibration: dict[str, list[np.ndarray]] = {}
    done = []
    for name in ("det", "rec"):
        if name not in which.split("_"):
            continue
        wrapper = parts[name].session
        session = getattr(wrapper, "session", None)
        path = getattr(session, "_model_path", None)
        try:
            if not isinstance(session, InferenceSession) or not path:
                raise TypeError("rapidocr's session is not an onnxruntime InferenceSession on a file")

            def inputs(name: str = name) -> list[np.ndarray]:
                if not calibration:
                    calibration.update(_calibration_inputs(ocr))
                return calibration[name]

            qpath, built = ensure_quantized(Path(path), folder, inputs)
            wrapper.session = InferenceSession(
                str(qpath), sess_options=session.get_session_options(), providers=session.get_providers()
            )
            if name == "rec" and recheck_below > 0:
                _recheck_doubtful_lines(ocr, wrapper, float_session=session, below=recheck_below)
        except Exception as exc:  # a missing onnx package, a read-only cache, a toolchain change
            logger.warning("rapidocr %s: int8 model unavailable, using the float model (%s)", name, exc)
            continue
        done.append(name)
        logger.info("rapidocr %s: int8 model %s (%s)", name, qpath, "built" if built else "cached")
    return done


def _own_det_ratio(shape: tuple[int, int], side: int, limit_type: str) -> float:
    """The factor rapidocr's detector resizes an image of ``shape`` (h, w) by (``DetPreProcess``
    before its rounding to multiples of 32)."""
    if limit_type == "max":
        return side / max(shape) if max(shape) > side else 1.0
    return side / min(shape) if min(shape) < side else 1.0


@contextlib.contextmanager
def _detector_scaled(detector: Any, shape: tuple[int, int], scale: float) -> Iterator[None]:
    """Make rapidocr's ``detector`` resize an image of ``shape`` (h, w) by ``scale`` times its own
    factor while the block runs, through the two attributes its preprocessing is built from."""
    if scale >= 1.0:
        yield
        return
    kept = detector.limit_type, detector.limit_side_len
    ratio = _own_det_ratio(shape, kept[1], kept[0]) * scale
    if ratio >= 1.0:  # a small image still enlarged, less than rapidocr would
        detector.limit_type, detector.limit_side_len = "min", math.ceil(min(shape) * ratio)
    else:
        detector.limit_type, detector.limit_side_len = "max", max(32, round(max(shape) * ratio))
    try:
        yield
    finally:
        detector.limit_type, detector.limit_side_len = kept


def _mean_confidence(rec: Any) -> float:
    """Mean confidence of a rapidocr recognition result, weighted by each line's characters; 0.0
    when it read nothing."""
    txts, scores = rec.txts or (), rec.scores or ()
    weights = [len(t.strip()) for t in txts]
    total = sum(weights)
    if not total or len(scores) != len(txts):
        return 0.0
    return sum(w * float(c) for w, c in zip(weights, scores, strict=True)) / total


class RapidOcrEngine(OcrEngineBase):
    """``OcrEngine`` backed by rapidocr. The model loads on the first ``recognize`` and is reused.

    Calls are serialised by a lock: rapidocr keeps per-call state on the instance, and
    onnxruntime already uses every core for one image, so parallel calls would gain nothing.
    """

    name = "rapidocr"

    def __init__(self, settings: RapidOcrSettings):
        self.settings = settings
        self._ocr: Any = None
        self._lock = threading.Lock()

    @property
    def min_input_side(self) -> int:
        """The shortest side the detector is given without scaling it up (``limit_type: min``
        enlarges a smaller image to ``det_limit_side_len``): page crops are kept at least this
        long (``base.ink_crop``)."""
        s = self.settings
        return s.det_limit_side_len if s.det_limit_type == "min" else 0

    def worker_factory(self) -> Callable[[], RapidOcrEngine]:
        # a CPU engine its settings describe whole: each worker process loads its own copy
        return functools.partial(RapidOcrEngine, self.settings)

    def _params(self) -> dict[str, Any]:
        s = self.settings
        params: dict[str, Any] = {
            # "error": its only warnings are "detection result is empty", normal on blank pages
            "Global.log_level": "error",
            # we filter by confidence ourselves (engine-independent, see ocr_page); keep all here
            "Global.text_score": 0.0,
            "Global.max_side_len": s.max_side_len,
            # the 0/180 line classifier also tells which way a page is turned (see OcrLine.upside_down)
            "Global.use_cls": s.use_angle_classifier,
            "Det.limit_side_len": s.det_limit_side_len,
            "Det.limit_type": s.det_limit_type,
            "Rec.rec_batch_num": s.rec_batch_size,
            "EngineConfig.onnxruntime.enable_cpu_mem_arena": s.onnx_memory_arena,
        }
        if s.num_threads:
            params["EngineConfig.onnxruntime.intra_op_num_threads"] = s.num_threads
            params["EngineConfig.onnxruntime.inter_op_num_threads"] = 1
        return params

    def load(self) -> None:
        """Load the models now (otherwise the first ``recognize`` does). Idempotent."""
        if self._ocr is not None:
            return
        with self._lock:
            if self._ocr is None:
                self._ocr = self._build()

    def _build(self) -> Any:
        # quiet its chatter before import: rapidocr configures its logger at import time
        logging.getLogger(_RAPIDOCR_LOGGER).setLevel(logging.ERROR)
        try:
            from rapidocr import RapidOCR

            ocr = RapidOCR(params=self._params())
            # rapidocr itself loads each model lazily; load them here so a missing model fails at
            # start-up as an EngineError instead of in the middle of a document
            ocr._load_det_model()
            ocr._load_cls_model()
            ocr._load_rec_model()
            if self.settings.runtime == "openvino":
                # int8 copies are onnxruntime models: those parts stay there
                self._use_openvino(ocr, keep=set(self.settings.int8_models.split("_")))
            if not self.settings.onnx_spinning:
                _stop_spinning(ocr)  # the parts left on onnxruntime
            if self.settings.word_gap_min_space > 0:
                ocr.text_rec.postprocess_op = _WordGapDecoder(
                    ocr.text_rec.postprocess_op, self.settings.word_gap_min_space
                )
            if self.settings.faint_line_max_contrast > 0 and self.settings.faint_line_blur > 0:
                _smooth_faint_lines(
                    ocr.text_rec, self.settings.faint_line_max_contrast, self.settings.faint_line_blur
                )
            if self.settings.int8_models != "none":
                _use_int8(
                    ocr,
                    self.settings.int8_models,
                    self.settings.int8_model_dir,
                    self.settings.int8_recheck_below,
                )
        except Exception as exc:
            raise EngineError(f"cannot load rapidocr: {exc}") from exc
        logger.info("rapidocr loaded (max_side_len=%d)", self.settings.max_side_len)
        return ocr

    def _use_openvino(self, ocr: Any, keep: set[str]) -> None:
        """Run the float models (those not in ``keep``) on OpenVINO; without the package, warn
        once and stay on onnxruntime."""
        from dagster_ocr.ocr.openvino_runtime import openvino_available, use_openvino

        if not openvino_available():
            logger.warning("rapidocr: runtime 'openvino', but openvino is not installed: using onnxruntime")
            return
        parts = {"det": ocr.text_det, "cls": ocr.text_cls, "rec": ocr.text_rec}
        parts = {k: v for k, v in parts.items() if k not in keep and getattr(v, "session", None) is not None}
        bf16 = frozenset(self.settings.openvino_bf16.split("_")) - {"none"}
        done = use_openvino(
            parts,
            threads=self.settings.num_threads,
            bf16=bf16,
            # only a bf16 recogniser: in f32 the padding would cost a reading identical to onnxruntime's
            width_steps={"rec": REC_WIDTH_STEP} if "rec" in bf16 else {},
        )
        in_bf16 = ", ".join(sorted(bf16)) or "none"
        logger.info("rapidocr: %s on OpenVINO (bf16: %s)", ", ".join(done) or "no model", in_bf16)

    def recognize(self, image: np.ndarray) -> list[OcrLine]:
        """Recognise text lines in an HxWx3 uint8 RGB image; boxes are axis-aligned pixels."""
        if image.ndim != 3 or image.shape[2] != 3 or image.dtype != np.uint8:
            raise ValueError(f"expected an HxWx3 uint8 RGB image, got {image.shape} {image.dtype}")
        self.load()
        # rapidocr treats a numpy array as OpenCV BGR
        bgr = np.ascontiguousarray(image[:, :, ::-1])
        with self._lock:
            try:
                result, flips = self._run(bgr)
            except Exception as exc:
                raise EngineError(f"rapidocr failed: {exc}") from exc
        boxes, txts, scores = result.boxes, result.txts, result.scores
        if boxes is None or txts is None or scores is None or len(txts) == 0:
            return []  # no text found
        if flips is not None and len(flips) != len(txts):
            flips = None  # rapidocr filtered differently than expected: no hint rather than a wrong one
        lines: list[OcrLine] = []
        for i, (box, text, score) in enumerate(zip(boxes, txts, scores, strict=True)):
            pts = np.asarray(box, dtype=float).reshape(-1, 2)  # 4-point polygon, maybe tilted
            x0, y0 = pts.min(axis=0)
            x1, y1 = pts.max(axis=0)
            lines.append(
                OcrLine(
                    text=str(text),
                    bbox=(float(x0), float(y0), float(x1), float(y1)),
                    confidence=float(score),
                    upside_down=None if flips is None else flips[i],
                    quad=tuple(float(v) for v in pts.ravel()) if len(pts) == 4 else None,
                )
            )
        return lines

    def _run(self, bgr: np.ndarray) -> tuple[Any, list[bool] | None]:
        """``RapidOCR.__call__`` unrolled, to keep the classifier's verdict per line.

        rapidocr's result drops the 0/180 classifier output, yet it is the cheapest orientation
        signal there is (the classifier runs anyway). The steps are the ones ``__call__`` runs in
        rapidocr 3.10; without the classifier the flags are None (unknown). The detector sees the
        image at ``_det_scale``; a page that then reads doubtfully (``det_full_scale_below``) is
        run again at rapidocr's own size. A page fed upside down or sideways reads doubtfully too,
        so it pays that second pass before ``recognize_upright`` tries its turns.
        """
        ocr = self._ocr
        ori = ocr.load_img(bgr)
        img, record = ocr.preprocess_img(ori)
        scale = self._det_scale(img)
        with _detector_scaled(ocr.text_det, img.shape[:2], scale):
            det, cls, rec, crops = self._steps(img, record)
        below = self.settings.det_full_scale_below
        if scale < 1.0 and below > 0 and _mean_confidence(rec) < below:
            logger.debug("read at detector scale %.2f with low confidence: detecting at full size", scale)
            img, record = ocr.preprocess_img(ori)  # detection wrote its padding into the record
            det, cls, rec, crops = self._steps(img, record)
        raw_txts = rec.txts
        cls_res = getattr(cls, "cls_res", None)
        flips: list[bool] | None = None
        if self.settings.use_angle_classifier and raw_txts is not None and cls_res is not None:
            thresh = float(ocr.cfg.Cls.cls_thresh)
            # build_final_output keeps lines with non-empty text, in order (text_score is 0)
            flips = [
                label == "180" and score > thresh
                for (label, score), txt in zip(cls_res, raw_txts, strict=False)
                if txt.strip()
            ]
        result = ocr.build_final_output(ori, det, cls, rec, crops, record)
        return result, flips

    def _det_scale(self, img: np.ndarray) -> float:
        """The share of rapidocr's own detector input side to detect ``img`` at (setting
        ``det_text_height``): 1.0 unless the page's letters would be larger than wanted there."""
        s = self.settings
        if not s.det_text_height or not self._ocr.use_det:
            return 1.0
        height = ink_text_height(img)
        if height is None:
            return 1.0
        own = _own_det_ratio(img.shape[:2], s.det_limit_side_len, s.det_limit_type)
        scale = s.det_text_height / (height * own)
        return 1.0 if scale > s.det_max_scale else max(s.det_min_scale, scale)

    def _steps(self, img: np.ndarray, record: dict[str, Any]) -> tuple[Any, Any, Any, list[np.ndarray]]:
        """``RapidOCR.run_ocr_steps`` (detect, classify, recognise) with one step between detection
        and recognition: lines the detector merged across a narrow column gutter are cut apart
        (``base.split_at_ink_bands``, setting ``split_at_gutters``) and their parts cropped anew
        before they are read. Each step is rapidocr's own method, failing as it does there."""
        ocr = self._ocr
        if not self.settings.split_at_gutters or not ocr.use_det:
            return ocr.run_ocr_steps(img, record)
        from rapidocr.ch_ppocr_cls import TextClsOutput
        from rapidocr.ch_ppocr_det import TextDetOutput
        from rapidocr.ch_ppocr_rec import TextRecOutput
        from rapidocr.main import RapidOCRError

        try:
            crops, det = ocr.detect_and_crop(img, record)
        except RapidOCRError as exc:  # nothing detected: what run_ocr_steps answers
            logger.debug("%s", exc)
            return TextDetOutput(), TextClsOutput(), TextRecOutput(), []
        # detection saw ``img`` itself unless rapidocr padded a very wide or short one; boxes are
        # then in the padded image's pixels, which are not at hand, so such an image is not cut
        if not record.get("padding_1", {}).get("top") and not record.get("padding_1", {}).get("left"):
            cut = split_at_ink_bands(det.boxes, channel_mean(img))
            if len(cut) != len(det.boxes):
                boxes = [np.reshape(np.asarray(q, dtype=det.boxes.dtype), (4, 2)) for _, q in cut]
                counts = np.bincount([i for i, _ in cut], minlength=len(det.boxes))
                crops = [
                    crops[i] if counts[i] == 1 else ocr.crop_text_regions(img, [box])[0]
                    for (i, _), box in zip(cut, boxes, strict=True)
                ]
                det.boxes = np.stack(boxes)
                if det.scores is not None:
                    det.scores = [det.scores[i] for i, _ in cut]
        cls_in, cls = crops, TextClsOutput()
        if ocr.use_cls:
            try:
                cls_in, cls = ocr.cls_and_rotate(crops)
            except RapidOCRError as exc:
                logger.warning("%s", exc)
                return det, TextClsOutput(), TextRecOutput(), []
        rec = TextRecOutput()
        if ocr.use_rec:
            try:
                rec = ocr.recognize_txt(cls_in)
            except RapidOCRError as exc:
                logger.warning("%s", exc)
                return det, cls, TextRecOutput(), []
        return det, cls, rec, crops
