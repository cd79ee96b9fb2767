"""Decoding statistics an OCR engine reports per page (plain counters: no torch import).

The speculative engine counts tokens drafted, accepted and target forwards per ``recognize`` call;
the text stage sums an engine's calls on one page into ``Page.decode_stats`` and the warehouse
stores them in ``ocr_decode_stats``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any


@dataclass(slots=True)
class DecodeStats:
    """Counts of one page (or a sum over pages). ``accepted`` tokens came from the draft."""

    regions: int = 0
    new_tokens: int = 0
    target_forwards: int = 0
    #: tokens drafted per region (one draft forward per token with a draft model; looked up,
    #: with no forward, for page-text drafts); drafts past a region's end are not counted
    draft_forwards: int = 0
    accepted: int = 0
    seconds: float = 0.0

    def add(self, other: DecodeStats) -> None:
        """Add ``other``'s counts to these."""
        self.regions += other.regions
        self.new_tokens += other.new_tokens
        self.target_forwards += other.target_forwards
        self.draft_forwards += other.draft_forwards
        self.accepted += other.accepted
        self.seconds += other.seconds

    @property
    def acceptance_rate(self) -> float | None:
        """Share of drafted tokens the target accepted (None when nothing was drafted)."""
        return self.accepted / self.draft_forwards if self.draft_forwards else None

    @property
    def tokens_per_target_forward(self) -> float | None:
        """Tokens produced per target forward: 1.0 without speculation, up to K+1 with it."""
        return self.new_tokens / self.target_forwards if self.target_forwards else None

    @property
    def tokens_per_s(self) -> float | None:
        """Decoded tokens per second of wall time (vision encoding included)."""
        return self.new_tokens / self.seconds if self.seconds > 0 else None

    def as_dict(self) -> dict[str, Any]:
        """Counts and the derived rates, JSON-ready (for asset metadata and DuckDB rows)."""
        d = asdict(self)
        d.update(
            acceptance_rate=self.acceptance_rate,
            tokens_per_target_forward=self.tokens_per_target_forward,
            tokens_per_s=self.tokens_per_s,
        )
        return d


@dataclass(slots=True)
class PageDecodeStats(DecodeStats):
    """One ``recognize`` call: ``page_seq`` counts pages since the last ``take_stats``."""

    page_seq: int = 0
    document_type: str | None = None
    k: int = 0
    speculative: bool = False
    #: where the drafts came from: 'draft_model', 'page_text', or None without speculation
    draft_kind: str | None = None


def summarize(pages: Sequence[DecodeStats]) -> DecodeStats:
    """The sum of per-page statistics (rates recomputed from the sums, not averaged)."""
    total = DecodeStats()
    for p in pages:
        total.add(p)
    return total


def page_decode_stats(calls: Sequence[DecodeStats]) -> dict[str, float | int | None]:
    """One page's decoding counts, summed over the engine's calls on it (rates from the sums)."""
    return summarize(calls).as_dict()
