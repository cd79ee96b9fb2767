"""Stage outputs from earlier versions of the code are upgraded in one place (issue 38 item 4)."""

from __future__ import annotations

import dataclasses
import pickle

import dagster as dg
import pytest
from upath import UPath

from dagster_ocr.model import (
    Cell,
    DocStatus,
    ExtractedDocument,
    Page,
    ParagraphResult,
    SourceDocument,
    Table,
    TextSource,
)
from dagster_ocr.settings import Settings, SettingsSnapshot
from dagster_ocr.stage_outputs import STAGE_OUTPUT_VERSION, StageOutput, unwrap, upgrade, wrap
from resources import SettingsResource
from resources.stage_outputs import StageOutputsIOManager


def _older(obj, missing: int):
    """``obj`` as an older version pickled it: its class then lacked the last ``missing`` fields
    (a slots dataclass pickles a dict of its set slots; the new ones are simply absent)."""
    old = type(obj).__new__(type(obj))
    for f in list(dataclasses.fields(obj))[:-missing]:
        setattr(old, f.name, getattr(obj, f.name))
    return old


def _document() -> ExtractedDocument:
    source = SourceDocument(
        doc_id="d1",
        file_name="a.pdf",
        source_path="/in/a.pdf",
        stored_path="/x/a.pdf",
        size_bytes=10,
        kind="pdf",
    )
    return ExtractedDocument(source=source, status=DocStatus.PARSED, n_pages=2, page_content={1: "blank"})


def test_a_bare_pickle_of_an_older_document_gets_the_fields_added_since():
    old = _older(_document(), missing=4)  # before page_content, damaged_pages, blank_reasons, settings
    with pytest.raises(AttributeError):
        old.blank_reasons  # noqa: B018 - what every reader had to guard against
    value, version = unwrap(pickle.loads(pickle.dumps(old)))
    assert version == 0
    assert value.page_content == {} and value.damaged_pages == {} and value.blank_reasons == {}
    assert value.n_pages == 2 and value.source.file_name == "a.pdf"  # what it had is kept


def test_nested_model_objects_are_upgraded_and_a_current_output_is_left_alone():
    table = _older(Table("t1", 0, 0, 1, 1, [], (0.0, 0.0, 1.0, 1.0)), missing=1)  # before repeats
    paragraphs = _older(ParagraphResult(), missing=1)  # before read_as_text
    assert upgrade([table, (paragraphs,)]) == 2
    assert paragraphs.read_as_text == []
    current = wrap(_document())
    assert current.version == STAGE_OUTPUT_VERSION
    assert unwrap(current) == (current.value, STAGE_OUTPUT_VERSION)


def test_a_missing_required_field_is_an_error_that_says_what_to_do():
    old = _older(_document(), missing=len(ExtractedDocument.__dataclass_fields__) - 1)  # only source
    with pytest.raises(ValueError, match="lacks its required field 'status'.*re-run"):
        upgrade(old)


def test_the_io_manager_stores_a_version_and_reads_back_an_unversioned_pickle(tmp_path):
    manager = StageOutputsIOManager(base_dir=str(tmp_path)).create_io_manager(
        dg.build_init_resource_context()
    )
    path = UPath(tmp_path / "document_text" / "d1")
    path.parent.mkdir(parents=True)
    manager.dump_to_path(dg.build_output_context(), _document(), path)
    stored = pickle.loads(path.read_bytes())
    assert isinstance(stored, StageOutput) and stored.version == STAGE_OUTPUT_VERSION
    path.write_bytes(pickle.dumps(_older(_document(), missing=4)))  # as a run before versions wrote it
    value = manager.load_from_path(dg.build_input_context(), path)
    assert isinstance(value, ExtractedDocument) and value.blank_reasons == {}


def test_an_older_page_is_told_blank_by_its_reason_not_given_a_default():
    # before blank (and skew, added after it)
    blank = _older(Page(0, 1.0, 1.0, route_reason="blank page: no content", blank=True), missing=2)
    text = _older(Page(1, 1.0, 1.0, route_reason="text layer sound"), missing=2)
    assert upgrade([blank, text]) == 4
    assert blank.blank and not text.blank
    assert blank.skew == 0.0


def test_a_version_3_page_gets_its_skew_as_level():
    # version 3 outputs were read as stored: the bump to 4 is what fills Page.skew in
    page = _older(Page(0, 1.0, 1.0, text_source=TextSource.OCR), missing=1)
    value, version = unwrap(pickle.loads(pickle.dumps(StageOutput(3, [page]))))
    assert version == 3 and STAGE_OUTPUT_VERSION > 3
    assert value[0].skew == 0.0


def test_a_version_4_table_gets_no_heads():
    # version 4 outputs were read as stored: the bump to 5 is what fills Table.heads in
    table = _older(Table("t0", 0, 0, 1, 1, [Cell(0, 0, "x", 0)], (0, 0, 1, 1), heads=["Year"]), missing=1)
    value, version = unwrap(pickle.loads(pickle.dumps(StageOutput(4, [table]))))
    assert version == 4 and STAGE_OUTPUT_VERSION == 5
    assert value[0].heads == []


def test_an_older_text_output_gets_the_settings_in_force_when_it_is_read(tmp_path):
    """Version 3: the text stage's output carries its settings; one stored before did not know
    them, and gets what its version had every stage use: the settings as they are at the read."""
    now = SettingsSnapshot.of(Settings.load(overrides={"tables": {"merge": False}}))
    value, version = unwrap(StageOutput(2, _older(_document(), missing=1)), lambda: now)
    assert version == 2 and value.settings == now and value.settings.settings().tables.merge is False
    current = wrap(dataclasses.replace(_document(), settings=SettingsSnapshot.of(Settings())))
    assert unwrap(current, lambda: now)[0].settings != now  # a current output keeps its own

    resource = SettingsResource(overrides_json='{"tables": {"merge": false}}')
    manager = StageOutputsIOManager(base_dir=str(tmp_path), settings=resource).create_io_manager(
        dg.build_init_resource_context()
    )
    path = UPath(tmp_path / "document_text" / "d1")
    path.parent.mkdir(parents=True)
    path.write_bytes(pickle.dumps(StageOutput(2, _older(_document(), missing=1))))
    assert manager.load_from_path(dg.build_input_context(), path).settings == now


def test_a_snapshot_is_the_settings_json_and_its_hash():
    settings = Settings.load(overrides={"kb": {"embeddings": False}})
    snap = SettingsSnapshot.of(settings)
    assert snap.json == settings.model_dump_json() and len(snap.hash) == 16
    assert snap.settings() == settings and SettingsSnapshot.of(snap.settings()) == snap
    assert SettingsSnapshot.of(Settings()).hash != snap.hash


def test_the_io_manager_logs_no_debug_lines_but_its_events_and_the_assets_lines_stay(tmp_path):
    """Dagster's file IO manager's three DEBUG lines an output (each an event the run stores) are
    left out; the LOADED_INPUT and HANDLED_OUTPUT events (the path in its metadata) are not, nor
    what the assets themselves log, DEBUG included."""
    parts = dg.StaticPartitionsDefinition(["d1"])

    @dg.asset(partitions_def=parts)
    def upstream(context) -> list[int]:
        context.log.debug("upstream's own debug line")
        return [1, 2]

    @dg.asset(partitions_def=parts)
    def downstream(context, upstream: list[int]) -> int:
        context.log.info("downstream's own info line")
        return sum(upstream)

    instance = dg.DagsterInstance.ephemeral()
    result = dg.materialize(
        [upstream, downstream],
        partition_key="d1",
        instance=instance,
        resources={"io_manager": StageOutputsIOManager(base_dir=str(tmp_path))},
    )
    assert result.success and result.output_for_node("downstream") == 3
    records = instance.all_logs(result.run_id)
    lines = [r.user_message for r in records if r.dagster_event is None]
    assert "upstream's own debug line" in lines and "downstream's own info line" in lines
    assert not [m for m in lines if m.startswith(("Loading", "Writing file at"))], lines
    kinds = [r.dagster_event.event_type_value for r in records if r.dagster_event is not None]
    assert kinds.count("HANDLED_OUTPUT") == 2 and kinds.count("LOADED_INPUT") == 1
