"""What the embedding model reads for a table chunk (kb_vectors.table_words): its words and figures,
not the Markdown around them."""

from __future__ import annotations

import pandas as pd

from dagster_ocr.blocks import markdown_row
from dagster_ocr.kb_vectors import embed_input, table_words

STATEMENT = "\n".join(
    [
        "CONSOLIDATED STATEMENTS OF CASH FLOWS (In millions)",
        "|  | Years ended September 28, 2024 | Years ended September 30, 2023 |",
        "|---|---|---|",
        "| Repurchases of common stock | (94,949) | (77,550) |",
        "| Proceeds from issuance of term debt, net | — | 5,228 |",
        "| Cash used in financing activities | $ (121,983) | 12.5 % |",
    ]
)


def test_a_statement_keeps_its_title_header_rows_and_figures_without_pipes_or_rules():
    assert table_words(STATEMENT).split("\n") == [
        "CONSOLIDATED STATEMENTS OF CASH FLOWS (In millions)",
        "Years ended September 28, 2024 Years ended September 30, 2023",
        "Repurchases of common stock (94,949) (77,550)",
        "Proceeds from issuance of term debt, net — 5,228",
        "Cash used in financing activities $ (121,983) 12.5 %",
    ]


def test_empty_cells_are_dropped():
    text = "|  | 2023 |  | 2022 |\n|---|---|---|---|\n| Label |  | 5 |  |\n|  |  |  |  |"
    assert table_words(text).split("\n") == ["2023 2022", "Label 5"]


def test_a_year_in_the_header_row_is_kept():
    text = "| Item | 2024 | 2023 |\n|---|---|---|\n| Revenue | 10 | 9 |"
    assert table_words(text).split("\n") == ["Item 2024 2023", "Revenue 10 9"]


def test_a_pipe_inside_a_cell_is_no_cell_boundary():
    text = "\n".join([markdown_row(["Name", "Note"]), "|---|---|", markdown_row(["A | B", "x"])])
    assert table_words(text).split("\n") == ["Name Note", "A | B x"]


def test_only_table_chunks_are_read_as_words():
    chunks = pd.DataFrame(
        {
            "source_kind": ["table", "paragraph"],
            "section_title": ["Cash flows", "Cash flows"],
            "context": ["Apple Inc. 10-K › Cash flows", ""],
            "text": [STATEMENT, "| a | 1 | pipes in a paragraph are read as printed |"],
        }
    )
    assert embed_input(chunks, 0).split("\n")[:3] == [
        "Apple Inc. 10-K › Cash flows",
        "CONSOLIDATED STATEMENTS OF CASH FLOWS (In millions)",
        "Years ended September 28, 2024 Years ended September 30, 2023",
    ]
    # a paragraph is read as printed
    assert embed_input(chunks, 1) == "Cash flows\n| a | 1 | pipes in a paragraph are read as printed |"


def test_lines_the_context_line_says_are_read_once():
    """A table's caption is often its section's title: read after the context line that ends with
    that title, it would be read twice and outweigh the rows' own words."""
    chunks = pd.DataFrame(
        {
            "source_kind": ["table", "table"],
            "section_title": ["Statements of Operations"] * 2,
            "context": ["Tesla, Inc. 10-K › Statements of Operations (in millions)"] * 2,
            "text": [
                f"Statements of Operations (in millions)\n{text}"
                for text in ("Revenues", "|  | 2023 |\n|---|---|\n| Basic | 4.73 |")
            ],
        }
    )
    assert embed_input(chunks, 0) == "Tesla, Inc. 10-K › Statements of Operations (in millions)\nRevenues"
    assert embed_input(chunks, 1).split("\n")[1:] == ["2023", "Basic 4.73"]
    # a chunk is never read as its context line alone
    title = "Consolidated Statements of Operations (in millions, except per share data)"
    chunks["context"], chunks["text"] = f"Tesla, Inc. 10-K › {title}", title
    assert embed_input(chunks, 0) == f"Tesla, Inc. 10-K › {title}\n{title}"
