"""Dagster's warnings about beta features this code location uses on purpose, silenced at the source.

Dagster warns once per use of a beta parameter, so every code-location load (``make demo``, each
``dagster-ocr run``, ``make ui``) printed seven BetaWarnings nobody can act on. Each filter below
names one feature and why we use it; it matches that warning's category and message, raised from
Dagster's own modules, and nothing else, so a new beta or deprecation warning still shows.
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
    # raised by Dagster itself when it binds a sensor to its jobs; we set no owners anywhere
    (dg.BetaWarning, "Parameter `owners` of initializer `SensorDefinition.__init__` is currently in beta"),
)


def silence_deliberate_warnings() -> None:
    """Install the filters (idempotent: ``warnings`` drops a filter equal to one it holds)."""
    for category, message in DELIBERATE:
        warnings.filterwarnings("ignore", message=re.escape(message), category=category, module=r"dagster\.")


silence_deliberate_warnings()
