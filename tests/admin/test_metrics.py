"""Prometheus figures from a warehouse filled with the sample documents: text parses, numbers match."""

from __future__ import annotations

import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import duckdb
import pytest
from prometheus_client.parser import text_string_to_metric_families

from dagster_ocr import pipeline
from dagster_ocr.admin.metrics import (
    MetricsCache,
    build_registry,
    exposition,
    make_server,
    push_metrics,
    read_figures,
    registry_from_warehouse,
)
from dagster_ocr.ingest import DocumentStore, ingest_inbox
from dagster_ocr.samples import write_samples
from dagster_ocr.settings import Settings
from dagster_ocr.warehouse import Warehouse


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory) -> Path:
    """The sample documents parsed (no OCR engine, for speed) into a warehouse; one quarantined."""
    root = tmp_path_factory.mktemp("metrics")
    found = ingest_inbox(write_samples(root / "inbox")[0].parent, DocumentStore(root / "store"))
    wh = Warehouse(root / "w.duckdb")
    settings = Settings()
    for source, _ in found:
        parsed = pipeline.parse(source, settings, engine=None)
        wh.write_document(parsed.document, parsed.labels, parsed.tables, parsed.paragraphs)
    with wh.transaction() as con:
        doc_id = con.execute("SELECT doc_id FROM documents WHERE status = 'parsed' LIMIT 1").fetchone()[0]
        con.execute("UPDATE documents SET status = 'quarantined' WHERE doc_id = ?", [doc_id])
        con.execute(
            "INSERT INTO quality_results (doc_id, check_name, expectation, severity, success) "
            "VALUES (?, 'text_quality', 'mojibake_share', 'ERROR', false)",
            [doc_id],
        )
    return wh.path


def _samples(text: str) -> dict[tuple[str, tuple], float]:
    out = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def test_exposition_parses_and_matches_the_warehouse(warehouse):
    samples = _samples(exposition(registry_from_warehouse(warehouse, {"document_text": 2})))
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        by_status = dict(con.execute("SELECT status, count(*) FROM documents GROUP BY 1").fetchall())
        pages = con.execute("SELECT sum(n_pages) FROM documents").fetchone()[0]
        flagged = con.execute("SELECT count(*) FROM paragraphs WHERE len(flags) > 0").fetchone()[0]
        merged = con.execute("SELECT count(*) FROM tables WHERE len(pages) > 1").fetchone()[0]
    finally:
        con.close()
    assert by_status.get("failed", 0) >= 1  # the damaged sample
    for status in ("parsed", "quarantined", "failed"):
        assert samples[("dagster_ocr_documents", (("status", status),))] == by_status.get(status, 0)
    assert samples[("dagster_ocr_pages", ())] == pages > 0
    assert samples[("dagster_ocr_paragraphs_flagged", ())] == flagged
    assert samples[("dagster_ocr_tables_merged", ())] == merged
    assert samples[("dagster_ocr_document_failures", (("stage", "quality_gate"),))] == 1
    assert samples[("dagster_ocr_quality_check_failures", (("check", "text_quality"),))] == 1
    assert samples[("dagster_ocr_step_failures", (("step", "document_text"),))] == 2
    assert 0.0 <= samples[("dagster_ocr_ocr_share", ())] <= 1.0
    assert samples[("dagster_ocr_last_parsed_timestamp_seconds", ())] > 1.7e9


def test_empty_file_gives_a_valid_exposition(tmp_path):
    duckdb.connect(str(tmp_path / "empty.duckdb")).close()
    figures = read_figures(tmp_path / "empty.duckdb")
    assert figures.schema_version is None
    assert list(text_string_to_metric_families(exposition(build_registry(figures))))


def test_endpoint_serves_metrics_and_survives_a_locked_warehouse(warehouse):
    calls = {"n": 0}

    def build():
        calls["n"] += 1
        if calls["n"] > 1:
            raise duckdb.IOException('Could not set lock on file "w.duckdb"')
        return registry_from_warehouse(warehouse)

    server = make_server(MetricsCache(build, min_interval_s=0), "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}/metrics"
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            first = _samples(r.read().decode())
            assert r.headers["Content-Type"].startswith("text/plain")
        with urllib.request.urlopen(url, timeout=5) as r:
            second = _samples(r.read().decode())
    finally:
        server.shutdown()
        server.server_close()
    assert first[("dagster_ocr_warehouse_up", ())] == 1
    # the second read failed: the last figures are still served, marked down
    assert second[("dagster_ocr_warehouse_up", ())] == 0
    assert second[("dagster_ocr_pages", ())] == first[("dagster_ocr_pages", ())]


def test_push_sends_the_exposition_to_a_pushgateway(warehouse):
    got: list[tuple[str, str, bytes]] = []

    class Gateway(BaseHTTPRequestHandler):
        def do_PUT(self) -> None:  # noqa: N802
            got.append(("PUT", self.path, self.rfile.read(int(self.headers["Content-Length"]))))
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Gateway)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        push_metrics(f"127.0.0.1:{server.server_address[1]}", registry_from_warehouse(warehouse))
    finally:
        server.shutdown()
        server.server_close()
    assert got and got[0][1] == "/metrics/job/dagster_ocr"
    assert ("dagster_ocr_pages", ()) in _samples(got[0][2].decode())
