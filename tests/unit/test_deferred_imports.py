"""Deferred imports (issue 36): GX's import leaves out scipy.stats and altair until one is used.

Each check runs in a fresh interpreter: which modules are imported is process-wide state.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _run(code: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], cwd=REPO, capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_deferred_module_is_imported_on_first_use_and_works_as_the_real_one():
    seen = _run(
        """
        import json, sys
        from dagster_ocr.deferred_imports import deferred
        with deferred("xml.dom.minidom", "colorsys") as placed:
            from xml.dom import minidom     # the two import forms a library uses
            import colorsys as cs
        after_import = ["xml.dom.minidom" in sys.modules, "colorsys" in sys.modules]
        doc = minidom.parseString("<a><b/></a>")   # first use: the real module is imported
        rgb = cs.hsv_to_rgb(0.0, 1.0, 1.0)
        import colorsys                             # code imported later gets the real module
        print(json.dumps({
            "placed": sorted(placed),
            "after_import": after_import,
            "works": [doc.documentElement.firstChild.tagName, list(rgb)],
            "loaded": [placed["xml.dom.minidom"].loaded, placed["colorsys"].loaded],
            "real_later": colorsys is not cs and colorsys.hsv_to_rgb is cs.hsv_to_rgb,
        }))
        """
    )
    assert seen["placed"] == ["colorsys", "xml.dom.minidom"]
    assert seen["after_import"] == [False, False]
    assert seen["works"] == ["b", [1.0, 0.0, 0.0]]
    assert seen["loaded"] == [True, True]
    assert seen["real_later"]


def test_modules_already_imported_or_missing_are_left_alone():
    seen = _run(
        """
        import json, sys, colorsys
        from dagster_ocr.deferred_imports import deferred
        with deferred("colorsys", "no_such_module_here") as placed:
            import colorsys as again
        print(json.dumps({"placed": sorted(placed), "same": again is colorsys}))
        """
    )
    assert seen == {"placed": [], "same": True}


def test_the_gate_runs_without_importing_scipy_stats_or_altair():
    seen = _run(
        """
        import json, sys
        from dagster_ocr.quality import GX_DEFERRED, _gx_state
        from dagster_ocr.quality_settings import QualitySettings
        _gx_state(QualitySettings())
        print(json.dumps({"gx": "great_expectations" in sys.modules,
                          "imported": [m for m in GX_DEFERRED if m in sys.modules]}))
        """
    )
    assert seen == {"gx": True, "imported": []}
