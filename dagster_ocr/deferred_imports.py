"""Import a library without the modules it imports for features this process never uses.

``import great_expectations`` imports every expectation class GX ships, and one of them (the KL
divergence expectation, which the gate does not use) imports ``scipy.stats`` and ``altair`` for
its statistics and charts: about 1.2 CPU s of GX's 2-3.5 s import, paid by every run's process.
Inside :func:`deferred` those modules are stand-ins: an ``import`` of them succeeds at once, and
the real module is imported on the first use of one of its attributes (so nothing breaks if a
feature that needs it does run; it only costs then). The stand-ins leave ``sys.modules`` when the
block ends, so code imported later gets the real modules as usual.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import sys
import threading
import types
from collections.abc import Iterator

_LOCK = threading.Lock()


class _StandIn(types.ModuleType):
    """A module object that imports the real module on its first attribute use and delegates to it."""

    def __init__(self, name: str, spec: importlib.machinery.ModuleSpec):
        super().__init__(name)
        # ``import name`` reads ``__spec__`` (is it still initializing?) without using the module
        self.__spec__ = spec
        self.__loader__ = spec.loader
        self.__package__ = spec.parent

    def __getattr__(self, attr: str) -> object:  # only attributes the stand-in lacks
        with _LOCK:
            real = self.__dict__.get("_deferred_real")
            if real is None:
                name = self.__name__
                if sys.modules.get(name) is self:  # used inside the block: import the real one now
                    del sys.modules[name]
                real = importlib.import_module(name)
                self.__dict__["_deferred_real"] = real
        return getattr(real, attr)

    @property
    def loaded(self) -> bool:
        """Whether the real module has been imported through this stand-in."""
        return "_deferred_real" in self.__dict__


@contextlib.contextmanager
def deferred(*names: str) -> Iterator[dict[str, _StandIn]]:
    """Within the block, ``import`` of each of ``names`` (not imported yet) gets a stand-in that
    imports the real module on first attribute use; yields the stand-ins by name.

    A name already imported, or not installed, is left alone (its import behaves as usual).
    """
    placed: dict[str, _StandIn] = {}
    for name in names:
        if name in sys.modules:
            continue
        spec = importlib.util.find_spec(name)  # imports the parent package, if any (cheap ones)
        if spec is None:
            continue
        placed[name] = sys.modules[name] = _StandIn(name, spec)
    try:
        yield placed
    finally:
        for name, stand_in in placed.items():
            if sys.modules.get(name) is stand_in:
                del sys.modules[name]
