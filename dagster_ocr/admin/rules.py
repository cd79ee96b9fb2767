"""Alert rules: pure functions from run, document and GPU histories to ``Alert`` objects.

The Dagster sensors (assets/alerts.py) only gather the histories from the instance and hand the
result to a notifier; every decision lives here, where a test can feed it a synthetic history.
Times are POSIX seconds (floats), as Dagster's run records and event logs give them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

from dagster_ocr.admin.notify import Alert


class AlertSettings(BaseModel):
    """Thresholds of the alert rules (defaults follow the deployment guide: 1 %, 85 % for 5 min)."""

    model_config = ConfigDict(extra="forbid")

    window_s: float = Field(
        3600.0, gt=0, description="Look-back window of the rate rules and of finished-run budget checks."
    )
    min_documents: int = Field(
        5,
        ge=1,
        description="A rate is judged only over at least this many documents in the window, so one "
        "bad file in a quiet hour does not page anyone (the run-failure sensor still reports it).",
    )
    failure_rate_threshold: float = Field(
        0.01,
        ge=0.0,
        le=1.0,
        description="Alert when the share of failed documents in the window exceeds this.",
    )
    quarantine_rate_threshold: float = Field(
        0.20,
        ge=0.0,
        le=1.0,
        description="Alert when the share of quarantined documents in the window exceeds this: a new "
        "kind of document, or a quality threshold set too strict.",
    )
    run_time_budget_s: float = Field(
        1800.0, gt=0, description="A document run taking longer than this (running or finished) alerts."
    )
    gpu_memory_threshold: float = Field(
        0.85, gt=0.0, le=1.0, description="Share of GPU memory in use above which the GPU counts as full."
    )
    gpu_memory_duration_s: float = Field(
        300.0, gt=0, description="The GPU must stay above the threshold this long before it alerts."
    )
    max_age_s: float = Field(
        26 * 3600.0,
        gt=0,
        description="Alert when a watched asset (knowledge_base, duckdb_tables) has not been updated "
        "for this long: the nightly ingestion at 02:00 plus two hours of slack.",
    )
    gpu_sample_max_age_s: float = Field(
        600.0,
        gt=0,
        description="A GPU memory figure older than this is no evidence the GPU is still full (the "
        "figures come with each OCR step, so an idle GPU reports nothing).",
    )
    repeat_after_s: float = Field(
        3600.0, gt=0, description="While a condition holds, repeat its alert at most this often."
    )


@dataclass(frozen=True, slots=True)
class DocOutcome:
    """How one document ended: status parsed, quarantined or failed, at time ``at``."""

    doc_id: str
    status: str
    at: float
    file_name: str = ""


@dataclass(frozen=True, slots=True)
class RunInfo:
    """One pipeline run as the instance records it (status is Dagster's, e.g. STARTED, FAILURE)."""

    run_id: str
    job_name: str
    status: str
    start_time: float | None
    end_time: float | None = None
    partition: str | None = None


@dataclass(frozen=True, slots=True)
class GpuSample:
    """GPU memory in use, as a share of the device's memory, at time ``at``."""

    at: float
    used_fraction: float
    device: str = "cuda:0"


def _rate_alert(
    outcomes: Sequence[DocOutcome],
    now: float,
    settings: AlertSettings,
    status: str,
    threshold: float,
    severity: str,
    action: str,
) -> Alert | None:
    recent = _latest_per_doc(o for o in outcomes if now - settings.window_s <= o.at <= now)
    if len(recent) < settings.min_documents:
        return None
    hits = [o for o in recent if o.status == status]
    rate = len(hits) / len(recent)
    if rate <= threshold:
        return None
    names = ", ".join(o.file_name or o.doc_id[:12] for o in hits[:5]) + (" …" if len(hits) > 5 else "")
    return Alert(
        key=f"{status}_rate",
        severity=severity,  # type: ignore[arg-type]
        title=f"{rate:.1%} of documents {status} in the last {settings.window_s / 60:.0f} min "
        f"(threshold {threshold:.1%})",
        detail=f"{len(hits)} of {len(recent)} documents {status}: {names}",
        action=action,
        labels={"status": status, "rate": f"{rate:.4f}", "documents": str(len(recent))},
    )


def _latest_per_doc(outcomes: Iterable[DocOutcome]) -> list[DocOutcome]:
    # a document re-run after a fix counts once, with its latest outcome
    latest: dict[str, DocOutcome] = {}
    for o in outcomes:
        if o.doc_id not in latest or o.at >= latest[o.doc_id].at:
            latest[o.doc_id] = o
    return list(latest.values())


def failure_rate_alert(outcomes: Sequence[DocOutcome], now: float, settings: AlertSettings) -> Alert | None:
    """Alert when more than ``failure_rate_threshold`` of the window's documents failed."""
    return _rate_alert(
        outcomes,
        now,
        settings,
        "failed",
        settings.failure_rate_threshold,
        "critical",
        'List the failures with `dagster-ocr query --warehouse W "SELECT file_name, error FROM documents '
        "WHERE status = 'failed' ORDER BY parsed_at DESC\"`. One error for many files points at the "
        "installation (run `dagster-ocr doctor`); varied errors point at the inputs (corrupt, encrypted). "
        "After a fix, re-run the documents' partitions from the UI (Materialize > selected partitions).",
    )


def quarantine_rate_alert(
    outcomes: Sequence[DocOutcome], now: float, settings: AlertSettings
) -> Alert | None:
    """Alert when more than ``quarantine_rate_threshold`` of the window's documents were quarantined."""
    return _rate_alert(
        outcomes,
        now,
        settings,
        "quarantined",
        settings.quarantine_rate_threshold,
        "warning",
        "Read the reasons: `SELECT file_name, error FROM quarantine`. The same failed expectation on many "
        "documents means a new kind of document or a threshold set too strict (settings.quality); change "
        "it and `dagster-ocr recheck DOC_ID`, or review and `dagster-ocr approve` single documents.",
    )


def run_budget_alerts(runs: Sequence[RunInfo], now: float, settings: AlertSettings) -> list[Alert]:
    """Alert for each run still going past its budget, or finished within the window past it."""
    alerts = []
    budget = settings.run_time_budget_s
    for run in runs:
        if run.start_time is None:
            continue
        finished = run.end_time is not None
        if finished and run.end_time < now - settings.window_s:  # type: ignore[operator]
            continue
        took = (run.end_time if finished else now) - run.start_time  # type: ignore[operator]
        if took <= budget:
            continue
        state = f"finished ({run.status}) after" if finished else "still running after"
        alerts.append(
            Alert(
                key=f"run_over_budget:{run.run_id}",
                severity="warning",
                title=f"run {run.run_id[:8]} of {run.job_name} {state} {took / 60:.1f} min "
                f"(budget {budget / 60:.0f} min)",
                detail=f"partition {run.partition or '-'}; status {run.status}",
                action="Open the run in the UI and look at the step timeline: a slow OCR step on a long "
                "scanned document is expected (raise the budget or lower ocr.dpi); a step that logs nothing "
                "is stuck (terminate the run; run monitoring and run_retries re-launch it); many slow runs "
                "together mean a busy or missing GPU (`dagster-ocr doctor`).",
                labels={"run_id": run.run_id, "job": run.job_name, "seconds": f"{took:.0f}"},
            )
        )
    return alerts


def gpu_memory_alert(samples: Sequence[GpuSample], now: float, settings: AlertSettings) -> Alert | None:
    """Alert when the latest samples have stayed above the threshold for the whole duration.

    The streak is the run of consecutive above-threshold samples ending at the newest one; it must
    span at least ``gpu_memory_duration_s``, and the newest sample must be recent (no stale alert).
    """
    ordered = sorted(samples, key=lambda s: s.at)
    if not ordered or now - ordered[-1].at > settings.gpu_sample_max_age_s:
        return None
    streak_start = None
    for sample in reversed(ordered):
        if sample.used_fraction <= settings.gpu_memory_threshold:
            break
        streak_start = sample
    if streak_start is None:
        return None
    span = ordered[-1].at - streak_start.at
    if span < settings.gpu_memory_duration_s:
        return None
    peak = max(s.used_fraction for s in ordered if s.at >= streak_start.at)
    return Alert(
        key=f"gpu_memory:{ordered[-1].device}",
        severity="warning",
        title=f"GPU memory above {settings.gpu_memory_threshold:.0%} for {span / 60:.1f} min "
        f"(peak {peak:.0%})",
        detail=f"device {ordered[-1].device}; latest {ordered[-1].used_fraction:.0%}",
        action="The next larger page may fail with CUDA out of memory. Check the `ocr` pool holds one slot "
        "per GPU (two OCR steps on one GPU), lower the OCR batch size or dpi, and look for a process "
        "outside Dagster on the GPU (`nvidia-smi`).",
        labels={"device": ordered[-1].device, "peak": f"{peak:.3f}"},
    )


def staleness_alerts(
    last_updates: Mapping[str, float | None], now: float, settings: AlertSettings
) -> list[Alert]:
    """Alert for each asset not updated within ``max_age_s`` (None: never materialized)."""
    alerts = []
    for asset, at in sorted(last_updates.items()):
        if at is not None and now - at <= settings.max_age_s:
            continue
        age = "never updated" if at is None else f"last updated {(now - at) / 3600:.1f} h ago"
        alerts.append(
            Alert(
                key=f"stale:{asset}",
                severity="warning",
                title=f"{asset} is stale: {age} (limit {settings.max_age_s / 3600:.0f} h)",
                detail="no document reached this stage in the window",
                action="Check that the daemon runs (Deployment > Daemons in the UI), that the inbox "
                "sensor and the nightly_ingestion schedule are on and their last ticks succeeded, and that "
                "new files reach the inbox. A quiet inbox also makes an asset stale: if that is normal, "
                "raise max_age_s.",
                labels={"asset": asset},
            )
        )
    return alerts


def evaluate_rules(
    outcomes: Sequence[DocOutcome],
    runs: Sequence[RunInfo],
    gpu: Sequence[GpuSample],
    now: float,
    settings: AlertSettings,
    last_updates: Mapping[str, float | None] | None = None,
) -> list[Alert]:
    """Every rule over the histories; an empty list means healthy."""
    s = settings
    found = [
        *staleness_alerts(last_updates or {}, now, s),
        failure_rate_alert(outcomes, now, s),
        quarantine_rate_alert(outcomes, now, s),
        *run_budget_alerts(runs, now, s),
        gpu_memory_alert(gpu, now, s),
    ]
    return [a for a in found if a is not None]


def deduplicate(
    alerts: Sequence[Alert], cursor: str | None, now: float, repeat_after_s: float
) -> tuple[list[Alert], list[str], str]:
    """Which alerts to send now, which conditions have resolved, and the sensor's next cursor.

    The cursor maps each firing condition's key to when it was last sent: a condition is sent when
    it starts and then at most every ``repeat_after_s``; a key that stops firing is reported resolved
    once and forgotten, so the same condition returning later alerts again.
    """
    sent: dict[str, float] = json.loads(cursor) if cursor else {}
    firing = {a.key: a for a in alerts}
    to_send = [a for a in alerts if a.key not in sent or now - sent[a.key] >= repeat_after_s]
    resolved = sorted(k for k in sent if k not in firing)
    next_state = {k: (now if any(a.key == k for a in to_send) else sent[k]) for k in firing}
    return to_send, resolved, json.dumps(next_state, sort_keys=True)


def resolved_alert(key: str) -> Alert:
    """The all-clear for a condition that fired earlier."""
    return Alert(key=key, severity="info", title=f"resolved: {key}", detail="", action="nothing to do")


_RUN_FAILURE_HINTS: tuple[tuple[re.Pattern[str], str], ...] = (
    (
        re.compile(r"out of memory|CUDA error|OutOfMemoryError", re.I),
        "The GPU ran out of memory. The step retries with backoff; if it keeps failing, lower the OCR "
        "batch size or dpi, and check the `ocr` pool allows one step per GPU.",
    ),
    (
        re.compile(r"Could not set lock|Conflicting lock|IO Error.*lock", re.I),
        "Another process holds the DuckDB file (an analyst's session, a second writer). The step retries; "
        "find the holder (`lsof WAREHOUSE`), and keep writers in the `duckdb_writer` pool (one slot).",
    ),
    (
        re.compile(r"EngineError|checkpoint not found|onnx|model", re.I),
        "The OCR engine could not load or run its model. Run `dagster-ocr doctor` on the worker: it names "
        "missing model files and the setting that points at them.",
    ),
    (
        re.compile(r"No space left|Disk quota", re.I),
        "A disk is full: free space under DAGSTER_OCR_DATA_DIR, the warehouse's folder and DAGSTER_HOME.",
    ),
)


def run_failure_alert(
    run_id: str,
    job_name: str,
    error: str,
    partition: str | None = None,
    file_name: str | None = None,
    failed_steps: Sequence[str] = (),
) -> Alert:
    """The alert for one failed run, with the most likely fix for the error it reports."""
    action = next(
        (hint for pattern, hint in _RUN_FAILURE_HINTS if pattern.search(error)),
        "Open the run in the UI, read the failed step's error and stack trace, fix the cause, then "
        "'Re-execute from failure' (finished steps are not re-run).",
    )
    what = file_name or (partition[:12] if partition else None) or "-"
    steps = ", ".join(failed_steps) or "unknown step"
    first_line = error.strip().splitlines()[0][:300] if error.strip() else "(no message)"
    return Alert(
        key=f"run_failure:{run_id}",
        severity="critical",
        title=f"run {run_id[:8]} of {job_name} failed ({what})",
        detail=f"failed: {steps}; {first_line}",
        action=action,
        labels={"run_id": run_id, "job": job_name, "partition": partition or ""},
    )
