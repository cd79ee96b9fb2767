"""What reading a long document's pages back from disk costs the stages (dagster_ocr.pagestore).

One generated report, one process: the text, labels, tables and paragraph stages with every page
held in memory (``limits.pages_in_memory`` above the page count) and with the default (pages past
256 wait on disk), alternating, best of ``--repeat``; the outputs are compared for equality.

    PYTHONPATH=bench .venv/bin/python bench/pagestore.py [--pages 2000] [--repeat 2] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from typing import Any

import _common as C


def stages(source: Any, settings: Any) -> tuple[dict[str, float], tuple[Any, ...]]:
    """Seconds of the text, labels, tables and paragraph stages, and what they produced."""
    from dagster_ocr import pipeline

    t: dict[str, float] = {}
    t["text"], doc = C.timed(lambda: pipeline.extract_document(source, settings))
    t["labels"], labels = C.timed(lambda: pipeline.document_labels(doc, settings))
    t["tables"], tables = C.timed(lambda: pipeline.document_tables(doc, settings))
    t["paragraphs"], paras = C.timed(lambda: pipeline.document_paragraphs(doc, labels, tables, settings))
    t["total"] = sum(t.values())
    return t, (labels, tables, paras)


def run(pages: int, repeat: int) -> dict[str, Any]:
    from dagster_ocr.ingest import DocumentStore
    from dagster_ocr.settings import Settings

    C.quiet_logs()
    with tempfile.TemporaryDirectory(prefix="bench-pagestore-") as tmp:
        source = DocumentStore(Path(tmp) / "store").register(C.generated(pages))[0]
        best: dict[str, dict[str, float]] = {}
        outputs: dict[str, Any] = {}
        for _ in range(repeat):
            for mode, keep in (("in_memory", pages + 1), ("on_disk", Settings().limits.pages_in_memory)):
                settings = Settings.load(overrides={"limits": {"pages_in_memory": keep}})
                seconds, outputs[mode] = stages(source, settings)
                mine = best.setdefault(mode, seconds)
                for k, v in seconds.items():
                    mine[k] = min(mine[k], v)
    return {
        "pages": pages,
        "seconds": best,
        "slowdown": {k: best["on_disk"][k] / best["in_memory"][k] for k in best["in_memory"]},
        "identical_outputs": outputs["in_memory"] == outputs["on_disk"],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    out = run(args.pages, args.repeat)
    if args.json:
        C.dump(out, args.json)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
