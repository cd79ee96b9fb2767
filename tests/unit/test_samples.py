"""The generated demo documents: deterministic bytes, and PyMuPDF reads back what SAMPLE_FACTS promises."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path
from typing import Any

import pymupdf
import pytest

from dagster_ocr.samples import SAMPLE_FACTS, SAMPLE_FILES, build_service_agreement, write_samples

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def sample_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("samples")
    paths = write_samples(out)
    assert [p.name for p in paths] == list(SAMPLE_FILES)
    return out


@pytest.fixture(scope="module")
def contract(sample_dir: Path) -> pymupdf.Document:
    return pymupdf.open(sample_dir / "service_agreement.pdf")


def _sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def built() -> tuple[bytes, dict]:
    return build_service_agreement()


@pytest.mark.slow  # ~2-3 s: a new interpreter imports PyMuPDF and NumPy
def test_second_write_in_a_fresh_process_gives_identical_bytes(sample_dir: Path, tmp_path: Path) -> None:
    # a new interpreter also catches per-process randomness (hash seeds, object ids, fresh /ID)
    code = (
        "import sys; from pathlib import Path; from dagster_ocr.samples import write_samples; "
        "write_samples(Path(sys.argv[1]))"
    )
    subprocess.run([sys.executable, "-c", code, str(tmp_path)], check=True, cwd=REPO, timeout=60)
    for name in SAMPLE_FILES:
        assert _sha(tmp_path / name) == _sha(sample_dir / name), name


def test_rebuild_in_process_gives_identical_bytes(sample_dir: Path, built: tuple[bytes, dict]) -> None:
    assert built[0] == (sample_dir / "service_agreement.pdf").read_bytes()


def test_facts_match_the_layout(built: tuple[bytes, dict]) -> None:
    measured = built[1]
    assert measured["n_pages"] == SAMPLE_FACTS["n_pages"]
    assert measured["labels"] == SAMPLE_FACTS["labels"]
    assert measured["table_pages"] == SAMPLE_FACTS["table"]["pages"]
    assert measured["table_rows_per_page"] == SAMPLE_FACTS["table"]["rows_per_page"]
    assert measured["scanned_page_index"] == SAMPLE_FACTS["scanned_page_index"]
    assert list(measured["section_pages"]) == SAMPLE_FACTS["sections"]
    t = SAMPLE_FACTS["table"]
    # header once + data rows + total row; the continuation page repeats the header
    assert sum(t["rows_per_page"]) - (len(t["pages"]) - 1) == t["n_rows_merged"] == t["n_data_rows"] + 2


def test_page_labels_and_printed_numbers(contract: pymupdf.Document) -> None:
    assert contract.page_count == SAMPLE_FACTS["n_pages"]
    labels = [contract.load_page(i).get_label() for i in range(contract.page_count)]
    assert labels == SAMPLE_FACTS["labels"]
    for i, printed in enumerate(SAMPLE_FACTS["printed_numbers"]):
        page = contract.load_page(i)
        foot = page.get_text(
            "text", clip=pymupdf.Rect(0, page.rect.height - 70, page.rect.width, page.rect.height)
        )
        if i == SAMPLE_FACTS["scanned_page_index"]:
            assert foot.strip() == ""  # printed in the image only
        elif printed is None:
            assert foot.strip() == "", foot
        else:
            assert foot.split() == [printed], (i, foot)


def test_running_header_only_on_body_pages(contract: pymupdf.Document) -> None:
    header = SAMPLE_FACTS["running_header"]
    for i in range(contract.page_count):
        page = contract.load_page(i)
        top = page.get_text("text", clip=pymupdf.Rect(0, 0, page.rect.width, 60))
        expected = i in SAMPLE_FACTS["header_pages"] and i != SAMPLE_FACTS["scanned_page_index"]
        assert (header in top) == expected, (i, top)


def test_symbols_round_trip(contract: pymupdf.Document) -> None:
    body = " ".join(contract.load_page(i).get_text() for i in range(SAMPLE_FACTS["body_first_page_index"], 7))
    flat = " ".join(body.split())
    for sym in SAMPLE_FACTS["symbols"]:
        assert sym in flat, sym
    assert SAMPLE_FACTS["fee_sentence"] in flat
    for title in SAMPLE_FACTS["sections"]:
        assert title in body, title
    assert "(a)" in body and "(b)" in body and "§ 3" in body


def test_scanned_page_is_image_only(contract: pymupdf.Document) -> None:
    page = contract.load_page(SAMPLE_FACTS["scanned_page_index"])
    assert page.get_text().strip() == ""
    images = page.get_images(full=True)
    assert len(images) == 1
    (rect,) = page.get_image_rects(images[0][0])
    assert rect.get_area() > 0.999 * page.rect.get_area()
    info = contract.extract_image(images[0][0])
    assert info["colorspace"] == 1 and info["width"] >= 1200  # greyscale, ~150 dpi on A4


@pytest.fixture(scope="module")
def table_parts(contract: pymupdf.Document) -> list[tuple[pymupdf.Page, Any, list[list[str]]]]:
    """Per table page: the page, the one table the line-based finder sees, and its cell texts."""
    parts = []
    for pno in SAMPLE_FACTS["table"]["pages"]:
        page = contract.load_page(pno)
        tables = page.find_tables(use_layout=False).tables
        assert len(tables) == 1, pno
        t = tables[0]
        # cell text through clip: Table.extract() in PyMuPDF 2.0 drops spaces ("Duedate")
        cells = [[page.get_text("text", clip=pymupdf.Rect(c)).strip() for c in row.cells] for row in t.rows]
        parts.append((page, t, cells))
    return parts


def test_table_found_on_both_pages(table_parts: list) -> None:
    facts = SAMPLE_FACTS["table"]
    assert len(table_parts) == len(facts["rows_per_page"]) == 2
    for k, ((page, t, cells), n_rows) in enumerate(zip(table_parts, facts["rows_per_page"], strict=True)):
        assert (t.row_count, t.col_count) == (n_rows, facts["n_cols"])
        assert cells[0] == facts["header"]  # header repeated on the continuation page
        above = page.get_text("text", clip=pymupdf.Rect(0, t.bbox[1] - 22, page.rect.width, t.bbox[1]))
        assert above.strip() == (facts["caption"] if k == 0 else facts["continued_caption"])
        if k == 0:
            assert t.bbox[1] > page.rect.height * 0.6  # starts near the bottom of the page
            assert cells[1] == facts["first_row"]
        else:
            assert t.bbox[1] < page.rect.height * 0.2  # continues at the top
            assert cells[-1] == facts["last_row"]


def test_table_total_adds_up(table_parts: list) -> None:
    amounts = [int(row[-1].replace(",", "")) for _, _, cells in table_parts for row in cells[1:]]
    assert len(amounts) == SAMPLE_FACTS["table"]["n_data_rows"] + 1
    assert sum(amounts[:-1]) == amounts[-1] == int(SAMPLE_FACTS["table"]["total"].replace(",", ""))


def test_tender_notice(sample_dir: Path) -> None:
    doc = pymupdf.open(sample_dir / "tender_notice.pdf")
    assert doc.page_count == 3
    assert doc.get_page_labels() == []
    for i in range(3):
        assert f"Page {i + 1} of 3" in doc.load_page(i).get_text()
    page = doc.load_page(1)
    (t,) = page.find_tables(use_layout=False).tables
    assert (t.row_count, t.col_count) == (7, 4)
    assert "¥52,150,000" in doc.load_page(0).get_text()


def test_scanned_letter_png(sample_dir: Path) -> None:
    data = (sample_dir / "scanned_letter.png").read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pix = pymupdf.Pixmap(data)
    assert pix.n == 1 and 1200 <= pix.width <= 1300 and 1700 <= pix.height <= 1800


def test_damaged_pdf_does_not_parse(sample_dir: Path) -> None:
    path = sample_dir / "damaged.pdf"
    assert path.read_bytes().startswith(b"%PDF-")  # looks like a PDF, so only parsing can reject it
    with pytest.raises(Exception):  # noqa: B017 - MuPDF raises various types; any failure is the point
        doc = pymupdf.open(path)
        assert doc.page_count > 0, "no page recovered"
        doc.load_page(0)
