"""deploy/vllm.yaml, deploy/settings.served.yaml and the served engine agree (issue 24, item 4).

The manifests cannot be applied here (no cluster, no GPU), so this checks what would break a
deployment silently: the settings file loads, its URL names the Service's name and port, its model
is the server's --served-model-name, the server accepts as many images per request as the engine
sends and batches at least as many pages as one process keeps in flight, the speculative config is
valid JSON of a method vLLM offers, and the API key travels the way the engine sends it.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

import numpy as np
import pytest
import yaml

from dagster_ocr.ocr import OcrSettings, ServedOcrSettings, get_engine
from dagster_ocr.settings import Settings

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"


def _manifests() -> dict[str, dict]:
    docs = [d for d in yaml.safe_load_all((DEPLOY / "vllm.yaml").read_text()) if d]
    return {d["kind"]: d for d in docs}


def _server_flags() -> tuple[str, dict[str, str], dict]:
    container = _manifests()["Deployment"]["spec"]["template"]["spec"]["containers"][0]
    assert container["command"] == ["vllm", "serve"]
    model_dir, *rest = container["args"]
    flags = dict(arg.removeprefix("--").split("=", 1) for arg in rest)
    return model_dir, flags, container


def _engine(engine: ServedOcrSettings):
    return get_engine(OcrSettings(engine=engine.model_dump()))


_PAGE = np.full((20, 30, 3), 255, dtype=np.uint8)


def _settings() -> ServedOcrSettings:
    engine = Settings.load(DEPLOY / "settings.served.yaml").ocr.engine
    assert isinstance(engine, ServedOcrSettings)
    return engine


def test_settings_name_the_service_and_the_served_model():
    engine, (model_dir, flags, _container) = _settings(), _server_flags()
    service = _manifests()["Service"]
    url = urlsplit(engine.base_url)
    assert url.hostname == service["metadata"]["name"]
    assert url.port == service["spec"]["ports"][0]["port"] == int(flags["port"])
    assert url.path == "/v1"  # vLLM's OpenAI routes; the engine appends /chat/completions
    assert flags["served-model-name"] == engine.model
    assert model_dir.startswith("/models/")  # a local folder on the mounted volume, never a hub id


def test_server_capacity_covers_what_the_engine_sends():
    engine, (_dir, flags, _container) = _settings(), _server_flags()
    body = _engine(engine)._request_body(_PAGE)
    images = [c for c in body["messages"][0]["content"] if c["type"] == "image_url"]
    assert json.loads(flags["limit-mm-per-prompt"]) == {"image": len(images)}
    assert int(flags["max-num-seqs"]) >= engine.max_concurrency
    assert int(flags["max-model-len"]) > engine.max_tokens
    spec = json.loads(flags["speculative-config"])
    assert spec["method"] in {"ngram", "eagle3", "eagle", "mtp", "suffix"}
    assert spec["num_speculative_tokens"] >= 1


def test_offline_weights_and_the_key_secret():
    _dir, _flags, container = _server_flags()
    env = {e["name"]: e for e in container["env"]}
    assert env["HF_HUB_OFFLINE"]["value"] == "1"
    assert "secretKeyRef" in env["VLLM_API_KEY"]["valueFrom"]
    assert _settings().api_key_env == "OCR_API_KEY"
    assert "OCR_API_KEY" in (DEPLOY / "k8s.md").read_text()


@pytest.fixture()
def vllm_like_server():
    """A stand-in that checks what vLLM checks: the bearer key and the served model's name."""
    seen: list[tuple[str, str]] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):  # noqa: N802 (http.server's naming)
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            seen.append((self.headers.get("Authorization", ""), body["model"]))
            ok = self.headers.get("Authorization") == "Bearer k3y" and body["model"] == "olmocr"
            data = json.dumps({"choices": [{"message": {"content": "Clause 1. Parties"}}]}).encode()
            self.send_response(200 if ok else 401)
            self.send_header("Content-Length", str(len(data) if ok else 0))
            self.end_headers()
            if ok:
                self.wfile.write(data)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1", seen
    httpd.shutdown()
    httpd.server_close()


def test_the_deployed_settings_read_a_page_from_a_vllm_like_server(vllm_like_server, monkeypatch):
    url, seen = vllm_like_server
    monkeypatch.setenv("OCR_API_KEY", "k3y")
    engine = _settings().model_copy(update={"base_url": url})
    lines = _engine(engine).recognize(_PAGE)
    assert [ln.text for ln in lines] == ["Clause 1. Parties"]
    assert seen == [("Bearer k3y", "olmocr")]
