"""``LabelSettings``: the tunables of the page-label stage."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class LabelSettings(BaseModel):
    """Tunables of the page-label stage."""

    model_config = ConfigDict(extra="forbid")

    use_pdf_labels: bool = Field(
        True, description="Read the PDF's /PageLabels tree when the document has one."
    )
    zone_fraction: float = Field(
        0.12, description="Height share at the top and at the bottom of a page searched for printed numbers."
    )
    max_lines_per_zone: int = Field(
        6, description="Only this many lines nearest the page edge, per zone, are page-number candidates."
    )
    edge_numbers: bool = Field(
        True, description="Also accept a number at the start or end of a running header/footer line."
    )
    isolated_edge_lines: bool = Field(
        True,
        description="Also take the first and last line of a page, outside the zones, when it is only a "
        "number, centred, and set apart (cropped pages, short last pages).",
    )
    isolated_gap: float = Field(
        1.5, description="... set apart by at least this many of its own line heights from the next line."
    )
    isolated_centre: float = Field(
        0.08, description="... centred within this share of the page width of the page's centre."
    )
    strong_weight: float = Field(
        1.0, description="Vote of an explicit pattern: 'Page 3', '- 3 -', '3/40', '第3页'."
    )
    bare_weight: float = Field(0.9, description="Vote of a line that is only a number ('12', 'iv', 'A-3').")
    edge_weight: float = Field(
        0.5, description="Vote of a number at the edge of a longer header/footer line."
    )
    switch_penalty: float = Field(
        1.5, description="Cost of switching runs between pages; above one vote so a lone misread is outvoted."
    )
    contradiction_weight: float = Field(
        0.3, description="Share of a candidate's vote charged to a run that the page's numbers contradict."
    )
    restart_penalty: float = Field(
        0.5,
        description="Cost of switching to a run that starts at 1 on that page (body after front matter, "
        "a chapter restart): cheaper than other switches, so a restart on the last page is still seen.",
    )
    min_run_support: int = Field(
        2,
        description="Runs seen on fewer pages are dropped, unless the lone number is a whole line that is "
        "not far ahead of the physical page (see lone_max_lead), or no run reaches this support.",
    )
    lone_max_lead: int = Field(
        10,
        description="A number seen on one page only is kept as a run when it exceeds the 1-based physical "
        "page number by at most this much ('iii' on the third page yes, a year '2023' on the cover no).",
    )
    max_runs: int = Field(
        64, description="Keep at most this many candidate runs (by support) in the inference."
    )
    max_arabic: int = Field(99999, description="Largest arabic number taken as a page number.")
    max_roman: int = Field(500, description="Largest roman number taken as a page number.")
    physical_confidence: float = Field(0.1, description="Confidence of the physical fallback label.")
    pdf_confidence: float = Field(
        0.95, description="Confidence of a /PageLabels label with no printed evidence."
    )
    pdf_disagree_confidence: float = Field(
        0.7, description="Confidence of a /PageLabels label contradicted by a supported printed run."
    )
