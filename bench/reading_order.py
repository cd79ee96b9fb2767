"""Reading order and conservation of text: our document sequence against references and peers.

The text measured for ``ours`` is the ``document_blocks`` sequence (headings, paragraphs, tables as
Markdown, in the view's order), computed in process from the core stages exactly as the warehouse
builds it (``pipeline.parse`` → ``blocks.place_tables`` → the view's sort key). Peers run on the
same files in the same process: PyMuPDF ``page.get_text()`` and ``get_text(sort=True)``, and
pdfplumber ``page.extract_text()``.

References:

* ``docling/*``: docling's ground-truth Markdown, stripped of its syntax (headings' ``#``, list
  markers, table pipes and separator rows, emphasis, escapes, image comments);
* ``ocr/*`` with ``--ocr`` (rapidocr; slow on 2 cores): the transcripts of the scans;
* ``olmocr_bench/dataset_dev*.jsonl``: the olmOCR-bench checks ``present``, ``absent``, ``order`` and
  ``table`` (a cell and its neighbours in a Markdown table of the page; plain-text peers have
  none, so they fail these, as they do in olmOCR-bench). ``math`` checks are not scored (they need
  LaTeX, which no method here produces).

Edit similarity = 1 - Levenshtein(ref, hyp) / max(len(ref), len(hyp)) over characters, both texts
in one normal form (NFKC, quotes and dashes folded, bullets dropped, whitespace collapsed to one
space). It is order-sensitive: a page read across its columns scores low although every word is
there. Every input is reported under its MANIFEST.json split, tune and check apart.

    .venv/bin/python bench/reading_order.py [--ocr] [--json OUT.json] [--only ours]
"""

from __future__ import annotations

import argparse
import html
import json
import re
import sys
import time
import unicodedata
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import _common as C
import pymupdf
from support.text_metrics import levenshtein

from dagster_ocr import blocks
from dagster_ocr.blocks import place_tables, table_markdown, table_text
from dagster_ocr.model import Table
from dagster_ocr.ocr.settings import RapidOcrSettings
from dagster_ocr.pipeline import parse

_FOLD = str.maketrans(
    {
        "—": "-",
        "–": "-",
        "‐": "-",
        "‑": "-",
        "−": "-",
        "’": "'",
        "‘": "'",
        "“": '"',
        "”": '"',
        "\u00a0": " ",
        "•": " ",
        "·": " ",
        "▪": " ",
        "●": " ",
        "\uf0b7": " ",
    }
)
_MD_TABLE_SEP = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")

#: one page's blocks: (page index, text) in reading order; tables as Markdown
Sequence_ = list[tuple[int, str]]
Method = Callable[[Path], tuple[Sequence_, int]]


# ------------------------------------------------------------------------------------ methods


def block_sequence(out: Any, markdown: bool = True) -> Sequence_:
    """The document_blocks order (sql/views.sql) of a parsed document, as (page, text): the
    product's own ``blocks.block_sequence``, a table as Markdown (``markdown``) or as the plain
    text of its ``paragraphs`` row."""
    paras = out.paragraphs.paragraphs
    placed = place_tables(paras, out.tables, set(out.paragraphs.read_as_text or ()))
    seq = []
    for b in blocks.block_sequence(paras, out.tables, placed):
        if isinstance(b, Table):
            grid = b.grid()
            # as the warehouse holds it (warehouse_rows): the headings printed above the grid with it
            heads = getattr(b, "heads", ())
            text = (
                "\n".join(table_markdown(grid, b.header_rows, b.column_headers))
                if markdown
                else table_text(grid, heads)
                if heads
                else table_text(grid)  # (a revision from before Table.heads, in bench/revisions.py)
            )
            seq.append((b.first_page_index, text))
        else:
            seq.append((b.page_index, b.text))
    return seq


def ours(path: Path, engine: Any = None) -> tuple[Sequence_, int]:
    out = parse(C.source_of(path), engine=engine)
    return block_sequence(out), out.document.n_pages


def pymupdf_plain(path: Path) -> tuple[Sequence_, int]:
    with pymupdf.open(path) as doc:
        return [(p.number, p.get_text()) for p in doc], doc.page_count


def pymupdf_sort(path: Path) -> tuple[Sequence_, int]:
    with pymupdf.open(path) as doc:
        return [(p.number, p.get_text(sort=True)) for p in doc], doc.page_count


def pdfplumber_text(path: Path) -> tuple[Sequence_, int]:
    import pdfplumber

    with pdfplumber.open(path) as pdf:
        return [(i, p.extract_text() or "") for i, p in enumerate(pdf.pages)], len(pdf.pages)


PEERS: dict[str, Method] = {
    "pymupdf": pymupdf_plain,
    "pymupdf_sort": pymupdf_sort,
    "pdfplumber": pdfplumber_text,
}


# ------------------------------------------------------------------------------------ text forms


def strip_markdown(md: str) -> str:
    """Markdown (docling's, or our tables') as plain text: syntax gone, cells separated by spaces."""
    out: list[str] = []
    for line in md.splitlines():
        s = line.strip()
        if not s or s.startswith("<!--") or _MD_TABLE_SEP.match(s):
            continue
        if s.startswith("|"):
            s = " ".join(c.strip() for c in s.strip("|").split("|"))
        s = re.sub(r"^#{1,6}\s+", "", s)
        s = re.sub(r"^[-*+]\s+", "", s)
        s = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", s)
        s = s.replace("**", "").replace("\\", "")
        out.append(html.unescape(s))
    return "\n".join(out)


def norm(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).translate(_FOLD)
    text = "".join(c for c in text if unicodedata.category(c)[0] != "C" or c in "\n\t")
    return re.sub(r"\s+", " ", text).strip()


def sequence_text(seq: Sequence_, page: int | None = None) -> str:
    return "\n\n".join(t for i, t in seq if page is None or i == page)


def edit_similarity(ref: str, hyp: str) -> float:
    a, b = norm(ref), norm(hyp)
    if not a and not b:
        return 1.0
    return 1.0 - levenshtein(a, b) / max(len(a), len(b))


# ------------------------------------------------------------------------------------ olmOCR checks


def _olm(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).translate(_FOLD).replace("**", "").replace("\\", "")
    return re.sub(r"\s+", " ", text).strip()


def fuzzy_span(pattern: str, text: str, max_diffs: int) -> int:
    """Start of the first approximate occurrence of ``pattern`` in ``text`` (Sellers), or -1."""
    if not pattern:
        return 0
    if max_diffs == 0:
        return text.find(pattern)
    rp, rt = pattern[::-1], text[::-1]
    m = len(rp)
    col = list(range(m + 1))
    best = -1
    for j, c in enumerate(rt):
        prev_diag, col[0] = col[0], 0
        for i in range(1, m + 1):
            cur = min(col[i] + 1, col[i - 1] + 1, prev_diag + (rp[i - 1] != c))
            prev_diag, col[i] = col[i], cur
        if col[m] <= max_diffs:
            best = j + 1  # keep going: the last hit on the reversed text is the first forward
    return len(text) - best if best >= 0 else -1


def _md_tables(text: str) -> list[list[list[str]]]:
    tables: list[list[list[str]]] = []
    cur: list[list[str]] = []
    for line in text.splitlines() + [""]:
        s = line.strip()
        if s.startswith("|"):
            if not _MD_TABLE_SEP.match(s):
                cur.append([_olm(c) for c in s.strip().strip("|").split("|")])
        elif cur:
            tables.append(cur)
            cur = []
    return tables


def table_check(check: dict, text: str) -> bool:
    """olmOCR-bench's table test on the page's Markdown tables: the cell, and each neighbour given."""
    want = _olm(check["cell"])
    for grid in _md_tables(text):
        for r, row in enumerate(grid):
            for c, cell in enumerate(row):
                if cell != want:
                    continue

                def at(rr: int, cc: int, grid: list[list[str]] = grid) -> str | None:
                    if 0 <= rr < len(grid) and 0 <= cc < len(grid[rr]):
                        return grid[rr][cc]
                    return None

                ok = True
                for key, (dr, dc) in {
                    "up": (-1, 0),
                    "down": (1, 0),
                    "left": (0, -1),
                    "right": (0, 1),
                }.items():
                    if key in check and at(r + dr, c + dc) != _olm(check[key]):
                        ok = False
                if "top_heading" in check:
                    heads = [grid[rr][c] for rr in range(r) if c < len(grid[rr]) and grid[rr][c]]
                    ok &= _olm(check["top_heading"]) in heads
                if "left_heading" in check:
                    ok &= bool(row) and row[0] == _olm(check["left_heading"])
                if ok:
                    return True
    return False


def olm_check(check: dict, page_text: str) -> bool:
    diffs = int(check.get("max_diffs", 0))
    if check["type"] == "table":
        return table_check(check, page_text)
    text = _olm(page_text)
    first, last = check.get("first_n"), check.get("last_n")
    if first or last:  # olmOCR-bench: only the page's first and/or last n characters are searched
        text = (text[: int(first)] if first else "") + (text[-int(last) :] if last else "")
    if check["type"] == "present":
        return fuzzy_span(_olm(check["text"]), text, diffs) >= 0
    if check["type"] == "absent":
        return fuzzy_span(_olm(check["text"]), text, diffs) < 0
    if check["type"] == "order":
        before = fuzzy_span(_olm(check["before"]), text, diffs)
        after = fuzzy_span(_olm(check["after"]), text, diffs)
        return before >= 0 and after >= 0 and before < after
    raise ValueError(check["type"])


# ------------------------------------------------------------------------------------ main


def run(corpus: Path, methods: dict[str, Method], with_ocr: bool) -> dict[str, Any]:
    result: dict[str, Any] = {
        "docs": {},
        "checks": {},
        "seconds": defaultdict(float),
        "pages": defaultdict(int),
    }
    refs: list[tuple[str, Path, str]] = []
    for d in sorted((corpus / "docling").iterdir()):
        pdf, md = next(d.glob("*.pdf"), None), next((d / "groundtruth").glob("*.md"), None)
        if pdf and md:
            refs.append((f"docling/{d.name}", pdf, strip_markdown(md.read_text(encoding="utf-8"))))
    if with_ocr:
        ocr_dir = corpus / "ocr"
        for img in sorted((ocr_dir / "tesseract").glob("*")):
            if img.suffix in (".tif", ".png") and img.with_suffix(".txt").is_file():
                refs.append((f"ocr/{img.name}", img, img.with_suffix(".txt").read_text(encoding="utf-8")))
        md = ocr_dir / "docling/groundtruth/ocr_test.tesseract.full_page.md"
        if md.is_file():
            refs.append(
                ("ocr/ocr_test.pdf", ocr_dir / "docling/ocr_test.pdf", strip_markdown(md.read_text()))
            )
    engine = None
    if with_ocr:
        from dagster_ocr.ocr.rapid import RapidOcrEngine

        engine = RapidOcrEngine(settings=RapidOcrSettings())
    for name, path, ref in refs:
        row: dict[str, Any] = {"split": C.split_of(path, corpus)}
        for m, fn in methods.items():
            if path.suffix != ".pdf" and m != "ours":
                continue
            t = time.perf_counter()
            seq, pages = ours(path, engine) if m == "ours" else fn(path)
            result["seconds"][m] += time.perf_counter() - t
            result["pages"][m] += pages
            row[m] = edit_similarity(ref, strip_markdown(sequence_text(seq)))
        result["docs"][name] = row
    checks = []
    for jf in sorted((corpus / "olmocr_bench").glob("dataset_dev*.jsonl")):
        checks += [json.loads(ln) for ln in jf.read_text().splitlines() if ln.strip()]
    cache: dict[tuple[str, str], Sequence_] = {}
    for c in checks:
        if c["type"] == "math":
            continue
        pdf = corpus / "olmocr_bench/pdfs" / c["pdf"]
        row = {"split": C.split_of(pdf, corpus), "type": c["type"], "pdf": c["pdf"]}
        for m, fn in methods.items():
            if (m, c["pdf"]) not in cache:
                t = time.perf_counter()
                cache[(m, c["pdf"])] = (ours(pdf, engine) if m == "ours" else fn(pdf))[0]
                result["seconds"][m] += time.perf_counter() - t
            page_text = sequence_text(cache[(m, c["pdf"])], c["page"] - 1)
            row[m] = olm_check(c, page_text)
        result["checks"][c["id"]] = row
    return result


def report(result: dict[str, Any], methods: list[str]) -> None:
    print("Edit similarity to the references (1 = identical)")
    print(f"{'document':44} {'split':6} " + " ".join(f"{m:>12}" for m in methods))
    for name, row in result["docs"].items():
        vals = " ".join(f"{row[m]:12.3f}" if m in row else f"{'-':>12}" for m in methods)
        print(f"{name:44} {row['split']:6} {vals}")
    for split in ("tune", "check"):
        rows = [r for r in result["docs"].values() if r["split"] == split]
        for group in ("docling", "ocr"):
            sel = [r for n, r in result["docs"].items() if r["split"] == split and n.startswith(group)]
            if not sel:
                continue
            vals = []
            for m in methods:
                xs = [r[m] for r in sel if m in r]
                vals.append(f"{sum(xs) / len(xs):12.3f}" if xs else f"{'-':>12}")
            print(f"{'mean ' + group:44} {split:6} " + " ".join(vals))
        del rows
    print()
    print("olmOCR-bench checks (math not scored)")
    for cid, row in result["checks"].items():
        verdicts = " ".join(f"{('pass' if row[m] else 'FAIL'):>12}" for m in methods)
        print(f"  {cid:40} {row['split']:6} {row['type']:8} {verdicts}")
    for split in ("tune", "check", None):
        sel = [r for r in result["checks"].values() if split is None or r["split"] == split]
        if not sel:
            continue
        parts = []
        for m in methods:
            ok = sum(r[m] for r in sel)
            parts.append(f"{m} {ok}/{len(sel)} = {ok / len(sel):.3f}")
        print(f"{split or 'all':6} " + "; ".join(parts))
    print()
    for m in methods:
        s, p = result["seconds"][m], result["pages"][m]
        print(f"{m:14} {s:7.2f} s" + (f" over the reference documents ({p} pages)" if p else ""))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=None)
    ap.add_argument("--ocr", action="store_true", help="also the scans against their transcripts (rapidocr)")
    ap.add_argument("--only", nargs="*", help="methods to run (default: ours and every peer)")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    C.quiet_logs()
    corpus = args.corpus or C.find_corpus()
    if corpus is None:
        sys.exit("no corpus found (set DAGSTER_OCR_CORPUS)")
    methods: dict[str, Method] = {"ours": ours, **PEERS}
    if args.only:
        methods = {m: f for m, f in methods.items() if m in args.only}
    result = run(corpus, methods, args.ocr)
    report(result, list(methods))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1, default=float))


if __name__ == "__main__":
    main()
