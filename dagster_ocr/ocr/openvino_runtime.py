"""rapidocr's ONNX models run by OpenVINO's CPU plugin instead of onnxruntime.

Same model files, same inputs, same outputs (in f32 within 2e-5 of onnxruntime's): only the
runtime that executes the graph changes. On the detector, a convolutional network over the whole
page, OpenVINO's CPU kernels measured 3.1x less CPU than onnxruntime's at one thread (1.23 s ->
0.39 s for a 1408x992 input; docs/benchmarks-history.md, issue 21 session 12); on the
recogniser the two are equal in f32. OpenVINO is a well-kept Intel library with a stable Python
API, so this module only adapts it to the call rapidocr makes (``session(x) -> first output``).

rapidocr 3.10 has an OpenVINO engine of its own, but it sets no inference precision, and
OpenVINO's default on CPUs with bf16 instructions (AVX512-BF16, AMX) is bf16: a silent change of
what is read. Here the precision is always explicit.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import numpy as np

logger = logging.getLogger(__name__)


def openvino_available() -> bool:
    """Whether the ``openvino`` package imports here."""
    try:
        import openvino  # noqa: F401
    except ImportError:
        return False
    return True


def bf16_native() -> bool:
    """Whether OpenVINO's CPU plugin reports bf16 as a native precision of this CPU."""
    import openvino as ov

    return "BF16" in ov.Core().get_property("CPU", "OPTIMIZATION_CAPABILITIES")


class OpenVinoSession:
    """One ONNX model compiled for OpenVINO's CPU plugin, called as rapidocr calls its sessions:
    ``session(x)`` returns the model's first output as a numpy array of its own.

    ``threads`` 0 lets OpenVINO use every core. One stream and latency mode: pages are read one
    call at a time, and parallelism comes from worker processes (``ocr.workers``). Threads are
    not pinned to cores, so several engines on one machine do not fight over the same core.
    ``precision`` is ``f32`` (the model's own) or ``bf16`` (faster where the CPU has bf16
    instructions; the reading can differ).
    """

    def __init__(
        self, model_path: str | Path, *, threads: int = 1, precision: str = "f32", width_step: int = 0
    ) -> None:
        import openvino as ov

        config: dict[str, Any] = {
            "PERFORMANCE_HINT": "LATENCY",
            "NUM_STREAMS": 1,
            "INFERENCE_PRECISION_HINT": precision,
            "ENABLE_CPU_PINNING": False,
        }
        if threads:
            config["INFERENCE_NUM_THREADS"] = threads
        self.model_path = str(model_path)
        self.precision, self.width_step = precision, width_step
        self._request = ov.Core().compile_model(self.model_path, "CPU", config).create_infer_request()

    def __call__(self, x: np.ndarray) -> np.ndarray:
        width = x.shape[-1]
        step = self.width_step
        if step and width % step:
            # OpenVINO builds its kernels anew for every input shape it has not seen (0.08-0.17 s
            # each for the recogniser, against 0.04-0.12 s for the call itself), and a recognition
            # batch's width follows its widest line's: widths rounded up to a step are shapes seen
            # before. The padding is rapidocr's own (zeros after normalisation, as for every
            # narrower line of a batch); the output's columns past the input's are dropped.
            padded = np.zeros((*x.shape[:-1], -(-width // step) * step), dtype=np.float32)
            padded[..., :width] = x
            out = self._infer(padded)
            return out[:, : -(-out.shape[1] * width // padded.shape[-1])]
        return self._infer(x)

    def _infer(self, x: np.ndarray) -> np.ndarray:
        self._request.infer([np.ascontiguousarray(x, dtype=np.float32)])
        # the output tensor is the request's own memory, overwritten by the next call
        return np.array(self._request.get_output_tensor(0).data, copy=True)


def use_openvino(
    parts: dict[str, Any],
    *,
    threads: int,
    bf16: frozenset[str] = frozenset(),
    width_steps: dict[str, int] | None = None,
) -> list[str]:
    """Swap each rapidocr model part's session wrapper (``part.session``) for an
    ``OpenVinoSession`` on the same model file. ``parts`` maps a name (det, cls, rec) to rapidocr's
    ``TextDetector``/``TextClassifier``/``TextRecognizer``; the parts named in ``bf16`` compute in
    bf16, the others in f32; ``width_steps`` rounds a part's input width up to a multiple
    (``OpenVinoSession``: the recogniser's sequence output). A part whose model cannot be found or
    compiled keeps its onnxruntime session, with a warning. Returns the names swapped.
    """
    done = []
    for name, part in parts.items():
        wrapper = getattr(part, "session", None)
        path = getattr(getattr(wrapper, "session", None), "_model_path", None)
        try:
            if not path:
                raise TypeError("rapidocr's session is not an onnxruntime session on a model file")
            part.session = OpenVinoSession(
                path,
                threads=threads,
                precision="bf16" if name in bf16 else "f32",
                width_step=(width_steps or {}).get(name, 0),
            )
        except Exception as exc:  # an unsupported operator, a CPU the plugin does not run on
            logger.warning("rapidocr %s: OpenVINO unavailable, using onnxruntime (%s)", name, exc)
            continue
        done.append(name)
    return done
