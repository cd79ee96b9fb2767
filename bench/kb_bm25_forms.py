"""Two forms of the same fts BM25 query, side by side, at N chunks (issue 23, search p95).

``old``: ``match_bm25`` computed in a subquery that carries every column of ``chunks`` (the form
``SearchIndex.bm25`` had); ``shipped``: ``SearchIndex.bm25`` itself (scores on ``rid``, hit columns
joined to the chunks at or above the n-th score). Both must return the same hits; the script
checks that and prints p50/p95 per form over alternating rounds.

Chunks: 150 words each, drawn from a 20,000-word Zipf vocabulary (a synthetic stand-in: what
costs here is the postings of the query terms and the width of the rows carried); queries: 2-4
words of mid frequency. Builds ``--dir/bm25_<N>.duckdb`` once (fts index with sorted postings),
then reuses it.

    .venv/bin/python bench/kb_bm25_forms.py --chunks 100000 --queries 40 --rounds 2
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

import duckdb
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dagster_ocr import duck  # noqa: E402
from dagster_ocr.search_index import HIT_COLUMNS, SearchIndex, sort_postings  # noqa: E402

OLD = f"""
SELECT {", ".join(HIT_COLUMNS)}, score FROM (
    SELECT *, fts_main_chunks.match_bm25(rid, ?, k := ?, b := ?) AS score FROM chunks
) WHERE score IS NOT NULL
ORDER BY score DESC, doc_id, chunk_id LIMIT 10
"""


def build(path: Path, n: int, rng: random.Random) -> None:
    words = [f"w{i}" for i in range(20_000)]
    weights = [1 / (i + 1) for i in range(20_000)]
    rows = pd.DataFrame(
        {
            "rid": range(n),
            "doc_id": [f"doc{i // 100:05d}" for i in range(n)],
            "file_name": [f"doc{i // 100:05d}.pdf" for i in range(n)],
            "chunk_id": [f"c{i % 100:03d}" for i in range(n)],
            "source_kind": "paragraph",
            "source_id": [f"p{i % 100}" for i in range(n)],
            "section_title": "Terms",
            "page_index": [i % 100 // 10 for i in range(n)],
            "page_label": "1",
            "last_page_label": "1",
            "citation": "doc, p. 1",
            "text": [" ".join(rng.choices(words, weights, k=150)) for _ in range(n)],
        }
    )
    rows["body"] = rows["text"]
    con = duckdb.connect(str(path))
    duck.load(con, "fts")
    con.execute("CREATE TABLE chunks AS SELECT * FROM rows")
    con.execute(
        "PRAGMA create_fts_index('chunks', 'rid', 'body', stemmer = 'porter', stopwords = 'none', "
        "ignore = '\\s+', strip_accents = 1, lower = 1, overwrite = 1)"
    )
    sort_postings(con)
    con.execute("CHECKPOINT")
    con.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chunks", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=40)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--dir", type=Path, default=Path("/tmp/dagster-ocr-bench"))
    args = ap.parse_args()
    rng = random.Random(23)
    args.dir.mkdir(parents=True, exist_ok=True)
    path = args.dir / f"bm25_{args.chunks}.duckdb"
    if not path.exists():
        t = time.perf_counter()
        build(path, args.chunks, rng)
        print(f"built {path} in {time.perf_counter() - t:.1f} s")
    queries = [
        " ".join(rng.choices([f"w{i}" for i in range(50, 3000)], k=rng.randint(2, 4)))
        for _ in range(args.queries)
    ]
    con = duckdb.connect(str(path), read_only=True)
    duck.load(con, "fts")

    def old(q: str) -> list[tuple[str, str]]:
        return [(r[0], r[2]) for r in con.execute(OLD, [q, 1.2, 0.75]).fetchall()]

    def shipped(q: str) -> list[tuple[str, str]]:
        hits = SearchIndex.bm25(None, con, q.split(), 10, 1.2, 0.75)  # type: ignore[arg-type]
        return [(h["doc_id"], h["chunk_id"]) for h, _ in hits]

    assert all(old(q) == shipped(q) for q in queries[:10]), "the two forms disagree"
    times: dict[str, list[float]] = {"old": [], "shipped": []}
    for _ in range(args.rounds):
        for name, fn in (("old", old), ("shipped", shipped)):
            for q in queries:
                t = time.perf_counter()
                fn(q)
                times[name].append((time.perf_counter() - t) * 1000)
    print(f"| form ({args.chunks:,} chunks, {len(queries)} queries x {args.rounds}) | p50 ms | p95 ms |")
    print("|---|---|---|")
    for name, ts in times.items():
        ts.sort()
        print(f"| {name} | {statistics.median(ts):.1f} | {ts[int(0.95 * len(ts)) - 1]:.1f} |")


if __name__ == "__main__":
    main()
