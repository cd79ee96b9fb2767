"""Cell F1 on table test files from public source distributions: documents and classes we never tuned on.

Issue 37: the corpus' check split reads 0.95 cell F1 where documents kept from us read 0.86, so the
check side is grown here with public test PDFs that carry their own expectations, all counted as
**check** (never tune on them, never change a rule because of one).

Where the items come from (fetched into ``~/.cache/dagster-ocr/extra-check``, never into the repo):

* tabula-py 2.10.0's sdist (MIT): ``tests/resources/*.pdf`` with the CSVs ``tests/test_read_pdf_table.py``
  asserts ``read_pdf`` returns, each with the call's parameters (stream, pages, columns, areas).
* PyMuPDF 1.26.7's sdist (AGPL-3.0): ``tests/resources/*.pdf`` with the cell values
  ``tests/test_tables.py`` asserts ``find_tables()`` returns (a pickled extract, a Markdown rendering or
  a literal list of rows), and one page on which it asserts there is no table.
* camelot-py 2.0.0's sdist (MIT) ships its tests' code but neither ``tests/files`` nor ``tests/data.py``
  (nor do its 1.0.9, 0.11.0, 0.8.2 sdists, camelot-fork's or pypdf-table-extraction's). One PDF its tests
  assert cells on is in a sdist here and not in the corpus: ``tabula/12s0324.pdf``, tabula-py's
  ``tests/resources/12s0324.pdf``; ``tests/test_stream.py::test_stream_two_tables`` asserts its two tables
  (``flavor="stream"``), whose literal from camelot's ``tests/data.py`` is kept in
  ``bench/tables_extra_camelot.json`` (see ``_camelot_items`` for the variants left out).
* pdfplumber 0.11.10's sdist ships ``tests/*.py`` but no ``tests/pdfs``: no item.
* PyMuPDF 2.0's sdist (AGPL-3.0, the venv's PyMuPDF): ``tests/test_tables.py::test_dotted_grid`` asserts
  the cells of the one table its layout-model finder (2.0's default) reads on
  ``tests/resources/dotted-gridlines.pdf`` (1.26.7's tests assert its table count and sizes only). 2.0's
  other layout-mode expectations are on PDFs already items here or on documents the tests build.
* pdf2docx 0.5.13's sdist (MIT): ``test/samples/demo-table.pdf`` with the last table ``test/test.py``
  asserts ``Converter.extract_tables(end=1)`` returns. pdf2docx is not in the venv: no recorded-parameters
  row for it. Its sdist's metadata says 0.5.6a1, so pip discards it; it is fetched from the link pip finds.
* pymupdf4llm 1.28.2's sdist (AGPL-3.0 or Artifex's commercial licence; the venv has 2.0, which has no
  sdist): ``tests/test_sce_150_1.pdf`` with the two Markdown tables of the page ``tests/test_sce-150.py``
  asserts ``to_markdown`` returns (``tests/test_sce_150_1.expected.md``; the venv's 2.0 writes it byte for
  byte, so its row is ``pymupdf4llm to_markdown (recorded parameters)``). Left out: test_sce_150_2 (a
  scanned page with an OCR text layer, its expected cells cut words apart: "HOLIDA", "YMOVI", "ES"),
  test_sce_150_3 and test_370 (no table in the expected Markdown), test_to_markdown_link_malicious (no
  table, a test of links), test_table_html (counts and HTML/JSON parity only), test_137 (asserts nothing).

Looked at, no item (no PDF with cell-level expectations in the sdist): img2table 2.0.0 (its PDF test asserts
titles, boxes and table shapes only; its cell expectations are on PNGs), pdf-table-extractor 0.1.2 (one cell
of ``tests/test.pdf``), pdftables 0.0.4 and pdftables.six 0.0.5 (tests read ``fixtures/`` not shipped),
pdfplumber 0.5.28, docling 2.143.0 (a pyproject and README only), docling-parse 7.23.1, docling-ibm-models
4.0.4, docling-eval 1.4.2, gmft 0.4.4, colibrie 1.2, py-pdf-parser 0.13.0, excalibur-py 1.0.1, pdf-tables
0.0.1, tabled-pdf 0.2.0, opendataloader-pdf 2.5.16, unstructured 0.27.35, nlm-ingestor 0.1.7, spartan-tables
2.2.0, pdf-table-extract 0.2, tabulex 0.1.0, pdftotree 0.5.0, borb 3.0.9, pdf2table 0.1.4, ragtable-extract
0.1.1, quotable 0.1.0, pdf-table-gate 0.1.0, docling-core 2.104.0, unstructured-inference 1.6.14,
pdf2tables 0.3.5, tableta 0.2.1, llama-index-readers-pdf-table 0.6.0, tableParser 1.0.1, pdf-table2json 2.0.1,
pdf-nested-table-extractor 0.0.1, camelot-py 0.4.1, 0.9.0, 0.10.1 (no PDF in any of these); marker-pdf 2.0.0
(three olmOCR-bench pages, none a table test); pypdf2table 0.2.2 (eight PDFs, its test counts the files it
writes); table-stitcher 0.5.3 (MIT; 28 PDFs, but each expectation is a stitching outcome, a logical table's
header, first and last row and shape over docling's JSON, not its cells: partial rows that cell-multiset F1
cannot score). tablers 0.9.0 has no sdist.

Inputs already in the corpus (same sha256 as an entry of MANIFEST.json) are left out. The sdists are
fetched with ``pip download --no-deps --no-binary :all:``; PyMuPDF's cannot be (pip prepares its
metadata by building MuPDF, which it downloads from outside PyPI), so its sdist is fetched from the
link ``pip download -vv`` reports on PyPI, as is any other sdist pip fails on. Without network or pip,
items whose sdist is not cached yet are skipped with a message.

Tools, each on the same items: ``dagster_ocr`` with its default settings (one run per file, whatever
the expectation); the peers in the venv (pdfplumber lines and text strategies, camelot stream and
lattice, tabula-py defaults, see bench/tables_peers.py); and the tool that wrote each expectation with
the parameters it was written with (``tabula (recorded parameters)``, ``pymupdf find_tables (recorded
parameters)``, ``camelot (recorded parameters)``, on that tool's items only).

Metric: cell-content multiset F1 as in bench/tables_peers.py (texts compared whitespace- and
case-insensitively, Markdown emphasis and ``<br>`` of a Markdown expectation dropped); an item whose
expectation covers some tables of its pages only (``area``) counts only predicted tables at least half
of whose cells are expected. An item that asserts there is no table adds its predicted cells to the
false positives. Per item and micro-averaged (``mean`` in the table: over every item's cells) plus the
mean of the per-item F1 (macro); then both per source (the tool whose tests wrote the expectations:
tabula, pymupdf, camelot, pdf2docx, pymupdf4llm) and over the tabula and camelot items together, the class
of the figure on documents kept from us ("cell-content F1, 18 tabula/camelot items").

    PYTHONPATH=. .venv/bin/python bench/tables_extra_check.py [--cache DIR] [--tools a,b] [--json OUT]
"""

from __future__ import annotations

import argparse
import ast
import csv
import hashlib
import importlib.util
import json
import logging
import pickle
import re
import subprocess
import sys
import tarfile
import urllib.request
import warnings
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pymupdf

sys.path.insert(0, str(Path(__file__).resolve().parent))

import tables_peers as TP  # noqa: E402

Grid = list[list[str]]
Parts = list[tuple[int, Grid]]

CACHE = Path.home() / ".cache" / "dagster-ocr" / "extra-check"

#: sdist -> (version, licence); an sdist's key is its name on PyPI, or ``name@version`` for a second version
SDISTS: dict[str, tuple[str, str]] = {
    "tabula-py": ("2.10.0", "MIT"),
    "pymupdf": ("1.26.7", "AGPL-3.0"),
    "camelot-py": ("2.0.0", "MIT"),  # its tests only: no PDF, no tests/data.py in the sdist
    "pymupdf@2.0": ("2.0", "AGPL-3.0"),  # the venv's PyMuPDF: its layout-mode expectations
    "pdf2docx": ("0.5.13", "MIT"),
    "pymupdf4llm": ("1.28.2", "AGPL-3.0 or Artifex commercial"),
    "table-stitcher": ("0.5.3", "MIT"),  # multi-page fixtures: bench/tables_multipage_check.py
}


def _dist(key: str) -> str:
    """The PyPI name of an sdist key of SDISTS."""
    return key.split("@")[0]


#: camelot's expected tables for the one input of its tests that a reachable sdist ships (see _camelot_items)
CAMELOT_EXPECTED = Path(__file__).resolve().parent / "tables_extra_camelot.json"


@dataclass
class Item:
    """One expectation: a PDF from an sdist, the pages it covers, the tables it asserts."""

    name: str
    package: str
    path: str  # inside the sdist
    expectation: str  # where in the sdist the expected cells are asserted
    tool: str  # the tool that wrote the expectation: "tabula", "pymupdf" or "camelot"
    params: dict[str, Any]  # that tool's call, as the test makes it
    pages: list[int]  # 0-based
    area: bool  # the expectation covers some of the pages' tables only
    truth: list[Grid]
    note: str = ""
    pdf: Path = field(default_factory=Path)
    sha256: str = ""
    expect_package: str = ""  # the sdist whose tests assert the expectation, where not ``package``

    @property
    def source(self) -> str:
        version, licence = SDISTS[self.package]
        out = f"{_dist(self.package)} {version} sdist, {self.path} ({licence})"
        out += f"; expectation: {self.expectation}"
        if self.expect_package:
            out += " ({} {}, {})".format(_dist(self.expect_package), *SDISTS[self.expect_package])
        return out


# ---------------------------------------------------------------- fetching


def _sdist_root(package: str, cache: Path) -> Path | None:
    """The unpacked sdist folder of ``package`` under ``cache``, fetched and unpacked on first use."""
    version, _ = SDISTS[package]
    sdist_dir = cache / "sdist"
    sdist_dir.mkdir(parents=True, exist_ok=True)
    name = _dist(package)
    stem = f"{name.replace('-', '_')}-{version}"
    found = [p for p in sdist_dir.glob("*.tar.gz") if p.name.lower() == f"{stem}.tar.gz".lower()]
    if not found:
        spec = f"{name}=={version}"
        pip = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:", spec]
        res = None
        if name != "pymupdf":
            res = subprocess.run([*pip, "-q", "-d", str(sdist_dir)], capture_output=True, text=True)
        if res is None or res.returncode:
            # pip prepares PyMuPDF's metadata by building MuPDF, fetched from outside PyPI, and discards
            # an sdist whose metadata names another version (pdf2docx 0.5.13's says 0.5.6a1): take the
            # sdist from the PyPI link pip finds instead
            res = subprocess.run([*pip, "-vv", "-d", str(sdist_dir / "tmp")], capture_output=True, text=True)
            links = re.findall(
                r"Found link (https://\S+/" + re.escape(stem) + r"\.tar\.gz)", res.stdout, re.I
            )
            if not links:
                print(f"skipped {spec}: pip found no sdist link", file=sys.stderr)
                return None
            dest = sdist_dir / links[0].rsplit("/", 1)[1]
            urllib.request.urlretrieve(links[0], dest)
        found = [p for p in sdist_dir.glob("*.tar.gz") if p.name.lower() == f"{stem}.tar.gz".lower()]
        if not found:
            return None
    tgz = found[0]
    root = cache / "unpacked" / tgz.name[: -len(".tar.gz")]
    if not root.is_dir():
        with tarfile.open(tgz) as tf:
            members = [m for m in tf.getmembers() if m.isfile() and re.search(r"/tests?/", m.name)]
            tf.extractall(cache / "unpacked", members=members, filter="data")
    return root


# ---------------------------------------------------------------- expectations


def _csv(path: Path) -> Grid:
    with path.open(encoding="utf-8", newline="") as f:
        return [list(r) for r in csv.reader(f)]


class _DataOnly(pickle.Unpickler):
    """Plain containers only: an expectation pickle from a public sdist must not run code."""

    def find_class(self, module: str, name: str) -> Any:
        raise pickle.UnpicklingError(f"refused {module}.{name}")


_MD_MARK = re.compile(r"<br>|\*\*|~~|`|(?<![\w])_|_(?![\w])")


def _markdown(text: str) -> Grid:
    """Rows of a Markdown table (PyMuPDF's ``to_markdown``), emphasis marks and ``<br>`` dropped."""
    rows = []
    for line in text.strip().splitlines():
        if not line.startswith("|") or set(line) <= set("|-"):
            continue
        rows.append([_MD_MARK.sub(" ", c).strip() for c in line.strip().strip("|").split("|")])
    return rows


def _markdown_tables(text: str) -> list[Grid]:
    """Each run of ``|`` lines of a Markdown text as a table (see _markdown)."""
    tables: list[Grid] = []
    block: list[str] = []
    for line in [*text.splitlines(), ""]:
        if line.startswith("|"):
            block.append(line)
        elif block:
            tables.append(_markdown("\n".join(block)))
            block = []
    return [t for t in tables if t]


def _tabula_items(root: Path) -> list[Item]:
    res = root / "tests" / "resources"
    test = "tests/test_read_pdf_table.py"
    return [
        Item(
            "tabula-py/data p1",
            "tabula-py",
            "tests/resources/data.pdf",
            f"{test} test_read_pdf: data_1.csv",
            "tabula",
            {"pages": 1, "stream": True},
            [0],
            False,
            [_csv(res / "data_1.csv")],
        ),
        Item(
            "tabula-py/data p2-3",
            "tabula-py",
            "tests/resources/data.pdf",
            f"{test} test_read_pdf_with_option: data_2-3.csv",
            "tabula",
            {"pages": "2-3", "stream": True, "guess": False, "multiple_tables": False},
            [1, 2],
            False,
            [_csv(res / "data_2-3.csv")],
            note="one table read over two whole pages (guess off): page 2 holds two tables",
        ),
        Item(
            "tabula-py/campaign_donors",
            "tabula-py",
            "tests/resources/campaign_donors.pdf",
            f"{test} test_read_pdf_with_columns: campaign_donors.csv",
            "tabula",
            {"pages": 1, "columns": [47, 147, 256, 310, 375, 431, 504], "guess": False},
            [0],
            False,
            [_csv(res / "campaign_donors.csv")],
            note="column positions given to tabula",
        ),
        Item(
            "tabula-py/MultiColumn",
            "tabula-py",
            "tests/resources/MultiColumn.pdf",
            f"{test} test_read_pdf_with_multiple_areas: MultiColumn.csv",
            "tabula",
            {"pages": 1, "area": [[0, 0, 451, 212], [0, 212, 451, 425]], "multiple_tables": False},
            [0],
            False,
            [_csv(res / "MultiColumn.csv")],
            note="one table set in two side-by-side halves, read as one (two areas given to tabula)",
        ),
    ]


def _pymupdf_items(root: Path) -> list[Item]:
    res = root / "tests" / "resources"
    test = "tests/test_tables.py"
    text = (root / test).read_text(encoding="utf-8")
    with (res / "chinese-tables.pickle").open("rb") as f:
        chinese = [[[c or "" for c in r] for r in t] for t in _DataOnly(f).load()["extracts"]]
    md = re.search(r'md_expected = \(\n((?:\s*"[^\n]*"\n)+)\s*\)', text)
    assert md, "test_markdown's expectation not found"
    strict = _markdown("".join(json.loads(s) for s in re.findall(r'"[^\n]*"', md.group(1))))
    styled = re.search(r'text = """(.*?)"""', text[text.index("def test_md_styles") :], re.S)
    assert styled, "test_md_styles' expectation not found"

    def literal(after: str, name: str) -> Grid:
        start = text.index(name, text.index(after))
        block = text[text.index("[", start) : text.index("\n        ]\n", start) + 10]
        rows = json.loads(re.sub(r",\s*\]", "]", block.replace("None", "null")))
        return [[c or "" for c in r] for r in rows]

    boxes = text[text.index("def test_boxes_param") :]
    small = json.loads(re.sub(r",\s*\]", "]", boxes[boxes.index("== [") + 3 : boxes.index("]\n\n") + 1]))
    return [
        Item(
            "pymupdf/chinese-tables",
            "pymupdf",
            "tests/resources/chinese-tables.pdf",
            f"{test} test_table1: chinese-tables.pickle 'extracts' (both tables)",
            "pymupdf",
            {},
            [0],
            False,
            chinese,
            note="ruled Chinese tables, multi-line cells",
        ),
        Item(
            "pymupdf/strict-yes-no",
            "pymupdf",
            "tests/resources/strict-yes-no.pdf",
            f"{test} test_markdown: md_expected (MuPDF >= 1.26.3)",
            "pymupdf",
            {"strategy": "lines_strict"},
            [0],
            True,
            [strict],
            note="table drawn with borderless filled boxes and lines; the test's tables[0] only",
        ),
        Item(
            "pymupdf/small-table",
            "pymupdf",
            "tests/resources/small-table.pdf",
            f"{test} test_boxes_param: tab.extract()",
            "pymupdf",
            {"boxes_from_words": True},
            [0],
            False,
            [[[c or "" for c in r] for r in small]],
            note="a box with no inner rulings: the test supplies column and row boxes from the words",
        ),
        Item(
            "pymupdf/test_4017",
            "pymupdf",
            "tests/resources/test_4017.pdf",
            f"{test} test_4017: expected_a, expected_b (the page's last two tables)",
            "pymupdf",
            {"add_lines": None},
            [0],
            True,
            [literal("def test_4017", "expected_a"), literal("def test_4017", "expected_b")],
            note="its own comment: 'expect current incorrect output' (a PASS cell repeated per sub-row)",
        ),
        Item(
            "pymupdf/test-styled-table",
            "pymupdf",
            "tests/resources/test-styled-table.pdf",
            f"{test} test_md_styles: to_markdown() text",
            "pymupdf",
            {},
            [0],
            False,
            [_markdown(styled.group(1).encode().decode("unicode_escape"))],
            note="cells in bold, italic, strikeout, monospace; multi-line cells",
        ),
        Item(
            "pymupdf/battery-file-22",
            "pymupdf",
            "tests/resources/battery-file-22.pdf",
            f"{test} test_battery_file: len(tabs.tables) == 0",
            "pymupdf",
            {},
            [0],
            False,
            [],
            note="no table on the page: every predicted cell is a false positive",
        ),
    ]


def _camelot_items(root: Path) -> list[Item]:
    """camelot-py's expectations on the inputs of its tests that a reachable sdist ships.

    camelot-py's sdists (2.0.0, and 1.0.9, 0.11.0, 0.8.2, like the forks camelot-fork 0.20.1 and
    pypdf-table-extraction 1.0.2) ship the test code only: neither ``tests/files`` nor ``tests/data.py``.
    Of the PDFs its tests read, one is in a reachable sdist and not in the corpus: ``tabula/12s0324.pdf``,
    tabula-py's ``tests/resources/12s0324.pdf``. Its tests assert on it (camelot-py 2.0.0):

    ===========================================  ==================================  ========================
    test                                         call                                kept
    ===========================================  ==================================  ========================
    test_stream.py::test_stream_two_tables       ``flavor="stream"``                 yes: both tables
    test_network.py::test_network_two_tables_a   ``flavor="network"``                no: the same two tables
    test_hybrid.py::test_hybrid_two_tables       ``flavor="hybrid"`` (network data)  no: the same two tables
    test_stream.py::test_stream_fewer_columns..  ``flavor="stream", columns=[...]``  no: asserts a count only
    test_plotting.py, test_utils.py              plots, text bounding boxes          no: no cell content
    ===========================================  ==================================  ========================

    The other PDFs its tests read are in the corpus (us-007, m27, health, ... and, as tabula-java's
    copies, schools, eu-009a, eu-016, us-008) or in none of the sdists looked at (foo.pdf, budget.pdf,
    birdisland.pdf, tabula/us-030.pdf, arabic.pdf, ...). The stream expectation keeps the title and
    headnote lines camelot's stream flavor reads above each table as rows of it.
    """
    test = root / "tests" / "test_stream.py"
    text = test.read_text(encoding="utf-8")
    body = text[text.index("def test_stream_two_tables") :]
    body = body[: body.index("\ndef ")]
    needles = (
        "data_stream_two_tables_1",
        "data_stream_two_tables_2",
        "tabula/12s0324.pdf",
        'flavor="stream"',
    )
    for needle in needles:
        assert needle in body, f"camelot's test_stream_two_tables no longer reads {needle}"
    tables = json.loads(CAMELOT_EXPECTED.read_text(encoding="utf-8"))["tables"]
    return [
        Item(
            "camelot/12s0324",
            "tabula-py",
            "tests/resources/12s0324.pdf",
            "tests/test_stream.py test_stream_two_tables: tests/data.py data_stream_two_tables_1, _2"
            f" (kept in bench/{CAMELOT_EXPECTED.name})",
            "camelot",
            {"flavor": "stream"},
            [0],
            False,
            [tables["data_stream_two_tables_1"], tables["data_stream_two_tables_2"]],
            note="two tables one above the other: dot leaders, spanning heads, headnote rows",
            expect_package="camelot-py",
        ),
    ]


def _pymupdf2_items(root: Path) -> list[Item]:
    """PyMuPDF 2.0's layout-mode expectations on PDFs of its tests that are not items already.

    2.0's ``tests/test_tables.py`` asserts, where layout is used (its default), the cells of
    test_table1, test_table2 (chinese-tables), test_add_lines, test_boxes_param (small-table),
    test_paths_param (strict-yes-no), test_4017 and test_md_styles: PDFs already items here from 1.26.7's
    tests, left as they are (the layout-mode variants of the same tables). test_3148 asserts no table on a
    page it builds; the refine/union tests assert on fragments they draw: no PDF of the sdist. That leaves
    test_dotted_grid, whose non-layout branch (1.26.7's whole test) asserts table count and sizes only.
    The expectation keeps the layout finder's text: "1.357" on the page reads ``'1357\\n.'`` there.
    """
    test = "tests/test_tables.py"
    text = (root / test).read_text(encoding="utf-8")
    body = text[text.index("def test_dotted_grid") :]
    body = body[: body.index("\ndef ")]
    assert "dotted-gridlines.pdf" in body and "if util._use_layout():" in body, "test_dotted_grid changed"
    literal = body[body.index("expected = ") + len("expected = ") : body.index("_check_tables(expected")]
    tables = ast.literal_eval(literal.strip())  # a literal of lists of str: nothing is run
    return [
        Item(
            "pymupdf/dotted-gridlines",
            "pymupdf@2.0",
            "tests/resources/dotted-gridlines.pdf",
            f"{test} test_dotted_grid: expected (layout branch, PyMuPDF 2.0's default)",
            "pymupdf",
            {"use_layout": True},
            [0],
            False,
            [[[c or "" for c in r] for r in t] for t in tables],
            note="grid of dotted rules, merged region/province cells; its numbers read as '1357\\n.' (1.357)",
        ),
    ]


def _pdf2docx_items(root: Path) -> list[Item]:
    """pdf2docx's one cell-level expectation: ``test/test.py::test_extracting_table``.

    Its other table samples (demo-table-*.pdf) are tested by converting to DOCX and back and comparing the
    page images, or (demo-table-empty-cell) by the type of the result: no cell content.
    """
    test = "test/test.py"
    text = (root / test).read_text(encoding="utf-8")
    body = text[text.index("def test_extracting_table") :]
    body = body[: body.index("assert table==sample")]
    assert "filename = 'demo-table'" in body and "tables[-1]" in body, "test_extracting_table changed"
    sample = ast.literal_eval(body[body.index("sample = ") + len("sample = ") :].strip())
    return [
        Item(
            "pdf2docx/demo-table",
            "pdf2docx",
            "test/samples/demo-table.pdf",
            f"{test} test_extracting_table: sample (the page's last table)",
            "pdf2docx",
            {"end": 1},
            [0],
            True,
            [[[c or "" for c in r] for r in sample]],
            note="three ruled tables on the page, the last asserted: merged head cell, empty cells",
        ),
    ]


def _pymupdf4llm_items(root: Path) -> list[Item]:
    """pymupdf4llm's one Markdown expectation with tables on a text PDF (see the module docstring)."""
    test = "tests/test_sce-150.py"
    text = (root / test).read_text(encoding="utf-8")
    body = text[text.index("def test_sce_150_1") :]
    body = body[: body.index("\ndef ")]
    for needle in ("test_sce_150_1.expected.md", "header=True", "footer=True", "assert md == expected"):
        assert needle in body, f"pymupdf4llm's test_sce_150_1 no longer reads {needle}"
    md = (root / "tests" / "test_sce_150_1.expected.md").read_text(encoding="utf-8").replace("\r", "")
    return [
        Item(
            "pymupdf4llm/test_sce_150_1",
            "pymupdf4llm",
            "tests/test_sce_150_1.pdf",
            f"{test} test_sce_150_1: tests/test_sce_150_1.expected.md (its two tables)",
            "pymupdf4llm",
            {"write_images": False, "embed_images": False, "header": True, "footer": True},
            [0],
            False,
            _markdown_tables(md),
            note="two borderless rate tables in monospace, a label and its '-' on two lines read as one cell",
        ),
    ]


def load_items(cache: Path, corpus: Path | None) -> tuple[list[Item], list[str]]:
    """Every item whose sdist is available, less those whose PDF is already in the corpus."""
    known: set[str] = set()
    if corpus and (corpus / "MANIFEST.json").is_file():
        known = {f["sha256"] for f in json.loads((corpus / "MANIFEST.json").read_text())["files"]}
    items: list[Item] = []
    notes: list[str] = []
    roots: dict[str, Path | None] = {}
    # (package whose tests assert the expectations, builder, packages whose sdists it needs)
    for package, build, needs in (
        ("tabula-py", _tabula_items, ("tabula-py",)),
        ("pymupdf", _pymupdf_items, ("pymupdf",)),
        ("camelot-py", _camelot_items, ("camelot-py", "tabula-py")),
        ("pymupdf@2.0", _pymupdf2_items, ("pymupdf@2.0",)),
        ("pdf2docx", _pdf2docx_items, ("pdf2docx",)),
        ("pymupdf4llm", _pymupdf4llm_items, ("pymupdf4llm",)),
    ):
        for p in needs:
            if p not in roots:
                roots[p] = _sdist_root(p, cache)
        missing = [p for p in needs if roots[p] is None]
        if missing:
            notes.append(f"{package}: sdist of {', '.join(missing)} not available, its items skipped")
            continue
        have = {p: r for p, r in roots.items() if r is not None}
        for it in build(have[package]):
            it.pdf = have[it.package] / it.path
            it.sha256 = hashlib.sha256(it.pdf.read_bytes()).hexdigest()
            if it.sha256 in known:
                notes.append(f"{it.name}: already in the corpus (same sha256), left out")
                continue
            items.append(it)
    return items, notes


# ---------------------------------------------------------------- tools

Tool = Callable[[Item, pymupdf.Document], Parts]


def _per_page(tool: TP.Tool) -> Tool:
    """A bench/tables_peers tool run on each page of the item, as it is run on a corpus page."""

    def run(it: Item, doc: pymupdf.Document) -> Parts:
        out: Parts = []
        for p in it.pages:
            g = TP.Group(it.name, it.pdf, it.tool, {}, p, it.area, it.truth)
            out += [(p, grid) for _, grid in tool(it.pdf, g, doc)]
        return out

    return run


_OURS: dict[Path, Parts] = {}


def _ours(it: Item, doc: pymupdf.Document) -> Parts:
    if it.pdf not in _OURS:  # one run per file, its defaults, whatever the expectation
        _OURS[it.pdf] = TP._ours(it.pdf, None, doc)
    return _OURS[it.pdf]


def _tabula_recorded_pages(it: Item, doc: pymupdf.Document) -> Parts:
    """tabula-py with the test's arguments, one call per page of the test's range.

    tabula-java's JSON does not say which page a table is on; with ``multiple_tables=False`` the test
    reads one table over the range, here the same rows per page.
    """
    import tabula

    kw = {k: v for k, v in it.params.items() if k != "pages"}
    kw.setdefault("multiple_tables", True)
    out: Parts = []
    for p in it.pages:
        res = tabula.read_pdf(str(it.pdf), output_format="json", silent=True, pages=p + 1, **kw)
        out += [(p, [[c.get("text", "") for c in r] for r in t.get("data", [])]) for t in res]
    return out


def _pymupdf_recorded(it: Item, doc: pymupdf.Document) -> Parts:
    """PyMuPDF's finder with the test's arguments: the classic one (1.26.7's tests predate the layout
    model) unless the item says ``use_layout`` (2.0's layout-mode expectations)."""
    out: Parts = []
    for p in it.pages:
        page = doc[p]
        kw = {"use_layout": False, **{k: v for k, v in it.params.items() if k != "boxes_from_words"}}
        if it.params.get("boxes_from_words"):  # test_boxes_param's construction, step for step
            box0 = page.cluster_drawings(drawings=page.get_drawings())[0]
            boxes = [box0]
            words = page.get_text("words")
            for x in [w[0] - 5 for w in words if w[4] in ("min", "max", "avg")]:
                r = +box0
                r.x1 = x
                boxes.append(r)
            for y in sorted({round(w[3]) for w in words})[:-1]:
                r = +box0
                r.y1 = y
                boxes.append(r)
            kw.update(paths=[], add_boxes=boxes)
        tabs = page.find_tables(**kw)
        out += [(p, [[c or "" for c in r] for r in t.extract()]) for t in tabs.tables]
    return out


def _pymupdf4llm_recorded(it: Item, doc: pymupdf.Document) -> Parts:
    """The venv's pymupdf4llm ``to_markdown`` with the test's arguments, its Markdown tables per page."""
    import pymupdf4llm

    out: Parts = []
    for p in it.pages:
        md = pymupdf4llm.to_markdown(str(it.pdf), pages=[p], **it.params)
        out += [(p, grid) for grid in _markdown_tables(md)]
    return out


def _camelot_recorded(it: Item, doc: pymupdf.Document) -> Parts:
    """camelot with the test's arguments on the test's pages."""
    return TP._camelot_run(it.pdf, ",".join(str(p + 1) for p in it.pages), dict(it.params))


def available_tools(wanted: set[str] | None) -> tuple[dict[str, tuple[Tool, str | None]], list[str]]:
    peers, skipped = TP.available_tools()
    tools: dict[str, tuple[Tool, str | None]] = {"dagster_ocr (defaults)": (_ours, None)}
    for name, (tool, only) in peers.items():
        if only is None and not name.startswith("dagster_ocr"):
            tools[name] = (_per_page(tool), None)
    if "tabula (recorded parameters)" in peers:
        tools["tabula (recorded parameters)"] = (_tabula_recorded_pages, "tabula")
    tools["pymupdf find_tables (recorded parameters)"] = (_pymupdf_recorded, "pymupdf")
    if "camelot (recorded parameters)" in peers:
        tools["camelot (recorded parameters)"] = (_camelot_recorded, "camelot")
    if importlib.util.find_spec("pymupdf4llm") is not None:
        tools["pymupdf4llm to_markdown (recorded parameters)"] = (_pymupdf4llm_recorded, "pymupdf4llm")
    if wanted:
        tools = {k: v for k, v in tools.items() if any(w in k for w in wanted)}
    return tools, skipped


# ---------------------------------------------------------------- metric and driver


def _key(text: str | None) -> str:
    return TP._cell_key(_MD_MARK.sub(" ", text or ""), "")


def _cells(grid: Grid) -> Counter[str]:
    return Counter(k for r in grid for c in r if (k := _key(c)))


def score_item(it: Item, pred: Parts) -> tuple[int, int, int]:
    """(true positives, predicted cells counted, expected cells) of one tool on one item."""
    truth: Counter[str] = Counter()
    for grid in it.truth:
        truth += _cells(grid)
    got: Counter[str] = Counter()
    for page, grid in pred:
        if page not in it.pages:
            continue
        cells = _cells(grid)
        if it.area and sum((cells & truth).values()) * 2 < sum(cells.values()):
            continue  # one of the page's tables the expectation does not cover
        got += cells
    return sum((got & truth).values()), sum(got.values()), sum(truth.values())


def run_tool(items: list[Item], tool: Tool, only: str | None) -> dict[str, dict[str, Any]]:
    per: dict[str, dict[str, Any]] = {}
    for it in items:
        if only and it.tool != only:
            continue
        err = ""
        try:
            with pymupdf.open(it.pdf) as doc, warnings.catch_warnings():
                warnings.simplefilter("ignore")
                pred = tool(it, doc)
        except Exception as exc:  # a tool failing on one item scores nothing there
            pred, err = [], f"{type(exc).__name__}: {str(exc)[:120]}"
        tp, n_pred, n_gt = score_item(it, pred)
        per[it.name] = {
            "tp": tp,
            "pred": n_pred,
            "gt": n_gt,
            "split": "check",
            **({"error": err} if err else {}),
        }
    return per


def summary(per: dict[str, dict[str, Any]]) -> dict[str, float]:
    micro = TP._prf(*(sum(d[k] for d in per.values()) for k in ("tp", "pred", "gt")))
    f1s = [TP._prf(d["tp"], d["pred"], d["gt"])["f1"] for d in per.values() if d["gt"]]
    return {**micro, "macro_f1": round(sum(f1s) / len(f1s), 3) if f1s else 0.0, "items": len(per)}


def _cell(d: dict[str, Any] | None) -> str:
    if d is None:
        return "-"
    err = " (error)" if "error" in d else ""
    if not d["gt"]:  # an item that asserts no table: its predicted cells are false positives
        return f"{d['pred']} cells{err}"
    return f"{TP._prf(d['tp'], d['pred'], d['gt'])['f1']:.3f}{err}"


def print_table(items: list[Item], results: dict[str, dict[str, dict[str, Any]]]) -> None:
    """Items as rows, tools as columns; then the micro and macro means of each tool."""
    names = list(results)
    print("\n| item | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    for it in items:
        print(f"| {it.name} | " + " | ".join(_cell(results[n].get(it.name)) for n in names) + " |")
    sums = {n: summary(per) for n, per in results.items()}
    print(
        "| **mean, micro F1 (P/R)** | "
        + " | ".join(f"{s['f1']} ({s['precision']}/{s['recall']})" for s in sums.values())
        + " |"
    )
    print("| **mean of item F1** | " + " | ".join(f"{s['macro_f1']}" for s in sums.values()) + " |")
    print("\nBy source (the tool whose tests wrote the expectations): micro F1 / mean of item F1, items")
    print("\n| source | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    for src, per_tool in by_source(items, results).items():
        row = [
            f"{d['f1']} / {d['macro_f1']} ({d['items']})" if d["items"] else "-" for d in per_tool.values()
        ]
        print(f"| {src} | " + " | ".join(row) + " |")


def by_source(
    items: list[Item], results: dict[str, dict[str, dict[str, Any]]]
) -> dict[str, dict[str, dict[str, float]]]:
    """source -> tool -> summary over that source's items (the tool that wrote the expectation)."""
    order = ["tabula", "pymupdf", "camelot", "pdf2docx", "pymupdf4llm", "pdfplumber"]
    sources = sorted({it.tool for it in items}, key=order.index)
    groups = {src: {src} for src in sources}
    if {"tabula", "camelot"} <= set(sources):  # the class of the hidden "tabula/camelot items" figure
        groups["tabula+camelot"] = {"tabula", "camelot"}
    out: dict[str, dict[str, dict[str, float]]] = {}
    for name, srcs in groups.items():
        names = {it.name for it in items if it.tool in srcs}
        out[name] = {n: summary({k: v for k, v in per.items() if k in names}) for n, per in results.items()}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cache", type=Path, default=CACHE, help="where the sdists are fetched and unpacked")
    ap.add_argument("--corpus", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "corpus")
    ap.add_argument("--tools", default="", help="comma-separated substrings of tool names (default: all)")
    ap.add_argument("--json", type=Path, help="write every per-item result here")
    args = ap.parse_args()
    logging.basicConfig(level=logging.ERROR)
    items, notes = load_items(args.cache, args.corpus)
    tools, skipped = available_tools({w for w in args.tools.split(",") if w} or None)
    for msg in [*notes, *(f"skipped peer {s}" for s in skipped)]:
        print(msg, file=sys.stderr)
    print("Items (all counted as check):")
    for it in items:
        n = sum(_cells(g).total() for g in it.truth)
        print(f"  {it.name:28} pages {','.join(str(p + 1) for p in it.pages):4} {n:4} cells  {it.source}")
        print(f"  {'':28} sha256 {it.sha256[:16]}  {it.tool} {json.dumps(it.params)}  {it.note}")
    results = {name: run_tool(items, tool, only) for name, (tool, only) in tools.items()}
    print_table(items, results)
    for name, per in results.items():
        for n, d in per.items():
            if "error" in d:
                print(f"error: {name} on {n}: {d['error']}", file=sys.stderr)
    if args.json:
        sources = {it.name: {"source": it.source, "sha256": it.sha256, "params": it.params} for it in items}
        args.json.write_text(
            json.dumps(
                {
                    "items": sources,
                    "results": results,
                    "summary": {n: summary(per) for n, per in results.items()},
                    "by_source": by_source(items, results),
                },
                indent=1,
            )
        )


if __name__ == "__main__":
    main()
