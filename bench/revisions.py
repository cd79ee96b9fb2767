"""Two revisions of the code side by side: parse speed against raw PyMuPDF, and the Dagster graph.

Checks ``--base`` out into a temporary git worktree and runs the same measurement on it and on the
working tree, alternating round by round (so load from other processes hits both alike), each in a
fresh interpreter that imports that tree's code. Measured per round:

* ``parse``: ``pipeline.parse`` over the born-digital corpus and a generated 40-page report, best of
  5, with raw ``page.get_text()`` timed in the same process (the ratio is what the issue's goal reads).
* ``graph`` (unless ``--no-graph``): ``assets.cli.run_inbox`` over the corpus, after one warm-up
  document, with and without embeddings.

Before the rounds, both trees parse every PDF of the corpus and a generated 300-page report (OCR
off) and the documents whose lines, labels, tables or paragraphs differ are listed: a speed-up
that changes the output is a different change. ``--warehouse`` also runs every corpus PDF through
the Dagster graph in both trees and lists the documents whose warehouse rows differ (sections,
furniture, quality results and gate decisions included; clocks and paths left out).

    .venv/bin/python bench/revisions.py --base REV [--rounds 3] [--no-graph] [--warehouse] [--json OUT]
"""

from __future__ import annotations

import argparse
import dataclasses
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


def parse_child() -> dict[str, Any]:
    """In a fresh interpreter whose cwd is the tree under test: parse timings against the floor."""
    import pymupdf

    from dagster_ocr.ingest import DocumentStore
    from dagster_ocr.pipeline import parse
    from dagster_ocr.settings import Settings

    out: dict[str, Any] = {}
    for which, pdfs in (("corpus", C.corpus_pdfs(False)), ("generated", [C.generated(40)])):
        store = DocumentStore(Path(tempfile.mkdtemp()) / "store")
        sources = [store.register(p)[0] for p in pdfs]
        settings = Settings()

        def floor(pdfs: list[Path] = pdfs) -> None:
            for p in pdfs:
                with pymupdf.open(p) as doc:
                    for page in doc:
                        page.get_text()

        def ours(sources: list = sources, settings: Settings = settings) -> None:
            for s in sources:
                parse(s, settings)

        ours()  # warm-up: imports, caches
        floor()
        f = min(C.timed(floor)[0] for _ in range(5))
        o = min(C.timed(ours)[0] for _ in range(5))
        out[which] = {"pymupdf_s": f, "parse_s": o, "slowdown": o / f}
    return out


def _facets(obj: Any, path: str, acc: dict[str, list[str]]) -> None:
    """Gather every leaf value under ``path`` (dataclass fields, dict keys, list items) in order.

    One digest per field path, not one over the whole repr: a field that only one of the two trees
    has (a new output) is then told apart from a changed value, and a change names its field.
    """
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        for f in dataclasses.fields(obj):
            if f.name != "seconds":  # clocks
                _facets(getattr(obj, f.name), f"{path}.{f.name}", acc)
    elif isinstance(obj, dict):
        acc.setdefault(f"{path}#", []).append(repr(sorted(map(repr, obj))))
        for v in obj.values():
            _facets(v, f"{path}[]", acc)
    elif isinstance(obj, (list, tuple)) and any(
        dataclasses.is_dataclass(v) or isinstance(v, (dict, list, tuple)) for v in obj
    ):
        acc.setdefault(f"{path}#", []).append(str(len(obj)))
        for v in obj:
            _facets(v, f"{path}[]", acc)
    else:
        acc.setdefault(path, []).append(repr(obj))


def outputs_child() -> dict[str, dict[str, str]]:
    """In a fresh interpreter: per document, a digest of each output field of its parse."""
    import hashlib

    from dagster_ocr.ingest import DocumentStore
    from dagster_ocr.pipeline import parse
    from dagster_ocr.settings import Settings

    C.quiet_logs()
    corpus = C.find_corpus()
    pdfs = sorted(corpus.glob("**/*.pdf")) if corpus else []
    store = DocumentStore(Path(tempfile.mkdtemp()) / "store")
    settings = Settings.load(None, {"text": {"ocr_mode": "never"}})
    out: dict[str, dict[str, str]] = {}
    for pdf in [*pdfs, C.generated(300)]:
        parsed = parse(store.register(pdf)[0], settings)
        acc: dict[str, list[str]] = {}
        doc = parsed.document
        for f in dataclasses.fields(doc):
            # the store's paths and the file's clock differ by nature; the settings' text and hash
            # change with any new setting, which is no change of what was extracted
            if f.name not in ("source", "settings"):
                value = getattr(doc, f.name)
                _facets(list(value) if f.name == "pages" else value, f"document.{f.name}", acc)
        _facets(parsed.labels, "labels", acc)
        _facets(parsed.tables, "tables", acc)
        _facets(parsed.paragraphs, "paragraphs", acc)
        name = str(pdf.relative_to(corpus)) if corpus and pdf.is_relative_to(corpus) else pdf.name
        out[name] = {k: hashlib.sha256("\x00".join(v).encode()).hexdigest()[:16] for k, v in acc.items()}
    return out


#: warehouse columns that differ from run to run by nature (clocks, folders, settings text): the
#: inbox's ``files`` and ``document_partitions`` rows carry the scan's paths, times and mtimes
_VOLATILE = (
    "_at",
    "_path",
    "path",
    "mtime",
    "_seen",
    "duplicate_of",
    "seconds",
    "settings_json",
    "settings_hash",
    "pipeline_version",
)


def warehouse_child() -> dict[str, str]:
    """In a fresh interpreter: every corpus PDF through the Dagster graph (OCR and embeddings off),
    then a digest per document of its rows in every warehouse table but the volatile columns:
    sections, quality results, gate decisions and chunks included, as analysts read them."""
    import hashlib

    C.quiet_logs()
    from assets.cli import run_inbox
    from dagster_ocr.warehouse import Warehouse

    corpus = C.find_corpus()
    pdfs = sorted(corpus.glob("**/*.pdf")) if corpus else []
    work = Path(tempfile.mkdtemp())
    inbox = work / "inbox"
    inbox.mkdir()
    for i, pdf in enumerate(pdfs):
        shutil.copy(pdf, inbox / f"{i:03d}_{pdf.name}")
    wh_path = work / "w.duckdb"
    run_inbox(
        inbox, wh_path, show_progress=False, overrides_json='{"kb": {"embeddings": false}}', ocr_engine="none"
    )
    wh = Warehouse(wh_path)
    names = {
        r["doc_id"]: r["file_name"]
        for r in wh.query("SELECT doc_id, file_name FROM documents").to_dict("records")
    }
    digests = {doc_id: hashlib.sha256() for doc_id in names}
    tables = wh.query(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main' "
        "AND table_type = 'BASE TABLE' ORDER BY table_name"
    )["table_name"]
    for table in tables:
        cols = wh.query(f"SELECT * FROM {table} LIMIT 0").columns
        if "doc_id" not in cols:
            continue
        keep = [c for c in cols if not any(c.endswith(v) or c == v for v in _VOLATILE)]
        frame = wh.query(f"SELECT {', '.join(keep)} FROM {table} ORDER BY ALL")
        for doc_id, rows in frame.groupby("doc_id", sort=True):
            if doc_id in digests:
                digests[doc_id].update(f"{table}:{rows.to_csv(index=False)}".encode())
    return {names[d]: h.hexdigest() for d, h in sorted(digests.items(), key=lambda kv: names[kv[0]])}


def graph_child(embeddings: bool) -> dict[str, Any]:
    """In a fresh interpreter: the corpus through the Dagster graph, seconds (one warm-up document)."""
    C.quiet_logs()
    from assets.cli import run_inbox

    work = Path(tempfile.mkdtemp())
    inbox, warm = work / "inbox", work / "warm"
    inbox.mkdir(), warm.mkdir()
    pdfs = C.corpus_pdfs(False)
    for p in pdfs:
        shutil.copy(p, inbox / p.name)
    shutil.copy(pdfs[0], warm / pdfs[0].name)
    overrides = json.dumps({} if embeddings else {"kb": {"embeddings": False}})
    run_inbox(warm, work / "warm.duckdb", show_progress=False, overrides_json=overrides)
    seconds, _ = C.timed(
        lambda: run_inbox(inbox, work / "w.duckdb", show_progress=False, overrides_json=overrides)
    )
    return {"seconds": seconds, "documents": len(pdfs)}


def _run(tree: Path, *args: str) -> dict[str, Any]:
    cmd = [sys.executable, str(tree / "bench" / "revisions.py"), "--child", *args]
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def _compare(what: str, digests: dict[str, dict[str, Any]]) -> list[str]:
    """Print and return the documents whose digests differ between the two trees.

    Outputs carry a digest per field: only fields both trees have are compared, and each differing
    document names its changed fields (and, once, the fields only one tree has).
    """
    base, head = digests["base"], digests["head"]
    differ, why = [], {}
    only: dict[str, set[str]] = {"base": set(), "head": set()}
    for k in sorted(head.keys() | base.keys()):
        b, h = base.get(k), head.get(k)
        if isinstance(b, dict) and isinstance(h, dict):
            only["base"] |= b.keys() - h.keys()
            only["head"] |= h.keys() - b.keys()
            changed = sorted(f for f in b.keys() & h.keys() if b[f] != h[f])
            if changed:
                differ.append(k)
                why[k] = changed
        elif b != h:
            differ.append(k)
    print(
        f"{what}: {len(head) - len(differ)} of {len(head)} documents identical"
        + (f"; differ: {', '.join(differ)}" if differ else ""),
        flush=True,
    )
    for k, fields in why.items():
        print(f"  {k}: {', '.join(fields[:8])}{' ...' if len(fields) > 8 else ''}", flush=True)
    for tree, fields in only.items():
        if fields:
            print(f"  fields only in {tree} (not compared): {', '.join(sorted(fields))}", flush=True)
    return differ


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", help="git revision to compare the working tree with")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--no-graph", action="store_true")
    ap.add_argument("--warehouse", action="store_true", help="also compare the warehouses' rows")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        kind = args.child[0]
        children = {"parse": parse_child, "outputs": outputs_child, "warehouse": warehouse_child}
        result = children[kind]() if kind in children else graph_child(kind == "graph-emb")
        print(json.dumps(result))
        return 0
    if not args.base:
        ap.error("--base is required")
    base_dir = Path(tempfile.mkdtemp()) / "base"
    subprocess.run(
        ["git", "worktree", "add", "-q", "--detach", str(base_dir), args.base], cwd=C.REPO, check=True
    )
    # the base's own bench scripts may predate this one: run this file inside the base tree
    shutil.copy(Path(__file__), base_dir / "bench" / "revisions.py")
    trees = {"base": base_dir, "head": C.REPO}
    kinds = ["parse"] + ([] if args.no_graph else ["graph-noemb", "graph-emb"])
    rows: list[dict[str, Any]] = []
    started = time.perf_counter()
    try:
        digests = {name: _run(tree, "outputs") for name, tree in trees.items()}
        differ = _compare("outputs", digests)
        if args.warehouse:
            differ += _compare("warehouse", {name: _run(tree, "warehouse") for name, tree in trees.items()})
        for r in range(args.rounds):
            for kind in kinds:
                for name, tree in trees.items():
                    rows.append({"round": r, "tree": name, "kind": kind, **_run(tree, kind)})
                    print(json.dumps(rows[-1]), flush=True)
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(base_dir)], cwd=C.REPO, check=False)
    summary: dict[str, Any] = {
        "base": args.base,
        "outputs differ": differ,
        "rounds": args.rounds,
        "minutes": (time.perf_counter() - started) / 60,
    }
    for kind in kinds:
        for name in trees:
            got = [row for row in rows if row["kind"] == kind and row["tree"] == name]
            if kind == "parse":
                for which in ("corpus", "generated"):
                    summary[f"{name} parse {which} s"] = C.median(g[which]["parse_s"] for g in got)
                    summary[f"{name} parse {which} slowdown vs pymupdf"] = C.median(
                        g[which]["slowdown"] for g in got
                    )
            else:
                summary[f"{name} {kind} s"] = C.median(g["seconds"] for g in got)
    print(json.dumps(summary, indent=2))
    if args.json:
        C.dump({"rows": rows, "summary": summary}, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
