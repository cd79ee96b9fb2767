"""Knowledge-base search at scale: fts BM25 and HNSW against the hand-written ranking they replaced.

Issue 23. Builds a warehouse of ``--chunks`` chunks: every text-layer page of the corpus's PDFs
(../shared/corpus, MANIFEST split tune|check), cut into chunks of at most 1,200 characters, then
filler chunks of 150 words drawn from the corpus's own word frequencies up to the total, 100 per
document. Every chunk gets a vector: a random unit vector near one of 1,000 centres (the model is
far too slow to embed 100,000 chunks here; the index's cost does not depend on where vectors come from).

Queries: ``--queries`` per split, each 2-4 consecutive words (4+ letters) of a random corpus chunk,
so each has a document it came from. Measured, on one warm connection per ranking:

- ``old``: the hand-written Okapi BM25 (Python postings, kb.py before issue 23, kept here as the
  reference) and the brute-force ``array_cosine_similarity`` scan it used for vectors;
- ``fts``: ``SearchIndex.bm25`` (``match_bm25``) and ``SearchIndex.nearest`` (HNSW), and
  ``kb.search`` end to end (the freshness check, hit objects), in BM25 and in hybrid mode (the query
  embedded by the real model, both rankings fused; the chunks' vectors are synthetic, so only the
  latency means something);
- top-10 overlap of old BM25 and fts (``|old ∩ fts| / |old|``) per split, for stemmer none and porter;
  HNSW recall@10 against the exact scan.

    .venv/bin/python bench/kb_search.py --chunks 100000 --queries 100
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import re
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pymupdf

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dagster_ocr import embeddings  # noqa: E402
from dagster_ocr.kb import KbSettings, search, tokenize  # noqa: E402
from dagster_ocr.search_index import SearchIndex, nearest_query, search_path, sort_postings  # noqa: E402
from dagster_ocr.warehouse import Warehouse  # noqa: E402

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
CHUNKS_PER_DOC = 100


# ---- the ranking issue 23 removed from kb.py, kept as the reference ----------------------------


class OldBm25:
    """kb.py's Okapi BM25 before issue 23: postings in Python, idf = ln(1 + (N - df + .5)/(df + .5))."""

    def __init__(self, chunks: pd.DataFrame, k1: float = 1.2, b: float = 0.75):
        self.k1, self.b = k1, b
        self.keys = list(zip(chunks["doc_id"], chunks["chunk_id"], strict=True))
        self.postings: dict[str, list[tuple[int, int]]] = {}
        self.lengths: list[int] = []
        for row, (title, text) in enumerate(zip(chunks["section_title"], chunks["text"], strict=True)):
            terms = tokenize(f"{title or ''} {text}")
            self.lengths.append(len(terms))
            for term, tf in Counter(terms).items():
                self.postings.setdefault(term, []).append((row, tf))
        self.avg = sum(self.lengths) / max(len(self.lengths), 1)

    def top(self, query: str, n: int = 10) -> list[tuple[str, str]]:
        total = len(self.lengths)
        scores: dict[int, float] = {}
        for term in set(tokenize(query)):
            posting = self.postings.get(term)
            if not posting:
                continue
            idf = math.log(1.0 + (total - len(posting) + 0.5) / (len(posting) + 0.5))
            for row, tf in posting:
                norm = self.k1 * (1.0 - self.b + self.b * self.lengths[row] / (self.avg or 1.0))
                scores[row] = scores.get(row, 0.0) + idf * tf * (self.k1 + 1.0) / (tf + norm)
        ranked = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[:n]
        return [self.keys[r] for r, _ in ranked]


# ---- the knowledge base ------------------------------------------------------------------------


def corpus_chunks() -> tuple[list[dict], Counter]:
    manifest = json.loads((CORPUS / "MANIFEST.json").read_text())
    chunks: list[dict] = []
    words: Counter = Counter()
    for item in manifest["files"]:
        if item.get("role") != "input" or not item["file"].endswith(".pdf"):
            continue
        try:
            doc = pymupdf.open(CORPUS / item["file"])
        except Exception:  # a damaged input of the corpus: not a search question
            continue
        if doc.needs_pass or doc.is_encrypted:
            doc.close()
            continue
        doc_id = f"corpus{len({c['doc_id'] for c in chunks}):04d}"
        with doc:
            for page_index in range(doc.page_count):
                try:
                    page = doc.load_page(page_index)
                    text = re.sub(r"[ \t]+", " ", page.get_text("text")).strip()
                except Exception:  # a broken page of a damaged input
                    continue
                for start in range(0, len(text), 1200):
                    piece = text[start : start + 1200]
                    if len(piece) < 80:
                        continue
                    chunks.append(
                        {"doc_id": doc_id, "split": item.get("split", "tune"), "page_index": page_index}
                        | {"text": piece}
                    )
                    words.update(tokenize(piece))
    return chunks, words


def build(path: Path, total: int, seed: int) -> tuple[pd.DataFrame, list[dict]]:
    rng = random.Random(seed)
    real, words = corpus_chunks()
    vocab, weights = zip(*words.most_common(), strict=True)
    rows = []
    by_doc: dict[str, int] = Counter()
    for c in real:
        by_doc[c["doc_id"]] += 1
        rows.append(c | {"chunk_id": f"c{by_doc[c['doc_id']]:05d}"})
    filler = max(total - len(rows), 0)
    picks = rng.choices(vocab, weights=weights, k=filler * 150)
    for i in range(filler):
        rows.append(
            {"doc_id": f"filler{i // CHUNKS_PER_DOC:05d}", "split": "filler", "page_index": 0}
            | {"chunk_id": f"c{i % CHUNKS_PER_DOC:05d}", "text": " ".join(picks[i * 150 : (i + 1) * 150])}
        )
    frame = pd.DataFrame(rows)
    frame["source_kind"] = "paragraph"
    frame["source_id"] = frame["chunk_id"]
    frame["section_title"] = None
    frame["page_label"] = (frame["page_index"] + 1).astype(str)
    frame["last_page_label"] = frame["page_label"]
    frame["citation"] = frame["doc_id"] + ", p. " + frame["page_label"]
    wh = Warehouse(path)
    wh.ensure_schema()
    docs = frame.groupby("doc_id", as_index=False).first()[["doc_id"]]
    docs["file_name"] = docs["doc_id"] + ".pdf"
    docs["status"] = "parsed"
    nrng = np.random.default_rng(seed)
    centres = nrng.standard_normal((1000, embeddings.DIM)).astype(np.float32)
    vec = centres[nrng.integers(0, 1000, len(frame))] + 0.5 * nrng.standard_normal(
        (len(frame), embeddings.DIM)
    ).astype(np.float32)
    vec /= np.linalg.norm(vec, axis=1, keepdims=True)
    with wh.transaction() as con:
        con.register("_docs", docs)
        con.execute("INSERT INTO documents BY NAME SELECT * FROM _docs")
        kb = frame.drop(columns=["split"]).assign(loaded_at=pd.Timestamp.now())
        con.register("_kb", kb)
        con.execute("INSERT INTO kb_chunks BY NAME SELECT * FROM _kb")
        emb = pd.DataFrame(
            {"doc_id": frame["doc_id"], "chunk_id": frame["chunk_id"], "embedding": list(vec)}
            | {"model": embeddings.MODEL_NAME, "embedded_at": pd.Timestamp.now()}
        )
        con.register("_emb", emb)
        con.execute(
            f"""INSERT INTO kb_embeddings (doc_id, chunk_id, model, text_md5, embedding, embedded_at)
            SELECT e.doc_id, e.chunk_id, e.model, md5(k.text),
            e.embedding::FLOAT[{embeddings.DIM}], e.embedded_at
            FROM _emb e JOIN _kb k USING (doc_id, chunk_id)"""
        )
    queries = []
    for split in ("tune", "check"):
        pool = [c for c in rows if c["split"] == split]
        for _ in range(args.queries):
            c = rng.choice(pool)
            long_words = [w for w in re.findall(r"[^\W\d_]{4,}", c["text"])]
            if len(long_words) < 2:
                continue
            k = rng.randint(2, min(4, len(long_words)))
            start = rng.randrange(0, len(long_words) - k + 1)
            queries.append({"split": split, "q": " ".join(long_words[start : start + k])})
    return frame, queries


def pct(values: list[float], p: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p * (len(s) - 1))))]


#: CPU milliseconds of each query of the last ``timed`` call (time.process_time: every thread of the
#: process, so DuckDB's own threads are counted), read beside the wall-clock figures on a busy machine
CPU: dict[int, list[float]] = {}


def timed(fn, items) -> tuple[list, list[float]]:
    out, lat, cpu = [], [], []
    for it in items:
        t, c = time.perf_counter(), time.process_time()
        out.append(fn(it))
        lat.append((time.perf_counter() - t) * 1000)
        cpu.append((time.process_time() - c) * 1000)
    CPU[id(lat)] = cpu
    LOAD[id(lat)] = os.getloadavg()[0]
    return out, lat


#: the 1-minute load average when each ``timed`` call ended
LOAD: dict[int, float] = {}


def line(name: str, lat: list[float]) -> str:
    cpu = CPU.get(id(lat))
    cpu_part = f"{statistics.median(cpu):.1f} | {pct(cpu, 0.95):.1f}" if cpu else "- | -"
    load = LOAD.get(id(lat))
    return (
        f"| {name} | {statistics.median(lat):.1f} | {pct(lat, 0.95):.1f} | {cpu_part} | {len(lat)} | "
        f"{'-' if load is None else f'{load:.2f}'} |"
    )


HEADER = (
    "| ranking | p50 ms | p95 ms | CPU p50 ms | CPU p95 ms | queries | load (1 min) |\n"
    "|---|---|---|---|---|---|---|"
)


def progress(*parts: object) -> None:
    """Each figure as soon as it is measured (a long run on a busy machine may be cut short)."""
    print("#", *parts, flush=True)


def knowledge_base(work: Path, chunks: int, seed: int, keep: bool) -> tuple[Path, list[dict], dict]:
    """The warehouse of ``chunks`` chunks and its queries: built, or (``keep``) reused from ``work``
    when an earlier run with the same size and seed left them there."""
    path = work / f"kb{chunks}.duckdb"
    meta_path = work / f"kb{chunks}.json"
    if keep and path.exists() and meta_path.exists():
        meta = json.loads(meta_path.read_text())
        if meta.get("seed") == seed and meta.get("queries_per_split") == args.queries:
            progress(f"reusing {path} (built in {meta['build_s']} s) and its search file")
            return path, meta["queries"], meta
    for p in (path, search_path(path), meta_path):
        p.unlink(missing_ok=True)
    t = time.perf_counter()
    frame, queries = build(path, chunks, seed)
    meta = {
        "seed": seed,
        "queries_per_split": args.queries,
        "queries": queries,
        "chunks": len(frame),
        "corpus_chunks": int((frame["split"] != "filler").sum()),
        "build_s": round(time.perf_counter() - t, 1),
        "build_load": os.getloadavg()[0],
    }
    meta_path.write_text(json.dumps(meta))
    return path, queries, meta


def main() -> int:
    global args
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chunks", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=100, help="per split")
    ap.add_argument(
        "--work",
        "--dir",
        dest="work",
        type=Path,
        default=Path("/tmp/dagster-ocr-bench/kb_search"),
        help="where the knowledge base and its search file are kept",
    )
    ap.add_argument(
        "--fresh",
        action="store_true",
        help="rebuild the knowledge base and search file even if --work has them",
    )
    ap.add_argument(
        "--shipped-only",
        action="store_true",
        help="measure the shipped ranking only (porter fts, kb.search, HNSW): no old BM25, no stemmer none "
        "(each of which rebuilds the fts index or a Python index)",
    )
    ap.add_argument("--seed", type=int, default=23)
    args = ap.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    path, queries, meta = knowledge_base(args.work, args.chunks, args.seed, keep=not args.fresh)
    print(
        f"knowledge base: {meta['chunks']} chunks ({meta['corpus_chunks']} from the corpus), "
        f"built in {meta['build_s']} s at load {meta['build_load']:.2f}; {len(queries)} queries"
    )
    wh = Warehouse(path)
    qs = [q["q"] for q in queries]
    results: dict[str, object] = {"knowledge_base_build_s": meta["build_s"]}
    overlap: dict[str, dict[str, float]] = {}
    fts_lat: dict[str, list[float]] = {}
    old_lat: list[float] = []
    old_top: list = []
    stemmers = ("porter",) if args.shipped_only else ("none", "porter")

    if not args.shipped_only:
        t = time.perf_counter()
        old = OldBm25(
            wh.query("SELECT doc_id, chunk_id, section_title, text FROM kb_chunks ORDER BY doc_id, chunk_id")
        )
        old_build = time.perf_counter() - t
        old_top, old_lat = timed(lambda q: old.top(q), qs)
        results["old_index_build_s"] = round(old_build, 1)
        progress(f"old index build {old_build:.1f} s;", line("old BM25", old_lat))

    for stemmer in stemmers:
        index = SearchIndex(wh, stemmer)
        index.sort_postings = stemmer != "none"  # "none" is timed before and after sorting
        t, load = time.perf_counter(), os.getloadavg()[0]
        figures = index.refresh()  # from nothing: the search file's build; else fts only if the stemmer moved
        results[f"refresh_{stemmer}_s"] = round(time.perf_counter() - t, 1)
        results[f"refresh_{stemmer}"] = figures | {"load_before": load, "load_after": os.getloadavg()[0]}
        progress(f"refresh {stemmer}", results[f"refresh_{stemmer}_s"], "s", results[f"refresh_{stemmer}"])
        if stemmer == "none":
            with index.connection() as con:
                _, fts_lat["none, postings unsorted"] = timed(
                    lambda q, con=con, index=index: index.bm25(con, tokenize(q), 10, 1.2, 0.75), qs
                )
            index.close()
            writer = index._open_writer()
            t = time.perf_counter()
            sort_postings(writer)
            writer.execute("CHECKPOINT")
            results["sort_postings_s"] = round(time.perf_counter() - t, 1)
            progress(
                line("fts none unsorted", fts_lat["none, postings unsorted"]), results["sort_postings_s"]
            )
            writer.close()
        with index.connection() as con:
            progress(
                "duckdb threads on the search connection:",
                con.execute("SELECT current_setting('threads')").fetchone()[0],
            )
            index.bm25(con, tokenize(qs[0]), 10, 1.2, 0.75)  # warm
            tops, fts_lat[stemmer] = timed(
                lambda q, con=con, index=index: [
                    (h["doc_id"], h["chunk_id"]) for h, _ in index.bm25(con, tokenize(q), 10, 1.2, 0.75)
                ],
                qs,
            )
            progress(line(f"fts {stemmer} (SearchIndex.bm25)", fts_lat[stemmer]))
            if stemmer == "porter":
                # the bare SQL: match_bm25 over every row of chunks, top 10 (the reference form)
                bare = """SELECT doc_id, chunk_id FROM (
                    SELECT doc_id, chunk_id, fts_main_chunks.match_bm25(rid, ?, k := 1.2, b := 0.75) AS score
                    FROM chunks) WHERE score IS NOT NULL ORDER BY score DESC, doc_id, chunk_id LIMIT 10"""
                bare_top, fts_lat["bare"] = timed(
                    lambda q, con=con, bare=bare: con.execute(bare, [" ".join(tokenize(q))]).fetchall(), qs
                )
                same = sum([tuple(r) for r in a] == list(b) for a, b in zip(bare_top, tops, strict=True))
                results["shipped_equals_bare_top10"] = f"{same}/{len(qs)}"
                progress(
                    line("bare match_bm25 over every row", fts_lat["bare"]),
                    "same top-10:",
                    same,
                    "/",
                    len(qs),
                )
        if old_top:
            overlap[stemmer] = {}
            for split in ("tune", "check"):
                shares = [
                    len(set(o) & set(f)) / len(o)
                    for q, o, f in zip(queries, old_top, tops, strict=True)
                    if q["split"] == split and o
                ]
                overlap[stemmer][split] = round(statistics.mean(shares), 3) if shares else float("nan")
            progress("overlap", stemmer, overlap[stemmer])
        index.close()

    settings = KbSettings()  # porter, as shipped
    search(wh, qs[0], limit=10, settings=settings)  # warm: opens the search connection
    _, search_lat = timed(lambda q: search(wh, q, limit=10, settings=settings), qs)
    progress(line("kb.search (porter, end to end)", search_lat))
    # issue 34's goal: hybrid end to end (the query embedded by the model, BM25 and HNSW, fused).
    # The chunks' vectors are synthetic, so the hits mean nothing here; the work per query is real
    search(wh, qs[0], limit=10, settings=settings, mode="hybrid")  # warm: loads the query's embedder
    _, hybrid_lat = timed(lambda q: search(wh, q, limit=10, settings=settings, mode="hybrid"), qs)
    progress(line("kb.search hybrid (end to end)", hybrid_lat))

    index = SearchIndex(wh, "porter")
    nrng = np.random.default_rng(args.seed + 1)
    with index.connection() as con:
        sample = con.execute(
            f"SELECT embedding FROM vectors USING SAMPLE {len(qs)} ROWS (reservoir, {args.seed})"
        ).fetchall()
        probes = [
            (np.asarray(v, dtype=np.float32) + 0.1 * nrng.standard_normal(embeddings.DIM).astype(np.float32))
            for (v,) in sample
        ]
        probes = [(p / np.linalg.norm(p)).tolist() for p in probes]
        sql, params = nearest_query(probes[0], 10)  # the product's own query, not a look-alike
        plan = con.execute("EXPLAIN " + sql, params).fetchall()
        results["hnsw_in_plan"] = "HNSW_INDEX_SCAN" in "".join(str(r) for r in plan)
        try:
            results["hnsw_ef_search"] = con.execute("SELECT current_setting('hnsw_ef_search')").fetchone()[0]
        except duckdb.Error:  # never SET on this connection: vss's default (64)
            results["hnsw_ef_search"] = "default"
        index.nearest(con, probes[0], 10)  # warm
        hnsw_top, hnsw_lat = timed(
            lambda v: [h["chunk_id"] + h["doc_id"] for h, _ in index.nearest(con, v, 10)], probes
        )
        progress(line("HNSW (vss) top-10", hnsw_lat), "index in plan:", results["hnsw_in_plan"])
        exact_sql = f"""SELECT c.doc_id, c.chunk_id FROM vectors v JOIN chunks c USING (rid)
            ORDER BY array_cosine_similarity(v.embedding, ?::FLOAT[{embeddings.DIM}]) DESC LIMIT 10"""
        exact_top, exact_lat = timed(
            lambda v: [c + d for d, c in con.execute(exact_sql, [v]).fetchall()], probes
        )
    index.close()
    recall = statistics.mean(len(set(h) & set(e)) / 10 for h, e in zip(hnsw_top, exact_top, strict=True))

    print(json.dumps(results, indent=1, default=str))
    print(f"\n{meta['chunks']} chunks; latency in ms on one warm connection\n")
    print(HEADER)
    if old_lat:
        print(line("old BM25 (Python postings)", old_lat))
    if "none" in fts_lat:
        print(
            line(
                "fts match_bm25, stemmer none, postings as fts writes them",
                fts_lat["none, postings unsorted"],
            )
        )
        print(line("fts match_bm25, stemmer none", fts_lat["none"]))
    print(line("fts match_bm25, stemmer porter (SearchIndex.bm25)", fts_lat["porter"]))
    print(line("bare match_bm25 over every row of chunks, porter", fts_lat["bare"]))
    print(line("kb.search (porter, end to end)", search_lat))
    print(line("kb.search hybrid (end to end: query embedded, BM25 + HNSW, fused)", hybrid_lat))
    print(line("old vector: exact array_cosine_similarity scan", exact_lat))
    print(line("HNSW (vss) top-10", hnsw_lat))
    print(f"\nHNSW recall@10 against the exact scan: {recall:.3f}")
    if overlap:
        print("\n| old BM25 top-10 found by fts | tune | check |\n|---|---|---|")
        for stemmer in stemmers:
            print(f"| stemmer {stemmer} | {overlap[stemmer]['tune']:.3f} | {overlap[stemmer]['check']:.3f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
