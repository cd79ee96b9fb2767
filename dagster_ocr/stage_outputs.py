"""Stage outputs across versions of this code: the one place an older output is brought up to date.

Each stage's output (an ``ExtractedDocument``, the labels, the tables, a ``ParagraphResult``) is
pickled between stages by the Dagster IO manager, and kept: a stage re-run weeks later, after an
upgrade, reads what an older version wrote. The model's dataclasses have slots, and an older
pickle of one lacks the fields added since (reading one raises ``AttributeError``). Rather than
guard every read with ``getattr(obj, name, default)``, every output is stored as a
:class:`StageOutput` carrying :data:`STAGE_OUTPUT_VERSION`, and :func:`unwrap` upgrades one of an
earlier version (or a bare pickle: version 0) by giving each missing field its default.

Bump :data:`STAGE_OUTPUT_VERSION` when a change to ``dagster_ocr.model`` needs more than defaults
(a renamed or re-typed field, one derived from the others), and migrate that case in
:func:`upgrade`. The versions so far:

1. the first versioned outputs;
2. ``Page.blank``: derived from ``route_reason`` for an older page (``model.upgrade_page``, also
   what the page store reads older pages with), not defaulted;
3. ``ExtractedDocument.settings``, the settings snapshot the text stage resolved for the later
   stages. An older output does not know what it was parsed under: it gets the settings in force
   when it is read (``settings_now``, from the IO manager's settings resource), which is what the
   version that wrote it had every stage use, and the read is logged;
4. ``Page.skew``, the tilt of an OCR'd page's lines. A slotted page pickled by version 3 has no
   such attribute at all (a version-3 output is read as is, unfilled), so the bump is what gives
   it the default 0.0: its tables are looked for on the image as scanned, as version 3 did;
5. ``Table.heads``, the lines of column headings printed above a table's grid that it holds. A
   version-4 table gets none: its paragraphs, written by the same version, hold those lines.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from dagster_ocr import model

if TYPE_CHECKING:
    from dagster_ocr.settings import SettingsSnapshot

log = logging.getLogger(__name__)

#: the version of the stage outputs' shape this code writes (see the module's docstring)
STAGE_OUTPUT_VERSION = 5

#: the model's dataclasses: only these are walked and filled in
_MODEL_TYPES = tuple(
    cls for cls in vars(model).values() if isinstance(cls, type) and dataclasses.is_dataclass(cls)
)
#: model types some of whose fields an older object gets from its other fields, not a default:
#: ``fields (name -> value) -> fields`` with the missing ones filled in
_DERIVED = {model.Page: model.upgrade_page}


@dataclasses.dataclass(frozen=True, slots=True)
class StageOutput:
    """A stage's output as stored: its value and the version of the code that wrote it."""

    version: int
    value: Any


def wrap(value: Any) -> StageOutput:
    return StageOutput(STAGE_OUTPUT_VERSION, value)


def unwrap(stored: Any, settings_now: Callable[[], SettingsSnapshot] | None = None) -> tuple[Any, int]:
    """The stored output's value in this version's shape, and the version it was written by.

    ``settings_now`` gives an older text-stage output (version < 3) the settings in force now;
    without it such an output keeps ``settings`` None, and a stage that needs them says so.
    """
    if isinstance(stored, StageOutput):
        if stored.version == STAGE_OUTPUT_VERSION:
            return stored.value, stored.version
        version, value = stored.version, stored.value
    else:  # written before outputs carried a version
        version, value = 0, stored
    filled = upgrade(value, settings_now if version < 3 else None)
    log.info(
        "stage output of version %d upgraded to %d (%d field(s) given defaults)",
        version,
        STAGE_OUTPUT_VERSION,
        filled,
    )
    return value, version


def upgrade(value: Any, settings_now: Callable[[], SettingsSnapshot] | None = None) -> int:
    """Give every model dataclass inside ``value`` the fields it lacks, in place: derived from its
    other fields where the model says how (``_DERIVED``), else their defaults.

    Walks lists, tuples and dict values; a ``pagestore.PageList`` (pages kept on disk) is not a
    list and is left to the page store, which reads its pages field by field. An
    ``ExtractedDocument`` without its settings snapshot gets ``settings_now()`` where given (see
    version 3 in the module's docstring). Returns the number of fields filled.
    """
    filled = 0
    stack = [value]
    seen: set[int] = set()
    while stack:
        obj = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if isinstance(obj, list | tuple):
            stack.extend(obj)
        elif isinstance(obj, dict):
            stack.extend(obj.values())
        elif isinstance(obj, _MODEL_TYPES):
            derived: dict[str, Any] = {}
            for f in dataclasses.fields(obj):
                try:
                    stack.append(getattr(obj, f.name))
                except AttributeError:
                    if type(obj) in _DERIVED and not derived:
                        present = {
                            g.name: getattr(obj, g.name)
                            for g in dataclasses.fields(obj)
                            if hasattr(obj, g.name)
                        }
                        derived = _DERIVED[type(obj)](present)
                    if f.name in derived:
                        setattr(obj, f.name, derived[f.name])
                    elif f.default is not dataclasses.MISSING:
                        setattr(obj, f.name, f.default)
                    elif f.default_factory is not dataclasses.MISSING:
                        setattr(obj, f.name, f.default_factory())
                    else:  # a required field cannot be guessed: say which
                        raise ValueError(
                            f"a stored {type(obj).__name__} lacks its required field {f.name!r}: "
                            "re-run the stage that wrote it"
                        ) from None
                    filled += 1
            if isinstance(obj, model.ExtractedDocument) and obj.settings is None and settings_now:
                obj.settings = settings_now()
                log.warning(
                    "%s: a text-stage output stored without its settings, given those in force now (%s)",
                    obj.source.file_name,
                    obj.settings.hash,
                )
    return filled
