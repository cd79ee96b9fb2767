"""The stage: ``label_pages`` (/PageLabels, then printed numbers, then physical), and look-ups both ways."""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence

from dagster_ocr.labels.printed import _find_candidates, _infer_printed
from dagster_ocr.labels.settings import LabelSettings
from dagster_ocr.model import LabelSource, Page, PageLabel

log = logging.getLogger(__name__)


def _pdf_labels_broken(labels: list[str]) -> bool:
    """All pages carry one label (e.g. every page "1"): a generator bug, useless to a reader."""
    return len(labels) >= 2 and len(set(labels)) == 1


def label_pages(
    pdf_labels: Sequence[str] | None, pages: Sequence[Page], settings: LabelSettings
) -> list[PageLabel]:
    """One ``PageLabel`` per page, in the order of ``pages``.

    ``pdf_labels`` are the document's /PageLabels, one per page (``pdf_page_labels``, which the
    text stage reads into ``ExtractedDocument.pdf_page_labels``), or None where it has none.
    They come first (unless clearly broken, see the module docstring), then printed page numbers
    inferred over consistent runs, then the physical page number.
    """
    s = settings
    found = _find_candidates(pages, s)
    printed = _infer_printed(found, s)
    pdf = list(pdf_labels) if pdf_labels is not None and s.use_pdf_labels else None
    if pdf is not None and _pdf_labels_broken(pdf):
        log.warning("page labels: every page of /PageLabels reads %r; using printed numbers instead", pdf[0])
        pdf = None
    if pdf is None:
        return printed

    out: list[PageLabel] = []
    disagreements = 0
    cands_at = {k: (index, cs) for index, k, cs in found}
    for k, fallback in enumerate(printed):
        index, cands = cands_at[k]
        label = pdf[index] if 0 <= index < len(pdf) else ""
        if not label:
            out.append(fallback)
            continue
        seen = next((c for c in cands if c.label.casefold() == label.casefold()), None)
        if seen is not None:
            out.append(PageLabel(index, label, LabelSource.PDF, 1.0, seen.line_index))
        elif fallback.source == LabelSource.PRINTED and fallback.confidence >= 0.8:
            # a printed run seen on two or more pages says otherwise: keep /PageLabels, trust less
            disagreements += 1
            out.append(
                PageLabel(index, label, LabelSource.PDF, s.pdf_disagree_confidence, fallback.line_index)
            )
        else:
            out.append(PageLabel(index, label, LabelSource.PDF, s.pdf_confidence, fallback.line_index))
    if disagreements:
        log.info(
            "page labels: /PageLabels and printed numbers disagree on %d page(s); /PageLabels kept",
            disagreements,
        )
    return out


def _label_key(label: str) -> str:
    return re.sub(r"\s+", " ", label).strip()


def pages_for_label(labels: list[PageLabel], label: str) -> list[int]:
    """Physical page indexes (0-based, ascending) whose label is ``label``.

    A label can repeat across parts of a document (each appendix restarting at "1"), so this is a
    list. Exact matches win; when there are none, the match is retried ignoring case ("iv" finds
    a page labelled "IV"). Surrounding and repeated whitespace never matters.
    """
    want = _label_key(label)
    exact = sorted({pl.page_index for pl in labels if _label_key(pl.label) == want})
    if exact or not want:
        return exact
    folded = want.casefold()
    return sorted({pl.page_index for pl in labels if _label_key(pl.label).casefold() == folded})


def label_for_page(labels: list[PageLabel], page_index: int) -> str:
    """The label of physical page ``page_index``; its 1-based number when no label covers it."""
    for pl in labels:
        if pl.page_index == page_index:
            return pl.label
    return str(page_index + 1)
