"""The expectation suites on hand-made warehouse rows: each defect fails exactly its expectation."""

from __future__ import annotations

import pandas as pd
import pytest

from dagster_ocr.quality import (
    SUITES,
    DocumentFrames,
    QualitySettings,
    blocking_failures,
    by_suite,
    describe_failures,
    evaluate_document,
    prepare_frames,
)

#: every expectation, in the order results list them (the names analysts read in quality_results)
EXPECTATIONS = [
    "document_opened",
    "text_extracted",
    "page_rows_match_page_count",
    "page_indexes_unique",
    "page_indexes_in_range",
    "page_labels_present",
    "pages_have_content",
    "content_streams_intact",
    "text_page_share",
    "paragraphs_non_empty",
    "paragraph_ids_unique",
    "flagged_paragraph_share",
    "garbled_char_share",
    "paragraph_bbox_inside_page",
    "tables_rectangular",
    "tables_non_empty",
    "table_headers_present",
    "ocr_mean_confidence",
    "ocr_low_confidence_lines",
    "furniture_char_share",
    "table_char_share",
    "lost_char_share",
]


def _frames() -> DocumentFrames:
    """A sound two-page document: three paragraphs, one 2 x 2 table with a header, one OCR'd page."""
    pages = pd.DataFrame(
        {
            "page_index": [0, 1],
            "page_label": ["i", "1"],
            "width": [595.0, 595.0],
            "height": [842.0, 842.0],
            "text_source": ["text_layer", "ocr"],
        }
    )
    paragraphs = pd.DataFrame(
        {
            "paragraph_id": ["p0", "p1", "p2"],
            "page_index": [0, 0, 1],
            "text": ["Fees are due monthly.", "Payment within 30 days.", "Signed in Tokyo."],
            "flags": [[], [], []],
            "x0": [72.0] * 3,
            "y0": [90.0, 120.0, 90.0],
            "x1": [520.0] * 3,
            "y1": [110.0, 140.0, 110.0],
        }
    )
    tables = pd.DataFrame({"table_id": ["t0"], "n_rows": [2], "n_cols": [2], "header_rows": [1]})
    cells = pd.DataFrame(
        {
            "table_id": ["t0"] * 4,
            "row_idx": [0, 0, 1, 1],
            "col_idx": [0, 1, 0, 1],
            "text": ["Item", "Amount", "Fee", "1,200"],
        }
    )
    return DocumentFrames(
        document={"status": "parsed", "error": None, "n_pages": 2},
        pages=pages,
        paragraphs=paragraphs,
        tables=tables,
        cells=cells,
        ocr_lines=pd.DataFrame({"confidence": [0.97, 0.95, 0.99]}),
        conservation=pd.DataFrame(
            {
                "page_index": [0, 1],
                "chars": [60, 40],
                "paragraph_chars": [40, 14],
                "heading_chars": [0, 0],
                "table_chars": [18, 22],
                "page_number_chars": [1, 1],
                "header_chars": [1, 3],
                "footer_chars": [0, 0],
                "lost_chars": [0, 0],
            }
        ),
    )


def _failed(frames: DocumentFrames, settings: QualitySettings | None = None) -> set[str]:
    settings = QualitySettings() if settings is None else settings  # a test helper's default
    return {r.expectation for r in evaluate_document(frames, settings) if not r.success}


def test_a_sound_document_passes_every_expectation():
    results = evaluate_document(_frames(), settings=QualitySettings())
    assert [r.expectation for r in results] == EXPECTATIONS
    assert all(r.success for r in results), [r for r in results if not r.success]
    assert set(by_suite(results)) == set(SUITES)
    assert {r.suite for r in results} == set(SUITES)


def _drop_page(f):
    f.pages = f.pages.iloc[:1]


def _double_page(f):
    f.pages = pd.concat([f.pages, f.pages.iloc[:1]], ignore_index=True)
    f.document["n_pages"] = 3


def _page_out_of_range(f):
    f.pages.loc[1, "page_index"] = 7


def _blank_label(f):
    f.pages.loc[1, "page_label"] = " "


def _empty_paragraph(f):
    f.paragraphs.loc[1, "text"] = "   "


def _double_paragraph_id(f):
    f.paragraphs.loc[2, "paragraph_id"] = "p0"


def _garbled(f):
    f.paragraphs["flags"] = [["mojibake"], [], []]


def _font_without_mapping(f):
    """Every paragraph printed in a font whose glyphs have no Unicode mapping (control characters)."""
    f.paragraphs["text"] = ["\x02\x03\x04 \x05\x06\x07", "\x08\x0e\x0f \x10\x11", "\x12\x13 \x14\x15"]
    f.paragraphs["flags"] = [["control_char"]] * 3


def _box_outside(f):
    f.paragraphs.loc[0, "x1"] = 700.0


def _off_grid(f):
    f.cells.loc[3, "row_idx"] = 5


def _doubled_cell(f):
    f.cells.loc[3, ["row_idx", "col_idx"]] = [1, 0]


def _empty_table(f):
    f.cells["text"] = ["", " ", "", None]


def _blank_header(f):
    f.cells.loc[[0, 1], "text"] = ""


def _low_ocr(f):
    f.ocr_lines = pd.DataFrame({"confidence": [0.4, 0.5, 0.6]})


def _emptied_by_repair(f):
    # rows written before pages.blank_reason: in a repaired file an empty page is taken as lost
    f.document["repaired"] = True
    f.pages["content"] = ["text", "blank"]


def _page_object_lost(f):
    f.document["repaired"] = True
    f.pages["content"] = ["text", "blank"]
    f.pages["content_damage"] = [None, "its page object 17 is missing"]
    f.pages["blank_reason"] = [None, "damaged"]


def _only_left_blank_notices(f):
    f.pages["content"] = ["text", "text"]
    f.pages["blank_reason"] = ["left blank notice", "left blank notice"]


def _broken_stream(f):
    f.pages["content"] = ["text", "image"]
    f.pages["content_damage"] = [None, "its content object 35 is missing"]


def _body_taken_for_headers(f):
    f.conservation["header_chars"] = [41, 17]
    f.conservation["paragraph_chars"] = [0, 0]


def _lost_text(f):
    f.conservation["lost_chars"] = [0, 7]
    f.conservation["paragraph_chars"] = [40, 7]


def _unreadable(f):
    f.document.update(status="failed", error="corrupt: no readable pages")


def _no_text(f):
    f.paragraphs = f.paragraphs.iloc[0:0]
    f.cells = f.cells.assign(text="")


@pytest.mark.parametrize(
    ("defect", "expectation", "blocks"),
    [
        (_drop_page, "page_rows_match_page_count", True),
        (_double_page, "page_indexes_unique", True),
        (_page_out_of_range, "page_indexes_in_range", True),
        (_blank_label, "page_labels_present", True),
        (_empty_paragraph, "paragraphs_non_empty", True),
        (_double_paragraph_id, "paragraph_ids_unique", True),
        (_garbled, "flagged_paragraph_share", True),
        (_font_without_mapping, "garbled_char_share", True),
        (_box_outside, "paragraph_bbox_inside_page", False),
        (_off_grid, "tables_rectangular", True),
        (_doubled_cell, "tables_rectangular", True),
        (_empty_table, "tables_non_empty", True),
        (_blank_header, "table_headers_present", False),
        (_low_ocr, "ocr_mean_confidence", True),
        (_emptied_by_repair, "pages_have_content", True),
        (_page_object_lost, "pages_have_content", True),
        (_only_left_blank_notices, "text_page_share", True),
        (_broken_stream, "content_streams_intact", True),
        (_body_taken_for_headers, "furniture_char_share", False),
        (_lost_text, "lost_char_share", False),
        (_unreadable, "document_opened", True),
        (_no_text, "text_extracted", True),
    ],
)
def test_each_defect_fails_its_expectation(defect, expectation, blocks):
    frames = _frames()
    defect(frames)
    results = evaluate_document(frames, settings=QualitySettings())
    failed = {r.expectation for r in results if not r.success}
    assert expectation in failed
    assert bool(blocking_failures(results)) is blocks
    if blocks:
        assert expectation in describe_failures(results)


def test_a_formula_line_s_unmapped_glyphs_are_judged_by_characters_not_by_paragraphs():
    """A math paper's formula lines print glyphs without a Unicode mapping: one paragraph in three
    carrying two such characters is sound text (the share of characters decides), where one
    paragraph in three with mojibake is a document-wide decoding error."""
    frames = _frames()
    frames.paragraphs["text"] = [
        "The trap frequency \x02h=2mv sets the scale of the phonon modes we use in the gate.",
        "Payment within 30 days.",
        "Signed in Tokyo.",
    ]
    frames.paragraphs["flags"] = [["control_char"], [], []]
    results = {r.expectation: r for r in evaluate_document(frames, settings=QualitySettings())}
    assert results["flagged_paragraph_share"].success
    assert results["garbled_char_share"].success
    assert 0 < results["garbled_char_share"].observed_number < 0.02
    frames.paragraphs["flags"] = [["mojibake"], [], []]
    results = {r.expectation: r for r in evaluate_document(frames, settings=QualitySettings())}
    assert not results["flagged_paragraph_share"].success


def test_sound_blank_pages_are_emptiness_judged_by_the_text_pages_left():
    frames = _frames()
    # a duplex scan: one text page, one blank back (sound, no ink), a "left blank" notice: 1 of 3
    frames.pages = pd.concat([frames.pages, frames.pages.iloc[[1]].assign(page_index=2)], ignore_index=True)
    frames.document["n_pages"] = 3
    frames.pages["content"] = ["text", "blank", "text"]
    frames.pages["blank_reason"] = [None, "no ink", "left blank notice"]
    results = {r.expectation: r for r in evaluate_document(frames, settings=QualitySettings())}
    assert results["text_page_share"].success and results["text_page_share"].observed_value == "0.3333"
    assert results["pages_have_content"].success  # not damage, however many
    # in a repaired file too: a blank page whose objects are all there is empty, not lost
    frames.document["repaired"] = True
    assert not _failed(frames) & {"pages_have_content", "content_streams_intact", "text_page_share"}
    # a stricter share is a setting (more than half of the pages must be text)
    assert "text_page_share" in _failed(frames, QualitySettings(min_text_page_share=0.5))
    # only blank pages: held back as no text (document_parsed says so; pages_complete does not
    # say it twice, and blank pages without text elsewhere are not damage either)
    frames.pages["content"] = ["blank", "blank", "blank"]
    frames.pages["blank_reason"] = ["no ink", "no ink", "no ink"]
    _no_text(frames)
    failed = _failed(frames)
    assert "text_extracted" in failed and not failed & {"pages_have_content", "text_page_share"}


def test_conservation_reports_its_shares_with_the_counts():
    results = {r.expectation: r for r in evaluate_document(_frames(), settings=QualitySettings())}
    assert results["furniture_char_share"].observed_value == "0.0600 (6 of 100 chars)"
    assert results["table_char_share"].observed_value == "0.4000 (40 of 100 chars)"
    assert results["lost_char_share"].success and results["lost_char_share"].severity == "WARN"
    frames = _frames()
    frames.conservation = frames.conservation.iloc[0:0]  # an older warehouse: nothing to judge
    assert {
        r.expectation
        for r in evaluate_document(frames, settings=QualitySettings())
        if r.suite == "text_conserved" and not r.success
    } == set()


def test_an_unreadable_document_is_judged_by_document_parsed_only():
    frames = _frames()
    _unreadable(frames)
    results = evaluate_document(frames, settings=QualitySettings())
    assert {r.suite for r in results} == {"document_parsed"}
    opened = next(r for r in results if r.expectation == "document_opened")
    assert opened.observed_value == "corrupt: no readable pages"


def test_observed_values_name_the_offending_rows_and_aggregates():
    frames = _frames()
    _double_paragraph_id(frames)
    _low_ocr(frames)
    results = {r.expectation: r for r in evaluate_document(frames, settings=QualitySettings())}
    assert results["paragraph_ids_unique"].observed_value.startswith("2 of 3: p0")
    assert float(results["ocr_mean_confidence"].observed_value) == pytest.approx(0.5)
    assert results["ocr_mean_confidence"].threshold == ">= 0.7"


def test_thresholds_and_severities_come_from_settings():
    frames = _frames()
    _low_ocr(frames)
    assert "ocr_mean_confidence" not in _failed(frames, QualitySettings(min_ocr_confidence=0.45))
    demoted = evaluate_document(frames, QualitySettings(severity_overrides={"ocr_mean_confidence": "WARN"}))
    assert not blocking_failures(demoted)
    frames = _frames()
    _box_outside(frames)
    promoted = QualitySettings(severity_overrides={"paragraph_bbox_inside_page": "ERROR"})
    assert [r.expectation for r in blocking_failures(evaluate_document(frames, promoted))] == [
        "paragraph_bbox_inside_page"
    ]
    with pytest.raises(ValueError):
        QualitySettings(severity_overrides={"ocr_mean_confidence": "FATAL"})
    with pytest.raises(ValueError):
        QualitySettings(max_flagged_share=0.1)  # a typo is an error, not a silent default


def test_nothing_to_judge_passes():
    frames = _frames()
    frames.tables, frames.cells = frames.tables.iloc[0:0], frames.cells.iloc[0:0]
    frames.ocr_lines = pd.DataFrame({"confidence": []})
    results = {r.expectation: r for r in evaluate_document(frames, settings=QualitySettings())}
    assert (
        results["ocr_mean_confidence"].success and results["ocr_mean_confidence"].observed_value == "no rows"
    )
    assert results["tables_rectangular"].success


def test_every_measured_expectation_carries_its_observation_and_threshold_as_numbers():
    """What the UI plots per document: one scale for the observed value and its threshold."""
    frames = _frames()
    _double_paragraph_id(frames)
    _low_ocr(frames)
    results = {r.expectation: r for r in evaluate_document(frames, settings=QualitySettings())}
    for r in results.values():
        assert r.observed_number is not None and r.threshold_number is not None, r
    # an aggregate against its bound
    mean = results["ocr_mean_confidence"]
    assert (mean.observed_number, mean.threshold_number) == (pytest.approx(0.5), 0.7)
    # rows that failed against the none allowed
    assert (
        results["paragraph_ids_unique"].observed_number,
        results["paragraph_ids_unique"].threshold_number,
    ) == (
        2.0,
        0.0,
    )
    assert results["page_indexes_unique"].observed_number == 0.0
    # the row count against the page count the document declares
    rows = results["page_rows_match_page_count"]
    assert (rows.observed_number, rows.threshold_number) == (2.0, 2.0)
    # a one-row frame's value against its bound, and a share of lines against the share allowed
    assert results["text_extracted"].observed_number > results["text_extracted"].threshold_number
    low = results["ocr_low_confidence_lines"]
    assert 0.0 < low.observed_number <= 1.0 and 0.0 < low.threshold_number < 1.0
    assert not low.success and low.observed_number > low.threshold_number
    assert results["furniture_char_share"].observed_number == pytest.approx(6 / 100)  # 1 + 1 + 1 + 3 of 100


def test_nothing_to_measure_has_no_number():
    frames = _frames()
    frames.ocr_lines = pd.DataFrame({"confidence": []})
    result = next(
        r
        for r in evaluate_document(frames, settings=QualitySettings())
        if r.expectation == "ocr_mean_confidence"
    )
    assert result.observed_number is None and result.threshold_number == 0.7


def test_each_tables_cells_are_judged_on_their_own():
    """Cells of several tables, interleaved: a place taken in another table is no double, a
    header row is its own table's, a table without cells has no text cells."""
    frames = _frames()
    frames.tables = pd.DataFrame(
        {
            "table_id": ["t0", "t1", "t2", "t3"],
            "n_rows": [2, 2, 1, 1],
            "n_cols": [2, 1, 1, 1],
            "header_rows": [1, 1, 0, 1],
        }
    )
    frames.cells = pd.DataFrame(
        {
            "table_id": ["t0", "t1", "t0", "t1", "t0", "t0", "t1", "t2"],
            "row_idx": [0, 0, 0, 1, 1, 1, 1, 0],
            "col_idx": [0, 0, 1, 0, 0, 1, 0, 3],
            "text": ["Item", "", "Amount", "x", "Fee", "1,200", "y", "z"],
        }
    )
    tables = prepare_frames(frames, QualitySettings())["tables"]
    assert tables.to_dict("records") == [
        {"table_id": "t0", "grid_violations": 0, "text_cells": 4, "header_ok": True},
        # its second cell at (1, 0) is a double; its header row has no text
        {"table_id": "t1", "grid_violations": 1, "text_cells": 2, "header_ok": False},
        {"table_id": "t2", "grid_violations": 1, "text_cells": 1, "header_ok": True},  # col 3 of 1
        {"table_id": "t3", "grid_violations": 0, "text_cells": 0, "header_ok": False},
    ]
