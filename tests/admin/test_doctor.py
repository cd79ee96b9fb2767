"""`doctor` findings: each names what is wrong and how to fix it."""

from __future__ import annotations

import json
import socket

import duckdb

from dagster_ocr.admin import doctor
from dagster_ocr.schema import LATEST_VERSION, baseline_sql, migrate
from dagster_ocr.settings import Settings


def _by_status(findings):
    return {f.status for f in findings}


def _warehouse_at(path, version: int | None) -> None:
    con = duckdb.connect(str(path))
    try:
        con.execute(baseline_sql())
        if version is not None:
            migrate(con)
            con.execute("DELETE FROM schema_version WHERE version > ?", [version])
            if version > LATEST_VERSION:
                con.execute("INSERT INTO schema_version VALUES (?, 'from the future', now())", [version])
    finally:
        con.close()


def test_missing_model_path_is_an_error_with_a_fix(tmp_path):
    missing = tmp_path / "models" / "trocr-base"
    [finding] = doctor.check_model_paths({"transformers target": str(missing)})
    assert finding.status == "error"
    assert f"transformers target model path {missing} does not exist" in finding.message
    assert "never downloaded" in finding.fix and "ocr.engine.target_path" in finding.fix


def test_model_folder_without_weights_or_config(tmp_path):
    (tmp_path / "noconfig").mkdir()
    (tmp_path / "noweights").mkdir()
    (tmp_path / "noweights" / "config.json").write_text("{}")
    (tmp_path / "good").mkdir()
    (tmp_path / "good" / "config.json").write_text("{}")
    (tmp_path / "good" / "model.safetensors").write_bytes(b"x")
    found = doctor.check_model_paths(
        {"a": str(tmp_path / "noconfig"), "b": str(tmp_path / "noweights"), "c": str(tmp_path / "good")}
    )
    assert [f.status for f in found] == ["error", "error", "ok"]
    assert "no config.json" in found[0].message and "no weights" in found[1].message


def test_model_paths_come_from_the_settings_and_the_gpu_resource_environment(tmp_path):
    cfg = tmp_path / "s.json"
    engine = {"kind": "transformers", "target_path": "/m/target", "draft_path": "/m/draft"}
    cfg.write_text(json.dumps({"ocr": {"engine": engine}}))
    paths = doctor.configured_model_paths(Settings.load(cfg), {})
    assert paths == {
        "transformers target (ocr.engine)": "/m/target",
        "transformers draft (ocr.engine)": "/m/draft",
    }
    from_env = doctor.configured_model_paths(Settings(), {doctor.GPU_TARGET_ENV: "/g/target"})
    assert from_env == {"transformers target ($DAGSTER_OCR_GPU_TARGET)": "/g/target"}
    assert doctor.configured_model_paths(Settings(), {}) == {}


def test_wrong_schema_version_older_says_migrate(tmp_path):
    path = tmp_path / "w.duckdb"
    _warehouse_at(path, 1)
    [f] = doctor.check_schema_version(path)
    assert f.status == "error"
    assert f"is at schema version 1; this code expects version {LATEST_VERSION}" in f.message
    assert f"dagster-ocr migrate --warehouse {path}" in f.fix and "back up" in f.fix


def test_wrong_schema_version_newer_says_upgrade(tmp_path):
    path = tmp_path / "w.duckdb"
    _warehouse_at(path, LATEST_VERSION + 5)
    [f] = doctor.check_schema_version(path)
    assert f.status == "error" and "newer than this code" in f.message and "upgrade dagster-ocr" in f.fix


def test_unversioned_and_current_schema(tmp_path):
    old = tmp_path / "old.duckdb"
    _warehouse_at(old, None)
    [f] = doctor.check_schema_version(old)
    assert f.status == "error" and "no schema version" in f.message
    current = tmp_path / "cur.duckdb"
    _warehouse_at(current, LATEST_VERSION)
    assert _by_status(doctor.check_schema_version(current)) == {"ok"}
    assert _by_status(doctor.check_schema_version(tmp_path / "absent.duckdb")) == {"warn"}


def test_packages_against_a_lock(tmp_path):
    lock = tmp_path / "requirements.lock"
    import duckdb

    # the installed duckdb, spelled in another case: matches, whatever release is pinned
    pins = f"DuckDB=={duckdb.__version__}\nnot-a-real-package-xyz==1.0\npydantic==0.0.1\n"
    lock.write_text(f"# pinned\n{pins}-e .\n")
    found = doctor.check_packages(lock)
    errors = [f for f in found if f.status == "error"]
    warns = [f for f in found if f.status == "warn"]
    assert errors and "not-a-real-package-xyz==1.0" in errors[0].message and "pip install -r" in errors[0].fix
    assert warns and "pydantic" in warns[0].message and "duckdb" not in warns[0].message


def test_the_installed_environment_matches_the_repository_lock():
    assert _by_status(doctor.check_packages()) <= {"ok", "warn"}  # nothing missing


def test_rapidocr_bundled_models(tmp_path):
    assert _by_status(doctor.check_rapidocr_models()) == {"ok"}
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "x_det_small.onnx").write_bytes(b"")
    [f] = doctor.check_rapidocr_models(tmp_path)
    assert f.status == "error" and "cls/rec" in f.message and "--force-reinstall" in f.fix


def test_the_ocr_runtime_says_what_runs_the_models_and_in_what_precision(monkeypatch):
    from dagster_ocr.ocr import openvino_runtime
    from dagster_ocr.settings import Settings

    def settings(**engine) -> Settings:
        return Settings.model_validate({"ocr": {"engine": {"kind": "rapidocr", **engine}}})

    [f] = doctor.check_ocr_runtime(settings(), bf16_native=lambda: True)
    assert f.status == "ok" and "rec in bf16" in f.message
    [f] = doctor.check_ocr_runtime(settings(), bf16_native=lambda: False)
    assert f.status == "ok" and "no bf16 instructions" in f.message and "f32" in f.message
    [f] = doctor.check_ocr_runtime(settings(runtime="onnxruntime"))
    assert f.status == "ok" and "onnxruntime" in f.message
    assert doctor.check_ocr_runtime(Settings.model_validate({"ocr": {"engine": {"kind": "none"}}})) == []
    monkeypatch.setattr(openvino_runtime, "openvino_available", lambda: False)
    [f] = doctor.check_ocr_runtime(settings())
    assert f.status == "warn" and "falls back to onnxruntime" in f.message and "requirements.lock" in f.fix


def test_gpu_absent_is_reported_not_failed():
    [f] = doctor.check_gpu(probe=lambda: (False, "CUDA not available"))
    assert f.status == "ok" and "CPU" in f.message
    [f] = doctor.check_gpu(require=True, probe=lambda: (False, "CUDA not available"))
    assert f.status == "error" and "nvidia-smi" in f.fix


def test_instance_storage(tmp_path):
    assert _by_status(doctor.check_instance_storage({})) == {"warn"}
    assert _by_status(doctor.check_instance_storage({"DAGSTER_HOME": str(tmp_path / "nope")})) == {"error"}
    (tmp_path / "dagster.yaml").write_text(
        "storage:\n  postgres:\n    postgres_db:\n      hostname: {env: PG_H}\n      port: {env: PG_P}\n"
    )
    [f] = doctor.check_instance_storage({"DAGSTER_HOME": str(tmp_path)})
    assert f.status == "error" and "PG_H, PG_P" in f.message
    # a port nobody listens on: reserve one, close it
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    [f] = doctor.check_instance_storage(
        {"DAGSTER_HOME": str(tmp_path), "PG_H": "127.0.0.1", "PG_P": str(port)}
    )
    assert f.status == "error" and "not reachable" in f.message
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    try:
        env = {"DAGSTER_HOME": str(tmp_path), "PG_H": "127.0.0.1", "PG_P": str(listener.getsockname()[1])}
        assert _by_status(doctor.check_instance_storage(env)) == {"ok"}
    finally:
        listener.close()


def test_report_exit_code():
    text, code = doctor.report(
        [doctor.Finding("x", "error", "broken", "mend it"), doctor.Finding("y", "ok", "fine")]
    )
    assert code == 1 and "ERROR x: broken" in text and "fix: mend it" in text and "1 error(s)" in text
    assert doctor.report([doctor.Finding("y", "warn", "meh", "later")])[1] == 0


def test_a_local_build_label_is_not_another_version(tmp_path):
    lock = tmp_path / "requirements.lock"
    lock.write_text("torch==2.13.0\n")
    assert _by_status(doctor.check_packages(lock, installed=lambda name: "2.13.0+cu128")) == {"ok"}
    assert _by_status(doctor.check_packages(lock, installed=lambda name: "2.12.0+cpu")) == {"warn"}


def test_doctor_warns_when_the_snapshot_lags_writes_that_went_quiet(tmp_path):
    from dagster_ocr.admin.doctor import check_snapshot
    from dagster_ocr.warehouse import Warehouse

    wh = Warehouse(tmp_path / "w.duckdb")
    assert check_snapshot(wh.path) == []  # no warehouse: nothing to say
    wh.ensure_schema()
    wh.publish_snapshot()
    record = wh.snapshot_record()
    assert [f.status for f in check_snapshot(wh.path)] == ["ok"]
    record.pending_writes, record.last_write_at = 3, record.published_at + 5
    record.save(wh.snapshot_path.with_suffix(".json"))
    assert [f.status for f in check_snapshot(wh.path, now=record.published_at + 60)] == ["ok"]
    (late,) = check_snapshot(wh.path, now=record.published_at + 3600)
    assert late.status == "warn" and "3 document write(s)" in late.message and "publish" in late.fix
