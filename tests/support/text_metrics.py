"""Text-accuracy metrics for OCR evaluation (character error rate, fuzzy substring match), used by
bench/ and the corpus tests; the pipeline itself does not import them."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

_WS = re.compile(r"\s+")


def normalize_whitespace(text: str) -> str:
    """Collapse every run of whitespace (newlines included) into one space and strip the ends."""
    return _WS.sub(" ", text).strip()


def levenshtein(a: Sequence, b: Sequence) -> int:
    """Edit distance (insert, delete, substitute; each costs 1) between two sequences.

    Row-by-row dynamic programme vectorised with numpy: the insertion term inside one row is a
    running minimum, ``cur[j] = j + cummin(tmp[k] - k)``, so a 5,000 x 5,000 comparison takes
    milliseconds instead of the ~10 s a pure-Python double loop needs.
    """
    if len(a) < len(b):
        a, b = b, a
    if not b:
        return len(a)
    # map items to integers so numpy compares them element-wise, whatever their type
    vocab: dict = {}
    b_codes = np.array([vocab.setdefault(x, len(vocab)) for x in b], dtype=np.int64)
    a_codes = [vocab.setdefault(x, len(vocab)) for x in a]
    m = len(b)
    idx = np.arange(m + 1, dtype=np.int64)
    prev = idx.copy()
    for i, ca in enumerate(a_codes, start=1):
        tmp = np.empty(m + 1, dtype=np.int64)
        tmp[0] = i
        # substitution (or match) from the diagonal, deletion from above
        tmp[1:] = np.minimum(prev[:-1] + (b_codes != ca), prev[1:] + 1)
        prev = np.minimum.accumulate(tmp - idx) + idx
    return int(prev[-1])


def cer(ref: str, hyp: str) -> float:
    """Character error rate: edit distance over the reference length, whitespace-normalised.

    Both texts have their whitespace collapsed first, so line breaks and indentation (which OCR
    engines and ground-truth files render differently) do not count as errors. An empty
    reference gives 0.0 for an empty hypothesis and 1.0 otherwise.
    """
    r, h = normalize_whitespace(ref), normalize_whitespace(hyp)
    if not r:
        return 0.0 if not h else 1.0
    return levenshtein(r, h) / len(r)


def substring_cer(needle: str, haystack: str) -> float:
    """Edit distance of ``needle`` to its best-matching substring of ``haystack``, over len(needle).

    The fuzzy "is this text present" measure of olmOCR-bench's checks: 0.0 when ``needle`` occurs
    verbatim (whitespace-normalised), 1.0 or more when nothing resembles it. Semi-global alignment:
    the match may start and end anywhere in ``haystack`` at no cost.
    """
    n, h = normalize_whitespace(needle), normalize_whitespace(haystack)
    if not n:
        return 0.0
    if not h:
        return 1.0
    codes: dict = {}
    h_codes = np.array([codes.setdefault(c, len(codes)) for c in h], dtype=np.int64)
    idx = np.arange(len(h) + 1, dtype=np.int64)
    prev = np.zeros(len(h) + 1, dtype=np.int64)  # a match may start at any position for free
    for i, ch in enumerate(n, start=1):
        code = codes.get(ch, -1)
        tmp = np.empty(len(h) + 1, dtype=np.int64)
        tmp[0] = i
        tmp[1:] = np.minimum(prev[:-1] + (h_codes != code), prev[1:] + 1)
        prev = np.minimum.accumulate(tmp - idx) + idx
    return float(prev.min()) / len(n)
