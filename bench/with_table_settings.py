"""Run a bench with other ``TableSettings`` defaults: the on/off pairs of an opt-in table setting.

The table benches (tables_icdar, tables_peers, tables_synthetic, text_fidelity, ...) read
``TableSettings()`` or ``Settings()``; this wrapper changes the named fields' defaults in the
process, then runs the bench script as ``__main__`` with the remaining arguments, so "on" is the
same command as "off" with one prefix::

    PYTHONPATH=. .venv/bin/python bench/with_table_settings.py layout_veto=true bench/tables_icdar.py
    PYTHONPATH=. .venv/bin/python bench/with_table_settings.py layout_veto=true,layout_veto_prose_share=0.5 \\
        bench/tables_synthetic.py --n 40 --per-class

Values are read as JSON (``true``, ``0.5``, ``"stream"``), or taken as strings when they are not JSON.
"""

from __future__ import annotations

import json
import runpy
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dagster_ocr.tables.settings import TableSettings  # noqa: E402


def apply(pairs: str) -> dict[str, object]:
    """Set each ``KEY=VALUE`` of the comma-separated ``pairs`` as the default of that field."""
    changed: dict[str, object] = {}
    for pair in filter(None, pairs.split(",")):
        key, _, raw = pair.partition("=")
        if key not in TableSettings.model_fields:
            raise SystemExit(f"no table setting {key!r}")
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            value = raw
        TableSettings.model_fields[key].default = value
        changed[key] = value
    TableSettings.model_rebuild(force=True)
    TableSettings(**changed)  # validated like a configured value
    return changed


def main() -> None:
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    changed = apply(sys.argv[1])
    script = Path(sys.argv[2]).resolve()
    print(f"table settings: {changed}", file=sys.stderr)
    sys.argv = sys.argv[2:]
    sys.path.insert(0, str(script.parent))
    runpy.run_path(str(script), run_name="__main__")


if __name__ == "__main__":
    main()
