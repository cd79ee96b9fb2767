"""Reliability figures for RELIABILITY.md: hostile inputs, random mutations, and SIGKILLs mid-write.

    .venv/bin/python bench/reliability.py --mutations 500 --kills 20

1. Every hostile case of ``tests/hardening/hostile.py`` plus ``--mutations`` randomly mutated PDFs
   is registered, parsed (``pipeline.parse``) and written (``Warehouse.write_document``) in one
   process and one warehouse, as a run would. A crash is an exception escaping that loop; a hang
   is a document that took longer than ``limits.max_seconds_per_document`` plus a margin; a lost
   row is an input without exactly one ``documents`` row.
2. ``--kills`` times, a writer process is SIGKILLed at a random moment while it replaces
   documents and knowledge-base chunks; after each kill every document must be whole or absent.
Prints a markdown table (paste it into RELIABILITY.md).
"""

from __future__ import annotations

import argparse
import logging
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "hardening"))

import hostile  # noqa: E402
import test_crash_safety  # noqa: E402

from dagster_ocr.ingest import DocumentStore, ingest_inbox  # noqa: E402
from dagster_ocr.pipeline import parse  # noqa: E402
from dagster_ocr.settings import Settings  # noqa: E402
from dagster_ocr.warehouse import Warehouse  # noqa: E402


def run_inputs(root: Path, mutations: int, seed: int) -> dict[str, object]:
    """Parse and store every hostile case and mutant; count outcomes, crashes, hangs, lost rows."""
    settings = Settings()
    hang_after = settings.limits.max_seconds_per_document + 30
    cases = hostile.write_inbox(root / "inbox", mutations=mutations, seed=seed)
    found = ingest_inbox(root / "inbox", DocumentStore(root / "store"))
    wh = Warehouse(root / "warehouse.duckdb")
    crashes, hangs, slowest = [], [], 0.0
    start = time.perf_counter()
    for record, _ in found:
        t = time.perf_counter()
        try:
            p = parse(record, settings)
            wh.write_document(p.document, p.labels, p.tables, p.paragraphs)
        except Exception as exc:  # noqa: BLE001 - counting crashes is the point
            crashes.append(f"{record.file_name}: {type(exc).__name__}: {exc}")
        took = time.perf_counter() - t
        slowest = max(slowest, took)
        if took > hang_after:
            hangs.append(record.file_name)
    seconds = time.perf_counter() - start
    docs = wh.query("SELECT doc_id, status, error FROM documents")
    ids = [r.doc_id for r, _ in found]
    per_doc = Counter(docs.doc_id)
    lost = sum(1 for d in ids if per_doc.get(d, 0) != 1)
    codes = Counter(
        ("failed: " + e.split(":")[0]) if s == "failed" else s
        for s, e in zip(docs.status, docs.error.fillna(""), strict=True)
    )
    return {
        "files": len(cases),
        "documents": len(ids),
        "crashes": crashes,
        "hangs": hangs,
        "lost": lost,
        "outcomes": dict(sorted(codes.items())),
        "seconds": seconds,
        "slowest": slowest,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mutations", type=int, default=500)
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    logging.disable(logging.WARNING)  # MuPDF's complaints about each broken file are expected here
    with tempfile.TemporaryDirectory() as tmp:
        res = run_inputs(Path(tmp) / "inputs", args.mutations, args.seed)
        (Path(tmp) / "kills").mkdir()
        t = time.perf_counter()
        kills = test_crash_safety.kill_loop(Path(tmp) / "kills" / "w.duckdb", args.kills, args.seed)
        whole = test_crash_safety.check_whole(Path(tmp) / "kills" / "w.duckdb")
        kill_seconds = time.perf_counter() - t
    print("| figure | value |\n|---|---|")
    print(f"| input files tried | {res['files']} ({res['documents']} distinct documents) |")
    print(f"| outcomes | {', '.join(f'{k} {v}' for k, v in res['outcomes'].items())} |")
    print(f"| crashes (exception escaping parse + write) | {len(res['crashes'])} |")
    print(f"| hangs (document over the time limit + 30 s) | {len(res['hangs'])} |")
    print(f"| rows lost or doubled (inputs without exactly one documents row) | {res['lost']} |")
    print(f"| time | {res['seconds']:.1f} s, slowest document {res['slowest']:.2f} s |")
    print(f"| SIGKILLs mid-write | {kills['kills']} ({kills['writes_before_kill']} writes seen) |")
    print(f"| checks after a kill with a half-written document | 0 of {kills['checks']} |")
    print(f"| documents whole / absent after the last kill | {whole['present']} / {whole['absent']} |")
    print(f"| kill phase time | {kill_seconds:.1f} s |")
    for c in res["crashes"]:
        print("crash:", c)
    return 1 if res["crashes"] or res["hangs"] or res["lost"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
