"""The lake with its Parquet data on an object store: s3://bucket/ on a local S3 stub (moto's server).

Needs the local PostgreSQL (the catalog), DuckDB's httpfs extension from its wheel
(``duckdb-extension-httpfs``, not in the lock) and ``moto[server]``; each missing one skips the
test, saying what to install.
"""

from __future__ import annotations

import socket

import pytest
from support.lake import scratch_lake

from dagster_ocr import duck
from dagster_ocr.errors import EngineError
from dagster_ocr.lake import LakeWarehouse

BUCKET = "lake-bucket"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture()
def s3(monkeypatch):
    """A moto S3 server on 127.0.0.1 with one empty bucket; the lake's S3 settings point at it."""
    try:
        duck.extension_path("httpfs")
    except EngineError as exc:
        pytest.skip(f"DuckDB's httpfs extension is needed for s3:// data: {exc}")
    server_mod = pytest.importorskip("moto.server", reason="a local S3 stub needs pip install 'moto[server]'")
    boto3 = pytest.importorskip("boto3", reason="pip install 'moto[server]' (it brings boto3)")
    port = _free_port()
    server = server_mod.ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    try:
        env = {
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_REGION": "us-east-1",
            "DAGSTER_OCR_S3_ENDPOINT": f"127.0.0.1:{port}",
            "DAGSTER_OCR_S3_URL_STYLE": "path",
            "DAGSTER_OCR_S3_USE_SSL": "false",
        }
        for k, v in env.items():
            monkeypatch.setenv(k, v)
        monkeypatch.delenv("AWS_SESSION_TOKEN", raising=False)
        client = boto3.client(
            "s3",
            endpoint_url=f"http://127.0.0.1:{port}",
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
            region_name="us-east-1",
        )
        client.create_bucket(Bucket=BUCKET)
        yield client
    finally:
        server.stop()


def test_the_lake_writes_its_parquet_to_s3_and_reads_it_back(s3, tmp_path):
    with scratch_lake(tmp_path) as (spec, _local_data):
        data = f"s3://{BUCKET}/lake/"
        lake = LakeWarehouse(spec, data, local_dir=tmp_path / "local")
        lake.ensure_schema()
        with lake.transaction() as con:
            con.executemany(
                "INSERT INTO documents (doc_id, file_name, status) VALUES (?, ?, 'parsed')",
                [[f"doc{i}", f"doc{i}.pdf"] for i in range(3)],
            )
        lake.compact()  # small commits are inlined in the catalog: flushed to Parquet files here
        keys = [o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET, Prefix="lake/").get("Contents", [])]
        assert any(k.endswith(".parquet") for k in keys), keys
        assert not list((tmp_path / "lake_data").rglob("*.parquet"))  # nothing went to the local folder
        # another reader, as an analyst attaches: no data path given, the catalog records it
        reader = LakeWarehouse(spec, read_only=True, local_dir=tmp_path / "reader")
        rows = reader.query("SELECT doc_id, file_name FROM documents ORDER BY doc_id")
        assert rows.values.tolist() == [[f"doc{i}", f"doc{i}.pdf"] for i in range(3)]
        lake.close()
        reader.close()
