"""``damaged.pdf``: the head of a valid PDF followed by garbage (the failure path)."""

from __future__ import annotations

import numpy as np
import pymupdf

from dagster_ocr.samples.settings import SamplesSettings


def build_damaged(valid_pdf: bytes, settings: SamplesSettings | None = None) -> bytes:
    """The head of a valid PDF followed by garbage: no xref, no trailer, no recoverable page tree.

    The PDF is first re-saved with compressed object streams (as most current writers do): its page
    objects then sit near the end of the file, so the truncated head holds no page that MuPDF's repair
    could recover. (A plain truncated PDF keeps its page tree at the head and "repairs" into blank pages.)
    """
    settings = SamplesSettings() if settings is None else settings
    with pymupdf.open(stream=valid_pdf, filetype="pdf") as doc:
        packed = doc.tobytes(garbage=3, deflate=True, no_new_id=True, use_objstms=1)
    head = packed[: int(len(packed) * settings.damaged_keep_fraction)]
    rng = np.random.default_rng(settings.scan_noise_seed + 2)
    garbage = rng.integers(0, 256, 4096, dtype=np.uint8).tobytes()
    return head + garbage
