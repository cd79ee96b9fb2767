"""The GPU OCR resource: a transformers target model plus a draft for speculative decoding.

Selectable instead of ``OcrResource``: it has the same ``get_engine(settings)`` method, so an asset
that takes ``ocr`` works with either. Models load once per process and configuration (Dagster
builds resources per run and per step). Put the OCR step in the Dagster pool ``gpu`` (one slot per
GPU) so one GPU is never oversubscribed.
"""

from __future__ import annotations

import threading

from pydantic import Field

from dagster_ocr.ocr.base import OcrEngine
from dagster_ocr.ocr.settings import OcrSettings, TransformersOcrSettings
from dagster_ocr.ocr.speculative import SpeculativeOcrEngine
from resources.core import OcrEngineResource

_ENGINES: dict[str, SpeculativeOcrEngine] = {}
_LOCK = threading.Lock()


class GpuOcrResource(OcrEngineResource):
    """OCR with a local transformers vision-to-text target and an optional draft (speculative).

    Point ``target_path``/``draft_path`` at folders written by ``save_pretrained`` (for example a
    TrOCR-base target and a TrOCR-small draft with the same tokenizer, or a Qwen2-VL-style OCR
    VLM and a smaller one sharing its tokenizer and image processing); nothing is downloaded.
    Every field is described in ``TransformersOcrSettings``.
    """

    target_path: str = Field(description="Local folder of the target checkpoint.")
    draft_path: str | None = Field(None, description="Local folder of the draft; None: no speculation.")
    device: str = Field("auto", description="auto | cpu | cuda")
    dtype: str = Field("auto", description="auto | fp32 | fp16 | bf16")
    num_speculative_tokens: int = Field(6, description="Default K (draft tokens per target forward).")
    num_speculative_tokens_by_doc_type: dict[str, int] = Field(
        default_factory=lambda: {"contract": 8, "table": 8, "free_text": 4},
        description="K per document type.",
    )
    batch_size: int = Field(8, description="Regions per vision-encoder batch (halved on OOM).")
    max_new_tokens: int = Field(128, description="Tokens decoded per region at most.")
    prompt: str = Field("", description="Decoder prompt after the start token (Donut task token).")
    line_detector: str = Field("none", description="none (whole page) | rapidocr (line crops).")
    adaptive: bool = Field(True, description="Choose K or switch speculation off from acceptance.")
    adaptive_min_acceptance: float = Field(0.25, description="Speculation off below this acceptance.")
    cpu_threads: int = Field(0, description="torch CPU threads when device is the CPU; 0: default.")
    speculation: str = Field(
        "auto", description="auto | off | draft_model | page_text (drafts looked up in the page's own text)."
    )
    page_text_source: str = Field(
        "text_layer",
        description="text_layer | cpu_ocr | text_layer_or_cpu_ocr | none: where page_text drafts come from.",
    )

    def speculative_settings(self) -> TransformersOcrSettings:
        """This resource's config as validated core settings."""
        return TransformersOcrSettings(
            target_path=self.target_path,
            draft_path=self.draft_path,
            device=self.device,
            dtype=self.dtype,
            num_speculative_tokens=self.num_speculative_tokens,
            num_speculative_tokens_by_doc_type=dict(self.num_speculative_tokens_by_doc_type),
            batch_size=self.batch_size,
            max_new_tokens=self.max_new_tokens,
            prompt=self.prompt,
            line_detector=self.line_detector,
            adaptive=self.adaptive,
            adaptive_min_acceptance=self.adaptive_min_acceptance,
            cpu_threads=self.cpu_threads,
            speculation=self.speculation,
            page_text_source=self.page_text_source,
        )

    def get_engine(self, settings: OcrSettings) -> OcrEngine | None:
        """The loaded speculative engine (one per process and config); None when OCR is disabled."""
        if settings.kind == "none":
            return None
        spec = self.speculative_settings()
        key = spec.model_dump_json()
        with _LOCK:
            if key not in _ENGINES:
                engine = SpeculativeOcrEngine(spec)
                engine.load()
                _ENGINES[key] = engine
            return _ENGINES[key]
