"""The quality gate: Great Expectations suites that decide whether a document may enter the knowledge base.

Expectations run on the rows the warehouse holds for one document (what analysts will read), read
back as pandas DataFrames and validated with GX Core 1.x through an ephemeral pandas data source
(GX's SQL data source fails on DuckDB, see docs/stack-facts.md). There is one suite per stage:

* ``document_parsed``: the file could be read and yields text;
* ``pages_complete``: one row per physical page, each with a page label; no page emptied by damage
  (its page object or content stream lost, in the text stage's evidence: ``pages.blank_reason``
  'damaged', ``pages.content_damage``) and some pages of text. Blank pages that are present and
  sound (``blank_reason`` 'no ink' or 'left blank notice': a duplex scan's backs) are emptiness,
  judged only by the share of text pages left, never as damage however many there are;
* ``paragraphs_valid``: non-empty text, unique ids, few validation flags, boxes inside the page;
* ``tables_valid``: rectangular grids, no empty (merged) table, header text where a header was detected;
* ``ocr_confident``: OCR'd text is confident enough to be trusted;
* ``text_conserved`` (WARN only): where the text layer's characters went (see
  :mod:`dagster_ocr.conservation`): the shares in tables and furniture, and what was lost.

Every expectation carries a severity: ERROR results block the knowledge-base load, WARN results
are reported only. Thresholds and severities live in :class:`QualitySettings`.

GX costs 2-6 s to import, so it is imported on first use (without scipy.stats, altair and boto3, which serve
expectations and stores the gate does not use: :mod:`dagster_ocr.deferred_imports`) and its context is built
once per process.
"""

from __future__ import annotations

import gc
import logging
import threading
import warnings
from dataclasses import asdict, dataclass, field
from typing import Any

import pandas as pd

from dagster_ocr.deferred_imports import deferred
from dagster_ocr.quality_settings import QualitySettings, Severity
from dagster_ocr.quality_specs import SUITE_DESCRIPTIONS, SUITES, _Spec, _specs  # noqa: F401 - re-exported
from dagster_ocr.validation import GLYPH_FLAGS, glyph_chars


@dataclass(slots=True)
class ExpectationResult:
    """One expectation's verdict on one document."""

    suite: str
    expectation: str
    severity: Severity
    success: bool
    observed_value: str
    threshold: str
    description: str
    #: the observed value and the threshold as numbers on one scale, for plots and trends: the
    #: aggregate and its bound (a mean, a share, a row count), the value of a one-row frame (a
    #: document's characters), else the rows that failed against the 0 allowed (or their share
    #: against the share allowed, for an expectation that lets some fail). None: nothing to measure
    observed_number: float | None = None
    threshold_number: float | None = None

    def as_row(self) -> dict[str, object]:
        """The ``quality_results`` columns (the suite is the row's ``check_name``)."""
        row = asdict(self)
        row.pop("suite")
        return row

    @property
    def blocking(self) -> bool:
        return not self.success and self.severity == "ERROR"


@dataclass(slots=True)
class DocumentFrames:
    """One document's warehouse rows, as the expectations read them."""

    document: dict[str, Any]
    pages: pd.DataFrame
    paragraphs: pd.DataFrame
    tables: pd.DataFrame
    cells: pd.DataFrame
    #: confidence of every line on an OCR'd page (column ``confidence``)
    ocr_lines: pd.DataFrame = field(default_factory=lambda: pd.DataFrame({"confidence": []}))
    #: the document's ``text_conservation`` rows (one per page)
    conservation: pd.DataFrame = field(default_factory=pd.DataFrame)


# ------------------------------------------------------------------------------ frames to validate


def _non_empty_chars(series: pd.Series) -> pd.Series:
    return series.fillna("").astype(str).str.strip().str.len()


def prepare_frames(frames: DocumentFrames, settings: QualitySettings) -> dict[str, pd.DataFrame]:
    """The DataFrames the expectations read: warehouse rows plus the columns they test."""
    doc = frames.document
    pages, paras, tables, cells = frames.pages, frames.paragraphs, frames.tables, frames.cells
    if "kind" in paras:  # a table's own paragraphs row: the table checks read its cells
        paras = paras[paras["kind"] != "table"]
    n_chars = int(_non_empty_chars(paras["text"]).sum()) if len(paras) else 0
    n_chars += int(_non_empty_chars(cells["text"]).sum()) if len(cells) else 0
    document = pd.DataFrame(
        [
            {
                "status": str(doc.get("status")),
                "reason": str(doc.get("error") or doc.get("status")),
                "n_chars": n_chars,
            }
        ]
    )

    pages_out = pd.DataFrame(
        {
            "page_index": pages["page_index"].astype("int64") if len(pages) else pd.Series([], dtype="int64"),
            "label_len": _non_empty_chars(pages["page_label"])
            if len(pages)
            else pd.Series([], dtype="int64"),
            **_page_content_columns(pages, _flag(doc.get("repaired"))),
        }
    )

    if len(paras):
        sizes = pages[["page_index", "width", "height"]] if len(pages) else None
        merged = (
            paras.merge(sizes, on="page_index", how="left")
            if sizes is not None
            else paras.assign(width=float("nan"), height=float("nan"))
        )
        tol = settings.bbox_tolerance_pt
        # a paragraph on a page without a row has no size to check against: pages_complete reports it
        inside = ~(
            (merged.x0 < -tol)
            | (merged.y0 < -tol)
            | (merged.x1 > merged.width + tol)
            | (merged.y1 > merged.height + tol)
        )
        paras_out = pd.DataFrame(
            {
                "paragraph_id": merged["paragraph_id"].astype(str),
                "text_len": _non_empty_chars(merged["text"]),
                "flagged": merged["flags"].apply(_encoding_damage),
                "garbled_share": _garbled_share(merged),
                "bbox_inside": inside.astype(bool),
            }
        )
    else:
        paras_out = pd.DataFrame(
            {"paragraph_id": [], "text_len": [], "flagged": [], "garbled_share": [], "bbox_inside": []}
        ).astype({"text_len": "int64", "flagged": "float64", "garbled_share": "float64", "bbox_inside": bool})

    rows = []
    # the cells' columns once, each table's cells by position: a boolean mask over every cell of the
    # document per table cost ~1.5 ms a table (0.2 s for a 10-K report's 90 tables)
    by_table: dict[Any, Any] = {}
    if len(tables) and len(cells):
        by_table = cells.groupby("table_id", sort=False).indices
        row_idx, col_idx = cells["row_idx"].to_numpy(), cells["col_idx"].to_numpy()
        cell_has_text = (_non_empty_chars(cells["text"]) > 0).to_numpy()
        # a cell at the place of an earlier cell of its table (as duplicated() over the table's cells)
        cell_doubled = cells.duplicated(["table_id", "row_idx", "col_idx"]).to_numpy()
    for t in tables.itertuples() if len(tables) else []:
        n_rows, n_cols = int(t.n_rows or 0), int(t.n_cols or 0)
        header_rows = int(t.header_rows or 0)
        at = by_table.get(t.table_id)
        off_grid = doubled = header_text = text_cells = 0
        if at is not None:
            r, c = row_idx[at], col_idx[at]
            off_grid = int(((r < 0) | (r >= n_rows) | (c < 0) | (c >= n_cols)).sum())
            doubled = int(cell_doubled[at].sum())
            has_text = cell_has_text[at]
            header_text = int((has_text & (r < header_rows)).sum())
            text_cells = int(has_text.sum())
        rows.append(
            {
                "table_id": str(t.table_id),
                "grid_violations": off_grid + doubled,
                "text_cells": text_cells if n_rows * n_cols > 0 else 0,
                "header_ok": header_rows == 0 or header_text > 0,
            }
        )
    tables_out = pd.DataFrame(rows, columns=["table_id", "grid_violations", "text_cells", "header_ok"])

    ocr = frames.ocr_lines
    ocr_out = pd.DataFrame({"confidence": pd.to_numeric(ocr["confidence"], errors="coerce")}).dropna()
    return {
        "document": document,
        "pages": pages_out,
        "paragraphs": paras_out,
        "tables": tables_out,
        "ocr_lines": ocr_out,
        "conservation": _conservation_frame(frames.conservation),
    }


def _encoding_damage(flags: Any) -> float:
    """1.0 for a paragraph flagged for anything but unmapped glyphs (mojibake, U+FFFD, empty)."""
    return float(flags is not None and any(f not in GLYPH_FLAGS for f in flags))


def _garbled_share(paras: pd.DataFrame) -> float:
    """The share of the paragraphs' visible characters that are glyphs without a mapping
    (:data:`GLYPH_FLAGS`); only paragraphs flagged for such glyphs are scanned again."""
    texts = paras["text"].fillna("").astype(str)
    total = int(texts.str.replace(r"\s+", "", regex=True).str.len().sum())
    glyphs = paras["flags"].apply(lambda f: f is not None and any(x in GLYPH_FLAGS for x in f))
    bad = sum(glyph_chars(t) for t in texts[glyphs.astype(bool)])
    return bad / total if total else 0.0


def _conservation_frame(pages: pd.DataFrame) -> pd.DataFrame:
    """One row: the document's shares of characters in furniture, tables and lost, with readable
    observed values ("0.031 (520 of 16,864 chars)"). No rows where nothing was accounted (an older
    warehouse, or a document without text)."""
    columns = ["furniture_share", "table_share", "lost_share"]
    observed = [c.replace("_share", "_observed") for c in columns]
    if not len(pages) or "chars" not in pages.columns:
        return pd.DataFrame(columns=columns + observed)
    total = int(pd.to_numeric(pages["chars"]).fillna(0).sum())
    if total == 0:
        return pd.DataFrame(columns=columns + observed)

    def summed(*names: str) -> int:
        return int(sum(pd.to_numeric(pages[n]).fillna(0).sum() for n in names if n in pages.columns))

    parts = {
        "furniture": summed("page_number_chars", "header_chars", "footer_chars"),
        "table": summed("table_chars"),
        "lost": summed("lost_chars"),
    }
    row: dict[str, Any] = {}
    for name, n in parts.items():
        row[f"{name}_share"] = n / total
        row[f"{name}_observed"] = f"{n / total:.4f} ({n:,} of {total:,} chars)"
    return pd.DataFrame([row])


def _flag(value: Any) -> bool:
    """A BOOLEAN column's value read back through pandas (None/NaN: False)."""
    return value is not None and not pd.isna(value) and bool(value)


def _page_content_columns(pages: pd.DataFrame, repaired: bool) -> dict[str, pd.Series]:
    """``content_ok``, ``stream_ok`` and ``text_page`` per page (see the pages_complete expectations).

    Damage is judged from the text stage's evidence: ``blank_reason`` 'damaged' (a page without
    text whose objects were lost) or a page without text whose ``content_damage`` is recorded. A
    page's loss only counts against a document that has text on other pages (one with no text at
    all fails document_parsed.text_extracted instead, and is not judged by text_page_share
    either: one with only left-blank notices is). Rows written before ``blank_reason`` existed
    (an empty page without a reason) are judged as they were then: in a repaired file a page with
    no text and no image is taken as emptied by damage. Rows of an older warehouse without the
    content columns judge nothing (every page ok, every page text).
    """
    n = len(pages)
    if not n or "content" not in pages.columns:
        return {
            "content_ok": pd.Series([True] * n, dtype=bool),
            "stream_ok": pd.Series([True] * n, dtype=bool),
            "text_page": pd.Series([1.0] * n, dtype="float64"),
        }
    content = pages["content"].fillna("text").astype(str).reset_index(drop=True)
    damage = pages["content_damage"].reset_index(drop=True) if "content_damage" in pages.columns else None
    broken = damage.notna() if damage is not None else pd.Series([False] * n)
    if "blank_reason" in pages.columns:
        reason = pages["blank_reason"].reset_index(drop=True)
    else:
        reason = pd.Series([None] * n, dtype=object)
    with_text = bool((content == "text").any())
    # an empty page without a reason was written before reasons were (see the docstring)
    legacy_rows = bool(((content == "blank") & reason.isna()).any())
    damaged = (reason == "damaged") | ((content != "text") & broken)
    if legacy_rows and repaired:
        damaged |= content.isin(["graphics", "blank"])
    return {
        "content_ok": ~(with_text & damaged),
        "stream_ok": ~broken.astype(bool),
        # a document with no text at all is judged by document_parsed.text_extracted alone
        "text_page": ((content == "text") & (reason != "left blank notice")).astype("float64")
        if with_text
        else pd.Series([1.0] * n, dtype="float64"),
    }


# ------------------------------------------------------------------------------ GX, once per process

_GX_LOCK = threading.Lock()
#: modules GX imports for expectations the gate never runs: imported only if one of them is used
GX_DEFERRED = ("scipy.stats", "altair", "boto3")
_GX: dict[str, Any] = {}


def _gx_state(settings: QualitySettings) -> tuple[dict[str, Any], dict[str, Any], list[_Spec]]:
    """(batch definitions by frame, suites by name, specs) for these settings; built once per process."""
    with _GX_LOCK:
        if "context" not in _GX:
            with warnings.catch_warnings():
                # GX's import chain warns about sre_constants; it is not ours to fix
                warnings.simplefilter("ignore", DeprecationWarning)
                # scipy.stats and altair serve an expectation the gate does not use (~1.1 CPU s)
                with deferred(*GX_DEFERRED):
                    import great_expectations as gx
                    from great_expectations.data_context.types.base import ProgressBarsConfig

            # its INFO lines ("Created temporary directory ...") are noise in every run's log; the
            # module that logs it sets its own logger to INFO on import, so quiet that one too
            for name in ("great_expectations", "great_expectations.data_context.types.base"):
                logging.getLogger(name).setLevel(logging.WARNING)
            context = gx.get_context(mode="ephemeral")
            # tqdm bars per validation would flood Dagster's captured stderr
            context.variables.progress_bars = ProgressBarsConfig(globally=False)
            source = context.data_sources.add_pandas("dagster_ocr_quality")
            frames = ("document", "pages", "paragraphs", "tables", "ocr_lines", "conservation")
            _GX["gx"] = gx
            _GX["context"] = context
            _GX["batches"] = {
                f: source.add_dataframe_asset(f).add_batch_definition_whole_dataframe(f) for f in frames
            }
            _GX["suites"] = {}
            # GX's modules and context live as long as the process: out of the collector's sight,
            # so every full collection of a run no longer walks them (~0.1 s each; see gc.freeze)
            gc.freeze()
        key = settings.model_dump_json()
        if key not in _GX["suites"]:
            gx, context = _GX["gx"], _GX["context"]
            specs = _specs()
            suites: dict[str, Any] = {}
            tag = f"{len(_GX['suites'])}"
            for spec in specs:
                name = f"{spec.suite}__{spec.frame}__{tag}"
                if name not in suites:
                    suites[name] = context.suites.add(gx.ExpectationSuite(name=name))
                exp = spec.expectation(settings)
                exp.meta = {"dagster_ocr_name": spec.name}
                suites[name].add_expectation(exp)
            _GX["suites"][key] = (suites, specs, tag)
        suites, specs, tag = _GX["suites"][key]
        return _GX["batches"], suites, specs


def _observed(result: Any, frame: pd.DataFrame, id_column: str | None) -> str:
    """A short human-readable observed value: the aggregate, or how many rows failed and which."""
    res = result.result or {}
    if "observed_value" in res:
        value = res["observed_value"]
        if isinstance(value, float):
            value = round(value, 4)
        elif hasattr(value, "item"):  # numpy scalar
            value = value.item()
            value = round(value, 4) if isinstance(value, float) else value
        return "no rows" if value is None else str(value)
    if len(frame) == 1 and id_column and id_column in frame.columns:
        return str(frame[id_column].iloc[0])  # one-row frame (the document): show the value itself
    n_bad, n_all = res.get("unexpected_count", 0) or 0, res.get("element_count", len(frame))
    text = f"{n_bad} of {n_all}"
    if n_bad and id_column and id_column in frame.columns:
        idx = [i for i in res.get("partial_unexpected_index_list") or [] if i in frame.index][:5]
        ids = [str(v) for v in frame.loc[idx, id_column].tolist()]
        if ids:
            text += ": " + ", ".join(ids) + (" …" if n_bad > len(ids) else "")
    return text


def _number(value: Any) -> float | None:
    if isinstance(value, dict) and "$PARAMETER" in value:
        return None
    if hasattr(value, "item"):  # numpy scalar
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


#: prepared frames that hold one row per document by construction: their value is the observation
_ONE_ROW_FRAMES = frozenset({"document", "conservation"})


def _numbers(
    result: Any, frame: pd.DataFrame, frame_name: str, params: dict[str, Any]
) -> tuple[float | None, float | None]:
    """(observed, threshold) of one GX result as numbers on one scale (see ``ExpectationResult``)."""
    res = result.result or {}
    kwargs = dict(getattr(result.expectation_config, "kwargs", None) or {})

    def bound(name: str) -> float | None:
        value = kwargs.get(name)
        if isinstance(value, dict) and "$PARAMETER" in value:
            value = params.get(value["$PARAMETER"])
        return _number(value)

    limit = next((b for b in (bound("max_value"), bound("min_value"), bound("value")) if b is not None), None)
    observed = _number(res.get("observed_value"))
    if observed is not None:
        return observed, limit
    column = kwargs.get("column")
    if frame_name in _ONE_ROW_FRAMES and len(frame) == 1 and column in frame.columns and limit is not None:
        value = _number(frame[column].iloc[0])
        if value is not None:
            return value, limit
    n_bad = res.get("unexpected_count")
    if n_bad is None:
        return None, limit
    mostly = _number(kwargs.get("mostly"))
    if mostly is not None and mostly < 1.0:
        n_all = res.get("element_count") or 0
        return (round(n_bad / n_all, 4) if n_all else 0.0), round(1.0 - mostly, 4)
    return float(n_bad), 0.0


def evaluate_document(frames: DocumentFrames, settings: QualitySettings) -> list[ExpectationResult]:
    """Run every suite on one document's rows; one result per expectation, in suite order.

    A document that could not be read is only judged by ``document_parsed``: its other suites
    would only repeat that it has no rows.
    """
    s = settings
    batches, suites, specs = _gx_state(s)
    prepared = prepare_frames(frames, s)
    n_pages = int(frames.document.get("n_pages") or 0)
    params = {"n_pages": n_pages, "max_page_index": max(n_pages - 1, 0)}
    by_name = {spec.name: spec for spec in specs}
    failed_to_parse = str(frames.document.get("status")) == "failed"

    verdicts: dict[str, ExpectationResult] = {}
    for suite_name, suite in suites.items():
        suite_id, frame_name, _ = suite_name.split("__")
        if failed_to_parse and suite_id != "document_parsed":
            continue
        frame = prepared[frame_name]
        batch = batches[frame_name].get_batch(batch_parameters={"dataframe": frame})
        # BASIC first: counts and aggregates, which is all a passing suite shows, for about 20% less
        # of GX's CPU a document than its default SUMMARY (bench/lake_writers.py, session 11). A
        # suite with a failed row check runs again in SUMMARY, whose unexpected row indexes name the
        # failing rows (``_observed``: "1 of 2: t1").
        outcome = batch.validate(suite, expectation_parameters=params, result_format="BASIC")
        if any(not r.success and (r.result or {}).get("unexpected_count") for r in outcome.results):
            outcome = batch.validate(suite, expectation_parameters=params, result_format="SUMMARY")
        for r in outcome.results:
            spec = by_name[r.expectation_config.meta["dagster_ocr_name"]]
            success = bool(r.success)
            observed = _observed(r, frame, spec.id_column)
            observed_number, threshold_number = _numbers(r, frame, frame_name, params)
            if len(frame) == 0 and not success and (r.result or {}).get("observed_value") is None:
                # an aggregate over no rows (no OCR'd lines, no paragraphs): nothing to judge
                success, observed = True, "no rows"
            if r.exception_info and r.exception_info.get("raised_exception"):
                observed = "GX error: " + str(r.exception_info.get("exception_message"))[:200]
            verdicts[spec.name] = ExpectationResult(
                suite=spec.suite,
                expectation=spec.name,
                severity=s.severity_overrides.get(spec.name, spec.severity),
                success=success,
                observed_value=observed,
                threshold=spec.threshold(s),
                description=spec.description,
                observed_number=None if observed == "no rows" else observed_number,
                threshold_number=threshold_number,
            )
    # in spec order, so every run lists results the same way
    return [verdicts[spec.name] for spec in specs if spec.name in verdicts]


def by_suite(results: list[ExpectationResult]) -> dict[str, list[ExpectationResult]]:
    """Results grouped per suite, every suite present (empty when not evaluated)."""
    out: dict[str, list[ExpectationResult]] = {suite: [] for suite in SUITES}
    for r in results:
        out[r.suite].append(r)
    return out


def blocking_failures(results: list[ExpectationResult]) -> list[ExpectationResult]:
    """Failed ERROR expectations: any one of them keeps the document out of the knowledge base."""
    return [r for r in results if r.blocking]


def describe_failures(results: list[ExpectationResult]) -> str:
    """One line naming each blocking failure with its observed value (documents.error, quarantine)."""
    return "; ".join(
        f"{r.suite}.{r.expectation}: observed {r.observed_value} (expected {r.threshold})"
        for r in blocking_failures(results)
    )
