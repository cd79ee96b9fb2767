"""How long two OCR workers take past the ideal (total CPU / workers) because of how the pages are
split into ranges: a model of the pool, not a measurement.

The pool hands ranges out in order to whichever worker is free (``ProcessPoolExecutor``'s FIFO);
page costs are drawn around the measured 8.3 CPU s of a dense generated 200-dpi page (+-30%).
Compares the equal ranges used before session 8 with ``ocr_workers.plan_tasks``.

    .venv/bin/python bench/worker_plan_model.py
"""

from __future__ import annotations

import math
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dagster_ocr.ocr_workers import MAX_PAGES_PER_TASK, plan_tasks  # noqa: E402


def equal_ranges(todo: list[int], workers: int) -> list[list[int]]:
    """The plan before session 8: equal ranges, about four per worker."""
    size = max(1, min(MAX_PAGES_PER_TASK, math.ceil(len(todo) / (workers * 4))))
    return [todo[i : i + size] for i in range(0, len(todo), size)]


def makespan(tasks: list[list[int]], workers: int, cost: list[float]) -> tuple[float, float]:
    """(finish time, ideal finish time) of ``tasks`` handed out in order to the first free worker."""
    free = [0.0] * workers
    for task in tasks:
        i = free.index(min(free))
        free[i] += sum(cost[p] for p in task)
    return max(free), sum(free) / workers


def main() -> None:
    workers = 2
    print("| pages | equal ranges: over ideal (max) | plan_tasks: over ideal (max) | ranges |")
    print("|---|---|---|---|")
    for n in (22, 100, 1000):
        over: dict[str, list[float]] = {"equal": [], "plan": []}
        for seed in range(200):
            rng = random.Random(seed)
            cost = [rng.uniform(0.7, 1.3) * 8.3 for _ in range(n)]
            for name, plan in (("equal", equal_ranges), ("plan", plan_tasks)):
                span, ideal = makespan(plan(list(range(n)), workers), workers, cost)
                over[name].append(span / ideal - 1)
        cells = [f"{100 * sum(v) / len(v):.1f}% ({100 * max(v):.1f}%)" for v in over.values()]
        ranges = f"{len(equal_ranges(list(range(n)), workers))} / {len(plan_tasks(list(range(n)), workers))}"
        print(f"| {n} | {cells[0]} | {cells[1]} | {ranges} |")


if __name__ == "__main__":
    main()
