"""Growth: peak RSS and time against document length (generated reports of 10 to 5,000 pages).

Each (size, mode) runs in a fresh interpreter, so one size's garbage cannot inflate the next
one's peak. The child reports its peak RSS (``ru_maxrss``) after imports and after every stage, so
a growth in memory is pinned to the stage that causes it. Peaks are the kernel's ``VmHWM`` of the
child (see ``_common.peak_rss_mib`` for why not ``ru_maxrss``).

Modes: ``core`` runs every stage the assets run (text, labels, tables, paragraphs, DuckDB load,
checks, knowledge base) through the core functions; ``graph`` runs ``assets.cli.run_inbox`` (the
Dagster graph, in process, with its pickling IO manager between assets).

    .venv/bin/python bench/growth.py [--quick] [--sizes 10,100,1000,5000] [--graph-sizes 10,100,1000]
                                     [--finder NAME] [--no-embeddings] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import _common as C


def _overrides(finder: str | None, embeddings: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"tables": {"finder": finder}} if finder else {}
    if not embeddings:
        out["kb"] = {"embeddings": False}
    return out


def child(pdf: Path, mode: str, finder: str | None, workdir: Path, embeddings: bool = True) -> dict[str, Any]:
    """Run one document in this (fresh) process; peak RSS after imports and after each stage."""
    import stages  # noqa: F401 - imports what the stages need, so the baseline includes it

    from dagster_ocr import pipeline
    from dagster_ocr.gate import judge_document
    from dagster_ocr.ingest import DocumentStore
    from dagster_ocr.settings import Settings
    from dagster_ocr.warehouse import Warehouse

    C.quiet_logs()
    overrides = _overrides(finder, embeddings)
    settings = Settings.load(overrides=overrides)
    mem: dict[str, float] = {"imports": C.peak_rss_mib()}
    sec: dict[str, float] = {}
    start = time.perf_counter()
    if mode == "graph":
        from assets.cli import run_inbox

        inbox = workdir / "inbox"
        inbox.mkdir(parents=True)
        shutil.copy(pdf, inbox / pdf.name)  # the inbox scan skips symlinks
        sec["graph"], summary = C.timed(
            lambda: run_inbox(
                inbox, workdir / "wh.duckdb", overrides_json=json.dumps(overrides), show_progress=False
            )
        )
        mem["graph"] = C.peak_rss_mib()
        status = str(summary.status.iloc[0]) if len(summary) else "missing"
    else:
        wh = Warehouse(workdir / "wh.duckdb")
        wh.ensure_schema()
        source = DocumentStore(workdir / "store").register(pdf)[0]

        def stage(name: str, fn: Any) -> Any:
            sec[name], out = C.timed(fn)
            mem[name] = C.peak_rss_mib()
            return out

        doc = stage("text", lambda: pipeline.extract_document(source, settings))
        labels = stage("labels", lambda: pipeline.document_labels(doc, settings))
        tables = stage("tables", lambda: pipeline.document_tables(doc, settings))
        paras = stage("paragraphs", lambda: pipeline.document_paragraphs(doc, labels, tables, settings))
        stage("duckdb_load", lambda: wh.write_document(doc, labels, tables, paras))
        stage("checks", lambda: judge_document(wh, source.doc_id, doc.status, doc.error, settings.quality))
        stage("knowledge_base", lambda: stages._kb(wh, source.doc_id, settings.kb))
        status = str(doc.status)
    return {
        "seconds": time.perf_counter() - start,
        "stage_seconds": sec,
        "peak_rss_mib_after": mem,
        "current_rss_mib": C.current_rss_mib(),
        "peak_rss_mib_final": C.peak_rss_mib(),
        "status": status,
    }


def run_child(pdf: Path, mode: str, finder: str | None, embeddings: bool = True) -> dict[str, Any]:
    """One fresh interpreter for one (document, mode); adds the kernel's view of its peak RSS."""
    with tempfile.TemporaryDirectory(prefix="bench-growth-") as tmp:
        out_json = Path(tmp) / "out.json"
        cmd = [
            sys.executable,
            "-W",
            "ignore",
            __file__,
            "--child",
            str(pdf),
            "--mode",
            mode,
            "--out",
            str(out_json),
        ]
        if finder:
            cmd += ["--finder", finder]
        if not embeddings:
            cmd += ["--no-embeddings"]
        env = {**os.environ, "PYTHONPATH": str(Path(__file__).parent)}
        env.pop("DAGSTER_HOME", None)
        proc = subprocess.Popen(cmd, cwd=C.REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
        stderr = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            raise RuntimeError(f"growth child failed ({mode}, {pdf.name}): {stderr[-2000:]}")
        result = json.loads(out_json.read_text())
    # kept for reference only: ru_maxrss of a vfork+exec child includes the parent's high-water mark
    result["wait4_ru_maxrss_mib"] = usage.ru_maxrss / 1024
    return result


def growth(
    sizes: list[int], graph_sizes: list[int], finder: str | None, embeddings: bool = True
) -> dict[str, Any]:
    """Every size in a fresh process per mode; ratios against the smallest size."""
    rows = []
    for n in sizes:
        pdf = C.generated(n)
        for mode in ("core", "graph"):
            if mode == "graph" and n not in graph_sizes:
                continue
            r = run_child(pdf, mode, finder, embeddings)
            r.update(pages=n, mode=mode, file_bytes=pdf.stat().st_size)
            r["peak_rss_mib"] = r["peak_rss_mib_final"]
            r["above_imports_mib"] = r["peak_rss_mib"] - r["peak_rss_mib_after"]["imports"]
            r["seconds_per_page"] = r["seconds"] / n
            rows.append(r)
    summary: dict[str, Any] = {}
    for mode in ("core", "graph"):
        mine = [r for r in rows if r["mode"] == mode]
        if len(mine) < 2:
            continue
        base = mine[0]
        summary[mode] = {
            str(r["pages"]): {
                "peak_rss_ratio": r["peak_rss_mib"] / base["peak_rss_mib"],
                "above_imports_ratio": r["above_imports_mib"] / max(base["above_imports_mib"], 1.0),
                "seconds_per_page_ratio": r["seconds_per_page"] / base["seconds_per_page"],
            }
            for r in mine
        }
    return {"finder": finder or "default", "embeddings": embeddings, "rows": rows, "vs_smallest": summary}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--sizes")
    ap.add_argument("--graph-sizes")
    ap.add_argument("--finder", help="TableSettings.finder override (default: the settings default)")
    ap.add_argument(
        "--no-embeddings", action="store_true", help="kb.embeddings=false (BM25-only knowledge base)"
    )
    ap.add_argument("--json", type=Path)
    ap.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--mode", default="core", help=argparse.SUPPRESS)
    ap.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        with tempfile.TemporaryDirectory(prefix="bench-growth-child-") as tmp:
            C.dump(child(args.child, args.mode, args.finder, Path(tmp), not args.no_embeddings), args.out)
        return {}
    sizes = [int(s) for s in (args.sizes or ("1,3" if args.quick else "10,100,1000,5000")).split(",")]
    graph = [int(s) for s in (args.graph_sizes or ("" if args.quick else "10,100,1000")).split(",") if s]
    out = growth(sizes, graph, args.finder, not args.no_embeddings)
    if args.json:
        C.dump(out, args.json)
    print(json.dumps(out["vs_smallest"]))
    return out


if __name__ == "__main__":
    main()
