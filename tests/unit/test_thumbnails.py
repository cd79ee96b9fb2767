"""Page thumbnails with the boxes found drawn on them, on the sample contract run through every stage."""

from __future__ import annotations

import base64
import colorsys
import dataclasses
import random
import re

import pymupdf
import pytest

from dagster_ocr import pipeline, thumbnails
from dagster_ocr.ingest import DocumentStore
from dagster_ocr.limits import LimitSettings
from dagster_ocr.model import DocStatus, Table, TextSource
from dagster_ocr.samples import SAMPLE_FACTS, build_service_agreement
from dagster_ocr.settings import Settings
from dagster_ocr.thumbnails import PreviewSettings

SETTINGS = Settings.model_validate({"ocr": {"engine": "none"}})


@pytest.fixture(scope="module")
def contract(tmp_path_factory) -> pipeline.ParsedDocument:
    root = tmp_path_factory.mktemp("thumbs")
    data, _ = build_service_agreement()
    path = root / SAMPLE_FACTS["file_name"]
    path.write_bytes(data)
    source, _ = DocumentStore(root / "store").register(path)
    return pipeline.parse(source, SETTINGS)


def _pixels(jpeg: bytes) -> pymupdf.Pixmap:
    return pymupdf.Pixmap(jpeg)


def _near(rgb: tuple[int, ...], colour: tuple[float, float, float], tol: int = 60) -> bool:
    return all(abs(c - round(255 * k)) <= tol for c, k in zip(rgb[:3], colour, strict=True))


def _hue_of(rgb: tuple[int, ...]) -> tuple[float, float]:
    h, s, _ = colorsys.rgb_to_hsv(*(c / 255 for c in rgb[:3]))
    return h * 360, s


def _drawn_in(around: list[tuple[int, ...]], colour: tuple[float, float, float]) -> bool:
    """The most saturated pixel across a stroke has the colour's hue (JPEG's chroma subsampling
    pales a thin stroke, so hue, not the exact RGB, is what survives)."""
    hue, sat = max((_hue_of(p) for p in around), key=lambda hs: hs[1])
    want = colorsys.rgb_to_hsv(*colour)[0] * 360
    return sat > 0.2 and min(abs(hue - want), 360 - abs(hue - want)) < 30


def _table(page: int) -> Table:
    return Table("t", page, page, 1, 1, [], (0, 0, 1, 1))


def test_the_pages_shown_are_the_first_then_those_with_tables() -> None:
    assert thumbnails.chosen_pages(10, []) == [0, 1, 2]
    assert thumbnails.chosen_pages(10, [_table(7), _table(1), _table(8)]) == [0, 1, 7]
    assert thumbnails.chosen_pages(2, [_table(1)]) == [0, 1]
    assert thumbnails.chosen_pages(1, []) == [0]
    assert thumbnails.chosen_pages(0, [_table(0)]) == []
    assert thumbnails.chosen_pages(50, [_table(30)], limit=1) == [0]


def test_each_box_is_drawn_in_its_kinds_colour(contract: pipeline.ParsedDocument) -> None:
    out = contract
    thumbs = thumbnails.page_thumbnails(
        out.document,
        out.labels,
        out.tables,
        out.paragraphs,
        limits=LimitSettings(),
        preview=PreviewSettings(),
    )
    assert [t.page_index for t in thumbs] == thumbnails.chosen_pages(out.document.n_pages, out.tables)
    merged = next(t for t in out.tables if len(t.pages) > 1)
    assert merged.first_page_index in [t.page_index for t in thumbs]
    labels = {lab.page_index: lab.label for lab in out.labels}
    for thumb in thumbs:
        page = out.document.pages[thumb.page_index]
        assert thumb.page_label == labels[thumb.page_index]
        # the counts are the stage outputs' boxes on that page
        on_page = [p for p in out.paragraphs.paragraphs if p.page_index == thumb.page_index]
        assert thumb.boxes["heading"] == sum(p.kind == "heading" for p in on_page)
        assert thumb.boxes["paragraph"] == sum(p.kind != "heading" for p in on_page)
        regions = [i for t in out.tables for i, _ in (t.regions or [(t.first_page_index, t.bbox)])]
        assert thumb.boxes["table"] == regions.count(thumb.page_index)
        pix = _pixels(thumb.jpeg)
        assert (pix.width, pix.height) == (thumb.width, thumb.height) and pix.width == thumbnails.WIDTH
        assert len(thumb.jpeg) <= thumbnails.MAX_BYTES
        # a text-layer page wears the green TEXT badge in its top-left corner
        assert _near(pix.pixel(3, 3), thumbnails.SOURCE_BADGES[TextSource.TEXT_LAYER][1])
        scale = thumb.width / page.width
        # the middle of each table's and each heading's top edge is in that kind's colour
        for kind, boxes in thumbnails.page_boxes(page, out.tables, out.paragraphs).items():
            if kind not in ("table", "heading"):
                continue
            for x0, y0, x1, _ in boxes:
                x, y = int((x0 + x1) / 2 * scale), int(y0 * scale)
                around = [pix.pixel(x, yy) for yy in range(max(0, y - 1), min(pix.height, y + 2))]
                assert _drawn_in(around, thumbnails.COLOURS[kind][0]), (kind, around)
    assert any(t.boxes["table"] for t in thumbs) and any(t.boxes["heading"] for t in thumbs)


def test_an_ocr_page_wears_the_ocr_badge(contract: pipeline.ParsedDocument) -> None:
    out = contract
    pages = [dataclasses.replace(p, text_source=TextSource.OCR) for p in out.document.pages]
    doc = dataclasses.replace(out.document, pages=pages)
    one = thumbnails.PreviewSettings(pages=1)
    (thumb,) = thumbnails.page_thumbnails(
        doc, out.labels, out.tables, out.paragraphs, preview=one, limits=LimitSettings()
    )
    assert thumb.text_source == "ocr"
    assert _near(_pixels(thumb.jpeg).pixel(3, 3), thumbnails.SOURCE_BADGES[TextSource.OCR][1])


def test_the_markdown_shows_each_page_inline_with_a_legend(contract: pipeline.ParsedDocument) -> None:
    out = contract
    thumbs = thumbnails.page_thumbnails(
        out.document,
        out.labels,
        out.tables,
        out.paragraphs,
        limits=LimitSettings(),
        preview=PreviewSettings(),
    )
    text = thumbnails.thumbnails_markdown(thumbs, out.document.n_pages)
    assert "orange: tables" in text and "red OCR" in text
    images = re.findall(r"!\[page (\d+)\]\(data:image/jpeg;base64,([A-Za-z0-9+/=]+)\)", text)
    assert [int(n) - 1 for n, _ in images] == [t.page_index for t in thumbs]
    assert [base64.b64decode(b) for _, b in images] == [t.jpeg for t in thumbs]
    assert f"{out.document.n_pages - len(thumbs)} more pages not shown" in text
    assert f"| p. {thumbs[0].page_label} (page 1 of {out.document.n_pages}) |" in text
    assert "| text layer: " in text and "table" in text


def test_a_page_of_noise_still_fits_the_bound(tmp_path) -> None:
    """A page that JPEG cannot make small (random pixels) is shrunk until it fits ``MAX_BYTES``."""
    rng = random.Random(7)
    noise = pymupdf.Pixmap(pymupdf.csRGB, 600, 800, rng.randbytes(600 * 800 * 3), False)
    pdf = pymupdf.open()
    page = pdf.new_page()
    page.insert_image(page.rect, pixmap=noise)
    page.insert_text((72, 72), "Noise", fontsize=12)
    path = tmp_path / "noise.pdf"
    pdf.save(path)
    source, _ = DocumentStore(tmp_path / "store").register(path)
    out = pipeline.parse(source, SETTINGS)
    (thumb,) = thumbnails.page_thumbnails(
        out.document,
        out.labels,
        out.tables,
        out.paragraphs,
        limits=LimitSettings(),
        preview=PreviewSettings(),
    )
    assert 0 < len(thumb.jpeg) <= thumbnails.MAX_BYTES
    assert _pixels(thumb.jpeg).width == thumb.width > 0


def test_previews_follow_their_settings(contract: pipeline.ParsedDocument) -> None:
    out = contract
    off = thumbnails.PreviewSettings(pages=0)
    assert (
        thumbnails.page_thumbnails(
            out.document, out.labels, out.tables, out.paragraphs, preview=off, limits=LimitSettings()
        )
        == []
    )
    small = thumbnails.PreviewSettings(pages=5, width=150, max_image_bytes=4_000)
    thumbs = thumbnails.page_thumbnails(
        out.document, out.labels, out.tables, out.paragraphs, preview=small, limits=LimitSettings()
    )
    assert len(thumbs) == min(5, out.document.n_pages)
    assert all(t.width <= 150 and len(t.jpeg) <= 4_000 for t in thumbs)
    # the pipeline's settings carry them (a settings file can turn previews off)
    assert Settings.model_validate({"preview": {"pages": 0}}).preview.pages == 0


def test_a_page_mupdf_cannot_draw_loses_its_preview_only(contract, monkeypatch) -> None:
    out = contract
    draw = pymupdf.Page.get_pixmap

    def broken_second_page(page, *args, **kwargs):
        if page.number == 1:
            raise RuntimeError("code=2: cannot draw")
        return draw(page, *args, **kwargs)

    monkeypatch.setattr(pymupdf.Page, "get_pixmap", broken_second_page)
    thumbs = thumbnails.page_thumbnails(
        out.document,
        out.labels,
        out.tables,
        out.paragraphs,
        limits=LimitSettings(),
        preview=PreviewSettings(),
    )
    shown = thumbnails.chosen_pages(out.document.n_pages, out.tables)
    assert [t.page_index for t in thumbs] == [i for i in shown if i != 1]


def test_a_document_not_read_has_no_preview(contract: pipeline.ParsedDocument) -> None:
    out = contract
    failed = dataclasses.replace(out.document, status=DocStatus.FAILED, pages=[], n_pages=0)
    assert (
        thumbnails.page_thumbnails(
            failed, [], [], out.paragraphs, limits=LimitSettings(), preview=PreviewSettings()
        )
        == []
    )
    assert thumbnails.thumbnails_markdown([], 0).startswith("_No page preview")
    # the stored copy gone since the text stage: no preview, no crash
    gone = dataclasses.replace(
        out.document, source=dataclasses.replace(out.document.source, stored_path="/nonexistent/x.pdf")
    )
    assert (
        thumbnails.page_thumbnails(
            gone, out.labels, out.tables, out.paragraphs, limits=LimitSettings(), preview=PreviewSettings()
        )
        == []
    )
