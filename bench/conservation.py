"""Conservation of text on the shared corpus: where every text-layer character of each PDF went.

For every input PDF of the corpus (MANIFEST.json, tune and check splits reported apart), the
pipeline's own stages run (``pipeline.parse``, no OCR engine: a scan's pages have no text to
account) and ``conservation.account_text`` accounts each non-whitespace character of each page's
lines to a paragraph, heading, table cell, furniture line (page number, header, footer) or lost.
``unsourced`` is text in the outputs that no line accounts for (a table cell holding a whole row
twice, a marker added). The encrypted file cannot be parsed and is listed as skipped.

    .venv/bin/python bench/conservation.py [CORPUS_DIR] [--json OUT.json] [--compare BEFORE.json]
        [--forms N]

Prints a Markdown table per split and the totals (the figures in BENCHMARKS.md), and per split
the documents whose furniture would take most of their text or a whole page's words.
``--compare`` lists the files whose furniture changed against an earlier ``--json``. ``--forms``
also generates N short documents whose pages share their lines (tests/support/short_forms.py:
contracts, forms, form letters, notices, slips) and counts those furniture wrongs (issue 35) and
those left without any body text (which the quality gate quarantines: text_extracted).
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
from dagster_ocr.paragraphs import ParagraphSettings
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
            words = {
                p.index: any(any(c.isalpha() for c in ln.text) for ln in p.lines)
                for p in parsed.document.pages
            }
            out[entry["file"]] = {
                "bodiless_pages": sum(
                    1 for a in accounts if a.chars and a.furniture == a.chars and words[a.page_index]
                ),
                "split": entry["split"],
                "pages": len(accounts),
                "chars": total.chars,
                **total.counts,
                "unsourced": total.unsourced,
                "seconds": round(seconds, 4),
                "lost_text": " | ".join(a.lost_text for a in accounts if a.lost_text)[:160],
            }
    return out


def _furniture(r: dict[str, Any]) -> int:
    return r["page_number"] + r["header"] + r["footer"]


def compare(before: dict[str, dict[str, Any]], after: dict[str, dict[str, Any]]) -> str:
    """The files whose furniture characters changed between two ``--json`` runs, by split."""
    lines = []
    for split in ("tune", "check"):
        names = sorted(k for k, v in after.items() if v["split"] == split and "skipped" not in v)
        changed = [k for k in names if k in before and "skipped" not in before[k]]
        changed = [k for k in changed if _furniture(before[k]) != _furniture(after[k])]
        lines.append(f"### furniture changed, {split}: {len(changed)} of {len(names)} PDFs")
        lines += [
            f"- {k}: {_furniture(before[k]):,} -> {_furniture(after[k]):,} furniture characters, "
            f"paragraphs {before[k]['paragraph']:,} -> {after[k]['paragraph']:,}"
            for k in changed
        ]
        lines.append("")
    return "\n".join(lines)


def forms(n: int) -> str:
    """Generated short documents whose pages share their lines: furniture wrongs and bodiless ones."""
    from collections import Counter

    from support.short_forms import CLASSES, body_problems, make_form

    wrong: Counter[str] = Counter()
    empty: Counter[str] = Counter()
    with tempfile.TemporaryDirectory() as tmp:
        store = DocumentStore(Path(tmp) / "store")
        for seed in range(n):
            case = make_form(seed)
            path = Path(tmp) / f"form-{seed}.pdf"
            case.doc.save(path)
            src, _ = store.register(path)
            parsed = parse(src)
            pages, paragraphs, tables = parsed.document.pages, parsed.paragraphs, parsed.tables
            wrong[case.cls] += bool(body_problems(pages, paragraphs, tables))
            empty[case.cls] += not any(p.text.strip() for p in paragraphs.paragraphs) and not any(
                c.text.strip() for t in tables for c in t.cells
            )
    per = ", ".join(f"{c} {wrong[c]}/{empty[c]}" for c in CLASSES)
    return (
        f"### generated short forms: {n} documents\n\n"
        f"a page's words or most of the text taken for furniture: {sum(wrong.values())}; "
        f"no body text at all (quarantined, text_extracted): {sum(empty.values())} "
        f"(per class, wrong/no body: {per})\n"
    )


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
            furniture = _furniture(r)
            sample = r["lost_text"].replace("|", "\\|")[:70]
            lines.append(
                f"| {name} | {r['chars']:,} | {_share(furniture, r['chars'])} "
                f"| {_share(r['table'], r['chars'])} | {r['lost']:,} | {r['unsourced']:,} | {sample} |"
            )
        clean = [k for k, v in rows.items() if not v["lost"] and not v["unsourced"]]
        lines += ["", f"The other {len(clean)} {split} PDFs: 0 lost, 0 unsourced.", ""]
        most = ParagraphSettings().furniture_max_share
        taken = sorted(k for k, r in rows.items() if _furniture(r) > most * r["chars"])
        bodiless = sorted(k for k, r in rows.items() if r.get("bodiless_pages"))
        lines += [
            f"Furniture on most of the text (> {most:.2f}): {len(taken)} {split} PDFs"
            + (f" ({', '.join(taken)})" if taken else "")
            + f"; a page's words all furniture: {len(bodiless)} {split} PDFs"
            + (f" ({', '.join(bodiless)})" if bodiless else ""),
            "",
        ]
    seconds = sum(v.get("seconds", 0.0) for v in results.values())
    lines.append(f"Accounting time, all PDFs: {seconds:.2f} s")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", nargs="?", help="corpus folder (default: ../shared/corpus)")
    parser.add_argument("--json", help="write the per-file figures here")
    parser.add_argument("--compare", help="an earlier --json: list the files whose furniture changed")
    parser.add_argument("--forms", type=int, default=0, help="also measure N generated short forms")
    args = parser.parse_args(argv)
    corpus = Path(args.corpus) if args.corpus else _common.find_corpus()
    if corpus is None:
        print("corpus not found: pass its folder or set DAGSTER_OCR_CORPUS", file=sys.stderr)
        return 2
    results = measure(corpus)
    print(report(results))
    if args.compare:
        print(compare(json.loads(Path(args.compare).read_text()), results))
    if args.forms:
        print(forms(args.forms))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
