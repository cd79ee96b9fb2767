"""Settings of the OCR stage: what every engine shares, and one class per engine.

``OcrSettings.engine`` holds the chosen engine's own settings, told apart by their ``kind``
(``rapidocr``, ``transformers``, ``served`` or ``none``). A bare name is accepted for the default settings of
that engine (``{"ocr": {"engine": "none"}}``); rapidocr's fields written flat under ``ocr`` (their
place before engines had settings of their own) are moved into ``engine`` with a warning.
"""

from __future__ import annotations

import logging
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

logger = logging.getLogger(__name__)


class RapidOcrSettings(BaseModel):
    """The CPU engine: rapidocr's PP-OCR models (bundled in its wheel) on onnxruntime."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["rapidocr"] = "rapidocr"
    max_side_len: int = Field(
        2000,
        ge=256,
        description="rapidocr shrinks images whose longer side exceeds this many pixels before "
        "detection and recognition (its own default); larger keeps small print legible but is slower.",
    )
    num_threads: int = Field(
        1,
        ge=0,
        description="Threads for the ONNX runtime per engine; 0 lets onnxruntime use every core. One "
        "thread measured 2-12% less CPU per page than all (2) cores and also less wall time on a "
        "loaded machine; pages of several documents run in parallel processes use the cores better "
        "than threads inside one page. Raise it for the lowest latency of a single page on an idle box.",
    )
    runtime: Literal["openvino", "onnxruntime"] = Field(
        "openvino",
        description="What runs rapidocr's ONNX models: 'openvino' (OpenVINO's CPU plugin, default) or "
        "'onnxruntime' (rapidocr's own). The same model files and, in f32, the same outputs (within "
        "2e-5); OpenVINO ran the detector at about a third of onnxruntime's CPU at one thread "
        "(docs/benchmarks-history.md, issue 21 session 12), but holds about 1.1 GB more memory per "
        "engine (1.8 "
        "against 0.7 GB after three dense pages). A model OpenVINO cannot load stays on onnxruntime, "
        "with a warning; models chosen by int8_models always run on onnxruntime.",
    )
    openvino_bf16: Literal["none", "rec", "det", "det_rec"] = Field(
        "rec",
        description="With runtime 'openvino': the models computed in bf16 instead of f32 ('rec' the "
        "recogniser, the default; 'det' the detector; 'det_rec' both; 'none' f32 throughout). On CPUs "
        "with bf16 instructions (AVX512-BF16, AMX) a bf16 recogniser costs about half the CPU; where "
        "the CPU lacks them OpenVINO computes in f32 anyway. The recogniser read every corpus and "
        "generated page as in f32 but for single characters (docs/benchmarks-history.md, issue 21 "
        "session 12); a bf16 "
        "detector merged the lines of small born-digital print (us-012 at 150 dpi, CER 0.19 -> 0.36), "
        "so it is not the default.",
    )
    onnx_spinning: bool = Field(
        False,
        description="Models on onnxruntime (runtime 'onnxruntime', int8 copies): let its idle worker "
        "threads busy-wait for work (its default): a little "
        "lower latency on an otherwise idle machine, but CPU time burnt that other work on a shared "
        "machine needs.",
    )
    onnx_memory_arena: bool = Field(
        False,
        description="Models on onnxruntime (runtime 'onnxruntime', int8 copies): let it keep its CPU "
        "memory arena (rapidocr turns it off): tensors are "
        "reused from page to page instead of mapped and zeroed anew, which measured 6-13% less CPU a "
        "dense 200-dpi page (kernel time 0.9-1.9 -> 0.1-0.4 s) but about 1 GB more resident memory "
        "per engine (682 -> 1,713 MiB after three pages, then flat). Same text. Worth it where memory "
        "is plentiful and CPU is the bottleneck.",
    )
    use_angle_classifier: bool = Field(
        False,
        description="Run rapidocr's 0/180-degree line classifier. Off by default: on upright born-digital "
        "pages it turned some correct lines upside down before recognition and garbled them (CER "
        "us-003 0.068 -> 0.006, 2305.03393v1-pg9 at 200 dpi 0.048 -> 0.024 without it). Without it an "
        "upside-down page is still found, by its low recognition confidence (orientation_retry_confidence); "
        "with it, its per-line verdict is the orientation hint and a page turned 180 degrees is found "
        "even when its text reads confidently upside down.",
    )
    det_limit_side_len: int = Field(
        736,
        ge=32,
        description="rapidocr's detector input size: with det_limit_type='min' the shorter side is scaled "
        "UP to at least this (its default), with 'max' the longer side DOWN to at most this (faster, "
        "loses small print).",
    )
    rec_batch_size: int = Field(
        3,
        ge=1,
        le=64,
        description="Text lines the recogniser reads per batch; lines are sorted by width and each batch "
        "is padded to its widest, so smaller batches pad less. 3 (rapidocr's default is 6) measured "
        "12-17% less recognition CPU (6-8% of a dense page) with every tune page's CER equal or lower "
        "(bench/ocr_profile.py: tune mean 0.0446 -> 0.0444); 1 and 2 were cheaper still but read "
        "lincoln_letter worse (0.235 -> 0.249, 0.241), 12 and 16 cost more.",
    )
    det_limit_type: Literal["min", "max"] = Field(
        "min", description="How det_limit_side_len applies: 'min' (rapidocr's default) or 'max'."
    )
    det_text_height: float = Field(
        8.0,
        ge=0.0,
        description="Shrink the detector's input (never enlarge it past det_limit_*) so that the page's "
        "letters, measured on its ink before detection (base.ink_text_height: the median height of the "
        "ink's connected pieces, about the x-height of print), are this many pixels high, where "
        "det_min_scale and det_max_scale allow; 0 keeps rapidocr's own size. The detector's CPU is per "
        "pixel and it finds lines of large print as well at half size; boxes come back in the page's "
        "pixels and the lines are still read from the full-size image (docs/benchmarks-history.md, "
        "issue 21 session 11).",
    )
    det_min_scale: float = Field(
        0.5,
        gt=0.0,
        le=1.0,
        description="The smallest share of rapidocr's own detector input side that det_text_height may "
        "shrink a page to.",
    )
    det_max_scale: float = Field(
        0.5,
        gt=0.0,
        le=1.0,
        description="A page is detected smaller only where its letters allow a share of this or less "
        "(at 8 px and 0.5: letters of 16 px and more at rapidocr's size, large print). 1.0 shrinks "
        "every page whose letters are over det_text_height: 16% less CPU on the tune scans at equal "
        "CER, but on small born-digital print at 150 dpi, lines a few pixels apart merged (us-012, a "
        "table, CER 0.187 -> 0.355 at a share of 0.8; 2305.03393v1-pg9 0.024 -> 0.049).",
    )
    det_full_scale_below: float = Field(
        0.9,
        ge=0.0,
        le=1.0,
        description="A page detected at a reduced size (det_text_height) whose lines read with a mean "
        "confidence (weighted by characters) under this is detected and read again at rapidocr's own "
        "size, and that reading is kept (0: never). Print read at a reduced size scored 0.97 and up; "
        "handwriting, whose reading shifts with every change of its line boxes, 0.82-0.85. With "
        "det_max_scale 1.0 and this off, the handwritten tune letter read 0.234 -> 0.268 (tune CER "
        "+0.0057); on, that page cost about 2 CPU s more than at full size alone (both passes).",
    )
    split_at_gutters: bool = Field(
        True,
        description="Cut detected lines that cross a white band running down the page's ink (a "
        "narrow column gutter the detector bridged, a table's column gap) before reading them "
        "(base.split_at_ink_bands); off, a two-column page with a gutter of about one em reads across.",
    )
    word_gap_min_space: float = Field(
        0.15,
        ge=0.0,
        le=1.0,
        description="Where the recogniser gave a space at least this probability between two letters "
        "(or a letter and a figure) it reads the space (0: never): a mark (. , ; : ' - and their kin) "
        "read there in place of the space, or nothing between two letters. On a worn scan a speck "
        "in a word gap was read as a mark ('based'on', 'in-their') and a faint gap as none "
        "('ofthe'), which costs both words. Such marks had a space at 0.18-0.43 behind them on "
        "issue 37's simulated worn scans, printed marks mostly under 0.07.",
    )
    faint_line_max_contrast: float = Field(
        90.0,
        ge=0.0,
        le=255.0,
        description="A line whose crop has less contrast than this (its 95th less its 5th percentile "
        "gray, once scaled to the recogniser's height) is smoothed with a Gaussian of "
        "faint_line_blur pixels of that frame before it is read (0: never): faint print on a "
        "grainy scan saved as a small JPEG carries noise large against its 40-75 levels of "
        "contrast, which the recogniser misread. Black print on white, grainy or blurred scans "
        "included, measured 100 and more.",
    )
    faint_line_blur: float = Field(
        1.5,
        ge=0.0,
        le=8.0,
        description="The Gaussian's sigma for faint lines (faint_line_max_contrast), in pixels of the "
        "recogniser's 48-pixel-high frame (0: never).",
    )
    int8_models: Literal["none", "rec", "det", "det_rec"] = Field(
        "none",
        description="Run these of rapidocr's models as int8 copies (static QDQ quantization, "
        "ocr/quantize.py) built once from the bundled float models, calibrated on generated pages, "
        "and cached in int8_model_dir: 'rec' the recogniser, 'det' the detector, 'det_rec' both, "
        "'none' the float models (default: they read best, and need no build on a new machine). "
        "'rec' (with int8_recheck_below) measured 25% less CPU on the "
        "tune scans and 39% on dense pages at tune CER 0.0445 -> 0.0459 and check unchanged (0.0256); "
        "'det_rec' 43% less but tune 0.0482 and check 0.0385 (docs/benchmarks-history.md, issue 21 "
        "session 10). The "
        "first load builds a copy: about 40 CPU s and 2 GB of memory for 'rec' (6.4 GB for 'det'), "
        "once per machine and model version. A copy that cannot be built or loaded (no onnx package, "
        "a read-only cache) falls back to the float model with a warning.",
    )
    int8_recheck_below: float = Field(
        0.9,
        ge=0.0,
        le=1.0,
        description="With an int8 recogniser, lines it reads with a confidence under this are read "
        "again by the float model (0: never). Where int8 and float read a line differently the int8 "
        "confidence was low (0.64-0.87 on a handwritten letter; clean print 0.92 and up).",
    )
    int8_model_dir: str | None = Field(
        None,
        description="Folder the int8 models are cached in (built there on first use, reused after, "
        "one file per float model and toolchain version); None is $XDG_CACHE_HOME/dagster-ocr/models "
        "(~/.cache/dagster-ocr/models). Must be writable, or hold the files already.",
    )


class TransformersOcrSettings(BaseModel):
    """The GPU engine: a local transformers target checkpoint, an optional draft (speculative decoding)."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["transformers"] = "transformers"

    @model_validator(mode="before")
    @classmethod
    def _removed_settings(cls, data: Any) -> Any:
        # settings of the transformers-assisted path the batched loop replaced (session 7): a
        # config written for it still loads, with a warning, instead of failing validation
        if isinstance(data, dict) and "assistant_confidence_threshold" in data:
            data = {k: v for k, v in data.items() if k != "assistant_confidence_threshold"}
            logger.warning(
                "ocr.engine.assistant_confidence_threshold is no longer used (the batched speculative "
                "loop drafts exactly K tokens, or fewer from the page's text); ignored"
            )
        return data

    target_path: str | None = Field(
        None,
        description="Folder of the target checkpoint (save_pretrained layout: config.json, weights, "
        "tokenizer files, preprocessor_config.json). Never downloaded: weights must be local. None "
        "only where a ``GpuOcrResource`` supplies the checkpoints.",
    )
    draft_path: str | None = Field(
        None,
        description="Folder of the draft checkpoint (same tokenizer as the target); None decodes "
        "with the target alone.",
    )
    device: Literal["auto", "cpu", "cuda"] = Field(
        "auto", description="'auto' takes CUDA when available, else the CPU."
    )
    dtype: Literal["auto", "fp32", "fp16", "bf16"] = Field(
        "auto",
        description="Weights and activations: 'auto' is bf16 on a GPU that supports it, fp16 on "
        "other GPUs, fp32 on the CPU.",
    )
    num_speculative_tokens: int = Field(
        6, ge=1, le=64, description="Tokens the draft proposes per target forward (K) by default."
    )
    num_speculative_tokens_by_doc_type: dict[str, int] = Field(
        default_factory=lambda: {"contract": 8, "table": 8, "free_text": 4},
        description="K per document type (the engine's ``document_type``): predictable text such "
        "as contracts and tables accepts long drafts, free text shorter ones.",
    )
    speculation: Literal["auto", "off", "draft_model", "page_text"] = Field(
        "auto",
        description="Where draft tokens come from, all verified by the target in one batched loop "
        "(the output is the target's own greedy text whichever is chosen): 'draft_model' (the "
        "draft_path model), 'page_text' (continuations looked up in text the page already has, see "
        "page_text_source; no second model), 'auto' (each page the kind and K with the best "
        "measured yield among those available, none where speculation does not pay), 'off'.",
    )
    page_text_source: Literal["text_layer", "cpu_ocr", "text_layer_or_cpu_ocr", "none"] = Field(
        "text_layer",
        description="Text 'page_text' drafts are looked up in: the page's own PDF text layer (free, "
        "where one exists), the CPU OCR engine's (rapidocr) reading of the page (about 1.4 CPU s a "
        "page, paid before acceptance is known), the text layer else CPU OCR, or none.",
    )
    prompt_lookup_max_ngram: int = Field(
        3, ge=1, le=8, description="Longest n-gram of a region's output looked up in its page text."
    )
    verify_cost_per_token: float = Field(
        0.05,
        ge=0.0,
        le=1.0,
        description="Cost of each extra token a target forward verifies, relative to a one-token "
        "forward (small on a GPU, where a forward is memory-bound); the adaptive mode counts it.",
    )
    batch_size: int = Field(8, ge=1, description="Regions per vision-encoder batch (halved on OOM).")
    max_new_tokens: int = Field(128, ge=1, description="Upper bound on tokens decoded per region.")
    prompt: str = Field(
        "",
        description="Encoder-decoder models: text placed after the decoder start token, e.g. a Donut "
        "task token such as '<s_ocr>'; empty for TrOCR. Decoder-only VLMs: the instruction sent with "
        "the page image in the checkpoint's chat template (olmOCR-style page prompt); empty takes a "
        "plain 'read the text' instruction.",
    )
    line_detector: Literal["none", "rapidocr"] = Field(
        "none",
        description="'none': the whole image is one region (page-level models); 'rapidocr': detect "
        "text lines with rapidocr's bundled detector and recognise each crop (line-level models).",
    )
    adaptive: bool = Field(
        True,
        description="Choose K and the draft kind, or switch speculation off, per document type from "
        "measured acceptance (with speculation='auto' or a fixed kind).",
    )
    adaptive_window: int = Field(
        16, ge=1, description="Regions of measured acceptance the adaptive mode decides on."
    )
    adaptive_min_acceptance: float = Field(
        0.25,
        ge=0.0,
        le=1.0,
        description="Below this acceptance rate over the window, speculation is switched off "
        "(the seed saw no gain on handwriting and mixed-language pages).",
    )
    adaptive_probe_every: int = Field(
        64, ge=1, description="With speculation off, retry it after this many regions."
    )
    cpu_threads: int = Field(
        0,
        ge=0,
        description="On the CPU, torch's intra-op threads (process-wide); 0 keeps torch's default. "
        "Small models decode faster with 1 (thread hand-offs cost more than the tiny matmuls).",
    )
    draft_cost_ratio: float = Field(
        0.15,
        gt=0.0,
        le=1.0,
        description="Cost of a draft forward relative to a target forward; the adaptive mode picks "
        "the K that maximises tokens per unit of cost at the measured acceptance.",
    )


class ServedOcrSettings(BaseModel):
    """A served OCR VLM (vLLM, SGLang, any OpenAI-compatible chat-completions endpoint) for scale:
    page images are sent as base64 PNG with bounded concurrency, timeouts and retries."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["served"] = "served"
    base_url: str = Field(
        "http://localhost:8000/v1", description="The endpoint's base URL; '/chat/completions' is appended."
    )
    model: str = Field(..., description="Model name the server serves (vLLM's --served-model-name).")
    api_key_env: str | None = Field(
        None, description="Name of the environment variable holding the API key (never the key itself)."
    )
    prompt: str = Field(
        "Read all the text in this image, in reading order.",
        description="The instruction sent with each page image (an olmOCR-style page prompt).",
    )
    max_tokens: int = Field(4096, ge=1, description="Upper bound on tokens the server writes per page.")
    max_concurrency: int = Field(
        8, ge=1, description="Requests in flight at once from this process (the server batches them)."
    )
    timeout_s: float = Field(120.0, gt=0, description="Seconds to wait for one response.")
    retries: int = Field(3, ge=0, description="Retries after a timeout, a connection error, 429 or 5xx.")
    backoff_s: float = Field(1.0, ge=0, description="First retry delay; doubled after each retry.")
    extra_body: dict[str, Any] = Field(
        default_factory=dict,
        description="Merged into each request as is: server-side options such as vLLM's sampling or "
        "speculative-decoding knobs (speculation itself is configured on the server: vLLM's "
        "--speculative-config, e.g. EAGLE3 or n-gram for Qwen2.5-VL).",
    )


class NoOcrSettings(BaseModel):
    """No OCR: pages without a usable text layer get ``text_source='none'``."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["none"] = "none"


EngineSettings = Annotated[
    RapidOcrSettings | TransformersOcrSettings | ServedOcrSettings | NoOcrSettings,
    Field(discriminator="kind"),
]


class OcrSettings(BaseModel):
    """How pages are rendered and recognised, by whichever engine ``engine`` names."""

    model_config = ConfigDict(extra="forbid")

    engine: EngineSettings = Field(
        default_factory=RapidOcrSettings,
        description="OCR engine for pages without a usable text layer, with its own settings, chosen "
        "by ``kind``: 'rapidocr' (CPU, default), 'transformers' (local checkpoints, speculative "
        "decoding), 'served' (an OpenAI-compatible VLM server such as vLLM) or 'none' (no OCR). A bare "
        "name takes that engine's defaults.",
    )
    document_type: str | None = Field(
        None,
        description="Kind of document (e.g. contract, table, free_text) for engines that tune themselves "
        "per kind: the speculative GPU engine picks its draft length K from it. Set it per run (one "
        "run per document) with a settings override.",
    )
    workers: int = Field(
        1,
        ge=1,
        le=64,
        description="Processes that OCR one long document's pages side by side (page ranges, joined "
        "in page order through the OCR checkpoints), for engines that can be copied into another "
        "process (the CPU engine; a GPU engine stays one, bounded by the 'ocr' pool). Used only "
        "when a document has at least 8 pages without text per worker. 1 (default) suits a "
        "deployment that already runs several documents at once; raise it to the cores a run is "
        "given for long scans (each rapidocr worker uses num_threads cores).",
    )
    dpi: int = Field(
        150,
        ge=36,
        le=1200,
        description="Resolution PDF pages are rendered at before OCR (a scanned page never above its "
        "image's own, see native_resolution_cap). 150 measured equal or lower CER than 200 on the "
        "bench's born-digital and scanned PDF pages at 10-25% less CPU (the recogniser scales each "
        "line to 48 px anyway); raise it only for very small print.",
    )
    min_confidence: float = Field(
        0.5,
        ge=0.0,
        le=1.0,
        description="OCR lines recognised with a lower confidence are dropped as noise.",
    )
    max_image_pixels: int = Field(
        40_000_000,
        gt=0,
        description="Upper bound on pixels of one rendered page or loaded image; larger pages are "
        "rendered at a lower resolution so a huge page cannot exhaust memory.",
    )
    detect_orientation: bool = Field(
        True,
        description="Detect pages whose content is turned 90, 180 or 270 degrees (a scan fed sideways, "
        "no /Rotate) and OCR them upright. Costs one more recognition pass, only on pages that look "
        "turned (most lines vertical, upside down, or low confidence).",
    )
    orientation_retry_confidence: float = Field(
        0.75,
        ge=0.0,
        le=1.0,
        description="When the engine gives no upside-down hint, a page whose mean line confidence is below "
        "this is also tried turned 180 degrees (and kept turned only if that reads better).",
    )
    column_min_chars: int = Field(
        20,
        ge=1,
        description="Reading order: characters an OCR line needs to count as running text when looking "
        "for the white gutter between text columns (shorter lines, table cells and captions never "
        "make a column).",
    )
    column_min_lines: int = Field(
        3, ge=1, description="Reading order: running-text lines needed on each side of a gutter."
    )
    column_max_share: float = Field(
        0.6,
        gt=0.0,
        le=1.0,
        description="Reading order: lines wider than this share of the page's text width are never "
        "column lines (they are full-width: titles, single-column paragraphs).",
    )
    native_resolution_cap: bool = Field(
        True,
        description="Never render a scanned page (one image covering it) above the image's own "
        "resolution: up-sampling a scan adds pixels to process, not detail.",
    )
    crop_to_ink: bool = Field(
        True,
        description="Give the engine the page's inked part only (its blank margins cut off, "
        "crop_margin_px kept around the ink), where that removes at least 10% of the pixels: the "
        "detector's cost grows with every pixel it is shown, ink or not. Lines come back in the "
        "whole page's coordinates. Off for engines that draft from the page's text layer.",
    )
    crop_margin_px: int = Field(
        32,
        ge=0,
        le=1000,
        description="White pixels kept around the ink when crop_to_ink cuts the margins (the "
        "detector needs some paper around a line to find its edges).",
    )
    despeckle_min_share: float = Field(
        0.25,
        ge=0.0,
        le=1.01,
        description="A page whose ink is at least this share specks (pieces of 3 pixels or fewer: "
        "dust, toner spatter, the noise of a low-quality JPEG) is put through a 3x3 median filter "
        "before it is read: rapidocr's detector loses most lines of a speckled page. Clean print "
        "is under 0.2 at 100-200 dpi and is left alone. Above 1 never.",
    )
    grey_max_chroma: int = Field(
        40,
        ge=0,
        le=255,
        description="A page rendered in colour whose colour is at most this (``ink.chroma``: the "
        "channel spread 0.1% of its pixels reach after a 5x5 median; grey print on tinted paper "
        "stays under about 35, coloured print reaches 100 or more) and whose ink is no more coloured "
        "than its paper is read as its grey: rapidocr misread faint, tinted colour scans saved as "
        "small JPEGs. 0 never.",
    )

    @model_validator(mode="before")
    @classmethod
    def _engine_by_name(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = dict(data)
        engine = data.get("engine", {"kind": "rapidocr"})
        if isinstance(engine, str):
            data["engine"] = engine = {"kind": engine}
        flat = [k for k in RapidOcrSettings.model_fields if k != "kind" and k in data]
        if flat:
            engine = engine if isinstance(engine, dict) else engine.model_dump()
            if engine.get("kind", "rapidocr") != "rapidocr":
                raise ValueError(f"ocr.{flat[0]} is a rapidocr setting, but ocr.engine is {engine['kind']!r}")
            data["engine"] = {"kind": "rapidocr", **engine, **{k: data.pop(k) for k in flat}}
            logger.warning(
                "ocr.%s: rapidocr's settings now live under ocr.engine (ocr.engine.%s); "
                "read from the old place this time",
                ", ocr.".join(flat),
                flat[0],
            )
        return data

    @property
    def kind(self) -> str:
        """The engine's name: 'rapidocr', 'transformers', 'served' or 'none'."""
        return self.engine.kind
