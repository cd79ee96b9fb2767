"""The skip summary `make test` ends with (tests/conftest.py): one line per reason, the fix, the command."""

from __future__ import annotations

from pathlib import Path

pytest_plugins = ("pytester",)

CONFTEST = Path(__file__).resolve().parents[1] / "conftest.py"


def test_skips_are_grouped_by_reason_with_what_they_need_and_the_command(pytester):
    pytester.makeconftest(CONFTEST.read_text())
    pytester.makepyfile(
        test_gpu="""
        import pytest

        @pytest.mark.skipif(True, reason="needs CUDA")
        @pytest.mark.parametrize("n", [1, 2])
        def test_on_gpu(n):
            pass

        def test_runs():
            pass
        """,
        test_browser="""
        import pytest

        pytest.skip("chromium is not installed (apt-get install -y chromium)", allow_module_level=True)
        """,
    )
    result = pytester.runpytest("-ra")
    result.assert_outcomes(passed=1, skipped=3)
    lines = result.outlines
    title = "3 skipped: what they need, and how to run them"
    start = next(i for i, line in enumerate(lines) if title in line)
    block = lines[start + 1 : start + 6]
    assert block[0] == "2 skipped: test_gpu.py: needs CUDA"
    assert block[1] == "    to run them: run on a machine with an NVIDIA GPU and a CUDA build of torch"
    assert block[2].startswith("    then: ") and block[2].endswith("pytest test_gpu.py")
    assert block[3] == "1 skipped: test_browser.py: chromium is not installed (apt-get install -y chromium)"
    assert block[4].endswith("pytest test_browser.py")
    # the block comes after pytest's own short summary: the last lines before the counts
    assert start > next(i for i, line in enumerate(lines) if "short test summary info" in line)
    assert "1 passed, 3 skipped" in lines[-1]


def test_nothing_is_added_when_nothing_skipped(pytester):
    pytester.makeconftest(CONFTEST.read_text())
    pytester.makepyfile("def test_ok():\n    pass\n")
    result = pytester.runpytest()
    result.assert_outcomes(passed=1)
    assert not [line for line in result.outlines if "what they need" in line]
