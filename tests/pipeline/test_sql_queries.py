"""Every analyst query in sql/queries runs against a warehouse built from the sample documents.

The warehouse is built the way users build it (``assets.cli.run_inbox``, the Dagster job, no OCR),
once for the module; each .sql file is executed as a whole (its ``SET VARIABLE`` lines included).
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pandas as pd
import pytest

from assets.cli import run_inbox
from dagster_ocr import embeddings
from dagster_ocr.samples import write_samples

QUERIES = sorted((Path(__file__).resolve().parents[2] / "sql" / "queries").glob("*.sql"))


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("sql_queries")
    write_samples(root / "inbox")
    run_inbox(root / "inbox", root / "wh.duckdb", ocr_engine="none", show_progress=False)
    return root / "wh.duckdb"


def _sql(name: str) -> str:
    return next(q for q in QUERIES if q.name == name).read_text()


def test_the_query_folder_holds_the_documented_queries():
    names = {q.name for q in QUERIES}
    assert {
        "documents_by_status.sql",
        "document_tables.sql",
        "document_tables_pivot.sql",
        "page_paragraphs.sql",
        "quarantine_reasons.sql",
        "similar_chunks.sql",
        "document_text.sql",
        "file_history.sql",
    } <= names


@pytest.mark.parametrize("query", QUERIES, ids=lambda q: q.name)
def test_every_query_runs(warehouse, query):
    with duckdb.connect(str(warehouse), read_only=True) as con:
        frame = con.execute(query.read_text()).df()
    if query.name == "similar_chunks.sql" and embeddings.unavailable_reason():
        assert frame.empty  # no vectors without the model: the query still runs
    else:
        assert len(frame) > 0, f"{query.name} returned no rows on the sample warehouse"


def _query(warehouse: Path, name: str) -> pd.DataFrame:
    with duckdb.connect(str(warehouse), read_only=True) as con:
        return con.execute(_sql(name)).df()


def test_query_results_say_what_they_claim(warehouse):
    by_status = _query(warehouse, "documents_by_status.sql").set_index("status")
    assert list(by_status.index) == ["parsed", "quarantined", "failed"]
    assert set(by_status.loc["parsed", "files"]) == {"service_agreement.pdf", "tender_notice.pdf"}
    assert by_status.loc["parsed", "kb_chunks"] > 0 and by_status.loc["failed", "kb_chunks"] == 0

    rows = _query(warehouse, "document_tables.sql")
    header = rows[rows["row_idx"] == 0].iloc[0]
    assert header["is_header"] and list(header["cells"]) == ["Milestone", "Due date", "Amount (¥)"]
    grid = _query(warehouse, "document_tables_pivot.sql")
    assert len(grid) == len(rows) and {"0", "1", "2"} <= set(map(str, grid.columns))

    paragraphs = _query(warehouse, "page_paragraphs.sql")
    # printed page "2" is the fifth physical page (Cover, i, ii, 1, 2): labels, not indices
    assert set(paragraphs["starts_on"]) <= {"1", "2"} and (paragraphs["starts_on"] == "2").any()
    assert paragraphs["reading_order"].is_monotonic_increasing

    reasons = _query(warehouse, "quarantine_reasons.sql")
    assert set(reasons["file_name"]) == {"scanned_letter.png", "damaged.pdf"}
    assert reasons["reason"].str.len().min() > 0
    assert (
        reasons[reasons["file_name"] == "scanned_letter.png"]["reason"].str.contains("text_extracted").any()
    )

    text = _query(warehouse, "document_text.sql")
    assert text["reading_order"].tolist() == list(range(len(text)))
    assert {"heading", "paragraph", "table"} <= set(text["kind"])
    history = _query(warehouse, "file_history.sql")
    assert history["status"].tolist() == ["parsed"] and history["duplicate_of"].isna().all()


def test_cli_query_errors_are_one_line_not_a_traceback(warehouse, tmp_path, capsys):
    from assets.cli import main

    cases = {
        "selec 1": "Parser Error",
        "select * from no_such_table": "Catalog Error",
        "select kind from document_blocks b join documents d using (doc_id)": "Binder Error",
    }
    for sql, kind in cases.items():
        assert main(["query", "--warehouse", str(warehouse), sql]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"query error: {kind}") and "Traceback" not in err
    assert main(["query", "--warehouse", str(tmp_path / "missing.duckdb"), "select 1"]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert not (tmp_path / "missing.duckdb").exists()  # a typo'd path is not created empty
