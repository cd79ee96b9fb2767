"""Documents per hour through the writer steps: the lake with 1 and 2 writer processes, the file with one.

The writer steps are what the ``duckdb_tables`` and ``knowledge_base`` assets do after extraction:
the load, its partition key and the quality gate's verdict (``gate.load_and_judge``, one commit)
and the knowledge-base chunks (``kb.load_document``, embeddings off: the model's CPU time is not
what the writer pool serializes). Documents are small corpus PDFs, parsed once up front (text layer,
no OCR) and handed to the writers pickled, so only the writer steps are timed.

Modes, alternated round by round on the same documents:

- ``file1``: one process writing a DuckDB file, which is what the ``duckdb_writer`` pool of one
  allows however many runs are queued;
- ``lake1`` / ``lake2``: one / two processes writing one DuckLake (its own PostgreSQL database per
  round), taking the documents from one queue (each the next one nobody has taken, as Dagster's run
  queue hands out partitions);
- a ``-3c`` suffix (``lake2-3c``): the writer steps as they were before session 10, the load, the
  partition key and the gate's verdict each its own commit (now ``gate.load_and_judge``: one).

Each writer imports, attaches and warms up (one throwaway document into a scratch file) before a
start signal; the wall time runs from the signal to the end of the last writer's last document
(not its process's exit). The machine's CPU seconds in that window (/proc/stat: the catalog's
PostgreSQL too, and anything else running) are reported beside the writers' own. Tune and check
documents are measured as separate sets.

    .venv/bin/python bench/lake_writers.py [--docs 10] [--rounds 3] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import resource
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import _common as C

MODES = ("lake1", "lake2", "file1")  # the default; ``--modes`` takes any lakeN (N writer processes)
SERVER_DSN = "dbname=postgres host=127.0.0.1 user=postgres"


def _parsed_corpus(n_docs: int, workdir: Path) -> dict[str, Path]:
    """Per split: a pickle of ``n_docs`` small text-layer corpus documents, parsed."""
    from dagster_ocr.ingest import DocumentStore
    from dagster_ocr.pipeline import parse
    from dagster_ocr.settings import Settings

    corpus = C.find_corpus()
    if corpus is None:
        raise SystemExit("corpus not found: set DAGSTER_OCR_CORPUS")
    settings = Settings.load(overrides={"text": {"ocr_mode": "never"}})
    store = DocumentStore(workdir / "store")
    out: dict[str, Path] = {}
    for split in ("tune", "check"):
        pdfs = sorted(
            p for p in corpus.rglob("*.pdf") if C.split_of(p, corpus) == split and 1 <= C.page_count(p) <= 12
        )[:n_docs]
        parsed = []
        for pdf in pdfs:
            src = store.register(pdf)[0]
            r = parse(src, settings)
            parsed.append((r.document, r.labels, r.tables, r.paragraphs))
        path = workdir / f"{split}.pickle"
        path.write_bytes(pickle.dumps(parsed))
        out[split] = path
        print(f"{split}: {len(parsed)} documents, {sum(d[0].n_pages for d in parsed)} pages", file=sys.stderr)
    return out


def _writer_step(wh: Any, item: tuple, settings: Any, commits: int = 1) -> None:
    from dagster_ocr import kb, partition_keys
    from dagster_ocr.gate import judge_document, load_and_judge

    doc, labels, tables, paras = item
    doc_id = doc.source.doc_id
    key = partition_keys.partition_key(doc.source.file_name, doc_id)
    with wh.held():  # as the asset does: one open of a file for the step (nothing to hold on a lake)
        if commits == 1:  # what the duckdb_tables asset does since session 10
            _, decision = load_and_judge(
                wh,
                doc,
                labels,
                tables,
                paras,
                partition_key=key,
                quality_settings=settings.quality,
            )
        else:  # before: the load, the partition key and the verdict, each its own commit
            wh.write_document(doc, labels, tables, paras)
            partition_keys.record(wh, key, doc_id, "x")
            decision = judge_document(wh, doc_id, doc.status, doc.error, settings.quality)
        if str(decision.status) == "parsed":
            kb.load_document(wh, doc_id, settings.kb, embed=False)


def _claim(claims: Path, i: int) -> bool:
    """Take document ``i`` off the shared queue: True for the one writer whose claim file is new."""
    try:
        os.close(os.open(claims / str(i), os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return False
    return True


def child(target: str, data: str, pickle_path: str, indexes: list[int], go: str, commits: int) -> None:
    C.quiet_logs()
    from dagster_ocr.lake import open_warehouse
    from dagster_ocr.settings import Settings
    from dagster_ocr.warehouse import Warehouse

    items = pickle.loads(Path(pickle_path).read_bytes())
    settings = Settings()
    with tempfile.TemporaryDirectory() as tmp:  # imports, GX, first-call costs: not timed
        _writer_step(Warehouse(Path(tmp) / "warm.duckdb"), items[indexes[0]], settings)
    wh = open_warehouse(target, data or None)
    wh.ensure_schema()
    print("ready", flush=True)
    while not os.path.exists(go):
        time.sleep(0.005)
    cpu0 = resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.perf_counter()
    done = 0
    for i in indexes:  # every writer walks the same queue and takes what no one has taken yet
        if _claim(Path(go + ".claims"), i):
            _writer_step(wh, items[i], settings, commits)
            done += 1
    cpu1 = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)
    end = time.monotonic()  # system-wide on Linux: the parent compares it with the start signal's
    wall = time.perf_counter() - t0
    print(
        json.dumps({"wall": wall, "end": end, "cpu": cpu, "docs": done, "retries": getattr(wh, "retries", 0)})
    )


def _busy_s() -> float:
    """CPU seconds the whole machine has spent busy since boot (/proc/stat; 0 where there is none)."""
    try:
        fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    except OSError:
        return 0.0
    idle = fields[3] + fields[4]  # idle, iowait
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def _fresh_target(mode: str, workdir: Path) -> tuple[str, str, Any]:
    """(warehouse spec, lake data, cleanup) for one round of ``mode``."""
    if mode == "file1":
        path = workdir / f"w-{uuid.uuid4().hex[:8]}.duckdb"
        from dagster_ocr.warehouse import Warehouse

        Warehouse(path).ensure_schema()
        return str(path), "", lambda: None
    import psycopg2

    name = f"bench_lake_{uuid.uuid4().hex[:10]}"
    server = psycopg2.connect(SERVER_DSN)
    server.autocommit = True
    server.cursor().execute(f'CREATE DATABASE "{name}"')
    spec = f"ducklake:postgres:dbname={name} host=127.0.0.1 user=postgres"
    data = str(workdir / name) + "/"
    from dagster_ocr.lake import LakeWarehouse

    LakeWarehouse(spec, data).ensure_schema()

    def drop() -> None:
        server.cursor().execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        server.close()

    return spec, data, drop


def one_round(mode: str, pickle_path: Path, n_docs: int, workdir: Path) -> dict[str, Any]:
    base, _, variant = mode.partition("-")
    commits = 3 if variant == "3c" else 1
    spec, data, cleanup = _fresh_target(base, workdir)
    n_writers = int(base[4:]) if base.startswith("lake") else 1
    go = workdir / f"go-{uuid.uuid4().hex[:8]}"
    Path(f"{go}.claims").mkdir()
    # one queue, as Dagster's run queue hands the next partition to whichever run slot frees: a
    # fixed share per writer would time the unluckiest share (4 documents of 1-12 pages each)
    queue = list(map(str, range(n_docs)))
    procs = [
        subprocess.Popen(
            [sys.executable, __file__, "--child", spec, data, str(pickle_path), str(go), str(commits)]
            + queue[w:]
            + queue[:w],  # each warms up on a different document (its first)
            stdout=subprocess.PIPE,
            text=True,
        )
        for w in range(n_writers)
    ]
    try:
        for p in procs:
            assert p.stdout is not None and p.stdout.readline().strip() == "ready"
        busy0 = _busy_s()
        go.touch()
        t0 = time.monotonic()
        results = []
        for p in procs:
            assert p.stdout is not None
            results.append(json.loads(p.stdout.readline()))  # printed as the writer's loop ends
        busy = _busy_s() - busy0
        # from the signal to the last writer's end, not to its exit: a process's teardown (DuckDB,
        # GX) is no writer step and would add the same ~0.5 s to every mode, however many writers
        wall = max(r["end"] for r in results) - t0
        for p in procs:
            p.communicate()
        assert all(p.returncode == 0 for p in procs)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
        cleanup()
    return {
        "mode": mode,
        "wall_s": round(wall, 3),
        "docs_per_hour": round(n_docs * 3600 / wall),
        "cpu_s_per_doc": round(sum(r["cpu"] for r in results) / n_docs, 4),
        "retries": sum(r["retries"] for r in results),
        "writer_walls_s": [round(r["wall"], 3) for r in results],
        "writer_docs": [r["docs"] for r in results],
        # every process's CPU in the window, the catalog's PostgreSQL backends included (and any
        # other load: compare it with the load average)
        "machine_cpu_s_per_doc": round(busy / n_docs, 4),
        "machine_cores_busy": round(busy / wall, 2),
    }


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        target, data, pickle_path, go, commits, *idx = sys.argv[2:]
        child(target, data, pickle_path, [int(i) for i in idx], go, int(commits))
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=10, help="documents per set (tune, check)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json", type=Path)
    ap.add_argument(
        "--modes",
        default=",".join(MODES),
        help="e.g. lake1,lake2,lake4,file1; a -3c suffix (lake2-3c) writes as before session 10: the "
        "load, the partition key and the verdict each in its own commit",
    )
    args = ap.parse_args()
    modes = tuple(args.modes.split(","))
    C.quiet_logs()
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        sets = _parsed_corpus(args.docs, workdir)
        runs: dict[str, dict[str, list[dict[str, Any]]]] = {s: {m: [] for m in modes} for s in sets}
        for r in range(args.rounds):
            k = r % len(modes)
            order = modes[k:] + modes[:k]  # alternate which mode goes first
            for split, pickle_path in sets.items():
                n = len(pickle.loads(pickle_path.read_bytes()))
                for mode in order:
                    res = one_round(mode, pickle_path, n, workdir)
                    runs[split][mode].append(res)
                    print(f"round {r} {split} {res}", file=sys.stderr)
    load_after = os.getloadavg()
    summary: dict[str, Any] = {"load_before": load_before, "load_after": load_after, "sets": {}}
    print(
        f"| set | mode | docs/h (median of {args.rounds}) | writers' CPU s/doc | machine CPU s/doc "
        "| cores busy | conflicts retried |"
    )
    print("|---|---|---|---|---|---|---|")
    for split, by_mode in runs.items():
        med = {m: C.median(x["docs_per_hour"] for x in by_mode[m]) for m in modes}
        summary["sets"][split] = {"median_docs_per_hour": med, "runs": by_mode}
        for m in modes:
            cpu = C.median(x["cpu_s_per_doc"] for x in by_mode[m])
            machine = C.median(x["machine_cpu_s_per_doc"] for x in by_mode[m])
            cores = C.median(x["machine_cores_busy"] for x in by_mode[m])
            retries = sum(x["retries"] for x in by_mode[m])
            print(f"| {split} | {m} | {med[m]:.0f} | {cpu:.3f} | {machine:.3f} | {cores:.2f} | {retries} |")
        for m in modes:
            one = m.split("-")[0]
            base = med.get(m.replace(one, "lake1"))
            if base and m.startswith("lake") and one != "lake1":
                print(f"| {split} | {m} / {m.replace(one, 'lake1')} | {med[m] / base:.2f}x | | | | |")
        base = med.get("lake1")
        if base and "file1" in med:
            print(f"| {split} | lake1 / file1 | {base / med['file1']:.2f}x | | | | |")
    print(f"\nload average before {load_before}, after {load_after}")
    if args.json:
        C.dump(summary, args.json)


if __name__ == "__main__":
    main()
