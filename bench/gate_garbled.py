"""Which corpus PDFs the quality gate's garbled-text expectations would hold back, and by how much.

    .venv/bin/python bench/gate_garbled.py [--corpus ../shared/corpus]

Every corpus PDF through the product's ``pipeline.parse`` (no OCR engine); per document with a flagged
paragraph: the share of paragraphs flagged for anything, for decoding damage only (mojibake, U+FFFD, empty:
``flagged_paragraph_share``), and the share of characters that are unmapped glyphs (``garbled_char_share``),
the last two beside their default thresholds.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

import _common  # noqa: F401  # puts the repository on sys.path

from dagster_ocr.ingest import DocumentStore
from dagster_ocr.pipeline import parse
from dagster_ocr.quality_settings import QualitySettings
from dagster_ocr.validation import GLYPH_FLAGS, glyph_chars


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=_common.REPO.parent / "shared" / "corpus")
    args = ap.parse_args()
    q = QualitySettings()
    manifest = json.loads((args.corpus / "MANIFEST.json").read_text())
    files = [f for f in manifest["files"] if f["role"] == "input" and f["file"].endswith(".pdf")]
    held = {"paragraphs (any flag)": 0, "decoding damage": 0, "garbled characters": 0}
    print("| split | file | paragraphs | any flag | decoding damage | unmapped-glyph characters |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        store = DocumentStore(Path(tmp) / "store")
        for entry in files:
            src, _ = store.register(args.corpus / entry["file"])
            parsed = parse(src)
            if not parsed.document.ok:
                continue
            paras = parsed.paragraphs.paragraphs
            flagged = [p for p in paras if p.flags]
            if not paras or not flagged:
                continue
            damage = sum(1 for p in paras if any(f not in GLYPH_FLAGS for f in p.flags)) / len(paras)
            visible = sum(len("".join(p.text.split())) for p in paras) or 1
            glyphs = sum(glyph_chars(p.text) for p in flagged) / visible
            any_share = len(flagged) / len(paras)
            held["paragraphs (any flag)"] += any_share > q.max_flagged_paragraph_share
            held["decoding damage"] += damage > q.max_flagged_paragraph_share
            held["garbled characters"] += glyphs > q.max_garbled_char_share
            cells = [
                entry["split"],
                entry["file"],
                len(paras),
                f"{any_share:.3f}",
                f"{damage:.3f}",
                f"{glyphs:.4f}",
            ]
            print("| " + " | ".join(map(str, cells)) + " |", flush=True)
    limits = f"{q.max_flagged_paragraph_share} of paragraphs, {q.max_garbled_char_share} of characters"
    print(f"\nheld back (threshold {limits}): {held}")


if __name__ == "__main__":
    main()
