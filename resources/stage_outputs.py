"""The IO manager of the stage outputs: Dagster's pickles on disk, each stamped with its version.

Dagster's ``FilesystemIOManager`` (one file per asset and partition under ``base_dir``), except
that a value is stored inside a ``StageOutput`` with the version of the code that wrote it, and
one read back from an earlier version (or from before outputs carried one) is upgraded by
:func:`dagster_ocr.stage_outputs.unwrap`, the one place that knows how. An older text-stage output,
stored before outputs carried the settings they were parsed under, is given the settings resource's
settings as they are when it is read (what that version's stages used).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import dagster as dg

# Dagster's own class behind FilesystemIOManager (not exported): subclassed, not copied, so its
# paths stay those of every earlier run, partition keys escaped as Dagster escapes them
from dagster._core.log_manager import has_log_record_event
from dagster._core.storage.fs_io_manager import PickledObjectFilesystemIOManager

from dagster_ocr.settings import SettingsSnapshot
from dagster_ocr.stage_outputs import STAGE_OUTPUT_VERSION, unwrap, wrap
from resources.core import SettingsResource

if TYPE_CHECKING:
    from upath import UPath


class _NoDebugLines(logging.Filter):
    """Drops a log manager's DEBUG lines; its Dagster events (some logged at DEBUG) pass."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno > logging.DEBUG or has_log_record_event(record)


_NO_DEBUG_LINES = _NoDebugLines()


@contextlib.contextmanager
def _no_debug_lines(context: dg.InputContext | dg.OutputContext) -> Iterator[None]:
    """The step's log without its DEBUG lines for the block (INFO and up, and events, as ever).

    Dagster's file IO manager logs three DEBUG lines a stage output ("Loading 1 partitions...",
    "Loading partition K from P", "Writing file at: P"): 22 of a document's ~135 events, each
    stored in the run's event log (a SQLite instance opens a connection per event: ~2-7 CPU ms
    each). What they say is in the run already: the output's path is its HANDLED_OUTPUT event's
    metadata, and an input is the output of its asset's partition.
    """
    log = context.log
    log.addFilter(_NO_DEBUG_LINES)
    try:
        yield
    finally:
        log.removeFilter(_NO_DEBUG_LINES)


class _VersionedPickles(PickledObjectFilesystemIOManager):
    def __init__(self, base_dir: str, settings: SettingsResource | None) -> None:
        super().__init__(base_dir=base_dir)
        self.settings = settings

    def load_input(self, context: dg.InputContext) -> Any:
        with _no_debug_lines(context):
            return super().load_input(context)

    def handle_output(self, context: dg.OutputContext, obj: Any) -> None:
        with _no_debug_lines(context):
            super().handle_output(context, obj)

    def _settings_now(self) -> SettingsSnapshot:
        assert self.settings is not None
        return SettingsSnapshot.of(self.settings.load())

    def dump_to_path(self, context: dg.OutputContext, obj: Any, path: UPath) -> None:
        super().dump_to_path(context, wrap(obj), path)

    def load_from_path(self, context: dg.InputContext, path: UPath) -> Any:
        value, version = unwrap(
            super().load_from_path(context, path), self._settings_now if self.settings else None
        )
        if version != STAGE_OUTPUT_VERSION:
            context.log.info(f"{path.name}: a stage output of version {version}, upgraded on read")
        return value


class StageOutputsIOManager(dg.FilesystemIOManager):
    """``FilesystemIOManager`` with versioned values (see the module's docstring).

    ``settings``: the pipeline's settings resource, read only to upgrade an older text-stage output.
    """

    settings: SettingsResource | None = None

    def create_io_manager(self, context: dg.InitResourceContext) -> _VersionedPickles:
        base_dir = self.base_dir or context.instance.storage_directory()  # type: ignore[union-attr]
        return _VersionedPickles(base_dir=base_dir, settings=self.settings)
