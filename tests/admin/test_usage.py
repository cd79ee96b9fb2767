"""Numeric stage figures for asset metadata: RSS on every machine, GPU memory where CUDA runs."""

from __future__ import annotations

from types import SimpleNamespace

from dagster_ocr.admin import usage


def test_cpu_figures_are_numbers():
    meter = usage.UsageMeter.start()
    figures = meter.figures()
    assert set(figures) == {"stage_seconds", "peak_rss_mb"}
    assert figures["peak_rss_mb"] > 10 and figures["stage_seconds"] >= 0


class _FakeCuda:
    """What UsageMeter reads from torch.cuda, on a 100 MiB device."""

    def __init__(self):
        self.resets = 0

    def reset_peak_memory_stats(self):
        self.resets += 1

    def max_memory_allocated(self):
        return 60 * 2**20

    def max_memory_reserved(self):
        return 90 * 2**20

    def current_device(self):
        return 0

    def get_device_properties(self, index):
        return SimpleNamespace(total_memory=100 * 2**20)


def test_gpu_figures_reset_per_stage_and_report_the_reserved_share(monkeypatch):
    cuda = _FakeCuda()
    monkeypatch.setattr(usage, "_torch_cuda", lambda: cuda)
    figures = usage.UsageMeter.start().figures()
    assert cuda.resets == 1
    assert figures["gpu_peak_memory_mb"] == 60.0 and figures["gpu_peak_reserved_mb"] == 90.0
    assert figures["gpu_memory_fraction"] == 0.9
