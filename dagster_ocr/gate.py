"""The quality gate's decision for one document: its expectations, a reviewer's approval, its status.

``judge_document`` runs the expectation suites (see :mod:`dagster_ocr.quality`) on the rows the
warehouse holds for a document, reads the latest approval, decides the document's status and
error, and records results and verdict in the warehouse; ``load_and_judge`` does the same inside
the transaction that loads the document's rows. What it returns is all a caller shows:
the ``duckdb_tables`` asset turns each :class:`SuiteOutcome` into one blocking asset check (and
``dagster-ocr recheck`` runs that asset), so the rules below exist once.

The rules:

* a document that could not be read stays ``failed``, with its parse error, approved or not;
* a failed ERROR expectation quarantines the document, unless a reviewer approved it: then it is
  ``parsed`` and its error says who let it in despite what;
* a failed WARN expectation is reported (its suite fails at WARN severity) and never blocks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import duckdb
import pandas as pd

from dagster_ocr import partition_keys
from dagster_ocr.model import DocStatus, ExtractedDocument, PageLabel, ParagraphResult, Table
from dagster_ocr.quality import (
    DocumentFrames,
    ExpectationResult,
    QualitySettings,
    Severity,
    blocking_failures,
    by_suite,
    describe_failures,
    evaluate_document,
)
from dagster_ocr.warehouse import Approval, Warehouse
from dagster_ocr.warehouse_writes import store_gate

__all__ = [
    "Approval",
    "GateDecision",
    "SuiteOutcome",
    "decide",
    "evaluate_quality",
    "held_back",
    "judge_document",
    "load_and_judge",
]


@dataclass(frozen=True, slots=True)
class SuiteOutcome:
    """One expectation suite's verdict on a document: what its asset check shows."""

    suite: str
    #: no expectation failed, or only approved ERROR failures (a WARN failure fails the suite)
    passed: bool
    #: ERROR when one of its ERROR expectations failed, else WARN (a WARN check never blocks)
    severity: Severity
    description: str
    #: every expectation of the suite evaluated on the document (none: the document was unreadable)
    results: tuple[ExpectationResult, ...]
    failed: tuple[ExpectationResult, ...]
    #: the approval that lets this suite's ERROR failures pass; None when there are none to approve
    approval: Approval | None = None


@dataclass(frozen=True, slots=True)
class GateDecision:
    """The gate's verdict on one document."""

    doc_id: str
    status: DocStatus
    #: ``documents.error``: the parse error, the blocking failures, or who approved them despite what
    error: str | None
    #: the approval that let blocking failures in; None when none was needed or it could not help
    approval: Approval | None
    results: tuple[ExpectationResult, ...]
    #: one per suite, in :data:`dagster_ocr.quality.SUITES` order
    suites: tuple[SuiteOutcome, ...]


def evaluate_quality(
    wh: Warehouse, doc_id: str, settings: QualitySettings, con: duckdb.DuckDBPyConnection | None = None
) -> list[ExpectationResult]:
    """Run the expectation suites on the rows the warehouse holds for ``doc_id`` (what analysts
    read; ``con``: the rows a write's transaction holds, before its commit)."""
    frames = wh.document_frames(
        doc_id, ("documents", "pages", "paragraphs", "tables", "table_cells", "text_conservation"), con
    )
    return evaluate_document(
        DocumentFrames(
            frames["documents"].iloc[0].to_dict(),
            frames["pages"],
            frames["paragraphs"],
            frames["tables"],
            frames["table_cells"],
            wh.ocr_confidences(doc_id, con),
            frames["text_conservation"],
        ),
        settings,
    )


def decide(
    doc_id: str,
    results: Sequence[ExpectationResult],
    document_status: DocStatus,
    document_error: str | None,
    approval: Approval | None,
) -> GateDecision:
    """The verdict on expectation results already evaluated (pure: no warehouse)."""
    results = list(results)
    blocking = blocking_failures(results)
    # an approval lets a document with failed checks in; it cannot make an unreadable file readable
    approval = approval if blocking else None
    if document_status == DocStatus.FAILED:
        status, approval = DocStatus.FAILED, None
    elif blocking and approval is None:
        status = DocStatus.QUARANTINED
    else:
        status = DocStatus.PARSED
    error = describe_failures(results) or None
    if status == DocStatus.FAILED:
        error = document_error or error
    elif approval is not None:
        error = f"approved by {approval.approved_by} ({approval.reason}) despite: {error}"
    return GateDecision(
        doc_id=doc_id,
        status=status,
        error=error,
        approval=approval,
        results=tuple(results),
        suites=tuple(_suite_outcome(suite, rs, approval) for suite, rs in by_suite(results).items()),
    )


def _suite_outcome(suite: str, results: list[ExpectationResult], approval: Approval | None) -> SuiteOutcome:
    failed = [r for r in results if not r.success]
    errors = [r for r in failed if r.severity == "ERROR"]
    approved = approval if errors else None
    if not results:
        description = "not evaluated: the document could not be read (see document_parsed)"
    elif approved is not None:
        description = f"approved by hand by {approved.approved_by}: " + describe_failures(errors)
    elif failed:
        description = "; ".join(f"{r.expectation}: observed {r.observed_value}" for r in failed)
    else:
        description = "all expectations met"
    return SuiteOutcome(
        suite=suite,
        # an approved ERROR failure passes (and says who approved it); WARN failures fail the
        # suite at WARN severity, which never blocks the knowledge base
        passed=not failed or approved is not None,
        severity="ERROR" if errors else "WARN",
        description=description,
        results=tuple(results),
        failed=tuple(failed),
        approval=approved,
    )


def judge_document(
    wh: Warehouse,
    doc_id: str,
    document_status: DocStatus,
    document_error: str | None,
    quality_settings: QualitySettings,
) -> GateDecision:
    """Judge the rows the warehouse holds for ``doc_id`` and record the verdict (``dagster-ocr
    recheck``; a load judges in its own transaction, see ``load_and_judge``).

    ``document_status`` and ``document_error`` are the text stage's (a file it could not read
    stays failed). The expectation results replace the document's ``quality_results`` and the
    verdict its ``documents.status``/``error``, in one transaction.
    """
    return wh.write(
        lambda con: _judge(wh, con, doc_id, document_status, document_error, quality_settings), lock=doc_id
    )


def load_and_judge(
    wh: Warehouse,
    doc: ExtractedDocument,
    labels: Sequence[PageLabel],
    tables: Sequence[Table],
    paragraphs: ParagraphResult,
    *,
    partition_key: str,
    quality_settings: QualitySettings,
) -> tuple[dict[str, int], GateDecision]:
    """Replace the document's rows, record its partition key and judge it, in one commit.

    Returns the row counts per table and the verdict. The gate reads the rows through the write's
    own connection, so it judges exactly what the commit makes visible, and no reader ever sees
    the new rows without their verdict. One commit instead of three: on a lake each commit is a
    round of catalog work and a chance to collide with another writer (see docs/benchmarks-history.md,
    "One commit per document", issue 23 session 10).
    """
    doc_id = doc.source.doc_id
    decided: list[GateDecision] = []

    def then(con: duckdb.DuckDBPyConnection) -> None:
        decided.clear()  # a lake retries the whole write after a conflict
        partition_keys.store(con, partition_key, doc_id, doc.source.file_name)
        decided.append(_judge(wh, con, doc_id, doc.status, doc.error, quality_settings))

    counts = wh.write_document(
        doc,
        labels,
        tables,
        paragraphs,
        then=then,
        locks=(partition_keys.lock_name(partition_key),),
    )
    return counts, decided[0]


def _judge(
    wh: Warehouse,
    con: duckdb.DuckDBPyConnection,
    doc_id: str,
    document_status: DocStatus,
    document_error: str | None,
    quality_settings: QualitySettings,
) -> GateDecision:
    """Evaluate, decide and store the verdict on ``con``, inside the caller's transaction."""
    results = evaluate_quality(wh, doc_id, quality_settings, con)
    decision = decide(doc_id, results, document_status, document_error, wh.latest_approval(doc_id, con))
    store_gate(
        con,
        doc_id,
        [{**r.as_row(), "check_name": r.suite} for r in decision.results],
        decision.status,
        decision.error,
    )
    return decision


def held_back(wh: Warehouse) -> pd.DataFrame:
    """Every document held back from the knowledge base, newest verdict first: file name, the
    partition key the Dagster UI shows, status (quarantined or failed), why, and the failed
    expectations with observed values and thresholds (the ``quarantine`` view)."""
    if not wh.exists():
        return pd.DataFrame(columns=_HELD_BACK_COLUMNS)
    wh.ensure_schema()  # the map of partition keys may be newer than the file
    return wh.query(
        """
        SELECT q.file_name, any_value(p.partition_key) AS partition_key, q.status,
               q.error AS reason, q.failed_expectations, q.evaluated_at, q.doc_id
        FROM quarantine q LEFT JOIN document_partitions p USING (doc_id)
        GROUP BY ALL ORDER BY q.evaluated_at DESC NULLS LAST, q.file_name
        """
    )


_HELD_BACK_COLUMNS = [
    "file_name",
    "partition_key",
    "status",
    "reason",
    "failed_expectations",
    "evaluated_at",
    "doc_id",
]
