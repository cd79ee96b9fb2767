"""CPU OCR: rapidocr (the default engine, through ``ocr_page``) side by side with Tesseract.

Pages, each OCR'd by every engine configuration in the same run, on the same rendered pixels:
- ``ocr/tesseract/*.tif`` against their ``.txt`` ground truth (native resolution);
- ``ocr/docling/ocr_test.pdf`` (image-only) against docling's ground truth;
- ``olmocr_bench/pdfs/lincoln_letter.pdf`` (a scan): olmOCR-bench "present" checks, scored by the
  fuzzy-substring error of each check's text in the output (pass at <= 0.1);
- born-digital pages (docling and ICDAR-2013 PDFs) rendered at 150 and 200 dpi, against their own
  text layer in the PDF's content-stream order (the order the authoring tool wrote: column by
  column); ordered CER also counts reading-order differences, the word-bag error does not.
  (``get_text(sort=True)`` is no reference: it interleaves two columns row by row.)
Time per page is wall-clock and CPU seconds from ``resource.getrusage`` (all threads: RUSAGE_SELF
for rapidocr, RUSAGE_CHILDREN for the Tesseract process), since a shared machine's wall clock
depends on what else runs; the engines run interleaved, page by page.
For rapidocr the CER of the same recognised lines in the previous XY-cut reading order
(``old_order_cer``) is reported too.

    .venv/bin/python bench/ocr_cpu.py [--variants] [--int8] [--det-full] [--runtimes] [--json out.json]
        [--only NAME,NAME]

Needs the ``tesseract`` binary (``apt-get install -y tesseract-ocr tesseract-ocr-eng``); without it
only rapidocr runs.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pymupdf

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(1, str(ROOT / "tests"))  # tests/support: the text metrics
sys.path.insert(2, str(ROOT / "bench"))  # _common, long_scan: the generated scan

from support.text_metrics import cer, normalize_whitespace, substring_cer  # noqa: E402

from dagster_ocr.ocr.base import ocr_page  # noqa: E402
from dagster_ocr.ocr.rapid import RapidOcrEngine  # noqa: E402
from dagster_ocr.ocr.render import _capped_zoom, _pixmap_to_array, _scan_zoom  # noqa: E402
from dagster_ocr.ocr.settings import OcrSettings, RapidOcrSettings  # noqa: E402

CORPUS = Path(os.environ.get("DAGSTER_OCR_CORPUS", ROOT.parent / "shared" / "corpus"))
BORN_DIGITAL = [
    ("docling/2305.03393v1-pg9/2305.03393v1-pg9.pdf", 0),
    ("docling/amt_handbook_sample/amt_handbook_sample.pdf", 0),
    ("docling/multi_page/multi_page.pdf", 0),
    ("tables/icdar2013/eu-003/eu-003.pdf", 0),
    ("tables/icdar2013/us-003/us-003.pdf", 0),
    ("tables/icdar2013/us-012/us-012.pdf", 0),
]


@dataclass
class Item:
    """One page to OCR and how to score it."""

    name: str
    group: str
    path: Path
    page: int
    dpi: int | None  # None: the default (OcrSettings.dpi for a PDF page, an image's own resolution)
    reference: str = ""
    checks: list[str] = field(default_factory=list)
    split: str = ""  # MANIFEST.json's "tune" / "check" ("generated" for pages made by the bench)


def _splits() -> dict[str, str]:
    manifest = json.loads((CORPUS / "MANIFEST.json").read_text())
    return {e["file"]: e.get("split", "") for e in manifest["files"] if e.get("role") == "input"}


def generated_items(n: int = 2) -> list[Item]:
    """Pages of the long-scan bench's 200-dpi JPEG scan (bench/long_scan.py); reference: the
    generated source page's text."""
    import _common as C
    import long_scan

    pdf = long_scan.scan(12, 0)  # no blank pages: the generated report's first 12 pages
    with pymupdf.open(C.generated(min(12, C.POOL_PAGES))) as src:
        refs = [src[k].get_text() for k in range(n)]
    return [
        Item(f"generated-200dpi-p{k}", "generated scan", pdf, k, None, refs[k], split="generated")
        for k in range(n)
    ]


def items() -> list[Item]:
    out = _items()
    splits = _splits()
    for item in out:
        if not item.split and item.path.is_relative_to(CORPUS):
            item.split = splits.get(str(item.path.relative_to(CORPUS)), "")
    return out + generated_items()


def _items() -> list[Item]:
    out: list[Item] = []
    for tif in sorted((CORPUS / "ocr" / "tesseract").glob("*.tif")):
        out.append(Item(tif.stem, "scan", tif, 0, None, tif.with_suffix(".txt").read_text("utf-8")))
    gt = CORPUS / "ocr" / "docling" / "groundtruth" / "ocr_test.tesseract.full_page.md"
    out.append(
        Item("ocr_test.pdf", "scan", CORPUS / "ocr" / "docling" / "ocr_test.pdf", 0, None, gt.read_text())
    )
    checks = [
        json.loads(line)["text"]
        for line in (CORPUS / "olmocr_bench" / "dataset_dev.jsonl").read_text().splitlines()
        if line.strip()
        and json.loads(line)["pdf"] == "lincoln_letter.pdf"
        and json.loads(line)["type"] == "present"
    ]
    lincoln = CORPUS / "olmocr_bench" / "pdfs" / "lincoln_letter.pdf"
    out.append(Item("lincoln_letter.pdf", "olmocr", lincoln, 0, None, checks=checks))
    for rel, page in BORN_DIGITAL:
        path = CORPUS / rel
        with pymupdf.open(path) as doc:
            pg = doc[page]
            ref = pg.get_text()
        for dpi in (150, 200):
            out.append(Item(f"{path.stem}@{dpi}", f"born-digital {dpi} dpi", path, page, dpi, ref))
    return out


def render(item: Item) -> tuple[np.ndarray, pymupdf.Document]:
    """The pixels ``ocr_page`` renders for this item (same zoom rules), and the open document."""
    doc = pymupdf.open(item.path)
    page = doc[item.page]
    s = OcrSettings()
    native = _scan_zoom(page)
    zoom = (item.dpi or s.dpi) / 72.0 if item.dpi or doc.is_pdf else (native or 200 / 72.0)
    if native is not None and native < zoom:
        zoom = native
    zoom = _capped_zoom(page.rect.width, page.rect.height, zoom, s.max_image_pixels)
    pix = page.get_pixmap(matrix=pymupdf.Matrix(zoom, zoom), colorspace=pymupdf.csRGB, alpha=False)
    return _pixmap_to_array(pix), doc


def word_bag_error(ref: str, hyp: str) -> float:
    """1 - (reference words found in the output, as a multiset) / reference words: order-free."""
    r = collections.Counter(normalize_whitespace(ref).split())
    h = collections.Counter(normalize_whitespace(hyp).split())
    total = sum(r.values())
    return 1.0 - sum((r & h).values()) / total if total else 0.0


def _cpu_self() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _gaps(intervals: list[tuple[float, float]]) -> list[tuple[float, float]]:
    out: list[tuple[float, float]] = []
    ivs = sorted(intervals)
    end = ivs[0][1]
    for a, b in ivs[1:]:
        if a > end:
            out.append((a - end, (a + end) / 2))
        end = max(end, b)
    return out


def _xy_cut(items: list, line_h: float, out: list) -> None:
    if len(items) <= 1:
        out.extend(items)
        return
    ys = [
        (ln.bbox[1] + 0.2 * (ln.bbox[3] - ln.bbox[1]), ln.bbox[3] - 0.2 * (ln.bbox[3] - ln.bbox[1]))
        for ln in items
    ]
    y_gaps = _gaps(ys)
    x_gaps = [g for g in _gaps([(ln.bbox[0], ln.bbox[2]) for ln in items]) if g[0] >= 0.8 * line_h]
    best_y, best_x = max(y_gaps, default=None), max(x_gaps, default=None)
    if best_y is None and best_x is None:
        out.extend(sorted(items, key=lambda ln: ((ln.bbox[1] + ln.bbox[3]) / 2, ln.bbox[0])))
        return
    if best_x is not None and (best_y is None or best_x[0] > best_y[0]):
        first = [ln for ln in items if (ln.bbox[0] + ln.bbox[2]) / 2 < best_x[1]]
    else:
        first = [ln for ln in items if (ln.bbox[1] + ln.bbox[3]) / 2 < best_y[1]]
    ids = {id(ln) for ln in first}
    rest = [ln for ln in items if id(ln) not in ids]
    if not first or not rest:
        out.extend(sorted(items, key=lambda ln: (ln.bbox[1], ln.bbox[0])))
        return
    _xy_cut(first, line_h, out)
    _xy_cut(rest, line_h, out)


def old_xy_cut_text(lines: list) -> str:
    """The page's lines in the reading order used before issue 6's rework (recursive XY-cut)."""
    if not lines:
        return ""
    heights = sorted(ln.bbox[3] - ln.bbox[1] for ln in lines)
    out: list = []
    _xy_cut(list(lines), heights[len(heights) // 2], out)
    return "\n".join(ln.text for ln in out)


def run_rapid(engine: RapidOcrEngine, item: Item) -> tuple[str, float, float, str]:
    doc = pymupdf.open(item.path)
    page = doc[item.page]
    c0, t0 = _cpu_self(), time.perf_counter()
    result = ocr_page(engine, page, item.page, dpi=item.dpi, settings=OcrSettings())
    wall, cpu = time.perf_counter() - t0, _cpu_self() - c0
    doc.close()
    return result.text, wall, cpu, old_xy_cut_text(result.lines)


def run_tesseract(image: np.ndarray, tmp: Path) -> tuple[str, float, float, str]:
    png = tmp / "page.png"
    pymupdf.Pixmap(pymupdf.csRGB, image.shape[1], image.shape[0], image.tobytes(), False).save(png)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    # one OpenMP thread, as rapidocr runs one intra-op thread: with two, Tesseract's OpenMP
    # workers spin while they wait, and on a loaded machine that counted 2-3x its CPU seconds
    # (8087_054.3B: 14.1 CPU s vs 4.6 single-threaded) for no gain in wall time
    env = {**os.environ, "OMP_THREAD_LIMIT": os.environ.get("OMP_THREAD_LIMIT", "1")}
    out = subprocess.run(
        ["tesseract", str(png), "-", "-l", "eng"], capture_output=True, text=True, check=True, env=env
    ).stdout
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return out, wall, cpu, ""


def score(item: Item, text: str) -> dict:
    if item.checks:
        errs = [substring_cer(c, text) for c in item.checks]
        return {
            "cer": float(np.mean(errs)),
            "checks_passed": sum(e <= 0.1 for e in errs),
            "checks": len(errs),
        }
    return {"cer": cer(item.reference, text), "bag": word_bag_error(item.reference, text)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--variants", action="store_true", help="also time rapidocr speed settings")
    ap.add_argument(
        "--int8", action="store_true", help="also rapidocr float, int8 det, int8 det and rec (session 10)"
    )
    ap.add_argument(
        "--det-full",
        action="store_true",
        help="also rapidocr with its detector at its own size (det_text_height 0, before session 11)",
    )
    ap.add_argument(
        "--runtimes",
        action="store_true",
        help="also rapidocr on onnxruntime (the runtime before session 12) and on OpenVINO in f32 throughout",
    )
    ap.add_argument("--json", type=Path, help="write per-page results here")
    ap.add_argument("--only", help="comma-separated substrings of item names to run")
    args = ap.parse_args()

    configs: dict[str, RapidOcrSettings] = {"rapidocr": RapidOcrSettings()}
    if args.variants:
        configs["rapidocr with classifier"] = RapidOcrSettings(use_angle_classifier=True)
        configs["rapidocr all-cores"] = RapidOcrSettings(num_threads=0)
        configs["rapidocr all-cores spinning"] = RapidOcrSettings(num_threads=0, onnx_spinning=True)
        configs["rapidocr det-max-960"] = RapidOcrSettings(det_limit_type="max", det_limit_side_len=960)
    if args.int8:
        configs["rapidocr float"] = RapidOcrSettings(int8_models="none")  # the default before session 10
        configs["rapidocr int8-det"] = RapidOcrSettings(int8_models="det")
        configs["rapidocr int8"] = RapidOcrSettings(int8_models="det_rec")
    if args.det_full:
        configs["rapidocr det-full"] = RapidOcrSettings(det_text_height=0.0)
    if args.runtimes:
        configs["rapidocr onnxruntime"] = RapidOcrSettings(runtime="onnxruntime")
        configs["rapidocr openvino f32"] = RapidOcrSettings(openvino_bf16="none")
    engines = {}
    for name, s in configs.items():
        t0 = time.perf_counter()
        engines[name] = RapidOcrEngine(s)
        engines[name].load()
        print(f"{name}: loaded in {time.perf_counter() - t0:.1f}s", file=sys.stderr)
    has_tess = shutil.which("tesseract") is not None
    rows = []
    with tempfile.TemporaryDirectory() as tmpdir:
        for item in items():
            if args.only and not any(part in item.name for part in args.only.split(",")):
                continue
            image, doc = render(item)
            doc.close()
            runs = {name: run_rapid(eng, item) for name, eng in engines.items()}
            if has_tess:
                runs["tesseract"] = run_tesseract(image, Path(tmpdir))
            for engine, (text, wall, cpu, old_text) in runs.items():
                row = {"item": item.name, "group": item.group, "split": item.split, "engine": engine}
                row.update(wall_s=wall, cpu_s=cpu)
                row["pixels"] = f"{image.shape[1]}x{image.shape[0]}"
                row.update(score(item, text))
                if old_text:
                    row["old_order_cer"] = score(item, old_text)["cer"]
                rows.append(row)
                extra = f" checks {row['checks_passed']}/{row['checks']}" if "checks" in row else ""
                bag = f" bag={row['bag']:.3f}" if "bag" in row else ""
                old = f" (old order {row['old_order_cer']:.3f})" if "old_order_cer" in row else ""
                print(
                    f"{item.name:32s} {engine:22s} cer={row['cer']:.3f}{old}{bag}{extra} "
                    f"wall={wall:.2f}s cpu={cpu:.2f}s {row['pixels']}",
                    file=sys.stderr,
                )

    print("\n| group | engine | pages | mean CER | word-bag err | s/page wall | CPU s/page |")
    print("|---|---|---|---|---|---|---|")
    groups = list(dict.fromkeys(r["group"] for r in rows)) + ["all"]
    groups += [f"split {s}" for s in dict.fromkeys(r["split"] for r in rows) if s]

    def in_group(r: dict, group: str) -> bool:
        return group == "all" or r["group"] == group or group == f"split {r['split']}"

    for group in groups:
        for engine in list(engines) + (["tesseract"] if has_tess else []):
            sel = [r for r in rows if r["engine"] == engine and in_group(r, group)]
            if not sel:
                continue
            bags = [r["bag"] for r in sel if "bag" in r]
            bag = f"{np.mean(bags):.3f}" if bags else "–"
            checks = [r for r in sel if "checks" in r]
            if checks:
                bag = f"checks {sum(r['checks_passed'] for r in checks)}/{sum(r['checks'] for r in checks)}"
            print(
                f"| {group} | {engine} | {len(sel)} | {np.mean([r['cer'] for r in sel]):.3f} | {bag} "
                f"| {np.mean([r['wall_s'] for r in sel]):.2f} | {np.mean([r['cpu_s'] for r in sel]):.2f} |"
            )
    if has_tess:
        print(
            "\n| page | split | pixels | rapidocr CER (old order) / bag | Tesseract CER / bag "
            "| rapidocr CPU s | Tesseract CPU s | CPU ratio |"
        )
        print("|---|---|---|---|---|---|---|---|")
        by = {(r["item"], r["engine"]): r for r in rows}
        tot = {"rapidocr": 0.0, "tesseract": 0.0}
        for name in dict.fromkeys(r["item"] for r in rows):
            a, t = by.get((name, "rapidocr")), by.get((name, "tesseract"))
            if not a or not t:
                continue
            tot["rapidocr"] += a["cpu_s"]
            tot["tesseract"] += t["cpu_s"]
            bag_a = f"{a['bag']:.3f}" if "bag" in a else f"checks {a['checks_passed']}/{a['checks']}"
            bag_t = f"{t['bag']:.3f}" if "bag" in t else f"checks {t['checks_passed']}/{t['checks']}"
            old = a.get("old_order_cer", float("nan"))
            ratio = a["cpu_s"] / t["cpu_s"]
            print(
                f"| {name} | {a['split']} | {a['pixels']} | {a['cer']:.3f} ({old:.3f}) / {bag_a} "
                f"| {t['cer']:.3f} / {bag_t} "
                f"| {a['cpu_s']:.2f} | {t['cpu_s']:.2f} | {ratio:.2f} |"
            )
        if tot["tesseract"]:
            print(
                f"\ntotal CPU s: rapidocr {tot['rapidocr']:.1f}, tesseract {tot['tesseract']:.1f}, "
                f"ratio {tot['rapidocr'] / tot['tesseract']:.2f}"
            )
    print(f"\nmachine: {platform.platform()}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
