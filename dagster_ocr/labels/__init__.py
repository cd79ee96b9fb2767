"""Page labels: the name a reader uses for a page ("iv", "12", "A-3"), not its physical index.

Two sources, in this order of trust:

1. The PDF's own ``/PageLabels`` number tree (``pdf_page_labels``). It is read here directly
   through PyMuPDF's low-level xref API and a small PDF object parser, not through
   ``Document.get_page_labels()``: MuPDF 1.28 returns prefixes stored as hex UTF-16 strings
   undecoded (``<FEFF0058>3`` instead of ``X3``), and reading the tree ourselves also lets a
   malformed tree (cycles, wrong types, dangling references) be logged and skipped instead of
   raising. All styles are supported (D, R, r, A, a, no style = prefix only), with prefixes and
   ``/St`` start values; nodes with ``/Kids`` are walked recursively.
2. Page numbers printed in the header and footer zones of each page (module ``printed``):
   arabic, roman, "Page 3 of 40", "- 3 -", "3/40", "第3页", "A-3". Each candidate number votes for
   a run ``(style, prefix, offset)`` where ``value = page_index + offset``; a Viterbi pass over the
   pages picks the best sequence of runs (switching runs costs a penalty), so a single misread
   number is outvoted, missing numbers are filled from the run, and roman front matter followed
   by arabic numbering or a restart is a switch between two runs.

Policy when both exist and disagree: **/PageLabels win** per page, because the author put them
there on purpose and viewers show them; their confidence drops (``pdf_disagree_confidence``)
when a well-supported printed run says otherwise. They are ignored as *clearly broken* when a
document of two or more pages gives every page the same label (all "1", all empty): then the
printed-number inference (or the physical fallback) is used. A page whose /PageLabels label is
empty (outside every range, or a range with neither style nor prefix) also falls back to the
printed inference for that page.

The first or last line of a page also counts as a candidate outside the zones when it is only a
number, centred and set apart (a cropped page whose number sits right under the text).
``pages_for_label`` and ``label_for_page`` look labels up both ways (a label may repeat).

``PageLabel.line_index`` points at the printed page-number line whenever one is found on the
page (also when the label itself comes from /PageLabels), so the paragraph stage can drop it.

Modules, bottom to top (each imports only those above it in this list):

* ``settings``: ``LabelSettings``.
* ``formatting``: label text of a style and a number (``format_label``, ``to_roman``).
* ``pdfobjects``: a minimal PDF object parser and PDF text strings (``decode_pdf_text``,
  ``decode_hex_prefix``).
* ``pagelabels``: the ``/PageLabels`` tree (``pdf_page_labels``).
* ``printed``: printed page-number candidates (``page_number_candidates``), their runs and the
  Viterbi pass.
* ``stage``: ``label_pages`` (the policy above) and the look-ups ``pages_for_label`` and
  ``label_for_page``.

Names with a leading underscore are private to the package.
"""

from __future__ import annotations

from dagster_ocr.labels.formatting import format_label, to_roman
from dagster_ocr.labels.pagelabels import pdf_page_labels
from dagster_ocr.labels.pdfobjects import decode_hex_prefix, decode_pdf_text
from dagster_ocr.labels.printed import page_number_candidates
from dagster_ocr.labels.settings import LabelSettings
from dagster_ocr.labels.stage import label_for_page, label_pages, pages_for_label

__all__ = [
    "LabelSettings",
    "decode_hex_prefix",
    "decode_pdf_text",
    "format_label",
    "label_for_page",
    "label_pages",
    "page_number_candidates",
    "pages_for_label",
    "pdf_page_labels",
    "to_roman",
]
