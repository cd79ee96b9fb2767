"""One dynamic partition per document, and how document partitions are run.

The partition key is the document's name for people, ``<file stem>-<12 hex digits of its sha256>``
(dagster_ocr.partition_keys); the doc_id (the whole sha256) stays its identity in the warehouse and
is in every run's tags and the assets' metadata. Keys of the old form (the bare sha256, from
instances made before readable keys) resolve as before. The policies below are shared by every
per-document asset so that a backfill, a retry and a pool mean the same thing at every stage.
"""

from __future__ import annotations

import dagster as dg

from dagster_ocr import partition_keys
from dagster_ocr.ingest import DocumentStore

documents_partitions = dg.DynamicPartitionsDefinition(name="documents")

#: who answers for every asset, check, sensor, schedule and job of this code location (shown in
#: the UI's catalog and filters; a deployment with several teams splits it per group)
OWNERS = ["team:document_pipeline"]

#: run tags that name the document; the instance's per-document run limit keys on Dagster's own
#: ``dagster/partition`` tag, which every partitioned run carries (backfill runs included)
DOC_ID_TAG = "dagster-ocr/doc_id"
FILE_NAME_TAG = "dagster-ocr/file_name"
#: a document run's outcome (parsed / quarantined / failed), shown beside a green run in the run list
OUTCOME_TAG = "dagster-ocr/outcome"
#: why a held-back document's run held it back (the gate's reason, shortened), on that run's row in
#: the Runs page; the quarantine list's run names the documents held back under the same key. Only
#: held-back runs carry it, so their rows read differently at a glance. No ``dagster-ocr/`` prefix:
#: the Runs page clips a tag at its column's edge (about 48 characters at 1600 px), and the key
#: takes its share of them
HELD_BACK_TAG = "held_back"
#: Dagster caps tag values (and PostgreSQL's index on them); every name and reason fits in this
TAG_VALUE_MAX = 200


def tag_value(text: str, limit: int = TAG_VALUE_MAX) -> str:
    """``text`` on one line, cut to ``limit`` characters (with an ellipsis where it was cut)."""
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def document_tags(doc_id: str, file_name: str) -> dict[str, str]:
    """The tags of one document's run: find a document's runs by id or file name in the UI."""
    # tag values are capped by Dagster (and by Postgres' index); 200 characters keeps every name
    return {DOC_ID_TAG: doc_id, FILE_NAME_TAG: file_name[:TAG_VALUE_MAX]}


def resolve_document(context: dg.AssetExecutionContext, store: DocumentStore) -> str:
    """The doc_id the step's partition key names. A key that names no document (typed into the
    UI's "Add partition") fails the step at once with what to do, and is never retried."""
    try:
        return partition_keys.resolve(context.partition_key, store)
    except partition_keys.PartitionKeyError as exc:
        raise dg.Failure(
            description=str(exc),
            metadata={"partition_key": context.partition_key},
            allow_retries=False,  # bad input: a retry policy must not spend minutes on it
        ) from None


def tag_run(context: dg.AssetExecutionContext, doc_id: str, file_name: str, **extra: str) -> None:
    """Put the document's tags on the run, whoever launched it (sensor, backfill, launchpad), so
    the run list can be filtered by file name and doc_id. Cheap and idempotent."""
    tags = document_tags(doc_id, file_name) | extra
    if any(context.run.tags.get(k) != v for k, v in tags.items()):
        context.instance.add_run_tags(context.run_id, tags)


#: pool of the text stage (OCR, on a GPU where there is one): limit it to one slot per GPU
OCR_POOL = "ocr"
#: pool of every step that writes the DuckDB file: DuckDB allows one writing process per file
DUCKDB_WRITER_POOL = "duckdb_writer"
#: pool of the embedding step (kb_vectors): outside the writers' pool; the model uses every core
EMBEDDINGS_POOL = "embeddings"

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
#: once per run; see docs/production.md ("Backfills") for the batched variant and what it needs.
DOCUMENT_BACKFILL_POLICY = dg.BackfillPolicy.multi_run(max_partitions_per_run=1)
