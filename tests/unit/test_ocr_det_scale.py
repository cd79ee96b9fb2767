"""rapidocr's detector at a size chosen from the page's letters (det_text_height, issue 21 session 11)."""

from __future__ import annotations

import numpy as np
import pymupdf
import pytest

from dagster_ocr.ocr import OcrSettings, RapidOcrSettings, ocr_page
from dagster_ocr.ocr.base import ink_text_height
from dagster_ocr.ocr.rapid import RapidOcrEngine, _detector_scaled, _mean_confidence, _own_det_ratio


def _letters(height: int, n: int = 40, size: tuple[int, int] = (400, 600)) -> np.ndarray:
    image = np.full((*size, 3), 250, np.uint8)
    for i in range(n):
        y, x = 20 + (i // 10) * (height + 20), 20 + (i % 10) * 50
        image[y : y + height, x : x + 8] = 20  # one letter-like piece of ink
    return image


def test_text_height_is_the_median_height_of_the_ink_pieces():
    image = _letters(12)
    assert ink_text_height(image) == 12
    image[350:352, 10:590] = 0  # a rule under the text
    image[5, 5] = image[380, 590] = 0  # dust
    image[300:395, 500:590] = 0  # a picture: taller than a fifth of the image
    assert ink_text_height(image) == 12
    assert ink_text_height(_letters(30, size=(600, 600))) == 30
    assert ink_text_height(image[:, :, 0]) == 12  # gray works too


def test_a_blank_or_nearly_blank_page_has_no_text_height():
    assert ink_text_height(np.full((300, 300, 3), 255, np.uint8)) is None
    assert ink_text_height(_letters(12, n=3)) is None
    assert ink_text_height(np.zeros((0, 0, 3), np.uint8)) is None


def test_rapidocrs_own_resize_factor():
    assert _own_det_ratio((2000, 1400), 736, "min") == 1.0
    assert _own_det_ratio((480, 640), 736, "min") == pytest.approx(736 / 480)
    assert _own_det_ratio((2000, 1400), 960, "max") == pytest.approx(960 / 2000)
    assert _own_det_ratio((500, 400), 960, "max") == 1.0


@pytest.mark.parametrize(
    ("shape", "scale", "expected"),
    [
        ((2000, 1400), 0.5, (992, 704)),  # shrunk to 1000x700, rounded to multiples of 32 as rapidocr does
        ((480, 640), 0.5, (384, 480)),  # enlarged by rapidocr to 736 high, now 0.77x the image
        ((480, 640), 0.8, (576, 800)),  # still enlarged, less than rapidocr would
        ((2000, 1400), 1.0, (1984, 1408)),  # rapidocr's own
    ],
)
def test_the_detector_sees_the_image_scaled_and_is_left_as_it_was(shape, scale, expected):
    from rapidocr.ch_ppocr_det.utils import DetPreProcess

    class Detector:
        limit_type, limit_side_len = "min", 736

    det = Detector()
    with _detector_scaled(det, shape, scale):
        resized = DetPreProcess(det.limit_side_len, det.limit_type).resize(np.zeros((*shape, 3), np.uint8))
    assert resized.shape[:2] == expected
    assert (det.limit_type, det.limit_side_len) == ("min", 736)


def test_mean_confidence_is_weighted_by_characters_and_zero_for_nothing_read():
    from rapidocr.ch_ppocr_rec import TextRecOutput

    rec = TextRecOutput(txts=("a long line of text", "x", " "), scores=[1.0, 0.0, 0.0])
    assert _mean_confidence(rec) == pytest.approx(19 / 20)  # "a long line of text" has 19 chars
    assert _mean_confidence(TextRecOutput()) == 0.0


@pytest.fixture(scope="module")
def big_print() -> pymupdf.Page:
    doc = pymupdf.open()
    page = doc.new_page(width=420, height=300)
    for i, words in enumerate(["Invoice number 2024", "Total due 1,250.00", "Payable within thirty days"]):
        page.insert_text((30, 60 + 70 * i), words, fontsize=26, fontname="helv")
    return page


def _read(settings: RapidOcrSettings, page: pymupdf.Page) -> tuple[str, list[int]]:
    engine = RapidOcrEngine(settings)
    engine.load()
    sizes: list[int] = []
    session = engine._ocr.text_det.session

    def counted(x: np.ndarray):  # the detector's input pixels, one entry per call
        sizes.append(x.shape[-1] * x.shape[-2])
        return session(x)

    engine._ocr.text_det.session = counted
    result = ocr_page(engine, page, 0, 150, settings=OcrSettings(detect_orientation=False))
    text = " ".join(ln.text for ln in result.lines)
    return text, sizes


def test_large_print_is_detected_smaller_and_reads_the_same(big_print):
    full, full_sizes = _read(RapidOcrSettings(det_text_height=0.0), big_print)
    scaled, sizes = _read(RapidOcrSettings(), big_print)
    assert "Invoice number 2024" in full
    assert scaled == full
    assert len(sizes) == 1 and sizes[0] <= 0.4 * full_sizes[0]  # det_min_scale 0.5: a quarter the pixels


def test_a_page_read_with_low_confidence_is_detected_again_at_full_size(big_print):
    full, full_sizes = _read(RapidOcrSettings(det_text_height=0.0), big_print)
    # no print reads with a confidence of 1.0: every page goes back to the full-size detector
    again, sizes = _read(RapidOcrSettings(det_full_scale_below=1.0), big_print)
    assert again == full
    assert len(sizes) == 2 and sizes[0] < sizes[1] == full_sizes[0]


def test_the_channel_mean_is_numpys_bit_for_bit_and_only_where_asked():
    from dagster_ocr.ocr.base import channel_mean

    image = np.random.default_rng(3).integers(0, 256, (61, 47, 3)).astype(np.uint8)
    assert np.array_equal(channel_mean(image), image.mean(axis=2))
    part = channel_mean(image, (10.4, 5.6, 30.2, 40.0))
    assert np.array_equal(part[5:40, 10:31], image.mean(axis=2)[5:40, 10:31])
    assert not part[:5].any() and not part[:, 31:].any() and not part[40:].any()
    assert not channel_mean(image, (100, 100, 120, 120)).any()  # outside the image: nothing


def test_the_lines_region_holds_every_box_and_polygon():
    from dagster_ocr.ocr.engine import OcrLine
    from dagster_ocr.ocr.ink import _lines_region

    lines = [
        OcrLine("a", (10, 20, 50, 30), 0.9, quad=(8, 19, 50, 20, 51, 31, 9, 30)),
        OcrLine("b", (100, 200, 150, 210), 0.9),
    ]
    assert _lines_region(lines) == (6, 17, 152, 212)
    assert _lines_region([]) is None


@pytest.mark.parametrize(
    ("letters", "max_scale", "expected"),
    [
        (12, 0.5, 1.0),  # small print: left at rapidocr's size
        (20, 0.5, 0.5),  # large print: 8/20 = 0.4, floored at det_min_scale
        (12, 1.0, 8 / 12),  # any page whose letters allow it
        (6, 1.0, 1.0),  # letters under the target: never enlarged
    ],
)
def test_the_detector_scale_follows_the_letters_within_its_bounds(letters, max_scale, expected):
    engine = RapidOcrEngine(RapidOcrSettings(det_max_scale=max_scale))

    class Loaded:
        use_det = True

    engine._ocr = Loaded()
    image = _letters(letters, size=(800, 800))  # at least 736 a side: rapidocr's own factor is 1
    assert engine._det_scale(image) == pytest.approx(expected)
    assert RapidOcrEngine(RapidOcrSettings(det_text_height=0.0))._det_scale(image) == 1.0
