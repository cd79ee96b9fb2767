"""DAGSTER_OCR_DOCUMENTS_PER_RUN (issue 39): how a tick's or a backfill's new documents are cut into runs."""

from __future__ import annotations

import pytest

from dagster_ocr.deployment import AUTO, DeploymentSettings, batch_sizes


def test_auto_keeps_one_run_per_document_up_to_the_runs_a_tick_may_request():
    assert batch_sizes(0, AUTO, 10) is None
    assert batch_sizes(1, AUTO, 10) is None
    assert batch_sizes(10, AUTO, 10) is None


@pytest.mark.parametrize("n", [11, 19, 20, 99, 1000, 1001, 123_457])
@pytest.mark.parametrize("runs", [1, 4, 10, 64])
def test_auto_cuts_a_larger_tick_into_exactly_r_balanced_batches(n, runs):
    sizes = batch_sizes(n, AUTO, runs)
    if n <= runs:
        assert sizes is None
        return
    assert sizes is not None
    assert len(sizes) == runs  # never fewer runs than the queue runs at once
    assert sum(sizes) == n and max(sizes) - min(sizes) <= 1 and min(sizes) >= 1
    assert max(sizes) == -(-n // runs)


def test_a_fixed_number_batches_every_tick_and_one_never_batches():
    assert batch_sizes(5, 2, 10) == [2, 2, 1]
    assert batch_sizes(1, 100, 10) == [1]
    assert batch_sizes(1000, 1, 10) is None


def test_the_variables_parse_auto_and_numbers_and_refuse_junk_by_name():
    assert DeploymentSettings.from_env({}).documents_per_run == AUTO
    assert DeploymentSettings.from_env({}).runs_per_tick == 10
    env = {"DAGSTER_OCR_DOCUMENTS_PER_RUN": " Auto ", "DAGSTER_OCR_RUNS_PER_TICK": "32"}
    assert DeploymentSettings.from_env(env).documents_per_run == AUTO
    assert DeploymentSettings.from_env(env).runs_per_tick == 32
    assert DeploymentSettings.from_env({"DAGSTER_OCR_DOCUMENTS_PER_RUN": "1"}).documents_per_run == 1
    assert DeploymentSettings.from_env({"DAGSTER_OCR_DOCUMENTS_PER_RUN": "250"}).documents_per_run == 250
    for junk in ("automatic", "0", "-3", "2.5", "10001", "true"):
        with pytest.raises(ValueError, match=r"DAGSTER_OCR_DOCUMENTS_PER_RUN is 'auto' or a number"):
            DeploymentSettings.from_env({"DAGSTER_OCR_DOCUMENTS_PER_RUN": junk})
    with pytest.raises(ValueError, match="runs_per_tick"):
        DeploymentSettings.from_env({"DAGSTER_OCR_RUNS_PER_TICK": "0"})
