"""The served OCR engine (issue 24, item 4) against a local stub of an OpenAI-compatible server."""

from __future__ import annotations

import base64
import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pymupdf
import pytest

from dagster_ocr.errors import EngineError
from dagster_ocr.ocr import OcrSettings, ServedOcrSettings, get_engine, ocr_page
from dagster_ocr.ocr.served import ServedOcrEngine


class _Stub:
    """Behaviour of the stub server: statuses to answer first, delay, what it saw."""

    def __init__(self) -> None:
        self.fail_with: list[int] = []  # statuses for the next requests, then 200
        self.delay = 0.0
        self.bodies: list[dict] = []
        self.headers: list[dict] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.lock = threading.Lock()


@pytest.fixture()
def server():
    stub = _Stub()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):  # keep test output clean
            pass

        def do_POST(self):  # noqa: N802 (http.server's naming)
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            with stub.lock:
                stub.bodies.append(body)
                stub.headers.append(dict(self.headers))
                stub.in_flight += 1
                stub.max_in_flight = max(stub.max_in_flight, stub.in_flight)
                status = stub.fail_with.pop(0) if stub.fail_with else 200
            time.sleep(stub.delay)
            with stub.lock:
                stub.in_flight -= 1
            if status != 200:
                self.send_response(status)
                self.end_headers()
                self.wfile.write(b'{"error": "busy"}')
                return
            image = body["messages"][0]["content"][0]["image_url"]["url"]
            png = base64.b64decode(image.split(",", 1)[1])
            pix = pymupdf.Pixmap(png)
            reply = {
                "choices": [
                    {
                        "message": {
                            "role": "assistant",
                            "content": f"page {pix.width}x{pix.height}\nline two",
                        },
                        "logprobs": {"content": [{"logprob": -0.1}, {"logprob": -0.3}]},
                    }
                ]
            }
            data = json.dumps(reply).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    stub.url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"  # type: ignore[attr-defined]
    yield stub
    httpd.shutdown()
    httpd.server_close()


def _settings(server, **kw) -> ServedOcrSettings:
    return ServedOcrSettings(base_url=server.url, model="olmocr", backoff_s=0.01, **kw)


def _image() -> np.ndarray:
    return np.full((40, 60, 3), 255, dtype=np.uint8)


def test_page_through_ocr_page_with_key_prompt_and_extra_body(server, monkeypatch):
    monkeypatch.setenv("OCR_SERVER_KEY", "s3cret")
    settings = OcrSettings(
        engine={
            "kind": "served",
            "base_url": server.url,
            "model": "olmocr",
            "api_key_env": "OCR_SERVER_KEY",
            "extra_body": {"top_k": 1},
        },
        min_confidence=0.0,
        detect_orientation=False,
    )
    eng = get_engine(settings)
    assert isinstance(eng, ServedOcrEngine)
    doc = pymupdf.open()
    page = doc.new_page(width=100, height=50)
    result = ocr_page(eng, page, 0, dpi=72, settings=settings)
    assert [ln.text for ln in result.lines] == ["page 100x50\nline two"]
    assert result.engine == "served" and result.ocr_confidence == pytest.approx(np.exp(-0.2), abs=1e-3)
    body, headers = server.bodies[0], server.headers[0]
    assert body["model"] == "olmocr" and body["top_k"] == 1 and body["temperature"] == 0.0
    assert body["messages"][0]["content"][1]["text"].startswith("Read all the text")
    assert headers["Authorization"] == "Bearer s3cret"


def test_retries_busy_server_then_succeeds(server):
    server.fail_with = [503, 429]
    eng = ServedOcrEngine(_settings(server, retries=3))
    assert eng.recognize(_image())[0].text.startswith("page 60x40")
    assert eng.requests == 3


def test_gives_up_with_an_engine_error(server):
    server.fail_with = [503] * 5
    eng = ServedOcrEngine(_settings(server, retries=2))
    with pytest.raises(EngineError, match="after 3 attempts"):
        eng.recognize(_image())
    server.fail_with = [400]
    eng = ServedOcrEngine(_settings(server, retries=2))
    with pytest.raises(EngineError, match="refused"):  # a bad request is not retried
        eng.recognize(_image())
    assert eng.requests == 1


def test_timeout_is_retried(server):
    server.delay = 0.5
    eng = ServedOcrEngine(_settings(server, retries=1, timeout_s=0.1))
    with pytest.raises(EngineError, match="after 2 attempts"):
        eng.recognize(_image())
    assert eng.requests == 2


def test_concurrency_is_bounded(server):
    server.delay = 0.05
    eng = ServedOcrEngine(_settings(server, max_concurrency=2))
    with ThreadPoolExecutor(8) as pool:
        out = list(pool.map(lambda _: eng.recognize(_image()), range(8)))
    assert all(lines and lines[0].text.startswith("page") for lines in out)
    assert server.max_in_flight == 2


def test_unreachable_server_is_an_engine_error():
    eng = ServedOcrEngine(ServedOcrSettings(base_url="http://127.0.0.1:9/v1", model="m", retries=0))
    with pytest.raises(EngineError, match="after 1 attempts"):
        eng.recognize(_image())
