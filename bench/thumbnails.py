"""Page previews on the shared corpus: what they cost (CPU per document) and weigh (bytes per image,
Markdown per document, the event-log footprint), tune and check side by side.

Each input is parsed once without OCR (the preview renders the stored copy; OCR changes only the
boxes drawn and the badge), then ``thumbnails.page_thumbnails`` is timed in CPU seconds
(``time.process_time``, less noisy than wall time on shared cores) and its Markdown measured.

    .venv/bin/python bench/thumbnails.py [CORPUS_DIR] [--limit N]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import find_corpus  # noqa: E402

from dagster_ocr import pipeline, thumbnails  # noqa: E402
from dagster_ocr.ingest import DocumentStore  # noqa: E402
from dagster_ocr.limits import LimitSettings
from dagster_ocr.settings import Settings  # noqa: E402
from dagster_ocr.thumbnails import PreviewSettings


def _pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))] if values else 0.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpus", nargs="?", type=Path, default=None)
    ap.add_argument("--limit", type=int, default=0, help="inputs per split at most (0: all)")
    args = ap.parse_args()
    corpus = args.corpus or find_corpus()
    if corpus is None:
        sys.exit("no corpus: pass CORPUS_DIR or set DAGSTER_OCR_CORPUS")
    manifest = json.loads((corpus / "MANIFEST.json").read_text())
    inputs = [f for f in manifest["files"] if f.get("role") == "input" and f.get("split")]
    settings = Settings.model_validate({"ocr": {"engine": "none"}})
    rows: dict[str, dict[str, list[float]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        store = DocumentStore(Path(tmp) / "store")
        for split in ("tune", "check"):
            chosen = [f for f in inputs if f["split"] == split]
            if args.limit:
                chosen = chosen[: args.limit]
            r = rows.setdefault(split, {"cpu_ms": [], "image_bytes": [], "md_chars": [], "pages": []})
            for f in chosen:
                source, _ = store.register(corpus / f["file"])
                out = pipeline.parse(source, settings)
                if not out.document.ok:
                    continue
                t = time.process_time()
                thumbs = thumbnails.page_thumbnails(
                    out.document,
                    out.labels,
                    out.tables,
                    out.paragraphs,
                    limits=LimitSettings(),
                    preview=PreviewSettings(),
                )
                text = thumbnails.thumbnails_markdown(thumbs, out.document.n_pages)
                r["cpu_ms"].append(1000 * (time.process_time() - t))
                r["image_bytes"] += [len(th.jpeg) for th in thumbs]
                r["md_chars"].append(len(text))
                r["pages"].append(out.document.n_pages)
    print(
        "| split | documents | pages (median) | images | bytes/image median / p95 / max "
        "| Markdown chars/document median / max | CPU ms/document median / p95 |"
    )
    print("|---|---|---|---|---|---|---|")
    for split, r in rows.items():
        size, md, ms = r["image_bytes"], r["md_chars"], r["cpu_ms"]
        print(
            f"| {split} | {len(ms)} | {statistics.median(r['pages']):.0f} | {len(size)} "
            f"| {statistics.median(size):,.0f} / {_pct(size, 0.95):,.0f} / {max(size):,.0f} "
            f"| {statistics.median(md):,.0f} / {max(md):,.0f} "
            f"| {statistics.median(ms):.0f} / {_pct(ms, 0.95):.0f} |"
        )


if __name__ == "__main__":
    main()
