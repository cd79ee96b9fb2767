"""Administering an installation: alert rules, notifiers, Prometheus figures, installation checks,
schema versions (read from dagster_ocr.schema), resource usage.

Pure core (no dagster import): the Dagster sensors in assets/alerts.py and the CLI in
assets/admin_cli.py gather inputs and call these functions.
"""

from dagster_ocr.admin.notify import Alert, LogNotifier, Notifier, WebhookNotifier, build_notifier
from dagster_ocr.admin.rules import AlertSettings, DocOutcome, GpuSample, RunInfo, evaluate_rules

__all__ = [
    "Alert",
    "AlertSettings",
    "DocOutcome",
    "GpuSample",
    "LogNotifier",
    "Notifier",
    "RunInfo",
    "WebhookNotifier",
    "build_notifier",
    "evaluate_rules",
]
