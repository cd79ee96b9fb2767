"""PyMuPDF's layout model stays unloaded until a layout table finder asks for it (dagster_ocr/__init__.py).

Each check runs in a fresh interpreter: whether the model loads depends on what was imported first.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest


def _layout_installed() -> None:
    # not importorskip: this process imported dagster_ocr first, so pymupdf.layout is kept out of it
    import importlib.metadata

    try:
        importlib.metadata.version("pymupdf_layout")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("pymupdf_layout is not installed (PyMuPDF 2.0 installs it): make test does")


def _run(code: str, **env: str) -> str:
    import os

    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=240,
        env={**os.environ, **env},
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def test_importing_the_package_keeps_the_layout_model_unloaded_and_quiet(corpus) -> None:
    pdf = next(p for p in sorted(corpus.glob("**/*.pdf")) if "us-" in p.name)
    out = _run(
        f"""
        import sys
        import dagster_ocr
        import pymupdf
        assert sys.modules["pymupdf.layout"] is None and pymupdf._get_layout is None
        with pymupdf.open({str(pdf)!r}) as doc:
            doc[0].find_tables(use_layout=False)
        print("ok")
        """,
        DAGSTER_OCR_PYMUPDF_LAYOUT="0",
    )
    assert out == "ok\n", "no 'Consider using the pymupdf_layout package' on stdout"


def test_a_layout_finder_loads_the_model_on_demand(corpus) -> None:
    _layout_installed()
    pdf = next(p for p in sorted(corpus.glob("**/*.pdf")) if "us-" in p.name)
    out = _run(
        f"""
        from dagster_ocr.tables.document import _raw_tables
        import pymupdf
        assert pymupdf._get_layout is None
        with pymupdf.open({str(pdf)!r}) as doc:
            found = _raw_tables(doc[0], "layout_text", refine=False)
        print(callable(pymupdf._get_layout), type(found).__name__)
        """
    )
    assert out == "True list\n"


def test_the_switch_loads_it_as_pymupdf_would() -> None:
    _layout_installed()
    out = _run(
        "import dagster_ocr, pymupdf; print(callable(pymupdf._get_layout))", DAGSTER_OCR_PYMUPDF_LAYOUT="1"
    )
    assert out == "True\n"
