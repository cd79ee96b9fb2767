"""A stored vector is reused by what the model read (``kb_embeddings.input_md5``), not by the text.

The model reads a chunk's context line (document and section path) and then its text; a vector
reused by the text's md5 alone outlived a changed context forever. A stand-in model here (a vector
from the md5 of its input) records what it was asked to read, so the tests run without the model.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from dagster_ocr import embeddings, kb_vectors
from dagster_ocr.schema import LATEST_VERSION, current_version
from dagster_ocr.warehouse import Warehouse


class _Model:
    """The embedding model's stand-in: one unit vector per distinct input, and what it read."""

    def __init__(self) -> None:
        self.read: list[str] = []

    @staticmethod
    def vector(text: str) -> np.ndarray:
        seed = int(hashlib.md5(text.encode()).hexdigest()[:8], 16)
        v = np.random.default_rng(seed).normal(size=embeddings.DIM).astype(np.float32)
        return v / np.linalg.norm(v)

    def embed(self, texts, batch_size=16, between=None):
        self.read.extend(texts)
        return np.stack([self.vector(t) for t in texts])


@pytest.fixture()
def model(monkeypatch) -> _Model:
    fake = _Model()
    monkeypatch.setattr(embeddings, "get_embedder", lambda *a, **k: fake)
    return fake


def _chunk(cid: str, text: str, context: str | None, section: str = "1. Terms") -> dict:
    return {"chunk_id": cid, "source_kind": "paragraph", "source_id": cid, "page_index": 0} | {
        "page_label": "1",
        "last_page_label": "1",
        "text": text,
        "citation": f"d.pdf, p. 1, {section}",
        "section_title": section,
        "context": context,
    }


CHUNKS = [
    ("c0", "Payment is due within thirty days of the invoice date.", "Acme Inc. 10-K 2024 › 1. Terms"),
    ("c1", "Either party may terminate with three months notice.", "Acme Inc. 10-K 2024 › 2. End"),
]


def _warehouse(path) -> Warehouse:
    wh = Warehouse(path)
    wh.ensure_schema()
    with wh.transaction() as con:
        con.execute("INSERT INTO documents (doc_id, file_name, status) VALUES ('d', 'd.pdf', 'parsed')")
    return wh


def _embed(wh: Warehouse) -> tuple[kb_vectors.VectorPlan, dict]:
    plan = kb_vectors.plan_vectors(wh, "d")
    if plan.current:
        return plan, plan.figures
    return plan, kb_vectors.store_vectors(wh, kb_vectors.compute_vectors(plan))


def _stored(wh: Warehouse) -> dict[str, tuple[str, str | None, np.ndarray]]:
    rows = wh.query("SELECT chunk_id, text_md5, input_md5, embedding FROM kb_embeddings WHERE doc_id = 'd'")
    return {
        r.chunk_id: (r.text_md5, r.input_md5, np.asarray(r.embedding, dtype=np.float32))
        for r in rows.itertuples()
    }


def test_a_changed_context_re_embeds_an_unchanged_text_and_an_unchanged_chunk_is_kept(tmp_path, model):
    wh = _warehouse(tmp_path / "w.duckdb")
    wh.write_kb("d", [_chunk(*c) for c in CHUNKS])
    _, figures = _embed(wh)
    assert figures["embedded"] == 2 and len(model.read) == 2
    first = _stored(wh)
    for cid, text, context in CHUNKS:  # text_md5 stays md5(kb_chunks.text): what search joins on
        assert first[cid][0] == embeddings.text_md5(text)
        assert first[cid][1] == embeddings.text_md5(f"{context}\n{text}")  # what the model read
    assert kb_vectors.plan_vectors(wh, "d").current

    # docinfo now describes the document otherwise: c0's context changes, its text does not
    model.read.clear()
    moved = "Acme Inc. 10-Q 2024 › 1. Terms"
    wh.write_kb("d", [_chunk(CHUNKS[0][0], CHUNKS[0][1], moved), _chunk(*CHUNKS[1])])
    plan = kb_vectors.plan_vectors(wh, "d")
    assert not plan.current and plan.todo_inputs == [f"{moved}\n{CHUNKS[0][1]}"]
    _, figures = _embed(wh)
    assert figures["embedded"] == 1 and figures["reused"] == 1
    assert model.read == [f"{moved}\n{CHUNKS[0][1]}"]
    after = _stored(wh)
    assert after["c0"][0] == first["c0"][0]  # same text
    assert np.allclose(after["c0"][2], model.vector(f"{moved}\n{CHUNKS[0][1]}"))
    assert not np.allclose(after["c0"][2], first["c0"][2])
    assert np.array_equal(after["c1"][2], first["c1"][2])  # the unchanged chunk kept its vector

    # nothing changed since: nothing to embed or write
    model.read.clear()
    plan, figures = _embed(wh)
    assert plan.current and plan.todo_inputs == [] and model.read == []


def test_a_table_whose_markdown_changed_keeps_its_vector_under_its_new_text(tmp_path, model):
    """The model reads a table without its pipes and empty cells: a blank spacer column more, same
    input, the same vector, but stored under the new text's md5 so search still finds it; new
    figures are a new input."""
    wh = _warehouse(tmp_path / "w.duckdb")
    table = "| Item | 2024 |\n|---|---|\n| Revenue | 1,200 |"
    chunk = _chunk("t0", table, "Acme Inc. 10-K 2024 › Statements") | {"source_kind": "table"}
    wh.write_kb("d", [chunk])
    _embed(wh)
    model.read.clear()
    spaced = "| Item |  | 2024 |\n|---|---|---|\n| Revenue |  | 1,200 |"
    wh.write_kb("d", [chunk | {"text": spaced}])
    plan, figures = _embed(wh)
    assert figures["embedded"] == 0 and model.read == []
    (text_md5, _, _) = _stored(wh)["t0"]
    assert text_md5 == embeddings.text_md5(spaced)
    assert kb_vectors.plan_vectors(wh, "d").current
    wh.write_kb("d", [chunk | {"text": spaced.replace("1,200", "1,300")}])
    plan, figures = _embed(wh)
    assert figures["embedded"] == 1
    assert model.read == ["Acme Inc. 10-K 2024 › Statements\nItem 2024\nRevenue 1,300"]


def test_equal_texts_under_different_contexts_get_their_own_vectors(tmp_path, model):
    wh = _warehouse(tmp_path / "w.duckdb")
    text = "Not applicable: the Company has nothing to report here."
    wh.write_kb(
        "d",
        [
            _chunk("c0", text, "Acme Inc. 10-K 2024 › Item 1B. Unresolved Staff Comments"),
            _chunk("c1", text, "Acme Inc. 10-K 2024 › Item 4. Mine Safety Disclosures"),
            _chunk("c2", text, "Acme Inc. 10-K 2024 › Item 4. Mine Safety Disclosures"),  # a true repeat
        ],
    )
    plan, figures = _embed(wh)
    assert len(plan.todo_inputs) == 2 and len(model.read) == 2  # the true repeat is embedded once
    stored = _stored(wh)
    assert not np.allclose(stored["c0"][2], stored["c1"][2])
    assert np.array_equal(stored["c1"][2], stored["c2"][2])
    assert stored["c0"][0] == stored["c1"][0] == embeddings.text_md5(text)
    assert kb_vectors.plan_vectors(wh, "d").current


def test_vectors_of_an_old_warehouse_without_input_md5_are_re_embedded_once(tmp_path, model):
    path = tmp_path / "old.duckdb"
    wh = _warehouse(path)
    wh.write_kb("d", [_chunk(*c) for c in CHUNKS])
    # the file as schema version 10 left it: kb_embeddings without input_md5, its vectors stored by
    # text md5 alone (here of the context-less text, as a release before contexts would have)
    with wh.transaction() as con:
        con.execute("ALTER TABLE kb_embeddings DROP COLUMN input_md5")
        con.execute("DELETE FROM schema_version WHERE version > 10")
        for cid, text, _ in CHUNKS:
            con.execute(
                "INSERT INTO kb_embeddings VALUES (?, ?, ?, md5(?), ?::FLOAT[384], now())",
                ["d", cid, embeddings.MODEL_NAME, text, model.vector(text).tolist()],
            )
    with wh.connect(read_only=True) as con:
        assert current_version(con) == 10

    upgraded = Warehouse(path)
    upgraded.ensure_schema()  # migration 11: the column, NULL on every old row
    with upgraded.connect(read_only=True) as con:
        assert current_version(con) == LATEST_VERSION
    assert all(v[1] is None for v in _stored(upgraded).values())
    plan = kb_vectors.plan_vectors(upgraded, "d")
    assert not plan.current and not plan.known and len(plan.todo_inputs) == 2
    _, figures = _embed(upgraded)
    assert figures["embedded"] == 2 and len(model.read) == 2
    stored = _stored(upgraded)
    for cid, text, context in CHUNKS:
        assert stored[cid][1] == embeddings.text_md5(f"{context}\n{text}")
        assert np.allclose(stored[cid][2], model.vector(f"{context}\n{text}"))
    model.read.clear()
    plan, _ = _embed(upgraded)  # once: then current
    assert plan.current and model.read == []


def test_a_chunk_of_half_a_line_is_embedded_without_its_context(tmp_path, model):
    """A title line alone in its section ("APPLE INC." atop an exhibit) read after its context line
    was a vector of that line, near every question about the document: it is read alone, and a
    vector stored for the old input is replaced on the next load."""
    wh = _warehouse(tmp_path / "w.duckdb")
    context = "Apple Inc. 10-K fiscal year 2024 › PART IV › Exhibit 10.19"
    wh.write_kb("d", [_chunk(*c) for c in CHUNKS] + [_chunk("c2", "  APPLE INC.  ", context)])
    _, figures = _embed(wh)
    assert figures["embedded"] == 3
    assert "  APPLE INC.  " in model.read and not any(context in t and "APPLE" in t for t in model.read)
    assert np.allclose(_stored(wh)["c2"][2], model.vector("  APPLE INC.  "))
    assert kb_vectors.plan_vectors(wh, "d").current

    # a warehouse written before: the short chunk's vector is of its context and text; re-embedded
    with wh.transaction() as con:
        con.execute(
            "UPDATE kb_embeddings SET input_md5 = md5(?) WHERE chunk_id = 'c2'", [f"{context}\nAPPLE INC."]
        )
    model.read.clear()
    plan, figures = _embed(wh)
    assert not plan.current and figures["embedded"] == 1 and model.read == ["  APPLE INC.  "]
