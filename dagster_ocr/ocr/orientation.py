"""Reading a page upright: which quarter turns are worth trying, and trying them with the engine."""

from __future__ import annotations

import logging

import numpy as np

from dagster_ocr.ocr.engine import OcrEngine, OcrLine
from dagster_ocr.ocr.settings import OcrSettings

logger = logging.getLogger(__name__)

#: rapidocr turns a detected box at least this much taller than wide by 90 degrees before reading
#: it (``get_rotate_crop_image``); text lines of a sideways page come out as such boxes
_TALL_RATIO = 1.5


def _weight(ln: OcrLine) -> int:
    return len(ln.text.strip())


def _is_tall(ln: OcrLine) -> bool:
    return (ln.bbox[3] - ln.bbox[1]) >= _TALL_RATIO * max(ln.bbox[2] - ln.bbox[0], 1e-6)


def _upright_score(lines: list[OcrLine]) -> float:
    """Confidence-weighted characters on lines that read as upright, horizontal text."""
    return sum(ln.confidence * _weight(ln) for ln in lines if not _is_tall(ln) and ln.upside_down is not True)


def orientation_candidates(lines: list[OcrLine], settings: OcrSettings) -> list[int]:
    """Clockwise turns (90, 180, 270) worth trying to read a page upright, best guess first.

    Empty for a page that reads upright. Signals, cheapest first: most text in vertical boxes
    (a sideways page), most text classified upside down by the engine (a page fed the wrong way
    up), or, for engines that give no upside-down hint, a low mean confidence.
    """
    words = [ln for ln in lines if _weight(ln) >= 2]
    total = sum(_weight(ln) for ln in words)
    if not total:
        return []

    def share(sub: list[OcrLine], of: list[OcrLine]) -> float:
        den = sum(_weight(ln) for ln in of)
        return sum(_weight(ln) for ln in sub) / den if den else 0.0

    tall = [ln for ln in words if _is_tall(ln)]
    if share(tall, words) >= 0.5:
        hinted = [ln for ln in tall if ln.upside_down is not None]
        # rapidocr turns a tall crop 90 degrees counter-clockwise before reading it: if that reads
        # upright, the page is turned clockwise and turning it 270 more puts it right
        if hinted and share([ln for ln in hinted if ln.upside_down], hinted) > 0.5:
            return [90, 270]
        return [270, 90]
    hinted = [ln for ln in words if ln.upside_down is not None]
    if hinted:
        return [180] if share([ln for ln in hinted if ln.upside_down], hinted) >= 0.5 else []
    mean_conf = sum(ln.confidence * _weight(ln) for ln in words) / total
    return [180] if mean_conf < settings.orientation_retry_confidence else []


def turn_image(image: np.ndarray, degrees: int) -> np.ndarray:
    """``image`` turned clockwise by a multiple of 90 degrees (contiguous, so engines can use it)."""
    return np.ascontiguousarray(np.rot90(image, k=-(degrees // 90) % 4))


def recognize_upright(
    engine: OcrEngine, image: np.ndarray, settings: OcrSettings
) -> tuple[list[OcrLine], int, np.ndarray]:
    """Recognise ``image``, turning it 90/180/270 degrees first when its text is not upright.

    Returns (lines, turn, image read): ``turn`` is the clockwise rotation applied (0 when the page
    read upright) and the lines' boxes are pixels of the returned, turned image. One recognition
    pass for an upright page; one more per orientation tried on a page that looks turned, and a
    turn is kept only when it reads more confident text than the page as given.
    """
    s = settings
    lines = engine.recognize(image)
    if not s.detect_orientation:
        return lines, 0, image
    candidates = orientation_candidates(lines, s)
    best = (lines, 0, image)
    best_score = _upright_score(lines)
    for turn in candidates:
        turned = turn_image(image, turn)
        tried = engine.recognize(turned)
        score = _upright_score(tried)
        logger.debug("orientation: %d degrees scores %.1f (best so far %.1f)", turn, score, best_score)
        if score > best_score:
            best, best_score = (tried, turn, turned), score
        # the first guess reads cleanly: no need to try the others
        if best[1] == turn and not orientation_candidates(tried, s):
            break
    if best[1]:
        logger.info("page content turned %d degrees clockwise to read it upright", best[1])
    return best
