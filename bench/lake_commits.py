"""Why two lake writers do not double one: DuckLake's commits, against reads and plain PostgreSQL.

Each workload runs for ``--seconds`` in 1 and then 2 processes at once, on a fresh lake (its own
PostgreSQL database, dropped after): ``pg`` (a query round trip on plain PostgreSQL: what the
machine gives two processes), ``read`` (a count on a lake table), ``insert`` (a 50-row insert per
commit) and ``replace`` (delete + insert in one transaction, as a document write). Every commit
takes the next snapshot id in the catalog; two committing at once collide and DuckLake retries the
loser after ``ducklake_retry_wait_ms`` (100 ms, times 1.5 per retry).

    .venv/bin/python bench/lake_commits.py [--seconds 6] [--rounds 2]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SERVER = "dbname=postgres host=127.0.0.1 user=postgres"


def _lake(db: str, data: str):
    sys.path.insert(0, str(REPO))
    import duckdb

    from dagster_ocr import duck

    con = duckdb.connect()
    duck.load(con, "ducklake", "postgres_scanner")
    con.execute(
        f"ATTACH 'ducklake:postgres:dbname={db} host=127.0.0.1 user=postgres' AS lake (DATA_PATH '{data}')"
    )
    con.execute("USE lake")
    return con


def child(db: str, data: str, mode: str, w: str, seconds: float) -> None:
    if mode == "pg":
        import psycopg2

        cur = psycopg2.connect(SERVER).cursor()
        step = lambda: (cur.execute("SELECT count(*) FROM generate_series(1, 2000)"), cur.fetchall())  # noqa: E731
    else:
        con = _lake(db, data)
        statements = {
            "read": [f"SELECT count(*) FROM t{w}"],
            "insert": [f"INSERT INTO t{w} SELECT range, 'x' FROM range(50)"],
            "replace": [
                "BEGIN",
                f"DELETE FROM t{w} WHERE a = 1",
                f"INSERT INTO t{w} SELECT range, 'x' FROM range(50)",
                "COMMIT",
            ],
        }[mode]

        def step() -> None:
            for sql in statements:
                con.execute(sql).fetchall()

    start, n = time.perf_counter(), 0
    while time.perf_counter() - start < seconds:
        step()
        n += 1
    print(n)


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(*sys.argv[2:6], float(sys.argv[6]))
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=6.0)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    import psycopg2

    server = psycopg2.connect(SERVER)
    server.autocommit = True
    db = f"bench_commits_{uuid.uuid4().hex[:8]}"
    data = f"/tmp/{db}/"
    server.cursor().execute(f'CREATE DATABASE "{db}"')
    try:
        con = _lake(db, data)
        for w in range(2):
            con.execute(f"CREATE TABLE t{w} (a INT, b VARCHAR)")
            con.execute(f"INSERT INTO t{w} SELECT range, 'x' FROM range(100)")
        con.close()
        print("| workload | 1 process (ops) | 2 processes (ops, total) | 2 / 1 | load |")
        print("|---|---|---|---|---|")
        for _ in range(args.rounds):
            for mode in ("pg", "read", "insert", "replace"):
                totals = []
                for k in (1, 2):
                    procs = [
                        subprocess.Popen(
                            [sys.executable, __file__, "--child", db, data, mode, str(w), str(args.seconds)],
                            stdout=subprocess.PIPE,
                            text=True,
                        )
                        for w in range(k)
                    ]
                    totals.append(sum(int(p.communicate()[0].strip() or 0) for p in procs))
                ratio = totals[1] / totals[0] if totals[0] else float("nan")
                load = os.getloadavg()[0]
                print(f"| {mode} | {totals[0]} | {totals[1]} | {ratio:.2f}x | {load:.1f} |", flush=True)
    finally:
        server.cursor().execute(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)')
        server.close()


if __name__ == "__main__":
    main()
