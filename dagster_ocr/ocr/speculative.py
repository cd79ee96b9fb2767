"""A transformers OCR engine with speculative (assisted) decoding: a target model plus a draft.

The target is a local vision-to-text checkpoint of the ``VisionEncoderDecoderModel`` family (TrOCR,
Donut, Nougat style: a vision encoder and an autoregressive text decoder). The optional draft is a
smaller checkpoint of the same family with the same tokenizer. Decoding is greedy, and the draft
only proposes tokens that the target verifies, so the text is exactly the target's own greedy text;
the draft changes speed only. Statistics show whether it pays.

How a page is processed (``SpeculativeOcrEngine.recognize``):

1. Regions: ``line_detector="none"`` treats the image as one region (full-page models such as
   Donut or Nougat); ``"rapidocr"`` finds text lines with rapidocr's bundled detector only and
   crops them (line models such as TrOCR).
2. Regions are sorted by expected output length (a line crop's width/height ratio) and cut into
   chunks of ``batch_size``: one batched vision-encoder pass per chunk on the target.
3. Each region then decodes on its own with transformers' assisted generation from the
   precomputed encoder outputs (transformers refuses batch > 1 with a draft). Without a draft, or
   where the adaptive mode switched speculation off, the chunk decodes in one batched greedy
   ``generate``; sorting by length is what keeps that batch from waiting on one long region.

Three transformers defects silently reduce acceptance to ~0 while output stays right; the one that
applies to this model family (an encoder-decoder draft re-feeds its whole decoder input unless
``decoder_attention_mask`` is passed) is handled in ``_assisted``; tests check acceptance, not only
equality. Acceptance is counted with forward pre-hooks, because ``generate`` reports none:
accepted = new tokens - target forwards, drafted = draft forwards.

Known limits: decoder-only VLM targets (Qwen2-VL, GOT-OCR2) are not supported yet; the draft's own
vision encoder runs inside transformers per region (batch 1), so a draft should have a small
encoder; the draft must see the same image preprocessing as the target unless its folder holds its
own ``preprocessor_config.json``.
"""

from __future__ import annotations

import json
import logging
import math
import os
import threading
import time
from collections import defaultdict, deque
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from dagster_ocr.errors import EngineError
from dagster_ocr.ocr.base import OcrEngineBase, OcrLine
from dagster_ocr.ocr.settings import TransformersOcrSettings
from dagster_ocr.ocr.stats import DecodeStats, PageDecodeStats

logger = logging.getLogger(__name__)

#: the OCR settings' engine name this engine registers under
ENGINE_NAME = "transformers"
#: fragmentation is the usual cause of OOM with variable-length decoding; expandable segments let
#: the caching allocator grow blocks instead of splintering memory. Only a default: a user's wins.
DEFAULT_CUDA_ALLOC_CONF = "expandable_segments:True"


class _ForwardCounter:
    """Counts forward calls of a module with a pre-hook (exact; generate reports no statistics)."""

    def __init__(self, module: Any):
        self.count = 0
        self._handle = module.register_forward_pre_hook(self._hook)

    def _hook(self, *_: Any) -> None:
        self.count += 1

    def remove(self) -> None:
        self._handle.remove()


def choose_k(acceptance: float, k_max: int, draft_cost_ratio: float) -> int:
    """The K in 1..k_max maximising expected tokens per unit of cost at per-token ``acceptance``.

    With i.i.d. acceptance a, one round yields (1 - a^(K+1)) / (1 - a) tokens and costs one target
    forward plus K draft forwards (``draft_cost_ratio`` each).
    """
    a = min(max(acceptance, 0.0), 0.999)
    best_k, best = 1, -1.0
    for k in range(1, k_max + 1):
        value = (1 - a ** (k + 1)) / (1 - a) / (1 + k * draft_cost_ratio)
        if value > best + 1e-12:
            best_k, best = k, value
    return best_k


@dataclass
class _Adaptive:
    """Measured acceptance of one document type, and whether speculation is on for it."""

    window: deque[tuple[int, int]] = field(default_factory=deque)  # (accepted, drafted) per region
    off_since: int | None = None  # regions seen while off


# ------------------------------------------------------------------------------------ the models


@dataclass
class LoadedModels:
    """Target, optional draft, tokenizer and preprocessing, on one device, loaded once."""

    target: Any
    draft: Any | None
    tokenizer: Any
    device: Any
    dtype: Any
    target_pre: dict[str, Any]
    draft_pre: dict[str, Any] | None


_MODELS: dict[str, LoadedModels] = {}
_MODELS_LOCK = threading.Lock()


def resolve_device_dtype(device: str, dtype: str) -> tuple[Any, Any]:
    """The torch device and dtype that ``device``/``dtype`` settings mean on this machine."""
    import torch

    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        raise EngineError("device='cuda' but CUDA is not available on this machine")
    if dtype == "auto":
        if device == "cuda":
            dtype = "bf16" if torch.cuda.is_bf16_supported() else "fp16"
        else:
            dtype = "fp32"
    return torch.device(device), {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[dtype]


def _read_preprocessor(path: Path) -> dict[str, Any]:
    """Image size, rescale and normalisation from a ``preprocessor_config.json`` (ViT/TrOCR style)."""
    cfg_file = path / "preprocessor_config.json"
    cfg: dict[str, Any] = json.loads(cfg_file.read_text()) if cfg_file.is_file() else {}
    size = cfg.get("size", {"height": 384, "width": 384})
    if isinstance(size, int):
        size = {"height": size, "width": size}
    elif "shortest_edge" in size:
        size = {"height": size["shortest_edge"], "width": size["shortest_edge"]}
    return {
        "height": int(size["height"]),
        "width": int(size["width"]),
        "scale": float(cfg.get("rescale_factor", 1 / 255)) if cfg.get("do_rescale", True) else 1.0,
        "mean": cfg.get("image_mean", [0.5, 0.5, 0.5]) if cfg.get("do_normalize", True) else None,
        "std": cfg.get("image_std", [0.5, 0.5, 0.5]),
    }


def _check_local(path: str | None, what: str) -> Path:
    if not path:
        raise EngineError(
            f"OCR engine 'transformers' has no {what} checkpoint: set ocr.engine.{what}_path in the "
            "settings (a local folder written by save_pretrained) or configure GpuOcrResource; "
            "models are never downloaded at run time"
        )
    p = Path(path).expanduser()
    if not (p / "config.json").is_file():
        raise EngineError(
            f"{what} checkpoint not found at {p}: expected a local folder written by save_pretrained "
            "(config.json, weights, tokenizer); models are never downloaded at run time"
        )
    return p


def _model_class(path: Path) -> Any:
    """VisionEncoderDecoderModel for TrOCR/Donut/Nougat folders, else the image-text-to-text auto class."""
    import transformers

    model_type = json.loads((path / "config.json").read_text()).get("model_type")
    if model_type == "vision-encoder-decoder":
        return transformers.VisionEncoderDecoderModel
    return transformers.AutoModelForImageTextToText


def load_models(settings: TransformersOcrSettings) -> LoadedModels:
    """Load (once per process and configuration) the target, the draft and the tokenizer."""
    key = json.dumps(
        [settings.target_path, settings.draft_path, settings.device, settings.dtype], sort_keys=True
    )
    with _MODELS_LOCK:
        if key not in _MODELS:
            _MODELS[key] = _load(settings)
        return _MODELS[key]


def _load(settings: TransformersOcrSettings) -> LoadedModels:
    # must be set before CUDA initialises; setdefault keeps a user's own choice
    os.environ.setdefault("PYTORCH_CUDA_ALLOC_CONF", DEFAULT_CUDA_ALLOC_CONF)
    from transformers import AutoTokenizer

    device, dtype = resolve_device_dtype(settings.device, settings.dtype)
    if device.type == "cpu" and settings.cpu_threads:
        import torch

        torch.set_num_threads(settings.cpu_threads)
    target_dir = _check_local(settings.target_path, "target")
    draft_dir = _check_local(settings.draft_path, "draft") if settings.draft_path else None
    started = time.perf_counter()
    try:
        tokenizer = AutoTokenizer.from_pretrained(target_dir, local_files_only=True)
        target = _model_class(target_dir).from_pretrained(target_dir, dtype=dtype, local_files_only=True)
        target.to(device).eval()
        draft = None
        if draft_dir is not None:
            draft = _model_class(draft_dir).from_pretrained(draft_dir, dtype=dtype, local_files_only=True)
            draft.to(device).eval()
    except Exception as exc:
        raise EngineError(f"cannot load transformers OCR models: {exc}") from exc
    if not target.config.is_encoder_decoder:
        raise EngineError("only vision encoder-decoder targets (TrOCR, Donut, Nougat style) are supported")
    if draft is not None:
        if not draft.config.is_encoder_decoder:
            raise EngineError("the draft must be a vision encoder-decoder model like the target")
        if (draft_dir / "tokenizer.json").is_file() or (draft_dir / "tokenizer_config.json").is_file():
            draft_tok = AutoTokenizer.from_pretrained(draft_dir, local_files_only=True)
            if draft_tok.get_vocab() != tokenizer.get_vocab():
                raise EngineError("the draft's tokenizer differs from the target's; speculation needs one")
    logger.info(
        "transformers OCR loaded on %s/%s in %.1f s (draft: %s)",
        device,
        dtype,
        time.perf_counter() - started,
        settings.draft_path,
    )
    return LoadedModels(
        target=target,
        draft=draft,
        tokenizer=tokenizer,
        device=device,
        dtype=dtype,
        target_pre=_read_preprocessor(target_dir),
        draft_pre=(
            _read_preprocessor(draft_dir)
            if draft_dir is not None and (draft_dir / "preprocessor_config.json").is_file()
            else None
        ),
    )


# ------------------------------------------------------------------------------------ the engine


def _is_oom(exc: BaseException) -> bool:
    import torch

    return isinstance(exc, torch.OutOfMemoryError) or "out of memory" in str(exc).lower()


class SpeculativeOcrEngine(OcrEngineBase):
    """``OcrEngine`` on a transformers target with an optional draft (speculative decoding).

    Set ``document_type`` (e.g. "contract") before a document's pages to use its K; read the
    per-page statistics with ``take_stats()`` after them. Calls are serialised by a lock: one
    model on one device gains nothing from concurrent calls and the statistics stay exact.
    """

    name = ENGINE_NAME

    def __init__(self, settings: TransformersOcrSettings):
        self.settings = settings
        self.document_type: str | None = None
        self._models: LoadedModels | None = None
        self._lock = threading.RLock()
        self._stats: list[PageDecodeStats] = []
        self._adaptive: dict[str | None, _Adaptive] = defaultdict(_Adaptive)
        self._k_cache: dict[str | None, int] = {}
        self.batch_size = settings.batch_size  # lowered for good on OOM
        self._detector: Any = None

    # ---- lifecycle

    def load(self) -> LoadedModels:
        """Load the models now (otherwise the first ``recognize`` does). Idempotent."""
        if self._models is None:
            with self._lock:
                if self._models is None:
                    self._models = load_models(self.settings)
        return self._models

    @contextmanager
    def document(self, document_type: str | None) -> Iterator[list[PageDecodeStats]]:
        """Within the block pages use ``document_type``'s K; yields the list its pages' stats fill."""
        # the lock is not held across the block: pages are recognized inside it, possibly on
        # another thread (the pipeline's per-page timeout runs recognize in a worker)
        with self._lock:
            previous, self.document_type = self.document_type, document_type
            start = len(self._stats)
        collected: list[PageDecodeStats] = []
        try:
            yield collected
        finally:
            with self._lock:
                collected.extend(self._stats[start:])
                self.document_type = previous

    def take_stats(self) -> list[PageDecodeStats]:
        """Per-page statistics since the last call (and forget them: memory stays flat)."""
        with self._lock:
            out, self._stats = self._stats, []
            return out

    # ---- speculation policy

    def configured_k(self, document_type: str | None) -> int:
        """K from the settings for ``document_type`` (the default K for unknown types)."""
        by_type = self.settings.num_speculative_tokens_by_doc_type
        return by_type.get(document_type or "", self.settings.num_speculative_tokens)

    def _policy(self) -> tuple[bool, int]:
        """(speculate?, K) for the current document type, from settings and measured acceptance."""
        k = self.configured_k(self.document_type)
        if self._models is None or self._models.draft is None:
            return False, k
        if not self.settings.adaptive:
            return True, k
        state = self._adaptive[self.document_type]
        if state.off_since is not None:
            if state.off_since < self.settings.adaptive_probe_every:
                return False, k
            state.off_since = None  # probe again with a fresh window
            state.window.clear()
        if len(state.window) >= self.settings.adaptive_window:
            acc = sum(a for a, _ in state.window)
            drafted = sum(d for _, d in state.window)
            rate = acc / drafted if drafted else 0.0
            if rate < self.settings.adaptive_min_acceptance:
                logger.info(
                    "acceptance %.2f below %.2f for %r: speculation off",
                    rate,
                    self.settings.adaptive_min_acceptance,
                    self.document_type,
                )
                state.off_since = 0
                return False, k
            return True, choose_k(rate, k, self.settings.draft_cost_ratio)
        return True, k

    def _observe(self, accepted: int, drafted: int, speculative: bool, regions: int) -> None:
        state = self._adaptive[self.document_type]
        if speculative:
            state.window.append((accepted, drafted))
            while len(state.window) > self.settings.adaptive_window:
                state.window.popleft()
        elif state.off_since is not None:
            state.off_since += regions

    # ---- recognition

    def recognize(self, image: np.ndarray) -> list[OcrLine]:
        """Recognise the text regions of an HxWx3 uint8 RGB image; boxes in pixels."""
        if image.ndim != 3 or image.shape[2] != 3 or image.dtype != np.uint8:
            raise ValueError(f"expected an HxWx3 uint8 RGB image, got {image.shape} {image.dtype}")
        self.load()
        boxes = self._regions(image)
        crops = [
            image[int(y0) : int(math.ceil(y1)), int(x0) : int(math.ceil(x1))] for x0, y0, x1, y1 in boxes
        ]
        with self._lock:
            speculative, k = self._policy()
            stats = PageDecodeStats(
                page_seq=len(self._stats), document_type=self.document_type, k=k, speculative=speculative
            )
            started = time.perf_counter()
            results = self.recognize_crops(crops, speculative=speculative, k=k, stats=stats)
            stats.seconds = time.perf_counter() - started
            self._stats.append(stats)
        lines = []
        for box, (text, conf) in zip(boxes, results, strict=True):
            if text.strip():
                lines.append(OcrLine(text=text, bbox=box, confidence=conf))
        return lines

    def _regions(self, image: np.ndarray) -> list[tuple[float, float, float, float]]:
        h, w = image.shape[:2]
        if self.settings.line_detector == "none":
            return [(0.0, 0.0, float(w), float(h))]
        if self._detector is None:
            logging.getLogger("RapidOCR").setLevel(logging.ERROR)
            from rapidocr import RapidOCR

            self._detector = RapidOCR(params={"Global.log_level": "error"})
        out = self._detector(
            np.ascontiguousarray(image[:, :, ::-1]), use_det=True, use_cls=False, use_rec=False
        )
        if out.boxes is None:
            return []
        boxes = []
        for poly in out.boxes:
            pts = np.asarray(poly, dtype=float).reshape(-1, 2)
            x0, y0 = np.clip(pts.min(axis=0), 0, [w, h])
            x1, y1 = np.clip(pts.max(axis=0), 0, [w, h])
            if x1 - x0 >= 2 and y1 - y0 >= 2:
                boxes.append((float(x0), float(y0), float(x1), float(y1)))
        return boxes

    def recognize_crops(
        self,
        crops: Sequence[np.ndarray],
        *,
        speculative: bool | None = None,
        k: int | None = None,
        stats: DecodeStats | None = None,
    ) -> list[tuple[str, float]]:
        """(text, confidence) per RGB crop, in input order. The core the benchmark also calls.

        ``speculative``/``k`` default to the current policy. Crops are decoded in chunks sorted by
        expected length; a CUDA out-of-memory error frees the cache, halves the chunk and retries the
        same crops (none is skipped); at chunk size 1 it is raised as ``EngineError``.
        """
        models = self.load()
        if speculative is None or k is None:
            pol_spec, pol_k = self._policy()
            speculative = pol_spec if speculative is None else speculative
            k = pol_k if k is None else k
        speculative = speculative and models.draft is not None
        stats = stats if stats is not None else DecodeStats()
        # expected output length grows with a line's aspect ratio: bucket similar lengths together
        order = sorted(range(len(crops)), key=lambda i: crops[i].shape[1] / max(crops[i].shape[0], 1))
        results: dict[int, tuple[str, float]] = {}
        pos = 0
        while pos < len(order):
            chunk = order[pos : pos + self.batch_size]
            try:
                out = self._decode_chunk([crops[i] for i in chunk], speculative, k, stats)
            except Exception as exc:
                if not _is_oom(exc):
                    raise
                self._free_memory()
                if len(chunk) == 1:
                    raise EngineError(f"out of memory decoding a single region: {exc}") from exc
                self.batch_size = max(1, len(chunk) // 2)
                logger.warning("out of memory at batch %d: retrying with %d", len(chunk), self.batch_size)
                continue  # the same crops again, smaller
            results.update(zip(chunk, out, strict=True))
            pos += len(chunk)
        return [results[i] for i in range(len(crops))]

    def _free_memory(self) -> None:
        import gc

        import torch

        gc.collect()
        if torch.cuda.is_available():
            torch.cuda.empty_cache()

    def _pixels(self, crops: Sequence[np.ndarray], pre: dict[str, Any]) -> Any:
        """Resize and normalise RGB crops into a (N, 3, H, W) tensor on the model's device."""
        import torch
        import torch.nn.functional as F

        m = self._models
        assert m is not None
        tensors = []
        for crop in crops:
            t = torch.from_numpy(np.array(crop))  # a copy: pages may be read-only
            t = t.to(m.device).permute(2, 0, 1)[None].float()
            t = F.interpolate(t, size=(pre["height"], pre["width"]), mode="bilinear", antialias=True)
            tensors.append(t)
        x = torch.cat(tensors) * pre["scale"]
        if pre["mean"] is not None:
            mean = torch.tensor(pre["mean"], device=m.device).view(1, 3, 1, 1)
            std = torch.tensor(pre["std"], device=m.device).view(1, 3, 1, 1)
            x = (x - mean) / std
        return x.to(m.dtype)

    def _prompt_ids(self) -> list[int]:
        m = self._models
        assert m is not None
        start = m.target.generation_config.decoder_start_token_id
        if start is None:
            start = m.target.config.decoder_start_token_id
        ids = [int(start)]
        if self.settings.prompt:
            ids += m.tokenizer(self.settings.prompt, add_special_tokens=False)["input_ids"]
        return ids

    def _decode_chunk(
        self, crops: Sequence[np.ndarray], speculative: bool, k: int, stats: DecodeStats
    ) -> list[tuple[str, float]]:
        import torch
        from transformers.modeling_outputs import BaseModelOutput

        m = self._models
        assert m is not None
        with torch.inference_mode():
            pixels = self._pixels(crops, m.target_pre)
            encoded = m.target.get_encoder()(pixel_values=pixels)  # one batched vision pass
            hidden = encoded.last_hidden_state
            prompt = torch.tensor([self._prompt_ids()], device=m.device)
            if not speculative:
                ids, scores = self._generate(
                    prompt.expand(len(crops), -1), BaseModelOutput(last_hidden_state=hidden), stats
                )
                out = [self._text(ids[i], [s[i] for s in scores], prompt.shape[1]) for i in range(len(crops))]
                self._observe(0, 0, False, len(crops))
                return out
            draft_pixels = self._pixels(crops, m.draft_pre) if m.draft_pre is not None else pixels
            results = []
            for i in range(len(crops)):
                ids, scores, acc, drafted = self._assisted(
                    prompt,
                    BaseModelOutput(last_hidden_state=hidden[i : i + 1]),
                    draft_pixels[i : i + 1],
                    k,
                    stats,
                )
                results.append(self._text(ids[0], [s[0] for s in scores], prompt.shape[1]))
                self._observe(acc, drafted, True, 1)
            return results

    def _gen_kwargs(self) -> dict[str, Any]:
        return {
            "do_sample": False,
            "num_beams": 1,
            "max_new_tokens": self.settings.max_new_tokens,
            "return_dict_in_generate": True,
            "output_scores": True,
        }

    def _generate(self, prompt: Any, encoder_outputs: Any, stats: DecodeStats) -> tuple[Any, Any]:
        """Plain batched greedy decoding with the target."""
        m = self._models
        assert m is not None
        counter = _ForwardCounter(m.target)
        try:
            out = m.target.generate(
                decoder_input_ids=prompt, encoder_outputs=encoder_outputs, **self._gen_kwargs()
            )
        finally:
            counter.remove()
        stats.regions += prompt.shape[0]
        stats.target_forwards += counter.count
        stats.new_tokens += self._count_new(out.sequences, prompt.shape[1])
        return out.sequences, out.scores

    def _assisted(
        self, prompt: Any, encoder_outputs: Any, draft_pixels: Any, k: int, stats: DecodeStats
    ) -> tuple[Any, Any, int, int]:
        """One region with the draft proposing ``k`` tokens per target forward."""
        import torch

        m = self._models
        assert m is not None and m.draft is not None
        # K and the schedule are read from the draft's generation_config, not from generate kwargs;
        # "constant" because the heuristic schedule mutates the config between calls
        gc = m.draft.generation_config
        gc.num_assistant_tokens = k
        gc.num_assistant_tokens_schedule = "constant"
        gc.assistant_confidence_threshold = self.settings.assistant_confidence_threshold
        t_count, d_count = _ForwardCounter(m.target), _ForwardCounter(m.draft)
        try:
            out = m.target.generate(
                # the target reuses the batched encoder output; pixel_values feed the draft's encoder
                pixel_values=draft_pixels,
                encoder_outputs=encoder_outputs,
                decoder_input_ids=prompt,
                # without it an encoder-decoder draft re-feeds its whole decoder input every round
                # and acceptance collapses to ~0 while the output stays correct (FACTS.md)
                decoder_attention_mask=torch.ones_like(prompt),
                assistant_model=m.draft,
                **self._gen_kwargs(),
            )
        finally:
            t_count.remove()
            d_count.remove()
        new = int(out.sequences.shape[1] - prompt.shape[1])
        accepted = max(0, new - t_count.count)
        stats.regions += 1
        stats.new_tokens += new
        stats.target_forwards += t_count.count
        stats.draft_forwards += d_count.count
        stats.accepted += accepted
        return out.sequences, out.scores, accepted, d_count.count

    def _count_new(self, sequences: Any, prompt_len: int) -> int:
        """Tokens generated (up to and including EOS; padding after EOS not counted)."""
        eos = self._eos_ids()
        total = 0
        for row in sequences[:, prompt_len:].tolist():
            n = len(row)
            for j, t in enumerate(row):
                if t in eos:
                    n = j + 1
                    break
            total += n
        return total

    def _eos_ids(self) -> set[int]:
        m = self._models
        assert m is not None
        eos = m.target.generation_config.eos_token_id
        if eos is None:
            eos = m.target.config.eos_token_id
        return set(eos if isinstance(eos, list) else [eos] if eos is not None else [])

    def _text(self, ids: Any, scores: list[Any], prompt_len: int) -> tuple[str, float]:
        """Decoded text and confidence (geometric mean of the chosen tokens' probabilities)."""
        import torch

        m = self._models
        assert m is not None
        new = ids[prompt_len:].tolist()
        eos = self._eos_ids()
        logps = []
        for j, tok in enumerate(new):
            if j >= len(scores):
                break
            logps.append(float(torch.log_softmax(scores[j].float(), dim=-1)[tok]))
            if tok in eos:
                break
        text = m.tokenizer.decode(new, skip_special_tokens=True)
        conf = math.exp(sum(logps) / len(logps)) if logps else 0.0
        return text, conf
