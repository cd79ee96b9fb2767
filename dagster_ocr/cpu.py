"""What this CPU's instruction set lets the numerics do (read once from ``/proc/cpuinfo``).

int8 and bf16 kernels are only as exact as the instructions under them, and the CPUs this product
installs on differ (sessions land on AMD EPYC with AVX2 only, and on Intel Xeon with AVX-512 VNNI,
BF16 and AMX): every numeric choice that depends on the CPU asks here, so ``doctor`` can report
the same answer the engines act on.
"""

from __future__ import annotations

import functools
from pathlib import Path

#: int8 dot-product instructions: with them onnxruntime's u8s8 kernels accumulate exactly; without
#: them (AVX2 only) they go through ``vpmaddubsw``, whose 16-bit intermediate sums saturate
INT8_DOT_FLAGS = ("avx512_vnni", "avx_vnni", "amx_int8")
#: native bf16 arithmetic
BF16_FLAGS = ("avx512_bf16", "amx_bf16")


@functools.cache
def cpu_flags() -> frozenset[str]:
    """The feature flags of the first CPU in ``/proc/cpuinfo`` (empty where it cannot be read)."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return frozenset()
    for line in text.splitlines():
        if line.startswith(("flags", "Features")):
            return frozenset(line.split(":", 1)[1].split())
    return frozenset()


def has_int8_dot() -> bool:
    """Whether the CPU has int8 dot-product instructions (VNNI or AMX-INT8)."""
    return any(f in cpu_flags() for f in INT8_DOT_FLAGS)


def has_native_bf16() -> bool:
    """Whether the CPU computes bf16 natively (AVX512-BF16 or AMX-BF16)."""
    return any(f in cpu_flags() for f in BF16_FLAGS)
