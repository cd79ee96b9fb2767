"""docs/configuration.md is the settings' declaration rendered, never a hand-kept copy that drifts."""

from __future__ import annotations

from pydantic import BaseModel

from dagster_ocr import settings_docs
from dagster_ocr.settings import Settings


def test_committed_configuration_reference_is_current() -> None:
    committed = settings_docs.PAGE.read_text(encoding="utf-8") if settings_docs.PAGE.exists() else ""
    assert committed == settings_docs.render(), (
        f"docs/configuration.md differs from the settings declared in the code: "
        f"regenerate it with `{settings_docs.REGENERATE}` and commit it"
    )


def _paths(model: type[BaseModel], prefix: str = "") -> set[str]:
    """Every leaf setting's dotted name, walking nested sections and each OCR engine's settings."""
    names: set[str] = set()
    for name, field in model.model_fields.items():
        options = [field.annotation, *getattr(field.annotation, "__args__", ())]
        sections = [o for o in options if isinstance(o, type) and issubclass(o, BaseModel)]
        if sections:
            for section in sections:
                names |= _paths(section, f"{prefix}{name}.")
        else:
            names.add(f"{prefix}{name}")
    return names


def test_every_setting_has_a_row_with_type_default_and_description() -> None:
    page = settings_docs.render()
    rows = {line.split(" | ")[0].strip("| `"): line for line in page.splitlines() if line.startswith("| `")}
    for path in _paths(Settings):
        assert path in rows, f"{path} has no row"
    # a plain setting's row: its type with bounds, its default, its description
    assert rows["ocr.workers"].startswith("| `ocr.workers` | integer in [1, 64] | `1` | Processes that OCR")
    # a default made by a factory (the engine) is shown, and each engine has its own section
    assert "| `ocr.engine` | section chosen by `kind`:" in page and '| `"rapidocr"` |' in rows["ocr.engine"]
    for kind in ("rapidocr", "transformers", "served", "none"):
        assert f"### `ocr.engine` with `kind: {kind}`" in page
    # a description never breaks its table row
    assert all(line.count(" | ") >= 3 for line in rows.values())


def test_check_mode_reports_a_stale_page(tmp_path, capsys) -> None:
    page = tmp_path / "configuration.md"
    assert settings_docs.main(["--out", str(page)]) == 0
    assert settings_docs.main(["--check", "--out", str(page)]) == 0
    page.write_text(page.read_text(encoding="utf-8") + "hand edit\n", encoding="utf-8")
    assert settings_docs.main(["--check", "--out", str(page)]) == 1
    assert settings_docs.REGENERATE in capsys.readouterr().err
