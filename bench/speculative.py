"""Speculative decoding benchmark: target alone against target + draft, side by side in one run.

Builds random TrOCR-style checkpoints (no download) with ``tests/support/tiny_models.py``: a target
whose deeper decoder layers are damped, and a *shallow* draft made of the target's first decoder
layers, so the draft is several times cheaper and still agrees with the target most of the time
(random weights say nothing about accuracy; they give realistic compute per token). EOS is disabled
so every region decodes exactly ``--max-new-tokens`` tokens in both runs, and the texts of both
runs are checked equal. Reports tokens/s and regions/s of each, the speedup (ratio of wall times
measured in the same run), acceptance rate, tokens per target forward and, on CUDA, peak memory.

CPU, tiny models (what CI can run)::

    .venv/bin/python bench/speculative.py --size tiny --device cpu --dtypes fp32 --ks 2 4 6 8 \
        --batch-sizes 8 --regions 16 --max-new-tokens 48 --cpu-threads 1

GPU, TrOCR-base-sized target (~330M parameters), one call of a few minutes::

    .venv/bin/python bench/speculative.py --size base --device cuda --dtypes bf16 fp16 \
        --ks 2 4 6 8 --batch-sizes 1 8 32 --regions 64 --max-new-tokens 96

``--write`` replaces the pending line of the "Speculative decoding (issue 7)" section in
BENCHMARKS.md with the table.
"""

from __future__ import annotations

import argparse
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(1, str(REPO / "tests"))  # tests/support: the tiny-model builders

from support.tiny_models import build_tiny_target, derive_draft  # noqa: E402

from dagster_ocr.ocr.settings import TransformersOcrSettings  # noqa: E402
from dagster_ocr.ocr.speculative import SpeculativeOcrEngine  # noqa: E402
from dagster_ocr.ocr.stats import DecodeStats  # noqa: E402

SIZES = {
    # d_model, decoder layers, encoder layers, image size, draft layers
    "tiny": {"d_model": 256, "decoder_layers": 6, "encoder_layers": 2, "image_size": 64, "keep": 1},
    "base": {"d_model": 1024, "decoder_layers": 12, "encoder_layers": 12, "image_size": 384, "keep": 2},
}


def _engine(target: Path, draft: Path | None, args: argparse.Namespace, dtype: str, batch: int, k: int):
    eng = SpeculativeOcrEngine(
        TransformersOcrSettings(
            target_path=str(target),
            draft_path=str(draft) if draft else None,
            device=args.device,
            dtype=dtype,
            batch_size=batch,
            num_speculative_tokens=k,
            max_new_tokens=args.max_new_tokens,
            adaptive=False,
            cpu_threads=args.cpu_threads,
        )
    )
    m = eng.load()
    # fixed output length: no EOS, so both runs decode exactly max_new_tokens per region
    m.target.generation_config.eos_token_id = None
    return eng


def _run(eng: SpeculativeOcrEngine, crops: list[np.ndarray]) -> tuple[list[str], DecodeStats, float | None]:
    import torch

    cuda = eng.load().device.type == "cuda"
    if cuda:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
    stats = DecodeStats()
    t0 = time.perf_counter()
    out = eng.recognize_crops(crops, stats=stats)
    if cuda:
        torch.cuda.synchronize()
    stats.seconds = time.perf_counter() - t0
    peak = torch.cuda.max_memory_allocated() / 2**30 if cuda else None
    return [t for t, _ in out], stats, peak


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", choices=sorted(SIZES), default="tiny")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--dtypes", nargs="+", default=["fp32"])
    ap.add_argument("--ks", nargs="+", type=int, default=[2, 4, 6, 8])
    ap.add_argument("--batch-sizes", nargs="+", type=int, default=[8])
    ap.add_argument("--regions", type=int, default=16)
    ap.add_argument("--max-new-tokens", type=int, default=48)
    ap.add_argument("--damp", type=float, default=0.05, help="scale of the target's deeper layers")
    ap.add_argument("--cpu-threads", type=int, default=0)
    ap.add_argument("--write", action="store_true", help="write the table into BENCHMARKS.md")
    args = ap.parse_args()

    size = SIZES[args.size]
    rng = np.random.default_rng(0)
    crops = [
        rng.integers(0, 256, (32, int(w), 3), dtype=np.uint8) for w in rng.integers(64, 512, args.regions)
    ]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        target = build_tiny_target(
            Path(tmp) / "target",
            d_model=size["d_model"],
            decoder_layers=size["decoder_layers"],
            encoder_layers=size["encoder_layers"],
            image_size=size["image_size"],
            init_std=0.3,
            damp_deep_layers=args.damp,
            keep_layers=size["keep"],
        )
        draft = derive_draft(target, Path(tmp) / "draft", kind="shallow", keep_layers=size["keep"])
        for dtype in args.dtypes:
            for batch in args.batch_sizes:
                base = _engine(target, None, args, dtype, batch, 1)
                _run(base, crops[:2])  # warm-up
                ref, bstats, bpeak = _run(base, crops)
                rows.append((dtype, batch, "target alone", bstats, None, bpeak, "ref"))
                for k in args.ks:
                    spec = _engine(target, draft, args, dtype, batch, k)
                    _run(spec, crops[:2])
                    out, sstats, speak = _run(spec, crops)
                    same = f"{sum(a == b for a, b in zip(out, ref, strict=True))}/{len(ref)}"
                    rows.append((dtype, batch, f"+ draft K={k}", sstats, bstats.seconds, speak, same))
    lines = [
        "| dtype | batch | decoding | tokens/s | regions/s | speedup | acceptance | tokens/target fwd "
        "| peak GiB | same text as target |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for dtype, batch, what, st, base_s, peak, same in rows:
        speed = f"{base_s / st.seconds:.2f}x" if base_s else "1.00x"
        acc = f"{st.acceptance_rate:.2f}" if st.acceptance_rate is not None else "-"
        lines.append(
            f"| {dtype} | {batch} | {what} | {st.tokens_per_s:.0f} | {st.regions / st.seconds:.2f} | {speed} "
            f"| {acc} | {st.tokens_per_target_forward:.2f} | {f'{peak:.2f}' if peak else '-'} | {same} |"
        )
    table = "\n".join(lines)
    print(table)
    if args.write:
        cmd = "python bench/speculative.py " + " ".join(sys.argv[1:])
        note = (
            f"Command: `{cmd.replace(' --write', '')}`\n\n"
            f"Models: random TrOCR-style, size `{args.size}` ({size}); draft = the target's first "
            f"{size['keep']} decoder layer(s) (+ a copy of its encoder), target's deeper layers damped "
            f"x{args.damp}; {args.regions} regions x {args.max_new_tokens} tokens (EOS off). Machine: "
            f"{platform.machine()}, {platform.processor() or 'cpu'}, device {args.device}.\n\n" + table
        )
        path = REPO / "BENCHMARKS.md"
        text = path.read_text()
        head, sep, rest = text.partition("## Speculative decoding (issue 7)")
        if not sep or "_pending_" not in rest.split("\n## ", 1)[0]:
            raise SystemExit("BENCHMARKS.md: no pending line in the speculative section")
        path.write_text(head + sep + rest.replace("_pending_", note, 1))


if __name__ == "__main__":
    main()
