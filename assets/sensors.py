"""Finding new documents: an inbox sensor, and a nightly schedule doing the same sweep."""

import dagster as dg

from assets.partitions import documents_partitions
from dagster_ocr.ingest import ingest_inbox
from resources import DocumentStoreResource

document_job = dg.define_asset_job(
    "ingest_document",
    selection=dg.AssetSelection.groups("documents", "warehouse"),
    description="Parse one document through every stage into the warehouse and the knowledge base.",
    tags={"dagster-ocr/job": "ingest"},
)


def _new_documents(instance: dg.DagsterInstance, store: DocumentStoreResource) -> list[tuple[str, str]]:
    """Register inbox files; (doc_id, file_name) of those without a partition yet."""
    known = set(instance.get_dynamic_partitions(documents_partitions.name))
    found = ingest_inbox(store.inbox_dir, store.store())
    return [(rec.doc_id, rec.file_name) for rec, _ in found if rec.doc_id not in known]


def _run_requests(new: list[tuple[str, str]]) -> list[dg.RunRequest]:
    return [
        dg.RunRequest(
            run_key=doc_id,
            partition_key=doc_id,
            tags={"dagster-ocr/file_name": name[:200], "dagster-ocr/doc_id": doc_id},
        )
        for doc_id, name in new
    ]


@dg.sensor(job=document_job, minimum_interval_seconds=30, default_status=dg.DefaultSensorStatus.STOPPED)
def inbox_sensor(context: dg.SensorEvaluationContext, store: DocumentStoreResource) -> dg.SensorResult:
    """Adds one partition per new document in the inbox and requests its run.

    The run key is the doc_id, so a document is requested once even if the sensor restarts.
    """
    new = _new_documents(context.instance, store)
    if new:
        context.log.info(f"{len(new)} new document(s) in {store.inbox_dir}")
    return dg.SensorResult(
        run_requests=_run_requests(new),
        dynamic_partitions_requests=[documents_partitions.build_add_request([d for d, _ in new])]
        if new
        else [],
    )


@dg.schedule(
    job=document_job,
    cron_schedule="0 2 * * *",
    execution_timezone="UTC",
    default_status=dg.DefaultScheduleStatus.STOPPED,
)
def nightly_ingestion(context: dg.ScheduleEvaluationContext, store: DocumentStoreResource):
    """The nightly sweep of the inbox, for deployments that do not run the sensor."""
    new = _new_documents(context.instance, store)
    if new:
        context.instance.add_dynamic_partitions(documents_partitions.name, [d for d, _ in new])
        return _run_requests(new)
    return dg.SkipReason("no new documents in the inbox")
