"""The quality gate as a person reads it in the UI: per document, per suite, per expectation.

Each check result names the file, says its outcome in words (passed, warning, quarantined, failed,
approved), carries every expectation's observed value and threshold as numbers (``<expectation>
observed`` / ``<expectation> threshold``: the check's history lists them, and the same figures
sit on ``duckdb_tables``' materialization, where the Plots tab draws them per document), and a
Markdown table of the expectations. Failures are reported at WARN severity: a quarantine is the
gate doing its job, not an incident (see assets/documents.py).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import dagster as dg

from dagster_ocr.gate import GateDecision, SuiteOutcome
from dagster_ocr.model import DocStatus
from dagster_ocr.quality import ExpectationResult

_MARK = {"passed": "✅ pass", "warning": "⚠️ warn", "blocking": "⛔ fail"}


#: one blocking failure as dagster_ocr.quality.describe_failures words it
_FAILURE = re.compile(r"^(?:\w+\.)?(?P<name>\w+): observed (?P<observed>.*?) \(expected (?P<bound>.*)\)$")
#: what fits on one line of the Runs page's tag column, or a metadata value, at a glance
SHORT = 48


def short_reason(reason: str | None, limit: int = SHORT) -> str:
    """The gate's reason in as few characters as say it: each blocking failure as ``expectation
    observed (bound)`` (``flagged_paragraph_share 1.0 (<= 0.05)``), a parse error as it is; cut to
    ``limit`` with ``+N more`` where more failures did not fit. The UI clips a tag or a text value
    at the column's edge: the first words are the ones read."""
    parts = [p.strip() for p in str(reason or "").split("; ") if p.strip()]
    short = []
    for part in parts:
        m = _FAILURE.match(part)
        short.append(f"{m['name']} {m['observed']} ({m['bound']})" if m else " ".join(part.split()))
    if not short:
        return ""
    text = short[0]
    for i, part in enumerate(short[1:], start=1):
        more = f" +{len(short) - i} more"
        if len(text) + 2 + len(part) + (len(more) if i < len(short) - 1 else 0) > limit:
            return text + more
        text += "; " + part
    return text if len(text) <= limit * 4 else text[: limit * 4 - 1] + "…"


def outcome_tag(status: DocStatus | str) -> str:
    """The run tag value for a document's outcome: parsed, quarantined or failed."""
    return str(status)


def suite_outcome(outcome: SuiteOutcome, decision: GateDecision) -> str:
    """One suite's outcome in a word: what the check result says first."""
    if not outcome.results:
        return "not evaluated"
    if outcome.approval is not None:
        return "approved"
    if any(r.blocking for r in outcome.failed):
        return "failed" if decision.status == DocStatus.FAILED else "quarantined"
    return "warning" if outcome.failed else "passed"


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def expectations_markdown(results: Sequence[ExpectationResult]) -> str:
    """A Markdown table of expectations: result, severity, observed, threshold, what it checks."""
    if not results:
        return "_No expectation evaluated: the document could not be read (see document_parsed)._"
    lines = [
        "| result | expectation | severity | observed | threshold | checks that |",
        "|---|---|---|---|---|---|",
    ]
    for r in results:
        mark = _MARK["passed"] if r.success else _MARK["blocking" if r.blocking else "warning"]
        lines.append(
            f"| {mark} | `{r.expectation}` | {r.severity} | {_cell(r.observed_value)} "
            f"| {_cell(r.threshold)} | {_cell(r.description)} |"
        )
    return "\n".join(lines)


def expectation_numbers(results: Sequence[ExpectationResult]) -> dict[str, float]:
    """``<expectation> observed`` and ``<expectation> threshold`` as floats (those measured)."""
    out: dict[str, float] = {}
    for r in results:
        if r.observed_number is not None:
            out[f"{r.expectation} observed"] = float(r.observed_number)
        if r.threshold_number is not None:
            out[f"{r.expectation} threshold"] = float(r.threshold_number)
    return out


def gate_figures(results: Sequence[ExpectationResult]) -> dict[str, float]:
    """The gate's measurements worth a plot across documents, for ``duckdb_tables``' metadata:
    the expectations judged against a bound (a share, a mean, a count), not the row-level ones
    whose observation is "how many rows failed" (0 on a sound document, already in the checks)."""
    return {
        f"gate {r.expectation}": float(r.observed_number)
        for r in results
        if r.observed_number is not None and r.threshold_number not in (None, 0.0)
    }


def check_result(
    doc_id: str, file_name: str, decision: GateDecision, outcome: SuiteOutcome
) -> dg.AssetCheckResult:
    """One suite's verdict on one document as its asset check result."""
    word = suite_outcome(outcome, decision)
    failed = [r.expectation for r in outcome.failed]
    metadata: dict[str, object] = {
        "file_name": file_name,
        "doc_id": doc_id,
        "outcome": word,
        "document_status": str(decision.status),
        "failed_expectations": ", ".join(failed) or "none",
        "expectations": dg.MetadataValue.md(expectations_markdown(outcome.results)),
        **expectation_numbers(outcome.results),
    }
    if outcome.approval is not None:
        metadata |= {
            "approved_by": outcome.approval.approved_by,
            "approval_reason": outcome.approval.reason,
            "approved_at": str(outcome.approval.approved_at),
        }
    return dg.AssetCheckResult(
        check_name=outcome.suite,
        passed=outcome.passed,
        # WARN, whatever the expectation's own severity: the document's verdict is the gate's
        # outcome and knowledge_base enforces it; ERROR would fail the step and turn the run red
        severity=dg.AssetCheckSeverity.WARN,
        description=f"{file_name}: {word}: {outcome.description}",
        metadata=metadata,
    )
