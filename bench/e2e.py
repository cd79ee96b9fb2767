"""End to end: pages/s and documents/hour through the Dagster graph, and Dagster's overhead.

Three inputs: born-digital corpus PDFs, a generated born-digital report, and scanned (image-only)
pages OCR'd by the CPU engine. Each is run through ``assets.cli.run_inbox`` (the asset graph, one
in-process run per document: what ``dagster-ocr run`` does) and, alternating with it in the same
process, through the same core functions without Dagster (``stages.run_core``: text, labels, tables,
paragraphs, DuckDB load, quality checks, knowledge base). The difference is Dagster's cost:

* per run: ``run_inbox`` on an empty inbox (definitions, instance, schema), plus the one-off import
  of dagster and the asset modules (measured in a fresh interpreter);
* per document: (graph time - per-run cost - core time) / documents.

    .venv/bin/python bench/e2e.py [--quick] [--repeats N] [--scanned-pages N] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import _common as C


def _inbox(files: list[Path], root: Path) -> Path:
    inbox = root / "inbox"
    inbox.mkdir(parents=True)
    for f in files:
        shutil.copy(f, inbox / f.name)
    return inbox


def graph_run(files: list[Path], root: Path, ocr: str | None = None) -> tuple[float, dict[str, Any]]:
    """Seconds for ``run_inbox`` over ``files`` in a fresh inbox and warehouse; and what it wrote."""
    from assets.cli import run_inbox
    from dagster_ocr.warehouse import Warehouse

    inbox = _inbox(files, root)
    wh = root / "wh.duckdb"
    seconds, summary = C.timed(lambda: run_inbox(inbox, wh, ocr_engine=ocr, show_progress=False))
    pages = (
        Warehouse(wh)
        .query("SELECT count(*) AS n, count(*) FILTER (WHERE text_source = 'ocr') AS ocr FROM pages")
        .iloc[0]
    )
    return seconds, {
        "statuses": summary.status.value_counts().to_dict() if len(summary) else {},
        "pages": int(pages["n"]),
        "ocr_pages": int(pages["ocr"]),
    }


def core_run(files: list[Path], root: Path, engine: Any = None) -> float:
    """Seconds for the same stages without Dagster (register + every core stage per document)."""
    import stages

    from dagster_ocr.ingest import DocumentStore
    from dagster_ocr.settings import Settings
    from dagster_ocr.warehouse import Warehouse

    def go() -> None:
        store = DocumentStore(root / "store")
        wh = Warehouse(root / "core.duckdb")
        wh.ensure_schema()
        settings = Settings()
        for f in files:
            stages.run_core(store.register(f)[0], wh, settings, engine)

    return C.timed(go)[0]


def import_seconds() -> float:
    """Cold import of dagster + the asset graph in a fresh interpreter (paid once per process)."""
    code = "import time; t=time.perf_counter(); import assets.definitions; print(time.perf_counter()-t)"
    out = subprocess.run([sys.executable, "-c", code], cwd=C.REPO, capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def measure(files: list[Path], repeats: int, tmp: Path, ocr: str | None, engine: Any) -> dict[str, Any]:
    """Graph and core alternated ``repeats`` times on ``files``; medians."""
    g_times, c_times, info = [], [], {}
    for r in range(repeats):
        s, info = graph_run(files, tmp / f"g{r}", ocr)
        g_times.append(s)
        c_times.append(core_run(files, tmp / f"c{r}", engine))
    g, c = C.median(g_times), C.median(c_times)
    pages = info.get("pages", 0)
    return {
        "files": [f.name for f in files],
        "documents": len(files),
        "pages": pages,
        "ocr_pages": info.get("ocr_pages", 0),
        "statuses": info.get("statuses", {}),
        "graph_seconds": g,
        "core_seconds": c,
        "graph_seconds_all": g_times,
        "core_seconds_all": c_times,
        "graph_pages_per_second": pages / g if g else 0.0,
        "core_pages_per_second": pages / c if c else 0.0,
        "graph_documents_per_hour": 3600 * len(files) / g if g else 0.0,
        "core_documents_per_hour": 3600 * len(files) / c if c else 0.0,
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repeats", type=int)
    ap.add_argument("--generated-pages", type=int)
    ap.add_argument("--scanned-pages", type=int, help="generated scanned pages (0: skip scanned input)")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    os.environ.pop("DAGSTER_HOME", None)  # an ephemeral instance: measure the pipeline, not a database
    C.quiet_logs()
    repeats = args.repeats or (1 if args.quick else 2)
    gen_pages = args.generated_pages or (2 if args.quick else 40)
    scan_pages = args.scanned_pages if args.scanned_pages is not None else (0 if args.quick else 3)
    out: dict[str, Any] = {"repeats": repeats}
    with tempfile.TemporaryDirectory(prefix="bench-e2e-") as t:
        tmp = Path(t)
        out["import_seconds"] = None if args.quick else import_seconds()
        if not args.quick:  # warm-up: the first run in a process pays lazy imports (GX, pandas, duckdb)
            graph_run([C.generated(2)], tmp / "warm_g")
            core_run([C.generated(2)], tmp / "warm_c")
        empty = [graph_run([], tmp / f"empty{r}")[0] for r in range(1 if args.quick else max(repeats, 3))]
        out["run_overhead_seconds"] = C.median(empty)
        out["born_digital_corpus"] = measure(C.corpus_pdfs(args.quick), repeats, tmp / "corpus", None, None)
        out["born_digital_generated"] = measure([C.generated(gen_pages)], repeats, tmp / "gen", None, None)
        for key in ("born_digital_corpus", "born_digital_generated"):
            m = out[key]
            m["dagster_overhead_per_document_seconds"] = (
                (m["graph_seconds"] - out["run_overhead_seconds"] - m["core_seconds"]) / m["documents"]
                if m["documents"]
                else 0.0
            )
        if scan_pages:
            from dagster_ocr.ocr import get_engine
            from dagster_ocr.settings import Settings

            engine = get_engine(Settings().ocr)
            files = [C.scanned(scan_pages)]
            corpus = C.find_corpus()
            files += [corpus / n for n in C.SCANNED_CORPUS if corpus and (corpus / n).is_file()]
            out["scanned"] = measure(files, 1, tmp / "scan", "rapidocr", engine)
        else:
            out["scanned"] = None
    if args.json:
        C.dump(out, args.json)
    print(json.dumps({k: v for k, v in out.items() if not isinstance(v, dict)}))
    return out


if __name__ == "__main__":
    main()
