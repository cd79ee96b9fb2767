"""Child process of the lake concurrency test: writes crash_writer's synthetic documents into a lake.

``python lake_writer.py SPEC DATA_PATH K [K ...]`` replaces each document's rows
(``write_document``) then its knowledge-base chunks (``write_kb``), printing ``start K`` and
``done K``, and at the end ``retries N`` (write conflicts it retried). With ``DAGSTER_OCR_TEST_STALL=1``
it stalls inside its first document's transaction, after the first rows are inserted, printing
``mid K``: the parent SIGKILLs it there, holding the document's lock, with rows uncommitted.
"""

from __future__ import annotations

import os
import sys
import time

import crash_writer

from dagster_ocr import warehouse as warehouse_module
from dagster_ocr.lake import LakeWarehouse


def main(spec: str, data_path: str, keys: list[int]) -> None:
    wh = LakeWarehouse(spec, data_path, backoff_s=0.02)
    wh.ensure_schema()  # every writer at once: one migrates, the others wait for it
    if os.environ.get("DAGSTER_OCR_TEST_STALL"):
        insert_rows = warehouse_module._insert_rows

        def stalled(con, rows, counts, into=None):
            first = iter(rows)
            table, batch = next(first)
            warehouse_module._insert(con, table, batch)  # a first batch in, the rest never
            print(f"mid {current}", flush=True)
            time.sleep(600)
            insert_rows(con, first, counts, into)

        warehouse_module._insert_rows = stalled
    for current in keys:
        doc, paras, chunks = crash_writer.document(current)
        print(f"start {current}", flush=True)
        wh.write_document(doc, [], [], paras)
        wh.write_kb(doc.source.doc_id, chunks)
        print(f"done {current}", flush=True)
    print(f"retries {wh.retries}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], [int(k) for k in sys.argv[3:]])
