"""Stage-by-stage profile of the core pipeline: where the time goes per page.

Stages, in the order the Dagster assets run them (each timed around the same core call the asset
makes): text layer (``extract_document``), labels, tables, paragraphs, DuckDB load
(``Warehouse.write_document``: row building and the insert), checks (the quality gate,
``gate.judge_document``), knowledge base (``kb.load_document``: the chunks), kb_vectors (its three
ops: ``kb_vectors.plan_vectors`` and ``store_vectors`` in the writer pool, ``compute_vectors`` outside
it). "writer pool held" sums the wall time of what holds the warehouse writers' pool.
Optionally, the tables stage again per finder (``TableSettings.finder``) on the same text.

Each stage is timed in wall seconds and in CPU seconds of the process (``time.process_time``: every
thread, so a stage that keeps both cores busy counts twice). Beside it, in the same run, a raw
PyMuPDF pass (``page.get_text("dict")`` over every page, the cheapest read of the same text): the
stages' cost is reported as a multiple of it, since the machines are noisy.

    .venv/bin/python bench/stages.py [--quick] [--repeats N] [--finders auto,stream,lines] [--json OUT]
    .venv/bin/python bench/stages.py --pdf ../shared/reports/*.pdf --generated-pages 0 --finders auto
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

import _common as C

STAGES = ("text", "labels", "tables", "paragraphs", "duckdb_load", "checks", "knowledge_base", "kb_vectors")
#: the stages that build the knowledge base (left out of the "without the knowledge base" figures)
KB_STAGES = ("knowledge_base", "kb_vectors")
#: what holds the warehouse writers' pool (one document at a time): every stage that writes the file,
#: kb_vectors only for its read and write ops ("kb_vectors_writer"), not for the embedding
WRITER_STAGES = ("duckdb_load", "checks", "knowledge_base", "kb_vectors_writer")


def _kb(wh: Any, doc_id: str, kb_settings: Any) -> int:
    """The knowledge_base asset's work (the chunks) without Dagster, as on a first load: the
    document's vectors from an earlier round are dropped first (a vector whose chunk text is
    unchanged is reused, which made a repeat look 50x cheaper than a first run)."""
    from dagster_ocr.kb import load_document

    wh.write(lambda con: con.execute("DELETE FROM kb_embeddings WHERE doc_id = ?", [doc_id]))
    return len(load_document(wh, doc_id, kb_settings, embed=False))


def run_core(source: Any, wh: Any, settings: Any, engine: Any = None) -> dict[str, float]:
    """Every stage of one document through the core functions the assets call: wall seconds per
    stage under its name, CPU seconds under ``cpu:<name>``."""
    from dagster_ocr import pipeline
    from dagster_ocr.gate import judge_document

    t: dict[str, float] = {}

    def timed(stage: str, fn: Any) -> Any:
        c = time.process_time()
        t[stage], out = C.timed(fn)
        t[f"cpu:{stage}"] = time.process_time() - c
        return out

    doc = timed("text", lambda: pipeline.extract_document(source, settings, engine))
    labels = timed("labels", lambda: pipeline.document_labels(doc, settings))
    tables = timed("tables", lambda: pipeline.document_tables(doc, settings))
    paras = timed("paragraphs", lambda: pipeline.document_paragraphs(doc, labels, tables, settings))
    timed("duckdb_load", lambda: wh.write_document(doc, labels, tables, paras))
    timed("checks", lambda: judge_document(wh, source.doc_id, doc.status, doc.error, settings.quality))
    timed("knowledge_base", lambda: _kb(wh, source.doc_id, settings.kb))
    # kb_vectors' three ops: plan and store in the writer pool, the embedding outside it
    from dagster_ocr import kb, kb_vectors

    plan = timed("kb_plan", lambda: kb_vectors.plan_vectors(wh, source.doc_id))
    timed("kb_embed", lambda: kb_vectors.compute_vectors(plan, **kb.embedder_options(settings.kb)))
    timed("kb_store", lambda: kb_vectors.store_vectors(wh, plan))
    for prefix in ("", "cpu:"):
        t[f"{prefix}kb_vectors_writer"] = t[f"{prefix}kb_plan"] + t[f"{prefix}kb_store"]
        t[f"{prefix}kb_vectors"] = t[f"{prefix}kb_vectors_writer"] + t[f"{prefix}kb_embed"]
    t["_ocr_pages"] = sum(1 for p in doc.pages if str(p.text_source) == "ocr")
    return t


def raw_dict_pass(path: Path) -> tuple[float, float]:
    """(wall, CPU) seconds of ``page.get_text("dict")`` over every page: the baseline read."""
    import pymupdf

    c, w = time.process_time(), time.perf_counter()
    with pymupdf.open(path) as doc:
        for page in doc:
            page.get_text("dict")
    return time.perf_counter() - w, time.process_time() - c


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
    timed_keys = (*STAGES, "kb_vectors_writer")
    keys = [*timed_keys, *(f"cpu:{s}" for s in timed_keys), "raw", "cpu:raw"]
    for src in sources:
        runs = []
        for _ in range(repeats):  # the raw pass beside each round, so both see the same load
            r = run_core(src, wh, settings)
            r["raw"], r["cpu:raw"] = raw_dict_pass(Path(src.stored_path))
            runs.append(r)
        ocr_pages += int(runs[0]["_ocr_pages"])
        per_doc[src.file_name] = {k: C.median(r[k] for r in runs) for k in keys}
    total = {k: sum(d[k] for d in per_doc.values()) for k in keys}
    n_pages = sum(pages.values())
    all_s = sum(total[s] for s in STAGES)
    cpu_all = sum(total[f"cpu:{s}"] for s in STAGES)
    no_kb = cpu_all - sum(total[f"cpu:{s}"] for s in KB_STAGES)
    writer = sum(total[s] for s in WRITER_STAGES)
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
        "ms_per_page": {s: 1000 * total[s] / n_pages for s in STAGES} if n_pages else {},
        "cpu_ms_per_page": {s: 1000 * total[f"cpu:{s}"] / n_pages for s in STAGES} if n_pages else {},
        "raw_get_text_dict_ms_per_page": {
            "wall": 1000 * total["raw"] / n_pages,
            "cpu": 1000 * total["cpu:raw"] / n_pages,
        }
        if n_pages
        else {},
        "share": {s: total[s] / all_s for s in STAGES} if all_s else {},
        "total_seconds": all_s,
        # wall seconds a page that hold the writer pool (the stages that write the warehouse)
        "writer_pool_ms_per_page": 1000 * writer / n_pages if n_pages else 0.0,
        "cpu_seconds": cpu_all,
        "cpu_ms_per_page_without_kb": 1000 * no_kb / n_pages if n_pages else 0.0,
        "x_raw_cpu": cpu_all / total["cpu:raw"] if total["cpu:raw"] else 0.0,
        "x_raw_cpu_without_kb": no_kb / total["cpu:raw"] if total["cpu:raw"] else 0.0,
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
    ap.add_argument(
        "--pdf", type=Path, nargs="*", help="profile these PDFs instead of the corpus's born-digital set"
    )
    args = ap.parse_args(argv)
    C.quiet_logs()
    repeats = args.repeats or (1 if args.quick else 2)
    finders = (args.finders or "auto,stream").split(",")
    gen = args.generated_pages if args.generated_pages is not None else (2 if args.quick else 40)
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="bench-stages-") as tmp:
        warm = not args.quick
        pdfs = args.pdf if args.pdf else C.corpus_pdfs(args.quick)
        out["pdfs" if args.pdf else "corpus"] = profile(pdfs, repeats, finders, Path(tmp) / "c", warm)
        if gen:
            out["generated"] = profile([C.generated(gen)], repeats, finders, Path(tmp) / "g", warm)
    if args.json:
        C.dump(out, args.json)
    for name, v in out.items():
        print(f"{name}: {v['documents']} documents, {v['pages']} pages; per page, wall / CPU ms:")
        for s in STAGES:
            print(f"  {s:15s} {v['ms_per_page'][s]:8.1f} {v['cpu_ms_per_page'][s]:8.1f}")
        raw = v["raw_get_text_dict_ms_per_page"]
        print(
            f"  raw get_text('dict') {raw['wall']:.1f} / {raw['cpu']:.1f}; "
            f"CPU x raw: {v['x_raw_cpu']:.1f} (without the knowledge base {v['x_raw_cpu_without_kb']:.1f}); "
            f"CPU without the knowledge base {v['cpu_ms_per_page_without_kb']:.0f} ms a page"
        )
        print(f"  writer pool held {v['writer_pool_ms_per_page']:.1f} ms a page (wall)")
    return out


if __name__ == "__main__":
    main()
