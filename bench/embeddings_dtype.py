"""Embedding precision: float32 against bfloat16 on the same knowledge-base chunks, side by side.

The chunks are the real ones the knowledge base builds (``kb.build_chunks`` through the core
stages) for the born-digital corpus PDFs and a generated report. Both precisions run in one process,
alternating round by round; the figure is the best round. Agreement: cosine between the two vectors
of each chunk, and how many of each chunk's 5 nearest neighbours (by the other chunks) both
precisions share — what a vector search would return.

    .venv/bin/python bench/embeddings_dtype.py [--rounds 2] [--generated-pages 40] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

import _common as C
import numpy as np


def chunk_texts(pdfs: list[Path], workdir: Path) -> list[str]:
    """The knowledge-base chunk texts of ``pdfs`` (what ``embed_document`` embeds)."""
    import stages

    from dagster_ocr.ingest import DocumentStore
    from dagster_ocr.kb_vectors import embed_input
    from dagster_ocr.settings import Settings
    from dagster_ocr.warehouse import Warehouse

    settings = Settings.load(overrides={"kb": {"embeddings": False}})
    store = DocumentStore(workdir / "store")
    wh = Warehouse(workdir / "e.duckdb")
    wh.ensure_schema()
    for pdf in pdfs:
        stages.run_core(store.register(pdf)[0], wh, settings)
    chunks = wh.query(
        "SELECT chunk_id, source_kind, section_title, context, text FROM kb_chunks ORDER BY doc_id, chunk_id"
    )
    return [embed_input(chunks, i) for i in range(len(chunks))]


def compare(texts: list[str], rounds: int) -> dict[str, Any]:
    from dagster_ocr import embeddings

    models = {d: embeddings.get_embedder(dtype=d) for d in ("float32", "bfloat16")}
    if any(m is None for m in models.values()):
        return {"skipped": embeddings.unavailable_reason()}
    for m in models.values():  # warm-up: first-call allocations
        m.embed(texts[:32])
    seconds: dict[str, list[float]] = {d: [] for d in models}
    vectors: dict[str, np.ndarray] = {}
    for _ in range(rounds):
        for d, m in models.items():
            t = time.perf_counter()
            vectors[d] = m.embed(texts)
            seconds[d].append(time.perf_counter() - t)
    a, b = vectors["float32"], vectors["bfloat16"]
    cos = np.sum(a * b, axis=1)
    sa, sb = a @ a.T, b @ b.T
    np.fill_diagonal(sa, -2)
    np.fill_diagonal(sb, -2)
    k = min(5, len(texts) - 1)
    top_a, top_b = np.argsort(-sa, axis=1)[:, :k], np.argsort(-sb, axis=1)[:, :k]
    shared = np.mean([len(set(x) & set(y)) / k for x, y in zip(top_a, top_b, strict=True)]) if k else 1.0
    best = {d: min(v) for d, v in seconds.items()}
    return {
        "chunks": len(texts),
        "rounds": rounds,
        "seconds_best": best,
        "chunks_per_second": {d: len(texts) / s for d, s in best.items()},
        "speedup_bfloat16": best["float32"] / best["bfloat16"],
        "cosine_mean": float(cos.mean()),
        "cosine_min": float(cos.min()),
        "top5_neighbours_shared": float(shared),
        "auto_here": embeddings.resolve_dtype("auto"),
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--generated-pages", type=int, default=40)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    C.quiet_logs()
    pdfs = C.corpus_pdfs(False) + ([C.generated(args.generated_pages)] if args.generated_pages else [])
    with tempfile.TemporaryDirectory(prefix="bench-emb-") as tmp:
        texts = chunk_texts(pdfs, Path(tmp))
    out = compare(texts, args.rounds)
    if args.json:
        C.dump(out, args.json)
    print(json.dumps(out, indent=2))
    return out


if __name__ == "__main__":
    main()
