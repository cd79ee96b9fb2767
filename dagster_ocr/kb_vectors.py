"""The knowledge base's vectors in three steps, so that only two short ones touch the warehouse.

Embedding a document's chunks is the costliest thing the pipeline does on a born-digital report
(about 0.35 CPU s a page here, against 0.03 for every other stage but OCR), and the DuckDB file
admits one writing process. Done inside the knowledge-base write, it kept every other document's
load waiting on it. So the work is split by what it needs:

1. :func:`plan_vectors` reads the chunks and the vectors stored for them (warehouse, milliseconds);
2. :func:`compute_vectors` embeds the chunks whose input has no vector yet (CPU or GPU, no warehouse);
3. :func:`store_vectors` replaces the document's ``kb_embeddings`` rows (one transaction).

``kb.embed_document`` runs the three in a row; the Dagster asset ``kb_vectors`` runs them as three
ops, the middle one outside the ``duckdb_writer`` pool. A :class:`VectorPlan` is what passes between
them: it pickles (the ops' outputs go through the run's IO manager).

A stored vector is reused when what the model would read for its chunk (:func:`embed_input`: the
context line, then the text) is unchanged, by that input's md5 (``kb_embeddings.input_md5``), not
the text's: a chunk whose document or section is now described otherwise (docinfo, a fixed
section title), or whose input form changed in a release (:func:`table_words`), is re-embedded on
its next load although its text is the same. ``text_md5`` (``md5(kb_chunks.text)``) is still
written with each vector, as search joins on it so a vector never outlives its text.
"""

from __future__ import annotations

import dataclasses
import logging
import re
import time
from typing import Any

import numpy as np
import pandas as pd

from dagster_ocr import embeddings, progress
from dagster_ocr.kb_settings import STRAY_CHARS
from dagster_ocr.warehouse import Warehouse

log = logging.getLogger(__name__)

#: vectors per DataFrame handed to DuckDB
_VECTOR_BATCH = 1000


@dataclasses.dataclass
class VectorPlan:
    """One document's chunks and what their vectors need: reused (same model input) or to embed."""

    doc_id: str
    chunk_ids: list[str]
    #: md5 of each chunk's stored text (``kb_chunks.text``), what search joins vectors on
    hashes: list[str]
    #: md5 of what the model reads for each chunk (:func:`embed_input`), ``kb_embeddings.input_md5``
    input_hashes: list[str]
    #: input md5 -> vector, for every input whose vector is known (stored, or computed by step 2)
    known: dict[str, np.ndarray]
    #: each distinct input still without a vector (context line + text), and its md5
    todo_inputs: list[str]
    todo_hashes: list[str]
    #: vectors are switched off in the settings: step 3 drops the document's old ones
    off: bool = False
    #: every chunk already has its vector stored under its chunk id: nothing to embed or write
    current: bool = False
    #: why no vectors could be computed here (the model is not installed...): BM25 only
    skipped: str | None = None
    #: seconds step 2 took
    seconds: float = 0.0
    #: how step 2 embeds (``kb.embedder_options`` of the document's settings), set by whoever
    #: plans, so the step that embeds needs neither the warehouse nor the settings
    embedder: dict[str, Any] = dataclasses.field(default_factory=dict)

    @property
    def figures(self) -> dict[str, Any]:
        """The counts for the asset's metadata and the CLI."""
        out: dict[str, Any] = {
            "embedded": 0 if self.skipped else len(self.todo_hashes),
            "reused": len(self.hashes) - len(self.todo_hashes),
            "seconds": round(self.seconds, 3),
        }
        if self.off:
            out.update(embedded=0, reused=0, skipped="embeddings are off in the settings")
        elif self.skipped:
            out["skipped"] = self.skipped
        return out


def embed_input(chunks: pd.DataFrame, row: int) -> str:
    """What the model reads for a chunk: what it is about besides its words, as for BM25 (its
    document and section path), then its text (a table's as :func:`table_words`).

    A text shorter than :data:`~dagster_ocr.kb_settings.STRAY_CHARS` is read alone: a title line
    alone in its section ("APPLE INC." atop each exhibit of a 10-K) read after its context line
    was a vector of that line, and it came up among the first five for questions about anything
    in the document (bench/kb_retrieval.py, one document, hybrid MRR: 92 dev questions 0.852 ->
    0.870, the same questions paraphrased 0.564 -> 0.590, tune and check both up; BENCHMARKS.md,
    retrieval). Read alone it still answers for its own words (a page that only says "This is
    page iii", a slide's one line)."""
    text = str(chunks["text"].iat[row])
    if len(text.strip()) < STRAY_CHARS:
        return text
    context = chunks["context"].iat[row]
    title = chunks["section_title"].iat[row]
    head = context if isinstance(context, str) and context else title if isinstance(title, str) else ""
    if "source_kind" in chunks and chunks["source_kind"].iat[row] == "table":
        text = table_words(text)
    if not head:
        return text
    # the lines the context line says already (a table's caption is its section's title): read twice,
    # they outweighed the rows' own words in the mean of a chunk's word pieces
    lines = text.split("\n")
    while len(lines) > 1 and said_in(lines[0], head):
        lines.pop(0)
    return "\n".join([head, *lines])


def said_in(text: str, where: str) -> bool:
    """``text`` is in ``where`` word for word (spacing aside)."""
    return " ".join(text.split()) in " ".join(where.split())


#: an unescaped cell boundary of a Markdown row (blocks.markdown_row escapes a "|" inside a cell)
_CELL = re.compile(r"(?<!\\)\|")


def table_words(text: str) -> str:
    """A table chunk as the embedding model reads it: its title lines, then each row's cells
    (header rows too) as one line of words, without the Markdown pipes, the empty cells and the
    separator row. BM25 and the stored text keep the table as printed.

    Read as stored, a statement's word pieces were mostly pipes, rules and blank spacer cells, and
    its vector lay far from every question; a first form (eighth session) dropped the figures with
    the pipes. Read as words beside their labels the figures help: questions about a figure worded
    unlike its row found the statement more often (bench/kb_retrieval.py, one document, paraphrased
    table figures: hybrid recall@5 0.74 -> 0.79, vector alone 0.77 -> 0.82; every paraphrased
    question by vector, tune 0.90 -> 0.92, check 0.73 -> 0.75; BENCHMARKS.md, retrieval).
    """
    out: list[str] = []
    for line in text.split("\n"):
        stripped = line.strip()
        if not (stripped.startswith("|") and stripped.endswith("|") and len(stripped) > 1):
            out.append(line)
            continue
        cells = [c.strip().replace("\\|", "|") for c in _CELL.split(stripped[1:-1])]
        if all(set(c) <= set("-: ") for c in cells):  # the separator row under the header
            continue
        kept = [c for c in cells if c]
        if kept:
            out.append(" ".join(kept))
    return "\n".join(out)


def plan_vectors(warehouse: Warehouse, doc_id: str, enabled: bool = True) -> VectorPlan:
    """Step 1: the document's chunks and which of them need a vector (reads the warehouse).

    A chunk whose model input (:func:`embed_input`) is unchanged since the last load keeps its
    vector (matched by the input's md5), so re-loading a document after a settings change embeds
    only what changed, and a chunk whose context changed with its text unchanged is re-embedded.
    A vector stored without an input md5 (before schema version 11) is re-embedded once.
    """
    if not enabled:
        return VectorPlan(doc_id, [], [], [], {}, [], [], off=True)
    chunks = warehouse.query(
        "SELECT chunk_id, source_kind, section_title, context, text FROM kb_chunks WHERE doc_id = ? "
        "ORDER BY chunk_id",
        [doc_id],
    )
    old = warehouse.query(
        "SELECT chunk_id, text_md5, input_md5, embedding FROM kb_embeddings WHERE doc_id = ? AND model = ?",
        [doc_id, embeddings.MODEL_NAME],
    )
    hashes = [embeddings.text_md5(t) for t in chunks["text"]]
    inputs = [embed_input(chunks, i) for i in range(len(chunks))]
    input_hashes = [embeddings.text_md5(t) for t in inputs]
    wanted = set(input_hashes)
    known = {  # a vector of an input the document no longer has is not carried along (NULL: none)
        h: np.asarray(v, dtype=np.float32)
        for h, v in zip(old["input_md5"], old["embedding"], strict=True)
        if isinstance(h, str) and h in wanted
    }
    # one input per distinct model input: a repeated chunk (a boilerplate line in one section) is
    # embedded once, while equal texts under different contexts each get their own vector
    first: dict[str, int] = {}
    for i, h in enumerate(input_hashes):
        if h not in known:
            first.setdefault(h, i)
    chunk_ids = chunks["chunk_id"].astype(str).tolist()
    stored = sorted(
        zip(old["chunk_id"].astype(str), old["text_md5"], old["input_md5"].fillna(""), strict=True)
    )
    return VectorPlan(
        doc_id=doc_id,
        current=not first and stored == sorted(zip(chunk_ids, hashes, input_hashes, strict=True)),
        chunk_ids=chunk_ids,
        hashes=hashes,
        input_hashes=input_hashes,
        known=known,
        todo_inputs=[inputs[i] for i in first.values()],
        todo_hashes=list(first),
    )


def compute_vectors(
    plan: VectorPlan,
    device: str = "cpu",
    max_tokens: int = 256,
    dtype: str = "auto",
    runtime: str = "auto",
    batch_size: int = 16,
    threads: int = 0,
) -> VectorPlan:
    """Step 2: embed what the plan still lacks (no warehouse; the model loads once a process).

    Without the model (package missing, failed load) the plan records why, and step 3 leaves the
    document without vectors: BM25 search still works.
    """
    if plan.off or not plan.todo_inputs:
        return plan
    started = time.perf_counter()
    embedder = embeddings.get_embedder(device, max_tokens, dtype, runtime, threads)
    if embedder is None:
        plan.skipped = embeddings.unavailable_reason() or "the embedding model failed to load"
        return plan
    # a stop point between batches: a report's embedding takes tens of seconds, and a stopped run
    # (the CLI's SIGTERM) lets go within a batch instead of at its hard exit
    vectors = embedder.embed(plan.todo_inputs, batch_size, between=progress.stop_point)
    plan.known.update(zip(plan.todo_hashes, vectors, strict=True))
    plan.seconds = time.perf_counter() - started
    log.info(
        "embedded %d chunks of %s in %.2f s (%.1f chunks/s)",
        len(plan.todo_hashes),
        plan.doc_id,
        plan.seconds,
        len(plan.todo_hashes) / max(plan.seconds, 1e-9),
    )
    return plan


def store_vectors(warehouse: Warehouse, plan: VectorPlan) -> dict[str, Any]:
    """Step 3: replace the document's ``kb_embeddings`` rows in one transaction; the figures.

    Only chunks the plan read are written: if the chunks were re-loaded in between (another run
    of the document), a vector carries its text's md5 and search ignores one whose text changed.
    Each row also carries the md5 of what the model read, which the next plan reuses it by.
    """
    doc_id = plan.doc_id
    if plan.off or plan.skipped:
        # off or unavailable: drop the document's old vectors rather than keep ones nobody refreshes
        drop_vectors(warehouse, doc_id)
        return plan.figures
    now = pd.Timestamp.now(tz="UTC").tz_localize(None)

    def store(con: Any) -> None:
        con.execute("DELETE FROM kb_embeddings WHERE doc_id = ?", [doc_id])
        # in batches: a vector as a Python list is 384 float objects (~10 KB), so a long document's
        # vectors converted at once would cost hundreds of MB
        for start in range(0, len(plan.hashes), _VECTOR_BATCH):
            part = slice(start, start + _VECTOR_BATCH)
            rows = pd.DataFrame(
                {
                    "doc_id": doc_id,
                    "chunk_id": plan.chunk_ids[part],
                    "model": embeddings.MODEL_NAME,
                    "text_md5": plan.hashes[part],
                    "input_md5": plan.input_hashes[part],
                    "embedding": [plan.known[h].tolist() for h in plan.input_hashes[part]],
                    "embedded_at": now,
                }
            )
            con.register("_vectors", rows)
            try:
                con.execute(
                    f"""INSERT INTO kb_embeddings
                    (doc_id, chunk_id, model, text_md5, input_md5, embedding, embedded_at)
                    SELECT doc_id, chunk_id, model, text_md5, input_md5,
                    embedding::FLOAT[{embeddings.DIM}], embedded_at
                    FROM _vectors"""
                )
            finally:
                con.unregister("_vectors")

    warehouse.write(store, lock=doc_id)
    return plan.figures


def drop_vectors(warehouse: Warehouse, doc_id: str) -> int:
    """Remove the document's vectors (it left the knowledge base, or vectors are off); how many."""

    def drop(con: Any) -> int:
        (n,) = con.execute("DELETE FROM kb_embeddings WHERE doc_id = ?", [doc_id]).fetchone()
        return int(n)

    return warehouse.write(drop, lock=doc_id)
