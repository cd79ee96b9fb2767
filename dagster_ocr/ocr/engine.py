"""The OCR engine protocol: what an engine reports (``OcrLine``) and what it is asked (``OcrEngine``).

An engine only turns an RGB image into text lines with pixel boxes (``OcrEngine.recognize``);
what every engine gets for free around that lives beside this module: rendering (``render``),
reading order (``order``), ink analysis (``ink``), orientation (``orientation``) and the per-page
call (``base.ocr_page``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np

from dagster_ocr.model import BBox
from dagster_ocr.ocr.stats import DecodeStats


@dataclass(slots=True)
class OcrLine:
    """One recognised text line, as an engine reports it.

    ``bbox`` is axis-aligned in PIXELS of the image given to the engine: (x0, y0, x1, y1) with
    the origin at the top-left. ``confidence`` is in [0, 1].
    """

    text: str
    bbox: BBox
    confidence: float
    #: the engine's own 0/180 classifier read this line upside down (None: the engine cannot tell).
    #: Used as an orientation hint; engines without a classifier leave it None.
    upside_down: bool | None = None
    #: the detector's polygon, where the engine has one: x, y of its top-left, top-right,
    #: bottom-right and bottom-left corners in turn, in pixels. It tells how the line is tilted
    #: (a scan fed in askew), which ``reading_order`` undoes; None where the engine gives boxes only.
    quad: tuple[float, ...] | None = None
    #: where along the line its ink starts and ends, as fractions (start, end) of the polygon's
    #: (or, without one, the box's) length, left to right; None where not measured. The detector
    #: pads its boxes (rapidocr's "unclip"), which narrows the white channel between two columns'
    #: boxes to half a narrow gutter; ``reading_order`` looks for gutters between the ink instead.
    #: ``ocr_lines_to_model`` measures it on the image (``ink_extent``).
    ink: tuple[float, float] | None = None


@runtime_checkable
class OcrEngine(Protocol):
    """What the pipeline asks of every OCR engine. Engines load their model lazily and reuse it.

    ``OcrEngineBase`` gives the defaults of everything but ``recognize``.
    """

    #: short name recorded on each page (``Page.engine``), e.g. "rapidocr"
    name: str

    def recognize(self, image: np.ndarray) -> list[OcrLine]:
        """Recognise the text lines of an HxWx3 uint8 RGB image (any order; callers sort)."""
        ...

    def document(self, document_type: str | None) -> AbstractContextManager[Any]:
        """A block for one document's pages: engines that tune themselves per kind of document
        (the speculative engine's K) use ``document_type`` inside it."""
        ...

    def take_stats(self) -> Sequence[DecodeStats]:
        """Decoding counts of the calls since the last call (and forget them); empty when the
        engine counts nothing."""
        ...

    def worker_factory(self) -> Callable[[], OcrEngine] | None:
        """A picklable callable that builds this engine afresh in another process (so one long
        document's pages can be OCR'd by several, ``ocr.workers``), or None where the engine must
        not be multiplied: a GPU engine, whose share of the device the ``ocr`` pool bounds."""
        ...


class OcrEngineBase:
    """Defaults of the ``OcrEngine`` protocol for engines with no per-document tuning or counts."""

    name: str = "ocr"

    def recognize(self, image: np.ndarray) -> list[OcrLine]:
        raise NotImplementedError

    def document(self, document_type: str | None) -> AbstractContextManager[Any]:
        return contextlib.nullcontext()

    def take_stats(self) -> Sequence[DecodeStats]:
        return ()

    def worker_factory(self) -> Callable[[], OcrEngine] | None:
        return None
