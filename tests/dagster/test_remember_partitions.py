"""``dagster-ocr run`` answers "does this document's partition exist?" from memory (issue 36)."""

import dagster as dg

from assets.inbox_run import remember_partitions


def _counting(instance: dg.DagsterInstance) -> list[tuple[str, str]]:
    """Record every existence question that reaches the instance's storage."""
    asked: list[tuple[str, str]] = []
    storage = instance._event_storage  # noqa: SLF001 - where each question costs a query
    original = storage.has_dynamic_partition

    def has_dynamic_partition(partitions_def_name: str, partition_key: str) -> bool:
        asked.append((partitions_def_name, partition_key))
        return original(partitions_def_name, partition_key)

    storage.has_dynamic_partition = has_dynamic_partition
    return asked


def test_registered_keys_are_answered_without_the_storage() -> None:
    with dg.DagsterInstance.ephemeral() as instance:
        instance.add_dynamic_partitions("documents", ["a-1", "b-2"])
        instance.add_dynamic_partitions("other", ["a-1"])
        remember_partitions(instance, "documents", ["a-1", "b-2"])
        asked = _counting(instance)
        documents = dg.DynamicPartitionsDefinition(name="documents")
        # as Dagster's steps ask it: by keyword, through the partitions definition
        assert documents.has_partition_key("a-1", dynamic_partitions_store=instance)
        assert instance.has_dynamic_partition("documents", "b-2")
        assert asked == []
        # anything the run did not add is still asked of the instance
        assert not instance.has_dynamic_partition("documents", "c-3")
        assert instance.has_dynamic_partition(partitions_def_name="other", partition_key="a-1")
        assert asked == [("documents", "c-3"), ("other", "a-1")]
