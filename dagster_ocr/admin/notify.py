"""Alerts and the notifiers that deliver them: a webhook (URL from an environment variable) and the log.

The webhook body is JSON with a ``text`` field (what Slack and Mattermost incoming webhooks
display) plus the alert's structured fields, so one URL works for chat and for an alert router.
The URL is a secret: it is read from the environment when a notifier is built, never at import,
and never printed.
"""

from __future__ import annotations

import json
import logging
import os
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Literal, Protocol, runtime_checkable

log = logging.getLogger(__name__)

Severity = Literal["info", "warning", "critical"]

#: default environment variable holding the webhook URL
DEFAULT_WEBHOOK_ENV = "DAGSTER_OCR_ALERT_WEBHOOK"


@dataclass(frozen=True, slots=True)
class Alert:
    """One thing an on-call engineer should know, with what to do about it.

    ``key`` identifies the condition (not the occurrence): the sensors use it to avoid repeating
    an alert on every tick while the condition holds.
    """

    key: str
    severity: Severity
    title: str
    detail: str
    action: str
    labels: Mapping[str, str] = field(default_factory=dict)

    def text(self) -> str:
        """One human-readable message: title, detail, what to do."""
        return f"[{self.severity.upper()}] {self.title}\n{self.detail}\nWhat to do: {self.action}"

    def as_dict(self) -> dict:
        return {**asdict(self), "labels": dict(self.labels), "text": self.text()}


class NotifyError(RuntimeError):
    """A notifier could not deliver an alert."""


@runtime_checkable
class Notifier(Protocol):
    """Delivers alerts somewhere a person will see them."""

    def notify(self, alert: Alert) -> None: ...


class LogNotifier:
    """Writes alerts to a logger (always on: the run and daemon logs keep a record)."""

    def __init__(self, logger: logging.Logger | None = None):
        self.logger = logger or log

    def notify(self, alert: Alert) -> None:
        level = logging.ERROR if alert.severity == "critical" else logging.WARNING
        self.logger.log(level, "ALERT %s: %s", alert.key, alert.text())


class WebhookNotifier:
    """POSTs each alert as JSON to a URL (Slack/Mattermost incoming webhook, Alertmanager bridge...)."""

    def __init__(self, url: str, timeout_s: float = 5.0, source: str = "dagster-ocr"):
        if not url.startswith(("http://", "https://")):
            raise ValueError("webhook URL must start with http:// or https://")
        self.url = url
        self.timeout_s = timeout_s
        self.source = source

    def notify(self, alert: Alert) -> None:
        body = json.dumps({**alert.as_dict(), "source": self.source}).encode()
        request = urllib.request.Request(
            self.url, data=body, method="POST", headers={"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:  # noqa: S310
                response.read()
        except (urllib.error.URLError, OSError) as exc:
            # the URL may carry a token: name only the host
            host = urllib.request.urlparse(self.url).hostname
            raise NotifyError(f"webhook to {host} failed: {exc}") from exc


class FanOutNotifier:
    """Sends every alert to every notifier; one failing (webhook down) does not stop the others."""

    def __init__(self, notifiers: Sequence[Notifier]):
        self.notifiers = list(notifiers)

    def notify(self, alert: Alert) -> None:
        errors = []
        for notifier in self.notifiers:
            try:
                notifier.notify(alert)
            except NotifyError as exc:
                errors.append(str(exc))
                log.error("could not deliver alert %s: %s", alert.key, exc)
        if errors and len(errors) == len(self.notifiers):
            raise NotifyError("; ".join(errors))


def build_notifier(
    webhook_url_env: str = DEFAULT_WEBHOOK_ENV,
    timeout_s: float = 5.0,
    environ: Mapping[str, str] | None = None,
    logger: logging.Logger | None = None,
) -> Notifier:
    """The log notifier, plus a webhook when the environment variable ``webhook_url_env`` is set."""
    env = os.environ if environ is None else environ
    notifiers: list[Notifier] = [LogNotifier(logger)]
    url = env.get(webhook_url_env, "").strip()
    if url:
        notifiers.append(WebhookNotifier(url, timeout_s))
    return FanOutNotifier(notifiers)
