"""Alerts and freshness: what tells an on-call engineer that ingestion stalled, slowed or fails.

- ``run_failure_alert_sensor``: every failed run, at once, with the most likely fix.
- ``ops_health_sensor``: every few minutes, the alert rules of ``dagster_ocr.admin.rules`` over the
  instance's recent history (document failure and quarantine rates, runs over their time budget,
  GPU memory held high, stale assets); an alert is sent when its condition starts, repeated while
  it lasts (``repeat_after_s``), and followed by a "resolved" notice.
- Freshness checks on ``knowledge_base`` and ``duckdb_tables`` (shown on the assets in the UI) and
  the sensor that evaluates them.

Thin: the sensors gather histories from ``context.instance`` and the core decides.
"""

from __future__ import annotations

import datetime as dt
import logging
import time
import warnings
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import dagster as dg

import assets.dagster_warnings  # noqa: F401  # before the definitions below
from assets.partitions import OWNERS
from dagster_ocr.admin.notify import Alert, Notifier, NotifyError
from dagster_ocr.admin.rules import (
    AlertSettings,
    DocOutcome,
    GpuSample,
    RunInfo,
    deduplicate,
    evaluate_rules,
    resolved_alert,
    run_failure_alert,
)
from resources.notifier import NotifierResource

#: assets whose last update the freshness checks and the staleness rule watch
WATCHED_ASSETS = (dg.AssetKey("knowledge_base"), dg.AssetKey("duckdb_tables"))
#: the asset whose materializations carry each document's final status (metadata "status")
OUTCOME_ASSET = dg.AssetKey("duckdb_tables")
#: the asset whose materializations carry GPU memory figures (metadata "gpu_memory_fraction")
GPU_ASSET = dg.AssetKey("document_text")
#: how many events of each kind one tick reads at most (bounds a tick's cost on a large instance)
EVENT_LIMIT = 1000

#: the dynamic partitions of documents (assets.partitions.documents_partitions)
DOCUMENTS_PARTITIONS = "documents"
#: how many of the first document partitions are asked for their first run (the earliest wins)
LANDED_PROBE = 5

_PARTITION_TAG = "dagster/partition"
_FILE_TAG = "dagster-ocr/file_name"


def _send(notifier: Notifier, alerts: Sequence[Alert], log: logging.Logger) -> int:
    sent = 0
    for alert in alerts:
        try:
            notifier.notify(alert)
            sent += 1
        except NotifyError as exc:
            # a delivery failure must not fail the tick: the log notifier already recorded it
            log.error(f"alert {alert.key} not delivered: {exc}")
    return sent


def _has_error(event: dg.DagsterEvent) -> bool:
    return getattr(event.event_specific_data, "error", None) is not None


def _root_cause(error) -> str:
    """The innermost error's message first: Dagster wraps the user's exception in its own."""
    chain = []
    while error is not None:
        chain.append(error.message.strip())
        error = error.cause or error.context
    return "\n".join(reversed(chain))


@dg.run_failure_sensor(
    name="run_failure_alert_sensor",
    description="Notify on every failed run, with the failed steps and the likely fix.",
    default_status=dg.DefaultSensorStatus.RUNNING,
    monitor_all_code_locations=False,
    metadata={"owners": ", ".join(OWNERS)},  # run_failure_sensor takes no owners= in Dagster 1.13
)
def run_failure_alert_sensor(context: dg.RunFailureSensorContext, notifier: NotifierResource) -> None:
    run = context.dagster_run
    failures = context.get_step_failure_events()
    steps = [e.step_key for e in failures if e.step_key]
    errors = [_root_cause(e.event_specific_data.error) for e in failures if _has_error(e)]
    message = "\n".join(errors) or (context.failure_event.message or "")
    alert = run_failure_alert(
        run.run_id,
        run.job_name,
        message,
        partition=run.tags.get(_PARTITION_TAG),
        file_name=run.tags.get(_FILE_TAG),
        failed_steps=steps,
    )
    _send(notifier.notifier(context.log), [alert], context.log)


def _materializations(
    instance: dg.DagsterInstance, key: dg.AssetKey, since: float
) -> Iterator[tuple[Any, Mapping[str, Any]]]:
    """(record, metadata) of the asset's materializations after ``since``."""
    for record in instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=key, after_timestamp=since), limit=EVENT_LIMIT
    ).records:
        yield record, (record.asset_materialization.metadata if record.asset_materialization else {})


def recent_history(
    instance: dg.DagsterInstance, now: float, settings: AlertSettings
) -> tuple[list[DocOutcome], list[RunInfo], list[GpuSample], dict[str, float | None]]:
    """Document outcomes, runs, GPU samples and last updates of the watched assets from the instance."""
    since = now - max(settings.window_s, settings.gpu_memory_duration_s)
    outcomes = []
    for record, meta in _materializations(instance, OUTCOME_ASSET, since):
        status = meta.get("status")
        if status is not None and record.partition_key:
            outcomes.append(DocOutcome(record.partition_key, str(status.value), record.timestamp))

    since_dt = dt.datetime.fromtimestamp(now - settings.window_s, tz=dt.UTC)
    runs = []
    records = [
        *instance.get_run_records(dg.RunsFilter(statuses=[dg.DagsterRunStatus.STARTED]), limit=EVENT_LIMIT),
        *instance.get_run_records(dg.RunsFilter(updated_after=since_dt), limit=EVENT_LIMIT),
    ]
    seen = set()
    for rec in records:
        run = rec.dagster_run
        if run.run_id in seen:
            continue
        seen.add(run.run_id)
        partition = run.tags.get(_PARTITION_TAG)
        runs.append(
            RunInfo(run.run_id, run.job_name, run.status.value, rec.start_time, rec.end_time, partition)
        )
        # a failed document run never reaches duckdb_tables: count the document as failed
        if run.status == dg.DagsterRunStatus.FAILURE and partition and rec.end_time:
            outcomes.append(DocOutcome(partition, "failed", rec.end_time, run.tags.get(_FILE_TAG, "")))

    gpu = []
    for record, meta in _materializations(instance, GPU_ASSET, since):
        fraction = meta.get("gpu_memory_fraction")
        if fraction is not None and fraction.value is not None:
            gpu.append(GpuSample(record.timestamp, float(fraction.value)))

    last_updates: dict[str, float | None] = {}
    for key in WATCHED_ASSETS:
        last_updates[key.to_user_string()] = last_update(instance, key)
    return outcomes, runs, gpu, last_updates


def last_update(instance: dg.DagsterInstance, key: dg.AssetKey) -> float | None:
    """When the asset last changed or was last decided on: its latest materialization, or a later
    observation carrying ``dagster/last_updated_timestamp`` (knowledge_base records one for a
    document it rightly leaves out, so a run of quarantined documents never reads "stale")."""
    event = instance.get_latest_materialization_event(key)
    at = event.timestamp if event else None
    for record in instance.fetch_observations(dg.AssetRecordsFilter(asset_key=key), limit=1).records:
        observation = record.asset_observation
        stamp = observation.metadata.get("dagster/last_updated_timestamp") if observation else None
        if stamp is not None and (at is None or float(stamp.value) > at):
            at = float(stamp.value)
    return at


def documents_landed_at(instance: dg.DagsterInstance) -> float | None:
    """When the first document landed: None while none has (no document partition exists).

    The first run of the first document partition says when (sensor, schedule, backfill or the
    launchpad alike); a partition with no run yet landed just now. Before then "never updated" and
    "never observed" describe an empty instance, not a stalled one, so nothing alerts on them.
    """
    # the first few keys only (a bounded, indexed query): reading every key cost these sensors
    # ~2 s per 100,000 documents on every tick (docs/scale.md)
    keys = instance.get_paginated_dynamic_partitions(
        DOCUMENTS_PARTITIONS, limit=LANDED_PROBE, ascending=True
    ).results
    if not keys:
        return None
    starts = [
        rec.create_timestamp.timestamp()
        for key in keys
        for rec in instance.get_run_records(
            dg.RunsFilter(tags={_PARTITION_TAG: key}), limit=1, ascending=True
        )
    ]
    return min(starts) if starts else time.time()


def watched_updates(
    last_updates: Mapping[str, float | None], landed_at: float | None, now: float, max_age_s: float
) -> dict[str, float | None]:
    """The last updates the staleness rule judges: an asset never updated counts only once the
    first document landed longer than ``max_age_s`` ago (so a fresh instance, or the first
    document's run in flight, says nothing); an asset updated once is always judged."""
    old_enough = landed_at is not None and now - landed_at > max_age_s
    return {k: at for k, at in last_updates.items() if at is not None or old_enough}


def build_health_sensor(
    settings: AlertSettings | None = None, minimum_interval_seconds: int = 300
) -> dg.SensorDefinition:
    """The sensor applying the alert rules to the instance's recent history every few minutes."""
    s = settings or AlertSettings()

    @dg.sensor(
        name="ops_health_sensor",  # a deployment keeps the sensor's on/off state under this name
        minimum_interval_seconds=minimum_interval_seconds,
        default_status=dg.DefaultSensorStatus.RUNNING,
        owners=OWNERS,
        description="Alert on document failure/quarantine rates, runs over budget, GPU memory held high "
        "and stale assets (thresholds: dagster_ocr.admin.rules.AlertSettings). Quiet on an empty "
        "instance: an asset never updated is stale only once the first document landed longer ago "
        "than max_age_s.",
    )
    def ops_health_sensor(context: dg.SensorEvaluationContext, notifier: NotifierResource) -> dg.SkipReason:
        now = time.time()
        outcomes, runs, gpu, last_updates = recent_history(context.instance, now, s)
        last_updates = watched_updates(last_updates, documents_landed_at(context.instance), now, s.max_age_s)
        firing = evaluate_rules(outcomes, runs, gpu, now, s, last_updates)
        to_send, resolved, cursor = deduplicate(firing, context.cursor, now, s.repeat_after_s)
        sink = notifier.notifier(context.log)
        sent = _send(sink, [*to_send, *(resolved_alert(k) for k in resolved)], context.log)
        context.update_cursor(cursor)
        summary = ", ".join(a.key for a in firing) or "healthy"
        return dg.SkipReason(f"{len(firing)} condition(s) firing ({summary}); {sent} notification(s) sent")

    return ops_health_sensor


def build_freshness(max_age: dt.timedelta = dt.timedelta(hours=26)) -> list:
    """Last-update freshness checks on the watched assets plus the sensor that evaluates them.

    Dagster 1.12+ calls these checks superseded by ``FreshnessPolicy`` (see
    ``with_freshness_policies``), but the policies are a preview that needs ``freshness: enabled``
    in dagster.yaml and only alert in Dagster+; the checks work on any instance, show on the asset
    page, and the health sensor notifies on the same condition.
    """
    with warnings.catch_warnings():
        # the SupersessionWarning above, once per code-location load (any other warning still shows)
        warnings.simplefilter("ignore", dg.SupersessionWarning)
        checks = dg.build_last_update_freshness_checks(
            assets=list(WATCHED_ASSETS), lower_bound_delta=max_age, severity=dg.AssetCheckSeverity.WARN
        )
        evaluate = dg.build_sensor_for_freshness_checks(
            freshness_checks=checks, name="freshness_checks_sensor", minimum_interval_seconds=600
        )

    @dg.sensor(
        name="freshness_checks_sensor",
        minimum_interval_seconds=600,
        asset_selection=dg.AssetSelection.checks(*checks),
        default_status=dg.DefaultSensorStatus.RUNNING,
        # the factory's sensor takes no owners: record them as metadata (shown on the sensor's page)
        metadata={"owners": ", ".join(OWNERS)},
        description="Evaluate the freshness checks of "
        f"{', '.join(k.to_user_string() for k in WATCHED_ASSETS)} "
        f"(fail when not updated for {max_age.total_seconds() / 3600:.0f} h). Quiet on an empty instance: "
        "it starts evaluating once the watched assets were first updated, or the first document landed "
        "longer ago than that.",
    )
    def freshness_checks_sensor(context: dg.SensorEvaluationContext):
        # Dagster's own sensor evaluates a check never run at once: on an empty instance that is
        # a run whose checks fail "never observed". Hand over once there is something to judge.
        instance = context.instance
        updated = all(last_update(instance, key) is not None for key in WATCHED_ASSETS)
        landed_at = documents_landed_at(instance)
        if not updated and (landed_at is None or time.time() - landed_at <= max_age.total_seconds()):
            return dg.SkipReason(
                "no document has landed yet"
                if landed_at is None
                else "the first documents are still on their way"
            )
        return evaluate(context)

    return [*checks, freshness_checks_sensor]


def with_freshness_policies(
    assets: Sequence[dg.AssetsDefinition | dg.AssetSpec], max_age: dt.timedelta = dt.timedelta(hours=26)
) -> list[dg.AssetsDefinition | dg.AssetSpec]:
    """``assets`` with a time-window ``FreshnessPolicy`` on the watched ones (the 1.13 freshness API).

    Warn after ``max_age`` minus two hours, fail after ``max_age``. The UI shows the state once the
    instance enables it (dagster.yaml: ``freshness: {enabled: true}``).
    """
    policy = dg.FreshnessPolicy.time_window(
        fail_window=max_age, warn_window=max(max_age - dt.timedelta(hours=2), max_age / 2)
    )

    def attach(spec: dg.AssetSpec) -> dg.AssetSpec:
        return dg.apply_freshness_policy(spec, policy) if spec.key in WATCHED_ASSETS else spec

    return [
        a.map_asset_specs(attach)
        if isinstance(a, dg.AssetsDefinition) and set(a.keys) & set(WATCHED_ASSETS)
        else a
        for a in assets
    ]


def build_alert_definitions(settings: AlertSettings | None = None) -> list:
    """Sensors and checks to add to ``Definitions`` (asset checks go to ``asset_checks=``)."""
    s = settings or AlertSettings()
    return [
        run_failure_alert_sensor,
        build_health_sensor(s),
        *build_freshness(dt.timedelta(seconds=s.max_age_s)),
    ]


#: everything the lead adds to Definitions: sensors to ``sensors=``, checks to ``asset_checks=``
alert_definitions = build_alert_definitions()
alert_sensors = [d for d in alert_definitions if isinstance(d, dg.SensorDefinition)]
alert_asset_checks = [d for d in alert_definitions if isinstance(d, dg.AssetChecksDefinition)]
