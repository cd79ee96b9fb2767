"""int8 copies of rapidocr's float models, built once per machine and cached.

rapidocr's PP-OCR detector and recogniser are mostly convolutions. onnxruntime runs a statically
quantized model (QDQ format: uint8 activations, int8 weights per output channel) with its int8
kernels, which on the CPU measured (a Xeon with AVX-512 VNNI) took about half the float model's
time per call (bench/ocr_profile.py); on a CPU without int8 dot-product instructions the weights
are quantized to 7 bits so those kernels cannot saturate (:func:`weight_range`). Static
quantization needs the range of every activation, measured on inputs like the real ones
("calibration"): here the float engine itself reads a few pages of text generated on the spot
(``calibration_pages``: several fonts and sizes, rendered as the text stage renders a scan), and
every input its detector and recogniser receive is kept. Nothing comes from the network or the
corpus, so the build works offline; the pages are the same everywhere (seeded), the ranges
measured on them may differ in the last bits between CPUs whose float kernels differ.

The quantized file is written under a cache folder, named by a hash of the float model's bytes,
the recipe below and the onnxruntime and onnx versions, so a changed model or toolchain builds a
new one and an unchanged one is reused; a file lock keeps several worker processes from building
it at once, and the file is written to a temporary name and renamed, so a crash never leaves half
a model behind.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import numpy as np

logger = logging.getLogger(__name__)

#: bumped whenever the way a model is quantized changes, so old cache entries are not reused
RECIPE = "qdq-u8s8-perchannel-minmax-op13-v1"


def weight_range() -> str:
    """How wide the int8 weights may be on this CPU: ``full`` (8 bits) or ``reduced`` (7 bits).

    onnxruntime's u8s8 convolution and matmul kernels on a CPU without int8 dot-product
    instructions (AVX2 only: AMD EPYC Milan and older, pre-Cascade-Lake Xeons) multiply pairs with
    ``vpmaddubsw``, whose 16-bit sums of two uint8 x int8 products saturate: a model quantized with
    full-range weights read 2.55 away from the float model where VNNI machines read it within
    0.74 (tests/unit/test_ocr_int8.py, a tiny two-convolution model). Weights quantized to 7 bits
    (``reduce_range``) cannot saturate there (0.27 on the same model and CPU); with VNNI or AMX the
    full 8 bits are exact and keep one more bit of precision. The choice is part of the cache key,
    so a cache folder shared between machines keeps one copy per kind of CPU.
    """
    from dagster_ocr.cpu import has_int8_dot

    return "full" if has_int8_dot() else "reduced"


#: words the calibration pages are written with: common English prose, digits and punctuation
_WORDS = (
    "the of and to in a is that for it as was with be by on not he this are or his from at which "
    "but have an they you were her she there been one all we their has would when if so no what "
    "can more about said into time only other new some could these two may first then do any like "
    "my now over such our man me even most made after also did many before must through back years "
    "where much your way well down should because each just those people how too little state good "
    "very make world still own see men work long get here between both life being under never day "
    "same another know while last might us great old year off come since against go came right "
    "used take three Section Table Figure Report Agreement Page Total Notes Chapter Appendix"
).split()
_TAILS = ("", "", "", "", ",", ".", ";", ":", "'s", ")")


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/dagster-ocr/models`` (``~/.cache/dagster-ocr/models`` without it)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "dagster-ocr" / "models"


def calibration_pages(n: int = 3, dpi: int = 150, seed: int = 0) -> list[np.ndarray]:
    """``n`` generated A4 pages of running text as HxWx3 uint8 RGB arrays (the text stage's input).

    Each page mixes serif, sans and monospace type from 7 to 20 points, a heading, numbers and a
    little scanner noise, so the activations seen cover what body text, headings and small print
    produce. Deterministic for a seed.
    """
    import pymupdf

    rng = np.random.default_rng(seed)
    fonts = ("helv", "tiro", "cour", "hebo", "tibo")
    pages = []
    for _ in range(n):
        doc = pymupdf.open()
        page = doc.new_page(width=595, height=842)
        y = 60.0
        while y < 780:
            size = float(rng.choice([7, 8, 9, 10, 10, 11, 11, 12, 14, 20]))
            font = str(rng.choice(fonts))
            words = []
            for _ in range(int(rng.integers(4, 14))):
                w = str(rng.choice(_WORDS))
                if rng.random() < 0.1:
                    w = str(int(rng.integers(1, 100000)))
                words.append(w + str(rng.choice(_TAILS)))
            x = 50 + float(rng.integers(0, 40))
            page.insert_text((x, y), " ".join(words), fontname=font, fontsize=size)
            y += size * float(rng.uniform(1.3, 2.2))
        pix = page.get_pixmap(dpi=dpi, colorspace=pymupdf.csRGB)
        img = np.frombuffer(pix.samples, dtype=np.uint8).reshape(pix.height, pix.width, 3).astype(np.int16)
        noise = rng.normal(0, 6, img.shape[:2])[..., None]
        pages.append(np.clip(img + noise, 0, 255).astype(np.uint8))
        doc.close()
    return pages


def cache_key(model_path: Path) -> str:
    """Hash of the float model's bytes, the recipe (with this CPU's weight range) and the
    quantization toolchain's versions."""
    import onnx
    import onnxruntime

    h = hashlib.sha256()
    h.update(Path(model_path).read_bytes())
    h.update(
        f"|{RECIPE}|weights={weight_range()}|ort={onnxruntime.__version__}|onnx={onnx.__version__}".encode()
    )
    return h.hexdigest()[:16]


def cached_path(model_path: Path, cache_dir: Path) -> Path:
    """Where the int8 copy of ``model_path`` lives (or will) in ``cache_dir``."""
    return Path(cache_dir) / f"{Path(model_path).stem}.{cache_key(model_path)}.int8.onnx"


@contextlib.contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    """An exclusive lock on ``path`` (created), held for the block; a no-op without fcntl."""
    try:
        import fcntl
    except ImportError:  # not POSIX: two builders at once only waste time, the rename stays atomic
        yield
        return
    with open(path, "a+b") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def quantize_model(
    model_path: Path,
    out_path: Path,
    inputs: Sequence[np.ndarray],
    op_types: Sequence[str] | None = None,
    method: str = "MinMax",
    extra_options: dict | None = None,
    exclude: Sequence[str] = (),
    reduce_range: bool | None = None,
) -> None:
    """Write a static int8 (QDQ, uint8 activations, int8 per-channel weights) copy of an ONNX model.

    The model is first raised to opset 13 (per-channel dequantization needs it; rapidocr's models
    are opset 11) and its metadata (the recogniser's character list) is carried over.
    ``reduce_range`` (7-bit weights) defaults to what this CPU needs (:func:`weight_range`).
    """
    import onnx
    from onnx import version_converter
    from onnxruntime.quantization import (
        CalibrationDataReader,
        CalibrationMethod,
        QuantFormat,
        QuantType,
        quantize_static,
    )
    from onnxruntime.quantization.shape_inference import quant_pre_process

    if not inputs:
        raise ValueError(f"no calibration inputs for {model_path}")
    model = onnx.load(str(model_path))
    input_name = model.graph.input[0].name
    metadata = {p.key: p.value for p in model.metadata_props}

    class _Reader(CalibrationDataReader):
        def __init__(self) -> None:
            self._it = iter(inputs)

        def get_next(self) -> dict[str, np.ndarray] | None:
            x = next(self._it, None)
            return None if x is None else {input_name: x}

    with tempfile.TemporaryDirectory(prefix="dagster-ocr-quant-") as tmp:
        op13, pre, q = Path(tmp, "op13.onnx"), Path(tmp, "pre.onnx"), Path(tmp, "q.onnx")
        onnx.save(version_converter.convert_version(model, 13), str(op13))
        # symbolic shape inference does not finish on these graphs; onnx's own suffices here
        quant_pre_process(str(op13), str(pre), skip_symbolic_shape=True)
        quantize_static(
            str(pre),
            str(q),
            _Reader(),
            quant_format=QuantFormat.QDQ,
            activation_type=QuantType.QUInt8,
            weight_type=QuantType.QInt8,
            per_channel=True,
            reduce_range=weight_range() == "reduced" if reduce_range is None else reduce_range,
            op_types_to_quantize=list(op_types) if op_types else None,
            nodes_to_exclude=list(exclude),
            calibrate_method=getattr(CalibrationMethod, method),
            extra_options=extra_options or {},
        )
        qmodel = onnx.load(str(q))
        onnx.helper.set_model_props(qmodel, metadata)
        onnx.save(qmodel, str(out_path))


def ensure_quantized(
    model_path: Path,
    cache_dir: Path,
    calibration_inputs: Callable[[], Sequence[np.ndarray]],
) -> tuple[Path, bool]:
    """The cached int8 copy of ``model_path``, built first if missing. Returns (path, built now).

    ``calibration_inputs`` is called only when a build is needed (it runs the float model).
    """
    cache_dir = Path(cache_dir)
    cache_dir.mkdir(parents=True, exist_ok=True)
    target = cached_path(model_path, cache_dir)
    if target.exists():
        return target, False
    with _file_lock(cache_dir / (target.name + ".lock")):
        if target.exists():  # another process built it while this one waited
            return target, False
        fd, tmp_name = tempfile.mkstemp(dir=cache_dir, prefix=target.name + ".", suffix=".tmp")
        os.close(fd)
        try:
            quantize_model(Path(model_path), Path(tmp_name), calibration_inputs())
            os.chmod(tmp_name, 0o644)  # mkstemp's 0600 would keep other users' workers out
            os.replace(tmp_name, target)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp_name)
    logger.info("built int8 model %s", target)
    return target, True
