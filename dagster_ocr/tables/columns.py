"""Column continuations: a wide table whose further columns follow on the next page, same rows."""

from __future__ import annotations

from dataclasses import dataclass

from dagster_ocr.model import Cell, Table
from dagster_ocr.tables.cells import _cell_shape, _Part
from dagster_ocr.tables.settings import _CONTINUED_RE, TableSettings
from dagster_ocr.tables.words import _join_cell_lines, _norm


@dataclass
class _StubMatch:
    """Rows ``a_rows`` of the first part and ``b_rows`` of the continuation carry the same stub.

    One side may hold a stub wrapped over two rows (the second row holding nothing but the rest of
    the stub) where the other side prints it on one row.
    """

    a_rows: tuple[int, ...]
    b_rows: tuple[int, ...]


def _stub_keys(part: _Part) -> tuple[list[str], list[bool]]:
    """Normalised stub (first-column) text per row, and whether the row holds nothing else."""
    keys = [_norm(r[0]) if r else "" for r in part.rows]
    only = [bool(k) and not any(c for c in r[1:]) for k, r in zip(keys, part.rows, strict=True)]
    return keys, only


def _align_stubs(a: _Part, b: _Part, s: TableSettings) -> list[_StubMatch]:
    """Align two parts' rows by their stub texts, in order (linear, with a small resync window)."""
    ka, oa = _stub_keys(a)
    kb, ob = _stub_keys(b)
    out: list[_StubMatch] = []
    i = j = 0
    while i < len(ka) and j < len(kb):
        if not ka[i]:
            i += 1
            continue
        if not kb[j]:
            j += 1
            continue
        if ka[i] == kb[j]:
            out.append(_StubMatch((i,), (j,)))
            i, j = i + 1, j + 1
            continue
        if i + 1 < len(ka) and oa[i + 1] and ka[i] + ka[i + 1] == kb[j]:
            out.append(_StubMatch((i, i + 1), (j,)))
            i, j = i + 2, j + 1
            continue
        if j + 1 < len(kb) and ob[j + 1] and ka[i] == kb[j] + kb[j + 1]:
            out.append(_StubMatch((i,), (j, j + 1)))
            i, j = i + 1, j + 2
            continue
        for d in range(1, s.stub_resync + 1):  # a row only one side has: skip it and resynchronise
            if i + d < len(ka) and ka[i + d] == kb[j]:
                i += d
                break
            if j + d < len(kb) and kb[j + d] == ka[i]:
                j += d
                break
        else:
            i, j = i + 1, j + 1
    return out


def _same_stubs(a: _Part, b: _Part, s: TableSettings) -> list[_StubMatch] | None:
    """The stub alignment when ``b`` repeats ``a``'s row labels row for row, else None.

    Both parts must have most of their labelled rows matched (``stub_match_ratio``), with at least
    ``min_stub_rows`` matches and as many distinct labels, so that a pattern like Male/Female/Male/
    Female repeated by a row continuation does not count.
    """
    ka, _ = _stub_keys(a)
    kb, _ = _stub_keys(b)
    la = [k for k in ka if k]
    lb = [k for k in kb if k]
    if min(len(la), len(lb)) < s.min_stub_rows:
        return None
    # cheap filter first: most labels of each side must occur on the other at all
    sa, sb = set(la), set(lb)
    if sum(k in sb for k in la) < 0.5 * len(la) or sum(k in sa for k in lb) < 0.5 * len(lb):
        return None
    matches = _align_stubs(a, b, s)
    matched_a = sum(len(m.a_rows) for m in matches)
    matched_b = sum(len(m.b_rows) for m in matches)
    distinct = {ka[m.a_rows[0]] for m in matches}
    if (
        len(matches) < s.min_stub_rows
        or len(distinct) < s.min_stub_rows
        or matched_a < s.stub_match_ratio * len(la)
        or matched_b < s.stub_match_ratio * len(lb)
    ):
        return None
    return matches


def _continued_evidence(a: _Part, b: _Part) -> bool:
    """A caption or header cell of ``b`` says "continued", or ``b`` repeats ``a``'s caption exactly."""
    if b.caption and _CONTINUED_RE.search(b.caption):
        return True
    head = b.rows[: max(b.header_rows, 1)]
    if any(c and _CONTINUED_RE.search(c) for r in head for c in r):
        return True
    return bool(a.caption) and _norm(a.caption) == _norm(b.caption)


def _build_columns(
    parts: list[_Part], aligns: list[list[_StubMatch]], table_id: str, s: TableSettings
) -> Table:
    """One table from a first part and column continuations aligned to its rows by stub.

    The first part's rows and stub column are kept; each continuation adds its other columns
    (header cells included) on the rows its stubs matched. Continuation rows that matched nothing
    get rows of their own: leading ones (header lines) pair bottom-up with the first part's leading
    rows, later ones follow the last matched row. A stub wrapped over two rows on the first part
    but printed on one row of a continuation is joined into one cell (the continuation shows it is
    one label).
    """
    first = parts[0]
    n_a = len(first.rows)
    # slot keys order the merged rows: (first-part row, continuation number, sequence)
    a_key: dict[int, tuple[int, int, int]] = {i: (i, 0, 0) for i in range(n_a)}
    fold: dict[int, int] = {}  # first-part row -> row it is folded into (second line of a wrapped stub)
    b_keys: list[dict[int, tuple[int, int, int]]] = []
    skip_b: dict[int, set[int]] = {k: set() for k in range(1, len(parts))}
    for k, matches in enumerate(aligns, start=1):
        b = parts[k]
        keys: dict[int, tuple[int, int, int]] = {}
        for m in matches:
            keys[m.b_rows[0]] = (m.a_rows[0], 0, 0)
            if len(m.b_rows) == 2:  # the rest of a wrapped stub: nothing but the stub, kept once
                skip_b[k].add(m.b_rows[1])
            if len(m.a_rows) == 2:
                fold[m.a_rows[1]] = m.a_rows[0]
        first_a = matches[0].a_rows[0]
        first_b = matches[0].b_rows[0]
        lead_a = list(range(first_a))
        for n, j in enumerate(reversed(range(first_b))):  # header lines: pair from the bottom up
            keys[j] = (lead_a[-1 - n], 0, 0) if n < len(lead_a) else (-1, k, -n)
        anchor, seq = first_a, 0
        for j in range(first_b, len(b.rows)):
            if j in skip_b[k]:
                continue
            if j in keys:
                anchor, seq = keys[j][0], 0
                continue
            seq += 1  # unmatched: a row of its own after the last matched row
            keys[j] = (anchor, k, seq)
        b_keys.append(keys)
    for i in fold:
        a_key.pop(i)
    order = sorted(set(a_key.values()).union(*(set(d.values()) for d in b_keys)))
    rank = {key: r for r, key in enumerate(order)}

    cells: list[Cell] = []
    offsets = [0]
    for part in parts:
        offsets.append(offsets[-1] + (part.n_cols if part is first else part.n_cols - 1))
    n_cols = offsets[-1]
    header_rows = 0
    for k, part in enumerate(parts):
        keys = a_key if k == 0 else b_keys[k - 1]
        rows_of = {r: rank[keys[r]] for r in range(len(part.rows)) if r in keys}
        if part.header_rows:
            hdr = [rows_of[r] for r in range(part.header_rows) if r in rows_of]
            header_rows = max(header_rows, max(hdr, default=-1) + 1)
        for r_local, row in enumerate(part.rows):
            if r_local not in rows_of:
                continue  # a folded stub line: its text joins the row above
            for c, text in enumerate(row):
                if text is None:
                    continue
                bb, span, col_span, tall = _cell_shape(part, r_local, c, s)
                if k == 0:
                    col = c
                    if c == 0 and r_local + 1 in fold:
                        text = (
                            _join_cell_lines([text, row_next])
                            if (row_next := part.rows[r_local + 1][0])
                            else text
                        )
                        nb = part.row_bboxes[r_local + 1][0] if r_local + 1 < len(part.row_bboxes) else None
                        if bb is not None and nb is not None:
                            bb = (min(bb[0], nb[0]), bb[1], max(bb[2], nb[2]), max(bb[3], nb[3]))
                else:
                    if c == 0 and col_span == 1:
                        continue  # the stub is kept once, from the first part
                    col = offsets[k] + max(c - 1, 0)
                    col_span = col_span - 1 if c == 0 else col_span
                last = r_local + span - 1
                while last > r_local and last not in rows_of:
                    last -= 1
                is_header = r_local < part.header_rows
                cells.append(
                    Cell(
                        row=rows_of[r_local],
                        col=col,
                        text=text,
                        page_index=part.page_index,
                        row_span=rows_of[last] - rows_of[r_local] + 1,
                        col_span=max(1, min(col_span, offsets[k + 1] - col)),
                        bbox=bb,
                        is_header=is_header,
                        suspicious=(not is_header and col_span > 1) or tall,
                    )
                )
    if header_rows >= len(order):
        header_rows = 0
    return Table(
        table_id=table_id,
        first_page_index=first.page_index,
        last_page_index=parts[-1].page_index,
        n_rows=len(order),
        n_cols=n_cols,
        cells=cells,
        bbox=first.bbox,
        header_rows=header_rows,
        pages=sorted({p.page_index for p in parts}),
        strategy=first.strategy,
        caption=first.caption,
        merge_kind="columns",
        regions=[(p.page_index, p.bbox) for p in parts],
    )
