"""One dynamic partition per document, and how document partitions are run.

The partition key is the document's sha256 (its doc_id). The policies below are shared by every
per-document asset so that a backfill, a retry and a pool mean the same thing at every stage.
"""

from __future__ import annotations

import dagster as dg

documents_partitions = dg.DynamicPartitionsDefinition(name="documents")

#: pool of the text stage (OCR, on a GPU where there is one): limit it to one slot per GPU
OCR_POOL = "ocr"
#: pool of every step that writes the DuckDB file: DuckDB allows one writing process per file
DUCKDB_WRITER_POOL = "duckdb_writer"

#: Transient failures only ever reach Dagster as exceptions: an ``EngineError`` (OCR engine or
#: model crashed), CUDA out-of-memory, a DuckDB file lock held by another process. Bad input never
#: raises: the core records it on the document (status ``failed`` plus a reason) and the step
#: succeeds, so retrying cannot loop on a broken PDF. Every stage replaces its own output (stage
#: pickles per partition, DuckDB rows per doc_id in one transaction), so a retry changes nothing
#: twice. Exponential backoff with jitter (10 s, 20 s, 40 s, ±) lets a GPU free memory and a lock go.
#: A lost worker (the run process died) is not a step failure: run monitoring marks the run failed
#: and ``run_retries`` in deploy/dagster.yaml re-launches it from the failed steps.
TRANSIENT_RETRY_POLICY = dg.RetryPolicy(
    max_retries=3, delay=10, backoff=dg.Backoff.EXPONENTIAL, jitter=dg.Jitter.PLUS_MINUS
)

#: One run per document in a backfill. ``multi_run(max_partitions_per_run=N > 1)`` would pack N
#: documents into a run, but then each step sees N partition keys (``context.partition_keys``) and
#: the bodies use ``context.partition_key``; worse, the blocking quality checks are evaluated per
#: step, not per partition, so one quarantined document would hold back the knowledge base of the
#: whole batch. The OCR engine is cached per process (resources.core), so per-document runs load it
#: once per run; see the README ("Production") for the batched variant and what it needs.
DOCUMENT_BACKFILL_POLICY = dg.BackfillPolicy.multi_run(max_partitions_per_run=1)
