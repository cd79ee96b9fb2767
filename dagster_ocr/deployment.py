"""Deployment settings: how a code location runs its documents, read from ``DAGSTER_OCR_*`` variables.

Unlike :class:`dagster_ocr.settings.Settings` (how a document is parsed, carried on each document),
these say how the deployment schedules work; they are read once when the code location loads
(``assets/definitions.py``) and rendered into docs/configuration.md by ``dagster_ocr.settings_docs``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

#: every field ``name`` is read from the environment variable ``DAGSTER_OCR_<NAME>``
ENV_PREFIX = "DAGSTER_OCR_"
#: ``documents_per_run``'s adaptive setting: batch only a tick larger than the runs it may request
AUTO = "auto"
MAX_DOCUMENTS_PER_RUN = 10_000

#: documents per run: ``"auto"``, or a fixed number (1: one run per document)
DocumentsPerRun = Annotated[int, Field(ge=1, le=MAX_DOCUMENTS_PER_RUN)] | Literal["auto"]


def batch_sizes(n: int, documents_per_run: int | str, runs_per_tick: int) -> list[int] | None:
    """How ``n`` new documents (one sensor tick, or one backfill) are cut into ``ingest_documents``
    batch runs: each batch's size, in order, or None for one ``ingest_document`` run per document.

    A fixed ``documents_per_run`` N > 1 cuts them into batches of N (the last one shorter), and 1
    never batches. ``"auto"`` requests one run per document while ``n`` ≤ ``runs_per_tick`` (R), so
    small ticks are exactly what they were, and otherwise exactly R batches of balanced sizes
    (⌈n/R⌉ or ⌊n/R⌋ documents). Why this costs no parallelism: a batch runs its documents one after
    the other, so what limits throughput is how many batches the queue can run at once; R is at
    least the run queue's ``max_concurrent_runs`` M and a multiple of it (assets/batches.runs_per_tick),
    so every slot the queue would have filled with a document run gets a batch instead, the batches
    run in full rounds of M, and the documents that wait for a slot wait inside a batch rather than
    in the queue. Only the tail differs: documents take unequal times, and a batch that finishes
    early leaves its slot idle while the others finish (one run per document would have given that
    slot the next document). What it saves is the daemon's ~1 s per run created in the tick: R runs
    instead of n.
    """
    if documents_per_run == AUTO:
        if n <= runs_per_tick:
            return None
        q, r = divmod(n, runs_per_tick)
        return [q + 1] * r + [q] * (runs_per_tick - r)
    per_run = int(documents_per_run)
    return fixed_sizes(n, per_run) if per_run > 1 else None


def fixed_sizes(n: int, per_run: int) -> list[int]:
    """``n`` documents in batches of ``per_run`` (at least 1), in order, the last one shorter."""
    per_run = max(1, per_run)
    full, rest = divmod(n, per_run)
    return [per_run] * full + ([rest] if rest else [])


class DeploymentSettings(BaseModel):
    """Environment variables of a deployment, read when the code location loads."""

    model_config = ConfigDict(extra="forbid")

    documents_per_run: DocumentsPerRun = Field(
        AUTO,
        description="Batch mode for large inboxes and backfills. `auto`: inbox_sensor requests one "
        "`ingest_document` run per new document while a tick finds at most "
        "DAGSTER_OCR_RUNS_PER_TICK (R) of them, and otherwise R `ingest_documents` runs of "
        "balanced sizes (about n/R documents each). R is never below the run queue's "
        "`max_concurrent_runs`, so batching serializes nothing the queue would not have: a tick "
        "with 1,000 new files creates 10 runs instead of 1,000 (about 1 s of the daemon each). "
        "N: one `ingest_documents` run per N new documents whatever the tick's size; 1: always one "
        "run per document (the default before `auto`). A batch runs each document's own "
        "`ingest_document` run (its partition, tags, checks and quarantine) one after the other, "
        "each in its own process. `dagster-ocr backfill --per-run auto|N` batches a backfill the "
        "same way. See docs/scale.md.",
    )
    runs_per_tick: int = Field(
        10,
        ge=1,
        le=10_000,
        description="With DAGSTER_OCR_DOCUMENTS_PER_RUN=auto: the fewest runs a large tick (or "
        "`dagster-ocr backfill --per-run auto`) is cut into. R, the runs it is cut into, is the run "
        "queue's `max_concurrent_runs` M (the instance's dagster.yaml) or, when M is smaller, the "
        "smallest multiple of M at or above this (M = 4: 12 runs, in three full rounds); an "
        "unlimited queue: this. A tick with at most R new documents gets one run per document. "
        "Each run costs the daemon about 1 s to create, so R also bounds a large tick's time "
        "(10: about 6 s for 1,000 new files, docs/scale.md).",
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

    @field_validator("documents_per_run", mode="before")
    @classmethod
    def _auto_or_a_number(cls, value: object) -> object:
        """``auto`` (any case) or a whole number, as the environment spells them; anything else is
        refused naming the variable and what it accepts."""
        number: object = value
        if isinstance(value, str):
            text = value.strip().lower()
            if text == AUTO:
                return AUTO
            try:
                number = int(text)
            except ValueError:
                number = None
        if isinstance(number, int) and not isinstance(number, bool) and 1 <= number <= MAX_DOCUMENTS_PER_RUN:
            return number
        raise ValueError(
            f"{cls.variable('documents_per_run')} is 'auto' or a number of documents per run "
            f"from 1 to {MAX_DOCUMENTS_PER_RUN} (1: one run per document), not {value!r}"
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
