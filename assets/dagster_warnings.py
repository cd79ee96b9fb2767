"""Dagster's warnings about beta features this code location uses on purpose, silenced at the source.

Dagster warns once per use of a beta parameter, so every code-location load (``make demo``, each
``dagster-ocr run``, ``make ui``) printed seven BetaWarnings nobody can act on. Each filter below
names one feature and why we use it; it matches that warning's category and message, raised from
Dagster's own modules (or ours, for the ``owners`` we set), and nothing else, so a new beta or
deprecation warning still shows.
Imported by the modules whose definitions raise them (documents, definitions) before they define
anything.
"""

from __future__ import annotations

import re
import warnings

import dagster as dg

#: (category, start of the message) of each warning silenced, with why the feature is used
DELIBERATE: tuple[tuple[type[Warning], str], ...] = (
    # one run per document in a backfill, on every per-document asset (assets/partitions.py)
    (dg.BetaWarning, "Parameter `backfill_policy` of function `asset` is currently in beta"),
    # one verdict per document: the quality checks are partitioned like their asset, so the UI
    # shows each result's partition and a status per document (assets/documents.py)
    (dg.PreviewWarning, "Specifying a partitions_def on an AssetCheckSpec is currently in preview"),
    # owners on every sensor, schedule and job (assets.partitions.OWNERS): the UI's catalog and
    # filters show who answers for each; Dagster also raises these when it binds a sensor to a job
    (dg.BetaWarning, "Parameter `owners` of initializer `SensorDefinition.__init__` is currently in beta"),
    (dg.BetaWarning, "Parameter `owners` of function `sensor` is currently in beta"),
    (dg.BetaWarning, "Parameter `owners` of function `schedule` is currently in beta"),
    (dg.BetaWarning, "Parameter `owners` of initializer `ScheduleDefinition.__init__` is currently in beta"),
    (dg.BetaWarning, "Parameter `owners` of function `job` is currently in beta"),
    (dg.BetaWarning, "Parameter `owners` of function `GraphDefinition.to_job` is currently in beta"),
    (dg.BetaWarning, "Parameter `owners` of initializer `JobDefinition.__init__` is currently in beta"),
)


def silence_deliberate_warnings() -> None:
    """Install the filters (idempotent: ``warnings`` drops a filter equal to one it holds)."""
    for category, message in DELIBERATE:
        # some decorators' warnings are attributed to the module calling them (ours), others to Dagster's
        module = (
            r"(assets|dagster)\." if "`owners`" in message or "AssetCheckSpec" in message else r"dagster\."
        )
        warnings.filterwarnings("ignore", message=re.escape(message), category=category, module=module)


silence_deliberate_warnings()
