"""Why an empty page is empty (issue 40): a left-blank notice is told from text, and a page that
lost its objects from one that is present and sound (dagster_ocr.integrity)."""

from __future__ import annotations

import pymupdf
import pytest

from dagster_ocr.integrity import page_damage
from dagster_ocr.model import Line
from dagster_ocr.textlayer import left_blank_notice


def _lines(*texts: str) -> list[Line]:
    return [Line(t, (0.0, 0.0, 100.0, 10.0)) for t in texts]


@pytest.mark.parametrize(
    "texts",
    [
        ("This page intentionally left blank",),
        ("THIS PAGE INTENTIONALLY LEFT BLANK.",),
        ("[This page left blank intentionally]",),
        ("Annual Report 2023", "Page intentionally blank", "12"),
        ("This page is intentionaly left blank",),  # OCR's spelling
        ("Deliberately left blank",),
        ("Blank page",),
        ("- 14 -", "This page is blank"),
    ],
)
def test_left_blank_notices_are_recognised(texts):
    assert left_blank_notice(_lines(*texts))


@pytest.mark.parametrize(
    "texts",
    [
        ("Blank pages in scanned archives",),  # a title, not a notice
        ("Chapter 3",),
        (),
        (
            "Where a section ends on a right-hand page, the next one is printed on the following "
            "right-hand page and the page between is intentionally left blank by the printer.",
        ),
    ],
)
def test_text_is_not_a_left_blank_notice(texts):
    assert not left_blank_notice(_lines(*texts))


def _doc_with_blank_page() -> pymupdf.Document:
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), "A text page")
    doc.new_page()  # a sound blank verso
    return pymupdf.open("pdf", doc.tobytes())


def test_a_sound_blank_page_is_not_damage_even_in_a_repaired_file():
    doc = _doc_with_blank_page()
    assert page_damage(doc, doc[1], repaired=False) is None
    assert page_damage(doc, doc[1], repaired=True) is None


def test_a_lost_page_object_or_image_is_damage():
    doc = _doc_with_blank_page()
    xref = doc[1].xref
    doc.update_object(xref, "null")  # what a cut leaves of a page object (MuPDF keeps an empty page)
    assert page_damage(doc, doc[1], repaired=True) == f"its page object {xref} is missing"

    scan = pymupdf.open()
    page = scan.new_page()
    pix = pymupdf.Pixmap(pymupdf.csGRAY, pymupdf.IRect(0, 0, 50, 50), False)
    pix.clear_with(255)
    page.insert_image(page.rect, stream=pix.tobytes("png"))
    scan = pymupdf.open("pdf", scan.tobytes())
    (image,) = scan[0].get_images(full=True)
    assert page_damage(scan, scan[0], repaired=True) is None
    scan.update_object(image[0], "null")  # the image object gone, the content stream still draws it
    why = page_damage(scan, scan[0], repaired=True)
    assert why == f"it draws /{image[7]}, which the file no longer holds"
    assert page_damage(scan, scan[0], repaired=False) is None  # a sound file: a writer's slip
