"""Blank backs are not damage (issue 40): what the quality gate holds back, and why.

Every document goes through the product's own path (``DocumentStore.register`` → ``parse`` →
``Warehouse.write_document`` → ``gate.judge_document``, default settings) and is reported with its
status, its blocking failures, and its pages' ``blank_reason`` counts (where the schema has them):

- ``corpus``: every input of the shared corpus (MANIFEST.json), without OCR (OCR'ing its scans
  costs minutes here and changes no page's damage evidence); "held for blank pages" counts the
  documents held back by an emptiness check (``blank_page_share`` or ``text_page_share``) although
  they have text;
- ``cuts``: damaged copies of the corpus PDFs of at most ``--cut-max-pages`` pages, bytes cut out of
  their middle as a truncated download or a bad sector leaves them (three cuts each, the ones the
  tests use among them); "flagged" is failed or quarantined;
- ``hostile``: every case of tests/hardening/hostile.py and ``--mutations`` mutated PDFs;
- ``scans`` (``--ocr``): generated image-only scans, pages of real corpus PDFs rendered to images,
  OCR'd with rapidocr: duplex scans 60% blank (empty pages and white or grainy paper, with and
  without "this page intentionally left blank"), every other page blank, and all pages blank;
  with ``--long 120,200`` also the issue's long scan (120 text pages among 200 blank ones).

``--json OUT`` writes every document's row, so two runs (this code and an earlier tree, e.g.
``git archive`` into a folder and run its copy of this script) can be compared document by
document; ``--compare OLD.json`` prints the status changes against such a run.

    .venv/bin/python bench/blank_pages.py [--ocr] [--long 120,200] [--mutations 200] [--json OUT]
                                          [--compare OLD] [--only corpus|cuts|hostile|scans]
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import _common as C
import pymupdf

from dagster_ocr.gate import judge_document
from dagster_ocr.ingest import DocumentStore
from dagster_ocr.ocr.settings import RapidOcrSettings
from dagster_ocr.pipeline import parse
from dagster_ocr.quality import QualitySettings
from dagster_ocr.warehouse import Warehouse

#: the (keep head, resume at) byte fractions each cut copy is made with
CUTS = ((0.2, 0.8), (0.3, 0.6), (0.5, 0.9))
#: expectations that judge emptiness (old: the blank share; new: the share of text pages)
EMPTINESS = {"blank_page_share", "text_page_share"}
#: real text pages rendered into the generated scans (the corpus's 5-page docling document)
SCAN_SOURCE = "docling/multi_page/multi_page.pdf"
SCAN_DPI = 72  # low: OCR is ~1 s a page on this machine


class Run:
    """One warehouse and store in a scratch folder; ``judge`` parses and judges one file."""

    def __init__(self, folder: Path, engine: Any = None):
        self.store = DocumentStore(folder / "store")
        self.wh = Warehouse(folder / "w.duckdb")
        self.engine = engine
        self.settings = QualitySettings()

    def judge(self, path: Path, group: str, name: str) -> dict[str, Any]:
        t = time.perf_counter()
        try:
            src, _ = self.store.register(path)
        except Exception as exc:  # noqa: BLE001 - a file the store refuses is a failed file
            return {"group": group, "name": name, "status": "failed", "error": f"register: {exc}"[:200]}
        out = parse(src, engine=self.engine)
        self.wh.write_document(out.document, out.labels, out.tables, out.paragraphs)
        decision = judge_document(self.wh, src.doc_id, out.document.status, out.document.error, self.settings)
        pages = self.wh.query("SELECT * FROM pages WHERE doc_id = ?", [src.doc_id])
        reasons = (
            collections.Counter(str(r) for r in pages["blank_reason"] if isinstance(r, str))
            if "blank_reason" in pages.columns
            else {}
        )
        blocking = sorted(f"{r.suite}.{r.expectation}" for r in decision.results if r.blocking)
        return {
            "group": group,
            "name": name,
            "pages": int(out.document.n_pages),
            "status": str(decision.status),
            "repaired": bool(getattr(out.document, "repaired", False)),
            "damaged_pages": len(getattr(out.document, "damaged_pages", None) or {}),
            "empty_pages": int((pages["content"] == "blank").sum()) if "content" in pages.columns else 0,
            "blank_reasons": dict(reasons),
            "blocking": blocking,
            "error": (decision.error or "")[:300],
            "seconds": round(time.perf_counter() - t, 2),
        }


def corpus_inputs(corpus: Path) -> list[str]:
    manifest = json.loads((corpus / "MANIFEST.json").read_text())
    return sorted(f["file"] for f in manifest["files"] if f.get("role") == "input")


def run_corpus(run: Run, corpus: Path) -> list[dict[str, Any]]:
    return [run.judge(corpus / rel, "corpus", rel) for rel in corpus_inputs(corpus)]


def run_cuts(run: Run, corpus: Path, scratch: Path, max_pages: int) -> list[dict[str, Any]]:
    rows = []
    for rel in corpus_inputs(corpus):
        if not rel.endswith(".pdf"):
            continue
        with pymupdf.open(corpus / rel) as doc:
            if doc.page_count > max_pages:
                continue
        data = (corpus / rel).read_bytes()
        for keep, resume in CUTS:
            dst = scratch / f"{Path(rel).stem}-cut-{keep}-{resume}.pdf"
            dst.write_bytes(data[: int(len(data) * keep)] + data[int(len(data) * resume) :])
            rows.append(run.judge(dst, "cuts", f"{rel} cut {keep}-{resume}"))
    return rows


def run_hostile(run: Run, scratch: Path, mutations: int) -> list[dict[str, Any]]:
    sys.path.insert(0, str(C.REPO / "tests" / "hardening"))
    import hostile

    rows = []
    for i, case in enumerate(hostile.cases(mutations=mutations, seed=0)):
        dst = scratch / f"hostile-{i:04d}{Path(case.name).suffix or '.pdf'}"
        dst.write_bytes(case.data)
        row = run.judge(dst, "hostile", case.name)
        row["expect"] = case.expect
        rows.append(row)
    return rows


def _rendered(corpus: Path, dpi: int) -> list[pymupdf.Pixmap]:
    with pymupdf.open(corpus / SCAN_SOURCE) as doc:
        return [page.get_pixmap(dpi=dpi, colorspace=pymupdf.csGRAY) for page in doc]


def scan_pdf(items: list[Any], dpi: int = SCAN_DPI) -> bytes:
    """Image-only pages (see ``support.scans.duplex_scan_pdf``)."""
    from support.scans import duplex_scan_pdf

    return duplex_scan_pdf(items, dpi)


def _interleave(text: list[Any], backs: list[Any]) -> list[Any]:
    """text[0], backs[0], text[1], backs[1], ... (the text pages left over at the end)."""
    out: list[Any] = []
    for i, page in enumerate(text):
        out += [page] + ([backs[i]] if i < len(backs) else [])
    return out


def scan_documents(corpus: Path) -> dict[str, list[Any]]:
    """The generated scans: name -> page items (see ``scan_pdf``)."""
    text = _rendered(corpus, SCAN_DPI)[:4]  # 4 text pages
    paper = [None, "white", "noisy", None, "white", "noisy"]
    notices = [None, "notice", "noisy", "notice", "white", "notice"]
    return {
        # 4 text pages, 6 blank (60%): a back after each of the first three, a blank tail of three
        "duplex 60% blank, empty pages": [*_interleave(text, [None] * 3), *[None] * 3],
        "duplex 60% blank, paper scans": [*_interleave(text, paper[:3]), *paper[3:]],
        "duplex 60% blank, left-blank notices": [*_interleave(text, notices[:3]), *notices[3:]],
        "every other page blank": [p for t in text for p in (t, None)],
        "only blank pages": [None, "white", "noisy", None],
        "only left-blank notices": ["notice", "notice"],
    }


def long_duplex(corpus: Path, n_text: int, n_blank: int) -> list[Any]:
    """The issue's scan: ``n_text`` text pages (the corpus's docling pages rendered, in turn) among
    ``n_blank`` blank ones (empty pages and blank paper in turn), backs after the text pages first."""
    text = _rendered(corpus, SCAN_DPI)
    kinds = [None, "white", "noisy"]
    items: list[Any] = []
    for i in range(n_text):
        items.append(text[i % len(text)])
        if i < n_blank:
            items.append(kinds[i % 3])
    items += [kinds[i % 3] for i in range(max(0, n_blank - n_text))]
    return items


def run_scans(run: Run, corpus: Path, scratch: Path, long: tuple[int, int] | None) -> list[dict[str, Any]]:
    rows = []
    documents = scan_documents(corpus)
    if long:
        documents[f"duplex {long[0]} text + {long[1]} blank pages"] = long_duplex(corpus, *long)
    for i, (name, items) in enumerate(documents.items()):
        dst = scratch / f"scan-{i}.pdf"
        dst.write_bytes(scan_pdf(items))
        rows.append(run.judge(dst, "scans", name))
    return rows


def held_for_blank_pages(row: dict[str, Any]) -> bool:
    """Held back by an emptiness check while the document has text (a parse that found any)."""
    names = {b.split(".", 1)[1] for b in row.get("blocking", [])}
    return row["status"] == "quarantined" and bool(names & EMPTINESS) and "text_extracted" not in names


def summary(rows: list[dict[str, Any]]) -> None:
    by_group: dict[str, list[dict[str, Any]]] = collections.defaultdict(list)
    for r in rows:
        by_group[r["group"]].append(r)
    for group, items in by_group.items():
        status = collections.Counter(r["status"] for r in items)
        reasons: collections.Counter[str] = collections.Counter()
        for r in items:
            reasons.update(r.get("blank_reasons") or {})
        held = [r["name"] for r in items if held_for_blank_pages(r)]
        print(
            f"{group}: {len(items)} documents, {sum(r.get('pages', 0) for r in items)} pages; "
            + ", ".join(f"{k} {v}" for k, v in sorted(status.items()))
            + f"; repaired {sum(r.get('repaired', False) for r in items)}"
            + f"; blank pages by reason {dict(reasons) or '-'}; held for blank pages {len(held)}"
            + f"; {sum(r.get('seconds', 0) for r in items):.0f} s"
        )
        for name in held:
            print(f"    held for blank pages: {name}")
        if group in ("cuts", "hostile"):
            parsed_repaired = [r for r in items if r["status"] == "parsed" and r.get("repaired")]
            print(f"    parsed although repaired: {len(parsed_repaired)} (no damage found on any page)")
            for r in parsed_repaired:
                print(f"      {r['name']}: {r['pages']} pages, blank {r.get('blank_reasons') or '-'}")
        if group == "scans":
            for r in items:
                blank = r.get("blank_reasons") or "-"
                print(f"    {r['name']}: {r['status']}; blank {blank}; {r['error'][:160]}")


def compare(rows: list[dict[str, Any]], old_path: Path) -> None:
    old = {(r["group"], r["name"]): r for r in json.loads(old_path.read_text())}
    changed = [(old[(r["group"], r["name"])], r) for r in rows if (r["group"], r["name"]) in old]
    diffs = [(a, b) for a, b in changed if a["status"] != b["status"]]
    print(f"against {old_path.name}: {len(changed)} documents in both, {len(diffs)} status changes")
    for a, b in diffs:
        print(f"    {b['group']} {b['name']}: {a['status']} -> {b['status']} ({a['error'][:120]})")
    newly_passed = [b for a, b in diffs if a["status"] != "parsed" and b["status"] == "parsed"]
    flagged = [b for b in (x for _, x in changed) if b["group"] in ("cuts", "hostile")]
    print(
        f"    damaged/hostile files flagged before and parsed now: {len(newly_passed)} "
        f"(of {sum(old[(b['group'], b['name'])]['status'] != 'parsed' for b in flagged)} flagged before)"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ocr", action="store_true", help="also the generated scans, OCR'd with rapidocr")
    ap.add_argument("--only", choices=("corpus", "cuts", "hostile", "scans"), action="append")
    ap.add_argument("--mutations", type=int, default=200, help="mutated PDFs after the hostile cases")
    ap.add_argument("--cut-max-pages", type=int, default=30)
    ap.add_argument(
        "--long", default=None, help="TEXT,BLANK: also the issue's long duplex scan (e.g. 120,200)"
    )
    ap.add_argument("--json", type=Path, help="write every document's row here")
    ap.add_argument("--compare", type=Path, help="an earlier run's --json: status changes")
    args = ap.parse_args()
    corpus = C.find_corpus()
    if corpus is None:
        sys.exit("no corpus (set DAGSTER_OCR_CORPUS)")
    parts = args.only or ["corpus", "cuts", "hostile"] + (["scans"] if args.ocr else [])
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="blank-pages-") as tmp:
        scratch = Path(tmp)
        run = Run(scratch / "plain")
        if "corpus" in parts:
            rows += run_corpus(run, corpus)
        if "cuts" in parts:
            rows += run_cuts(run, corpus, scratch, args.cut_max_pages)
        if "hostile" in parts:
            rows += run_hostile(run, scratch, args.mutations)
        if "scans" in parts:
            from dagster_ocr.ocr.rapid import RapidOcrEngine

            long = tuple(int(x) for x in args.long.split(",")) if args.long else None
            rows += run_scans(
                Run(scratch / "ocr", RapidOcrEngine(settings=RapidOcrSettings())), corpus, scratch, long
            )
    summary(rows)
    if args.compare:
        compare(rows, args.compare)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
