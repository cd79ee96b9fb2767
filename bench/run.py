"""Run the issue-10 benchmarks (end to end, stages, peers, growth), plot them, report them.

    .venv/bin/python bench/run.py --quick --out /tmp/bench-quick      # CI smoke size, about a minute
    .venv/bin/python bench/run.py --full --markdown                   # people: ~10-15 min, writes
                                                                      # bench/plots/*.png and the
                                                                      # issue-10 section of the history,
                                                                      # docs/benchmarks-history.md

Writes ``results.json`` (every number) and ``summary.json`` (the headline figures and goal
verdicts) into ``--out``, PNG plots into ``--plots`` (default: ``--out`` in quick mode,
``bench/plots`` in full mode). With ``--markdown`` the section "End to end, stages, growth
(issue 10)" of docs/benchmarks-history.md is replaced by the new figures (nothing else in the file is
touched); carry its headline figures into BENCHMARKS.md's "Throughput and stages" and "Memory" by hand.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
import warnings
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as C  # noqa: E402
import e2e  # noqa: E402
import growth  # noqa: E402
import peers  # noqa: E402
import stages  # noqa: E402

SECTION = "## End to end, stages, growth (issue 10)"
#: the dated history the section lives in (BENCHMARKS.md holds the current figures, written by hand)
HISTORY = C.REPO / "docs" / "benchmarks-history.md"
#: docling's published CPU throughput, pages/s (upper end; see peers.PUBLISHED for the source)
DOCLING_CPU = max(peers.PUBLISHED["docling"]["pages_per_second"])


def machine() -> str:
    """One line about the machine the numbers came from."""
    try:
        load = os.getloadavg()[0]
    except OSError:
        load = float("nan")
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return (
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, {mem:.0f} GiB, "
        f"Python {platform.python_version()}, load average {load:.1f} at the start"
    )


def summarize(res: dict[str, Any]) -> dict[str, Any]:
    """Headline figures and the goals' verdicts."""
    p = res["peers"]["corpus"]["pages_per_second"]
    pg = res["peers"].get("generated", {}).get("pages_per_second", {})
    e = res["e2e"]
    out: dict[str, Any] = {
        "pages_per_second": {
            "pymupdf_text_corpus": p["pymupdf_text"],
            "ours_parse_corpus": p["ours_parse"],
            "ours_core_corpus": p["ours_core"],
            "graph_corpus": e["born_digital_corpus"]["graph_pages_per_second"],
            "graph_generated": e["born_digital_generated"]["graph_pages_per_second"],
            "scanned_graph": e["scanned"]["graph_pages_per_second"] if e["scanned"] else None,
        },
        "documents_per_hour_graph_corpus": e["born_digital_corpus"]["graph_documents_per_hour"],
        "dagster_run_overhead_s": e["run_overhead_seconds"],
        "dagster_doc_overhead_s": e["born_digital_corpus"]["dagster_overhead_per_document_seconds"],
        "born_digital_ocr_pages": e["born_digital_corpus"]["ocr_pages"]
        + e["born_digital_generated"]["ocr_pages"],
    }
    goals: dict[str, Any] = {}
    for name, value in (("parse", p["ours_parse"]), ("graph", out["pages_per_second"]["graph_corpus"])):
        goals[f"10x_docling_{name}"] = {
            "value": value / DOCLING_CPU,
            "target": 10.0,
            "met": value >= 10 * DOCLING_CPU,
        }
    goals["within_3x_pymupdf_parse_corpus"] = {
        "value": p["pymupdf_text"] / p["ours_parse"],
        "target": 3.0,
        "met": p["pymupdf_text"] / p["ours_parse"] <= 3.0,
    }
    if pg:
        goals["within_3x_pymupdf_parse_generated"] = {
            "value": pg["pymupdf_text"] / pg["ours_parse"],
            "target": 3.0,
            "met": pg["pymupdf_text"] / pg["ours_parse"] <= 3.0,
        }
    core = {r["pages"]: r for r in res["growth"]["rows"] if r["mode"] == "core"}
    sizes = sorted(core)
    if len(sizes) >= 2:
        small, big = sizes[0], (1000 if 1000 in core else sizes[-1])
        ratio = core[big]["peak_rss_mib"] / core[small]["peak_rss_mib"]
        goals[f"memory_{big}p_within_1.5x_of_{small}p"] = {"value": ratio, "target": 1.5, "met": ratio <= 1.5}
        if sizes[-1] != big:  # "memory must stay flat": the largest size against the same target
            ratio = core[sizes[-1]]["peak_rss_mib"] / core[small]["peak_rss_mib"]
            goals[f"memory_{sizes[-1]}p_within_1.5x_of_{small}p"] = {
                "value": ratio,
                "target": 1.5,
                "met": ratio <= 1.5,
            }
        excess = [
            (core[b]["above_imports_mib"] - core[a]["above_imports_mib"]) / (b - a)
            for a, b in zip(sizes, sizes[1:], strict=False)
        ]
        out["rss_mib_per_extra_page"] = excess
        spp = [core[n]["seconds_per_page"] for n in sizes]
        out["seconds_per_page_by_size"] = dict(zip(map(str, sizes), spp, strict=True))
    out["goals"] = goals
    return out


def plot(res: dict[str, Any], plots: Path) -> list[Path]:
    """PNG plots: stage profile, peers side by side, growth (memory and time)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plots.mkdir(parents=True, exist_ok=True)
    written = []

    fig, ax = plt.subplots(figsize=(8, 4))
    sets = list(res["stages"])
    width = 0.8 / max(len(sets), 1)
    for i, key in enumerate(sets):
        ms = res["stages"][key]["ms_per_page"]
        xs = [k + i * width for k in range(len(stages.STAGES))]
        ax.bar(
            xs, [ms.get(s, 0) for s in stages.STAGES], width, label=f"{key} ({res['stages'][key]['pages']} p)"
        )
    ax.set_xticks(
        [k + width * (len(sets) - 1) / 2 for k in range(len(stages.STAGES))], stages.STAGES, rotation=20
    )
    ax.set_ylabel("ms per page")
    ax.set_title("Where the time goes (core stages, median of repeats)")
    ax.legend()
    fig.tight_layout()
    written.append(plots / "stages.png")
    fig.savefig(written[-1], dpi=110)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(8, 4))
    pps = dict(res["peers"]["corpus"]["pages_per_second"])
    pps["ours_graph (Dagster)"] = res["e2e"]["born_digital_corpus"]["graph_pages_per_second"]
    names = list(pps)
    ax.barh(names, [pps[n] for n in names], color="tab:blue")
    lo, hi = peers.PUBLISHED["docling"]["pages_per_second"]
    ax.axvspan(lo, hi, color="tab:red", alpha=0.25, label=f"docling, published CPU ({lo}-{hi} p/s)")
    ax.axvline(10 * hi, color="tab:red", ls="--", label=f"goal: 10x docling ({10 * hi:.1f} p/s)")
    ax.set_xscale("log")
    ax.set_xlabel("pages per second (log)")
    ax.set_title(f"Same born-digital PDFs, same run ({res['peers']['corpus']['pages']} pages)")
    ax.legend(loc="upper right", fontsize=8)
    fig.tight_layout()
    written.append(plots / "peers.png")
    fig.savefig(written[-1], dpi=110)
    plt.close(fig)

    rows = res["growth"]["rows"]
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 4))
    for mode, style in (("core", "o-"), ("graph", "s--")):
        mine = sorted((r for r in rows if r["mode"] == mode), key=lambda r: r["pages"])
        if not mine:
            continue
        xs = [r["pages"] for r in mine]
        a1.plot(xs, [r["peak_rss_mib"] for r in mine], style, label=f"{mode}: peak RSS")
        a1.plot(xs, [r["peak_rss_mib_after"]["imports"] for r in mine], ":", color="grey")
        a2.plot(xs, [r["seconds_per_page"] for r in mine], style, label=mode)
    a1.set_xscale("log")
    a1.set_xlabel("pages")
    a1.set_ylabel("MiB (dotted: after imports)")
    a1.set_title("Peak RSS, fresh process per size")
    a1.legend(fontsize=8)
    a2.set_xscale("log")
    a2.set_xlabel("pages")
    a2.set_ylabel("seconds per page")
    a2.set_title("Time per page (flat = linear)")
    a2.legend(fontsize=8)
    fig.tight_layout()
    written.append(plots / "growth.png")
    fig.savefig(written[-1], dpi=110)
    plt.close(fig)
    return written


def _f(x: float | None, nd: int = 1) -> str:
    return "n/a" if x is None else f"{x:,.{nd}f}"


def markdown(res: dict[str, Any], summary: dict[str, Any], command: str, elapsed: float, plots: Path) -> str:
    """The body of the issue-10 section of docs/benchmarks-history.md (plot links relative to docs/)."""
    e, st, pe, gr = res["e2e"], res["stages"], res["peers"], res["growth"]
    rel = os.path.relpath(plots, HISTORY.parent)
    lines = [
        f"Command: `{command}` ({elapsed / 60:.1f} min). Machine: {res['machine']}. Table finder: "
        f"`{st['corpus']['table_finder_default']}` (the `TableSettings` default at the time). Born-digital "
        f"inputs routed {summary['born_digital_ocr_pages']} page(s) to OCR. Other jobs shared the 2 cores: "
        "read ratios measured in the same run, not absolute times.",
        "",
        f"![stages]({rel}/stages.png) ![peers]({rel}/peers.png) ![growth]({rel}/growth.png)",
        "",
        "**End to end** (`bench/e2e.py`; graph = `assets.cli.run_inbox`, one in-process Dagster run per "
        "document; core = the same stage functions without Dagster; median of "
        f"{e['repeats']} alternating repeats):",
        "",
        "| input | docs | pages | graph pages/s | graph docs/hour | core pages/s | Dagster s/doc |",
        "|---|---|---|---|---|---|---|",
    ]
    for key in ("born_digital_corpus", "born_digital_generated", "scanned"):
        m = e.get(key)
        if not m:
            continue
        over = m.get("dagster_overhead_per_document_seconds")
        lines.append(
            f"| {key.replace('_', ' ')} | {m['documents']} | {m['pages']} (OCR {m['ocr_pages']}) | "
            f"{_f(m['graph_pages_per_second'], 2)} | {_f(m['graph_documents_per_hour'], 0)} | "
            f"{_f(m['core_pages_per_second'], 2)} | {_f(over, 2) if over is not None else '-'} |"
        )
    lines += [
        "",
        f"Dagster per run: {_f(e['run_overhead_seconds'], 2)} s (`run_inbox` on an empty inbox: definitions, "
        f"instance, schema) plus a one-off {_f(e['import_seconds'], 1)} s to import dagster and the asset "
        "graph in a fresh interpreter. Per document: the graph time minus the run cost minus the core time, "
        "divided by documents (step orchestration, event log, pickling every asset's output to disk and "
        "back).",
        "",
        "**Stages** (`bench/stages.py`, ms per page, median of "
        f"{st['corpus']['repeats']}; share of the total in brackets):",
        "",
        "| stage | " + " | ".join(f"{k} ({v['pages']} p)" for k, v in st.items()) + " |",
        "|---|" + "---|" * len(st),
    ]
    for s in stages.STAGES:
        lines.append(
            f"| {s} | "
            + " | ".join(f"{_f(v['ms_per_page'][s])} ({100 * v['share'][s]:.0f}%)" for v in st.values())
            + " |"
        )
    lines.append(
        "| tables, per finder | "
        + " | ".join(
            ", ".join(f"{f}: {_f(ms)}" for f, ms in v["tables_ms_per_page_by_finder"].items())
            for v in st.values()
        )
        + " |"
    )
    lines += [
        "",
        "**Side by side** (`bench/peers.py`, same PDFs, tools interleaved, median of "
        f"{pe['corpus']['rounds']} rounds; pages/s and slowdown against raw `page.get_text()`):",
        "",
        "| tool | " + " | ".join(f"{k} ({v['pages']} p)" for k, v in pe.items()) + " |",
        "|---|" + "---|" * len(pe),
    ]
    for tool in pe["corpus"]["pages_per_second"]:
        lines.append(
            f"| {tool} | "
            + " | ".join(
                f"{_f(v['pages_per_second'][tool], 2)} ({_f(v['slowdown_vs_pymupdf_text'][tool], 1)}x)"
                for v in pe.values()
            )
            + " |"
        )
    for name, status in pe["corpus"]["status"].items():
        if name == "pdfplumber":
            continue
        pub = peers.PUBLISHED[name]
        lines.append(f"| {name} | {status}; published: {pub['source']} |" + " |" * (len(pe) - 1))
    lines += [
        "",
        "**Growth** (`bench/growth.py`, generated reports, a ruled table every 4th page, one fresh process "
        f"per size and mode; finder `{gr['finder']}`"
        + (f"; reused from an earlier run, `{gr['reused_from']}`" if gr.get("reused_from") else "")
        + "):",
        "",
        "| pages | mode | seconds | s/page | peak RSS MiB | above imports MiB | status |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in gr["rows"]:
        lines.append(
            f"| {r['pages']:,} | {r['mode']} | {_f(r['seconds'])} | {_f(r['seconds_per_page'], 3)} | "
            f"{_f(r['peak_rss_mib'], 0)} | {_f(r['above_imports_mib'], 0)} | {r['status']} |"
        )
    biggest = max((r for r in gr["rows"] if r["mode"] == "core"), key=lambda r: r["pages"], default=None)
    if biggest:
        after = biggest["peak_rss_mib_after"]
        steps, prev = [], after["imports"]
        for k, v in after.items():
            if k != "imports":
                steps.append(f"{k} +{v - prev:.0f}")
                prev = v
        secs = biggest.get("stage_seconds", {})
        lines += [
            "",
            f"Peak RSS growth by stage at {biggest['pages']:,} pages (MiB): " + ", ".join(steps) + ".",
            f"Seconds by stage at {biggest['pages']:,} pages: "
            + ", ".join(f"{k} {v:.1f}" for k, v in secs.items())
            + ".",
        ]
    lines += ["", "**Goals**:", ""]
    for name, g in summary["goals"].items():
        lines.append(
            f"- {name}: {_f(g['value'], 2)} (target {g['target']}) - {'met' if g['met'] else 'NOT met'}"
        )
    return "\n".join(lines)


def write_section(body: str, path: Path) -> None:
    """Replace the issue-10 section's body in the history, leaving every other section alone."""
    text = path.read_text()
    start = text.index(SECTION) + len(SECTION)
    nxt = text.find("\n## ", start)
    end = len(text) if nxt < 0 else nxt
    path.write_text(
        text[:start] + "\n\n" + body.rstrip() + "\n" + ("" if nxt < 0 else "\n") + text[end:].lstrip("\n")
    )


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="CI smoke size (not meant to be read)")
    mode.add_argument("--full", action="store_true", help="the full suite (default)")
    ap.add_argument("--out", type=Path, default=Path("/tmp/dagster-ocr-bench/results"))
    ap.add_argument("--plots", type=Path)
    ap.add_argument(
        "--markdown", action="store_true", help="rewrite the issue-10 section of docs/benchmarks-history.md"
    )
    ap.add_argument("--growth-sizes", help="override, e.g. 10,100,1000,5000")
    ap.add_argument("--graph-sizes", help="growth sizes also run through the Dagster graph")
    ap.add_argument("--finder", help="TableSettings.finder for the growth runs (default: settings default)")
    ap.add_argument(
        "--growth-from",
        type=Path,
        help="reuse the growth results of an earlier results.json (said in the report)",
    )
    args = ap.parse_args(argv)
    warnings.filterwarnings("ignore")
    os.environ.pop("DAGSTER_HOME", None)
    quick = ["--quick"] if args.quick else []
    plots = args.plots or (args.out if args.quick else C.REPO / "bench" / "plots")
    started = time.perf_counter()
    res: dict[str, Any] = {"mode": "quick" if args.quick else "full", "machine": machine()}
    res["e2e"] = e2e.main(quick)
    res["stages"] = stages.main(quick)
    res["peers"] = peers.main(quick)
    gargs = quick + (["--sizes", args.growth_sizes] if args.growth_sizes else [])
    gargs += ["--graph-sizes", args.graph_sizes] if args.graph_sizes is not None else []
    gargs += ["--finder", args.finder] if args.finder else []
    if args.growth_from:
        res["growth"] = json.loads(args.growth_from.read_text())["growth"]
        res["growth"]["reused_from"] = str(args.growth_from)
    else:
        res["growth"] = growth.main(gargs)
    elapsed = time.perf_counter() - started
    res["elapsed_seconds"] = elapsed
    summary = summarize(res)
    C.dump(res, args.out / "results.json")
    C.dump(summary, args.out / "summary.json")
    res["plots"] = [str(p) for p in plot(res, plots)]
    command = ".venv/bin/python bench/run.py " + " ".join(argv if argv is not None else sys.argv[1:])
    body = markdown(res, summary, command.strip(), elapsed, plots)
    (args.out / "section.md").write_text(body + "\n")
    if args.markdown:
        write_section(body, HISTORY)
    print(json.dumps(summary, indent=2))
    return res


if __name__ == "__main__":
    main()
