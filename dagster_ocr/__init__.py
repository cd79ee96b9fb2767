"""dagster-ocr: the document engine (framework-free; never imports dagster)."""

import os
import sys

__version__ = "0.1.0"

# PyMuPDF 2.0 depends on pymupdf_layout and imports it with itself: three ONNX sessions built in
# every process that imports pymupdf (0.4-0.5 CPU s and ~45 MB each; a daemon's run worker, every
# CLI call, every test subprocess), for ``page.get_layout()`` only, which the default table finders
# never call (they use ``find_tables(use_layout=False)``). So the package is kept from loading until
# a layout finder asks for it (:func:`load_pymupdf_layout`); DAGSTER_OCR_PYMUPDF_LAYOUT=1 loads it
# as PyMuPDF would. Without it PyMuPDF prints a suggestion to install it on each find_tables: off.
if "pymupdf" not in sys.modules and os.environ.get("DAGSTER_OCR_PYMUPDF_LAYOUT") != "1":
    sys.modules.setdefault("pymupdf.layout", None)  # type: ignore[assignment]  # import fails: skipped
    os.environ.setdefault("PYMUPDF_SUGGEST_LAYOUT_ANALYZER", "0")


def load_pymupdf_layout() -> None:
    """Load PyMuPDF's layout model (``page.get_layout``), which the package keeps from loading at
    import; a no-op when it is loaded. Raises ImportError when pymupdf_layout is not installed."""
    if sys.modules.get("pymupdf.layout", ...) is None:
        del sys.modules["pymupdf.layout"]
    import pymupdf.layout  # noqa: F401  # activates the model on import
