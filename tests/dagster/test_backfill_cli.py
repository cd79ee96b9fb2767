"""``dagster-ocr backfill``'s name and tags: what the Runs page shows on a backfill's row.

The launch itself goes through the webserver (tests/e2e/test_documents_ui.py does it for real);
here, what it sends: a count, the first file names, a title Dagster accepts however many and
however named the documents are.
"""

from __future__ import annotations

import argparse

import pytest
from dagster._core.definitions.utils import check_valid_title  # what the webserver checks

from assets.backfill_cli import add_backfill_command, backfill_tags, backfill_title, covers


def test_a_backfill_says_how_many_documents_and_names_the_first():
    names = [f"report_{i}.pdf" for i in range(7)]
    tags = backfill_tags(names)
    assert tags["dagster-ocr/documents"] == "7"
    assert tags["dagster-ocr/covers"] == "report_0.pdf, report_1.pdf, report_2.pdf +4 more"
    assert tags["dagster-ocr/launched_by"] == "dagster-ocr backfill"
    assert backfill_title("reload_warehouse", names) == (
        "reload_warehouse: 7 documents (report_0.pdf, report_1.pdf, report_2.pdf +4 more)"
    )
    assert covers(["garbled.pdf"]) == "garbled.pdf"
    assert backfill_title("ingest_document", ["garbled.pdf"]) == "ingest_document: 1 document (garbled.pdf)"


def test_long_and_odd_file_names_still_make_a_valid_title_and_tags():
    names = ['100% "final" *draft* ' + "x" * 300 + ".pdf", "b.pdf"]
    title = backfill_title("ingest_document", names)
    assert check_valid_title(title) == title and len(title) <= 100
    assert all(len(v) <= 200 for v in backfill_tags(names).values())


def test_the_command_needs_documents_or_a_status(capsys):
    parser = argparse.ArgumentParser()
    add_backfill_command(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["backfill", "reload_warehouse", "--warehouse", "w.duckdb"])
    assert args.func(args) == 2
    assert "--status" in capsys.readouterr().err
    with pytest.raises(SystemExit):  # only the document jobs
        parser.parse_args(["backfill", "refresh_quarantine", "--warehouse", "w.duckdb"])
