"""Stage-by-stage profile of the core pipeline: where the time goes per page.

Stages, in the order the Dagster assets run them (each timed around the same core call the asset
makes): text layer (``extract_document``), labels, tables, paragraphs, DuckDB load
(``Warehouse.write_document``: row building and the insert), checks (the quality gate,
``gate.judge_document``), knowledge base (``kb.load_document``).
Optionally, the tables stage again per finder (``TableSettings.finder``) on the same text.

    .venv/bin/python bench/stages.py [--quick] [--repeats N] [--finders auto,stream,lines] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from typing import Any

import _common as C

STAGES = ("text", "labels", "tables", "paragraphs", "duckdb_load", "checks", "knowledge_base")


def _kb(wh: Any, doc_id: str, kb_settings: Any) -> int:
    """The knowledge_base asset's work (chunks, then embeddings), without Dagster."""
    from dagster_ocr.kb import load_document

    return len(load_document(wh, doc_id, kb_settings))


def run_core(source: Any, wh: Any, settings: Any, engine: Any = None) -> dict[str, float]:
    """Every stage of one document through the core functions the assets call; seconds per stage."""
    from dagster_ocr import pipeline
    from dagster_ocr.gate import judge_document

    t: dict[str, float] = {}
    t["text"], doc = C.timed(lambda: pipeline.extract_document(source, settings, engine))
    t["labels"], labels = C.timed(lambda: pipeline.document_labels(doc, settings))
    t["tables"], tables = C.timed(lambda: pipeline.document_tables(doc, settings))
    t["paragraphs"], paras = C.timed(lambda: pipeline.document_paragraphs(doc, labels, tables, settings))
    t["duckdb_load"], _ = C.timed(lambda: wh.write_document(doc, labels, tables, paras))
    t["checks"], _ = C.timed(
        lambda: judge_document(wh, source.doc_id, doc.status, doc.error, settings.quality)
    )
    t["knowledge_base"], _ = C.timed(lambda: _kb(wh, source.doc_id, settings.kb))
    t["_ocr_pages"] = sum(1 for p in doc.pages if str(p.text_source) == "ocr")
    return t


def profile(
    pdfs: list[Path], repeats: int, finders: list[str], workdir: Path, warm: bool = True
) -> dict[str, Any]:
    """Per-stage seconds (median over ``repeats``) summed over ``pdfs``, plus per-finder tables time."""
    from dagster_ocr import pipeline
    from dagster_ocr.ingest import DocumentStore
    from dagster_ocr.settings import Settings
    from dagster_ocr.warehouse import Warehouse

    store = DocumentStore(workdir / "store")
    wh = Warehouse(workdir / "stages.duckdb")
    wh.ensure_schema()
    settings = Settings()
    sources = [store.register(p)[0] for p in pdfs]
    pages = {s.doc_id: C.page_count(Path(s.stored_path)) for s in sources}
    if warm and sources:  # first call pays imports (GX, pandas) that a long run pays once
        run_core(sources[0], wh, settings)
    per_doc: dict[str, dict[str, float]] = {}
    ocr_pages = 0
    for src in sources:
        runs = [run_core(src, wh, settings) for _ in range(repeats)]
        ocr_pages += int(runs[0]["_ocr_pages"])
        per_doc[src.file_name] = {s: C.median(r[s] for r in runs) for s in STAGES}
    total = {s: sum(d[s] for d in per_doc.values()) for s in STAGES}
    n_pages = sum(pages.values())
    all_s = sum(total.values())
    finder_s: dict[str, float] = {}
    for finder in finders:
        fs = Settings.load(overrides={"tables": {"finder": finder}})
        times = []
        for src in sources:
            doc = pipeline.extract_document(src, fs)
            times.append(
                C.median(
                    C.timed(lambda d=doc, s=fs: pipeline.document_tables(d, s))[0] for _ in range(repeats)
                )
            )
        finder_s[finder] = sum(times)
    return {
        "documents": len(sources),
        "pages": n_pages,
        "ocr_pages": ocr_pages,
        "repeats": repeats,
        "table_finder_default": settings.tables.finder,
        "seconds": total,
        "ms_per_page": {s: 1000 * v / n_pages for s, v in total.items()} if n_pages else {},
        "share": {s: v / all_s for s, v in total.items()} if all_s else {},
        "total_seconds": all_s,
        "pages_per_second": n_pages / all_s if all_s else 0.0,
        "per_document": per_doc,
        "tables_seconds_by_finder": finder_s,
        "tables_ms_per_page_by_finder": {f: 1000 * v / n_pages for f, v in finder_s.items()}
        if n_pages
        else {},
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repeats", type=int)
    ap.add_argument("--finders", default=None, help="comma-separated TableSettings.finder values")
    ap.add_argument("--generated-pages", type=int, default=None, help="also profile a generated document")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    C.quiet_logs()
    repeats = args.repeats or (1 if args.quick else 2)
    finders = (args.finders or "auto,stream").split(",")
    gen = args.generated_pages if args.generated_pages is not None else (2 if args.quick else 40)
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="bench-stages-") as tmp:
        warm = not args.quick
        out["corpus"] = profile(C.corpus_pdfs(args.quick), repeats, finders, Path(tmp) / "c", warm)
        if gen:
            out["generated"] = profile([C.generated(gen)], repeats, finders, Path(tmp) / "g", warm)
    if args.json:
        C.dump(out, args.json)
    print(
        json.dumps(
            {k: {"pages_per_second": v["pages_per_second"], "share": v["share"]} for k, v in out.items()}
        )
    )
    return out


if __name__ == "__main__":
    main()
