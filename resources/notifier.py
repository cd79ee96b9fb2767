"""The notifier resource: where alerts go (the log always; a webhook when its variable is set)."""

from __future__ import annotations

import logging

import dagster as dg
from pydantic import Field

from dagster_ocr.admin.notify import DEFAULT_WEBHOOK_ENV, Notifier, build_notifier


class NotifierResource(dg.ConfigurableResource):
    """Alert delivery. The webhook URL is a secret, so the config holds the NAME of the environment
    variable that carries it, read when the notifier is built (inside a sensor tick), never at import.
    """

    webhook_url_env: str = Field(
        DEFAULT_WEBHOOK_ENV, description="Environment variable holding the webhook URL; unset: log only."
    )
    timeout_s: float = Field(5.0, description="Seconds to wait for the webhook to answer.")

    def notifier(self, logger: logging.Logger | None = None) -> Notifier:
        """A notifier for this tick (the log, plus the webhook when the variable is set)."""
        return build_notifier(self.webhook_url_env, self.timeout_s, logger=logger)
