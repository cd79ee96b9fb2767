"""Shared helpers of the issue-10 benchmarks: input sets, generated documents, timing, memory.

Not a benchmark itself. ``bench/run.py`` drives ``e2e``, ``stages``, ``peers`` and ``growth``.
Generated documents are deterministic (seeded) and cached under ``--cache`` (default
``/tmp/dagster-ocr-bench``), so repeated runs measure the pipeline, not the generator.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import random
import resource
import statistics
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pymupdf

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
# helpers tests and benches share (tiny models, text metrics) live in tests/support, not the package
if str(REPO / "tests") not in sys.path:
    sys.path.insert(1, str(REPO / "tests"))

DEFAULT_CACHE = Path(os.environ.get("DAGSTER_OCR_BENCH_CACHE", "/tmp/dagster-ocr-bench"))
#: bump when the generator changes, so cached files are rebuilt
GENERATOR_VERSION = 2

_WORDS = (
    "the contract supplier shall deliver goods services within days after notice payment invoice "
    "agreement party parties term clause section annex schedule obligation liability warranty period "
    "price amount total quarter report revenue cost margin growth market customer order volume data "
    "system process quality review audit control risk compliance policy procedure board member meeting "
    "approval budget forecast project phase milestone delivery acceptance criteria performance standard"
).split()


def find_corpus() -> Path | None:
    """The shared corpus (same search as tests/conftest.py)."""
    for c in (os.environ.get("DAGSTER_OCR_CORPUS"), REPO.parent / "shared" / "corpus", "/work/shared/corpus"):
        if c and (Path(c) / "MANIFEST.json").is_file():
            return Path(c)
    return None


@functools.cache
def _splits(corpus: Path) -> dict[str, str]:
    manifest = json.loads((corpus / "MANIFEST.json").read_text())
    return {f["file"]: f["split"] for f in manifest["files"] if f.get("role") == "input" and f.get("split")}


def split_of(pdf: Path, corpus: Path | None = None) -> str:
    """The corpus split ("tune" or "check", MANIFEST.json) of an input file; "?" outside the corpus.

    Tune rules on "tune"; "check" is reported beside it and never tuned on (corpus README)."""
    corpus = corpus or find_corpus()
    if corpus is None or not Path(pdf).resolve().is_relative_to(corpus.resolve()):
        return "?"
    return _splits(corpus).get(str(Path(pdf).resolve().relative_to(corpus.resolve())), "?")


#: born-digital corpus PDFs (text layer throughout; no page should be routed to OCR)
BORN_DIGITAL = (
    "tables/icdar2013/us-024/us-024.pdf",
    "tables/icdar2013/us-018/us-018.pdf",
    "tables/icdar2013/eu-014/eu-014.pdf",
    "tables/icdar2013/us-020/us-020.pdf",
    "tables/icdar2013/eu-005/eu-005.pdf",
    "tables/icdar2013/us-012/us-012.pdf",
    "tables/icdar2013/eu-003/eu-003.pdf",
    "tables/tabula-java/schools/schools.pdf",
    "tables/camelot/health/health.pdf",
    "tables/tabula-java/twotables/twotables.pdf",
    "docling/multi_page/multi_page.pdf",
    "docling/2305.03393v1-pg9/2305.03393v1-pg9.pdf",
    "olmocr_bench/pdfs/earnings.pdf",
    "olmocr_bench/pdfs/multi_column_miss.pdf",
)
# left out: page_labels/labelled_pages.pdf and issue14847.pdf have pages without a text layer (the
# router sends them to OCR), and GeoTopo-komprimiert.pdf (117 pages) would double the full mode's time
QUICK_BORN_DIGITAL = ("tables/icdar2013/eu-005/eu-005.pdf",)
#: an image-only PDF from the corpus (docling's OCR test page)
SCANNED_CORPUS = ("ocr/docling/ocr_test.pdf",)


def corpus_pdfs(quick: bool) -> list[Path]:
    """The born-digital corpus PDFs of this mode that exist here."""
    corpus = find_corpus()
    if corpus is None:
        return []
    names = QUICK_BORN_DIGITAL if quick else BORN_DIGITAL
    return [corpus / n for n in names if (corpus / n).is_file()]


def page_count(path: Path) -> int:
    with pymupdf.open(path) as doc:
        return doc.page_count


def _paragraph(rng: random.Random, n_words: int) -> str:
    words = [rng.choice(_WORDS) for _ in range(n_words)]
    words[0] = words[0].capitalize()
    return " ".join(words) + "."


def _wrap(text: str, width: int) -> list[str]:
    lines, cur = [], ""
    for w in text.split():
        if cur and len(cur) + 1 + len(w) > width:
            lines.append(cur)
            cur = w
        else:
            cur = f"{cur} {w}" if cur else w
    if cur:
        lines.append(cur)
    return lines


def _draw_table(page: pymupdf.Page, rng: random.Random, top: float, n_rows: int = 7) -> float:
    """A ruled 4-column table of figures; returns its bottom y."""
    cols = (72, 222, 322, 422, 523)
    row_h = 16
    shape = page.new_shape()
    for r in range(n_rows + 1):
        y = top + r * row_h
        shape.draw_line((cols[0], y), (cols[-1], y))
    for x in cols:
        shape.draw_line((x, top), (x, top + n_rows * row_h))
    shape.finish(color=(0, 0, 0), width=0.6)
    shape.commit()
    header = ("Item", "Quantity", "Unit price", "Amount")
    for r in range(n_rows):
        y = top + r * row_h + 11.5
        cells = (
            header
            if r == 0
            else (
                f"{rng.choice(_WORDS)} {rng.choice(_WORDS)}",
                str(rng.randint(1, 500)),
                f"{rng.randint(1, 999)}.{rng.randint(0, 99):02d}",
                f"{rng.randint(1000, 99999):,}.{rng.randint(0, 99):02d}",
            )
        )
        for c, text in enumerate(cells):
            page.insert_text((cols[c] + 4, y), text, fontsize=9, fontname="hebo" if r == 0 else "helv")
    return top + n_rows * row_h


POOL_PAGES = 40


def _pool(n_pages: int, seed: int, table_every: int) -> pymupdf.Document:
    """``n_pages`` distinct pages without page numbers (the slow part: about 1 ms per text call)."""
    rng = random.Random(seed)
    doc = pymupdf.open()
    section = 0
    for i in range(n_pages):
        page = doc.new_page(width=595, height=842)
        page.insert_text((72, 40), "Benchmark Report - Annual Operations Review", fontsize=8, fontname="helv")
        y = 80.0
        if i % 3 == 0:
            section += 1
            title = _paragraph(rng, 4)[:-1].title()
            page.insert_text((72, y), f"{section}. {title}", fontsize=14, fontname="hebo")
            y += 28
        if table_every and i % table_every == 1:
            caption = f"Table {i // table_every + 1}: figures by item"
            page.insert_text((72, y), caption, fontsize=9, fontname="heit")
            y = _draw_table(page, rng, y + 8) + 24
        while y < 740:
            lines = _wrap(_paragraph(rng, rng.randint(35, 80)), 95)
            if y + 13 * len(lines) > 770:
                break
            page.insert_text((72, y), lines, fontsize=10, fontname="helv", lineheight=1.3)
            y += 13 * len(lines) + 9
    return doc


def build_document(path: Path, n_pages: int, seed: int = 10, table_every: int = 4) -> Path:
    """A born-digital report of ``n_pages`` A4 pages: running header, numbered section headings,
    body paragraphs, a ruled table every ``table_every`` pages and a page-number footer.

    Up to ``POOL_PAGES`` pages are distinct; longer documents cycle through that pool (copied with
    ``insert_pdf``, which shares fonts) and then get their own page numbers, so generating 5,000
    pages takes seconds instead of minutes. Deterministic for a given seed.
    """
    pool = _pool(min(n_pages, POOL_PAGES), seed, table_every)
    if n_pages <= POOL_PAGES:
        doc = pool
    else:
        doc = pymupdf.open()
        while doc.page_count < n_pages:
            take = min(POOL_PAGES, n_pages - doc.page_count)
            doc.insert_pdf(pool, from_page=0, to_page=take - 1)
        pool.close()
    for i, page in enumerate(doc):
        page.insert_text((290, 805), str(i + 1), fontsize=9, fontname="helv")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".part")
    # garbage=1 only: garbage=3 (deduplicate objects) grows superlinearly with page count
    doc.save(tmp, garbage=1, deflate=True)
    doc.close()
    os.replace(tmp, path)
    return path


def generated(n_pages: int, cache: Path = DEFAULT_CACHE) -> Path:
    """The cached generated document of ``n_pages`` pages (built on first use)."""
    path = cache / f"report_v{GENERATOR_VERSION}_{n_pages}p.pdf"
    return path if path.is_file() else build_document(path, n_pages)


def scanned(n_pages: int, cache: Path = DEFAULT_CACHE, dpi: int = 150) -> Path:
    """An image-only PDF: the first ``n_pages`` of a generated document rendered to greyscale
    images at ``dpi`` (what a scanner hands over), no text layer."""
    path = cache / f"scan_v{GENERATOR_VERSION}_{n_pages}p_{dpi}dpi.pdf"
    if path.is_file():
        return path
    src = pymupdf.open(generated(max(n_pages, 4), cache))
    out = pymupdf.open()
    for i in range(n_pages):
        pix = src[i].get_pixmap(dpi=dpi, colorspace=pymupdf.csGRAY)
        page = out.new_page(width=src[i].rect.width, height=src[i].rect.height)
        page.insert_image(page.rect, stream=pix.tobytes("png"))
    tmp = path.with_suffix(".part")
    out.save(tmp, garbage=3, deflate=True)
    out.close()
    src.close()
    os.replace(tmp, path)
    return path


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    """(seconds, result) of one call."""
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def median(values: Iterable[float]) -> float:
    vals = list(values)
    return statistics.median(vals) if vals else float("nan")


def peak_rss_mib() -> float:
    """This process's peak resident set size so far, MiB.

    Read from ``VmHWM`` in /proc/self/status, which starts afresh at exec. Not ``ru_maxrss``: a
    child started by ``subprocess`` (vfork + exec) inherits its parent's high-water mark there, so
    a 100 MiB child of a 500 MiB parent reports 500 MiB.
    """
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def current_rss_mib() -> float:
    """This process's resident set size now, MiB."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def quiet_logs() -> None:
    """Silence the pipeline's and the OCR engine's INFO chatter so stdout stays JSON."""
    import logging

    logging.basicConfig(level=logging.ERROR)
    for name in ("dagster_ocr", "RapidOCR", "rapidocr", "dagster"):
        logging.getLogger(name).setLevel(logging.ERROR)


def dump(obj: Any, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj, indent=2, default=str))


def source_of(path: Path):
    """A file as the pipeline's SourceDocument, read in place (no store): sha256, kind by magic."""
    from dagster_ocr.ingest import detect_kind
    from dagster_ocr.model import SourceDocument

    data = path.read_bytes()
    return SourceDocument(
        doc_id=hashlib.sha256(data).hexdigest(),
        file_name=path.name,
        source_path=str(path),
        stored_path=str(path),
        size_bytes=len(data),
        kind=detect_kind(data[:1024]),
    )
