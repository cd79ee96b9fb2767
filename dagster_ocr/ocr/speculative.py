"""A transformers OCR engine with batched lossless speculative decoding.

Targets (``checkpoints``): encoder-decoder checkpoints of the ``VisionEncoderDecoderModel`` family
(TrOCR, Donut, Nougat style) and decoder-only vision-language OCR models of the Qwen2-VL /
Qwen2.5-VL family (olmOCR, Nanonets-OCR and their like) through ``AutoModelForImageTextToText``,
the checkpoint's chat template and image processor. Weights come from local folders only.

Decoding is greedy and runs in this project's own batched draft-and-verify loop (``batched``):
a chunk of regions (line crops or whole pages) decodes together, every row accepts its own
prefix of the draft each round, and the output is token for token the target's own greedy
output. Drafts (``speculation``):

* ``draft_model``: a smaller checkpoint of the same family sharing the tokenizer;
* ``page_text``: no second model: continuations looked up in text the page already has, its PDF
  text layer or the CPU OCR engine's reading (``page_text_source``), prompt-lookup / HSD style;
* ``auto``: per page, the kind and K with the best measured yield among those available, and no
  speculation where none pays (handwriting, mixed scripts: low acceptance).

How a page is processed (``SpeculativeOcrEngine.recognize``):

1. Regions: ``line_detector="none"`` treats the image as one region (page-level models such as
   Qwen2-VL, Donut or Nougat); ``"rapidocr"`` finds text lines with rapidocr's bundled detector
   and crops them (line models such as TrOCR).
2. Regions are sorted by expected output length and cut into chunks of ``batch_size``: one
   batched vision pass and one batched decode per chunk.
3. Statistics (``PageDecodeStats``) count rounds, drafted and accepted tokens per region, so the
   adaptive mode and the warehouse see whether speculation pays.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections import defaultdict, deque
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dagster_ocr.errors import EngineError
from dagster_ocr.ocr.engine import OcrEngineBase, OcrLine
from dagster_ocr.ocr.models import LoadedModels, load_models
from dagster_ocr.ocr.settings import TransformersOcrSettings
from dagster_ocr.ocr.stats import DecodeStats, PageDecodeStats

logger = logging.getLogger(__name__)

#: the OCR settings' engine name this engine registers under
ENGINE_NAME = "transformers"
#: the instruction a decoder-only VLM gets with a page image when ``prompt`` is empty
DEFAULT_VLM_PROMPT = "Read all the text in this image, in reading order."
#: draft kinds in order of preference when nothing has been measured yet
DRAFT_KINDS = ("draft_model", "page_text")
#: compact a KV cache (gather each row's live entries) when this many masked holes pile up
MAX_CACHE_HOLES = 64


def expected_yield(acceptance: float, k: int, draft_cost: float, verify_cost: float) -> float:
    """Tokens per unit of cost relative to plain decoding (1.0: break-even) at i.i.d. acceptance.

    One round yields (1 - a^(K+1)) / (1 - a) tokens and costs one target forward, K draft
    forwards (``draft_cost`` each) and K extra verified tokens (``verify_cost`` each).
    """
    a = min(max(acceptance, 0.0), 0.999)
    return (1 - a ** (k + 1)) / (1 - a) / (1 + k * (draft_cost + verify_cost))


def choose_k(acceptance: float, k_max: int, draft_cost_ratio: float, verify_cost: float = 0.0) -> int:
    """The K in 1..k_max maximising ``expected_yield`` at per-token ``acceptance``."""
    best_k, best = 1, -1.0
    for k in range(1, k_max + 1):
        value = expected_yield(acceptance, k, draft_cost_ratio, verify_cost)
        if value > best + 1e-12:
            best_k, best = k, value
    return best_k


@dataclass
class _Adaptive:
    """Measured acceptance of one (document type, draft kind), and whether it is on."""

    window: deque[tuple[int, int]] = field(default_factory=deque)  # (accepted, drafted) per region
    off_since: int | None = None  # regions seen while off


@dataclass
class PageText:
    """Text a page already has, for ``page_text`` drafts: lines with pixel boxes in an image of ``size``."""

    lines: list[tuple[str, tuple[float, float, float, float]]]
    size: tuple[int, int]  # (height, width) of the image the boxes refer to

    def for_region(self, box: tuple[float, float, float, float], whole: bool) -> str | None:
        """The text of the lines whose centre lies in ``box`` (all of it for a whole-page region)."""
        if whole:
            texts = [t for t, _ in self.lines]
        else:
            x0, y0, x1, y1 = box
            texts = [
                t for t, (a, b, c, d) in self.lines if x0 <= (a + c) / 2 <= x1 and y0 <= (b + d) / 2 <= y1
            ]
        text = "\n".join(t for t in texts if t.strip())
        return text or None


def _is_oom(exc: BaseException) -> bool:
    import torch

    return isinstance(exc, torch.OutOfMemoryError) or "out of memory" in str(exc).lower()


class SpeculativeOcrEngine(OcrEngineBase):
    """``OcrEngine`` on a transformers target with batched speculative decoding.

    Set ``document_type`` (e.g. "contract") before a document's pages to use its K; give a page's
    own text with ``page_text`` (``ocr_page`` does, from the PDF text layer); read the per-page
    statistics with ``take_stats()``. Calls are serialised by a lock: one model on one device
    gains nothing from concurrent calls and the statistics stay exact.
    """

    name = ENGINE_NAME

    def __init__(self, settings: TransformersOcrSettings):
        self.settings = settings
        self.document_type: str | None = None
        self._models: LoadedModels | None = None
        self._lock = threading.RLock()
        self._stats: list[PageDecodeStats] = []
        self._adaptive: dict[tuple[str | None, str], _Adaptive] = defaultdict(_Adaptive)
        self.batch_size = settings.batch_size  # lowered for good on OOM
        self._detector: Any = None
        self._cpu_ocr: Any = None
        self._page_text: PageText | None = None

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

    @contextmanager
    def page_text(
        self, lines: Sequence[tuple[str, tuple[float, float, float, float]]], size: tuple[int, int]
    ) -> Iterator[None]:
        """Within the block, ``recognize`` may draft from ``lines`` (text with pixel boxes of an
        image of ``size`` = (height, width)): the page's text layer. Ignored unless
        ``page_text_source`` takes the text layer."""
        use = self.settings.page_text_source in ("text_layer", "text_layer_or_cpu_ocr") and any(
            t.strip() for t, _ in lines
        )
        previous, self._page_text = self._page_text, (PageText(list(lines), size) if use else None)
        try:
            yield
        finally:
            self._page_text = previous

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

    def available_kinds(self, has_page_text: bool) -> list[str]:
        """Draft kinds the settings allow and this page can use, in order of preference."""
        mode = self.settings.speculation
        have = {
            "draft_model": self._models is not None and self._models.draft is not None,
            "page_text": has_page_text,
        }
        return [kind for kind in DRAFT_KINDS if have[kind] and mode in ("auto", kind)]

    def _draft_cost(self, kind: str) -> float:
        return self.settings.draft_cost_ratio if kind == "draft_model" else 0.0

    def _policy(self, has_page_text: bool) -> tuple[str | None, int]:
        """(draft kind or None, K) for the current document type, from settings and measurements."""
        k = self.configured_k(self.document_type)
        kinds = self.available_kinds(has_page_text)
        if not kinds or not self.settings.adaptive:
            return (kinds[0] if kinds else None), k
        s = self.settings
        best: tuple[float, str, int] | None = None
        for kind in kinds:
            state = self._adaptive[(self.document_type, kind)]
            if state.off_since is not None:
                if state.off_since < s.adaptive_probe_every:
                    continue
                state.off_since = None  # probe again with a fresh window
                state.window.clear()
            if len(state.window) < s.adaptive_window:
                value, kk = math.inf, k  # still measuring
            else:
                drafted = sum(d for _, d in state.window)
                rate = sum(a for a, _ in state.window) / drafted if drafted else 0.0
                kk = choose_k(rate, k, self._draft_cost(kind), s.verify_cost_per_token)
                value = expected_yield(rate, kk, self._draft_cost(kind), s.verify_cost_per_token)
                if rate < s.adaptive_min_acceptance or value <= 1.0:
                    logger.info(
                        "%s drafts: acceptance %.2f (yield %.2f) for %r: off",
                        kind,
                        rate,
                        value,
                        self.document_type,
                    )
                    state.off_since = 0
                    continue
            if best is None or value > best[0]:
                best = (value, kind, kk)
        return (best[1], best[2]) if best is not None else (None, k)

    def _observe(self, kind: str | None, rows: Sequence[tuple[int, int]], regions: int) -> None:
        """Record each region's (accepted, drafted) for ``kind``; count regions for kinds that are off."""
        for (doc_type, k_name), state in self._adaptive.items():
            if doc_type == self.document_type and k_name != kind and state.off_since is not None:
                state.off_since += regions
        if kind is None:
            return
        state = self._adaptive[(self.document_type, kind)]
        for row in rows:
            state.window.append(row)
        while len(state.window) > self.settings.adaptive_window:
            state.window.popleft()

    # ---- recognition

    def recognize(self, image: np.ndarray) -> list[OcrLine]:
        """Recognise the text regions of an HxWx3 uint8 RGB image; boxes in pixels."""
        if image.ndim != 3 or image.shape[2] != 3 or image.dtype != np.uint8:
            raise ValueError(f"expected an HxWx3 uint8 RGB image, got {image.shape} {image.dtype}")
        self.load()
        text = (
            self._page_text
            if self._page_text is not None and self._page_text.size == image.shape[:2]
            else None
        )
        cpu_lines = None
        if text is None and self.settings.page_text_source in ("cpu_ocr", "text_layer_or_cpu_ocr"):
            cpu_lines = self._read_cpu(image)
            text = PageText([(ln.text, ln.bbox) for ln in cpu_lines], image.shape[:2]) if cpu_lines else None
        if cpu_lines is not None and self.settings.line_detector == "rapidocr":
            boxes = [ln.bbox for ln in cpu_lines]  # its detection already ran: reuse its boxes
        else:
            boxes = self._regions(image)
        whole = self.settings.line_detector == "none"
        refs = [text.for_region(b, whole) for b in boxes] if text is not None else None
        crops = [
            image[int(y0) : int(math.ceil(y1)), int(x0) : int(math.ceil(x1))] for x0, y0, x1, y1 in boxes
        ]
        with self._lock:
            kind, k = self._policy(refs is not None and any(refs))
            stats = PageDecodeStats(
                page_seq=len(self._stats), document_type=self.document_type, k=k, speculative=kind is not None
            )
            stats.draft_kind = kind
            started = time.perf_counter()
            results = self.recognize_crops(crops, kind=kind or "off", k=k, stats=stats, references=refs)
            stats.seconds = time.perf_counter() - started
            self._stats.append(stats)
        lines = []
        for box, (txt, conf) in zip(boxes, results, strict=True):
            if txt.strip():
                lines.append(OcrLine(text=txt, bbox=box, confidence=conf))
        return lines

    def _read_cpu(self, image: np.ndarray) -> list[OcrLine]:
        """The CPU OCR engine's lines for ``page_text`` drafts (rapidocr, bundled models)."""
        if self._cpu_ocr is None:
            from dagster_ocr.ocr.rapid import RapidOcrEngine
            from dagster_ocr.ocr.settings import RapidOcrSettings

            # the CPU engine at its defaults: these settings carry no rapidocr section of their own
            self._cpu_ocr = RapidOcrEngine(RapidOcrSettings())
        return self._cpu_ocr.recognize(image)

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
        kind: str | None = None,
        references: Sequence[str | None] | None = None,
    ) -> list[tuple[str, float]]:
        """(text, confidence) per RGB crop, in input order. The core the benchmark also calls.

        ``kind`` ('draft_model', 'page_text' or 'off') and ``k`` default to the current policy;
        ``speculative=False`` means 'off', True the preferred available kind. ``references`` are
        the page texts per crop that 'page_text' drafts look up. Crops are decoded in chunks sorted
        by expected length; a CUDA out-of-memory error frees the cache, halves the chunk and
        retries the same crops (none is skipped); at chunk size 1 it is raised as ``EngineError``.
        """
        self.load()
        has_text = references is not None and any(references)
        if kind is None or k is None:
            pol_kind, pol_k = self._policy(has_text)
            k = pol_k if k is None else k
            if kind is None and speculative is None:
                kind = pol_kind or "off"
            elif kind is None:
                kinds = self.available_kinds(has_text)
                kind = kinds[0] if speculative and kinds else "off"
        if kind not in ("off", *self.available_kinds(has_text)):
            kind = "off"  # e.g. 'draft_model' without a draft
        stats = stats if stats is not None else DecodeStats()
        # expected output length grows with a line's aspect ratio: bucket similar lengths together
        order = sorted(range(len(crops)), key=lambda i: crops[i].shape[1] / max(crops[i].shape[0], 1))
        results: dict[int, tuple[str, float]] = {}
        pos = 0
        while pos < len(order):
            chunk = order[pos : pos + self.batch_size]
            refs = [references[i] for i in chunk] if references is not None else None
            try:
                out = self._decode_chunk([crops[i] for i in chunk], kind, k, stats, refs)
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

    # ---- inputs

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

    def vlm_inputs(self, crops: Sequence[np.ndarray]) -> dict[str, Any]:
        """A decoder-only VLM's batch: chat-template prompts with each image's tokens, left-padded.

        The image processor gives each image's patch grid; its placeholder token is repeated once
        per merged patch, which is what the checkpoint's processor does (done here so that no
        video processor, hence no torchvision, is needed).
        """
        import torch

        m = self._models
        assert m is not None
        tok, cfg = m.tokenizer, m.target.config
        image_token = tok.convert_ids_to_tokens(cfg.image_token_id)
        messages = [
            {
                "role": "user",
                "content": [
                    {"type": "image"},
                    {"type": "text", "text": self.settings.prompt or DEFAULT_VLM_PROMPT},
                ],
            }
        ]
        template = tok.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
        if template.count(image_token) != 1:
            raise EngineError(f"the chat template must place one {image_token} per image")
        images = m.image_processor(images=[np.ascontiguousarray(c) for c in crops], return_tensors="pt")
        merge = getattr(cfg.vision_config, "spatial_merge_size", 1) ** 2
        texts = [
            template.replace(image_token, image_token * int(g.prod() // merge))
            for g in images["image_grid_thw"]
        ]
        enc = tok(texts, padding=True, return_tensors="pt", add_special_tokens=False)
        inputs = {
            "input_ids": enc["input_ids"],
            "attention_mask": enc["attention_mask"],
            "pixel_values": images["pixel_values"].to(m.dtype),
            "image_grid_thw": images["image_grid_thw"],
            "mm_token_type_ids": (enc["input_ids"] == cfg.image_token_id).int(),
        }
        return {k: v.to(m.device) if isinstance(v, torch.Tensor) else v for k, v in inputs.items()}

    # ---- decoding

    def _decode_chunk(
        self,
        crops: Sequence[np.ndarray],
        kind: str,
        k: int,
        stats: DecodeStats,
        refs: Sequence[str | None] | None,
    ) -> list[tuple[str, float]]:
        import torch

        from dagster_ocr.ocr.batched import (
            DecoderOnlyRunner,
            EncoderDecoderRunner,
            ModelDrafter,
            TextDrafter,
            speculative_greedy,
        )

        m = self._models
        assert m is not None
        runners: list[Any] = []
        try:
            with torch.inference_mode():
                drafter: Any = None
                if m.family == "encoder_decoder":
                    pixels = self._pixels(crops, m.target_pre)
                    hidden = m.target.get_encoder()(pixel_values=pixels).last_hidden_state  # one batched pass
                    prompt = torch.tensor([self._prompt_ids()], device=m.device).expand(len(crops), -1)
                    target = EncoderDecoderRunner(m.target, hidden)
                    runners.append(target)
                    first = target.prefill(prompt)
                    if kind == "draft_model":
                        dpix = self._pixels(crops, m.draft_pre) if m.draft_pre is not None else pixels
                        dhidden = m.draft.get_encoder()(pixel_values=dpix).last_hidden_state
                        draft = EncoderDecoderRunner(m.draft, dhidden)
                        runners.append(draft)
                        draft.prefill(prompt)
                        drafter = ModelDrafter(draft)
                else:
                    inputs = self.vlm_inputs(crops)
                    target = DecoderOnlyRunner(m.target)
                    first = target.prefill(inputs)
                    if kind == "draft_model":
                        draft = DecoderOnlyRunner(m.draft)
                        draft.prefill(inputs)
                        drafter = ModelDrafter(draft)
                if kind == "page_text":
                    tok = m.tokenizer
                    drafter = TextDrafter(
                        [tok(r, add_special_tokens=False)["input_ids"] if r else None for r in (refs or [])],
                        max_ngram=self.settings.prompt_lookup_max_ngram,
                    )
                res = speculative_greedy(
                    target,
                    first,
                    drafter,
                    k=k if drafter is not None else 0,
                    max_new_tokens=self.settings.max_new_tokens,
                    eos=self._eos_ids(),
                    max_holes=MAX_CACHE_HOLES,
                )
        finally:
            for r in runners:
                close = getattr(r, "close", None)
                if close is not None:
                    close()
        stats.regions += len(crops)
        stats.new_tokens += sum(len(t) for t in res.tokens)
        stats.target_forwards += res.target_forwards
        stats.draft_forwards += res.drafted
        stats.accepted += res.accepted
        self._observe(
            kind if drafter is not None else None,
            list(zip(res.row_accepted, res.row_drafted, strict=True)),
            len(crops),
        )
        return [
            (m.tokenizer.decode(toks, skip_special_tokens=True), math.exp(lp) if toks else 0.0)
            for toks, lp in zip(res.tokens, res.mean_logprob, strict=True)
        ]

    def _eos_ids(self) -> set[int]:
        m = self._models
        assert m is not None
        # the generation config's, as ``generate`` uses (transformers fills it from the model
        # config on loading); None means no EOS (fixed-length benchmarks)
        eos = m.target.generation_config.eos_token_id
        return set(eos if isinstance(eos, list) else [eos] if eos is not None else [])
