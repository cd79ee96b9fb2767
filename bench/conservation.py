"""Conservation of text on the shared corpus: where every text-layer character of each PDF went.

For every input PDF of the corpus (MANIFEST.json, tune and check splits reported apart), the
pipeline's own stages run (``pipeline.parse``, no OCR engine: a scan's pages have no text to
account) and ``conservation.account_text`` accounts each non-whitespace character of each page's
lines to a paragraph, heading, table cell, furniture line (page number, header, footer) or lost.
``unsourced`` is text in the outputs that no line accounts for (a table cell holding a whole row
twice, a marker added). The encrypted file cannot be parsed and is listed as skipped.

    .venv/bin/python bench/conservation.py [CORPUS_DIR] [--json OUT.json]

Prints a Markdown table per split and the totals (the figures in BENCHMARKS.md).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import _common  # noqa: F401  # puts the repository on sys.path

from dagster_ocr.conservation import DocumentAccount, account_text
from dagster_ocr.ingest import DocumentStore
from dagster_ocr.pipeline import parse


def corpus_inputs(corpus: Path) -> list[dict[str, Any]]:
    manifest = json.loads((corpus / "MANIFEST.json").read_text())
    return [f for f in manifest["files"] if f["role"] == "input" and f["file"].endswith(".pdf")]


def measure(corpus: Path) -> dict[str, dict[str, Any]]:
    """Per corpus file: split, chars by destination, unsourced, seconds; or the parse error."""
    out: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        store = DocumentStore(Path(tmp) / "store")
        for entry in corpus_inputs(corpus):
            src, _ = store.register(corpus / entry["file"])
            parsed = parse(src)
            if not parsed.document.ok:
                out[entry["file"]] = {"split": entry["split"], "skipped": parsed.document.error}
                continue
            start = time.perf_counter()
            accounts = account_text(parsed.document.pages, parsed.paragraphs, parsed.tables)
            seconds = time.perf_counter() - start
            total = DocumentAccount.of(accounts)
            out[entry["file"]] = {
                "split": entry["split"],
                "pages": len(accounts),
                "chars": total.chars,
                **total.counts,
                "unsourced": total.unsourced,
                "seconds": round(seconds, 4),
                "lost_text": " | ".join(a.lost_text for a in accounts if a.lost_text)[:160],
            }
    return out


def _share(n: int, d: int) -> str:
    return f"{n / d:.4f}" if d else "-"


def report(results: dict[str, dict[str, Any]]) -> str:
    lines: list[str] = []
    for split in ("tune", "check"):
        rows = {k: v for k, v in results.items() if v["split"] == split and "skipped" not in v}
        skipped = [k for k, v in results.items() if v["split"] == split and "skipped" in v]
        tot = {k: sum(r[k] for r in rows.values()) for k in ("chars", "table", "lost", "unsourced")}
        tot["furniture"] = sum(r["page_number"] + r["header"] + r["footer"] for r in rows.values())
        lossy = {k: v for k, v in rows.items() if v["lost"]}
        lines += [
            f"### {split}: {len(rows)} PDFs, {tot['chars']:,} characters"
            + (f" ({len(skipped)} skipped: {', '.join(skipped)})" if skipped else ""),
            "",
            f"furniture {_share(tot['furniture'], tot['chars'])}, "
            f"tables {_share(tot['table'], tot['chars'])}, "
            f"lost {tot['lost']:,} ({_share(tot['lost'], tot['chars'])}) "
            f"in {len(lossy)} of {len(rows)} PDFs, unsourced {tot['unsourced']:,}",
            "",
            "| file | chars | furniture | tables | lost | unsourced | lost text (sample) |",
            "|---|---|---|---|---|---|---|",
        ]
        for name, r in sorted(rows.items(), key=lambda kv: (-kv[1]["lost"], -kv[1]["unsourced"], kv[0])):
            if not r["lost"] and not r["unsourced"]:
                continue
            furniture = r["page_number"] + r["header"] + r["footer"]
            sample = r["lost_text"].replace("|", "\\|")[:70]
            lines.append(
                f"| {name} | {r['chars']:,} | {_share(furniture, r['chars'])} "
                f"| {_share(r['table'], r['chars'])} | {r['lost']:,} | {r['unsourced']:,} | {sample} |"
            )
        clean = [k for k, v in rows.items() if not v["lost"] and not v["unsourced"]]
        lines += ["", f"The other {len(clean)} {split} PDFs: 0 lost, 0 unsourced.", ""]
    seconds = sum(v.get("seconds", 0.0) for v in results.values())
    lines.append(f"Accounting time, all PDFs: {seconds:.2f} s")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", nargs="?", help="corpus folder (default: ../shared/corpus)")
    parser.add_argument("--json", help="write the per-file figures here")
    args = parser.parse_args(argv)
    corpus = Path(args.corpus) if args.corpus else _common.find_corpus()
    if corpus is None:
        print("corpus not found: pass its folder or set DAGSTER_OCR_CORPUS", file=sys.stderr)
        return 2
    results = measure(corpus)
    print(report(results))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
