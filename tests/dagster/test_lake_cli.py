"""``dagster-ocr`` on a lake: run, query (and time travel), search, export, doctor, publish, compaction.

Against the local PostgreSQL (a database of its own, dropped after; skipped when unreachable), on
two small corpus PDFs, through the same asset graph and CLI as the file mode.
"""

from __future__ import annotations

import shutil

import duckdb
import pytest
from support.lake import scratch_lake

from assets.cli import main
from assets.lake import lake_maintenance_job
from dagster_ocr.export import document_markdown
from dagster_ocr.lake import LakeWarehouse
from resources import WarehouseResource


def test_cli_on_a_lake(corpus, tmp_path, capsys):
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    shutil.copy(corpus / "docling/multi_page/multi_page.pdf", inbox / "multi_page.pdf")
    shutil.copy(corpus / "tables/icdar2013/eu-022/eu-022.pdf", inbox / "report.pdf")
    with scratch_lake(tmp_path) as (spec, data):
        assert main(["migrate", "--warehouse", spec, "--lake-data", data]) == 0
        lake = LakeWarehouse(spec, data)
        empty = lake.snapshot_id()
        capsys.readouterr()

        args = ["run", str(inbox), "--warehouse", spec, "--lake-data", data, "--ocr", "none", "--no-progress"]
        assert main(args) == 0
        out = capsys.readouterr().out
        assert "2 document(s)" in out and "multi_page.pdf" in out
        assert (tmp_path / "lake_data_pipeline" / "store").is_dir()  # the run's data beside the lake's
        assert not list(tmp_path.glob("*.snapshot.duckdb"))  # no copy: analysts attach the lake

        assert main(["query", "SELECT count(*) AS n FROM documents", "--warehouse", spec]) == 0
        assert capsys.readouterr().out.split() == ["n", "2"]
        # time travel: the lake as it was before the run
        sql = "SELECT count(*) AS n FROM documents"
        assert main(["query", sql, "--warehouse", spec, "--at-version", str(empty)]) == 0
        assert capsys.readouterr().out.split() == ["n", "0"]
        # read-only: an analyst's session cannot write
        with pytest.raises(duckdb.InvalidInputException, match="read-only"):
            main(["query", "DELETE FROM documents", "--warehouse", spec])


def test_search_export_doctor_and_compaction_on_a_lake(corpus, tmp_path, capsys):
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    shutil.copy(corpus / "docling/multi_page/multi_page.pdf", inbox / "multi_page.pdf")
    with scratch_lake(tmp_path) as (spec, data):
        args = ["run", str(inbox), "--warehouse", spec, "--lake-data", data, "--ocr", "none", "--no-progress"]
        assert main(args) == 0
        lake = LakeWarehouse(spec, data)
        word = lake.query("SELECT text FROM kb_chunks ORDER BY chunk_id LIMIT 1").text.iat[0].split()[0]
        capsys.readouterr()

        assert main(["search", word, "--warehouse", spec, "--lake-data", data]) == 0
        assert "multi_page.pdf" in capsys.readouterr().out
        search_file = tmp_path / f"{spec.split('dbname=')[1].split()[0]}.search.duckdb"
        assert search_file.exists()  # beside the lake's data folder, not inside it
        con = duckdb.connect(str(search_file), read_only=True)
        try:
            built_from = dict(con.execute("SELECT key, value FROM meta").fetchall())["lake_snapshot"]
        finally:
            con.close()
        assert int(built_from) == lake.snapshot_id()

        doc_id = lake.query("SELECT doc_id FROM documents").doc_id.iat[0]
        assert main(["export", "multi_page.pdf", "--warehouse", spec]) == 0
        assert capsys.readouterr().out == document_markdown(lake, doc_id)

        assert main(["doctor", "--warehouse", spec, "--lock", "/nonexistent.lock"]) in (0, 1)
        report = capsys.readouterr().out
        assert "lake at schema version" in report

        assert main(["publish", "--warehouse", spec]) == 0
        assert "no snapshot copy" in capsys.readouterr().out

        before = lake.snapshot_id()
        result = lake_maintenance_job.execute_in_process(
            resources={"warehouse": WarehouseResource(path=spec, lake_data_path=data)}
        )
        assert result.success
        assert lake.snapshot_id() > before  # the merge committed
        assert lake.query("SELECT count(*) AS n FROM documents").n.iat[0] == 1
