"""An int8 copy of the embedding model for CPUs with int8 dot-product instructions, built once and cached.

On a CPU with VNNI (or AMX-INT8) OpenVINO runs an int8 all-MiniLM-L6-v2 in 0.72x the CPU of its bf16
run and 0.41x its f32 run (300 report chunks: 7.6 / 10.5 / 18.2 CPU s, 2-core AVX512-VNNI EPYC,
``bench/kb_embedding_options.py int8``), vectors at a cosine of 0.997 to f32 on average (0.993 at worst).
What makes int8 hold for a transformer is how it is quantized, measured side by side on the same chunks:

- NNCF (OpenVINO's own post-training quantizer) with its transformer preset: SmoothQuant moves the
  activations' outliers into the weights, the softmax, normalisation and GELU stay in float, and a bias
  correction follows: cosine 0.997 to f32;
- onnxruntime's static QDQ quantization of the MatMuls (min-max or 99.99th percentile ranges): cosine
  0.82-0.87, useless for search; its dynamic quantization: 2x the CPU of OpenVINO bf16.

So NNCF is the one library that does this job well; it is only needed once per machine, to build the
copy. Static quantization needs the range of every activation, measured on inputs like the real ones:
:func:`calibration_texts` writes them here (prose, statement rows with figures, headings; seeded, the
same everywhere), so the build needs neither the network nor any document. The copy is cached beside
the converted f32 model, named by that model's file, NNCF's version and :data:`RECIPE`; a file lock keeps
two processes from building it at once, and it is written under a temporary name, then renamed.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

#: bumped whenever the way the copy is built changes, so an old cached copy is not reused
RECIPE = "nncf-transformer-v1"

#: calibration inputs: 96 texts took 40 CPU s to measure on a 2-core EPYC (a one-off per machine)
CALIBRATION_TEXTS = 96

_WORDS = (
    "the of and to in a is that for it as was with be by on not this are or from at which have an they "
    "were their has would when if so what company shall agreement contractor tender notice report year "
    "period revenue cost net income tax assets liabilities equity cash operating total share shares price "
    "value fair market interest rate loss gain segment services products customer supplier delivery date "
    "clause section article annex schedule party parties obligation payment invoice amount currency term "
    "risk factors management results operations financial statements consolidated fiscal quarter ended"
).split()
_LABELS = (
    "Net sales", "Cost of sales", "Gross margin", "Research and development", "Operating income",
    "Income before provision for income taxes", "Net income", "Total assets", "Accounts payable",
    "Deferred revenue", "Purchases of property, plant and equipment", "Cash and cash equivalents",
    "Diluted earnings per share", "Total shareholders' equity", "Payments for repurchase of common stock",
)  # fmt: skip


def available() -> bool:
    """Whether the copy can be built here (NNCF installed); a cached copy runs without it."""
    return importlib.util.find_spec("nncf") is not None


def calibration_texts(n: int = CALIBRATION_TEXTS, seed: int = 0) -> list[str]:
    """``n`` texts shaped like the knowledge base's chunks (a context line, then prose paragraphs,
    statement rows in Markdown with figures and parenthesised negatives, or short headings), seeded."""
    rng = random.Random(seed)

    def sentence() -> str:
        words = [rng.choice(_WORDS) for _ in range(rng.randint(6, 24))]
        if rng.random() < 0.4:
            words.insert(rng.randrange(len(words)), f"{rng.randint(1, 9999):,}")
        return " ".join(words).capitalize() + "."

    def figure() -> str:
        value = f"{rng.randint(1, 999_999):,}"
        return f"({value})" if rng.random() < 0.2 else value

    texts = []
    for i in range(n):
        context = f"{rng.choice(_WORDS).title()} {rng.choice(_WORDS)} report {2015 + i % 10}"
        context += f" > Item {i % 15 + 1}"
        kind = i % 3
        if kind == 0:
            body = " ".join(sentence() for _ in range(rng.randint(1, 9)))
        elif kind == 1:
            years = [str(2024 - k) for k in range(rng.randint(2, 3))]
            rows = [
                f"| {rng.choice(_LABELS)} | " + " | ".join(figure() for _ in years) + " |"
                for _ in range(rng.randint(2, 14))
            ]
            body = "\n".join(
                ["Consolidated statements (in millions)", "| | " + " | ".join(years) + " |", *rows]
            )
        else:
            body = sentence().rstrip(".").title()
        texts.append(f"{context}\n{body}")
    return texts


def cache_path(f32_xml: Path) -> Path:
    """Where the int8 copy of the converted model ``f32_xml`` is kept (NNCF's version in the name)."""
    import importlib.metadata

    try:
        nncf_version = importlib.metadata.version("nncf")
    except importlib.metadata.PackageNotFoundError:
        nncf_version = "none"
    st = f32_xml.stat()
    key = hashlib.sha256(f"{st.st_size}|{st.st_mtime_ns}|{nncf_version}|{RECIPE}".encode()).hexdigest()[:16]
    return f32_xml.with_name(f"{f32_xml.stem}.int8.{key}.xml")


def quantize(model: Any, encode: Callable[[list[str]], dict]) -> Any:
    """The int8 copy of an OpenVINO model (NNCF, transformer preset), calibrated on
    :func:`calibration_texts` tokenized by ``encode``."""
    import nncf

    texts = calibration_texts()
    return nncf.quantize(
        model,
        nncf.Dataset(texts, lambda text: encode([text])),
        model_type=nncf.ModelType.TRANSFORMER,
        subset_size=len(texts),
    )


def ensure_int8(
    f32_xml: Path, encode: Callable[[list[str]], dict], save: Callable[[Any, Any, Path], None]
) -> Path:
    """The cached int8 copy of ``f32_xml``, built first when missing (one process at a time) and
    written by ``save(openvino, model, path)`` (the embedder's atomic writer)."""
    import openvino as ov

    from dagster_ocr.ocr.quantize import _file_lock

    target = cache_path(f32_xml)
    if target.exists():
        return target
    with _file_lock(target.with_suffix(".lock")):
        if target.exists():  # another process built it while this one waited
            return target
        log.info("embeddings: building the int8 copy of the model (once per machine, about a minute)")
        core = ov.Core()
        qmodel = quantize(core.read_model(str(f32_xml)), encode)
        save(ov, qmodel, target)
    if not target.exists():  # a read-only cache folder: the caller stays on the float model
        raise OSError(f"the int8 copy could not be written to {target.parent}")
    return target
