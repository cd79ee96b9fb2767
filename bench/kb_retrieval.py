"""Knowledge-base retrieval on the dev question set (issue 34): the product against two naive anchors.

The question set (``bench/kb_questions.json``) asks about pages of the two 10-K reports in
``../shared/reports`` and of some text-rich corpus documents; each question has gold pages (0-based
physical page indexes) and the expected figure or phrase printed there.

1. Parse: the question set's documents are copied to ``<warehouse stem>_inbox/`` and parsed with
   the product's CLI, ``dagster-ocr run INBOX --warehouse WAREHOUSE`` (a few minutes for the two
   reports). ``--reuse`` with an existing ``--warehouse`` skips this and only searches, so a change
   to search can be measured without parsing again (a change to chunking or embeddings needs a
   new parse, or ``--rebuild-kb``: ``kb.load_document`` for every parsed document of the warehouse).
2. Search: every question through ``dagster_ocr.kb.search`` in each mode (bm25, vector, hybrid),
   top 10, (a) one document (``doc_ids=[the question's document]``) and (b) the shared knowledge
   base (every document). A hit is a returned chunk of the question's document whose page range
   ``[page_index, last_page_index]`` covers a gold page.
3. Anchors, built in the same run from plain pymupdf ``page.get_text()`` of the same PDFs:
   - ``naive_bm25_pages``: Okapi BM25 (k1 = 1.2, b = 0.75) over whole pages with DuckDB's fts
     extension, loaded offline the way ``dagster_ocr/search_index.py`` does it (``duck.load``), the
     product's tokenizer (``search_index.tokenize``) and the product's stemmer setting (porter,
     no stopwords) on pages and queries alike;
   - ``naive_minilm_chunks``: all-MiniLM-L6-v2 (the product's embedder,
     ``embeddings.get_embedder``) over 1,000-character chunks with 200 overlap of each document's
     concatenated page text, exact cosine top-k; a chunk's pages are the pages its characters came
     from. Vectors are cached beside the warehouse (``<warehouse>.naive_minilm.npz``, keyed by text).
4. Scores: recall@1/5/10 and MRR (first hit in the top 10, else 0), overall, by kind
   (table_figure | text) and by split (tune | check); p50/p95 latency of each ``kb.search`` mode
   (end to end, warm: one search per mode first); the knowledge_base stage's CPU seconds per page
   (``kb.load_document`` + ``kb.embed_document`` on a copy of the warehouse with its vectors
   dropped, ``time.process_time``: every thread; ``--no-kb-stage`` skips it).

Markdown to stdout, everything (per-question ranks and top-5 citations included) to ``--json``.

    .venv/bin/python bench/kb_retrieval.py --warehouse /tmp/kb34/base.duckdb --json /tmp/kb34/base.json
    .venv/bin/python bench/kb_retrieval.py --warehouse /tmp/kb34/base.duckdb --reuse --no-kb-stage
"""

from __future__ import annotations

import argparse
import bisect
import hashlib
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pymupdf

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from dagster_ocr import duck, embeddings, kb  # noqa: E402
from dagster_ocr.kb_settings import KbSettings  # noqa: E402
from dagster_ocr.search_index import tokenize  # noqa: E402
from dagster_ocr.warehouse import Warehouse  # noqa: E402

QUESTIONS = REPO / "bench" / "kb_questions.json"
MODES = ("bm25", "vector", "hybrid")
ANCHORS = ("naive_bm25_pages", "naive_minilm_chunks")
SYSTEMS = tuple(f"product_{m}" for m in MODES) + ANCHORS
SCOPES = ("one_doc", "shared")
TOP = 10
CHUNK_CHARS, CHUNK_OVERLAP = 1000, 200
BM25_K1, BM25_B = 1.2, 0.75


def find_shared() -> Path:
    """``../shared`` (the corpus and the reports beside it), as tests/conftest.py finds the corpus."""
    for c in (os.environ.get("DAGSTER_OCR_CORPUS"), REPO.parent / "shared" / "corpus", "/work/shared/corpus"):
        if c and (Path(c) / "MANIFEST.json").is_file():
            return Path(c).parent
    raise SystemExit("../shared not found: set DAGSTER_OCR_CORPUS to ../shared/corpus")


def git_state() -> dict[str, Any]:
    """The commit and whether the product's code differs from it (a bench of a moving tree)."""

    def git(*a: str) -> str:
        return subprocess.run(
            ["git", *a], cwd=REPO, capture_output=True, text=True, check=False
        ).stdout.strip()

    dirty = git("status", "--porcelain", "--", "dagster_ocr", "assets", "resources", "sql").splitlines()
    return {"commit": git("rev-parse", "--short", "HEAD") or None, "product_files_modified": len(dirty)}


def cpu_model() -> str:
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=False).stdout
        for line in out.splitlines():
            if line.startswith("Model name:"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


# ---- parse ---------------------------------------------------------------------------------------


def parse(sources: dict[str, Path], warehouse: Path) -> dict[str, Any]:
    """Copy the documents to an inbox beside the warehouse and run ``dagster-ocr run`` on it."""
    inbox = warehouse.with_name(warehouse.stem + "_inbox")
    inbox.mkdir(parents=True, exist_ok=True)
    for name, path in sources.items():
        if not (inbox / name).exists():
            shutil.copyfile(path, inbox / name)
    exe = Path(sys.executable).with_name("dagster-ocr")
    cmd = [str(exe), "run", str(inbox), "--warehouse", str(warehouse), "--no-progress"]
    print("parsing:", " ".join(cmd), file=sys.stderr, flush=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    # this checkout's code, also where the venv's editable install points at another one
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
    }
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False, env=env, cwd=REPO)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout[-4000:] + proc.stderr[-4000:])
        raise SystemExit(f"dagster-ocr run failed ({proc.returncode})")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {
        "command": " ".join(cmd),
        "wall_s": round(wall, 1),
        "cpu_s": round(cpu, 1),
        "summary": proc.stdout[-3000:],
    }


def documents(wh: Warehouse) -> dict[str, dict[str, Any]]:
    """file name -> doc_id, status, pages (the latest row per file name)."""
    df = wh.query("SELECT doc_id, file_name, status, n_pages FROM documents")
    return {
        str(r.file_name): {"doc_id": str(r.doc_id), "status": str(r.status), "n_pages": int(r.n_pages or 0)}
        for r in df.itertuples()
    }


def chunk_pages(wh: Warehouse) -> dict[tuple[str, str], tuple[int, int]]:
    df = wh.query("SELECT doc_id, chunk_id, page_index, last_page_index FROM kb_chunks")
    return {
        (str(r.doc_id), str(r.chunk_id)): (int(r.page_index), int(r.last_page_index)) for r in df.itertuples()
    }


# ---- the naive anchors ---------------------------------------------------------------------------


class NaivePages:
    """Okapi BM25 over whole pages with DuckDB's fts (the product's tokenizer and stemmer setting)."""

    def __init__(self, pages: dict[str, list[str]], stemmer: str = "porter"):
        self.con = duckdb.connect()
        duck.load(self.con, "fts")
        rows = []
        for f, texts in pages.items():
            for i, t in enumerate(texts):
                rows.append((len(rows), f, i, " ".join(tokenize(t))))
        self.con.execute("CREATE TABLE pages (rid INTEGER, file VARCHAR, page INTEGER, body VARCHAR)")
        self.con.executemany("INSERT INTO pages VALUES (?, ?, ?, ?)", rows)
        self.con.execute(
            f"PRAGMA create_fts_index('pages', 'rid', 'body', stemmer = '{stemmer}', "
            "stopwords = 'none', ignore = '\\s+', strip_accents = 1, lower = 1, overwrite = 1)"
        )

    def search(self, query: str, file: str | None) -> list[dict[str, Any]]:
        terms = " ".join(tokenize(query))
        if not terms:
            return []
        where, params = "", [terms, BM25_K1, BM25_B]
        if file is not None:
            where, params = "WHERE file = ?", [*params, file]
        df = self.con.execute(
            f"""SELECT file, page, score FROM (
                  SELECT file, page, rid, fts_main_pages.match_bm25(rid, ?, k := ?, b := ?) AS score
                  FROM pages {where}) WHERE score IS NOT NULL
                ORDER BY score DESC, file, page LIMIT {TOP}""",
            params,
        ).fetchall()
        return [{"file": f, "first": p, "last": p, "citation": _cite(f, p, p)} for f, p, _ in df]


def naive_chunks(pages: dict[str, list[str]]) -> list[dict[str, Any]]:
    """1,000-character chunks with 200 overlap of each document's concatenated page text."""
    out = []
    for f, texts in pages.items():
        starts, pos = [], 0
        for t in texts:
            starts.append(pos)
            pos += len(t)
        whole = "".join(texts)
        step = CHUNK_CHARS - CHUNK_OVERLAP
        for s in range(0, max(len(whole) - CHUNK_OVERLAP, 1), step):
            e = min(s + CHUNK_CHARS, len(whole))
            text = whole[s:e]
            if not text.strip():
                continue
            first = bisect.bisect_right(starts, s) - 1
            last = bisect.bisect_right(starts, e - 1) - 1
            out.append({"file": f, "first": first, "last": last, "text": text})
    return out


class NaiveVectors:
    """Exact cosine top-k over the naive chunks' all-MiniLM-L6-v2 vectors."""

    def __init__(self, chunks: list[dict[str, Any]], embedder: Any, cache: Path):
        self.chunks = chunks
        self.files = np.array([c["file"] for c in chunks])
        key = hashlib.md5("\x00".join(c["text"] for c in chunks).encode()).hexdigest()
        self.embed_s = 0.0
        if cache.exists():
            z = np.load(cache)
            if str(z["key"]) == key:
                self.vectors = z["vectors"]
                return
        t0 = time.perf_counter()
        self.vectors = embedder.embed([c["text"] for c in chunks], 32)
        self.embed_s = time.perf_counter() - t0
        np.savez(cache, key=np.array(key), vectors=self.vectors)

    def search(self, qvec: np.ndarray, file: str | None) -> list[dict[str, Any]]:
        scores = self.vectors @ qvec
        if file is not None:
            scores = np.where(self.files == file, scores, -np.inf)
        order = np.argsort(-scores, kind="stable")[:TOP]
        out = []
        for i in order:
            if not np.isfinite(scores[i]):
                break
            c = self.chunks[int(i)]
            out.append(
                {
                    "file": c["file"],
                    "first": c["first"],
                    "last": c["last"],
                    "citation": _cite(c["file"], c["first"], c["last"]),
                }
            )
        return out


def _cite(file: str, first: int, last: int) -> str:
    return f"{file}, p. {first + 1}" if first == last else f"{file}, pp. {first + 1}-{last + 1}"


# ---- scoring -------------------------------------------------------------------------------------


def first_hit(results: list[dict[str, Any]], q: dict[str, Any]) -> int | None:
    gold = set(q["gold_pages"])
    for rank, r in enumerate(results[:TOP], start=1):
        if r["file"] == q["file"] and any(r["first"] <= g <= r["last"] for g in gold):
            return rank
    return None


def metrics(ranks: list[int | None]) -> dict[str, float]:
    n = max(len(ranks), 1)
    return {
        "n": len(ranks),
        "r@1": sum(1 for r in ranks if r is not None and r <= 1) / n,
        "r@5": sum(1 for r in ranks if r is not None and r <= 5) / n,
        "r@10": sum(1 for r in ranks if r is not None and r <= 10) / n,
        "mrr": sum(1.0 / r for r in ranks if r is not None) / n,
    }


def pct(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    v = sorted(values)
    return v[min(len(v) - 1, max(0, int(round(p / 100 * (len(v) - 1)))))]


# ---- the knowledge_base stage's CPU ---------------------------------------------------------------


def kb_stage_cpu(warehouse: Path, docs: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """``kb.load_document`` + ``kb.embed_document`` for every parsed document, on a copy of the
    warehouse whose vectors were dropped (so every chunk is embedded, as on a first run)."""
    with tempfile.TemporaryDirectory(dir=warehouse.parent) as tmp:
        copy = Path(tmp) / warehouse.name
        shutil.copyfile(warehouse, copy)
        if warehouse.with_suffix(warehouse.suffix + ".wal").exists():
            shutil.copyfile(
                warehouse.with_suffix(warehouse.suffix + ".wal"), copy.with_suffix(copy.suffix + ".wal")
            )
        wh = Warehouse(copy)
        wh.write(lambda con: con.execute("DELETE FROM kb_embeddings"))
        embeddings.get_embedder()  # loaded once per process, as in a run (not counted)
        per_doc, total_cpu, total_wall, total_pages = {}, 0.0, 0.0, 0
        for name, d in sorted(docs.items()):
            if d["status"] != "parsed":
                continue
            c0, w0 = time.process_time(), time.perf_counter()
            chunks = kb.load_document(wh, d["doc_id"], embed=False, settings=KbSettings())
            c1 = time.process_time()
            figures = kb.embed_document(wh, d["doc_id"], settings=KbSettings())
            cpu, wall = time.process_time() - c0, time.perf_counter() - w0
            per_doc[name] = {
                "pages": d["n_pages"],
                "chunks": len(chunks),
                "chunk_cpu_s": round(c1 - c0, 2),
                "embed_cpu_s": round(time.process_time() - c1, 2),
                "cpu_s": round(cpu, 2),
                "wall_s": round(wall, 2),
                "cpu_s_per_page": round(cpu / max(d["n_pages"], 1), 3),
                "embedded": figures.get("embedded"),
            }
            total_cpu, total_wall, total_pages = (
                total_cpu + cpu,
                total_wall + wall,
                total_pages + d["n_pages"],
            )
        reports = [v for k, v in per_doc.items() if k.startswith(("apple-", "tesla-"))]
        rep_pages = sum(v["pages"] for v in reports)
        return {
            "per_doc": per_doc,
            "cpu_s": round(total_cpu, 1),
            "wall_s": round(total_wall, 1),
            "pages": total_pages,
            "cpu_s_per_page": round(total_cpu / max(total_pages, 1), 3),
            "reports_cpu_s_per_page": round(sum(v["cpu_s"] for v in reports) / max(rep_pages, 1), 3),
            "threads": os.cpu_count(),
        }


# ---- main ----------------------------------------------------------------------------------------


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--warehouse", type=Path, required=True, help="DuckDB file to write, or (with --reuse) to read"
    )
    ap.add_argument("--reuse", action="store_true", help="an existing --warehouse: do not parse, only search")
    ap.add_argument(
        "--rebuild-kb",
        action="store_true",
        help="with --reuse: kb.load_document for every parsed document first",
    )
    ap.add_argument("--questions", type=Path, default=QUESTIONS)
    ap.add_argument("--json", type=Path, help="write every figure and the per-question results here")
    ap.add_argument("--no-kb-stage", action="store_true", help="skip timing the knowledge_base stage")
    ap.add_argument("--only", help="comma-separated question ids (a quick look at some misses)")
    args = ap.parse_args()

    shared = find_shared()
    questions = json.loads(args.questions.read_text(encoding="utf-8"))["questions"]
    if args.only:
        keep = set(args.only.split(","))
        questions = [q for q in questions if q["id"] in keep]
    sources = {q["file"]: shared / q["source"] for q in questions}
    warehouse = args.warehouse.resolve()
    report: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d"),
        "machine": cpu_model(),
        "cpus": os.cpu_count(),
        "command": " ".join([".venv/bin/python", "bench/kb_retrieval.py", *sys.argv[1:]]),
        "code": str(REPO),
        "git": git_state(),
        "questions": len(questions),
        "documents": sorted(sources),
    }
    if args.reuse:
        if not warehouse.exists():
            raise SystemExit(f"--reuse: no warehouse at {warehouse}")
        report["parse"] = None
    else:
        if warehouse.exists():
            raise SystemExit(f"{warehouse} exists: pass --reuse to search it, or name a new file")
        report["parse"] = parse(sources, warehouse)
    wh = Warehouse(warehouse)
    docs = documents(wh)
    if args.rebuild_kb:
        for d in docs.values():
            if d["status"] == "parsed":
                kb.load_document(wh, d["doc_id"], settings=KbSettings())
    report["warehouse_documents"] = docs
    missing = sorted(set(sources) - set(docs))
    if missing:
        print(f"warning: not in the warehouse: {missing}", file=sys.stderr)
    pages_of = chunk_pages(wh)
    file_of = {d["doc_id"]: f for f, d in docs.items()}

    # anchors from plain get_text()
    texts: dict[str, list[str]] = {}
    for name, path in sorted(sources.items()):
        with pymupdf.open(path) as doc:
            texts[name] = [p.get_text() for p in doc]
    t0 = time.perf_counter()
    pages_index = NaivePages(texts)
    build_bm25_s = time.perf_counter() - t0
    embedder = embeddings.get_embedder()
    if embedder is None:
        raise SystemExit(f"the embedding model is unavailable: {embeddings.unavailable_reason()}")
    nchunks = naive_chunks(texts)
    vectors = NaiveVectors(nchunks, embedder, warehouse.with_name(warehouse.name + ".naive_minilm.npz"))
    qvecs = embedder.embed([q["question"] for q in questions], 32)
    report["anchors"] = {
        "naive_bm25_pages": {"pages": sum(len(t) for t in texts.values()), "build_s": round(build_bm25_s, 2)},
        "naive_minilm_chunks": {"chunks": len(nchunks), "embed_s": round(vectors.embed_s, 1)},
    }

    # warm the product's search (the search file's refresh, the model, extensions) once per mode
    for m in MODES:
        kb.search(wh, "net sales", limit=TOP, mode=m)

    latency: dict[str, dict[str, list[float]]] = {m: {s: [] for s in SCOPES} for m in MODES}
    per_q = []
    for qi, q in enumerate(questions):
        entry: dict[str, Any] = {k: q[k] for k in ("id", "kind", "split", "file", "gold_pages", "expected")}
        entry["question"] = q["question"]
        d = docs.get(q["file"])
        for scope in SCOPES:
            results: dict[str, list[dict[str, Any]]] = {}
            for m in MODES:
                if scope == "one_doc" and d is None:
                    results[f"product_{m}"] = []
                    continue
                ids = [d["doc_id"]] if scope == "one_doc" else None
                t = time.perf_counter()
                hits = kb.search(wh, q["question"], limit=TOP, mode=m, doc_ids=ids)
                latency[m][scope].append(time.perf_counter() - t)
                rows = []
                for h in hits:
                    last = getattr(h, "last_page_index", None)
                    if last is None:
                        last = pages_of.get((h.doc_id, h.chunk_id), (h.page_index, h.page_index))[1]
                    rows.append(
                        {
                            "file": file_of.get(h.doc_id, h.file_name),
                            "first": int(h.page_index),
                            "last": int(last),
                            "citation": h.citation,
                            "mode": h.mode,
                        }
                    )
                results[f"product_{m}"] = rows
            target = q["file"] if scope == "one_doc" else None
            results["naive_bm25_pages"] = pages_index.search(q["question"], target)
            results["naive_minilm_chunks"] = vectors.search(qvecs[qi], target)
            for sysname, rows in results.items():
                cell: dict[str, Any] = {
                    "rank": first_hit(rows, q),
                    "top5": [r["citation"] for r in rows[:5]],
                    "top5_pages": [[r["first"], r["last"]] for r in rows[:5]],  # 0-based physical
                }
                used = {r["mode"] for r in rows if "mode" in r}
                if sysname.startswith("product_") and used - {sysname.removeprefix("product_")}:
                    cell["fell_back_to"] = sorted(used)  # vector/hybrid answered by BM25 (no vectors)
                entry.setdefault(sysname, {})[scope] = cell
        per_q.append(entry)
        if (qi + 1) % 10 == 0:
            print(f"  {qi + 1}/{len(questions)} questions", file=sys.stderr, flush=True)

    def group(pred: Callable[[dict[str, Any]], bool]) -> dict[str, dict[str, dict[str, float]]]:
        sel = [e for e in per_q if pred(e)]
        return {s: {sc: metrics([e[s][sc]["rank"] for e in sel]) for sc in SCOPES} for s in SYSTEMS}

    groups = {
        "all": group(lambda e: True),
        "table_figure": group(lambda e: e["kind"] == "table_figure"),
        "text": group(lambda e: e["kind"] == "text"),
        "tune": group(lambda e: e["split"] == "tune"),
        "check": group(lambda e: e["split"] == "check"),
    }
    report["scores"] = groups
    report["latency_ms"] = {
        m: {
            sc: {"p50": round(1000 * pct(v, 50), 1), "p95": round(1000 * pct(v, 95), 1), "n": len(v)}
            for sc, v in latency[m].items()
        }
        for m in MODES
    }
    report["kb_chunks"] = len(pages_of)
    if not args.no_kb_stage:
        print("timing the knowledge_base stage on a copy of the warehouse ...", file=sys.stderr, flush=True)
        report["kb_stage"] = kb_stage_cpu(warehouse, docs)
    report["per_question"] = per_q
    print(markdown(report))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1, default=str), encoding="utf-8")


def markdown(r: dict[str, Any]) -> str:
    g = r["scores"]
    n = {k: g[k]["naive_bm25_pages"]["shared"]["n"] for k in g}
    lines = [
        f"{r['questions']} questions ({n['table_figure']} table_figure, {n['text']} text; {n['tune']} tune, "
        f"{n['check']} check) over {len(r['documents'])} documents; {r['kb_chunks']} product chunks, "
        f"{r['anchors']['naive_minilm_chunks']['chunks']} naive chunks, "
        f"{r['anchors']['naive_bm25_pages']['pages']} pages.",
        "",
        "| system | scope | recall@1 | recall@5 | recall@10 | MRR |",
        "|---|---|---|---|---|---|",
    ]
    for s in SYSTEMS:
        for sc in SCOPES:
            m = g["all"][s][sc]
            lines.append(
                f"| {s} | {sc} | {m['r@1']:.2f} | {m['r@5']:.2f} | {m['r@10']:.2f} | {m['mrr']:.2f} |"
            )
    lines += [
        "",
        "recall@5 by kind and split:",
        "",
        "| system | scope | all | table_figure | text | tune | check |",
        "|---|---|---|---|---|---|---|",
    ]
    for s in SYSTEMS:
        for sc in SCOPES:
            cells = [f"{g[k][s][sc]['r@5']:.2f}" for k in ("all", "table_figure", "text", "tune", "check")]
            lines.append(f"| {s} | {sc} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "kb.search latency (end to end, warm, top 10):",
        "",
        "| mode | one_doc p50 ms | one_doc p95 ms | shared p50 ms | shared p95 ms |",
        "|---|---|---|---|---|",
    ]
    for m, v in r["latency_ms"].items():
        one, shared = v["one_doc"], v["shared"]
        lines.append(f"| {m} | {one['p50']} | {one['p95']} | {shared['p50']} | {shared['p95']} |")
    if r.get("kb_stage"):
        k = r["kb_stage"]
        lines += [
            "",
            f"knowledge_base stage (kb.load_document + kb.embed_document, every chunk embedded, "
            f"{k['threads']} CPUs): {k['cpu_s']} CPU s / {k['pages']} pages = "
            f"**{k['cpu_s_per_page']} CPU s/page**; "
            f"the two reports: **{k['reports_cpu_s_per_page']} CPU s/page**; wall {k['wall_s']} s.",
        ]
        lines += [
            "",
            "| document | pages | chunks | chunking CPU s | embedding CPU s | CPU s/page |",
            "|---|---|---|---|---|---|",
        ]
        for name, v in k["per_doc"].items():
            cells = [v[c] for c in ("pages", "chunks", "chunk_cpu_s", "embed_cpu_s", "cpu_s_per_page")]
            lines.append(f"| {name} | " + " | ".join(str(c) for c in cells) + " |")
    if r.get("parse"):
        p = r["parse"]
        lines += ["", f"parse: `{p['command']}`: {p['wall_s']} s wall, {p['cpu_s']} CPU s."]
    st = {f: d["status"] for f, d in r["warehouse_documents"].items() if d["status"] != "parsed"}
    if st:
        lines += ["", f"not searchable in the product (status): {st}"]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
