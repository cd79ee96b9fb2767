#!/usr/bin/env bash
# Issue 24's GPU benchmark in one call. Run once on an H200 (2026-12-04: BENCHMARKS.md "GPU: speculative
# decoding", rows in bench/gpu_speculative_h200.json; the whole call took 504 s).
# Realistic model sizes with random weights and a fixed output length (EOS off):
# transformers' batched generate vs this project's batched loop, with a shallow draft model, a
# full-size exact copy, page-text drafts that match and noisy ones; K 4 and 8; batch 1, 8, 32;
# bf16 and fp16 for the TrOCR-base-like target, bf16 for the Qwen2-VL-2B-like one; peak memory.
# Budget: each part has its own timeout so the whole call stays under 10 minutes (~8.5 at most).
# Usage:  PYTHON=.venv/bin/python bash bench/gpu_speculative.sh   (writes to $OUT)
# On a GPU machine without this project's environment (the device tool's image has torch and transformers but no
# PyMuPDF, whose 69 MB wheel does not fit its transfer): install the project's transformers pin and pydantic
# (wheels, --target /tmp/site), then PYTHONPATH=/tmp/site:bench/device PYTHON=python3 bash bench/gpu_speculative.sh
# (bench/device/pymupdf is an import-only stand-in: the bench never opens a PDF).
set -uo pipefail
PY=${PYTHON:-python}
OUT=${OUT:-/tmp/gpu_speculative}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv > "$OUT/gpu.txt" 2>&1
"$PY" -c "import torch, transformers; print(torch.__version__, transformers.__version__, torch.cuda.is_available())" \
    >> "$OUT/gpu.txt" 2>&1
common=(--device cuda --size base --ks 4 8 --batch-sizes 1 8 32 --regions-per-batch 2 --max-new-tokens 64)
# encoder-decoder (TrOCR-base-like, ~330M): about 3 minutes
timeout 230 "$PY" bench/speculative.py --family ed --dtypes bf16 fp16 "${common[@]}" \
    --json "$OUT/ed.json" > "$OUT/ed.md" 2> "$OUT/ed.log"
echo "ed rc=$?" >> "$OUT/gpu.txt"
# decoder-only (Qwen2-VL-2B-like text model, 151,936-token vocabulary, bf16 checkpoints): about 4.5 minutes
timeout 280 "$PY" bench/speculative.py --family vlm --dtypes bf16 --drafts model text text_noisy \
    --save-dtype bf16 "${common[@]}" --json "$OUT/vlm.json" > "$OUT/vlm.md" 2> "$OUT/vlm.log"
echo "vlm rc=$?" >> "$OUT/gpu.txt"
cat "$OUT/gpu.txt" "$OUT/ed.md" "$OUT/vlm.md"
