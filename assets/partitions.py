"""One dynamic partition per document; the key is the document's sha256 (its doc_id)."""

from __future__ import annotations

import dagster as dg

documents_partitions = dg.DynamicPartitionsDefinition(name="documents")
