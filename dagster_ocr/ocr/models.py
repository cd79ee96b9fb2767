"""Loading the transformers OCR engine's checkpoints from local folders (never downloaded).

Two model families are supported:

* ``encoder_decoder``: ``VisionEncoderDecoderModel`` (TrOCR, Donut, Nougat style): a vision encoder
  and an autoregressive text decoder; images preprocessed from ``preprocessor_config.json``;
* ``decoder_only``: image-text-to-text VLMs of the Qwen2-VL / Qwen2.5-VL family (olmOCR,
  Nanonets-OCR and their like), loaded with ``AutoModelForImageTextToText``, the checkpoint's
  tokenizer (with its chat template) and image processor.

The draft must be of the same family and share the target's tokenizer; a decoder-only draft also
gets the target's image processing (the same image tokens), so its folder's vision settings must
agree with the target's.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from dagster_ocr.errors import EngineError
from dagster_ocr.ocr.settings import TransformersOcrSettings

logger = logging.getLogger(__name__)

#: fragmentation is the usual cause of OOM with variable-length decoding; expandable segments let
#: the caching allocator grow blocks instead of splintering memory. Only a default: a user's wins.
DEFAULT_CUDA_ALLOC_CONF = "expandable_segments:True"

Family = Literal["encoder_decoder", "decoder_only"]


@dataclass
class LoadedModels:
    """Target, optional draft, tokenizer and preprocessing, on one device, loaded once."""

    target: Any
    draft: Any | None
    tokenizer: Any
    device: Any
    dtype: Any
    family: Family
    target_pre: dict[str, Any]  # encoder-decoder: resize/normalise; decoder-only: unused
    draft_pre: dict[str, Any] | None
    image_processor: Any = None  # decoder-only: the checkpoint's image processor


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


def read_preprocessor(path: Path) -> dict[str, Any]:
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


def check_local(path: str | None, what: str) -> Path:
    """``path`` as a local checkpoint folder, or a clear ``EngineError``."""
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


def _same_vision_tokens(target: Any, draft: Any) -> bool:
    keys = ("image_token_id", "vision_start_token_id", "vision_end_token_id")
    tv, dv = getattr(target.config, "vision_config", None), getattr(draft.config, "vision_config", None)
    return all(getattr(target.config, k, None) == getattr(draft.config, k, None) for k in keys) and (
        getattr(tv, "spatial_merge_size", None) == getattr(dv, "spatial_merge_size", None)
        and getattr(tv, "patch_size", None) == getattr(dv, "patch_size", None)
    )


def _load(settings: TransformersOcrSettings) -> LoadedModels:
    # must be set before CUDA initialises; setdefault keeps a user's own choice
    os.environ.setdefault("PYTORCH_CUDA_ALLOC_CONF", DEFAULT_CUDA_ALLOC_CONF)
    from transformers import AutoImageProcessor, AutoTokenizer

    device, dtype = resolve_device_dtype(settings.device, settings.dtype)
    if device.type == "cpu" and settings.cpu_threads:
        import torch

        torch.set_num_threads(settings.cpu_threads)
    target_dir = check_local(settings.target_path, "target")
    draft_dir = check_local(settings.draft_path, "draft") if settings.draft_path else None
    started = time.perf_counter()
    try:
        tokenizer = AutoTokenizer.from_pretrained(target_dir, local_files_only=True)
        target = _model_class(target_dir).from_pretrained(target_dir, dtype=dtype, local_files_only=True)
        target.to(device).eval()
        draft = None
        if draft_dir is not None:
            draft = _model_class(draft_dir).from_pretrained(draft_dir, dtype=dtype, local_files_only=True)
            draft.to(device).eval()
        family: Family = "encoder_decoder" if target.config.is_encoder_decoder else "decoder_only"
        image_processor = None
        if family == "decoder_only":
            tokenizer.padding_side = "left"  # batched prompts end together; the loop masks the pads
            image_processor = AutoImageProcessor.from_pretrained(target_dir, local_files_only=True)
    except Exception as exc:
        raise EngineError(f"cannot load transformers OCR models: {exc}") from exc
    if family == "decoder_only":
        if getattr(target.config, "image_token_id", None) is None or tokenizer.chat_template is None:
            raise EngineError(
                "decoder-only targets must be vision-language checkpoints with an image token and a "
                "chat template (Qwen2-VL / Qwen2.5-VL style)"
            )
    if draft is not None:
        if bool(draft.config.is_encoder_decoder) != (family == "encoder_decoder"):
            raise EngineError(f"the draft must be of the target's family ({family})")
        if family == "decoder_only" and not _same_vision_tokens(target, draft):
            raise EngineError("a decoder-only draft must use the target's image tokens and patching")
        if (draft_dir / "tokenizer.json").is_file() or (draft_dir / "tokenizer_config.json").is_file():
            draft_tok = AutoTokenizer.from_pretrained(draft_dir, local_files_only=True)
            if draft_tok.get_vocab() != tokenizer.get_vocab():
                raise EngineError("the draft's tokenizer differs from the target's; speculation needs one")
    logger.info(
        "transformers OCR (%s) loaded on %s/%s in %.1f s (draft: %s)",
        family,
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
        family=family,
        target_pre=read_preprocessor(target_dir),
        draft_pre=(
            read_preprocessor(draft_dir)
            if draft_dir is not None and (draft_dir / "preprocessor_config.json").is_file()
            else None
        ),
        image_processor=image_processor,
    )
