"""The inbox sensor's pick-up time while a run holds the warehouse (issue 41, item 5).

20 distinct PDFs land in the inbox in 4 waves of 5; before each wave's sensor tick, a writer
process holds the DuckDB file (what a run's ``duckdb_tables`` step does) or nobody does. Per tick:
its wall time and the runs it requested; then IDLE_TICKS ticks with nothing new (the first and
last tick's time, and the sightings left queued); at the end, how long the next writer step takes
to record the queue in ``files`` once the writer let go, and how many files are recorded.

    .venv/bin/python bench/inbox_sensor_lock.py [--corpus ../shared/corpus]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import dagster as dg

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from assets.file_sightings import record_queued_sightings  # noqa: E402
from assets.partitions import documents_partitions  # noqa: E402
from assets.sensors import inbox_sensor  # noqa: E402
from resources import DocumentStoreResource, WarehouseResource  # noqa: E402

#: ticks after the last file landed, with nothing new in the inbox
IDLE_TICKS = 200
SEED = "tables/icdar2013/us-020/us-020.pdf"


def _holder(path: Path) -> subprocess.Popen:
    code = (
        f"import duckdb, time; c = duckdb.connect({str(path)!r}); print('held', flush=True); time.sleep(600)"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


def _land(inbox: Path, seed: bytes, start: int, n: int) -> None:
    for i in range(start, start + n):
        # distinct bytes (a trailing comment after %%EOF): each file is its own document
        (inbox / f"doc{i:02d}.pdf").write_bytes(seed + f"\n% copy {i}\n".encode())


def _recorded(wh: WarehouseResource) -> int:
    return int(wh.warehouse().query("SELECT count(*) AS n FROM files")["n"].iat[0])


def run(corpus: Path, held: bool) -> dict:
    tmp = Path(tempfile.mkdtemp(prefix="inbox_lock_"))
    inbox = tmp / "inbox"
    inbox.mkdir()
    store = DocumentStoreResource(inbox_dir=str(inbox), store_dir=str(tmp / "store"))
    wh = WarehouseResource(path=str(tmp / "warehouse.duckdb"))
    wh.warehouse().ensure_schema()
    resources = {"store": store, "warehouse": wh}
    seed = (corpus / SEED).read_bytes()
    ticks = []
    cursor = None
    holder = _holder(wh.warehouse().path) if held else None
    try:
        with dg.instance_for_test() as instance:
            for wave in range(4):
                _land(inbox, seed, wave * 5, 5)
                ctx = dg.build_sensor_context(instance=instance, cursor=cursor, resources=resources)
                t0 = time.perf_counter()
                result = inbox_sensor(ctx)
                seconds = time.perf_counter() - t0
                cursor = result.cursor
                docs = [r for r in result.run_requests if not r.job_name or r.job_name == "ingest_document"]
                for req in result.dynamic_partitions_requests or []:
                    instance.add_dynamic_partitions(req.partitions_def_name, list(req.partition_keys))
                ticks.append({"tick_s": round(seconds, 3), "runs_requested": len(docs)})
            # then the inbox stays as it is for IDLE_TICKS more ticks (runs still in flight)
            idle = []
            for _ in range(IDLE_TICKS):
                ctx = dg.build_sensor_context(instance=instance, cursor=cursor, resources=resources)
                t0 = time.perf_counter()
                result = inbox_sensor(ctx)
                idle.append(time.perf_counter() - t0)
                cursor = result.cursor
            queued = sum(len(p.read_text().splitlines()) for p in tmp.glob("files_pending*"))
            if holder is not None:
                holder.kill()
                holder.wait()
                holder = None
            # the writer let go: the next step that holds the warehouse (a document's load, or the
            # record_file_sightings job) records the queue; how long that takes
            t0 = time.perf_counter()
            wh_ = wh.warehouse()
            with wh_.held():
                record_queued_sightings(wh_, store.store())
            lineage_s = time.perf_counter() - t0
            known = len(instance.get_dynamic_partitions(documents_partitions.name))
    finally:
        if holder is not None:
            holder.kill()
            holder.wait()
    out = {
        "writer_holds_warehouse": held,
        "ticks": ticks,
        "documents_requested": sum(t["runs_requested"] for t in ticks),
        "partitions": known,
        f"idle_tick_s_first_last_of_{IDLE_TICKS}": [round(idle[0], 3), round(idle[-1], 3)],
        "sightings_queued_after_idle_ticks": queued,
        "files_recorded_after_release": _recorded(wh),
        "record_queue_after_release_s": round(lineage_s, 3),
    }
    shutil.rmtree(tmp, ignore_errors=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--corpus",
        type=Path,
        default=Path(os.environ.get("DAGSTER_OCR_CORPUS", REPO.parent / "shared/corpus")),
    )
    args = parser.parse_args()
    for held in (False, True):
        print(json.dumps(run(args.corpus, held)))


if __name__ == "__main__":
    main()
