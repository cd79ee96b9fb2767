"""Which DuckDB releases open the warehouse this product writes (issue 23).

Writes a sample warehouse with the pinned duckdb (the product's own write paths, as the unit test
tests/unit/test_duckdb_compat.py does), then opens it read-only with every Python given in
``--python`` (each a scratch venv holding one duckdb release and nothing else) and counts the rows
of every table. Make such venvs with ``python3.11 -m venv /tmp/duck-1.1.3 &&
/tmp/duck-1.1.3/bin/pip install duckdb==1.1.3``.

    .venv/bin/python bench/duckdb_compat.py --python /tmp/duck-old-*/bin/python
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.unit.test_duckdb_compat import _READER, storage_version, write_sample_warehouse  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--python", nargs="*", default=[], help="interpreters, each with one duckdb release")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "w.duckdb"
        write_sample_warehouse(path)
        import duckdb

        print(f"written by duckdb {duckdb.__version__}: storage version {storage_version(path)}")
        print("| reader | opens | tables | rows |\n|---|---|---|---|")
        for py in [sys.executable, *args.python]:
            run = subprocess.run([py, "-c", _READER, str(path)], capture_output=True, text=True, timeout=300)
            if run.returncode == 0:
                seen = json.loads(run.stdout)
                rows = sum(seen["counts"].values())
                print(f"| duckdb {seen['version']} | yes | {len(seen['counts'])} | {rows} |")
            else:
                reason = (run.stderr.strip().splitlines() or ["?"])[-1][:120]
                print(f"| {py} | no: {reason} | | |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
