"""Ink on the page image: along each text line (where its ink starts and ends, white bands that
split two columns' merged lines), under the lines (gray levels, ink height), and on the whole page
(the box that holds ink, the height of its letters, specks of dust and toner to clean off).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from dagster_ocr.model import BBox
from dagster_ocr.ocr.engine import OcrLine
from dagster_ocr.ocr.order import _cut_quad, page_skew

# ---------------------------------------------------------------------------- ink along lines

#: a column of a line's polygon is inked when it holds at least this many ink pixels (one is a speck)
_INK_MIN_PIXELS = 2
#: the part of a polygon's height looked at for ink: its middle, clear of the lines above and below
_INK_ROWS = (0.1, 0.9)


def _quad_points(quad: Sequence[float]) -> np.ndarray:
    return np.asarray(quad, dtype=float).reshape(4, 2)


def _quad_frame(quad: Sequence[float]) -> tuple[np.ndarray, int, int] | None:
    """A line polygon's corners (top-left, top-right, bottom-right, bottom-left), its length along
    the line and its height across it in whole pixels; None where it is under 2 pixels either way."""
    corners = _quad_points(quad)
    tl, tr, br, bl = corners
    length = int(round(max(np.hypot(*(tr - tl)), np.hypot(*(br - bl)))))
    height = int(round(max(np.hypot(*(bl - tl)), np.hypot(*(br - tr)))))
    return None if length < 2 or height < 2 else (corners, length, height)


def line_ink(gray: np.ndarray, quad: Sequence[float]) -> np.ndarray | None:
    """Ink along a text line: one flag per pixel of the polygon's length (``quad``: top-left,
    top-right, bottom-right, bottom-left corners), left to right, True where the polygon holds ink
    across it. Sampled along the polygon, so a tilted line is read along its tilt and never picks
    up its neighbours. None where the polygon is degenerate or holds no contrast (blank).

    Ink is the minority side of the midpoint between the darkest and lightest pixel, so light text
    on a dark band is measured as well as dark text on paper.
    """
    frame = _quad_frame(quad)
    if frame is None:
        return None
    corners, length, height = frame
    v = np.linspace(_INK_ROWS[0], _INK_ROWS[1], max(2, int(height * (_INK_ROWS[1] - _INK_ROWS[0]))))
    ink = _minority_ink(_sample_quad(gray, corners, length, v))
    return None if ink is None else _without_slivers(ink.sum(axis=0) >= _INK_MIN_PIXELS, height)


def _sample_quad(gray: np.ndarray, corners: np.ndarray, length: int, v: np.ndarray) -> np.ndarray:
    """``gray`` read along a line's polygon: one row per fraction ``v`` of the way from its top edge
    to its bottom edge, ``length`` pixels along it (so a tilted line is read along its tilt)."""
    tl, tr, br, bl = corners
    u = ((np.arange(length) + 0.5) / length)[None, :, None]
    top = tl + u * (tr - tl)
    bottom = bl + u * (br - bl)
    pts = top + v[:, None, None] * (bottom - top)  # rows x length x (x, y)
    h, w = gray.shape[:2]
    xs = np.clip(np.rint(pts[..., 0]).astype(np.intp), 0, w - 1)
    ys = np.clip(np.rint(pts[..., 1]).astype(np.intp), 0, h - 1)
    return gray[ys, xs]


def _minority_ink(crop: np.ndarray) -> np.ndarray | None:
    """Where ``crop`` holds ink: the minority side of the midpoint between its darkest and
    lightest pixel (so light text on a dark band counts too); None where it has no contrast."""
    lo, hi = float(crop.min()), float(crop.max())
    if hi - lo < 40:
        return None
    dark = crop < (lo + hi) / 2
    return dark if dark.mean() < 0.5 else ~dark


def _inked_rows(ink: np.ndarray) -> float | None:
    """How many rows of ``ink`` lie from its first to its last inked row (a row counts with ink in
    at least 0.2% of its pixels); None where none does."""
    rows = np.nonzero(ink.sum(axis=1) >= max(1.0, 0.002 * ink.shape[1]))[0]
    return None if rows.size == 0 else float(rows[-1] - rows[0] + 1)


def _without_slivers(ink: np.ndarray, height: float) -> np.ndarray:
    """``ink`` less a sliver at either end: a narrow run of ink (under half the line's height)
    touching the polygon's end, set off from the rest by a band-wide gap. It is a glyph of the
    next column that the detector's padded box reaches into, not part of the line."""
    cols = np.nonzero(ink)[0]
    if cols.size < 2:
        return ink
    gaps = np.nonzero(np.diff(cols) > _BAND_MIN_WIDTH * height)[0]
    if not gaps.size:
        return ink
    ink = ink.copy()
    first_run_end, last_run_start = cols[gaps[0]], cols[gaps[-1] + 1]
    if cols[0] <= 1 and first_run_end - cols[0] < 0.5 * height:
        ink[: first_run_end + 1] = False
    if cols[-1] >= ink.size - 2 and cols[-1] - last_run_start < 0.5 * height:
        ink[last_run_start:] = False
    return ink


def ink_extent(gray: np.ndarray, line: OcrLine) -> tuple[float, float] | None:
    """Where ``line``'s ink starts and ends along it, as fractions of its polygon's (or box's)
    length (``OcrLine.ink``); None where it holds no measurable ink."""
    q = line.quad
    if q is None or len(q) != 8:
        x0, y0, x1, y1 = line.bbox
        q = (x0, y0, x1, y0, x1, y1, x0, y1)
    ink = line_ink(gray, q)
    if ink is None or not ink.any():
        return None
    cols = np.nonzero(ink)[0]
    return float(cols[0]) / ink.size, float(cols[-1] + 1) / ink.size


#: ``split_at_ink_bands``: a band is at least this many line heights wide (a word space is about
#: a fifth of one, a stretched one in justified text half; the gutters to be found, 10 pt and up
#: beside 9-11 pt type, three quarters and more)
_BAND_MIN_WIDTH = 0.45
#: ... has at least this many lines end their ink just before it and as many begin just after
#: (a column's two edges; "just": within ``_BAND_EDGE_REACH`` line heights, for ragged text) ...
_BAND_MIN_LINES = 3
_BAND_EDGE_REACH = 4.0
#: ... and ink in at most this share of them (a title or a heading set across the columns)
_BAND_MAX_INKED = 0.1
#: lines whose tilt differs from the page's by more than this (degrees) are left whole
_BAND_MAX_TILT = 1.0
#: a cut line keeps this much of its height as padding beside its ink (as the detector pads)
_CUT_PAD = 0.25


def _white_run(on: np.ndarray, a: int, start: int, stop: int, min_w: float) -> tuple[int, int] | None:
    """The longest run of page columns in [start, stop) that a line's ink (``on``, page columns
    from ``a``) leaves white, as [first, end), where it is at least ``min_w`` long; else None. A
    line whose ink reaches a little into a band (ragged text, the band widened by the title that
    may cross it) is still cut in the part it leaves white."""
    lo, hi = max(start, a), min(stop, a + on.size)
    if hi - lo < min_w:
        return None
    white = np.concatenate(([0], (~on[lo - a : hi - a]).astype(np.int8), [0]))
    edges = np.flatnonzero(np.diff(white))
    if not edges.size:
        return None
    lengths = edges[1::2] - edges[0::2]
    k = int(np.argmax(lengths))
    if lengths[k] < min_w:
        return None
    return lo + int(edges[2 * k]), lo + int(edges[2 * k + 1])


def split_at_ink_bands(
    quads: Sequence[Sequence[float]], gray: np.ndarray
) -> list[tuple[int, tuple[float, ...]]]:
    """Detected line polygons cut where they cross a white band running down the page's ink.

    A detector merges the lines of two columns set close together (a gutter of about one em) into
    one box; no reading order can take such a line apart again. A gutter shows in the ink as a band
    of page columns (along the lines' tilt) that every line crossing it leaves white, while a
    word space lines up with none above or below it. A band counts when it is ``_BAND_MIN_WIDTH``
    line heights wide, at most ``_BAND_MAX_INKED`` of the lines whose ink crosses it put ink in
    it (a title may), and it has a column's edge on each side: ``_BAND_MIN_LINES`` lines whose
    ink ends just before it and as many that begin just after. On a single-column page every line
    crosses every band there could be, so a word space would have to line up in nine lines of
    ten. Each line that leaves ``_BAND_MIN_WIDTH`` line heights of a band white is cut there, each
    part keeping padding beside its ink. A table's column gaps are such bands too,
    and a row cut into its cells reads the same.

    Returns (index of the polygon it came from, polygon) for each line, in the given order; a
    polygon not cut comes back as it was.
    """
    pts = [_quad_points(q) for q in quads]
    out: list[tuple[int, tuple[float, ...]]] = [
        (i, tuple(float(v) for v in p.ravel())) for i, p in enumerate(pts)
    ]
    if len(pts) < _BAND_MIN_LINES:
        return out
    probe = [OcrLine("", (0.0, 0.0, 0.0, 0.0), 1.0, None, q) for _, q in out]
    skew = page_skew(probe)
    c, sn = math.cos(-skew), math.sin(-skew)
    # each level line: (index, u of its left end, pixels of u per profile step, ink profile, height)
    found = []
    for i, p in enumerate(pts):
        tl, tr, br, bl = p
        length = float(np.hypot(*(tr - tl)))
        height = float(np.hypot(*(bl - tl)))
        if length < 2 * height or height < 2:
            continue
        tilt = math.atan2(tr[1] - tl[1], tr[0] - tl[0])
        if abs(math.degrees(tilt - skew)) > _BAND_MAX_TILT:
            continue
        ink = line_ink(gray, out[i][1])
        if ink is None or ink.sum() < 2:
            continue
        left, right = (tl + bl) / 2, (tr + br) / 2
        u0 = left[0] * c - left[1] * sn
        u1 = right[0] * c - right[1] * sn
        if u1 <= u0:
            continue
        found.append((i, u0, (u1 - u0) / ink.size, ink, height))
    if len(found) < _BAND_MIN_LINES:
        return out
    lo = int(math.floor(min(f[1] for f in found)))
    hi = int(math.ceil(max(f[1] + f[2] * f[3].size for f in found)))
    span = np.zeros(hi - lo + 1, dtype=np.int32)
    inked = np.zeros_like(span)
    binned = []
    for _, u0, step, ink, _height in found:
        cols = np.nonzero(ink)[0]
        a = int(math.ceil(u0 + step * (cols[0] + 1))) - lo  # first page column past the first ink
        b = int(math.floor(u0 + step * cols[-1])) - lo  # last one before the last ink
        if b < a:
            binned.append(None)
            continue
        k = np.arange(a, b + 1)
        j = np.clip(((k + lo + 0.5 - u0) / step).astype(np.intp), 0, ink.size - 1)
        on = ink[j]
        span[a : b + 1] += 1
        inked[a : b + 1] += on
        binned.append((a, on))
    # a page column is white where the lines whose ink crosses it put (nearly) none in it
    ok = (span > inked) & (inked <= _BAND_MAX_INKED * span)
    heights = float(np.median([f[4] for f in found]))
    min_w = _BAND_MIN_WIDTH * heights
    reach = _BAND_EDGE_REACH * heights
    ends = np.array([f[1] + f[2] * (np.nonzero(f[3])[0][-1] + 1) - lo for f in found])
    starts = np.array([f[1] + f[2] * np.nonzero(f[3])[0][0] - lo for f in found])
    bands: list[tuple[int, int]] = []
    edges = np.flatnonzero(np.diff(np.concatenate(([0], ok.astype(np.int8), [0]))))
    for start, stop in zip(edges[0::2], edges[1::2], strict=True):
        if stop - start < min_w:
            continue
        # a column's edge on either side: lines whose ink ends just before it, begins just after
        # (a line white across it does both)
        near_left = (ends <= start + 1) & (ends >= start - reach)
        near_right = (starts >= stop - 1) & (starts <= stop + reach)
        for n, got in enumerate(binned):
            if got is None or near_left[n] and near_right[n]:
                continue
            a, on = got
            if _white_run(on, a, start, stop, min_w) is not None:
                near_left[n] |= bool(on[max(0, int(start - reach) - a) : start - a].any())
                near_right[n] |= bool(on[stop - a : int(stop + reach) - a].any())
        n_left, n_right = int(near_left.sum()), int(near_right.sum())
        if n_left >= _BAND_MIN_LINES and n_right >= _BAND_MIN_LINES:
            bands.append((int(start), int(stop)))  # page columns [start, stop) relative to lo
    if not bands:
        return out
    result: list[tuple[int, tuple[float, ...]]] = []
    for (i, u0, step, ink, height), got in zip(found, binned, strict=True):
        cuts = []  # (profile index where the left part's ink ends, where the right part's begins)
        if got is not None:
            a, on = got
            for start, stop in bands:
                run = _white_run(on, a, start, stop, min_w)
                if run is None:
                    continue
                j0 = int((run[0] + lo + 0.5 - u0) / step)
                j1 = int((run[1] - 1 + lo + 0.5 - u0) / step)
                left = np.nonzero(ink[: j0 + 1])[0]
                right = np.nonzero(ink[j1:])[0]
                if left.size and right.size:
                    cuts.append((int(left[-1]) + 1, j1 + int(right[0])))
        if not cuts:
            continue
        pad = _CUT_PAD * height / step
        q = out[i][1]
        pieces = []
        begin = 0.0
        for end_ink, start_ink in cuts:
            gap = start_ink - end_ink
            pieces.append((begin, (end_ink + min(pad, gap / 2)) / ink.size))
            begin = (start_ink - min(pad, gap / 2)) / ink.size
        pieces.append((begin, 1.0))
        result.extend((i, _cut_quad(q, t0, t1)) for t0, t1 in pieces)
    if not result:
        return out
    by_index: dict[int, list[tuple[int, tuple[float, ...]]]] = {}
    for item in result:
        by_index.setdefault(item[0], []).append(item)
    merged: list[tuple[int, tuple[float, ...]]] = []
    for item in out:
        merged.extend(by_index[item[0]] if item[0] in by_index else [item])
    return merged


# ------------------------------------------------------------------------------ ink under lines


def channel_mean(image: np.ndarray, region: BBox | None = None) -> np.ndarray:
    """``image.mean(axis=2)`` (HxWx3 uint8 -> HxW float64), the same values bit for bit, in about
    half its CPU: the channels are summed as uint16, then divided once. With ``region`` (x0, y0,
    x1, y1 pixels) only that part is computed and the rest is 0: the page's lines need the gray
    under their boxes only, and a 3600x4800 scan's whole-page mean cost 0.4 CPU s."""
    h, w = image.shape[:2]
    x0, y0, x1, y1 = (0, 0, w, h) if region is None else region
    x0, y0 = max(0, int(math.floor(x0))), max(0, int(math.floor(y0)))
    x1, y1 = min(w, int(math.ceil(x1))), min(h, int(math.ceil(y1)))
    if (x0, y0, x1, y1) == (0, 0, w, h):
        part = image
    else:
        part = image[y0:y1, x0:x1] if x1 > x0 and y1 > y0 else image[:0, :0]
    total = part[..., 0].astype(np.uint16)
    total += part[..., 1]
    total += part[..., 2]
    if part is image:
        return total / 3.0
    gray = np.zeros((h, w), np.float64)
    gray[y0:y1, x0:x1] = total / 3.0
    return gray


def _lines_region(lines: Sequence[OcrLine], pad: float = 2.0) -> BBox | None:
    """The box around every line's box and polygon, ``pad`` pixels wider (None for no lines)."""
    xs: list[float] = []
    ys: list[float] = []
    for ln in lines:
        xs += [ln.bbox[0], ln.bbox[2], *(ln.quad[0::2] if ln.quad else ())]
        ys += [ln.bbox[1], ln.bbox[3], *(ln.quad[1::2] if ln.quad else ())]
    if not xs:
        return None
    return (min(xs) - pad, min(ys) - pad, max(xs) + pad, max(ys) + pad)


def _ink_height(gray: np.ndarray, bbox: BBox) -> float | None:
    """Vertical extent in pixels of the ink inside ``bbox`` (ascender top to descender bottom)."""
    x0, y0, x1, y1 = (int(round(v)) for v in bbox)
    crop = gray[max(y0, 0) : max(y1, 0), max(x0, 0) : max(x1, 0)]
    if crop.size == 0:
        return None
    ink = _minority_ink(crop)
    return None if ink is None else _inked_rows(ink)


def quad_ink_height(gray: np.ndarray, quad: Sequence[float]) -> float | None:
    """Extent in pixels of the ink across a text line's polygon (``quad``: top-left, top-right,
    bottom-right, bottom-left), measured along the line's tilt: the type's height on a scan fed in
    askew, where the upright box of a tilted line is taller than its letters by the line's length
    times the tilt's sine (a 1,000-pixel line at 2 degrees: 35 pixels, three times 10-pt type at
    200 dpi). None where the polygon is degenerate or holds no contrast.
    """
    frame = _quad_frame(quad)
    if frame is None:
        return None
    corners, length, height = frame
    ink = _minority_ink(_sample_quad(gray, corners, length, (np.arange(height) + 0.5) / height))
    rows = None if ink is None else _inked_rows(ink)
    if rows is None:
        return None
    tl, tr, br, bl = corners
    step = float(np.hypot(*(bl - tl)) + np.hypot(*(br - tr))) / 2 / height  # pixels a sampled row
    return rows * step


# ------------------------------------------------------------------------------ ink on the page

#: ink for :func:`ink_crop`: this much darker than the paper (the page's 90th-percentile gray)
_INK_CONTRAST = 60
#: :func:`ink_crop` looks at blocks of this many pixels square, each as dark as its darkest pixel
_INK_BLOCK = 4
#: crop only when that leaves at most this share of the page's pixels
_CROP_MAX_SHARE = 0.9


def ink_crop(image: np.ndarray, margin: int, min_side: int = 0) -> tuple[int, int, int, int] | None:
    """The part of ``image`` (HxWx3) that holds ink, as (x0, y0, x1, y1) pixels, ``margin``
    pixels of paper kept around it and each side at least ``min_side`` long (where the image is):
    the box to hand the OCR engine instead of the whole page. None when cropping would not remove
    at least a tenth of the pixels (ink to the edges, a dark border, an empty page).

    The page is looked at in blocks of ``_INK_BLOCK`` pixels, each as dark as its darkest pixel,
    so a thin stroke (a page number "1") is never missed; an inked block with no inked neighbour
    is a speck of dust and does not widen the crop.

    Why by hand: what is wanted is the bounding box of the dark blocks, a few numpy reductions;
    OpenCV's ``boundingRect`` of a threshold does the same with no rule for dust. An engine whose
    detector scales small inputs up (rapidocr's ``limit_type: min``) passes ``min_side`` so a crop
    of a few lines is not enlarged past the page it came from.
    """
    h, w = image.shape[:2]
    b = _INK_BLOCK
    hb, wb = h // b, w // b
    if hb < 3 or wb < 3:
        return None
    pixels = image[: hb * b, : wb * b]
    pixels = pixels.reshape(hb, b, wb, b, -1) if pixels.ndim == 3 else pixels.reshape(hb, b, wb, b, 1)
    # the darkest pixel of each block, as ``pixels.min(axis=(1, 3, 4))`` gives it in 2.5x the CPU
    darkest = np.minimum.reduce([pixels[:, i, :, :, :] for i in range(b)])
    darkest = np.minimum.reduce([darkest[:, :, j, :] for j in range(b)])
    darkest = np.minimum.reduce([darkest[..., c] for c in range(darkest.shape[-1])]).astype(np.int16)
    paper, inkiest = (float(v) for v in np.percentile(darkest, [90, 0.5]))
    # faint print on grey paper (toner at 135 on paper at 190) is less than _INK_CONTRAST darker
    # than the paper: half the page's own contrast tells its ink, or a crop round a few dark specks
    # cut every line of a worn scan to its middle ("onal furth", "in and enh": CER 0.92)
    ink = darkest < paper - min(_INK_CONTRAST, (paper - inkiest) / 2)
    padded = np.pad(ink, 1)
    neighbours = np.zeros_like(ink)
    for dy in (0, 1, 2):
        for dx in (0, 1, 2):
            if dy != 1 or dx != 1:
                neighbours |= padded[dy : dy + hb, dx : dx + wb]
    ink &= neighbours
    rows = np.nonzero(ink.any(axis=1))[0]
    cols = np.nonzero(ink.any(axis=0))[0]
    if rows.size == 0:
        return None
    x0 = max(0, int(cols[0]) * b - margin)
    x1 = min(w, (int(cols[-1]) + 1) * b + margin)
    y0 = max(0, int(rows[0]) * b - margin)
    y1 = min(h, (int(rows[-1]) + 1) * b + margin)

    def widen(lo: int, hi: int, size: int) -> tuple[int, int]:
        want = min(min_side, size)
        if hi - lo >= want:
            return lo, hi
        lo = max(0, min(lo - (want - (hi - lo)) // 2, size - want))  # centred, inside the image
        return lo, lo + want

    x0, x1 = widen(x0, x1, w)
    y0, y1 = widen(y0, y1, h)
    if (x1 - x0) * (y1 - y0) > _CROP_MAX_SHARE * w * h:
        return None
    return x0, y0, x1, y1


#: :func:`ink_text_height` ignores ink components shorter than this (dust, dots, commas' tails)
_MIN_GLYPH_PX = 3
#: ... and those wider than this many times their height (rules, underlines)
_RULE_ASPECT = 15.0


def ink_text_height(image: np.ndarray) -> float | None:
    """The median height in pixels of the ink's connected pieces in ``image`` (HxW gray or HxWx3):
    letters of print, so about the x-height; words or stroke runs of handwriting. None when fewer
    than 8 pieces are found (a blank or nearly blank page).

    Ink is what :func:`ink_crop` calls ink (60 gray levels under the paper's 90th-percentile
    gray, each pixel as dark as its darkest channel). Pieces under ``_MIN_GLYPH_PX`` high, over a
    fifth of the image high (pictures, borders) or ``_RULE_ASPECT`` times wider than high (rules)
    are left out. About 40 ms on a 1400x2000 page (OpenCV's connected components).
    """
    import cv2

    gray = np.minimum(np.minimum(image[..., 0], image[..., 1]), image[..., 2]) if image.ndim == 3 else image
    if gray.size == 0:
        return None
    paper = float(np.percentile(gray[::4, ::4], 90))
    ink = (gray < paper - _INK_CONTRAST).astype(np.uint8)
    _, _, stats, _ = cv2.connectedComponentsWithStats(ink, connectivity=8)
    w, h = stats[1:, cv2.CC_STAT_WIDTH], stats[1:, cv2.CC_STAT_HEIGHT]
    keep = (h >= _MIN_GLYPH_PX) & (h <= 0.2 * gray.shape[0]) & (w <= _RULE_ASPECT * h)
    if int(keep.sum()) < 8:
        return None
    return float(np.median(h[keep]))


# ---------------------------------------------------------------------------------- specks


#: an ink piece of at most this many pixels is a speck (at 150-200 dpi a letter's dot or a full
#: stop is larger; at 100 dpi some are not, which the share below allows for)
_SPECK_MAX_PX = 3


def speck_share(image: np.ndarray) -> float:
    """The share of the ink's connected pieces in ``image`` (HxW gray or HxWx3) that are specks
    (``_SPECK_MAX_PX`` pixels or fewer), ink being what Otsu's threshold of the darkest channel
    calls dark. 0.0 on a page without ink.

    Print is letters: on clean pages at 100-200 dpi specks are under a fifth of the pieces (dots,
    full stops, a few grains). A scan peppered with dust, toner spatter or the sharp noise a low
    JPEG quality keeps has many more specks than letters. About 20-50 ms a page (OpenCV).
    """
    import cv2

    gray = np.minimum(np.minimum(image[..., 0], image[..., 1]), image[..., 2]) if image.ndim == 3 else image
    if gray.size == 0:
        return 0.0
    gray = np.ascontiguousarray(gray)
    level, _ = cv2.threshold(gray, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    n, _, stats, _ = cv2.connectedComponentsWithStats((gray <= level).astype(np.uint8), connectivity=8)
    if n <= 1:
        return 0.0
    return float((stats[1:, cv2.CC_STAT_AREA] <= _SPECK_MAX_PX).mean())


def despeckle(image: np.ndarray, min_share: float) -> np.ndarray:
    """``image`` through a 3x3 median filter where its ink is mostly specks (``speck_share`` at
    least ``min_share``), else ``image`` itself.

    rapidocr's text detector, shown a page peppered with specks (1% of the pixels, a worn colour
    scan saved as a small JPEG), found 2 of its 30 lines; the median removes isolated specks and
    keeps strokes two pixels wide or more, so the same page read 30. Clean pages are left as they
    are: the filter would thin the one-pixel strokes of small print at low resolution.
    """
    import cv2

    if min_share > 1.0 or speck_share(image) < min_share:
        return image
    return cv2.medianBlur(np.ascontiguousarray(image), 3)


# ---------------------------------------------------------------------------------- colour


def chroma(image: np.ndarray) -> int:
    """How coloured ``image`` (HxWx3) is: the spread between its brightest and darkest channel
    that 0.1% of its pixels reach, after a 5x5 median (so that specks and a JPEG's colour noise
    are not colour). 0 for a grey image.

    Grey print on tinted paper (a yellowed sheet scanned in colour) stays under about 35; print in
    colour (a red heading, a blue link, a logo over 0.1% of the page) reaches 100 or more. Computed
    on every second pixel, a few ms a page.
    """
    import cv2

    if image.ndim != 3 or image.shape[2] != 3 or image.size == 0:
        return 0
    sample = image[::2, ::2]
    spread = (sample.max(axis=2) - sample.min(axis=2)).astype(np.uint8)
    if not spread.any():
        return 0
    spread = cv2.medianBlur(np.ascontiguousarray(spread), 5)
    counts = np.cumsum(np.bincount(spread.ravel(), minlength=256))
    return int(np.searchsorted(counts, 0.999 * counts[-1]))


def _ink_in_colour(image: np.ndarray) -> bool:
    """Whether the ink of ``image`` (HxWx3, its darkest 2% of pixels) is more coloured than its
    paper (its lighter half): brown or blue ink on yellowed paper, where the colour tells ink from
    paper, not grey print on a tinted sheet, whose ink is the paper's tint darkened."""
    sample = image[::4, ::4]
    level = sample.sum(axis=2, dtype=np.int16)
    spread = sample.max(axis=2).astype(np.int16) - sample.min(axis=2)
    flat = level.ravel()
    if flat.size == 0:
        return False
    dark, mid = np.partition(flat, (flat.size // 50, flat.size // 2))[[flat.size // 50, flat.size // 2]]
    ink, paper = spread[level <= dark], spread[level >= mid]
    return bool(ink.size and paper.size and np.median(ink) > np.median(paper))


def _channels_equal(image: np.ndarray) -> bool:
    """Whether the RGB ``image`` is grey to the pixel (a few ms, where ``chroma``'s median costs tens)."""
    return image.ndim != 3 or (
        np.array_equal(image[..., 0], image[..., 1]) and np.array_equal(image[..., 1], image[..., 2])
    )


def grey_if_uncoloured(image: np.ndarray, max_chroma: int) -> np.ndarray:
    """``image`` as its luma in all three channels where its ``chroma`` is 1 to ``max_chroma`` and
    its ink is no more coloured than its paper (grey print scanned in colour), else ``image``.

    rapidocr's recogniser reads a faint, tinted colour scan saved as a small JPEG markedly worse
    than the same pixels' grey (issue 37's simulated worn scans: CER 0.150 -> 0.111 on the tune
    pages, word F1 0.61 -> 0.72): the tint and the chroma noise are no part of the print. A page in
    colour keeps it (coloured print on coloured ground can share a luma), and a grey one has
    nothing to convert. Nor does coloured ink on tinted paper (a handwritten letter in brown
    ink, olmOCR-bench's lincoln_letter: CER 0.252 as colour, 0.301 as grey).
    """
    import cv2

    if max_chroma <= 0 or _channels_equal(image):  # a grey page (chroma 0): nothing to measure or convert
        return image
    if not 0 < chroma(image) <= max_chroma or _ink_in_colour(image):
        return image
    return cv2.cvtColor(cv2.cvtColor(np.ascontiguousarray(image), cv2.COLOR_RGB2GRAY), cv2.COLOR_GRAY2RGB)
