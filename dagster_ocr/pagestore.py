"""A document's pages between stages: in memory while the document is short, on disk once it is long.

The text stage's output is every page's lines; a stage after it (labels, tables, paragraphs, the
warehouse load) reads the pages one at a time and keeps only what it produces. Held as Python
objects, a page costs ~28 KB (51 lines of a typical report page), so a 5,000-page document held
whole was 140 MB before any stage had started, and the process's memory grew with document length.
:class:`PageList` keeps the first ``keep`` pages as objects; past that it moves them all to an
anonymous temporary file (deleted by the OS when the list is collected or the process ends) and
reads each page back when asked. Memory then stays flat in document length.

Pages are stored as pickles of plain tuples (a 51-line report page: ~8 KB, plus its packed words,
``model.Words``, ~40 bytes a word; ~110 us to read back into objects; ``marshal`` is no faster, and
it writes a numpy scalar from an OCR engine as raw bytes).
Written by hand because no library offers "a list that spills to disk" for this access pattern
(appended once, then read front to back by each stage).

A page read back is a new object: changing it does not change the stored page. Stages treat pages
as read-only input; the one that derives something per line (paragraphs: furniture) returns it.
Pickling a ``PageList`` (Dagster's IO manager does, between assets) streams the stored pages into
the pickle one batch at a time, and unpickling writes them back to a new temporary file, so neither
holds a long document whole.
"""

from __future__ import annotations

import os
import pickle
import tempfile
from array import array
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, overload

from dagster_ocr.model import Line, Page, Span, TextSource, Words, upgrade_page

#: pages held as objects before a document moves to disk (a few MB; see the module docstring)
DEFAULT_KEEP = 256

_PAGE_FIELDS = tuple(f for f in Page.__slots__ if f != "lines")
_ENUMS = {"text_source": TextSource}


def encode_page(page: Page) -> bytes:
    """One page as bytes (a pickle of builtin tuples; enums as their values)."""
    lines = tuple(
        (
            ln.text,
            ln.bbox,
            tuple((s.text, s.bbox, s.font, s.size, s.bold, s.italic) for s in ln.spans),
            ln.block,
            ln.confidence,
        )
        for ln in page.lines
    )
    head = tuple(_plain(f, getattr(page, f)) for f in _PAGE_FIELDS)
    return pickle.dumps((head, lines), protocol=pickle.HIGHEST_PROTOCOL)


def _plain(name: str, value: Any) -> Any:
    if name in _ENUMS:
        return str(value)
    if name == "words" and value is not None:
        return value.boxes.tobytes(), value.text
    return value


def decode_page(data: bytes) -> Page:
    # only ever bytes this module wrote: to a private temporary file, or into a pickle of a PageList
    head, lines = pickle.loads(data)  # noqa: S301
    if len(head) > len(_PAGE_FIELDS):
        raise ValueError(f"a stored page of {len(head)} fields: written by a newer version of this code")
    # a page stored by an earlier version has a prefix of the fields (new ones go last): the model
    # fills in the rest as it does for the stage outputs
    fields = upgrade_page(dict(zip(_PAGE_FIELDS, head, strict=False)))
    for name, enum in _ENUMS.items():
        fields[name] = enum(fields[name])
    if fields["words"] is not None:
        boxes, text = fields["words"]
        fields["words"] = Words(array("d", boxes), text)
    fields["lines"] = [
        Line(text, bbox, [Span(*s) for s in spans], block, confidence)
        for text, bbox, spans, block, confidence in lines
    ]
    return Page(**fields)


def in_page_order(pages: Sequence[Page]) -> Iterable[Page]:
    """The pages by page index, without reading a :class:`PageList` whole (the text stage fills
    it in page order); any other sequence is sorted."""
    return pages if isinstance(pages, PageList) else sorted(pages, key=lambda p: p.index)


class PageList(Sequence[Page]):
    """A list of pages that moves to a temporary file once it holds more than ``keep`` pages.

    Supports what the stages do with ``ExtractedDocument.pages``: ``append``, ``len``, indexing,
    slicing and iteration (iteration reads one page at a time). ``append`` and ``extend`` also
    take pages already encoded by :func:`encode_page` (how unpickling and ``copy`` refill it).
    """

    def __init__(self, pages: Iterable[Page] = (), keep: int = DEFAULT_KEEP) -> None:
        self.keep = max(0, int(keep))
        self._mem: list[Page] = []
        self._file: Any = None  # the temporary file once spilled
        self._spans: list[tuple[int, int]] = []  # (offset, length) of every stored page
        self._end = 0
        self.extend(pages)

    @property
    def on_disk(self) -> bool:
        return self._file is not None

    def append(self, page: Page | bytes) -> None:
        if self._file is None and len(self._mem) < self.keep:
            self._mem.append(page if isinstance(page, Page) else decode_page(page))
            return
        if self._file is None:
            self._spill()
        self._write(page if isinstance(page, bytes) else encode_page(page))

    def extend(self, pages: Iterable[Page | bytes]) -> None:
        for page in pages:
            self.append(page)

    def _spill(self) -> None:
        self._file = tempfile.TemporaryFile(prefix="dagster-ocr-pages-")
        held, self._mem = self._mem, []
        for page in held:
            self._write(encode_page(page))

    def _write(self, data: bytes) -> None:
        os.pwrite(self._file.fileno(), data, self._end)
        self._spans.append((self._end, len(data)))
        self._end += len(data)

    def _read(self, i: int) -> bytes:
        offset, length = self._spans[i]
        return os.pread(self._file.fileno(), length, offset)

    def __len__(self) -> int:
        return len(self._spans) if self._file is not None else len(self._mem)

    @overload
    def __getitem__(self, i: int) -> Page: ...
    @overload
    def __getitem__(self, i: slice) -> list[Page]: ...
    def __getitem__(self, i: int | slice) -> Page | list[Page]:
        if self._file is None:
            return self._mem[i]
        if isinstance(i, slice):
            return [decode_page(self._read(k)) for k in range(*i.indices(len(self)))]
        return decode_page(self._read(range(len(self))[i]))  # range() checks and wraps the index

    def __iter__(self) -> Iterator[Page]:
        if self._file is None:
            yield from self._mem
            return
        for k in range(len(self._spans)):
            yield decode_page(self._read(k))

    def _encoded(self) -> Iterator[bytes]:
        if self._file is None:
            yield from map(encode_page, self._mem)
        else:
            yield from map(self._read, range(len(self._spans)))

    def __reduce__(self) -> tuple[Any, ...]:
        # the pages go in as list items: pickle writes (and unpickling re-appends) them in batches
        # of 1,000, so a long document is never one object in memory on either side
        return (PageList, ((), self.keep), None, self._encoded())

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str | bytes):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]  # mutable, like list

    def __repr__(self) -> str:
        where = f"on disk ({self._end:,} bytes)" if self._file is not None else "in memory"
        return f"PageList({len(self)} pages {where})"
