"""Printed page numbers: candidates in the header and footer zones, runs, and the Viterbi pass."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from dagster_ocr.labels.formatting import _from_roman, format_label
from dagster_ocr.labels.settings import LabelSettings
from dagster_ocr.model import LabelSource, Page, PageLabel


@dataclass(slots=True, frozen=True)
class _Candidate:
    line_index: int
    style: str  # "D", "r" or "R"
    prefix: str
    value: int
    weight: float
    #: the whole line is the number (with its decoration): surely page furniture
    whole_line: bool

    @property
    def label(self) -> str:
        return format_label(self.style, self.prefix, self.value)


_NUM = r"(?P<num>\d{1,5}|[ivxlcdmIVXLCDM]{1,9})"
_STRONG = [
    re.compile(
        r"^(?:page|pg\.?|p\.|seite|s\.|página|pagina|side|sida|strona|str\.|стр\.?|страница)\s*" + _NUM
        + r"(?:\s*(?:of|/|von|de|di|sur|из|z|av|af)\s*(?P<total>\d{1,5}))?$",
        re.IGNORECASE,
    ),
    re.compile(r"^[-–—~]\s*" + _NUM + r"\s*[-–—~]$"),
    re.compile(r"^[\[(]\s*" + _NUM + r"\s*[\])]$"),
    re.compile(r"^(?P<num>\d{1,5})\s*/\s*(?P<total>\d{1,5})$"),
    re.compile(r"^(?:共\s*(?P<total0>\d+)\s*页\s*[,，]?\s*)?第\s*(?P<num>\d{1,5}|[〇零一二两三四五六七八九十百千]+)\s*页"
               r"(?:\s*[,，/]?\s*共\s*(?P<total>\d{1,5})\s*页)?$"),
]  # fmt: skip
_BARE = re.compile(r"^" + _NUM + r"$")
_PREFIXED = re.compile(r"^(?P<prefix>[A-Z]{1,3}\s?[-–.]\s?|\d{1,2}\s?[-–]\s?)(?P<num>\d{1,4})$")
_EDGE_START = re.compile(r"^(?P<num>\d{1,4}|[ivxlcdm]{1,7})\s+\S.{2,}$")
_EDGE_END = re.compile(r"^.{2,}\S\s+(?P<num>\d{1,4}|[ivxlcdm]{1,7})$")

_CJK_DIGITS = dict(zip("〇零一二两三四五六七八九", (0, 0, 1, 2, 2, 3, 4, 5, 6, 7, 8, 9), strict=True))
_CJK_UNITS = {"十": 10, "百": 100, "千": 1000}


def _cjk_number(text: str) -> int | None:
    """Value of a simple Chinese numeral ('十二' -> 12, '一百零五' -> 105)."""
    total, digit = 0, None
    for c in text:
        if c in _CJK_DIGITS:
            digit = _CJK_DIGITS[c]
        elif c in _CJK_UNITS:
            total += (1 if digit is None else digit) * _CJK_UNITS[c]
            digit = None
        else:
            return None
    return total + (digit or 0)


def _normalise(text: str) -> str:
    text = text.replace("\u00a0", " ").replace("\u2212", "-").replace("\u2010", "-").replace("\u2011", "-")
    return re.sub(r"\s+", " ", text).strip()


def _number(token: str, settings: LabelSettings, allow_upper_roman: bool = True) -> tuple[str, int] | None:
    """(style, value) of a printed number token, or None when it is not a plausible page number."""
    if token.isdigit() and token.isascii():
        value = int(token)
        return ("D", value) if 1 <= value <= settings.max_arabic else None
    if re.fullmatch(r"[〇零一二两三四五六七八九十百千]+", token):
        value = _cjk_number(token)
        return ("D", value) if value and value <= settings.max_arabic else None
    value = _from_roman(token)
    if value is None or value > settings.max_roman:
        return None
    if token.islower():
        return "r", value
    if token.isupper() and allow_upper_roman:
        return "R", value
    return None


def _parse_line(text: str, line_index: int, settings: LabelSettings) -> _Candidate | None:
    """The page-number candidate a header/footer line carries, if any."""
    text = _normalise(text)
    if not text or len(text) > 80:
        return None
    for pattern in _STRONG:
        m = pattern.match(text)
        if m:
            num = _number(m.group("num"), settings)
            if num is None:
                continue
            total = m.groupdict().get("total")
            if total and int(total) < num[1]:
                continue  # "7/3" is a fraction or a date, not page 7 of 3
            return _Candidate(line_index, num[0], "", num[1], settings.strong_weight, True)
    m = _BARE.match(text)
    if m:
        num = _number(m.group("num"), settings)
        if num:
            return _Candidate(line_index, num[0], "", num[1], settings.bare_weight, True)
    m = _PREFIXED.match(text)
    if m:
        num = _number(m.group("num"), settings)
        if num:
            prefix = m.group("prefix").replace(" ", "")
            return _Candidate(line_index, num[0], prefix, num[1], settings.bare_weight, True)
    if settings.edge_numbers:
        for pattern in (_EDGE_START, _EDGE_END):
            m = pattern.match(text)
            if m:
                # upper-case roman at a line's edge is too often a word ("Part I", "I think")
                num = _number(m.group("num"), settings, allow_upper_roman=False)
                if num:
                    return _Candidate(line_index, num[0], "", num[1], settings.edge_weight, False)
    return None


def page_number_candidates(page: Page, settings: LabelSettings) -> list[_Candidate]:
    """Printed page-number candidates in the header and footer zones of ``page``."""
    s = settings
    if not page.lines or page.height <= 0:
        return []
    top_limit = page.height * s.zone_fraction
    bottom_limit = page.height * (1 - s.zone_fraction)
    top = [(ln.bbox[1], i) for i, ln in enumerate(page.lines) if ln.bbox[3] <= top_limit]
    bottom = [(-ln.bbox[3], i) for i, ln in enumerate(page.lines) if ln.bbox[1] >= bottom_limit]
    chosen = sorted(top)[: s.max_lines_per_zone] + sorted(bottom)[: s.max_lines_per_zone]
    out = []
    for _, i in chosen:
        cand = _parse_line(page.lines[i].text, i, s)
        if cand is not None:
            out.append(cand)
    if s.isolated_edge_lines:
        out.extend(_isolated_edge_candidates(page, {i for _, i in chosen}, s))
    return out


def _isolated_edge_candidates(page: Page, seen: set[int], s: LabelSettings) -> list[_Candidate]:
    """A number on a line of its own, centred, set apart below (or above) everything else.

    A cropped page or a short last page puts the page number well inside the page, out of the
    margin zones ("62" at two thirds of the height, right under the last paragraph).
    """
    order = sorted(range(len(page.lines)), key=lambda i: page.lines[i].bbox[1])
    if len(order) < 2:
        return []
    out = []
    for i, neighbour in ((order[-1], order[-2]), (order[0], order[1])):
        if i in seen:
            continue
        ln, other = page.lines[i], page.lines[neighbour]
        height = max(ln.bbox[3] - ln.bbox[1], 1.0)
        gap = ln.bbox[1] - other.bbox[3] if i == order[-1] else other.bbox[1] - ln.bbox[3]
        centre = (ln.bbox[0] + ln.bbox[2]) / 2
        if gap < s.isolated_gap * height or abs(centre - page.width / 2) > s.isolated_centre * page.width:
            continue
        cand = _parse_line(ln.text, i, s)
        if cand is not None and cand.whole_line:
            out.append(cand)
    return out


_Key = tuple[str, str, int]  # (style, prefix, offset): value = page.index + offset


def _value_ok(style: str, value: int, s: LabelSettings) -> bool:
    return 1 <= value <= (s.max_arabic if style == "D" else s.max_roman)


#: (page index, position in the caller's sequence, the page's candidates), in page-index order
_Found = list[tuple[int, int, list[_Candidate]]]


def _find_candidates(pages: Sequence[Page], s: LabelSettings) -> _Found:
    # one pass over the pages (they may be read back from disk one at a time: see pagestore)
    found = ((p.index, k, page_number_candidates(p, s)) for k, p in enumerate(pages))
    return sorted(found, key=lambda item: item[:2])


def _infer_printed(found: _Found, s: LabelSettings) -> list[PageLabel]:
    """Labels from printed page numbers alone, one per page (in the order of the caller's pages)."""
    indexes = [idx for idx, _, _ in found]
    order = [k for _, k, _ in found]
    cands = [cs for _, _, cs in found]

    # every candidate votes for its run; each page counts once per run. Deduplicated in candidate
    # order, not through a set: a set of string-keyed tuples iterates in an order that changes
    # with the process's hash seed, and it broke ties in most_common() (a page showing "208" and
    # "209" was labelled either way from one run to the next)
    support: Counter[_Key] = Counter()
    for idx, cs in zip(indexes, cands, strict=True):
        support.update(list(dict.fromkeys((c.style, c.prefix, c.value - idx) for c in cs)))
    # keys backed by a number on a line of its own; for a key, value - (index + 1) is offset - 1
    whole = {
        (c.style, c.prefix, c.value - idx)
        for idx, cs in zip(indexes, cands, strict=True)
        for c in cs
        if c.whole_line
    }
    keys = [
        k
        for k, n in support.most_common()
        if n >= s.min_run_support or (k in whole and k[2] - 1 <= s.lone_max_lead)
    ]
    # nothing repeats (a one-page excerpt "447"): a number on a line of its own is still believed;
    # a lone number at the edge of a longer line is not (too often a table row or a date)
    keys = keys or [k for k, _ in support.most_common() if k in whole]
    keys = keys[: s.max_runs]

    path = _viterbi(indexes, cands, keys, s) if keys else [None] * len(indexes)

    # support of each maximal segment of the path (pages with a matching printed number)
    seg_support = [0] * len(path)
    seg_interior = [False] * len(path)
    start = 0
    for end in range(1, len(path) + 1):
        if end == len(path) or path[end] != path[start]:
            key = path[start]
            hits = [
                j for j in range(start, end) if key and any(_matches(c, key, indexes[j]) for c in cands[j])
            ]
            for j in range(start, end):
                seg_support[j] = len(hits)
                seg_interior[j] = bool(hits) and hits[0] < j < hits[-1]
            start = end

    out: list[PageLabel | None] = [None] * len(found)
    for j, k in enumerate(order):
        idx, key, cs = indexes[j], path[j], cands[j]
        if key is None:
            out[k] = PageLabel(idx, str(idx + 1), LabelSource.PHYSICAL, s.physical_confidence)
            continue
        style, prefix, offset = key
        label = format_label(style, prefix, idx + offset)
        n = min(seg_support[j], 3)
        hit = next((c for c in cs if _matches(c, key, idx)), None)
        if hit is not None:
            out[k] = PageLabel(idx, label, LabelSource.PRINTED, round(0.5 + 0.15 * n, 3), hit.line_index)
        else:
            # an outvoted number on its own line is still the page-number line (misread): furniture
            misread = next((c for c in cs if c.whole_line and c.style == style), None)
            conf = 0.35 + 0.1 * n + (0.1 if seg_interior[j] else 0.0)
            out[k] = PageLabel(
                idx, label, LabelSource.INFERRED, round(conf, 3), misread.line_index if misread else None
            )
    return [o for o in out if o is not None]


def _matches(c: _Candidate, key: _Key, index: int) -> bool:
    return (c.style, c.prefix, c.value - index) == key


def _viterbi(
    indexes: list[int], cands: list[list[_Candidate]], keys: list[_Key], s: LabelSettings
) -> list[_Key | None]:
    """Best run per page: votes for the page's run, minus a penalty per switch of run.

    State ``None`` is "no run" (physical label). Gaps in ``indexes`` are harmless: a run is an
    offset, so it carries across them.
    """
    states: list[_Key | None] = [None, *keys]
    neg = float("-inf")
    score: list[float] = []
    back: list[list[int]] = []
    for j, idx in enumerate(indexes):
        votes: dict[_Key, float] = {}
        for c in cands[j]:
            k = (c.style, c.prefix, c.value - idx)
            votes[k] = max(votes.get(k, 0.0), c.weight)
        contradiction = s.contradiction_weight * max((c.weight for c in cands[j]), default=0.0)
        emit = [0.0]
        for style, prefix, offset in keys:
            if not _value_ok(style, idx + offset, s):
                emit.append(neg)
            else:
                emit.append(votes.get((style, prefix, offset), -contradiction))
        if j == 0:
            score = emit
            back.append(list(range(len(states))))
            continue
        best = max(range(len(states)), key=score.__getitem__)
        new_score, ptr = [], []
        for t in range(len(states)):
            stay = score[t]
            restart = t > 0 and idx + keys[t - 1][2] == 1
            switch = score[best] - (s.restart_penalty if restart else s.switch_penalty)
            if stay >= switch:
                new_score.append(stay + emit[t])
                ptr.append(t)
            else:
                new_score.append(switch + emit[t])
                ptr.append(best)
        score = new_score
        back.append(ptr)
    t = max(range(len(states)), key=score.__getitem__)
    path = [0] * len(indexes)
    for j in range(len(indexes) - 1, -1, -1):
        path[j] = t
        t = back[j][t]
    return [states[t] for t in path]
