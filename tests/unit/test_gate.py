"""The quality gate's decision without Dagster: quarantine, approval, unreadable files, WARN-only failures."""

from __future__ import annotations

import datetime as dt

from dagster_ocr.gate import Approval, decide, judge_document
from dagster_ocr.model import DocStatus, ExtractedDocument, Line, Page, SourceDocument
from dagster_ocr.model import ParagraphResult as Paragraphs
from dagster_ocr.quality import SUITES, ExpectationResult, QualitySettings
from dagster_ocr.warehouse import Warehouse

DOC = "d" * 64
REVIEWER = Approval("reviewer@example.com", "grid checked by hand", dt.datetime(2026, 12, 1, 9, 30))


def _result(suite: str, name: str, success: bool, severity: str = "ERROR") -> ExpectationResult:
    return ExpectationResult(suite, name, severity, success, "2 of 4" if not success else "0", "0", "...")  # type: ignore[arg-type]


def _sound() -> list[ExpectationResult]:
    return [_result(suite, f"{suite}_holds", True) for suite in SUITES]


def _with(*failures: ExpectationResult) -> list[ExpectationResult]:
    return _sound() + list(failures)


def _suite(decision, name: str):
    (outcome,) = [s for s in decision.suites if s.suite == name]
    return outcome


def test_a_sound_document_is_parsed_and_every_suite_passes():
    decision = decide(DOC, _sound(), DocStatus.PARSED, "", None)
    assert (decision.status, decision.error, decision.approval) == (DocStatus.PARSED, None, None)
    assert [s.suite for s in decision.suites] == list(SUITES)
    assert all(s.passed and s.severity == "WARN" for s in decision.suites)
    assert {s.description for s in decision.suites} == {"all expectations met"}


def test_an_error_failure_quarantines_the_document():
    failure = _result("tables_valid", "tables_rectangular", False)
    decision = decide(DOC, _with(failure), DocStatus.PARSED, "", None)
    assert decision.status == DocStatus.QUARANTINED
    assert decision.error == "tables_valid.tables_rectangular: observed 2 of 4 (expected 0)"
    tables = _suite(decision, "tables_valid")
    assert (tables.passed, tables.severity, tables.approval) == (False, "ERROR", None)
    assert tables.failed == (failure,)
    assert tables.description == "tables_rectangular: observed 2 of 4"
    assert _suite(decision, "pages_complete").passed


def test_an_approval_lets_the_document_in_despite_its_failure():
    failure = _result("tables_valid", "tables_rectangular", False)
    decision = decide(DOC, _with(failure), DocStatus.PARSED, "", REVIEWER)
    assert decision.status == DocStatus.PARSED
    assert decision.approval == REVIEWER
    assert decision.error == (
        "approved by reviewer@example.com (grid checked by hand) despite: "
        "tables_valid.tables_rectangular: observed 2 of 4 (expected 0)"
    )
    tables = _suite(decision, "tables_valid")
    assert (tables.passed, tables.severity, tables.approval) == (True, "ERROR", REVIEWER)
    assert tables.description.startswith("approved by hand by reviewer@example.com: tables_valid.")
    # the approval is shown where it did something only
    assert _suite(decision, "pages_complete").approval is None


def test_an_approval_on_file_means_nothing_while_every_check_passes():
    decision = decide(DOC, _sound(), DocStatus.PARSED, "", REVIEWER)
    assert (decision.status, decision.error, decision.approval) == (DocStatus.PARSED, None, None)


def test_a_failed_document_cannot_be_approved_in():
    opened = _result("document_parsed", "document_opened", False)
    decision = decide(DOC, [opened], DocStatus.FAILED, "encrypted: needs a password", REVIEWER)
    assert (decision.status, decision.approval) == (DocStatus.FAILED, None)
    assert decision.error == "encrypted: needs a password"  # the parse error, not the expectation
    parsed = _suite(decision, "document_parsed")
    assert (parsed.passed, parsed.severity, parsed.approval) == (False, "ERROR", None)
    # the other suites were not evaluated on an unreadable file
    others = [s for s in decision.suites if s.suite != "document_parsed"]
    assert all(s.passed and not s.results for s in others)
    assert {s.description for s in others} == {
        "not evaluated: the document could not be read (see document_parsed)"
    }


def test_a_warn_only_failure_passes_the_gate_but_fails_its_check_at_warn():
    warned = _result("paragraphs_valid", "paragraph_bbox_inside_page", False, severity="WARN")
    decision = decide(DOC, _with(warned), DocStatus.PARSED, "", None)
    assert (decision.status, decision.error) == (DocStatus.PARSED, None)
    paragraphs = _suite(decision, "paragraphs_valid")
    assert (paragraphs.passed, paragraphs.severity) == (False, "WARN")
    assert paragraphs.description == "paragraph_bbox_inside_page: observed 2 of 4"
    # an approval does not turn a WARN failure into a pass: there is nothing blocking to approve
    approved = decide(DOC, _with(warned), DocStatus.PARSED, "", REVIEWER)
    assert approved.approval is None and not _suite(approved, "paragraphs_valid").passed


def test_judge_document_reads_the_rows_and_the_approval_and_records_the_verdict(tmp_path):
    """Through a real warehouse: a one-page document without text is held back, then approved in."""
    wh = Warehouse(tmp_path / "w.duckdb")
    src = SourceDocument(DOC, "blank.pdf", "/in/blank.pdf", "/store/blank", 10, "pdf")
    page = Page(0, 612, 792, [Line(" ", (72, 72, 80, 84))])
    doc = ExtractedDocument(src, DocStatus.PARSED, [page], n_pages=1)
    wh.write_document(doc, [], [], Paragraphs())

    held = judge_document(wh, DOC, doc.status, doc.error, QualitySettings())
    assert held.status == DocStatus.QUARANTINED
    assert "document_parsed.text_extracted" in held.error
    stored = wh.query("SELECT status, error FROM documents").to_dict("records")
    assert stored == [{"status": "quarantined", "error": held.error}]
    recorded = wh.query("SELECT check_name, expectation, success FROM quality_results ORDER BY ALL")
    assert len(recorded) == len(held.results) and set(recorded.check_name) == set(SUITES)

    wh.approve(DOC, "reviewer@example.com", "a blank form, on purpose")
    let_in = judge_document(wh, DOC, doc.status, doc.error, QualitySettings())
    assert let_in.status == DocStatus.PARSED
    assert let_in.approval is not None and let_in.approval.approved_by == "reviewer@example.com"
    assert wh.query("SELECT status FROM documents")["status"].tolist() == ["parsed"]
