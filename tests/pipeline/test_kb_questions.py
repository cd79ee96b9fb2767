"""The knowledge-base dev question set (bench/kb_questions.json, issue 34) is well-formed and true.

Well-formed: unique ids, the fields and values bench/kb_retrieval.py reads, about a third on
figures in tables. True: every expected string is printed (whitespace aside) on each of its gold
pages, read with pymupdf's get_text; needs ../shared (the corpus and ../shared/reports beside it).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pymupdf
import pytest

QUESTIONS = Path(__file__).resolve().parents[2] / "bench" / "kb_questions.json"
PARAPHRASED = QUESTIONS.with_name("kb_questions_paraphrased.json")
FIELDS = {"id", "question", "file", "source", "gold_pages", "expected", "kind", "split"}


def _questions() -> list[dict]:
    return json.loads(QUESTIONS.read_text(encoding="utf-8"))["questions"]


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


def test_question_set_is_well_formed() -> None:
    questions = _questions()
    assert len(questions) >= 80
    ids = [q["id"] for q in questions]
    assert len(ids) == len(set(ids)), "duplicate ids"
    for q in questions:
        assert set(q) == FIELDS, q["id"]
        assert q["kind"] in {"table_figure", "text"}, q["id"]
        assert q["split"] in {"tune", "check"}, q["id"]
        assert q["question"].strip() and q["expected"].strip(), q["id"]
        assert q["file"] == Path(q["source"]).name, q["id"]
        assert q["source"].split("/")[0] in {"reports", "corpus"}, q["id"]
        pages = q["gold_pages"]
        assert pages and all(isinstance(p, int) and p >= 0 for p in pages), q["id"]
        assert pages == sorted(set(pages)), q["id"]
        if q["file"].startswith("apple-"):
            assert q["split"] == "tune", q["id"]
        if q["file"].startswith("tesla-"):
            assert q["split"] == "check", q["id"]
    share = sum(q["kind"] == "table_figure" for q in questions) / len(questions)
    assert 0.3 <= share <= 0.5, share


def test_corpus_questions_follow_the_manifest_split(corpus: Path) -> None:
    manifest = json.loads((corpus / "MANIFEST.json").read_text(encoding="utf-8"))
    split = {f["file"]: f["split"] for f in manifest["files"] if f.get("role") == "input"}
    for q in _questions():
        if q["source"].startswith("corpus/"):
            assert split[q["source"].removeprefix("corpus/")] == q["split"], q["id"]


def test_expected_is_printed_on_every_gold_page(corpus: Path) -> None:
    shared = corpus.parent
    if not (shared / "reports").is_dir():
        pytest.skip(f"reports not found: {shared / 'reports'}")
    texts: dict[str, list[str]] = {}
    missing = []
    for q in _questions():
        if q["source"] not in texts:
            with pymupdf.open(shared / q["source"]) as doc:
                texts[q["source"]] = [_squash(page.get_text()) for page in doc]
        pages = texts[q["source"]]
        for p in q["gold_pages"]:
            if p >= len(pages) or _squash(q["expected"]) not in pages[p]:
                missing.append(f"{q['id']} p.{p}: {q['expected']!r}")
    assert not missing, missing


def test_paraphrased_questions_ask_for_an_original_answer_in_other_words() -> None:
    """bench/kb_questions_paraphrased.json reuses each original's gold pages and expected string
    (so they are as true as those, checked above) and only asks it differently."""
    originals = {q["id"]: q for q in _questions()}
    paraphrased = json.loads(PARAPHRASED.read_text(encoding="utf-8"))["questions"]
    assert len(paraphrased) >= 20
    assert len({q["id"] for q in paraphrased}) == len(paraphrased)
    for q in paraphrased:
        original = originals[q["paraphrases"]]
        assert set(q) == FIELDS | {"paraphrases"}, q["id"]
        for key in ("file", "source", "gold_pages", "expected", "kind", "split"):
            assert q[key] == original[key], (q["id"], key)
        words = set(re.findall(r"\w+", q["question"].lower()))
        assert words != set(re.findall(r"\w+", original["question"].lower())), q["id"]
