"""An OCR engine on a served vision-language model: any OpenAI-compatible chat-completions
endpoint (vLLM, SGLang, TGI), for scale beyond one process's GPU.

Each page image goes out as a base64 PNG in one chat message with the page prompt; the reply's
text is the page's text (one ``OcrLine`` covering the page: page-level VLMs return no boxes).
Requests are bounded by ``max_concurrency`` per process (a semaphore: pages of several documents
recognised on several threads share it), time out after ``timeout_s`` and are retried with
exponential backoff on timeouts, connection errors, 429 and 5xx; other HTTP errors, and retries
exhausted, raise ``EngineError`` (a page error, never a crash). Speculative decoding is the
server's (vLLM ``--speculative-config``: EAGLE3 or n-gram for Qwen2.5-VL); ``extra_body`` passes
per-request server options through. Confidence is the mean token probability when the server
returns logprobs, else 1.0 (unknown). The standard library's HTTP client: no new dependency.
"""

from __future__ import annotations

import base64
import json
import logging
import math
import os
import threading
import time
import urllib.error
import urllib.request
from typing import Any

import numpy as np
import pymupdf

from dagster_ocr.errors import EngineError
from dagster_ocr.ocr.engine import OcrEngineBase, OcrLine
from dagster_ocr.ocr.settings import ServedOcrSettings

logger = logging.getLogger(__name__)

_RETRY_STATUS = {408, 409, 429, 500, 502, 503, 504}


def png_base64(image: np.ndarray) -> str:
    """An HxWx3 uint8 RGB image as base64 PNG (PyMuPDF's encoder: no imaging library needed)."""
    h, w = image.shape[:2]
    pix = pymupdf.Pixmap(pymupdf.csRGB, w, h, np.ascontiguousarray(image).tobytes(), False)
    return base64.b64encode(pix.tobytes("png")).decode("ascii")


class ServedOcrEngine(OcrEngineBase):
    """``OcrEngine`` that sends page images to an OpenAI-compatible VLM server."""

    name = "served"

    def __init__(self, settings: ServedOcrSettings):
        self.settings = settings
        self._slots = threading.BoundedSemaphore(settings.max_concurrency)
        self.requests = 0  # HTTP requests sent, retries included (for tests and logs)

    def _request_body(self, image: np.ndarray) -> dict[str, Any]:
        s = self.settings
        return {
            "model": s.model,
            "messages": [
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "image_url",
                            "image_url": {"url": f"data:image/png;base64,{png_base64(image)}"},
                        },
                        {"type": "text", "text": s.prompt},
                    ],
                }
            ],
            "max_tokens": s.max_tokens,
            "temperature": 0.0,
            "logprobs": True,
            **s.extra_body,
        }

    def _post(self, body: dict[str, Any]) -> dict[str, Any]:
        s = self.settings
        headers = {"Content-Type": "application/json"}
        key = os.environ.get(s.api_key_env) if s.api_key_env else None
        if key:
            headers["Authorization"] = f"Bearer {key}"
        url = s.base_url.rstrip("/") + "/chat/completions"
        data = json.dumps(body).encode()
        delay = s.backoff_s
        last: str = ""
        for attempt in range(s.retries + 1):
            if attempt:
                time.sleep(delay)
                delay *= 2
            self.requests += 1
            req = urllib.request.Request(url, data=data, headers=headers, method="POST")
            try:
                with self._slots, urllib.request.urlopen(req, timeout=s.timeout_s) as resp:
                    return json.loads(resp.read().decode())
            except urllib.error.HTTPError as exc:
                last = f"HTTP {exc.code} from {url}: {exc.read()[:200]!r}"
                if exc.code not in _RETRY_STATUS:
                    raise EngineError(f"OCR server refused the page: {last}") from exc
            except (TimeoutError, urllib.error.URLError, ConnectionError) as exc:
                last = f"{type(exc).__name__} from {url}: {exc}"
            except json.JSONDecodeError as exc:
                raise EngineError(f"OCR server sent no JSON: {exc}") from exc
            logger.warning("OCR server attempt %d/%d failed: %s", attempt + 1, s.retries + 1, last)
        raise EngineError(f"OCR server failed after {s.retries + 1} attempts: {last}")

    def recognize(self, image: np.ndarray) -> list[OcrLine]:
        """The page's text as one line covering the image (boxes in pixels)."""
        if image.ndim != 3 or image.shape[2] != 3 or image.dtype != np.uint8:
            raise ValueError(f"expected an HxWx3 uint8 RGB image, got {image.shape} {image.dtype}")
        reply = self._post(self._request_body(image))
        try:
            choice = reply["choices"][0]
            text = choice["message"]["content"] or ""
        except (KeyError, IndexError, TypeError) as exc:
            raise EngineError(f"OCR server reply has no message: {str(reply)[:200]}") from exc
        if not text.strip():
            return []
        tokens = ((choice.get("logprobs") or {}).get("content")) or []
        logps = [t["logprob"] for t in tokens if isinstance(t, dict) and "logprob" in t]
        conf = math.exp(sum(logps) / len(logps)) if logps else 1.0
        h, w = image.shape[:2]
        return [OcrLine(text=text.strip(), bbox=(0.0, 0.0, float(w), float(h)), confidence=conf)]
