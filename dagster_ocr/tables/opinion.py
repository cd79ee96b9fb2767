"""A learned layout model's second opinion on the text-aligned finder's tables (``tables.layout_veto``).

PyMuPDF 2.0 ships a layout model (a graph network over the page's text, vector and image boxes,
ONNX weights inside the wheel: ``pymupdf.layout``) that labels page regions: text, title, picture,
table, list-item, page-header, page-footer, section-header, footnote, caption, formula. Opt-in, it is
asked where the rules may have taken prose for a table: a text-aligned ('stream') part none of whose
words the model puts in a table region, and most of whose words it puts in prose or figure regions,
is dropped, and its lines stay body text. Ruled tables are never vetoed (a drawn grid is the
stronger evidence), nor parts written in a right-to-left script: the model puts the words of every
Arabic or Hebrew table it was shown in text regions (generated rtl and rtl_wrapped tables, tune seed
87). Only pages with a text-aligned part run the model, and only as displayed and unturned (no
/Rotate, no page read in a turned frame).

Measured and not kept (BENCHMARKS.md, "Tables and text fidelity", 2026-12-04): the model's table
regions the rules missed, read with PyMuPDF's text strategy (more false tables on charts, ICDAR
check F1 0.950 to 0.920), and its reading order (below ours on every shuffled class). The veto
stays off by default: on the scored sets it removes two false tables of 49 ICDAR documents and one
on a generated figure page, no true one; on the rest of the corpus 101 text-aligned parts (formula
blocks, an index, bullet lists, a sidebar, pages of an unmapped font), whose lines the paragraphs
then read in another order (text fidelity to get_text() tune 0.904 to 0.901, check 0.834 to 0.837);
all for ~0.13 CPU s on each page it runs on, +35 ms a corpus page on average.
"""

from __future__ import annotations

import logging
from typing import Any

import pymupdf

from dagster_ocr import load_pymupdf_layout
from dagster_ocr.layout import centre_inside
from dagster_ocr.model import BBox
from dagster_ocr.tables.cells import _Part
from dagster_ocr.tables.settings import TableSettings
from dagster_ocr.tables.words import _reads_rtl, _Word

logger = logging.getLogger(__name__)

#: the model's classes that are neither a table nor page furniture: a stream part whose words lie
#: in these is prose, a list or a figure's labels
PROSE = frozenset(
    {"text", "title", "list-item", "section-header", "footnote", "caption", "formula", "picture"}
)

_MODEL: Any = None


def _model() -> Any:
    """The layout model, built once a process (~0.4 CPU s): region labels only, from the page's text,
    vector and image boxes ('rf' features, ~0.13 CPU s a page on the bench machine). PyMuPDF's own
    ``page.get_layout()`` also renders the page for image features and fits a cell grid in each
    table region (~0.55 CPU s a page), which the veto does not need: on the ICDAR pages both label
    the same 87 table regions, 'rf' adds 9 (docs/stack-facts.md)."""
    global _MODEL
    if _MODEL is None:
        load_pymupdf_layout()
        from pymupdf.layout.onnx.BoxRFDGNN import BoxRFDGNN

        model = BoxRFDGNN(feature_set_name="rf", use_sort=False)
        model.table_grid_extractor = None  # cell grids are the rules' job; labels are asked here
        _MODEL = model
    return _MODEL


def regions(pg: pymupdf.Page) -> list[tuple[BBox, str]]:
    """The model's labelled regions of the page: (bbox, class)."""
    try:
        out = _model().predict(pg)
    except Exception:  # a page the model chokes on keeps the rules' tables
        logger.warning("page %d: no layout model opinion", pg.number, exc_info=True)
        return []
    return [((float(b[0]), float(b[1]), float(b[2]), float(b[3])), str(b[4])) for b in out]


def _box(word: _Word) -> BBox:
    return (word.x0, word.y0, word.x1, word.y1)


def vetoed(part: _Part, words: list[_Word], boxes: list[tuple[BBox, str]], s: TableSettings) -> bool:
    """A text-aligned part the model sees as prose or a figure: at most ``layout_veto_table_share``
    of its words in a table region and at least ``layout_veto_prose_share`` in prose or figure
    regions (never a part written in a right-to-left script: see the module)."""
    if part.strategy != "stream":
        return False
    inside = [w for w in words if centre_inside(_box(w), [part.bbox], pad=0)]
    if not inside or _reads_rtl(inside):
        return False
    tables = [b for b, c in boxes if c == "table"]
    prose_regions = [b for b, c in boxes if c in PROSE]
    table = sum(centre_inside(_box(w), tables, pad=0) for w in inside) / len(inside)
    prose = sum(centre_inside(_box(w), prose_regions, pad=0) for w in inside) / len(inside)
    return table <= s.layout_veto_table_share and prose >= s.layout_veto_prose_share
