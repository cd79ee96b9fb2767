"""Analysts reading while the pipeline writes: lock failures, retry-on-lock, snapshot copies.

One writer process replaces a document's rows in short transactions (as dagster_ocr.warehouse
does) for ``--seconds``; a reader process queries the same file meanwhile, three ways:
plain (fail on lock), retry-on-lock with backoff, and from a snapshot copy published by the writer
after each write (copy to a temp name, then rename). Prints one line per way.

    .venv/bin/python bench/warehouse_readers.py --seconds 10
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import duckdb

ROWS = 20_000


def _writer(path: str, snapshot: str, seconds: float, publish: bool, out: mp.Queue) -> None:
    copies: list[float] = []
    writes = 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        for attempt in range(50):
            try:
                con = duckdb.connect(path)
                break
            except duckdb.IOException:
                time.sleep(0.01 * (attempt + 1))
        else:
            continue
        con.execute("BEGIN")
        con.execute("DELETE FROM t WHERE doc = 1")
        con.execute(f"INSERT INTO t SELECT 1, range, repeat('x', 200) FROM range({ROWS})")
        con.execute("COMMIT")
        con.close()
        writes += 1
        if publish:
            start = time.perf_counter()
            tmp = snapshot + ".part"
            shutil.copyfile(path, tmp)
            os.replace(tmp, snapshot)  # atomic: a reader sees the old or the new file, never half
            copies.append(time.perf_counter() - start)
        time.sleep(0.05)
    out.put((writes, copies))


def _read(path: str, retry: bool) -> float | None:
    start = time.perf_counter()
    for attempt in range(20 if retry else 1):
        try:
            con = duckdb.connect(path, read_only=True)
            con.execute("SELECT count(*) FROM t").fetchall()
            con.close()
            return time.perf_counter() - start
        except duckdb.IOException:
            time.sleep(min(0.01 * 2**attempt, 0.5))
    return None


def run(way: str, seconds: float) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        path, snapshot = str(Path(tmp) / "w.duckdb"), str(Path(tmp) / "w.snapshot.duckdb")
        con = duckdb.connect(path)
        con.execute("CREATE TABLE t (doc INT, i BIGINT, s VARCHAR)")
        con.execute(f"INSERT INTO t SELECT 2, range, repeat('y', 200) FROM range({10 * ROWS})")
        con.close()
        shutil.copyfile(path, snapshot)
        out: mp.Queue = mp.Queue()
        w = mp.Process(target=_writer, args=(path, snapshot, seconds, way == "snapshot", out))
        w.start()
        times, failed = [], 0
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            t = _read(snapshot if way == "snapshot" else path, retry=way == "retry")
            if t is None:
                failed += 1
            else:
                times.append(t)
        writes, copies = out.get()
        w.join()
        size = Path(path).stat().st_size / 2**20
    n = len(times) + failed
    line = (
        f"{way:8s} reads {n:5d}  failed {failed / n:6.1%}  median {statistics.median(times) * 1e3:7.1f} ms  "
        f"p95 {sorted(times)[int(0.95 * (len(times) - 1))] * 1e3:7.1f} ms  writes {writes}"
    )
    if copies:
        line += f"  snapshot publish median {statistics.median(copies) * 1e3:.1f} ms for {size:.0f} MiB"
    return line


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args()
    for way in ("plain", "retry", "snapshot"):
        print(run(way, args.seconds), flush=True)


if __name__ == "__main__":
    main()
