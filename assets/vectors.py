"""``kb_vectors``: the knowledge base's vectors, embedded outside the warehouse writers' pool.

A graph-backed asset of three ops, so the costly middle one (the embedding model, ~0.35 CPU s a
page of a born-digital report on this CPU) holds neither the DuckDB file nor the
``duckdb_writer`` pool: another document's load, gate and chunks go on while it runs. The two
ends read and write the warehouse in milliseconds inside the writer pool; the middle op has its
own pool, ``embeddings`` (one slot unless set: the model already uses every core).

    knowledge_base ─▶ kb_vector_plan [duckdb_writer] ─▶ kb_embed [embeddings]
                  ─▶ kb_store_vectors [duckdb_writer]

A document held back by the gate has no ``knowledge_base`` materialization, so this asset is
skipped for it; with vectors off, or every chunk's vector already stored, the plan op does what
is left (drops old vectors) and yields no plan, so the other two ops are skipped too. BM25
search works as soon as ``knowledge_base`` is done; vector and hybrid search use a document's
vectors once this asset has materialized.
"""

# no `from __future__ import annotations`: Dagster checks the context annotation as an object
import pickle
import shutil
from pathlib import Path
from typing import Any

import dagster as dg

import assets.dagster_warnings  # noqa: F401  # before the definitions below
from assets.document_settings import recorded_settings
from assets.partitions import (
    DOCUMENT_BACKFILL_POLICY,
    DUCKDB_WRITER_POOL,
    EMBEDDINGS_POOL,
    OWNERS,
    TRANSIENT_RETRY_POLICY,
    documents_partitions,
    resolve_document,
)
from assets.schema_metadata import schema_metadata
from assets.stopping import stop_not_retry
from dagster_ocr import kb, kb_vectors
from dagster_ocr.admin.usage import UsageMeter
from dagster_ocr.kb_vectors import VectorPlan
from resources import DocumentStoreResource, WarehouseResource

#: the IO manager of the plan handed between the three ops (see :class:`VectorPlanIOManager`)
PLAN_IO_MANAGER = "kb_vector_plans"
#: the plans' folder under the IO managers' base_dir (beside the stage outputs; a folder per run in flight)
PLAN_DIR = "kb_vector_plans"


class VectorPlanIOManager(dg.ConfigurableIOManager):
    """The plan between the ops, as a pickle under ``base_dir/kb_vector_plans/<run id>/``.

    Filed by run, as Dagster's filesystem IO manager files an op's output (a backfill's run names
    its document by a partition range, which an op output's context cannot read), but removed by
    ``kb_store_vectors`` once the vectors are stored: with the stock manager every run would leave
    a plan behind (up to a few MB for a long report, with its vectors), a million runs a million
    files. A run that fails between the ops leaves its folder for a re-execution to read. A
    pickle, not the run's memory, so a per-step executor (one pod per step) still hands it on.
    """

    base_dir: str

    def folder(self, run_id: str) -> Path:
        return Path(self.base_dir) / PLAN_DIR / run_id

    def handle_output(self, context: dg.OutputContext, obj: VectorPlan) -> None:
        path = self.folder(context.run_id) / f"{context.name}.pickle"
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".part")
        tmp.write_bytes(pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL))
        tmp.replace(path)  # a crash never leaves half a plan under the real name

    def load_input(self, context: dg.InputContext) -> VectorPlan:
        upstream = context.upstream_output
        assert upstream is not None  # an op input: always produced by the op before
        # the upstream run's id: a re-execution reads the plan its parent run stored
        path = self.folder(upstream.run_id) / f"{upstream.name}.pickle"
        return pickle.loads(path.read_bytes())  # noqa: S301 - our own file

    def discard(self, run_id: str) -> None:
        """Remove a run's plans (its vectors are stored)."""
        shutil.rmtree(self.folder(run_id), ignore_errors=True)


@dg.op(
    pool=DUCKDB_WRITER_POOL,
    ins={"loaded": dg.In(dg.Nothing)},
    # no plan when there is nothing to do: the two ops after it are skipped (a step costs ~70 ms of
    # Dagster's own CPU, a fifth of a short document's graph)
    out={"plan": dg.Out(VectorPlan, io_manager_key=PLAN_IO_MANAGER, is_required=False)},
    retry_policy=TRANSIENT_RETRY_POLICY,
    description="Read the document's chunks and the vectors kept for unchanged text (writer pool); "
    "with vectors off, drop the document's old ones here.",
)
@stop_not_retry
def kb_vector_plan(
    context: dg.OpExecutionContext, store: DocumentStoreResource, warehouse: WarehouseResource
):
    """The document's settings are those the warehouse recorded for it (no upstream stage output
    carries them here): its snapshot says whether to embed, and how (carried on the plan)."""
    doc_id = resolve_document(context, store.store())
    wh = warehouse.warehouse()
    kb_settings = recorded_settings(wh, doc_id).kb
    plan = kb_vectors.plan_vectors(wh, doc_id, enabled=kb_settings.embeddings)
    plan.embedder = kb.embedder_options(kb_settings)
    if plan.off:
        if kb_vectors.drop_vectors(wh, doc_id):  # old ones: nobody would refresh them
            warehouse.publish()  # the snapshot copies the whole file: only when something changed
        context.log.info("embeddings are off in the settings: no vectors for the document")
        return
    if plan.current:
        context.log.info(f"all {len(plan.hashes)} chunk vector(s) current: nothing to embed")
        return
    context.log.info(f"{len(plan.todo_inputs)} chunk input(s) to embed, {len(plan.known)} vector(s) kept")
    yield dg.Output(plan, "plan")


@dg.op(
    pool=EMBEDDINGS_POOL,
    out={"embedded": dg.Out(VectorPlan, io_manager_key=PLAN_IO_MANAGER)},
    description="Embed the chunks with all-MiniLM-L6-v2 (no warehouse, no writer pool held).",
)
def kb_embed(context: dg.OpExecutionContext, plan: VectorPlan) -> VectorPlan:
    meter = UsageMeter.start()
    plan = kb_vectors.compute_vectors(plan, **plan.embedder)
    if plan.skipped:
        context.log.warning(f"no embeddings, BM25 search only: {plan.skipped}")
    context.log.info(f"embedding: {plan.figures} {meter.figures()}")
    return plan


@dg.op(
    pool=DUCKDB_WRITER_POOL,
    retry_policy=TRANSIENT_RETRY_POLICY,
    description="Replace the document's kb_embeddings rows (writer pool), then publish the snapshot.",
)
@stop_not_retry
def kb_store_vectors(
    context: dg.OpExecutionContext,
    warehouse: WarehouseResource,
    kb_vector_plans: dg.ResourceParam[VectorPlanIOManager],
    embedded: VectorPlan,
) -> dict[str, Any]:
    figures = kb_vectors.store_vectors(warehouse.warehouse(), embedded)
    warehouse.publish()
    kb_vector_plans.discard(context.run_id)
    context.add_output_metadata(
        {
            "doc_id": embedded.doc_id,
            "chunks": len(embedded.hashes),
            "chunks_embedded": figures["embedded"],
            "chunks_embedding_reused": figures["reused"],
            "embedding_seconds": figures["seconds"],
            "embedding_skipped": str(figures.get("skipped") or ""),
        }
    )
    return figures


@dg.graph_asset(
    name="kb_vectors",
    partitions_def=documents_partitions,
    group_name="warehouse",
    kinds={"duckdb"},
    owners=OWNERS,
    backfill_policy=DOCUMENT_BACKFILL_POLICY,
    ins={"knowledge_base": dg.AssetIn(dagster_type=dg.Nothing)},
    metadata=schema_metadata(("kb_embeddings",)),
    description="all-MiniLM-L6-v2 vectors of the document's knowledge-base chunks (kb_embeddings), for "
    "vector and hybrid search; embedded in the 'embeddings' pool, outside the warehouse writers' pool.",
)
def kb_vectors_asset(knowledge_base):
    return kb_store_vectors(kb_embed(kb_vector_plan(loaded=knowledge_base)))
