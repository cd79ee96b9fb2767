"""Knowledge-base chunks and BM25 search on a small hand-made warehouse."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from dagster_ocr.blocks import table_markdown
from dagster_ocr.kb import (
    DocumentFilter,
    KbSettings,
    SearchError,
    _row_parts,
    build_chunks,
    format_hits,
    named_documents,
    named_issuers,
    search,
    tokenize,
)
from dagster_ocr.kb_search import _snippet
from dagster_ocr.warehouse import Warehouse


def _blocks(rows):
    """document_blocks rows: (kind, section_id, page_index, text[, source_id, last_page_index])."""
    out = []
    for i, (kind, sec, page, text, *rest) in enumerate(rows):
        source_id = rest[0] if rest else f"p{i}"
        last = rest[1] if len(rest) > 1 else page
        out.append(
            {"reading_order": i, "kind": kind, "source_id": source_id, "section_id": sec}
            | {"page_index": page, "last_page_index": last, "text": text}
        )
    return pd.DataFrame(
        out,
        columns=["reading_order", "kind", "source_id", "section_id", "page_index"]
        + ["last_page_index", "text"],
    )


SECTIONS = pd.DataFrame(
    {"section_id": ["s1", "s2"], "parent_id": [None, "s1"], "title": ["2. Services", "2.1 Scope"]}
)
NO_TABLES = pd.DataFrame(columns=["table_id", "header_rows", "caption"])
NO_ROWS = pd.DataFrame(columns=["table_id", "row_idx", "page_index"])


def test_chunks_cite_section_path_and_one_printed_page():
    paras = _blocks(
        [
            ("heading", "s1", 0, "2. Services"),
            ("paragraph", "s2", 0, "The Supplier provides hosting."),
            ("paragraph", "s2", 0, "Backups run nightly."),
            ("paragraph", "s2", 1, "Support answers within one hour."),
        ]
    )
    chunks = build_chunks(
        "a.pdf", paras, SECTIONS, NO_TABLES, NO_ROWS, {0: "iv", 1: "1"}, settings=KbSettings()
    )
    assert [c["citation"] for c in chunks] == [
        "a.pdf, p. iv, 2. Services › 2.1 Scope",
        "a.pdf, p. 1, 2. Services › 2.1 Scope",
    ]
    assert chunks[0]["text"] == "The Supplier provides hosting.\nBackups run nightly."
    merged = build_chunks(
        "a.pdf", paras, SECTIONS, NO_TABLES, NO_ROWS, {0: "iv", 1: "1"}, KbSettings(split_at_pages=False)
    )
    assert [c["citation"] for c in merged] == ["a.pdf, pp. iv–1, 2. Services › 2.1 Scope"]


def test_tokenize_folds_case_width_and_splits_unspaced_scripts():
    assert tokenize("Fee: ¥1,200 per § 4.2 — ＡＢＣ Straße") == [
        "fee",
        "1",
        "200",
        "per",
        "4",
        "2",
        "abc",
        "strasse",
    ]
    assert tokenize("東京都の契約 v2") == ["東", "京", "都", "の", "契", "約", "v2"]
    assert tokenize("   ") == []


def test_a_fiscal_year_written_as_one_word_is_a_year_token():
    """Analysts write "FY2018" and "FY18" where a report prints "fiscal 2018": both are the year's
    token, as "FY 2018" is; other letter-digit words stay whole."""
    assert tokenize("capital expenditure in FY2018") == ["capital", "expenditure", "in", "fy", "2018"]
    assert tokenize("FY18 and FY 2018 and cy2023, FY98") == [
        "fy", "2018", "and", "fy", "2018", "and", "cy", "2023", "fy", "1998",
    ]  # fmt: skip
    assert tokenize("FY2018a v2 covid19 fy123 10-K") == ["fy2018a", "v2", "covid19", "fy123", "10", "k"]


@pytest.fixture()
def warehouse(tmp_path) -> Warehouse:
    wh = Warehouse(tmp_path / "kb.duckdb")
    wh.ensure_schema()
    texts = {
        "good": [
            ("c0", "1", "Payment is due within thirty days of the invoice date."),
            ("c1", "2", "The supplier keeps backups of customer data for ninety days."),
            ("c2", "3", "Either party may terminate the agreement with three months notice."),
            ("c3", "4", "Invoices are paid by bank transfer. Payment payment payment terms apply."),
        ],
        "held": [("c0", "7", "Payment terms of the quarantined document.")],
    }
    with wh.transaction() as con:
        for doc_id, status in (("good", "parsed"), ("held", "quarantined")):
            con.execute(
                "INSERT INTO documents (doc_id, file_name, status) VALUES (?, ?, ?)",
                [doc_id, f"{doc_id}.pdf", status],
            )
    for doc_id, rows in texts.items():
        wh.write_kb(
            doc_id,
            [
                {"chunk_id": cid, "source_kind": "paragraph", "source_id": cid, "page_index": int(label)}
                | {"page_label": label, "last_page_label": label, "text": text}
                | {"citation": f"{doc_id}.pdf, p. {label}"}
                for cid, label, text in rows
            ],
        )
    return wh


def test_search_ranks_by_bm25_and_cites_pages(warehouse):
    hits = search(warehouse, "terminate the agreement")
    assert hits[0].citation == "good.pdf, p. 3" and hits[0].page_label == "3"
    assert "terminate" in hits[0].snippet
    # a rare term outweighs a common one; repetition saturates instead of winning outright
    hits = search(warehouse, "payment backups")
    assert {h.page_label for h in hits[:3]} == {"1", "2", "4"}
    assert format_hits(hits).startswith("1. [")


def test_bm25_score_matches_the_formula(warehouse):
    hit = search(warehouse, "ninety", limit=1)[0]
    lengths = [
        len(tokenize(t))
        for t in [
            "Payment is due within thirty days of the invoice date.",
            "The supplier keeps backups of customer data for ninety days.",
            "Either party may terminate the agreement with three months notice.",
            "Invoices are paid by bank transfer. Payment payment payment terms apply.",
        ]
    ]
    # four chunks of parsed documents (the quarantined one is not indexed); fts's match_bm25 takes
    # the idf in base 10 (DuckDB's log), a constant factor that leaves the ranking as with ln
    n, avg = 4, sum(lengths) / 4
    idf = math.log10(1 + (n - 1 + 0.5) / (1 + 0.5))
    expected = idf * 1 * 2.2 / (1 + 1.2 * (1 - 0.75 + 0.75 * lengths[1] / avg))
    assert hit.score == pytest.approx(expected, abs=1e-3)


def test_search_skips_documents_not_parsed_and_sees_new_loads(warehouse):
    assert all(h.doc_id == "good" for h in search(warehouse, "quarantined payment terms", limit=10))
    for empty in ("", "  ", "?!"):
        with pytest.raises(SearchError, match="no words"):
            search(warehouse, empty)
    assert search(warehouse, "zebra") == []
    warehouse.write_kb(
        "good",
        [
            {"chunk_id": "c0", "source_kind": "paragraph", "source_id": "p0"}
            | {"page_index": 0, "page_label": "i", "last_page_label": "i"}
            | {"text": "A zebra crossing.", "citation": "good.pdf, p. i"}
        ],
    )
    assert [h.page_label for h in search(warehouse, "zebra")] == ["i"]


def _table(table_id, header_rows, caption, grid, pages=None, section=None, order=0):
    """A table block as the warehouse writes it (blocks.table_markdown), with its tables/cell rows."""
    pages = pages or [0] * len(grid)
    tables = pd.DataFrame([{"table_id": table_id, "header_rows": header_rows, "caption": caption}])
    rows = pd.DataFrame(
        [{"table_id": table_id, "row_idx": r, "page_index": p} for r, p in enumerate(pages)],
        columns=["table_id", "row_idx", "page_index"],
    )
    text = "\n".join(table_markdown(grid, header_rows))
    block = ("table", section, pages[0], text, table_id, pages[-1])
    return tables, rows, block


def test_tables_are_chunked_from_their_markdown_block_with_header_and_separator():
    grid = [["Item", "Fees"], ["Item", "2024"], ["Hosting | backup", "1,200\nJPY"], ["Support", ""]]
    tables, rows, block = _table("t0", 2, "Table 1 — Fees", grid)
    (chunk,) = build_chunks(
        "a.pdf", _blocks([block]), SECTIONS, tables, rows, {0: "3"}, settings=KbSettings()
    )
    assert chunk["text"].splitlines() == [
        "Table 1 — Fees",
        "| Item | Fees 2024 |",  # two header rows folded into one, the merged "Item" once
        "|---|---|",
        "| Hosting \\| backup | 1,200 JPY |",  # a pipe in a cell is escaped, whitespace collapsed
        "| Support |  |",
    ]
    assert chunk["source_kind"] == "table" and chunk["citation"] == "a.pdf, p. 3"
    # no detected header: empty header cells, every row stays a body row; long tables repeat the
    # header; a table merged across pages cites the pages of each chunk's own rows
    grid = [[f"r{r}c{c}" for c in range(2)] for r in range(3)]
    tables, rows, block = _table("t1", 0, None, grid, pages=[0, 0, 1])
    chunks = build_chunks(
        "a.pdf",
        _blocks([block]),
        SECTIONS,
        tables,
        rows,
        {0: "3", 1: "4"},
        KbSettings(table_rows_per_chunk=2),
    )
    assert [c["text"].splitlines() for c in chunks] == [
        ["|  |  |", "|---|---|", "| r0c0 | r0c1 |", "| r1c0 | r1c1 |"],
        ["|  |  |", "|---|---|", "| r2c0 | r2c1 |"],
    ]
    assert [c["citation"] for c in chunks] == ["a.pdf, p. 3", "a.pdf, p. 4"]


def test_chunks_follow_the_reading_order_sequence_a_table_between_paragraphs():
    tables, rows, table = _table("t0", 1, None, [["Fee", "Amount"], ["Hosting", "1,200"]], section="s2")
    blocks = _blocks(
        [
            ("heading", "s1", 0, "2. Services"),
            ("paragraph", "s2", 0, "The Customer pays the following fees each month:"),
            table,
            ("paragraph", "s2", 0, "Fees are due on the first working day of the month."),
        ]
    )
    chunks = build_chunks("a.pdf", blocks, SECTIONS, tables, rows, {0: "3"}, settings=KbSettings())
    # the run before the table ends at it; the table cites its section; the run after starts anew
    assert [(c["source_kind"], c["text"].splitlines()[0]) for c in chunks] == [
        ("paragraph", "The Customer pays the following fees each month:"),
        ("table", "| Fee | Amount |"),
        ("paragraph", "Fees are due on the first working day of the month."),
    ]
    assert chunks[1]["citation"] == "a.pdf, p. 3, 2. Services › 2.1 Scope"
    assert [c["chunk_id"] for c in chunks] == ["c0", "c1", "c2"]


@pytest.fixture()
def two_filers(tmp_path) -> Warehouse:
    """Two parsed 10-Ks that print the same row, each chunk indexed with its document's context."""
    wh = Warehouse(tmp_path / "kb2.duckdb")
    wh.ensure_schema()
    docs = {
        "apple": ("Apple Inc.", 2024, "(9,447)"),
        "tesla": ("Tesla, Inc.", 2023, "(8,898)"),
    }
    with wh.transaction() as con:
        for doc_id, (issuer, year, _) in docs.items():
            con.execute(
                "INSERT INTO documents (doc_id, file_name, status, issuer, doc_type, fiscal_year) "
                "VALUES (?, ?, 'parsed', ?, '10-K', ?)",
                [doc_id, f"{doc_id}-10k.pdf", issuer, year],
            )
    for doc_id, (issuer, year, figure) in docs.items():
        rows = [
            ("c0", "Purchases of property and equipment | " + figure),
            ("c1", "Purchases of property and equipment were lower than planned this year"),
            ("c2", "Risk factors: supply of components and purchases of property"),
        ]
        wh.write_kb(
            doc_id,
            [
                {"chunk_id": cid, "source_kind": "table", "source_id": cid, "page_index": 3}
                | {"page_label": "4", "last_page_label": "4", "text": text}
                | {"citation": f"{doc_id}-10k.pdf, p. 4", "context": f"{issuer} 10-K fiscal year {year}"}
                for cid, text in rows
            ],
        )
    return wh


def test_a_question_naming_a_company_is_answered_from_its_document_first(two_filers):
    for name, doc_id in (("Tesla", "tesla"), ("Apple", "apple")):
        hits = search(two_filers, f"{name} purchases of property and equipment", limit=4)
        assert [h.doc_id for h in hits[:3]] == [doc_id] * 3
        assert hits[3].doc_id != doc_id  # the rest of the list still comes from everywhere
        assert [h.rank for h in hits] == [1, 2, 3, 4]
    # the context is indexed: the company's name alone finds its chunks, though no text says it
    assert {h.doc_id for h in search(two_filers, "tesla", prefer_named=False)} == {"tesla"}


def test_a_question_naming_a_year_finds_an_8k_by_its_date(two_filers):
    # an 8-K has no fiscal year; its date of report is the year a question names
    with two_filers.transaction() as con:
        con.execute(
            "INSERT INTO documents (doc_id, file_name, status, issuer, doc_type, period_end) "
            "VALUES ('tesla8k', 'tesla-8k.pdf', 'parsed', 'Tesla, Inc.', '8-K', '2024-01-24')"
        )
    assert named_documents(two_filers, "Tesla deliveries announced in 2024", None) == ["tesla8k"]
    assert named_documents(two_filers, "Tesla capital expenditure in 2023", None) == ["tesla"]
    assert named_documents(two_filers, "Tesla capital expenditure in FY2023", None) == ["tesla"]
    assert named_documents(two_filers, "Tesla deliveries FY24", None) == ["tesla8k"]
    assert sorted(named_documents(two_filers, "Tesla deliveries", None)) == ["tesla", "tesla8k"]
    dated = search(two_filers, "purchases", where=DocumentFilter(fiscal_year=2024, issuer="tesla"))
    assert dated == []  # the 8-K of 2024 is admitted by the filter; it has no chunk with the word
    with pytest.raises(SearchError):
        search(two_filers, "purchases", where=DocumentFilter(fiscal_year=2022, issuer="tesla"))


def test_filters_narrow_the_search_and_say_when_nothing_matches(two_filers):
    hits = search(two_filers, "purchases of property", where=DocumentFilter(fiscal_year=2024), limit=10)
    assert hits and {h.doc_id for h in hits} == {"apple"}
    hits = search(two_filers, "purchases", where=DocumentFilter(issuer="tesla", doc_type="10-k"), limit=10)
    assert {h.doc_id for h in hits} == {"tesla"}
    with pytest.raises(SearchError, match="no parsed document matches issuer='Nokia'"):
        search(two_filers, "purchases", where=DocumentFilter(issuer="Nokia"))


def test_the_cli_answers_a_bad_question_without_a_traceback(two_filers, capsys):
    from assets.cli import main

    assert main(["search", "?!", "--warehouse", str(two_filers.path)]) == 2
    assert "has no words" in capsys.readouterr().err
    assert main(["search", "purchases", "--warehouse", str(two_filers.path), "--issuer", "nokia"]) == 2
    assert "no parsed document matches" in capsys.readouterr().err
    assert main(["search", "purchases", "--warehouse", str(two_filers.path), "--year", "2023"]) == 0
    assert "tesla-10k.pdf" in capsys.readouterr().out
    # a mistyped warehouse path is an error, not "no matching chunks", and creates no file
    missing = two_filers.path.with_name("typo.duckdb")
    assert main(["search", "purchases", "--warehouse", str(missing)]) == 2
    assert "no warehouse at" in capsys.readouterr().err and not missing.exists()


def test_a_stray_line_is_read_with_its_neighbour_on_its_page_not_as_a_chunk_of_its_own():
    """A line of a few characters alone is a chunk whose vector is its context's: it goes with the
    table after it (a header line printed above the grid) or else the chunk before it, in its
    section and on its page; elsewhere (a section of one line: "None.") it stays a chunk."""
    grid = [["Fee", "Amount"], ["Hosting", "1,200"], ["Support", "300"]]
    tables, rows, table = _table("t0", 1, None, grid, section="s2")
    blocks = _blocks(
        [
            ("heading", "s1", 0, "2. Services"),
            ("paragraph", "s2", 0, "Hosting is billed per server and month, in advance."),
            ("paragraph", "s2", 0, "(in thousands of JPY)"),  # printed above the grid
            table,
            ("paragraph", "s2", 0, "2021."),  # a cell's wrapped end, read outside the grid
            ("paragraph", "s2", 1, "Support answers within one hour, every day of the year."),
            ("heading", "s3", 1, "3. Unresolved comments"),
            ("paragraph", "s3", 1, "None."),
        ]
    )
    sections = pd.concat(
        [SECTIONS, pd.DataFrame({"section_id": ["s3"], "parent_id": [None], "title": ["3. Unresolved"]})]
    )
    chunks = build_chunks("a.pdf", blocks, sections, tables, rows, {0: "3", 1: "4"}, KbSettings())
    assert [(c["source_kind"], c["text"]) for c in chunks] == [
        ("paragraph", "Hosting is billed per server and month, in advance."),
        (
            "table",
            "(in thousands of JPY)\n| Fee | Amount |\n|---|---|\n"
            "| Hosting | 1,200 |\n| Support | 300 |\n2021.",
        ),
        ("paragraph", "Support answers within one hour, every day of the year."),
        ("paragraph", "None."),
    ]
    assert chunks[1]["paragraph_ids"] == ["p2", "p4"]  # the lines it holds stay traceable
    # a table in parts: the line printed above the grid goes with its first rows only
    parts = build_chunks(
        "a.pdf", blocks, sections, tables, rows, {0: "3", 1: "4"}, KbSettings(table_rows_per_chunk=1)
    )
    assert [c["text"].splitlines()[0] for c in parts if c["source_kind"] == "table"] == [
        "(in thousands of JPY)",
        "| Fee | Amount |",
    ]
    assert [c["citation"] for c in chunks][-1] == "a.pdf, p. 4, 3. Unresolved"


def test_each_cited_page_is_listed_once_before_any_page_twice():
    from dagster_ocr.kb_search import _pages_first

    def hit(doc, page, last, score):
        chunk = {"doc_id": doc, "page_index": page, "last_page_label": last, "chunk_id": f"{doc}{score}"}
        return chunk, score

    ranked = [hit("a", 5, "6", 0.9), hit("a", 5, "6", 0.8), hit("a", 5, "6", 0.7), hit("a", 9, "10", 0.6)]
    ranked += [hit("b", 5, "6", 0.5), hit("a", 5, "7", 0.4), hit("a", 9, "10", 0.3)]
    assert [score for _, score in _pages_first(ranked)] == [0.9, 0.6, 0.5, 0.4, 0.8, 0.3, 0.7]
    assert _pages_first([]) == []


def test_search_lists_a_second_chunk_of_a_page_after_the_other_pages(tmp_path):
    wh = Warehouse(tmp_path / "kb.duckdb")
    wh.ensure_schema()
    with wh.transaction() as con:
        con.execute("INSERT INTO documents (doc_id, file_name, status) VALUES ('d', 'd.pdf', 'parsed')")
    rows = [("c0", "1", "termination fees termination"), ("c1", "1", "termination notice termination")]
    rows += [("c2", "2", "termination of the lease"), ("c3", "3", "unrelated words")]
    wh.write_kb(
        "d",
        [
            {"chunk_id": cid, "source_kind": "paragraph", "source_id": cid, "page_index": int(label) - 1}
            | {"page_label": label, "last_page_label": label, "text": text, "citation": f"d.pdf, p. {label}"}
            for cid, label, text in rows
        ],
    )
    hits = search(wh, "termination", mode="bm25", limit=3)
    assert [h.chunk_id for h in hits[:2]] in (["c0", "c2"], ["c1", "c2"])
    assert [h.rank for h in hits] == [1, 2, 3]
    same = search(wh, "termination", mode="bm25", limit=3, settings=KbSettings(pages_first=False))
    assert {h.chunk_id for h in same[:2]} == {"c0", "c1"}


def test_a_table_cut_by_a_long_row_label_is_chunked_under_the_statement_above_it():
    """A statement's row label wider than its stub ends the found table; the rows under it are a
    table with no title and a blank header. Its chunks carry the statement's title, units and
    periods, the label line heads its rows under the header, and no paragraph chunk is left of the
    label."""
    grid = [["", "2023", "2022"], ["Revenues", "96,773", "81,462"], ["Net income", "14,974", "12,587"]]
    tables, rows, top = _table("t0", 1, "Statements of Operations (in millions)", grid, section="s2")
    more_tables, more_rows, rest = _table(
        "t1", 0, None, [["Basic", "4.73", "4.02"], ["Diluted", "4.30", "3.62"]]
    )
    rest = ("table", "s2", *rest[2:])
    label = "Net income per share of common stock attributable to common stockholders"
    blocks = _blocks([top, ("paragraph", "s2", 0, label), rest])
    frames = pd.concat([tables, more_tables]), pd.concat([rows, more_rows])
    chunks = build_chunks("a.pdf", blocks, SECTIONS, *frames, {0: "50"}, KbSettings())
    assert [c["source_kind"] for c in chunks] == ["table", "table"]
    assert chunks[1]["text"].splitlines() == [
        "Statements of Operations (in millions)",
        "|  | 2023 | 2022 |",
        "|---|---|---|",
        f"| {label} |  |  |",
        "| Basic | 4.73 | 4.02 |",
        "| Diluted | 4.30 | 3.62 |",
    ]
    assert chunks[1]["paragraph_ids"] == ["p1"]
    # a sentence between, another page, or other columns: a table of its own, as found
    for between, page, grid in (
        ("The accompanying notes are an integral part of these statements.", 0, [["Basic", "4.73", "4.02"]]),
        (label, 1, [["Basic", "4.73", "4.02"]]),
        (label, 0, [["Basic", "4.73"]]),
    ):
        more_tables, more_rows, rest = _table("t1", 0, None, grid, pages=[page])
        blocks = _blocks([top, ("paragraph", "s2", 0, between), ("table", "s2", *rest[2:])])
        frames = pd.concat([tables, more_tables]), pd.concat([rows, more_rows])
        chunks = build_chunks("a.pdf", blocks, SECTIONS, *frames, {0: "50", 1: "51"}, KbSettings())
        assert [c["source_kind"] for c in chunks] == ["table", "paragraph", "table"]
        assert chunks[2]["text"].startswith("|  |")


def test_a_question_names_an_issuer_by_its_distinctive_words() -> None:
    issuers = ["Amazon.com, Inc.", "Apple Inc.", "The Goldman Sachs Group, Inc."]
    assert named_issuers("What were Amazon's net sales in 2023?", issuers) == ["Amazon.com, Inc."]
    assert named_issuers("Goldman Sachs net revenues in 2022", issuers) == ["The Goldman Sachs Group, Inc."]
    assert named_issuers("goldman's net revenues in 2022", issuers) == []  # one word of two, lower case
    assert named_issuers("net revenues in 2022", issuers) == []


def test_a_question_calls_an_issuer_by_one_capitalised_word_of_its_name() -> None:
    issuers = [
        "Costco Wholesale Corporation",
        "Meta Platforms, Inc.",
        "General Motors Company",
        "Tesla, Inc.",
    ]
    assert named_issuers("What were Costco's net sales in fiscal 2023?", issuers) == [issuers[0]]
    assert named_issuers("Meta capital expenditures 2023", issuers) == [issuers[1]]
    assert named_issuers("meta capital expenditures 2023", issuers) == []  # lower case: a common word
    # a name said in full takes precedence over a word shared with another name
    assert named_issuers("General and administrative expenses of Tesla in 2023", issuers) == [issuers[3]]
    two = ["General Motors Company", "General Dynamics Corporation"]
    assert named_issuers("General revenue in 2023", two) == []  # a word two names share names neither


def test_a_statement_is_chunked_at_its_row_groups_and_a_chunk_inside_a_group_repeats_its_label():
    """A label row of its own ("Investing activities:") opens a chunk once the chunk holds a few
    rows of figures, chunks share a group's rows evenly, and a chunk that starts inside a group
    repeats the group's label row under the header: the rows are never without what they are."""
    figures = ["1", "2"]
    grid = [["", "2024", "2023"]]
    grid += [["Operating activities:", "", ""]] + [[f"Operating {k}", *figures] for k in range(5)]
    grid += [["Investing activities:", "", ""]] + [[f"Investing {k}", *figures] for k in range(4)]
    grid += [[f"Investing {k}", *figures] for k in range(4, 9)] + [["Financing activities:", "", ""]]
    tables, rows, block = _table("t0", 1, "Statements of Cash Flows", grid)
    chunks = build_chunks("a.pdf", _blocks([block]), SECTIONS, tables, rows, {0: "3"}, KbSettings())
    bodies = [[line.split(" |")[0].strip("| ") for line in c["text"].splitlines()[3:]] for c in chunks]
    assert bodies == [
        ["Operating activities:", *[f"Operating {k}" for k in range(5)]],
        # the 11 rows left shared evenly by two chunks, the group's label repeated over the second;
        # a label closing the table stays with the rows above it
        ["Investing activities:", *[f"Investing {k}" for k in range(5)]],
        ["Investing activities:", *[f"Investing {k}" for k in range(5, 9)], "Financing activities:"],
    ]
    assert all(c["text"].startswith("Statements of Cash Flows\n|  | 2024 | 2023 |") for c in chunks)
    # a chunk at its even share still takes its group's last row (its total) while it has room
    label, figure = "| {} |  |  |".format, "| {} | 1 | 2 |".format
    rows = [figure("Opening balance"), label("Operating activities:"), figure("Net income")]
    rows += [label("Adjustments:"), *map(figure, ("Depreciation", "Share-based", "Other"))]
    rows += [
        label("Changes in assets:"),
        *[figure(f"Change {k}") for k in range(6)],
        figure("Cash from operations"),
    ]
    rows += [
        label("Investing activities:"),
        *[figure(f"Investing {k}") for k in range(5)],
        figure("Cash used"),
    ]
    rows += [label("Financing activities:"), *[figure(f"Financing {k}") for k in range(6)]]
    parts = [[row.split(" |")[0].strip("| ") for row in part] for _, part, _ in _row_parts(rows, 8)]
    assert [part[-1] for part in parts[1:3]] == ["Cash from operations", "Cash used"]
    assert [part[0] for part in parts[1:4]] == [
        "Changes in assets:",
        "Investing activities:",
        "Financing activities:",
    ]
    # a group ends at its total ("Total <its name>"): the rows after it are under no label, and a
    # chunk at its even share still takes the total; a member that ends in the group's name
    # ("Total automotive revenues" under "Revenues") does not close it
    rows = [label("Revenues"), *map(figure, ("Automotive sales", "Leasing", "Total automotive revenues"))]
    rows += [*map(figure, ("Energy", "Total revenues")), label("Operating expenses")]
    rows += [*map(figure, ("Research", "Selling", "Restructuring", "Total operating expenses"))]
    rows += [*map(figure, ("Income from operations", "Interest income", "Interest expense", "Net income"))]
    parts = [([r.split(" |")[0].strip("| ") for r in p], g) for _, p, g in _row_parts(rows, 8)]
    assert parts == [
        (
            [
                "Revenues",
                "Automotive sales",
                "Leasing",
                "Total automotive revenues",
                "Energy",
                "Total revenues",
            ],
            [],
        ),
        (["Operating expenses", "Research", "Selling", "Restructuring", "Total operating expenses"], []),
        (["Income from operations", "Interest income", "Interest expense", "Net income"], []),  # no group
    ]
    parts = [([r.split(" |")[0].strip("| ") for r in p], g) for _, p, g in _row_parts(rows, 4)]
    assert parts[-2:] == [
        (["Selling", "Restructuring", "Total operating expenses", "Income from operations"], [rows[6]]),
        (["Interest income", "Interest expense", "Net income"], []),
    ]
    # label rows at the foot of a full chunk open the next one
    rows = ["| a | 1 |", "| L1 |  |", "| L2 |  |", "| L3 |  |", "| b | 2 |"]
    assert _row_parts(rows, 4) == [(0, rows[:1], []), (1, rows[1:], [])]


def test_the_sentence_leading_into_a_table_is_its_caption_not_a_chunk_of_its_own():
    """A paragraph that the table's heading says already (its caption: "... were as follows (dollars
    in millions):") goes with the table's first chunk, once; the units a caption states are not
    added again."""
    lead = "Gross margin and gross margin percentage for 2024 and 2023 were as follows (dollars in millions):"
    grid = [["", "2024", "2023"], ["Products", "109,633", "108,803"], ["Services", "71,050", "60,345"]]
    tables, rows, block = _table("t0", 1, lead, grid)
    tables["units"] = "dollars in millions"
    blocks = _blocks([("paragraph", None, 0, "Gross margin"), ("paragraph", None, 0, lead), block])
    chunks = build_chunks("a.pdf", blocks, SECTIONS, tables, rows, {0: "3"}, KbSettings())
    assert [c["source_kind"] for c in chunks] == ["table"]
    # the short line above the lead-in goes with the table too, and is not said twice: the
    # caption says it already
    assert chunks[0]["text"].splitlines()[:2] == [lead, "|  | 2024 | 2023 |"]
    assert chunks[0]["paragraph_ids"] == ["p0", "p1"]


def test_a_hit_s_excerpt_shows_the_row_that_answers_not_the_first_word_found():
    """A statement's chunk names its periods first: the excerpt is the window holding most of the
    question's words (at a word's start, "the" is no hit in "Other"), not the first word's."""
    rows = "".join(f"| Other current asset {k} | {k},000 | {k},100 |\n" for k in range(30))
    head = "BALANCE SHEETS | | September 28, 2024 | September 30, 2023 |\n"
    text = f"{head}{rows}| Total assets | $ 364,980 | $ 352,583 |"
    terms = ["what", "were", "the", "total", "assets", "at", "end", "of", "fiscal", "2024"]
    excerpt = _snippet(text, terms, 120)
    assert "Total assets | $ 364,980" in excerpt and excerpt.startswith("…")
    one = _snippet(text, ["2024"], 120)  # one word: its first occurrence, a quarter in
    assert one.index("2024") == 30 + 1 and "Total assets" not in one
    assert _snippet(text, [], 14) == "BALANCE SHEETS…"
    # a script without spaces: its characters are found anywhere
    assert _snippet("会社は契約を解除できる", ["解", "除"], 6) == "…を解除できる"
