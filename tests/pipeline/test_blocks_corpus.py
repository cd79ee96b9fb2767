"""The reading-order sequence (document_blocks), its exports and the knowledge base, on real PDFs.

Every paragraph and every table is in the sequence exactly once (a table the paragraph stage read
as running text is left out: its text is in the paragraphs), paragraphs keep their reading order,
a table sits on its first page where its top falls among the paragraphs of its column, a heading
comes before what it heads, and the Markdown and JSON exports give the sequence back.
"""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest

from dagster_ocr import kb
from dagster_ocr.blocks import table_markdown
from dagster_ocr.export import document_json, document_markdown, markdown_blocks, resolve_document
from dagster_ocr.ingest import DocumentStore
from dagster_ocr.pipeline import parse
from dagster_ocr.warehouse import Warehouse

DOCS = (
    "docling/multi_page/multi_page.pdf",  # 5 pages of headings and paragraphs
    "docling/2305.03393v1-pg9/2305.03393v1-pg9.pdf",  # a table among two columns of text
    "tables/icdar2013/eu-022/eu-022.pdf",
    "tables/icdar2013/us-020/us-020.pdf",  # two tables merged across page breaks
    "tables/icdar2013/us-018/us-018.pdf",  # a table continued by columns on the next page
    # a "table" of prose: read as paragraphs, so not in the sequence a second time
    "olmocr_bench/pdfs/headers_footers/ff518b1240a66978f22035528ccb029450b5_pg2.pdf",
)


@pytest.fixture(scope="module")
def loaded(corpus, tmp_path_factory):
    root = tmp_path_factory.mktemp("blocks")
    store = DocumentStore(root / "store")
    wh = Warehouse(root / "w.duckdb")
    parsed = {}
    for rel in DOCS:
        src, _ = store.register(corpus / rel)
        out = parse(src)
        wh.write_document(out.document, out.labels, out.tables, out.paragraphs)
        with wh.transaction() as con:  # as the gate would, so the knowledge base may load it
            con.execute("UPDATE documents SET status = 'parsed' WHERE doc_id = ?", [src.doc_id])
        kb.load_document(wh, src.doc_id, kb.KbSettings(embeddings=False), embed=False)
        parsed[rel] = (src.doc_id, out)
    return wh, parsed


def _blocks(wh, doc_id) -> pd.DataFrame:
    return wh.query("SELECT * FROM document_blocks WHERE doc_id = ? ORDER BY reading_order", [doc_id])


@pytest.mark.parametrize("rel", DOCS)
def test_every_paragraph_and_table_is_in_the_sequence_once_in_reading_order(loaded, rel):
    wh, parsed = loaded
    doc_id, out = parsed[rel]
    blocks = _blocks(wh, doc_id)
    assert blocks.reading_order.tolist() == list(range(len(blocks)))  # 0-based, one order
    assert blocks.source_id.is_unique
    paragraphs = out.paragraphs.paragraphs
    prose = set(out.paragraphs.read_as_text)
    in_sequence = [t for t in out.tables if t.table_id not in prose]
    assert sorted(blocks.source_id) == sorted(
        [p.paragraph_id for p in paragraphs] + [t.table_id for t in in_sequence]
    )
    # the paragraphs keep the paragraph stage's order; headings are kind 'heading'
    text_blocks = blocks[blocks.kind != "table"]
    assert text_blocks.source_id.tolist() == [p.paragraph_id for p in paragraphs]
    assert text_blocks.kind.tolist() == [
        "heading" if p.kind == "heading" else "paragraph" for p in paragraphs
    ]
    # a heading is the first block of its section
    first_of_section = blocks.dropna(subset=["section_id"]).groupby("section_id", sort=False).head(1)
    assert set(first_of_section.kind) <= {"heading"}
    # each table: once, on its first page, as its Markdown, before the first paragraph of its column
    # that starts at or below its top
    by_id = {t.table_id: t for t in in_sequence}
    for row in blocks[blocks.kind == "table"].itertuples():
        t = by_id[row.source_id]
        assert row.page_index == t.first_page_index
        assert row.text == "\n".join(table_markdown(t.grid(), t.header_rows, t.column_headers))
        after = blocks.iloc[row.reading_order + 1 :]
        nxt = after[after.kind != "table"].head(1)
        same_page = [
            p
            for p in paragraphs
            if p.page_index == t.first_page_index and min(p.bbox[2], t.bbox[2]) > max(p.bbox[0], t.bbox[0])
        ]
        below = [p for p in same_page if p.bbox[1] >= t.bbox[1] - 1]
        if below:
            first_below = min(below, key=lambda p: p.reading_order)
            assert nxt.source_id.iat[0] == first_below.paragraph_id, (rel, t.table_id)
    if prose:
        assert not set(blocks.source_id) & prose


@pytest.mark.parametrize("rel", DOCS)
def test_the_paragraphs_rows_are_the_same_sequence_with_tables_as_plain_text(loaded, rel):
    """Reading ``paragraphs`` in order reads the whole document once: each block of
    document_blocks is one row there, in the same order, a table as the lines of headings printed
    above its grid (``Table.heads``) and its cells' text."""
    wh, parsed = loaded
    doc_id, out = parsed[rel]
    blocks = _blocks(wh, doc_id)
    rows = wh.query("SELECT * FROM paragraphs WHERE doc_id = ? ORDER BY reading_order", [doc_id])
    assert rows.reading_order.tolist() == list(range(len(rows)))
    assert rows.paragraph_id.tolist() == blocks.source_id.tolist()
    by_id = {t.table_id: t for t in out.tables}
    for row in rows[rows.kind == "table"].itertuples():
        t = by_id[row.paragraph_id]
        words = [w for h in t.heads for w in h.split()] + [
            w for r in t.grid() for c in r for w in (c or "").split()
        ]
        assert row.text.split() == words  # its headings, then every cell once, row by row, no Markdown
        assert "|" not in row.text or any("|" in (c or "") for r in t.grid() for c in r)
        assert row.page_index == t.first_page_index and row.last_page_index == t.last_page_index
    texts = rows[rows.kind != "table"]
    assert texts.text.tolist() == [p.text for p in out.paragraphs.paragraphs]
    if any(t.table_id not in set(out.paragraphs.read_as_text) for t in out.tables):
        assert (rows.kind == "table").any()


def test_tables_are_interleaved_with_the_text_not_appended(loaded):
    wh, parsed = loaded
    doc_id, _ = parsed["tables/icdar2013/us-020/us-020.pdf"]
    blocks = _blocks(wh, doc_id)
    tables = blocks[blocks.kind == "table"]
    assert len(tables) >= 2 and tables.reading_order.max() < blocks.reading_order.max()
    # a merged table appears once, at its first page, however many pages it spans
    spans = wh.query(
        "SELECT table_id, first_page_index, last_page_index FROM tables WHERE doc_id = ?", [doc_id]
    )
    merged = spans[spans.last_page_index > spans.first_page_index]
    assert len(merged) >= 1
    for t in merged.itertuples():
        (row,) = blocks[blocks.source_id == t.table_id].itertuples()
        assert row.page_index == t.first_page_index and row.last_page_index == t.last_page_index


def _unmark(md_block: str) -> str:
    return re.sub(r"^#{1,6} ", "", md_block)


@pytest.mark.parametrize("rel", DOCS)
def test_markdown_export_gives_the_sequence_back(loaded, rel):
    wh, parsed = loaded
    doc_id, _ = parsed[rel]
    blocks = _blocks(wh, doc_id)
    md = document_markdown(wh, doc_id)
    parts = md.rstrip("\n").split("\n\n")
    assert parts == markdown_blocks(blocks)
    assert len(parts) == len(blocks)  # one Markdown block per block, none empty
    for part, b in zip(parts, blocks.itertuples(), strict=True):
        if b.kind == "heading":
            assert part.startswith("#" * min(int(b.heading_level), 6) + " ")
            assert _unmark(part) == " ".join(b.text.split())
        elif b.kind == "table":
            assert part == b.text and part.splitlines()[1].startswith("|---|")
        else:
            assert part.lstrip("\\").removeprefix("- ") in (b.text, b.text.removeprefix("• "))


@pytest.mark.parametrize("rel", DOCS)
def test_json_export_round_trips(loaded, rel):
    wh, parsed = loaded
    doc_id, out = parsed[rel]
    blocks = _blocks(wh, doc_id)
    data = json.loads(json.dumps(document_json(wh, doc_id)))
    assert data["origin"]["binary_hash"] == doc_id
    assert [p["page_index"] for p in data["pages"]] == list(range(out.document.n_pages))
    assert all(p["size"]["width"] > 0 and p["label"] for p in data["pages"])
    body = data["body"]
    assert [(i["kind"], i["text"], i["source_id"]) for i in body] == list(
        zip(blocks.kind, blocks.text, blocks.source_id, strict=True)
    )
    for item, b in zip(body, blocks.itertuples(), strict=True):
        prov = item["prov"][0]
        assert prov["page_index"] == b.page_index and prov["page_label"] == b.page_label
        assert prov["bbox"]["l"] == pytest.approx(b.x0, abs=0.01) and prov["bbox"]["b"] == pytest.approx(
            b.y1, abs=0.01
        )
        if item["kind"] == "table":
            # the cells give the table back: rebuilt grid -> the same Markdown as the block's text
            d = item["data"]
            grid = [[""] * d["num_cols"] for _ in range(d["num_rows"])]
            for c in d["table_cells"]:
                grid[c["start_row_offset_idx"]][c["start_col_offset_idx"]] = c["text"]
            heads = item["column_headers"]  # the headings printed above the grid
            assert "\n".join(table_markdown(grid, d["header_rows"], heads)) == item["text"]
            assert {p["page_index"] for p in item["prov"]} == {c["page_index"] for c in d["table_cells"]}
    # sections: a tree whose items are the body items, each item in one place
    refs = [r for s in data["sections"] for r in s["items"]] + data["front_items"]
    assert sorted(refs) == sorted(i["self_ref"] for i in body)
    ids = {s["section_id"] for s in data["sections"]}
    assert all(c in ids for s in data["sections"] for c in s["children"])
    assert resolve_document(wh, doc_id[:8]) == doc_id


@pytest.mark.parametrize("rel", DOCS)
def test_knowledge_base_chunks_the_sequence_in_order(loaded, rel):
    wh, parsed = loaded
    doc_id, _ = parsed[rel]
    blocks = _blocks(wh, doc_id)
    chunks = wh.query("SELECT * FROM kb_chunks WHERE doc_id = ? ORDER BY chunk_id", [doc_id])
    chunks = chunks.assign(n=chunks.chunk_id.str[1:].astype(int)).sort_values("n")
    order = dict(zip(blocks.source_id, blocks.reading_order, strict=True))
    # every paragraph in exactly one chunk (a short line above a grid or after it is read in the
    # table's chunk: dagster_ocr.kb_settings.STRAY_CHARS), every table in at least one, in the
    # sequence's order
    held = [pid for ids in chunks.paragraph_ids for pid in ids]
    assert sorted(held) == sorted(blocks[blocks.kind == "paragraph"].source_id)
    assert set(chunks[chunks.source_kind == "table"].source_id) == set(
        blocks[blocks.kind == "table"].source_id
    )
    positions = [order[s] for s in chunks.source_id]
    assert positions == sorted(positions)
    assert chunks.citation.str.len().min() > 0
