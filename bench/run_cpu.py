"""The whole run's CPU a page against a raw PyMuPDF pass, side by side (issue 36's end-to-end goal).

    .venv/bin/python bench/run_cpu.py [--pdf A.pdf B.pdf] [--repeats 2] [--config NAME=JSON ...]
        [--base COMMIT] [--instance home|ephemeral] [--json OUT]

Each round runs, in a fresh temporary folder each time, ``dagster-ocr run INBOX --warehouse W --no-progress``
once per configuration (``--set JSON``; by default: the shipped defaults, ``kb.embed_dtype`` bfloat16 and
float32, embeddings off), and a raw ``page.get_text("dict")`` pass over the same files in a fresh
interpreter; CPU is user+sys of the child processes (the run's own workers included), beside each run's wall
time (a setting that saves CPU by leaving cores idle shows there). Rounds interleave
the configurations, so a noisy machine hits them alike; the ratio to the raw pass of the same round is
the figure to read. By default the two 10-K reports of ``../shared/reports``. The summary names the
CPU and the instructions the embedding's cost hangs on (VNNI/AMX: int8; AVX2 alone: f32, ~4x the
knowledge base's CPU), since two machines have answered to "AMD EPYC".

The run is this source tree's code (``PYTHONPATH`` and the tree as working directory, whatever the
virtualenv's editable install points at; before 2026-12-04 the run started in the folder the bench was
started in, which ``python -c`` puts first on ``sys.path``, so with ``--base`` both columns ran that
folder's code); with ``--base COMMIT`` every configuration also runs, interleaved, on that commit
checked out in a temporary git worktree (same virtualenv), and the table gains its before/after ratio.
``--instance``:
``home`` (the default) runs with ``DAGSTER_HOME`` set to a fresh folder, so the run is recorded in a
SQLite Dagster instance as a user with a local instance has it; ``ephemeral`` runs without
``DAGSTER_HOME``, as ``dagster-ocr run`` does out of the box (an in-memory instance).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

from kb_retrieval import cpu_model, find_shared  # noqa: E402

from dagster_ocr.cpu import cpu_flags  # noqa: E402

RAW = (
    "import sys, pymupdf\n"
    "for f in sys.argv[1:]:\n"
    "    with pymupdf.open(f) as d:\n"
    "        for p in d: p.get_text('dict')\n"
)
DEFAULT_CONFIGS = {
    "defaults": "",
    "bf16 embeddings": '{"kb": {"embed_dtype": "bfloat16"}}',
    "f32 embeddings": '{"kb": {"embed_dtype": "float32"}}',
    "no embeddings": '{"kb": {"embeddings": false}}',
}


def cpu_line() -> str:
    """The CPU the figures were read on and the instructions the embedding's cost hangs on: "AMD EPYC"
    has named a 2-core machine with AVX512-VNNI (int8 embeddings, ~0.07 CPU s a report page for the
    knowledge base) and one with AVX2 alone (f32 embeddings, ~0.4), whose runs differ ~4x."""
    flags = cpu_flags()
    wide = ("amx_int8", "amx_bf16", "avx512_vnni", "avx_vnni", "avx512_bf16", "avx512f")
    isa = [f for f in wide if f in flags] or [f for f in ("avx2",) if f in flags]
    return f"{cpu_model()}, {os.cpu_count()} CPUs, {' '.join(isa) or 'no AVX2'}"


def child_cpu(cmd: list[str], env: dict[str, str], cwd: Path | None = None) -> tuple[float, float]:
    """User+sys CPU seconds of ``cmd`` and its descendants (it must succeed), and its wall seconds."""
    before, start = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    subprocess.run(cmd, check=True, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    after, wall = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter() - start
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall


def run_cmd(src: Path, argv: list[str]) -> list[str]:
    """``dagster-ocr ARGV`` as the source tree ``src`` has it, in a new interpreter."""
    code = f"import sys; sys.argv = {['dagster-ocr', *argv]!r}; from assets.cli import main; main()"
    return [sys.executable, "-c", code]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pdf", nargs="+", type=Path)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--config", action="append", default=[], help="NAME=JSON for --set (repeatable)")
    ap.add_argument("--base", help="a commit to run side by side (a temporary git worktree)")
    ap.add_argument("--instance", choices=("home", "ephemeral"), default="home")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    pdfs = args.pdf or sorted((find_shared() / "reports").glob("*.pdf"))
    configs = dict(c.split("=", 1) for c in args.config) if args.config else DEFAULT_CONFIGS
    import pymupdf

    pages = 0
    for f in pdfs:
        with pymupdf.open(f) as d:
            pages += d.page_count
    scratch = Path(tempfile.mkdtemp(prefix="run-cpu-trees-"))
    trees = {"": REPO}
    if args.base:
        base = scratch / "base"
        subprocess.run(
            ["git", "worktree", "add", "-q", "--detach", str(base), args.base], cwd=REPO, check=True
        )
        trees = {f"base {args.base}: ": base, "this tree: ": REPO}
    for src in trees.values():  # no tree pays its modules' first compile inside a measured run
        subprocess.run(
            [sys.executable, "-m", "compileall", "-q", "assets", "resources", "dagster_ocr"], cwd=src
        )
    runs = {
        prefix + name: (src, overrides)
        for name, overrides in configs.items()
        for prefix, src in trees.items()
    }
    rows: dict[str, list[float]] = {name: [] for name in runs}
    rows["raw get_text('dict')"] = []
    walls: dict[str, list[float]] = {name: [] for name in runs}
    try:
        for rnd in range(args.repeats):
            for name, (src, overrides) in runs.items():
                with tempfile.TemporaryDirectory(prefix="run-cpu-") as tmp:
                    inbox = Path(tmp) / "inbox"
                    inbox.mkdir()
                    for f in pdfs:
                        shutil.copy(f, inbox / f.name)
                    env = os.environ | {"PYTHONPATH": str(src)}
                    env.pop("DAGSTER_HOME", None)
                    if args.instance == "home":
                        env["DAGSTER_HOME"] = str(Path(tmp) / "home")
                        (Path(tmp) / "home").mkdir()
                    argv = ["run", str(inbox), "--warehouse", str(Path(tmp) / "w.duckdb"), "--no-progress"]
                    if overrides:
                        argv += ["--set", overrides]
                    # in the tree's own folder: ``python -c`` puts the working directory first on
                    # sys.path, ahead of PYTHONPATH, so run from elsewhere the base would import
                    # the code of the folder the bench was started in
                    cpu, wall = child_cpu(run_cmd(src, argv), env, cwd=src)
                    rows[name].append(cpu)
                    walls[name].append(wall)
                raw, _ = child_cpu([sys.executable, "-c", RAW, *map(str, pdfs)], dict(os.environ))
                rows["raw get_text('dict')"].append(raw)
                print(
                    f"round {rnd + 1} {name}: {cpu:.1f} CPU s, {wall:.1f} s wall (raw pass {raw:.2f})",
                    flush=True,
                )
    finally:
        if args.base:
            subprocess.run(
                ["git", "worktree", "remove", "--force", str(scratch / "base")], cwd=REPO, check=False
            )
        shutil.rmtree(scratch, ignore_errors=True)
    raw_mean = sum(rows["raw get_text('dict')"]) / len(rows["raw get_text('dict')"])
    print(
        f"\n{len(pdfs)} files, {pages} pages, {args.repeats} rounds, instance {args.instance}; "
        f"raw pass {raw_mean:.2f} CPU s (mean)"
    )
    print(f"CPU: {cpu_line()}; load average at the end {os.getloadavg()[0]:.1f}")
    print()
    ratio = " | this tree / base" if args.base else ""
    print(f"| | CPU s (mean) | wall s (mean) | CPU s/page | pages/s a core | x raw pass{ratio} |")
    print("|---|---|---|---|---|---|" + "---|" * bool(args.base))
    out = {
        "pdfs": [p.name for p in pdfs],
        "pages": pages,
        "instance": args.instance,
        "cpu": cpu_line(),
        "load_at_end": os.getloadavg()[0],
        "cpu_s": rows,
        "wall_s": walls,
    }
    mean = {name: sum(rows[name]) / len(rows[name]) for name in runs}
    for name in runs:
        cpu, wall = mean[name], sum(walls[name]) / len(walls[name])
        cells = f"| {name} | {cpu:.1f} | {wall:.1f} | {cpu / pages:.3f} | {pages / cpu:.1f} "
        cells += f"| {cpu / raw_mean:.1f}x |"
        if args.base:
            base_name = name.replace("this tree: ", f"base {args.base}: ")
            cells += f" {cpu / mean[base_name]:.2f} |" if name.startswith("this tree") else " |"
        print(cells)
    if args.json:
        args.json.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
