"""Deployment settings: how a code location runs its documents, read from ``DAGSTER_OCR_*`` variables.

Unlike :class:`dagster_ocr.settings.Settings` (how a document is parsed, carried on each document),
these say how the deployment schedules work; they are read once when the code location loads
(``assets/definitions.py``) and rendered into docs/configuration.md by ``dagster_ocr.settings_docs``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict, Field

#: every field ``name`` is read from the environment variable ``DAGSTER_OCR_<NAME>``
ENV_PREFIX = "DAGSTER_OCR_"


class DeploymentSettings(BaseModel):
    """Environment variables of a deployment, read when the code location loads."""

    model_config = ConfigDict(extra="forbid")

    documents_per_run: int = Field(
        1,
        ge=1,
        le=10_000,
        description="Batch mode for large inboxes and backfills. 1 (off): inbox_sensor requests one "
        "`ingest_document` run per new document. N > 1: it requests one `ingest_documents` run per N "
        "new documents, which runs each document's own `ingest_document` run (its partition, tags, "
        "checks and quarantine) one after the other, each in its own process; a tick with 1,000 new "
        "files then creates 1,000/N runs instead of 1,000 (about 1 s of the daemon each). "
        "`dagster-ocr backfill --per-run N` batches a backfill the same way. See docs/scale.md.",
    )

    @staticmethod
    def variable(name: str) -> str:
        """The environment variable of the field ``name``."""
        return ENV_PREFIX + name.upper()

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> DeploymentSettings:
        """The settings the environment sets (an unset or empty variable keeps the default)."""
        env = os.environ if environ is None else environ
        values = {n: env[cls.variable(n)] for n in cls.model_fields if env.get(cls.variable(n))}
        return cls.model_validate(values)
