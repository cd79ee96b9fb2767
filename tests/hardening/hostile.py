"""A generator of hostile and broken inputs for the hardening tests and ``bench/reliability.py``.

Every case is built in memory from PyMuPDF and a few hand-written byte strings (nothing is
downloaded, nothing is read from outside the repository). ``expect`` names the outcome a case must
reach: a status ("parsed" or "failed") and, for failures, the ``documents.error`` code prefix;
``None`` means either status is acceptable as long as it comes with a recorded reason (MuPDF's
repair may or may not rescue a damaged file, and that is not ours to decide).
"""

from __future__ import annotations

import os
import random
import struct
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pymupdf

#: File names that have broken naive code elsewhere: quotes, SQL, unicode, spaces, separators.
HOSTILE_NAMES: list[str] = [
    "x'); DROP TABLE documents; --.pdf",
    'quote"double.pdf',
    "it's a file.pdf",
    "  leading and trailing spaces  .pdf",
    "ünïcødé 文件 📄.pdf",
    "back\\slash\\..\\..\\etc.pdf",
    "fullwidth／slash∕division.pdf",
    "dots..in..name.pdf",
    "semi;colon|pipe&amp$(whoami)`id`.pdf",
    "new\nline\ttab.pdf",
    "%s%n%x{0}.pdf",
    "right\u202eto-left\u202c.fdp.pdf",
    "a" * 200 + ".pdf",
]

#: A name that is not valid UTF-8 (bytes a Linux file system accepts); decoded with surrogateescape.
NON_UTF8_NAME = b"latin1-caf\xe9-\xff\xfe.pdf"


@dataclass(frozen=True)
class Case:
    """One hostile input: its file name, its bytes, and the outcome it must reach."""

    name: str
    data: bytes
    #: "parsed", "failed:<code>", or None for "any recorded outcome"
    expect: str | None
    note: str = ""


def text_pdf(pages: int = 3, title: str = "A sound document") -> bytes:
    """A small, sound text PDF (the baseline every mutation starts from)."""
    doc = pymupdf.open()
    for i in range(pages):
        page = doc.new_page()
        page.insert_text((72, 72), f"Section {i + 1}. Hardening baseline", fontsize=14)
        for j in range(12):
            page.insert_text((72, 110 + 18 * j), f"Line {j} of page {i + 1}: the quick brown fox jumps.")
        page.insert_text((290, 800), str(i + 1))
    doc.set_metadata({"title": title})
    return doc.tobytes()


def _raw_pdf(objects: list[bytes], root: int = 1, trailer_extra: bytes = b"") -> bytes:
    """Assemble a PDF from raw object bodies (1-based numbering) with a correct xref table."""
    out = bytearray(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for n, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % n + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for off in offsets:
        out += b"%010d 00000 n \n" % off
    out += b"trailer\n<< /Size %d /Root %d 0 R %s>>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        root,
        trailer_extra,
        xref,
    )
    return bytes(out)


def _stream(dict_body: bytes, data: bytes) -> bytes:
    return b"<< " + dict_body + b" /Length %d >>\nstream\n" % len(data) + data + b"\nendstream"


def _zeros_deflate(total: int, block: int = 1 << 22) -> bytes:
    """A zlib stream that inflates to ``total`` zero bytes, built in milliseconds.

    One block is compressed and sync-flushed; the flushed block only refers back to zeros, so
    repeating its bytes stays a valid stream. The trailing Adler-32 is then recomputed so strict
    decoders accept it too.
    """
    comp = zlib.compressobj(9)
    first = comp.compress(b"\x00" * block) + comp.flush(zlib.Z_SYNC_FLUSH)
    unit = comp.compress(b"\x00" * block) + comp.flush(zlib.Z_SYNC_FLUSH)
    n, rest = divmod(total, block)
    body = first + unit * (n - 1) + comp.compress(b"\x00" * rest) + comp.flush(zlib.Z_SYNC_FLUSH)
    # final empty stored block, then the Adler-32 of ``total`` zeros
    return body + b"\x01\x00\x00\xff\xff" + struct.pack(">I", _adler_zeros(total))


def _adler_zeros(n: int) -> int:
    # Adler-32 of n zero bytes: a = 1, b = n (each byte adds a = 1 to b), both mod 65521
    return ((n % 65521) << 16) | 1


def bomb_pdf(side: int = 60_000) -> bytes:
    """One page showing a ``side`` x ``side`` grey image that inflates from a few MB to side² bytes."""
    data = _zeros_deflate(side * side)
    content = b"q 500 0 0 700 50 50 cm /Im0 Do Q"
    return _raw_pdf(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
            b"/Resources << /XObject << /Im0 5 0 R >> >> >>",
            _stream(b"", content),
            _stream(
                b"/Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceGray "
                b"/BitsPerComponent 8 /Filter /FlateDecode" % (side, side),
                data,
            ),
        ]
    )


def bomb_png(side: int = 40_000) -> bytes:
    """A PNG whose header claims ``side`` x ``side`` grey pixels (1.6 GB decoded) in about 1.6 MB."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    data = _zeros_deflate((side + 1) * side)  # each row: a filter byte (0) and its pixels
    ihdr = struct.pack(">IIBBBBB", side, side, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", data) + chunk(b"IEND", b"")


def small_png(mark: bool = False) -> bytes:
    """A sound 200x100 PNG with no text (an image input with nothing to read: a blank page);
    ``mark`` draws a dark bar across it, ink that makes it worth OCR'ing."""
    pix = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 200, 100), False)
    pix.clear_with(200)
    if mark:
        pix.set_rect(pymupdf.IRect(20, 40, 180, 60), (0, 0, 0))
    return pix.tobytes("png")


def scanned_pages(n: int) -> bytes:
    """A PDF of ``n`` image-only pages, each with a dark bar (not blank): every page goes to OCR."""
    page = pymupdf.open("pdf", pymupdf.open("png", small_png(mark=True)).convert_to_pdf())
    doc = pymupdf.open()
    for _ in range(n):
        doc.insert_pdf(page)
    return doc.tobytes()


def lying_page_count(count: int = 2_000_000_000) -> bytes:
    """A one-page PDF whose page tree claims ``count`` pages."""
    return _raw_pdf(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count %d >>" % count,
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>",
        ]
    )


def many_pages(n: int) -> bytes:
    """A real PDF with ``n`` blank-ish pages (for the max_pages limit)."""
    doc = pymupdf.open()
    for i in range(n):
        doc.new_page(width=200, height=200).insert_text((20, 40), f"p{i}")
    return doc.tobytes()


def giant_page(side: float = 1e7) -> bytes:
    """A page whose MediaBox is ``side`` points square (far beyond the PDF spec's 14,400)."""
    return _raw_pdf(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %d %d] /Contents 4 0 R "
            b"/Resources << /Font << /F1 << /Type /Font /Subtype /Type1 /BaseFont /Helvetica >> >> >> >>"
            % (side, side),
            _stream(b"", b"BT /F1 12 Tf 72 72 Td (giant page) Tj ET"),
        ]
    )


def recursive_xobject() -> bytes:
    """A form XObject that draws itself (an infinite recursion for a naive renderer)."""
    return _raw_pdf(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
            b"/Resources << /XObject << /X 5 0 R >> >> >>",
            _stream(b"", b"/X Do"),
            _stream(
                b"/Type /XObject /Subtype /Form /BBox [0 0 612 792] /Resources << /XObject << /X 5 0 R >> >>",
                b"/X Do",
            ),
        ]
    )


def deep_nesting(depth: int = 100_000) -> bytes:
    """A catalog entry nested ``depth`` arrays deep, referenced from /PageLabels."""
    nested = b"[" * depth + b"]" * depth
    return _raw_pdf(
        [
            b"<< /Type /Catalog /Pages 2 0 R /PageLabels << /Nums [0 " + nested + b"] >> >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>",
        ]
    )


def encrypted(user_pw: str) -> bytes:
    """The baseline PDF, AES-256 encrypted; an empty ``user_pw`` opens without a password."""
    doc = pymupdf.open("pdf", text_pdf())
    return doc.tobytes(encryption=pymupdf.PDF_ENCRYPT_AES_256, owner_pw="owner-secret", user_pw=user_pw)


def active_content() -> bytes:
    """JavaScript on open, an embedded executable-looking file, and a Launch action link."""
    doc = pymupdf.open("pdf", text_pdf())
    doc.embfile_add("payload.exe", b"MZ-EMBEDDED-PAYLOAD-MARKER", filename="payload.exe")
    js = doc.get_new_xref()
    script = "app.alert('pwned'); this.exportDataObject({cName:'payload.exe', nLaunch:2});"
    doc.update_object(js, f"<< /S /JavaScript /JS ({script}) >>")
    doc.xref_set_key(doc.pdf_catalog(), "OpenAction", f"{js} 0 R")
    page = doc[0]
    page.insert_link({"kind": pymupdf.LINK_LAUNCH, "from": pymupdf.Rect(72, 72, 200, 90), "file": "calc.exe"})
    annot_js = doc.get_new_xref()
    doc.update_object(annot_js, "<< /S /JavaScript /JS (app.launchURL('http://example.invalid')) >>")
    doc.xref_set_key(page.xref, "AA", f"<< /O {annot_js} 0 R >>")
    return doc.tobytes()


def bad_metadata() -> bytes:
    """Info strings that are not valid text: lone UTF-16 surrogates, NULs, bad UTF-8, control bytes."""
    doc = pymupdf.open("pdf", text_pdf())
    info = doc.xref_get_key(-1, "Info")[1]
    if info == "null":
        doc.set_metadata({"title": "x"})
        info = doc.xref_get_key(-1, "Info")[1]
    xref = int(info.split()[0])
    doc.xref_set_key(xref, "Title", "<FEFFD800DC00D8000041>")  # a lone high surrogate and a pair
    doc.xref_set_key(xref, "Author", "<FFFE00D8410000>")  # little-endian BOM, lone surrogate, NUL
    doc.xref_set_key(xref, "Subject", "<EFBBBFC328FF>")  # UTF-8 BOM then invalid UTF-8
    doc.xref_set_key(xref, "Keywords", "(\\000\\001\\033[31m\\377)")
    return doc.tobytes()


def broken_xref(valid: bytes) -> bytes:
    """Every xref offset points 7 bytes off: MuPDF must rebuild the table (or give up)."""
    head, sep, tail = valid.partition(b"\nxref\n")
    if not sep:
        return valid
    lines = tail.split(b"\n")
    fixed = [
        b"%010d 00000 n " % (int(ln[:10]) + 7) if ln.endswith(b" n ") and ln[:10].isdigit() else ln
        for ln in lines
    ]
    return head + sep + b"\n".join(fixed)


def mutate(data: bytes, rng: random.Random, n: int = 8) -> bytes:
    """Byte-level mutations of the kind a damaged transfer or a fuzzer produces."""
    buf = bytearray(data)
    for _ in range(n):
        op = rng.randrange(5)
        if not buf:
            break
        i = rng.randrange(len(buf))
        if op == 0:
            buf[i] = rng.randrange(256)
        elif op == 1:
            del buf[i : i + rng.randrange(1, 64)]
        elif op == 2:
            buf[i:i] = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 32)))
        elif op == 3:  # duplicate a slice elsewhere (repeated objects, doubled xref sections)
            j = rng.randrange(len(buf))
            buf[j:j] = buf[i : i + rng.randrange(1, 256)]
        else:
            # PDF-aware: corrupt a token that matters (lengths, counts, references)
            for token in (b"/Length", b"/Count", b"startxref", b" 0 R", b"/Kids", b"stream"):
                k = buf.find(token, i)
                if k >= 0:
                    buf[k : k + len(token)] = bytes(rng.randrange(32, 127) for _ in token)
                    break
    return bytes(buf)


def cases(mutations: int = 0, seed: int = 0) -> Iterator[Case]:
    """Every hostile case, then ``mutations`` randomly mutated PDFs (deterministic for ``seed``)."""
    valid = text_pdf()
    yield Case("sound.pdf", valid, "parsed", "the control: a sound text PDF")
    yield Case("zero-bytes.pdf", b"", "failed:empty_file")
    yield Case("header-only.pdf", b"%PDF-1.7\n", "failed:corrupt")
    yield Case("truncated-half.pdf", valid[: len(valid) // 2], None, "MuPDF may repair it")
    yield Case("truncated-tail.pdf", valid[:-40], None, "missing trailer: MuPDF repairs it")
    yield Case("broken-xref.pdf", broken_xref(valid), None, "offsets wrong: repair rebuilds the table")
    garbage = b"%PDF-1.4\n" + random.Random(seed).randbytes(4096)
    yield Case("garbage-after-header.pdf", garbage, "failed:corrupt")
    text = b"This is plain text pretending to be a PDF.\n" * 20
    yield Case("not-a-pdf.pdf", text, "failed:unsupported_type")
    yield Case("encrypted-empty-user-pw.pdf", encrypted(""), "parsed", "opens without a password")
    yield Case("encrypted-user-pw.pdf", encrypted("secret"), "failed:encrypted")
    yield Case("lying-page-count.pdf", lying_page_count(), "failed:corrupt", "/Count claims 2e9 pages")
    yield Case("giant-page.pdf", giant_page(), "failed:over_limit")
    yield Case("bomb-in-pdf.pdf", bomb_pdf(), "failed:over_limit", "60000x60000 image, 3.6 GB inflated")
    yield Case("bomb.png", bomb_png(), "failed:over_limit", "40000x40000 PNG, 1.6 GB decoded")
    yield Case("truncated.png", small_png()[:60], None, "MuPDF decodes what is there (a blank page)")
    yield Case("blank.png", small_png(), "parsed")
    yield Case("recursive-xobject.pdf", recursive_xobject(), None, "a form that draws itself")
    yield Case("deep-nesting.pdf", deep_nesting(), None, "100,000 nested arrays")
    yield Case("active-content.pdf", active_content(), "parsed", "JavaScript, embedded file, Launch")
    yield Case("bad-metadata.pdf", bad_metadata(), "parsed", "lone surrogates, NULs in /Info")
    for i, name in enumerate(HOSTILE_NAMES):
        # distinct bytes per name: identical content would be one document (doc_id = sha256)
        yield Case(name, text_pdf(1, title=f"hostile name {i}: {name}"), "parsed", "hostile file name")
    rng = random.Random(seed)
    for i in range(mutations):
        yield Case(f"mutant-{seed}-{i:04d}.pdf", mutate(valid, rng, rng.randrange(1, 24)), None, "mutated")


def write_inbox(folder: Path, mutations: int = 0, seed: int = 0, non_utf8_name: bool = True) -> list[Case]:
    """Write every case into ``folder`` (created); returns the cases written."""
    folder.mkdir(parents=True, exist_ok=True)
    written = list(cases(mutations, seed))
    for case in written:
        (folder / case.name).write_bytes(case.data)
    if non_utf8_name:
        data = text_pdf(1, title="non-UTF-8 file name")
        # a str path with surrogate escapes names the same raw bytes on a POSIX file system
        (folder / os.fsdecode(NON_UTF8_NAME)).write_bytes(data)
        name = NON_UTF8_NAME.decode("utf-8", "surrogateescape")
        written.append(Case(name, data, "parsed", "non-UTF-8 file name"))
    return written
