"""Property-based fuzzing of the core parsers with hypothesis, bounded to a few seconds each.

Set ``HYPOTHESIS_PROFILE=fuzz`` for a long campaign (``bench/reliability.py`` does); the default
profile keeps the suite fast. No example database is written (the repository stays clean).
"""

from __future__ import annotations

import os
from pathlib import Path

import hostile
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dagster_ocr.ingest import SUPPORTED_KINDS, DocumentStore, detect_kind
from dagster_ocr.labels import decode_hex_prefix, decode_pdf_text
from dagster_ocr.model import DocStatus
from dagster_ocr.pipeline import extract_document
from dagster_ocr.settings import Settings
from dagster_ocr.validation import FLAGS, garbage_ratio, validate_text

settings.register_profile(
    "ci", max_examples=150, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "fuzz", max_examples=5000, deadline=None, database=None, suppress_health_check=list(HealthCheck)
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

VALID = hostile.text_pdf(2)
CODES = ("empty_file:", "corrupt:", "encrypted:", "unsupported_type:", "over_limit:")


@given(st.binary(max_size=2048))
def test_detect_kind_never_raises(head: bytes) -> None:
    assert detect_kind(head) in SUPPORTED_KINDS | {"unknown"}


@given(st.binary(max_size=64), st.sampled_from([b"%PDF-", b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"II*\x00"]))
def test_detect_kind_finds_magic(tail: bytes, magic: bytes) -> None:
    assert detect_kind(magic + tail) != "unknown"


@given(st.binary(max_size=512))
def test_decode_pdf_text_is_total(raw: bytes) -> None:
    assert isinstance(decode_pdf_text(raw), str)


@given(st.text(st.characters(exclude_categories=["Cs"]), max_size=200))
def test_decode_pdf_text_round_trips_utf16(text: str) -> None:
    assert decode_pdf_text(b"\xfe\xff" + text.encode("utf-16-be")) == text


@given(st.text(max_size=200))
def test_decode_hex_prefix_is_total(text: str) -> None:
    assert isinstance(decode_hex_prefix(text), str)


@given(st.binary(max_size=40).map(bytes.hex), st.text(alphabet="0123456789", max_size=4))
def test_decode_hex_prefix_on_hex_strings(digits: str, number: str) -> None:
    out = decode_hex_prefix(f"<FEFF{digits}>{number}")
    assert out.endswith(number)


@given(st.text(max_size=400))
def test_validate_text_and_garbage_ratio(text: str) -> None:
    flags = validate_text(text)
    assert flags == sorted(set(flags))
    assert set(flags) <= set(FLAGS) | {"empty"}
    assert 0.0 <= garbage_ratio(text) <= 1.0


_MUTATION = st.lists(
    st.tuples(st.integers(0, len(VALID) - 1), st.integers(0, 4), st.binary(min_size=1, max_size=24)),
    min_size=1,
    max_size=12,
)


def _apply(data: bytes, ops: list[tuple[int, int, bytes]]) -> bytes:
    buf = bytearray(data)
    for pos, op, payload in ops:
        pos = min(pos, max(len(buf) - 1, 0))
        if op == 0:
            buf[pos : pos + len(payload)] = payload  # overwrite
        elif op == 1:
            del buf[pos : pos + len(payload) * 8]  # delete
        elif op == 2:
            buf[pos:pos] = payload  # insert
        elif op == 3:
            buf = buf[:pos]  # truncate
        else:
            buf[pos:pos] = buf[pos : pos + 200]  # duplicate a slice
    return bytes(buf)


@settings(max_examples=int(os.environ.get("FUZZ_PDF_EXAMPLES", "60")))
@given(_MUTATION)
def test_extract_document_survives_mutated_pdfs(tmp_path_factory, ops) -> None:
    folder: Path = tmp_path_factory.mktemp("fuzz", numbered=True)
    path = folder / "mutant.pdf"
    path.write_bytes(_apply(VALID, ops))
    source, _ = DocumentStore(folder / "store").register(path)
    doc = extract_document(source, Settings())  # must not raise
    assert doc.status in (DocStatus.PARSED, DocStatus.FAILED)
    if doc.status == DocStatus.FAILED:
        assert doc.error.startswith(CODES)
        assert not doc.pages
    else:
        assert doc.n_pages == len(doc.pages) >= 1
        for page in doc.pages:
            page.text.encode("utf-8")  # what the warehouse will store is valid UTF-8
