"""The `doctor`, `metrics` and `migrate` subcommands, through the parser assets/cli.py extends."""

from __future__ import annotations

import argparse

import duckdb
from prometheus_client.parser import text_string_to_metric_families

from assets.admin_cli import add_admin_commands
from dagster_ocr.schema import LATEST_VERSION, current_version
from dagster_ocr.warehouse import Warehouse


def _main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="dagster-ocr")
    add_admin_commands(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return args.func(args)


def _old_warehouse(path) -> None:
    wh = Warehouse(path)
    wh.ensure_schema()  # the baseline, without a schema version (until migrations are hooked in)
    con = duckdb.connect(str(path))
    con.execute("DROP TABLE IF EXISTS schema_version")
    con.execute(
        "INSERT INTO documents (doc_id, file_name, status, n_pages) VALUES ('d', 'a.pdf', 'parsed', 3)"
    )
    con.close()


def test_doctor_prints_what_is_wrong_and_how_to_fix_it(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    _old_warehouse(tmp_path / "w.duckdb")
    missing = tmp_path / "no-such-model"
    code = _main(["doctor", "--warehouse", str(tmp_path / "w.duckdb"), "--model-path", f"target={missing}"])
    out = capsys.readouterr().out
    assert code == 1
    assert f"ERROR model paths: target model path {missing} does not exist" in out
    assert "ERROR warehouse schema:" in out and "no schema version" in out
    assert "fix: back up" in out and "dagster-ocr migrate --warehouse" in out
    assert "WARN  instance storage: DAGSTER_HOME is not set" in out
    assert "OK    ocr models" in out and "gpu:" in out


def test_migrate_then_doctor_is_clean_on_the_schema(tmp_path, capsys):
    path = tmp_path / "w.duckdb"
    _old_warehouse(path)
    assert _main(["migrate", "--warehouse", str(path)]) == 0
    assert f"-> {LATEST_VERSION}" in capsys.readouterr().out
    assert _main(["migrate", "--warehouse", str(path)]) == 0
    assert "already at schema version" in capsys.readouterr().out
    con = duckdb.connect(str(path), read_only=True)
    try:
        assert current_version(con) == LATEST_VERSION
        assert con.execute("SELECT count(*) FROM documents").fetchone()[0] == 1
    finally:
        con.close()


def test_metrics_once_prints_a_parsable_exposition(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    _old_warehouse(tmp_path / "w.duckdb")
    assert _main(["metrics", "--warehouse", str(tmp_path / "w.duckdb"), "--once"]) == 0
    families = {f.name: f for f in text_string_to_metric_families(capsys.readouterr().out)}
    assert families["dagster_ocr_pages"].samples[0].value == 3
