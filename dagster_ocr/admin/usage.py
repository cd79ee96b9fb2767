"""Peak memory of a stage, as numeric figures an asset attaches to its materialization.

Usage in an asset::

    meter = UsageMeter.start()
    ...  # the stage's work
    context.add_output_metadata({**other, **meter.figures()})

Dagster plots numeric metadata over time per asset, and the health sensor reads
``gpu_memory_fraction`` from recent materializations for the GPU-memory alert.
"""

from __future__ import annotations

import resource
import sys
import time
from dataclasses import dataclass


def _torch_cuda():
    # only when torch is already imported: a CPU stage must not pay seconds to import it
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    try:
        return torch.cuda if torch.cuda.is_available() and torch.cuda.is_initialized() else None
    except Exception:  # a broken CUDA install: no GPU figures, never a failed stage
        return None


def peak_rss_bytes() -> int:
    """The process's peak resident memory so far (Linux reports KiB, macOS bytes)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak if sys.platform == "darwin" else peak * 1024)


@dataclass(slots=True)
class UsageMeter:
    """Wall time and peak memory (process RSS, and CUDA when in use) from ``start`` to ``figures``.

    RSS peak is per process: Dagster runs each run in its own process, so it is per document run;
    several stages in one process report the largest so far. The CUDA peak is reset at ``start``
    and so belongs to this stage alone.
    """

    started: float

    @classmethod
    def start(cls) -> UsageMeter:
        cuda = _torch_cuda()
        if cuda is not None:
            cuda.reset_peak_memory_stats()
        return cls(time.perf_counter())

    def figures(self) -> dict[str, float]:
        """Numeric metadata: seconds, peak_rss_mb and, on a GPU, gpu_peak_memory_mb and its share."""
        out: dict[str, float] = {
            "stage_seconds": round(time.perf_counter() - self.started, 3),
            "peak_rss_mb": round(peak_rss_bytes() / 2**20, 1),
        }
        cuda = _torch_cuda()
        if cuda is not None:
            peak = cuda.max_memory_allocated()
            reserved = cuda.max_memory_reserved()
            total = cuda.get_device_properties(cuda.current_device()).total_memory
            out["gpu_peak_memory_mb"] = round(peak / 2**20, 1)
            out["gpu_peak_reserved_mb"] = round(reserved / 2**20, 1)
            # reserved, not allocated: the caching allocator holds it, so other processes cannot use it
            out["gpu_memory_fraction"] = round(reserved / total, 4) if total else 0.0
        return out
