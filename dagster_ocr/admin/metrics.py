"""Pipeline figures in Prometheus' text format: a registry built from the warehouse, an HTTP
endpoint on 127.0.0.1, and a push to a Pushgateway.

Everything is a gauge recomputed from the DuckDB file on each scrape: the warehouse is the record,
so a restarted exporter reports the same numbers and nothing needs to survive in memory. DuckDB
lets one process hold a file while it writes (docs/stack-facts.md), so a scrape during a write
cannot open it: the endpoint then serves the last good figures with ``dagster_ocr_warehouse_up 0`` and their
age, instead of an error that would leave gaps in every graph.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import duckdb
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Gauge, generate_latest, push_to_gateway

from dagster_ocr.schema import current_version

log = logging.getLogger(__name__)

PREFIX = "dagster_ocr"
STATUSES = ("parsed", "quarantined", "failed")


@dataclass(slots=True)
class WarehouseFigures:
    """The numbers an on-call engineer watches, read from one warehouse file."""

    documents: dict[str, int] = field(default_factory=dict)
    pages: int = 0
    pages_by_source: dict[str, int] = field(default_factory=dict)
    ocr_confidence_mean: float | None = None
    tables: int = 0
    tables_merged: int = 0
    paragraphs: int = 0
    paragraphs_flagged: int = 0
    kb_chunks: int = 0
    #: documents stopped at a stage: document_text (could not be read), quality_gate (quarantined)
    document_failures: dict[str, int] = field(default_factory=dict)
    #: documents failing each quality suite at ERROR severity (latest evaluation)
    check_failures: dict[str, int] = field(default_factory=dict)
    last_parsed_at: float | None = None
    schema_version: int | None = None

    @property
    def ocr_share(self) -> float:
        return self.pages_by_source.get("ocr", 0) / self.pages if self.pages else 0.0


def _scalar(con: duckdb.DuckDBPyConnection, sql: str) -> float | int | None:
    row = con.execute(sql).fetchone()
    return row[0] if row else None


def read_figures(warehouse: str | Path) -> WarehouseFigures:
    """Read the figures from a warehouse file (read-only; raises duckdb.Error while a writer holds it)."""
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        f = WarehouseFigures(schema_version=current_version(con))
        if f.schema_version is None:  # empty file: nothing parsed yet
            return f
        f.documents = {s: 0 for s in STATUSES} | dict(
            con.execute("SELECT status, count(*) FROM documents GROUP BY status").fetchall()
        )
        f.pages = int(_scalar(con, "SELECT coalesce(sum(n_pages), 0) FROM documents") or 0)
        f.pages_by_source = dict(
            con.execute("SELECT coalesce(text_source, 'none'), count(*) FROM pages GROUP BY 1").fetchall()
        )
        f.ocr_confidence_mean = _scalar(
            con, "SELECT avg(ocr_confidence) FROM pages WHERE text_source = 'ocr'"
        )
        f.tables = int(_scalar(con, "SELECT count(*) FROM tables") or 0)
        f.tables_merged = int(_scalar(con, "SELECT count(*) FROM tables WHERE len(pages) > 1") or 0)
        f.paragraphs = int(
            _scalar(con, "SELECT count(*) FROM paragraphs WHERE kind IS DISTINCT FROM 'table'") or 0
        )
        f.paragraphs_flagged = int(_scalar(con, "SELECT count(*) FROM paragraphs WHERE len(flags) > 0") or 0)
        f.kb_chunks = int(_scalar(con, "SELECT count(*) FROM kb_chunks") or 0)
        f.document_failures = {
            "document_text": f.documents.get("failed", 0),
            "quality_gate": f.documents.get("quarantined", 0),
        }
        f.check_failures = dict(
            con.execute(
                "SELECT check_name, count(DISTINCT doc_id) FROM quality_results "
                "WHERE NOT success AND severity = 'ERROR' GROUP BY 1"
            ).fetchall()
        )
        f.last_parsed_at = _scalar(con, "SELECT epoch(max(parsed_at)) FROM documents")
        return f
    finally:
        con.close()


def build_registry(
    figures: WarehouseFigures, step_failures: Mapping[str, int] | None = None
) -> CollectorRegistry:
    """A fresh registry holding ``figures`` (plus Dagster step failures per asset, when given)."""
    reg = CollectorRegistry(auto_describe=True)

    def gauge(name: str, doc: str, value: float | None) -> None:
        if value is not None:
            Gauge(f"{PREFIX}_{name}", doc, registry=reg).set(value)

    def per_label(name: str, doc: str, label: str, values: Mapping[str, int]) -> None:
        g = Gauge(f"{PREFIX}_{name}", doc, [label], registry=reg)
        for key, n in sorted(values.items()):
            g.labels(**{label: key}).set(n)

    per_label("documents", "Documents in the warehouse by status.", "status", figures.documents)
    gauge("pages", "Pages of every document in the warehouse.", figures.pages)
    per_label(
        "pages_by_source", "Pages by where their text came from.", "text_source", figures.pages_by_source
    )
    gauge("ocr_share", "Share of pages whose text came from OCR.", figures.ocr_share)
    gauge("ocr_confidence_mean", "Mean OCR confidence over OCR pages.", figures.ocr_confidence_mean)
    gauge("tables", "Tables found.", figures.tables)
    gauge("tables_merged", "Tables merged across page breaks.", figures.tables_merged)
    gauge("paragraphs", "Paragraphs stored.", figures.paragraphs)
    gauge("paragraphs_flagged", "Paragraphs carrying a validation flag.", figures.paragraphs_flagged)
    gauge("kb_chunks", "Knowledge-base chunks.", figures.kb_chunks)
    per_label(
        "document_failures",
        "Documents stopped at a stage (document_text: unreadable; quality_gate: quarantined).",
        "stage",
        figures.document_failures,
    )
    per_label(
        "quality_check_failures",
        "Documents failing a quality suite at ERROR severity.",
        "check",
        figures.check_failures,
    )
    if step_failures is not None:
        per_label("step_failures", "Failed Dagster steps per asset (recent runs).", "step", step_failures)
    gauge(
        "last_parsed_timestamp_seconds",
        "When the newest document was parsed (alert on time() minus this).",
        figures.last_parsed_at,
    )
    gauge("schema_version", "The warehouse's schema version.", figures.schema_version)
    return reg


def registry_from_warehouse(
    warehouse: str | Path, step_failures: Mapping[str, int] | None = None
) -> CollectorRegistry:
    """``build_registry(read_figures(warehouse))``."""
    return build_registry(read_figures(warehouse), step_failures)


def exposition(registry: CollectorRegistry) -> str:
    """The registry in Prometheus' text exposition format."""
    return generate_latest(registry).decode()


def push_metrics(
    gateway: str,
    registry: CollectorRegistry,
    job: str = "dagster_ocr",
    grouping_key: Mapping[str, str] | None = None,
    timeout_s: float = 10.0,
) -> None:
    """PUT the registry to a Prometheus Pushgateway (replaces the group's previous figures)."""
    push_to_gateway(
        gateway, job=job, registry=registry, grouping_key=dict(grouping_key or {}), timeout=timeout_s
    )


class MetricsCache:
    """The last good exposition and its age; a failed read keeps serving it with ``up 0``."""

    def __init__(self, build: Callable[[], CollectorRegistry], min_interval_s: float = 10.0):
        self.build = build
        self.min_interval_s = min_interval_s
        self._text = ""
        self._at: float | None = None
        self._up = 0
        self._lock = threading.Lock()

    def render(self, now: float | None = None) -> str:
        """Refresh when older than ``min_interval_s``, then return the text with status gauges."""
        now = time.time() if now is None else now
        with self._lock:
            if self._at is None or now - self._at >= self.min_interval_s:
                try:
                    self._text = exposition(self.build())
                    self._at, self._up = now, 1
                except (duckdb.Error, OSError) as exc:
                    # a writer holds the file, or it is gone: keep the last figures, say so
                    log.warning("metrics: cannot read the warehouse: %s", exc)
                    self._up = 0
            status = CollectorRegistry()
            Gauge(
                f"{PREFIX}_warehouse_up", "1 when the last scrape read the warehouse.", registry=status
            ).set(self._up)
            if self._at is not None:
                Gauge(f"{PREFIX}_metrics_age_seconds", "Age of the figures served.", registry=status).set(
                    now - self._at
                )
            return self._text + exposition(status)


def make_server(cache: MetricsCache, host: str = "127.0.0.1", port: int = 9108) -> ThreadingHTTPServer:
    """An HTTP server answering ``GET /metrics`` (and ``/``) from ``cache``; call ``serve_forever``.

    Binds to 127.0.0.1 by default: the figures name documents' states, and a scraper on another
    host should come through the deployment's proxy or a Pushgateway, not an open port.
    """

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
            if self.path.split("?")[0] not in ("/", "/metrics"):
                self.send_error(404)
                return
            body = cache.render().encode()
            self.send_response(200)
            self.send_header("Content-Type", CONTENT_TYPE_LATEST)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002
            log.debug("metrics: " + format, *args)

    return ThreadingHTTPServer((host, port), Handler)
