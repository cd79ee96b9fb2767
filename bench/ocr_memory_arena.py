"""onnxruntime's CPU memory arena and glibc's malloc thresholds against the default rapidocr engine:
CPU (user and kernel) and resident memory page by page, one fresh process per mode.

    .venv/bin/python bench/ocr_memory_arena.py [--pages 5]      # runs every mode, one at a time
    .venv/bin/python bench/ocr_memory_arena.py --mode arena     # one mode in this process

Pages: the long-scan bench's generated 200-dpi scan (dense report pages); the first page (model
warm-up) is left out of the means.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import resource
import subprocess
import sys
from pathlib import Path

from dagster_ocr.ocr.settings import OcrSettings

ROOT = Path(__file__).resolve().parents[1]
MODES = ("default", "arena", "mallopt")


def _rss_mib() -> float:
    return int(Path("/proc/self/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def one(mode: str, pages: int) -> None:
    if mode == "mallopt":  # before anything allocates: keep freed blocks up to 32 MiB on the heap
        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(-3, 32 * 1024 * 1024)  # M_MMAP_THRESHOLD (glibc's maximum)
        libc.mallopt(-1, 512 * 1024 * 1024)  # M_TRIM_THRESHOLD
    sys.path[:0] = [str(ROOT), str(ROOT / "bench")]
    import _common as C
    import long_scan
    import pymupdf

    from dagster_ocr.ocr.base import ocr_page
    from dagster_ocr.ocr.rapid import RapidOcrEngine
    from dagster_ocr.ocr.settings import RapidOcrSettings

    C.quiet_logs()
    engine = RapidOcrEngine(RapidOcrSettings(onnx_memory_arena=mode == "arena"))
    engine.load()
    cpu, kernel, cells = [], [], []
    with pymupdf.open(long_scan.scan(12, 0)) as doc:
        for i in range(pages):
            t0 = os.times()
            ocr_page(engine, doc[i], i, settings=OcrSettings())
            t1 = os.times()
            c, k = t1.user + t1.system - t0.user - t0.system, t1.system - t0.system
            if i:
                cpu.append(c)
                kernel.append(k)
            cells.append(f"p{i} {c:.2f}/{k:.2f} s {_rss_mib():.0f} MiB")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"| {mode} | {sum(cpu) / len(cpu):.2f} | {sum(kernel) / len(kernel):.2f} | {_rss_mib():.0f} "
        f"| {peak:.0f} | {os.getloadavg()[0]:.1f} | {'; '.join(cells)} |",
        flush=True,
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mode", choices=MODES)
    ap.add_argument("--pages", type=int, default=5)
    args = ap.parse_args()
    if args.mode:
        one(args.mode, args.pages)
        return
    print(
        "| mode | CPU s/page | kernel s/page | RSS MiB | peak MiB | load | page by page (CPU/kernel, RSS) |"
    )
    print("|---|---|---|---|---|---|---|")
    for mode in MODES:
        cmd = [sys.executable, "-W", "ignore", __file__, "--mode", mode, "--pages", str(args.pages)]
        subprocess.run(cmd, check=True)


if __name__ == "__main__":
    main()
