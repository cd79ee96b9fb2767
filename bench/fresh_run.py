"""What one short document costs in a fresh process: the Dagster daemon's path (issue 36 item 5).

The UI, the sensor and backfills start every run in a new Python process, so a short document pays
the imports (dagster, the asset modules, Great Expectations, the embedder) on top of its pages;
``bench/e2e.py`` runs documents in one process and does not see this. Here each round runs
``dagster-ocr run`` in a new interpreter on a fresh inbox holding the given PDFs, and reports the
child's CPU seconds (user + system) and wall. With ``--base COMMIT`` the same is run, alternating,
on that commit checked out in a temporary git worktree (same virtualenv), and the ratio is printed:
this machine is noisy, so only pairs measured side by side are compared.

    .venv/bin/python bench/fresh_run.py --pdf ../shared/corpus/page_labels/bug793632.pdf \\
        --repeats 3 --base HEAD~1
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def one_run(src: Path, pdfs: list[Path], work: Path) -> tuple[float, float]:
    """(CPU s, wall s) of ``dagster-ocr run`` from the source tree ``src`` in a new interpreter."""
    shutil.rmtree(work, ignore_errors=True)
    (work / "inbox").mkdir(parents=True)
    for pdf in pdfs:
        shutil.copy(pdf, work / "inbox" / pdf.name)
    argv = ["dagster-ocr", "run", str(work / "inbox"), "--warehouse", str(work / "w.duckdb"), "--no-progress"]
    code = f"import sys; sys.argv = {argv!r}; from assets.cli import main; main()"
    env = os.environ | {"PYTHONPATH": str(src)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], cwd=src, env=env, check=True, capture_output=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pdf", type=Path, nargs="+", required=True, help="the inbox of every round")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--base", help="a commit to run side by side (a temporary worktree)")
    args = ap.parse_args()
    pdfs = [p.resolve() for p in args.pdf]
    trees = {"this tree": REPO}
    tmp = Path(tempfile.mkdtemp(prefix="fresh-run-"))
    try:
        if args.base:
            trees = {f"base {args.base}": tmp / "base"} | trees
            add = ["git", "worktree", "add", "-q", "--detach", str(tmp / "base"), args.base]
            subprocess.run(add, cwd=REPO, check=True)
        for src in trees.values():  # the first run caches models and compiles the tree's modules
            one_run(src, pdfs, tmp / "warm")
        figures: dict[str, list[tuple[float, float]]] = {name: [] for name in trees}
        for i in range(args.repeats):
            for name, src in trees.items():
                cpu, wall = one_run(src, pdfs, tmp / "work")
                figures[name].append((cpu, wall))
                print(f"round {i + 1} {name}: {cpu:.2f} CPU s, {wall:.2f} s wall", flush=True)
        print(f"\n{len(pdfs)} PDF(s): {', '.join(p.name for p in pdfs)}; median of {args.repeats}")
        med = {name: statistics.median(c for c, _ in rows) for name, rows in figures.items()}
        for name, rows in figures.items():
            print(f"{name:>20}: {med[name]:.2f} CPU s, {statistics.median(w for _, w in rows):.2f} s wall")
        if args.base:
            base, this = list(med.values())
            print(f"this tree / base: {this / base:.2f}x the CPU")
    finally:
        if args.base:
            subprocess.run(["git", "worktree", "remove", "--force", str(tmp / "base")], cwd=REPO, check=False)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
