"""The PDF's own ``/PageLabels`` number tree, read through the xref API (``pdf_page_labels``)."""

from __future__ import annotations

import logging
from typing import Any

import pymupdf

from dagster_ocr.labels.formatting import format_label
from dagster_ocr.labels.pdfobjects import _Name, _parse, _Ref, decode_pdf_text

log = logging.getLogger(__name__)

_MAX_DEPTH = 32  # number trees are shallow; deeper means a cycle or garbage


class _Resolver:
    def __init__(self, doc: pymupdf.Document):
        self.doc = doc
        self.n_xref = doc.xref_length()

    def __call__(self, v: Any) -> Any:
        for _ in range(_MAX_DEPTH):
            if not isinstance(v, _Ref):
                return v
            if not 0 < v.xref < self.n_xref:
                raise ValueError(f"dangling reference {v.xref} 0 R")
            v = _parse(self.doc.xref_object(v.xref, compressed=True))
        raise ValueError("reference chain too long")


def _collect_nums(
    resolve: _Resolver, node: Any, out: dict[int, dict[str, Any]], seen: set[int], depth: int
) -> None:
    """Walk a number tree node (``/Nums`` leaves, ``/Kids`` children) into ``out``."""
    if depth > _MAX_DEPTH:
        raise ValueError("number tree too deep")
    if isinstance(node, _Ref):
        if node.xref in seen:
            log.warning("page labels: number tree cycle at %d 0 R, skipped", node.xref)
            return
        seen.add(node.xref)
    node = resolve(node)
    if not isinstance(node, dict):
        raise TypeError(f"number tree node is {type(node).__name__}, not a dictionary")
    nums = resolve(node.get("Nums"))
    if nums is not None:
        if not isinstance(nums, list):
            raise ValueError("/Nums is not an array")
        for key, value in zip(nums[0::2], nums[1::2], strict=False):
            value = resolve(value)
            if isinstance(key, int) and not isinstance(key, bool) and isinstance(value, dict):
                out.setdefault(key, value)
            else:
                log.warning("page labels: bad /Nums entry %r -> %r, skipped", key, value)
    kids = resolve(node.get("Kids"))
    if isinstance(kids, list):
        for kid in kids:
            _collect_nums(resolve, kid, out, seen, depth + 1)


def _range_rule(entry: dict[str, Any]) -> tuple[str, str, int]:
    style = entry.get("S")
    style = str(style) if isinstance(style, _Name) and str(style) in ("D", "R", "r", "A", "a") else ""
    if entry.get("S") is not None and not style:
        log.warning("page labels: unknown style %r, using the prefix only", entry.get("S"))
    prefix = entry.get("P")
    prefix = decode_pdf_text(prefix) if isinstance(prefix, bytes) else ""
    start = entry.get("St", 1)
    start = int(start) if isinstance(start, int | float) and not isinstance(start, bool) and start >= 1 else 1
    return style, prefix, start


def pdf_page_labels(doc: pymupdf.Document) -> list[str] | None:
    """Labels of every page from the PDF's /PageLabels tree, or None when it has none.

    Pages before the first range get an empty label (the caller falls back for them). A
    malformed tree is logged and gives None: it never raises.
    """
    try:
        if not getattr(doc, "is_pdf", False) or doc.page_count == 0:
            return None
        catalog = doc.pdf_catalog()
        if catalog <= 0:
            return None
        kind, value = doc.xref_get_key(catalog, "PageLabels")
        if kind in ("null", "") or not value:
            return None
        ranges: dict[int, dict[str, Any]] = {}
        _collect_nums(_Resolver(doc), _parse(value), ranges, set(), 0)
        starts = sorted(k for k in ranges if 0 <= k < doc.page_count)
        if not starts:
            log.warning("page labels: /PageLabels has no usable range")
            return None
        labels = [""] * doc.page_count
        for i, start in enumerate(starts):
            style, prefix, first = _range_rule(ranges[start])
            end = starts[i + 1] if i + 1 < len(starts) else doc.page_count
            for page in range(start, end):
                labels[page] = format_label(style, prefix, first + page - start)
        return labels
    # a broken tree is the document's fault (MuPDF raises its own types too): record a fallback, not a crash
    except Exception as exc:  # noqa: BLE001
        log.warning("page labels: unreadable /PageLabels tree (%s: %s)", type(exc).__name__, exc)
        return None
