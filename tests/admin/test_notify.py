"""The webhook notifier posts JSON to a local HTTP server; the log notifier always records."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from dagster_ocr.admin.notify import Alert, NotifyError, WebhookNotifier, build_notifier

ALERT = Alert(
    key="failed_rate",
    severity="critical",
    title="5.0% of documents failed",
    detail="1 of 20 documents failed: a.pdf",
    action="look at the failures",
    labels={"status": "failed"},
)


@pytest.fixture
def webhook() -> Iterator[tuple[str, list[dict]]]:
    """A webhook receiver on 127.0.0.1 (ephemeral port) collecting the JSON bodies it gets."""
    received: list[dict] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers["Content-Length"])
            assert self.headers["Content-Type"] == "application/json"
            received.append(json.loads(self.rfile.read(length)))
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args: object) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/hooks/abc", received
    finally:
        server.shutdown()
        server.server_close()


def test_webhook_notifier_posts_the_alert(webhook):
    url, received = webhook
    WebhookNotifier(url).notify(ALERT)
    assert len(received) == 1
    body = received[0]
    assert body["key"] == "failed_rate" and body["severity"] == "critical"
    assert body["labels"] == {"status": "failed"}
    assert body["text"].startswith("[CRITICAL] 5.0% of documents failed") and "What to do:" in body["text"]


def test_url_is_read_from_the_environment_when_built(webhook, caplog):
    url, received = webhook
    notifier = build_notifier("MY_HOOK", environ={"MY_HOOK": url}, logger=logging.getLogger("t"))
    with caplog.at_level(logging.WARNING, logger="t"):
        notifier.notify(ALERT)
    assert len(received) == 1  # the webhook
    assert "ALERT failed_rate" in caplog.text  # and the log


def test_without_the_variable_only_the_log_notifies(caplog):
    notifier = build_notifier("UNSET_HOOK", environ={}, logger=logging.getLogger("t2"))
    with caplog.at_level(logging.WARNING, logger="t2"):
        notifier.notify(ALERT)
    assert "ALERT failed_rate" in caplog.text


def test_unreachable_webhook_raises_without_leaking_the_url_token():
    # port 9 on 127.0.0.1: nothing listens, the connection is refused at once
    with pytest.raises(NotifyError) as info:
        WebhookNotifier("http://127.0.0.1:9/hooks/SECRET-TOKEN", timeout_s=2).notify(ALERT)
    assert "SECRET-TOKEN" not in str(info.value) and "127.0.0.1" in str(info.value)


def test_fan_out_keeps_logging_when_the_webhook_is_down(caplog):
    notifier = build_notifier(
        "HOOK", environ={"HOOK": "http://127.0.0.1:9/x"}, logger=logging.getLogger("t3")
    )
    with caplog.at_level(logging.WARNING):
        notifier.notify(ALERT)  # the log delivered it: no exception
    assert "ALERT failed_rate" in caplog.text and "could not deliver" in caplog.text


def test_webhook_url_must_be_http():
    with pytest.raises(ValueError):
        WebhookNotifier("file:///etc/passwd")
