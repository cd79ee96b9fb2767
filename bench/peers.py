"""Side by side, same run, same PDFs: raw PyMuPDF text (the floor), pdfplumber, and our pipeline.

Each tool runs over the same born-digital PDFs, the tools interleaved round by round (so load from
other processes on the machine hits them alike); the figure is the median round. Tools:

* ``pymupdf_text``: ``page.get_text()`` on every page, nothing else: the floor any pipeline built
  on PyMuPDF pays.
* ``pymupdf_dict``: ``page.get_text("dict")`` (text with positions and fonts, what our text stage reads).
* ``pdfplumber_text``: ``page.extract_text()`` (bench-only dependency ``pdfplumber==0.11.10``).
* ``pdfplumber_tables``: ``page.extract_text()`` + ``page.extract_tables()``.
* ``ours_parse``: ``dagster_ocr.pipeline.parse`` (text, labels, tables, paragraphs; no database).
* ``ours_core``: every stage the assets run, DuckDB load, checks and knowledge base included.

docling and marker need model weights downloaded from Hugging Face at first use; where they are not
installed or cannot fetch their models (this machine reaches PyPI only) they are reported as such
and their published CPU figure is quoted instead (see ``PUBLISHED``).

    .venv/bin/python bench/peers.py [--quick] [--rounds N] [--json OUT]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import _common as C

#: published CPU throughput of peers that cannot run here (pages/s), with the source
PUBLISHED = {
    "docling": {
        "pages_per_second": [0.60, 1.34],
        "source": "Docling Technical Report v1.0 (Auer et al., arXiv:2408.09869, Table 1): 1.27-1.34 pages/s "
        "on an Apple M3 Max and 0.60-0.92 pages/s on an Intel Xeon E5-2690, CPU only, default pipeline "
        "(layout model + TableFormer), 4 or 16 threads",
    },
    "marker": {
        "pages_per_second": None,
        "source": "marker's README quotes GPU throughput only (H100, batch mode); no CPU figure is published",
    },
}


def _pymupdf_text(path: Path) -> int:
    import pymupdf

    with pymupdf.open(path) as doc:
        return sum(len(page.get_text()) for page in doc)


def _pymupdf_dict(path: Path) -> int:
    import pymupdf

    with pymupdf.open(path) as doc:
        return sum(len(page.get_text("dict")["blocks"]) for page in doc)


def _plumber_text(path: Path) -> int:
    import pdfplumber

    with pdfplumber.open(path) as pdf:
        return sum(len(page.extract_text() or "") for page in pdf.pages)


def _plumber_tables(path: Path) -> int:
    import pdfplumber

    with pdfplumber.open(path) as pdf:
        return sum(len(page.extract_text() or "") + len(page.extract_tables()) for page in pdf.pages)


def peer_status() -> dict[str, str]:
    """Whether each optional peer can run here, and why not."""
    status = {}
    status["pdfplumber"] = "ok" if importlib.util.find_spec("pdfplumber") else "not installed"
    for name, module in (("docling", "docling"), ("marker", "marker")):
        if importlib.util.find_spec(module) is None:
            status[name] = (
                "not run: not installed; it downloads its layout/table models from Hugging Face at first "
                "use, and this machine reaches PyPI only (huggingface.co does not resolve)"
            )
        else:
            status[name] = "installed but not run: needs model downloads (offline here)"
    return status


def compare(pdfs: list[Path], rounds: int, workdir: Path, warm: bool = True) -> dict[str, Any]:
    """Pages/s of every tool on ``pdfs``, tools interleaved per round, median round."""
    import stages

    from dagster_ocr.ingest import DocumentStore
    from dagster_ocr.pipeline import parse
    from dagster_ocr.settings import Settings
    from dagster_ocr.warehouse import Warehouse

    store = DocumentStore(workdir / "store")
    sources = [store.register(p)[0] for p in pdfs]
    settings = Settings()
    wh = Warehouse(workdir / "peers.duckdb")
    wh.ensure_schema()
    n_pages = sum(C.page_count(p) for p in pdfs)
    status = peer_status()

    def each(fn: Callable[[Path], Any]) -> Callable[[], None]:
        return lambda: [fn(p) for p in pdfs]

    tools: dict[str, Callable[[], Any]] = {
        "pymupdf_text": each(_pymupdf_text),
        "pymupdf_dict": each(_pymupdf_dict),
    }
    if status["pdfplumber"] == "ok":
        tools["pdfplumber_text"] = each(_plumber_text)
        tools["pdfplumber_tables"] = each(_plumber_tables)
    tools["ours_parse"] = lambda: [parse(s, settings) for s in sources]
    tools["ours_core"] = lambda: [stages.run_core(s, wh, settings) for s in sources]
    for fn in tools.values() if warm else ():  # warm-up round: imports and caches
        fn()
    seconds: dict[str, list[float]] = {k: [] for k in tools}
    for _ in range(rounds):
        for name, fn in tools.items():
            seconds[name].append(C.timed(fn)[0])
    med = {k: C.median(v) for k, v in seconds.items()}
    pps = {k: n_pages / v if v else 0.0 for k, v in med.items()}
    floor = pps["pymupdf_text"]
    return {
        "documents": len(pdfs),
        "pages": n_pages,
        "rounds": rounds,
        "seconds": med,
        "seconds_all": seconds,
        "pages_per_second": pps,
        "slowdown_vs_pymupdf_text": {k: floor / v if v else float("inf") for k, v in pps.items()},
        "status": status,
        "published": PUBLISHED,
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--rounds", type=int)
    ap.add_argument("--generated-pages", type=int)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    C.quiet_logs()
    rounds = args.rounds or (1 if args.quick else 3)
    gen = args.generated_pages if args.generated_pages is not None else (0 if args.quick else 40)
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="bench-peers-") as tmp:
        out["corpus"] = compare(C.corpus_pdfs(args.quick), rounds, Path(tmp) / "c", not args.quick)
        if gen:
            out["generated"] = compare([C.generated(gen)], rounds, Path(tmp) / "g", not args.quick)
    if args.json:
        C.dump(out, args.json)
    print(json.dumps({k: v["pages_per_second"] for k, v in out.items()}))
    return out


if __name__ == "__main__":
    main()
