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
    retire_after_days: float = Field(
        7.0,
        ge=0,
        le=3650,
        description="Retire loaded documents' partitions (the `retire_loaded_partitions` sensor, past "
        "DAGSTER_OCR_RETIRE_ABOVE live partitions): a document whose knowledge_base load succeeded "
        "this many days ago, whose last verdict is still that load and which has no run in flight "
        "loses its Dagster partition, so "
        "the UI's partition picker lists only documents in flight, quarantined or loaded within "
        "this window. The warehouse (`documents`, `files`, `document_partitions`) keeps every "
        "document; `dagster-ocr rerun NAME`, `dagster-ocr backfill` and `ingest_documents` re-add a "
        "retired partition before running it. 7 days keeps a week of re-runs in the picker (about "
        "20,000 partitions at a million documents a year); 0 retires at the sensor's next tick.",
    )
    retire_above: int = Field(
        20_000,
        ge=0,
        le=100_000_000,
        description="`retire_loaded_partitions` (on by default) retires only while more than this "
        "many document partitions are live, oldest loads first, down to this number: an instance "
        "below it never loses a partition, one above it keeps the picker near the size measured "
        "at about 1.5 s (20,000 live keys among a million documents, docs/scale.md). 0 retires "
        "every document loaded longer ago than DAGSTER_OCR_RETIRE_AFTER_DAYS.",
    )
    retire_per_tick: int = Field(
        500,
        ge=1,
        le=100_000,
        description="Most partitions `retire_loaded_partitions` retires in one tick (every 5 "
        "minutes): Dagster deletes a dynamic partition one key per statement, so a tick stays "
        "within a sensor's time limit. 500 a tick is 144,000 a day.",
    )
    carry_status_cache: bool = Field(
        True,
        description="After `inbox_sensor` adds partitions or `retire_loaded_partitions` deletes "
        "them, rewrite the document assets' partition status cache for the new key set from the "
        "cache itself (assets/status_cache.py), so the next asset page does not rebuild it from "
        "every materialization in the event log (5.5 s at 100,000 materialized documents, ~58 s "
        "at a million). Off (0): Dagster rebuilds it on the first asset page after each change.",
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
