"""Dagster definitions for dagster-ocr: partitions, assets, checks, sensors, schedules, jobs."""
