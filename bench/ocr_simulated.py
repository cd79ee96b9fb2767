"""Simulated scans (issue 37): born-digital corpus pages printed, scanned badly, and read back.

Each page is a born-digital corpus page with a sound text layer, cut out as a one-page PDF. Its
**truth** is the product's own text of that one-page PDF (``pipeline.parse`` on the text layer,
the ``document_blocks`` sequence with table Markdown stripped), not ``get_text()``: the scan goes
through the same later stages (reading order of columns, tables, running headers and footers), so
what differs is what the scan and its OCR lose, not the order conventions of a content stream
(``get_text`` reads an ICDAR table cell by cell and a two-column page in whatever order the
generator wrote it). It is read afresh on every run: the page list is cached, and a truth cached
with it went stale when the text-layer reading changed (check us-007 p0 was scored against a
reading across its two columns the product no longer gives). ``--truth get_text`` scores against
``page.get_text()`` instead.

The page is rendered to grayscale pixels and degraded as a scanner, fax or phone would, one
seeded class at a time:

* ``clean150`` / ``clean200``: rendered at 150 / 200 dpi, lossless;
* ``jpeg``: 200 dpi, off-white paper with grain (sigma 6-14), JPEG at quality 15-40;
* ``noise_blur``: 150-200 dpi, blur (sigma 0.8-1.4), grain (sigma 10-20) and specks, lossless;
* ``skew``: 200 dpi, turned 0.5-4 degrees either way, light grain, JPEG quality 75;
* ``skew_layout``: ``skew`` on two-column pages and pages with tables;
* ``lowdpi``: 100 dpi, lossless;
* ``noisy_jpeg``: what a cheap colour scan of a worn page saved small looks like: 150-200 dpi,
  faint toner (ink at 90-140) on grey, tinted paper (185-215), blur (sigma 0.6-1.2), grain
  (sigma 4-10), salt-and-pepper specks on 0.2-1.5% of the pixels (dust, toner spatter), then a
  colour JPEG at quality 10-25 with 4:2:0 chroma subsampling. The ``jpeg`` class above (black
  ink on near-white paper) read as well as clean pages and did not reproduce the unseen documents'
  noisy JPEG pages (CER 0.34-0.40); this one does.

The image becomes an image-only PDF page (the JPEG's own bytes where the class is JPEG) and is
parsed by ``pipeline.parse`` with the default settings and CPU engine, exactly as a user's scan.
The baseline is rapidocr alone (``rapidocr.RapidOCR()`` with its defaults, one thread) on the
same pixels, its lines joined in its own order.

Metrics per page: CER (Levenshtein over the reference length, both sides in one normal form:
NFKC, quotes and dashes folded, whitespace collapsed) and word F1 (bag of whitespace-separated
words with their outer punctuation stripped, case kept). Per class and split: the mean of both,
and the product's CPU seconds per page (this process, the parse only). Pages per class per split
come from MANIFEST.json's split, chosen by a seeded draw among pages of 600+ characters
(text pages: no table found by the product; layout pages: two columns or a table).

    PYTHONPATH=. .venv/bin/python bench/ocr_simulated.py [--pages 3] [--classes jpeg,skew]
        [--split tune] [--no-baseline] [--json OUT] [--worst 5] [--dump DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import _common as C
import cv2
import numpy as np
import pymupdf
import reading_order as RO
from support.text_metrics import levenshtein

from dagster_ocr.ocr import get_engine
from dagster_ocr.pipeline import parse
from dagster_ocr.settings import Settings

CLASSES = ("clean150", "clean200", "jpeg", "noise_blur", "skew", "skew_layout", "lowdpi", "noisy_jpeg")
CACHE = C.DEFAULT_CACHE / "ocr_simulated"
#: bump when page selection changes, so the cached candidate list is rebuilt
SELECTION_VERSION = 2
MIN_CHARS = 600
MAX_PAGES_PER_DOC = 3


# ------------------------------------------------------------------------------------ metrics


def normal(text: str) -> str:
    return RO.norm(RO.strip_markdown(text))


def cer(ref: str, hyp: str) -> float:
    r, h = normal(ref), normal(hyp)
    if not r:
        return 0.0 if not h else 1.0
    return levenshtein(r, h) / len(r)


_PUNCT = re.compile(r"^[^\w]+|[^\w]+$")


def words(text: str) -> list[str]:
    out = []
    for w in normal(text).split():
        w = _PUNCT.sub("", w)
        if w:
            out.append(w)
    return out


def word_f1(ref: str, hyp: str) -> float:
    from collections import Counter

    r, h = Counter(words(ref)), Counter(words(hyp))
    if not r and not h:
        return 1.0
    hit = sum((r & h).values())
    if not hit:
        return 0.0
    p, q = hit / sum(h.values()), hit / sum(r.values())
    return 2 * p * q / (p + q)


# ------------------------------------------------------------------------------------ pages


def product_text(pdf: Path, engine: Any = None) -> tuple[str, Any]:
    out = parse(C.source_of(pdf), engine=engine)
    return RO.sequence_text(RO.block_sequence(out, markdown=False)), out


def _two_columns(out: Any, width: float) -> bool:
    """Running text on both sides of the page's middle, in narrow paragraphs."""
    left = right = 0
    for p in out.paragraphs.paragraphs:
        x0, _, x1, _ = p.bbox
        if len(p.text) < 80 or x1 - x0 > 0.55 * width:
            continue
        if x1 <= width * 0.55:
            left += len(p.text)
        elif x0 >= width * 0.45:
            right += len(p.text)
    return min(left, right) >= 400


def candidates(corpus: Path) -> list[dict[str, Any]]:
    """Every usable born-digital page as a one-page PDF, with its split, truth and kind (cached)."""
    CACHE.mkdir(parents=True, exist_ok=True)
    index = CACHE / f"pages-v{SELECTION_VERSION}.json"
    if index.is_file():
        return json.loads(index.read_text())
    manifest = json.loads((corpus / "MANIFEST.json").read_text())
    out = []
    for entry in manifest["files"]:
        rel = entry["file"]
        if (
            entry.get("role") != "input"
            or not rel.endswith(".pdf")
            or entry.get("split") not in ("tune", "check")
        ):
            continue
        try:
            doc = pymupdf.open(corpus / rel)
        except Exception:  # noqa: BLE001
            continue
        if doc.needs_pass or doc.page_count > 30:
            continue
        taken = 0
        for pno in range(doc.page_count):
            page = doc[pno]
            if taken >= MAX_PAGES_PER_DOC:
                break
            if len(page.get_text().strip()) < MIN_CHARS or page.get_images() or page.rotation:
                continue  # figures and scans inside: the truth would lack what the scan shows
            one = pymupdf.open()
            one.insert_pdf(doc, from_page=pno, to_page=pno)
            # by path: two corpus folders hold a us-007.pdf each
            name = f"{rel[:-4].replace('/', '_')}-p{pno}"
            pdf = CACHE / f"{name}.pdf"
            one.save(pdf)
            text, parsed = product_text(pdf)
            if len(normal(text)) < MIN_CHARS or parsed.document.ocr_pages:
                continue
            kinds = []
            if parsed.tables:
                kinds.append("table")
            if _two_columns(parsed, page.rect.width):
                kinds.append("columns")
            out.append(
                {
                    "name": name,
                    "file": rel,
                    "page": pno,
                    "split": entry["split"],
                    "pdf": str(pdf),
                    "truth": text,
                    "get_text": page.get_text(),
                    "kinds": kinds,
                }
            )
            taken += 1
    index.write_text(json.dumps(out))
    return out


def choose(pages: list[dict[str, Any]], split: str, n: int, layout: bool, seed: int = 37) -> list[dict]:
    """``n`` pages of ``split``: text pages (no table, one column) or layout pages (half two-column,
    half with a table), each from a different document where there are enough."""
    rng = random.Random(f"{seed}-{split}-{layout}")
    pool = [p for p in pages if p["split"] == split]
    if layout:
        cols = [p for p in pool if "columns" in p["kinds"]]
        tabs = [p for p in pool if "table" in p["kinds"] and "columns" not in p["kinds"]]
        rng.shuffle(cols)
        rng.shuffle(tabs)
        picked = _distinct(cols, (n + 1) // 2) + _distinct(tabs, n // 2)
        rest = [p for p in cols + tabs if p not in picked]
        return picked + _distinct(rest, n - len(picked))
    text = [p for p in pool if not p["kinds"]]
    rng.shuffle(text)
    return _distinct(text, n)


def _distinct(pool: list[dict], n: int) -> list[dict]:
    out, files = [], set()
    for p in pool:
        if len(out) < n and p["file"] not in files:
            out.append(p)
            files.add(p["file"])
    for p in pool:  # fewer documents than pages wanted: allow a second page of one
        if len(out) < n and p not in out:
            out.append(p)
    return out


# ------------------------------------------------------------------------------------ degradation


def render(pdf: str, dpi: int) -> np.ndarray:
    with pymupdf.open(pdf) as doc:
        pix = doc[0].get_pixmap(dpi=dpi, colorspace=pymupdf.csGRAY, alpha=False)
        return np.frombuffer(pix.samples, dtype=np.uint8).reshape(pix.height, pix.width).copy()


def _grain(img: np.ndarray, rng: np.random.Generator, paper: float, sigma: float) -> np.ndarray:
    """Ink on off-white ``paper`` with gaussian grain of ``sigma`` levels."""
    arr = img.astype(np.float32) * (paper / 255.0)
    arr += rng.normal(0.0, sigma, arr.shape).astype(np.float32)
    return np.clip(arr, 0, 255).astype(np.uint8)


def _turn(img: np.ndarray, degrees: float, fill: int) -> np.ndarray:
    h, w = img.shape
    m = cv2.getRotationMatrix2D((w / 2, h / 2), degrees, 1.0)
    return cv2.warpAffine(img, m, (w, h), flags=cv2.INTER_LINEAR, borderValue=fill)


def _worn_colour_scan(
    gray: np.ndarray, rng: np.random.Generator, r: random.Random
) -> tuple[np.ndarray, dict]:
    """``gray`` printed with faint toner on tinted grey paper, blurred, grainy and specked, as BGR."""
    ink, paper = r.uniform(90, 140), r.uniform(185, 215)
    blur, sigma, salt = r.uniform(0.6, 1.2), r.uniform(4, 10), r.uniform(0.002, 0.015)
    tint = (1.0, r.uniform(0.95, 1.0), r.uniform(0.85, 0.97))  # R, G, B: a yellowed sheet
    arr = ink + (paper - ink) * (gray.astype(np.float32) / 255.0)
    arr = cv2.GaussianBlur(arr, (0, 0), blur)
    bgr = np.stack([arr * tint[2], arr * tint[1], arr * tint[0]], axis=-1)
    bgr += rng.normal(0.0, sigma, bgr.shape).astype(np.float32)
    specks = rng.random(gray.shape)
    bgr[specks < salt / 2] = 20.0
    bgr[specks > 1 - salt / 2] = 255.0
    params = {"ink": round(ink), "paper": round(paper), "blur": round(blur, 2), "salt": round(salt, 4)}
    return np.clip(bgr, 0, 255).astype(np.uint8), params


def degrade(pdf: str, cls: str, seed: int) -> tuple[bytes, np.ndarray, int, dict[str, Any]]:
    """The scanned image of one page in ``cls``: (encoded bytes, pixels as decoded, dpi, parameters)."""
    rng = np.random.default_rng(seed)
    r = random.Random(seed)
    params: dict[str, Any] = {}
    quality = None
    if cls in ("clean150", "clean200", "lowdpi"):
        dpi = {"clean150": 150, "clean200": 200, "lowdpi": 100}[cls]
        img = render(pdf, dpi)
    elif cls == "jpeg":
        dpi = 200
        paper, sigma, quality = r.uniform(225, 250), r.uniform(6, 14), r.randint(15, 40)
        img = _grain(render(pdf, dpi), rng, paper, sigma)
        params = {"paper": round(paper), "grain": round(sigma, 1), "quality": quality}
    elif cls == "noise_blur":
        dpi = r.choice((150, 200))
        blur, sigma = r.uniform(0.8, 1.4), r.uniform(10, 20)
        img = cv2.GaussianBlur(render(pdf, dpi), (0, 0), blur)
        img = _grain(img, rng, 245, sigma)
        img[rng.random(img.shape) < 0.0005] = 0
        params = {"blur": round(blur, 2), "grain": round(sigma, 1)}
    elif cls in ("skew", "skew_layout"):
        dpi, quality = 200, 75
        angle = r.uniform(0.5, 4.0) * r.choice((-1, 1))
        img = _grain(_turn(render(pdf, dpi), angle, 255), rng, 245, 4.0)
        params = {"angle": round(angle, 2)}
    elif cls == "noisy_jpeg":
        dpi, quality = r.choice((150, 200)), r.randint(10, 25)
        img, params = _worn_colour_scan(render(pdf, dpi), rng, r)
        params["quality"] = quality
    else:
        raise ValueError(cls)
    params["dpi"] = dpi
    if quality is None:
        ok, buf = cv2.imencode(".png", img)
    elif img.ndim == 3:
        jpeg = [cv2.IMWRITE_JPEG_QUALITY, quality]
        jpeg += [cv2.IMWRITE_JPEG_SAMPLING_FACTOR, cv2.IMWRITE_JPEG_SAMPLING_FACTOR_420]
        ok, buf = cv2.imencode(".jpg", img, jpeg)
    else:
        ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, quality])
    assert ok
    data = buf.tobytes()
    shown = cv2.imdecode(buf, cv2.IMREAD_GRAYSCALE)
    return data, shown, dpi, params


def scan_pdf(image: bytes, like: str, out: Path) -> Path:
    """An image-only one-page PDF of the born-digital page's size showing ``image``."""
    with pymupdf.open(like) as src:
        rect = src[0].rect
    doc = pymupdf.open()
    page = doc.new_page(width=rect.width, height=rect.height)
    page.insert_image(page.rect, stream=image)
    doc.save(out)
    return out


# ------------------------------------------------------------------------------------ runs


@dataclass
class Result:
    split: str
    cls: str
    page: str
    params: dict[str, Any]
    cer: float
    f1: float
    cpu_s: float
    base_cer: float | None = None
    base_f1: float | None = None
    base_cpu_s: float | None = None
    text: str = field(default="", repr=False)
    base_text: str = field(default="", repr=False)


_BARE: Any = None


def bare_rapidocr(gray: np.ndarray) -> str:
    global _BARE
    if _BARE is None:
        from rapidocr import RapidOCR

        _BARE = RapidOCR(
            params={
                "Global.log_level": "error",
                "EngineConfig.onnxruntime.intra_op_num_threads": 1,
                "EngineConfig.onnxruntime.inter_op_num_threads": 1,
            }
        )
    res = _BARE(cv2.cvtColor(gray, cv2.COLOR_GRAY2BGR))
    return "\n".join(res.txts or ())


def run(args: argparse.Namespace) -> list[Result]:
    corpus = C.find_corpus()
    if corpus is None:
        sys.exit("no corpus")
    pages = candidates(corpus)
    settings = Settings()
    engine = get_engine(settings.ocr)
    engine.load()
    results: list[Result] = []
    work = Path(tempfile.mkdtemp(prefix="ocr-sim-"))
    classes = args.classes.split(",") if args.classes else list(CLASSES)
    truths: dict[str, str] = {}
    for split in args.split.split(","):
        chosen = {
            False: choose(pages, split, args.pages, layout=False),
            True: choose(pages, split, args.pages, layout=True),
        }
        for cls in classes:
            for page in chosen[cls == "skew_layout"]:
                if args.only and args.only not in page["name"]:
                    continue
                seed = int(hashlib.sha256(f"{cls}-{page['name']}".encode()).hexdigest()[:8], 16)
                data, shown, dpi, params = degrade(page["pdf"], cls, seed)
                pdf = scan_pdf(data, page["pdf"], work / f"{cls}-{page['name']}.pdf")
                if args.dump:
                    Path(args.dump).mkdir(parents=True, exist_ok=True)
                    cv2.imwrite(str(Path(args.dump) / f"{split}-{cls}-{page['name']}.png"), shown)
                if args.truth == "get_text":
                    truth = page["get_text"]
                else:  # the product's reading now: the cached one is as old as the cache
                    if page["name"] not in truths:
                        truths[page["name"]] = product_text(Path(page["pdf"]))[0]
                    truth = truths[page["name"]]
                c0 = time.process_time()
                text, _ = product_text(pdf, engine)
                cpu = time.process_time() - c0
                res = Result(
                    split, cls, page["name"], params, cer(truth, text), word_f1(truth, text), cpu, text=text
                )
                if not args.no_baseline:
                    c0 = time.process_time()
                    base = bare_rapidocr(shown)
                    res.base_cpu_s = time.process_time() - c0
                    res.base_cer, res.base_f1, res.base_text = cer(truth, base), word_f1(truth, base), base
                results.append(res)
                b = f"  rapidocr {res.base_cer:.3f} / {res.base_f1:.3f}" if res.base_cer is not None else ""
                print(
                    f"{split:5} {cls:11} {page['name'][-34:]:34} CER {res.cer:.3f} F1 {res.f1:.3f} "
                    f"{cpu:5.1f} CPU s{b}  {params}",
                    file=sys.stderr,
                    flush=True,
                )
    return results


def summary(results: list[Result]) -> dict[str, dict[str, dict[str, float]]]:
    groups: dict[tuple[str, str], list[Result]] = defaultdict(list)
    for r in results:
        groups[(r.split, r.cls)].append(r)
        groups[(r.split, "all")].append(r)
    out: dict[str, dict[str, dict[str, float]]] = defaultdict(dict)
    for (split, cls), rs in groups.items():
        row = {
            "n": len(rs),
            "cer": statistics.fmean(r.cer for r in rs),
            "f1": statistics.fmean(r.f1 for r in rs),
            "cpu_s": statistics.fmean(r.cpu_s for r in rs),
        }
        if all(r.base_cer is not None for r in rs):
            row["base_cer"] = statistics.fmean(r.base_cer for r in rs)  # type: ignore[misc]
            row["base_f1"] = statistics.fmean(r.base_f1 for r in rs)  # type: ignore[misc]
            row["base_cpu_s"] = statistics.fmean(r.base_cpu_s for r in rs)  # type: ignore[misc]
        out[split][cls] = row
    return out


def table(summ: dict[str, dict[str, dict[str, float]]]) -> str:
    splits = [s for s in ("tune", "check") if s in summ]
    classes = [c for c in (*CLASSES, "all") if any(c in summ[s] for s in splits)]
    head = "| class | " + " | ".join(
        f"{s} CER | {s} word F1 | {s} rapidocr CER / F1 | {s} CPU s" for s in splits
    )
    lines = [head + " |", "|---|" + "---|" * (4 * len(splits))]
    for c in classes:
        cells = []
        for s in splits:
            row = summ[s].get(c)
            if row is None:
                cells += ["", "", "", ""]
                continue
            base = f"{row['base_cer']:.3f} / {row['base_f1']:.3f}" if "base_cer" in row else "-"
            cells += [f"{row['cer']:.3f}", f"{row['f1']:.3f}", base, f"{row['cpu_s']:.1f}"]
        lines.append(f"| {c} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pages", type=int, default=3, help="pages per class and split")
    ap.add_argument("--classes", default="", help=f"comma-separated subset of {','.join(CLASSES)}")
    ap.add_argument("--split", default="tune,check")
    ap.add_argument("--only", default="", help="pages whose name contains this")
    ap.add_argument("--truth", choices=("product", "get_text"), default="product")
    ap.add_argument("--no-baseline", action="store_true", help="skip rapidocr alone")
    ap.add_argument("--json", help="write every page's result and the summary here")
    ap.add_argument("--worst", type=int, default=0, help="print the N worst pages' texts")
    ap.add_argument("--dump", help="write each degraded image here (PNG)")
    args = ap.parse_args()
    C.quiet_logs()
    results = run(args)
    summ = summary(results)
    print(table(summ))
    if args.worst:
        for r in sorted(results, key=lambda r: -r.cer)[: args.worst]:
            print(f"\n### {r.split} {r.cls} {r.page} CER {r.cer:.3f} {r.params}\n{normal(r.text)[:1500]}")
    if args.json:
        rows = [{k: v for k, v in asdict(r).items() if k not in ("text", "base_text")} for r in results]
        C.dump({"summary": summ, "pages": rows, "args": vars(args)}, Path(args.json))


if __name__ == "__main__":
    main()
