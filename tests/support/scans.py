"""Tiny scanned PDFs for tests: text drawn with PyMuPDF, rendered to pixels, placed as page images.

Each page is described by one item: a string (a scanned text page; "faint:" first prints it in
light gray), ``None`` (a page with no content at all), "white" (a scan of white paper) or "noisy"
(a scan of off-white paper with grain and a few specks, JPEG-compressed, as scanners deliver it).
"""

from __future__ import annotations

import numpy as np
import pymupdf

A4 = (595, 842)


def render_text(text: str, dpi: int = 100, gray: float = 0.0, size: float = 11) -> pymupdf.Pixmap:
    """A grayscale pixmap of an A4 page with ``text`` (lines split on newlines) printed on it."""
    src = pymupdf.open()
    page = src.new_page(width=A4[0], height=A4[1])
    y = 72.0
    for line in text.split("\n"):
        page.insert_text((72, y), line, fontsize=size, color=(gray, gray, gray))
        y += size * 1.4
    return page.get_pixmap(dpi=dpi, colorspace=pymupdf.csGRAY)


def paper(dpi: int = 100, level: int = 255, grain: float = 0.0, specks: float = 0.0, seed: int = 0):
    """A grayscale pixmap of blank A4 paper: ``level`` gray, gaussian ``grain``, black ``specks`` share."""
    w, h = round(A4[0] * dpi / 72), round(A4[1] * dpi / 72)
    rng = np.random.default_rng(seed)
    arr = np.full((h, w), float(level))
    if grain:
        arr += rng.normal(0.0, grain, arr.shape)
    if specks:
        arr[rng.random(arr.shape) < specks] = 0
    data = np.clip(arr, 0, 255).astype(np.uint8)
    return pymupdf.Pixmap(pymupdf.csGRAY, w, h, data.tobytes(), False)


def scanned_pdf(pages: list[str | None], dpi: int = 100) -> bytes:
    """A PDF of image-only pages as described in the module docstring."""
    doc = pymupdf.open()
    for i, item in enumerate(pages):
        page = doc.new_page(width=A4[0], height=A4[1])
        if item is None:
            continue
        if item == "white":
            page.insert_image(page.rect, stream=paper(dpi).tobytes("png"))
        elif item == "noisy":
            page.insert_image(
                page.rect, stream=paper(dpi, 246, 1.5, 0.0003, seed=i).tobytes("jpeg", jpg_quality=75)
            )
        elif item.startswith("faint:"):
            page.insert_image(page.rect, stream=render_text(item[6:], dpi, gray=0.85).tobytes("png"))
        else:
            page.insert_image(page.rect, stream=render_text(item, dpi).tobytes("png"))
    return doc.tobytes()


class PidEngine:
    """A fake OCR engine that can be copied into worker processes (``worker_factory``): it reads one
    line per page naming the process that read it and the page's ink (so a page taken from a
    checkpoint must be the page OCR'd earlier). ``die_after`` calls, a copy running in a process
    other than ``parent`` exits at once (a worker killed mid-document)."""

    name = "pid"

    def __init__(self, parent: int | None = None, die_after: int | None = None, seconds: float = 0.0):
        import os

        self.parent = os.getpid() if parent is None else parent
        self.die_after = die_after
        self.seconds = seconds  # per page: long enough that a second worker starts before the first is done
        self.calls = 0

    def recognize(self, image):  # noqa: ANN001, ANN201 - the OcrEngine protocol
        import os

        from dagster_ocr.ocr.base import OcrLine

        if self.die_after is not None and self.calls >= self.die_after and os.getpid() != self.parent:
            os._exit(9)
        self.calls += 1
        if self.seconds:
            import time

            time.sleep(self.seconds)
        return [OcrLine(f"pid {os.getpid()} ink {int((image < 128).sum())}", (10.0, 10.0, 300.0, 40.0), 0.97)]

    def document(self, document_type):  # noqa: ANN001, ANN201
        import contextlib

        return contextlib.nullcontext()

    def take_stats(self):  # noqa: ANN201
        return ()

    def worker_factory(self):  # noqa: ANN201
        import functools

        return functools.partial(PidEngine, self.parent, self.die_after)


def burn_cpu(seconds: float) -> None:
    """Compute (not wait) for ``seconds`` of this thread's CPU time."""
    import time

    end = time.thread_time() + seconds
    x = 0
    while time.thread_time() < end:
        for i in range(2000):
            x += i * i


class BurnEngine(PidEngine):
    """``PidEngine`` that computes for ``cpu_s`` CPU seconds on every page, in a helper thread when
    ``in_thread`` (the way onnxruntime's intra-op threads do the work while the caller waits), or
    waits ``sleep_s`` wall seconds computing nothing (a page slowed by a machine busy with other
    work: time passes, this process's CPU does not). Copied into worker processes like PidEngine."""

    name = "burn"

    def __init__(self, cpu_s: float = 0.0, sleep_s: float = 0.0, in_thread: bool = False):
        super().__init__()
        self.cpu_s, self.sleep_s, self.in_thread = cpu_s, sleep_s, in_thread

    def recognize(self, image):  # noqa: ANN001, ANN201 - the OcrEngine protocol
        import threading
        import time

        if self.in_thread:
            helper = threading.Thread(target=burn_cpu, args=(self.cpu_s,))
            helper.start()
            helper.join()
        else:
            burn_cpu(self.cpu_s)
        time.sleep(self.sleep_s)
        return super().recognize(image)

    def worker_factory(self):  # noqa: ANN201
        import functools

        return functools.partial(BurnEngine, self.cpu_s, self.sleep_s, self.in_thread)


#: what a duplex scan's blank backs print, where they print anything
LEFT_BLANK_NOTICE = "This page intentionally left blank"
#: blank paper is scanned at this dpi: at 72 the grain's specks touch on the blank check's 30-dpi
#: thumbnail and read as ink (the page is then OCR'd, finds nothing, and is an image page)
PAPER_DPI = 100


def duplex_scan_pdf(items: list[bytes | pymupdf.Pixmap | str | None], dpi: int = 72) -> bytes:
    """Image-only A4 pages: image bytes or a Pixmap (a rendered text page), None (an empty page),
    "white" / "noisy" (a scan of blank paper, clean or grainy JPEG), "notice" (a scan of a page
    printing only the left-blank notice, at ``dpi``). What bench/blank_pages.py and
    tests/pipeline/test_blank_backs.py feed the text stage."""
    doc = pymupdf.open()
    for i, item in enumerate(items):
        page = doc.new_page(width=595, height=842)
        if item is None:
            continue
        if isinstance(item, pymupdf.Pixmap):
            stream = item.tobytes("png")
        elif isinstance(item, bytes):
            stream = item
        elif item == "white":
            stream = paper(PAPER_DPI).tobytes("png")
        elif item == "noisy":
            stream = paper(PAPER_DPI, 246, 1.5, 0.0003, seed=i).tobytes("jpeg", jpg_quality=75)
        else:
            stream = render_text("\n" * 25 + " " * 30 + LEFT_BLANK_NOTICE, dpi, size=14).tobytes("png")
        page.insert_image(page.rect, stream=stream)
    return doc.tobytes()
