"""Fewer full garbage collections while a process builds what it keeps (imports) and while documents run.

A full (oldest-generation) collection walks every tracked object ``gc.freeze`` has not set aside.
Python's default makes one every 10 young-generation collections (when the objects that survived
into the old generation since the last one are a quarter of it): while ``dagster-ocr run`` imports
Dagster, pandas and GX, that is 4-5 of them at 35-130 ms each (modules and classes, none of them
garbage), and while a document runs, one every ~7,000 net allocations that walks its pages, lines
and frames (~55 ms for a 10-K report here): 15 in a run of the two 10-K reports, 0.8 CPU s, which
found 8,500 objects of garbage between them. Inside :func:`rarer_full_collections` they are ten
times rarer; the young generations are collected as often as before, so garbage without cycles
(nearly all of it) goes at once as ever, and only cycles that outlive two young collections wait
longer for theirs.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

#: the third threshold inside the block: a full collection after this many young-generation ones
#: at most (Python's default: 10)
FULL_EVERY = 100


@contextlib.contextmanager
def rarer_full_collections() -> Iterator[None]:
    """Full collections ten times rarer for the block; the thresholds as they were after it."""
    before = gc.get_threshold()
    gc.set_threshold(before[0], before[1], max(before[2], FULL_EVERY))
    try:
        yield
    finally:
        gc.set_threshold(*before)
