"""dagster-ocr: the document engine (framework-free; never imports dagster)."""

__version__ = "0.1.0"
