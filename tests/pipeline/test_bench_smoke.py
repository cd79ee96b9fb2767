"""Smoke test of the issue-10 benchmark suite: quick mode runs and its output has the right shape.

Not timed and not a performance assertion: it only proves that ``bench/run.py --quick`` still runs
against the current code (every stage, the Dagster graph, the peers, a fresh growth process) and
that its results, plots and Markdown section come out complete. It never touches BENCHMARKS.md.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


# about 55 s of CPU (three fresh interpreters import dagster and Great Expectations); on a shared,
# loaded machine the wall time stretches well past that, hence the generous timeout
@pytest.mark.slow
@pytest.mark.timeout(900)
def test_bench_quick_mode(corpus: Path, tmp_path: Path) -> None:
    benchmarks = (REPO / "BENCHMARKS.md").read_text()
    out = tmp_path / "out"
    env = {
        **os.environ,
        "DAGSTER_OCR_CORPUS": str(corpus),
        "DAGSTER_OCR_BENCH_CACHE": str(tmp_path / "cache"),
    }
    env.pop("DAGSTER_HOME", None)
    proc = subprocess.run(
        [sys.executable, "-W", "ignore", str(REPO / "bench" / "run.py"), "--quick", "--out", str(out)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=840,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]

    res = json.loads((out / "results.json").read_text())
    assert {"e2e", "stages", "peers", "growth", "machine"} <= set(res)
    e2e = res["e2e"]["born_digital_corpus"]
    assert e2e["pages"] >= 1 and e2e["ocr_pages"] == 0 and e2e["statuses"] == {"parsed": e2e["documents"]}
    assert e2e["graph_seconds"] > 0 and e2e["core_seconds"] > 0
    stages = res["stages"]["corpus"]
    assert set(stages["ms_per_page"]) == {
        "text",
        "labels",
        "tables",
        "paragraphs",
        "duckdb_load",
        "checks",
        "knowledge_base",
        "kb_vectors",
    }
    assert 0 < stages["writer_pool_ms_per_page"]
    assert abs(sum(stages["share"].values()) - 1.0) < 1e-6
    assert stages["tables_ms_per_page_by_finder"]
    pps = res["peers"]["corpus"]["pages_per_second"]
    assert {"pymupdf_text", "ours_parse", "ours_core"} <= set(pps) and all(v > 0 for v in pps.values())
    assert "docling" in res["peers"]["corpus"]["status"]
    rows = res["growth"]["rows"]
    assert len(rows) >= 2 and all(r["status"] == "parsed" and r["peak_rss_mib"] > 0 for r in rows)
    # the child's own high-water mark, not its parent's (see bench/_common.peak_rss_mib)
    assert all(r["peak_rss_mib"] >= r["peak_rss_mib_after"]["imports"] for r in rows)

    summary = json.loads((out / "summary.json").read_text())
    assert summary["goals"] and all({"value", "target", "met"} <= set(g) for g in summary["goals"].values())
    for name in ("stages.png", "peers.png", "growth.png"):
        assert (out / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    section = (out / "section.md").read_text()
    assert "| stage |" in section and "**Growth**" in section and "**Goals**" in section
    assert (REPO / "BENCHMARKS.md").read_text() == benchmarks
