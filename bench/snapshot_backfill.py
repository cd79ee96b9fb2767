"""The analysts' snapshot over a backfill: copying after every document against the throttled copy.

A snapshot is a copy of the whole warehouse file, so publishing one after every document makes a
backfill's copying quadratic in its length. This writes one parsed document under ``--docs``
different ids into two warehouses, one after the other: one publishes after every write
(``max_share=None``), one with the default throttle
(``WarehouseResource.snapshot_max_share``), which then publishes what is pending once at the end,
as the CLI and the snapshot sensor do. ``--prefill-mib`` starts both from a warehouse that already
holds that much (a year of documents, say). Prints each warehouse's seconds (writes, copies and
checkpoints), the copies' share of them, the final size, and how far the throttled snapshot fell
behind.

    .venv/bin/python bench/snapshot_backfill.py [--docs 300] [--pages 100] [--prefill-mib 0] [--json OUT]
"""

from __future__ import annotations

import argparse
import dataclasses
import tempfile
import time
from pathlib import Path

import _common as C

from dagster_ocr.ingest import DocumentStore
from dagster_ocr.pipeline import parse
from dagster_ocr.warehouse import Warehouse
from resources import WarehouseResource


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=300)
    ap.add_argument("--pages", type=int, default=100)
    ap.add_argument(
        "--prefill-mib", type=int, default=0, help="start from a warehouse already this big (a filler table)"
    )
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    C.quiet_logs()
    share = WarehouseResource().snapshot_max_share
    with tempfile.TemporaryDirectory() as tmp:
        src = DocumentStore(Path(tmp) / "store").register(C.generated(args.pages))[0]
        parsed = parse(src)
        modes = {"every document": None, f"throttled (max_share={share})": share}
        stats = {m: {"total_s": 0.0, "copy_s": 0.0, "copies": 0, "max_behind": 0} for m in modes}
        houses = {m: Warehouse(Path(tmp) / f"w{i}.duckdb") for i, m in enumerate(modes)}
        for wh in houses.values():
            wh.ensure_schema()
            if args.prefill_mib:  # random doubles hardly compress: ~8 bytes a row on disk
                with wh.connect() as con:
                    rows = args.prefill_mib * 2**20 // 8
                    con.execute(f"CREATE TABLE filler AS SELECT random() AS x FROM range({rows})")
            wh.publish_snapshot()
        # one warehouse after the other, not interleaved: the throttle reads the wall clock, and
        # time spent on the other warehouse's copies would count as time between its own writes
        for mode, wh in houses.items():
            s = stats[mode]
            for i in range(args.docs):
                doc = dataclasses.replace(
                    parsed.document, source=dataclasses.replace(src, doc_id=f"{i:064x}")
                )
                t = time.perf_counter()
                with wh.held():  # as the duckdb_tables step does: write, publish, close
                    wh.write_document(doc, parsed.labels, parsed.tables, parsed.paragraphs)
                    published = wh.publish_snapshot(max_share=modes[mode])
                s["total_s"] += time.perf_counter() - t
                if published is not None:
                    s["copies"] += 1
                    s["copy_s"] += wh.snapshot_record().copy_seconds
                s["max_behind"] = max(s["max_behind"], wh.snapshot_record().pending_writes)
        for mode, wh in houses.items():  # the end of the run publishes what is pending
            if wh.snapshot_record().pending_writes:
                t = time.perf_counter()
                wh.publish_snapshot()
                stats[mode]["total_s"] += time.perf_counter() - t
                stats[mode]["copy_s"] += wh.snapshot_record().copy_seconds
                stats[mode]["copies"] += 1
            stats[mode]["size_mib"] = wh.path.stat().st_size / 2**20
    print(f"{args.docs} documents of {args.pages} pages written into each warehouse")
    base = stats["every document"]["total_s"]
    for mode, s in stats.items():
        print(
            f"  {mode:30s} {s['total_s']:7.1f}s ({s['total_s'] / base:.2f}x), of which copies "
            f"{s['copy_s']:6.1f}s ({s['copy_s'] / s['total_s']:5.1%}, {s['copies']} copies); "
            f"final {s['size_mib']:.0f} MiB; snapshot at most {s['max_behind']} document(s) behind"
        )
    if args.json:
        C.dump({"docs": args.docs, "pages": args.pages, "modes": stats}, args.json)


if __name__ == "__main__":
    main()
