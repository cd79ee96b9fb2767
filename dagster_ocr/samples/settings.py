"""``SamplesSettings``: the tunables of the sample generator."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class SamplesSettings(BaseModel):
    """Tunables of the sample generator. Changing any of them changes the files' bytes (and doc_ids)."""

    model_config = ConfigDict(extra="forbid")

    scan_dpi: int = Field(
        150, description="Resolution of the rendered 'scanned' pages (contract annex, letter)."
    )
    scan_paper_grey: float = Field(
        0.93,
        description="Paper brightness of scanned pages, 0..1; below 1 so they look scanned, not rendered.",
    )
    scan_ink_grey: float = Field(0.12, description="Ink brightness of scanned pages, 0..1 (0 is black).")
    scan_noise_seed: int = Field(
        20250401, description="Seed of the speckle noise on scanned pages (determinism)."
    )
    scan_speckles: int = Field(
        400, description="Number of dark speckles sprinkled on a scanned page; small, so OCR is unaffected."
    )
    damaged_keep_fraction: float = Field(
        0.4, description="Fraction of a valid PDF's bytes kept at the head of damaged.pdf before the garbage."
    )
    pdf_date: str = Field(
        "D:20250401090000+09'00'",
        description="Creation and modification date written into every PDF's metadata.",
    )
