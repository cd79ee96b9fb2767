"""CPU seconds a page to embed a parsed warehouse's chunks as ``kb_vectors`` does (context line +
text), per runtime and precision, in one process side by side (issue 34's KB stage).

    .venv/bin/python bench/kb_embed_cpu.py --warehouse W [--like '%10k%']

``W`` is a warehouse ``bench/kb_retrieval.py`` parsed; ``--like`` picks its documents by file name.
bfloat16 runs only where the CPU has native bf16 instructions (OpenVINO) or on torch.
"""

from __future__ import annotations

import argparse
import resource

import duckdb

from dagster_ocr import embeddings
from dagster_ocr.cpu import has_native_bf16
from dagster_ocr.kb_vectors import embed_input


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--warehouse", required=True)
    ap.add_argument("--like", default="%", help="file names (SQL LIKE) whose chunks are embedded")
    args = ap.parse_args()
    con = duckdb.connect(args.warehouse, read_only=True)
    sql = "FROM kb_chunks JOIN documents USING (doc_id) WHERE file_name LIKE ?"
    chunks = con.execute(f"SELECT source_kind, section_title, context, text {sql}", [args.like]).df()
    pages_sql = "SELECT sum(n_pages) FROM documents WHERE file_name LIKE ?"
    pages = con.execute(pages_sql, [args.like]).fetchone()[0]
    texts = [embed_input(chunks, i) for i in range(len(chunks))]
    print(f"{len(texts)} chunks, {pages} pages; native bf16: {has_native_bf16()}")
    runs = [("float32", "openvino"), ("bfloat16", "torch")]
    if has_native_bf16():
        runs.append(("bfloat16", "openvino"))
    for dtype, runtime in runs:
        embedder = embeddings.Embedder(embeddings.model_dir(), dtype=dtype, runtime=runtime)
        embedder.embed(texts[:16])  # warm-up
        start = cpu_seconds()
        embedder.embed(texts)
        spent = cpu_seconds() - start
        per_page = spent / pages
        print(f"{embedder.runtime:9s} {embedder.dtype:9s} {spent:7.1f} CPU s  {per_page:.3f} CPU s a page")


if __name__ == "__main__":
    main()
