"""Batched speculative decoding benchmark (issue 24): the batched target alone against batched
speculation with each draft kind, side by side in one run, same regions, same output length.

Models are random (no download), built with ``tests/support``: a TrOCR-style encoder-decoder
(``--family ed``) or a Qwen2-VL-style decoder-only VLM (``--family vlm``). The target's deeper
layers are damped (x``--damp``; 0 by default), so its first layers decide its output and a
*shallow* draft made of those first layers agrees with it on every token (acceptance 1.0, the
"copy-like draft" upper bound) while costing a fraction of a target forward. EOS is off: every
region decodes exactly ``--max-new-tokens`` tokens in every run, and every run's text is checked
equal to the baseline's.

Rows: ``transformers generate`` is the baseline (batched greedy, what an engine without its own
loop does; 1.00x); ``own loop`` is this project's loop without drafts; ``+ draft model`` the
shallow draft; ``+ exact copy`` a full-size copy of the target as draft (acceptance 1.0 at the
cost of a target forward per draft token: on a GPU, where a forward is memory-bound, still a
win; on a CPU not); ``+ page text`` prompt-lookup drafts from a page text equal to what the
target reads (a text layer that matches) and ``+ page text (noisy)`` from that text with every
fourth character replaced.

CPU (what BENCHMARKS.md reports; 2 shared cores, minutes)::

    python bench/speculative.py --family ed --size tiny --ks 4 8 --batch-sizes 8 --regions 16 \
        --max-new-tokens 32 --cpu-threads 1

GPU: ``bench/gpu_speculative.sh`` (one call, under 10 minutes, both families, bf16/fp16).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(1, str(REPO / "tests"))  # tests/support: the tiny-model builders

from support.tiny_models import build_tiny_target, derive_draft  # noqa: E402
from support.tiny_vlm import build_tiny_vlm, derive_vlm_draft  # noqa: E402

from dagster_ocr.ocr.settings import TransformersOcrSettings  # noqa: E402
from dagster_ocr.ocr.speculative import SpeculativeOcrEngine  # noqa: E402
from dagster_ocr.ocr.stats import DecodeStats  # noqa: E402

SIZES = {
    "ed": {
        # TrOCR-small-like on the CPU; TrOCR-base-like (~330M) on a GPU
        "tiny": {"d_model": 256, "decoder_layers": 6, "encoder_layers": 2, "image_size": 64, "keep": 1},
        "base": {"d_model": 1024, "decoder_layers": 12, "encoder_layers": 12, "image_size": 384, "keep": 2},
    },
    "vlm": {
        "tiny": {"hidden": 256, "layers": 6, "keep": 1, "vocab_size": None, "head_dim": 32},
        # Qwen2-VL-2B-like text model: hidden 1536, 28 layers, GQA 12/2 heads, 151,936-token vocabulary
        "base": {
            "hidden": 1536,
            "layers": 28,
            "keep": 4,
            "vocab_size": 151_936,
            "head_dim": 128,
            "intermediate": 8960,
            "kv_heads": 2,
            "vision_depth": 4,
            "max_pixels": 448 * 448,
        },
    },
}


def build(family: str, size: str, root: Path, damp: float, save_dtype: str | None = None) -> dict[str, Path]:
    s = SIZES[family][size]
    t0 = time.perf_counter()
    if family == "ed":
        target = build_tiny_target(
            root / "target",
            d_model=s["d_model"],
            decoder_layers=s["decoder_layers"],
            encoder_layers=s["encoder_layers"],
            image_size=s["image_size"],
            damp_deep_layers=damp,
            keep_layers=s["keep"],
            emit_eos=False,
        )
        return {
            "target": target,
            "shallow": derive_draft(target, root / "shallow", kind="shallow", keep_layers=s["keep"]),
            "exact": derive_draft(target, root / "exact", kind="exact"),
        }
    extra = {k: s[k] for k in ("intermediate", "kv_heads", "vision_depth", "max_pixels") if k in s}
    target = build_tiny_vlm(
        root / "target",
        hidden=s["hidden"],
        layers=s["layers"],
        damp_deep_layers=damp,
        keep_layers=s["keep"],
        vocab_size=s["vocab_size"],
        head_dim=s["head_dim"],
        emit_eos=False,
        save_dtype=save_dtype,
        **extra,
    )
    print(f"  built {family}/{size} target in {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
    return {
        "target": target,
        "shallow": derive_vlm_draft(target, root / "shallow", kind="shallow", keep_layers=s["keep"]),
        "exact": derive_vlm_draft(target, root / "exact", kind="exact"),
    }


def engine(
    paths: dict[str, Path], draft: str | None, args: argparse.Namespace, dtype: str, batch: int, k: int
):
    eng = SpeculativeOcrEngine(
        TransformersOcrSettings(
            target_path=str(paths["target"]),
            draft_path=str(paths[draft]) if draft else None,
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
    m.target.generation_config.eos_token_id = None  # fixed output length in every run
    return eng


def _sync(eng: SpeculativeOcrEngine) -> None:
    import torch

    if eng.load().device.type == "cuda":
        torch.cuda.synchronize()


def hf_generate(eng: SpeculativeOcrEngine, crops: list[np.ndarray], batch: int) -> list[str]:
    """transformers' batched greedy ``generate``, chunked like the engine: the baseline."""
    import torch
    from transformers.modeling_outputs import BaseModelOutput

    m = eng.load()
    texts: list[str] = []
    order = sorted(range(len(crops)), key=lambda i: crops[i].shape[1] / crops[i].shape[0])
    out_by: dict[int, str] = {}
    kw: dict[str, Any] = {
        "max_new_tokens": eng.settings.max_new_tokens,
        "do_sample": False,
        "eos_token_id": None,
    }
    with torch.inference_mode():
        for pos in range(0, len(order), batch):
            chunk = order[pos : pos + batch]
            sub = [crops[i] for i in chunk]
            if m.family == "encoder_decoder":
                hidden = m.target.get_encoder()(pixel_values=eng._pixels(sub, m.target_pre)).last_hidden_state
                prompt = torch.tensor([eng._prompt_ids()], device=m.device).expand(len(sub), -1)
                seqs = m.target.generate(
                    decoder_input_ids=prompt, encoder_outputs=BaseModelOutput(last_hidden_state=hidden), **kw
                )
            else:
                inputs = eng.vlm_inputs(sub)
                prompt = inputs["input_ids"]
                seqs = m.target.generate(**inputs, pad_token_id=m.tokenizer.pad_token_id, **kw)
            for i, row in zip(chunk, seqs[:, prompt.shape[1] :].tolist(), strict=True):
                out_by[i] = m.tokenizer.decode(row, skip_special_tokens=True)
    texts = [out_by[i] for i in range(len(crops))]
    return texts


def timed(fn, eng: SpeculativeOcrEngine, repeats: int) -> tuple[Any, float, float | None]:
    import torch

    cuda = eng.load().device.type == "cuda"
    times, peak, out = [], None, None
    for _ in range(repeats):
        if cuda:
            torch.cuda.reset_peak_memory_stats()
        _sync(eng)
        t0 = time.perf_counter()
        out = fn()
        _sync(eng)
        times.append(time.perf_counter() - t0)
        if cuda:
            peak = torch.cuda.max_memory_allocated() / 2**30
    return out, statistics.median(times), peak


def _noisy(text: str) -> str:
    return "".join("q" if i % 4 == 3 else ch for i, ch in enumerate(text))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--family", choices=["ed", "vlm"], default="ed")
    ap.add_argument("--size", choices=["tiny", "base"], default="tiny")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--dtypes", nargs="+", default=["fp32"])
    ap.add_argument("--ks", nargs="+", type=int, default=[4, 8])
    ap.add_argument("--batch-sizes", nargs="+", type=int, default=[8])
    ap.add_argument("--regions", type=int, default=16)
    ap.add_argument("--max-new-tokens", type=int, default=32)
    ap.add_argument(
        "--regions-per-batch",
        type=int,
        default=0,
        help="regions = this x batch (at least 8) instead of --regions",
    )
    ap.add_argument(
        "--save-dtype", default=None, help="build the random checkpoints in this dtype (bf16: less disk)"
    )
    ap.add_argument("--damp", type=float, default=0.0, help="scale of the target's deeper layers")
    ap.add_argument("--drafts", nargs="+", default=["model", "exact", "text", "text_noisy"])
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--cpu-threads", type=int, default=0)
    ap.add_argument("--json", type=Path, help="also write the rows here")
    ap.add_argument(
        "--batch-variance",
        action="store_true",
        help="also decode with the target alone one region at a time: its 'same text' against the batched"
        " reference is how far the target's own greedy output moves with the batch (bf16/fp16 kernels)",
    )
    args = ap.parse_args()

    h = 32 if args.family == "ed" else 56
    rows: list[dict[str, Any]] = []
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        paths = build(args.family, args.size, Path(tmp), args.damp, args.save_dtype)
        for dtype in args.dtypes:
            for batch in args.batch_sizes:
                n = max(8, args.regions_per_batch * batch) if args.regions_per_batch else args.regions
                rng = np.random.default_rng(0)
                crops = [
                    rng.integers(0, 256, (h, int(w), 3), dtype=np.uint8) for w in rng.integers(64, 448, n)
                ]
                base = engine(paths, None, args, dtype, batch, 1)
                hf_generate(base, crops[:2], batch)  # warm-up
                ref, base_s, peak = timed(
                    lambda b=base, bs=batch, c=crops: hf_generate(b, c, bs), base, args.repeats
                )
                n_tok = len(crops) * args.max_new_tokens

                def row(
                    what, st, secs, peak, texts, _dtype=dtype, _batch=batch, _base=base_s, _n=n_tok, _ref=ref
                ):
                    rows.append(
                        {
                            "dtype": _dtype,
                            "batch": _batch,
                            "decoding": what,
                            "tokens_per_s": _n / secs,
                            "regions_per_s": len(_ref) / secs,
                            "speedup": _base / secs,
                            "acceptance": st.acceptance_rate if st else None,
                            "tokens_per_round": st.tokens_per_target_forward if st else None,
                            "peak_gib": peak,
                            "same": f"{sum(a == b for a, b in zip(texts, _ref, strict=True))}/{len(_ref)}",
                        }
                    )
                    if args.json:  # after every row: a run cut short by its timeout keeps what it measured
                        args.json.write_text(
                            json.dumps({"args": {a: str(v) for a, v in vars(args).items()}, "rows": rows})
                        )

                row("transformers generate", None, base_s, peak, ref)
                if args.batch_variance and batch > 1:
                    one, one_s, one_peak = timed(lambda b=base, c=crops: hf_generate(b, c, 1), base, 1)
                    row("transformers generate, one region at a time", None, one_s, one_peak, one)
                refs = ref  # the page text that matches what the target reads
                plans: list[tuple[str, str | None, str, list[str] | None, int]] = [
                    ("own loop", None, "off", None, 1)
                ]
                for k in args.ks:
                    if "model" in args.drafts:
                        plans.append((f"+ draft model K={k}", "shallow", "draft_model", None, k))
                    if "exact" in args.drafts:
                        plans.append((f"+ exact copy K={k}", "exact", "draft_model", None, k))
                    if "text" in args.drafts:
                        plans.append((f"+ page text K={k}", None, "page_text", refs, k))
                    if "text_noisy" in args.drafts:
                        plans.append(
                            (f"+ page text (noisy) K={k}", None, "page_text", [_noisy(r) for r in refs], k)
                        )
                for what, draft, kind, references, k in plans:
                    eng = engine(paths, draft, args, dtype, batch, k)
                    eng.recognize_crops(
                        crops[:2], kind=kind, k=k, references=references[:2] if references else None
                    )
                    stats = DecodeStats()

                    def run(e=eng, kd=kind, kk=k, rf=references, st=stats, c=crops):
                        return e.recognize_crops(c, kind=kd, k=kk, stats=st, references=rf)

                    out, secs, peak = timed(run, eng, args.repeats)
                    row(what, stats if kind != "off" else None, secs, peak, [t for t, _ in out])
                    print(f"  {dtype} b{batch} {what}: {secs:.2f}s", file=sys.stderr, flush=True)
    header = (
        "| dtype | batch | decoding | tokens/s | regions/s | speedup | acceptance | tokens/round "
        "| peak GiB | same text |\n|---|---|---|---|---|---|---|---|---|---|"
    )
    lines = [header]
    for r in rows:
        acc = f"{r['acceptance']:.2f}" if r["acceptance"] is not None else "-"
        tpr = f"{r['tokens_per_round']:.2f}" if r["tokens_per_round"] is not None else "-"
        peak = f"{r['peak_gib']:.2f}" if r["peak_gib"] else "-"
        lines.append(
            f"| {r['dtype']} | {r['batch']} | {r['decoding']} | {r['tokens_per_s']:.0f} "
            f"| {r['regions_per_s']:.2f} "
            f"| {r['speedup']:.2f}x | {acc} | {tpr} | {peak} | {r['same']} |"
        )
    print("\n".join(lines))
    print(
        f"\n{args.family}/{args.size} on {args.device}: {time.perf_counter() - started:.0f} s",
        file=sys.stderr,
    )
    if args.json:
        args.json.write_text(
            json.dumps({"args": {k: str(v) for k, v in vars(args).items()}, "rows": rows}, indent=1)
        )


if __name__ == "__main__":
    main()
