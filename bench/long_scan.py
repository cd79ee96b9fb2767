"""Long scans (issue 22): a generated scanned document through the Dagster graph, killed half way
and resumed.

The document: pages of the generated report (``_common.generated``) rendered to grayscale images at
200 dpi and stored as JPEG (quality 80, what a scanner hands over), one page in ``--blank-every``
left blank: alternately an empty page (no content at all) and a scan of blank paper (grain and
specks, JPEG). Every run below is a fresh interpreter running ``assets.cli.run_inbox`` (the graph
the UI runs: text → labels → tables → paragraphs → DuckDB → checks → knowledge base, embeddings
off) with rapidocr on the CPU:

- ``small``: the ``--small``-page document, clean (peak RSS baseline);
- ``clean``: the ``--pages``-page document, clean (pages/s, peak RSS);
- ``killed``: the same document in a fresh data folder, SIGKILLed once ``--kill-at`` of its OCR'd
  pages are checkpointed; ``resumed``: the same command again on that folder (time to finish,
  pages OCR'd in both runs);
- ``retuned``: the same command once more with a table setting changed (``tables.merge``), which
  must not OCR anything.

The blank-page cost is measured in this process (``blank_cost``): blank pages of each kind through
the whole text stage (``extract_document`` with an engine that must never be called), and the blank
check alone on the document's text pages (the cost it adds to every page that is OCR'd).
``--memory-sizes`` and ``--engine-rss`` measure memory by length where OCR'ing every page would take
hours here (``memory_at_length``, ``engine_rss``).

    .venv/bin/python bench/long_scan.py [--pages 100] [--small 10] [--blank-every 10]
                                        [--kill-at 0.5] [--json OUT]
    .venv/bin/python bench/long_scan.py --blank-only          # the blank-page cost alone
    .venv/bin/python bench/long_scan.py --memory-sizes 10,1000  # peak RSS by length, OCR from checkpoints
    .venv/bin/python bench/long_scan.py --engine-rss 2        # the OCR engine's RSS, page by page
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import _common as C
import numpy as np
import pymupdf

from dagster_ocr.ocr.settings import RapidOcrSettings

SCAN_DPI = 200
OVERRIDES = {"kb": {"embeddings": False}}


# ------------------------------------------------------------------------------------ the document


def _blank_paper(width: int, height: int, seed: int, grain: float = 1.5) -> bytes:
    """A 200-dpi scan of blank paper: gray 246, gaussian grain, 0.03% of pixels dust (none when
    ``grain`` is 0: flat paper)."""
    rng = np.random.default_rng(seed)
    arr = np.full((height, width), 246.0)
    if grain:
        arr += rng.normal(0.0, grain, (height, width))
        arr[rng.random(arr.shape) < 0.0003] = 30.0  # dust
    data = np.clip(arr, 0, 255).astype(np.uint8)
    return pymupdf.Pixmap(pymupdf.csGRAY, width, height, data.tobytes(), False).tobytes(
        "jpeg", jpg_quality=80
    )


def build_scan(path: Path, n_pages: int, blank_every: int) -> Path:
    """The scanned document of ``n_pages`` (see the module docstring); deterministic."""
    src = pymupdf.open(C.generated(min(n_pages, C.POOL_PAGES)))
    images: dict[int, bytes] = {}  # the pool's rendered pages, each inserted as its own image
    out = pymupdf.open()
    for i in range(n_pages):
        page = out.new_page(width=595, height=842)
        if blank_every and i % blank_every == blank_every - 1:
            if (i // blank_every) % 2:
                w, h = round(595 * SCAN_DPI / 72), round(842 * SCAN_DPI / 72)
                page.insert_image(page.rect, stream=_blank_paper(w, h, seed=i))
            continue  # else: an empty page
        k = i % src.page_count
        if k not in images:
            pix = src[k].get_pixmap(dpi=SCAN_DPI, colorspace=pymupdf.csGRAY)
            images[k] = pix.tobytes("jpeg", jpg_quality=80)
        page.insert_image(page.rect, stream=images[k])
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".part")
    out.save(tmp, garbage=1)
    out.close()
    os.replace(tmp, path)
    return path


def scan(n_pages: int, blank_every: int) -> Path:
    path = C.DEFAULT_CACHE / f"longscan_v1_{n_pages}p_{SCAN_DPI}dpi_blank{blank_every}.pdf"
    return path if path.is_file() else build_scan(path, n_pages, blank_every)


# --------------------------------------------------------------------------------- one graph run


def child(inbox: Path, data: Path, overrides: str, out: Path, starts: Path) -> None:
    """One ``run_inbox`` in this (fresh) process: wall time, peak RSS, the text stage's last report,
    and the index of every page whose OCR started (appended to ``starts`` as it happens)."""
    from assets.cli import run_inbox
    from dagster_ocr import ocr_workers, progress

    C.quiet_logs()
    real_ocr_page = ocr_workers.ocr_page
    log = open(starts, "a", buffering=1)  # noqa: SIM115 - one line per page, flushed as written

    def ocr_page(engine, page, index, *args, **kwargs):
        log.write(f"{index}\n")
        return real_ocr_page(engine, page, index, *args, **kwargs)

    ocr_workers.ocr_page = ocr_page  # pages OCR'd in this process (worker processes do not log)
    last: list[Any] = []
    start = time.perf_counter()
    with progress.listen(last.append):
        summary = run_inbox(inbox, data / "wh.duckdb", data, overrides_json=overrides, show_progress=False)
    seconds = time.perf_counter() - start
    final = last[-1] if last else None
    C.dump(
        {
            "seconds": seconds,
            "peak_rss_mib": C.peak_rss_mib(),
            "status": str(summary.status.iloc[0]) if len(summary) else "missing",
            "pages": final.total if final else 0,
            "text_seconds": final.elapsed_s if final else None,
            "ocr_pages": final.ocr_pages if final else None,
            "reused_pages": final.reused_pages if final else None,
            "blank_pages": final.blank_pages if final else None,
        },
        out,
    )


def _command(inbox: Path, data: Path, overrides: dict, out: Path, starts: Path) -> list[str]:
    return [
        sys.executable,
        "-W",
        "ignore",
        __file__,
        "--child",
        "--inbox",
        str(inbox),
        "--data",
        str(data),
        "--overrides",
        json.dumps(overrides),
        "--out",
        str(out),
        "--starts",
        str(starts),
    ]


def _env() -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": f"{C.REPO}:{Path(__file__).parent}"}
    env.pop("DAGSTER_HOME", None)
    return env


def graph_run(pdf: Path, work: Path, name: str, overrides: dict | None = None) -> dict[str, Any]:
    """``run_inbox`` over an inbox holding ``pdf``, in a fresh interpreter; data kept in ``work``."""
    inbox = work / "inbox"
    if not inbox.is_dir():
        inbox.mkdir(parents=True)
        shutil.copy(pdf, inbox / pdf.name)  # the inbox scan skips symlinks
    out, starts = work / f"{name}.json", work / f"{name}.starts"
    cmd = _command(inbox, work / "data", {**OVERRIDES, **(overrides or {})}, out, starts)
    err = work / f"{name}.stderr"
    load_before = os.getloadavg()[0]
    with open(err, "wb") as stderr:
        proc = subprocess.Popen(cmd, cwd=C.REPO, env=_env(), stdout=subprocess.DEVNULL, stderr=stderr)
        _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{name} failed: {err.read_text(errors='replace')[-3000:]}")
    result = json.loads(out.read_text())
    # the child's and its waited-for children's (the OCR workers, joined before it exits)
    result["cpu_seconds"] = usage.ru_utime + usage.ru_stime
    result["cores_used"] = result["cpu_seconds"] / result["seconds"]
    result["load_before_after"] = [load_before, os.getloadavg()[0]]
    result["ocr_started"] = _starts(starts)
    return result


def _starts(path: Path) -> list[int]:
    return [int(x) for x in path.read_text().split()] if path.exists() else []


def _checkpointed(data: Path) -> int:
    root = data / "ocr_pages"
    return sum(1 for _ in root.rglob("*.page")) if root.is_dir() else 0


def killed_run(pdf: Path, work: Path, kill_after: int) -> dict[str, Any]:
    """The graph run SIGKILLed once ``kill_after`` pages are checkpointed."""
    inbox = work / "inbox"
    inbox.mkdir(parents=True)
    shutil.copy(pdf, inbox / pdf.name)
    out, starts = work / "killed.json", work / "killed.starts"
    cmd = _command(inbox, work / "data", OVERRIDES, out, starts)
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=C.REPO, env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while proc.poll() is None and _checkpointed(work / "data") < kill_after:
        time.sleep(0.05)
    if proc.returncode is None:
        proc.send_signal(signal.SIGKILL)
    _, status, usage = os.wait4(proc.pid, 0) if proc.returncode is None else (0, 0, None)
    return {
        "seconds": time.perf_counter() - start,
        "cpu_seconds": usage.ru_utime + usage.ru_stime if usage else None,
        "killed": usage is not None,
        "checkpointed_at_kill": _checkpointed(work / "data"),
        "ocr_started": _starts(starts),
    }


# --------------------------------------------------------------------------------- blank pages


def blank_cost(pdf: Path, repeats: int = 3, n: int = 30) -> dict[str, Any]:
    """Per blank page through the whole text stage (``extract_document`` with an engine that must
    never be called), by kind: ``n`` empty pages, ``n`` scans of blank paper with grain and dust
    and ``n`` of flat paper (distinct images, so no decoded image is shared); and the blank check
    alone on ``pdf``'s first text pages (what it adds to every page that is OCR'd). Each figure is
    the best (and the median) of ``repeats`` runs, wall-clock and CPU: the machine is shared, and
    the best run is the one least disturbed."""
    from dagster_ocr.ingest import DocumentStore
    from dagster_ocr.ocr.base import OcrEngineBase
    from dagster_ocr.pipeline import extract_document
    from dagster_ocr.settings import Settings
    from dagster_ocr.textlayer import TextSettings, blank_page_reason

    class NeverCalled(OcrEngineBase):
        name = "never"
        calls = 0

        def recognize(self, image):
            self.calls += 1
            return []

    def stats(wall: list[float], cpu: list[float], pages: int) -> dict[str, float]:
        return {
            "ms_per_page_wall_best": 1000 * min(wall) / pages,
            "ms_per_page_wall_median": 1000 * C.median(wall) / pages,
            "ms_per_page_cpu_best": 1000 * min(cpu) / pages,
            "ms_per_page_cpu_median": 1000 * C.median(cpu) / pages,
        }

    out: dict[str, Any] = {}
    w, h = round(595 * SCAN_DPI / 72), round(842 * SCAN_DPI / 72)
    with tempfile.TemporaryDirectory(prefix="bench-blank-") as tmp:
        for kind in ("empty", "paper", "flat_paper"):
            doc = pymupdf.open()
            for i in range(n):
                page = doc.new_page(width=595, height=842)
                if kind != "empty":
                    grain = 1.5 if kind == "paper" else 0.0
                    page.insert_image(page.rect, stream=_blank_paper(w, h, seed=1000 + i, grain=grain))
            path = Path(tmp) / f"{kind}.pdf"
            doc.save(path)
            source = DocumentStore(Path(tmp) / "store").register(path)[0]
            walls, cpus, engine, parsed = [], [], NeverCalled(), None
            for _ in range(repeats):
                pymupdf.TOOLS.store_shrink(100)  # decode every image afresh
                wall, cpu = time.perf_counter(), time.process_time()
                parsed = extract_document(source, Settings(), engine)
                walls.append(time.perf_counter() - wall)
                cpus.append(time.process_time() - cpu)
            out[kind] = {
                "pages": n,
                "found_blank": sum(p.blank for p in parsed.pages),
                "ocr_calls": engine.calls,
                "reasons": sorted({p.route_reason for p in parsed.pages}),
                **stats(walls, cpus, n),
            }
    settings = TextSettings()
    walls, cpus = [], []
    with pymupdf.open(pdf) as src:
        text_pages = [p.number for p in src if p.get_contents() and blank_page_reason(p, settings) is None][
            :20
        ]
        for _ in range(repeats):
            pymupdf.TOOLS.store_shrink(100)
            wall, cpu = time.perf_counter(), time.process_time()
            for k in text_pages:
                blank_page_reason(src[k], settings)
            walls.append(time.perf_counter() - wall)
            cpus.append(time.process_time() - cpu)
    out["check_on_text_pages"] = {"pages": len(text_pages), **stats(walls, cpus, max(len(text_pages), 1))}
    return out


# ------------------------------------------------------------------------------- memory at length


def pool_ocr(blank_every: int) -> Path:
    """The checkpoint of the ``POOL_PAGES``-page scan, OCR'd once with the default settings and
    kept in the bench cache: every page of a longer scan shows one of these images."""
    from dagster_ocr.checkpoints import OcrCheckpoints
    from dagster_ocr.ingest import DocumentStore
    from dagster_ocr.ocr import get_engine
    from dagster_ocr.pipeline import extract_document
    from dagster_ocr.settings import Settings

    root = C.DEFAULT_CACHE / f"longscan_v1_pool_ocr_blank{blank_every}"
    pdf = scan(C.POOL_PAGES, blank_every)
    source = DocumentStore(root / "store").register(pdf)[0]
    settings = Settings()
    doc = extract_document(
        source, settings, get_engine(settings.ocr), checkpoints=OcrCheckpoints(root / "ocr")
    )
    assert doc.ok, doc.error
    return root


def prefill(pdf: Path, data: Path, pool: Path, blank_every: int) -> int:
    """Checkpoint every OCR'd page of ``pdf`` but its last from the pool's (page i shows pool image
    i mod POOL_PAGES), so a run OCRs one page: the model loads, as in a real run. Returns pages."""
    from dagster_ocr.checkpoints import OcrCheckpoints, ocr_fingerprint
    from dagster_ocr.ingest import DocumentStore, sha256_file
    from dagster_ocr.ocr import get_engine
    from dagster_ocr.settings import Settings

    settings = Settings()
    engine = get_engine(settings.ocr)  # not loaded: only its name and settings make the key
    fingerprint = ocr_fingerprint(engine, settings.ocr)
    pool_src = DocumentStore(pool / "store").get(sha256_file(scan(C.POOL_PAGES, blank_every)))
    pool_ckpt = OcrCheckpoints(pool / "ocr").document(pool_src.doc_id, fingerprint)
    target = OcrCheckpoints(data / "ocr_pages").document(sha256_file(pdf), fingerprint)
    n = pymupdf.open(pdf).page_count
    ocr_pages = [i for i in range(n) if pool_ckpt.get(i % C.POOL_PAGES) is not None]
    for i in ocr_pages[:-1]:
        page = pool_ckpt.get(i % C.POOL_PAGES)
        page.index = i
        target.put(page)
    return len(ocr_pages) - 1


def memory_at_length(sizes: list[int], blank_every: int, root: Path) -> list[dict[str, Any]]:
    """Peak RSS and time of the graph over scans of each size, OCR taken from checkpoints but for
    one page each (see ``prefill``)."""
    pool = pool_ocr(blank_every)
    rows = []
    for n in sizes:
        pdf = scan(n, blank_every)
        work = root / f"mem{n}"
        filled = prefill(pdf, work / "data", pool, blank_every)
        r = graph_run(pdf, work, "memory")
        r.pop("ocr_started", None)
        rows.append({"pages": n, "prefilled": filled, "file_mib": pdf.stat().st_size / 2**20, **r})
        print("memory", rows[-1], file=sys.stderr)
    base = rows[0]["peak_rss_mib"]
    for row in rows:
        row["peak_rss_ratio"] = row["peak_rss_mib"] / base
    return rows


def engine_rss(rounds: int, blank_every: int) -> list[tuple[int, int, float, float]]:
    """The OCR engine's memory page after page: the ``POOL_PAGES``-page scan's text pages through
    ``ocr_page`` ``rounds`` times in this process; (round, page, RSS MiB, peak RSS MiB) per page.
    A leak grows in every round; an engine sizing its buffers to the pages it has seen stops
    growing once it has seen them."""
    from dagster_ocr.ocr.base import ocr_page
    from dagster_ocr.ocr.rapid import RapidOcrEngine
    from dagster_ocr.ocr.settings import OcrSettings
    from dagster_ocr.textlayer import TextSettings, blank_page_reason

    doc = pymupdf.open(scan(C.POOL_PAGES, blank_every))
    pages = [p.number for p in doc if p.get_contents() and not blank_page_reason(p, TextSettings())]
    engine = RapidOcrEngine(settings=RapidOcrSettings())
    engine.load()
    rows = []
    for r in range(rounds):
        for k in pages:
            ocr_page(engine, doc[k], k, None, settings=OcrSettings())
            rows.append((r, k, round(C.current_rss_mib(), 1), round(C.peak_rss_mib(), 1)))
            print(*rows[-1], file=sys.stderr, flush=True)
    return rows


# ------------------------------------------------------------------------------------------ main


def workers_compare(pdf: Path, workers: int, rounds: int) -> dict[str, Any]:
    """The whole graph on ``pdf`` with ``ocr.workers`` 1 and ``workers``, alternated ``rounds`` times
    (each in a fresh data folder: every page OCR'd); the speed-up is the ratio of the medians."""
    runs: dict[int, list[dict[str, Any]]] = {1: [], workers: []}
    with tempfile.TemporaryDirectory(prefix="bench-longscan-workers-") as tmp:
        for r in range(rounds):
            for w in runs:
                run = graph_run(pdf, Path(tmp) / f"w{w}r{r}", "clean", {"ocr": {"workers": w}})
                run.pop("ocr_started")
                runs[w].append(run)
                print(f"workers={w} round {r}: {run}", file=sys.stderr)
    med = {w: C.median(x["seconds"] for x in rs) for w, rs in runs.items()}
    cpu = {w: C.median(x["cpu_seconds"] for x in rs) for w, rs in runs.items()}
    used = {w: C.median(x["cores_used"] for x in rs) for w, rs in runs.items()}
    return {
        "pages": pymupdf.open(pdf).page_count,
        "runs": {str(w): rs for w, rs in runs.items()},
        "median_seconds": {str(w): v for w, v in med.items()},
        "median_cpu_seconds": {str(w): v for w, v in cpu.items()},
        "median_cores_used": {str(w): v for w, v in used.items()},
        "speedup": med[1] / med[workers],
        # what the speed-up would be had each run had the cores it asked for (1, or `workers`) to
        # itself: the CPU-seconds ratio alone, i.e. the ceiling the extra CPU per page leaves
        "ideal_speedup_given_cpu": workers * cpu[1] / cpu[workers],
        # the speed-up the cores each run actually got allow: the CPU ratio times the ratio of
        # cores used (a loaded machine gives a run fewer cores than it asks for)
        "speedup_from_cpu_and_cores": (cpu[1] / cpu[workers]) * (used[workers] / used[1]),
        "text_speedup": C.median(x["text_seconds"] for x in runs[1])
        / C.median(x["text_seconds"] for x in runs[workers]),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", type=int, default=100)
    ap.add_argument("--small", type=int, default=10)
    ap.add_argument("--blank-every", type=int, default=10)
    ap.add_argument("--kill-at", type=float, default=0.5, help="share of the OCR'd pages")
    ap.add_argument("--json", type=Path)
    ap.add_argument(
        "--no-clean",
        action="store_true",
        help="skip the clean run of the big document: kill it at --kill-at of its text pages and "
        "resume (a clean run of 1,000 scanned pages would double hours of OCR)",
    )
    ap.add_argument("--work", type=Path, help="keep the runs' folders here (a fresh, empty folder)")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--inbox", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--data", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--overrides", help=argparse.SUPPRESS)
    ap.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--starts", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--blank-only", action="store_true", help="only the blank-page cost")
    ap.add_argument(
        "--workers", type=int, metavar="N", help="only: the document with ocr.workers 1 and N, alternated"
    )
    ap.add_argument("--rounds", type=int, default=1, help="rounds of --workers")
    ap.add_argument(
        "--engine-rss", type=int, metavar="ROUNDS", help="only the OCR engine's RSS, page by page"
    )
    ap.add_argument(
        "--memory-sizes",
        help="e.g. 10,1000: only peak RSS by length, OCR from checkpoints of a once-OCR'd 40-page pool",
    )
    args = ap.parse_args()
    if args.child:
        child(args.inbox, args.data, args.overrides, args.out, args.starts)
        return

    C.quiet_logs()
    big, small = scan(args.pages, args.blank_every), scan(args.small, args.blank_every)
    if args.blank_only:
        print(json.dumps(blank_cost(big), indent=1))
        return
    if args.workers:
        result = workers_compare(big, args.workers, args.rounds)
        print(json.dumps(result, indent=1))
        if args.json:
            C.dump(result, args.json)
        return
    if args.engine_rss:
        rows = engine_rss(args.engine_rss, args.blank_every)
        if args.json:
            C.dump({"engine_rss": rows}, args.json)
        return
    if args.memory_sizes:
        with tempfile.TemporaryDirectory(prefix="bench-longscan-mem-") as tmp:
            sizes = [int(x) for x in args.memory_sizes.split(",")]
            rows = memory_at_length(sizes, args.blank_every, Path(tmp))
        print(json.dumps(rows, indent=1))
        if args.json:
            C.dump({"memory_at_length": rows}, args.json)
        return
    report: dict[str, Any] = {
        "pages": args.pages,
        "small": args.small,
        "blank_every": args.blank_every,
        "file_mib": big.stat().st_size / 2**20,
        "blank_cost": blank_cost(big),
    }
    print(json.dumps(report["blank_cost"], indent=1), file=sys.stderr)
    with (
        contextlib.nullcontext(str(args.work))
        if args.work
        else tempfile.TemporaryDirectory(prefix="bench-longscan-")
    ) as tmp:
        root = Path(tmp)
        report["small_run"] = graph_run(small, root / "small", "clean")
        print("small", {k: v for k, v in report["small_run"].items() if k != "ocr_started"}, file=sys.stderr)
        if args.no_clean:
            clean = None
            n_ocr = args.pages - (args.pages // args.blank_every if args.blank_every else 0)
        else:
            clean = report["clean_run"] = graph_run(big, root / "clean", "clean")
            print("clean", {k: v for k, v in clean.items() if k != "ocr_started"}, file=sys.stderr)
            n_ocr = clean["ocr_pages"]
        kill_after = max(1, int(n_ocr * args.kill_at))
        killed = report["killed_run"] = killed_run(big, root / "resume", kill_after)
        print("killed", {k: v for k, v in killed.items() if k != "ocr_started"}, file=sys.stderr)
        resumed = report["resumed_run"] = graph_run(big, root / "resume", "resumed")
        print("resumed", {k: v for k, v in resumed.items() if k != "ocr_started"}, file=sys.stderr)
        retuned = report["retuned_run"] = graph_run(
            big, root / "resume", "retuned", {"tables": {"merge": False}}
        )
        twice = sorted(set(killed["ocr_started"]) & set(resumed["ocr_started"]))
        cpu_both = (killed["cpu_seconds"] or 0) + resumed["cpu_seconds"]
        small_rss = report["small_run"]["peak_rss_mib"]
        summary: dict[str, Any] = {
            "peak_rss_mib_small": small_rss,
            "killed_after_s": killed["seconds"],
            "checkpointed_at_kill": killed["checkpointed_at_kill"],
            "resume_seconds": resumed["seconds"],
            "resumed_status": resumed["status"],
            "resume_ocr_pages": resumed["ocr_pages"],
            "resume_reused_pages": resumed["reused_pages"],
            "resume_blank_pages": resumed["blank_pages"],
            "pages_ocrd_twice": len(twice),
            "pages_ocrd_twice_list": twice,
            "kill_plus_resume_seconds": killed["seconds"] + resumed["seconds"],
            "kill_plus_resume_cpu_seconds": cpu_both,
            "retuned_ocr_pages": retuned["ocr_pages"],
            "retuned_seconds": retuned["seconds"],
            "retuned_peak_rss_mib": retuned["peak_rss_mib"],
        }
        if clean is None:  # the big document's memory is the resumed run's: it read every page
            summary |= {
                "text_pages": n_ocr,
                "cpu_seconds_per_ocr_page": cpu_both
                / max(1, len(killed["ocr_started"]) + len(resumed["ocr_started"])),
                "peak_rss_mib_big_resumed": resumed["peak_rss_mib"],
                "peak_rss_ratio": resumed["peak_rss_mib"] / small_rss,
            }
        else:
            summary |= {
                "pages_per_second_clean": args.pages / clean["seconds"],
                "cpu_seconds_clean": clean["cpu_seconds"],
                "cpu_seconds_per_ocr_page_clean": clean["cpu_seconds"] / n_ocr if n_ocr else None,
                "text_pages_per_second_clean": args.pages / clean["text_seconds"],
                "seconds_per_ocr_page_clean": clean["text_seconds"] / n_ocr if n_ocr else None,
                "peak_rss_mib_big": clean["peak_rss_mib"],
                "peak_rss_ratio": clean["peak_rss_mib"] / small_rss,
                "kill_plus_resume_over_clean": summary["kill_plus_resume_seconds"] / clean["seconds"],
                "kill_plus_resume_over_clean_cpu": cpu_both / clean["cpu_seconds"]
                if killed["cpu_seconds"]
                else None,
            }
        report["summary"] = summary
    print(json.dumps(report["summary"], indent=1))
    if args.json:
        C.dump(report, args.json)


if __name__ == "__main__":
    main()
