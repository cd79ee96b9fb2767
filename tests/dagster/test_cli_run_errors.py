"""``dagster-ocr run`` says what went wrong: arguments it cannot start with, and a document whose run
failed before the warehouse had a row of it (it printed "0 document(s)" and exited 0 before)."""

from __future__ import annotations

import shutil

import pytest

from assets.cli import main


@pytest.fixture()
def inbox(tmp_path, corpus):
    folder = tmp_path / "inbox"
    folder.mkdir()
    shutil.copy(corpus / "page_labels/bug793632.pdf", folder / "bug793632.pdf")
    return folder


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        (["--set", "{bad"], "the settings (--set {bad) cannot be used: Expecting property name"),
        (["--set", '{"kb": {"nope": 1}}'], "kb.nope"),
        (["--settings", "/nonexistent/settings.yaml"], "No such file or directory"),
    ],
)
def test_settings_it_cannot_use_stop_the_run_before_it_starts(inbox, tmp_path, capsys, extra, said):
    warehouse = tmp_path / "out" / "w.duckdb"
    assert main(["run", str(inbox), "--warehouse", str(warehouse), "--no-progress", *extra]) == 2
    assert said in capsys.readouterr().err
    assert not (tmp_path / "out").exists()  # nothing made: no warehouse, no data folder


def test_an_inbox_that_is_no_folder_is_said_so(tmp_path, capsys):
    warehouse = tmp_path / "out" / "w.duckdb"
    assert main(["run", str(tmp_path / "missing"), "--warehouse", str(warehouse)]) == 2
    assert f"the inbox {tmp_path / 'missing'} is not a folder" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_a_run_that_fails_before_a_row_is_written_is_reported_and_exits_1(
    inbox, tmp_path, capsys, monkeypatch
):
    from dagster_ocr import pipeline

    def broken(*args, **kwargs):
        raise RuntimeError("the labels stage broke")

    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    monkeypatch.setattr(pipeline, "document_labels", broken)  # a stage without retries
    warehouse = tmp_path / "out" / "w.duckdb"
    assert main(["run", str(inbox), "--warehouse", str(warehouse), "--no-progress"]) == 1
    err = capsys.readouterr().err
    assert "bug793632.pdf: its run failed before anything of it was written: page_labels" in err
    assert "the labels stage broke" in err
    # not marked done: the same command parses it once the cause is fixed
    monkeypatch.undo()
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    assert main(["run", str(inbox), "--warehouse", str(warehouse), "--no-progress"]) == 0
    assert "1 parsed" in capsys.readouterr().out
